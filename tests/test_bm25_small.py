"""The BM25 scorer's two paths (Python lists for a small index, numpy arrays
for a large one) give the same index and the same scores, bit for bit, and
the same rankings, ties included; which one runs follows the index's size
and the work done so far."""

from __future__ import annotations

import random

import pytest

from rag_corpus_check.retrieval import bm25
from rag_corpus_check.retrieval.bm25 import BM25Index, BM25Params


def _index(docs: dict[str, str], monkeypatch, small: bool, **params) -> BM25Index:
    monkeypatch.setattr(bm25, "SMALL_POSTINGS", 10**12 if small else -1)
    idx = BM25Index(BM25Params(**params))
    for doc_id, text in docs.items():
        idx.add(doc_id, text)
    return idx.finish()


def _corpus(rnd: random.Random) -> dict[str, str]:
    """Random documents over a small vocabulary, some of them copies of
    others (equal scores: ties at every depth)."""
    vocab = [f"w{i}" for i in range(rnd.randint(2, 200))]
    docs: dict[str, str] = {}
    for _ in range(rnd.randint(1, 300)):
        text = " ".join(rnd.choices(vocab, k=rnd.randint(1, 30)))
        if docs and rnd.random() < 0.3:
            text = rnd.choice(list(docs.values()))
        docs[f"d{rnd.randint(0, 10**6):07d}"] = text
    return docs


@pytest.mark.parametrize("seed", range(12))
def test_both_paths_score_and_rank_bit_for_bit(monkeypatch, seed):
    rnd = random.Random(seed)
    docs = _corpus(rnd)
    params = {"k1": rnd.choice([1.2, 0.9, 2.0]), "b": rnd.choice([0.75, 0.0, 1.0])}
    small, large = _index(docs, monkeypatch, True, **params), _index(docs, monkeypatch, False, **params)
    assert isinstance(small._csr[1], list) and not isinstance(large._csr[1], list)
    offsets, rows, weights = large._csr
    assert small._csr == (offsets, rows.tolist(), weights.tolist())  # == on floats: bit for bit
    vocab = sorted({t for text in docs.values() for t in text.split()}) + ["absent"]
    tied = 0
    for _ in range(60):
        query = " ".join(rnd.choices(vocab, k=rnd.randint(0, 10)))
        depth = rnd.randint(1, 40)
        got, want = small.search_scored(query, depth), large.search_scored(query, depth)
        assert got == want, query
        assert all(type(s) is float for _, s in got)
        scores = [s for _, s in got]
        tied += len(scores) != len(set(scores))
    assert small.work == large.work
    assert tied > 0  # the ties were exercised


def test_a_small_index_turns_to_numpy_once_its_work_passes_the_threshold(monkeypatch):
    docs = {f"d{i:04d}": f"common word t{i % 7}" for i in range(500)}
    reference = _index(docs, monkeypatch, False)
    idx = _index(docs, monkeypatch, True)
    monkeypatch.setattr(bm25, "SMALL_WORK", 2_500)
    queries = ["common", "t3 word", "t3", "word common t1", "t6"]
    for q in queries:
        assert idx.search_scored(q, 50) == reference.search_scored(q, 50), q
    assert not isinstance(idx._csr[1], list)  # 500 postings + 500 candidates a question: past 2,500
    assert idx.work == reference.work


def test_the_path_follows_the_index_size():
    def built(n_docs: int) -> BM25Index:
        idx = BM25Index()
        for i in range(n_docs):
            idx.add(f"d{i}", f"t{i} u{i}")  # two postings a document
        return idx.finish()

    assert isinstance(built(bm25.SMALL_POSTINGS // 2)._csr[1], list)
    assert not isinstance(built(bm25.SMALL_POSTINGS // 2 + 1)._csr[1], list)


def test_weigh_is_the_same_on_floats_and_arrays():
    np = pytest.importorskip("numpy")
    idf, tf, norm = [0.3, 1.7, 2.2], [1.0, 3.0, 7.0], [0.9, 1.31, 2.05]
    floats = [bm25.weigh(i, t, n) for i, t, n in zip(idf, tf, norm, strict=True)]
    assert bm25.weigh(np.array(idf), np.array(tf), np.array(norm)).tolist() == floats
    assert floats == [i * t / (t + n) for i, t, n in zip(idf, tf, norm, strict=True)]
