"""load → validate → evaluate → gate, and the one place the verdict and the
exit code are decided."""

from __future__ import annotations

import hashlib
import os
import platform
import tempfile
from dataclasses import dataclass, field

from rag_corpus_check import __version__
from rag_corpus_check import problems as P
from rag_corpus_check import rules as R
from rag_corpus_check.base_tree import BaseTree, open_base
from rag_corpus_check.config import CONFIG_MAX_BYTES, Config, load_config
from rag_corpus_check.context import TRUSTED_EVENTS, Context, command_refusal, event_refusal
from rag_corpus_check.evaluate import Evaluation, evaluate, irrelevant_by_type, irrelevant_top
from rag_corpus_check.gate import ThresholdResult, apply_thresholds, gate_passed
from rag_corpus_check.inputs import (
    Corpus,
    Gold,
    Run,
    RunQuery,
    gold_format,
    read_corpus,
    read_gold,
    read_run,
    run_format,
    start_corpus_read,
)
from rag_corpus_check.progress import current as current_progress
from rag_corpus_check.retrieve import BM25Index, Budget
from rag_corpus_check.retrieve_command import CommandResult, run_command
from rag_corpus_check.rules import Rules
from rag_corpus_check.safe_io import InputError, Sha256, resolve_input, sha256_file
from rag_corpus_check.validate import corpus_questions, cross_check

PASS, FAIL, INVALID, ERROR = "pass", "fail", "invalid", "error"
PARTIAL = "partial"  # one shard of a sharded run: valid, measured, not gated
EXIT_CODES = {PASS: 0, FAIL: 1, INVALID: 2, ERROR: 3, PARTIAL: 0}


@dataclass(frozen=True)
class Options:
    """What the caller (command line, action) decides; the PR's config cannot."""

    use_retriever: bool = False  # ignore a committed `run:` (`rag-corpus-check retrieve`)
    base: str | None = None  # a git revision to compare with, whose rules apply
    require_base: bool = True  # a base that cannot be had is an input error
    fetch_base: bool = False  # fetch the base from origin when the clone lacks it
    shard: tuple[int, int] | None = None
    allow_command: bool = False
    allow_untrusted_event: bool = False
    retriever_timeout: float = 600.0  # the ceiling of `retriever.timeout`


@dataclass
class Outcome:
    verdict: str
    exit_code: int
    problems: P.Problems
    config: Config | None = None
    evaluation: Evaluation | None = None
    thresholds: list[ThresholdResult] = field(default_factory=list)
    inputs: dict[str, str] = field(default_factory=dict)  # display path -> sha256
    corpus: Corpus | None = None
    gold: Gold | None = None
    run: Run | None = None
    retriever: dict | None = None  # how the run was produced, when not from a file
    command: CommandResult | None = None
    irrelevant_by_type: list | None = None
    rules: Rules | None = None  # which rules applied (None: no config to take them from)
    comparison: object | None = None  # compare.Comparison, when the base was evaluated
    base_notes: list[str] = field(default_factory=list)  # why a comparison is missing or partial
    base_rev: str | None = None
    keep_docs: bool = False  # a comparison with the base needs every document id
    base_sha: str | None = None
    context: Context = field(default_factory=Context)
    advisory: bool = False
    stage: str | None = None  # where an internal error happened

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    @property
    def rules_source(self) -> str | None:
        return self.rules.source if self.rules else None


def decide(problems: P.Problems, thresholds: list[ThresholdResult] | None) -> str:
    if problems.has_errors():
        return INVALID
    if thresholds is None:
        return INVALID
    return PASS if gate_passed(thresholds) else FAIL


