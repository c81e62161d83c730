"""Paths and file access: the rules every input path obeys (see docs/security.md).

A path from the config is relative, has no NUL, no ``~``, and after resolving
every symlink stays inside the repository root and outside ``.git``; the
target is a regular file (not a FIFO, device or directory); bytes are counted
as they are read (``/proc`` files report size 0) and capped. Every failure is
an :class:`InputError` with file and line, never a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from rag_corpus_check.core.text import safe_text


class InputError(Exception):
    """A problem with one input file; carries the kind, file and line."""

    def __init__(self, kind: str, message: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.file = file
        self.line = line


@dataclass
class Tally:
    """What the files of one kind (``what``: e.g. "the gold files") have
    used of the limits so far: a list of gold files is bounded in total,
    not per file. Bytes are as read (decompressed for ``.gz``); ``packed``
    counts the compressed bytes behind the decompressed ``unpacked`` ones."""

    what: str
    bytes: int = 0
    records: int = 0
    packed: int = 0
    unpacked: int = 0

    def mark(self) -> tuple[int, int, int, int]:
        return self.bytes, self.records, self.packed, self.unpacked

    def reset(self, mark: tuple[int, int, int, int]) -> None:
        """Back to ``mark``: a reader that gave up (and another reads the file again)."""
        self.bytes, self.records, self.packed, self.unpacked = mark


# Decompressed bytes a kind's gzip files may hold beyond max_compression_ratio
# times their compressed bytes: small files compress worse than large ones.
RATIO_ALLOWANCE = 256 * 1024


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 2 * 1024**3
    max_line_bytes: int = 16 * 1024**2
    max_records: int = 5_000_000
    # Decompressed bytes per compressed byte of a kind's .gz files together
    # (above RATIO_ALLOWANCE): a gzip bomb ends within a few MB, not gigabytes.
    max_compression_ratio: int = 8
    # YAML/JSON documents are parsed whole: PyYAML (libyaml) builds ~1 MB/s of
    # small nodes, so 4 MiB stays within seconds; larger gold sets belong in JSONL.
    max_yaml_bytes: int = 4 * 1024**2
    max_yaml_nodes: int = 5_000_000
    max_depth: int = 64
    # What the files of this kind read so far used (None: each file on its own).
    tally: Tally | None = field(default=None, compare=False, repr=False)

    def of_kind(self, what: str) -> Limits:
        """These limits with a fresh :class:`Tally`: the files read with them
        are bounded together."""
        return replace(self, tally=Tally(what))

    def used(self) -> tuple[int, int]:
        """(bytes, records) the files of this kind read before used."""
        t = self.tally
        return (t.bytes, t.records) if t is not None else (0, 0)

    def charge(self, n_bytes: int, records: int = 0) -> None:
        """Count what a file of this kind read (nothing without a tally)."""
        if self.tally is not None:
            self.tally.bytes += n_bytes
            self.tally.records += records

    def together(self) -> str:
        """How a message names the files a total is over ("" for one file)."""
        t = self.tally
        return f" in {t.what} together" if t is not None and (t.bytes or t.records) else ""


CONFIG_MAX_BYTES = 1024 * 1024
# Whole-document reads (YAML, JSON) never exceed this, whatever max_file_bytes says.
MAX_DOCUMENT_BYTES = Limits.max_yaml_bytes


def resolve_input(root: str, base_dir: str, rel: str, display_hint: str) -> tuple[str, str]:
    """Resolve ``rel`` (from the config, relative to ``base_dir``) to a real
    path inside ``root``. Returns ``(real_path, display_path)`` where the display
    path is relative to the root. Raises InputError(kind="path")."""
    _check_written(rel, display_hint)
    real_root = os.path.realpath(root)
    joined = os.path.normpath(os.path.join(base_dir, rel))
    inside = _inside(joined, real_root)
    # The display path is for showing only, and later code prints it in more
    # places than one (messages, progress lines): make it safe once, here. A
    # name like `##[error]x.jsonl` is shown as `#\#[error]x.jsonl`.
    display = safe_text(os.path.relpath(joined, real_root) if inside else rel, 1024)
    if not inside:
        raise InputError("path", f"{display_hint}: `{safe_text(rel)}` points outside the repository; "
                                 "inputs must live in the repository being checked")
    if _in_git_dir(joined, real_root):
        raise InputError("path", f"{display_hint}: `{safe_text(display)}` is inside `.git`; git metadata (which can hold a "
                                 "token) is never read — point the config at a file in the working tree")
    real = os.path.realpath(joined)
    _check_resolved(real, real_root, display, display_hint)
    return real, display


def _check_written(rel, display_hint: str) -> None:
    """The path as the config writes it: a non-empty relative path."""
    if not isinstance(rel, str) or rel == "":
        raise InputError("path", f"{display_hint}: the path must be a non-empty string")
    if "\x00" in rel:
        raise InputError("path", f"{display_hint}: the path contains a NUL character")
    if rel.startswith("~"):
        raise InputError("path", f"{display_hint}: `~` paths are not allowed; use a path relative to the config")
    if os.path.isabs(rel) or rel.startswith("\\"):
        raise InputError("path", f"{display_hint}: absolute paths are not allowed; use a path relative to the "
                                 "config file")


def _check_resolved(real: str, real_root: str, display: str, display_hint: str) -> None:
    """Where the path leads after every symlink: inside the root, outside
    ``.git``, to something that exists and can be read."""
    shown = safe_text(display)
    if not _inside(real, real_root):
        raise InputError("path", f"{display_hint}: `{shown}` is a symlink that leads outside the repository; "
                                 "replace it with the file itself", file=display)
    if _in_git_dir(real, real_root):
        raise InputError("path", f"{display_hint}: `{shown}` is a symlink into `.git`; git metadata (which can "
                                 "hold a token) is never read — replace it with the file itself", file=display)
    # Fail here, with the path's own words, rather than in whoever stats it next.
    try:
        os.stat(real)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise InputError("path", "file not found", file=display) from None
        why = _STAT_ERRORS.get(exc.errno or 0, f"cannot be read ({exc.__class__.__name__})")
        raise InputError("path", f"{display_hint}: `{shown}` {why}", file=display) from None


_STAT_ERRORS = {
    errno.ELOOP: "is a symlink loop",
    errno.EACCES: "cannot be read (permission denied)",
    errno.ENOTDIR: "has a part that is not a directory",
    errno.ENAMETOOLONG: "is too long",
}


def _in_git_dir(path: str, root: str) -> bool:
    """True when ``path`` (inside ``root``) goes through a ``.git`` entry. The
    checkout's ``.git/config`` can hold the job's token (``persist-credentials``)."""
    rel = os.path.relpath(os.path.abspath(path), root)
    return any(part.lower() == ".git" for part in rel.replace("\\", "/").split("/"))


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(path), root]) == root
    except ValueError:
        return False


def open_regular(real: str, display: str, max_bytes: int):
    """Open a regular file for binary reading, refusing anything else."""
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError("path", "file not found", file=display) from None
    except IsADirectoryError:
        raise InputError("path", "is a directory, expected a file", file=display) from None
    except OSError as exc:
        why = {
            errno.ELOOP: "it is a symlink loop",
            errno.EACCES: "permission denied",
            errno.ENOTDIR: "a part of the path is not a directory",
            errno.ENAMETOOLONG: "the path is too long",
        }.get(exc.errno or 0, exc.__class__.__name__)
        raise InputError("path", f"cannot open the file ({why})", file=display) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InputError("path", f"is {what}; inputs must be regular files", file=display)
    if st.st_size > max_bytes:
        os.close(fd)
        raise InputError(
            "limit",
            f"file is {st.st_size} bytes, over the limit of {max_bytes} "
            "(raise `limits.max_file_bytes` in the config if this is intended)",
            file=display,
        )
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb", buffering=1024 * 1024)


# Files a reader refused for a size limit, by identity. The pipeline hashes
# every input for the provenance; reading a 2 GB file whole for that, after
# its first line was refused, took 6 s (measured). Such a file is not hashed.
_REFUSED: dict[tuple, None] = {}


def _identity(f) -> tuple:
    st = os.fstat(f.fileno())
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _refused(f, exc: InputError) -> InputError:
    if len(_REFUSED) > 1000:
        _REFUSED.clear()
    _REFUSED[_identity(f)] = None
    return exc


def file_size(real: str) -> int | None:
    """The size a regular file reports (for progress percentages only; reads
    are still counted as they happen). None when unknown."""
    try:
        return os.stat(real).st_size or None
    except OSError:
        return None


def stored_bytes(base_dir: str, files: Iterable[str]) -> int | None:
    """The size on disk of ``files`` (relative to ``base_dir``), as stored
    (a gzip file's compressed size): the bytes the per-byte work budgets are
    given for. None when one cannot be stat'ed."""
    try:
        return sum(os.stat(os.path.join(base_dir, rel)).st_size for rel in files)
    except (OSError, ValueError):
        return None
