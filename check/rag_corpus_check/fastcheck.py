"""Fast validity checks for the per-record schemas (corpus document, run line,
gold question), equivalent to the bundled JSON Schemas.

jsonschema stays the reference and the source of every error message: a
record these functions accept is valid; a record they reject goes to
jsonschema, which says why. They only exist because validating each record
with jsonschema is ~20x slower than parsing it (README, "Performance").
``tests/test_fastcheck.py`` proves the verdicts equal jsonschema's on
generated valid and invalid records. Keep them in step with the schemas.
"""

from __future__ import annotations

import re
from itertools import chain, repeat
from operator import itemgetter

from rag_corpus_check.safe_io import objects, thaw

# The `not: {pattern: ...}` of the schemas, searched the same way (re.search).
_ID_BAD = re.compile("[\u0000-\u001f\u007f\u0085\u2028\u2029]").search
_TEXT_BAD = re.compile("[\u0000-\u001f\u007f]").search
_STATUS = frozenset(("active", "stale", "restricted"))
_CORPUS_KEYS = frozenset(("id", "text", "title", "type", "status", "snapshot", "metadata"))
_RUN_KEYS = frozenset(("query_id", "ranking", "snapshot"))
_QUERY_KEYS = frozenset(("query_id", "query", "relevant", "snapshot", "metadata"))
# Keys a record may leave out; for them JSON null is invalid (not "absent").
_CORPUS_OPTIONAL = ("title", "type", "status", "snapshot", "metadata")
_RUN_OPTIONAL = ("snapshot",)
_QUERY_OPTIONAL = ("query", "snapshot", "metadata")
_KEY = itemgetter(0)
_VALUE = itemgetter(1)


def _id(v) -> bool:
    return type(v) is str and 0 < len(v) <= 512 and not _ID_BAD(v)


def _snapshot(v) -> bool:
    return type(v) is str and 0 < len(v) <= 200 and not _TEXT_BAD(v)


def _type(v) -> bool:
    return type(v) is str and 0 < len(v) <= 100 and not _TEXT_BAD(v)


def corpus_record(r) -> bool:
    if type(r) is not dict or not _CORPUS_KEYS.issuperset(r) or "id" not in r or "text" not in r:
        return False
    if not _id(r["id"]):
        return False
    t = r["text"]
    if type(t) is not str or len(t) > 10_000_000:
        return False
    if "title" in r and (type(r["title"]) is not str or len(r["title"]) > 10_000):
        return False
    if "type" in r and not _type(r["type"]):
        return False
    if "status" in r and (type(r["status"]) is not str or r["status"] not in _STATUS):
        return False
    if "snapshot" in r and not _snapshot(r["snapshot"]):
        return False
    return "metadata" not in r or type(r["metadata"]) is dict


def run_record(r) -> bool:
    if type(r) is not dict or not _RUN_KEYS.issuperset(r) or "query_id" not in r or "ranking" not in r:
        return False
    if not _id(r["query_id"]):
        return False
    ranking = r["ranking"]
    if type(ranking) is not list or len(ranking) > 100_000:
        return False
    if not _ids_ok(ranking):
        return False
    return "snapshot" not in r or _snapshot(r["snapshot"])


def gold_query(r) -> bool:
    if type(r) is not dict or not _QUERY_KEYS.issuperset(r) or "query_id" not in r or "relevant" not in r:
        return False
    if not _id(r["query_id"]):
        return False
    if "query" in r and (type(r["query"]) is not str or len(r["query"]) > 100_000):
        return False
    rel = r["relevant"]
    if type(rel) is not dict:
        return False
    for d, g in rel.items():
        if not _id(d) or type(g) is not int or not 0 <= g <= 1000:
            return False
    if "snapshot" in r and not _snapshot(r["snapshot"]):
        return False
    return "metadata" not in r or type(r["metadata"]) is dict


def _ids_ok(ids: list) -> bool:
    """``_id`` for every item, in C. ``str.isprintable`` is false for every
    character the id pattern forbids (Unicode "Other" and "Separator"
    categories) and faster than the pattern, which only runs when it is false
    (e.g. an id with a no-break space, which is allowed)."""
    if not ids:
        return True
    try:
        joined = " ".join(ids)  # fails on a non-string
    except TypeError:
        return False
    if not joined.isprintable() and _ID_BAD(joined):
        return False
    return "" not in ids and max(map(len, ids)) <= 512


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


def _dict_columns(values: list, optional: tuple[str, ...]) -> dict[str, list]:
    """:func:`_columns` for a block whose objects differ in shape: one dict
    per record (``objects``: Slow on a repeated key). A required key missing
    from a record is a KeyError; an ``optional`` key is a column of None where
    absent (ValueError where a record has it as JSON null, which the schemas
    never allow), left out when no record has it."""
    recs = objects(values)
    keys = set(chain.from_iterable(recs))
    columns = {}
    for key in keys:
        if key in optional:
            column = list(map(dict.get, recs, repeat(key)))
            if None in column and sum(map(dict.__contains__, recs, repeat(key))) != len(column) - column.count(None):
                raise ValueError(key)
        else:
            column = list(map(dict.__getitem__, recs, repeat(key)))
        columns[key] = column
    return columns


def _block_columns(values: list, allowed: frozenset, optional: tuple[str, ...]) -> dict[str, list]:
    """The columns of a block: every key allowed, every optional column
    without a JSON null (see :func:`_dict_columns`)."""
    columns = _columns(values)
    if columns is None:
        columns = _dict_columns(values, optional)
    elif any(None in columns[key] for key in optional if key in columns):
        raise ValueError("null")
    if not allowed.issuperset(columns):
        raise ValueError("key")
    return columns


