"""What an input file holds, opened: its bytes, or a gzip file's decompressed
bytes (``.gz``), and two things that are not the file a user meant — a Git
LFS pointer and a compressed file without ``.gz`` — refused with the fix.

Every reader opens its file through :func:`open_input`. A digest is always
of the bytes on disk (what ``sha256sum`` and git see), also for ``.gz``:
:func:`open_input` then feeds the hasher itself and hands the caller none.
The limits (``max_file_bytes``, ``max_line_bytes``, ``max_records``) apply to
the decompressed bytes the readers count, so a gzip bomb ends in a ``limit``
error after at most a limit's worth of output.
"""

from __future__ import annotations

import os
import sys
import zlib

from rag_corpus_check.safe_io.paths import (
    MAX_DOCUMENT_BYTES,
    RATIO_ALLOWANCE,
    InputError,
    Limits,
    _refused,
    open_regular,
)

LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"
GZIP_MAGIC = b"\x1f\x8b"
# A YAML or JSON document is parsed whole, at ~3x the CPU per byte of JSONL
# (measured: 4 MiB of YAML questions 11.9 CPU-s, 7.9 MB of JSONL ones 6.6):
# compressed, it keeps to a third of max_compression_ratio.
DOCUMENT_RATIO_DIVISOR = 3
# A line read costs at least what this many bytes do (a Python iteration, a
# parse): towards the ratio, a short line counts as LINE_COST bytes, so a gzip
# of blank or two-byte lines ends as soon as one of long lines would.
LINE_COST = 16
PIECE = 1024 * 1024  # a long line or a document is decompressed and counted this much at a time


def compressed(display: str) -> bool:
    """Whether a file is read as gzip: its name ends in ``.gz``."""
    return display.lower().endswith(".gz")


def plain_name(display: str) -> str:
    """The name without ``.gz``: its extension tells the format."""
    return display[:-3] if compressed(display) else display


def open_input(real: str, display: str, max_bytes: int, hasher=None, limits: Limits | None = None,
               document: bool = False):
    """``(stream, hasher)``: a binary stream of the file's content and the
    hasher the caller must feed with what it reads (None when the stream
    feeds it: a gzip file's digest is of its compressed bytes). A gzip
    stream keeps to ``limits.max_compression_ratio`` (of the kind's files
    together, with a tally); a ``document`` (YAML or JSON, parsed whole at
    ~3x the CPU per byte of JSONL) to a third of it (at least 1)."""
    f = open_regular(real, display, max_bytes)
    try:
        head = os.pread(f.fileno(), len(LFS_POINTER), 0)
        _refuse_impostor(head, display)
    except BaseException:
        f.close()
        raise
    if not compressed(display):
        return f, hasher
    return Gunzip(f, display, hasher, limits or Limits(), DOCUMENT_RATIO_DIVISOR if document else 1), None


def _refuse_impostor(head: bytes, display: str) -> None:
    if head.startswith(LFS_POINTER):
        raise InputError(
            "parse", "this is a Git LFS pointer, not the file: the checkout did not fetch LFS content — "
            "set `lfs: true` on actions/checkout (locally: `git lfs pull`)", file=display, line=1)
    if head.startswith(GZIP_MAGIC) and not compressed(display):
        raise InputError("parse", "this file is gzip-compressed: name it with `.gz` at the end to have it "
                         "read decompressed", file=display, line=1)


def read_bytes(real: str, display: str, max_bytes: int, hasher=None, ceiling: int = MAX_DOCUMENT_BYTES,
               limits: Limits | None = None) -> bytes:
    """Read a whole document (YAML or JSON, parsed in memory) of at most
    ``max_bytes`` and never more than ``ceiling`` (for ``.gz``:
    decompressed): a 2 GB file must be refused before it is read, not after.
    ``hasher`` is fed the bytes on disk, so provenance needs no second read.
    With ``limits`` (and its tally), ``max_bytes`` is what the kind's files
    read before left of ``max_file_bytes``, and the bytes read are counted."""
    cap = max(0, min(_left(max_bytes, limits), ceiling))
    f, feed = open_input(real, display, sys.maxsize, hasher, limits, document=True)  # the cap below: better message
    with f:
        size = os.fstat(f.fileno()).st_size if feed is not None else 0  # gzip: what it holds is unknown
        data = f.read(cap + 1) if size <= cap else b""  # count what is read: /proc reports 0
        if len(data) > cap or size > cap:
            raise _refused(f, _too_big(display, max(size, len(data)), cap, feed is None, cap == ceiling))
        if feed is not None:
            feed.update(data)
        if limits is not None:
            limits.charge(len(data))
        return data