def run_check(root: str, config_path: str, context: Context | None = None,
              options: Options = Options()) -> Outcome:
    """The whole check under ``options``: the tree at ``root`` alone, or with
    ``options.base`` compared and its rules enforced."""
    problems = P.Problems()
    ctx = context or Context()
    out = Outcome(INVALID, 2, problems, context=ctx)
    _LAST_STAGE[0] = None
    _enter(out, "config")
    refusal = event_refusal(ctx, options.allow_untrusted_event)
    if refusal:
        problems.add(P.CONFIG, refusal)
        return _finish(out, None)
    if ctx.git_error:
        problems.add(P.GIT, ctx.git_error + "; the commit checked cannot be named, so nothing is "
                     "measured — fix the checkout (for `dubious ownership`: git's safe.directory)")
        return _finish(out, None)
    if ctx.event_name and ctx.event_name not in TRUSTED_EVENTS:
        problems.add(P.CONFIG, f"running under `{ctx.event_name}` because the caller allowed it "
                     "(--allow-untrusted-event)", severity=P.WARNING)
    cfg_hash = hashlib.sha256()
    cfg, cfg_real = load_config(root, config_path, problems, cfg_hash)
    if cfg_real:  # read (valid or not): its digest is complete
        out.inputs[_display(root, cfg_real)] = cfg_hash.hexdigest()
    out.config = cfg
    if cfg is None:
        return _finish(out, None)
    if options.use_retriever:
        cfg.run = None
    cfg.shard = options.shard
    cfg.command_timeout = min(cfg.command_timeout, options.retriever_timeout)
    if options.base is not None:
        return _run_with_base(root, config_path, cfg, out, options)
    out.rules = R.head_rules(R.NO_BASE, "no base revision was compared")
    return _gate(root, cfg, out, options)


def _gate(root: str, cfg: Config, out: Outcome, options: Options) -> Outcome:
    """Evaluate the tree and gate on the thresholds (no base comparison)."""
    if cfg.run_source == "command" and not _command_allowed(cfg, options.allow_command, out):
        return _finish(out, None)
    ok = _evaluate_tree(root, cfg, out)
    if ok:
        out.thresholds = apply_thresholds(cfg.thresholds, out.evaluation.means)
    out = _finish(out, out.thresholds if ok else None)
    if options.shard and out.verdict in (PASS, FAIL):
        # A shard's means cover part of the questions: only the merge decides.
        out.verdict, out.exit_code = PARTIAL, 0
    return out


def _read(out: Outcome, path: tuple[str, str], limits, reader, *args, **kwargs):
    """Run one input reader; the reader hashes what it reads, so the file is
    read once. A reader that stopped early (an InputError) is reported, and
    the file is hashed on its own for provenance when its size allows."""
    real, display = path
    hasher = Sha256()
    try:
        result = reader(real, display, *args, hasher=hasher, **kwargs)
    except InputError as exc:
        out.problems.add(exc.kind, exc.message, file=exc.file, line=exc.line)
        try:
            out.inputs[display] = sha256_file(real, display, limits.max_file_bytes)
        except InputError:
            pass  # already reported by the reader
        return None
    out.inputs[display] = hasher.hexdigest()
    return result


