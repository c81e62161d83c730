"""The input formats, one registry entry each: which kind of file a format
is (corpus, gold, run, queries), the extensions that name it, and its reader.

Adding a format is one reader (a function in this package) and one entry in
:data:`FORMATS`; the config schema's enums, the message for an extension
nobody knows and the docs are checked against this table by the tests
(``tests/test_formats_registry.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rag_corpus_check.inputs import corpus as exact_corpus
from rag_corpus_check.inputs import fast, foreign
from rag_corpus_check.inputs import gold as exact_gold
from rag_corpus_check.inputs import run as exact_run
from rag_corpus_check.safe_io import plain_name

# A reader: (source, limits, problems, hasher) -> the kind's record set; a
# corpus reader takes read_corpus's callback before the hasher. A fast reader:
# (source, limits, hasher) and, for a corpus, on_block.
Reader = Callable[..., Any]


@dataclass(frozen=True)
class Format:
    name: str
    kind: str  # "corpus", "gold", "run" or "queries"
    read: Reader  # the exact reader: the one source of the format's rules
    extensions: tuple[str, ...] = ()  # what `auto` recognises (before any .gz)
    # A faster reader that gives up (scanner.Slow) on anything unusual; only
    # where it saves 15% of the whole check's CPU (docs/decisions/0005).
    fast: Reader | None = None
    summary: str = ""  # one line for the docs
    dataset: bool = False  # chosen by `dataset: {format: ...}`, not by `formats:` or an extension


def _gold(source, limits, problems, hasher=None):
    return exact_gold.read_gold(source.real, source.display, source.format, limits, problems, hasher,
                                dict(source.grade_map), source.reading)


def _run(source, limits, problems, hasher=None):
    return exact_run.read_run(source.real, source.display, source.format, limits, problems, hasher, source.order)


def _fast_corpus(source, limits, hasher=None, on_block=None):
    return fast.read_corpus(source.real, source.display, limits, hasher=hasher, on_block=on_block)


def _markdown(source, limits, problems, seen, hasher=None):
    from rag_corpus_check.inputs import markdown_corpus  # a Markdown corpus only (markdown-it-py)

    return markdown_corpus.read_markdown_corpus(source.root, source.real, source.markdown, limits, problems, seen, hasher,
                                                source.display)


def _fast_trec_run(source, limits, hasher=None):
    from rag_corpus_check.inputs import fast_trec  # TREC files only

    return fast_trec.read_run(source.real, source.display, limits, hasher, source.order)


def _call(fn, *keep: str) -> Reader:
    """A foreign reader called with the source's fields it takes."""
    def read(source, limits, problems, hasher=None):
        extra = [dict(source.grade_map) if k == "grade_map" else getattr(source, k) for k in keep]
        return fn(source.real, source.display, limits, problems, *extra, hasher)
    return read


FORMATS: tuple[Format, ...] = (
    Format("jsonl", "corpus", lambda s, limits, problems, seen, hasher: exact_corpus.read_corpus(
        s.real, s.display, limits, problems, seen, hasher, native=s.native), fast=_fast_corpus,
        summary="one JSON object a line (the native format)"),
    Format("markdown", "corpus", _markdown,
           summary="a folder of Markdown pages, chunked by heading (`corpus: {format: markdown, paths: [...]}`)"),
    Format("beir", "corpus", lambda s, limits, problems, seen, hasher: exact_corpus.read_corpus(
        s.real, s.display, limits, problems, seen, hasher, native=foreign.beir_document),
        summary="BEIR's corpus.jsonl (`_id`, `title`, `text`)", dataset=True),
    Format("llamaindex", "corpus", lambda s, limits, problems, seen, hasher: foreign.read_llamaindex_corpus(
        s.real, s.display, limits, problems, seen, hasher),
        summary="the `corpus` of a LlamaIndex EmbeddingQAFinetuneDataset JSON file", dataset=True),
    Format("yaml", "gold", _gold, (".yml", ".yaml"), summary="a YAML list of questions (the native format)"),
    Format("json", "gold", _gold, (".json",), summary="a JSON list of questions"),
    Format("jsonl", "gold", _gold, (".jsonl",), summary="one question a line"),
    Format("qrels", "gold", _gold, (".qrels",), summary="TREC qrels: `query-id 0 doc-id grade` lines"),
    Format("qrels-json", "gold", _call(foreign.read_qrels_json, "grade_map"),
           summary="pytrec_eval/ir_datasets JSON qrels `{query: {doc: grade}}`"),
    Format("csv", "gold", _gold, (".csv",), summary="CSV with a header row, a question a row"),
    Format("beir", "gold", _gold, summary="BEIR's qrels/<split>.tsv (with a header line)", dataset=True),
    Format("llamaindex", "gold", _call(foreign.read_llamaindex_gold),
           summary="the `queries` and `relevant_docs` of a LlamaIndex dataset", dataset=True),
    Format("jsonl", "run", _run, (".jsonl",), summary="one question's ranking a line (the native format)"),
    Format("trec", "run", _run, (".run", ".trec"), fast=_fast_trec_run,
           summary="TREC run lines `qid Q0 doc rank score tag`"),
    Format("run-json", "run", _call(foreign.read_run_json, "order"),
           summary="pytrec_eval/ranx JSON run `{query: {doc: score}}`"),
    Format("beir", "queries", lambda s, limits, problems, hasher=None: foreign.read_beir_queries(
        s.real, s.display, limits, problems, hasher), summary="BEIR's queries.jsonl (`_id`, `text`)",
        dataset=True),
)


def find(kind: str, name: str) -> Format:
    """The registry entry of a format the config or the registry named."""
    return next(f for f in FORMATS if f.kind == kind and f.name == name)


def settable(kind: str) -> list[str]:
    """The formats ``formats: {kind: ...}`` may name (``auto`` aside)."""
    return [f.name for f in FORMATS if f.kind == kind and not f.dataset]


def format_of(kind: str, path: str, declared: str) -> str | None:
    """The format of ``path``: as declared, or (``auto``) by its extension."""
    if declared != "auto":
        return declared
    ext = os.path.splitext(plain_name(path))[1].lower()
    return next((f.name for f in FORMATS if f.kind == kind and ext in f.extensions), None)


def unknown_format(kind: str) -> str:
    """The message for a file whose extension names no format of ``kind``."""
    exts = "/".join(e for f in FORMATS if f.kind == kind for e in f.extensions)
    return (f"cannot tell the {kind} format from the file extension; use {exts} (or .gz of one) or set "
            f"`formats: {{{kind}: ...}}` in the config ({', '.join(settable(kind))})")

