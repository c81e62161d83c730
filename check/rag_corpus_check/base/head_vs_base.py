"""The check with a base revision: the base's rules (or a stated reason to
change them), both trees measured the same way, and what changed between
them. Fails closed: a base that cannot be had, a base config that cannot
be read, or a base that cannot be measured (its inputs missing, unreadable or
invalid at the base commit, or ranked by a command) is an input error unless
the caller opted out (--no-require-base)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag_corpus_check.base.tree import BaseTree, open_base
from rag_corpus_check.config.load import Config, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import counted, safe_text
from rag_corpus_check.gate import rules as R
from rag_corpus_check.gate.compare import Comparison, Rule, Side, compare
from rag_corpus_check.gate.label_debt import Sides
from rag_corpus_check.gate.slices import compare_slices, slice_names
from rag_corpus_check.inputs import Run, read_corpus, read_gold_set
from rag_corpus_check.inputs.cross_file import AtBase
from rag_corpus_check.metrics.evaluate import evaluate
from rag_corpus_check.metrics.measures import Measure
from rag_corpus_check.metrics.measures import Options as MeasureOptions
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.pipeline.outcome import NOT_MEASURED, BaseResult, Measured, Outcome
from rag_corpus_check.pipeline.stages import (
    Begun,
    Options,
    corpus_source,
    enter,
    gate,
    gold_sources,
    head_alone,
    input_sources,
    measure,
)
from rag_corpus_check.pipeline.uncertainty import (
    bound_views,
    charge_comparison,
    charge_head,
    ledger,
)
from rag_corpus_check.retrieval.dense import MAX_SEGMENTS, SEGMENTS, STORE_FILE, folder_files
from rag_corpus_check.retrieval.protocol import BaseQuestions
from rag_corpus_check.safe_io import CONFIG_MAX_BYTES, InputError
from rag_corpus_check.safe_io.pages import Globs

if TYPE_CHECKING:
    from rag_corpus_check.gate.budget import Ledger
    from rag_corpus_check.retrieval.dense import VectorTrust
    from rag_corpus_check.retrieval.dense.supply import Supply


@dataclass(frozen=True)
class Compared:
    """The head measured and what the comparison with the base made of the
    check's values: the rules (a level change loosens them; a base that
    cannot be measured says why), the base's result, the head's vectors
    checked against the base's."""

    rules: R.Rules
    base: BaseResult
    head: Measured
    comparison: Comparison | None = None
    vector_trust: VectorTrust | None = None


def check_with_base(root: str, config_path: str, begun: Begun) -> Outcome:
    assert begun.options.base is not None
    enter("base")
    base = BaseResult(begun.options.base)
    try:
        tree = open_base(begun.context.checkout, begun.options.base, fetch=begun.options.fetch_base)
    except InputError as exc:
        return _without_base(root, begun, base, exc)
    base = dataclasses.replace(base, sha=tree.sha)
    try:
        return _with_tree(root, configured(root, config_path), begun, base, tree)
    finally:
        tree.cleanup()


def _with_tree(root: str, config_rel: str, begun: Begun, base: BaseResult, tree: BaseTree) -> Outcome:
    head_cfg = begun.config
    assert head_cfg is not None
    try:
        base_cfg, base_file = load_base_config(tree, config_rel)
    except InputError as exc:
        return _without_base(root, begun, base, exc)
    if base_cfg is None or base_file is None:
        note = (f"`{config_rel}` does not exist at the base commit (first introduction): the head's thresholds and "
                "conventions apply, and there is nothing to compare")
        return head_alone(root, begun, R.head_rules(R.FIRST_INTRODUCTION), base.noted(note))
    layouts = (base_layout(tree, base_cfg, base_file), head_layout(root, head_cfg, config_rel, tree.checkout.resolved))
    prefix = tree.checkout.prefix.rstrip("/") or "."
    rules = R.decide(base_cfg, head_cfg, layouts, config_rel, prefix)
    cfg = R.enforce(rules, base_cfg, head_cfg)  # the rules that gate: reported as they apply
    base_cfg = R.same_conventions(cfg, base_cfg)
    return _exported(root, begun, cfg, base_cfg, tree, Compared(rules, base, NOT_MEASURED))


