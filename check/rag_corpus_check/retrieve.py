"""The built-in retriever: BM25 over title + text, specified exactly so it can
be cross-checked.

* Text: Unicode NFKC, then ``str.casefold()``; tokens are the ``\\w+`` runs of
  the result (letters, digits and underscore of any script, so Russian and
  English alike). Optional stop-word lists remove tokens after that.
* Score: ``Σ_{t in query} idf(t) · tf / (tf + k1·(1 − b + b·dl/avgdl))``
  with Lucene's ``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))``. As in Lucene
  ≥ 8 (and bm25s's ``lucene`` method) the classic ``(k1 + 1)`` factor is left
  out: a constant factor that changes no ranking. ``tf`` is the
  term's count in the document, ``dl`` the document's token count, ``avgdl``
  the mean over indexed documents, ``N`` the number of indexed documents. A
  query term that occurs twice counts twice (as in Lucene's BooleanQuery).
* Ranking: score descending, ties by document id ascending (code-point
  order); documents with score 0 are not returned; at most ``depth`` ids.
* Only documents whose ``status`` is in ``statuses`` (default: active) are
  indexed: stale and restricted documents should not be served to users.

Memory: the index keeps, per term, the ids and precomputed weights of the
documents that contain it; no document text is kept.
"""

from __future__ import annotations

import math
import re
import unicodedata
from array import array
from collections import Counter
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\w+")

STOPWORDS = {
    "english": frozenset(
        "a an and are as at be but by for from has have how i if in into is it its of on or "
        "that the their there these they this to was were what when where which who why will "
        "with can do does my our you your".split()
    ),
    "russian": frozenset(
        "и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по "
        "только ее мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если "
        "уже или ни быть был него до вас нибудь опять уж вам ведь там потом себя ничего ей "
        "может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто чего раз "
        "тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь этом "
        "один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец "
        "два об другой хоть после над больше тот через эти нас про всего них какая много "
        "разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой "
        "им более всегда конечно всю между".split()
    ),
}


def tokenize(text: str, stopwords: frozenset[str] = frozenset()) -> list[str]:
    """NFKC + casefold, then ``\\w+`` runs, minus stop words."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    tokens = _TOKEN.findall(norm)
    if stopwords:
        tokens = [t for t in tokens if t not in stopwords]
    return tokens


@dataclass
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    depth: int = 100
    statuses: tuple[str, ...] = ("active",)
    stopwords: str | None = None

    def stopword_set(self) -> frozenset[str]:
        return STOPWORDS[self.stopwords] if self.stopwords else frozenset()


@dataclass
class BM25Index:
    """Built incrementally with :meth:`add` (documents streamed from the
    corpus), then frozen with :meth:`finish` before :meth:`search`."""

    params: BM25Params = field(default_factory=BM25Params)
    _doc_ids: list[str] = field(default_factory=list)
    _doc_len: list[int] = field(default_factory=list)
    _tf: dict[str, tuple[array, array]] = field(default_factory=dict)  # term -> (docs, tfs)
    _postings: dict[str, tuple[array, array]] | None = None  # term -> (docs, weights)

    def add(self, doc_id: str, text: str) -> None:
        tokens = tokenize(text, self.params.stopword_set())
        idx = len(self._doc_ids)
        self._doc_ids.append(doc_id)
        self._doc_len.append(len(tokens))
        tf_map = self._tf
        for term, tf in Counter(tokens).items():
            entry = tf_map.get(term)
            if entry is None:
                tf_map[term] = (array("l", (idx,)), array("l", (tf,)))
            else:
                entry[0].append(idx)
                entry[1].append(tf)

    @property
    def size(self) -> int:
        return len(self._doc_ids)

    def finish(self) -> BM25Index:
        n = len(self._doc_ids)
        avgdl = (sum(self._doc_len) / n) if n else 0.0
        k1, b = self.params.k1, self.params.b
        norm = [k1 * (1 - b + b * (dl / avgdl)) if avgdl else k1 for dl in self._doc_len]
        postings = {}
        for term, (docs, tfs) in self._tf.items():
            df = len(docs)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            # Compact arrays: 16 bytes a posting instead of Python objects.
            weights = array("d", [idf * tf / (tf + norm[d]) for d, tf in zip(docs, tfs, strict=True)])
            postings[term] = (docs, weights)
        self._postings = postings
        self._tf = {}
        return self

    def score(self, query: str) -> dict[int, float]:
        assert self._postings is not None, "finish() the index first"
        entries = [self._postings[t] for t in tokenize(query, self.params.stopword_set()) if t in self._postings]
        if not entries:
            return {}
        # Start from the longest posting list, copied in C; add the others in
        # Python. Addition order differs per document only in the last bits.
        entries.sort(key=lambda e: len(e[0]), reverse=True)
        docs, weights = entries[0]
        scores = dict(zip(docs, weights, strict=True))
        get = scores.get
        for docs, weights in entries[1:]:
            for d, w in zip(docs, weights, strict=True):
                scores[d] = get(d, 0.0) + w
        return scores

    def _top(self, scores: dict[int, float], depth: int) -> list[tuple[float, str]]:
        """(score, id) of the best ``depth`` documents: score descending, ties
        by id ascending. Only the documents at or above the depth-th score are
        sorted with their ids."""
        if len(scores) > depth:
            cut = sorted(scores.values(), reverse=True)[depth - 1]
            items = [(d, s) for d, s in scores.items() if s >= cut]
        else:
            items = list(scores.items())
        ids = self._doc_ids
        ranked = sorted((-s, ids[d]) for d, s in items if s > 0)[:depth]
        return [(-neg, doc_id) for neg, doc_id in ranked]

    def search(self, query: str, depth: int | None = None) -> list[str]:
        return [doc_id for _, doc_id in self._top(self.score(query), depth or self.params.depth)]

    def search_scored(self, query: str, depth: int | None = None) -> list[tuple[str, float]]:
        return [(doc_id, s) for s, doc_id in self._top(self.score(query), depth or self.params.depth)]