def _evaluate_tree(root: str, cfg: Config, out: Outcome) -> bool:
    """load → validate → retrieve → evaluate for one tree. True when the
    evaluation exists (no input errors)."""
    problems = out.problems
    _enter(out, "load")
    paths = {}
    wanted = [("corpus", cfg.corpus), ("gold", cfg.gold)] + ([("run", cfg.run)] if cfg.run else [])
    for key, rel in wanted:
        try:
            real, display = resolve_input(root, cfg.base_dir, rel, f"{cfg.path_display}: `{key}`")
            paths[key] = (real, display)
        except InputError as exc:
            problems.add(exc.kind, exc.message, file=exc.file or cfg.path_display, line=exc.line)
    if len(paths) < len(wanted):
        return False

    gfmt = gold_format(paths["gold"][1], cfg.gold_format)
    rfmt = run_format(paths["run"][1], cfg.run_format) if cfg.run else "jsonl"
    if gfmt is None:
        problems.add(
            P.CONFIG,
            "cannot tell the gold format from the file extension; use .yaml/.json/.jsonl/.qrels "
            "or set `formats: {gold: ...}` in the config",
            file=cfg.path_display, id=paths["gold"][1],
        )
    if rfmt is None:
        problems.add(
            P.CONFIG,
            "cannot tell the run format from the file extension; use .jsonl/.run/.trec "
            "or set `formats: {run: ...}` in the config",
            file=cfg.path_display, id=paths["run"][1],
        )
    if gfmt is None or rfmt is None:
        return False

    index = BM25Index(cfg.bm25, cfg.bounds) if cfg.run_source == "bm25" else None
    on_doc = None
    if index is not None:
        statuses = set(cfg.bm25.statuses)
        corpus_file = paths["corpus"][1]

        def on_doc(doc_id, rec):
            if rec.get("status", "active") in statuses:
                try:
                    index.add(doc_id, rec.get("title", "") + "\n" + rec["text"])
                except Budget as exc:
                    raise InputError(P.LIMIT, _budget_message(exc, cfg), file=corpus_file) from None

    early = _read_inputs(cfg, out, paths, gfmt, rfmt, on_doc)
    if out.corpus is None or out.gold is None:
        return False
    if not cfg.run and not problems.has_errors():
        _enter(out, "retrieve")
        out.run = _retrieve(cfg, root, paths["corpus"][0], out, index, problems)
    if out.run is None:
        return False

    if problems.has_errors():
        # Cross-file checks over partly read files would only add noise
        # ("question missing" for a question whose line failed its schema).
        return False
    _enter(out, "validate")
    cross_check(cfg, out.corpus, out.gold, out.run, problems)
    if problems.has_errors():
        # Never a verdict on partial data.
        return False

    _enter(out, "evaluate")
    irrelevant, out.evaluation = early or _evaluate(cfg, out)
    if out.evaluation.counted == 0 and not cfg.shard:  # a shard may hold none; merge checks
        problems.add(
            P.CONSISTENCY,
            "no gold question has a relevant document (grade ≥ "
            f"{cfg.min_grade}); there is nothing to measure — label at least one relevant document",
            file=out.gold.file,
        )
        return False
    out.irrelevant_by_type = irrelevant_by_type(*irrelevant, out.corpus)
    if not cfg.thresholds:
        problems.add(
            P.CONFIG,
            "no thresholds are set, so the gate cannot fail; add e.g. `thresholds: {nDCG@"
            f"{cfg.k}: 0.7}}`",
            file=cfg.path_display, severity=P.WARNING,
        )
    return True


def _read_inputs(cfg: Config, out: Outcome, paths: dict, gfmt: str, rfmt: str, on_doc):
    """Read gold, corpus and run (in this order for the messages). A big
    corpus is read in a second process while this one reads the gold set and
    the run and evaluates them (the measures do not need the corpus); that
    evaluation is returned, to be used once the cross-check has passed."""
    problems, limits = out.problems, cfg.limits
    job = start_corpus_read(*paths["corpus"], limits) if on_doc is None and cfg.run else None
    early = None
    try:
        out.gold = _read(out, paths["gold"], limits, read_gold, gfmt, limits, problems)
        if cfg.shard and out.gold is not None:
            out.gold.queries = {q: v for q, v in out.gold.queries.items() if in_shard(q, cfg.shard)}
        if job is None:
            out.corpus = _read(out, paths["corpus"], limits, read_corpus, limits, problems, on_doc=on_doc)
        mark = len(problems.items)
        if cfg.run:
            out.run = _read(out, paths["run"], limits, read_run, rfmt, limits, problems)
        if cfg.shard and out.run is not None:
            out.run.queries = {q: v for q, v in out.run.queries.items() if in_shard(q, cfg.shard)}
            out.run.ranked = None  # held the other shards' ids too
        if job is None:
            return None
        if out.keep_docs:
            job.ask("docs")
        if out.gold is not None and out.run is not None and not problems.has_errors():
            job.ask("facts", *corpus_questions(out.gold, out.run))
            _enter(out, "evaluate")
            early = _evaluate(cfg, out, job.ask)
            _enter(out, "load")
        got, job = job.result(), None
        later = problems.items[mark:]  # the run's: reported after the corpus's
        del problems.items[mark:]
        if got is None:  # the child gave up: read it here, with the messages
            out.corpus = _read(out, paths["corpus"], limits, read_corpus, limits, problems, fast=False)
        else:
            out.corpus, out.inputs[paths["corpus"][1]] = got
        problems.items.extend(later)
        order = [paths[k][1] for k in ("gold", "corpus", "run")]
        out.inputs = {k: v for k, v in out.inputs.items() if k not in order} | {
            k: out.inputs[k] for k in order if k in out.inputs}
        return early
    finally:
        if job is not None:
            job.cancel()