def _exported(root: str, begun: Begun, cfg: Config, base_cfg: Config, tree: BaseTree, start: Compared) -> Outcome:
    """Every input of the base copied out of git, then both trees measured;
    a base that cannot be measured stops the check (:func:`_unmeasured`)."""
    try:
        _export_base(tree, base_cfg)
    except InputError as exc:
        unmeasured = _unmeasured(begun, exc, tree.sha, start)
        if unmeasured is None:
            return begun.decided(start.rules, config=cfg, base=start.base)
        return _measured_and_compared(root, begun, cfg, base_cfg, tree, unmeasured, exported=False)
    return _measured_and_compared(root, begun, cfg, base_cfg, tree, start, exported=True)


def _measured_and_compared(root: str, begun: Begun, cfg: Config, base_cfg: Config, tree: BaseTree, start: Compared,
                           exported: bool) -> Outcome:
    """The head measured (and the base's questions ranked on it), the base
    measured by the same function and compared, then both gated."""
    also_rank = base_questions(tree.root, base_cfg, cfg) if exported else None
    supplies = _supplies(tree.root, base_cfg, cfg) if exported else (None, None)
    moved, moves_note = _moved_pages(root, tree, base_cfg, cfg) if exported else ({}, None)
    at_base = base_corpus_ids(tree.root, base_cfg) if exported else None
    head = measure(root, cfg, begun.problems, begun.options, begun.context, also_rank, moved, at_base, compared=True,
                   supply=supplies[0])
    base = start.base.noted(moves_note) if moves_note else start.base
    base = base.noted(head.base_note) if head.base_note else base
    compared = dataclasses.replace(start, base=base, head=head)
    book = ledger(cfg, head)
    # the head's means charged before the base is measured: over the budget, the base is not
    if exported and book is not None and head.evaluation is not None and charge_head(cfg, begun.problems, book,
                                                                                     head.evaluation):
        compared = _compare(cfg, base_cfg, tree, begun, compared, book, moved, supplies[1])
    family = R.significance_family(compared.rules, base_cfg)
    gated = gate(cfg, compared.head, begun.problems, book, compared.comparison, compared.base, family)
    return begun.decided(compared.rules, compared.head, gated, config=cfg, base=compared.base, ledger=book,
                         vector_trust=compared.vector_trust)


def _supplies(root: str, base_cfg: Config, cfg: Config) -> tuple[Supply | None, Supply | None]:
    """Dense and hybrid: where the head's and the base's vectors come from
    (for a store: the base's store trusted, the base's endpoint — never the
    head's — with one client for both sides, so a text is embedded once)."""
    if not cfg.uses_vectors:
        return None, None
    from rag_corpus_check.pipeline.base_gold import base_supply, client_for
    from rag_corpus_check.retrieval.dense.supply import Supply

    client = client_for(base_cfg) if base_cfg.uses_vectors else None
    return base_supply(root, base_cfg, cfg, client), Supply(with_base=False, client=client)


OPT_OUT = "pass --no-require-base (action input `require-base: 'false'`)"


def _without_base(root: str, begun: Begun, base: BaseResult, exc: InputError) -> Outcome:
    """The base (or its config) cannot be had: an input error, unless the
    caller opted out, when the head's own rules apply and a warning says so."""
    if begun.options.require_base:
        begun.problems.add(exc.kind, exc.message + f"; to run on the head's own rules instead, {OPT_OUT}",
                           file=exc.file)
        return begun.decided(base=base)
    begun.problems.add(P.TRUST, exc.message + " — the head's own rules apply (rules-source head-no-base), "
                       "and nothing was compared", file=exc.file, severity=P.WARNING)
    return head_alone(root, begun, R.head_rules(R.NO_BASE, "the base could not be used (--no-require-base)"), base)


