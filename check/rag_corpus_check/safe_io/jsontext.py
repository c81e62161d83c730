"""Text decoding, strict JSON and the line readers of JSONL and TREC files.

Readers split JSONL on ``\\n`` only, reject duplicate keys, NaN/Infinity,
overflowing numbers and lone surrogates, and report every failure as an
:class:`InputError` with its line.
"""

from __future__ import annotations

import codecs
import json
import json.scanner
import math
import re
from collections.abc import Callable, Iterator

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.safe_io.content import Gunzip, open_input, read_bytes
from rag_corpus_check.safe_io.paths import InputError, Limits, _refused

# ---------------------------------------------------------------- text decoding


def decode_utf8(raw: bytes, display: str, line: int | None) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        col = exc.start + 1
        raise InputError(
            "parse",
            f"invalid UTF-8 at byte {col} of the line; save the file as UTF-8",
            file=display,
            line=line,
        ) from None
    return text


def _check_bom(raw: bytes, display: str) -> bytes:
    if raw.startswith(codecs.BOM_UTF8):
        return raw[len(codecs.BOM_UTF8) :]
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise InputError(
            "parse", "the file is UTF-16; save it as UTF-8", file=display, line=1
        )
    return raw


# ---------------------------------------------------------------- strict JSON


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON (non-finite numbers are not allowed)")


def _parse_float(s: str) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise ValueError("a number is too large to represent (overflows to infinity)")
    return v


def _pairs(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"duplicate key `{safe_text(k, 60)}` in one object")
            seen.add(k)
    return d


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_reject_constant, parse_float=_parse_float
)
# The decoder's own scanner (C), and JSON's whitespace as json.decoder has it.
# (typeshed types the C scanner as a class that takes one of itself)
_SCAN_ONCE = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]
_SPACE = re.compile(r"[ \t\n\r]*").match


def _decode(text: str):
    """``_DECODER.decode(text)`` without its two Python frames per call (a
    JSONL file is decoded a line at a time): the same value, the same errors."""
    start = _after_space(text, 0) if text[:1] in _JSON_SPACE else 0
    try:
        value, end = _SCAN_ONCE(text, start)
    except StopIteration as err:
        raise json.JSONDecodeError("Expecting value", text, err.value) from None
    if end != len(text):
        end = _after_space(text, end)
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    return value


_JSON_SPACE = frozenset(" \t\n\r")


def _after_space(text: str, pos: int) -> int:
    """The first position from ``pos`` that is not JSON whitespace."""
    m = _SPACE(text, pos)
    return pos if m is None else m.end()


# A `\uD800`-`\uDFFF` escape: JSON can spell a lone UTF-16 surrogate, which is
# not Unicode text (it cannot be written as UTF-8: the results file would fail).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):  # tuples: pairs from the fast reader
            stack.extend(v)
    return False


def loads_strict(text: str, display: str, line: int | None):
    """json.loads with duplicate keys, NaN/Infinity, overflow and lone
    surrogates rejected, and every failure (including deep nesting) turned
    into an InputError."""
    try:
        value = _decode(text)
    except json.JSONDecodeError as exc:
        # exc.msg describes the syntax error; it does not echo the input.
        raise InputError("parse", f"invalid JSON: {exc.msg} (column {exc.colno})", file=display,
                         line=exc.lineno if line is None else line) from None
    except RecursionError:
        raise InputError("limit", "JSON nested too deeply", file=display, line=line) from None
    except ValueError as exc:
        raise InputError("parse", f"invalid JSON: {_value_error(exc)}", file=display, line=line) from None
    # "\\" first: one memchr, where the regex alone costs ~1 ns a byte.
    if "\\" in text and _SURROGATE_ESCAPE.search(text) and _lone_surrogate(value):
        raise InputError("parse", "invalid JSON: a string contains a lone UTF-16 surrogate (a \\uD800–\\uDFFF "
                         "escape without its pair), which is not Unicode text", file=display, line=line)
    return value


def _value_error(exc: ValueError) -> str:
    """Our own hooks' words, and int()'s over 4300 digits."""
    msg = str(exc)
    return "an integer has too many digits" if "Exceeds the limit" in msg or "int string conversion" in msg else msg


def _lines(real: str, display: str, limits: Limits, hasher=None, blank: bool = False) -> Iterator[tuple[int, bytes]]:
    """``(line_number, bytes)`` of each line, split on ``\\n`` only, without
    its line ending (``\\n`` or ``\\r\\n``) and without a UTF-8 BOM on line 1.
    Enforces the file, line and record limits (with a :class:`Tally`, on the
    files of the kind together); blank lines (spaces, tabs, CR)
    are skipped and do not count as records (in a ``.gz`` file they do: a
    bomb of line ends must end at the limit too). ``hasher`` holds the file's
    digest once the lines are exhausted. With ``blank``, blank lines are
    yielded too (a CSV field in quotes may hold one), still not counted."""
    f, feed = open_input(real, display, limits.max_file_bytes, hasher, limits)
    seen_bytes, seen_records = limits.used()
    lineno = total = records = 0
    # The limits as plain numbers: the checks below run once a line.
    bytes_left, line_cap = limits.max_file_bytes - seen_bytes, limits.max_line_bytes
    try:
        with f:
            while raw := _readline(f, line_cap + 1, lineno + 1):
                if feed is not None:
                    feed.update(raw)
                lineno += 1
                total += len(raw)
                if total > bytes_left or len(raw) > line_cap:
                    _within(f, limits, seen_bytes + total, raw, display, lineno)
                if seen_records + lineno > limits.max_records and isinstance(f, Gunzip):
                    raise _refused(f, _over("max_records", f"more than {limits.max_records} lines"
                                            f"{limits.together()}", display, lineno))
                raw = _content(raw, display, lineno)
                if not raw.strip(b" \t\r"):
                    if blank:
                        yield lineno, raw
                    continue
                records += 1
                if seen_records + records > limits.max_records:
                    raise _refused(f, _over("max_records", f"more than {limits.max_records} records"
                                            f"{limits.together()}", display, lineno))
                yield lineno, raw
    finally:
        limits.charge(total, lineno if isinstance(f, Gunzip) else records)


