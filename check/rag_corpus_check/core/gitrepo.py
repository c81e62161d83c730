"""The one way this package runs git: on a repository named explicitly, with
everything that could run code from the checked tree switched off.

Git finds its repository by walking up from the working directory, and any
directory holding ``HEAD``, ``config``, ``objects/`` and ``refs/`` is a bare
repository to that walk — files a pull request can add to any folder. Its
``config`` would then be obeyed: a promisor remote's ``uploadpack`` runs on
the first missing object, ``core.fsmonitor`` on an index refresh, alternates
and replace refs swap the objects read. So git is never left to discover:

* :func:`find_checkout` looks for the nearest ``.git`` at or above the checked
  root (under Actions no higher than ``$GITHUB_WORKSPACE``). Git refuses to
  commit a path named ``.git``, so no pull request can plant one;
* :meth:`Checkout.git` passes that ``.git`` as ``--git-dir``, sets
  ``safe.bareRepository=explicit``, ``core.fsmonitor=false`` and
  ``core.hooksPath=/dev/null``, and runs with ``GIT_NO_LAZY_FETCH=1``,
  ``GIT_NO_REPLACE_OBJECTS=1``, no prompts, and none of the caller's
  ``GIT_*`` variables that choose a repository or object store.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from rag_corpus_check.core.text import safe_text

TIMEOUT = 120
FETCH_TIMEOUT = 60

HARDENING = (
    "-c", "safe.bareRepository=explicit",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
)

# Variables that would point git at another repository, index or object
# store, or add configuration (the caller's, but never needed here).
_DROPPED = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_REPLACE_REF_BASE", "GIT_SHALLOW_FILE", "GIT_QUARANTINE_PATH",
)


class GitError(Exception):
    """Git could not read the repository it was pointed at (a fault of the
    checkout or the machine, reported with its reason)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def git_environment(environ=None) -> dict[str, str]:
    env = dict(os.environ if environ is None else environ)
    for name in list(env):
        if name in _DROPPED or name.startswith("GIT_CONFIG_KEY_") or name.startswith("GIT_CONFIG_VALUE_"):
            del env[name]
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_NO_LAZY_FETCH="1",
               GIT_NO_REPLACE_OBJECTS="1", GIT_ASKPASS="", SSH_ASKPASS="", LC_ALL="C")
    return env


def git_program(env: dict[str, str]) -> str:
    """The git program, by its absolute path, from the absolute entries of
    PATH only. Git runs in the checkout's top directory, a tree a pull request
    fills: a relative PATH entry (an empty one is the current directory) would
    find a `git` it committed there, and Windows searches the current
    directory before PATH for a bare name. FileNotFoundError (an OSError, as
    when git is not installed) when there is none."""
    names = ("git.exe",) if os.name == "nt" else ("git",)  # CreateProcess adds .exe to a bare name
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(folder):
            continue
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    raise FileNotFoundError("git is not on an absolute entry of PATH")


