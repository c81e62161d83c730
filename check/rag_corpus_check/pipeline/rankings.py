"""The run when none is committed: the built-in BM25, indexed while the corpus
is read, the configured retriever command, or the committed vectors (dense,
and hybrid: BM25 and dense fused, :mod:`dense`). numpy is imported only for
dense and hybrid."""

from __future__ import annotations

import os
from collections.abc import Callable

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.progress import current as current_progress
from rag_corpus_check.inputs import (
    Corpus,
    Gold,
    RecordHook,
    Run,
    RunQuery,
    Source,
    read_run,
    where,
)
from rag_corpus_check.pipeline.base_questions import BaseQuestions
from rag_corpus_check.pipeline.outcome import Retrieval
from rag_corpus_check.retrieval.bm25 import BM25Index, Budget
from rag_corpus_check.safe_io import InputError

BM25_FILE = "(built-in BM25)"
VECTORS_FILE = "(committed vectors)"
COMMAND_FILE = "(retriever command output)"
# The questions file a retriever command reads. A YAML gold set of 4 MiB can
# repeat one 100k-character question through aliases into gigabytes.
MAX_QUESTIONS_BYTES = 256 * 1024**2


def budget_message(exc: Budget, cfg: Config) -> str:
    return (f"{exc.message}; raise `limits.{exc.limit}` in {cfg.path_display} if this input is "
            "meant (with --base, in a PR that sets a new `rule_change_reason`)")


class Retriever:
    """Produces the run of a config without a committed one."""

    def __init__(self, cfg: Config, corpus_file: str, root: str = ".", max_timeout: float | None = None):
        self.cfg = cfg
        # The command's timeout: the config's, capped by the caller's ceiling.
        self.timeout = cfg.command_timeout if max_timeout is None else min(cfg.command_timeout, max_timeout)
        self.index = BM25Index(cfg.bm25, cfg.bounds) if cfg.run_source in ("bm25", "hybrid") else None
        self.dense = _dense_ranker(cfg, root)
        self.corpus_file = corpus_file
        self._done: dict[str, list[str]] = {}  # text -> ranking: the same question text is searched once

    @property
    def digests(self) -> dict[str, str]:
        """The sha-256 of each file of the vectors folder read."""
        vectors = self.dense.vectors if self.dense is not None else None
        return dict(vectors.digests) if vectors is not None else {}

    def on_doc(self) -> Callable[[str, dict], None] | None:
        """What the corpus reader hands every valid document to (BM25 indexes
        it, and for hybrid dense takes its text's hash), or None."""
        index_doc = self._index_doc()
        dense = self.dense
        if dense is None or index_doc is None:
            return index_doc

        def both(doc_id: str, rec: dict) -> None:
            index_doc(doc_id, rec)
            dense.add(doc_id, rec)

        return both

    def hook(self) -> RecordHook | None:
        """Dense alone (no BM25 to index): the dense ranker, which takes the
        fast corpus reader's blocks (or the exact one's records)."""
        return self.dense if self.dense is not None and self.index is None else None

    def _index_doc(self) -> Callable[[str, dict], None] | None:
        index = self.index
        if index is None:
            return None
        statuses = set(self.cfg.bm25.statuses)

        def add(doc_id: str, rec: dict) -> None:
            if rec.get("status", "active") in statuses:
                try:
                    index.add(doc_id, rec.get("title", "") + "\n" + rec["text"])
                except Budget as exc:
                    raise InputError(P.LIMIT, budget_message(exc, self.cfg), file=self.corpus_file) from None

        return add

    def run(self, corpus_real: str, gold: Gold, problems: P.Problems, corpus: Corpus | None = None
            ) -> tuple[Run | None, Retrieval]:
        """``corpus``: the corpus read, whose lines dense's messages name."""
        questions = _questions(gold, problems)
        if self.dense is not None:
            run = self._vectors(questions, gold, problems, _corpus_where(corpus)) if questions is not None else None
            return run, self._vectors_info()
        if self.index is not None:
            return (self._bm25(questions, gold, problems) if questions is not None else None), self._bm25_info()
        info = Retrieval({"type": "command", "command": list(self.cfg.command or []), "timeout": self.timeout})
        if questions is None:
            return None, info
        return self._command(corpus_real, questions, problems, info), info

    def _bm25_info(self) -> Retrieval:
        p, index = self.cfg.bm25, self.index
        assert index is not None
        return Retrieval({"type": "bm25", "k1": p.k1, "b": p.b, "depth": p.depth, "statuses": list(p.statuses),
                          "stopwords": p.stopwords, "indexed_documents": index.size})

    def _vectors_info(self) -> Retrieval:
        cfg = self.cfg
        info = {"type": cfg.retriever, "model": cfg.model, "vectors": cfg.vectors, "depth": cfg.bm25.depth,
                "statuses": list(cfg.bm25.statuses)}
        if cfg.retriever == "hybrid":
            info |= self._bm25_info().info | {"type": "hybrid", "rrf_k": cfg.rrf_k}
        return Retrieval(info)

    def _vectors(self, questions: list[tuple[str, str]], gold: Gold, problems: P.Problems, corpus_line) -> Run | None:
        """The dense ranking, fused with BM25's for hybrid."""
        assert self.dense is not None
        try:
            rankings = self.dense.rank(questions, gold, corpus_line, problems)
        except Budget as exc:
            problems.add(P.LIMIT, budget_message(exc, self.cfg), file=self.cfg.path_display)
            return None
        if rankings is not None and self.cfg.retriever == "hybrid":
            rankings = self._fused(rankings, questions, gold, problems)
        if rankings is None:
            return None
        run = Run(file=VECTORS_FILE, format=self.cfg.retriever)
        for qid, ranking in rankings.items():
            run.queries[qid] = RunQuery(qid, None, ranking)
        return run

    def _fused(self, dense: dict[str, list[str]], questions, gold: Gold, problems: P.Problems
               ) -> dict[str, list[str]] | None:
        from rag_corpus_check.retrieval.dense.fusion import rrf

        bm25 = self._bm25(questions, gold, problems)
        if bm25 is None:
            return None
        depth = self.cfg.bm25.depth
        return {qid: rrf([bm25.queries[qid].ranking, dense[qid]], self.cfg.rrf_k, depth) for qid in dense}

    def _bm25(self, questions: list[tuple[str, str]], gold: Gold, problems: P.Problems) -> Run | None:
        index = self.index
        assert index is not None
        index.input_bytes = stored_bytes(self.cfg)
        index.finish()
        run = Run(file=BM25_FILE, format="bm25")
        progress = current_progress()
        for i, (qid, text) in enumerate(questions, 1):
            try:
                run.queries[qid] = RunQuery(qid, None, self._search(text))
            except Budget as exc:
                file, line = where(gold, gold.queries[qid])
                problems.add(P.LIMIT, budget_message(exc, self.cfg), file=file, line=line, id=qid)
                return None
            progress.tick("retrieving with BM25", i, len(questions), unit="questions")
        return run

    def _search(self, text: str) -> list[str]:
        assert self.index is not None
        ranking = self._done.get(text)
        if ranking is None:
            ranking = self._done[text] = self.index.search(text, self.cfg.bm25.depth)
        return list(ranking)

    def rank_texts(self, base: BaseQuestions, problems: P.Problems) -> dict[str, list[str]] | None:
        """Rankings of the base's questions on this corpus, after :meth:`run`:
        the built-in BM25 ranks their texts, dense their vectors (the base's,
        :meth:`DenseRanker.rank_base`), hybrid fuses the two. None for a
        command, or when the work budget runs out (a problem)."""
        try:
            if self.dense is not None:
                return self._rank_base_vectors(base)
            if self.index is None:
                return None
            return {qid: self._search(text) for qid, text in base.texts.items()}
        except Budget as exc:
            problems.add(P.LIMIT, budget_message(exc, self.cfg) + " (ranking the base's questions)",
                         file=self.cfg.path_display)
            return None

    def _rank_base_vectors(self, base: BaseQuestions) -> dict[str, list[str]]:
        assert self.dense is not None
        rankings = self.dense.rank_base(base)
        if self.cfg.retriever != "hybrid":
            return rankings
        from rag_corpus_check.retrieval.dense.fusion import rrf

        depth = self.cfg.bm25.depth
        return {qid: rrf([self._search(base.texts[qid]), dense], self.cfg.rrf_k, depth)
                for qid, dense in rankings.items()}

    def _command(self, corpus_real: str, questions, problems: P.Problems, info: Retrieval) -> Run | None:
        cfg = self.cfg
        size = sum(len(text.encode("utf-8", "surrogatepass")) + len(qid) + 32 for qid, text in questions)
        if size > MAX_QUESTIONS_BYTES:
            problems.add(P.LIMIT, f"the questions file for the retriever command would be {size} bytes, over "
                         f"{MAX_QUESTIONS_BYTES} (YAML aliases repeating a question?)", file=cfg.path_display)
            return None
        import tempfile

        from rag_corpus_check.retrieval.external import run_command  # (subprocess, the reaper)

        with tempfile.TemporaryDirectory(prefix="rag-corpus-check-retriever-") as workdir:
            res = run_command(cfg.command or [], corpus_path=corpus_real, questions=questions, cwd=cfg.base_dir,
                              timeout=self.timeout, depth=cfg.bm25.depth, k=cfg.k, workdir=workdir)
            info.command = res
            if not res.ok or res.output_path is None:
                problems.add(P.RETRIEVER, res.message + " — see its output in the summary", file=cfg.path_display)
                return None
            try:
                return read_run(Source(res.output_path, COMMAND_FILE, "jsonl"), cfg.limits, problems)
            except InputError as exc:
                problems.add(exc.kind, exc.message, file=exc.file, line=exc.line)
                return None


