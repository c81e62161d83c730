"""Per-question records and the means over questions, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, repeat
from operator import eq, ge, gt

from rag_corpus_check.measures import Measure, _check_k, dcg

OK = "ok"
NO_RELEVANT = "no_relevant"


@dataclass
class QueryResult:
    query_id: str
    status: str
    in_run: bool
    relevant: int
    values: dict[str, float | None]


@dataclass
class Evaluation:
    queries: list[QueryResult]
    means: dict[str, float | None]
    counted: int  # questions in the means
    excluded: list[str]  # ids with status no_relevant


def evaluate(
    gold_queries: dict[str, dict[str, int]],
    rankings: dict[str, list[str]],
    measures: list[Measure],
    *,
    min_grade: int = 1,
    gain: str = "linear",
    short_list: str = "pad",
) -> Evaluation:
    """Score every gold question (a question missing from ``rankings`` is an
    empty ranking). Questions without a relevant document get status
    ``no_relevant``: R and nDCG are None for them and the whole question is
    left out of every mean, so all means are over the same questions.

    The values are those of the functions in :mod:`measures`, computed from
    one lookup of the top-k grades per question instead of one per measure:
    same operations in the same order, so the same floats (tested)."""
    for m in measures:
        _check_k(m.k)
    results = []
    kinds = [(str(m), m.name, m.k) for m in measures]
    sums = dict.fromkeys((key for key, _, _ in kinds), 0.0)
    counted = 0
    excluded = []
    top_k = max((m.k for m in measures), default=0)
    empty: list[str] = []
    actual = short_list == "actual"
    for qid in sorted(gold_queries):
        grades = gold_queries[qid]
        ranking = rankings.get(qid, empty)
        n_rel = sum(map(ge, grades.values(), repeat(min_grade)))
        top = ranking[:top_k]
        top_grades = list(map(grades.get, top, repeat(0)))
        values: dict[str, float | None] = {}
        hits: dict[int, int] = {}  # k -> relevant documents in the top k
        ideal: dict[int, float] = {}
        for key, name, k in kinds:
            if name == "P" or name == "R":
                h = hits.get(k)
                if h is None:
                    h = hits[k] = sum(map(ge, top_grades[:k], repeat(min_grade)))
                if name == "R":
                    v = h / n_rel if n_rel else None
                elif actual:
                    n = min(k, len(ranking))
                    v = h / n if n else 0.0
                else:
                    v = h / k
            elif name == "nDCG":
                v = None
                if n_rel:
                    if k not in ideal:
                        ideal[k] = dcg(sorted(grades.values(), reverse=True), k, gain)
                    if ideal[k] > 0:
                        v = dcg(top_grades, k, gain) / ideal[k]
            else:
                v = sum(map(grades.__contains__, top[:k])) / k
            values[key] = v
        results.append(QueryResult(qid, OK if n_rel else NO_RELEVANT, qid in rankings, n_rel, values))
        if n_rel:
            counted += 1
            for key, v in values.items():
                sums[key] += v  # all defined for an ok question
        else:
            excluded.append(qid)
    means = {key: (total / counted if counted else None) for key, total in sums.items()}
    return Evaluation(results, means, counted, excluded)


def irrelevant_top(
    gold_queries: dict[str, dict[str, int]],
    rankings: dict[str, list[str]],
    k: int,
    min_grade: int,
) -> tuple[list[str], list[bool]]:
    """The first half of :func:`irrelevant_by_type`, which needs no corpus
    (so it runs while the corpus is still being read): every top-k position
    of a gold question that holds a document not relevant to it (judged below
    ``min_grade``, or unjudged), as the document ids, and for each whether it
    is unjudged. Grades are never negative, so -1 stands for unjudged."""
    irrelevant: list[str] = []
    unjudged: list[bool] = []
    empty: list[str] = []
    for qid, grades in gold_queries.items():
        top = rankings.get(qid, empty)[:k]
        gs = list(map(grades.get, top, repeat(-1)))
        low = list(map(gt, repeat(min_grade), gs))
        irrelevant += compress(top, low)
        unjudged += compress(map(eq, gs, repeat(-1)), low)
    return irrelevant, unjudged


def irrelevant_by_type(irrelevant: list[str], unjudged: list[bool], corpus) -> list[dict]:
    """Which kinds of documents crowd out the right ones: per document type,
    how many top-k positions (over all questions) hold a document that is not
    relevant to the question, and how many of those are unjudged (the lists
    of :func:`irrelevant_top`; ``corpus.type_counts`` counts them)."""
    counts, unjudged_counts = corpus.type_counts(irrelevant, unjudged)
    total = len(irrelevant)
    rows = [
        {"type": t, "irrelevant": n, "unjudged": unjudged_counts.get(t, 0), "share": n / total}
        for t, n in counts.items()
    ]
    rows.sort(key=lambda r: (-r["irrelevant"], r["type"]))
    return rows