def head_layout(root: str, cfg: Config, config_rel: str, checked: str) -> R.Layout:
    """Where the head's rule files are, every symlink of the working tree resolved."""
    real_root = os.path.realpath(root)

    def where(path: str) -> str:
        return os.path.relpath(os.path.realpath(path), real_root).replace(os.sep, "/")

    def named(rel: str | None) -> str | None:
        return None if rel is None else where(os.path.join(cfg.base_dir, rel))

    return R.Layout(checked.rstrip("/") or ".", where(os.path.join(os.path.abspath(root), config_rel)),
                    named(cfg.corpus) if cfg.markdown is None else None, named(cfg.gold), named(cfg.run))


def base_layout(tree: BaseTree, base_cfg: Config, base_file: str) -> R.Layout:
    """Where the base's rule files are, every symlink of the base tree resolved."""

    def named(rel: str | None) -> str | None:
        if rel is None:
            return None
        path = os.path.relpath(os.path.normpath(os.path.join(base_cfg.base_dir, rel)), tree.root).replace(os.sep, "/")
        try:
            return tree.resolve(path) or path
        except InputError:
            return path  # it fails when the base is measured, and says why

    checked = tree.checked if tree.checked is not None else tree.checkout.prefix
    return R.Layout(checked.rstrip("/") or ".", base_file, named(base_cfg.corpus) if base_cfg.markdown is None
                    else None, named(base_cfg.gold), named(base_cfg.run))


def configured(root: str, config_path: str) -> str:
    """The config path as the caller gave it, relative to the root, with no
    symlink resolved: where the base's config is looked up."""
    return os.path.relpath(os.path.abspath(config_path), os.path.abspath(root)).replace(os.sep, "/")


def load_base_config(tree: BaseTree, config_rel: str) -> tuple[Config | None, str | None]:
    """The base's config at the configured path (a symlink resolved in the
    base tree) and the file it resolved to; (None, None) when there is none.
    :class:`InputError` when it exists but cannot be read or is invalid."""
    resolved = tree.export(config_rel, CONFIG_MAX_BYTES)
    if resolved is None:
        return None, None
    problems = P.Problems()
    base_dir = os.path.join(tree.root, *os.path.dirname(resolved).split("/"))
    base_cfg, _ = load_config(tree.root, os.path.join(tree.root, config_rel), problems, base_dir=base_dir)
    if base_cfg is None:
        first = problems.items[0] if problems.items else None
        why = f" (first: {first.location()}: {first.message})" if first else ""
        raise InputError("base", f"the base config cannot be used: `{config_rel}` at the base commit has "
                                 f"{counted(problems.error_count(), 'problem')}{why}", file=config_rel)
    return base_cfg, resolved


def _unmeasured(begun: Begun, exc: InputError, sha: str, compared: Compared) -> Compared | None:
    """The base's config was read but the base cannot be measured (``exc``
    says why): an input error, since `max_drop`, the per-question rule and
    the paired test need the base's numbers (None: that input error) —
    unless the caller opted out, when the base's rules apply without a
    comparison and a warning, the rules (their why) and a note of the
    base's say so."""
    where = f"at the base commit `{sha[:12]}`" + ("," if exc.message.startswith("at the base commit ") else "")
    why = exc.message.replace("at the base commit", where, 1)
    if begun.options.require_base:
        begun.problems.add(P.BASE, f"{why}, so the base cannot be measured and nothing can be compared (`max_drop`, "
                           f"the per-question rule, the paired test); {_remedy(exc)}; to apply the base's "
                           f"rules without a comparison, {OPT_OUT}", file=exc.file, line=exc.line)
        return None
    begun.problems.add(P.TRUST, f"{why}, so the base cannot be measured — the base's rules apply, but nothing was "
                       "compared (`max_drop`, the per-question rule and the paired test were not applied; "
                       "--no-require-base)", file=exc.file, line=exc.line, severity=P.WARNING)
    rules = dataclasses.replace(compared.rules, why="the base could not be measured, so nothing was compared "
                                "(--no-require-base)")
    return dataclasses.replace(compared, rules=rules, base=compared.base.noted(f"nothing was compared: {why}"))


