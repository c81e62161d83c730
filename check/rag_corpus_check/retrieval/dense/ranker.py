"""The dense ranking of a config (``retriever.type: dense``, and the dense
half of ``hybrid``): the served corpus records' text hashes collected while
the corpus is read, the vectors found (a committed-vectors folder read and
checked for freshness, or a store found by text hash: :mod:`store`, with
vectors from the sources :mod:`supply` orders), then the exact search
(:mod:`search`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter, methodcaller
from typing import TYPE_CHECKING

import numpy as np

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import counted, natural_key, safe_text
from rag_corpus_check.retrieval.bm25 import allowed_work
from rag_corpus_check.retrieval.dense import (
    DOCUMENTS,
    QUESTIONS,
    STORE_FILE,
    EndpointError,
    embedded_text,
    folder_files,
)
from rag_corpus_check.retrieval.dense.choice import question_vectors
from rag_corpus_check.retrieval.dense.folder import Place, Rows, Vectors, read_vectors
from rag_corpus_check.retrieval.dense.search import DenseSearch
from rag_corpus_check.retrieval.dense.store import Store, is_store, read_store
from rag_corpus_check.retrieval.dense.supply import Found, Supply, gather, missing_message
from rag_corpus_check.retrieval.dense.trust import REEMBED, report_stale, stale, text_digest
from rag_corpus_check.retrieval.protocol import BaseQuestions, Questions, Settings, Where
from rag_corpus_check.safe_io import InputError, stored_bytes

if TYPE_CHECKING:  # imported only with an endpoint (it brings the HTTP stack)
    from rag_corpus_check.retrieval.dense.endpoint import Client

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
    supply: Supply | None = None  # for a store: where vectors come from (None: the config's own store alone)
    ids: list[str] = field(default_factory=list)  # served records, in corpus order
    digests: bytearray = field(default_factory=bytearray)  # the sha-256 of each one's embedded text
    vectors: Vectors | None = None
    base_note: str | None = None  # which vectors ranked the base's questions (:meth:`rank_base`)
    sources: Sources | None = None  # a store's, once the first record is seen
    pending: dict[bytes, str] = field(default_factory=dict)  # texts no store has (to embed), by sha-256
    failures: list = field(default_factory=list)  # the endpoint's problems while ranking the base's questions
    counts: dict[str, int] = field(default_factory=lambda: {"from_store": 0, "embedded_rows": 0, "from_pr": 0})

    def add(self, doc_id: str, rec: dict) -> None:
        """For the exact corpus reader: a valid record (kept if served)."""
        if rec.get("status", "active") in self.cfg.bm25.statuses:
            self.ids.append(doc_id)
            text = embedded_text(rec, self.cfg.embed)
            key = text_digest(text)
            self.digests += key
            self._remember([key], [text])

    def block(self, first: int, records: list, ids: list[str]) -> None:
        """For the fast corpus reader: a block of valid records (pair tuples),
        each step one C loop over the block (0.17 s a loop per record was, at 100k)."""
        recs = list(map(dict, records))
        served = list(compress(recs, map(set(self.cfg.bm25.statuses).__contains__, map(_STATUS, recs))))
        self.ids += map(_ID, served)
        fields = self.cfg.embed
        texts = list(map(_TEXT, served)) if fields == ("text",) else [embedded_text(r, fields) for r in served]
        keys = list(map(_DIGEST, map(_SHA256, map(_UTF8, texts))))
        self.digests += b"".join(keys)
        self._remember(keys, texts)

    def clear(self) -> None:
        """Forget the records (the corpus is read again from line 1)."""
        self.ids, self.digests, self.pending = [], bytearray(), {}

    def _remember(self, keys: list[bytes], texts: list[str]) -> None:
        """Keep the texts no store has (a store only): they are embedded in the job."""
        sources = self._sources()
        if sources.stores is None:
            return
        pending = self.pending
        for key, text in zip(keys, texts, strict=True):
            if key not in pending and not sources.known(key):
                pending[key] = text

    def _sources(self) -> Sources:
        if self.sources is None:
            self.sources = Sources.of(self.cfg, self.root, self.supply)
        return self.sources

    def rank(self, questions: Questions, corpus_line: Where, problems: P.Problems) -> dict[str, list[str]] | None:
        """Question id -> ranking; None (with problems) when the folder is
        invalid or stale. ``corpus_line(id)`` is a record's (file, line). May raise
        :class:`bm25.Budget`."""
        if self._sources().stores is not None:
            if not self._from_store(questions, corpus_line, problems):
                return None
        elif not self.check(questions, corpus_line, problems):
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
        if self.sources is not None and self.sources.stores is not None:
            return self._base_from_store(base, hybrid)
        chosen = question_vectors(base, self.vectors, hybrid)
        self.base_note = chosen.note
        rankings = self._search(self.vectors).rank(chosen.matrix, self.cfg.bm25.depth) if chosen.qids else []
        return dict(zip(chosen.qids, rankings, strict=True))

    def _search(self, vectors: Vectors) -> DenseSearch:
        """The exact search over the served records' rows, its work bounded
        per byte of the input files as stored (corpus, gold, vectors folder)."""
        docs, bounds, cfg = vectors.documents, self.cfg.bounds, self.cfg
        assert cfg.vectors is not None
        if self.sources is not None and self.sources.stores is not None:
            folder: int | None = self.sources.size  # a store's: its store.json and segments
        else:
            folder = stored_bytes(cfg.base_dir, folder_files(cfg.vectors))
        size = None if folder is None or self.stored is None else self.stored + folder
        allowed = None if size is None else allowed_work(bounds, size)
        return DenseSearch(docs.vectors, docs.keys, self._eligible(docs), bounds.max_retrieval_work, allowed, size)

    def check(self, questions: Questions, corpus_line: Where, problems: P.Problems) -> bool:
        """The folder read and valid, with a current row for every served
        record and every question (problems say what is not); nothing ranked."""
        if self._sources().stores is not None:
            return self._store_checked(questions, corpus_line, problems)
        vectors = self._read(problems)
        return vectors is not None and self._fresh(vectors, questions, corpus_line, problems)

    def _store_checked(self, questions: Questions, corpus_line: Where, problems: P.Problems) -> bool:
        """A store read and valid (``validate``: nothing embedded). Texts it
        lacks are one warning when the config names an endpoint (the check
        embeds them in the job), else errors at their lines as in the check."""
        endpoint = self.cfg.endpoint
        if endpoint is None:
            return self._from_store(questions, corpus_line, problems)
        sources = self._sources()
        if not sources.ready(problems):
            return False
        qids = [qid for qid, _ in questions.items]
        qkeys = b"".join(text_digest(text) for _, text in questions.items)
        lacking = sum(len(gather(ids, keys, sources.trusted, {}, sources.dims, sources.pr).missing)
                      for ids, keys in ((list(self.ids), self.digests), (qids, qkeys)))
        if lacking:
            host = safe_text(endpoint.host, 200)
            it = "it" if lacking == 1 else "them"
            are = "is" if lacking == 1 else "are"
            problems.add(P.CONSISTENCY, f"{counted(lacking, 'text')} {are} not in the store `{self.cfg.vectors}` yet: "
                         f"the check embeds {it} through {host} in the job (with the key in "
                         f"${endpoint.key_env}), or run `rag-corpus-check embed --endpoint` to add {it}",
                         file=self.cfg.path_display, severity=P.WARNING)
        return True

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

    # A store (:mod:`store`): every vector found by its text's sha-256.

    def embedding(self) -> dict | None:
        """For a store: how many vectors were found in it, how many texts were
        embedded in the job (by which host, how many tokens and requests)."""
        if self.sources is None or self.sources.stores is None:
            return None
        client = self.supply.client if self.supply is not None else None
        stats = client.stats() if client is not None else {"host": None, "texts": 0, "tokens": 0, "requests": 0}
        return {**stats, **self.counts}

    def _from_store(self, questions: Questions, corpus_line: Where, problems: P.Problems) -> bool:
        """The vectors of the served records and the questions, from the
        sources :mod:`supply` orders (texts none has embedded in the job);
        False (with problems) when one cannot be had."""
        sources = self._sources()
        if not sources.ready(problems):
            return False
        supply = self.supply
        if supply is not None and supply.with_base and supply.trusted is None and supply.note:
            problems.add(P.TRUST, f"the base's store cannot be used ({supply.note}): no vector of this PR's store "
                         "is checked against it; texts are embedded in the job, or taken from this PR where the "
                         "base allows it", file=self.cfg.path_display, severity=P.WARNING)
        qids = [qid for qid, _ in questions.items]
        qkeys = [text_digest(text) for _, text in questions.items]
        self._remember(qkeys, [text for _, text in questions.items])
        if not self._embed(problems):
            return False
        got = sources.got()
        docs = gather(self.ids, self.digests, sources.trusted, got, sources.dims, sources.pr)
        asked = gather(qids, b"".join(qkeys), sources.trusted, got, sources.dims, sources.pr)
        self.counts = {"from_store": docs.stored + asked.stored, "embedded_rows": docs.embedded + asked.embedded,
                       "from_pr": len(docs.from_pr) + len(asked.from_pr)}
        if docs.missing or asked.missing:
            self._missing(docs, asked, corpus_line, questions.where, problems)
            return False
        shown = f"{self.cfg.vectors}/{STORE_FILE}"
        self.vectors = Vectors(str(self.cfg.vectors), str(self.cfg.model), sources.dims,
                               Rows(shown, shown, list(self.ids), self.digests, matrix=docs.matrix),
                               Rows(shown, shown, qids, bytearray(b"".join(qkeys)), matrix=asked.matrix),
                               dict(sources.digests), from_store=True,
                               supplied={"documents": docs.from_pr, "questions": asked.from_pr})
        return True

    def _embed(self, problems: P.Problems) -> bool:
        """The pending texts embedded through the trusted endpoint (when there is one, with its key)."""
        client = self.supply.client if self.supply is not None else None
        if not self.pending or client is None:
            return True
        client.dimensions = self._sources().dims
        try:
            client.embed(self.pending)
        except EndpointError as exc:
            problems.add(exc.kind, exc.message, file=self.cfg.path_display)
            return False
        return True

    def _missing(self, docs: Found, asked: Found, corpus_line: Where, question_where: Where,
                 problems: P.Problems) -> None:
        for ids, where in ((docs.missing, corpus_line), (asked.missing, question_where)):
            report_stale([(key, "has no vector: its text is not in the store") for key in ids], where,
                         f"`{self.cfg.vectors}`", problems)
        supply = self.supply or Supply(with_base=False)
        problems.add(P.CONSISTENCY, missing_message(len(docs.missing) + len(asked.missing), str(self.cfg.vectors),
                                                    supply, supply.key_env), file=self.cfg.path_display)

    def _base_from_store(self, base: BaseQuestions, hybrid: bool) -> dict[str, list[str]]:
        """The base's questions, each with the vector of its text as the base
        wrote it, from the same sources (a text the PR reworded is embedded
        too); a question whose text has no vector is left unranked."""
        sources = self._sources()
        qids = sorted(base.texts, key=natural_key)
        keys = [text_digest(base.texts[q]) for q in qids]
        self.pending = {}
        self._remember(keys, [base.texts[q] for q in qids])
        failed = P.Problems()
        embedded = self._embed(failed)
        self.failures = failed.errors
        found = gather(qids, b"".join(keys), sources.trusted, sources.got(), sources.dims, sources.pr)
        missing = set(found.missing)
        ranked = [i for i, q in enumerate(qids) if q not in missing]
        fused = ", fused with the built-in BM25 over the base's question texts" if hybrid else ""
        whose = " (the base's store)" if sources.with_base else ""
        note = (f"the base's gold set was ranked with the vectors of the base's question texts, found by text in "
                f"`{self.cfg.vectors}`{whose} or embedded in the job{fused}")
        if found.missing:
            why = "" if embedded else " (the endpoint failed)"
            note += f"; {counted(len(found.missing), 'question')} of the base had no vector and no ranking{why}"
        self.base_note = note
        if not ranked or self.vectors is None:
            return {}
        rankings = self._search(self.vectors).rank(found.matrix[ranked].astype(np.float64), self.cfg.bm25.depth)
        return {qids[i]: r for i, r in zip(ranked, rankings, strict=True)}


@dataclass
class Sources:
    """A store-layout check's stores (:mod:`supply`): ``stores`` is None
    for the committed-vectors layout."""

    stores: list[Store] | None = None
    trusted: list[Store] = field(default_factory=list)
    pr: Store | None = None  # the PR's store, when its vectors are taken
    error: InputError | None = None
    dims: int = 0
    size: int = 0
    with_base: bool = False
    client: Client | None = None
    digests: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, cfg: Settings, root: str, supply: Supply | None) -> Sources:
        assert cfg.vectors is not None
        if not is_store(root, cfg.base_dir, cfg.vectors):
            return cls()
        supply = supply or Supply(with_base=False)
        out = cls(stores=[], with_base=supply.with_base, client=supply.client)
        try:
            own = read_store(root, cfg.base_dir, cfg.vectors, cfg.limits)
            out._check(own, cfg)
        except InputError as exc:
            out.error = exc
            return out
        out.digests, out.size, out.dims = own.digests, own.size, own.info.dimensions
        if not supply.with_base:
            out.trusted = [own]
        elif supply.trusted is not None and supply.trusted.info != own.info:
            out.error = InputError("consistency", f"store.json differs from the base's ({supply.trusted.info.to_json()}); "
                                   "a new model or `embed` needs a new `retriever.model` and a new store",
                                   file=f"{cfg.vectors}/{STORE_FILE}", line=1)
            return out
        else:
            out.trusted = [supply.trusted] if supply.trusted is not None else []
            out.pr = own if supply.accept_pr else None
        out.stores = out.trusted + ([out.pr] if out.pr is not None else [])
        return out

    @staticmethod
    def _check(store: Store, cfg: Settings) -> None:
        shown = f"{cfg.vectors}/{STORE_FILE}"
        if store.info.model != cfg.model:
            raise InputError("consistency", f"the store holds vectors of `{store.info.model[:100]}`, but the "
                             f"config's `retriever.model` is `{str(cfg.model)[:100]}`; a new model needs a new store "
                             "(`rag-corpus-check embed --init`)", file=shown, line=1)
        if store.info.embed != tuple(cfg.embed):
            raise InputError("consistency", f"the store's vectors embed {', '.join(store.info.embed)}, but the "
                             f"config's `retriever.embed` is {', '.join(cfg.embed)}; a new `embed` needs a new store",
                             file=shown, line=1)

    def known(self, key: bytes) -> bool:
        return any(key in store for store in self.stores or ())

    def ready(self, problems: P.Problems) -> bool:
        """The stores were read (else the problem that stopped them is added)."""
        if self.error is not None:
            problems.add_input_error(self.error)
            return False
        return True

    def got(self) -> dict[bytes, np.ndarray]:
        """The vectors embedded in the job so far, by text sha-256."""
        return self.client.got if self.client is not None else {}
