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
the retriever serves) are ranked. Rescoring is bounded: every candidate
costs ``d`` units of ``limits.max_retrieval_work`` (ties at the cut-off are
work: a corpus of identical vectors makes every document a candidate).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from rag_corpus_check.retrieval.bm25 import Budget
from rag_corpus_check.retrieval.dense.npy import block_rows, row_blocks

MARGIN = 1e-9
SCORE_BYTES = 8 * 1024**2  # approximate scores held at once (questions × documents × 8 bytes)
NONE = -2.0  # below every cosine (|cos| <= 1 + 2.3e-11): "no floor yet"; a row not eligible scores -inf


class _Pool:
    """Every question's candidates while the blocks stream by: the rows
    within :data:`MARGIN` of the question's ``depth``-th best approximate
    score so far (that score only rises, so a row dropped never comes back),
    as three flat arrays (question, row, score) for all questions: a block
    costs a few numpy passes, not one per question."""

    def __init__(self, questions: int, depth: int):
        self.depth = depth
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
        self.parts = [(q[keep], r[keep], s[keep])]
        self.pending = len(self.parts[0][0])
        return self.parts[0]


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
    work: int = 0
    _norms: dict[int, float] = field(default_factory=dict)  # exact norms of rescored rows

    def rank(self, questions: np.ndarray, depth: int) -> list[list[str]]:
        """The top-``depth`` ids for each row of ``questions``."""
        if len(self.eligible) == 0 or len(questions) == 0:
            return [[] for _ in range(len(questions))]
        asked = np.asarray(questions, dtype=np.float64)
        unit = asked / np.sqrt(np.einsum("ij,ij->i", asked, asked))[:, None]
        pool = _Pool(len(asked), depth)
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
        allowed = np.zeros(n, dtype=bool)
        allowed[self.eligible] = True
        every = bool(allowed.all())
        block = np.empty((min(step, n), self.docs.shape[1]), dtype=np.float64)
        for start, rows in row_blocks(self.docs, step):
            values = block[:len(rows)]
            np.copyto(values, rows)
            norms = np.sqrt(np.einsum("ij,ij->i", values, values))
            scores = unit @ values.T
            scores /= norms
            if not every:
                scores[:, ~allowed[start:start + len(rows)]] = -np.inf
            yield start, scores

    def _exact(self, question: np.ndarray, rows: np.ndarray, approx: np.ndarray, depth: int) -> list[str]:
        """The candidates in exact order, cut at ``depth``: by approximate
        score, then each run of candidates less than
        :data:`MARGIN` apart rescored exactly (between runs the order is the
        exact one already)."""
        dims = self.docs.shape[1]
        self.work += len(rows) * dims  # as if every candidate were rescored: ties are work
        if self.work > self.max_work:
            raise Budget("max_retrieval_work", f"the exact cosine rescoring took over {self.max_work} units of "
                         "work (many documents tied with the depth-th best?)")
        order = np.argsort(-approx, kind="stable")
        rows, approx = rows[order], approx[order]
        apart = approx[:-1] - approx[1:] > MARGIN
        if apart[:depth].all():  # no run to rescore among the first depth (nor one across the cut)
            return list(map(self.keys.__getitem__, rows[:depth].tolist()))
        cuts = [0, *(np.flatnonzero(apart) + 1).tolist(), len(rows)]
        q = question.tolist()
        nq = exact_norm(q)
        out: list[str] = []
        for start, end in pairwise(cuts):
            if len(out) >= depth:
                break
            out += self._run(rows[start:end], q, nq)
        return out[:depth]

    def _run(self, rows: np.ndarray, q: list[float], nq: float) -> list[str]:
        """One run of near-equal candidates, by exact score then id."""
        if len(rows) == 1:
            return [self.keys[rows[0]]]
        scored = sorted((-self._cosine(int(r), q, nq), self.keys[r]) for r in rows)
        return [key for _, key in scored]

    def _cosine(self, row: int, q: list[float], nq: float) -> float:
        vector = self.docs[row].tolist()
        norm = self._norms.get(row)
        if norm is None:
            norm = self._norms[row] = exact_norm(vector)
        return exact_cosine(vector, norm, q, nq)
