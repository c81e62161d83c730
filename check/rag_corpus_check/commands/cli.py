"""Command line: parse arguments, run the pipeline, hand the outcome to the
reporters, return the exit code. No logic of its own."""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import stat
import sys
import tempfile
import traceback

from rag_corpus_check import __version__
from rag_corpus_check.commands.check import run_check
from rag_corpus_check.config.load import DEFAULT_CONFIG, add_tree_arguments
from rag_corpus_check.core import problems as P
from rag_corpus_check.core import progress
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.gate.rules import SOURCES
from rag_corpus_check.pipeline.context import github_context, logical_path
from rag_corpus_check.pipeline.outcome import ERROR, EXIT_CODES, FAIL, INVALID, PASS, Outcome
from rag_corpus_check.pipeline.stages import Options, last_stage

EPILOG = """exit codes:
  0  passed: every threshold is met
  1  quality gate failed (0 with --advisory)
  2  invalid input (format, schema, consistency); nothing was measured
  3  the check itself failed (a bug or an environment fault)
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rag-corpus-check",
        usage="rag-corpus-check [check] [options] | retrieve --out PATH [options] | merge RESULTS... [options] "
        "| pool --out PATH [options] | embed [options] | validate [options] | add-labels SHEET [options] "
        "| export --out PATH [options]",
        description="Validate a RAG corpus and gold set, measure P@K / R@K / nDCG@K of a run, "
        "and gate on the thresholds in the config.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", default=DEFAULT_CONFIG, help=f"config file (default {DEFAULT_CONFIG})")
    p.add_argument(
        "--root", default=".",
        help="repository root; every input must be inside it (default: current directory)",
    )
    p.add_argument(
        "--output", metavar="PATH",
        help="results JSON file (default: $RUNNER_TEMP/rag-corpus-check/results.json, or a new temporary directory)",
    )
    p.add_argument("--summary-file", metavar="PATH", help="Markdown summary file (default: next to the results)")
    gh = p.add_mutually_exclusive_group()
    gh.add_argument("--github", dest="github", action="store_true", default=None,
                    help="emit annotations, step outputs and the step summary (default when GITHUB_ACTIONS=true)")
    gh.add_argument("--no-github", dest="github", action="store_false")
    p.add_argument("--advisory", action="store_true",
                   help="report a failed quality gate but exit 0 (invalid input still exits 2)")
    p.add_argument("--no-step-summary", action="store_true", help="do not append to $GITHUB_STEP_SUMMARY")
    p.add_argument("--base", metavar="REV",
                   help="also evaluate this git revision (the PR's base) and compare; its files are "
                   "read with git, nothing is checked out. Its config's rules apply")
    p.add_argument("--no-require-base", dest="require_base", action="store_false",
                   help="a base (or base config) that cannot be had is a warning and the head's "
                   "own rules apply (rules-source head-no-base), instead of an input error")
    p.add_argument("--require-rules-source", metavar="SOURCES", type=_sources, default=(),
                   help="fail the gate unless the rules came from one of these comma-separated sources "
                   f"({', '.join(SOURCES)}), e.g. `base`: a PR cannot then pass on rules it overrode itself")
    p.add_argument("--fetch-base", action="store_true",
                   help="when the base commit is not in the clone, fetch that one commit from "
                   "`origin` first (the action does this)")
    p.add_argument("--allow-retriever-command", action="store_true",
                   help="let a `retriever.command` from the config run (it is code from the "
                   "repository; only under pull_request and push on GitHub)")
    p.add_argument("--retriever-timeout", type=_seconds, default=600.0, metavar="SECONDS",
                   help="the longest a retriever command may run (default 600); the config's "
                   "`retriever.timeout` can only lower it")
    p.add_argument("--allow-untrusted-event", action="store_true",
                   help="run under a GitHub event outside pull_request, push, merge_group, "
                   "workflow_dispatch and schedule (only for a job that checks out no PR code)")
    p.add_argument("--shard", type=_shard, metavar="I/N",
                   help="measure only shard I of N of the questions (for a matrix); merge the "
                   "shards' results with `rag-corpus-check merge`")
    _benchmark_option(p)
    p.add_argument("--quiet", action="store_true", help="print only the verdict line")
    p.add_argument("--version", action="version", version=f"rag-corpus-check {__version__}")
    return p


def _benchmark_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmark-json", metavar="PATH",
                   help="also write the means for github-action-benchmark (tool customBiggerIsBetter): "
                   "[{name, unit, value, extra}], one per measure with a defined mean; not written for "
                   "invalid input")


def output_paths(output: str | None, summary_file: str | None, root: str = ".") -> tuple[str, str]:
    """Absolute results and summary paths: as given, and a missing one next
    to the given one; with neither, a folder of the checked directory
    ``root``'s own (:func:`default_output_dir`), overwritten by each run of
    it (nothing piles up). Never the repository."""
    given = output or summary_file
    folder = os.path.dirname(os.path.abspath(given)) if given else default_output_dir(root)
    return (os.path.abspath(output) if output else os.path.join(folder, "results.json"),
            os.path.abspath(summary_file) if summary_file else os.path.join(folder, "summary.md"))


def default_output_dir(root: str = ".") -> str:
    """The runner's temporary directory under Actions, else this user's own
    directory in the system's temporary one; in it, a folder per checked
    directory (its name and a digest of its absolute path), so runs in two
    repositories never write the same results file."""
    runner_temp = os.environ.get("RUNNER_TEMP")
    if runner_temp and os.path.isabs(runner_temp):
        top = os.path.join(runner_temp, "rag-corpus-check")
        os.makedirs(top, exist_ok=True)
    else:
        top = _private_dir(os.path.join(tempfile.gettempdir(), f"rag-corpus-check-{_user()}"))
    d = os.path.join(top, checked_folder_name(root))
    os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def checked_folder_name(root: str) -> str:
    """``<name>-<12 hex>``: the checked directory's name (letters, digits,
    ``._-`` only) and the sha-256 of its absolute, symlink-resolved path."""
    real = os.path.realpath(root)
    name = "".join(c for c in os.path.basename(real) if c.isascii() and (c.isalnum() or c in "._-"))[:40]
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:12]
    return f"{name.lstrip('.') or 'root'}-{digest}"


def _user() -> str:
    getuid = getattr(os, "getuid", None)
    return str(getuid()) if getuid else "".join(c for c in os.environ.get("USERNAME", "user") if c.isalnum())


def _private_dir(path: str) -> str:
    """``path`` as a directory only this user can write (made if missing);
    in a shared temporary directory someone else may have made it first, or
    a symlink there: then a fresh directory of its own."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    ours = stat.S_ISDIR(st.st_mode) and getattr(os, "getuid", lambda: st.st_uid)() == st.st_uid
    if ours and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return path
    return tempfile.mkdtemp(prefix="rag-corpus-check-")


