"""Validity of corpus documents, run lines and gold questions, record by
record and a block of records at a time, with every constraint read from the
bundled schemas (field names, required fields, lengths, enums, the id rule):
nothing here restates a number or a pattern.

jsonschema stays the reference and the source of every error message: a
record these functions accept is valid; a record they reject goes to
jsonschema, which says why. They exist because validating each record with
jsonschema is ~20x slower than parsing it (docs/decisions/0005-fast-readers-exact-fallback.md);
``tests/test_checks.py`` proves their verdicts equal jsonschema's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter

from rag_corpus_check.core.schemas import load_schema, resolved
from rag_corpus_check.inputs.records import blank
from rag_corpus_check.safe_io.scanner import objects, thaw

_KEY = itemgetter(0)
_VALUE = itemgetter(1)


@dataclass(frozen=True)
class Text:
    """A string rule: ``type: string`` with ``minLength``/``maxLength`` and a
    ``not: {pattern}`` of characters it may not hold."""

    low: int
    high: int
    bad: Callable[[str], object] | None
    good: Callable[[str], object] | None = None  # a `pattern` the string must match (jsonschema: re.search)

    @classmethod
    def of(cls, spec: dict) -> Text:
        assert spec.get("type") == "string", spec
        pattern = spec.get("not", {}).get("pattern")
        bad = re.compile(pattern).search if pattern else None
        # all_ok joins values with a space and skips the pattern when the
        # joined text is printable: sound only if the space is allowed and
        # every forbidden character is unprintable (tests/test_checks.py).
        assert bad is None or not bad(" ")
        good = re.compile(spec["pattern"]).search if "pattern" in spec else None
        return cls(spec.get("minLength", 0), spec.get("maxLength", 2**63), bad, good)

    def ok(self, v: object) -> bool:
        return (type(v) is str and self.low <= len(v) <= self.high and not (self.bad and self.bad(v))
                and not (self.good and not self.good(v)))

    def all_ok(self, values: list) -> bool:
        """:meth:`ok` for every one of ``values``, in a few C passes."""
        if self.good is not None:
            return all(map(self.ok, values))
        if not values or set(map(type, values)) != {str}:
            return not values
        lengths = list(map(len, values))
        if min(lengths) < self.low or max(lengths) > self.high:
            return False
        if self.bad is None:
            return True
        joined = " ".join(values)
        return joined.isprintable() or not self.bad(joined)


def _props(name: str, fragment: str = "") -> dict:
    schema = load_schema(name)
    node = schema
    for part in filter(None, fragment.lstrip("#/").split("/")):
        node = node[part]
    return node


@dataclass(frozen=True)
class Shape:
    """The keys of a record: allowed, required, and the optional ones (for
    which JSON null is invalid, not "absent")."""

    allowed: frozenset[str]
    required: tuple[str, ...]
    optional: tuple[str, ...]
    needed: frozenset[str]  # the required keys as a set (one C comparison)

    @classmethod
    def of(cls, spec: dict) -> Shape:
        assert spec.get("additionalProperties") is False, spec
        props = spec["properties"]
        required = tuple(spec.get("required", ()))
        return cls(frozenset(props), required, tuple(k for k in props if k not in required), frozenset(required))

    def ok(self, r: object) -> bool:
        return type(r) is dict and self.allowed.issuperset(r) and r.keys() >= self.needed


def _spec(name: str, fragment: str, key: str) -> dict:
    return resolved(name, _props(name, fragment)["properties"][key])


_CORPUS = _props("corpus")
_RUN = _props("run")
_QUERY = _props("gold", "#/$defs/query")
ID = Text.of(resolved("corpus", _CORPUS["properties"]["id"]))
SNAPSHOT = Text.of(_spec("corpus", "", "snapshot"))
CORPUS_SHAPE, RUN_SHAPE, QUERY_SHAPE = Shape.of(_CORPUS), Shape.of(_RUN), Shape.of(_QUERY)
TEXT, TITLE, TYPE = (Text.of(_spec("corpus", "", k)) for k in ("text", "title", "type"))
STATUS = frozenset(_spec("corpus", "", "status")["enum"])
RANKING_MAX = _spec("run", "", "ranking")["maxItems"]
QUERY_TEXT = Text.of(_spec("gold", "#/$defs/query", "query"))
_TAGS = _spec("gold", "#/$defs/query", "tags")
TAG, TAGS_MAX = Text.of(resolved("gold", _TAGS["items"])), _TAGS["maxItems"]
assert _TAGS["uniqueItems"] is True
_GRADE = resolved("gold", _spec("gold", "#/$defs/query", "relevant")["additionalProperties"])
GRADE_MIN, GRADE_MAX = _GRADE["minimum"], _GRADE["maximum"]
_OBJECTS = {k for k, s in _CORPUS["properties"].items() if s.get("type") == "object"} | {
    k for k, s in _QUERY["properties"].items() if s.get("type") == "object" and k != "relevant"}
assert _OBJECTS == {"metadata"}  # the only free objects: checked as "an object", no more


# ---------------------------------------------------------------- one record


def _optional(r: dict, key: str, rule: Callable[[object], bool]) -> bool:
    return key not in r or rule(r[key])


def corpus_record(r: object) -> bool:
    if not CORPUS_SHAPE.ok(r):
        return False
    assert isinstance(r, dict)
    return ID.ok(r["id"]) and TEXT.ok(r["text"]) and all(_optional(r, key, rule) for key, rule in _CORPUS_OPTIONAL)


def _status(v: object) -> bool:
    return type(v) is str and v in STATUS


def _is_dict(v: object) -> bool:
    return type(v) is dict


_CORPUS_OPTIONAL = (("title", TITLE.ok), ("type", TYPE.ok), ("status", _status), ("snapshot", SNAPSHOT.ok),
                    ("metadata", _is_dict), ("doc_id", ID.ok))


def beir_document(r: object) -> bool:
    """A valid line of a BEIR corpus.jsonl (schemas/beir.schema.json; other fields are ignored)."""
    return (type(r) is dict and "_id" in r and "text" in r and ID.ok(r["_id"]) and TEXT.ok(r["text"])
            and _optional(r, "title", TITLE.ok) and _optional(r, "metadata", _is_dict))


def run_record(r: object, valid_ids: set[str] | None = None) -> bool:
    """A valid run line. ``valid_ids`` (kept by the caller from line to
    line) is the ranked ids of the valid lines so far: only the ranked ids
    not in it are checked, and a valid line's are added (a run ranks the
    same documents again and again: 10,000 lines of 100 ids hold 100,000)."""
    if not RUN_SHAPE.ok(r):
        return False
    assert isinstance(r, dict)
    ranking = r["ranking"]
    return (ID.ok(r["query_id"]) and type(ranking) is list and len(ranking) <= RANKING_MAX
            and _optional(r, "snapshot", SNAPSHOT.ok) and _ids_ok(ranking, valid_ids))  # the ids last: they are kept


def _ids_ok(values: list, valid_ids: set[str] | None) -> bool:
    """:meth:`Text.all_ok` of the id rule, asked only of the values not in
    ``valid_ids`` (every member a str that passed; a value of another type
    equals none of them), which gains those that pass."""
    if valid_ids is None:
        return ID.all_ok(values)
    try:
        new = set(values).difference(valid_ids)  # in C: a hash per value, a lookup per distinct one
    except TypeError:  # an unhashable value: a list or an object, no id
        return False
    if new and not ID.all_ok(list(new)):
        return False
    valid_ids.update(new)
    return True


def gold_query(r: object) -> bool:
    if not QUERY_SHAPE.ok(r):
        return False
    assert isinstance(r, dict)
    return (ID.ok(r["query_id"]) and _optional(r, "query", QUERY_TEXT.ok) and _relevant_ok(r["relevant"])
            and _optional(r, "snapshot", SNAPSHOT.ok) and _optional(r, "metadata", _is_dict)
            and _optional(r, "tags", tags_ok) and _optional(r, "answerable", _is_bool))


def _is_bool(v: object) -> bool:
    return type(v) is bool


def tags_ok(tags: object) -> bool:
    """A question's `tags`: a list of at most TAGS_MAX tags, each once."""
    return (type(tags) is list and len(tags) <= TAGS_MAX and TAG.all_ok(tags)
            and len(set(tags)) == len(tags))


