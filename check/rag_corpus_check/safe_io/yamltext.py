"""Safe YAML: the safe loader's plain values only, with line numbers.

Only the standard scalar tags; duplicate keys, merge keys, non-string keys,
non-finite numbers, lone surrogates and numbers whose YAML 1.1 reading is a
surprise are errors; aliases, size and depth are capped.
"""

from __future__ import annotations

import gc
import math
import re

import yaml

from rag_corpus_check.safe_io.jsontext import _SURROGATE, _check_bom, decode_utf8
from rag_corpus_check.safe_io.paths import InputError, Limits
from rag_corpus_check.text import safe_text

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
