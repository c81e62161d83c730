"""Exact cosine top-``depth``, the same on every runner.

A ranking must not change between BLAS builds or CPUs, and float64 matrix
products do differ there in the last bits (summation order, FMA, SIMD
width). So the search has two steps:

1. **Candidates** (fast, approximate): the cosine of every question with
   every document by a numpy float64 matrix product, over blocks of rows
   read from the file (:func:`npy.row_blocks`: :data:`npy.BLOCK_BYTES`, and
   at most :data:`SCORE_BYTES` of scores), each block read once for all
   questions. Any float64 dot product of ``d``
   exact products, in any order, errs by at most ``γ_d·Σ|a_i·b_i| ≤ γ_d·|a|·|b|``
   (``γ_d = d·u/(1 − d·u)``, ``u = 2^-53``, Cauchy–Schwarz), and each norm by a
   relative ``γ_{d+1}``, so a cosine errs by less than ``3·γ_{d+2}``: below
   ``2.3e-11`` for ``d ≤ 65,536`` (model.json's limit). Every document whose
   approximate score is within :data:`MARGIN` (``1e-9``) of the
   ``depth``-th best is kept (:class:`_Pool`, for all questions at once
   while the blocks stream by; then exactly those, whatever the blocks).
2. **Exact order** of the candidates: sorted by approximate score, which
   already orders any two candidates more than ``MARGIN`` apart exactly (their
   exact scores differ by more than ``MARGIN − 2·2.3e-11 > 0``); each run of
   candidates less than ``MARGIN`` apart is **rescored exactly**, which
   ordering every candidate by its exact score would do too (so the ranking
   is that of exact scores, whatever the approximate ones were). Exact
   rescoring: float32 and float16 values are
   exact in float64, the product of two of them is exact in float64 (at most
   24 + 24 significant bits, no overflow or underflow), and
   :func:`math.fsum` is correctly rounded, so ``fsum(a_i·b_i) / (|a|·|b|)``
   with ``|x| = sqrt(fsum(x_i·x_i))`` is one IEEE-754 value determined by
   the bits of the two vectors, on every platform. Candidates are sorted by
   (−score, id in code-point order) and cut at ``depth``.

A document outside the candidates scores (exactly) below the ``depth``
documents whose approximate score is at least the ``depth``-th best, since
the two scores of a document differ by less than ``MARGIN / 2``; so the
result is the exact top-``depth`` of step 2's scores for every document.

Only documents whose rows are ``eligible`` (in the corpus, with a status
the retriever serves) are ranked.

**Identical vectors** (the same bits) have the same exact score with every
question, so they tie exactly and go by id. When the candidates crowd (more
than :data:`CROWDED` × ``depth`` a question after a prune: ties at the
cut-off), every eligible row is mapped once to its **class**, the first
eligible row with the same bits (:meth:`DenseSearch._collapse`: a hash of
each row's bytes, every match compared bit for bit), and from then on only
one row per class is a candidate: the class is rescored once and gives its
smallest ids (kept sorted) in place of its rows. A corpus of identical
vectors then costs ``depth`` ids a question, not every document; the
ranking is the same, since each class's rows would have been rescored to
the same score and ordered by id.

**Work** is bounded by ``limits.max_retrieval_work`` and, like BM25's, by
``max_retrieval_work_per_byte`` of the input files as stored (corpus, gold,
the vectors folder; ``work_allowed``): each candidate costs ``d`` +
:data:`CANDIDATE_WORK` units (held, ordered, maybe rescored with ``d``
products), and each id taken from a class one. The candidates held at once
are checked against what is left after each prune, so distinct vectors
within ``MARGIN`` of each other (which do need rescoring one by one) end
the search with a ``limit`` problem before they fill the memory.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain, pairwise

import numpy as np

from rag_corpus_check.retrieval.bm25 import WORK_FLOOR, Budget
from rag_corpus_check.retrieval.dense.npy import block_rows, row_blocks

MARGIN = 1e-9
SCORE_BYTES = 8 * 1024**2  # approximate scores held at once (questions × documents × 8 bytes)
NONE = -2.0  # below every cosine (|cos| <= 1 + 2.3e-11): "no floor yet"; a row not eligible scores -inf
CANDIDATE_WORK = 32  # units of work a candidate costs besides its d products (a rescored row's Python overhead)
CROWDED = 4  # candidates a question, × depth, past which identical rows are collapsed into classes
Triples = tuple[np.ndarray, np.ndarray, np.ndarray]  # (question, row, approximate score) of each candidate


class _Pool:
    """Every question's candidates while the blocks stream by: the rows
    within :data:`MARGIN` of the question's ``depth``-th best approximate
    score so far (that score only rises, so a row dropped never comes back),
    as three flat arrays (question, row, score) for all questions: a block
    costs a few numpy passes, not one per question."""

    def __init__(self, questions: int, depth: int, settle: Callable[[Triples], Triples] = lambda kept: kept):
        self.depth = depth
        self.settle = settle  # the candidates after a prune -> those kept (see DenseSearch._settle)
        self.floors = np.full(questions, NONE)
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [(np.empty(0, np.int64),) * 2 + (np.empty(0),)]
        self.pending = 0

    def offer(self, start: int, scores: np.ndarray) -> None:
        """``scores``: questions × rows of one block (rows from ``start``)."""
        passed = scores >= self.floors[:, None]
        crowded = np.flatnonzero(np.count_nonzero(passed, axis=1) > 2 * self.depth)
        if crowded.size and scores.shape[1] >= self.depth:  # the block alone sets a floor (the first one, mostly)
            cut = scores.shape[1] - self.depth
            best = np.partition(scores[crowded], cut, axis=1)[:, cut]
            self.floors[crowded] = np.maximum(self.floors[crowded], best - MARGIN)
            passed[crowded] = scores[crowded] >= self.floors[crowded, None]
        at = np.flatnonzero(passed)  # question-major
        self.parts.append((at // scores.shape[1], at % scores.shape[1] + start, scores.ravel()[at]))
        self.pending += len(at)
        if self.pending > 2 * self.depth * len(self.floors):
            self.prune()

    def prune(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The candidates, grouped by question (in row order within one),
        each question's floor raised to its ``depth``-th best minus MARGIN."""
        q, r, s = (np.concatenate(column) for column in zip(*self.parts, strict=True))
        order = np.argsort(q, kind="stable")
        q, r, s = q[order], r[order], s[order]
        ends = np.cumsum(np.bincount(q, minlength=len(self.floors))).tolist()
        for j, (a, b) in enumerate(pairwise([0, *ends])):
            if b - a >= self.depth:
                cut = b - a - self.depth
                self.floors[j] = max(self.floors[j], np.partition(s[a:b], cut)[cut] - MARGIN)
        keep = s >= self.floors[q]
        self.parts = [self.settle((q[keep], r[keep], s[keep]))]
        self.pending = len(self.parts[0][0])
        return self.parts[0]