def _evaluate(cfg: Config, out: Outcome, ask=None):
    """The evaluation and what :func:`irrelevant_by_type` needs of the run
    (neither needs the corpus). ``ask``: a corpus child's CorpusJob.ask, to
    count the types while this process evaluates."""
    grades = {qid: q.relevant for qid, q in out.gold.queries.items()}
    rankings = {qid: q.ranking for qid, q in out.run.queries.items()}
    irrelevant = irrelevant_top(grades, rankings, cfg.k, cfg.min_grade)
    if ask is not None:
        ask("types", *irrelevant)
    evaluation = evaluate(
        grades,
        rankings,
        cfg.measures(),
        min_grade=cfg.min_grade,
        gain=cfg.gain,
        short_list=cfg.short_list,
    )
    return irrelevant, evaluation


def _command_allowed(cfg: Config, allowed: bool, out: Outcome) -> bool:
    """A retriever command is a program from the repository being checked: in
    a pull request, the author's code. Only the caller can enable it, and
    only under the events :func:`context.command_refusal` allows."""
    refusal = command_refusal(out.context, allowed)
    if refusal:
        out.problems.add(P.CONFIG, refusal, file=cfg.path_display)
    return refusal is None


_LAST_STAGE: list[str | None] = [None]


def _enter(out: Outcome, stage: str) -> None:
    """Record the stage on the outcome and for the CLI's internal-error
    message (an exception leaves the outcome behind)."""
    out.stage = stage
    _LAST_STAGE[0] = stage


def last_stage() -> str | None:
    return _LAST_STAGE[0]


