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

from rag_corpus_check.safe_io import thaw

# The `not: {pattern: ...}` of the schemas, searched the same way (re.search).
_ID_BAD = re.compile("[\u0000-\u001f\u007f\u0085\u2028\u2029]").search
_TEXT_BAD = re.compile("[\u0000-\u001f\u007f]").search
_STATUS = frozenset(("active", "stale", "restricted"))
_CORPUS_KEYS = frozenset(("id", "text", "title", "type", "status", "snapshot", "metadata"))
_RUN_KEYS = frozenset(("query_id", "ranking", "snapshot"))
_QUERY_KEYS = frozenset(("query_id", "query", "relevant", "snapshot", "metadata"))


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


def _optional(recs: list, key: str) -> list:
    """The values of ``key`` (None where absent); ValueError when a record
    has it as JSON null, which the schemas never allow."""
    values = list(map(dict.get, recs, repeat(key)))
    if None in values and sum(map(dict.__contains__, recs, repeat(key))) != len(values) - values.count(None):
        raise ValueError(key)
    return values


def _each_distinct(values: list, check, key: str) -> None:
    """``check`` each distinct value present (a block holds a handful);
    ValueError on a failure, TypeError on an unhashable value (invalid too)."""
    for v in set(values):
        if v is not None and not check(v):
            raise ValueError(key)


def corpus_block(recs: list[dict]) -> tuple[list, list, list, list]:
    """:func:`corpus_record` for a block of records at once (C loops over
    the block; the Python loops run over distinct values, a handful).
    Returns ``(ids, types, statuses, snapshots)``; raises ValueError (or
    KeyError, TypeError) if any record is invalid. Nested objects are still
    pair tuples (``safe_io.jsonl_blocks``)."""
    if not _CORPUS_KEYS.issuperset(chain.from_iterable(recs)):
        raise ValueError("key")
    ids = list(map(dict.__getitem__, recs, repeat("id")))
    texts = list(map(dict.__getitem__, recs, repeat("text")))
    if not _ids_ok(ids):
        raise ValueError("id")
    if set(map(type, texts)) != {str} or max(map(len, texts)) > 10_000_000:
        raise ValueError("text")
    titles = list(map(dict.get, recs, repeat("title"), repeat("")))
    if set(map(type, titles)) != {str} or max(map(len, titles)) > 10_000:
        raise ValueError("title")
    types = _optional(recs, "type")
    _each_distinct(types, _type, "type")
    statuses = list(map(dict.get, recs, repeat("status"), repeat("active")))
    if not _STATUS.issuperset(statuses):
        raise ValueError("status")
    snaps = _optional(recs, "snapshot")
    _each_distinct(snaps, _snapshot, "snapshot")
    metadata = _optional(recs, "metadata")
    if metadata.count(None) != len(metadata):
        for v in metadata:
            if v is not None:
                if type(v) is not tuple:
                    raise ValueError("metadata")
                thaw(v)  # a duplicate key inside is invalid JSON
    return ids, types, statuses, snaps


def run_block(recs: list[dict]) -> tuple[list, list, list, list]:
    """:func:`run_record` for a block of run lines at once. Returns
    ``(query_ids, rankings, snapshots, all_ids)``; raises ValueError (or
    KeyError, TypeError) if any line is invalid."""
    if not _RUN_KEYS.issuperset(chain.from_iterable(recs)):
        raise ValueError("key")
    qids = list(map(dict.__getitem__, recs, repeat("query_id")))
    rankings = list(map(dict.__getitem__, recs, repeat("ranking")))
    if not _ids_ok(qids):
        raise ValueError("query_id")
    if set(map(type, rankings)) != {list} or max(map(len, rankings)) > 100_000:
        raise ValueError("ranking")
    all_ids = list(chain.from_iterable(rankings))
    if not _ids_ok(all_ids):
        raise ValueError("ranking")
    snaps = _optional(recs, "snapshot")
    _each_distinct(snaps, _snapshot, "snapshot")
    return qids, rankings, snaps, all_ids
