"""check.run_check stage by stage, in-process on the bundled example:
what each stage decides, and that a stage that cannot go on stops the check
before anything is measured."""

import dataclasses
import shutil

import pytest

from conftest import EXAMPLE
from rag_corpus_check.commands.check import run_check
from rag_corpus_check.core import problems as P
from rag_corpus_check.gate import budget
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.pipeline.stages import Options, configure, gate, in_shard, measure


@pytest.fixture
def kb(tmp_path):
    repo = tmp_path / "kb"
    shutil.copytree(EXAMPLE, repo)
    return repo


def _run(kb, options=None, context=None, config=".rag-corpus-check.yml"):
    return run_check(str(kb), str(kb / config), context or Context(), options or Options())


def test_the_stages_in_order_on_the_example(kb):
    out = _run(kb)
    assert out.verdict == "pass" and out.stage is None
    assert list(out.inputs) == [".rag-corpus-check.yml", "gold.yaml", "corpus.jsonl"]  # reading order
    assert out.retrieval is not None and out.retrieval.info["type"] == "bm25"
    assert out.rules is not None and out.rules.source == "head-no-base"
    assert [str(t.measure) for t in out.thresholds] == ["P@5", "R@5", "nDCG@5", "Judged@5"]


def test_gate_returns_what_it_found_and_sets_nothing(kb):
    out = _run(kb)
    assert out.config is not None
    problems = P.Problems()
    again = gate(out.config, out.measured, problems, budget.Ledger(out.resampling.allowed))  # read, not written
    assert again == out.gated and again is not out.gated and out.thresholds is out.gated.thresholds
    assert out.intervals and out.debt is not None and out.slices is not None and not problems.items
    assert isinstance(again.thresholds, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        again.thresholds = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        out.thresholds = ()  # type: ignore[misc]  # a view of the gate's value


@pytest.mark.parametrize("field", ["measured", "gated", "rules", "base", "config", "decision"])
def test_the_outcome_is_one_frozen_value(kb, field):
    out = _run(kb)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(out, field, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.measured.evaluation = None  # type: ignore[misc]


def test_a_stage_returns_its_value_and_the_problems_it_was_given(kb):
    """measure() on a tree returns what it found; problems go to the
    collector it is passed, nothing else is written."""
    begun = configure(str(kb), str(kb / ".rag-corpus-check.yml"), P.Problems(), Context(), Options())
    assert begun.config is not None and list(begun.digests) == [".rag-corpus-check.yml"]
    problems = P.Problems()
    measured = measure(str(kb), begun.config, problems, Options(), Context())
    assert measured.evaluation is not None and measured.run is not None and not problems.has_errors()
    assert list(measured.digests) == ["gold.yaml", "corpus.jsonl"] and measured.retrieval is not None
    assert measured.evaluation.means == _run(kb).evaluation.means


def test_a_committed_run_is_scored_as_committed(kb):
    out = _run(kb, config="committed-run.rag-corpus-check.yml")
    assert out.retrieval is None and out.run is not None and out.run.file == "run.jsonl"
    assert list(out.inputs) == ["committed-run.rag-corpus-check.yml", "gold.yaml", "run.jsonl", "corpus.jsonl"]


def test_use_retriever_ignores_a_committed_run(kb):
    out = _run(kb, Options(use_retriever=True), config="committed-run.rag-corpus-check.yml")
    assert out.retrieval is not None and out.run.file == "(built-in BM25)"


def test_a_refused_event_stops_before_the_config(kb):
    out = _run(kb, context=Context(event_name="issue_comment"))
    assert out.verdict == "invalid" and out.config is None and out.inputs == {}


def test_a_checkout_git_cannot_read_stops_before_the_config(kb):
    out = _run(kb, context=Context(git_error="git cannot read the repository at `x`: broken"))
    assert out.verdict == "invalid" and out.config is None
    assert out.problems.items[0].kind == "git"


def test_an_input_error_stops_before_evaluation(kb):
    (kb / "gold.yaml").write_text("queries: 7\n")
    out = _run(kb)
    assert out.verdict == "invalid" and out.evaluation is None and out.thresholds == ()
    assert out.corpus is not None  # read, but not measured


def test_the_caller_caps_the_retriever_timeout(kb):
    cfg_text = (kb / ".rag-corpus-check.yml").read_text().replace("  type: bm25", "  type: command\n  timeout: 900\n"
                                                                  "  command: [x]")
    (kb / ".rag-corpus-check.yml").write_text(cfg_text)
    out = _run(kb, Options(retriever_timeout=60))
    assert "--allow-retriever-command" in out.problems.items[0].message  # and it is not run unasked
    out = _run(kb, Options(retriever_timeout=60, allow_command=True))
    assert out.retrieval is not None and out.retrieval.info["timeout"] == 60  # the caller's ceiling holds
    assert out.config is not None and out.config.command_timeout == 900  # the config stays as committed


def test_the_callers_options_leave_the_config_as_committed(kb):
    out = _run(kb, Options(use_retriever=True, shard=(1, 2)), config="committed-run.rag-corpus-check.yml")
    assert out.shard == (1, 2) and out.config is not None and out.config.run is None  # `retrieve` ranks itself
    assert not hasattr(out.config, "shard")
    read = _run(kb, Options(), config="committed-run.rag-corpus-check.yml").config
    assert read is not None and read.run is not None  # a new value for `retrieve`; the file's config keeps `run:`


def test_a_shard_holds_its_questions_only(kb):
    out = _run(kb, Options(shard=(1, 2)), config="committed-run.rag-corpus-check.yml")
    assert out.verdict == "partial"
    assert all(in_shard(q.query_id, (1, 2)) for q in out.evaluation.queries)
    assert all(in_shard(q, (1, 2)) for q in out.run.queries)


def test_the_base_and_the_head_are_measured_by_the_same_function(tmp_path, monkeypatch):
    """One measure() for both trees: the head's with the check's problems,
    the base's (exported from git) with its own; each returns its value."""
    import rag_corpus_check.base.head_vs_base as hvb
    from rag_corpus_check.pipeline.context import local_context
    from support.repos import commit, init

    repo = init(tmp_path / "repo", EXAMPLE)
    base = commit(repo, "base")
    calls = []
    real = hvb.measure

    def spy(root, cfg, problems, options, context, *args, **kwargs):
        measured = real(root, cfg, problems, options, context, *args, **kwargs)
        calls.append((root, problems, measured))
        return measured

    monkeypatch.setattr(hvb, "measure", spy)
    out = _run(repo, Options(base=base), local_context(str(repo)))
    assert out.verdict == "pass" and out.base is not None and out.base.comparison is not None
    (head_root, head_problems, head), (base_root, base_problems, measured_base) = calls
    assert head_root == str(repo) and base_root != head_root and head_problems is out.problems
    assert base_problems is not out.problems and not base_problems.items
    assert head is out.measured and measured_base.evaluation is not None
    assert measured_base.evaluation.means == head.evaluation.means  # the same tree, measured alike
