"""The metric conventions, written out in words (summary, terminal, README)."""

from __future__ import annotations

from rag_corpus_check.config import Config


def convention_lines(cfg: Config) -> list[str]:
    gain = "linear (gain = grade)" if cfg.gain == "linear" else "exponential (gain = 2^grade − 1)"
    short = (
        "a ranking shorter than K is padded with non-relevant positions (P@K divides by K)"
        if cfg.short_list == "pad"
        else "a ranking shorter than K is scored on its actual length (P@K divides by min(K, length))"
    )
    return [
        f"K = {cfg.k}",
        f"relevant = grade ≥ {cfg.min_grade} on the scale 0–{cfg.max_grade}",
        f"nDCG: {gain}, discount 1/log2(position + 1), ideal from all judged grades of the question",
        f"short lists: {short}",
        "documents the gold set does not judge count as grade 0 (Judged@K shows how much of the top-K was judged)",
        "questions with no relevant document are excluded from every mean and listed",
    ]


def conventions_json(cfg: Config) -> dict:
    return {
        "k": cfg.k,
        "gain": cfg.gain,
        "short_list": cfg.short_list,
        "min_grade": cfg.min_grade,
        "max_grade": cfg.max_grade,
        "discount": "1/log2(rank+1)",
        "unjudged": "grade 0",
        "means_over": "questions with at least one relevant document",
    }
