"""The record checks (inputs.checks, derived from the schemas) give exactly
jsonschema's verdict: a property test over generated valid and invalid
records, the boundaries, and the soundness of their one shortcut."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_corpus_check.core.schemas import load_schema, validator
from rag_corpus_check.inputs import checks

ODD = ["", "a", "a\n", "\n", "x\x00y", "\x7f", "a\u2028", "\u0085", "é", "١٢", " ", "\t", "ok-id",
       "a" * 512, "a" * 513, "s" * 200, "s" * 201, "t" * 100, "t" * 101]
text = st.one_of(st.sampled_from(ODD), st.text(max_size=40))
scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 1005), st.floats(allow_nan=False), text,
                   st.sampled_from([0, 1, 2, 1000, 1001, -1, 1.0, 2.5, True, False]))
json_value = st.recursive(scalar, lambda c: st.one_of(st.lists(c, max_size=3),
                                                      st.dictionaries(text, c, max_size=3)), max_leaves=6)


def field(good):
    return st.one_of(good, json_value)


def record(keys: dict, extra_keys: list[str], required: list[str]):
    """Half mostly-valid records (required keys present, plausible values),
    half anything (missing keys, wrong types, unknown keys)."""
    names = list(keys) + extra_keys
    anything = st.fixed_dictionaries({}, optional={k: field(keys.get(k, json_value)) for k in names})
    plausible = st.fixed_dictionaries(
        {k: keys[k] for k in required},
        optional={k: v for k, v in keys.items() if k not in required},
    )
    return st.one_of(plausible, anything)


TAGS = ["billing", "ru", "lang:ru", "a.b-c_d", "t" * 64, "t" * 65, "-x", "bil ling", "billing\n", "é", "١"]
ids = st.one_of(st.sampled_from(["doc-1", "q1", "a" * 512]), st.text(min_size=1, max_size=20))
corpus = record({"id": ids, "text": text, "title": text, "type": text,
                 "status": st.sampled_from(["active", "stale", "restricted", "gone", ""]),
                 "snapshot": text, "metadata": st.dictionaries(text, scalar, max_size=2)}, ["extra", "ID"],
                ["id", "text"])
run = record({"query_id": ids, "ranking": st.lists(st.one_of(ids, ids, text, scalar), max_size=5),
              "snapshot": text}, ["score"], ["query_id", "ranking"])
gold = record({"query_id": ids, "query": text,
               "relevant": st.dictionaries(st.one_of(ids, text), st.one_of(st.integers(-2, 1002), st.integers(0, 2), scalar), max_size=4),
               "snapshot": text, "metadata": st.dictionaries(text, scalar, max_size=2),
               "tags": st.one_of(st.lists(st.one_of(st.sampled_from(TAGS), text, scalar), max_size=4),
                                 st.lists(st.sampled_from(TAGS), max_size=22))}, ["relevance"],
              ["query_id", "relevant"])

CASES = [
    (corpus, checks.corpus_record, validator("corpus")),
    (run, checks.run_record, validator("run")),
    (gold, checks.gold_query, validator("gold", "#/$defs/query")),
]


@pytest.mark.parametrize("strategy,fast,reference", CASES, ids=["corpus", "run", "gold-query"])
def test_fast_verdict_equals_jsonschema(strategy, fast, reference):
    seen = {True: 0, False: 0}

    # derandomize: the same examples every run, so the coverage count below
    # cannot fall short by chance (49 valid run records once, 50 needed).
    @settings(max_examples=700, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(strategy)
    def check(rec):
        expected = reference.is_valid(rec)
        assert fast(rec) == expected, rec
        seen[expected] += 1

    check()
    # Both verdicts were exercised, many times.
    assert seen[True] > 50 and seen[False] > 50, seen


def test_run_verdict_with_the_ids_already_checked_equals_jsonschema():
    """run_record with ``valid_ids`` carried from record to record (as the
    JSONL run reader does): the same verdicts, and the set holds exactly the
    ranked ids of the valid records so far."""
    valid_ids: set = set()
    expected_ids: set = set()
    seen = {True: 0, False: 0}

    @settings(max_examples=700, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(run)
    def check(rec):
        expected = validator("run").is_valid(rec)
        assert checks.run_record(rec, valid_ids=valid_ids) == expected, rec
        if expected:
            expected_ids.update(rec["ranking"])
        assert valid_ids == expected_ids
        seen[expected] += 1

    check()
    assert seen[True] >= 40 and seen[False] > 50, seen
    assert len(valid_ids) >= 5  # ids met again: the set answered for them


@pytest.mark.parametrize("rec,valid", [
    ({"id": "a", "text": "x" * 10_000_000}, True),
    ({"id": "a", "text": "x" * 10_000_001}, False),
    ({"id": "a", "text": ""}, True),
    ({"id": "a", "text": "t", "metadata": []}, False),
    ({"id": "a", "text": "t", "status": None}, False),
    ("not a dict", False),
])
def test_corpus_boundaries(rec, valid):
    assert checks.corpus_record(rec) is valid
    assert validator("corpus").is_valid(rec) is valid


def test_run_ranking_length_boundary():
    # jsonschema over 100,000 items takes seconds; the limit is read from the schema instead.
    assert load_schema("run")["properties"]["ranking"]["maxItems"] == 100_000
    ok = {"query_id": "q", "ranking": [f"d{i}" for i in range(100_000)]}
    assert checks.run_record(ok)
    ok["ranking"].append("x")
    assert not checks.run_record(ok)


def test_every_character_a_rule_forbids_is_unprintable():
    """Text.all_ok skips a rule's pattern when the joined values are
    printable: sound only if no printable character is forbidden (and the
    space that joins them is allowed). Checked over every code point."""
    for rule in (checks.ID, checks.SNAPSHOT, checks.TYPE):
        assert rule.bad is not None and not rule.bad(" ")
        for cp in range(0x110000):
            ch = chr(cp)
            if rule.bad(ch):
                assert not ch.isprintable(), (rule, hex(cp))


def test_the_rules_come_from_the_schemas():
    """A schema edit moves the check with it (no number restated in code)."""
    assert checks.ID.high == load_schema("common")["$defs"]["id"]["maxLength"]
    assert checks.TEXT.high == load_schema("common")["$defs"]["text"]["maxLength"]
    text = {k: v for k, v in load_schema("corpus")["properties"]["text"].items() if k != "description"}
    assert text == {"$ref": "common.schema.json#/$defs/text"}  # a description is an annotation, not a rule
    assert checks.RANKING_MAX == load_schema("run")["properties"]["ranking"]["maxItems"]
    assert checks.STATUS == set(load_schema("corpus")["properties"]["status"]["enum"])


@pytest.mark.parametrize("tags,valid", [
    (["billing", "ru"], True),
    (["t" * 64], True),
    (["t" * 65], False),
    ([f"t{i}" for i in range(20)], True),
    ([f"t{i}" for i in range(21)], False),
    (["billing", "billing"], False),
    (["billing\n"], False),
    (["é"], False),
    ([], True),
    ("billing", False),
])
def test_tags_boundaries(tags, valid):
    rec = {"query_id": "q", "relevant": {}, "tags": tags}
    assert checks.gold_query(rec) is valid
    assert validator("gold", "#/$defs/query").is_valid(rec) is valid