def _remedy(exc: InputError) -> str:
    """What to do about a base that cannot be measured."""
    if exc.kind == "missing":
        return ("if the file is generated in CI (ignored by git), the check reads the base from git and cannot "
                "see it: commit it, or point the config at a committed file")
    if exc.kind == "command":
        return "commit the run the command makes and name it with `run:` in the config"
    if exc.kind == "invalid":
        return "fix them in the base branch first"
    return "fix it in the base branch first, or point the config at a file the base holds"


def _export_base(tree: BaseTree, base_cfg: Config) -> None:
    """Every input of the base copied out of git; :class:`InputError` when
    the base cannot be measured (a retriever command, an input missing or
    unreadable at the base commit)."""
    if base_cfg.run is None and base_cfg.ranker.runs_command:
        raise InputError("command", "the base's config ranks with a retriever command, which the check does not "
                                    "run at the base commit (it would run the base's code)")
    if base_cfg.markdown is not None:
        _export_pages(tree, base_cfg)
    store = _export_store(tree, base_cfg)
    for rel in base_cfg.input_files:
        if store and rel in folder_files(str(base_cfg.vectors)):
            continue
        path = os.path.relpath(os.path.normpath(os.path.join(base_cfg.base_dir, rel)), tree.root)
        shown = path.replace(os.sep, "/")
        if tree.export(path, base_cfg.limits.max_file_bytes) is None:
            raise InputError("missing", f"`{safe_text(shown, 200)}` does not exist at the base commit", file=shown)


def _export_store(tree: BaseTree, base_cfg: Config) -> bool:
    """A store at the base (``store.json`` and every segment) copied out of
    git; False when the base's vectors folder is no store."""
    if not base_cfg.uses_vectors or base_cfg.vectors is None:
        return False
    folder = os.path.relpath(os.path.normpath(os.path.join(base_cfg.base_dir, base_cfg.vectors)), tree.root)
    folder = folder.replace(os.sep, "/")
    if tree.export(f"{folder}/{STORE_FILE}", CONFIG_MAX_BYTES) is None:
        return False
    # the segments within max_file_bytes together, as when the store is read
    tree.export_files_in(f"{folder}/{SEGMENTS}", 2 * MAX_SEGMENTS, base_cfg.limits.max_file_bytes)
    return True


def _export_pages(tree: BaseTree, base_cfg: Config) -> None:
    """The base's Markdown pages copied out of git, as the base config names them."""
    spec = base_cfg.markdown
    assert spec is not None
    folder = os.path.relpath(base_cfg.base_dir, tree.root).replace(os.sep, "/")
    tree.export_pages(folder, Globs(spec.paths, spec.exclude), base_cfg.limits, spec.shown)


def base_questions(root: str, base_cfg: Config, cfg: Config) -> BaseQuestions | None:
    """The base's questions for the head's built-in retriever to rank too:
    their texts, and for dense and hybrid the base's vectors (trusted: the
    base revision's). None for a committed run or a command (ranked by id),
    or when the base's gold set cannot be read."""
    if cfg.run is not None or not cfg.ranker.ranks_base:
        return None
    texts = base_texts(root, base_cfg)
    if texts is None:
        return None
    if not cfg.uses_vectors:
        return BaseQuestions(texts)
    from rag_corpus_check.pipeline.base_gold import base_vectors  # numpy

    return BaseQuestions(texts, *base_vectors(root, base_cfg, cfg))


