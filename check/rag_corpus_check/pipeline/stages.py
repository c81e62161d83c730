"""The check's stages: config → inputs → retrieve → evaluate → validate →
gate, for one tree. :func:`check.run_check` runs them, on both trees with a
base revision (:mod:`base.head_vs_base`); the verdict is decided in one place
(:func:`outcome.decide`)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Config, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.gate.slices import Slices, measure_slices, slice_names, unknown_slices
from rag_corpus_check.gate.thresholds import PerQuestionResult, apply_thresholds
from rag_corpus_check.inputs import Inputs, Source, chunks, read_inputs
from rag_corpus_check.inputs.cross_file import check_labels, cross_check
from rag_corpus_check.inputs.formats import format_of, unknown_format
from rag_corpus_check.inputs.question_texts import duplicate_questions
from rag_corpus_check.inputs.records import without_own_id
from rag_corpus_check.metrics.evaluate import (
    Evaluation,
    evaluate,
    irrelevant_by_type,
    irrelevant_top,
)
from rag_corpus_check.metrics.measures import Measure
from rag_corpus_check.pipeline.context import TRUSTED_EVENTS, command_refusal, event_refusal
from rag_corpus_check.pipeline.outcome import Gated, Outcome
from rag_corpus_check.pipeline.uncertainty import uncertainty
from rag_corpus_check.safe_io import InputError, resolve_input

if TYPE_CHECKING:  # compare only with a base compared, rankings only without a committed run
    from rag_corpus_check.gate.compare import Comparison
    from rag_corpus_check.inputs import Run
    from rag_corpus_check.retrieval.protocol import BaseQuestions, Ranker


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
    advisory: bool = False  # a failed gate exits 0 (the verdict stays fail)
    required_rules: tuple[str, ...] = ()  # rules sources that may gate (empty: any); others fail the gate


def configure(root: str, config_path: str, out: Outcome, options: Options) -> Config | None:
    """The stage before any input: the event and the checkout allowed, the
    config read and validated. The caller's options stay in ``options``."""
    enter(out, "config")
    if not _may_run(out, options):
        return None
    cfg_hash = hashlib.sha256()
    cfg, cfg_real = load_config(root, config_path, out.problems, cfg_hash)
    if cfg_real:  # read (valid or not): its digest is complete
        out.inputs[_display(root, cfg_real)] = cfg_hash.hexdigest()
    out.shard = options.shard
    if cfg is not None and options.use_retriever and cfg.run is not None:
        # `retrieve` checks the committed file without its `run:` (a new
        # value: the config as read is never changed by the caller's options).
        cfg = dataclasses.replace(cfg, run=None)
    out.config = cfg
    return cfg


def _may_run(out: Outcome, options: Options) -> bool:
    """The event is allowed and git can read the checkout."""
    problems, ctx = out.problems, out.context
    refusal = event_refusal(ctx, options.allow_untrusted_event)
    if refusal:
        problems.add(P.CONFIG, refusal)
    elif ctx.git_error:
        problems.add(P.GIT, ctx.git_error + "; the commit checked cannot be named, so nothing is "
                     "measured — fix the checkout (for `dubious ownership`: git's safe.directory)")
    elif ctx.event_name and ctx.event_name not in TRUSTED_EVENTS:
        problems.add(P.TRUST, f"running under `{ctx.event_name}` because the caller allowed it "
                     "(--allow-untrusted-event)", severity=P.WARNING)
    return not problems.has_errors()


def measure(root: str, cfg: Config, out: Outcome, options: Options, also_rank: BaseQuestions | None = None) -> Inputs:
    """load → retrieve → evaluate → validate for one tree. Sets
    ``out.evaluation`` when it stands (no input error). Returns the inputs.
    ``also_rank`` (the base's questions) is ranked by the built-in retriever
    too, into ``out.base_gold_rankings``."""
    if (cfg.run is None and cfg.ranker.runs_command
            and (refusal := command_refusal(out.context, options.allow_command))):
        out.problems.add(P.CONFIG, refusal, file=cfg.path_display)
        return Inputs()
    enter(out, "load")
    sources = input_sources(root, cfg, out.problems)
    if sources is None:
        return Inputs()
    retriever = None
    if cfg.run is None:
        from rag_corpus_check.pipeline.rankings import ranker

        retriever = ranker(cfg, sources["corpus"], root, options.retriever_timeout)
    inputs = _read(cfg, out, sources, retriever)
    _measure_inputs(cfg, out, inputs, retriever, options, also_rank)
    return inputs


