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
from dataclasses import dataclass, field
from itertools import repeat
from operator import ge, truediv


@dataclass(frozen=True)
class Options:
    """The conventions a measure is computed under (the config's)."""

    min_grade: int = 1  # relevant: grade >= min_grade
    gain: str = "linear"  # nDCG gain: "linear" (grade) or "exponential" (2^grade - 1)
    short_list: str = "pad"  # P@k of a short ranking: "pad" (divide by k) or "actual"
    judged_only: bool = False  # trec_eval -J: unjudged documents leave the ranking first (Judged@k excepted)


DEFAULT = Options()


@dataclass(slots=True)
class Judged:
    """One question's ranking seen through its labels: what every measure
    reads, looked up once per question."""

    grades: list[int]  # the grade of each ranked document, best first (unjudged: 0), cut at the depth
    judged: list[bool]  # whether each of those documents is judged
    length: int  # how many documents the whole ranking holds
    relevant: int  # R: the question's documents with grade >= min_grade
    ideal: list[int]  # every judged grade of the question, highest first


def judge(ranking: list[str], grades: dict[str, int], depth: int, min_grade: int = 1) -> Judged:
    """The :class:`Judged` view of ``ranking`` under ``grades``, cut at
    ``depth`` or at R (for Rprec), whichever is deeper."""
    relevant = sum(map(ge, grades.values(), repeat(min_grade)))
    top = ranking[:max(depth, relevant)]
    return Judged(
        grades=list(map(grades.get, top, repeat(0))),
        judged=list(map(grades.__contains__, top)),
        length=len(ranking),
        relevant=relevant,
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


def reciprocal_rank(q: Judged, k: int, opts: Options) -> float:
    """RR@k = 1 / rank of the first relevant document in the top k, 0 if
    there is none (its mean is MRR@k; trec_eval's recip_rank on a run cut at k)."""
    for rank, grade in enumerate(q.grades[:k], 1):
        if grade >= opts.min_grade:
            return 1.0 / rank
    return 0.0


def success(q: Judged, k: int, opts: Options) -> float:
    """Success@k = 1 if any relevant document is in the top k, else 0 (hit
    rate; trec_eval's success_k)."""
    return 1.0 if _hits(q, k, opts) else 0.0


def average_precision(q: Judged, k: int, opts: Options) -> float | None:
    """AP@k = Σ over relevant ranks i ≤ k of P@i, divided by R (not by the
    relevant found: trec_eval's map_cut_k); None when R = 0."""
    if not q.relevant:
        return None
    total, hits = 0.0, 0
    for rank, grade in enumerate(q.grades[:k], 1):
        if grade >= opts.min_grade:
            hits += 1
            total += hits / rank
    return total / q.relevant


def r_precision(q: Judged, k: int, opts: Options) -> float | None:
    """Rprec = relevant in the top R / R, R the question's relevant
    documents (a ranking shorter than R is padded; trec_eval's Rprec); None
    when R = 0. Takes no k."""
    return _hits(q, q.relevant, opts) / q.relevant if q.relevant else None


@dataclass(frozen=True)
class Definition:
    """A measure: its function and, in words, what it computes. ``formula``
    is the one written definition: the summary's conventions and
    docs/metrics.md (generated by tools/gen_docs.py) both print it."""

    compute: Callable[[Judged, int, Options], float | None]
    formula: str
    mean: str = ""  # what its mean is called elsewhere (MRR@k, ...)
    trec_eval: str = ""  # trec_eval's name for the same value
    cutoff: bool = True  # named with @k; False: a name alone (Rprec)


DEFINITIONS: dict[str, Definition] = {
    "P": Definition(precision, "relevant documents in the top k / k (a ranking shorter than k is padded with "
                    "non-relevant positions; short_list: actual divides by min(k, length) instead)",
                    trec_eval="P_k"),
    "R": Definition(recall, "relevant documents in the top k / R, R = the question's relevant documents in gold",
                    trec_eval="recall_k"),
    "nDCG": Definition(ndcg, "DCG@k / IDCG@k, DCG@k = Σ over positions i ≤ k of gain(grade) / log2(i + 1), "
                       "gain = grade (2^grade − 1 with gain: exponential), IDCG@k the DCG of the "
                       "question's judged grades sorted descending", trec_eval="ndcg_cut_k"),
    "Judged": Definition(judged_share, "documents in the top k that the gold set judges / k (missing positions "
                         "of a short list count as unjudged)"),
    "RR": Definition(reciprocal_rank, "1/rank of the first relevant document in the top k, 0 if none",
                     mean="MRR@k", trec_eval="recip_rank on the run cut at k"),
    "Success": Definition(success, "1 if a relevant document is in the top k, else 0", mean="the hit rate",
                          trec_eval="success_k"),
    "AP": Definition(average_precision, "Σ of P@i over the ranks i ≤ k holding a relevant document, divided "
                     "by R (all relevant documents of the question, not those found)", mean="MAP@k",
                     trec_eval="map_cut_k"),
    "Rprec": Definition(r_precision, "relevant documents in the top R / R, R = the question's relevant "
                        "documents in gold (a short list is padded)", trec_eval="Rprec", cutoff=False),
}
ORDER = {name: i for i, name in enumerate(DEFINITIONS)}
HEADLINE = ("P", "R", "nDCG", "Judged")  # reported by every check, at the config's k
_CUT = [n for n, d in DEFINITIONS.items() if d.cutoff]
MAX_K = 99999  # the largest k a name may carry (five digits)
_NAME = re.compile(r"(" + "|".join(_CUT) + r")@([1-9][0-9]{0,4})|(" +
                   "|".join(n for n in DEFINITIONS if n not in _CUT) + ")")


@dataclass(frozen=True, order=True)
class Measure:
    name: str  # a key of DEFINITIONS
    k: int
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.name, self.k)))

    def __hash__(self) -> int:
        """The hash the dataclass would compute, computed once: measures key
        every per-question dict (190,000 lookups for 10,000 questions)."""
        return self._hash

    def __str__(self) -> str:
        return f"{self.name}@{self.k}" if DEFINITIONS[self.name].cutoff else self.name

    def value(self, q: Judged, opts: Options) -> float | None:
        return DEFINITIONS[self.name].compute(q, self.k, opts)

    @property
    def depth(self) -> int:
        """How much of a ranking the measure reads (Rprec: R, which
        :func:`judge` always keeps)."""
        return self.k