def base_corpus_ids(root: str, base_cfg: Config) -> AtBase:
    """Of some document ids, those the base's corpus holds (documents, and
    the documents its chunks belong to). The base's corpus is read for its
    ids the first time this is asked, which is only when the head's gold set
    labels ids its own corpus lacks; a base corpus that cannot be read holds
    none (measuring the base says why)."""
    held: list[set[str]] = []

    def at_base(ids: set[str]) -> set[str]:
        if not held:
            held.append(_corpus_ids(root, base_cfg))
        return ids & held[0]

    return at_base


def _corpus_ids(root: str, base_cfg: Config) -> set[str]:
    problems = P.Problems()
    source = corpus_source(root, base_cfg, problems)
    if source is None:
        return set()
    try:
        corpus = read_corpus(source, base_cfg.limits, problems)
    except InputError:
        return set()
    return corpus.ids() | set(corpus.parents.values())


def base_texts(root: str, base_cfg: Config) -> dict[str, str] | None:
    """The base's questions with their texts (id → text), for the head's
    retriever to rank too; None when the base's gold set cannot be read
    (measuring the base says why)."""
    problems = P.Problems()
    sources = input_sources(root, base_cfg, problems)
    if sources is None:
        return None
    gold = read_gold_set(gold_sources(sources), sources.get("queries"), base_cfg.limits, problems)
    return None if gold is None else {q: g.text for q, g in gold.queries.items() if g.text and g.text.strip()}


def _compare(cfg: Config, base_cfg: Config, tree: BaseTree, begun: Begun, compared: Compared,
             book: Ledger, moved: dict[str, str], supply: Supply | None = None) -> Compared:
    """The base measured as the head was (:func:`stages.measure`, its
    problems its own) and compared; nothing compared when the base's inputs
    are invalid (an input error, or with --no-require-base a warning:
    :func:`_unmeasured`) or the comparison is over the resampling budget."""
    base_problems = P.Problems()
    base_measured = measure(tree.root, base_cfg, base_problems, Options(), Context(), compared=True, supply=supply)
    for failure in base_problems.errors:
        if failure.kind == P.EMBEDDING:  # the endpoint failed while measuring the base: the check cannot finish
            begun.problems.add(failure.kind, failure.message + " (measuring the base)", file=failure.file)
    if base_measured.evaluation is None:
        return _unmeasured(begun, _invalid(base_problems), tree.sha, compared) or compared
    enter("compare")
    head = compared.head
    measures, options = cfg.measures(), cfg.options()
    base_side, head_side = _on_new_paths(_side(base_measured, measures, options), moved), _side(head, measures, options)
    level = R.level_change(base_measured.level, head.level)
    rules = compared.rules if level is None else R.with_loosened(compared.rules, level)
    on_base = _on_base_rankings(base_side, head_side, head.base_gold_rankings)
    assert head.gold is not None and base_measured.gold is not None
    on_base_gold = evaluate(base_side.gold, on_base, measures, options, base_measured.gold.unanswerable())
    tags = (base_measured.gold.tags(), head.gold.tags())
    names, left_out = slice_names(cfg, *tags)
    if not charge_comparison(cfg, begun.problems, book, (base_side, head_side), on_base_gold, tags, names):
        return dataclasses.replace(compared, rules=rules)  # over the resampling budget: a limit problem says so
    comparison = compare(base_side, head_side, _rule(cfg), compared.base.rev, tree.sha, on_base_gold)
    bound_views(cfg, comparison, Sides(base_side.gold, base_side.run, head_side.gold, head_side.run), on_base)
    views = compare_slices(base_side.evaluation, head_side.evaluation, on_base_gold, tags, names)
    base = dataclasses.replace(compared.base, comparison=comparison, rankings=base_side.run, slice_views=views,
                               slices_left_out=tuple(left_out))
    _change_warnings(cfg, begun.problems, head, base)
    head, trust = _vector_trust(cfg, base_cfg, begun.problems, head, base_measured)
    return Compared(rules, base, head, comparison, trust)


