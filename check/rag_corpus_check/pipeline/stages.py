"""The check's stages: config → inputs → retrieve → evaluate → validate →
gate, for one tree. Each returns a frozen value (:class:`Begun`,
:class:`outcome.Measured`, :class:`outcome.Gated`); the problems and the
resampling budget are passed to the stages that add to them.
:func:`check.run_check` runs them; with a base revision
(:mod:`base.head_vs_base`) the same :func:`measure` measures both trees. The
verdict is decided in one place (:func:`outcome.decide`)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Config, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.gate.slices import Slices, measure_slices, slice_names, unknown_slices
from rag_corpus_check.gate.thresholds import PerQuestionResult, apply_thresholds
from rag_corpus_check.inputs import Inputs, Source, chunks, read_inputs
from rag_corpus_check.inputs.cross_file import AtBase, check_labels, cross_check
from rag_corpus_check.inputs.formats import format_of, unknown_format
from rag_corpus_check.inputs.gold import MAPPABLE
from rag_corpus_check.inputs.question_texts import Ranks, duplicate_questions
from rag_corpus_check.inputs.records import without_own_id
from rag_corpus_check.metrics.evaluate import (
    Evaluation,
    evaluate,
    irrelevant_by_type,
    irrelevant_top,
)
from rag_corpus_check.metrics.measures import Measure
from rag_corpus_check.pipeline.context import (
    TRUSTED_EVENTS,
    Context,
    command_refusal,
    event_refusal,
)
from rag_corpus_check.pipeline.outcome import (
    NOT_GATED,
    NOT_MEASURED,
    BaseResult,
    Gated,
    Measured,
    Outcome,
    Retrieval,
    decide,
)
from rag_corpus_check.pipeline.uncertainty import ledger, uncertainty
from rag_corpus_check.safe_io import InputError, resolve_input

if TYPE_CHECKING:  # compare only with a base compared, rankings only without a committed run
    from rag_corpus_check.gate.budget import Ledger
    from rag_corpus_check.gate.compare import Comparison
    from rag_corpus_check.gate.rules import Rules
    from rag_corpus_check.inputs import Corpus, Gold, Run
    from rag_corpus_check.retrieval.dense import VectorTrust
    from rag_corpus_check.retrieval.dense.supply import Supply
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


@dataclass(frozen=True)
class Begun:
    """What the check starts from: the caller's options, where it runs, the
    config as :func:`configure` read it (None: it cannot be used) and its
    digest. The problems found on the way are collected into ``problems``
    (the one collector every stage is given)."""

    problems: P.Problems
    context: Context
    options: Options
    config: Config | None = None
    digests: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def decided(self, rules: Rules | None = None, measured: Measured = NOT_MEASURED, gated: Gated = NOT_GATED, *,
                config: Config | None = None, base: BaseResult | None = None, ledger: Ledger | None = None,
                vector_trust: VectorTrust | None = None) -> Outcome:
        """The check's outcome made of the stages' values, and its verdict.
        ``config``: the config that measured (with a base: as enforced)."""
        options = self.options
        out = Outcome(self.problems, self.context, config=config or self.config, shard=options.shard,
                      config_digests=self.digests, measured=measured, gated=gated, resampling=ledger, rules=rules,
                      vector_trust=vector_trust, base=base, advisory=options.advisory,
                      required_rules=options.required_rules)
        return decide(out, shard=options.shard is not None)


def configure(root: str, config_path: str, problems: P.Problems, context: Context, options: Options) -> Begun:
    """The stage before any input: the event and the checkout allowed, the
    config read and validated. The caller's options stay in ``options``."""
    enter("config")
    begun = Begun(problems, context, options)
    if not _may_run(problems, context, options):
        return begun
    cfg_hash = hashlib.sha256()
    cfg, cfg_real = load_config(root, config_path, problems, cfg_hash)
    digests = {_display(root, cfg_real): cfg_hash.hexdigest()} if cfg_real else {}  # read (valid or not)
    if cfg is not None and options.use_retriever and cfg.run is not None:
        # `retrieve` checks the committed file without its `run:` (a new
        # value: the config as read is never changed by the caller's options).
        cfg = dataclasses.replace(cfg, run=None)
    return dataclasses.replace(begun, config=cfg, digests=digests)


