"""Safe YAML: the safe loader's plain values only, with line numbers.

Only the standard scalar tags; duplicate keys, merge keys, non-string keys,
non-finite numbers, lone surrogates and numbers whose YAML 1.1 reading is a
surprise are errors; aliases, size and depth are capped.
"""

from __future__ import annotations

import gc
import math
import re
from typing import Any

import yaml

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.safe_io.jsontext import _SURROGATE, _check_bom, decode_utf8
from rag_corpus_check.safe_io.paths import InputError, Limits

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
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if yaml.__with_libyaml__ else yaml.SafeLoader


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
        return _Plain(loader[0], display, limits).convert(node, 0)
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
    except (ValueError, OverflowError):
        # The pure-Python scanner (no libyaml) turns "\U33990334" into
        # chr(0x33990334) and fails where libyaml reports a ScannerError
        # (OverflowError past 2**31 on Python 3.11 and 3.12).
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
        problem = safe_text(exc.problem or exc.context or "syntax error", 120)
        return InputError("parse", f"invalid YAML: {problem}", file=display, line=mark.line + 1 if mark else None)
    if isinstance(exc, yaml.reader.ReaderError):
        return _reader_error(exc, text, display)
    problem = getattr(exc, "problem", None) or "not a single YAML document"
    return InputError("parse", f"invalid YAML: {safe_text(problem, 120)}", file=display)


def _reader_error(exc: yaml.reader.ReaderError, text: str, display: str) -> InputError:
    line = None
    if isinstance(exc.position, int) and 0 <= exc.position <= len(text):
        line = text.count("\n", 0, exc.position) + 1
    what = f"U+{exc.character:04X}" if isinstance(exc.character, int) else "a character"
    return InputError("parse", f"invalid YAML: {what} is not allowed in a YAML file (control character)",
                      file=display, line=line)


# Indicators that open a nested block node on the same line: "- - x", "? - x".
_COMPACT = re.compile(r"[ \t]*((?:(?:[-?:]|[&!]\S*)[ \t]+)*)")


def _bracket_depth(text: str) -> int:
    """The deepest nesting of flow brackets (brackets inside strings count too)."""
    depth = deepest = 0
    for ch in re.findall(r"[\[\]{}]", text):
        depth = depth + 1 if ch in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
    return deepest


def _precheck_depth(text: str, display: str, max_depth: int) -> None:
    """Refuse text that could nest deeper than the composer's stack allows,
    before the composer (recursive, in C for libyaml) sees it. Over-counts on
    purpose: brackets inside strings count, and every line's indentation plus
    its leading ``- ``/``? `` indicators bound its block nesting."""
    if _bracket_depth(text) > max_depth * 4:
        raise InputError("limit", f"YAML nested deeper than {max_depth} levels", file=display)
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