def in_shard(query_id: str, shard: tuple[int, int]) -> bool:
    """Stable assignment of a question to one of ``n`` shards (by SHA-256 of
    its id, so it does not depend on file order or Python's hash seed)."""
    index, count = shard
    digest = hashlib.sha256(query_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def _finish(out: Outcome, thresholds) -> Outcome:
    out.verdict = decide(out.problems, thresholds)
    if out.verdict == PASS and out.rules is not None and out.rules.violated:
        out.verdict = FAIL  # a PR may not quietly loosen the rules
    out.exit_code = EXIT_CODES[out.verdict]
    out.stage = None
    return out


def _display(root: str, real: str) -> str:
    return os.path.relpath(real, os.path.realpath(root))


# ---------------------------------------------------------------- base


def _run_with_base(root: str, config_path: str, cfg: Config, out: Outcome, options: Options) -> Outcome:
    _enter(out, "base")
    out.base_rev = options.base
    out.keep_docs = True
    try:
        tree = open_base(out.context.checkout, options.base, fetch=options.fetch_base)
    except InputError as exc:
        return _without_base(root, cfg, out, options, exc)
    out.base_sha = tree.sha
    try:
        configured = _configured(root, config_path)
        try:
            base_cfg, base_file = _load_base_config(tree, configured)
        except InputError as exc:
            return _without_base(root, cfg, out, options, exc)
        if base_cfg is None:
            out.rules = R.head_rules(R.FIRST_INTRODUCTION)
            out.base_notes.append(
                f"`{configured}` does not exist at the base commit (first introduction): "
                "the head's thresholds and conventions apply, and there is nothing to compare")
            return _gate(root, cfg, out, options)
        head_file = _display(root, os.path.realpath(os.path.join(os.path.abspath(root), configured)))
        real_root = os.path.realpath(root)
        out.rules = R.decide(base_cfg, cfg, real_root, tree.root, (configured, head_file, base_file))
        R.enforce(out.rules, base_cfg, cfg)
        R.same_conventions(cfg, base_cfg)
        if cfg.run_source == "command" and not _command_allowed(cfg, options.allow_command, out):
            return _finish(out, None)
        return _compare_and_gate(root, cfg, base_cfg, tree, out)
    finally:
        tree.cleanup()


def _compare_and_gate(root: str, cfg: Config, base_cfg: Config, tree: BaseTree, out: Outcome) -> Outcome:
    from rag_corpus_check import compare

    problems = out.problems
    if not _evaluate_tree(root, cfg, out):
        return _finish(out, None)
    drop_failures = None
    base_out = _evaluate_base(tree, base_cfg, out)
    if base_out is not None:
        _enter(out, "compare")
        out.comparison = compare.compare(base_out, out, out.rules, out.base_rev, tree.sha)
        drop_failures = compare.max_drop_failures(cfg.thresholds, out.comparison)
        if out.comparison.gold_changed and out.comparison.system_changed:
            problems.add(
                P.CONSISTENCY,
                "this PR changes the gold labels and the corpus/run together; review the "
                "expected answers separately from the system change (see the attribution)",
                file=out.gold.file, severity=P.WARNING,
            )
        if out.comparison.unjudged_new_docs:
            n = sum(len(e["doc_ids"]) for e in out.comparison.unjudged_new_docs)
            problems.add(
                P.CONSISTENCY,
                f"{n} new corpus documents enter the top-{cfg.k} without a gold judgement "
                f"({len(out.comparison.unjudged_new_docs)} questions); the labels are going "
                "stale — judge them (a Judged@k threshold can enforce it)",
                file=out.gold.file, severity=P.WARNING,
            )
    out.thresholds = apply_thresholds(cfg.thresholds, out.evaluation.means, drop_failures)
    return _finish(out, out.thresholds)


def _without_base(root: str, cfg: Config, out: Outcome, options: Options, exc: InputError) -> Outcome:
    """The base (or its config) cannot be had: an input error, unless the
    caller opted out (--no-require-base), when the head's own rules apply
    and a warning says so."""
    if options.require_base:
        out.problems.add(exc.kind, exc.message + "; to run on the head's own rules instead, pass "
                         "--no-require-base (action input `require-base: 'false'`)", file=exc.file)
        return _finish(out, None)
    out.problems.add(exc.kind, exc.message + " — the head's own rules apply (rules-source "
                     "head-no-base), and nothing was compared", file=exc.file, severity=P.WARNING)
    out.rules = R.head_rules(R.NO_BASE, "the base could not be used (--no-require-base)")
    return _gate(root, cfg, out, options)


def _configured(root: str, config_path: str) -> str:
    """The config path as the caller gave it, relative to the root, with no
    symlink resolved: where the base's config is looked up."""
    rel = os.path.relpath(os.path.abspath(config_path), os.path.abspath(root))
    return rel.replace(os.sep, "/")


def _load_base_config(tree: BaseTree, configured: str) -> tuple[Config | None, str | None]:
    """The base's config at the configured path (a symlink resolved in the
    base tree) and the file it resolved to; (None, None) when there is none.
    :class:`InputError` when it exists but cannot be read or is invalid."""
    resolved = tree.export(configured, CONFIG_MAX_BYTES)
    if resolved is None:
        return None, None
    problems = P.Problems()
    base_dir = os.path.join(tree.root, *os.path.dirname(resolved).split("/"))
    base_cfg, _ = load_config(tree.root, os.path.join(tree.root, configured), problems, base_dir=base_dir)
    if base_cfg is None:
        first = problems.items[0] if problems.items else None
        why = f" (first: {first.location()}: {first.message})" if first else ""
        raise InputError(
            "base", f"the base config cannot be used: `{configured}` at the base commit has "
            f"{problems.error_count()} problems{why}", file=configured,
        )
    return base_cfg, resolved


def _evaluate_base(tree: BaseTree, base_cfg: Config, out: Outcome) -> Outcome | None:
    if base_cfg.run_source == "command":
        out.base_notes.append(
            "the base uses a retriever command; comparing against it is not supported (it would "
            "need the base tree checked out), so only the head was measured"
        )
        return None
    try:
        for rel in (base_cfg.corpus, base_cfg.gold, base_cfg.run):
            if rel is None:
                continue
            path = os.path.relpath(os.path.normpath(os.path.join(base_cfg.base_dir, rel)), tree.root)
            if tree.export(path, base_cfg.limits.max_file_bytes) is None:
                out.base_notes.append(f"`{path}` does not exist at the base commit; nothing to compare")
                return None
    except InputError as exc:
        out.base_notes.append(f"the base inputs cannot be read: {exc.message}")
        return None
    base_out = Outcome(INVALID, 2, P.Problems(), config=base_cfg, keep_docs=True)
    if not _evaluate_tree(tree.root, base_cfg, base_out):
        out.base_notes.append(
            f"the base inputs are invalid ({base_out.problems.error_count()} problems); "
            "nothing to compare — the head is judged on its own"
        )
        return None
    return base_out


def environment() -> dict:
    return {"tool_version": __version__, "python": platform.python_version()}


# ---------------------------------------------------------------- retrieval

BM25_FILE = "(built-in BM25)"
COMMAND_FILE = "(retriever command output)"


def _budget_message(exc: Budget, cfg: Config) -> str:
    return (f"{exc.message}; raise `limits.{exc.limit}` in {cfg.path_display} if this input is "
            "meant (with --base, in a PR that sets a new `rule_change_reason`)")


def _questions(gold: Gold, problems: P.Problems) -> list[tuple[str, str]] | None:
    missing = [q for q in gold.queries.values() if not (q.text or "").strip()]
    for q in missing:
        problems.add(
            P.CONFIG,
            "question has no `query` text, which the retriever needs; add it, or give a "
            "committed `run:` in the config (TREC qrels carry no text)",
            file=gold.file, line=q.line, id=q.query_id,
        )
    if missing:
        return None
    return [(qid, q.text) for qid, q in sorted(gold.queries.items())]


def _retrieve(cfg: Config, root: str, corpus_real: str, out: Outcome, index, problems) -> Run | None:
    questions = _questions(out.gold, problems)
    if questions is None:
        return None
    if cfg.run_source == "bm25":
        index.finish()
        p = cfg.bm25
        out.retriever = {
            "type": "bm25", "k1": p.k1, "b": p.b, "depth": p.depth, "statuses": list(p.statuses),
            "stopwords": p.stopwords, "indexed_documents": index.size,
        }
        run = Run(file=BM25_FILE, format="bm25")
        progress = current_progress()
        for i, (qid, text) in enumerate(questions, 1):
            try:
                run.queries[qid] = RunQuery(qid, None, index.search(text, p.depth))
            except Budget as exc:
                q = out.gold.queries[qid]
                problems.add(P.LIMIT, _budget_message(exc, cfg), file=out.gold.file, line=q.line, id=qid)
                return None
            progress.tick("retrieving with BM25", i, len(questions), unit="questions")
        return run
    out.retriever = {"type": "command", "command": list(cfg.command), "timeout": cfg.command_timeout}
    with tempfile.TemporaryDirectory(prefix="rag-corpus-check-retriever-") as workdir:
        res = run_command(
            cfg.command, corpus_path=corpus_real, questions=questions, cwd=cfg.base_dir,
            timeout=cfg.command_timeout, depth=cfg.bm25.depth, k=cfg.k, workdir=workdir,
        )
        out.command = res
        if not res.ok:
            problems.add(P.RETRIEVER, res.message + " — see its output in the summary", file=cfg.path_display)
            return None
        try:
            return read_run(res.output_path, COMMAND_FILE, "jsonl", cfg.limits, problems)
        except InputError as exc:
            problems.add(exc.kind, exc.message, file=exc.file, line=exc.line)
            return None
