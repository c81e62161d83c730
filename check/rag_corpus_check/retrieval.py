"""The run when none is committed: the built-in BM25, indexed while the corpus
is read, or the configured retriever command."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

from rag_corpus_check import problems as P
from rag_corpus_check.config import Config
from rag_corpus_check.inputs import Gold, Run, RunQuery, Source, read_run, where
from rag_corpus_check.outcome import Retrieval
from rag_corpus_check.progress import current as current_progress
from rag_corpus_check.retrieve import BM25Index, Budget
from rag_corpus_check.retrieve_command import run_command
from rag_corpus_check.safe_io import InputError

BM25_FILE = "(built-in BM25)"
COMMAND_FILE = "(retriever command output)"
# The questions file a retriever command reads. A YAML gold set of 4 MiB can
# repeat one 100k-character question through aliases into gigabytes.
MAX_QUESTIONS_BYTES = 256 * 1024**2


def budget_message(exc: Budget, cfg: Config) -> str:
    return (f"{exc.message}; raise `limits.{exc.limit}` in {cfg.path_display} if this input is "
            "meant (with --base, in a PR that sets a new `rule_change_reason`)")


class Retriever:
    """Produces the run of a config without a committed one."""

    def __init__(self, cfg: Config, corpus_file: str):
        self.cfg = cfg
        self.index = BM25Index(cfg.bm25, cfg.bounds) if cfg.run_source == "bm25" else None
        self.corpus_file = corpus_file
        self._done: dict[str, list[str]] = {}  # text -> ranking: the same question text is searched once

    def on_doc(self) -> Callable[[str, dict], None] | None:
        """What the corpus reader hands every valid document to (BM25 indexes
        it), or None."""
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

    def run(self, corpus_real: str, gold: Gold, problems: P.Problems) -> tuple[Run | None, Retrieval]:
        questions = _questions(gold, problems)
        if self.index is not None:
            return (self._bm25(questions, gold, problems) if questions is not None else None), self._bm25_info()
        info = Retrieval({"type": "command", "command": list(self.cfg.command or []), "timeout": self.cfg.command_timeout})
        if questions is None:
            return None, info
        return self._command(corpus_real, questions, problems, info), info

    def _bm25_info(self) -> Retrieval:
        p, index = self.cfg.bm25, self.index
        assert index is not None
        return Retrieval({"type": "bm25", "k1": p.k1, "b": p.b, "depth": p.depth, "statuses": list(p.statuses),
                          "stopwords": p.stopwords, "indexed_documents": index.size})

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

    def rank_texts(self, questions: dict[str, str], problems: P.Problems) -> dict[str, list[str]] | None:
        """Rankings of other questions (the base's, by id) on this corpus,
        after :meth:`run`: the built-in BM25 only (None otherwise, or when
        the work budget runs out, which is a problem)."""
        if self.index is None:
            return None
        out = {}
        try:
            for qid, text in questions.items():
                out[qid] = self._search(text)
        except Budget as exc:
            problems.add(P.LIMIT, budget_message(exc, self.cfg) + " (ranking the base's questions)",
                         file=self.cfg.path_display)
            return None
        return out

    def _command(self, corpus_real: str, questions, problems: P.Problems, info: Retrieval) -> Run | None:
        cfg = self.cfg
        size = sum(len(text.encode("utf-8", "surrogatepass")) + len(qid) + 32 for qid, text in questions)
        if size > MAX_QUESTIONS_BYTES:
            problems.add(P.LIMIT, f"the questions file for the retriever command would be {size} bytes, over "
                         f"{MAX_QUESTIONS_BYTES} (YAML aliases repeating a question?)", file=cfg.path_display)
            return None
        with tempfile.TemporaryDirectory(prefix="rag-corpus-check-retriever-") as workdir:
            res = run_command(cfg.command or [], corpus_path=corpus_real, questions=questions, cwd=cfg.base_dir,
                              timeout=cfg.command_timeout, depth=cfg.bm25.depth, k=cfg.k, workdir=workdir)
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
