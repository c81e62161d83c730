"""The worked examples of docs/metrics.md (the product contract), verbatim, and the named edge cases."""

import math

import pytest

from rag_corpus_check.metrics.measures import (
    Measure,
    judged_at_k,
    ndcg_at_k,
    parse_measure,
    precision_at_k,
    recall_at_k,
)

# | gold | ranking | K | expected |
SPEC_PRECISION = [
    ({"A": 1, "C": 1}, ["A", "B", "C"], 2, 0.5),
    ({"A": 1, "C": 1}, ["A", "B", "C"], 3, 2 / 3),
    ({"A": 1}, ["A"], 2, 0.5),  # short list, denominator K
]
SPEC_RECALL = [
    ({"A": 1, "C": 1}, ["B", "A", "C"], 2, 0.5),
    ({"A": 1, "C": 1}, ["B", "D", "A"], 2, 0.0),
]


@pytest.mark.parametrize("gold,ranking,k,expected", SPEC_PRECISION, ids=["P@2", "P@3", "short-list"])
def test_spec_precision(gold, ranking, k, expected):
    assert precision_at_k(ranking, gold, k) == expected


@pytest.mark.parametrize("gold,ranking,k,expected", SPEC_RECALL, ids=["R=0.5", "R=0"])
def test_spec_recall(gold, ranking, k, expected):
    assert recall_at_k(ranking, gold, k) == expected


def test_spec_ndcg_ideal_order_is_one():
    assert ndcg_at_k(["A", "B"], {"A": 2, "B": 1, "C": 0}, 2) == 1.0


def test_spec_ndcg_swapped_is_between_zero_and_one():
    v = ndcg_at_k(["B", "A"], {"A": 2, "B": 1, "C": 0}, 2)
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert 0 < v < 1
    assert v == pytest.approx(expected, abs=1e-15)
    assert round(v, 4) == 0.8597


@pytest.mark.parametrize("gold", [{}, {"A": 0, "B": 0}], ids=["empty", "all-zero"])
@pytest.mark.parametrize("ranking", [[], ["A"], ["A", "B", "C"]])
@pytest.mark.parametrize("k", [1, 5])
def test_spec_no_relevant_is_a_status_not_zero(gold, ranking, k):
    assert recall_at_k(ranking, gold, k) is None
    assert ndcg_at_k(ranking, gold, k) is None


@pytest.mark.parametrize("fn", [
    lambda k: precision_at_k(["A"], {"A": 1}, k),
    lambda k: recall_at_k(["A"], {"A": 1}, k),
    lambda k: ndcg_at_k(["A"], {"A": 1}, k),
    lambda k: judged_at_k(["A"], {"A": 1}, k),
], ids=["P", "R", "nDCG", "Judged"])
@pytest.mark.parametrize("k", [0, -1])
def test_k_must_be_positive(fn, k):
    with pytest.raises(ValueError, match="positive"):
        fn(k)


def test_short_list_actual_divides_by_length():
    assert precision_at_k(["A"], {"A": 1}, 2, short_list="actual") == 1.0
    assert precision_at_k([], {"A": 1}, 2, short_list="actual") == 0.0


def test_unjudged_counts_as_zero_and_judged_shows_it():
    grades = {"A": 2}
    assert ndcg_at_k(["X", "A"], grades, 2) == pytest.approx((2 / math.log2(3)) / 2)
    assert judged_at_k(["X", "A"], grades, 2) == 0.5
    assert judged_at_k(["A"], grades, 4) == 0.25  # missing positions are unjudged


def test_exponential_gain():
    grades = {"A": 2, "B": 1}
    lin = ndcg_at_k(["B", "A"], grades, 2, "linear")
    exp = ndcg_at_k(["B", "A"], grades, 2, "exponential")
    assert exp == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert exp != lin


def test_min_grade_changes_relevance():
    grades = {"A": 1, "B": 2}
    assert precision_at_k(["A", "B"], grades, 2, min_grade=2) == 0.5
    assert recall_at_k(["A"], grades, 2, min_grade=2) == 0.0


@pytest.mark.parametrize("name,expected", [("P@5", Measure("P", 5)), ("nDCG@10", Measure("nDCG", 10)),
                                           ("R@1", Measure("R", 1)), ("Judged@20", Measure("Judged", 20))])
def test_parse_measure(name, expected):
    assert parse_measure(name) == expected
    assert str(expected) == name


@pytest.mark.parametrize("bad", ["ndcg@5", "P@0", "P@", "MAP", "P@5 ", "P@05", "P@-1", "nDCG@5\n"])
def test_parse_measure_unknown_lists_valid(bad):
    with pytest.raises(ValueError, match=r"P@k, R@k, nDCG@k, Judged@k, RR@k, Success@k, AP@k and Rprec"):
        parse_measure(bad)