def _read(cfg: Config, out: Outcome, sources: dict[str, Source], retriever: Ranker[Run] | None) -> Inputs:
    """The inputs read (the corpus when first asked for, unless the retriever indexes it now)."""
    out.formats = {source.display: source.shown_format for source in sources.values()}
    return read_inputs(sources["corpus"], gold_sources(sources), sources.get("run"), cfg.limits, out.problems,
                       on_doc=retriever.on_doc() if retriever else None, queries=sources.get("queries"),
                       hook=retriever.hook() if retriever else None, analyzer=cfg.bm25.analyzer())


def _measure_inputs(cfg: Config, out: Outcome, inputs: Inputs, retriever: Ranker[Run] | None, options: Options,
                    also_rank: BaseQuestions | None = None) -> None:
    """retrieve → evaluate → validate. The measures need no corpus: a
    committed run is evaluated before the corpus is first asked for. A run
    still to be made is made only when the checks that need none found no error
    (:func:`cross_file.check_labels`): a retrieval can take minutes."""
    out.gold, out.run = inputs.gold, inputs.run
    if out.gold is not None:
        duplicate_questions(out.gold, out.problems)
        unknown_slices(cfg, out.gold.tags(), out.problems)  # before a shard keeps some questions
    if out.gold is not None and options.shard:
        _keep_shard(out, options.shard)
    if retriever is not None and _labels_hold(cfg, out, inputs):
        _retrieve(out, inputs, retriever, also_rank)
    _drop_identical(cfg, out)
    evaluated = _evaluate(cfg, out) if _evaluable(out) else None
    enter(out, "load")
    out.corpus = inputs.corpus
    out.inputs.update(inputs.digests)
    if evaluated is not None and _readable(out, out.corpus):
        evaluation, irrelevant = _chunked(cfg, out, evaluated)
        _validate(cfg, out, evaluation, irrelevant, labels_checked=retriever is not None)


def _drop_identical(cfg: Config, out: Outcome) -> None:
    """`metrics.ignore_identical_ids` (BEIR): each question's own id out of
    its ranking, and out of the base's questions ranked on this tree."""
    if cfg.ignore_identical_ids and out.run is not None:
        out.run.drop_identical()
        rankings = out.base_gold_rankings or {}
        out.base_gold_rankings = {q: without_own_id(q, r) for q, r in rankings.items()} or out.base_gold_rankings


def _evaluable(out: Outcome) -> bool:
    """A gold set and a run, read without an error: the measures can be taken."""
    return out.gold is not None and out.run is not None and not out.problems.has_errors()


def _labels_hold(cfg: Config, out: Outcome, inputs: Inputs) -> bool:
    """The cross-file checks that need no ranking, before it is made; whether
    the ranking is worth making."""
    if not _readable(out, inputs.corpus):
        return False
    assert inputs.corpus is not None and out.gold is not None
    enter(out, "validate")
    check_labels(cfg, inputs.corpus, out.gold, out.problems)
    return not out.problems.has_errors()


def _retrieve(out: Outcome, inputs: Inputs, retriever: Ranker[Run], also_rank: BaseQuestions | None) -> None:
    """The run, from the built-in retriever or the team's command; with a
    base, its questions ranked too (how, in a note of the base's)."""
    if _readable(out, inputs.corpus):
        assert out.gold is not None
        enter(out, "retrieve")
        from rag_corpus_check.pipeline.rankings import rank

        out.run, out.retrieval = rank(retriever, out.gold, out.problems, inputs.corpus)
        vectors = out.vectors = retriever.vectors
        out.inputs.update(vectors.digests if vectors is not None else {})
        if also_rank is not None and out.run is not None:
            out.base_gold_rankings = retriever.rank_base(also_rank, out.problems)
            if also_rank.note and out.base is not None:
                out.base = out.base.noted(also_rank.note)


