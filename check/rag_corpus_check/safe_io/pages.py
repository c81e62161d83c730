"""A folder of pages (a Markdown corpus): which files a config's globs name,
found without following a symlink, and each page's text.

The globs are relative to the config's folder (``docs/**/*.md``): ``*`` is
any characters but ``/``, ``?`` one of them, a ``**`` part any number of
folders (none included). The walk starts at each glob's literal folder,
never follows a symlink, never enters ``.git``; a symlink a glob names (or
a symlinked folder it would look into) is an error, as is a page name that
is not UTF-8 or holds a control character. At most ``max_records`` pages,
and their bytes together within ``max_file_bytes`` (one tally).
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import stat
from dataclasses import dataclass

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.safe_io.content import read_bytes
from rag_corpus_check.safe_io.paths import MAX_DOCUMENT_BYTES, InputError, Limits

# Directory entries one listing may look at: a walk is bounded by more than the pages it keeps.
MAX_ENTRIES = 1_000_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Page:
    """One page: its real path, its path as messages show it (relative to
    the root) and its id (relative to the config's folder, with ``/``)."""

    real: str
    display: str
    id: str


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression of one glob (see the module docstring)."""
    parts = pattern.split("/")
    out = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append("".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part))
        if not last:
            out.append("/")
    return re.compile("".join(out))


def _literal_folder(pattern: str) -> str:
    """The folders before a glob's first wildcard ("" for the config's folder)."""
    parts = pattern.split("/")[:-1]
    kept = []
    for part in parts:
        if "*" in part or "?" in part:
            break
        kept.append(part)
    return "/".join(kept)


class Globs:
    """The pages' globs, and the ones left out, compiled once."""

    def __init__(self, paths: tuple[str, ...], exclude: tuple[str, ...]) -> None:
        self.include = [glob_regex(p) for p in paths]
        self.exclude = [glob_regex(p) for p in exclude]
        folders = sorted({_literal_folder(p) for p in paths})
        # a folder under another is walked with it
        self.starts = [f for f in folders if not any(f != g and (g == "" or f.startswith(g + "/")) for g in folders)]
        self._prefixes = [_literal_folder(p) for p in paths]

    def wanted(self, rel: str) -> bool:
        return any(r.fullmatch(rel) for r in self.include) and not any(r.fullmatch(rel) for r in self.exclude)

    def could_hold(self, folder: str) -> bool:
        """Whether a glob may name a page under ``folder`` (a symlinked folder there is refused)."""
        return any(p == "" or folder == p or folder.startswith(p + "/") or p.startswith(folder + "/")
                   for p in self._prefixes)


def list_pages(root: str, base_dir: str, globs: Globs, limits: Limits, shown: str) -> list[Page]:
    """The pages the globs name under ``base_dir`` (inside ``root``), by id.
    :class:`InputError` for a symlink, a name that cannot be an id, or more
    pages than ``max_records`` (``shown``: the corpus as messages name it)."""
    real_root = os.path.realpath(root)
    found: dict[str, Page] = {}
    budget = [MAX_ENTRIES]
    for start in globs.starts:
        folder = os.path.join(base_dir, *start.split("/")) if start else base_dir
        if not os.path.lexists(folder):
            continue
        if os.path.realpath(folder) != os.path.normpath(folder):
            raise InputError("path", f"`{safe_text(start, 200)}` (a folder the corpus globs name) is or goes through a "
                             "symlink; pages must be regular files in the repository — replace the link with the "
                             "folder", file=_display(real_root, folder))
        _walk(folder, start, real_root, globs, limits, found, budget, shown)
    return [found[k] for k in sorted(found)]


def _walk(folder: str, rel: str, real_root: str, globs: Globs, limits: Limits, found: dict[str, Page],
          budget: list[int], shown: str) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return  # not a folder, or not readable: it holds no page
    for entry in entries:
        budget[0] -= 1
        if budget[0] < 0:
            raise InputError("limit", f"the corpus globs `{safe_text(shown, 200)}` look through more than "
                             f"{MAX_ENTRIES} files and folders; name the pages' folders more narrowly",
                             file=_display(real_root, folder))
        name = entry.name
        if name.lower() == ".git":
            continue
        child = f"{rel}/{name}" if rel else name
        _visit(entry, child, real_root, globs, limits, found, budget, shown)


def _visit(entry: os.DirEntry, child: str, real_root: str, globs: Globs, limits: Limits, found: dict[str, Page],
           budget: list[int], shown: str) -> None:
    st = entry.stat(follow_symlinks=False)
    if stat.S_ISDIR(st.st_mode):
        if globs.could_hold(child):
            _walk(entry.path, child, real_root, globs, limits, found, budget, shown)
        return
    wanted = globs.wanted(child) or (stat.S_ISLNK(st.st_mode) and globs.could_hold(child))
    if not wanted:
        return
    display = _display(real_root, entry.path)
    check_page_name(child, display)
    if not stat.S_ISREG(st.st_mode):
        what = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        raise InputError("path", f"is {what}; the pages of a Markdown corpus must be regular files in the "
                         "repository — replace it with the page itself, or leave it out with `exclude:`",
                         file=display)
    if len(found) >= limits.max_records:
        raise InputError("limit", f"the corpus globs `{safe_text(shown, 200)}` name more than {limits.max_records} "
                         "pages (raise `limits.max_records` in the config if this is intended)", file=display)
    found[child] = Page(entry.path, display, child)


def check_page_name(rel: str, display: str) -> None:
    """A page name that can be an id (UTF-8, no control character, at most 512 characters)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("path", "the page's name is not UTF-8; rename it", file=display) from None
    if _CONTROL.search(rel) or len(rel) > 512:
        raise InputError("path", "the page's name holds a control character or is over 512 characters, so it "
                         "cannot be an id; rename it", file=display)


def _display(real_root: str, path: str) -> str:
    rel = os.path.relpath(path, real_root).replace(os.sep, "/")
    return safe_text(rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), 1024)


def page_text(page: Page, limits: Limits, hasher=None) -> str:
    """A page's text: UTF-8 (a BOM dropped), within the limits of the pages
    together (``limits`` with a tally) and at most 4 MiB each. ``hasher`` is
    fed its id and bytes."""
    used = limits.used()[0]
    try:
        data = read_bytes(page.real, page.display, limits.max_file_bytes, hashlib.sha256(), ceiling=MAX_DOCUMENT_BYTES,
                          limits=limits)
    except InputError as exc:
        if exc.kind == "limit" and used + MAX_DOCUMENT_BYTES > limits.max_file_bytes:
            raise InputError("limit", f"the pages together are over {limits.max_file_bytes} bytes with this one "
                             "(raise `limits.max_file_bytes` in the config if this is intended)",
                             file=page.display) from None
        if exc.kind == "limit":
            raise InputError("limit", f"the page is over the limit of {MAX_DOCUMENT_BYTES} bytes for one page "
                             "(it is parsed whole, in memory); split it into smaller pages",
                             file=page.display) from None
        raise
    if hasher is not None:
        hasher.update(page.id.encode("utf-8") + b"\x00" + len(data).to_bytes(8, "big") + data)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError("parse", "the page is not UTF-8 (an invalid byte on this line); save it as UTF-8",
                         file=page.display, line=line) from None
