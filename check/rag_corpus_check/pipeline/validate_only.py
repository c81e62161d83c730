"""The check without a ranking (``rag-corpus-check validate``, the pre-commit
hook): the config, then every input file — corpus, gold files (or the
dataset), a committed run, the vectors folder of a dense or hybrid config —
read by the same readers and held to the same cross-file rules as in a full
check, but nothing is retrieved, measured or gated. It takes seconds where a
retrieval can take minutes; what it cannot see is everything that needs a
ranking (the thresholds, the unknown ids a retriever command would return).
numpy is imported only for a vectors folder."""

from __future__ import annotations

import dataclasses

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.inputs import Gold, Run, chunks, read_inputs
from rag_corpus_check.inputs.cross_file import check_labels, cross_check
from rag_corpus_check.inputs.question_texts import duplicate_questions
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.pipeline.outcome import NOT_MEASURED, Measured, Outcome
from rag_corpus_check.pipeline.rankings import _corpus_where as corpus_where
from rag_corpus_check.pipeline.rankings import _gold_where as gold_where
from rag_corpus_check.pipeline.rankings import _questions as questions_of
from rag_corpus_check.pipeline.stages import Options, configure, enter, gold_sources, input_sources
from rag_corpus_check.retrieval.protocol import Questions


def validate(root: str, config_path: str) -> Outcome:
    """The config and the inputs validated; ``problems`` says what is wrong
    (no evaluation, no verdict: nothing was measured)."""
    enter(None)
    begun = configure(root, config_path, P.Problems(), Context(), Options())
    measured = NOT_MEASURED
    if begun.config is not None:
        measured = _validated(root, begun.config, begun.problems)
    enter(None)
    return Outcome(begun.problems, begun.context, config=begun.config, config_digests=begun.digests,
                   measured=measured)


def _validated(root: str, cfg: Config, problems: P.Problems) -> Measured:
    """Every input read and checked as a full check would, nothing ranked."""
    dense = _dense(cfg, root)
    enter("load")
    sources = input_sources(root, cfg, problems)
    if sources is None:
        return NOT_MEASURED
    formats = {source.display: source.shown_format for source in sources.values()}
    inputs = read_inputs(sources["corpus"], gold_sources(sources), sources.get("run"), cfg.limits, problems,
                         on_doc=dense.add if dense is not None else None, queries=sources.get("queries"),
                         analyzer=cfg.bm25.analyzer())
    if inputs.gold is not None:
        duplicate_questions(inputs.gold, problems)
    corpus = inputs.corpus if _clean(problems, inputs.gold) else None  # read when first asked for
    read = Measured(inputs.gold, inputs.run, formats=formats, digests=inputs.digests)
    if corpus is None or not _clean(problems, inputs.gold):
        return read
    return dataclasses.replace(read, corpus=corpus, corpus_read=corpus, vectors=_cross_checks(cfg, problems, read, corpus, dense))


def _dense(cfg: Config, root: str):
    if not cfg.uses_vectors:
        return None
    from rag_corpus_check.retrieval.dense.ranker import DenseRanker

    return DenseRanker(cfg, root)


def _cross_checks(cfg: Config, problems: P.Problems, read: Measured, corpus, dense) -> object | None:
    """The labels against the corpus, then the committed run and the
    vectors; the vectors read when they are current."""
    assert read.gold is not None
    enter("validate")
    check_labels(cfg, corpus, read.gold, problems)
    if read.run is not None and _clean(problems, read.gold):
        _run(cfg, problems, corpus, read.gold, read.run)
    if dense is not None and _clean(problems, read.gold):
        return _vectors(problems, read.gold, dense, corpus)
    return None


def _clean(problems: P.Problems, gold: Gold | None) -> bool:
    """A gold set read, and no error so far."""
    return gold is not None and not problems.has_errors()


def _run(cfg: Config, problems: P.Problems, corpus, gold: Gold, run: Run) -> None:
    """A committed run against the corpus (as documents for a chunked corpus
    whose gold set labels documents, as the full check compares it)."""
    if chunks.level(corpus, gold) == chunks.DOCUMENT:
        corpus, run = chunks.as_documents(corpus, gold, run, problems)
    cross_check(cfg, corpus, gold, run, problems, labels_checked=True)


def _vectors(problems: P.Problems, gold: Gold, dense, corpus) -> object | None:
    """The vectors folder read and fresh for every served record and question."""
    questions = questions_of(gold, problems)
    if questions is not None and dense.check(Questions(questions, gold_where(gold)), corpus_where(corpus), problems):
        return dense.vectors
    return None