def _chunked(cfg: Config, out: Outcome, evaluated):
    """For a chunked corpus whose gold set labels documents: the corpus and
    the run as documents (:mod:`chunks`), evaluated anew."""
    assert out.corpus is not None and out.gold is not None and out.run is not None
    out.level = chunks.level(out.corpus, out.gold)
    if out.level != chunks.DOCUMENT:
        return evaluated
    parents = out.corpus.parents
    out.corpus, out.run = chunks.as_documents(out.corpus, out.gold, out.run, out.problems)
    if out.base_gold_rankings is not None:
        out.base_gold_rankings = {q: chunks.as_document_ranking(parents, r) for q, r in out.base_gold_rankings.items()}
    _drop_identical(cfg, out)
    return _evaluate(cfg, out)


def _readable(out: Outcome, corpus) -> bool:
    """Every file read, none with an error: cross-file checks over partly
    read files would only add noise."""
    return corpus is not None and out.gold is not None and not out.problems.has_errors()


def _validate(cfg: Config, out: Outcome, evaluation: Evaluation, irrelevant: tuple[list[str], list[bool]],
              labels_checked: bool) -> None:
    """The cross-file checks (those :func:`_labels_hold` made, not again);
    the evaluation stands when they find no error."""
    assert out.corpus is not None and out.gold is not None and out.run is not None
    enter(out, "validate")
    cross_check(cfg, out.corpus, out.gold, out.run, out.problems, labels_checked)
    if not out.problems.has_errors() and _countable(cfg, out, evaluation):
        out.evaluation = evaluation
        out.irrelevant_by_type = irrelevant_by_type(*irrelevant, out.corpus)


def input_sources(root: str, cfg: Config, problems: P.Problems) -> dict[str, Source] | None:
    """The input files, resolved inside the root, with their formats; the
    files of a `gold:` list under the keys `gold`, `gold[1]`, `gold[2]`, …"""
    wanted: list[tuple[str, str, str | None]] = [("corpus", cfg.corpus, cfg.corpus_format), *_gold_files(cfg)]
    if cfg.queries:
        wanted.append(("queries", cfg.queries, "beir"))
    if cfg.run:
        wanted.append(("run", cfg.run, format_of("run", cfg.run, cfg.run_format)))
    sources = {key: source for key, rel, fmt in wanted if (source := _source(root, cfg, key, rel, fmt, problems))}
    return sources if len(sources) == len(wanted) and _distinct_gold(cfg, sources, problems) else None


def _gold_files(cfg: Config) -> list[tuple[str, str, str | None]]:
    keys = ["gold", *(f"gold[{i}]" for i in range(1, len(cfg.gold_files)))]
    return [(key, rel, format_of("gold", rel, cfg.gold_format)) for key, rel in zip(keys, cfg.gold_files, strict=True)]


def gold_sources(sources: dict[str, Source]) -> list[Source]:
    """The gold files among :func:`input_sources`' sources, in the config's order."""
    return [source for key, source in sources.items() if key.partition("[")[0] == "gold"]


def _distinct_gold(cfg: Config, sources: dict[str, Source], problems: P.Problems) -> bool:
    """No file twice in a `gold:` list (two spellings, or a symlink, of one file)."""
    seen: dict[str, str] = {}
    for source in gold_sources(sources):
        if source.real in seen:
            problems.add(P.CONFIG, f"`gold:` names the file `{seen[source.real]}` twice (again as "
                         f"`{source.display}`); list each gold file once", file=cfg.path_display)
            return False
        seen[source.real] = source.display
    return True


def corpus_source(root: str, cfg: Config, problems: P.Problems) -> Source | None:
    """The corpus file of ``cfg``, resolved as the check resolves it."""
    return _source(root, cfg, "corpus", cfg.corpus, cfg.corpus_format, problems)


def _source(root: str, cfg: Config, key: str, rel: str, fmt: str | None, problems: P.Problems) -> Source | None:
    try:
        real, display = resolve_input(root, cfg.base_dir, rel, f"{cfg.path_display}: `{key}`")
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=exc.file or cfg.path_display, line=exc.line)
        return None
    if fmt is None:
        problems.add(P.CONFIG, unknown_format(key.partition("[")[0]), file=cfg.path_display, id=display)
        return None
    return Source(real, display, fmt, grade_map=tuple(sorted(cfg.grade_map.items())), order=cfg.run_order)


