"""The bundled JSON Schemas and validators built from them.

Schemas are read from this package only, never from the repository being
checked or the network. ``integer`` is strict here (``1.0`` and ``true`` are not
grades), and messages are built from the failing keyword and the path, never
from the instance value: a schema error must not echo document text.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from typing import TYPE_CHECKING

from rag_corpus_check.core.text import safe_text

if TYPE_CHECKING:
    import jsonschema

SCHEMA_NAMES = ("common", "config", "corpus", "gold", "run", "results", "beir")


def _strict_int(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _strict_validator():
    # Imported on first use: jsonschema (with attrs, referencing, …) takes
    # 0.16 s to import (measured: `python -I -c "import jsonschema"` 0.19 s
    # against 0.03 s for `pass`, pyenv 3.13.0), and valid inputs never need it.
    import jsonschema
    from jsonschema import Draft202012Validator

    types = Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_int)
    return jsonschema.validators.extend(Draft202012Validator, type_checker=types)


# The bundled schemas, in the package's schemas/ folder (package data; importlib.resources
# would find them too, at ~8 ms of import on every run).
_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas")


@cache
def load_schema(name: str) -> dict:
    with open(os.path.join(_SCHEMA_DIR, f"{name}.schema.json"), encoding="utf-8") as f:
        return json.load(f)


@cache
def _registry():
    from referencing import Registry, Resource

    reg = Registry()
    for name in SCHEMA_NAMES:
        schema = load_schema(name)
        reg = reg.with_resource(schema["$id"], Resource.from_contents(schema))
    return reg


@cache
def validator(name: str, fragment: str = ""):
    """A validator for a bundled schema, or for ``#/$defs/...`` inside it."""
    schema = load_schema(name)
    strict = _strict_validator()
    if fragment:
        return strict({"$ref": schema["$id"] + fragment}, registry=_registry())
    return strict(schema, registry=_registry())


def error_path(err: jsonschema.ValidationError) -> list:
    """The path of an error, extended to the offending key where the error is
    about a key (so the reported line is the key's line, not the mapping's)."""
    key = _offending_key(err) or _trigger(err)
    return list(err.absolute_path) + ([key] if key is not None else [])


def _trigger(err: jsonschema.ValidationError) -> str | None:
    """The key whose presence forbids others (``dependentSchemas``), for an
    error of a ``false`` schema under it; jsonschema gives such an error no
    key of its own."""
    path = list(err.schema_path)
    if err.validator is None and "dependentSchemas" in path[:-1]:
        return str(path[path.index("dependentSchemas") + 1])
    return None


def _offending_key(err: jsonschema.ValidationError) -> str | None:
    find = _KEY_OF.get(err.validator)
    return find(err) if find is not None and isinstance(err.instance, dict) else None


def _unknown_key(err) -> str | None:
    allowed = err.schema.get("properties") or {}
    return next((k for k in err.instance if k not in allowed), None)


def _bad_name(err) -> str | None:
    return next((sub.instance for sub in err.context or () if sub.instance in err.instance), None)


_KEY_OF = {"additionalProperties": _unknown_key, "propertyNames": _bad_name}


def describe_path(path) -> str:
    parts: list[str] = []
    for p in path:
        parts.append(f"[{p}]" if isinstance(p, int) else (("." if parts else "") + safe_text(p, 60)))
    return "".join(parts) or "(top level)"


_TYPE_NAMES = {
    bool: "boolean", int: "integer", float: "number", str: "string",
    list: "array", dict: "object", type(None): "null",
}


def _type_name(value) -> str:
    for t, name in _TYPE_NAMES.items():
        if type(value) is t or (t is dict and isinstance(value, dict)) or (t is list and isinstance(value, list)):
            return name
    return type(value).__name__


def describe_error(err: jsonschema.ValidationError) -> str:
    """One sentence about a schema error without quoting the instance."""
    where = describe_path(err.absolute_path)
    trigger = _trigger(err)
    if trigger is not None:
        return f"{where}: {_excluded(trigger)}"
    words = _WORDING.get(err.validator)
    what = words(err.validator_value, err.instance, err.schema) if words else f"fails schema rule `{err.validator}`"
    return f"{where}: {what}"