def parse_measure(text: object) -> Measure:
    """The measure a canonical name such as ``nDCG@5`` names; ValueError
    listing the valid forms for anything else."""
    m = _NAME.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(
            f"unknown measure; valid names are {_names()} with k a positive integer, e.g. P@5, R@10, nDCG@5, RR@10"
            + _hint(text)
        )
    return Measure(m.group(1), int(m.group(2))) if m.group(1) else Measure(m.group(3), 0)


# Names other tools use for these measures (ir_measures' own are the valid ones).
_ALIASES = {"mrr": "RR", "recip_rank": "RR", "map": "AP", "map_cut": "AP", "hit": "Success", "hits": "Success",
            "hitrate": "Success", "hit_rate": "Success", "success": "Success", "ndcg": "nDCG", "ndcg_cut": "nDCG",
            "p": "P", "precision": "P", "r": "R", "recall": "R", "rprec": "Rprec", "r-prec": "Rprec",
            "judged": "Judged", "rr": "RR", "ap": "AP"}


_LOOSE = re.compile(r"\s*([A-Za-z][A-Za-z_.-]*?)[@_.]?([0-9]*)\s*")


def _hint(text: object) -> str:
    """"; did you mean …" for a name another tool uses, a wrong case, or a k on Rprec."""
    name, k = _alias(text)
    if name is None:
        return ""
    if not DEFINITIONS[name].cutoff:
        return f"; did you mean {name} (it takes no k)?"
    return f"; did you mean {name}@{k or 10}?"


def _alias(text: object) -> tuple[str | None, int]:
    """The measure another tool's name stands for, and the k it gives (0: none)."""
    m = _LOOSE.fullmatch(text) if isinstance(text, str) and len(text) <= 40 else None
    if m is None:
        return None, 0
    return _ALIASES.get(m.group(1).lower()), int(m.group(2) or 0)


def _names() -> str:
    names = [f"{n}@k" if d.cutoff else n for n, d in DEFINITIONS.items()]
    return ", ".join(names[:-1]) + " and " + names[-1]


def headline(k: int) -> list[Measure]:
    """The measures every check reports, at the config's k."""
    return [Measure(name, k) for name in HEADLINE]


def check_measure(m: Measure) -> None:
    """ValueError unless ``m`` is a measure :func:`parse_measure` could return."""
    if m.name not in DEFINITIONS:
        raise ValueError(f"unknown measure {m.name!r}")
    if DEFINITIONS[m.name].cutoff:
        _check_k(m.k)
    elif m.k != 0:
        raise ValueError(f"{m.name} takes no k")


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