def _may_run(problems: P.Problems, ctx: Context, options: Options) -> bool:
    """The event is allowed and git can read the checkout."""
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


def measure(root: str, cfg: Config, problems: P.Problems, options: Options, context: Context,
            also_rank: BaseQuestions | None = None, moved: dict[str, str] | None = None,
            at_base: AtBase | None = None, compared: bool = False, supply: Supply | None = None) -> Measured:
    """load → retrieve → evaluate → validate for one tree (the head's, or
    the base's with its own problems): what it found, with the evaluation
    when it stands (no input error). ``also_rank`` (the base's questions) is
    ranked by the built-in retriever too (``base_gold_rankings``).
    ``moved``: Markdown pages the PR moved unchanged (old id → new id),
    whose labels in the gold set are carried to the new path. ``at_base``
    (with a base) tells a label on a document the pull request deleted from
    one on an id that never was (:mod:`cross_file`); ``compared`` (a side of
    a comparison) keeps the labelled documents' hashes (:mod:`inputs.labelled`).
    ``supply``: for dense and hybrid over a store, where vectors come from
    (default: without a base, the config's own store and endpoint; with one,
    the PR's vectors on trust and no endpoint — ``base.head_vs_base`` passes
    the base's)."""
    if (cfg.run is None and cfg.ranker.runs_command
            and (refusal := command_refusal(context, options.allow_command))):
        problems.add(P.CONFIG, refusal, file=cfg.path_display)
        return NOT_MEASURED
    enter("load")
    sources = input_sources(root, cfg, problems)
    if sources is None:
        return NOT_MEASURED
    retriever = None
    if cfg.run is None:
        from rag_corpus_check.pipeline.rankings import ranker

        if supply is None and cfg.uses_vectors:
            from rag_corpus_check.pipeline.base_gold import head_only_supply, own_supply  # numpy

            supply = own_supply(cfg) if options.base is None else head_only_supply()
        retriever = ranker(cfg, sources["corpus"], root, options.retriever_timeout, supply)
    formats = {source.display: source.shown_format for source in sources.values()}
    inputs = read_inputs(sources["corpus"], gold_sources(sources), sources.get("run"), cfg.limits, problems,
                         on_doc=retriever.on_doc() if retriever else None, queries=sources.get("queries"),
                         hook=retriever.hook() if retriever else None, labelled=compared, copies_later=True,
                         analyzer=cfg.bm25.analyzer())
    if moved and inputs.gold is not None:
        from rag_corpus_check.inputs.markdown_corpus import carry_labels

        carry_labels(inputs.gold, moved, problems)
    return _measured(cfg, problems, inputs, retriever, options, also_rank, formats, at_base)


@dataclass(frozen=True)
class Ranked:
    """The run to evaluate: the committed one, or the retriever's (and how it was made)."""

    run: Run | None
    retrieval: Retrieval | None = None
    vectors: object | None = None
    digests: Mapping[str, str] = dataclasses.field(default_factory=dict)  # the vectors read
    base_gold_rankings: Mapping[str, list[str]] | None = None
    base_note: str | None = None


