"""The exact cosine search (rag_corpus_check.retrieval.dense.search): the same
top-depth as a brute-force numpy ranking, near-equal scores ordered by their
exact values (not by the last bits of a BLAS product), exact ties by id, and
the same result whatever the block sizes."""

from __future__ import annotations

import contextlib
import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_corpus_check.retrieval.bm25 import Budget
from rag_corpus_check.retrieval.dense import search as S
from rag_corpus_check.retrieval.dense.fusion import rrf, rrf_scores


def searcher(docs: np.ndarray, keys: list[str], eligible=None, max_work: int = 10**9) -> S.DenseSearch:
    rows = np.arange(len(docs)) if eligible is None else np.array(eligible, dtype=np.int64)
    return S.DenseSearch(docs, keys, rows, max_work)


def brute_force(docs: np.ndarray, keys: list[str], questions: np.ndarray, depth: int) -> list[list[str]]:
    """The oracle: float64 cosines with numpy, sorted by (-score, id)."""
    d = docs.astype(np.float64)
    d /= np.linalg.norm(d, axis=1)[:, None]
    out = []
    for q in questions.astype(np.float64):
        scores = d @ (q / np.linalg.norm(q))
        order = sorted(range(len(keys)), key=lambda i: (-scores[i], keys[i]))
        out.append([keys[i] for i in order[:depth]])
    return out


@pytest.mark.parametrize("dtype", ["<f4", "<f2"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_a_brute_force_numpy_ranking(dtype, seed):
    rng = np.random.default_rng(seed)
    docs = rng.standard_normal((300, 24)).astype(dtype)
    questions = rng.standard_normal((25, 24)).astype(dtype)
    keys = [f"doc-{i:04d}" for i in rng.permutation(300)]
    for depth in (1, 10, 100, 300, 500):
        assert searcher(docs, keys).rank(questions, depth) == brute_force(docs, keys, questions, depth)


def test_the_same_with_tiny_blocks_and_batches(monkeypatch):
    rng = np.random.default_rng(7)
    docs = rng.standard_normal((257, 16)).astype("<f4")
    questions = rng.standard_normal((9, 16)).astype("<f4")
    keys = [f"d{i}" for i in range(257)]
    whole = searcher(docs, keys).rank(questions, 20)
    monkeypatch.setattr(S, "block_rows", lambda array: 5)
    monkeypatch.setattr(S, "SCORE_BYTES", 8 * 257 * 2)  # two questions at a time
    assert searcher(docs, keys).rank(questions, 20) == whole


def test_near_equal_scores_are_ordered_by_their_exact_values():
    # cos(q, [1, e]) = 1/sqrt(1 + e²): for e = 2^-20 and 2^-21 the two differ by
    # about 3.4e-13, past the 12th digit, and b (smaller e) is the closer one.
    docs = np.array([[1.0, 2.0**-20], [1.0, 2.0**-21], [1.0, -(2.0**-20)]], dtype="<f4")
    q = np.array([[1.0, 0.0]], dtype="<f4")
    a = 1 / math.sqrt(1 + 2.0**-40)
    b = 1 / math.sqrt(1 + 2.0**-42)
    assert 0 < b - a < 1e-12
    assert searcher(docs, ["a", "b", "c"]).rank(q, 3) == [["b", "a", "c"]]  # a and c tie exactly: by id


def test_exact_cosine_is_fsum_over_exact_products():
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(384).astype("<f4").tolist() for _ in range(2))
    na, nb = S.exact_norm(a), S.exact_norm(b)
    assert S.exact_cosine(a, na, b, nb) == math.fsum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)
    assert S.exact_cosine(a[::-1], na, b[::-1], nb) == S.exact_cosine(a, na, b, nb)  # order-free


def test_ties_are_broken_by_id_text_order():
    docs = np.ones((4, 3), dtype="<f4")
    q = np.array([[1.0, 2.0, 3.0]], dtype="<f4")
    assert searcher(docs, ["b", "a", "B", "ä"]).rank(q, 4) == [["B", "a", "b", "ä"]]


def test_only_eligible_rows_are_ranked():
    rng = np.random.default_rng(5)
    docs = rng.standard_normal((50, 8)).astype("<f4")
    q = rng.standard_normal((3, 8)).astype("<f4")
    keys = [f"d{i:02d}" for i in range(50)]
    even = list(range(0, 50, 2))
    got = searcher(docs, keys, even).rank(q, 10)
    expected = brute_force(docs[even], [keys[i] for i in even], q, 10)
    assert got == expected
    assert searcher(docs, keys, []).rank(q, 10) == [[], [], []]


def near_tie_rows(n: int = 90) -> np.ndarray:
    """Distinct rows whose cosines with [1, 0] are all within 1e-9 of each other (and of 1)."""
    return np.array([[1.0, k * 2.0**-21] for k in range(-n, n)], dtype="<f4")


