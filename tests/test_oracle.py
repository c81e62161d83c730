"""Cross-check against trec_eval (pytrec-eval-terrier, a test-only oracle).

A few hundred generated questions with short rankings, unjudged documents,
grade-0 labels and questions without any relevant document. Per question,
P@k, recall@k and nDCG@k must equal trec_eval's to 1e-9 for k in
{1, 3, 5, 10, 20}. The JSONL run is an ordered list; trec_eval orders by
score, so each ranked document gets score = -position (no ties).
"""

import random

import pytest
import pytrec_eval  # test-only oracle; installed by `make test`

from rag_corpus_check.metrics.evaluate import evaluate
from rag_corpus_check.metrics.measures import Measure, Options

KS = (1, 3, 5, 10, 20)


def _generate(seed=20261130, n_queries=300, n_docs=400):
    rnd = random.Random(seed)
    docs = [f"d{i:04d}" for i in range(n_docs)]
    gold, runs = {}, {}
    for q in range(n_queries):
        qid = f"q{q:04d}"
        judged = rnd.sample(docs, rnd.randint(1, 30))
        grades = {}
        for d in judged:
            grades[d] = rnd.choices([0, 1, 2, 3], weights=[5, 3, 2, 1])[0]
        if q % 17 == 0:  # no relevant document at all
            grades = {d: 0 for d in grades}
        gold[qid] = grades
        length = rnd.choice([0, 1, 2, 4, 7, 12, 25, 40])  # short lists included
        pool = judged + rnd.sample(docs, 40)  # unjudged documents too
        rnd.shuffle(pool)
        ranking = list(dict.fromkeys(pool))[:length]
        if q % 29 == 0:
            continue  # question missing from the run
        runs[qid] = ranking
    return gold, runs


def test_matches_trec_eval_per_query():
    pytrec = pytrec_eval
    gold, runs = _generate()
    measures = [Measure(n, k) for k in KS for n in ("P", "R", "nDCG")]
    ours = evaluate(gold, runs, measures)
    trec_run = {q: {d: float(-i) for i, d in enumerate(r, 1)} for q, r in runs.items()}
    # trec_eval skips questions with no ranked documents; score those as empty.
    trec_run = {q: r for q, r in trec_run.items() if r}
    names = {f"P_{k}" for k in KS} | {f"recall_{k}" for k in KS} | {f"ndcg_cut_{k}" for k in KS}
    theirs = pytrec.RelevanceEvaluator(gold, names).evaluate(trec_run)
    compared = 0
    for q in ours.queries:
        t = theirs.get(q.query_id)
        for k in KS:
            p, r, n = (q.values[Measure(m, k)] for m in ("P", "R", "nDCG"))
            if t is None:  # empty or missing ranking: everything is 0 / undefined
                assert p == 0.0
                assert r in (0.0, None) and n in (0.0, None)
                continue
            assert p == pytest.approx(t[f"P_{k}"], abs=1e-9), (q.query_id, k)
            if q.status == "ok":
                assert r == pytest.approx(t[f"recall_{k}"], abs=1e-9), (q.query_id, k)
                assert n == pytest.approx(t[f"ndcg_cut_{k}"], abs=1e-9), (q.query_id, k)
                compared += 3
            else:
                assert r is None and n is None
                # trec_eval reports 0 here; we report "no relevant documents".
                assert t[f"recall_{k}"] == 0.0
    assert compared > 3000  # the comparison really ran over many values


def test_generated_data_covers_the_edge_cases():
    gold, runs = _generate()
    assert any(not any(g >= 1 for g in gr.values()) for gr in gold.values())
    assert any(len(r) < 5 for r in runs.values())
    assert any(q not in runs for q in gold)
    assert any(any(d not in gold[q] for d in r) for q, r in runs.items())
    assert any(0 in gr.values() for gr in gold.values())


NEW_KS = (1, 3, 5, 10, 20, 100)


@pytest.mark.parametrize("min_grade", [1, 2])
def test_rr_success_ap_rprec_match_trec_eval_per_query(min_grade):
    """RR@k (recip_rank on the run cut at k), Success@k (success_k), AP@k
    (map_cut_k) and Rprec equal trec_eval's per question, to 1e-9, over short
    lists, unjudged documents, grade-0 labels and questions missing from the run."""
    gold, runs = _generate()
    measures = [Measure(n, k) for k in NEW_KS for n in ("RR", "Success", "AP")] + [Measure("Rprec", 0)]
    ours = {q.query_id: q for q in evaluate(gold, runs, measures, Options(min_grade=min_grade)).queries}
    ks = ",".join(map(str, NEW_KS))
    full = {q: {d: float(-i) for i, d in enumerate(r, 1)} for q, r in runs.items() if r}
    theirs = pytrec_eval.RelevanceEvaluator(gold, {f"success.{ks}", f"map_cut.{ks}", "Rprec"},
                                            relevance_level=min_grade).evaluate(full)
    cut = {k: pytrec_eval.RelevanceEvaluator(gold, {"recip_rank"}, relevance_level=min_grade).evaluate(
        {q: {d: s for d, s in r.items() if -s <= k} for q, r in full.items()}) for k in NEW_KS}
    compared = 0
    for qid, q in ours.items():
        t = theirs.get(qid)
        if q.status != "ok":
            assert q.values[Measure("Rprec", 0)] is None and q.values[Measure("AP", 1)] is None
            continue
        for k in NEW_KS:
            want = {"RR": cut[k][qid]["recip_rank"], "Success": t[f"success_{k}"],
                    "AP": t[f"map_cut_{k}"]} if t else {"RR": 0.0, "Success": 0.0, "AP": 0.0}
            for name, value in want.items():
                assert q.values[Measure(name, k)] == pytest.approx(value, abs=1e-9), (qid, name, k)
                compared += 1
        assert q.values[Measure("Rprec", 0)] == pytest.approx(t["Rprec"] if t else 0.0, abs=1e-9), qid
        compared += 1
    assert compared > 4000, compared


def test_the_new_measures_see_the_edge_cases():
    """The comparison above is not vacuous: values differ from 0 and 1, and
    some questions have more relevant documents than the longest cut."""
    gold, runs = _generate()
    measures = [Measure("RR", 10), Measure("AP", 10), Measure("Rprec", 0)]
    values = [q.values for q in evaluate(gold, runs, measures).queries if q.status == "ok"]
    for m in measures:
        assert len({v[m] for v in values}) > 5, m
