"""Which rules the gate enforces, and how a pull request changed them.

The rules are everything in the config that decides a verdict: the thresholds,
the conventions the numbers are computed under, how the ranking is produced
(committed run, built-in BM25 and its parameters, or a command), the
severities of the consistency checks, the input limits, and which file the
configured config path resolves to. With a base revision they come from the
base config. The head may tighten them (a raised threshold, a stricter
severity, a lower limit); anything that loosens them fails the gate unless the
same pull request sets a new ``rule_change_reason`` (head-override). A raised
limit is not applied at all without one: the base's limit holds.

``source`` is one of :data:`SOURCES`, an output of the check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from rag_corpus_check.config.load import LIMIT_NAMES, Config, PerQuestion, SliceRule, Threshold
from rag_corpus_check.metrics.measures import Measure

BASE = "base"
FIRST_INTRODUCTION = "head-first-introduction"
OVERRIDE = "head-override"
NO_BASE = "head-no-base"
SOURCES = (BASE, FIRST_INTRODUCTION, OVERRIDE, NO_BASE)

CONVENTIONS = ("k", "gain", "short_list", "min_grade", "max_grade", "grade_map", "list_grade", "run_order",
               "ignore_identical_ids", "judged_only")
VALIDATION = ("inactive_labels", "missing_queries", "extra_queries")
# How the gold set and the corpus are read (`gold.fields`, `corpus.fields`):
# locked to the base like the conventions, but each side reads its own files
# with its own (a renamed field is renamed in the files and the map together).
READING = ("gold_fields", "corpus_fields")


@dataclass(frozen=True)
class Rules:
    source: str  # one of SOURCES
    changes: tuple[str, ...] = ()  # every rule change, loosening or not
    loosened: tuple[str, ...] = ()  # changes that need a rule_change_reason
    override_reason: str | None = None
    why: str | None = None  # head-no-base: why no base rules apply; base: what of them could not be applied

    @property
    def violated(self) -> bool:
        return bool(self.loosened) and self.override_reason is None


def head_rules(source: str, why: str | None = None) -> Rules:
    """The head config's own rules (no base config to take them from)."""
    return Rules(source, why=why)


@dataclass(frozen=True)
class Layout:
    """Where the rules' files are: the checked directory (relative to the
    repository's top) and the files the config's paths name (relative to
    the checked directory), every symlink resolved."""

    checked: str
    config: str
    corpus: str | None
    gold: str | None
    run: str | None


def ranking(cfg: Config, run_file: str | None) -> dict:
    """How the ranking is produced, as comparable values (the command's
    timeout is a limit: the lower one holds, see :func:`enforce`)."""
    if cfg.run is not None:
        return {"source": "committed run", "run": run_file}
    return cfg.ranker.rules(cfg)


