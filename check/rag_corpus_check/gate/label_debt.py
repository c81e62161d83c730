"""Label debt: what the unjudged documents in the top k could hide.

Every measure counts a document the gold set does not judge as not
relevant. Next to each mean and each base → head delta the check reports
the same number under one other judgement: every unjudged document in the
top k judged relevant, at the top grade (``relevance.max_grade``) — the
best case for the rankings that retrieved them. k is the measure's own
cut-off (the config's k for Rprec). For a delta the judgement is one for
both sides: the documents of the base's top k and of the head's that
no gold set judges (neither the base's nor the head's) are judged relevant
on both sides, so the bound delta compares the two rankings under the same
added labels (a document a gold set judges keeps, on each side, what that
side's gold set says of it, as in the delta itself).

For P, R, RR and Success this is the largest value any judgement of those
documents could give. For nDCG, AP and Rprec a new relevant document also
raises the question's ideal (its ideal DCG, its R), so another judgement
(some of them relevant, not all) can score a little higher: the bound is
the value under that one judgement, not a maximum. Judged@k measures the
labels themselves and has no bound.

A drop of a measure with a threshold "could be label debt" when the head's
top k holds unjudged documents the base's did not (new to the corpus or
new to the top k) and, judged relevant, the drop would be no larger than
the threshold's ``max_drop`` (0 without one): judging them (``pool``) is
then the way to tell a regression from missing labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, filterfalse
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Threshold
from rag_corpus_check.metrics.evaluate import OK, Evaluation, QueryResult, means, scorer
from rag_corpus_check.metrics.measures import Measure, Options

if TYPE_CHECKING:
    from rag_corpus_check.gate.compare import Comparison, Delta, View

ASSUMPTION = ("every unjudged document in the top k of the measure (for a delta: of either ranking, judged by "
              "no gold set) judged relevant at the top grade (relevance.max_grade); k is the config's k for "
              "Rprec")
TOLERANCE = 1e-12

_EMPTY: list[str] = []
Grades = dict[str, dict[str, int]]  # question -> document -> grade
Rankings = dict[str, list[str]]  # question -> ranking


@dataclass(frozen=True)
class Scale:
    """What a bound is computed under: the measures' options, the config's k
    (for Rprec) and the grade an unjudged document is given."""

    options: Options
    k: int
    grade: int


@dataclass
class Debt:
    """The head's means if every unjudged top-k document were relevant."""

    means: dict[Measure, float | None]
    unjudged: int  # unjudged documents in the top k (the config's) over the questions in the means

    def to_json(self) -> dict:
        return {"assumption": ASSUMPTION, "unjudged_in_top_k": self.unjudged,
                "means": {str(m): v for m, v in self.means.items()}}


@dataclass
class DeltaBound:
    """A delta's means under the same judgement of both sides' unjudged top-k documents."""

    base: float | None
    head: float | None
    new_unjudged: int  # unjudged documents in the head's top k that were not in the base's, over the questions
    rest: DeltaBound | None = None  # over the questions no changed relevant document explains (when some is)

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.head is None else self.head - self.base

    def explains(self, delta: float | None, allowed: float) -> bool:
        """``delta`` is a drop, new unjudged documents are in the head's top
        k, and judged relevant the drop would be at most ``allowed``."""
        bound = self.delta
        return (self.new_unjudged > 0 and delta is not None and bound is not None and delta < -TOLERANCE
                and bound >= -allowed - TOLERANCE)

    def to_json(self) -> dict:
        return {"base": self.base, "head": self.head, "delta": self.delta, "new_unjudged": self.new_unjudged}


def cut(m: Measure, k: int) -> int:
    """How deep the unjudged documents a measure could count are looked for."""
    return m.k or k


def judged_relevant(grades: dict[str, int], tops: Iterable[list[str]], depth: int, grade: int,
                    others: Iterable[dict[str, int]] = ()) -> dict[str, int]:
    """``grades`` with every document of each ranking's top ``depth`` that
    neither ``grades`` nor any of ``others`` (other gold sets' labels) judges given ``grade``."""
    unjudged: Iterable[str] = chain.from_iterable(ranking[:depth] for ranking in tops)
    for known in (grades, *others):
        unjudged = filterfalse(known.__contains__, unjudged)
    extra = dict.fromkeys(unjudged, grade)
    return {**grades, **extra} if extra else grades


def bound_values(gold: Grades, rankings: Rankings, measures: list[Measure], scale: Scale,
                 other: tuple[list[Grades], Rankings] | None = None) -> dict[str, dict[Measure, float | None]]:
    """Per question, each measure (but Judged) under the judgement: the
    unjudged documents of the top k of ``rankings`` (and, for a delta, of
    the ``other`` side's rankings, unjudged by its gold sets too) judged
    relevant; each question scored as :func:`evaluate` scores it."""
    out: dict[str, dict[Measure, float | None]] = {q: {} for q in gold}
    labels, runs = other or ([], {})
    for depth, group in _by_cut(measures, scale.k).items():
        score = scorer(group, scale.options)
        for q, g in gold.items():
            ranking = rankings.get(q, _EMPTY)
            judged = judged_relevant(g, (ranking, runs.get(q, _EMPTY)), depth, scale.grade,
                                     [gs.get(q, {}) for gs in labels])
            out[q].update(score(ranking, judged)[1])
    return out


def _by_cut(measures: list[Measure], k: int) -> dict[int, list[Measure]]:
    """The measures with a bound (all but Judged), by how deep they look."""
    out: dict[int, list[Measure]] = {}
    for m in measures:
        if m.name != "Judged":
            out.setdefault(cut(m, k), []).append(m)
    return out


