"""gate.apply_thresholds and outcome.decide: every way a verdict and an exit
code come about, in the one place they are decided."""

import dataclasses

import pytest

from rag_corpus_check.config.load import Threshold
from rag_corpus_check.core import problems as P
from rag_corpus_check.gate.rules import BASE, Rules, with_loosened
from rag_corpus_check.gate.thresholds import TOLERANCE, apply_thresholds
from rag_corpus_check.metrics.evaluate import Evaluation
from rag_corpus_check.metrics.measures import Measure
from rag_corpus_check.pipeline.outcome import (
    BaseResult,
    Gated,
    Measured,
    Outcome,
    Verdict,
    decide,
    verdict_of,
)

N5 = Measure("nDCG", 5)


def violated_rules() -> Rules:
    change = "threshold `nDCG@5` lowered: 0.7 → 0.1"
    return Rules(BASE, (change,), (change,))


def test_a_mean_within_the_tolerance_is_equal_to_the_limit():
    (r,) = apply_thresholds([Threshold(N5, 0.7)], {N5: 0.7 - TOLERANCE / 2})
    assert r.passed
    (r,) = apply_thresholds([Threshold(N5, 0.7)], {N5: 0.7 - 2 * TOLERANCE})
    assert not r.passed


def test_nothing_measured_never_passes():
    (r,) = apply_thresholds([Threshold(N5, 0.0)], {N5: None})
    assert r.passed is False and "nothing to measure" in r.note


def test_max_drop_without_a_base_says_it_was_not_checked():
    (r,) = apply_thresholds([Threshold(N5, 0.5, 0.01)], {N5: 0.9})
    assert r.passed and r.note == "max_drop not checked: no base was compared"
    (r,) = apply_thresholds([Threshold(N5, 0.5, 0.01)], {N5: 0.9}, {N5: "dropped 0.0200 vs base"})
    assert not r.passed and r.note == "dropped 0.0200 vs base"


def _outcome(passed: bool | None, *, errors=False, advisory=False, rules=None) -> Outcome:
    problems = P.Problems()
    if errors:
        problems.add(P.SCHEMA, "x")
    if passed is None:
        return Outcome(problems, advisory=advisory, rules=rules)
    gated = Gated(tuple(apply_thresholds([Threshold(N5, 0.4 if passed else 0.6)], {N5: 0.5})))
    return Outcome(problems, advisory=advisory, rules=rules, measured=Measured(evaluation=Evaluation([], {N5: 0.5}, 1)),
                   gated=gated)


@pytest.mark.parametrize("case, verdict, code, status", [
    (dict(passed=True), "pass", 0, 0),
    (dict(passed=False), "fail", 1, 1),
    (dict(passed=False, advisory=True), "fail", 1, 0),  # the verdict stays; the job passes
    (dict(passed=True, errors=True), "invalid", 2, 2),  # never a verdict on invalid input
    (dict(passed=None), "invalid", 2, 2),  # nothing measured
    (dict(passed=True, advisory=True, errors=True), "invalid", 2, 2),  # advisory hides no input error
    (dict(passed=True, rules=violated_rules()), "fail", 1, 1),  # a PR loosened the rules
])
def test_decide(case, verdict, code, status):
    out = decide(_outcome(**case))
    assert (out.verdict, out.exit_code, out.exit_status) == (verdict, code, status)


def test_the_verdict_is_a_value_decided_once():
    out = _outcome(False, advisory=True)
    verdict = verdict_of(out)
    assert verdict == Verdict("fail", 1, 0) and out.verdict == "invalid"  # not decided yet
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.verdict = "pass"  # type: ignore[misc]
    decided = decide(out)  # a new value: the outcome decided stays as it was
    assert decided.decision == verdict and decided.exit_status == 0 and out.verdict == "invalid"


def test_a_later_loosening_makes_new_rules():
    rules = Rules(BASE)
    later = with_loosened(rules, "the evaluation level changed")
    assert later.violated and later.changes == later.loosened == ("the evaluation level changed",)
    assert rules == Rules(BASE) and not rules.violated  # the rules decided stay as they were
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.why = "x"  # type: ignore[misc]


def test_a_base_result_grows_by_new_values():
    base = BaseResult("main")
    noted = base.noted("nothing was compared")
    assert noted.notes == ("nothing was compared",) and base.notes == () and noted.rev == "main"
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.sha = "x"  # type: ignore[misc]


@pytest.mark.parametrize("passed", [True, False])
def test_a_shard_is_measured_not_gated(passed):
    out = decide(_outcome(passed), shard=True)
    assert (out.verdict, out.exit_code) == ("partial", 0)
