"""Slices: the gold questions that carry one tag (gold ``tags:``), measured,
compared with the base and gated on their own (``slices:`` in the config).

A mean over every question hides the segment that broke; a slice's means,
its base → head deltas (with the paired test of the whole set,
:mod:`compare`) and its thresholds show it. A slice is gated only when it
has at least ``min_questions`` questions (in the means, or paired in a gold
set compared): fewer are shown, and said to be too few.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Config, SliceRule
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import counted, natural_key, safe_text
from rag_corpus_check.gate.budget import undefined, units
from rag_corpus_check.gate.terms import BASE_GOLD, HEAD_GOLD, MIN_PERMUTATIONS, TOLERANCE
from rag_corpus_check.gate.thresholds import ThresholdResult, apply_thresholds
from rag_corpus_check.metrics.evaluate import OK, Evaluation, QueryResult, means

if TYPE_CHECKING:  # the comparison is imported where a base was compared
    from rag_corpus_check.gate.compare import Delta, View

# Slices reported: every one the config names (each is measured, and gated
# when it has thresholds; the schema allows 100 a config, so 200 with the
# base's rules), then at most MAX_SLICES others, the largest. The cap is for
# display only: it never drops a slice that has rules. Each compared slice
# costs a paired test per measure and gold set (~10 ms each).
MAX_SLICES = 50

Tags = dict[str, tuple[str, ...]]  # question id -> its tags


@dataclass
class SliceResult:
    """One slice: its means over the head's questions that carry the tag,
    base → head per gold set compared (each gold set's own tags), and its
    thresholds when it is gated."""

    name: str
    questions: int  # the head's gold questions that carry the tag
    counted: int  # of those, the ones in the means (a relevant document)
    means: dict
    rule: SliceRule  # SliceRule() for a slice the config does not name: no thresholds
    views: list[View] = field(default_factory=list)
    thresholds: list[ThresholdResult] = field(default_factory=list)

    @property
    def size(self) -> int:
        """What decides whether the slice is gated: its questions in the
        means, or paired in a gold set compared, whichever is more (a pull
        request that strips tags from its gold set cannot shrink the
        base's)."""
        return max([self.counted, *(v.paired for v in self.views)])

    @property
    def gated(self) -> bool:
        return bool(self.rule.thresholds) and self.size >= self.rule.min_questions

    @property
    def passed(self) -> bool | None:
        """None: not gated."""
        return all(t.passed for t in self.thresholds) if self.gated else None

    @property
    def moved(self) -> bool:
        """Some mean changed between the base and the head."""
        return any(map(view_moved, self.views))

    def not_gated(self) -> str | None:
        """Why a slice with thresholds is not gated; None otherwise."""
        if not self.rule.thresholds or self.gated:
            return None
        return (f"not gated: {questions(self.size)}, fewer than min_questions {self.rule.min_questions} "
                "(too few for its thresholds to mean anything)")


def view_moved(v: View) -> bool:
    """Some mean of the view changed."""
    return any(abs(d.delta or 0.0) > TOLERANCE for d in v.deltas)


def questions(n: int) -> str:
    return counted(n, "question")


@dataclass
class Slices:
    """The slices reported, and the tags left out (no config names them, and
    MAX_SLICES others were reported)."""

    results: list[SliceResult] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def carriers(tags: Tags) -> Counter:
    """tag -> how many questions carry it."""
    return Counter(t for ts in tags.values() for t in ts)


def slice_names(cfg: Config, *tag_maps: Tags) -> tuple[list[str], list[str]]:
    """The slices to measure: every one the config names (with the base's
    rules, the base's first), however many; then of the tags it does not
    name, the MAX_SLICES most carried (each by name within its count). And
    the tags left out, in the same order."""
    counts: Counter = Counter()
    for tags in tag_maps:
        counts |= carriers(tags)
    others = sorted(set(counts) - set(cfg.slices), key=lambda t: (-counts[t], natural_key(t)))
    return list(cfg.slices) + others[:MAX_SLICES], others[MAX_SLICES:]


def unknown_slices(cfg: Config, tags: Tags, problems: P.Problems) -> None:
    """A slice the config names that no gold question carries is an input
    error at its line (a rule over no question would pass unseen)."""
    carried = carriers(tags)
    for name in (n for n in cfg.slices if not carried[n]):
        problems.add(P.CONFIG, _unknown(name, cfg.slices[name]), file=cfg.path_display, line=cfg.slices[name].line)


def _unknown(name: str, rule: SliceRule) -> str:
    origin = " (a rule of the base's config, enforced here)" if rule.line is None else ""
    shown = safe_text(name, 64)
    return (f"`slices` names the slice `{shown}`{origin}, but no gold question carries the tag `{shown}` — add "
            "it to the questions' `tags:`, or remove the slice")


def members(tags: Tags) -> dict[str, set[str]]:
    """tag -> the questions that carry it (one pass over the tags)."""
    out: dict[str, set[str]] = {}
    for qid, ts in tags.items():
        for t in ts:
            out.setdefault(t, set()).add(qid)
    return out


def _by_id(evaluation: Evaluation) -> dict[str, QueryResult]:
    return {q.query_id: q for q in evaluation.queries}


# The permutations of a slice's paired test: the fewest the whole set's test
# ever draws (compare.MIN_PERMUTATIONS: a p-value resolution of 0.001); the
# count is in each delta's `permutations`. A permutation costs a look-up per
# eight questions, so the slices' tests together cost about (tags per
# question) x 1,000 permutations of the whole set: past 20,000 questions as
# much as the whole set's own test per tag (bench/slices.py: 1.35x the CPU
# of an untagged check at 20,000 questions with two tags each; 1.04x at 2,000).
SLICE_PERMUTATIONS = MIN_PERMUTATIONS


@dataclass(frozen=True)
class _Compared:
    """What the slices' views are cut from: the questions measured at the
    base, at the head, and the head's judged by the base's gold set; each
    gold set's slices (base, head); every question's place in the order
    the whole set's test takes them in (by id, naturally)."""

    base: dict[str, QueryResult]
    head: dict[str, QueryResult]
    on_base_gold: dict[str, QueryResult] | None
    slices: tuple[dict[str, set[str]], dict[str, set[str]]]
    order: dict[str, int]

    def views(self, name: str) -> list[View]:
        mine = self.slices[1].get(name, set())
        head = self.view(HEAD_GOLD, self.head, mine)
        if self.on_base_gold is None:
            return [head]
        if self.same(name):
            return [head, replace(head, gold=BASE_GOLD)]  # the same questions and results: the same view
        return [head, self.view(BASE_GOLD, self.on_base_gold, self.slices[0].get(name, set()))]

    def same(self, name: str) -> bool:
        """Both gold sets give the slice the same questions and results (one view serves both)."""
        mine, theirs = self.slices[1].get(name, set()), self.slices[0].get(name, set())
        assert self.on_base_gold is not None
        return mine == theirs and all(self.on_base_gold.get(q) == self.head.get(q) for q in mine)

    def work(self, name: str) -> int:
        """The resampling work of :meth:`views` (:mod:`budget`'s units): each
        tested measure's sign flips over the slice's paired questions."""
        total = _work(self.pairs(self.head, self.slices[1].get(name, set())))
        if self.on_base_gold is None or self.same(name):
            return total
        return total + _work(self.pairs(self.on_base_gold, self.slices[0].get(name, set())))

    def pairs(self, hq: dict[str, QueryResult], members: set[str]) -> list[tuple[QueryResult, QueryResult]]:
        """The slice's questions measured in both (status ok in both), in the whole set's order."""
        bq = self.base
        return [(bq[q], hq[q]) for q in sorted(filter(_ok_in(bq, hq), members), key=self.order.__getitem__)]

    def view(self, gold: str, hq: dict[str, QueryResult], members: set[str]) -> View:
        """Base → head over the slice's questions measured in both (status
        ok in both): per measure the paired means and the paired
        randomization test of :mod:`compare` (the deltas only: a slice's
        questions are in the whole set's lists). Both sides are evaluated
        with the same measures."""
        pairs = self.pairs(hq, members)
        measures = list(pairs[0][1].values) if pairs else []
        from rag_corpus_check.gate.compare import View

        return View(gold, [_delta(m, pairs) for m in measures], paired=len(pairs))


def _ok_in(bq: dict[str, QueryResult], hq: dict[str, QueryResult]):
    """Whether a question is measured (status ok) in both."""
    return lambda q: _status(bq, q) == OK == _status(hq, q)


def _status(results: dict[str, QueryResult], qid: str) -> str | None:
    r = results.get(qid)
    return r.status if r is not None else None


def _permutations(questions: int) -> int:
    from rag_corpus_check.gate.compare import permutations_for

    return min(permutations_for(questions), SLICE_PERMUTATIONS)  # never more than the whole set's


def _work(pairs: list[tuple[QueryResult, QueryResult]]) -> int:
    """The sign flips of :func:`_delta` over ``pairs``, for every measure it tests."""
    measures = list(pairs[0][1].values) if pairs else []
    missing = undefined(r for pair in pairs for r in pair)
    tested = sum(1 for m in measures if m not in missing)
    return units(_permutations(len(pairs)), len(pairs), tested)


def _delta(m, pairs: list[tuple[QueryResult, QueryResult]]) -> Delta:
    from rag_corpus_check.gate.compare import Delta

    base, head = [b for b, _ in pairs], [h for _, h in pairs]
    n = _permutations(len(pairs))
    return Delta(m, means(base, [m])[m], means(head, [m])[m], _p_value(m, base, head, n), len(pairs), n)


def _p_value(m, base: list[QueryResult], head: list[QueryResult], permutations: int) -> float | None:
    from rag_corpus_check.gate.compare import paired_randomization

    bvals, hvals = [r.values[m] for r in base], [r.values[m] for r in head]
    return None if None in bvals + hvals else paired_randomization(bvals, hvals, permutations=permutations)  # type: ignore[arg-type]


def compare_slices(base: Evaluation, head: Evaluation, on_base_gold: Evaluation | None, tags: tuple[Tags, Tags],
                   names: list[str]) -> dict[str, list[View]]:
    """Per slice, base → head as :func:`compare.compare` sees the whole set:
    judged by the head's gold set (the head's tags), and with
    ``on_base_gold`` by the base's (the base's tags). ``tags``: (base, head)."""
    compared = _compared(base, head, on_base_gold, tags)
    return {name: compared.views(name) for name in names}


def slices_work(base: Evaluation, head: Evaluation, on_base_gold: Evaluation | None, tags: tuple[Tags, Tags],
                names: list[str]) -> int:
    """The resampling work :func:`compare_slices` takes (:mod:`budget`'s units)."""
    compared = _compared(base, head, on_base_gold, tags)
    return sum(compared.work(name) for name in names)


def _compared(base: Evaluation, head: Evaluation, on_base_gold: Evaluation | None, tags: tuple[Tags, Tags]) -> _Compared:
    sides = [_by_id(e) for e in (base, head, on_base_gold) if e is not None]
    order = {q: i for i, q in enumerate(sorted(set().union(*sides), key=natural_key))}
    return _Compared(sides[0], sides[1], sides[2] if len(sides) > 2 else None, (members(tags[0]),
                     members(tags[1])), order)


def measure_slices(cfg: Config, evaluation: Evaluation, tags: Tags, names: list[str],
                   views: dict[str, list[View]] | None) -> list[SliceResult]:
    """Every slice of ``names``: its means (the head's questions that carry
    it), its views when a base was compared (``views``), its thresholds
    when it is gated."""
    by_id, carried = _by_id(evaluation), members(tags)
    return [_slice(cfg, name, [by_id[q] for q in carried.get(name, ()) if q in by_id], list(evaluation.means), views)
            for name in names]


def _slice(cfg: Config, name: str, members: list[QueryResult], measures: list, views: dict | None) -> SliceResult:
    counted = [r for r in members if r.status == OK]
    result = SliceResult(name, len(members), len(counted), means(counted, measures), cfg.slices.get(name, SliceRule()),
                         (views or {}).get(name, []))
    result.thresholds = _gate(result, bool(result.views)) if result.gated else []
    return result


def _gate(s: SliceResult, compared: bool) -> list[ThresholdResult]:
    """The slice's thresholds, as the whole set's are applied: the minimum on
    its mean (and, judged by the base's gold set, on the head's mean there),
    max_drop on each gold set's paired means."""
    if not compared:
        return apply_thresholds(list(s.rule.thresholds), s.means)
    return _gate_on_views(s)


def _gate_on_views(s: SliceResult) -> list[ThresholdResult]:
    from rag_corpus_check.gate.compare import (  # views: a base was compared
        Comparison,
        max_drop_failures,
    )

    thresholds = list(s.rule.thresholds)
    base_view = _base_view(s.views)
    pseudo = Comparison("", "", head_gold=s.views[0], base_gold=base_view)
    return apply_thresholds(thresholds, s.means, max_drop_failures(thresholds, pseudo), _head_means(base_view))


def _base_view(views: list[View]) -> View | None:
    """The view judged by the base's gold set, when it holds questions of the slice."""
    return views[-1] if views[-1].gold == BASE_GOLD and views[-1].paired else None


def _head_means(v: View | None) -> dict | None:
    return None if v is None else {d.measure: d.head for d in v.deltas}
