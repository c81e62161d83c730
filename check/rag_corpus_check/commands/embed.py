"""``rag-corpus-check embed``: the trusted side of dense retrieval.

It lists the texts the check ranks — served corpus records, gold questions —
that have no current row in the vectors folder (``retriever.vectors``), and
with ``--command`` embeds exactly those with the team's embedding command
(:mod:`dense.embed_run` defines the protocol) and rewrites the folder
(:mod:`dense.rewrite`). It runs the team's command with the job's secrets and
writes the vectors the gate then takes on trust, so it belongs on a
developer's machine or in a push-to-main job, never in a pull request's job:
under GitHub Actions it refuses every event but :data:`EMBED_EVENTS` unless
given ``--allow-untrusted-event``. numpy is imported only once it runs.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from rag_corpus_check.config.load import Config, add_tree_arguments, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import counted, safe_id, safe_text
from rag_corpus_check.inputs import read_inputs, where
from rag_corpus_check.pipeline.context import logical_path
from rag_corpus_check.pipeline.rankings import _corpus_where as corpus_where
from rag_corpus_check.pipeline.stages import gold_sources, input_sources
from rag_corpus_check.retrieval.dense import embedded_text
from rag_corpus_check.retrieval.dense.trust import text_sha256
from rag_corpus_check.safe_io import InputError

EMBED_EVENTS = ("push", "workflow_dispatch", "schedule")
EPILOG = """exit codes:
  0  every text has a current vector (or, with --command, now has one)
  1  texts without a current vector were listed (no --command given: a dry run)
  2  invalid input, a refused event, or the embedding command failed or wrote
     vectors that do not fit (the folder is then left as it was)