def _moved_pages(root: str, tree: BaseTree, base_cfg: Config, cfg: Config) -> tuple[dict[str, str], str | None]:
    """Markdown pages the PR moved with their content unchanged (old id →
    new id): the same documents; and the note that lists them."""
    if base_cfg.markdown is None or cfg.markdown is None:
        return {}, None
    from rag_corpus_check.inputs.markdown_corpus import moves, page_digests

    moved = moves(page_digests(tree.root, base_cfg.base_dir, base_cfg.markdown, base_cfg.limits),
                  page_digests(root, cfg.base_dir, cfg.markdown, cfg.limits))
    if not moved:
        return moved, None
    shown = "; ".join(f"`{safe_text(old, 120)}` → `{safe_text(new, 120)}`" for old, new in sorted(moved.items())[:20])
    more = f" and {len(moved) - 20} more" if len(moved) > 20 else ""
    return moved, (f"{counted(len(moved), 'page')} moved with the content unchanged, the same documents (the base's "
                   f"labels follow them): {shown}{more}")


def _on_new_paths(side: Side, moved: dict[str, str]) -> Side:
    """The base's side with the ids of moved pages (and their sections) on their new paths."""
    if not moved:
        return side
    from rag_corpus_check.inputs.markdown_corpus import moved_id

    def ids(ranking: list[str]) -> list[str]:
        return [moved_id(d, moved) for d in ranking]

    return dataclasses.replace(
        side, gold={q: {moved_id(d, moved): g for d, g in grades.items()} for q, grades in side.gold.items()},
        run={q: ids(r) for q, r in side.run.items()}, ids={moved_id(d, moved) for d in side.ids},
        parents={moved_id(c, moved): moved_id(d, moved) for c, d in side.parents.items()},
        digests={moved_id(d, moved): digest for d, digest in side.digests.items()})


def _invalid(problems: P.Problems) -> InputError:
    """The base's own problems, as one error about the base."""
    first = problems.errors[0] if problems.errors else None
    where = f" (first: {first.location()}: {first.message})" if first else ""
    return InputError("invalid", f"the base's inputs are invalid at the base commit: "
                                 f"{counted(problems.error_count(), 'problem')}{where}", file=first.file if first else None,
                      line=first.line if first else None)


def _vector_trust(cfg: Config, base_cfg: Config, problems: P.Problems, head: Measured, base: Measured
                  ) -> tuple[Measured, VectorTrust | None]:
    """Dense and hybrid: the head's vectors against the base's of the same
    model (none: every row is supplied, and a `trust` warning says so); the
    head with the check in its retrieval's info."""
    if head.vectors is None:
        return head, None
    from rag_corpus_check.retrieval.dense import VectorTrust
    from rag_corpus_check.retrieval.dense.base_identity import vector_trust
    from rag_corpus_check.retrieval.dense.folder import Vectors

    assert isinstance(head.vectors, Vectors)
    if head.vectors.from_store:  # a store: the base's vectors are used for the base's texts, whatever the PR's say
        trust = VectorTrust(supplied=head.vectors.supplied, differ={"documents": [], "questions": []},
                            base_model=base_cfg.model if base_cfg.model == cfg.model else None)
        return _with_trust(head, trust), trust
    same = base.vectors is not None and base_cfg.model == cfg.model
    trust = vector_trust(head.vectors, base.vectors if same else None)  # type: ignore[arg-type]
    if not same:
        problems.add(P.TRUST, "the base has no vectors of the model `" + safe_text(cfg.model, 100) + "`: every "
                     "vector of this PR is taken on trust — review the vectors folder like code (its vectors "
                     "decide the ranking)", file=head.vectors.documents.index, severity=P.WARNING)
    return _with_trust(head, trust), trust


