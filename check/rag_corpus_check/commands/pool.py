"""`rag-corpus-check pool --config … --out labels.yaml [--base REV]`: the
labelling worksheet (:mod:`worksheet`) of the documents in the top K that the
gold set does not judge yet.

The check runs as it always does (:func:`check.run_check`: the same readers,
the same ranking — the committed run, the built-in BM25 or the command — and
with ``--base`` the base measured under its rules too); then the corpus is
read once more, by the same reader, for the titles and excerpts of the pooled
documents only. The worksheet goes to exactly the path given: no directory is
made, an existing file is replaced only with ``--force`` (a symlink there is
replaced, never written through), and an input of the check never.
"""

from __future__ import annotations

import argparse
import os

from rag_corpus_check.commands import worksheet as W
from rag_corpus_check.commands.check import run_check
from rag_corpus_check.config.load import Config, add_tree_arguments
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs import read_corpus
from rag_corpus_check.pipeline.context import github_context, logical_path
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.pipeline.stages import Options, corpus_source
from rag_corpus_check.safe_io import InputError

INVALID = 2  # the exit code of invalid input (and of a refused --out)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rag-corpus-check pool",
        description="Write a worksheet of the documents in the top K (of the committed run, or of the "
        "retriever) that the gold set does not judge: a YAML file in the gold format with an empty grade "
        "(`null`) per document and the question, title and start of the text as comments (or JSONL). Grade it; "
        "then commit it next to the gold file and list both under `gold:` in the config — or, for a BEIR "
        "dataset, a TREC qrels gold file or a LlamaIndex dataset, add its grades there with "
        "`rag-corpus-check add-labels` and commit that file.",
    )
    add_tree_arguments(p)
    p.add_argument("--out", required=True, metavar="PATH",
                   help="the worksheet to write: YAML, or JSONL for a name ending in .jsonl (no comments: what a judge "
                   "needs is under `metadata.pool`); an existing file is replaced only with --force")
    p.add_argument("--base", metavar="REV",
                   help="also pool the top K of this git revision (the PR's base), measured under its rules")
    p.add_argument("--fetch-base", action="store_true",
                   help="when the base commit is not in the clone, fetch that one commit from `origin` first")
    p.add_argument("--depth", type=_depth, metavar="N", help="pool the top N instead of the top K (N >= k)")
    p.add_argument("--changed-only", action="store_true",
                   help="with --base: only the questions whose top K (top N) holds other documents than at the base")
    p.add_argument("--limit", type=_count, metavar="N",
                   help="at most N questions on this worksheet (the first in order); pool again for the rest "
                   "once their grades are in the gold set")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--allow-retriever-command", action="store_true",
                   help="let a `retriever.command` from the config run (code from the repository)")
    return p


