"""The fast scanners. JSONL: a block of lines at a time, decoded once, values
scanned in place by the C scanner of ``json``, objects kept as pair tuples
(so a duplicate key is still visible without a Python call per object). It
gives up (:class:`Slow`) at anything :func:`jsontext.iter_jsonl` would refuse
or treat specially; the readers then use the exact path from the start.
Text formats (TREC): blocks of decoded lines (:func:`text_blocks`), split
into fields by the reader.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import json
import json.scanner
from collections.abc import Iterator
from itertools import repeat
from operator import itemgetter

from rag_corpus_check.safe_io.content import open_input
from rag_corpus_check.safe_io.jsontext import (
    _SURROGATE_ESCAPE,
    _lone_surrogate,
    _parse_float,
    _reject_constant,
)
from rag_corpus_check.safe_io.paths import InputError, Limits


class Slow(Exception):
    """Raised by a fast reader that met anything it does not handle (an
    invalid, blank or unusual line, a limit close by). The caller starts over
    with the exact reader, which finds and words the problem; a fast reader
    never reports one."""


@contextlib.contextmanager
def no_gc():
    """The cyclic GC paused: the fast readers build many short-lived tuples
    and dicts and no reference cycles, and each collection would walk the
    growing corpus again (measured: 0.1 s of 1.5 s at 100k documents).
    Afterwards what was read is frozen (gc.freeze): it lives until the
    check ends, and the next collections would walk all of it once more
    (measured: 32 collections, 0.11 s at 100k documents and 10k questions).
    Reference counting still frees it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()



# Objects come out as tuples of (key, value) pairs, built in C: a duplicate
# key is still there to be found (``objects``) without a Python call per
# object. JSON has no other source of tuples, so a tuple is always an object.
# (typeshed types the C scanner as a class that takes one of itself)
_SCAN = json.scanner.make_scanner(
    json.JSONDecoder(object_pairs_hook=tuple, parse_constant=_reject_constant, parse_float=_parse_float)  # type: ignore[arg-type]
)
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
BLOCK = 1 << 16  # measured: 64 KiB blocks stay in cache (1 MiB blocks were 60% slower)


def jsonl_blocks(real: str, display: str, limits: Limits, hasher=None) -> Iterator[tuple[int, list, list]]:
    """The fast reader's lines: ``(first_line_number, raw_lines, values)`` per
    block of whole lines, where ``values`` are the parsed lines with objects as
    pair tuples (see :func:`objects`). Raises :class:`Slow` on anything
    :func:`iter_jsonl` would refuse or treat specially — a blank line, a BOM,
    a CR that is not part of CRLF, invalid UTF-8 or JSON, a lone surrogate,
    a limit within reach — so a file read here reads the same there."""
    lineno = 1
    seen_records = limits.used()[1]
    for data in _whole_lines(real, display, limits, hasher):
        if lineno == 1 and data.startswith(_BOMS):
            raise Slow
        values, raw_lines = _parse_block(data)
        n = len(values)
        if max(map(len, raw_lines)) >= limits.max_line_bytes or seen_records + lineno - 1 + n > limits.max_records:
            raise Slow
        yield lineno, raw_lines, values
        lineno += n
    limits.charge(0, lineno - 1)  # read to the end (a reader that gives up resets the tally)


def text_blocks(real: str, display: str, limits: Limits, hasher=None, block: int = BLOCK) -> Iterator[tuple[int, str, int]]:
    """The fast reader's lines of a text format (TREC runs):
    ``(first_line_number, text, n_lines)`` per block of whole lines, decoded,
    CRLF read as LF, the text ending with a line end. Raises :class:`Slow` on
    anything :func:`iter_text_lines` would refuse or treat specially — a
    BOM, a CR that is not part of CRLF, invalid UTF-8, a limit within reach
    (a blank line is the reader's to see) — so a file read here reads the
    same there."""
    lineno = 1
    seen_records = limits.used()[1]
    for data in _whole_lines(real, display, limits, hasher, block):
        data = _lf_lines(data, lineno == 1)
        n = data.count(b"\n")
        _within(data, seen_records + lineno - 1 + n, limits)
        yield lineno, _utf8(data), n
        lineno += n
    limits.charge(0, lineno - 1)  # read to the end (a reader that gives up resets the tally)


def _lf_lines(data: bytes, first: bool) -> bytes:
    """A block's lines with LF line ends, the last one too; :class:`Slow`
    on a BOM or a CR that is not part of CRLF."""
    if first and data.startswith(_BOMS):
        raise Slow
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:
            raise Slow
    return data if data.endswith(b"\n") else data + b"\n"