def _each_distinct(values: list, check, key: str) -> None:
    """``check`` each distinct value present (a block holds a handful);
    ValueError on a failure, TypeError on an unhashable value (invalid too)."""
    for v in set(values):
        if v is not None and not check(v):
            raise ValueError(key)


def _sized(values: list, kind: type, limit: int) -> bool:
    """Every one of ``values`` (at least one) is a ``kind`` of at most
    ``limit`` items; two passes in C."""
    return set(map(type, values)) == {kind} and max(map(len, values)) <= limit


def _texts_ok(values: list | None, limit: int) -> bool:
    """Every value present (None: absent from that record) is a string of
    at most ``limit`` characters."""
    if values is None:
        return True
    if None in values:
        values = [v for v in values if v is not None]
    return not values or _sized(values, str, limit)


def _snapshots_and_metadata(columns: dict, n: int) -> list:
    """The snapshot column (None where absent), every snapshot and metadata
    value checked; ValueError (or Slow) if one is invalid."""
    snaps = columns.get("snapshot") or [None] * n
    _each_distinct(snaps, _snapshot, "snapshot")
    for v in columns.get("metadata", ()):
        if v is not None:
            if type(v) is not tuple:
                raise ValueError("metadata")
            thaw(v)  # a duplicate key inside is invalid JSON
    return snaps


def corpus_block(values: list) -> tuple[list, list, list, list]:
    """:func:`corpus_record` for a block of lines at once (C loops over the
    block; the Python loops run over keys and distinct values, a handful).
    ``values`` are the parsed lines with objects as pair tuples
    (``safe_io.jsonl_blocks``). Returns ``(ids, types, statuses,
    snapshots)`` (None where a document has no type or snapshot); raises
    ValueError (or KeyError, TypeError, Slow) if any record is invalid."""
    columns = _block_columns(values, _CORPUS_KEYS, _CORPUS_OPTIONAL)
    n = len(values)
    ids = columns["id"]
    texts = columns["text"]
    if not _ids_ok(ids):
        raise ValueError("id")
    if not _sized(texts, str, 10_000_000):
        raise ValueError("text")
    if not _texts_ok(columns.get("title"), 10_000):
        raise ValueError("title")
    types = columns.get("type") or [None] * n
    _each_distinct(types, _type, "type")
    statuses = columns.get("status") or ["active"] * n
    if None in statuses:  # absent from some records: the default
        statuses = ["active" if s is None else s for s in statuses]
    if not _STATUS.issuperset(statuses):
        raise ValueError("status")
    return ids, types, statuses, _snapshots_and_metadata(columns, n)


def run_block(values: list, ranked: set) -> tuple[list, list, list]:
    """:func:`run_record` for a block of run lines at once, except the id
    rules for ranked ids: those are checked once per distinct id, on
    ``ranked`` (which collects them), by :func:`ranked_ids_ok` at the end.
    Returns ``(query_ids, rankings, snapshots)``; raises ValueError (or
    KeyError, TypeError, Slow) if any line is invalid or ranks a document
    twice."""
    columns = _block_columns(values, _RUN_KEYS, _RUN_OPTIONAL)
    qids = columns["query_id"]
    rankings = columns["ranking"]
    if not _ids_ok(qids):
        raise ValueError("query_id")
    if not _sized(rankings, list, 100_000):
        raise ValueError("ranking")
    # TypeError on an unhashable item. The small sets first: they cache each
    # id's hash while the ids are in cache, and adding hashed ids to the big
    # set is then 2x faster (measured; the hashing delays its cache misses);
    # merging them set into set skips the lookups of the hashes (15% less).
    sets = list(map(set, rankings))
    if sum(map(len, sets)) != sum(map(len, rankings)):
        raise ValueError("a document twice in a ranking")
    ranked.update(*sets)
    snaps = columns.get("snapshot") or [None] * len(values)
    _each_distinct(snaps, _snapshot, "snapshot")
    return qids, rankings, snaps


def gold_block(values: list) -> tuple[list, list, list, list]:
    """:func:`gold_query` for a block of JSONL gold lines at once. Returns
    ``(query_ids, relevant, queries, snapshots)`` with each ``relevant`` a
    dict (None where a line has no query or snapshot); raises ValueError (or
    KeyError, TypeError, Slow) if any line is invalid."""
    columns = _block_columns(values, _QUERY_KEYS, _QUERY_OPTIONAL)
    n = len(values)
    qids = columns["query_id"]
    if not _ids_ok(qids):
        raise ValueError("query_id")
    labels = columns["relevant"]
    if set(map(type, labels)) != {tuple}:
        raise ValueError("relevant")
    relevant = list(map(dict, labels))
    if list(map(len, relevant)) != list(map(len, labels)):
        raise ValueError("a document judged twice")
    if not _ids_ok(list(chain.from_iterable(relevant))):
        raise ValueError("relevant")
    grades = list(chain.from_iterable(map(dict.values, relevant)))
    # the types of every grade, not of a set of them: True == 1 == 1.0
    if grades and (set(map(type, grades)) != {int} or min(grades) < 0 or max(grades) > 1000):
        raise ValueError("grade")
    queries = columns.get("query") or [None] * n
    if not _texts_ok(queries, 100_000):
        raise ValueError("query")
    return qids, relevant, queries, _snapshots_and_metadata(columns, n)


def ranked_ids_ok(ranked: set) -> bool:
    """The id rules of :func:`run_record` for every distinct ranked id."""
    return _ids_ok(list(ranked))