def _measured(cfg: Config, problems: P.Problems, inputs: Inputs, retriever: Ranker[Run] | None, options: Options,
              also_rank: BaseQuestions | None, formats: Mapping[str, str], at_base: AtBase | None = None) -> Measured:
    """retrieve → evaluate → validate. The measures need no corpus: a
    committed run is evaluated before the corpus is first asked for. A run
    still to be made is made only when the checks that need none found no error
    (:func:`cross_file.check_labels`): a retrieval can take minutes."""
    gold = inputs.gold
    if gold is not None:
        duplicate_questions(gold, problems)
        unknown_slices(cfg, gold.tags(), problems)  # before a shard keeps some questions
        if options.shard:
            _keep_shard(gold, inputs.run, options.shard)
    ranked = Ranked(inputs.run)
    if retriever is not None and _labels_hold(cfg, problems, inputs.corpus, gold, at_base):
        ranked = _retrieve(problems, inputs.corpus, gold, retriever, also_rank)
    ranked = _drop_identical(cfg, ranked)
    evaluated = _evaluate(cfg, gold, ranked.run) if _evaluable(problems, gold, ranked.run) else None
    enter("load")
    corpus = inputs.corpus  # read now, if not yet: after the measures, which need none
    inputs.report_copies(corpus, problems, _ranks(cfg, ranked.run))
    measured = Measured(gold, ranked.run, corpus, corpus_read=corpus, retrieval=ranked.retrieval, formats=formats,
                        digests={**ranked.digests, **inputs.digests}, base_gold_rankings=ranked.base_gold_rankings,
                        base_note=ranked.base_note, vectors=ranked.vectors,
                        labelled=inputs.labelled.digests() if inputs.labelled is not None else {})
    if evaluated is None or not _readable(problems, corpus, gold):
        return measured
    measured, evaluated = _chunked(cfg, problems, measured, ranked, evaluated)
    return _validate(cfg, problems, measured, evaluated, options, labels_checked=retriever is not None,
                     at_base=at_base)


def _ranks(cfg: Config, run: Run | None) -> Ranks | None:
    """The ranking measured and what made it, for the copies' warnings."""
    if run is None:
        return None
    by = "the committed run" if cfg.run is not None else f"the configured retriever (`{cfg.ranker.name}`)"
    return Ranks(run.rankings(), by)


def _drop_identical(cfg: Config, ranked: Ranked) -> Ranked:
    """`metrics.ignore_identical_ids` (BEIR): each question's own id out of
    its ranking, and out of the base's questions ranked on this tree."""
    if not cfg.ignore_identical_ids or ranked.run is None:
        return ranked
    ranked.run.drop_identical()
    rankings = ranked.base_gold_rankings or {}
    return dataclasses.replace(ranked, base_gold_rankings={q: without_own_id(q, r) for q, r in rankings.items()}
                               or ranked.base_gold_rankings)


def _evaluable(problems: P.Problems, gold: Gold | None, run: Run | None) -> bool:
    """A gold set and a run, read without an error: the measures can be taken."""
    return gold is not None and run is not None and not problems.has_errors()


def _labels_hold(cfg: Config, problems: P.Problems, corpus: Corpus | None, gold: Gold | None,
                 at_base: AtBase | None = None) -> bool:
    """The cross-file checks that need no ranking, before it is made; whether
    the ranking is worth making."""
    if not _readable(problems, corpus, gold):
        return False
    assert corpus is not None and gold is not None
    enter("validate")
    check_labels(cfg, corpus, gold, problems, at_base)
    return not problems.has_errors()


def _retrieve(problems: P.Problems, corpus: Corpus | None, gold: Gold | None, retriever: Ranker[Run],
              also_rank: BaseQuestions | None) -> Ranked:
    """The run, from the built-in retriever or the team's command; with a
    base, its questions ranked too (how, in a note of the base's)."""
    assert gold is not None
    enter("retrieve")
    from rag_corpus_check.pipeline.rankings import rank

    run, retrieval = rank(retriever, gold, problems, corpus)
    vectors = retriever.vectors
    ranked = Ranked(run, retrieval, vectors, vectors.digests if vectors is not None else {})
    if also_rank is None or run is None:
        return ranked
    base = retriever.rank_base(also_rank, problems)
    return dataclasses.replace(ranked, base_gold_rankings=base.rankings, base_note=base.note or None)


Evaluated = tuple[Evaluation, tuple[list[str], list[bool]]]