def _bytes(rows: np.ndarray) -> np.ndarray:
    """Each row's bytes, a row of ``uint8`` each."""
    return np.ascontiguousarray(rows).view(np.uint8).reshape(len(rows), rows.shape[1] * rows.dtype.itemsize)


def exact_norm(values: list[float]) -> float:
    return math.sqrt(math.fsum([x * x for x in values]))


def exact_cosine(a: list[float], norm_a: float, b: list[float], norm_b: float) -> float:
    """The cosine of two float32/float16 vectors (as Python floats), the same everywhere."""
    return math.fsum(map(operator.mul, a, b)) / (norm_a * norm_b)


@dataclass
class DenseSearch:
    """Searches ``docs`` (rows × d, memory-mapped) among the ``eligible``
    rows (sorted row numbers), named by ``keys``."""

    docs: np.ndarray
    keys: list[str]
    eligible: np.ndarray
    max_work: int
    work_allowed: int | None = None  # max_work for this input's size (None: max_work alone)
    input_bytes: int | None = None  # the size work_allowed was given for (named in its message)
    work: int = 0
    _norms: dict[int, float] = field(default_factory=dict)  # exact norms of rescored rows
    _allowed: np.ndarray | None = None  # per row: may be a candidate (eligible; once collapsed, its class's first)
    _first: np.ndarray | None = None  # once collapsed: each row's class (its first eligible row with the same bits)
    _members: dict[int, list[str]] | None = None  # once collapsed: a class's first row -> its rows' ids, sorted
    _crowd = 0  # candidates past which a prune collapses the classes

    def rank(self, questions: np.ndarray, depth: int) -> list[list[str]]:
        """The top-``depth`` ids for each row of ``questions``."""
        if len(self.eligible) == 0 or len(questions) == 0:
            return [[] for _ in range(len(questions))]
        asked = np.asarray(questions, dtype=np.float64)
        unit = asked / np.sqrt(np.einsum("ij,ij->i", asked, asked))[:, None]
        self._crowd = CROWDED * depth * len(asked)
        pool = _Pool(len(asked), depth, self._settle)
        for start, scores in self._blocks(unit):
            pool.offer(start, scores)
        q, rows, scores = pool.prune()
        ends = np.cumsum(np.bincount(q, minlength=len(asked))).tolist()
        return [self._exact(asked[j], rows[a:b], scores[a:b], depth) for j, (a, b) in enumerate(pairwise([0, *ends]))]

    def _blocks(self, unit: np.ndarray):
        """``(first row, approximate cosines)`` per block of documents
        (questions × rows; -inf for rows not eligible): each document is
        read and converted once, whatever the number of questions."""
        n = self.docs.shape[0]
        step = max(1, min(block_rows(self.docs), SCORE_BYTES // (8 * len(unit))))
        if self._allowed is None:
            self._allowed = np.zeros(n, dtype=bool)
            self._allowed[self.eligible] = True
        block = np.empty((min(step, n), self.docs.shape[1]), dtype=np.float64)
        for start, rows in row_blocks(self.docs, step):
            values = block[:len(rows)]
            np.copyto(values, rows)
            norms = np.sqrt(np.einsum("ij,ij->i", values, values))
            scores = unit @ values.T
            scores /= norms
            allowed = self._allowed[start:start + len(rows)]  # read at each block: a collapse changes it
            if not allowed.all():
                scores[:, ~allowed] = -np.inf
            yield start, scores

    def _settle(self, candidates: Triples) -> Triples:
        """The candidates after a prune: crowded, identical rows are
        collapsed into classes (once), and then one row a class is kept (its
        best approximate score: any of the class's is within the error bound
        of their one exact score); what is held must be affordable."""
        if self._members is None and len(candidates[0]) > self._crowd:
            self._collapse()
        if self._members is not None:
            candidates = self._one_per_class(*candidates)
        self._check(self.work + len(candidates[0]) * (self.docs.shape[1] + CANDIDATE_WORK))
        return candidates

    def _one_per_class(self, q: np.ndarray, rows: np.ndarray, scores: np.ndarray) -> Triples:
        """One entry per (question, class), grouped by question."""
        assert self._first is not None
        rows = self._first[rows]
        at = q * self.docs.shape[0] + rows
        order = np.lexsort((-scores, at))
        at = at[order]
        keep = order[np.concatenate(([True], at[1:] != at[:-1]))]
        return q[keep], rows[keep], scores[keep]

    def _collapse(self) -> None:
        """Maps every eligible row to the first eligible row with the same
        bits (a hash of its bytes, then compared bit for bit: a hash that
        collides leaves the row a class of its own), and keeps each class's
        ids sorted; later blocks offer one row a class."""
        n = self.docs.shape[0]
        first = np.arange(n, dtype=np.int64)
        seen: dict[int, int] = {}
        allowed = np.zeros(n, dtype=bool)
        allowed[self.eligible] = True
        for start, rows in row_blocks(self.docs, block_rows(self.docs)):
            here = np.flatnonzero(allowed[start:start + len(rows)])
            raw = _bytes(rows[here])
            chosen = np.fromiter(map(seen.setdefault, map(hash, map(bytes, raw)), (here + start).tolist()),
                                 np.int64, len(here))
            same = np.all(_bytes(self.docs[chosen]) == raw, axis=1)
            first[here[same] + start] = chosen[same]
        self._first = first
        moved = np.flatnonzero(first != np.arange(n))
        members: dict[int, list[str]] = {}
        for row, head in zip(moved.tolist(), first[moved].tolist(), strict=True):
            members.setdefault(head, [self.keys[head]]).append(self.keys[row])
        self._members = {head: sorted(ids) for head, ids in members.items()}
        assert self._allowed is not None
        self._allowed[moved] = False

    def _check(self, work: int) -> None:
        """Raises :class:`Budget` when ``work`` units are more than allowed."""
        if work > self.max_work:
            raise Budget("max_retrieval_work", f"the exact cosine search would take over {self.max_work} units of "
                         "work (many documents within 1e-9 of the depth-th best?) (limits.max_retrieval_work)")
        if self.work_allowed is not None and work > self.work_allowed:
            raise Budget("max_retrieval_work_per_byte", f"the exact cosine search would take over {self.work_allowed} "
                         f"units of work ({self.docs.shape[1]} + {CANDIDATE_WORK} a candidate: many documents "
                         f"within 1e-9 of the depth-th best?), over {WORK_FLOOR} + the limit per byte of the "
                         f"{self.input_bytes} bytes of the input files as stored (limits.max_retrieval_work_per_byte)")

    def _spend(self, units: int) -> None:
        self._check(self.work + units)
        self.work += units

    def _exact(self, question: np.ndarray, rows: np.ndarray, approx: np.ndarray, depth: int) -> list[str]:
        """The candidates in exact order, cut at ``depth``: by approximate
        score, then each run of candidates less than
        :data:`MARGIN` apart rescored exactly (between runs the order is the
        exact one already)."""
        self._spend(len(rows) * (self.docs.shape[1] + CANDIDATE_WORK))  # as if every candidate were rescored
        order = np.argsort(-approx, kind="stable")
        rows, approx = rows[order], approx[order]
        apart = approx[:-1] - approx[1:] > MARGIN
        if self._members is None and apart[:depth].all():  # no run to rescore among the first depth
            return list(map(self.keys.__getitem__, rows[:depth].tolist()))
        cuts = [0, *(np.flatnonzero(apart) + 1).tolist(), len(rows)]
        q = question.tolist()
        nq = exact_norm(q)
        out: list[str] = []
        for start, end in pairwise(cuts):
            if len(out) >= depth:
                break
            out += self._run(rows[start:end].tolist(), q, nq, depth - len(out))
        return out

    def _run(self, rows: list[int], q: list[float], nq: float, need: int) -> list[str]:
        """The first ``need`` ids of one run of near-equal candidates, by
        exact score then id: each candidate rescored once, its class's ids
        (if any) taken in id order."""
        if len(rows) == 1:
            return self._ids(rows, need)
        levels: dict[float, list[int]] = {}
        for row in rows:
            levels.setdefault(self._cosine(row, q, nq), []).append(row)
        out: list[str] = []
        for score in sorted(levels, reverse=True):
            if len(out) >= need:
                break
            out += self._ids(levels[score], need - len(out))
        return out

    def _ids(self, rows: list[int], need: int) -> list[str]:
        """The ``need`` smallest ids of the rows (and their classes' rows)."""
        members = self._members
        if members is None:
            return sorted(map(self.keys.__getitem__, rows))[:need]
        groups = [members[row][:need] for row in rows if row in members]
        self._spend(sum(map(len, groups)))  # each id taken from a class
        return heapq.nsmallest(need, chain([self.keys[row] for row in rows if row not in members], *groups))

    def _cosine(self, row: int, q: list[float], nq: float) -> float:
        vector = self.docs[row].tolist()
        norm = self._norms.get(row)
        if norm is None:
            norm = self._norms[row] = exact_norm(vector)
        return exact_cosine(vector, norm, q, nq)