@dataclass(frozen=True)
class Checkout:
    """A git checkout: its ``.git`` (a directory, or a gitfile for worktrees
    and submodules), its top directory, and where the checked root sits in
    it, in git's path form (``""`` or ``"kb/"``): ``prefix`` as the path was
    given, ``resolved`` after following its symlinks. The base's files are
    looked up at ``prefix``; a ``resolved`` that differs from what that path
    is at the base is a rule change."""

    git_dir: str
    top: str
    prefix: str
    resolved: str = ""

    def git(self, *args: str, stdout=None, timeout: float = TIMEOUT, feed: bytes | None = None
            ) -> subprocess.CompletedProcess:
        """Run git; its output captured unless ``stdout`` says where it goes;
        ``feed``: what it reads on its standard input (none by default)."""
        env = git_environment()
        return subprocess.run(
            [git_program(env), f"--git-dir={self.git_dir}", *HARDENING, *args],
            cwd=self.top, stdin=subprocess.DEVNULL if feed is None else None, input=feed,
            stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE,
            timeout=timeout, check=False, env=env,
        )

    def commit_of(self, rev: str) -> str | None:
        """The commit ``rev`` names, None when this clone does not have it;
        :class:`GitError` when git cannot read the repository at all."""
        res = self._call("rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}")
        sha = res.stdout.decode("ascii", "replace").strip()
        if res.returncode == 0 and is_sha(sha):
            return sha
        if res.returncode == 1:  # no such commit (or an unborn branch)
            return None
        raise GitError(f"git cannot read the repository at `{safe_text(self.git_dir, 200)}`: {_reason(res)}")

    def head(self) -> str | None:
        """The checked-out commit; None on a branch with no commit yet."""
        return self.commit_of("HEAD")

    def uncommitted(self, paths: list[str]) -> list[str] | None:
        """Of ``paths`` (git paths from the top), those whose file in the
        working tree is not what ``HEAD`` holds: changed, staged, added,
        untracked or ignored; None when git cannot tell. Submodules are not
        entered (their configuration is not this checkout's)."""
        if not paths:
            return []
        try:
            res = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching",
                           "--no-renames", "--ignore-submodules=all", "--",
                           *(f":(literal){p}" for p in paths))
        except (OSError, subprocess.SubprocessError):
            return None
        if res.returncode != 0:
            return None
        found = {entry[3:].decode("utf-8", "surrogateescape") for entry in res.stdout.split(b"\0") if len(entry) > 3}
        return [p for p in paths if p in found]

    def changed_lines(self, base: str, path: str) -> list[tuple[int, int]] | None:
        """The lines of ``path`` (a git path from the top) in the working
        tree that differ from commit ``base``, as (first, last) ranges; the
        whole file when ``base`` does not hold it. None when git cannot tell.
        The diff is read as it streams (hunk headers only are kept), so its
        memory does not grow with the size of a change; no diff driver or
        text conversion the checkout might name is run."""
        args = [f"--git-dir={self.git_dir}", *HARDENING, "diff", "--no-ext-diff", "--no-textconv", "--no-color",
                "--no-renames", "--unified=0", "--ignore-submodules=all", "--end-of-options", base, "--",
                f":(literal){path}"]
        env = git_environment()
        try:
            with subprocess.Popen([git_program(env), *args], cwd=self.top, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env) as proc:
                assert proc.stdout is not None
                ranges = [r for line in proc.stdout if (r := _hunk(line)) is not None]
                code = proc.wait(timeout=TIMEOUT)
        except (OSError, subprocess.SubprocessError):
            return None
        return ranges if code == 0 else None

    def fetch(self, rev: str) -> bool:
        """Fetch that one commit from ``origin`` (the remote the checkout
        itself configured), shallow, without tags, prompts or waiting long."""
        try:
            res = self.git("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--depth=1",
                           "origin", "--end-of-options", rev, timeout=FETCH_TIMEOUT)
        except (OSError, subprocess.SubprocessError):
            return False
        return res.returncode == 0

    def _call(self, *args: str) -> subprocess.CompletedProcess:
        try:
            return self.git(*args)
        except (OSError, subprocess.SubprocessError) as exc:
            raise GitError(f"git could not be run ({type(exc).__name__}); is git installed?") from None


def _hunk(line: bytes) -> tuple[int, int] | None:
    """The new side of a ``@@ -a,b +c,d @@`` hunk header as (first, last)
    lines; None for any other line or a hunk that only removes lines."""
    if not line.startswith(b"@@ -"):
        return None
    try:
        new = line.split(b" ")[2]  # b"+c,d" or b"+c"
        first, _, count = new[1:].partition(b",")
        start, n = int(first), int(count) if count else 1
    except (IndexError, ValueError):
        return None
    return (start, start + n - 1) if n > 0 else None


def _reason(res: subprocess.CompletedProcess) -> str:
    lines = res.stderr.decode("utf-8", "replace").strip().splitlines()
    return safe_text(lines[-1] if lines else f"exit status {res.returncode}", 300)


def is_sha(s: object) -> bool:
    return isinstance(s, str) and len(s) in (40, 64) and all(c in "0123456789abcdef" for c in s)


def find_checkout(root: str, ceiling: str | None = None) -> Checkout | None:
    """The checkout holding ``root`` (a path as given, symlinks unresolved):
    the nearest directory at or above it with a ``.git`` entry, not above
    ``ceiling`` (``$GITHUB_WORKSPACE`` under Actions, when ``root`` is inside
    it). None when there is none; :class:`GitError` when ``root`` resolves
    to a directory outside that checkout (a symlink out of the tree)."""
    given = os.path.abspath(root)
    here = given
    stop = os.path.abspath(ceiling) if ceiling else None
    if stop is not None and not _within(here, stop):
        stop = None  # the root is not in the workspace: no ceiling applies
    while not os.path.lexists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if here == stop or parent == here:
            return None
        here = parent
    real_top, real_root = os.path.realpath(here), os.path.realpath(given)
    if not _within(real_root, real_top):
        raise GitError(f"the checked directory `{safe_text(os.path.relpath(given, here), 200)}` leads outside "
                       "the repository (a symlink?); check a directory of the repository itself")
    return Checkout(os.path.join(here, ".git"), here, _git_path(os.path.relpath(given, here)),
                    _git_path(os.path.relpath(real_root, real_top)))


def _within(path: str, top: str) -> bool:
    return os.path.commonpath([path, top]) == top


def _git_path(rel: str) -> str:
    return "" if rel == "." else rel.replace(os.sep, "/") + "/"