def _chunked(cfg: Config, problems: P.Problems, measured: Measured, ranked: Ranked, evaluated: Evaluated
             ) -> tuple[Measured, Evaluated]:
    """For a chunked corpus whose gold set labels documents: the corpus and
    the run as documents (:mod:`chunks`), evaluated anew."""
    corpus, gold, run = measured.corpus, measured.gold, measured.run
    assert corpus is not None and gold is not None and run is not None
    level = chunks.level(corpus, gold)
    if level != chunks.DOCUMENT:
        return dataclasses.replace(measured, level=level), evaluated
    parents = corpus.parents
    corpus, run = chunks.as_documents(corpus, gold, run, problems)
    rankings = ranked.base_gold_rankings
    if rankings is not None:
        rankings = {q: chunks.as_document_ranking(parents, r) for q, r in rankings.items()}
    ranked = _drop_identical(cfg, dataclasses.replace(ranked, run=run, base_gold_rankings=rankings))
    measured = dataclasses.replace(measured, corpus=corpus, run=ranked.run, level=level,
                                   base_gold_rankings=ranked.base_gold_rankings)
    return measured, _evaluate(cfg, gold, ranked.run)


def _readable(problems: P.Problems, corpus: Corpus | None, gold: Gold | None) -> bool:
    """Every file read, none with an error: cross-file checks over partly
    read files would only add noise."""
    return corpus is not None and gold is not None and not problems.has_errors()


def _validate(cfg: Config, problems: P.Problems, measured: Measured, evaluated: Evaluated, options: Options,
              labels_checked: bool, at_base: AtBase | None = None) -> Measured:
    """The cross-file checks (those :func:`_labels_hold` made, not again);
    the evaluation stands when they find no error."""
    corpus, gold, run = measured.corpus, measured.gold, measured.run
    assert corpus is not None and gold is not None and run is not None
    enter("validate")
    cross_check(cfg, corpus, gold, run, problems, labels_checked, at_base)
    evaluation, irrelevant = evaluated
    if problems.has_errors() or not _countable(cfg, problems, gold, evaluation, options):
        return measured
    return dataclasses.replace(measured, evaluation=evaluation,
                               irrelevant_by_type=tuple(irrelevant_by_type(*irrelevant, corpus)))


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
    if key == "corpus" and cfg.markdown is not None:
        folder = os.path.realpath(cfg.base_dir)
        return Source(folder, _globs_shown(root, folder, cfg.markdown.paths), "markdown", markdown=cfg.markdown,
                      root=root)
    try:
        real, display = resolve_input(root, cfg.base_dir, rel, f"{cfg.path_display}: `{key}`")
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=exc.file or cfg.path_display, line=exc.line)
        return None
    if fmt is None:
        problems.add(P.CONFIG, unknown_format(key.partition("[")[0]), file=cfg.path_display, id=display)
        return None
    fields = cfg.corpus_fields if key == "corpus" else cfg.gold_fields if key.startswith("gold") else None
    if fields is not None and key == "gold" and fmt not in MAPPABLE:
        problems.add(P.CONFIG, f"a field map reads JSONL, YAML, JSON or CSV questions, and `{display}` is read "
                     f"as {fmt}; remove `gold.fields` or set `formats.gold`", file=cfg.path_display)
        return None
    return Source(real, display, fmt, grade_map=tuple(sorted(cfg.grade_map.items())), order=cfg.run_order,
                  fields=fields, list_grade=cfg.list_grade)


def _globs_shown(root: str, folder: str, globs: tuple[str, ...]) -> str:
    """A Markdown corpus as messages name it: its globs, relative to the root."""
    rel = os.path.relpath(folder, os.path.realpath(root)).replace(os.sep, "/")
    return safe_text(", ".join(g if rel == "." else f"{rel}/{g}" for g in globs), 1024)


def _keep_shard(gold: Gold, run: Run | None, shard: tuple[int, int]) -> None:
    gold.queries = {q: v for q, v in gold.queries.items() if in_shard(q, shard)}
    if run is not None:
        run.only(q for q in run.queries if in_shard(q, shard))


def _evaluate(cfg: Config, gold: Gold | None, run: Run | None) -> Evaluated:
    """The measures (they need no corpus) and what the by-type table needs."""
    assert gold is not None and run is not None
    enter("evaluate")
    grades, rankings = gold.grades(), run.rankings()
    irrelevant = irrelevant_top(grades, rankings, cfg.k, cfg.min_grade)
    return evaluate(grades, rankings, cfg.measures(), cfg.options(), gold.unanswerable()), irrelevant