def _with_trust(head: Measured, trust: VectorTrust) -> Measured:
    """The head with the vectors' check in its retrieval's info."""
    if head.retrieval is None:
        return head
    retrieval = dataclasses.replace(head.retrieval, info={**head.retrieval.info, "vectors_check": trust.to_json()})
    return dataclasses.replace(head, retrieval=retrieval)


def _rule(cfg: Config) -> Rule:
    assert cfg.per_question is not None
    return Rule(Measure("nDCG", cfg.k), cfg.per_question.measure, cfg.per_question.max_drop, cfg.min_grade,
                cfg.options())


def _on_base_rankings(base: Side, head: Side, by_text: Mapping[str, list[str]] | None) -> dict[str, list[str]]:
    """The head's rankings of the base's questions, to be judged by the base's
    labels: as the base wrote them with the built-in retriever (BM25 ranks
    the base's text, dense the base's vector of it; a question reworded or
    removed in the head is ranked as the base wrote it), else by id (a
    question the head's run lacks has an empty ranking)."""
    by_text = by_text or {}
    return {q: by_text[q] if q in by_text else head.run.get(q, []) for q in base.gold}


def _side(measured: Measured, measures: list[Measure], options: MeasureOptions) -> Side:
    """One revision as the comparison reads it, evaluated with the head's
    measures (a measure only the head's config names is compared too)."""
    gold, run, corpus = measured.gold, measured.run, measured.corpus_read
    assert measured.evaluation is not None and gold is not None and run is not None and corpus is not None
    grades, rankings = gold.grades(), run.rankings()
    return Side(evaluate(grades, rankings, measures, options, gold.unanswerable()), grades, rankings,
                corpus.fingerprint, corpus.ids(), {qid: q.text for qid, q in gold.queries.items()}, corpus.parents,
                dict(measured.labelled))


def _change_warnings(cfg: Config, problems: P.Problems, head: Measured, base: BaseResult) -> None:
    assert base.comparison is not None and head.gold is not None
    comparison = base.comparison
    for kind, (warning, file) in ((P.CONSISTENCY, _relabelled(comparison)), (P.TRUST, _run_rewritten(cfg, head, base)),
                                  (P.CONSISTENCY, _unjudged(cfg, comparison))):
        if warning:
            problems.add(kind, warning, file=file or head.gold.file, severity=P.WARNING)


def _relabelled(comparison: Comparison) -> tuple[str | None, str | None]:
    questions = comparison.relabelled_and_reranked
    if not questions:
        return None, None
    return (f"this PR changes the gold labels and the ranking of the same {len(questions)} questions (the first: "
            f"`{safe_text(questions[0], 60)}`); review the expected answers separately from the system change "
            "(see the attribution)"), None


def _run_rewritten(cfg: Config, head: Measured, base: BaseResult) -> tuple[str | None, str | None]:
    if cfg.run is None or head.run is None or not _rankings_changed(base.rankings or {}, head.run):
        return None, None
    return ("the committed run's rankings changed in this PR: with `run:` the gate measures the rankings the "
            "pull request supplies, not rankings made from the corpus here, and cannot tell a better retriever's "
            "run from a made-up one — review this file like code, or leave `run:` out so the built-in retriever "
            "ranks the corpus"), head.run.file


def _unjudged(cfg: Config, comparison: Comparison) -> tuple[str | None, str | None]:
    unjudged = comparison.unjudged_new_docs
    if not unjudged:
        return None, None
    n = sum(len(e["doc_ids"]) for e in unjudged)
    return (f"{n} new corpus documents enter the top-{cfg.k} without a gold judgement ({len(unjudged)} "
            "questions); the labels are going stale — judge them (a Judged@k threshold can enforce it)"), None


def _rankings_changed(base: dict[str, list[str]], head: Run) -> bool:
    """Any question ranked differently (or only on one side)."""
    return base.keys() != head.queries.keys() or any(base[q] != r.ranking for q, r in head.queries.items())
