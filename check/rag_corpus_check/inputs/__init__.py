"""The inputs, read: one call (:func:`read_inputs`) gives the corpus, the gold
set and the run, each read by the fastest reader that reads it exactly, with
every problem reported in the order of the files (gold, run, corpus) and the
digest of each file. How the corpus is read — here, or in a second process
that keeps the documents — is this package's business (:mod:`inputs.child`).

Modules: :mod:`records` (what is kept), :mod:`corpus`, :mod:`gold`,
:mod:`run` (the exact readers), :mod:`fast` (the fast readers),
:mod:`checks` (record validity from the schemas), :mod:`child`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rag_corpus_check import problems as P
from rag_corpus_check.inputs import corpus as exact_corpus
from rag_corpus_check.inputs import fast
from rag_corpus_check.inputs import gold as exact_gold
from rag_corpus_check.inputs import run as exact_run
from rag_corpus_check.inputs.child import CorpusProcess
from rag_corpus_check.inputs.gold import gold_format
from rag_corpus_check.inputs.records import (
    NO_TYPE,
    Corpus,
    CorpusView,
    Doc,
    Facts,
    Gold,
    GoldQuery,
    Run,
    RunQuery,
)
from rag_corpus_check.inputs.run import run_format
from rag_corpus_check.safe_io import InputError, Limits, Sha256, restart, sha256_file
from rag_corpus_check.safe_io.scanner import Slow, no_gc

__all__ = [
    "NO_TYPE", "Corpus", "CorpusView", "Doc", "Facts", "Gold", "GoldQuery", "Inputs", "Run", "RunQuery",
    "Source", "gold_format", "read_corpus", "read_gold", "read_inputs", "read_run", "run_format",
]


@dataclass(frozen=True)
class Source:
    """One input file: where it is, how it is shown, how it is read."""

    real: str
    display: str
    format: str = "jsonl"


@dataclass
class Inputs:
    """What was read (None where a file could not be), and each file's
    sha-256 in reading order. Close it (or use it as a context manager) when
    the corpus is no longer asked anything."""

    corpus: CorpusView | None = None
    gold: Gold | None = None
    run: Run | None = None
    digests: dict[str, str] = field(default_factory=dict)
    process: CorpusProcess | None = None

    def close(self) -> None:
        if self.process is not None:
            self.process.close()
            self.process = None

    def __enter__(self) -> Inputs:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_inputs(corpus: Source, gold: Source, run: Source | None, limits: Limits, problems: P.Problems,
                on_doc: Callable[[str, dict], None] | None = None) -> Inputs:
    """Read the three inputs. ``on_doc(doc_id, record)`` sees every valid
    document (the built-in retriever indexes it; the corpus is then read
    here, by the exact reader, which streams the records)."""
    out = Inputs()
    out.process = CorpusProcess.start(corpus.real, corpus.display, limits) if on_doc is None else None
    try:
        out.gold = _read(out, gold, problems, read_gold, limits, problems)
        if run is not None:
            out.run = _read(out, run, problems, read_run, limits, problems)
        out.corpus = _corpus(out, corpus, limits, problems, on_doc)
    except BaseException:
        out.close()
        raise
    return out


def _corpus(out: Inputs, source: Source, limits: Limits, problems: P.Problems, on_doc) -> CorpusView | None:
    forked = out.process is not None
    got = out.process.result() if out.process is not None else None
    if got is None:  # not forked, or the child gave up: read here (the exact reader if it did)
        out.close()
        return _read(out, source, problems, read_corpus, limits, problems, on_doc=on_doc, fast_first=not forked)
    out.digests[source.display] = got[1]
    return got[0]


def _read(out: Inputs, source: Source, problems: P.Problems, reader, *args, **kwargs):
    """One reader on one file; the reader hashes what it reads, so the file
    is read once. A reader that stopped early (an InputError) is reported,
    and the file is hashed on its own for provenance when its size allows."""
    hasher = Sha256()
    try:
        result = reader(source, *args, hasher=hasher, **kwargs)
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=exc.file, line=exc.line)
        try:
            out.digests[source.display] = sha256_file(source.real, source.display, args[0].max_file_bytes)
        except InputError:
            pass  # already reported by the reader
        return None
    out.digests[source.display] = hasher.hexdigest()
    return result


def _fast_or_none(reader, *args, hasher=None):
    """A fast reader's result, or None when it gave up (:class:`Slow`): the
    digest then starts over for the exact reader, which reads from line 1."""
    try:
        with no_gc():
            return reader(*args, hasher=hasher)
    except Slow:
        restart(hasher)
        return None


def read_corpus(source: Source, limits: Limits, problems: P.Problems, on_doc=None, hasher=None,
                fast_first: bool = True) -> Corpus:
    """A corpus: the fast reader when nothing is unusual (and no ``on_doc``),
    else the exact one, which reports the problems."""
    if on_doc is None and fast_first:
        got = _fast_or_none(fast.read_corpus, source.real, source.display, limits, hasher=hasher)
        if got is not None:
            return got
    return exact_corpus.read_corpus(source.real, source.display, limits, problems, on_doc, hasher)


def read_gold(source: Source, limits: Limits, problems: P.Problems, hasher=None) -> Gold:
    if source.format == "jsonl":
        got = _fast_or_none(fast.read_gold, source.real, source.display, limits, hasher=hasher)
        if got is not None:
            return got
    return exact_gold.read_gold(source.real, source.display, source.format, limits, problems, hasher)


def read_run(source: Source, limits: Limits, problems: P.Problems, hasher=None) -> Run:
    if source.format == "jsonl":
        got = _fast_or_none(fast.read_run, source.real, source.display, limits, hasher=hasher)
        if got is not None:
            return got
    return exact_run.read_run(source.real, source.display, source.format, limits, problems, hasher)
