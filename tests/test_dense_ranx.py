"""Hybrid retrieval equals ranx's ``fuse(method="rrf")`` on the same two runs
(the built-in BM25's and the dense one, each cut at depth): on random
rankings and on the bundled example's three `retrieve` runs."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import yaml

from rag_corpus_check.retrieval.dense.fusion import rrf, rrf_scores
from support.vectors import dense_config, embed_kb

ranx = pytest.importorskip("ranx")


def as_ranx(rankings: dict[str, list[str]]):
    """A ranx Run whose scores order each ranking as given."""
    return ranx.Run({q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in rankings.items()})


def ranx_rrf(first: dict[str, list[str]], second: dict[str, list[str]], k: int) -> dict[str, dict[str, float]]:
    with warnings.catch_warnings():  # numba's type-safety warnings while it compiles ranx
        warnings.simplefilter("ignore")
        fused = ranx.fuse(runs=[as_ranx(first), as_ranx(second)], method="rrf", params={"k": k})
    return {q: dict(scores) for q, scores in fused.to_dict().items()}


def by_score(scores: dict[str, float], depth: int) -> list[str]:
    return sorted(scores, key=lambda d: (-scores[d], d))[:depth]


def test_random_rankings_fuse_as_ranx_does():
    rng = np.random.default_rng(11)
    ids = [f"doc-{i:03d}" for i in range(150)]
    depth = 40
    first = {f"q{j}": [ids[i] for i in rng.permutation(150)[: rng.integers(1, 60)]] for j in range(30)}
    second = {f"q{j}": [ids[i] for i in rng.permutation(150)[: rng.integers(1, 60)]] for j in range(30)}
    cut = {q: r[:depth] for q, r in first.items()}, {q: r[:depth] for q, r in second.items()}
    expected = ranx_rrf(*cut, k=60)
    for q in first:
        ours = rrf_scores([first[q], second[q]], 60, depth)
        assert ours.keys() == expected[q].keys()
        assert all(ours[d] == pytest.approx(expected[q][d], rel=1e-15) for d in ours)
        assert rrf([first[q], second[q]], 60, depth) == by_score(expected[q], depth)


def _retrieve(kb, tmp_path, kind: str) -> dict[str, list[str]]:
    from rag_corpus_check.commands.cli import main

    dense_config(kb, kind, rrf_k=20)
    if kind == "bm25":  # the same BM25 as hybrid's (no stop words, depth 100)
        cfg = yaml.safe_load((kb / ".rag-corpus-check.yml").read_text())
        cfg["retriever"] = {"type": "bm25", "depth": 100}
        (kb / ".rag-corpus-check.yml").write_text(yaml.safe_dump(cfg))
    out = tmp_path / f"{kind}.jsonl"
    assert main(["retrieve", "--out", str(out)]) == 0
    return {r["query_id"]: r["ranking"] for r in map(json.loads, out.read_text().splitlines())}


def test_the_example_hybrid_run_is_ranx_rrf_of_its_bm25_and_dense_runs(kb, tmp_path, capsys):
    embed_kb(kb)
    hybrid = _retrieve(kb, tmp_path, "hybrid")
    dense = _retrieve(kb, tmp_path, "dense")
    bm25 = _retrieve(kb, tmp_path, "bm25")
    assert bm25 != dense and hybrid not in (bm25, dense)
    fused = ranx_rrf(bm25, dense, k=20)
    assert hybrid == {q: by_score(fused[q], 100) for q in hybrid}
