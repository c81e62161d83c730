"""The gate on the paired test (`significance.alpha`, gate/significance.py):
Holm's correction, what the sign-flip test cannot see, the gate failing
and passing through the CLI, and the rule locked to the base."""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLE, write
from rag_corpus_check.commands.cli import main
from rag_corpus_check.config.load import Threshold
from rag_corpus_check.gate.compare import Comparison, Delta, View, paired_randomization
from rag_corpus_check.gate.significance import (
    alpha_changes,
    holm,
    significance_gate,
    stricter_alpha,
)
from rag_corpus_check.metrics.measures import Measure
from rag_corpus_check.report.comment import RunInfo, load_results, render
from support.repos import commit, init

RUN_CONFIG = "committed-run.rag-corpus-check.yml"
REGRESSED = EXAMPLE.parent / "kb-regressed" / "run.jsonl"
ND, P5, R5 = Measure("nDCG", 5), Measure("P", 5), Measure("R", 5)


def test_holm_by_hand():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> kept monotone: 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0] and holm([]) == []


def _comparison(*deltas: Delta) -> Comparison:
    out = Comparison("base", "0" * 40)
    out.head_gold = View("head", list(deltas), paired=deltas[0].paired_questions if deltas else 0)
    return out


def _thresholds(*measures: Measure) -> list[Threshold]:
    return [Threshold(m, 0.1) for m in measures]


def test_a_drop_fails_only_when_significant_after_the_correction():
    deltas = (Delta(ND, 0.8, 0.7, 0.02, 50, 10_000), Delta(P5, 0.5, 0.45, 0.03, 50, 10_000),
              Delta(R5, 0.6, 0.7, 0.001, 50, 10_000))
    got = significance_gate(0.05, _thresholds(ND, P5, R5), _comparison(*deltas))
    by = {t.measure: t for t in got.tested}
    assert by[R5].adjusted == pytest.approx(0.003) and not by[R5].failed  # significant, but a rise
    assert by[ND].adjusted == pytest.approx(0.04) and by[ND].failed
    assert by[P5].adjusted == pytest.approx(0.04) and by[P5].failed
    assert not got.passed and len(got.reasons()) == 2
    alone = significance_gate(0.05, _thresholds(ND, P5, R5, Measure("P", 1), Measure("R", 1)),
                              _comparison(*deltas, Delta(Measure("P", 1), .5, .5, 1.0, 50, 10_000),
                                          Delta(Measure("R", 1), .5, .5, 1.0, 50, 10_000)))
    assert alone.passed  # five measures: 0.02 x 4 = 0.08 > 0.05 — the correction at work


def test_a_measure_without_a_threshold_or_with_too_few_questions_is_not_tested():
    deltas = (Delta(ND, 0.8, 0.1, 0.001, 9, 10_000), Delta(P5, 0.5, 0.1, 0.001, 50, 10_000))
    got = significance_gate(0.05, _thresholds(ND), _comparison(*deltas))
    assert got.tested == [] and got.passed
    assert got.notes() == ["`nDCG@5` judged by the head's gold set was not tested: 9 paired questions (at least 10 "
                           "are needed)"]


def test_an_alpha_the_permutations_cannot_reach_is_said():
    got = significance_gate(0.0001, _thresholds(ND, P5, R5), _comparison(
        Delta(ND, .8, .1, 1 / 10_001, 50, 10_000), Delta(P5, .5, .5, 1.0, 50, 10_000),
        Delta(R5, .5, .5, 1.0, 50, 10_000)))
    assert got.passed and not got.reachable
    assert "this gate cannot fail" in got.notes()[-1]


def test_questions_that_did_not_change_do_not_move_the_p_value():
    """What the gate cannot see: three questions that each lost 0.9 are
    never significant, alone or among 500 questions that did not change
    (3 sign flips: 2 of 8 patterns are as extreme, p ≈ 0.25)."""
    base, head = [1.0, 1.0, 1.0], [0.1, 0.1, 0.1]
    alone = paired_randomization(base, head)
    among = paired_randomization(base + [0.5] * 500, head + [0.5] * 500)
    assert alone == pytest.approx(0.25, abs=0.02) and among == pytest.approx(0.25, abs=0.02)
    # ...while a drop of 0.02 shared by 40 questions is (p ≈ 1/10,001).
    assert paired_randomization([0.5] * 40, [0.48] * 40) < 0.001


