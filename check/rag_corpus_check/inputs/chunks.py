"""Chunked corpora: records with a ``doc_id`` are chunks of that document.

When the gold set labels documents (doc_id values), the check evaluates
documents: a ranking of chunks becomes a ranking of their documents, each
document at the position of its first chunk, its later chunks dropped —
before the cut at K, so K counts documents. When the gold set labels chunks
(ids), chunks are evaluated as they are. Everything downstream (measures, the
by-type table, the comparison with the base) then speaks of one level.
"""

from __future__ import annotations

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs import Corpus, Gold, Run, RunQuery, where

DOCUMENT = "document"
CHUNK = "chunk"
SHOWN = 5


def level(corpus: Corpus, gold: Gold) -> str | None:
    """None for a corpus without chunks; else what the gold set labels:
    documents when any label is a doc_id, chunks otherwise."""
    if not corpus.parents:
        return None
    documents = set(corpus.parents.values())
    labelled = (d for q in gold.queries.values() for d in q.relevant)
    return DOCUMENT if any(d in documents for d in labelled) else CHUNK


def as_documents(corpus, gold: Gold, run: Run, problems: P.Problems):
    """The corpus as documents and the run as rankings of documents. A label
    that names a chunk (not a document) in a gold set of documents is an
    error: the two levels cannot be mixed."""
    mixed_labels(corpus, gold, problems)
    parents = corpus.parents
    ranked = Run(file=run.file, format=run.format)
    for qid, q in run.queries.items():
        ranked.queries[qid] = RunQuery(qid, q.line, as_document_ranking(parents, q.ranking), q.snapshot)
    return corpus.documents(), ranked


def as_document_ranking(parents: dict[str, str], ranking: list[str]) -> list[str]:
    """A ranking of chunks as a ranking of their documents (first chunk's position)."""
    return list(dict.fromkeys(map(parents.get, ranking, ranking)))


def labelled_documents(corpus, gold: Gold, problems: P.Problems) -> Corpus:
    """The corpus as documents, for the checks of a gold set of documents
    made before the run is (:func:`cross_file.check_labels`); its chunk labels
    reported and removed (:func:`mixed_labels`)."""
    mixed_labels(corpus, gold, problems)
    return corpus.documents()


def mixed_labels(corpus, gold: Gold, problems: P.Problems) -> None:
    """Labels on chunks in a gold set of documents: reported (the first few)
    and removed, so they are not reported again as unknown documents."""
    parents = corpus.parents
    found = list(_chunk_labels(gold, parents))
    for q, d in found[:SHOWN]:
        file, line = where(gold, q, d)
        problems.add(P.CONSISTENCY, f"labels a chunk (of document `{safe_text(parents[d], 60)}`) while the gold "
                     "set labels documents (doc_id values): label its document instead", file=file, line=line, id=d)
    if len(found) > SHOWN:
        problems.add(P.CONSISTENCY, f"{len(found) - SHOWN} more labels name chunks in a gold set of documents",
                     file=gold.file)
    for q, d in found:
        del q.relevant[d]  # reported here, not again as an unknown document


def _chunk_labels(gold: Gold, parents: dict[str, str]):
    """(question, id) of every label on a chunk that is not also a document."""
    chunks = parents.keys() - set(parents.values())
    for q in gold.queries.values():
        for d in chunks.intersection(q.relevant):
            yield q, d


def convention(lvl: str | None) -> str | None:
    """The rule, in words, for the conventions."""
    if lvl == DOCUMENT:
        return ("chunked corpus, evaluated per document (the gold set labels doc_id values): a document's "
                "position is that of its first chunk in the ranking; its later chunks are dropped before the cut at K")
    if lvl == CHUNK:
        return "chunked corpus, evaluated per chunk (the gold set labels chunk ids)"
    return None
