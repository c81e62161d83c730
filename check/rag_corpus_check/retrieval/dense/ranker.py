"""The dense ranking of a config (``retriever.type: dense``, and the dense
half of ``hybrid``): the served corpus records' text hashes collected while
the corpus is read, the vectors folder read and checked for freshness, then
the exact search (:mod:`search`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter, methodcaller

import numpy as np

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.retrieval.bm25 import allowed_work
from rag_corpus_check.retrieval.dense import DOCUMENTS, QUESTIONS, folder_files
from rag_corpus_check.retrieval.dense.choice import question_vectors
from rag_corpus_check.retrieval.dense.folder import Place, Rows, Vectors, read_vectors
from rag_corpus_check.retrieval.dense.search import DenseSearch
from rag_corpus_check.retrieval.dense.trust import REEMBED, report_stale, stale, text_digest
from rag_corpus_check.retrieval.protocol import BaseQuestions, Questions, Settings, Where
from rag_corpus_check.safe_io import InputError, stored_bytes

_STATUS = methodcaller("get", "status", "active")
_ID, _TEXT = itemgetter("id"), itemgetter("text")
_UTF8 = methodcaller("encode", "utf-8", "surrogatepass")
_SHA256, _DIGEST = hashlib.sha256, type(hashlib.sha256()).digest


@dataclass
class DenseRanker:
    """What dense retrieval keeps of the corpus: the id of each record it
    serves and the sha-256 of its text (32 bytes each), nothing else."""

    cfg: Settings
    root: str
    stored: int | None = None  # the size on disk of the corpus and gold files (the work budget's bytes)
    ids: list[str] = field(default_factory=list)  # served records, in corpus order
    digests: bytearray = field(default_factory=bytearray)  # the sha-256 of each one's text
    vectors: Vectors | None = None
    base_note: str | None = None  # which vectors ranked the base's questions (:meth:`rank_base`)

    def add(self, doc_id: str, rec: dict) -> None:
        """For the exact corpus reader: a valid record (kept if served)."""
        if rec.get("status", "active") in self.cfg.bm25.statuses:
            self.ids.append(doc_id)
            self.digests += text_digest(rec["text"])

    def block(self, first: int, records: list) -> None:
        """For the fast corpus reader: a block of valid records (pair tuples),
        each step one C loop over the block (0.17 s a loop per record was, at 100k)."""
        recs = list(map(dict, records))
        served = list(compress(recs, map(set(self.cfg.bm25.statuses).__contains__, map(_STATUS, recs))))
        self.ids += map(_ID, served)
        self.digests += b"".join(map(_DIGEST, map(_SHA256, map(_UTF8, map(_TEXT, served)))))

    def clear(self) -> None:
        """Forget the records (the corpus is read again from line 1)."""
        self.ids, self.digests = [], bytearray()

    def rank(self, questions: Questions, corpus_line: Where, problems: P.Problems) -> dict[str, list[str]] | None:
        """Question id -> ranking; None (with problems) when the folder is
        invalid or stale. ``corpus_line(id)`` is a record's (file, line). May raise
        :class:`bm25.Budget`."""
        if not self.check(questions, corpus_line, problems):
            return None
        vectors = self.vectors
        assert vectors is not None
        asked, items = vectors.questions, questions.items
        rows = [asked.row_of[qid] for qid, _ in items]
        rankings = self._search(vectors).rank(np.asarray(asked.vectors[rows]), self.cfg.bm25.depth)
        return {qid: ranking for (qid, _), ranking in zip(items, rankings, strict=True)}

    def rank_base(self, base: BaseQuestions, hybrid: bool) -> dict[str, list[str]]:
        """The base's questions on this corpus, after :meth:`rank`: each with
        the vector of its text as the base wrote it (:mod:`choice`;
        ``base_note`` says which vectors, set before the search). May raise
        :class:`bm25.Budget`."""
        assert self.vectors is not None
        chosen = question_vectors(base, self.vectors, hybrid)
        self.base_note = chosen.note
        rankings = self._search(self.vectors).rank(chosen.matrix, self.cfg.bm25.depth) if chosen.qids else []
        return dict(zip(chosen.qids, rankings, strict=True))

    def _search(self, vectors: Vectors) -> DenseSearch:
        """The exact search over the served records' rows, its work bounded
        per byte of the input files as stored (corpus, gold, vectors folder)."""
        docs, bounds, cfg = vectors.documents, self.cfg.bounds, self.cfg
        assert cfg.vectors is not None
        folder = stored_bytes(cfg.base_dir, folder_files(cfg.vectors))
        size = None if folder is None or self.stored is None else self.stored + folder
        allowed = None if size is None else allowed_work(bounds, size)
        return DenseSearch(docs.vectors, docs.keys, self._eligible(docs), bounds.max_retrieval_work, allowed, size)

    def check(self, questions: Questions, corpus_line: Where, problems: P.Problems) -> bool:
        """The folder read and valid, with a current row for every served
        record and every question (problems say what is not); nothing ranked."""
        vectors = self._read(problems)
        return vectors is not None and self._fresh(vectors, questions, corpus_line, problems)

    def _eligible(self, docs: Rows) -> np.ndarray:
        """The rows of the served records, sorted."""
        if self.ids == docs.keys:  # the corpus lists every row, in row order
            return np.arange(len(self.ids), dtype=np.int64)
        return np.sort(np.fromiter(map(docs.row_of.__getitem__, self.ids), np.int64, len(self.ids)))

    def _read(self, problems: P.Problems) -> Vectors | None:
        cfg = self.cfg
        assert cfg.vectors is not None and cfg.model is not None
        try:
            self.vectors = read_vectors(Place(self.root, cfg.base_dir, cfg.vectors), cfg.model, cfg.limits)
        except InputError as exc:
            problems.add_input_error(exc)
        return self.vectors

    def _fresh(self, vectors: Vectors, questions: Questions, corpus_line: Where, problems: P.Problems) -> bool:
        """Every served record and every question has a current row."""
        docs, asked = vectors.documents, vectors.questions
        old_docs = stale(self.ids, self.digests, docs)
        report_stale(old_docs, corpus_line, docs.index, problems)
        items = questions.items
        old_questions = stale([qid for qid, _ in items], b"".join(text_digest(text) for _, text in items), asked)
        report_stale(old_questions, questions.where, asked.index, problems)
        for found, (kind, key) in ((old_docs, DOCUMENTS), (old_questions, QUESTIONS)):
            if found:
                problems.add(P.CONSISTENCY, REEMBED.format(n=len(found), folder=safe_text(vectors.folder, 200),
                                                           model=safe_text(self.cfg.model, 200), kind=kind, key=key), file=getattr(vectors, kind).index)
        return not (old_docs or old_questions)
