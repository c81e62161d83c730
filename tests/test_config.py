"""config.load_config: defaults, every section read, what the schema cannot
say, thresholds parsed into Measures."""

import pytest

from conftest import EXAMPLE, write
from rag_corpus_check.config.load import LIMIT_NAMES, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.metrics.measures import Measure

MINIMAL = "version: 1\ncorpus: c.jsonl\ngold: g.yaml\nk: 5\n"


def _load(tmp_path, text):
    write(tmp_path / "cfg.yml", text)
    problems = P.Problems()
    cfg, real = load_config(str(tmp_path), str(tmp_path / "cfg.yml"), problems)
    return cfg, problems


def test_defaults(tmp_path):
    cfg, problems = _load(tmp_path, MINIMAL)
    assert not problems.items
    assert (cfg.k, cfg.min_grade, cfg.max_grade, cfg.gain, cfg.short_list) == (5, 1, 2, "linear", "pad")
    assert cfg.ranker.name == "bm25" and cfg.bm25.depth == 100 and cfg.bm25.statuses == ("active",)
    assert cfg.thresholds == () and cfg.rule_change_reason is None
    assert [str(m) for m in cfg.measures()] == ["P@5", "R@5", "nDCG@5", "Judged@5"]


def test_every_section_is_read(tmp_path):
    cfg, problems = _load(tmp_path, MINIMAL + (
        "run: r.jsonl\nrelevance: {min_grade: 2, max_grade: 3}\nmetrics: {gain: exponential, short_list: actual}\n"
        "formats: {gold: json, run: trec}\nvalidation: {inactive_labels: error}\nreport: {worst: 7}\n"
        "limits: {max_records: 10, max_query_tokens: 5}\nthresholds: {R@10: 0.5, nDCG@5: {min: 0.6, max_drop: 0.1}}\n"))
    assert not problems.items, [p.message for p in problems.items]
    assert (cfg.min_grade, cfg.max_grade, cfg.gain, cfg.short_list) == (2, 3, "exponential", "actual")
    assert (cfg.gold_format, cfg.run_format, cfg.inactive_labels, cfg.worst) == ("json", "trec", "error", 7)
    assert cfg.limit("max_records") == 10 and cfg.limit("max_query_tokens") == 5
    assert {(str(t.measure), t.min, t.max_drop) for t in cfg.thresholds} == {("R@10", 0.5, None),
                                                                            ("nDCG@5", 0.6, 0.1)}
    assert Measure("R", 10) in cfg.measures()  # a threshold at another k is computed too


@pytest.mark.parametrize("extra, message", [
    ("relevance: {min_grade: 3}\n", "relevance.min_grade (3) is above relevance.max_grade (2)"),
    ("retriever: {type: command}\n", "`retriever.type: command` needs `retriever.command"),
    ("retriever: {command: [x]}\n", None),  # type defaults to command when a command is given
    ("retriever: {type: bm25, command: [x]}\n", "`retriever.command` is set but `retriever.type` is bm25"),
    ("retriever: {depth: 3}\n", "retriever.depth (3) is below k (5)"),
    ("thresholds: {MAP@5: 0.1}\n", "threshold `MAP@5`: unknown measure"),
])
def test_what_the_schema_cannot_say(tmp_path, extra, message):
    cfg, problems = _load(tmp_path, MINIMAL + extra)
    if message is None:
        assert cfg is not None and not problems.items
    else:
        assert cfg is None and message in problems.items[0].message, [p.message for p in problems.items]
        assert problems.items[0].line == 5  # the line of the setting


def test_depth_below_k_is_fine_with_a_committed_run(tmp_path):
    """The retriever's depth is not used when a run is committed (k: 1000 on a TREC run exited 2)."""
    cfg, problems = _load(tmp_path, MINIMAL.replace("k: 5", "k: 1000") + "run: r.trec\n")
    assert cfg is not None and not problems.items


def test_every_limit_has_a_schema_maximum(tmp_path):
    import json

    schema = json.loads((EXAMPLE.parents[1] / "schemas" / "config.schema.json").read_text())
    props = schema["properties"]["limits"]["properties"]
    assert set(props) == set(LIMIT_NAMES) and all("maximum" in props[n] for n in LIMIT_NAMES)
    cfg, problems = _load(tmp_path, MINIMAL + "limits: {max_vocabulary: 1000000000000}\n")
    assert cfg is None and problems.items[0].kind == "schema"


def test_a_config_is_a_value_the_base_rules_do_not_change(tmp_path):
    # enforce and same_conventions return new configs; neither config as loaded changes.
    import dataclasses

    from rag_corpus_check.gate.rules import Layout, decide, enforce, same_conventions

    base, _ = _load(tmp_path, MINIMAL + "metrics: {gain: exponential}\nthresholds: {nDCG@5: 0.5}\n"
                    "validation: {missing_queries: error}\nlimits: {max_records: 10}\n"
                    "retriever: {type: command, command: [x], timeout: 30}\n")
    head, _ = _load(tmp_path, MINIMAL + "thresholds: {nDCG@5: 0.7, R@5: 0.2}\nlimits: {max_records: 50}\n"
                    "retriever: {type: command, command: [x], timeout: 90}\n")
    loaded = (dataclasses.replace(base), dataclasses.replace(head))
    with pytest.raises(dataclasses.FrozenInstanceError):
        head.k = 3
    layout = Layout(".", "cfg.yml", "c.jsonl", "g.yaml", None)
    rules = decide(base, head, (layout, layout), "cfg.yml", ".")
    assert "`retriever.timeout` raised: 30 → 90 s (not applied without a new `rule_change_reason`: the base's " \
           "timeout holds)" in rules.changes
    enforced = enforce(rules, base, head)
    assert (enforced.gain, enforced.missing_queries, enforced.limit("max_records"), enforced.command_timeout) == (
        "exponential", "error", 10, 30.0)
    assert {(str(t.measure), t.min) for t in enforced.thresholds} == {("nDCG@5", 0.7), ("R@5", 0.2)}
    assert enforced.raw == head.raw  # the file as written: results.json's `config`
    measured_alike = same_conventions(enforced, base)
    assert measured_alike.gain == "exponential" and measured_alike is not base
    assert (base, head) == loaded


@pytest.mark.parametrize("text, line, message", [
    # Was "(top level): fails schema rule `None`" (twice) at line 1.
    ("version: 1\ncorpus: c.jsonl\ngold: g.yaml\nk: 5\ndataset: {format: beir, path: x}\n", 5,
     "(top level): `dataset:` names its own files, so `corpus:` and `gold:` cannot be set beside it; "
     "remove `corpus:` and `gold:`, or remove `dataset:`"),
    # Was "(top level): fails schema rule `anyOf`".
    ("version: 1\nk: 5\n", 1, "(top level): needs either `corpus:` and `gold:`, or `dataset:`"),
])
def test_schema_errors_say_what_to_write(tmp_path, text, line, message):
    cfg, problems = _load(tmp_path, text)
    assert cfg is None and [(p.line, p.message) for p in problems.items] == [(line, message)]
    assert all("schema rule" not in p.message for p in problems.items)