def _within(data: bytes, records: int, limits: Limits) -> None:
    """:class:`Slow` when the records so far or a line of the block reach a limit."""
    if records > limits.max_records:
        raise Slow
    if len(data) >= limits.max_line_bytes and max(map(len, data.split(b"\n"))) >= limits.max_line_bytes:
        raise Slow


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Slow from None


def _whole_lines(real: str, display: str, limits: Limits, hasher=None, block: int = BLOCK) -> Iterator[bytes]:
    """The file in blocks of about ``block`` bytes, each ending at a line end
    (the last one at the end of the file); ``hasher`` fed what is read."""
    f, feed = open_input(real, display, limits.max_file_bytes, hasher, limits)
    seen_bytes = limits.used()[0]
    with f:
        total = 0
        rest = b""
        while chunk := _read(f, block):
            if feed is not None:
                feed.update(chunk)
            total += len(chunk)
            if seen_bytes + total > limits.max_file_bytes:
                raise Slow
            cut = chunk.rfind(b"\n") + 1
            if cut == 0:  # a line longer than a block
                rest += chunk
                if len(rest) >= limits.max_line_bytes:
                    raise Slow
                continue
            yield rest + chunk[:cut]
            rest = chunk[cut:]
        if rest:
            yield rest  # the last line has no line end
    limits.charge(total)


def _read(f, n: int) -> bytes:
    """A block; a gzip file that is damaged or over its compression ratio
    is :class:`Slow`, so the exact reader says so with the line."""
    try:
        return f.read(n)
    except InputError:
        raise Slow from None


def _parse_block(data: bytes) -> tuple[list, list]:
    """The values and the raw lines of a block of whole lines."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:
            raise Slow
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Slow from None
    if len(text) == len(data):  # ASCII: character offsets are byte offsets
        values, raw_lines = _scan_ascii(text, data)
    else:
        values, raw_lines = _scan_split(text, data)
    # "\\" first: one memchr, where the regex alone costs ~1 ns a byte.
    if "\\" in text and _SURROGATE_ESCAPE.search(text) and _lone_surrogate(values):
        raise Slow
    return values, raw_lines


def _scan_ascii(text: str, data: bytes) -> tuple[list, list]:
    """The values of an ASCII block, scanned in place one after the other
    (no copy of each line), and each line's bytes as a memoryview."""
    values: list = []
    ends: list[int] = []
    pos, size = 0, len(text)
    try:
        while pos < size:
            value, end = _SCAN(text, pos)
            if end < size and text[end] != "\n":
                raise Slow  # more after the value
            values.append(value)
            ends.append(end)
            pos = end + 1
    except (ValueError, StopIteration, RecursionError):
        raise Slow from None  # also a blank line, or one that starts with a space
    # A value spread over lines (JSON allows a line end as a space) ends on
    # a line end too: each line end must close a value.
    if text.count("\n") != len(ends) - (ends[-1] == size):
        raise Slow
    view = memoryview(data)
    starts = [0, *map((1).__add__, ends[:-1])]  # each value starts after the last line end
    return values, list(map(view.__getitem__, map(slice, starts, ends)))


def _scan_split(text: str, data: bytes) -> tuple[list, list]:
    """:func:`_scan_ascii` for a block with other characters: split into
    lines (as text and as bytes), then each line scanned."""
    raw_lines = data.split(b"\n")
    if not raw_lines[-1]:
        raw_lines.pop()
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    try:
        found = list(map(_SCAN, lines, repeat(0)))
    except (ValueError, StopIteration, RecursionError):
        raise Slow from None
    if list(map(itemgetter(1), found)) != list(map(len, lines)):
        raise Slow  # more after the value (or a line that was all spaces)
    return list(map(itemgetter(0), found)), raw_lines


def objects(values: list) -> list[dict]:
    """The top-level pair tuples of a block as dicts; :class:`Slow` for a
    line that is not an object or has a duplicate key. Nested objects stay
    pair tuples: :func:`thaw` them where they are kept."""
    if set(map(type, values)) != {tuple}:
        raise Slow
    dicts = list(map(dict, values))
    if list(map(len, dicts)) != list(map(len, values)):
        raise Slow
    return dicts


def thaw(value):
    """A nested value from :func:`jsonl_blocks` with pair tuples made dicts;
    :class:`Slow` on a duplicate key at any depth."""
    try:
        return _thaw(value)
    except RecursionError:
        raise Slow from None


def _thaw(v):
    kind = type(v)
    if kind is tuple:
        d = dict(v)
        if len(d) != len(v):
            raise Slow
        return {k: _thaw(x) for k, x in d.items()}
    if kind is list:
        return list(map(_thaw, v))
    return v
