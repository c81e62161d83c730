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
import json
import math
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

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
    max_yaml_bytes: int = 64 * 1024**2
    max_yaml_nodes: int = 5_000_000
    max_depth: int = 64


CONFIG_MAX_BYTES = 1024 * 1024


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
    if not _inside(joined, real_root):
        raise InputError(
            "path",
            f"{display_hint}: `{safe_text(rel)}` points outside the repository; "
            "inputs must live in the repository being checked",
        )
    real = os.path.realpath(joined)
    if not _inside(real, real_root):
        raise InputError(
            "path",
            f"{display_hint}: `{safe_text(display)}` is a symlink that leads outside the "
            "repository; replace it with the file itself",
            file=display,
        )
    return real, display


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
        raise InputError(
            "path", f"cannot open the file ({exc.__class__.__name__})", file=display
        ) from None
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


def read_bytes(real: str, display: str, max_bytes: int) -> bytes:
    with open_regular(real, display, max_bytes) as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError("limit", f"file is over the limit of {max_bytes} bytes", file=display)
    return data


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


def loads_strict(text: str, display: str, line: int | None):
    """json.loads with duplicate keys, NaN/Infinity and overflow rejected, and
    every failure (including deep nesting) turned into an InputError."""
    try:
        return _DECODER.decode(text)
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


def iter_jsonl(
    real: str, display: str, limits: Limits, with_raw: bool = False
) -> Iterator[tuple]:
    """Yield ``(line_number, value)`` per non-empty line (with ``with_raw``,
    ``(line_number, value, line_bytes)``). Lines are split on ``\\n`` only
    (U+2028 and U+0085 are valid inside JSON strings); a trailing ``\\r`` is
    accepted (CRLF files); blank lines are skipped."""
    with open_regular(real, display, limits.max_file_bytes) as f:
        lineno = 0
        total = 0
        records = 0
        while True:
            raw = f.readline(limits.max_line_bytes + 1)
            if not raw:
                break
            lineno += 1
            total += len(raw)
            if total > limits.max_file_bytes:
                raise InputError(
                    "limit", f"file is over the limit of {limits.max_file_bytes} bytes",
                    file=display, line=lineno,
                )
            if len(raw) > limits.max_line_bytes and not raw.endswith(b"\n"):
                raise InputError(
                    "limit",
                    f"line is longer than {limits.max_line_bytes} bytes "
                    "(raise `limits.max_line_bytes` in the config if this is intended)",
                    file=display, line=lineno,
                )
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
                raise InputError(
                    "limit",
                    f"more than {limits.max_records} records "
                    "(raise `limits.max_records` in the config if this is intended)",
                    file=display, line=lineno,
                )
            text = decode_utf8(raw, display, lineno)
            if with_raw:
                yield lineno, loads_strict(text, display, lineno), raw
            else:
                yield lineno, loads_strict(text, display, lineno)


def iter_text_lines(real: str, display: str, limits: Limits) -> Iterator[tuple[int, str]]:
    """Whitespace-separated text formats (TREC qrels and runs): yield
    ``(line_number, line)`` for non-blank lines, decoded as UTF-8."""
    with open_regular(real, display, limits.max_file_bytes) as f:
        lineno = 0
        records = 0
        while True:
            raw = f.readline(limits.max_line_bytes + 1)
            if not raw:
                break
            lineno += 1
            if len(raw) > limits.max_line_bytes and not raw.endswith(b"\n"):
                raise InputError(
                    "limit", f"line is longer than {limits.max_line_bytes} bytes",
                    file=display, line=lineno,
                )
            if lineno == 1:
                raw = _check_bom(raw, display)
            text = decode_utf8(raw, display, lineno).rstrip("\r\n")
            if not text.strip():
                continue
            records += 1
            if records > limits.max_records:
                raise InputError(
                    "limit", f"more than {limits.max_records} records", file=display, line=lineno
                )
            yield lineno, text


def load_json_document(real: str, display: str, limits: Limits):
    raw = _check_bom(read_bytes(real, display, limits.max_yaml_bytes), display)
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


def load_yaml(data: bytes, display: str, limits: Limits):
    """Parse one YAML document into plain values (dict/list/str/int/float/bool/
    None) with line numbers. Only the safe loader's scalars are constructed;
    timestamps stay strings (``snapshot: 2026-11-30`` means the text), any other
    tag is an error, duplicate keys are errors, aliases and depth are capped."""
    data = _check_bom(data, display)
    text = decode_utf8(data, display, None)
    _precheck_depth(text, display, limits.max_depth)
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        # exc.problem is a short description; exc itself would echo the source line.
        problem = safe_text(exc.problem or "syntax error", 120)
        raise InputError("parse", f"invalid YAML: {problem}", file=display, line=line) from None
    except yaml.YAMLError as exc:  # e.g. "expected a single document"
        raise InputError(
            "parse", f"invalid YAML: {safe_text(getattr(exc, 'problem', None) or 'not a single document', 120)}",
            file=display,
        ) from None
    except RecursionError:
        raise InputError("limit", "YAML nested too deeply", file=display) from None
    finally:
        loader.dispose()
    if node is None:
        return None
    budget = [limits.max_yaml_nodes]
    return _to_plain(node, loader, display, budget, 0, limits.max_depth)


def _precheck_depth(text: str, display: str, max_depth: int) -> None:
    # Cheap guard before the (recursive) composer sees the text: flow nesting
    # and nested block sequences on one line ("- - - -") are what blows the stack.
    depth = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > max_depth * 4:
                raise InputError(
                    "limit", f"YAML nested deeper than {max_depth} levels", file=display
                )
        elif ch in "]}":
            depth = max(0, depth - 1)
    for n, line in enumerate(text.split("\n"), 1):
        if line.count("- ") > max_depth or (len(line) - len(line.lstrip(" "))) > max_depth * 8:
            raise InputError("limit", f"YAML nested deeper than {max_depth} levels", file=display, line=n)


def _to_plain(node, loader, display, budget, depth, max_depth):
    budget[0] -= 1
    if budget[0] < 0:
        raise InputError(
            "limit", "YAML expands to too many nodes (alias bomb?)", file=display,
            line=node.start_mark.line + 1,
        )
    line = node.start_mark.line + 1
    if depth > max_depth:
        raise InputError("limit", f"YAML nested deeper than {max_depth} levels", file=display, line=line)
    if isinstance(node, yaml.ScalarNode):
        tag = node.tag
        if tag == "tag:yaml.org,2002:timestamp":
            return node.value
        if tag not in _PLAIN_TAGS:
            raise InputError(
                "parse",
                f"YAML tag `{safe_text(tag, 60)}` is not allowed; only plain values are",
                file=display, line=line,
            )
        try:
            value = loader.construct_object(node, deep=True)
        except (ValueError, yaml.YAMLError):
            raise InputError("parse", "YAML value cannot be read", file=display, line=line) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                "parse", "non-finite number (.nan/.inf) is not allowed", file=display, line=line
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
        for chunk in iter(lambda: f.read(1024 * 1024), b""):
            h.update(chunk)
    return h.hexdigest()
