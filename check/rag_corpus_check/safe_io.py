"""The only place input files are opened.

Rules (see THREATS.md): a path from the config is relative, has no NUL, no
``~``, and after resolving every symlink stays inside the repository root; the
target is a regular file (not a FIFO, device or directory); bytes are counted as
they are read (``/proc`` files report size 0) and capped. Readers split JSONL on
``\\n`` only, reject duplicate keys, NaN/Infinity and overflowing numbers, and
load YAML with the safe loader into plain Python values while keeping line
numbers. Every failure becomes an :class:`InputError` with file and line, never a
traceback.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import gc
import hashlib
import json
import json.scanner
import math
import os
import re
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter

import yaml

from rag_corpus_check.text import safe_text


class InputError(Exception):
    """A problem with one input file; carries the kind, file and line."""

    def __init__(self, kind: str, message: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.file = file
        self.line = line


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 2 * 1024**3
    max_line_bytes: int = 16 * 1024**2
    max_records: int = 5_000_000
    # YAML/JSON documents are parsed whole: PyYAML (libyaml) builds ~1 MB/s of
    # small nodes, so 4 MiB stays within seconds; larger gold sets belong in JSONL.
    max_yaml_bytes: int = 4 * 1024**2
    max_yaml_nodes: int = 5_000_000
    max_depth: int = 64


CONFIG_MAX_BYTES = 1024 * 1024
# Whole-document reads (YAML, JSON) never exceed this, whatever max_file_bytes says.
MAX_DOCUMENT_BYTES = Limits.max_yaml_bytes


def resolve_input(root: str, base_dir: str, rel: str, display_hint: str) -> tuple[str, str]:
    """Resolve ``rel`` (from the config, relative to ``base_dir``) to a real
    path inside ``root``. Returns ``(real_path, display_path)`` where the display
    path is relative to the root. Raises InputError(kind="path")."""
    if not isinstance(rel, str) or rel == "":
        raise InputError("path", f"{display_hint}: the path must be a non-empty string")
    if "\x00" in rel:
        raise InputError("path", f"{display_hint}: the path contains a NUL character")
    if rel.startswith("~"):
        raise InputError(
            "path", f"{display_hint}: `~` paths are not allowed; use a path relative to the config"
        )
    if os.path.isabs(rel) or rel.startswith("\\"):
        raise InputError(
            "path",
            f"{display_hint}: absolute paths are not allowed; use a path relative to the config file",
        )
    real_root = os.path.realpath(root)
    joined = os.path.normpath(os.path.join(base_dir, rel))
    display = os.path.relpath(joined, real_root) if _inside(joined, real_root) else rel
    # The display path is for showing only, and later code prints it in more
    # places than one (messages, progress lines): make it safe once, here. A
    # name like `##[error]x.jsonl` is shown as `#\#[error]x.jsonl`.
    display = safe_text(display, 1024)
    if not _inside(joined, real_root):
        raise InputError(
            "path",
            f"{display_hint}: `{safe_text(rel)}` points outside the repository; "
            "inputs must live in the repository being checked",
        )
    if _in_git_dir(joined, real_root):
        raise InputError(
            "path",
            f"{display_hint}: `{safe_text(display)}` is inside `.git`; git metadata (which can "
            "hold a token) is never read — point the config at a file in the working tree",
        )
    real = os.path.realpath(joined)
    if not _inside(real, real_root):
        raise InputError(
            "path",
            f"{display_hint}: `{safe_text(display)}` is a symlink that leads outside the "
            "repository; replace it with the file itself",
            file=display,
        )
    if _in_git_dir(real, real_root):
        raise InputError(
            "path",
            f"{display_hint}: `{safe_text(display)}` is a symlink into `.git`; git metadata "
            "(which can hold a token) is never read — replace it with the file itself",
            file=display,
        )
    # Fail here, with the path's own words, rather than in whoever stats it next.
    try:
        os.stat(real)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise InputError("path", "file not found", file=display) from None
        why = {
            errno.ELOOP: "is a symlink loop",
            errno.EACCES: "cannot be read (permission denied)",
            errno.ENOTDIR: "has a part that is not a directory",
            errno.ENAMETOOLONG: "is too long",
        }.get(exc.errno, f"cannot be read ({exc.__class__.__name__})")
        raise InputError("path", f"{display_hint}: `{safe_text(display)}` {why}", file=display) from None
    return real, display


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
        }.get(exc.errno, exc.__class__.__name__)
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


def read_bytes(real: str, display: str, max_bytes: int, hasher=None) -> bytes:
    """Read a whole document (YAML or JSON, parsed in memory) of at most
    ``max_bytes`` and never more than :data:`MAX_DOCUMENT_BYTES`: a 2 GB file
    must be refused before it is read, not after. ``hasher`` (a hashlib
    object) is fed the bytes read, so provenance needs no second read."""
    cap = min(max_bytes, MAX_DOCUMENT_BYTES)
    with open_regular(real, display, sys.maxsize) as f:  # the cap below has the better message
        size = os.fstat(f.fileno()).st_size
        data = f.read(cap + 1) if size <= cap else b""  # count what is read: /proc reports 0
        if size <= cap and len(data) <= cap:
            if hasher is not None:
                hasher.update(data)
            return data
        if cap == MAX_DOCUMENT_BYTES:
            raise _refused(f, InputError(
                "limit",
                f"file is {max(size, len(data))} bytes, over the limit of {cap} bytes for a YAML or "
                "JSON document (it is parsed whole, in memory); put a gold set this large in "
                "JSONL, one question per line, or TREC qrels",
                file=display,
            ))
        raise _refused(
            f, InputError("limit", f"file is {max(size, len(data))} bytes, over the limit of {cap} bytes", file=display)
        )


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
        value = _DECODER.decode(text)
        if _SURROGATE_ESCAPE.search(text) and _lone_surrogate(value):
            raise InputError(
                "parse",
                "invalid JSON: a string contains a lone UTF-16 surrogate (a \\uD800–\\uDFFF "
                "escape without its pair), which is not Unicode text",
                file=display, line=line,
            )
        return value
    except json.JSONDecodeError as exc:
        # exc.msg describes the syntax error; it does not echo the input.
        ln = line if line is not None else exc.lineno
        raise InputError(
            "parse", f"invalid JSON: {exc.msg} (column {exc.colno})", file=display, line=ln
        ) from None
    except RecursionError:
        raise InputError("limit", "JSON nested too deeply", file=display, line=line) from None
    except ValueError as exc:
        # Our own hooks, and int() over 4300 digits.
        msg = str(exc)
        if "Exceeds the limit" in msg or "int string conversion" in msg:
            msg = "an integer has too many digits"
        raise InputError("parse", f"invalid JSON: {msg}", file=display, line=line) from None


def _lines(real: str, display: str, limits: Limits, hasher=None) -> Iterator[tuple[int, bytes]]:
    """``(line_number, bytes)`` of each line, split on ``\\n`` only, without
    its line ending (``\\n`` or ``\\r\\n``) and without a UTF-8 BOM on line 1.
    Enforces the file, line and record limits; blank lines (spaces, tabs, CR)
    are skipped and do not count as records. ``hasher`` is fed every byte
    read; it holds the file's digest once the lines are exhausted."""
    with open_regular(real, display, limits.max_file_bytes) as f:
        lineno = 0
        total = 0
        records = 0
        while True:
            raw = f.readline(limits.max_line_bytes + 1)
            if not raw:
                break
            if hasher is not None:
                hasher.update(raw)
            lineno += 1
            total += len(raw)
            if total > limits.max_file_bytes:
                raise _refused(f, InputError(
                    "limit", f"file is over the limit of {limits.max_file_bytes} bytes "
                    "(raise `limits.max_file_bytes` in the config if this is intended)",
                    file=display, line=lineno,
                ))
            if len(raw) > limits.max_line_bytes and not raw.endswith(b"\n"):
                raise _refused(f, InputError(
                    "limit",
                    f"line is longer than {limits.max_line_bytes} bytes "
                    "(raise `limits.max_line_bytes` in the config if this is intended)",
                    file=display, line=lineno,
                ))
            if lineno == 1:
                raw = _check_bom(raw, display)
            if raw.endswith(b"\n"):
                raw = raw[:-1]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
            if not raw.strip(b" \t\r"):
                continue
            records += 1
            if records > limits.max_records:
                raise _refused(f, InputError(
                    "limit",
                    f"more than {limits.max_records} records "
                    "(raise `limits.max_records` in the config if this is intended)",
                    file=display, line=lineno,
                ))
            yield lineno, raw