def test_near_ties_at_the_cut_are_bounded_work():
    docs = near_tie_rows()
    q = np.array([[1.0, 0.0]], dtype="<f4")
    keys = [f"d{i}" for i in range(len(docs))]
    with pytest.raises(Budget) as info:
        searcher(docs, keys, max_work=(len(docs) - 1) * (2 + S.CANDIDATE_WORK)).rank(q, 10)
    assert info.value.limit == "max_retrieval_work"
    assert searcher(docs, keys, max_work=len(docs) * (2 + S.CANDIDATE_WORK)).rank(q, 10) == exact_oracle(docs, keys, q, 10)


def test_rrf_is_the_formula():
    bm25, dense = ["a", "b", "c"], ["c", "d", "a"]
    scores = rrf_scores([bm25, dense], 60, 3)
    assert scores == {"a": 1 / 61 + 1 / 63, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 62}
    assert rrf([bm25, dense], 60, 3) == ["a", "c", "b"]  # a and c tie exactly, b and d too: by id
    assert rrf_scores([bm25, dense], 60, 2) == {"a": 1 / 61, "b": 1 / 62, "c": 1 / 61, "d": 1 / 62}  # cut first
    assert rrf([bm25, dense], 60, 2) == ["a", "c"]


def exact_oracle(docs: np.ndarray, keys: list[str], questions: np.ndarray, depth: int) -> list[list[str]]:
    """Every document rescored with the exact cosine, sorted by (-score, id)."""
    rows = [d.tolist() for d in docs]
    norms = [S.exact_norm(r) for r in rows]
    out = []
    for q in questions:
        ql = q.tolist()
        nq = S.exact_norm(ql)
        order = sorted(range(len(keys)), key=lambda i: (-S.exact_cosine(rows[i], norms[i], ql, nq), keys[i]))
        out.append([keys[i] for i in order[:depth]])
    return out


