"""The run when none is committed: the config's ranker (``Config.ranker``,
:mod:`retrieval.rankers`) made for this check, and the run it makes from the
gold set's questions."""

from __future__ import annotations

from collections.abc import Callable

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.inputs import Corpus, Gold, Run, RunQuery, Source, read_run, where
from rag_corpus_check.pipeline.outcome import Retrieval
from rag_corpus_check.retrieval.protocol import Job, Questions, Ranker, Rankings
from rag_corpus_check.safe_io import InputError, stored_bytes

COMMAND_FILE = "(retriever command output)"


def ranker(cfg: Config, corpus: Source, root: str = ".", max_timeout: float | None = None) -> Ranker[Run]:
    """The config's ranker for this check; ``max_timeout``: the caller's
    ceiling on the command's timeout."""
    timeout = cfg.command_timeout if max_timeout is None else min(cfg.command_timeout, max_timeout)
    text = (cfg.corpus, *cfg.gold_files, cfg.queries)  # BM25's work budget is per byte its text is stored in
    stored = stored_bytes(cfg.base_dir, [rel for rel in text if rel is not None])
    job = Job(root, corpus.display, corpus.real, stored, timeout, _built, _reader(cfg))
    return cfg.ranker(cfg, job)


def rank(ranker: Ranker[Run], gold: Gold, problems: P.Problems, corpus: Corpus | None = None
         ) -> tuple[Run | None, Retrieval]:
    """The run of the gold set's questions (None when it cannot be made: a
    problem says why), and how it was made. ``corpus``: the corpus read,
    whose lines messages name."""
    questions = _questions(gold, problems)
    run = None
    if questions is not None:
        run = ranker.rank(_corpus_where(corpus), Questions(questions, _gold_where(gold)), problems)
    return run, Retrieval(ranker.info(), ranker.result)


def _built(file: str, name: str, rankings: Rankings) -> Run:
    run = Run(file=file, format=name)
    for qid, ranking in rankings.items():
        run.queries[qid] = RunQuery(qid, None, ranking)
    return run


def _reader(cfg: Config) -> Callable[[str, P.Problems], Run | None]:
    """How a command's output file is read: as a committed run would be."""

    def read(path: str, problems: P.Problems) -> Run | None:
        try:
            return read_run(Source(path, COMMAND_FILE, "jsonl"), cfg.limits, problems)
        except InputError as exc:
            problems.add(exc.kind, exc.message, file=exc.file, line=exc.line)
            return None

    return read


def _gold_where(gold: Gold) -> Callable[[str], tuple[str, int | None]]:
    return lambda qid: where(gold, gold.queries[qid])


def _corpus_where(corpus: Corpus | None) -> Callable[[str], tuple[str, int | None]]:
    """A corpus record's file and line (the exact reader's corpus knows its lines)."""
    line = getattr(corpus, "line", None)
    file_of = corpus.file_of if corpus is not None else None
    return lambda doc_id: (file_of(doc_id) if file_of is not None else "-", line(doc_id) if line is not None else None)


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