def iter_jsonl(
    real: str, display: str, limits: Limits, with_raw: bool = False, hasher=None
) -> Iterator[tuple]:
    """Yield ``(line_number, value)`` per non-blank line (with ``with_raw``,
    ``(line_number, value, line_bytes)``). Lines are split on ``\\n`` only
    (U+2028 and U+0085 are valid inside JSON strings); CRLF is accepted."""
    for lineno, raw in _lines(real, display, limits, hasher):
        text = decode_utf8(raw, display, lineno)
        if with_raw:
            yield lineno, loads_strict(text, display, lineno), raw
        else:
            yield lineno, loads_strict(text, display, lineno)


def iter_text_lines(
    real: str, display: str, limits: Limits, hasher=None
) -> Iterator[tuple[int, str]]:
    """Whitespace-separated text formats (TREC qrels and runs): yield
    ``(line_number, line)`` for non-blank lines, decoded as UTF-8."""
    for lineno, raw in _lines(real, display, limits, hasher):
        text = decode_utf8(raw, display, lineno)
        if text.strip():  # e.g. a line of only U+3000 or NBSP
            yield lineno, text


# ---------------------------------------------------------------- fast JSONL


class Slow(Exception):
    """Raised by a fast reader that met anything it does not handle (an
    invalid, blank or unusual line, a limit close by). The caller starts over
    with the exact reader, which finds and words the problem; a fast reader
    never reports one."""