def _show(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _describe(r: dict) -> str:
    return f"committed run `{r['run']}`" if "run" in r else r["source"]


def _ranking_changes(base: dict, head: dict) -> list[str]:
    what = "how the ranking is produced changed"
    if base["source"] != head["source"] or base.get("run") != head.get("run"):
        return [f"{what}: {_describe(base)} → {_describe(head)}"]
    return [f"{what}: `retriever.{k}` {_show(base[k])} → {_show(head[k])}"
            for k in base if base[k] != head[k]]


def _layout_changes(base: Layout, head: Layout, configured: str, prefix: str) -> list[str]:
    """Every file of the rules that is another one now: the checked
    directory, the config, the corpus and the gold set (the run is the
    ranking's)."""
    out = []
    if base.checked != head.checked:
        out.append(f"the checked directory `{prefix}` now resolves to `{head.checked}` (at the base: `{base.checked}`)")
    if base.config != head.config:
        out.append(f"the config `{configured}` now resolves to `{head.config}` (at the base: `{base.config}`)")
    for key in ("corpus", "gold"):
        b, h = getattr(base, key), getattr(head, key)
        if b != h:
            out.append(f"`{key}` now names `{h}` (at the base: `{b}`)")
    return out


def _threshold_changes(base: Sequence[Threshold], head: Sequence[Threshold], changes: list[str], loosened: list[str],
                       where: str = "") -> None:
    """The changes of a list of thresholds (``where``: the slice's, as a prefix of each message)."""
    bth = {t.measure: t for t in base}
    hth = {t.measure: t for t in head}
    for m, bt in bth.items():
        ht = hth.get(m)
        if ht is None:
            _loose(f"{where}threshold `{m}` removed (was ≥ {bt.min:g})", changes, loosened)
        else:
            _threshold_change(bt, ht, changes, loosened, where)
    changes += [f"{where}threshold `{m}` added (≥ {ht.min:g})" for m, ht in hth.items() if m not in bth]


def _threshold_change(bt: Threshold, ht: Threshold, changes: list[str], loosened: list[str], where: str) -> None:
    m = bt.measure
    if ht.min < bt.min:
        _loose(f"{where}threshold `{m}` lowered: {bt.min:g} → {ht.min:g}", changes, loosened)
    elif ht.min > bt.min:
        changes.append(f"{where}threshold `{m}` raised: {bt.min:g} → {ht.min:g}")
    _drop_change(bt, ht, changes, loosened, where)


_NO_DROP = float("inf")  # no max_drop: any drop is allowed


def _drop_change(bt: Threshold, ht: Threshold, changes: list[str], loosened: list[str], where: str) -> None:
    b = _NO_DROP if bt.max_drop is None else bt.max_drop
    h = _NO_DROP if ht.max_drop is None else ht.max_drop
    if h > b:
        _loose(f"{where}`max_drop` of `{bt.measure}` loosened: {b:g} → {'none' if h == _NO_DROP else f'{h:g}'}",
               changes, loosened)
    elif h < b:
        changes.append(f"{where}`max_drop` of `{bt.measure}` tightened: {_show(bt.max_drop)} → {h:g}")


def _slice_changes(base: Config, head: Config, changes: list[str], loosened: list[str]) -> None:
    """`slices:` — a slice rule removed, a threshold of one lowered or
    removed, its max_drop raised, or its min_questions raised (fewer
    slices gated) loosen it."""
    for tag, b in base.slices.items():
        h = head.slices.get(tag)
        if h is None:
            _loose(f"slice `{tag}` removed from `slices`", changes, loosened)
            continue
        _threshold_changes(list(b.thresholds), list(h.thresholds), changes, loosened, f"slice `{tag}`: ")
        if h.min_questions > b.min_questions:
            _loose(f"slice `{tag}`: `min_questions` raised: {b.min_questions} → {h.min_questions}", changes, loosened)
        elif h.min_questions < b.min_questions:
            changes.append(f"slice `{tag}`: `min_questions` lowered: {b.min_questions} → {h.min_questions}")
    changes += [f"slice `{tag}` added to `slices`" for tag in head.slices if tag not in base.slices]


def _loose(message: str, changes: list[str], loosened: list[str]) -> None:
    changes.append(message)
    loosened.append(message)


def decide(base: Config, head: Config, layouts: tuple[Layout, Layout], configured: str, prefix: str) -> Rules:
    """The rules, with a base config: ``layouts`` are (base, head), the
    config path as configured and the checked directory as given."""
    changes: list[str] = []
    loosened: list[str] = []
    base_layout, head_layout = layouts
    for message in _layout_changes(base_layout, head_layout, configured, prefix):
        _loose(message, changes, loosened)
    for message in _convention_changes(base, head) + corpus_changes(base, head) + _reading_changes(base, head):
        _loose(message, changes, loosened)
    for message in _ranking_changes(ranking(base, base_layout.run), ranking(head, head_layout.run)):
        _loose(message, changes, loosened)
    _threshold_changes(base.thresholds, head.thresholds, changes, loosened)
    _slice_changes(base, head, changes, loosened)
    _per_question_changes(base, head, changes, loosened)
    from rag_corpus_check.gate.significance import alpha_changes  # only with a base config

    for found, into in zip(alpha_changes(base.significance, head.significance), (changes, loosened), strict=True):
        into += found
    _validation_changes(base, head, changes, loosened)
    changes += _limit_changes(base, head)
    reason = head.rule_change_reason
    if reason and reason != base.rule_change_reason:
        return Rules(OVERRIDE, tuple(changes), tuple(loosened), reason)
    return Rules(BASE, tuple(changes), tuple(loosened))


def _per_question_changes(base: Config, head: Config, changes: list[str], loosened: list[str]) -> None:
    """`per_question:` — another measure, a larger drop or more questions allowed loosen it."""
    b, h = base.per_question, head.per_question
    assert b is not None and h is not None
    if b.measure != h.measure:
        _loose(f"`per_question.measure` changed: {b.measure} → {h.measure}", changes, loosened)
    for name, was, now in (("max_drop", b.max_drop, h.max_drop), ("max_questions", b.max_questions, h.max_questions)):
        if now > was:
            _loose(f"`per_question.{name}` raised: {was:g} → {now:g}", changes, loosened)
        elif now < was:
            changes.append(f"`per_question.{name}` lowered: {was:g} → {now:g}")


def level_change(base_level: str | None, head_level: str | None) -> str | None:
    """The evaluation level of a chunked corpus (per document or per chunk,
    see :mod:`chunks`) is a convention: numbers at two levels are not
    comparable, and a PR that switches it (say, by adding chunks to
    labelled documents) changes how the gate measures. Decided from the
    inputs, so it is found after both trees are read."""
    if base_level == head_level:
        return None
    return (f"the evaluation level changed: {base_level or 'no chunks'} → {head_level or 'no chunks'} "
            "(a chunked corpus is evaluated per document when the gold set labels doc_id values)")


def with_loosened(rules: Rules, message: str) -> Rules:
    """``rules`` with a loosening found after they were decided (see :func:`level_change`)."""
    return replace(rules, changes=(*rules.changes, message), loosened=(*rules.loosened, message))


def _convention_changes(base: Config, head: Config) -> list[str]:
    """Numbers under other conventions are not comparable: any change loosens."""
    return [f"convention `{name}` changed: {getattr(base, name)} → {getattr(head, name)}"
            for name in CONVENTIONS if getattr(base, name) != getattr(head, name)]


def _reading_changes(base: Config, head: Config) -> list[str]:
    """A field map changed: the head's files are read another way (the base's map reads them)."""
    return [f"`{name.replace('_fields', '.fields')}` changed: {_fields(getattr(base, name))} → "
            f"{_fields(getattr(head, name))}" for name in READING if getattr(base, name) != getattr(head, name)]


def _fields(fields) -> str:
    return "none" if fields is None else str(fields)


def corpus_changes(base: Config, head: Config) -> list[str]:
    """How the corpus is read (`corpus.format`; for Markdown pages `paths`,
    `exclude` and `chunk`): other pages or other records are another corpus."""
    if base.corpus_format != head.corpus_format:
        return [f"`corpus.format` changed: {base.corpus_format} → {head.corpus_format}"]
    b, h = base.markdown, head.markdown
    if b is None or h is None:
        return []
    return [f"`corpus.{name}` changed: {_show(list(getattr(b, name)) if name != 'chunk' else b.chunk)} → "
            f"{_show(list(getattr(h, name)) if name != 'chunk' else h.chunk)}"
            for name in ("paths", "exclude", "chunk") if getattr(b, name) != getattr(h, name)]


def _validation_changes(base: Config, head: Config, changes: list[str], loosened: list[str]) -> None:
    for name in VALIDATION:
        b, h = getattr(base, name), getattr(head, name)
        if b == "error" and h == "warning":
            _loose(f"`validation.{name}` error → warning", changes, loosened)
        elif b != h:
            changes.append(f"`validation.{name}` {b} → {h}")


def _limit_changes(base: Config, head: Config) -> list[str]:
    out = []
    for name in LIMIT_NAMES:
        b, h = base.limit(name), head.limit(name)
        if h > b:
            out.append(f"`limits.{name}` raised: {b} → {h} (not applied without a new `rule_change_reason`: the "
                       "base's limit holds)")
        elif h < b:
            out.append(f"`limits.{name}` lowered: {b} → {h}")
    return out + _timeout_changes(base, head)


def _timeout_changes(base: Config, head: Config) -> list[str]:
    """The command's timeout is a limit like the others: the lower one holds."""
    b, h = base.command_timeout, head.command_timeout
    if h > b:
        return [f"`retriever.timeout` raised: {b:g} → {h:g} s (not applied without a new `rule_change_reason`: "
                "the base's timeout holds)"]
    if h < b:
        return [f"`retriever.timeout` lowered: {b:g} → {h:g} s"]
    return []


def enforce(rules: Rules, base: Config, head: Config) -> Config:
    """The config that measures and gates under ``rules``: with the base's
    rules, ``head`` with the base's conventions, thresholds (tightened by the
    head's), severities (the stricter) and limits (the lower). Head rules:
    ``head`` itself. Neither config is changed."""
    if rules.source != BASE:
        return head
    from rag_corpus_check.gate.significance import stricter_alpha

    severities: dict[str, Any] = {name: "error" for name in VALIDATION
                                  if "error" in (getattr(base, name), getattr(head, name))}
    enforced = replace(head, **_conventions(base), **severities, **{name: getattr(base, name) for name in READING},
                       thresholds=merge_thresholds(base.thresholds, head.thresholds),
                       per_question=_stricter(base.per_question, head.per_question),
                       significance=stricter_alpha(base.significance, head.significance),
                       slices=merge_slices(base.slices, head.slices),
                       command_timeout=min(base.command_timeout, head.command_timeout))
    return enforced.with_limits({n: min(base.limit(n), head.limit(n)) for n in LIMIT_NAMES})


def significance_family(rules: Rules, base: Config) -> frozenset[Measure] | None:
    """The family the significance gate Holm-corrects the base's measures
    over: under the base's rules, the measures of the base config's own
    thresholds (those the head adds are tested as a family of their own,
    never widening it); None under the head's rules (one family)."""
    return frozenset(t.measure for t in base.thresholds) if rules.source == BASE else None


def _stricter(base: PerQuestion | None, head: PerQuestion | None) -> PerQuestion | None:
    """The base's per-question rule, tightened by the head's (on the base's measure)."""
    if base is None or head is None:
        return base or head
    return PerQuestion(base.measure, min(base.max_drop, head.max_drop), min(base.max_questions, head.max_questions))


def same_conventions(source: Config, target: Config) -> Config:
    """``target`` with the conventions of ``source``: base and head are
    measured alike, or their numbers could not be compared."""
    return replace(target, **_conventions(source))


def _conventions(cfg: Config) -> dict[str, Any]:
    return {name: getattr(cfg, name) for name in CONVENTIONS}


def merge_thresholds(base: Sequence[Threshold], head: Sequence[Threshold]) -> tuple[Threshold, ...]:
    """The base's thresholds, each tightened by the head's, plus the head's new ones."""
    merged = {str(t.measure): t for t in base}
    for ht in head:
        bt = merged.get(str(ht.measure))
        if bt is None:
            merged[str(ht.measure)] = ht
            continue
        drops = [d for d in (bt.max_drop, ht.max_drop) if d is not None]
        merged[str(ht.measure)] = Threshold(bt.measure, max(bt.min, ht.min), min(drops) if drops else None)
    return tuple(merged.values())


def merge_slices(base: dict[str, SliceRule], head: dict[str, SliceRule]) -> dict[str, SliceRule]:
    """The base's slice rules, each tightened by the head's (thresholds as
    :func:`merge_thresholds`, the lower min_questions), then the head's new
    ones. A rule only the base has keeps no line of the head's config."""
    merged = {tag: _tightened(b, head.get(tag)) for tag, b in base.items()}
    return merged | {tag: h for tag, h in head.items() if tag not in base}


def _tightened(b: SliceRule, h: SliceRule | None) -> SliceRule:
    if h is None:
        return SliceRule(b.thresholds, b.min_questions, None)
    return SliceRule(merge_thresholds(b.thresholds, h.thresholds),
                     min(b.min_questions, h.min_questions), h.line)
