"""How sure the numbers are, added once a tree is measured: the bootstrap
interval of each mean (:mod:`gate.bootstrap`), each mean if every unjudged
top-k document were relevant (:mod:`gate.label_debt`), and with a base the
bounds of each delta and the gate on the paired test
(:mod:`gate.significance`). The deltas' intervals come with the deltas
(:func:`compare.compare`). Each is charged to the resampling budget
(:mod:`gate.budget`) before it is taken, here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.gate import budget
from rag_corpus_check.gate.bootstrap import mean_intervals
from rag_corpus_check.gate.label_debt import Scale, Sides, head_debt, view_bounds
from rag_corpus_check.pipeline.outcome import Measured
from rag_corpus_check.safe_io import stored_bytes

if TYPE_CHECKING:
    from rag_corpus_check.gate.bootstrap import Interval
    from rag_corpus_check.gate.compare import Comparison, Side  # only with a base compared
    from rag_corpus_check.gate.label_debt import Debt
    from rag_corpus_check.gate.significance import SignificanceResult
    from rag_corpus_check.gate.slices import Tags
    from rag_corpus_check.metrics.evaluate import Evaluation
    from rag_corpus_check.metrics.measures import Measure


def scale(cfg: Config) -> Scale:
    """An unjudged document judged relevant gets the top grade of the config's scale."""
    return Scale(cfg.options(), cfg.k, cfg.max_grade)


@dataclass(frozen=True)
class Uncertainty:
    """What :func:`uncertainty` found (nothing: the budget refused it)."""

    intervals: dict[Measure, Interval | None] = field(default_factory=dict)
    debt: Debt | None = None
    significance: SignificanceResult | None = None


def uncertainty(cfg: Config, measured: Measured, problems: P.Problems, ledger: budget.Ledger,
                comparison: Comparison | None = None, base_family: frozenset[Measure] | None = None) -> Uncertainty:
    """The means' intervals and bounds of the evaluation that stood, and
    the paired test's gate (with a base and `significance.alpha`;
    ``base_family``: under the base's rules, the measures of the base's
    thresholds, see :mod:`gate.significance`). Only the resampling budget
    and the problems are written to."""
    evaluation, gold, run = measured.evaluation, measured.gold, measured.run
    if evaluation is None or gold is None or run is None:
        return Uncertainty()
    if not charge_head(cfg, problems, ledger, evaluation):
        return Uncertainty()
    intervals = mean_intervals(evaluation)
    debt = head_debt(gold.grades(), run.rankings(), evaluation, scale(cfg))
    if comparison is None or cfg.significance is None:
        return Uncertainty(intervals, debt)
    from rag_corpus_check.gate.significance import significance_gate

    return Uncertainty(intervals, debt, significance_gate(cfg.significance, cfg.thresholds, comparison, base_family))


def bound_views(cfg: Config, comparison: Comparison, base: Sides, on_base_gold: dict[str, list[str]] | None) -> None:
    """Each delta's bound: judged by each revision's own gold set (``base``:
    the base's and the head's labels and rankings), and with
    ``on_base_gold`` (the head's rankings of the base's questions) by the
    base's gold set."""
    explained = comparison.explained_by_changes
    view_bounds(comparison.head_gold, base, scale(cfg), explained)
    if comparison.base_gold is not None and on_base_gold is not None:
        view_bounds(comparison.base_gold, Sides(base.base_gold, base.base_run, base.base_gold, on_base_gold,
                                                known=base.head_gold), scale(cfg), explained)


def ledger(cfg: Config, measured: Measured) -> budget.Ledger | None:
    """The check's resampling budget, opened with the config's once the
    measures stand (None: nothing to resample)."""
    if measured.evaluation is None:
        return None
    return budget.Ledger(budget.allowed(cfg, stored_bytes(cfg.base_dir, cfg.input_files) or 0))  # just read: stat works


def charge_head(cfg: Config, problems: P.Problems, book: budget.Ledger, evaluation: Evaluation) -> bool:
    """Charge the means' intervals and bounds of the check's ``evaluation``
    (once: with a base they are charged before the base is measured);
    False (a ``limit`` problem) over the budget."""
    if budget.MEANS in book.spent:
        return True
    return budget.charge(cfg, book, problems, budget.MEANS, budget.head_work(evaluation))


def charge_comparison(cfg: Config, problems: P.Problems, book: budget.Ledger, sides: tuple[Side, Side], on_base_gold: Evaluation,
                      tags: tuple[Tags, Tags], names: list[str]) -> bool:
    """Charge the whole comparison before any of it is taken: every gold
    set's paired tests, intervals and bounds (:func:`budget.comparison_work`)
    and every slice's tests (:func:`slices.slices_work`)."""
    from rag_corpus_check.gate.slices import slices_work

    base, head = sides
    whole = budget.comparison_work(base.evaluation, head.evaluation, on_base_gold)
    parts = slices_work(base.evaluation, head.evaluation, on_base_gold, tags, names)
    return (budget.charge(cfg, book, problems, "the comparison with the base", whole)
            and budget.charge(cfg, book, problems, "the slices' paired tests", parts))
