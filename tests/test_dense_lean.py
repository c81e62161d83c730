"""What a dense check holds and reads, counted (no clock): the corpus read by
the fast reader when it is usual (the exact one otherwise, with the same
lines in messages), 32 bytes and an id per served record, the vectors read
block by block into one buffer (not kept mapped), a search whose memory is
that of its blocks whatever the number of rows, and candidates that do not
depend on the block size."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from conftest import check
from rag_corpus_check.inputs import corpus as exact_corpus
from rag_corpus_check.retrieval.dense import search as S
from rag_corpus_check.retrieval.dense.npy import load, row_blocks
from rag_corpus_check.retrieval.dense.ranker import DenseRanker
from rag_corpus_check.retrieval.dense.trust import text_digest
from rag_corpus_check.safe_io import InputError
from support.repos import edit
from support.vectors import dense_config, embed_kb


def test_a_dense_check_reads_a_usual_corpus_with_the_fast_reader(kb, tmp_path, capsys, monkeypatch):
    embed_kb(kb)
    dense_config(kb)
    expected = check(tmp_path / "a", capsys)
    assert expected[0] == 0, expected[1]

    def refuse(*args, **kwargs):
        raise AssertionError("the exact corpus reader was used")

    monkeypatch.setattr(exact_corpus, "read_corpus", refuse)
    code, text, results, _ = check(tmp_path / "b", capsys)
    assert code == 0, text
    assert results["queries"] == expected[2]["queries"] and results["metrics"] == expected[2]["metrics"]


def test_an_unusual_corpus_is_read_exactly_with_the_same_lines(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb)
    edit(kb / "corpus.jsonl", "Standard at $0.018 per GB-month", "Standard at $0.020 per GB-month")
    raw = (kb / "corpus.jsonl").read_text()
    (kb / "corpus.jsonl").write_text("\n" + raw)  # a blank first line: the fast reader gives up
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    first = [p for p in results["problems"] if p["severity"] == "error"][0]
    assert (first["file"], first["line"], first["id"]) == ("corpus.jsonl", 2, "faq-001")
    assert "stale vector" in first["message"]


class _Config:
    vectors, base_dir, embed = "vectors", ".", ("text",)  # no store.json there: the committed-vectors layout

    class bm25:
        statuses = ("active",)


def test_the_ranker_keeps_an_id_and_32_bytes_per_served_record():
    ranker = DenseRanker(_Config, ".")  # type: ignore[arg-type]
    records = [(("id", "a"), ("text", "x" * 10_000)), (("id", "b"), ("text", "y"), ("status", "stale")),
               (("id", "c"), ("text", "z"))]
    ranker.block(1, records, ["a", "b", "c"])
    assert ranker.ids == ["a", "c"] and bytes(ranker.digests) == text_digest("x" * 10_000) + text_digest("z")
    assert set(vars(ranker)) == {"cfg", "root", "stored", "supply", "ids", "digests", "vectors", "base_note", "sources",
                                 "pending", "failures", "counts"}
    assert ranker.pending == {}  # no text is kept (a store keeps the texts it lacks, to embed them)
    ranker.clear()
    assert ranker.ids == [] and not ranker.digests
    ranker.add("d", {"id": "d", "text": "w"})
    assert ranker.ids == ["d"] and bytes(ranker.digests) == text_digest("w")


def _npy(tmp_path, rows: int, dims: int = 16, seed: int = 0):
    path = tmp_path / f"m{rows}.npy"
    np.save(path, np.random.default_rng(seed).standard_normal((rows, dims)).astype("<f2"))
    return load(str(path), path.name, 1 << 40)


def test_row_blocks_read_the_file_into_one_buffer(tmp_path):
    array = _npy(tmp_path, 1000)
    seen, first = [], None
    for start, rows in row_blocks(array, 64):
        assert np.array_equal(rows, array[start:start + 64]) and not isinstance(rows, np.memmap)
        first = rows if first is None else first
        assert np.shares_memory(rows, first)  # the same buffer, refilled: not pages of the map
        seen.append(start)
    assert seen == list(range(0, 1000, 64))
    sliced = [start for start, _ in row_blocks(array[:100], 64)]  # not the whole file: read through the map
    assert sliced == [0, 64]


def test_a_file_cut_while_it_is_read_is_an_input_error(tmp_path):
    array = _npy(tmp_path, 1000)
    with open(array.filename, "r+b") as f:
        f.truncate(array.offset + 100 * 16 * 2)
    with pytest.raises(InputError) as info:
        list(row_blocks(array, 64))
    assert "changed while it was read" in info.value.message


def _peak(array, questions: np.ndarray, depth: int) -> int:
    search = S.DenseSearch(array, [f"d{i}" for i in range(len(array))], np.arange(len(array)), 10**12)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        search.rank(questions, depth)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_search_memory_is_its_blocks_not_the_matrix(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "SCORE_BYTES", 64 * 1024)  # 512 rows × 16 questions of scores per block
    questions = np.random.default_rng(1).standard_normal((16, 16)).astype("<f2")
    small, big = _npy(tmp_path, 20_000), _npy(tmp_path, 80_000)
    peak_small, peak_big = _peak(small, questions, 10), _peak(big, questions, 10)
    assert peak_big < big.nbytes / 4  # 2.56 MB of vectors: never held, as float16 nor as float64
    assert peak_big < 1.3 * peak_small + 50_000  # four times the rows, about the same memory (the ids aside)


def test_candidates_do_not_depend_on_the_block_size(monkeypatch):
    rng = np.random.default_rng(11)
    docs = np.concatenate([rng.standard_normal((500, 8)), np.ones((40, 8))]).astype("<f4")
    questions = np.concatenate([rng.standard_normal((6, 8)), np.ones((1, 8))]).astype("<f4")
    keys = [f"d{i:03d}" for i in range(len(docs))]
    whole = S.DenseSearch(docs, keys, np.arange(len(docs)), 10**9)
    expected = whole.rank(questions, 20)
    for rows, score_bytes in ((7, 8 * 7 * 7), (30, 1 << 20), (1, 8 * 7)):
        monkeypatch.setattr(S, "block_rows", lambda array, n=rows: n)
        monkeypatch.setattr(S, "SCORE_BYTES", score_bytes)
        search = S.DenseSearch(docs, keys, np.arange(len(docs)), 10**9)
        assert search.rank(questions, 20) == expected
        assert search.work == whole.work  # exactly the rows within MARGIN of each depth-th best


def test_the_pool_keeps_exactly_the_rows_near_the_depth_th_best():
    rng = np.random.default_rng(3)
    scores = rng.standard_normal((5, 300))
    scores[2, 100:140] = scores[2].max()  # 40 rows tied at the top
    pool = S._Pool(5, 10)
    for start in range(0, 300, 37):
        pool.offer(start, np.ascontiguousarray(scores[:, start:start + 37]))
    q, rows, _ = pool.prune()
    for j in range(5):
        kth = np.sort(scores[j])[::-1][9]
        assert sorted(rows[q == j].tolist()) == np.flatnonzero(scores[j] >= kth - S.MARGIN).tolist()


def test_the_bench_data_shape_is_what_the_fast_index_reader_takes(tmp_path):
    # bench/dense.py and the embed subcommand write the index with json.dumps defaults
    line = json.dumps({"id": "d0000001", "sha256": "0" * 64}) + "\n"
    from rag_corpus_check.retrieval.dense.index import read_index
    from rag_corpus_check.safe_io import Limits

    (tmp_path / "i.jsonl").write_text(line)
    ids, digests = read_index(str(tmp_path / "i.jsonl"), "i.jsonl", Limits(), None, "id")
    assert ids == ["d0000001"] and bytes(digests) == bytes(32)
