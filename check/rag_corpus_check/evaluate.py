"""Per-question records and the means over questions, in one place."""

from __future__ import annotations

from dataclasses import dataclass

from rag_corpus_check.measures import (
    Measure,
    judged_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)

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
    left out of every mean, so all means are over the same questions."""
    results = []
    sums = {str(m): 0.0 for m in measures}
    counted = 0
    excluded = []
    for qid in sorted(gold_queries):
        grades = gold_queries[qid]
        ranking = rankings.get(qid, [])
        n_rel = sum(1 for g in grades.values() if g >= min_grade)
        status = OK if n_rel else NO_RELEVANT
        values: dict[str, float | None] = {}
        for m in measures:
            if m.name == "P":
                v = precision_at_k(ranking, grades, m.k, min_grade, short_list)
            elif m.name == "R":
                v = recall_at_k(ranking, grades, m.k, min_grade)
            elif m.name == "nDCG":
                v = ndcg_at_k(ranking, grades, m.k, gain) if n_rel else None
            else:
                v = judged_at_k(ranking, grades, m.k)
            values[str(m)] = v
        results.append(QueryResult(qid, status, qid in rankings, n_rel, values))
        if status == OK:
            counted += 1
            for key, v in values.items():
                sums[key] += v  # all defined for an ok question
        else:
            excluded.append(qid)
    means = {key: (total / counted if counted else None) for key, total in sums.items()}
    return Evaluation(results, means, counted, excluded)


def irrelevant_by_type(
    gold_queries: dict[str, dict[str, int]],
    rankings: dict[str, list[str]],
    k: int,
    min_grade: int,
    doc_type: dict[str, str | None],
) -> list[dict]:
    """Which kinds of documents crowd out the right ones: per document type,
    how many top-k positions (over all questions) hold a document that is not
    relevant to the question (judged below ``min_grade``, or unjudged)."""
    counts: dict[str, list[int]] = {}
    total = 0
    for qid, grades in gold_queries.items():
        for d in rankings.get(qid, [])[:k]:
            g = grades.get(d)
            if g is not None and g >= min_grade:
                continue
            t = doc_type.get(d) or "(no type)"
            c = counts.setdefault(t, [0, 0])
            c[0] += 1
            if g is None:
                c[1] += 1
            total += 1
    rows = [
        {"type": t, "irrelevant": n, "unjudged": u, "share": n / total if total else 0.0}
        for t, (n, u) in counts.items()
    ]
    rows.sort(key=lambda r: (-r["irrelevant"], r["type"]))
    return rows