def test_alpha_changes_are_locked_to_the_base():
    assert alpha_changes(0.05, 0.05) == ([], [])
    assert alpha_changes(None, 0.05) == (["the significance gate added (`significance.alpha` 0.05)"], [])
    assert alpha_changes(0.05, 0.1) == (["`significance.alpha` raised: 0.05 → 0.1"], [])
    changes, loosened = alpha_changes(0.05, None)
    assert loosened == changes == ["the significance gate removed (was `significance.alpha` 0.05)"]
    assert alpha_changes(0.05, 0.01)[1] == ["`significance.alpha` lowered: 0.05 → 0.01"]
    assert stricter_alpha(0.05, None) == 0.05 and stricter_alpha(None, 0.01) == 0.01
    assert stricter_alpha(0.05, 0.1) == 0.1 and stricter_alpha(None, None) is None


# ------------------------------------------------------------ through the CLI

def _config(kb, significance: str | None) -> None:
    text = (kb / RUN_CONFIG).read_text()
    for old, new in (("P@5: 0.30", "P@5: 0.1"), ("R@5: 0.80", "R@5: 0.1"), ("nDCG@5: 0.75", "nDCG@5: 0.1")):
        text = text.replace(old, new)
    text += "per_question: {max_questions: 100}\n"  # so that only the paired test can fail the gate
    write(kb / RUN_CONFIG, text + (f"significance: {{alpha: {significance}}}\n" if significance else ""))


def _check(tmp_path, capsys, *argv):
    out = tmp_path / "out"
    code = main(["--config", RUN_CONFIG, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), *argv])
    return code, capsys.readouterr().out, json.loads((out / "r.json").read_text()), (out / "s.md").read_text()


def _regress(kb) -> None:
    (kb / "run.jsonl").write_bytes(REGRESSED.read_bytes())


def test_a_significant_drop_fails_the_gate_and_says_why(kb, tmp_path, capsys):
    _config(kb, "0.05")
    init(kb)
    base = commit(kb, "base")
    _regress(kb)
    commit(kb, "regressed run")
    code, console, res, summary = _check(tmp_path, capsys, "--base", base)
    assert code == 1 and res["verdict"] == "fail"
    assert all(t["passed"] for t in res["thresholds"]) and res["per_question"]["passed"]  # only the paired test fails
    sig = res["significance"]
    assert sig["alpha"] == 0.05 and not sig["passed"] and sig["correction"] == "holm"
    failed = {(t["gold"], t["measure"]) for t in sig["tested"] if t["failed"]}
    assert ("head", "nDCG@5") in failed and ("base", "nDCG@5") in failed
    assert "dropped -0.4442 vs base judged by the head's gold set, and the drop is significant" in console
    assert "Paired test gate (`significance.alpha` 0.05" in summary and "❌ significant drop" in summary
    # the PR comment, rebuilt from the results file, puts the failed tests first, the passed thresholds above
    body = render(load_results(json.dumps(res).encode()), RunInfo(1, "https://github.com/o/r/actions/runs/1",
                                                                     "0" * 40, "failure"))
    rows = body.split("#### Other rules of the gate\n\n", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    failed_rows = [r for r in rows if "| ❌ (p " in r]
    assert len(failed_rows) == len(failed) and all(r.startswith("| significance, ") for r in failed_rows), rows
    assert rows[:len(failed)] == failed_rows, rows
    assert "| significance, head gold | `nDCG@5` | Δ -0.4442 | adjusted p > 0.050 | ❌ (p " in body, rows


def test_without_the_key_the_same_drop_passes(kb, tmp_path, capsys):
    """The gate is off by default: the failure above is the key's doing."""
    _config(kb, None)
    init(kb)
    base = commit(kb, "base")
    _regress(kb)
    commit(kb, "regressed run")
    code, console, res, summary = _check(tmp_path, capsys, "--base", base)
    assert code == 0 and res["significance"] is None and "Paired test gate" not in summary


def test_removing_the_gate_in_the_pr_loosens_the_rules_and_it_still_holds(kb, tmp_path, capsys):
    _config(kb, "0.05")
    init(kb)
    base = commit(kb, "base")
    text = (kb / RUN_CONFIG).read_text().replace("significance: {alpha: 0.05}\n", "")
    write(kb / RUN_CONFIG, text)  # the PR takes the gate out and regresses
    _regress(kb)
    commit(kb, "regressed, gate removed")
    code, console, res, summary = _check(tmp_path, capsys, "--base", base)
    assert code == 1
    assert "the significance gate removed (was `significance.alpha` 0.05)" in res["comparison"]["rules"]["loosened"]
    assert res["significance"]["alpha"] == 0.05 and not res["significance"]["passed"]  # the base's gate held


@pytest.mark.parametrize("value", ["0", "0.7", "yes"])
def test_an_invalid_alpha_is_a_config_error(kb, tmp_path, capsys, value):
    write(kb / RUN_CONFIG, (kb / RUN_CONFIG).read_text() + f"significance: {{alpha: {value}}}\n")
    code, console, res, summary = _check(tmp_path, capsys)
    assert code == 2 and any(p["file"] == RUN_CONFIG and "alpha" in p["message"] for p in res["problems"])
