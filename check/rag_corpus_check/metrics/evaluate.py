"""Per-question records and the means over questions, in one place each:
:func:`evaluate` scores the questions (every value through
:meth:`Measure.value`), :func:`means` averages them (also for merged shards
and the base comparison)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, eq, gt

from rag_corpus_check.core.text import natural_key
from rag_corpus_check.metrics.measures import (
    DEFAULT,
    Judged,
    Measure,
    Options,
    check_measure,
    judge,
)

OK = "ok"
NO_RELEVANT = "no_relevant"
UNANSWERABLE = "unanswerable"  # answerable: false in gold: no document answers it, by design


@dataclass
class QueryResult:
    query_id: str
    status: str  # OK, or NO_RELEVANT or UNANSWERABLE: left out of every mean
    in_run: bool
    relevant: int
    values: dict[Measure, float | None]


@dataclass
class Evaluation:
    queries: list[QueryResult]
    means: dict[Measure, float | None]
    counted: int  # questions in the means
    excluded: list[str] = field(default_factory=list)  # ids with status no_relevant
    unanswerable: list[str] = field(default_factory=list)  # ids with status unanswerable


def evaluate(gold: dict[str, dict[str, int]], rankings: dict[str, list[str]],
             measures: list[Measure], options: Options = DEFAULT,
             unanswerable: Collection[str] = ()) -> Evaluation:
    """Score every gold question (one missing from ``rankings`` is an empty
    ranking). A question without a relevant document gets status
    ``no_relevant``: R and nDCG are None for it and the whole question is left
    out of every mean, so all means are over the same questions. A question
    of ``unanswerable`` (by design) gets status ``unanswerable`` and is left
    out of the means too, whatever it labels."""
    score = scorer(measures, options)
    empty: list[str] = []
    results = []
    for qid in sorted(gold, key=natural_key):
        relevant, values = score(rankings.get(qid, empty), gold[qid])
        status = UNANSWERABLE if qid in unanswerable else OK if relevant else NO_RELEVANT
        results.append(QueryResult(qid, status, qid in rankings, relevant, values))
    return summarize(results, measures)


Scorer = Callable[[list[str], dict[str, int]], tuple[int, dict[Measure, float | None]]]


def scorer(measures: list[Measure], options: Options = DEFAULT) -> Scorer:
    """One question's scoring, as :func:`evaluate` scores each: ``(ranking,
    grades) -> (R, {measure: value})``. For the label debt, which scores
    every question again under other grades without the rest of
    :func:`evaluate` (its order, its records, its means)."""
    for m in measures:
        check_measure(m)
    depth = max((m.depth for m in measures), default=0)
    judged_too = [(m, m.name == "Judged") for m in measures]

    def score(ranking: list[str], grades: dict[str, int]) -> tuple[int, dict[Measure, float | None]]:
        q, kept = _judged(ranking, grades, depth, options)
        return q.relevant, {m: m.value(q if judged else kept, options) for m, judged in judged_too}

    return score


def _judged(ranking: list[str], grades: dict[str, int], depth: int, options: Options) -> tuple[Judged, Judged]:
    """The question as ranked, and as the measures read it: with
    ``judged_only`` (trec_eval -J, ir_measures' judged_only) the ranking
    without its unjudged documents. Judged@k always reads the ranking as
    ranked: it measures the labels' coverage of it."""
    q = judge(ranking, grades, depth, options.min_grade)
    if not options.judged_only:
        return q, q
    return q, judge([d for d in ranking if d in grades], grades, depth, options.min_grade)


def summarize(results: list[QueryResult], measures: list[Measure]) -> Evaluation:
    """The :class:`Evaluation` of per-question results, in question order."""
    counted = [r for r in results if r.status == OK]
    excluded = [r.query_id for r in results if r.status == NO_RELEVANT]
    unanswerable = [r.query_id for r in results if r.status == UNANSWERABLE]
    return Evaluation(results, means(counted, measures), len(counted), excluded, unanswerable)


def means(counted: list[QueryResult], measures: list[Measure]) -> dict[Measure, float | None]:
    """The mean of each measure over ``counted`` (questions with a relevant
    document: every value defined); None over none. Summed in the order of the
    ids as text, the order trec_eval sums in (its queries sorted with strcmp),
    whatever order the questions are listed in, so the last digit agrees."""
    out: dict[Measure, float | None] = {}
    ordered = sorted(counted, key=attrgetter("query_id"))
    for m in measures:
        total = 0.0
        for r in ordered:
            total += r.values[m]  # type: ignore[operator]  # defined for an ok question
        out[m] = total / len(counted) if counted else None
    return out


def irrelevant_top(gold: dict[str, dict[str, int]], rankings: dict[str, list[str]], k: int,
                   min_grade: int) -> tuple[list[str], list[bool]]:
    """Every top-k position of a gold question that holds a document not
    relevant to it (judged below ``min_grade``, or unjudged), as the document
    ids, and for each whether it is unjudged (grades are never negative, so
    -1 stands for unjudged). Needs no corpus."""
    irrelevant: list[str] = []
    unjudged: list[bool] = []
    empty: list[str] = []
    for qid, grades in gold.items():
        top = rankings.get(qid, empty)[:k]
        gs = list(map(grades.get, top, repeat(-1)))
        low = list(map(gt, repeat(min_grade), gs))
        irrelevant += compress(top, low)
        unjudged += compress(map(eq, gs, repeat(-1)), low)
    return irrelevant, unjudged


def by_type_rows(counts: Counter, unjudged: Counter) -> list[dict]:
    """The "irrelevant hits by document type" table from per-type counts
    (of one run, or summed over shards): most hits first."""
    total = sum(counts.values())
    rows = [{"type": t, "irrelevant": n, "unjudged": unjudged.get(t, 0), "share": n / total if total else 0.0}
            for t, n in counts.items()]
    rows.sort(key=lambda r: (-r["irrelevant"], r["type"]))
    return rows


def irrelevant_by_type(irrelevant: list[str], unjudged: list[bool], corpus) -> list[dict]:
    """Which kinds of documents crowd out the right ones: per document type,
    how many top-k positions (over all questions) hold a document that is not
    relevant to the question, and how many of those are unjudged."""
    return by_type_rows(*corpus.type_counts(irrelevant, unjudged))
