"""The check without a ranking (``rag-corpus-check validate``, the pre-commit
hook): the config, then every input file — corpus, gold files (or the
dataset), a committed run, the vectors folder of a dense or hybrid config —
read by the same readers and held to the same cross-file rules as in a full
check, but nothing is retrieved, measured or gated. It takes seconds where a
retrieval can take minutes; what it cannot see is everything that needs a
ranking (the thresholds, the unknown ids a retriever command would return).
numpy is imported only for a vectors folder."""

from __future__ import annotations

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.inputs import Inputs, chunks, read_inputs
from rag_corpus_check.inputs.cross_file import check_labels, cross_check
from rag_corpus_check.inputs.question_texts import duplicate_questions
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.pipeline.rankings import _corpus_where as corpus_where
from rag_corpus_check.pipeline.rankings import _gold_where as gold_where
from rag_corpus_check.pipeline.rankings import _questions as questions_of
from rag_corpus_check.pipeline.stages import Options, configure, enter, gold_sources, input_sources
from rag_corpus_check.retrieval.protocol import Questions


def validate(root: str, config_path: str) -> Outcome:
    """The config and the inputs validated; ``problems`` says what is wrong
    (no evaluation: nothing was measured)."""
    out = Outcome(P.Problems(), Context())
    enter(out, None)
    cfg = configure(root, config_path, out, Options())
    if cfg is not None:
        dense = _dense(cfg, root)
        _check(cfg, out, _read(root, cfg, out, dense), dense)
    enter(out, None)
    return out


def _read(root: str, cfg: Config, out: Outcome, dense) -> Inputs:
    enter(out, "load")
    sources = input_sources(root, cfg, out.problems)
    if sources is None:
        return Inputs()
    out.formats = {source.display: source.shown_format for source in sources.values()}
    return read_inputs(sources["corpus"], gold_sources(sources), sources.get("run"), cfg.limits, out.problems,
                       on_doc=dense.add if dense is not None else None, queries=sources.get("queries"),
                       analyzer=cfg.bm25.analyzer())


def _dense(cfg: Config, root: str):
    if not cfg.uses_vectors:
        return None
    from rag_corpus_check.retrieval.dense.ranker import DenseRanker

    return DenseRanker(cfg, root)


def _check(cfg: Config, out: Outcome, inputs: Inputs, dense) -> None:
    """The checks a full check makes before and after its ranking, the
    ranking aside."""
    out.gold, out.run = inputs.gold, inputs.run
    if out.gold is not None:
        duplicate_questions(out.gold, out.problems)
    corpus = inputs.corpus if _clean(out) else None
    out.inputs.update(inputs.digests)
    if corpus is not None and _clean(out):
        _cross_checks(cfg, out, corpus, dense)


def _cross_checks(cfg: Config, out: Outcome, corpus, dense) -> None:
    """The labels against the corpus, then the committed run and the vectors."""
    assert out.gold is not None
    enter(out, "validate")
    out.corpus = corpus
    check_labels(cfg, corpus, out.gold, out.problems)
    if out.run is not None and _clean(out):
        _run(cfg, out)
    if dense is not None and _clean(out):
        _vectors(out, dense, corpus)


def _clean(out: Outcome) -> bool:
    """A gold set read, and no error so far."""
    return out.gold is not None and not out.problems.has_errors()


def _run(cfg: Config, out: Outcome) -> None:
    """A committed run against the corpus (as documents for a chunked corpus
    whose gold set labels documents, as the full check compares it)."""
    corpus, gold, run = out.corpus, out.gold, out.run
    assert corpus is not None and gold is not None and run is not None
    if chunks.level(corpus, gold) == chunks.DOCUMENT:
        corpus, run = chunks.as_documents(corpus, gold, run, out.problems)
    cross_check(cfg, corpus, gold, run, out.problems, labels_checked=True)


def _vectors(out: Outcome, dense, corpus) -> None:
    """The vectors folder read and fresh for every served record and question."""
    assert out.gold is not None
    questions = questions_of(out.gold, out.problems)
    if questions is not None and dense.check(Questions(questions, gold_where(out.gold)), corpus_where(corpus),
                                            out.problems):
        out.vectors = dense.vectors
