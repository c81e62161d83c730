"""The caps on thresholds and `measures:` (the config schema) and the one
budget over the resampling work (gate/budget.py): the bootstrap
intervals, the label-debt bounds and the paired tests of every measure,
gold set and slice. Work is counted, never timed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import write
from rag_corpus_check.commands.check import run_check
from rag_corpus_check.commands.cli import main
from rag_corpus_check.gate import bootstrap, budget, compare, label_debt
from rag_corpus_check.pipeline.context import local_context
from rag_corpus_check.pipeline.stages import Options
from support.repos import commit, init

TAGS = [f"t{i}" for i in range(20)]


def _tree(root: Path, config: str, questions: int = 60, seed: int = 1, tags: int = 3) -> None:
    """A corpus of 30 documents, ``questions`` tagged questions and a run
    (``seed`` shuffles the run: two seeds, two systems)."""
    rnd = random.Random(seed)
    write(root / "corpus.jsonl", "".join(json.dumps({"id": f"d{i}", "text": f"document {i}"}) + "\n" for i in range(30)))
    write(root / "gold.jsonl", "".join(json.dumps({"query_id": f"q{i}", "relevant": {f"d{i % 30}": 2, f"d{(i + 7) % 30}": 1},
                                                   "tags": TAGS[i % 5:i % 5 + tags]}) + "\n" for i in range(questions)))
    write(root / "run.jsonl", "".join(json.dumps({"query_id": f"q{i}", "ranking": rnd.sample([f"d{j}" for j in range(30)], 12)})
                                      + "\n" for i in range(questions)))
    write(root / ".rag-corpus-check.yml", "version: 1\nk: 5\ncorpus: corpus.jsonl\ngold: gold.jsonl\nrun: run.jsonl\n"
          + config)


def _check(root: Path, *argv: str) -> tuple[int, dict]:
    out = root.parent / "out"
    code = main(["--root", str(root), "--config", str(root / ".rag-corpus-check.yml"), "--no-github", "--quiet",
                 "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), *argv])
    return code, json.loads((out / "r.json").read_text())


def _thresholds(n: int) -> str:
    return "thresholds:\n" + "".join(f"  P@{j}: 0\n" for j in range(1, n + 1))


# ------------------------------------------------------------ the caps in the schema

def test_a_config_with_1000_thresholds_is_refused_naming_the_cap(tmp_path):
    _tree(tmp_path / "t", _thresholds(1000))
    code, results = _check(tmp_path / "t")
    assert code == 2
    [problem] = results["problems"]
    assert (problem["kind"], problem["file"], problem["line"]) == ("schema", ".rag-corpus-check.yml", 6)
    assert problem["message"] == "thresholds: 1000 entries, more than the 50 allowed"


@pytest.mark.parametrize("config, message", [
    ("measures: [" + ", ".join(f"R@{j}" for j in range(1, 52)) + "]\n", "measures: more than 50 items"),
    ("slices:\n  t1:\n    thresholds: {" + ", ".join(f"P@{j}: 0" for j in range(1, 52)) + "}\n",
     "slices.t1.thresholds: 51 entries, more than the 50 allowed"),
])
def test_measures_and_slice_thresholds_are_capped_too(tmp_path, config, message):
    _tree(tmp_path / "t", config)
    code, results = _check(tmp_path / "t")
    assert code == 2 and [p["message"] for p in results["problems"]] == [message]


def test_a_config_at_the_caps_is_measured(tmp_path):
    _tree(tmp_path / "t", _thresholds(50) + "measures: [" + ", ".join(f"R@{j}" for j in range(1, 51)) + "]\n")
    code, results = _check(tmp_path / "t")
    assert code == 0, results["problems"]


# ------------------------------------------------------------ the budget

def _with_base(root: Path, base: str):
    return run_check(str(root), str(root / ".rag-corpus-check.yml"), local_context(str(root), {}), Options(base=base))


def _repo(tmp_path: Path, config: str) -> tuple[Path, str]:
    """A repository whose base and head differ in their run (two systems)."""
    root = init(tmp_path / "repo")
    _tree(root, config, seed=1)
    base = commit(root, "base")
    _tree(root, config, seed=2)
    commit(root, "head")
    return root, base


def test_over_the_budget_is_a_limit_problem_naming_it(tmp_path, monkeypatch):
    """Within the caps, but over the budget (lowered here so that the
    test does little work): exit 2, a limit problem that names the budget,
    the work and what to do — and none of the work is done."""
    _tree(tmp_path / "t", _thresholds(50) + "limits: {max_resampling_work_per_byte: 1}\n")
    monkeypatch.setattr(budget, "FLOOR", 1000)
    monkeypatch.setattr(bootstrap, "resampled_means", _refused)
    code, results = _check(tmp_path / "t")
    assert code == 2
    [problem] = results["problems"]
    assert problem["kind"] == "limit" and problem["file"] == ".rag-corpus-check.yml"
    assert "limits.max_resampling_work_per_byte" in problem["message"]
    assert "more than the budget of " in problem["message"] and "the means: " in problem["message"]
    assert "name fewer measures" in problem["message"]


def _refused(*args, **kwargs):
    raise AssertionError("resampled over the budget")


def test_the_comparison_is_charged_before_it_is_run(tmp_path, monkeypatch):
    """With a base the whole comparison (every gold set, every slice) is
    planned before any test runs: over the budget, no test runs."""
    root, base = _repo(tmp_path, _thresholds(20))
    monkeypatch.setattr(budget, "allowed", lambda cfg, stored: 10_000_000)  # the means fit; the comparison does not
    monkeypatch.setattr(compare, "paired_randomization", _refused)
    out = _with_base(root, base)
    assert out.exit_code == 2
    [problem] = [p for p in out.problems.errors]
    assert problem.kind == "limit" and "the comparison with the base: " in problem.message
    assert out.resampling is not None and list(out.resampling.spent) == ["the means"]
    assert out.intervals == {}  # charged, but nothing is taken after a stage over the budget


def test_a_lower_budget_may_be_set_a_higher_one_needs_a_reason(tmp_path):
    from rag_corpus_check.config.load import LIMIT_NAMES

    assert budget.LIMIT in LIMIT_NAMES  # locked to the base like every limit (gate/rules.py)
    root = init(tmp_path / "repo")
    _tree(root, "limits: {max_resampling_work_per_byte: 10}\n")
    base = commit(root, "base")
    _tree(root, "limits: {max_resampling_work_per_byte: 100000}\n")
    commit(root, "head")
    out = _with_base(root, base)
    assert out.config is not None and out.config.limit(budget.LIMIT) == 10
    assert out.rules is not None and any("`limits.max_resampling_work_per_byte` raised" in c for c in out.rules.changes)


# ------------------------------------------------------------ the plan is the work

class Counter:
    """The units of work the resampling functions are asked for."""

    def __init__(self, monkeypatch):
        self.units = {"bootstrap": 0, "sign flips": 0, "bounds": 0}
        means, flips, bounds = bootstrap.resampled_means, compare.paired_randomization, label_debt.bound_values

        def counted_means(columns, resamples, seed=bootstrap.SEED):
            self.units["bootstrap"] += budget.units(resamples, len(columns[0]), len(columns))
            return means(columns, resamples, seed)

        def counted_flips(base, head, seed=compare.SEED, permutations=compare.PERMUTATIONS):
            self.units["sign flips"] += budget.units(permutations, len(base))
            return flips(base, head, seed, permutations)

        def counted_bounds(gold, rankings, measures, scale, other=None):
            self.units["bounds"] += len(gold) * budget.BOUND * budget.bounded(measures)
            return bounds(gold, rankings, measures, scale, other)

        monkeypatch.setattr(bootstrap, "resampled_means", counted_means)
        monkeypatch.setattr(compare, "paired_randomization", counted_flips)
        monkeypatch.setattr(label_debt, "bound_values", counted_bounds)

    @property
    def total(self) -> int:
        return sum(self.units.values())


def test_the_planned_work_is_the_work_done_without_a_base(tmp_path, monkeypatch):
    _tree(tmp_path / "t", _thresholds(12))
    counter = Counter(monkeypatch)
    out = run_check(str(tmp_path / "t"), str(tmp_path / "t" / ".rag-corpus-check.yml"))
    assert out.exit_code == 0 and out.resampling is not None
    assert counter.units["bootstrap"] > 0 and counter.units["bounds"] > 0
    assert out.resampling.total == counter.total


def test_the_planned_work_is_the_work_done_with_a_base_and_slices(tmp_path, monkeypatch):
    root, base = _repo(tmp_path, _thresholds(12) + "slices:\n  t2:\n    thresholds: {R@9: 0}\n")
    counter = Counter(monkeypatch)
    out = _with_base(root, base)
    assert out.exit_code in (0, 1) and out.resampling is not None, out.problems.items
    assert out.base is not None and out.base.slice_views and out.base.comparison is not None
    assert len(out.base.comparison.views) == 2
    assert min(counter.units.values()) > 0
    assert out.resampling.total == counter.total
    assert set(out.resampling.spent) == {"the means", "the comparison with the base", "the slices' paired tests"}


def test_more_distinct_measures_than_the_cap_is_a_limit_problem(tmp_path):
    """Each slice may name 50 thresholds: the distinct measures of all of
    them together are capped too."""
    from rag_corpus_check.config.load import MAX_MEASURES

    slices = "".join(f"  t{s}:\n    thresholds: {{" + ", ".join(f"P@{100 + 50 * s + j}: 0" for j in range(50)) + "}\n"
                     for s in range(3))
    _tree(tmp_path / "t", _thresholds(20) + "slices:\n" + slices)
    code, results = _check(tmp_path / "t")
    assert code == 2
    [problem] = results["problems"]
    assert (problem["kind"], problem["line"]) == ("limit", 27)
    assert problem["message"].startswith(f"the config names 173 distinct measures (the headline ones, `thresholds:`, "
                                         f"`measures:`, slice thresholds and `per_question` together), more than the "
                                         f"{MAX_MEASURES} the check computes")


def test_the_bundled_example_is_well_within_the_budget(repo):
    """The example's check plans a small part of its budget, also with
    a base (its comparison planned as if compared with itself)."""
    from rag_corpus_check.gate.slices import slice_names, slices_work

    out = run_check(str(repo), str(repo / ".rag-corpus-check.yml"))
    assert out.exit_code == 0 and out.resampling is not None and out.evaluation is not None and out.gold is not None
    ev, tags = out.evaluation, out.gold.tags()
    names, _ = slice_names(out.config, tags)
    compared = budget.comparison_work(ev, ev, ev) + slices_work(ev, ev, ev, (tags, tags), names)
    assert out.resampling.total + compared < out.resampling.allowed / 10


def test_with_a_base_the_means_are_charged_before_the_base_is_measured(tmp_path, monkeypatch):
    root, base = _repo(tmp_path, _thresholds(20))
    monkeypatch.setattr(budget, "allowed", lambda cfg, stored: 1000)
    measured = []
    import rag_corpus_check.base.head_vs_base as hvb

    monkeypatch.setattr(hvb, "_compare", lambda *args: measured.append(args))
    out = _with_base(root, base)
    assert out.exit_code == 2 and measured == []
    assert [p.kind for p in out.problems.errors] == ["limit"] and "the means: " in out.problems.errors[0].message