def _excluded(trigger: str) -> str:
    """The keys a key excludes, read from the config schema's
    ``dependentSchemas`` (the one schema that has them), in words."""
    props = load_schema("config").get("dependentSchemas", {}).get(trigger, {}).get("properties", {})
    keys = [f"`{k}:`" for k, sub in props.items() if sub is False] or ["this key"]
    return (f"`{trigger}:` names its own files, so {_either(keys, 'and')} cannot be set beside it; remove "
            f"{_either(keys, 'and')}, or remove `{trigger}:`")


def _either(words: list[str], conj: str) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {conj} " + words[-1]


def _any_of(val, inst, schema) -> str:
    """An ``anyOf`` of alternatives that each require keys, as what to
    write; a value that may be written two ways, as those ways."""
    if isinstance(val, list) and all(isinstance(a, dict) and set(a) == {"required"} for a in val):
        options = [_either([f"`{k}:`" for k in a["required"]], "and") for a in val]
        return "needs " + ("either " + ", or ".join(options) if len(options) > 1 else options[0])
    return "fails schema rule `anyOf`" if "$id" in schema else f"must be {' or a '.join(_kinds(val))}"


def _required(val, inst, schema) -> str:
    missing = [k for k in val if isinstance(inst, dict) and k not in inst]
    return "missing required " + (", ".join(f"`{m}`" for m in missing) or "a required property")


def _additional(val, inst, schema) -> str:
    if not isinstance(inst, dict):
        return "unexpected field"
    allowed = set((schema.get("properties") or {}).keys())
    extra = sorted(k for k in inst if k not in allowed)
    if not allowed:
        return "unexpected field " + ", ".join(f"`{safe_text(k, 40)}`" for k in extra[:5])
    shown = ", ".join(f"`{safe_text(k, 40)}`{_did_you_mean(k, allowed)}" for k in extra[:5])
    return f"unknown field {shown}; allowed: {', '.join(sorted(allowed))}"


def _did_you_mean(name: str, allowed: set[str]) -> str:
    """`` (did you mean `k`?)`` for a near miss (`K`, `treshold`), else ""."""
    import difflib  # only on this error path

    by_lower = {a.lower(): a for a in allowed}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.75)
    return f" (did you mean `{by_lower[close[0]]}`?)" if close else ""


def _literal(value) -> str:
    """A value as a YAML or JSON user writes it (`null`, `true`), not Python's `None`."""
    return value if isinstance(value, str) else json.dumps(value)


def _bound(word: str):
    return lambda val, inst, schema: f"must be {word} {val}"


_WORDING = {
    "required": _required,
    "additionalProperties": _additional,
    "type": lambda val, inst, schema: (
        f"expected {val if isinstance(val, str) else ' or '.join(val)}, got {_type_name(inst)}"),
    "enum": lambda val, inst, schema: f"must be one of {', '.join(map(_literal, val))}",
    "const": lambda val, inst, schema: f"must be {json.dumps(val)}",
    "minimum": _bound("at least"),
    "maximum": _bound("at most"),
    "exclusiveMinimum": _bound("greater than"),
    "exclusiveMaximum": _bound("less than"),
    "minLength": lambda val, inst, schema: "must not be empty" if val == 1 else f"shorter than {val} characters",
    "maxLength": lambda val, inst, schema: f"longer than {val} characters",
    "maxItems": lambda val, inst, schema: f"more than {val} items",
    "maxProperties": lambda val, inst, schema: (
        f"{len(inst) if isinstance(inst, dict) else 'too many'} entries, more than the {val} allowed"),
    "minProperties": lambda val, inst, schema: "must not be empty" if val == 1 else f"fewer than {val} entries",
    "not": lambda val, inst, schema: "contains a control character or line break",
    "pattern": lambda val, inst, schema: (
        "is not a glob relative to the config's folder (no `..`, no `.git`, not absolute)"
        if str(schema.get("description", "")).startswith("A glob") else f"does not match the pattern {safe_text(val, 80)}"),
    "propertyNames": lambda val, inst, schema: (
        "a key is not a valid tag (1-64 ASCII letters, digits and `_ . : -`)" if str(val.get("$ref", "")).endswith("/tag")
        else "a key is not a valid id (empty, too long, or with control characters)"),
    "anyOf": _any_of,
    "minItems": lambda val, inst, schema: "must not be empty" if val == 1 else f"needs at least {val} items",
    "uniqueItems": lambda val, inst, schema: "lists the same item twice; keep one",
    "oneOf": lambda val, inst, schema: "must be a number between 0 and 1, or a mapping with `min` (and `max_drop`)",
    None: lambda val, inst, schema: "has a key its other settings rule out (see each key's description)",
}