def near_ties(seed: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Random rows and runs of rows whose cosines with the questions differ past the 12th digit."""
    rng = np.random.default_rng(seed)
    spread = np.array([[1.0, k * 2.0**-21, 0.0, 0.0] for k in rng.integers(-6, 6, 60)], dtype="<f4")
    docs = np.concatenate([rng.standard_normal((120, 4)).astype("<f4"), spread, spread[:10]])
    questions = np.concatenate([[[1.0, 0.0, 0.0, 0.0]], rng.standard_normal((5, 4))]).astype("<f4")
    return docs, questions, [f"k{i:03d}" for i in rng.permutation(len(docs))]


@pytest.mark.parametrize("seed", [0, 1])
def test_only_near_equal_runs_are_rescored_and_the_order_is_exact(seed):
    docs, questions, keys = near_ties(seed)
    for depth in (1, 5, 30, 100, 400):
        assert searcher(docs, keys).rank(questions, depth) == exact_oracle(docs, keys, questions, depth)


def test_another_blas_cannot_reorder(monkeypatch):
    # Approximate scores off by up to the proven error bound (2.3e-11), as on
    # another BLAS build or CPU: the ranking stays the exact one.
    docs, questions, keys = near_ties(2)
    expected = exact_oracle(docs, keys, questions, 50)
    blocks = S.DenseSearch._blocks
    rng = np.random.default_rng(9)

    def noisy(self, unit):
        for start, scores in blocks(self, unit):
            yield start, scores + rng.uniform(-2.3e-11, 2.3e-11, scores.shape)

    monkeypatch.setattr(S.DenseSearch, "_blocks", noisy)
    for _ in range(5):
        assert searcher(docs, keys).rank(questions, 50) == expected


# ---------------------------------------------------------------- ties are work, bounded by the input


def counting_rescores(monkeypatch) -> list[int]:
    """Counts the exact cosines computed (the Python rescoring, ``d`` products each)."""
    calls = [0]
    real = S.DenseSearch._cosine

    def counted(self, row, q, nq):
        calls[0] += 1
        return real(self, row, q, nq)

    monkeypatch.setattr(S.DenseSearch, "_cosine", counted)
    return calls


def test_all_equal_vectors_cost_depth_per_question_not_every_document(monkeypatch):
    # 1-D float16 vectors all equal: every document ties with every other for
    # every question. Before: each question kept and rescored all of them
    # (docs × questions exact cosines, 30 CPU-s and 1 GB from 997 KB of input).
    docs, questions, depth = 2000, 300, 5
    keys = [f"d{i}" for i in range(docs)]
    calls = counting_rescores(monkeypatch)
    search = searcher(np.ones((docs, 1), dtype="<f2"), keys)
    got = search.rank(np.ones((questions, 1), dtype="<f2"), depth)
    assert got == [sorted(keys)[:depth]] * questions
    assert calls[0] <= depth * questions, calls[0]
    assert search.work <= questions * depth * (1 + S.CANDIDATE_WORK), search.work


def test_duplicate_vectors_among_others_keep_the_exact_order(monkeypatch):
    # Copies of a few vectors among random ones: the copies of one vector tie
    # exactly (by id); each distinct vector is rescored once per question.
    rng = np.random.default_rng(11)
    base = rng.standard_normal((6, 8)).astype("<f4")
    docs = np.concatenate([rng.standard_normal((200, 8)).astype("<f4"), base[rng.integers(0, 6, 1500)]])
    questions = np.concatenate([base, rng.standard_normal((20, 8)).astype("<f4")])
    keys = [f"k{i:05d}" for i in rng.permutation(len(docs))]
    calls = counting_rescores(monkeypatch)
    for depth in (1, 7, 40):
        assert searcher(docs, keys).rank(questions, depth) == exact_oracle(docs, keys, questions, depth)
    assert calls[0] <= 3 * 40 * len(questions), calls[0]


def test_near_ties_are_work_per_input_byte():
    # Distinct vectors all within 1e-9 of each other need rescoring one by
    # one: that work is bounded by the input's size (a `limit` problem).
    docs = near_tie_rows()
    q = np.ones((40, 2), dtype="<f4") * np.array([1.0, 0.0], dtype="<f4")
    keys = [f"d{i}" for i in range(len(docs))]
    per_question = len(docs) * (2 + S.CANDIDATE_WORK)
    search = S.DenseSearch(docs, keys, np.arange(len(docs)), 10**9, work_allowed=per_question * 10, input_bytes=1000)
    with pytest.raises(Budget) as info:
        search.rank(q, 5)
    assert info.value.limit == "max_retrieval_work_per_byte"
    assert search.work <= per_question * 10
    roomy = S.DenseSearch(docs, keys, np.arange(len(docs)), 10**9, work_allowed=per_question * 40, input_bytes=1000)
    assert roomy.rank(q, 5) == exact_oracle(docs, keys, q, 5)


# ---------------------------------------------------------------- property: the same ranking as a brute force


def plain_brute_force(docs: np.ndarray, keys: list[str], eligible: list[int], questions: np.ndarray,
                      depth: int) -> list[list[str]]:
    """float64 cosines, sorted by (-score, id). The vectors hold small
    integers, so every dot product and squared norm is an exact integer and
    ``dot / (sqrt(|a|²)·sqrt(|q|²))`` is the exact cosine, bit for bit."""
    d = docs.astype(np.float64)
    out = []
    for q in questions.astype(np.float64):
        score = {i: float(d[i] @ q) / (math.sqrt(float(d[i] @ d[i])) * math.sqrt(float(q @ q))) for i in eligible}
        out.append([keys[i] for i in sorted(eligible, key=lambda i: (-score[i], keys[i]))[:depth]])
    return out


@st.composite
def tied_inputs(draw):
    """Documents drawn from a few small-integer vectors (many exact copies,
    sometimes all equal), ids in any order (upper case, accents), a subset
    eligible, questions, a depth."""
    dims = draw(st.integers(1, 4))
    vector = st.lists(st.integers(-3, 3), min_size=dims, max_size=dims).filter(any)
    palette = draw(st.lists(vector, min_size=1, max_size=1 if draw(st.booleans()) else 6))
    n = draw(st.integers(1, 60))
    docs = np.array([palette[i] for i in draw(st.lists(st.integers(0, len(palette) - 1), min_size=n, max_size=n))],
                    dtype=draw(st.sampled_from(["<f2", "<f4"])))
    names = draw(st.lists(st.text("abAB\u00e4\u00e9", min_size=1, max_size=3), min_size=n, max_size=n, unique=True))
    eligible = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1)))
    questions = np.array(draw(st.lists(st.one_of(st.sampled_from(palette), vector), min_size=1, max_size=5)),
                         dtype=docs.dtype)
    return docs, names, eligible, questions, draw(st.integers(1, 70))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(tied_inputs(), st.booleans(), st.booleans())
def test_ties_rank_as_a_plain_brute_force(case, tiny_blocks, collapse_at_once):
    docs, keys, eligible, questions, depth = case
    with contextlib.ExitStack() as patches:
        if tiny_blocks:
            patches.enter_context(mock.patch.object(S, "block_rows", lambda array: 3))
        if collapse_at_once:
            patches.enter_context(mock.patch.object(S, "CROWDED", 0))
        got = searcher(docs, keys, eligible).rank(questions, depth)
    assert got == plain_brute_force(docs, keys, eligible, questions, depth)
