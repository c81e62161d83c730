"""The bundled JSON Schemas and validators built from them.

Schemas are read from this package only, never from the repository being
checked or the network. ``integer`` is strict here (``1.0`` and ``true`` are not
grades), and messages are built from the failing keyword and the path, never
from the instance value: a schema error must not echo document text.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

import jsonschema
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from rag_corpus_check import fastcheck
from rag_corpus_check.text import safe_text

SCHEMA_NAMES = ("config", "corpus", "gold", "run", "results")


def _strict_int(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


_TYPES = Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_int)
StrictValidator = jsonschema.validators.extend(Draft202012Validator, type_checker=_TYPES)


@cache
def load_schema(name: str) -> dict:
    text = resources.files("rag_corpus_check").joinpath("schemas", f"{name}.schema.json").read_text(
        encoding="utf-8"
    )
    return json.loads(text)


@cache
def _registry() -> Registry:
    reg = Registry()
    for name in SCHEMA_NAMES:
        schema = load_schema(name)
        reg = reg.with_resource(schema["$id"], Resource.from_contents(schema))
    return reg


@cache
def validator(name: str, fragment: str = ""):
    """A validator for a bundled schema, or for ``#/$defs/...`` inside it."""
    schema = load_schema(name)
    if fragment:
        return StrictValidator({"$ref": schema["$id"] + fragment}, registry=_registry())
    return StrictValidator(schema, registry=_registry())


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
    if not isinstance(instance, dict) or not isinstance(instance.get("queries"), list):
        return False
    shell = {k: val for k, val in instance.items() if k != "queries"}
    shell["queries"] = []
    if next(iter(v.iter_errors(shell)), None) is not None:
        return False
    return all(fastcheck.gold_query(_plain_query(q)) for q in instance["queries"])