class Sha256:
    """``hashlib.sha256`` that can start over, for a fast reader that hands a
    file to the exact reader halfway through."""

    __slots__ = ("_h", "update")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._h = hashlib.sha256()
        self.update = self._h.update

    def hexdigest(self) -> str:
        return self._h.hexdigest()


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


def restart(hasher) -> None:
    if hasher is not None:
        hasher.reset()


# Objects come out as tuples of (key, value) pairs, built in C: a duplicate
# key is still there to be found (``objects``) without a Python call per
# object. JSON has no other source of tuples, so a tuple is always an object.
_SCAN = json.scanner.make_scanner(
    json.JSONDecoder(object_pairs_hook=tuple, parse_constant=_reject_constant, parse_float=_parse_float)
)
_BLOCK = 1 << 16  # measured: 64 KiB blocks stay in cache (1 MiB blocks were 60% slower)


def jsonl_blocks(real: str, display: str, limits: Limits, hasher=None) -> Iterator[tuple[int, list, list]]:
    """The fast reader's lines: ``(first_line_number, raw_lines, values)`` per
    block of whole lines, where ``values`` are the parsed lines with objects as
    pair tuples (see :func:`objects`). Raises :class:`Slow` on anything
    :func:`iter_jsonl` would refuse or treat specially — a blank line, a BOM,
    a CR that is not part of CRLF, invalid UTF-8 or JSON, a lone surrogate,
    a limit within reach — so a file read here reads the same there."""
    max_line = limits.max_line_bytes
    with open_regular(real, display, limits.max_file_bytes) as f:
        lineno = 1
        total = 0
        parts: list[bytes] = []
        pending = 0
        while True:
            chunk = f.read(_BLOCK)
            total += len(chunk)
            if total > limits.max_file_bytes:
                raise Slow
            if chunk:
                cut = chunk.rfind(b"\n") + 1
                if cut == 0:  # a line longer than a block
                    parts.append(chunk)
                    pending += len(chunk)
                    if pending >= max_line:
                        raise Slow
                    continue
                head, rest = chunk[:cut], chunk[cut:]
                if parts:
                    parts.append(head)
                    head = b"".join(parts)
                    parts.clear()
                data = head
                if rest:
                    parts.append(rest)
                pending = len(rest)
            elif parts:
                data = b"".join(parts)  # the last line has no line end
                parts.clear()
            else:
                break
            if hasher is not None:
                hasher.update(data)
            if lineno == 1 and data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                raise Slow
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
            n = len(values)
            if max(map(len, raw_lines)) >= max_line or lineno - 1 + n > limits.max_records:
                raise Slow
            # "\\" first: one memchr, where the regex alone costs ~1 ns a byte.
            if "\\" in text and _SURROGATE_ESCAPE.search(text) and _lone_surrogate(values):
                raise Slow
            yield lineno, raw_lines, values
            lineno += n


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
    if type(v) is tuple:
        d = dict(v)
        if len(d) != len(v):
            raise Slow
        for k, x in d.items():
            if type(x) is tuple or type(x) is list:
                d[k] = _thaw(x)
        return d
    if type(v) is list:
        return [_thaw(x) if type(x) is tuple or type(x) is list else x for x in v]
    return v


