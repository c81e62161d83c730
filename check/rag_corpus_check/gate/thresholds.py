"""Thresholds and the verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import PerQuestion, Threshold
from rag_corpus_check.core.text import figure
from rag_corpus_check.gate.terms import TOLERANCE
from rag_corpus_check.metrics.measures import Measure

if TYPE_CHECKING:
    from rag_corpus_check.gate.compare import QuestionChange


@dataclass
class ThresholdResult:
    measure: Measure
    limit: float
    value: float | None
    passed: bool | None
    max_drop: float | None = None
    note: str | None = None
    on_base_gold: float | None = None  # with a base: the head's mean judged by the base's gold set
    base_gold_checked: bool = False


def apply_thresholds(
    thresholds: Sequence[Threshold],
    means: dict[Measure, float | None],
    drop_failures: dict[Measure, str] | None = None,
    base_gold_means: dict[Measure, float | None] | None = None,
) -> list[ThresholdResult]:
    """One result per threshold. ``drop_failures`` (measure → message) comes
    from the base comparison; None means no base was compared.
    ``base_gold_means``: the head's means judged by the base's gold set,
    where the minimum must hold too (None: no base gold set was compared)."""
    return [_result(t, means.get(t.measure), drop_failures, base_gold_means) for t in thresholds]


def _at_least(value: float | None, limit: float) -> bool:
    # None: no question had a relevant document; a gate over nothing must not pass.
    return value is not None and value >= limit - TOLERANCE


def _result(t: Threshold, value: float | None, drop_failures: dict[Measure, str] | None,
            base_gold_means: dict[Measure, float | None] | None) -> ThresholdResult:
    passed = _at_least(value, t.min)
    notes = [] if value is not None else ["no question with a relevant document; nothing to measure"]
    on_base = base_gold_means.get(t.measure) if base_gold_means is not None else None
    below = _below_on_base(t, on_base) if base_gold_means is not None else None
    if below is not None:
        if on_base != value:  # the same value fails the same way: said once, by the value itself
            notes.append(below)
        passed = False
    drop = _drop_note(t, drop_failures)
    if drop is not None:
        notes.append(drop)
        passed = passed and drop_failures is None  # an unchecked max_drop is noted, not failed
    return ThresholdResult(t.measure, t.min, value, passed, t.max_drop, "; ".join(notes) or None, on_base,
                           base_gold_means is not None)


def _below_on_base(t: Threshold, on_base: float | None) -> str | None:
    """Why the minimum fails on the base's gold set, or None."""
    if _at_least(on_base, t.min):
        return None
    shown = "undefined" if on_base is None else figure(on_base, t.min)
    return f"judged by the base's gold set it is {shown}, below {t.min:g}"


def _drop_note(t: Threshold, drop_failures: dict[Measure, str] | None) -> str | None:
    """Why the threshold's max_drop failed, or that it was not checked; None otherwise."""
    if t.max_drop is None:
        return None
    if drop_failures is None:
        return "max_drop not checked: no base was compared"
    return drop_failures.get(t.measure)


@dataclass
class PerQuestionResult:
    """The per-question rule (`per_question:`) over each gold set compared."""

    rule: PerQuestion
    dropped: dict[str, list[QuestionChange]] = field(default_factory=dict)  # gold set -> questions over the limit

    @property
    def passed(self) -> bool:
        return all(len(qs) <= self.rule.max_questions for qs in self.dropped.values())

    def reason(self) -> str:
        worst = max(self.dropped.items(), key=lambda item: len(item[1]))
        gold, questions = worst
        return (f"{len(questions)} questions lost more than {self.rule.max_drop:g} of `{self.rule.measure}` "
                f"judged by the {gold}'s gold set (at most {self.rule.max_questions} may; `per_question`)")