def _relevant_ok(rel: object) -> bool:
    if type(rel) is not dict:
        return False
    return ID.all_ok(list(rel)) and grades_ok(list(rel.values()))


def grades_ok(grades: list) -> bool:
    """Every grade an integer on the schema's scale (the types of every
    grade, not of a set of them: True == 1 == 1.0)."""
    return not grades or (set(map(type, grades)) == {int} and GRADE_MIN <= min(grades)
                          and max(grades) <= GRADE_MAX)


# ---------------------------------------------------------------- a block of records


def _columns(values: list) -> dict[str, list] | None:
    """The fields of a block of top-level objects (pair tuples) as columns,
    ``{key: values in line order}``, when every object has the same keys in
    the same order (what an export writes; C passes over the block instead of
    a dict per record); None when the shapes differ. ValueError for a line
    that is not an object or an object that repeats a key."""
    if set(map(type, values)) != {tuple}:
        raise ValueError("not an object")
    n = len(values[0])
    if set(map(len, values)) != {n}:
        return None
    columns = {}
    for j in range(n):
        pairs = list(map(itemgetter(j), values))
        keys = set(map(_KEY, pairs))
        if len(keys) != 1:
            return None
        key = keys.pop()
        if key in columns:
            raise ValueError("duplicate key")
        columns[key] = list(map(_VALUE, pairs))
    return columns