def build_retrieve_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rag-corpus-check retrieve",
        description="Write the run the configured retriever produces (the built-in BM25 unless "
        "`retriever.command` is set), to inspect it or to commit it as a baseline. A committed "
        "`run:` in the config is ignored here. Each line declares the corpus fingerprint as its "
        "snapshot, so a later corpus change is detected.",
    )
    add_tree_arguments(p)
    p.add_argument("--out", required=True, metavar="PATH", help="run file to write (JSONL)")
    p.add_argument("--allow-retriever-command", action="store_true",
                   help="let a `retriever.command` from the config run (code from the repository)")
    return p


def retrieve_main(argv: list[str]) -> int:
    from rag_corpus_check.report.console import render_problems
    from rag_corpus_check.report.results import write_run

    args = build_retrieve_parser().parse_args(argv)
    stage = "retrieve"
    try:
        root = logical_path(args.root)
        outcome = run_check(root, logical_path(args.config), github_context(root),
                            Options(use_retriever=True, allow_command=args.allow_retriever_command))
        if outcome.run is None or outcome.problems.has_errors():
            sys.stdout.write("rag-corpus-check retrieve: INVALID INPUT\n" + render_problems(outcome))
            return EXIT_CODES[INVALID]
        write_run(args.out, outcome)
        assert outcome.corpus is not None
        src = outcome.retrieval.info if outcome.retrieval else {}
        print(
            f"rag-corpus-check retrieve: wrote {len(outcome.run.queries)} rankings "
            f"({src.get('type', '?')}, snapshot {outcome.corpus.fingerprint}) to {safe_text(os.path.abspath(args.out), 500)}"
        )
        return 0
    except Exception as exc:
        return _internal_error(exc, stage, False)