def load_json_document(real: str, display: str, limits: Limits, hasher=None):
    raw = _check_bom(read_bytes(real, display, limits.max_yaml_bytes, hasher), display)
    text = decode_utf8(raw, display, None)
    return loads_strict(text, display, None), text


# ---------------------------------------------------------------- safe YAML


class LineDict(dict):
    """A dict that remembers the line of the mapping and of each key."""

    line: int | None = None
    key_lines: dict


class LineList(list):
    """A list that remembers the line of the sequence and of each item."""

    line: int | None = None
    item_lines: list


_PLAIN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}


# libyaml's composer is ~10x faster than the pure-Python one; it recurses in C
# and segfaults on ~50,000 nesting levels, which _precheck_depth rules out first.
_YAML_LOADER = getattr(yaml, "CSafeLoader", None) if yaml.__with_libyaml__ else None
_YAML_LOADER = _YAML_LOADER or yaml.SafeLoader


def load_yaml(data: bytes, display: str, limits: Limits):
    """Parse one YAML document into plain values (dict/list/str/int/float/bool/
    None) with line numbers. Only the safe loader's scalars are constructed;
    timestamps stay strings (``snapshot: 2026-11-30`` means the text), any other
    tag is an error, duplicate keys are errors, numbers whose YAML 1.1 reading
    is a surprise (``012`` octal, ``1:20`` base 60, ``1_000``) are errors,
    aliases, size and depth are capped."""
    if len(data) > limits.max_yaml_bytes:
        raise InputError(
            "limit", f"YAML document is over the limit of {limits.max_yaml_bytes} bytes",
            file=display,
        )
    data = _check_bom(data, display)
    text = decode_utf8(data, display, None)
    _precheck_depth(text, display, limits.max_depth)
    # Composing builds millions of small objects and no reference cycles; the
    # cyclic GC would rescan them all again and again (measured: 3x slower).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        loader = _compose(text, display)
        node = loader[1]
        if node is None:
            return None
        budget = [limits.max_yaml_nodes, set(), 0]
        return _to_plain(node, loader[0], display, budget, 0, limits.max_depth)
    finally:
        if gc_was_enabled:
            gc.enable()


def _compose(text: str, display: str):
    try:
        loader = _YAML_LOADER(text)
    except yaml.YAMLError as exc:  # the reader checks the characters up front
        raise _yaml_error(exc, text, display) from None
    try:
        return loader, loader.get_single_node()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, text, display) from None
    except ValueError:
        # The pure-Python scanner (no libyaml) turns "\U33990334" into
        # chr(0x33990334) and fails where libyaml reports a ScannerError.
        line = getattr(loader, "line", None)
        raise InputError("parse", "invalid YAML: found invalid Unicode character escape code", file=display,
                         line=line + 1 if isinstance(line, int) else None) from None
    except RecursionError:
        raise InputError("limit", "YAML nested too deeply", file=display) from None
    finally:
        loader.dispose()


