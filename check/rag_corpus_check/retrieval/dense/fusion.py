"""Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009), as ranx's
``fuse(method="rrf")`` computes it: each ranking is cut at ``depth``, a
document's score is ``Σ 1/(rrf_k + rank)`` over the rankings it is in
(rank from 1), and the fused ranking is by score descending, ties by id
(code-point order), cut at ``depth``. With two rankings a score is one
IEEE addition of two terms, which is commutative: equal rank pairs tie
exactly, whatever the order of the rankings."""

from __future__ import annotations


def rrf_scores(rankings: list[list[str]], rrf_k: int, depth: int) -> dict[str, float]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking[:depth], 1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (rrf_k + rank)
    return scores


def rrf(rankings: list[list[str]], rrf_k: int, depth: int) -> list[str]:
    """The fused ranking of ``rankings`` (see the module's docstring)."""
    scores = rrf_scores(rankings, rrf_k, depth)
    return sorted(scores, key=lambda doc_id: (-scores[doc_id], doc_id))[:depth]
