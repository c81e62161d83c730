"""Reading the base revision's files from git, never checking anything out.

A path is resolved in the base commit's tree the way the file system resolves
it in the head's working tree: component by component, following symlinks
(relative targets only, at most :data:`MAX_SYMLINKS` of them), and the file it
ends at must be a regular file inside the checked root, outside ``.git``. The
blob is then copied out of the object database (``git cat-file blob``, which
applies no filters, hooks or textconv), size-capped, into a private temporary
directory at the path the caller asked for, and read by the same readers as
any other input. Every git call goes through :class:`gitrepo.Checkout`.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
from dataclasses import dataclass

from rag_corpus_check.core.gitrepo import Checkout, GitError
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.safe_io import MAX_DOCUMENT_BYTES, InputError, Limits
from rag_corpus_check.safe_io.pages import Globs, check_page_name

MAX_SYMLINKS = 40  # as Linux's path resolution
MAX_LINK_BYTES = 4096


@dataclass
class BaseTree:
    checkout: Checkout
    rev: str  # as given
    sha: str  # the commit it resolved to
    root: str  # temporary directory standing for the checked root at the base
    checked: str | None = None  # what the checked directory's path is at the base ("kb/"), None if absent

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def resolve(self, rel: str) -> str | None:
        """``rel`` (relative to the checked root) resolved in the base tree,
        relative to the checked root; None when nothing is there."""
        found = self._walk(self.checkout.prefix + rel, rel)
        if found is None:
            return None
        path, kind = found
        if kind != "blob":
            raise self._error(rel, "is a directory, not a regular file" if kind == "tree" else f"is a {kind}")
        inside = self.checked if self.checked is not None else self.checkout.prefix
        if not path.startswith(inside):
            raise self._error(rel, "is a symlink that leads outside the checked directory")
        return path[len(inside):]

    def _walk(self, git_path: str, rel: str) -> tuple[str, str] | None:
        """Where ``git_path`` leads in the base tree, component by component,
        following relative symlinks; (path, kind) or None when nothing is there."""
        pending, hops = _parts(git_path), 0
        done: list[tuple[str, str]] = []  # (name, kind) of each component resolved
        while pending:
            name = pending.pop(0)
            if name == "..":
                self._up(done, rel)
                continue
            if name.lower() == ".git":
                raise self._error(rel, "goes through `.git`; git metadata is never read")
            entry = self._entry("/".join([p for p, _ in done] + [name]))
            if entry is None:
                return None
            if entry[0] == "120000":
                hops += 1
                pending[:0] = self._link(entry[2], rel, hops)
                continue
            done.append((name, entry[1]))
            if entry[1] != "tree" and pending:
                return None  # a file where a directory was expected: nothing there
        return "/".join(p for p, _ in done), (done[-1][1] if done else "tree")

    def _up(self, done: list, rel: str) -> None:
        if not done:
            raise self._error(rel, "leads outside the repository")
        done.pop()

    def _link(self, oid: str, rel: str, hops: int) -> list[str]:
        """The parts of a symlink's target, which must stay in the tree."""
        if hops > MAX_SYMLINKS:
            raise self._error(rel, f"goes through more than {MAX_SYMLINKS} symlinks (a loop?)")
        target = self._blob(oid, MAX_LINK_BYTES, rel).decode("utf-8", "surrogateescape")
        if target.startswith("/"):
            raise self._error(rel, "is a symlink that leads outside the repository")
        return _parts(target)

    def find_checked(self) -> None:
        """What the checked directory's path names at the base."""
        prefix = self.checkout.prefix
        found = self._walk(prefix, prefix.rstrip("/") or ".") if prefix else ("", "tree")
        self.checked = None if found is None or found[1] != "tree" else (found[0] + "/" if found[0] else "")

    def export(self, rel: str, max_bytes: int) -> str | None:
        """Copy the file ``rel`` names at the base to ``<root>/<rel>``;
        returns where it resolved to (relative to the checked root), None
        when it does not exist at the base."""
        rel = posixpath.normpath(rel.replace(os.sep, "/"))
        if rel == ".." or rel.startswith("../"):
            raise self._error(rel, "points outside the checked directory")
        resolved = self.resolve(rel)
        if resolved is None:
            return None
        inside = self.checked if self.checked is not None else self.checkout.prefix
        entry = self._entry(inside + resolved)
        assert entry is not None  # resolve() just found it
        data = self._blob(entry[2], max_bytes, rel)
        dest = os.path.join(self.root, *_parts(rel))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        return resolved

    def export_files_in(self, rel: str, cap: int, max_bytes: int) -> int:
        """Copy the regular files directly in the folder ``rel`` names at the
        base to ``<root>/<rel>/``, with one ``git ls-tree`` and one ``git
        cat-file --batch`` for all of them (a store's segments); the number
        copied. More than ``cap`` entries, or more than ``max_bytes``
        together, is a limit error naming the file."""
        found = self._walk(self.checkout.prefix + rel, rel)
        if found is None or found[1] != "tree":
            return 0
        res = self._git("ls-tree", "-z", "-l", "--full-tree", self.sha, "--", found[0] + "/")
        wanted: list[tuple[str, str]] = []
        left = max_bytes
        for count, entry in enumerate(filter(None, res.stdout.split(b"\x00"))):
            if count >= cap:
                raise InputError("limit", f"at the base commit `{_shown(rel)}` holds more than {cap} files",
                                 file=_shown(rel))
            meta, _, raw = entry.partition(b"\t")
            mode, _kind, oid, size = meta.decode("ascii", "replace").split()
            if mode not in ("100644", "100755"):
                continue
            name = posixpath.basename(raw.decode("utf-8", "surrogateescape"))
            n = int(size) if size.isdigit() else 0
            if n > left:
                raise InputError("limit", f"at the base commit the file is {n} bytes, over the limit of {left}",
                                 file=_shown(f"{rel}/{name}"))
            left -= n
            wanted.append((oid, name))
        if wanted:
            self._copy_blobs(wanted, rel)
        return len(wanted)

    def export_pages(self, folder: str, globs: Globs, limits: Limits, shown: str) -> int:
        """Copy the pages of a Markdown corpus (``globs``, relative to
        ``folder``, the config's folder relative to the checked root) from the
        base commit to the same places under :attr:`root`, with one
        ``git ls-tree`` and one ``git cat-file --batch`` for all of them; the
        number copied. A symlink the globs name, a name no page can have, more
        pages than ``max_records`` or more bytes together than
        ``max_file_bytes`` is an :class:`InputError`."""
        inside = self.checked if self.checked is not None else self.checkout.prefix
        top = inside + (folder + "/" if folder not in ("", ".") else "")
        starts = [(top + s).rstrip("/") for s in globs.starts]
        res = self._git("ls-tree", "-r", "-z", "-l", "--full-tree", self.sha, *(["--", *starts] if all(starts) else []))
        wanted = self._pages(res.stdout, top, globs, limits, shown)
        if wanted:
            self._copy_blobs(wanted, folder)
        return len(wanted)

    def _pages(self, listing: bytes, top: str, globs: Globs, limits: Limits, shown: str) -> list[tuple[str, str]]:
        """(oid, id) of each page the listing holds, its sizes within the limits."""
        out: list[tuple[str, str]] = []
        total = 0
        for entry in filter(None, listing.split(b"\x00")):
            meta, _, raw = entry.partition(b"\t")
            mode, _kind, oid, size = meta.decode("ascii", "replace").split()
            name = raw.decode("utf-8", "surrogateescape")
            if not name.startswith(top):
                continue
            rel = name[len(top):]
            if mode == "160000" or not (globs.wanted(rel) or (mode == "120000" and globs.could_hold(rel))):
                continue  # a submodule, or not a page
            check_page_name(rel, _shown(rel))
            if any(p in ("", ".", "..") or p.lower() == ".git" for p in rel.split("/")):
                raise self._error(rel, "is a path git does not allow in a tree (`..`, `.git`)")
            if mode == "120000":
                raise self._error(rel, "is a symlink; the pages of a Markdown corpus must be regular files")
            n = int(size) if size.isdigit() else 0
            if n > MAX_DOCUMENT_BYTES:
                raise InputError("limit", f"at the base commit the page is {n} bytes, over the limit of "
                                 f"{MAX_DOCUMENT_BYTES} for a page", file=_shown(rel))
            total += n
            if len(out) >= limits.max_records or total > limits.max_file_bytes:
                over = "pages" if len(out) >= limits.max_records else "bytes"
                raise InputError("limit", f"at the base commit the corpus globs `{safe_text(shown, 200)}` name more "
                                 f"{over} than the limits allow (`limits.max_records`, `limits.max_file_bytes`)",
                                 file=_shown(rel))
            out.append((oid, rel))
        return out

    def _copy_blobs(self, wanted: list[tuple[str, str]], folder: str) -> None:
        """The blobs, through one ``git cat-file --batch``, written under the root."""
        res = self._git("cat-file", "--batch", feed="".join(oid + "\n" for oid, _ in wanted).encode("ascii"))
        data, at = res.stdout, 0
        base = os.path.join(self.root, *_parts(folder))
        for oid, rel in wanted:
            header_end = data.index(b"\n", at)
            got_oid, kind, size = data[at:header_end].decode("ascii", "replace").split(" ")
            n = int(size)
            if got_oid != oid or kind != "blob":
                raise InputError("base", f"git could not read `{_shown(rel)}` at the base commit")
            dest = os.path.join(base, *_parts(rel))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(data[header_end + 1:header_end + 1 + n])
            at = header_end + 1 + n + 1

    def _entry(self, git_path: str) -> tuple[str, str, str] | None:
        res = self._git("ls-tree", "-z", "--full-tree", self.sha, "--", git_path)
        entry = res.stdout.split(b"\x00")[0]
        if not entry:
            return None
        meta, _, name = entry.partition(b"\t")
        if name.decode("utf-8", "surrogateescape") != git_path:
            return None
        mode, kind, oid = meta.decode("ascii", "replace").split(" ")
        return mode, kind, oid

    def _blob(self, oid: str, max_bytes: int, rel: str) -> bytes:
        size = self._git("cat-file", "-s", oid).stdout.strip()
        n = int(size) if size.isdigit() else 0
        if n > max_bytes:
            raise InputError(
                "limit", f"at the base commit the file is {n} bytes, over the limit of {max_bytes}",
                file=_shown(rel),
            )
        return self._git("cat-file", "blob", oid).stdout

    def _git(self, *args: str, feed: bytes | None = None):
        try:
            res = self.checkout.git(*args, feed=feed)
        except OSError:
            raise InputError("base", "git could not be run, so the base cannot be read") from None
        if res.returncode != 0:
            raise InputError("base", f"git could not read the base commit `{self.sha}` ({args[0]})")
        return res

    def _error(self, rel: str, why: str) -> InputError:
        return InputError("path", f"at the base commit `{_shown(rel)}` {why}", file=_shown(rel))