def _keep_shard(out: Outcome, shard: tuple[int, int]) -> None:
    assert out.gold is not None
    out.gold.queries = {q: v for q, v in out.gold.queries.items() if in_shard(q, shard)}
    if out.run is not None:
        out.run.only(q for q in out.run.queries if in_shard(q, shard))


def _evaluate(cfg: Config, out: Outcome) -> tuple[Evaluation, tuple[list[str], list[bool]]]:
    """The measures (they need no corpus) and what the by-type table needs."""
    assert out.gold is not None and out.run is not None
    enter(out, "evaluate")
    grades, rankings = out.gold.grades(), out.run.rankings()
    irrelevant = irrelevant_top(grades, rankings, cfg.k, cfg.min_grade)
    return evaluate(grades, rankings, cfg.measures(), cfg.options()), irrelevant


def _countable(cfg: Config, out: Outcome, evaluation: Evaluation) -> bool:
    """An evaluation with something to gate on (a shard may hold no counted
    question: the merge checks), and a warning when there is no threshold."""
    assert out.gold is not None
    if evaluation.counted == 0 and not out.shard:
        out.problems.add(
            P.CONSISTENCY,
            f"no gold question has a relevant document (grade ≥ {cfg.min_grade}); there is nothing to "
            "measure — label at least one relevant document", file=out.gold.file,
        )
        return False
    if not cfg.thresholds:
        out.problems.add(
            P.TRUST, "no thresholds are set, so the gate cannot fail; add e.g. `thresholds: "
            f"{{{Measure('nDCG', cfg.k)}: 0.7}}`", file=cfg.path_display, severity=P.WARNING,
        )
    return True


def gate(cfg: Config, out: Outcome, comparison: Comparison | None = None,
         base_family: frozenset[Measure] | None = None) -> Gated:
    """The thresholds against the means; with a base compared, also against
    the head's means judged by the base's gold set, the max_drops against
    the paired means of each gold set, and the per-question rule
    (``base_family``: the significance gate's, see :mod:`gate.significance`).
    Nothing after a stage over the resampling budget (a limit problem).
    Reads the measured ``out``; writes only its resampling budget and problems."""
    if out.evaluation is None or (out.resampling is not None and out.resampling.refused):
        return Gated()
    slices = _slices(cfg, out)
    sure = uncertainty(cfg, out, comparison, base_family)
    if comparison is None:
        thresholds = apply_thresholds(cfg.thresholds, out.evaluation.means)
        return Gated(thresholds, None, slices, sure.intervals, sure.debt, sure.significance)

    from rag_corpus_check.gate.compare import max_drop_failures  # only with a base compared

    base_means = {d.measure: d.head for d in comparison.base_gold.deltas} if comparison.base_gold else None
    thresholds = apply_thresholds(cfg.thresholds, out.evaluation.means, max_drop_failures(cfg.thresholds, comparison),
                                  base_means)
    per_question = (PerQuestionResult(cfg.per_question, {v.gold: v.over_limit for v in comparison.views})
                    if cfg.per_question is not None else None)
    return Gated(thresholds, per_question, slices, sure.intervals, sure.debt, sure.significance)


def _slices(cfg: Config, out: Outcome) -> Slices:
    """Every slice measured (and compared, when the base was) and gated."""
    assert out.evaluation is not None and out.gold is not None
    tags = out.gold.tags()
    if out.base is not None and out.base.slice_views is not None:
        views = out.base.slice_views
        return Slices(measure_slices(cfg, out.evaluation, tags, list(views), views), out.base.slices_left_out)
    names, left_out = slice_names(cfg, tags)
    return Slices(measure_slices(cfg, out.evaluation, tags, names, None), left_out)


def in_shard(query_id: str, shard: tuple[int, int]) -> bool:
    """Stable assignment of a question to one of ``n`` shards (by SHA-256 of
    its id, so it does not depend on file order or Python's hash seed)."""
    index, count = shard
    digest = hashlib.sha256(query_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


_LAST_STAGE: list[str | None] = [None]


def enter(out: Outcome, stage: str | None) -> None:
    """Record the stage on the outcome and for the CLI's internal-error
    message (an exception leaves the outcome behind)."""
    out.stage = stage
    _LAST_STAGE[0] = stage


def last_stage() -> str | None:
    return _LAST_STAGE[0]


def _display(root: str, real: str) -> str:
    return os.path.relpath(real, os.path.realpath(root))
