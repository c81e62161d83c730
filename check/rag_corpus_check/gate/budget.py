"""One budget for the resampling work: the bootstrap intervals, the
label-debt bounds and the paired tests, over every measure, gold set
compared and slice.

Each of them repeats work per measure (and per gold set, and per slice):
a config that names many measures, or a gold set with many tags, would
multiply it. The work is counted in units of one question's value taken
once: in one bootstrap draw (draws x questions x columns), in one sign
flip of a paired test (sign flips x questions); a draw or sign flip counts
at least :data:`SMALLEST` questions, and a label-debt bound :data:`BOUND`
units a question and measure (questions x measures x sides). The check plans the work of a stage from
the counts alone and charges it before the stage runs — the head's means
(:func:`head_work`), then with a base the whole comparison
(:func:`comparison_work`: every gold set's deltas and bounds, every
slice's tests) — and a stage that would take the total past the budget is
not run: a ``limit`` problem (exit 2) names the budget and the work.

The budget grows with the input, as the retrieval's does: :data:`FLOOR`
plus ``limits.max_resampling_work_per_byte`` per byte of the input files as
stored (corpus, gold files, queries, run, vectors). One unit is a few ns
(bench/dos.py's cost cases: see docs/hostile-input.md), so an input of
1 MB (400,000,000 units) may resample for a few CPU-seconds and a real gold set (well under
20 measures) uses a small part of its budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import RESAMPLING_LIMIT, RESAMPLING_PER_BYTE
from rag_corpus_check.core import problems as P
from rag_corpus_check.gate.bootstrap import resamples_for

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rag_corpus_check.config.load import Config
    from rag_corpus_check.metrics.evaluate import Evaluation, QueryResult
    from rag_corpus_check.metrics.measures import Measure

LIMIT = RESAMPLING_LIMIT
PER_BYTE = RESAMPLING_PER_BYTE  # the default of limits.max_resampling_work_per_byte
FLOOR = 200_000_000  # units every input may take whatever its size (~2 CPU-s)
# A unit costs ~2-40 ns (measured: numpy's bootstrap sums ~2-9 ns a value,
# a sign flip ~16-40 ns a question). A draw or a sign flip has a fixed cost
# too (~1 µs: as much as SMALLEST questions), and a label-debt bound scores
# a question in Python (~12 µs a measure at k <= 50: BOUND units).
SMALLEST = 64
BOUND = 500
MEANS = "the means"  # the stage of the head's means' intervals and bounds (charged once)


def units(draws: int, questions: int, columns: int = 1) -> int:
    """The work of ``draws`` bootstrap draws or sign flips of ``questions``
    questions for each of ``columns`` measures (none without a question)."""
    return draws * max(questions, SMALLEST) * columns if questions else 0


@dataclass
class Ledger:
    """The resampling work charged so far, by stage."""

    allowed: int
    spent: dict[str, int] = field(default_factory=dict)
    refused: bool = False  # a stage was over the budget (a limit problem): nothing more is resampled

    @property
    def total(self) -> int:
        return sum(self.spent.values())


def allowed(cfg: Config, stored: int) -> int:
    """The budget: :data:`FLOOR` plus the per-byte limit per byte of input
    (``stored``: every file the config names, as stored: ``safe_io.stored_bytes``)."""
    return FLOOR + cfg.limit(LIMIT) * stored


def bounded(measures) -> int:
    """How many of ``measures`` have a label-debt bound (all but Judged)."""
    return sum(1 for m in measures if m.name != "Judged")


def head_work(evaluation: Evaluation) -> int:
    """The work of the means' intervals and bounds (:func:`uncertainty.uncertainty`)."""
    n = evaluation.counted
    measures = list(evaluation.means)
    return units(resamples_for(n), n, len(measures)) + n * BOUND * bounded(measures)


def comparison_work(base: Evaluation, head: Evaluation, head_on_base_gold: Evaluation | None) -> int:
    """The resampling work :func:`compare.compare` and the views' bounds
    (:func:`label_debt.view_bounds`) take: per gold
    set, each tested measure's sign flips and paired draws, and each
    bounded measure's bound on both sides, over the paired questions."""
    from rag_corpus_check.gate.compare import paired_ids  # the questions compare() pairs

    bq = {q.query_id: q for q in base.queries}
    heads = [head] + ([head_on_base_gold] if head_on_base_gold is not None else [])
    total = 0
    for evaluation in heads:
        hq = {q.query_id: q for q in evaluation.queries}
        total += _view_work([(bq[q], hq[q]) for q in paired_ids(bq, hq)])
    return total


def _view_work(pairs: list[tuple[QueryResult, QueryResult]]) -> int:
    from rag_corpus_check.gate.compare import permutations_for

    if not pairs:
        return 0
    n, bl, hl = len(pairs), [b for b, _ in pairs], [h for _, h in pairs]
    measures = [m for m in hl[0].values if m in bl[0].values]
    missing = undefined((*bl, *hl))
    tested = sum(1 for m in measures if m not in missing)
    return units(permutations_for(n) + 2 * resamples_for(n), n, tested) + 2 * n * BOUND * bounded(measures)


def undefined(rows: Iterable[QueryResult]) -> set[Measure]:
    """The measures some of ``rows`` (QueryResults) has no value of."""
    return {m for q in rows if None in q.values.values() for m, v in q.values.items() if v is None}


def charge(cfg: Config, ledger: Ledger, problems: P.Problems, stage: str, work: int) -> bool:
    """Charge ``work`` to ``stage``; False (and a ``limit`` problem) when the
    total would pass the budget — the stage is then not run."""
    planned = ledger.total + work
    if ledger.refused:
        return False
    if planned <= ledger.allowed:
        ledger.spent[stage] = ledger.spent.get(stage, 0) + work
        return True
    parts = ", ".join(f"{name}: {units:,}" for name, units in {**ledger.spent, stage: work}.items())
    problems.add(P.LIMIT, f"the bootstrap intervals, label-debt bounds and paired tests would take {planned:,} units "
                 f"of resampling work ({parts}), more than the budget of {ledger.allowed:,}: {FLOOR:,} + "
                 f"{cfg.limit(LIMIT)} per byte of the input files (limits.{LIMIT}); a unit is one question's "
                 "value in one bootstrap draw, sign flip or bound, for each measure, gold set and slice — name "
                 "fewer measures (`thresholds:`, `measures:`, slice thresholds) or tag the questions with "
                 "fewer tags", file=cfg.path_display)
    ledger.refused = True
    return False
