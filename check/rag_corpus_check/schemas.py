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

from rag_corpus_check import fastcheck
from rag_corpus_check.text import safe_text

if TYPE_CHECKING:
    import jsonschema

SCHEMA_NAMES = ("config", "corpus", "gold", "run", "results")


def _strict_int(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _strict_validator():
    # Imported on first use: jsonschema (with attrs, referencing, …) is ~60 ms
    # of a 0.3 s check, and a valid config and valid records never need it.
    import jsonschema
    from jsonschema import Draft202012Validator

    types = Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_int)
    return jsonschema.validators.extend(Draft202012Validator, type_checker=types)


# The bundled schemas, next to this module (package data; importlib.resources
# would find them too, at ~8 ms of import on every run).
_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")


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
    path = list(err.absolute_path)
    inst = err.instance
    if err.validator == "additionalProperties" and isinstance(inst, dict):
        allowed = set((err.schema.get("properties") or {}).keys())
        extra = [k for k in inst if k not in allowed]
        if extra:
            path.append(extra[0])
    elif err.validator == "propertyNames" and err.context:
        for sub in err.context:
            if isinstance(sub.instance, str) and sub.instance in inst:
                path.append(sub.instance)
                break
    return path


def describe_path(path) -> str:
    parts = []
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
    kw = err.validator
    val = err.validator_value
    inst = err.instance
    if kw == "required":
        missing = [k for k in val if isinstance(inst, dict) and k not in inst]
        names = ", ".join(f"`{m}`" for m in missing) or "a required property"
        return f"{where}: missing required {names}"
    if kw == "additionalProperties" and isinstance(inst, dict):
        allowed = set((err.schema.get("properties") or {}).keys())
        extra = sorted(k for k in inst if k not in allowed)
        shown = ", ".join(f"`{safe_text(k, 40)}`" for k in extra[:5])
        if allowed:
            return f"{where}: unknown field {shown}; allowed: {', '.join(sorted(allowed))}"
        return f"{where}: unexpected field {shown}"
    if kw == "type":
        expected = val if isinstance(val, str) else " or ".join(val)
        return f"{where}: expected {expected}, got {_type_name(inst)}"
    if kw == "enum":
        return f"{where}: must be one of {', '.join(map(str, val))}"
    if kw == "const":
        return f"{where}: must be {json.dumps(val)}"
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        word = {"minimum": "at least", "maximum": "at most",
                "exclusiveMinimum": "greater than", "exclusiveMaximum": "less than"}[kw]
        return f"{where}: must be {word} {val}"
    if kw == "minLength":
        return f"{where}: must not be empty" if val == 1 else f"{where}: shorter than {val} characters"
    if kw == "maxLength":
        return f"{where}: longer than {val} characters"
    if kw == "maxItems":
        return f"{where}: more than {val} items"
    if kw == "not":
        return f"{where}: contains a control character or line break"
    if kw == "pattern":
        return f"{where}: does not match the pattern {safe_text(val, 80)}"
    if kw == "propertyNames":
        return f"{where}: a key is not a valid id (empty, too long, or with control characters)"
    if kw == "oneOf":
        return f"{where}: must be a number between 0 and 1, or a mapping with `min` (and `max_drop`)"
    return f"{where}: fails schema rule `{kw}`"


def iter_errors(v, instance):
    """Errors sorted by path so messages come out in document order."""
    if _fast_valid(v, instance):
        return []
    errors = list(v.iter_errors(instance))
    errors.sort(key=lambda e: [str(p) for p in e.absolute_path])
    return errors


def errors(name: str, instance, fragment: str = "") -> list:
    """:func:`iter_errors` for a bundled schema by name: [] at once when
    :func:`quick_valid` proves the instance valid, so jsonschema is only
    loaded to find and word errors (or to decide what the quick check cannot)."""
    schema = load_schema(name)
    if fragment:
        if not fragment.startswith("#/$defs/"):
            raise ValueError(fragment)
        sub = schema["$defs"][fragment[len("#/$defs/"):]]
        if quick_valid(sub, instance, schema):
            return []
    elif name == "gold" and _gold_fast_ok():
        if _gold_quick(instance, lambda shell: quick_valid(schema, shell, schema)):
            return []
    elif quick_valid(schema, instance, schema):
        return []
    return iter_errors(validator(name, fragment), instance)


# ---------------------------------------------------------------- quick validity
#
# A small interpreter for the keywords the bundled schemas use, with the same
# semantics as the strict jsonschema validator above. It answers True only for
# an instance that is valid; False is also exact; anything it does not know
# (another keyword, a number that is a float where an enum holds ints, an
# external $ref) raises _Unsure and jsonschema decides. tests/test_schemas_quick.py
# compares it with jsonschema on generated instances of every bundled schema.


class _Unsure(Exception):
    pass


_IGNORED = frozenset(("$schema", "$id", "title", "description", "$defs", "$comment", "examples"))


