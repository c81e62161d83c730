"""Thresholds and the verdict."""

from __future__ import annotations

from dataclasses import dataclass

from rag_corpus_check.config import Threshold
from rag_corpus_check.measures import Measure

# Means are sums of fractions; 0.7 can come out as 0.69999999999999996. A mean
# within this distance below the limit is treated as equal to it.
TOLERANCE = 1e-12


@dataclass
class ThresholdResult:
    measure: Measure
    limit: float
    value: float | None
    passed: bool | None
    max_drop: float | None = None
    note: str | None = None


def apply_thresholds(
    thresholds: list[Threshold],
    means: dict[Measure, float | None],
    drop_failures: dict[Measure, str] | None = None,
) -> list[ThresholdResult]:
    """One result per threshold. ``drop_failures`` (measure → message) comes
    from the base comparison; None means no base was compared."""
    return [_result(t, means.get(t.measure), drop_failures) for t in thresholds]


def _result(t: Threshold, value: float | None, drop_failures: dict[Measure, str] | None) -> ThresholdResult:
    # No question had a relevant document: nothing was measured, and a gate
    # over nothing must not pass.
    passed = value is not None and value >= t.min - TOLERANCE
    notes = [] if value is not None else ["no question with a relevant document; nothing to measure"]
    drop = _drop_note(t, drop_failures)
    if drop is not None:
        notes.append(drop)
        passed = passed and drop_failures is None  # an unchecked max_drop is noted, not failed
    return ThresholdResult(t.measure, t.min, value, passed, t.max_drop, "; ".join(notes) or None)


def _drop_note(t: Threshold, drop_failures: dict[Measure, str] | None) -> str | None:
    """Why the threshold's max_drop failed, or that it was not checked; None otherwise."""
    if t.max_drop is None:
        return None
    if drop_failures is None:
        return "max_drop not checked: no base was compared"
    return drop_failures.get(t.measure)


def gate_passed(results: list[ThresholdResult]) -> bool:
    return all(r.passed for r in results)