def _reference_dcg(grades_in_order, k, kind):
    from rag_corpus_check.metrics.measures import gain

    return sum(gain(g, kind) / math.log2(i + 2) for i, g in enumerate(grades_in_order[:k]))


def test_evaluate_gives_the_measure_functions_floats_exactly():
    """evaluate() computes all measures from one lookup per question and dcg()
    sums in C; both must give the very floats of the one-measure functions
    and of the textbook DCG loop (== on floats, not a tolerance)."""
    import random

    from rag_corpus_check.metrics.evaluate import evaluate
    from rag_corpus_check.metrics.measures import (
        Measure,
        Options,
        dcg,
        judged_at_k,
        ndcg_at_k,
        precision_at_k,
        recall_at_k,
    )

    rng = random.Random(2026)
    docs = [f"d{i}" for i in range(60)]
    gold = {f"q{i}": {d: rng.choice([0, 0, 1, 2, 3, 7]) for d in rng.sample(docs, rng.randrange(0, 9))}
            for i in range(400)}
    runs = {q: rng.sample(docs, rng.randrange(0, 40)) for q in gold if rng.random() < 0.9}
    measures = [Measure(n, k) for n in ("P", "R", "nDCG", "Judged") for k in (1, 3, 5, 10, 20, 150)]
    for gain_kind in ("linear", "exponential"):
        for min_grade in (1, 2):
            for short in ("pad", "actual"):
                ev = evaluate(gold, runs, measures, Options(min_grade=min_grade, gain=gain_kind, short_list=short))
                for r in ev.queries:
                    g, ranking = gold[r.query_id], runs.get(r.query_id, [])
                    for m in measures:
                        if m.name == "P":
                            want = precision_at_k(ranking, g, m.k, min_grade, short)
                        elif m.name == "R":
                            want = recall_at_k(ranking, g, m.k, min_grade)
                        elif m.name == "nDCG":
                            want = ndcg_at_k(ranking, g, m.k, gain_kind) if r.relevant else None
                        else:
                            want = judged_at_k(ranking, g, m.k)
                        assert r.values[m] == want, (r.query_id, str(m))
    for _ in range(2000):
        gs = [rng.choice([0, 1, 2, 3, 10]) for _ in range(rng.randrange(0, 140))]
        k = rng.randrange(1, 160)
        for kind in ("linear", "exponential"):
            assert dcg(gs, k, kind) == _reference_dcg(gs, k, kind)


def _reference_irrelevant_by_type(gold, rankings, k, min_grade, docs):
    """The table as first written: one loop over every top-k position."""
    counts: dict[str, list[int]] = {}
    total = 0
    for qid, grades in gold.items():
        for d in rankings.get(qid, [])[:k]:
            g = grades.get(d)
            if g is not None and g >= min_grade:
                continue
            doc = docs.get(d)
            t = (doc.type if doc is not None else None) or "(no type)"
            c = counts.setdefault(t, [0, 0])
            c[0] += 1
            if g is None:
                c[1] += 1
            total += 1
    rows = [{"type": t, "irrelevant": n, "unjudged": u, "share": n / total if total else 0.0}
            for t, (n, u) in counts.items()]
    rows.sort(key=lambda r: (-r["irrelevant"], r["type"]))
    return rows


def test_irrelevant_by_type_in_two_passes_equals_the_one_loop():
    """irrelevant_top runs before the corpus is read and irrelevant_by_type
    after; together they give the one-loop table exactly, with unknown ids,
    documents without a type and a type spelled like the no-type label."""
    import random

    from rag_corpus_check.inputs import Corpus, Doc
    from rag_corpus_check.metrics.evaluate import irrelevant_by_type, irrelevant_top

    rng = random.Random(7)
    kinds = [Doc(t, "active", None) for t in (None, "faq", "policy", "(no type)", "howto")]
    seen_unjudged = seen_unknown = False
    for _ in range(300):
        ids = [f"d{i}" for i in range(rng.randrange(1, 40))]
        docs = {d: rng.choice(kinds) for d in ids if rng.random() < 0.9}
        gold = {f"q{i}": {d: rng.choice([0, 1, 2, 3]) for d in rng.sample(ids, rng.randrange(0, len(ids)))}
                for i in range(rng.randrange(0, 12))}
        runs = {q: rng.sample(ids, rng.randrange(0, len(ids))) for q in gold if rng.random() < 0.8}
        k, min_grade = rng.randrange(1, 12), rng.randrange(1, 4)
        got = irrelevant_by_type(*irrelevant_top(gold, runs, k, min_grade), Corpus("c.jsonl", docs=docs))
        assert got == _reference_irrelevant_by_type(gold, runs, k, min_grade, docs)
        seen_unjudged = seen_unjudged or any(r["unjudged"] for r in got)
        seen_unknown = seen_unknown or any(d not in docs for r in runs.values() for d in r[:k])
    assert seen_unjudged and seen_unknown