def quick_valid(schema, instance, root) -> bool:
    try:
        return _ok(schema, instance, root)
    except (_Unsure, RecursionError):
        return False


def _is_number(v) -> bool:
    return type(v) is int or type(v) is float


def _is_type(v, t: str) -> bool:
    if t == "integer":
        return type(v) is int  # strict: neither true nor 1.0
    if t == "number":
        return _is_number(v)
    if t == "string":
        return isinstance(v, str)
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    if t == "boolean":
        return type(v) is bool
    if t == "null":
        return v is None
    raise _Unsure


def _same(v, a) -> bool:
    """jsonschema's equality for const/enum on the values our schemas hold."""
    if type(v) is type(a) and type(a) in (str, int, float, bool, type(None)):
        return v == a
    if _is_number(v) and _is_number(a):
        raise _Unsure  # 1 == 1.0 there; not needed here
    if isinstance(a, (list, dict)) or isinstance(v, (list, dict)):
        raise _Unsure
    return False


def _ok(schema, v, root) -> bool:
    if schema is True:
        return True
    if schema is False:
        return False
    for kw, arg in schema.items():
        if kw in _IGNORED:
            continue
        if kw == "$ref":
            if not isinstance(arg, str) or not arg.startswith("#/$defs/"):
                raise _Unsure
            if not _ok(root["$defs"][arg[len("#/$defs/"):]], v, root):
                return False
        elif kw == "type":
            if not any(_is_type(v, t) for t in ([arg] if isinstance(arg, str) else arg)):
                return False
        elif kw == "const":
            if not _same(v, arg):
                return False
        elif kw == "enum":
            if not any(_same(v, a) for a in arg):
                return False
        elif kw == "required":
            if isinstance(v, dict) and any(k not in v for k in arg):
                return False
        elif kw == "properties":
            if isinstance(v, dict):
                for k, sub in arg.items():
                    if k in v and not _ok(sub, v[k], root):
                        return False
        elif kw == "additionalProperties":
            if "patternProperties" in schema:
                raise _Unsure
            if isinstance(v, dict):
                props = schema.get("properties", {})
                for k, x in v.items():
                    if k not in props and not _ok(arg, x, root):
                        return False
        elif kw == "propertyNames":
            if isinstance(v, dict) and not all(_ok(arg, k, root) for k in v):
                return False
        elif kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if _is_number(v) and not {
                "minimum": v >= arg, "maximum": v <= arg,
                "exclusiveMinimum": v > arg, "exclusiveMaximum": v < arg,
            }[kw]:
                return False
        elif kw in ("minLength", "maxLength"):
            if isinstance(v, str) and not (len(v) >= arg if kw == "minLength" else len(v) <= arg):
                return False
        elif kw in ("minItems", "maxItems"):
            if isinstance(v, list) and not (len(v) >= arg if kw == "minItems" else len(v) <= arg):
                return False
        elif kw == "items":
            if isinstance(v, list) and not all(_ok(arg, x, root) for x in v):
                return False
        elif kw == "pattern":
            if isinstance(v, str) and not re.search(arg, v):
                return False
        elif kw == "not":
            if _ok(arg, v, root):
                return False
        elif kw == "oneOf":
            if sum(1 for sub in arg if _ok(sub, v, root)) != 1:
                return False
        else:
            raise _Unsure
    return True


# ---------------------------------------------------------------- fast path
#
# A YAML or JSON gold document is validated whole. jsonschema takes ~12 s for
# 70,000 questions (measured), so a document whose queries all pass the proven
# per-record check (fastcheck.gold_query) is valid when the rest of it, with an
# empty `queries` list, is: the schema's `queries` is exactly an array of
# `$defs/query` (checked below, or there is no fast path). Anything else goes
# through jsonschema, which words the errors.


def _plain_query(q):
    # fastcheck wants exact dicts; the YAML loader's LineDict is a dict
    # subclass that jsonschema treats the same.
    if type(q) is dict or not isinstance(q, dict):
        return q
    q = dict(q)
    for key in ("relevant", "metadata"):
        if isinstance(q.get(key), dict):
            q[key] = dict(q[key])
    return q


@cache
def _gold_fast_ok() -> bool:
    queries = load_schema("gold").get("properties", {}).get("queries")
    return queries == {"type": "array", "items": {"$ref": "#/$defs/query"}}


def _fast_valid(v, instance) -> bool:
    if v is not validator("gold") or not _gold_fast_ok():
        return False
    return _gold_quick(instance, lambda shell: next(iter(v.iter_errors(shell)), None) is None)


def _gold_quick(instance, shell_valid) -> bool:
    if not isinstance(instance, dict) or not isinstance(instance.get("queries"), list):
        return False
    shell = {k: val for k, val in instance.items() if k != "queries"}
    shell["queries"] = []
    if not shell_valid(shell):
        return False
    return all(fastcheck.gold_query(_plain_query(q)) for q in instance["queries"])