def _depth(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10000:
        raise argparse.ArgumentTypeError("a whole number from 1 to 10000")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10**7:
        raise argparse.ArgumentTypeError("a whole number from 1 to 10000000")
    return int(text)


def pool(argv: list[str]) -> int:
    """The command: 0 when the worksheet was written (or there is nothing to
    judge), 2 for invalid input or a refused --out."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.changed_only and not args.base:
        parser.error("--changed-only needs --base REV (the revision whose top K it compares with)")
    out_path = os.path.abspath(args.out)
    refusal = out_refusal(out_path, args.force)
    if refusal:
        return _refuse(refusal)
    root = logical_path(args.root)
    options = Options(base=args.base or None, fetch_base=args.fetch_base, allow_command=args.allow_retriever_command)
    outcome = run_check(root, logical_path(args.config), github_context(root), options)
    return _pool(root, outcome, args, out_path)


def out_refusal(path: str, force: bool) -> str | None:
    """Why the worksheet cannot be written at ``path``, or None."""
    shown = safe_text(path, 500)
    if not os.path.isdir(os.path.dirname(path)):
        return f"the directory of --out `{shown}` does not exist; make it first (pool makes no directory)"
    if os.path.isdir(path):
        return f"--out `{shown}` is a directory; name the worksheet file"
    if os.path.lexists(path) and not force:
        return f"--out `{shown}` exists and pool never overwrites a file: choose a new name, or pass --force"
    return None


def _refuse(message: str) -> int:
    print(f"rag-corpus-check pool: {message}")
    return INVALID


def _pool(root: str, outcome: Outcome, args, out_path: str) -> int:
    why = _unpoolable(root, outcome, args, out_path)
    if why is not None:
        return _refuse(why)
    problems = P.Problems()
    sheet = _sheet(root, outcome, args, problems)
    if problems.has_errors():
        return _refuse("the corpus could not be read again for the excerpts: " + problems.errors[0].message)
    if not sheet.questions:
        which = " of the questions whose top K changed" if args.changed_only else ""
        print(f"rag-corpus-check pool: nothing to judge — every document in the top {_depth_of(outcome, args)}"
              f"{which} is judged; no worksheet written")
        return 0
    left = max(len(sheet.questions) - (args.limit or len(sheet.questions)), 0)
    sheet.questions = sheet.questions[:args.limit] if args.limit else sheet.questions
    return _write(out_path, _text(sheet, outcome, args, out_path), args.force, outcome, sheet, left)


def _text(sheet: W.Sheet, outcome: Outcome, args, out_path: str) -> str:
    """The worksheet: JSONL for a .jsonl --out, else YAML with its header."""
    if _jsonl(out_path):
        return W.render_jsonl(sheet, with_base=outcome.base is not None)
    return W.render(sheet, header(outcome, args, out_path), with_base=outcome.base is not None)


def _jsonl(path: str) -> bool:
    return path.lower().endswith(".jsonl")


def _depth_of(outcome: Outcome, args) -> int:
    assert outcome.config is not None
    return args.depth or outcome.config.k


def _sheet(root: str, outcome: Outcome, args, problems: P.Problems) -> W.Sheet:
    """The questions to pool and their documents' excerpts."""
    cfg, gold, run = outcome.config, outcome.gold, outcome.run
    assert cfg is not None and gold is not None and run is not None
    base = outcome.base.rankings if outcome.base is not None else None
    questions = W.select(gold, run.rankings(), base, _depth_of(outcome, args), args.changed_only)
    return W.known_only(questions, read_excerpts(root, cfg, W.wanted(questions), problems))


def _unpoolable(root: str, outcome: Outcome, args, out_path: str) -> str | None:
    """Why no worksheet can be made from this check, or None."""
    from rag_corpus_check.report.console import render_problems

    cfg = outcome.config
    if cfg is None or outcome.evaluation is None or outcome.problems.has_errors():
        return "INVALID INPUT (nothing was pooled)\n" + render_problems(outcome).rstrip("\n")
    return _depth_refusal(cfg, args.depth) or _base_refusal(outcome, args.base) or _input_refusal(
        root, outcome, out_path)


def _depth_refusal(cfg: Config, depth: int | None) -> str | None:
    if depth is not None and depth < cfg.k:
        return f"--depth {depth} is below k ({cfg.k}) in {cfg.path_display}; the worksheet covers at least the top K"
    return None


def _base_refusal(outcome: Outcome, base: str | None) -> str | None:
    if base and (outcome.base is None or outcome.base.rankings is None):
        notes = "; ".join(outcome.base.notes) if outcome.base is not None else ""
        return f"the base could not be measured, so its top K cannot be pooled ({safe_text(notes, 600)})"
    return None


def _input_refusal(root: str, outcome: Outcome, out_path: str) -> str | None:
    if _an_input(root, outcome, out_path):
        return f"--out `{safe_text(out_path, 500)}` is an input of the check; pool never writes over one"
    return None


def _an_input(root: str, outcome: Outcome, path: str) -> bool:
    real_root = os.path.realpath(root)
    return os.path.realpath(path) in {os.path.realpath(os.path.join(real_root, d)) for d in outcome.inputs}


def read_excerpts(root: str, cfg: Config, wanted: set[str], problems: P.Problems) -> dict[str, W.Excerpt]:
    """The excerpts of the ``wanted`` documents (ids, or the doc_id of a
    chunked corpus's records: its first chunk), read by the corpus reader
    the check uses; a document not in the corpus has none."""
    found: dict[str, W.Excerpt] = {}
    source = corpus_source(root, cfg, problems) if wanted else None
    if source is None:
        return found

    def on_doc(doc_id: str, rec: dict) -> None:
        for key in (doc_id, rec.get("doc_id")):
            if key in wanted and key not in found:
                found[key] = W.excerpt(rec)

    try:
        read_corpus(source, cfg.limits, problems, on_doc=on_doc)
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=exc.file, line=exc.line)
    return found


def header(outcome: Outcome, args, out_path: str) -> list[str]:
    """The worksheet's first lines (comments): what it holds, where from, how to fill it in."""
    from rag_corpus_check.report.sources import run_source_line

    cfg = outcome.config
    assert cfg is not None
    depth = _depth_of(outcome, args)
    base = f"; with the base {outcome.base.sha} (its top {depth} too)" if outcome.base is not None else ""
    return [
        f"rag-corpus-check pool: the documents in the top {depth} of each question that the gold set does not judge.",
        f"From {cfg.path_display} (k {cfg.k}) at {outcome.context.commit or 'the working tree'}{base}.",
        run_source_line(outcome, esc=safe_text, code=str) or "",
        "",
        "Replace every `null` with the document's grade for the question above it:",
        "  " + _scale(cfg),
        "Delete a document's line to leave it unjudged; a `null` left in makes the check refuse this file.",
        *_listing(cfg, out_path),
        "The comments (question, title, start of the text) are for the judge; the check reads ids and grades.",
        "",
    ]