def _left(max_bytes: int, limits: Limits | None) -> int:
    """``max_bytes``, and no more than what the kind's files read before left of ``max_file_bytes``."""
    return max_bytes if limits is None else min(max_bytes, limits.max_file_bytes - limits.used()[0])


def _too_big(display: str, size: int, cap: int, decompressed: bool, document_cap: bool) -> InputError:
    what = f"over {cap} bytes decompressed" if decompressed else f"{size} bytes"
    why = f"file is {what}, over the limit of {cap} bytes"
    if document_cap and cap == MAX_DOCUMENT_BYTES:
        why += (" for a YAML or JSON document (it is parsed whole, in memory); put a gold set this large "
                "in JSONL, one question per line, or TREC qrels")
    return InputError("limit", why, file=display)


class _Tee:
    """The compressed file, read by gzip, each block fed to the hasher."""

    def __init__(self, f, hasher):
        self.f, self.hasher = f, hasher
        self.count = 0  # compressed bytes read

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.count += len(data)
        if self.hasher is not None:
            self.hasher.update(data)
        return data


class Gunzip:
    """A gzip file's content as a binary stream; a damaged or truncated file
    is an :class:`InputError`, never a traceback, and so is one that
    decompresses to more than ``limits.max_compression_ratio`` times the
    compressed bytes read (a gzip bomb: 6.3 MB of one repeated line were
    2.3 GB), checked as it is read."""

    def __init__(self, f, display: str, hasher=None, limits: Limits | None = None, divisor: int = 1):
        self.raw, self.display = f, display
        self.limits = limits or Limits()
        self.divisor = divisor
        self.tee = _Tee(f, hasher)
        self.unpacked = 0
        import gzip  # only for a .gz input

        self.gz = gzip.GzipFile(fileobj=self.tee, mode="rb")  # type: ignore[call-overload]

    def _count(self, data: bytes, extra: int = 0) -> bytes:
        self.unpacked += len(data) + extra
        t, ratio = self.limits.tally, max(1, self.limits.max_compression_ratio // self.divisor)
        packed = self.tee.count + (t.packed if t is not None else 0)
        unpacked = self.unpacked + (t.unpacked if t is not None else 0)
        if unpacked > ratio * packed + RATIO_ALLOWANCE:
            raise _refused(self.raw, self._bomb(ratio, unpacked, packed))
        return data

    def _bomb(self, ratio: int, unpacked: int, packed: int) -> InputError:
        document = (f" (a YAML or JSON document, parsed whole: 1/{self.divisor} of the limit)"
                    if self.divisor > 1 else "")
        return InputError(
            "limit", f"decompresses to more than {ratio} times its compressed size{self.limits.together()} "
            f"({unpacked} bytes counted from the first {packed} compressed){document}: a gzip bomb? (raise "
            "`limits.max_compression_ratio` in the config if this is intended)", file=self.display)

    def fileno(self) -> int:
        return self.raw.fileno()

    def read(self, n: int = -1) -> bytes:
        left = n if n >= 0 else sys.maxsize
        pieces = []
        try:
            while left > 0 and (piece := self.gz.read(min(left, PIECE))):
                pieces.append(self._count(piece))
                left -= len(piece)
        except (OSError, EOFError, zlib.error) as exc:
            raise self._damaged(exc) from None
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def readline(self, n: int = -1) -> bytes:
        """A line of at most ``n`` bytes, decompressed a piece of at most
        :data:`PIECE` at a time and each piece counted, so a 16 MiB line of
        zeros ends at the ratio, not after the whole line."""
        left = n if n >= 0 else sys.maxsize
        pieces = []
        try:
            while left > 0:
                piece = self.gz.readline(min(left, PIECE))
                pieces.append(self._count(piece))
                left -= len(piece)
                if not piece or piece.endswith(b"\n"):
                    break
        except (OSError, EOFError, zlib.error) as exc:
            raise self._damaged(exc) from None
        line = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        if line:
            self._count(b"", max(0, LINE_COST - len(line)))
        return line

    def _damaged(self, exc: Exception) -> InputError:
        why = "it ends before its end (truncated)" if isinstance(exc, EOFError) else "it is not valid gzip data"
        return InputError("parse", f"cannot decompress: {why}", file=self.display)

    def close(self) -> None:
        t = self.limits.tally
        if t is not None:
            t.packed += self.tee.count
            t.unpacked += self.unpacked
            self.tee.count = self.unpacked = 0
        self.gz.close()
        self.raw.close()

    def __enter__(self) -> Gunzip:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