def _means(values: dict[str, dict[Measure, float | None]], questions: list[str],
           measures: list[Measure]) -> dict[Measure, float | None]:
    """The means over ``questions`` (each with a relevant document, so every value is defined)."""
    rows = [QueryResult(q, OK, True, 0, values[q]) for q in questions]
    return means(rows, [m for m in measures if m.name != "Judged"])


def head_debt(gold: Grades, rankings: Rankings, evaluation: Evaluation, scale: Scale) -> Debt:
    """The bound of every mean of ``evaluation``, over the same questions."""
    measures = list(evaluation.means)
    counted = [q.query_id for q in evaluation.queries if q.status == OK]
    values = bound_values({q: gold[q] for q in counted}, rankings, measures, scale)
    return Debt(_means(values, counted, measures), sum(_unjudged(gold[q], rankings.get(q, _EMPTY), scale.k)
                                                        for q in counted))


def _unjudged(grades: dict[str, int], ranking: list[str], depth: int) -> int:
    return len(list(filterfalse(grades.__contains__, ranking[:depth])))


@dataclass(frozen=True)
class Sides:
    """The labels and rankings of a view's two sides, as they were evaluated."""

    base_gold: Grades
    base_run: Rankings
    head_gold: Grades
    head_run: Rankings
    known: Grades | None = None  # labels of a gold set the view does not read (the head's, for the base's view)

    def labels(self) -> list[Grades]:
        """Every gold set a document may be judged by."""
        return [self.base_gold, self.head_gold] + ([self.known] if self.known is not None else [])


def view_bounds(v: View, sides: Sides, scale: Scale, explained: frozenset[str] = frozenset()) -> None:
    """Give each delta of ``v`` its bound (:class:`DeltaBound`), and when
    changed relevant documents explain some questions (``explained``) its
    bound over the others too."""
    paired = [c.query_id for c in v.questions]
    measures = [d.measure for d in v.deltas]
    if not paired:
        return
    base = bound_values({q: sides.base_gold[q] for q in paired}, sides.base_run, measures, scale,
                        (sides.labels(), sides.head_run))
    head = bound_values({q: sides.head_gold[q] for q in paired}, sides.head_run, measures, scale,
                        (sides.labels(), sides.base_run))
    base_means, head_means = _means(base, paired, measures), _means(head, paired, measures)
    rest = [q for q in paired if q not in explained]
    rest_means = (_means(base, rest, measures), _means(head, rest, measures)) if len(rest) < len(paired) else None
    counts = _new_unjudged_counts(paired, [q for q in paired if q in explained], sides)
    for d in (d for d in v.deltas if d.measure.name != "Judged"):
        every, others = counts(cut(d.measure, scale.k))
        d.bound = DeltaBound(base_means.get(d.measure), head_means.get(d.measure), every)
        if rest_means is not None:
            d.bound.rest = DeltaBound(rest_means[0].get(d.measure), rest_means[1].get(d.measure), others)


def _new_unjudged_counts(paired: list[str], explained: list[str], sides: Sides):
    """depth -> (:func:`new_unjudged` over ``paired``, and over those not in
    ``explained``), each depth counted once."""
    found: dict[int, tuple[int, int]] = {}

    def counts(depth: int) -> tuple[int, int]:
        if depth not in found:
            every = new_unjudged(paired, sides, depth)
            found[depth] = every, every - new_unjudged(explained, sides, depth)
        return found[depth]

    return counts


def new_unjudged(questions: list[str], sides: Sides, depth: int) -> int:
    """Documents in the head's top ``depth`` that were not in the base's and
    that no gold set judges, over ``questions``."""
    return sum(_new_unjudged(q, sides, depth) for q in questions)


def _new_unjudged(q: str, sides: Sides, depth: int) -> int:
    seen = set(sides.base_run.get(q, _EMPTY)[:depth])
    known = [g.get(q, {}) for g in sides.labels()]
    return sum(1 for d in sides.head_run.get(q, _EMPTY)[:depth] if d not in seen and not any(d in g for g in known))


@dataclass(frozen=True)
class Explained:
    """A drop of a measure with a threshold that unjudged documents new in
    the head's top k could explain."""

    gold: str  # the view's gold set (compare.HEAD_GOLD or BASE_GOLD)
    measure: Measure
    delta: float
    bound: float  # the delta if every unjudged top-k document were relevant
    new_unjudged: int
    questions: int | None = None  # the drop over this many questions, those no changed relevant document explains

    def message(self) -> str:
        if self.questions is None:
            return f"{self.new_unjudged} new unjudged documents could explain this drop; pool them"
        return (f"{self.new_unjudged} new unjudged documents could explain the drop over the {self.questions} "
                "questions no changed relevant document explains; pool them")


def explained_drops(thresholds: Sequence[Threshold], comparison: Comparison) -> list[Explained]:
    """The drops of measures with a threshold, in every view, that judging
    the head's new unjudged top-k documents relevant would bring within the
    threshold's max_drop (0 without one)."""
    allowed = {t.measure: t.max_drop or 0.0 for t in thresholds}
    found = (_explained(v.gold, d, allowed.get(d.measure)) for v in comparison.views for d in v.deltas)
    return [e for e in found if e is not None]


def _explained(gold: str, d: Delta, allowed: float | None) -> Explained | None:
    """``d`` as an :class:`Explained` drop, or None (no threshold, no drop,
    no new unjudged document, or a drop they could not explain). When
    changed relevant documents explain some questions' drops, only the drop
    over the other questions is offered to pooling."""
    b, delta = d.bound, d.delta
    if d.rest_questions is not None:
        b, delta = (b.rest if b is not None else None), d.rest
    if allowed is None or b is None or not b.explains(delta, allowed):
        return None
    return Explained(gold, d.measure, delta, b.delta, b.new_unjudged,  # type: ignore[arg-type]  # explains(): set
                     d.rest_questions)
