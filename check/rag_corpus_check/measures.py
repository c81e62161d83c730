"""Retrieval measures: one small pure function each, of one question's
ranking seen through its labels (:class:`Judged`), and the one parser of
their names.

A ranking is a list of document ids, best first, without duplicates (the
validator guarantees it). Grades map judged document ids to integer grades; a
document that is not judged counts as grade 0. ``None`` means "undefined for
this question" (it has no relevant document), a status of its own, never 0.

Every measure here is computed by :func:`Measure.value` and nowhere else:
evaluation, merge and the base comparison all go through it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from operator import ge, truediv


@dataclass(frozen=True)
class Options:
    """The conventions a measure is computed under (the config's)."""

    min_grade: int = 1  # relevant: grade >= min_grade
    gain: str = "linear"  # nDCG gain: "linear" (grade) or "exponential" (2^grade - 1)
    short_list: str = "pad"  # P@k of a short ranking: "pad" (divide by k) or "actual"


DEFAULT = Options()


@dataclass(frozen=True)
class Judged:
    """One question's ranking seen through its labels: what every measure
    reads, looked up once per question."""

    grades: list[int]  # the grade of each ranked document, best first (unjudged: 0), cut at the depth
    judged: list[bool]  # whether each of those documents is judged
    length: int  # how many documents the whole ranking holds
    relevant: int  # R: the question's documents with grade >= min_grade
    ideal: list[int]  # every judged grade of the question, highest first


def judge(ranking: list[str], grades: dict[str, int], depth: int, min_grade: int = 1) -> Judged:
    """The :class:`Judged` view of ``ranking`` under ``grades``, cut at ``depth``."""
    top = ranking[:depth]
    return Judged(
        grades=list(map(grades.get, top, repeat(0))),
        judged=list(map(grades.__contains__, top)),
        length=len(ranking),
        relevant=sum(map(ge, grades.values(), repeat(min_grade))),
        ideal=sorted(grades.values(), reverse=True),
    )


def _hits(q: Judged, k: int, opts: Options) -> int:
    return sum(map(ge, q.grades[:k], repeat(opts.min_grade)))


def precision(q: Judged, k: int, opts: Options) -> float:
    """P@k = |relevant ∩ top-k| / k. A ranking shorter than k is padded with
    non-relevant positions (``short_list="pad"``, trec_eval's P_k); with
    ``"actual"`` the denominator is min(k, length) and an empty ranking scores 0."""
    hits = _hits(q, k, opts)
    if opts.short_list == "actual":
        n = min(k, q.length)
        return hits / n if n else 0.0
    return hits / k


def recall(q: Judged, k: int, opts: Options) -> float | None:
    """R@k = |relevant ∩ top-k| / R; None when R = 0."""
    return _hits(q, k, opts) / q.relevant if q.relevant else None


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


def ndcg(q: Judged, k: int, opts: Options) -> float | None:
    """nDCG@k = DCG@k / IDCG@k, IDCG@k the DCG of the question's judged
    grades sorted descending, cut at k; None when IDCG@k = 0 (or R = 0)."""
    if not q.relevant:
        return None
    ideal = dcg(q.ideal, k, opts.gain)
    return dcg(q.grades, k, opts.gain) / ideal if ideal > 0 else None


def judged_share(q: Judged, k: int, opts: Options) -> float:
    """Judged@k = |top-k ∩ judged| / k (missing positions of a short list
    count as unjudged). Low values mean the labels do not cover what is
    retrieved, and every other measure is then biased low."""
    return sum(q.judged[:k]) / k


@dataclass(frozen=True)
class Definition:
    compute: Callable[[Judged, int, Options], float | None]
    formula: str


DEFINITIONS: dict[str, Definition] = {
    "P": Definition(precision, "relevant in the top k / k"),
    "R": Definition(recall, "relevant in the top k / relevant in gold"),
    "nDCG": Definition(ndcg, "DCG@k / ideal DCG@k, gain = grade, discount 1/log2(rank + 1)"),
    "Judged": Definition(judged_share, "judged documents in the top k / k"),
}
ORDER = {name: i for i, name in enumerate(DEFINITIONS)}
_NAME = re.compile(r"(" + "|".join(DEFINITIONS) + r")@([1-9][0-9]{0,4})")


@dataclass(frozen=True, order=True)
class Measure:
    name: str  # a key of DEFINITIONS
    k: int

    def __str__(self) -> str:
        return f"{self.name}@{self.k}"

    def value(self, q: Judged, opts: Options) -> float | None:
        return DEFINITIONS[self.name].compute(q, self.k, opts)

    @property
    def depth(self) -> int:
        """How much of a ranking the measure reads."""
        return self.k


def parse_measure(text: object) -> Measure:
    """The measure a canonical name such as ``nDCG@5`` names; ValueError
    listing the valid forms for anything else."""
    m = _NAME.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(
            f"unknown measure; valid names are {_names()} with k a positive integer, e.g. P@5, R@10, nDCG@5"
        )
    return Measure(m.group(1), int(m.group(2)))


def _names() -> str:
    names = [f"{n}@k" for n in DEFINITIONS]
    return ", ".join(names[:-1]) + " and " + names[-1]


def headline(k: int) -> list[Measure]:
    """The measures every check reports, at the config's k."""
    return [Measure(name, k) for name in DEFINITIONS]


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise ValueError("k must be a positive integer")


def measure_of(name: str, ranking: list[str], grades: dict[str, int], k: int,
               opts: Options = DEFAULT) -> float | None:
    """One measure of one ranking: :meth:`Measure.value` on its :func:`judge` view."""
    _check_k(k)
    return Measure(name, k).value(judge(ranking, grades, k, opts.min_grade), opts)


def precision_at_k(ranking: list[str], grades: dict[str, int], k: int, min_grade: int = 1,
                   short_list: str = "pad") -> float | None:
    return measure_of("P", ranking, grades, k, Options(min_grade=min_grade, short_list=short_list))


def recall_at_k(ranking: list[str], grades: dict[str, int], k: int, min_grade: int = 1) -> float | None:
    return measure_of("R", ranking, grades, k, Options(min_grade=min_grade))


def ndcg_at_k(ranking: list[str], grades: dict[str, int], k: int, gain_kind: str = "linear") -> float | None:
    return measure_of("nDCG", ranking, grades, k, Options(gain=gain_kind))


def judged_at_k(ranking: list[str], grades: dict[str, int], k: int) -> float | None:
    return measure_of("Judged", ranking, grades, k)
