"""Bootstrap confidence intervals of means over questions.

Percentile bootstrap: draw the questions with replacement ``resamples``
times (as many draws as there are questions), take the mean of each draw,
and report the 2.5th and 97.5th percentiles of those means (a 95 %
interval). For a base → head delta the questions are drawn in pairs: one
draw picks a question's base and head value together, and the interval is
the percentiles of the resampled head mean minus base mean (the mean paired
difference), the base's and the head's mean getting their own intervals
from the same draws.

Reproducible everywhere: every interval starts numpy's Mersenne Twister
in the state of ``random.Random(SEED)`` (the same sequence on every platform
and Python version), and question i of a draw is ``int(u * n)`` for the next
``u`` of its ``random_sample`` (the same doubles as ``random.random()``).
The draws are made and summed in numpy (numpy adds pairwise), one block of
:data:`BLOCK` resamples at a time. One set of draws serves every measure of
a set of columns (the means of one evaluation, the deltas of one view), so
their intervals come from the same resampled question sets. The percentile
is interpolated linearly between the sorted resampled means (numpy's
default "linear" method).

The work is bounded by the input: :data:`RESAMPLES` draws up to
:data:`WORK` / n questions, never fewer than :data:`MIN_RESAMPLES`; each
interval records the resamples it used. numpy is imported when the first
interval is drawn.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from operator import sub
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from rag_corpus_check.gate.compare import Delta
    from rag_corpus_check.metrics.evaluate import Evaluation, QueryResult
    from rag_corpus_check.metrics.measures import Measure

LEVEL = 0.95
SEED = 20261130
RESAMPLES = 2000
MIN_RESAMPLES = 500
# Question draws one set of intervals may make: past 500 questions the
# resamples shrink to fit, never below MIN_RESAMPLES (a Monte Carlo error of
# the percentiles of ~6 % of the interval's half-width); past 2,000
# questions the work grows with the questions (MIN_RESAMPLES x n draws).
WORK = 1_000_000
BLOCK = 64  # resamples drawn at once: 64 x n indices in memory

METHOD = (f"percentile bootstrap over questions ({LEVEL:.0%}): {RESAMPLES:,} resamples (fewer past "
          f"{WORK // RESAMPLES:,} questions, at least {MIN_RESAMPLES:,}: see each interval's `resamples`), "
          f"seed {SEED}; a delta's questions are resampled in pairs")


@dataclass(frozen=True)
class Interval:
    """A confidence interval of a mean (or of a mean paired difference)."""

    low: float
    high: float
    resamples: int

    @property
    def width(self) -> float:
        return self.high - self.low

    def to_json(self) -> dict:
        return {"low": self.low, "high": self.high, "level": LEVEL, "resamples": self.resamples}


def resamples_for(questions: int) -> int:
    """How many resamples a set of ``questions`` gets (see :data:`WORK`)."""
    return max(MIN_RESAMPLES, min(RESAMPLES, WORK // max(questions, 1)))


def mersenne(seed: int) -> np.random.RandomState:
    """A numpy generator in the state ``random.Random(seed)`` starts in."""
    import numpy as np

    state = random.Random(seed).getstate()[1]
    generator = np.random.RandomState()
    generator.set_state(("MT19937", np.array(state[:624], dtype=np.uint32), int(state[624]), 0, 0.0))
    return generator


def intervals(columns: Sequence[Sequence[float]], seed: int = SEED,
              resamples: int | None = None) -> list[Interval | None]:
    """The interval of the mean of each column (all of one length n, one
    value per question), from one set of draws. None for an empty column
    set (n = 0)."""
    n = len(columns[0]) if columns else 0
    if n == 0:
        return [None for _ in columns]
    count = resamples or resamples_for(n)
    return [_percentiles(m, count) for m in resampled_means(columns, count, seed)]


def resampled_means(columns: Sequence[Sequence[float]], resamples: int, seed: int = SEED) -> list[list[float]]:
    """Per column, the mean of each resampled question set (one set of draws for all)."""
    import numpy as np

    n = len(columns[0])
    generator = mersenne(seed)
    values = [np.asarray(c, dtype=np.float64) for c in columns]
    means = [np.empty(resamples) for _ in columns]
    for start in range(0, resamples, BLOCK):
        count = min(BLOCK, resamples - start)
        picked = (generator.random_sample(count * n) * n).astype(np.intp).reshape(count, n)
        for out, column in zip(means, values, strict=True):
            out[start:start + count] = column[picked].sum(axis=1) / n
    return [m.tolist() for m in means]


@dataclass(frozen=True)
class Paired:
    """One measure's intervals over paired questions: of the base's mean, of
    the head's, and of the mean paired difference head − base (from the
    same resampled question sets, so each delta is a head mean minus a base mean)."""

    base: Interval
    head: Interval
    delta: Interval


def paired(base: Sequence[Sequence[float]], head: Sequence[Sequence[float]], seed: int = SEED,
           resamples: int | None = None) -> list[Paired]:
    """Per measure (column i of ``base`` and of ``head``: the same questions
    in the same order), the :class:`Paired` intervals, the questions drawn
    in pairs. Empty without a question."""
    n = len(base[0]) if base else 0
    if n == 0:
        return []
    count = resamples or resamples_for(n)
    means = resampled_means([*base, *head], count, seed)
    out = []
    for b, h in zip(means[:len(base)], means[len(base):], strict=True):
        delta = _percentiles(list(map(sub, h, b)), count)  # before b and h are sorted
        out.append(Paired(_percentiles(b, count), _percentiles(h, count), delta))
    return out


def paired_intervals(base: Sequence[Sequence[float]], head: Sequence[Sequence[float]], seed: int = SEED,
                     resamples: int | None = None) -> list[Interval | None]:
    """The interval of the mean paired difference head − base of each measure."""
    return [p.delta for p in paired(base, head, seed, resamples)] or [None for _ in base]


def add_intervals(deltas: list[Delta], base: list[QueryResult], head: list[QueryResult]) -> None:
    """Give each delta whose values are all defined (it has a p-value) its
    :class:`Paired` intervals over the paired questions ``base[i]``, ``head[i]``."""
    tested = [d for d in deltas if d.p_value is not None]
    found = paired([_column(base, d.measure) for d in tested], [_column(head, d.measure) for d in tested])
    for d, intervals_of in zip(tested, found, strict=True):
        d.interval, d.means_intervals = intervals_of.delta, (intervals_of.base, intervals_of.head)


def mean_intervals(evaluation: Evaluation) -> dict[Measure, Interval | None]:
    """The interval of each mean of ``evaluation``, over the questions in
    the means (in the evaluation's order)."""
    counted = [q for q in evaluation.queries if q.status == "ok"]
    measures = list(evaluation.means)
    found = intervals([_column(counted, m) for m in measures])
    return dict(zip(measures, found, strict=True))


def _column(rows: list[QueryResult], m: Measure) -> list[float]:
    """The values of ``m`` of questions where it is defined (checked by the caller)."""
    return [q.values[m] for q in rows]  # type: ignore[misc]


def percentile(ordered: Sequence[float], p: float) -> float:
    """The ``p`` quantile (0 ≤ p ≤ 1) of sorted values, interpolated
    linearly between the closest ranks (numpy's "linear" method)."""
    h = (len(ordered) - 1) * p
    lo = int(h)
    frac = h - lo
    if frac == 0 or lo + 1 >= len(ordered):
        return ordered[lo]
    return ordered[lo] + frac * (ordered[lo + 1] - ordered[lo])


def _percentiles(values: list[float], resamples: int) -> Interval:
    values.sort()
    tail = (1 - LEVEL) / 2
    return Interval(percentile(values, tail), percentile(values, 1 - tail), resamples)
