"""The gate on the paired test (``significance.alpha``, off by default).

With a base, every delta carries the p-value of a two-sided paired
randomization (sign-flip) test over the questions in both revisions
(:func:`compare.paired_randomization`). This gate fails when a measure with
a threshold dropped and its p-value, Holm-corrected across the measures
with a threshold (of one gold set), is at most ``alpha``. Each gold set
compared (the head's, the base's) is a family of its own, as ``max_drop``
checks each.

What it can and cannot see:

* Questions whose value did not change add 0 to every sign-flipped sum, so
  they do not move the p-value: a drop on 3 questions among 500 has the
  p-value it has on those 3 alone, and 3 changed questions can never be
  significant (the 8 sign patterns give p ≥ 0.25). A large drop of a few
  questions is ``per_question``'s and ``max_drop``'s to catch.
* A small drop that many questions share can be significant however small
  the mean change: the gate fails on consistency, not on size.
* Only the paired questions (ok in both revisions, at least
  ``compare.MIN_QUESTIONS`` of them) are tested; added or removed questions
  are not.
* p-values are estimated from at most 10,000 sign flips (fewer past 2,000
  questions, see each delta's ``permutations``), so none is below
  1 / (permutations + 1) and the smallest Holm-adjusted one is m times that
  for m measures: a lower ``alpha`` can never fail, and the check says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Threshold
from rag_corpus_check.gate.terms import GOLD_WORDS
from rag_corpus_check.metrics.measures import Measure

if TYPE_CHECKING:
    from rag_corpus_check.gate.compare import Comparison, Delta, View



def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the i-th
    smallest of m is multiplied by (m − i + 1), kept monotone, capped at 1."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=p_values.__getitem__)):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Tested:
    gold: str  # the view's gold set: "head" or "base"
    measure: Measure
    delta: float
    p_value: float
    adjusted: float  # Holm-adjusted over the view's tested measures
    questions: int
    failed: bool  # dropped, and adjusted <= alpha

    def to_json(self) -> dict:
        return {"gold": self.gold, "measure": str(self.measure), "delta": self.delta, "p_value": self.p_value,
                "adjusted_p_value": self.adjusted, "paired_questions": self.questions, "failed": self.failed}


@dataclass
class SignificanceResult:
    alpha: float
    tested: list[Tested] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)  # why a measure with a threshold could not be tested
    floor: float | None = None  # the smallest adjusted p-value the permutations can give (None: nothing tested)

    @property
    def passed(self) -> bool:
        return not any(t.failed for t in self.tested)

    @property
    def reachable(self) -> bool:
        return self.floor is None or self.floor <= self.alpha

    def reasons(self) -> list[str]:
        return [f"`{t.measure}` dropped {t.delta:+.4f} vs base judged by {GOLD_WORDS[t.gold]}, and the drop is "
                f"significant: Holm-adjusted p {t.adjusted:.4f} ≤ alpha {self.alpha:g} (paired randomization test "
                f"over {t.questions} questions; `significance`)" for t in self.tested if t.failed]

    def notes(self) -> list[str]:
        found = list(self.untested)
        if not self.reachable:
            found.append(f"`significance.alpha` {self.alpha:g} is below the smallest Holm-adjusted p-value the "
                         f"permutations can give ({self.floor:.4g}): this gate cannot fail")
        return found

    def to_json(self) -> dict:
        return {"alpha": self.alpha, "correction": "holm", "passed": self.passed,
                "tested": [t.to_json() for t in self.tested], "notes": self.notes()}


def significance_gate(alpha: float, thresholds: list[Threshold], comparison: Comparison) -> SignificanceResult:
    """The gate over every gold set compared."""
    out = SignificanceResult(alpha)
    gated = [t.measure for t in thresholds]
    for v in comparison.views:
        _view(out, v, gated)
    return out


def _view(out: SignificanceResult, v: View, gated: list[Measure]) -> None:
    deltas = [d for d in v.deltas if d.measure in gated]
    tested = [d for d in deltas if _testable(d)]
    out.untested += [_untested(d, v.gold) for d in deltas if d not in tested]
    p_values = [float(d.p_value or 0) for d in tested]  # not None: testable
    for d, p, adj in zip(tested, p_values, holm(p_values), strict=True):
        delta = float(d.delta or 0)
        out.tested.append(Tested(v.gold, d.measure, delta, p, adj, d.paired_questions, delta < 0 and adj <= out.alpha))
    if tested:
        out.floor = max(out.floor or 0.0, len(tested) / (min(d.permutations for d in tested) + 1))


def _testable(d: Delta) -> bool:
    return d.p_value is not None and d.delta is not None and d.conclusive


def _untested(d: Delta, gold: str) -> str:
    return (f"`{d.measure}` judged by {GOLD_WORDS[gold]} was not tested: {d.paired_questions} paired questions "
            "(at least 10 are needed)")


def alpha_changes(base: float | None, head: float | None) -> tuple[list[str], list[str]]:
    """How a pull request changed the gate: (every change, the loosening
    ones). A larger alpha fails more drops: raising it tightens."""
    if base == head:
        return [], []
    if head is None:
        message = f"the significance gate removed (was `significance.alpha` {base:g})"
        return [message], [message]
    if base is None:
        return [f"the significance gate added (`significance.alpha` {head:g})"], []
    if head < base:
        message = f"`significance.alpha` lowered: {base:g} → {head:g}"
        return [message], [message]
    return [f"`significance.alpha` raised: {base:g} → {head:g}"], []


def stricter_alpha(base: float | None, head: float | None) -> float | None:
    """The alpha that holds under the base's rules: the larger (it fails more drops)."""
    found = [a for a in (base, head) if a is not None]
    return max(found) if found else None