def _yaml_error(exc: yaml.YAMLError, text: str, display: str) -> InputError:
    """An InputError from a PyYAML error without quoting the source: the
    exception's own text would echo the offending line."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = safe_text(exc.problem or exc.context or "syntax error", 120)
        return InputError("parse", f"invalid YAML: {problem}", file=display, line=line)
    if isinstance(exc, yaml.reader.ReaderError):
        line = None
        if isinstance(exc.position, int) and 0 <= exc.position <= len(text):
            line = text.count("\n", 0, exc.position) + 1
        ch = exc.character
        what = f"U+{ch:04X}" if isinstance(ch, int) else "a character"
        return InputError(
            "parse", f"invalid YAML: {what} is not allowed in a YAML file (control character)",
            file=display, line=line,
        )
    problem = getattr(exc, "problem", None) or "not a single YAML document"
    return InputError("parse", f"invalid YAML: {safe_text(problem, 120)}", file=display)


# Indicators that open a nested block node on the same line: "- - x", "? - x".
_COMPACT = re.compile(r"[ \t]*((?:(?:[-?:]|[&!]\S*)[ \t]+)*)")


def _precheck_depth(text: str, display: str, max_depth: int) -> None:
    """Refuse text that could nest deeper than the composer's stack allows,
    before the composer (recursive, in C for libyaml) sees it. Over-counts on
    purpose: brackets inside strings count, and every line's indentation plus
    its leading ``- ``/``? `` indicators bound its block nesting."""
    depth = 0
    for ch in re.findall(r"[\[\]{}]", text):
        if ch in "[{":
            depth += 1
            if depth > max_depth * 4:
                raise InputError(
                    "limit", f"YAML nested deeper than {max_depth} levels", file=display
                )
        else:
            depth = max(0, depth - 1)
    for n, line in enumerate(text.split("\n"), 1):
        m = _COMPACT.match(line)
        indent = len(line) - len(line.lstrip(" \t"))
        tokens = len(m.group(1).split()) if m else 0
        if tokens > max_depth or indent > max_depth * 8:
            raise InputError("limit", f"YAML nested deeper than {max_depth} levels", file=display, line=n)


_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_PLAIN_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_PLAIN_FLOAT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


# Nodes reached a second time through an alias. A "billion laughs" file has a
# hundred nodes and expands to 10^9; real files share a few small mappings.
MAX_ALIAS_EXPANSION = 200_000


def _to_plain(node, loader, display, budget, depth, max_depth):
    budget[0] -= 1
    if budget[0] < 0:
        raise InputError(
            "limit", "YAML expands to too many nodes (alias bomb?)", file=display,
            line=node.start_mark.line + 1,
        )
    seen = budget[1]
    if id(node) in seen:
        budget[2] += 1
        if budget[2] > MAX_ALIAS_EXPANSION:
            raise InputError(
                "limit",
                f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION} nodes (alias bomb?); "
                "write the values out instead of repeating `*alias` references",
                file=display, line=node.start_mark.line + 1,
            )
    else:
        seen.add(id(node))
    line = node.start_mark.line + 1
    if depth > max_depth:
        raise InputError("limit", f"YAML nested deeper than {max_depth} levels", file=display, line=line)
    if isinstance(node, yaml.ScalarNode):
        tag = node.tag
        if tag == _STR_TAG or tag == "tag:yaml.org,2002:timestamp":
            value = node.value
        elif tag == _INT_TAG and _PLAIN_INT.fullmatch(node.value):
            value = int(node.value)  # the common case, without the constructor's detour
        elif tag not in _PLAIN_TAGS:
            raise InputError(
                "parse",
                f"YAML tag `{safe_text(tag, 60)}` is not allowed; only plain values are",
                file=display, line=line,
            )
        else:
            try:
                value = loader.construct_object(node, deep=True)
            except Exception:  # PyYAML's constructors raise IndexError on `!!int ''`
                raise InputError(
                    "parse", f"YAML cannot read this value as `{safe_text(tag.rsplit(':', 1)[-1], 20)}`",
                    file=display, line=line,
                ) from None
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise InputError(
                    "parse", "a string contains a lone UTF-16 surrogate (a \\uD800–\\uDFFF "
                    "escape), which is not Unicode text", file=display, line=line,
                )
            return value
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                "parse", "non-finite number (.nan/.inf) is not allowed", file=display, line=line
            )
        raw = node.value.strip()
        if (isinstance(value, int) and not isinstance(value, bool) and not _PLAIN_INT.fullmatch(raw)) or (
            isinstance(value, float) and not _PLAIN_FLOAT.fullmatch(raw)
        ):
            raise InputError(
                "parse",
                f"YAML reads `{safe_text(raw, 40)}` as the number {value!r} (YAML 1.1: a leading 0 "
                "is octal, `1:20` is base 60, `_` is dropped, 0x/0b are hex/binary); write the "
                "number in plain decimal, or quote it if it is text",
                file=display, line=line,
            )
        return value
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise InputError(
                "parse", f"YAML tag `{safe_text(node.tag, 60)}` is not allowed", file=display, line=line
            )
        out = LineList()
        out.line = line
        out.item_lines = []
        for item in node.value:
            out.append(_to_plain(item, loader, display, budget, depth + 1, max_depth))
            out.item_lines.append(item.start_mark.line + 1)
        return out
    if isinstance(node, yaml.MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            raise InputError(
                "parse", f"YAML tag `{safe_text(node.tag, 60)}` is not allowed", file=display, line=line
            )
        out = LineDict()
        out.line = line
        out.key_lines = {}
        for key_node, value_node in node.value:
            kline = key_node.start_mark.line + 1
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise InputError("parse", "YAML merge keys (`<<`) are not allowed", file=display, line=kline)
            key = _to_plain(key_node, loader, display, budget, depth + 1, max_depth)
            if not isinstance(key, str):
                raise InputError(
                    "parse",
                    f"mapping key `{safe_text(key_node.value, 60)}` is read by YAML as "
                    f"{type(key).__name__}, not text; quote it",
                    file=display, line=kline,
                )
            if key in out:
                raise InputError(
                    "parse",
                    f"duplicate key `{safe_text(key, 60)}` (first on line {out.key_lines[key]}); "
                    "YAML would silently keep only the last one",
                    file=display, line=kline,
                )
            out[key] = _to_plain(value_node, loader, display, budget, depth + 1, max_depth)
            out.key_lines[key] = kline
        return out
    raise InputError("parse", "unsupported YAML node", file=display, line=line)


def line_of(doc, path) -> int | None:
    """The best known line for a JSON-path-like sequence of keys/indices."""
    best = getattr(doc, "line", None)
    cur = doc
    for part in path:
        if isinstance(cur, LineDict) and part in cur:
            best = cur.key_lines.get(part, best)
            cur = cur[part]
        elif isinstance(cur, LineList) and isinstance(part, int) and 0 <= part < len(cur):
            best = cur.item_lines[part]
            cur = cur[part]
        else:
            break
        inner = getattr(cur, "line", None)
        if inner is not None and not isinstance(cur, LineDict | LineList):
            best = inner
    return best


def sha256_file(real: str, display: str, max_bytes: int) -> str:
    import hashlib

    h = hashlib.sha256()
    with open_regular(real, display, max_bytes) as f:
        if _identity(f) in _REFUSED:
            raise InputError("limit", "not hashed: its reader refused it for a size limit", file=display)
        for chunk in iter(lambda: f.read(1024 * 1024), b""):
            h.update(chunk)
    return h.hexdigest()


def file_size(real: str) -> int | None:
    """The size a regular file reports (for progress percentages only; reads
    are still counted as they happen). None when unknown."""
    try:
        return os.stat(real).st_size or None
    except OSError:
        return None
