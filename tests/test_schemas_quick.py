"""schemas.quick_valid (the check that keeps jsonschema out of a valid run)
gives jsonschema's verdict whenever it gives one: True only for valid
instances, False only for invalid ones, else it defers (_Unsure). Checked on
valid instances of every bundled schema and on random mutations of them."""

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from rag_corpus_check.core import schemas
from rag_corpus_check.safe_io import Limits, load_yaml

VALID_CONFIG = {
    "version": 1, "corpus": "corpus.jsonl", "gold": "gold.yaml", "run": "run.jsonl", "k": 5,
    "snapshot": "kb-2026-11", "formats": {"gold": "auto", "run": "jsonl"},
    "relevance": {"min_grade": 1, "max_grade": 2}, "metrics": {"gain": "linear", "short_list": "pad"},
    "thresholds": {"nDCG@5": 0.6, "P@5": {"min": 0.2, "max_drop": 0.05}},
    "validation": {"inactive_labels": "warning", "missing_queries": "error", "extra_queries": "warning"},
    "report": {"worst": 5, "show_text": False},
    "limits": {"max_file_bytes": 1000, "max_line_bytes": 100, "max_records": 10},
    "retriever": {"type": "bm25", "k1": 1.2, "b": 0.75, "depth": 100, "statuses": ["active"],
                  "stopwords": None, "timeout": 30},
    "rule_change_reason": "because the labels were redone",
    "measures": ["RR@10", "Rprec"],
}
VALID_DATASET = {"version": 1, "dataset": {"format": "beir", "path": "scifact", "split": "test"}, "k": 10,
                 "formats": {"run": "run-json", "run_order": "ascending"},
                 "relevance": {"min_grade": 1, "max_grade": 2, "map": {"-1": 0, "3": 2}}}


def _results():
    from rag_corpus_check.commands.check import run_check
    from rag_corpus_check.report.results import results_dict

    out = run_check(str(ROOT / "examples" / "kb"), str(ROOT / "examples" / "kb" / ".rag-corpus-check.yml"))
    return json.loads(json.dumps(results_dict(out)))


def _gold_doc():
    text = (ROOT / "examples" / "kb" / "gold.yaml").read_bytes()
    return json.loads(json.dumps(load_yaml(text, "gold.yaml", Limits())))


VALID = {
    ("config", ""): VALID_CONFIG,
    ("config+dataset", ""): VALID_DATASET,  # the config schema, its other shape
    ("config+gold-list", ""): {**VALID_CONFIG, "gold": ["gold.yaml", "labels.yaml"]},  # gold: as a list
    ("config+fields", ""): {  # gold: and corpus: as objects with field maps (an if/then in the corpus's)
        **VALID_CONFIG, "gold": {"path": "eval/golden.jsonl", "fields": {"query_id": "id", "relevant": "docs"}},
        "corpus": {"format": "jsonl", "path": "c.jsonl", "fields": {"id": "chunk_id", "text": "content"}},
        "relevance": {"min_grade": 1, "max_grade": 2, "list_grade": 2}},
    ("beir", "#/$defs/document"): {"_id": "d1", "title": "T", "text": "t", "metadata": {"url": "x"}, "other": 1},
    ("beir", "#/$defs/query"): {"_id": "q1", "text": "why", "metadata": {"source": "x"}, "x": 1},
    ("corpus", ""): {"id": "d1", "text": "t", "title": "T", "type": "faq", "status": "stale",
                     "snapshot": "s", "metadata": {"a": [1]}},
    ("run", ""): {"query_id": "q1", "ranking": ["d1", "d2"], "snapshot": "s"},
    ("gold", "#/$defs/query"): {"query_id": "q1", "query": "why", "relevant": {"d1": 2, "d2": 0},
                                "answerable": True},
}

