"""The gate on the paired test (``significance.alpha``, off by default).

With a base, every delta carries the p-value of a two-sided paired
randomization (sign-flip) test over the questions in both revisions
(:func:`compare.paired_randomization`). This gate fails when a measure with
a threshold dropped and its p-value, Holm-corrected across its family (of
one gold set), is at most ``alpha``. Each gold set compared (the head's, the
base's) has families of its own, as ``max_drop`` checks each.

The families (:data:`terms.FAMILIES`): under the base's rules (``rules-source``
base) the base's family is the measures of the base config's thresholds,
corrected among themselves alone; the measures a pull request adds a
threshold on are a second family, corrected among themselves. A pull
request's additions can so only add tests: the base's measures get the
same adjusted p-values with or without them, never a larger Holm factor
(ten always-met thresholds added to one would otherwise multiply its
p-value by eleven). Under the head's own rules (no base config, its first
introduction, head-override) every measure with a threshold is one family,
``head``.

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
  for a family of m measures: a lower ``alpha`` can never fail that family,
  and the check says so, of each family (the base's floor does not grow
  with what a pull request adds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Threshold
from rag_corpus_check.gate.terms import ADDED_FAMILY as ADDED
from rag_corpus_check.gate.terms import BASE_FAMILY as BASE
from rag_corpus_check.gate.terms import GOLD_WORDS
from rag_corpus_check.gate.terms import HEAD_FAMILY as HEAD
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
    family: str  # one of terms.FAMILIES: the measures it is Holm-corrected with
    measure: Measure
    delta: float
    p_value: float
    adjusted: float  # Holm-adjusted over the tested measures of the view's family
    questions: int
    failed: bool  # dropped, and adjusted <= alpha

    def to_json(self) -> dict:
        return {"gold": self.gold, "family": self.family, "measure": str(self.measure), "delta": self.delta, "p_value": self.p_value,
                "adjusted_p_value": self.adjusted, "paired_questions": self.questions, "failed": self.failed}


@dataclass
class SignificanceResult:
    alpha: float
    tested: list[Tested] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)  # why a measure with a threshold could not be tested
    # family -> the smallest adjusted p-value the permutations can give it (the larger of the gold sets');
    # a family nothing was tested of has none
    floors: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not any(t.failed for t in self.tested)

    @property
    def reachable(self) -> bool:
        return all(floor <= self.alpha for floor in self.floors.values())

    def reasons(self) -> list[str]:
        return [f"`{t.measure}` dropped {t.delta:+.4f} vs base judged by {GOLD_WORDS[t.gold]}, and the drop is "
                f"significant: Holm-adjusted p {t.adjusted:.4f} ≤ alpha {self.alpha:g} (paired randomization test "
                f"over {t.questions} questions; `significance`)" for t in self.tested if t.failed]

    def notes(self) -> list[str]:
        found = list(self.untested)
        for family, floor in self.floors.items():
            if floor > self.alpha:
                found.append(f"`significance.alpha` {self.alpha:g} is below the smallest Holm-adjusted p-value the "
                             f"permutations can give{self._over(family)} ({floor:.4g}): "
                             f"{'this gate' if len(self.floors) == 1 else 'that family'} cannot fail")
        return found

    def _over(self, family: str) -> str:
        if len(self.floors) == 1:
            return ""
        return {ADDED: " the measures this pull request added a threshold on",
                BASE: " the measures of the base's thresholds"}.get(family, "")

    def to_json(self) -> dict:
        return {"alpha": self.alpha, "correction": "holm", "passed": self.passed,
                "tested": [t.to_json() for t in self.tested], "notes": self.notes()}


def significance_gate(alpha: float, thresholds: Sequence[Threshold], comparison: Comparison,
                      base_family: frozenset[Measure] | None = None) -> SignificanceResult:
    """The gate over every gold set compared. ``base_family``: under the
    base's rules, the measures of the base config's thresholds (Holm-corrected
    among themselves; the others the pull request added, a family of their
    own); None under the head's own rules (one family)."""
    out = SignificanceResult(alpha)
    for family, gated in families(thresholds, base_family):
        for v in comparison.views:
            _view(out, v, family, gated)
    return out


def families(thresholds: Sequence[Threshold], base_family: frozenset[Measure] | None) -> list[tuple[str, list[Measure]]]:
    """Each family and its measures, in the thresholds' order (empty ones left out)."""
    gated = [t.measure for t in thresholds]
    if base_family is None:
        return [(HEAD, gated)]
    found = [(BASE, [m for m in gated if m in base_family]), (ADDED, [m for m in gated if m not in base_family])]
    return [(family, measures) for family, measures in found if measures]


def _view(out: SignificanceResult, v: View, family: str, gated: list[Measure]) -> None:
    deltas = [d for d in v.deltas if d.measure in gated]
    tested = [d for d in deltas if _testable(d)]
    out.untested += [_untested(d, v.gold) for d in deltas if d not in tested]
    p_values = [float(d.p_value or 0) for d in tested]  # not None: testable
    for d, p, adj in zip(tested, p_values, holm(p_values), strict=True):
        delta = float(d.delta or 0)
        out.tested.append(Tested(v.gold, family, d.measure, delta, p, adj, d.paired_questions,
                                 delta < 0 and adj <= out.alpha))
    if tested:
        floor = len(tested) / (min(d.permutations for d in tested) + 1)
        out.floors[family] = max(out.floors.get(family, 0.0), floor)


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