def dict_columns(values: list, optional: tuple[str, ...]) -> dict[str, list]:
    """:func:`_columns` for a block whose objects differ in shape: one dict
    per record (``objects``: Slow on a repeated key). A required key missing
    from a record is a KeyError; an ``optional`` key is a column of None where
    absent (ValueError where a record has it as JSON null), left out when no
    record has it."""
    recs = objects(values)
    columns = {}
    for key in set(chain.from_iterable(recs)):
        if key in optional:
            column = list(map(dict.get, recs, repeat(key)))
            if None in column and sum(map(dict.__contains__, recs, repeat(key))) != len(column) - column.count(None):
                raise ValueError(key)
        else:
            column = list(map(dict.__getitem__, recs, repeat(key)))
        columns[key] = column
    return columns


def block_columns(values: list, shape: Shape) -> dict[str, list]:
    """The columns of a block: every key allowed, every required one
    present, no optional column holding a JSON null (see :func:`dict_columns`)."""
    columns = _columns(values)
    if columns is None:
        columns = dict_columns(values, shape.optional)
    elif any(None in columns[key] for key in shape.optional if key in columns):
        raise ValueError("null")
    if not shape.allowed.issuperset(columns):
        raise ValueError("key")
    for key in shape.required:
        columns[key]  # KeyError: a required field missing from every record
    return columns


def present(values: list | None) -> list:
    """The values of an optional column where a record has one."""
    if values is None:
        return []
    return [v for v in values if v is not None] if None in values else values


def each_distinct(values: list, check: Callable[[object], bool], key: str) -> None:
    """``check`` each distinct value present (a block holds a handful);
    ValueError on a failure, TypeError on an unhashable value (invalid too)."""
    for v in set(values):
        if v is not None and not check(v):
            raise ValueError(key)


def snapshots_and_metadata(columns: dict, n: int) -> list:
    """The snapshot column (None where absent), every snapshot and metadata
    value checked; ValueError (or Slow) if one is invalid."""
    snaps = columns.get("snapshot") or [None] * n
    each_distinct(snaps, SNAPSHOT.ok, "snapshot")
    for v in present(columns.get("metadata")):
        if type(v) is not tuple:
            raise ValueError("metadata")
        thaw(v)  # a duplicate key inside is invalid JSON
    return snaps


def corpus_block(values: list) -> tuple[list, list, list, list, list[int]]:
    """:func:`corpus_record` for a block of lines at once: ``(ids, types,
    statuses, snapshots, blank)`` (None where a document has no type or
    snapshot; ``blank``: the places of the :func:`blank` documents);
    ValueError (or KeyError, TypeError, Slow) if any record is invalid."""
    columns = block_columns(values, CORPUS_SHAPE)
    if "doc_id" in columns:
        raise ValueError("a chunked corpus: the exact reader keeps each chunk's document")
    n = len(values)
    ids = columns["id"]
    if not (ID.all_ok(ids) and TEXT.all_ok(columns["text"]) and TITLE.all_ok(present(columns.get("title")))):
        raise ValueError("id, text or title")
    types = columns.get("type") or [None] * n
    each_distinct(types, TYPE.ok, "type")
    blank = blank_records(columns["text"], columns.get("title") or [None] * n)
    return ids, types, _statuses(columns.get("status"), n), snapshots_and_metadata(columns, n), blank


def blank_records(texts: list[str], titles: list[str | None]) -> list[int]:
    """The places of the :func:`blank` records in a block (one C pass when
    every text has a word, the common case)."""
    if all(map(str.strip, texts)):
        return []
    return [i for i, (text, title) in enumerate(zip(texts, titles, strict=True)) if blank(text, title)]


def _statuses(column: list | None, n: int) -> list[str]:
    """The status column, the default where a record has none."""
    statuses = column or ["active"] * n
    if None in statuses:
        statuses = ["active" if s is None else s for s in statuses]
    if not STATUS.issuperset(statuses):
        raise ValueError("status")
    return statuses
