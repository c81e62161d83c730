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
    if t.max_drop is not None and drop_failures is None:
        notes.append("max_drop not checked: no base was compared")
    elif t.max_drop is not None and drop_failures is not None and t.measure in drop_failures:
        passed = False
        notes.append(drop_failures[t.measure])
    return ThresholdResult(t.measure, t.min, value, passed, t.max_drop, "; ".join(notes) or None)


def gate_passed(results: list[ThresholdResult]) -> bool:
    return all(r.passed for r in results)