def _readline(f, n: int, lineno: int) -> bytes:
    """A line; a gzip file's error (damaged, over its compression ratio) at that line."""
    try:
        return f.readline(n)
    except InputError as exc:
        exc.line = exc.line or lineno
        raise


def _over(name: str, what: str, display: str, line: int) -> InputError:
    return InputError("limit", f"{what} (raise `limits.{name}` in the config if this is intended)",
                      file=display, line=line)


def _within(f, limits: Limits, total: int, raw: bytes, display: str, lineno: int) -> None:
    if total > limits.max_file_bytes:
        what = (f"more than {limits.max_file_bytes} bytes{limits.together()}" if limits.together()
                else f"file is over the limit of {limits.max_file_bytes} bytes")
        raise _refused(f, _over("max_file_bytes", what, display, lineno))
    if len(raw) > limits.max_line_bytes and not raw.endswith(b"\n"):
        raise _refused(f, _over("max_line_bytes", f"line is longer than {limits.max_line_bytes} bytes", display,
                                lineno))


def _content(raw: bytes, display: str, lineno: int) -> bytes:
    """A line without its line end (and without a BOM on line 1)."""
    if lineno == 1:
        raw = _check_bom(raw, display)
    if raw.endswith(b"\n"):
        raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
    return raw


def iter_jsonl(
    real: str, display: str, limits: Limits, with_raw: bool = False, hasher=None,
    bad_line: Callable[[InputError], None] | None = None,
) -> Iterator[tuple]:
    """Yield ``(line_number, value)`` per non-blank line (with ``with_raw``,
    ``(line_number, value, line_bytes)``). Lines are split on ``\\n`` only
    (U+2028 and U+0085 are valid inside JSON strings); CRLF is accepted.
    With ``bad_line``, a line that is not UTF-8 or not JSON is handed to it
    and skipped, so every bad line of a file is reported (the limits still
    end the file)."""
    for lineno, raw in _lines(real, display, limits, hasher):
        try:
            value = loads_strict(decode_utf8(raw, display, lineno), display, lineno)
        except InputError as exc:
            if bad_line is None or exc.kind != "parse":
                raise
            bad_line(exc)
            continue
        yield (lineno, value, raw) if with_raw else (lineno, value)


def iter_text_lines(
    real: str, display: str, limits: Limits, hasher=None
) -> Iterator[tuple[int, str]]:
    """Whitespace-separated text formats (TREC qrels and runs): yield
    ``(line_number, line)`` for non-blank lines, decoded as UTF-8. Blank
    means spaces, tabs and CR only, as trec_eval splits: a line of U+3000 or
    NBSP is a line with one field."""
    for lineno, raw in _lines(real, display, limits, hasher):
        yield lineno, decode_utf8(raw, display, lineno)


# A JSON string (the text was parsed already, so it is well formed), and a
# `:` after it when it is an object key. Outside strings JSON has no `"`, so
# matching strings one after the other from the start never misaligns.
_STRING = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"(\s*:)?')


def json_keys(text: str, start: int = 0, line: int | None = None) -> Iterator[tuple[str, int, int]]:
    """``(key, line, end)`` of every object key of a parsed JSON ``text``
    from ``start`` (on ``line``), in text order, keys decoded (``"\\u0064"``
    is ``d``). One pass: each character is scanned once for strings and
    once for line ends, so finding every key costs O(len(text))."""
    line = text.count("\n", 0, start) + 1 if line is None else line
    prev = start
    for m in _STRING.finditer(text, start):
        if m.group(2) is None:
            continue
        raw = m.group(1)
        line += text.count("\n", prev, m.start())
        prev = m.start()
        yield (json.loads(f'"{raw}"') if "\\" in raw else raw), line, m.end()


def load_json_document(real: str, display: str, limits: Limits, hasher=None, ceiling: int | None = None):
    """A whole JSON document and its text: at most ``max_yaml_bytes``, or
    ``max_file_bytes`` up to ``ceiling`` for formats that can only be one document."""
    cap = limits.max_yaml_bytes if ceiling is None else limits.max_file_bytes
    raw = _check_bom(read_bytes(real, display, cap, hasher, ceiling or cap, limits), display)
    text = decode_utf8(raw, display, None)
    return loads_strict(text, display, None), text