def stored_bytes(cfg: Config) -> int | None:
    """The size on disk of the files BM25's text comes from (corpus, gold
    files, BEIR queries): its work budget is per byte as stored."""
    try:
        return sum(os.stat(os.path.join(cfg.base_dir, rel)).st_size
                   for rel in (cfg.corpus, *cfg.gold_files, cfg.queries) if rel is not None)
    except (OSError, ValueError):
        return None


def _corpus_where(corpus: Corpus | None) -> Callable[[str], tuple[str, int | None]]:
    """A corpus record's file and line (the exact reader's corpus knows its lines)."""
    line = getattr(corpus, "line", None)
    file = corpus.file if corpus is not None else None
    return lambda doc_id: (file or "-", line(doc_id) if line is not None else None)


def _dense_ranker(cfg: Config, root: str):
    """The dense ranker of a dense or hybrid config (numpy is imported here), else None."""
    if not cfg.uses_vectors:
        return None
    from rag_corpus_check.pipeline.dense_ranker import DenseRanker

    return DenseRanker(cfg, root)


def _questions(gold: Gold, problems: P.Problems) -> list[tuple[str, str]] | None:
    missing = [q for q in gold.queries.values() if not (q.text or "").strip()]
    for q in missing:
        file, line = where(gold, q)
        problems.add(
            P.CONFIG,
            "question has no `query` text, which the retriever needs; add it, or give a "
            "committed `run:` in the config (TREC qrels carry no text)",
            file=file, line=line, id=q.query_id,
        )
    return None if missing else [(qid, q.text or "") for qid, q in sorted(gold.queries.items())]