def _listing(cfg: Config, out_path: str) -> list[str]:
    """How the graded worksheet joins the gold set."""
    from rag_corpus_check.commands.add_labels import command_line, labels_target

    target = labels_target(cfg)
    if target is not None:
        return [f"Then add the grades to the gold set of {cfg.path_display} ({target.rel}) and commit that file:",
                "  " + command_line(cfg, os.path.relpath(out_path))]
    if cfg.gold_fields is not None:
        return [_into_mapped(cfg) + "."]
    mapped = ["The grades are read through the config's `relevance.map`, as the gold file's are."] if cfg.grade_map else []
    return mapped + [f"Then commit this file next to the gold file and list both under `gold:` in {cfg.path_display}:",
                     "  gold: [" + ", ".join([*cfg.gold_files, os.path.relpath(out_path, cfg.base_dir)]) + "]"]


def _into_mapped(cfg: Config) -> str:
    """Where the grades of a worksheet go when the gold set is read through a field map."""
    return (f"copy the grades into {safe_text(cfg.gold, 300)} in its own shape (`gold.fields` in "
            f"{cfg.path_display} reads that file, not a worksheet)")


def _scale(cfg: Config) -> str:
    """What the grades mean under the config's relevance cut."""
    low, high = cfg.min_grade, cfg.max_grade
    judged = "0" if low == 1 else f"0 to {low - 1}"
    relevant = f"{low} = relevant" if low == high else f"{low} to {high} = relevant (the higher, the more useful)"
    return f"{judged} = judged, not relevant; {relevant}"


def _write(path: str, text: str, force: bool, outcome: Outcome, sheet: W.Sheet, left: int) -> int:
    cfg = outcome.config
    assert cfg is not None
    size = len(text.encode("utf-8"))
    cap = cfg.limits.max_file_bytes if _jsonl(path) else cfg.limits.max_yaml_bytes
    if size > cap:
        return _refuse(too_big(size, cap, len(sheet.questions), cfg, _jsonl(path)))
    from rag_corpus_check.report.results import write_new

    try:
        write_new(path, text, replace=force)
    except FileExistsError:
        return _refuse(out_refusal(path, force) or "--out exists")
    print(f"rag-corpus-check pool: wrote {W.count(sheet.questions)} documents to judge for {len(sheet.questions)} "
          f"questions to {safe_text(path, 500)}{_left_out(sheet, left)}\n  next: replace each `null` with a grade, "
          f"then {_next(cfg, path)}")
    return 0


def _left_out(sheet: W.Sheet, left: int) -> str:
    """What is not on the worksheet: documents gone from the corpus, questions past --limit."""
    gone = (f"; {sheet.dropped} documents ranked only at the base are not in the corpus any more and were left "
            "out" if sheet.dropped else "")
    return gone + (f"; {left} more questions have documents to judge: pool again once these grades are in"
                   if left else "")


def too_big(size: int, cap: int, questions: int, cfg: Config, jsonl: bool) -> str:
    """Why the worksheet is not written, and how to make it fit."""
    if jsonl:
        return (f"the worksheet would be {size} bytes, over `limits.max_file_bytes` ({cap}) in {cfg.path_display}; "
                f"split it by question with --limit {max(1, questions * cap // size * 9 // 10)}")
    fits = max(1, questions * cap // size * 9 // 10)
    return (f"the worksheet would be {size} bytes, over the {cap} bytes a YAML gold file may have (a fixed bound "
            f"of the YAML reader). Split it by question: --limit {fits} puts the first {fits} of its "
            f"{questions} questions on one worksheet (pool again for the next once their grades are in); or pool "
            "fewer documents: --changed-only with --base (only the questions whose top K changed), no --depth; or "
            "write it as JSONL (--out NAME.jsonl), which only `limits.max_file_bytes` bounds")


def _next(cfg: Config, path: str) -> str:
    from rag_corpus_check.commands.add_labels import command_line, labels_target

    target = labels_target(cfg)
    if cfg.gold_fields is not None:
        return _into_mapped(cfg)
    if target is None:
        return f"list the file under `gold:` in {cfg.path_display} (its first lines say how)"
    return (f"add the grades to {safe_text(target.rel, 300)} and commit that file:\n    "
            + safe_text(command_line(cfg, os.path.relpath(path)), 600))