ODD = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 100_001), st.sampled_from([0.0, 0.5, 1.0, 1.5, -0.1, 2.0, 1e30]),
    st.sampled_from(["", "x", "a\n", "\x00", "x" * 1001, "auto", "yaml", "bm25", "command", "active", "linear",
                     "error", "english", "nDCG@5", "P@" + "9" * 30]),
    st.lists(st.sampled_from(["a", "", 1, None]), max_size=3),
    st.dictionaries(st.sampled_from(["min", "max_drop", "x", "gold", "type"]),
                    st.sampled_from([0.1, 2, "a", None, True]), max_size=2),
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated(draw, base):
    inst = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, 3))):
        paths = list(_paths(inst))
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent = inst
        for p in path[:-1]:
            parent = parent[p]
        how = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if how == "replace":
            parent[path[-1]] = draw(ODD)
        elif how == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "k", "min", "type", "x" * 21]))] = draw(ODD)
    return inst


def _verdicts(name, fragment, inst):
    name = name.partition("+")[0]
    schema = schemas.load_schema(name)
    sub = schema["$defs"][fragment[len("#/$defs/"):]] if fragment else schema
    return schemas.quick_verdict(sub, inst, schema), schemas.validator(name, fragment).is_valid(inst)


CASES = [*VALID, ("gold", ""), ("results", "")]


@pytest.mark.parametrize("name,fragment", CASES, ids=[n + f for n, f in CASES])
def test_quick_verdict_is_jsonschemas(name, fragment):
    base = {("gold", ""): _gold_doc, ("results", ""): _results}.get((name, fragment))
    base = base() if base else VALID[(name, fragment)]
    assert _verdicts(name, fragment, base) == (True, True)
    seen = {True: 0, False: 0, None: 0}

    @settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(mutated(base))
    def check(inst):
        quick, reference = _verdicts(name, fragment, inst)
        if quick is not None:
            assert quick == reference, inst
        seen[quick] += 1

    check()
    assert seen[True] > 20 and seen[False] > 100, seen


def test_a_valid_run_never_loads_jsonschema(tmp_path):
    """The point of it: the example (YAML config and gold, BM25) checks
    without importing jsonschema at all."""
    import subprocess
    import sys

    code = (
        "import sys; from rag_corpus_check.commands.cli import main; "
        f"c = main(['--root', {str(ROOT / 'examples' / 'kb')!r}, '--config', "
        f"{str(ROOT / 'examples' / 'kb' / '.rag-corpus-check.yml')!r}, '--quiet', '--no-github', "
        f"'--output', {str(tmp_path / 'r.json')!r}, '--summary-file', {str(tmp_path / 's.md')!r}]); "
        "print(c, 'jsonschema' in sys.modules)"
    )
    env = {"PYTHONPATH": str(ROOT / "check"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split()[-2:] == ["0", "False"], out.stdout + out.stderr


BOUNDARIES = [0, 0.0, -1, 1, 1.0, 1.5, 2, 1000, 1001, 10000, 10001, 86400, 86401, 1e30, "", "x" * 9,
              "x" * 10, "x" * 200, "x" * 201, "x" * 500, "x" * 501, "x" * 1000, "x" * 1001, "a\x1f", None,
              True, False, [], ["a"], {}, {"min": 0.5}]


@pytest.mark.parametrize("name,fragment", list(VALID), ids=[n + f for n, f in VALID])
def test_every_field_at_its_boundaries(name, fragment):
    """Deterministic: each field of a valid instance set to each boundary
    value in turn (the random mutations may miss a 0 on the one field with
    exclusiveMinimum)."""
    base = VALID[(name, fragment)]
    answered = 0
    for path in [p for p in _paths(base) if p]:
        for value in BOUNDARIES:
            inst = copy.deepcopy(base)
            parent = inst
            for p in path[:-1]:
                parent = parent[p]
            parent[path[-1]] = value
            quick, reference = _verdicts(name, fragment, inst)
            if quick is not None:
                answered += 1
                assert quick == reference, (path, value)
    assert answered > 100
