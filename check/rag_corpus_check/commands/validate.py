"""``rag-corpus-check validate``: the inputs checked without a ranking
(:mod:`pipeline.validate_only`) — what the pre-commit hook runs
(``.pre-commit-hooks.yaml``). Exit 0 when every file is valid, 2 when one is
not (the problems are printed with file, line and id, as the check prints
them). It measures nothing, so no threshold can fail it."""

from __future__ import annotations

import argparse

from rag_corpus_check.config.load import add_tree_arguments
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.pipeline.context import logical_path
from rag_corpus_check.pipeline.outcome import Outcome

VALID, INVALID = 0, 2
EPILOG = """exit codes:
  0  the config and every input are valid (nothing was ranked or measured)
  2  invalid input (format, schema, consistency)
  3  the check itself failed (a bug or an environment fault)
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rag-corpus-check validate",
        description="Validate the config, the corpus, the gold files (or the dataset), a committed run and the "
        "vectors folder by the rules of the check, without ranking or measuring anything: seconds, for an "
        "editor's save or a pre-commit hook. File names given after the options (as pre-commit passes them) "
        "are ignored: the config names the inputs.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_tree_arguments(p)
    p.add_argument("--quiet", action="store_true", help="print nothing when every file is valid")
    p.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    return p


def validate_main(argv: list[str]) -> int:
    from rag_corpus_check.pipeline.validate_only import validate

    args = build_parser().parse_args(argv)
    out = validate(logical_path(args.root), logical_path(args.config))
    print(report(out, args.quiet), end="")
    return INVALID if out.problems.has_errors() else VALID


def report(out: Outcome, quiet: bool) -> str:
    """The problems, then one line: what was validated, or INVALID INPUT."""
    from rag_corpus_check.report.console import render_problems

    problems = render_problems(out)
    if out.problems.has_errors():
        return "rag-corpus-check validate: INVALID INPUT\n" + problems
    if quiet:
        return ""
    return f"rag-corpus-check validate: valid — {_what(out)}; nothing ranked or measured\n" + problems


def _what(out: Outcome) -> str:
    files = ", ".join(safe_text(f, 120) for f in out.inputs) or "no file"
    counts = [text for text, shown in (
        (f"{out.corpus.count if out.corpus is not None else 0} corpus records", out.corpus is not None),
        (f"{len(out.gold.queries) if out.gold is not None else 0} questions", out.gold is not None),
        ("vectors current", out.vectors is not None)) if shown]
    return files + (f" ({', '.join(counts)})" if counts else "")