"""


class Invalid(Exception):
    def __init__(self, problems: P.Problems):
        super().__init__("invalid input")
        self.problems = problems


def build_embed_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rag-corpus-check embed", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="List the corpus records and gold questions without a current vector in "
        "`retriever.vectors`; with --command, embed exactly those and rewrite the folder. Runs on the "
        "trusted side (a developer's machine, a push-to-main job), never on a pull request.")
    add_tree_arguments(p)
    p.add_argument("--command", type=_argv, metavar="ARGV",
                   help="the embedding command, as one shell-quoted string run without a shell: it reads "
                   '{"id", "kind", "text"} lines from {input} (else stdin) and writes one JSON array of '
                   "numbers per line, in order, to {output} (else stdout)")
    p.add_argument("--endpoint", action="store_true",
                   help="a store only: embed through the config's `retriever.endpoint` (its key read from the "
                   "variable `key_env` names)")
    p.add_argument("--compact", action="store_true",
                   help="a store only: rewrite it as one segment of the texts still ranked (on the default branch)")
    p.add_argument("--store", action="store_true",
                   help="with --init: make a store found by text (store.json + segments/) instead of a folder of rows")
    p.add_argument("--init", action="store_true", help="make a new folder (needs --model, --dimensions)")
    p.add_argument("--model", help="with --init: the model's name; must be the config's `retriever.model`")
    p.add_argument("--dimensions", type=int, help="with --init: the length of every vector")
    p.add_argument("--dtype", choices=("float32", "float16"), default="float32",
                   help="with --init: the .npy files' dtype (default float32); a folder keeps its own")
    p.add_argument("--timeout", type=float, default=3600.0, metavar="SECONDS",
                   help="the longest the command may run (default 3600)")
    p.add_argument("--allow-untrusted-event", action="store_true",
                   help=f"run under a GitHub event other than {', '.join(EMBED_EVENTS)} (e.g. pull_request): "
                   "only in a job that checks out no pull request code")
    return p


def _argv(text: str) -> list[str]:
    try:
        argv = shlex.split(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a shell-quoted command line") from None
    if not argv:
        raise argparse.ArgumentTypeError("an empty command")
    return argv


def event_refusal(env, allowed: bool) -> str | None:
    """Why embed must not run under this GitHub event, or None."""
    event = env.get("GITHUB_EVENT_NAME") or None
    if event is None or event in EMBED_EVENTS or allowed:
        return None
    return (f"refusing to run under `{safe_text(event, 60)}`: embed runs the team's embedding command (with "
            "the job's secrets) and writes the vectors the gate takes on trust, so it runs on a developer's "
            f"machine or in a {', '.join(EMBED_EVENTS)} job, never on a pull request; pass "
            "--allow-untrusted-event only in a job that checks out no pull request code")


def embed_main(argv: list[str]) -> int:
    args = build_embed_parser().parse_args(argv)
    problems = P.Problems()
    try:
        return _embed(args)
    except InputError as exc:
        problems.add_input_error(exc)
    except Invalid as exc:
        problems = exc.problems
    for problem in problems.errors:
        print(f"{problem.location()}: {problem.message}" if problem.file else problem.message)
    print("rag-corpus-check embed: INVALID INPUT (nothing was written)")
    return 2


def _embed(args) -> int:
    refusal = event_refusal(os.environ, args.allow_untrusted_event)
    if refusal:
        raise InputError("config", refusal)
    root = logical_path(args.root)
    cfg = _config(root, logical_path(args.config))
    from rag_corpus_check.retrieval.dense.store import is_store  # numpy

    assert cfg.vectors is not None
    if is_store(root, cfg.base_dir, cfg.vectors) or (args.init and args.store):
        return _embed_store(root, cfg, args)
    if args.endpoint or args.compact or args.store:
        raise InputError("config", "--endpoint, --compact and --store are for a store found by text (a folder "
                         "with store.json); make one with --init --store", file=cfg.path_display)
    from rag_corpus_check.commands import vectors_refresh as refresh  # numpy

    folder = refresh.open_folder(root, cfg, args)
    texts = read_texts(root, cfg, folder.known)
    tables = refresh.plan_tables(folder, texts.current, texts.wanted)
    todo = _listed(tables, texts)
    dropped = sum(t.dropped for t in tables)
    if args.command is None or not (todo or dropped or args.init):
        return _dry(todo, dropped, args.command is not None)
    done = refresh.apply(folder, tables, texts.texts, args.command, args.timeout)
    print(f"rag-corpus-check embed: embedded {done} texts, dropped {dropped} rows; wrote "
          f"{safe_text(cfg.vectors, 200)} ({sum(len(t.ids) for t in tables)} rows)")
    return 0


def _embed_store(root: str, cfg: Config, args) -> int:
    from rag_corpus_check.commands import store_refresh
    from rag_corpus_check.retrieval.dense.store import digest

    real, store = store_refresh.open_store(root, cfg, args)
    wanted = store_refresh.Wanted()

    def known(kind: str, key: str, text: str) -> bool:
        d = digest(text)
        wanted.texts.setdefault(d, text)
        wanted.kinds.setdefault(d, kind[:-1])
        return True

    read_texts(root, cfg, known, by_text=True)
    return store_refresh.refresh(real, store, cfg, wanted, args)


def _dry(todo: int, dropped: int, given: bool) -> int:
    if not todo:
        print("rag-corpus-check embed: every text has a current vector"
              + (f" ({dropped} rows of gone texts would be dropped with --command)" if dropped and not given else ""))
        return 0
    print(f"rag-corpus-check embed: {counted(todo, 'text')} {'needs' if todo == 1 else 'need'} a vector; run again with --command \"<your embedding "
          "command>\" to embed them")
    return 1


def _config(root: str, path: str) -> Config:
    problems = P.Problems()
    cfg, _ = load_config(root, path, problems)
    if cfg is None:
        raise Invalid(problems)
    if not cfg.ranker.needs_vectors or not cfg.vectors or not cfg.model:
        raise InputError("config", "embed needs `retriever.type: dense` or `hybrid`, with `vectors` and `model`",
                         file=cfg.path_display)
    return cfg


@dataclass
class Texts:
    """The texts the check ranks, by kind ("documents", "questions")."""

    current: dict[str, dict[str, str]] = field(default_factory=lambda: {"documents": {}, "questions": {}})
    wanted: dict[str, list[str]] = field(default_factory=lambda: {"documents": [], "questions": []})
    texts: dict[tuple[str, str], str] = field(default_factory=dict)  # only those without a current row
    where: dict[str, Callable[[str], tuple[str, int | None]]] = field(default_factory=dict)

    by_text: bool = False  # ``known`` is given the text (a store), not its sha-256

    def add(self, kind: str, key: str, text: str, known: Callable[[str, str, str], bool]) -> None:
        digest = self.current[kind][key] = text_sha256(text)
        self.wanted[kind].append(key)
        if not known(kind, key, text if self.by_text else digest):
            self.texts[(kind, key)] = text


def read_texts(root: str, cfg: Config, known: Callable[[str, str, str], bool], by_text: bool = False) -> Texts:
    """Every corpus record (its embedded text's hash, ``retriever.embed``; a
    served one's text when it has no current row) and every gold question."""
    problems, out = P.Problems(), Texts(by_text=by_text)
    found = input_sources(root, cfg, problems)
    if found is None:
        raise Invalid(problems)

    def on_doc(doc_id: str, rec: dict) -> None:
        text = embedded_text(rec, cfg.embed)
        if rec.get("status", "active") in cfg.bm25.statuses:
            out.add("documents", doc_id, text, known)
        else:
            out.current["documents"][doc_id] = text_sha256(text)

    inputs = read_inputs(found["corpus"], gold_sources(found), None, cfg.limits, problems, on_doc=on_doc,
                         queries=found.get("queries"), analyzer=cfg.bm25.analyzer())
    corpus, gold = inputs.corpus, inputs.gold
    if problems.has_errors() or corpus is None or gold is None:
        raise Invalid(problems)
    out.where["documents"] = corpus_where(corpus)
    out.where["questions"] = lambda key: where(gold, gold.queries[key])
    _questions(out, gold, known)
    return out


def _questions(out: Texts, gold, known: Callable[[str, str, str], bool]) -> None:
    for qid, q in sorted(gold.queries.items()):
        if not (q.text or "").strip():
            raise InputError("config", "question has no `query` text to embed", *where(gold, q))
        out.add("questions", qid, q.text or "", known)


def _listed(tables, texts: Texts) -> int:
    """Prints how many texts need a vector, a line per kind and reason
    (stale, or no row) with the first of them (file:line and id), never a
    line per text (a re-embedded corpus has thousands); their number."""
    groups: dict[tuple[str, bool], list[str]] = {}
    for table in tables:
        for key in table.new:
            groups.setdefault((table.kind[0], key in table.stale), []).append(key)
    for (kind, stale), keys in groups.items():
        file, line = texts.where[kind](keys[0])
        why = "with a stale vector (the text changed)" if stale else "without a vector row"
        print(f"  {kind} {why}: {len(keys)} (the first: {safe_text(file, 300)}:{line or '-'} `{safe_id(keys[0])}`)")
    sys.stdout.flush()
    return sum(map(len, groups.values()))
