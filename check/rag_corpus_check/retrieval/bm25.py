"""The built-in retriever: BM25 over title + text, specified exactly so it can
be cross-checked.

* Text: the tokens of :mod:`analyzer` (NFKC, casefold, ``\\w+`` runs, Han,
  Kana and Hangul runs as overlapping bigrams, optional stop words, an
  optional Snowball stemmer).
* Score: ``Σ_{t in query} idf(t) · tf / (tf + k1·(1 − b + b·dl/avgdl))``
  with Lucene's ``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))``. As in Lucene
  ≥ 8 (and bm25s's ``lucene`` method) the classic ``(k1 + 1)`` factor is left
  out: a constant factor that changes no ranking. ``tf`` is the
  term's count in the document, ``dl`` the document's token count, ``avgdl``
  the mean over indexed documents, ``N`` the number of indexed documents. A
  query term that occurs twice counts twice (as in Lucene's BooleanQuery):
  its weight is multiplied by its count, so a question's cost is one pass over
  each distinct term's postings, however often the term is repeated.
* Ranking: score descending, ties by document id ascending (code-point
  order); documents with score 0 are not returned; at most ``depth`` ids.
* Only documents whose ``status`` is in ``statuses`` (default: active) are
  indexed: stale and restricted documents should not be served to users.

Memory: the index keeps, per term, the numbers and precomputed weights of
the documents that contain it (compressed sparse rows); no document text is
kept. Search sums a question's postings per document with
``numpy.bincount`` (numpy arrays; 27x faster than adding posting by posting
in Python on questions of ~200 words, ``bench/bm25_long.py``). numpy is
imported when an index is built.

Bounds (:class:`Budget`, from ``limits:``): the index holds at most
``max_vocabulary`` distinct terms and ``max_index_postings`` (term, document)
pairs; a question has at most ``max_query_tokens`` tokens; all questions
together visit at most ``max_retrieval_work`` postings and rank at most as
many candidates, and no more than ``max_retrieval_work_per_byte`` of these
units of work per character of text indexed and searched for (above a floor
of :data:`WORK_FLOOR`). Each ends the check
with a ``limit`` problem naming the limit, instead of hours of CPU or an
out-of-memory kill on a crafted input (docs/configuration.md, "Limits").
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from rag_corpus_check.retrieval.analyzer import Analyzer


@dataclass
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    depth: int = 100
    statuses: tuple[str, ...] = ("active",)
    stopwords: str | None = None
    stemmer: str | None = None  # a Snowball algorithm (retriever.stemmer)

    def analyzer(self) -> Analyzer:
        """The analyzer of these settings (a stemmer is loaded by each call)."""
        return Analyzer(self.stopwords, self.stemmer)

    def stopword_set(self) -> frozenset[str]:
        return Analyzer(self.stopwords).stopword_set


@dataclass(frozen=True)
class Bounds:
    """The work and memory the index may take (``limits:`` of the config)."""

    max_vocabulary: int = 4_000_000
    max_index_postings: int = 100_000_000
    max_query_tokens: int = 1024
    max_retrieval_work: int = 500_000_000
    # Work per character of text indexed and searched for (documents' title
    # and text, questions): what ties the worst case to the input's size.
    max_retrieval_work_per_byte: int = 32


# Work every input may take whatever its size (a small corpus with many
# questions): ~2 CPU-s at ~0.3 µs a unit of work.
WORK_FLOOR = 4_000_000


def allowed_work(bounds: Bounds, size: int) -> int:
    """The retrieval work an input of ``size`` bytes (or characters) may
    take: :data:`WORK_FLOOR` plus ``max_retrieval_work_per_byte`` a byte, at
    most ``max_retrieval_work`` (BM25's and the dense search's rule)."""
    return min(bounds.max_retrieval_work, WORK_FLOOR + bounds.max_retrieval_work_per_byte * size)


class Budget(Exception):
    """A bound of :class:`Bounds` was reached; ``limit`` names it."""

    def __init__(self, limit: str, message: str):
        super().__init__(message)
        self.limit = limit
        self.message = message


@dataclass
class BM25Index:
    """Built incrementally with :meth:`add` (documents streamed from the
    corpus), then frozen with :meth:`finish` before :meth:`search`."""

    params: BM25Params = field(default_factory=BM25Params)
    bounds: Bounds = field(default_factory=Bounds)
    postings: int = 0  # (term, document) pairs indexed
    work: int = 0  # postings visited and candidates ranked by the searches so far
    text_chars: int = 0  # characters of the documents indexed and the questions searched for
    input_bytes: int | None = None  # the size of the corpus and gold files as stored, when known
    _doc_ids: list[str] = field(default_factory=list)
    _doc_len: list[int] = field(default_factory=list)
    _terms: dict[str, int] = field(default_factory=dict)  # term -> its number
    # While adding: each document's (term number, tf) pairs, one after the other.
    _term_nos: array = field(default_factory=lambda: array("i"))
    _tfs: array = field(default_factory=lambda: array("i"))
    _pairs: array = field(default_factory=lambda: array("i"))  # pairs per document
    _csr: Any = None  # (offsets, docs, weights): term i's postings are [offsets[i], offsets[i + 1])

    @cached_property
    def analyzer(self) -> Analyzer:
        return self.params.analyzer()

    def add(self, doc_id: str, text: str) -> None:
        tokens = self.analyzer.tokens(text)
        self.text_chars += len(text)
        self._doc_ids.append(doc_id)
        self._doc_len.append(len(tokens))
        counts = Counter(tokens)
        self.postings += len(counts)
        terms = self._terms
        for term in set(counts).difference(terms):  # numbered in set order: the numbers rank nothing
            terms[term] = len(terms)
        self._term_nos.extend(map(terms.__getitem__, counts))
        self._tfs.extend(counts.values())
        self._pairs.append(len(counts))
        self._check_size()

    def _check_size(self) -> None:
        b = self.bounds
        if len(self._terms) > b.max_vocabulary:
            raise Budget("max_vocabulary", f"the BM25 index would hold more than {b.max_vocabulary} "
                         "distinct terms (limits.max_vocabulary)")
        if self.postings > b.max_index_postings:
            raise Budget("max_index_postings", f"the BM25 index would hold more than "
                         f"{b.max_index_postings} (term, document) pairs (limits.max_index_postings)")

    @property
    def size(self) -> int:
        return len(self._doc_ids)

    def finish(self) -> BM25Index:
        """Freeze the postings into compressed sparse rows, ordered by term
        then document, with each posting's weight (:func:`weigh`): three
        numpy arrays (12 bytes a posting, one Python int a term). ``idf`` is
        ``math.log``'s (numpy's may differ in the last bit)."""
        n = len(self._doc_ids)
        avgdl = (sum(self._doc_len) / n) if n else 0.0
        k1, b = self.params.k1, self.params.b
        norm = [k1 * (1 - b + b * (dl / avgdl)) if avgdl else k1 for dl in self._doc_len]
        self._csr = _numpy_csr(n, norm, self._term_nos, self._tfs, self._pairs, len(self._terms))
        self._term_nos, self._tfs, self._pairs = array("i"), array("i"), array("i")
        return self

    def score(self, query: str) -> tuple[Any, Any]:
        """The documents a query term occurs in and their scores. The
        distinct terms' postings, longest list first (the order the earlier
        dict-based scorer added them in), weights times the term's count,
        are summed per document from 0 in that order by ``numpy.bincount``."""
        import numpy as np

        offsets = self._csr[0]
        entries = sorted(self._entries(query), key=lambda e: offsets[e[0] + 1] - offsets[e[0]], reverse=True)
        spans = [(offsets[term], offsets[term + 1], n) for term, n in entries]

        _, rows, weights = self._csr
        if not spans:
            return np.zeros(0, dtype=np.intp), np.zeros(0)
        docs = np.concatenate([rows[lo:hi] for lo, hi, _ in spans])
        w = np.concatenate([weights[lo:hi] if n == 1 else weights[lo:hi] * n for lo, hi, n in spans])
        return _summed(np, docs, w, len(self._doc_ids))

    def _entries(self, query: str) -> list[tuple[int, int]]:
        """(term number, count) of each distinct query term the index holds,
        counted against the token cap and the work budget."""
        assert self._csr is not None, "finish() the index first"
        tokens = self.analyzer.tokens(query)
        b = self.bounds
        if len(tokens) > b.max_query_tokens:
            raise Budget("max_query_tokens", f"the question has {len(tokens)} tokens, more than "
                         f"{b.max_query_tokens} (limits.max_query_tokens)")
        self.text_chars += len(query)
        terms, offsets = self._terms, self._csr[0]
        entries = [(terms[t], n) for t, n in Counter(tokens).items() if t in terms]
        self._spend(sum(offsets[t + 1] - offsets[t] for t, _ in entries))
        return entries

    @property
    def work_allowed(self) -> int:
        """The work the searches may do: ``max_retrieval_work``, and no more
        than :data:`WORK_FLOOR` plus ``max_retrieval_work_per_byte`` per
        character of text indexed and searched for so far, and per byte of
        the input files as stored (``input_bytes``: a gzip corpus of 1 MB
        gets the budget of 1 MB, not of its 8 MB of text)."""
        size = self.text_chars if self.input_bytes is None else min(self.text_chars, self.input_bytes)
        return allowed_work(self.bounds, size)

    def _spend(self, n: int) -> None:
        self.work += n
        b = self.bounds
        if self.work > b.max_retrieval_work:
            raise Budget("max_retrieval_work", f"the questions so far would make BM25 visit more "
                         f"than {b.max_retrieval_work} postings (limits.max_retrieval_work)")
        if self.work > self.work_allowed:
            raise Budget("max_retrieval_work_per_byte", f"the questions so far would make BM25 do more than "
                         f"{self.work_allowed} units of work (postings visited and candidates ranked), over "
                         f"{WORK_FLOOR} + {b.max_retrieval_work_per_byte} per character of the "
                         f"{self.text_chars} indexed and searched for (and per byte of the input files as "
                         "stored) (limits.max_retrieval_work_per_byte)")

    def _top(self, scored: tuple[Any, Any], depth: int) -> list[tuple[float, str]]:
        """(score, id) of the best ``depth`` documents: score descending, ties
        by id ascending. The depth-th score is selected (``numpy.partition``,
        not a sort of every candidate); the documents above it are sorted,
        and of those tied at it only the ``depth`` smallest ids are selected
        (a heap: sorting every tie cost 438 CPU-s for 1.13 MB of input).
        Each candidate counts as a unit of work."""
        docs, scores = scored
        self._spend(len(docs))
        import numpy as np

        return [(-neg, doc_id) for neg, doc_id in _best(np, docs, scores, depth, self._doc_ids)]

    def search(self, query: str, depth: int | None = None) -> list[str]:
        return [doc_id for _, doc_id in self._top(self.score(query), depth or self.params.depth)]

    def search_scored(self, query: str, depth: int | None = None) -> list[tuple[str, float]]:
        return [(doc_id, s) for s, doc_id in self._top(self.score(query), depth or self.params.depth)]


def _summed(np: Any, docs: Any, weights: Any, n: int) -> tuple[Any, Any]:
    """Each document's sum of its ``weights``, added in their order. When the
    postings are fewer than 1/16 of the documents they are numbered by their
    sorted distinct documents first (the cost follows the postings counted,
    not the corpus), else summed into an array of every document."""
    if len(docs) * 16 < n:
        found, inverse = np.unique(docs, return_inverse=True)
        return found, np.bincount(inverse, weights=weights, minlength=len(found))
    summed = np.bincount(docs, weights=weights, minlength=n)
    found = np.flatnonzero(summed)
    return found, summed[found]


def _best(np: Any, docs: Any, scores: Any, depth: int, ids: list[str]) -> list[tuple[float, str]]:
    """(-score, id) of the best ``depth`` candidates, in ranking order."""
    if len(docs) > depth:
        cut = float(np.partition(scores, len(scores) - depth)[len(scores) - depth])
        keep = scores >= cut  # depth of them, unless ties at the cut
        docs, scores = docs[keep], scores[keep]
        if len(docs) > depth:
            return _with_ties(list(zip(scores.tolist(), docs.tolist(), strict=True)), cut, depth, ids)
    return sorted((-s, ids[d]) for s, d in zip(scores.tolist(), docs.tolist(), strict=True))


def _with_ties(items: list[tuple[float, int]], cut: float, depth: int, ids: list[str]) -> list[tuple[float, str]]:
    """The candidates above ``cut``, then of those at it the smallest ids
    (a heap of ``depth``: sorting every tie cost 438 CPU-s for 1.13 MB)."""
    ranked = sorted((-s, ids[d]) for s, d in items if s > cut)
    tied = heapq.nsmallest(depth - len(ranked), (ids[d] for s, d in items if s == cut))
    return ranked + [(-cut, doc_id) for doc_id in tied]


def weigh(idf: Any, tf: Any, norm: Any) -> Any:
    """The weight of a posting, ``idf · tf / (tf + norm)``, ``norm`` being
    ``k1·(1 − b + b·dl/avgdl)``, on numpy float arrays (``idf`` and ``tf``
    are updated in place, to keep the peak low)."""
    idf *= tf
    tf += norm
    idf /= tf
    return idf


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _numpy_csr(n: int, norm: list[float], term_nos_: array, tfs: array, pairs: array, terms: int) -> tuple:
    """(offsets, docs, weights): offsets a list, docs and weights numpy arrays."""
    import numpy as np

    term_nos = np.frombuffer(term_nos_, dtype=np.intc)
    dfs = np.bincount(term_nos, minlength=terms)
    idf = np.array([_idf(n, df) for df in dfs.tolist()], dtype=float)
    order = np.argsort(term_nos, kind="stable")  # by term, then by document
    rows = np.repeat(np.arange(n, dtype=np.intc), np.frombuffer(pairs, dtype=np.intc))[order]
    tf = np.frombuffer(tfs, dtype=np.intc)[order].astype(float)
    weights = idf[term_nos[order]]
    del order, term_nos
    weights = weigh(weights, tf, np.array(norm, dtype=float)[rows])
    return np.concatenate(([0], np.cumsum(dfs))).tolist(), rows, weights
