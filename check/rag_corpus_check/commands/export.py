"""``rag-corpus-check export --out corpus.jsonl``: the corpus's records, as
the check's reader produced them, written as JSONL (``id``, ``doc_id``,
``title``, ``text``, ``type``, ``status`` where present), so other tools —
an indexing pipeline, a team's retriever command — see the same chunks the
check measured. For a Markdown corpus these are its sections (or pages);
for a JSONL one, its valid records. Exit 0 when written, 2 on invalid input
(nothing is written then)."""

from __future__ import annotations

import argparse
import json
import os
import tempfile

from rag_corpus_check.config.load import add_tree_arguments, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs import read_corpus
from rag_corpus_check.pipeline.context import logical_path
from rag_corpus_check.pipeline.stages import corpus_source
from rag_corpus_check.safe_io import InputError

WRITTEN, INVALID = 0, 2
FIELDS = ("id", "doc_id", "title", "text", "type", "status")
EPILOG = """exit codes:
  0  the records were written
  2  invalid input (the config or the corpus); nothing was written
  3  the export itself failed (a bug or an environment fault)
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rag-corpus-check export", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write the corpus's records as the check reads them (a Markdown corpus: its sections or "
        "pages) to a JSONL file: id, doc_id, title, text, type, status.")
    add_tree_arguments(p)
    p.add_argument("--out", required=True, metavar="PATH", help="the JSONL file to write (replaced whole)")
    return p


def export_main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    problems = P.Problems()
    records = _records(logical_path(args.root), logical_path(args.config), problems)
    failed = records is None or problems.has_errors()
    if not failed:
        assert records is not None
        _write(args.out, records)
    print(f"rag-corpus-check export: {'INVALID INPUT; nothing written' if failed else _written(records, args.out)}")
    print(_problems(problems), end="")
    return INVALID if failed else WRITTEN


def _written(records: list[dict] | None, out: str) -> str:
    return f"{len(records or [])} records written to {safe_text(out, 300)}"


def _problems(problems: P.Problems) -> str:
    from rag_corpus_check.pipeline.context import Context
    from rag_corpus_check.pipeline.outcome import Outcome
    from rag_corpus_check.report.console import render_problems

    return render_problems(Outcome(problems, Context()))


def _records(root: str, config: str, problems: P.Problems) -> list[dict] | None:
    cfg, _ = load_config(root, config, problems)
    if cfg is None:
        return None
    source = corpus_source(root, cfg, problems)
    if source is None:
        return None
    records: list[dict] = []
    try:
        read_corpus(source, cfg.limits, problems, on_doc=lambda _id, rec: records.append(_kept(rec)))
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=exc.file, line=exc.line)
        return None
    return records


def _kept(rec: dict) -> dict:
    return {name: rec[name] for name in FIELDS if name in rec}


def _write(path: str, records: list[dict]) -> None:
    """The file written whole or not at all (a temporary file renamed)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".export-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            for rec in records:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
