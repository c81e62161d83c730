"""Reading the base revision's files from git, never checking anything out.

The base versions of the config, corpus, gold and run are copied out of the
object database (``git cat-file blob``, which applies no filters, hooks or
textconv) into a private temporary directory, and are then read by
:mod:`safe_io` like any other input. Only regular blobs are exported: a
symlink (mode 120000) or a submodule at an input path is refused, sizes are
capped before reading, and paths may not leave the repository.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from rag_corpus_check.safe_io import InputError
from rag_corpus_check.text import safe_text

GIT_TIMEOUT = 120


@dataclass
class BaseTree:
    rev: str  # as given
    sha: str  # the commit it resolved to
    root: str  # temporary directory mirroring the repository root
    prefix: str  # path of the checked root inside the git repository ("" or "sub/")
    repo: str  # the checked root (where git runs)

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def git_env() -> dict[str, str]:
    """git never prompts for credentials, takes no optional locks, and speaks C."""
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


def run_git(root: str, *args: str, stdout=subprocess.PIPE, timeout: float = GIT_TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", root, *args], stdout=stdout, stderr=subprocess.PIPE, timeout=timeout,
        check=False, env=git_env(),
    )


def open_base(root: str, rev: str) -> BaseTree:
    """Resolve ``rev`` to a commit of the repository at ``root``."""
    if not rev or rev.startswith("-") or any(c in rev for c in "\x00\n\r "):
        raise InputError("base", f"`{safe_text(rev, 80)}` is not a valid revision")
    try:
        res = run_git(root, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}")
    except (OSError, subprocess.SubprocessError):
        raise InputError("base", "git is not available, so the base cannot be read") from None
    sha = res.stdout.decode("ascii", "replace").strip()
    if res.returncode != 0 or not sha:
        raise InputError(
            "base",
            f"base revision `{safe_text(rev, 80)}` is not in this clone. Fetch it first — in a "
            "workflow use `actions/checkout` with `fetch-depth: 0`, or run "
            f"`git fetch --depth=1 origin {safe_text(rev, 80)}` before the check",
        )
    top = run_git(root, "rev-parse", "--show-prefix")
    prefix = top.stdout.decode("utf-8", "replace").strip() if top.returncode == 0 else ""
    return BaseTree(rev, sha, tempfile.mkdtemp(prefix="rag-corpus-check-base-"), prefix, root)


def export(tree: BaseTree, rel: str, max_bytes: int) -> bool:
    """Copy ``rel`` (relative to the checked root) at the base commit into the
    mirror directory. Returns False when the path does not exist at the base."""
    norm = posixpath.normpath(rel.replace(os.sep, "/"))
    if norm.startswith("../") or norm == ".." or norm.startswith("/"):
        raise InputError("path", f"`{safe_text(rel, 120)}` points outside the repository")
    git_path = tree.prefix + norm
    res = run_git(tree.repo, "ls-tree", "-z", "--full-tree", tree.sha, "--", git_path)
    entry = res.stdout.split(b"\x00")[0] if res.returncode == 0 else b""
    if not entry:
        return False
    meta, _, _ = entry.partition(b"\t")
    mode, kind, blob = meta.decode("ascii", "replace").split(" ")
    if kind != "blob" or mode not in ("100644", "100755"):
        what = "a symlink" if mode == "120000" else f"a {kind}"
        raise InputError(
            "path", f"at the base commit `{safe_text(norm, 120)}` is {what}, not a regular file",
            file=norm,
        )
    size = run_git(tree.repo, "cat-file", "-s", blob)
    n = int(size.stdout.strip() or b"0") if size.returncode == 0 else 0
    if n > max_bytes:
        raise InputError("limit", f"at the base commit the file is {n} bytes, over the limit of {max_bytes}", file=norm)
    dest = os.path.join(tree.root, *norm.split("/"))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "wb") as f:
        proc = run_git(tree.repo, "cat-file", "blob", blob, stdout=f)
    if proc.returncode != 0:
        raise InputError("base", f"git could not read `{safe_text(norm, 120)}` at the base commit", file=norm)
    return True