def _kinds(alternatives: list) -> list[str]:
    """What each alternative of an `anyOf` is, in a word."""
    return ["a path" if "$ref" in alt else "mapping" if alt.get("type") == "object" else "value" for alt in alternatives]


def errors(name: str, instance, fragment: str = "") -> list:
    """The schema errors of ``instance`` against a bundled schema (or a
    ``#/$defs/...`` fragment of it), in document order: [] at once when
    :func:`quick_valid` proves it valid, so jsonschema is only loaded to find
    and word errors (or to decide what the quick check cannot)."""
    schema = load_schema(name)
    spec = _fragment(schema, fragment)
    if quick_valid(spec, instance, schema):
        return []
    found = [sub for err in validator(name, fragment).iter_errors(instance) for sub in _fitting(err)]
    found.sort(key=lambda e: [str(p) for p in e.absolute_path])
    return found


def _fitting(err: jsonschema.ValidationError) -> list:
    """A value that may be written two ways (`corpus:` a path or a mapping),
    as the errors of the way(s) its type fits; any other error as it is."""
    if err.validator != "anyOf" or not err.absolute_path or not err.context:
        return [err]
    unfit = {sub.relative_schema_path[0] for sub in err.context
             if sub.validator == "type" and sub.absolute_path == err.absolute_path}
    return [sub for sub in err.context if sub.relative_schema_path[0] not in unfit] or [err]


def quick_check(name: str, instance, fragment: str = "") -> bool | None:
    """:func:`quick_verdict` of ``instance`` against a bundled schema (or a
    fragment): True or False exactly as jsonschema would say, None where it
    cannot tell; jsonschema is not run."""
    schema = load_schema(name)
    return quick_verdict(_fragment(schema, fragment), instance, schema)


def _fragment(schema: dict, fragment: str) -> dict:
    if not fragment:
        return schema
    if not fragment.startswith("#/$defs/"):
        raise ValueError(fragment)
    return schema["$defs"][fragment[len("#/$defs/"):]]


def resolved(name: str, spec: dict) -> dict:
    """``spec`` (a part of bundled schema ``name``) with a ``$ref`` followed,
    inside that schema or into another bundled one."""
    while "$ref" in spec:
        spec, _ = _follow(spec["$ref"], load_schema(name))
    return spec


def _follow(ref: object, root: dict) -> tuple[dict, dict]:
    """The schema a ``$ref`` names, and the root it lives in. Only the
    bundled schemas are ever read (``#/$defs/x`` or ``<name>.schema.json#/$defs/x``)."""
    if not isinstance(ref, str) or "#/$defs/" not in ref:
        raise _Unsure
    where, _, name = ref.partition("#/$defs/")
    if where:
        file = where.removesuffix(".schema.json")
        if file not in SCHEMA_NAMES or where != f"{file}.schema.json":
            raise _Unsure
        root = load_schema(file)
    return root["$defs"][name], root


# ---------------------------------------------------------------- quick validity
#
# A small interpreter for the keywords the bundled schemas use, with the same
# semantics as the strict jsonschema validator above. It answers True only for
# an instance that is valid; False is also exact; anything it does not know
# (another keyword, a number that is a float where an enum holds ints, a $ref
# out of the bundled schemas) raises _Unsure and jsonschema decides.
# tests/test_schemas_quick.py compares it with jsonschema on generated
# instances of every bundled schema. Why it exists: a valid config (every run)
# and a valid YAML gold set are checked without importing jsonschema (0.16 s
# to import) and 10x faster than
# jsonschema validates them.


class _Unsure(Exception):
    pass


_IGNORED = frozenset(("$schema", "$id", "title", "description", "$defs", "$comment", "examples"))


def quick_valid(schema, instance, root) -> bool:
    return quick_verdict(schema, instance, root) is True


def quick_verdict(schema, instance, root) -> bool | None:
    """True (valid) or False (invalid), exactly as jsonschema would say; None
    where the quick check cannot tell."""
    try:
        return _ok(schema, instance, root)
    except (_Unsure, RecursionError):
        return None


def _ok(schema, v, root) -> bool:
    if isinstance(schema, bool):
        return schema
    for kw, arg in schema.items():
        if kw in _IGNORED:
            continue
        check = _KEYWORDS.get(kw)
        if check is None:
            raise _Unsure
        if not check(arg, v, schema, root):
            return False
    return True