def build_merge_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rag-corpus-check merge",
        description="Merge the results files of `--shard i/n` runs into the results of one "
        "unsharded run (same means, same verdict), and gate on them.",
    )
    p.add_argument("results", nargs="+", help="results files of every shard")
    add_tree_arguments(p)
    p.add_argument("--output", metavar="PATH", help="merged results JSON")
    p.add_argument("--summary-file", metavar="PATH", help="merged Markdown summary")
    gh = p.add_mutually_exclusive_group()
    gh.add_argument("--github", dest="github", action="store_true", default=None)
    gh.add_argument("--no-github", dest="github", action="store_false")
    p.add_argument("--advisory", action="store_true")
    p.add_argument("--no-step-summary", action="store_true")
    _benchmark_option(p)
    p.add_argument("--quiet", action="store_true")
    return p


def merge_main(argv: list[str]) -> int:
    from rag_corpus_check.commands.merge import merge

    args = build_merge_parser().parse_args(argv)
    github = _github(args)
    stage = "merge"
    results_path = None
    try:
        root = logical_path(args.root)
        results_path, summary_path = output_paths(args.output, args.summary_file, root)
        _remove_stale(args.benchmark_json)
        outcome = merge(root, logical_path(args.config), args.results, github_context(root), advisory=args.advisory)
        return _report(outcome, results_path, summary_path, github, args)
    except Exception as exc:  # a bug becomes exit 3
        _discard_results(results_path, args.benchmark_json)
        return _internal_error(exc, stage, github)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a number of seconds, e.g. 600") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError("between 0 and 86400 seconds")
    return value


def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError("use i/n, e.g. 2/4") from None
    if not 1 <= i <= n <= 1000:
        raise argparse.ArgumentTypeError("need 1 <= i <= n <= 1000")
    return i, n


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]](argv[1:])
    args = build_parser().parse_args(argv[1:] if argv and argv[0] == "check" else argv)
    if args.shard and (args.base or args.benchmark_json):
        build_parser().error("--base and --shard cannot be combined yet" if args.base else
                             "--benchmark-json needs whole means: write it from `rag-corpus-check merge`")
    previous = progress.current()
    try:
        return _check(args, _github(args))
    finally:
        progress.install(previous)  # a later run in this process (tests) starts silent


def _check(args, github: bool) -> int:
    stage = "start"
    results_path = None
    try:
        root = logical_path(args.root)
        results_path, summary_path = output_paths(args.output, args.summary_file, root)
        _remove_stale(results_path, summary_path, args.benchmark_json)
        stage = "context"
        progress.install(progress.Progress(enabled=not args.quiet, github=github))
        ctx = github_context(root)
        stage = "check"
        outcome = run_check(root, logical_path(args.config), ctx, _options(args))
        LAST_OUTCOME[0] = outcome  # freed by the OS, see run()
        progress.current().close()
        stage = "report"
        return _report(outcome, results_path, summary_path, github, args)
    except Exception as exc:  # the one place a bug becomes exit 3
        _discard_results(results_path, args.benchmark_json)
        return _internal_error(exc, (last_stage() or stage) if stage == "check" else stage, github)


def _github(args) -> bool:
    return args.github if args.github is not None else os.environ.get("GITHUB_ACTIONS") == "true"


def _options(args) -> Options:
    return Options(base=args.base or None, require_base=args.require_base, fetch_base=args.fetch_base,
                   shard=args.shard, allow_command=args.allow_retriever_command,
                   allow_untrusted_event=args.allow_untrusted_event, retriever_timeout=args.retriever_timeout,
                   advisory=args.advisory, required_rules=args.require_rules_source)


def _sources(text: str) -> tuple[str, ...]:
    """``--require-rules-source``: a comma-separated list of SOURCES."""
    found = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [s for s in found if s not in SOURCES]
    if bad or not found:
        raise argparse.ArgumentTypeError(f"{safe_text(', '.join(bad) or text, 200)}: not a rules source; use one or "
                                         f"more of {', '.join(SOURCES)}, separated by commas")
    return found


