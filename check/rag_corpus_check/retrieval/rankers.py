"""The rankers: how a run is made in the job when no run is committed, one
class per ``retriever.type`` keeping the :class:`protocol.Ranker` interface,
and :data:`RANKERS`, the one list of them, from which the config names its
ranker once (``Config.ranker``). Nothing else in the package compares
retriever type names: what differs between them is an attribute or a method.

BM25 indexes the texts (:mod:`bm25`); dense searches the committed vectors
(:mod:`dense.ranker`, numpy imported only then); hybrid fuses the two
(:mod:`dense.fusion`); the command runs the team's retriever
(:mod:`external`). A committed run is no ranker: the readers read it with
the other input files (``Config.run``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.progress import current as current_progress
from rag_corpus_check.core.text import counted
from rag_corpus_check.retrieval.bm25 import BM25Index, Budget
from rag_corpus_check.retrieval.protocol import (
    BaseQuestions,
    BaseRanked,
    Job,
    Questions,
    R,
    Ranker,
    Rankings,
    Settings,
    Where,
    budget_message,
)
from rag_corpus_check.safe_io import InputError

if TYPE_CHECKING:  # numpy: only for dense and hybrid
    from rag_corpus_check.retrieval.dense.ranker import DenseRanker

# The questions file a retriever command reads. A YAML gold set of 4 MiB can
# repeat one 100k-character question through aliases into gigabytes.
MAX_QUESTIONS_BYTES = 256 * 1024**2


def _embedding_rules(s: Settings) -> dict:
    """What a dense ranking embeds and where its missing vectors may come
    from (the endpoint as URL and the key's variable name, never the key)."""
    return {"embed": list(s.embed), "endpoint": s.endpoint.rule() if s.endpoint is not None else None,
            "accept_pr_vectors": s.accept_pr_vectors}


def _embedded_line(embedding: dict | None, esc) -> str:
    """The run line's words on the texts embedded in the job."""
    if not embedding:
        return ""
    found = f"; {counted(embedding['from_store'], 'vector')} found in the store by text"
    if embedding.get("from_pr"):
        found += f", {embedding['from_pr']} taken from this PR's store (on trust)"
    if not embedding.get("host"):
        return found + ", nothing embedded in the job"
    return (f"{found}, {counted(embedding['texts'], 'text')} embedded in the job by {esc(embedding['host'], 200)} "
            f"({counted(embedding['tokens'], 'token')}, {counted(embedding['requests'], 'request')})")


def _bm25_rules(s: Settings) -> dict:
    p = s.bm25
    return {"source": "built-in BM25", "k1": p.k1, "b": p.b, "depth": p.depth,
            "statuses": list(p.statuses), "stopwords": p.stopwords, "stemmer": p.stemmer}


class BM25(Ranker[R]):
    """The built-in BM25, indexed while the corpus is read."""

    name, said = "bm25", "the built-in BM25"
    ranks_base = True
    FILE = "(built-in BM25)"

    def __init__(self, s: Settings, job: Job[R]):
        super().__init__(s, job)
        self.index = BM25Index(s.bm25, s.bounds)
        self._done: Rankings = {}  # text -> ranking: the same question text is searched once

    @classmethod
    def rules(cls, s: Settings) -> dict:
        return _bm25_rules(s)

    @classmethod
    def line(cls, info: dict, esc, code) -> str | None:
        if not info:
            return None
        stop = f", stop words {info['stopwords']}" if info.get("stopwords") else ""
        stem = f", stemmer {info['stemmer']}" if info.get("stemmer") else ""
        return (f"Run: built-in BM25 over {info['indexed_documents']} documents (status "
                f"{', '.join(info['statuses'])}; k1 {info['k1']:g}, b {info['b']:g}, depth {info['depth']}{stop}{stem})")

    def on_doc(self) -> Callable[[str, dict], None]:
        index, statuses = self.index, set(self.s.bm25.statuses)

        def add(doc_id: str, rec: dict) -> None:
            if rec.get("status", "active") in statuses:
                try:
                    index.add(doc_id, rec.get("title", "") + "\n" + rec["text"])
                except Budget as exc:
                    raise InputError(P.LIMIT, budget_message(exc, self.s), file=self.job.corpus_file) from None

        return add

    def rank(self, corpus: Where, questions: Questions, problems: P.Problems) -> R | None:
        rankings = self.rankings(questions, problems)
        return None if rankings is None else self.job.build(self.FILE, self.name, rankings)

    def rankings(self, questions: Questions, problems: P.Problems) -> Rankings | None:
        self.index.input_bytes = self.job.stored
        self.index.finish()
        out: Rankings = {}
        progress = current_progress()
        for i, (qid, text) in enumerate(questions.items, 1):
            try:
                out[qid] = self.search(text)
            except Budget as exc:
                file, line = questions.where(qid)
                problems.add(P.LIMIT, budget_message(exc, self.s), file=file, line=line, id=qid)
                return None
            progress.tick("retrieving with BM25", i, len(questions.items), unit="questions")
        return out

    def search(self, text: str) -> list[str]:
        ranking = self._done.get(text)
        if ranking is None:
            ranking = self._done[text] = self.index.search(text, self.s.bm25.depth)
        return list(ranking)

    def _rank_base(self, base: BaseQuestions) -> Rankings:
        return {qid: self.search(text) for qid, text in base.texts.items()}

    def info(self) -> dict:
        p = self.s.bm25
        return {"type": self.name, "k1": p.k1, "b": p.b, "depth": p.depth, "statuses": list(p.statuses),
                "stopwords": p.stopwords, "stemmer": p.stemmer, "indexed_documents": self.index.size}


class Dense(Ranker[R]):
    """Exact cosine search over the committed vectors (:mod:`dense.ranker`)."""

    name, said = "dense", "dense retrieval"
    needs_vectors = ranks_base = True
    fused: ClassVar[bool] = False  # fused with BM25 (how the base's questions' note says it)
    FILE = "(committed vectors)"

    def __init__(self, s: Settings, job: Job[R]):
        super().__init__(s, job)
        from rag_corpus_check.retrieval.dense.ranker import DenseRanker  # numpy

        self.dense: DenseRanker = DenseRanker(s, job.root, job.stored, job.supply)

    @classmethod
    def rules(cls, s: Settings) -> dict:
        p = s.bm25
        return {"source": "dense retrieval", "model": s.model, "vectors": s.vectors, "depth": p.depth,
                "statuses": list(p.statuses), **_embedding_rules(s)}

    @classmethod
    def line(cls, info: dict, esc, code) -> str | None:
        return cls._line("exact cosine search", info, esc, code) if info else None

    @staticmethod
    def _line(how: str, info: dict, esc, code) -> str:
        where = "the store" if info.get("embedding") else "the committed vectors"
        line = (f"Run: {how} over {where} in {code(esc(info['vectors'], 200))} (model "
                f"{code(esc(info['model'], 200))}; status {', '.join(info['statuses'])}; depth {info['depth']})")
        return line + _embedded_line(info.get("embedding"), esc)

    def hook(self) -> DenseRanker | None:
        return self.dense

    def rank(self, corpus: Where, questions: Questions, problems: P.Problems) -> R | None:
        rankings = self.rankings(corpus, questions, problems)
        return None if rankings is None else self.job.build(self.FILE, self.name, rankings)

    def rankings(self, corpus: Where, questions: Questions, problems: P.Problems) -> Rankings | None:
        try:
            return self.dense.rank(questions, corpus, problems)
        except Budget as exc:
            problems.add(P.LIMIT, budget_message(exc, self.s), file=self.s.path_display)
            return None

    def _rank_base(self, base: BaseQuestions) -> Rankings:
        return self.dense.rank_base(base, self.fused)

    def rank_base(self, base: BaseQuestions, problems: P.Problems) -> BaseRanked:
        ranked = super().rank_base(base, problems)
        for failure in self.dense.failures:  # the endpoint failed while embedding the base's questions
            problems.add(failure.kind, failure.message, file=failure.file)
        return ranked

    def base_note(self) -> str | None:
        return self.dense.base_note

    def info(self) -> dict:
        s = self.s
        out = {"type": self.name, "model": s.model, "vectors": s.vectors, "depth": s.bm25.depth,
               "statuses": list(s.bm25.statuses)}
        embedding = self.dense.embedding()
        return out | ({"embed": list(s.embed), "embedding": embedding} if embedding is not None else {})

    @property
    def vectors(self) -> Any:
        return self.dense.vectors


class Hybrid(Dense[R]):
    """BM25 and dense fused by reciprocal rank (:mod:`dense.fusion`)."""

    name, said = "hybrid", "hybrid retrieval"
    fused = True

    def __init__(self, s: Settings, job: Job[R]):
        super().__init__(s, job)
        self.bm25: BM25[R] = BM25(s, job)

    @classmethod
    def rules(cls, s: Settings) -> dict:
        return {**_bm25_rules(s), "source": "hybrid retrieval (BM25 + dense)", "model": s.model,
                "vectors": s.vectors, "rrf_k": s.rrf_k, **_embedding_rules(s)}

    @classmethod
    def line(cls, info: dict, esc, code) -> str | None:
        how = f"reciprocal rank fusion (k {info.get('rrf_k')}) of the built-in BM25 and exact cosine search"
        return cls._line(how, info, esc, code) if info else None

    def on_doc(self) -> Callable[[str, dict], None]:
        index_doc, dense = self.bm25.on_doc(), self.dense

        def both(doc_id: str, rec: dict) -> None:
            index_doc(doc_id, rec)
            dense.add(doc_id, rec)

        return both

    def hook(self) -> None:
        return None

    def rank(self, corpus: Where, questions: Questions, problems: P.Problems) -> R | None:
        dense = self.rankings(corpus, questions, problems)
        bm25 = self.bm25.rankings(questions, problems) if dense is not None else None
        if dense is None or bm25 is None:
            return None
        return self.job.build(self.FILE, self.name, {qid: self._fuse(bm25[qid], ranking) for qid, ranking in dense.items()})

    def _rank_base(self, base: BaseQuestions) -> Rankings:
        return {qid: self._fuse(self.bm25.search(base.texts[qid]), dense)
                for qid, dense in super()._rank_base(base).items()}

    def _fuse(self, bm25: list[str], dense: list[str]) -> list[str]:
        from rag_corpus_check.retrieval.dense.fusion import rrf

        return rrf([bm25, dense], self.s.rrf_k, self.s.bm25.depth)

    def info(self) -> dict:
        return super().info() | self.bm25.info() | {"type": self.name, "rrf_k": self.s.rrf_k}


class Command(Ranker[R]):
    """The team's retriever command (:mod:`external`), run without a shell."""

    name, said = "command", "a retriever command"
    runs_command = True  # ranks_base stays False: its run is of the head's questions, the base's are ranked by id

    @classmethod
    def rules(cls, s: Settings) -> dict:
        return {"source": "retriever command", "command": list(s.command or []), "depth": s.bm25.depth}

    @classmethod
    def line(cls, info: dict, esc, code) -> str:
        return f"Run: produced by the configured {code('retriever.command')} (code from this repository)"

    def rank(self, corpus: Where, questions: Questions, problems: P.Problems) -> R | None:
        s, items = self.s, questions.items
        size = sum(len(text.encode("utf-8", "surrogatepass")) + len(qid) + 32 for qid, text in items)
        if size > MAX_QUESTIONS_BYTES:
            problems.add(P.LIMIT, f"the questions file for the retriever command would be {size} bytes, over "
                         f"{MAX_QUESTIONS_BYTES} (YAML aliases repeating a question?)", file=s.path_display)
            return None
        import tempfile

        from rag_corpus_check.retrieval.external import run_command  # (subprocess, the reaper)

        with tempfile.TemporaryDirectory(prefix="rag-corpus-check-retriever-") as workdir:
            res = self.result = run_command(s.command or [], corpus_path=self.job.corpus_path, questions=items,
                                            cwd=s.base_dir, timeout=self.job.timeout, depth=s.bm25.depth, k=s.k,
                                            workdir=workdir)
            if not res.ok or res.output_path is None:
                problems.add(P.RETRIEVER, res.message + " — see its output in the summary", file=s.path_display)
                return None
            return self.job.read(res.output_path, problems)

    def info(self) -> dict:
        return {"type": self.name, "command": list(self.s.command or []), "timeout": self.job.timeout}


# `retriever.type` -> its ranker: the one list (the config schema's enum is held to it by a test).
RANKERS: dict[str, type[Ranker[Any]]] = {r.name: r for r in (BM25, Command, Dense, Hybrid)}
DEFAULT = BM25