def _countable(cfg: Config, problems: P.Problems, gold: Gold, evaluation: Evaluation, options: Options) -> bool:
    """An evaluation with something to gate on (a shard may hold no counted
    question: the merge checks), and a warning when there is no threshold."""
    if evaluation.counted == 0 and not options.shard:
        problems.add(
            P.CONSISTENCY,
            f"no gold question has a relevant document (grade ≥ {cfg.min_grade}); there is nothing to "
            "measure — label at least one relevant document", file=gold.file,
        )
        return False
    if not cfg.thresholds:
        problems.add(
            P.TRUST, "no thresholds are set, so the gate cannot fail; add e.g. `thresholds: "
            f"{{{Measure('nDCG', cfg.k)}: 0.7}}`", file=cfg.path_display, severity=P.WARNING,
        )
    return True


def gate(cfg: Config, measured: Measured, problems: P.Problems, ledger: Ledger | None,
         comparison: Comparison | None = None, base: BaseResult | None = None,
         base_family: frozenset[Measure] | None = None) -> Gated:
    """The thresholds against the means; with a base compared, also against
    the head's means judged by the base's gold set, the max_drops against
    the paired means of each gold set, and the per-question rule
    (``base_family``: the significance gate's, see :mod:`gate.significance`).
    Nothing without an evaluation or after a stage over the resampling
    budget (a limit problem). Charges the ``ledger``; adds to ``problems``."""
    evaluation = measured.evaluation
    if evaluation is None or ledger is None or ledger.refused:
        return NOT_GATED
    slices = _slices(cfg, measured, base)
    sure = uncertainty(cfg, measured, problems, ledger, comparison, base_family)
    if comparison is None:
        thresholds = apply_thresholds(cfg.thresholds, evaluation.means)
        return Gated(tuple(thresholds), None, slices, sure.intervals, sure.debt, sure.significance)

    from rag_corpus_check.gate.compare import max_drop_failures  # only with a base compared

    base_means = {d.measure: d.head for d in comparison.base_gold.deltas} if comparison.base_gold else None
    thresholds = apply_thresholds(cfg.thresholds, evaluation.means, max_drop_failures(cfg.thresholds, comparison),
                                  base_means)
    per_question = (PerQuestionResult(cfg.per_question, {v.gold: v.over_limit for v in comparison.views})
                    if cfg.per_question is not None else None)
    return Gated(tuple(thresholds), per_question, slices, sure.intervals, sure.debt, sure.significance)


def head_alone(root: str, begun: Begun, rules: Rules, base: BaseResult | None = None) -> Outcome:
    """The head measured and gated on ``rules``, with nothing compared."""
    cfg = begun.config
    assert cfg is not None
    measured = measure(root, cfg, begun.problems, begun.options, begun.context)
    book = ledger(cfg, measured)
    return begun.decided(rules, measured, gate(cfg, measured, begun.problems, book), base=base, ledger=book)


def _slices(cfg: Config, measured: Measured, base: BaseResult | None) -> Slices:
    """Every slice measured (and compared, when the base was) and gated."""
    assert measured.evaluation is not None and measured.gold is not None
    tags = measured.gold.tags()
    if base is not None and base.slice_views is not None:
        views = base.slice_views
        return Slices(measure_slices(cfg, measured.evaluation, tags, list(views), views), list(base.slices_left_out))
    names, left_out = slice_names(cfg, tags)
    return Slices(measure_slices(cfg, measured.evaluation, tags, names, None), left_out)


def in_shard(query_id: str, shard: tuple[int, int]) -> bool:
    """Stable assignment of a question to one of ``n`` shards (by SHA-256 of
    its id, so it does not depend on file order or Python's hash seed)."""
    index, count = shard
    digest = hashlib.sha256(query_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


_LAST_STAGE: list[str | None] = [None]


def enter(stage: str | None) -> None:
    """Record the stage for the CLI's internal-error message."""
    _LAST_STAGE[0] = stage


def last_stage() -> str | None:
    return _LAST_STAGE[0]


def _display(root: str, real: str) -> str:
    return os.path.relpath(real, os.path.realpath(root))