def _subcommand(name: str, function: str):
    """The subcommand ``commands.<name>.<function>``, imported when it runs; a bug in it is exit 3."""
    def run(argv: list[str]) -> int:
        try:
            return getattr(importlib.import_module(f"rag_corpus_check.commands.{name}"), function)(argv)
        except Exception as exc:
            return _internal_error(exc, name, False)

    return run


SUBCOMMANDS = {"retrieve": retrieve_main, "merge": merge_main, "pool": _subcommand("pool", "pool"), "embed": _subcommand("embed", "embed_main"), "validate": _subcommand("validate", "validate_main"), "add-labels": _subcommand("add_labels", "add_labels"), "export": _subcommand("export", "export_main")}


# The last outcome, kept: main() returning must not free it object by object.
LAST_OUTCOME: list[Outcome | None] = [None]


def run() -> None:
    """The command's entry point: :func:`main`, then exit without freeing
    memory object by object (the OS takes it back at once). Everything main
    wrote is flushed first; files it wrote are closed; no exit handlers are ours."""
    try:
        code = main()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        LAST_OUTCOME[0] = None
        raise  # e.g. Ctrl-C or a broken pipe: the usual way out
    os._exit(code)


def _report(outcome: Outcome, results_path: str, summary_path: str, github: bool, args) -> int:
    from rag_corpus_check.report.console import render_console, verdict_line
    from rag_corpus_check.report.results import (
        results_dict,
        write_atomic,
        write_benchmark,
        write_results,
    )
    from rag_corpus_check.report.summary import build_summary

    data = results_dict(outcome)  # once: the results file, the summary and the terminal render it
    markdown = build_summary(outcome, results_path, data).render()
    write_results(results_path, data)
    write_atomic(summary_path, markdown)
    benchmark = args.benchmark_json if outcome.verdict in (PASS, FAIL) else None  # measured, gated: means stand
    if benchmark:
        write_benchmark(benchmark, outcome)
    if github:
        from rag_corpus_check.report import github as gh

        for line in gh.annotation_lines(outcome):
            print(line)
    if args.quiet:
        sys.stdout.write(verdict_line(outcome) + "\n")
    else:
        sys.stdout.write(render_console(outcome, results_path, summary_path, data)
                         + (f"  benchmark: {safe_text(os.path.abspath(benchmark), 500)}\n" if benchmark else ""))
    sys.stdout.flush()
    if github:
        _publish(gh, outcome, markdown, results_path, summary_path, args)
    return outcome.exit_status


def _publish(gh, outcome: Outcome, markdown: str, results_path: str, summary_path: str, args) -> None:
    """The step summary and the step outputs (files the runner reads)."""
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and not args.no_step_summary:
        gh.append_step_summary(step_summary, markdown)
    gh_output = os.environ.get("GITHUB_OUTPUT")
    if gh_output:
        gh.write_outputs(gh_output, gh.outputs(outcome, results_path, summary_path))


def _remove_stale(*paths: str | None) -> None:
    """A results or summary file of an earlier run is never this run's: remove it first."""
    for path in paths:
        if path and os.path.isfile(path):
            os.unlink(path)


def _discard_results(*paths: str | None) -> None:
    """After an internal error no results file may look like this run's
    verdict (one written before a later fault would say `pass`): remove it."""
    for path in paths:
        try:
            if path and os.path.isfile(path):
                os.unlink(path)
        except OSError:
            pass


def _internal_error(exc: BaseException, stage: str, github: bool) -> int:
    # The exception text may quote input; print only its type and the stage.
    msg = f"internal error ({type(exc).__name__}) during {stage}; this is a bug in rag-corpus-check or an environment fault, not a problem with your files"
    if os.environ.get("RAG_CORPUS_CHECK_DEBUG") == "1":
        traceback.print_exc()
    if github:
        print(f"::error title=rag-corpus-check::{msg}")
        gh_output = os.environ.get("GITHUB_OUTPUT")
        if gh_output:
            try:
                from rag_corpus_check.report.github import write_outputs

                write_outputs(gh_output, {"passed": "false", "verdict": ERROR, "exit-code": "3"})
            except OSError:
                pass
    print(f"rag-corpus-check: ERROR (internal): {msg}", file=sys.stderr)
    return EXIT_CODES[ERROR]


__all__ = ["main", "build_parser", "P"]