class _Plain:
    """A composed YAML document as plain values with line numbers, every
    node counted against the node and alias budgets and the depth cap."""

    def __init__(self, loader, display: str, limits: Limits):
        self.loader, self.display = loader, display
        self.nodes_left = limits.max_yaml_nodes
        self.max_depth = limits.max_depth
        self.seen: set[int] = set()
        self.revisits = 0

    def error(self, kind: str, message: str, line: int) -> InputError:
        return InputError(kind, message, file=self.display, line=line)

    def convert(self, node, depth: int):
        line = node.start_mark.line + 1
        self._count(node, line)
        if depth > self.max_depth:
            raise self.error("limit", f"YAML nested deeper than {self.max_depth} levels", line)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, line)
        if isinstance(node, yaml.SequenceNode):
            return self._sequence(node, line, depth)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, line, depth)
        raise self.error("parse", "unsupported YAML node", line)

    def _count(self, node, line: int) -> None:
        self.nodes_left -= 1
        if self.nodes_left < 0:
            raise self.error("limit", "YAML expands to too many nodes (alias bomb?)", line)
        if id(node) not in self.seen:
            self.seen.add(id(node))
            return
        self.revisits += 1
        if self.revisits > MAX_ALIAS_EXPANSION:
            raise self.error("limit", f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION} nodes (alias "
                             "bomb?); write the values out instead of repeating `*alias` references", line)

    def _scalar(self, node, line: int):
        tag = node.tag
        if tag == _STR_TAG or tag == "tag:yaml.org,2002:timestamp":
            value = node.value
        elif tag == _INT_TAG and _PLAIN_INT.fullmatch(node.value):
            return int(node.value)  # the common case, without the constructor's detour
        elif tag not in _PLAIN_TAGS:
            raise self.error("parse", f"YAML tag `{safe_text(tag, 60)}` is not allowed; only plain values are", line)
        else:
            value = self._construct(node, tag, line)
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise self.error("parse", "a string contains a lone UTF-16 surrogate (a \\uD800–\\uDFFF escape), "
                                 "which is not Unicode text", line)
            return value
        return self._number(value, node.value.strip(), line)

    def _construct(self, node, tag: str, line: int):
        try:
            return self.loader.construct_object(node, deep=True)
        except Exception:  # PyYAML's constructors raise IndexError on `!!int ''`
            raise self.error("parse", f"YAML cannot read this value as `{safe_text(tag.rsplit(':', 1)[-1], 20)}`",
                             line) from None

    def _number(self, value, raw: str, line: int):
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error("parse", "non-finite number (.nan/.inf) is not allowed", line)
        surprising = (isinstance(value, int) and not isinstance(value, bool) and not _PLAIN_INT.fullmatch(raw)) or (
            isinstance(value, float) and not _PLAIN_FLOAT.fullmatch(raw))
        if surprising:
            raise self.error(
                "parse",
                f"YAML reads `{safe_text(raw, 40)}` as the number {value!r} (YAML 1.1: a leading 0 is octal, "
                "`1:20` is base 60, `_` is dropped, 0x/0b are hex/binary); write the number in plain decimal, "
                "or quote it if it is text", line)
        return value

    def _sequence(self, node, line: int, depth: int) -> LineList:
        if node.tag != "tag:yaml.org,2002:seq":
            raise self.error("parse", f"YAML tag `{safe_text(node.tag, 60)}` is not allowed", line)
        out = LineList()
        out.line = line
        out.item_lines = []
        for item in node.value:
            out.append(self.convert(item, depth + 1))
            out.item_lines.append(item.start_mark.line + 1)
        return out

    def _mapping(self, node, line: int, depth: int) -> LineDict:
        if node.tag != "tag:yaml.org,2002:map":
            raise self.error("parse", f"YAML tag `{safe_text(node.tag, 60)}` is not allowed", line)
        out = LineDict()
        out.line = line
        out.key_lines = {}
        for key_node, value_node in node.value:
            kline = key_node.start_mark.line + 1
            key = self._key(key_node, kline, depth, out)
            out[key] = self.convert(value_node, depth + 1)
            out.key_lines[key] = kline
        return out

    def _key(self, key_node, kline: int, depth: int, seen: LineDict) -> str:
        if key_node.tag == "tag:yaml.org,2002:merge":
            raise self.error("parse", "YAML merge keys (`<<`) are not allowed", kline)
        key = self.convert(key_node, depth + 1)
        if not isinstance(key, str):
            raise self.error("parse", f"mapping key `{safe_text(key_node.value, 60)}` is read by YAML as "
                             f"{type(key).__name__}, not text; quote it", kline)
        if key in seen:
            raise self.error("parse", f"duplicate key `{safe_text(key, 60)}` (first on line {seen.key_lines[key]}); "
                             "YAML would silently keep only the last one", kline)
        return key


def line_of(doc, path) -> int | None:
    """The best known line for a JSON-path-like sequence of keys/indices."""
    best = getattr(doc, "line", None)
    cur = doc
    for part in path:
        step = _step(cur, part)
        if step is None:
            break
        best, cur = step[0] or best, step[1]
    return best


def _step(cur, part) -> tuple[int | None, object] | None:
    """(line of ``part`` in ``cur``, the value there), or None when it is not there."""
    if isinstance(cur, LineDict) and part in cur:
        return cur.key_lines.get(part), cur[part]
    if isinstance(cur, LineList) and isinstance(part, int) and 0 <= part < len(cur):
        return cur.item_lines[part], cur[part]
    return None