def _parts(path: str) -> list[str]:
    return [p for p in path.replace(os.sep, "/").split("/") if p not in ("", ".")]


def _shown(rel: str) -> str:
    return safe_text(posixpath.normpath(rel.replace(os.sep, "/")), 200)


def open_base(checkout: Checkout | None, rev: str, *, fetch: bool = False) -> BaseTree:
    """The base commit ``rev`` of ``checkout``; fetched from ``origin`` first
    when asked and absent. :class:`InputError` (kind ``base``) when it cannot
    be had, with what to change."""
    if not rev or rev.startswith("-") or any(c in rev for c in "\x00\n\r "):
        raise InputError("base", f"`{safe_text(rev, 80)}` is not a valid revision")
    if checkout is None:
        raise InputError("base", "there is no git checkout at or above the checked directory, so "
                                 "the base cannot be read; run the check in a clone of the repository")
    tree = BaseTree(checkout, rev, _commit(checkout, rev, fetch), tempfile.mkdtemp(prefix="rag-corpus-check-base-"))
    try:
        tree.find_checked()
    except InputError:
        tree.cleanup()
        raise
    return tree


def _commit(checkout: Checkout, rev: str, fetch: bool) -> str:
    try:
        sha = checkout.commit_of(rev)
        if sha is None and fetch and checkout.fetch(rev):
            sha = checkout.commit_of(rev)
    except GitError as exc:
        raise InputError("base", exc.message) from None
    if sha is not None:
        return sha
    shown = safe_text(rev, 80)
    fetched = " and could not be fetched from `origin`" if fetch else ""
    raise InputError(
        "base",
        f"base revision `{shown}` is not in this clone{fetched}. In a workflow, check out with "
        "`fetch-depth: 2` (actions/checkout) so the base is in the clone; on the command line, "
        f"`git fetch --depth=1 origin {shown}` first",  # head_vs_base adds how to opt out, once
    )