def _is_number(v) -> bool:
    return type(v) is int or type(v) is float


_TYPES = {
    "integer": lambda v: type(v) is int,  # strict: neither true nor 1.0
    "number": _is_number,
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


def _is_type(v, t: str) -> bool:
    if t not in _TYPES:
        raise _Unsure
    return _TYPES[t](v)


def _same(v, a) -> bool:
    """jsonschema's equality for const/enum on the values our schemas hold."""
    if type(v) is type(a) and type(a) in (str, int, float, bool, type(None)):
        return v == a
    if (_is_number(v) and _is_number(a)) or isinstance(a, (list, dict)) or isinstance(v, (list, dict)):
        raise _Unsure  # 1 == 1.0 there; not needed here
    return False


def _kw_ref(arg, v, schema, root) -> bool:
    target, target_root = _follow(arg, root)
    return _ok(target, v, target_root)


def _kw_properties(arg, v, schema, root) -> bool:
    return not isinstance(v, dict) or all(_ok(sub, v[k], root) for k, sub in arg.items() if k in v)


def _kw_additional(arg, v, schema, root) -> bool:
    if "patternProperties" in schema:
        raise _Unsure
    props = schema.get("properties", {})
    return not isinstance(v, dict) or all(_ok(arg, x, root) for k, x in v.items() if k not in props)


def _on(test):
    """A keyword on numbers, string lengths or array lengths."""

    def check(arg, v, schema, root) -> bool:
        return test(v, arg)

    return check


_KEYWORDS = {
    "$ref": _kw_ref,
    "type": lambda arg, v, s, r: any(_is_type(v, t) for t in ([arg] if isinstance(arg, str) else arg)),
    "const": lambda arg, v, s, r: _same(v, arg),
    "enum": lambda arg, v, s, r: any(_same(v, a) for a in arg),
    "required": lambda arg, v, s, r: not isinstance(v, dict) or all(k in v for k in arg),
    "properties": _kw_properties,
    "additionalProperties": _kw_additional,
    "propertyNames": lambda arg, v, s, r: not isinstance(v, dict) or all(_ok(arg, k, r) for k in v),
    "minimum": _on(lambda v, a: not _is_number(v) or v >= a),
    "maximum": _on(lambda v, a: not _is_number(v) or v <= a),
    "exclusiveMinimum": _on(lambda v, a: not _is_number(v) or v > a),
    "exclusiveMaximum": _on(lambda v, a: not _is_number(v) or v < a),
    "minLength": _on(lambda v, a: not isinstance(v, str) or len(v) >= a),
    "maxLength": _on(lambda v, a: not isinstance(v, str) or len(v) <= a),
    "minItems": _on(lambda v, a: not isinstance(v, list) or len(v) >= a),
    "maxItems": _on(lambda v, a: not isinstance(v, list) or len(v) <= a),
    "items": lambda arg, v, s, r: not isinstance(v, list) or all(_ok(arg, x, r) for x in v),
    "pattern": lambda arg, v, s, r: not isinstance(v, str) or re.search(arg, v) is not None,
    "not": lambda arg, v, s, r: not _ok(arg, v, r),
    "oneOf": lambda arg, v, s, r: sum(1 for sub in arg if _ok(sub, v, r)) == 1,
    "anyOf": lambda arg, v, s, r: any(_ok(sub, v, r) for sub in arg),
    "allOf": lambda arg, v, s, r: all(_ok(sub, v, r) for sub in arg),
    "dependentSchemas": lambda arg, v, s, r: not isinstance(v, dict) or all(
        _ok(sub, v, r) for k, sub in arg.items() if k in v),
    "maxProperties": _on(lambda v, a: not isinstance(v, dict) or len(v) <= a),
    "minProperties": _on(lambda v, a: not isinstance(v, dict) or len(v) >= a),
    "if": lambda arg, v, s, r: _ok(s.get("then", True) if _ok(arg, v, r) else s.get("else", True), v, r),
    "then": lambda arg, v, s, r: True,  # decided with "if"
    "else": lambda arg, v, s, r: True,
    "uniqueItems": lambda arg, v, s, r: not arg or not isinstance(v, list) or _distinct(v),
}


def _distinct(values: list) -> bool:
    """uniqueItems for lists of strings (the only ones the schemas hold);
    anything else is jsonschema's to decide (1 == 1.0 == True there)."""
    if not all(type(x) is str for x in values):
        raise _Unsure
    return len(set(values)) == len(values)
