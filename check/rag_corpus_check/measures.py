"""Retrieval measures as small pure functions of (ranking, grades, k).

``ranking`` is a list of document ids, best first, without duplicates (the
validator guarantees it). ``grades`` maps judged document ids to integer grades;
a document that is not in ``grades`` is *unjudged* and counts as grade 0.
``None`` means "undefined for this question" (no relevant document), which is
a status of its own and never 0.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from operator import truediv

MEASURES = ("P", "R", "nDCG", "Judged")
_NAME = re.compile(r"(P|R|nDCG|Judged)@([1-9][0-9]{0,4})")


@dataclass(frozen=True, order=True)
class Measure:
    name: str  # one of MEASURES
    k: int

    def __str__(self) -> str:
        return f"{self.name}@{self.k}"


def parse_measure(text: str) -> Measure:
    """Parse a canonical measure name such as ``nDCG@5``.

    Raises ValueError listing the valid forms for anything else."""
    m = _NAME.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(
            "unknown measure; valid names are P@k, R@k, nDCG@k and Judged@k "
            "with k a positive integer, e.g. P@5, R@10, nDCG@5"
        )
    return Measure(m.group(1), int(m.group(2)))


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise ValueError("k must be a positive integer")


def relevant_in_top(ranking: list[str], grades: dict[str, int], k: int, min_grade: int) -> int:
    return sum(1 for d in ranking[:k] if grades.get(d, 0) >= min_grade)


def precision_at_k(
    ranking: list[str], grades: dict[str, int], k: int, min_grade: int = 1, short_list: str = "pad"
) -> float:
    """P@k = |relevant ∩ top-k| / k.

    ``short_list="pad"`` (default): a ranking shorter than k is padded with
    non-relevant positions, so the denominator stays k (trec_eval's P_k).
    ``short_list="actual"``: the denominator is min(k, len(ranking)); an empty
    ranking scores 0.
    """
    _check_k(k)
    hits = relevant_in_top(ranking, grades, k, min_grade)
    if short_list == "actual":
        n = min(k, len(ranking))
        return hits / n if n else 0.0
    return hits / k


def recall_at_k(
    ranking: list[str], grades: dict[str, int], k: int, min_grade: int = 1
) -> float | None:
    """R@k = |relevant ∩ top-k| / |relevant|; None when the question has no
    relevant document (grade ≥ min_grade) in gold."""
    _check_k(k)
    total = sum(1 for g in grades.values() if g >= min_grade)
    if total == 0:
        return None
    return relevant_in_top(ranking, grades, k, min_grade) / total


def gain(grade: int, kind: str = "linear") -> float:
    """Linear gain = grade; exponential gain = 2^grade − 1."""
    if grade <= 0:
        return 0.0
    return float(grade) if kind == "linear" else float(2**grade - 1)


_DISCOUNT = [math.log2(i + 2) for i in range(128)]


def dcg(grades_in_order: list[int], k: int, kind: str = "linear") -> float:
    """DCG@k = Σ_{i=1..k} gain(g_i) / log2(i + 1)."""
    gs = grades_in_order[:k]
    if kind == "linear" and len(gs) <= len(_DISCOUNT) and (not gs or min(gs) >= 0):
        # The same divisions, summed by the same sum(), in C: the same float.
        return sum(map(truediv, map(float, gs), _DISCOUNT))
    return sum(gain(g, kind) / math.log2(i + 2) for i, g in enumerate(gs))


def ndcg_at_k(
    ranking: list[str], grades: dict[str, int], k: int, gain_kind: str = "linear"
) -> float | None:
    """nDCG@k = DCG@k / IDCG@k, where IDCG@k is the DCG of all judged grades of
    the question sorted descending and cut at k. Unjudged documents have grade 0.
    None when IDCG@k = 0 (no usable gold)."""
    _check_k(k)
    ideal = dcg(sorted(grades.values(), reverse=True), k, gain_kind)
    if ideal <= 0:
        return None
    return dcg([grades.get(d, 0) for d in ranking[:k]], k, gain_kind) / ideal


def judged_at_k(ranking: list[str], grades: dict[str, int], k: int) -> float:
    """Judged@k = |top-k ∩ judged| / k (missing positions of a short list count
    as unjudged). Low values mean the labels do not cover what is retrieved, and
    every other measure is then biased low."""
    _check_k(k)
    return sum(1 for d in ranking[:k] if d in grades) / k
