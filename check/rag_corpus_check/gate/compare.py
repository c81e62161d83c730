"""Base vs head: what changed.

Pure functions over two already-evaluated :class:`Side`s; which rules apply
is :mod:`rules`' job, reading the base revision :mod:`base.tree`'s, running
both evaluations :mod:`base.head_vs_base`'s.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Threshold
from rag_corpus_check.core.text import figure, natural_key
from rag_corpus_check.gate.bootstrap import Interval, add_intervals
from rag_corpus_check.gate.terms import (  # the comparison's terms (defined there: a check without a base needs them too)
    BASE_GOLD,
    HEAD_GOLD,
    MIN_PERMUTATIONS,
    MIN_QUESTIONS,
    PERMUTATIONS,
    SEED,
    TOLERANCE,
    WORK,
)
from rag_corpus_check.metrics.evaluate import OK, Evaluation, QueryResult, evaluate, means
from rag_corpus_check.metrics.measures import Measure, Options

if TYPE_CHECKING:
    from rag_corpus_check.gate.label_debt import DeltaBound

MOVES_SHOWN = 10


def permutations_for(questions: int) -> int:
    per = max(1, -(-questions // 8))
    return max(MIN_PERMUTATIONS, min(PERMUTATIONS, WORK // per))


def paired_randomization(base: list[float], head: list[float], seed: int = SEED,
                         permutations: int = PERMUTATIONS) -> float | None:
    """Two-sided p-value of the mean paired difference under random sign
    flips (Fisher's randomization test over questions), fixed seed. None when
    there is nothing to test.

    Each permutation draws one random bit per question (a flipped sign). The
    differences are taken eight at a time, with a table of the 256 sums of
    their subsets, so a permutation costs n/8 look-ups done in C instead of n
    steps of Python (10,000 permutations of 10,000 questions: 0.5 s, not 20 s
    per measure)."""
    diffs = [h - b for b, h in zip(base, head, strict=True)]
    if not diffs:
        return None
    total = sum(diffs)
    observed = abs(total)
    if observed == 0:
        return 1.0
    tables = [_subset_sums(diffs[i:i + 8]) for i in range(0, len(diffs), 8)]
    width = len(tables)
    rnd = random.Random(seed)
    hits = 0
    for _ in range(permutations):
        flips = rnd.getrandbits(8 * width).to_bytes(width, "little")
        flipped = sum(map(list.__getitem__, tables, flips))  # the differences whose sign flips
        if abs(total - 2 * flipped) >= observed - 1e-12:
            hits += 1
    return (hits + 1) / (permutations + 1)


def _subset_sums(values: list[float]) -> list[float]:
    """Entry m: the sum of the values whose bit is set in m (0 <= m < 256);
    bits beyond the values' count select nothing."""
    sums = [0.0]
    for v in values:
        sums += [s + v for s in sums]
    return sums * (256 // len(sums))


@dataclass
class Side:
    """One revision, evaluated: what the comparison reads of it."""

    evaluation: Evaluation
    gold: dict[str, dict[str, int]]  # question -> judged grades
    run: dict[str, list[str]]  # question -> ranking
    fingerprint: str | None  # of the corpus
    ids: set[str]  # the corpus's document ids
    texts: dict[str, str | None] = field(default_factory=dict)  # question -> its text
    parents: dict[str, str] = field(default_factory=dict)  # chunk id -> its document (a chunked corpus)
    digests: dict[str, tuple[int, str]] = field(default_factory=dict)  # labelled document -> (hash of its text, status)


@dataclass
class Delta:
    measure: Measure
    base: float | None
    head: float | None
    p_value: float | None
    paired_questions: int
    permutations: int
    interval: Interval | None = None  # bootstrap interval of the delta (questions resampled in pairs)
    means_intervals: tuple[Interval, Interval] | None = None  # of the base's and the head's mean, the same draws
    bound: DeltaBound | None = None  # the means if every unjudged top-k document were relevant (label_debt)
    # Over the paired questions no changed relevant document explains (None:
    # no changed relevant document explains any): the delta and how many.
    rest: float | None = None
    rest_questions: int | None = None

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.head is None else self.head - self.base

    @property
    def conclusive(self) -> bool:
        return self.paired_questions >= MIN_QUESTIONS


@dataclass
class QuestionChange:
    query_id: str
    measure: Measure
    base: float
    head: float
    documents: list[dict] = field(default_factory=list)  # relevant documents that moved, for a drop

    @property
    def delta(self) -> float:
        return self.head - self.base


@dataclass
class View:
    """Base → head as one gold set sees it (:data:`terms.GOLD_SETS`): per measure
    the means over the same (paired) questions on both sides, per question
    the change of the key measure, and the questions over the per-question
    rule's limit."""

    gold: str  # HEAD_GOLD or BASE_GOLD
    deltas: list[Delta] = field(default_factory=list)
    questions: list[QuestionChange] = field(default_factory=list)  # most dropped first
    paired: int = 0
    over_limit: list[QuestionChange] = field(default_factory=list)  # per_question: dropped by more than its max_drop


@dataclass
class Comparison:
    base_rev: str
    base_sha: str
    head_gold: View = field(default_factory=lambda: View(HEAD_GOLD))
    base_gold: View | None = None  # the head's ranking judged by the base's gold set
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    labels: list[dict] = field(default_factory=list)  # per question label diff
    attribution: dict | None = None
    gold_changed: bool = False
    system_changed: bool = False
    removed_effect: dict[str, dict] = field(default_factory=dict)  # measure -> the head's mean with/without the removed questions
    relabelled_and_reranked: list[str] = field(default_factory=list)  # questions in both whose labels and ranking changed
    unjudged_new_docs: list[dict] = field(default_factory=list)
    new_chunks: list[dict] = field(default_factory=list)  # new chunks of documents the gold set labels
    changed_relevant: list[dict] = field(default_factory=list)  # relevant documents the PR edited or deleted
    explained_by_changes: frozenset[str] = frozenset()  # questions a changed relevant document is relevant to

    @property
    def deltas(self) -> list[Delta]:
        return self.head_gold.deltas

    @property
    def changed_by(self) -> str:
        """What changed between the revisions: one of :data:`CHANGED_BY`."""
        return CHANGED_BY[self.gold_changed, self.system_changed]

    @property
    def questions(self) -> list[QuestionChange]:
        return self.head_gold.questions

    @property
    def paired(self) -> int:
        return self.head_gold.paired

    @property
    def views(self) -> list[View]:
        return [self.head_gold] + ([self.base_gold] if self.base_gold is not None else [])


# (gold changed, system changed) -> the comparison's `changed_by`
CHANGED_BY = {(True, False): "labels", (False, True): "system", (True, True): "labels and system",
              (False, False): "nothing"}


@dataclass(frozen=True)
class Rule:
    """What a view is measured against: the key measure of the per-question
    list, and the per-question rule (measure, max_drop)."""

    key: Measure
    measure: Measure
    max_drop: float
    min_grade: int
    options: Options | None = None  # the measures' conventions (attribution); None: min_grade's defaults


def compare(base: Side, head: Side, rule: Rule, base_rev: str, base_sha: str,
            head_on_base_gold: Evaluation | None = None) -> Comparison:
    """``head_on_base_gold``: the head's rankings of the base's questions,
    evaluated with the base's labels (:data:`BASE_GOLD`)."""
    bq = {q.query_id: q for q in base.evaluation.queries}
    hq = {q.query_id: q for q in head.evaluation.queries}
    out = Comparison(base_rev, base_sha)
    out.changed_relevant = changed_relevant(base, head, rule, bq, hq)
    out.explained_by_changes = frozenset(q["query_id"] for e in out.changed_relevant for q in e["questions"])
    out.head_gold = view(HEAD_GOLD, bq, hq, (base.run, head.run), head.gold, rule, out.explained_by_changes)
    if head_on_base_gold is not None:
        on_base = {q.query_id: q for q in head_on_base_gold.queries}
        out.base_gold = view(BASE_GOLD, bq, on_base, (base.run, head.run), base.gold, rule, out.explained_by_changes)
    out.added, out.removed = sorted(set(hq) - set(bq), key=natural_key), sorted(set(bq) - set(hq), key=natural_key)
    if head_on_base_gold is not None:
        out.removed_effect = removal_effect(head.evaluation, head_on_base_gold, out.removed)
    _what_changed(out, base, head, paired_ids(bq, hq), rule)
    out.unjudged_new_docs = unjudged_new_documents(base, head, rule.key.k or 0)
    out.new_chunks = new_chunks_of_labelled(base, head)
    return out


def view(gold: str, bq: dict[str, QueryResult], hq: dict[str, QueryResult],
         runs: tuple[dict[str, list[str]], dict[str, list[str]]], grades: dict[str, dict[str, int]],
         rule: Rule, explained: frozenset[str] = frozenset()) -> View:
    """One :class:`View`: ``runs`` are (base, head) rankings, ``grades`` the
    labels the per-question moves are read against; ``explained``: the
    questions a changed relevant document explains (each delta also over
    the rest)."""
    pairs = [(bq[q], hq[q]) for q in paired_ids(bq, hq)]
    out = View(gold, _deltas(pairs), paired=len(pairs))
    _rest(out.deltas, pairs, explained)
    out.questions = sorted((_question(b, h, rule.key, runs, grades, rule.min_grade) for b, h in pairs),
                           key=_most_dropped)
    changes = [c for b, h in pairs if (c := _change(b, h, rule.measure)) is not None]
    out.over_limit = sorted((c for c in changes if -c.delta > rule.max_drop + TOLERANCE), key=_most_dropped)
    return out


def _rest(deltas: list[Delta], pairs: list[tuple[QueryResult, QueryResult]], explained: frozenset[str]) -> None:
    """Each delta over the pairs whose question no changed relevant
    document explains, when some is explained."""
    rest = [(b, h) for b, h in pairs if b.query_id not in explained]
    if len(rest) == len(pairs):
        return
    for d in deltas:
        bm, hm = means([b for b, _ in rest], [d.measure]), means([h for _, h in rest], [d.measure])
        before, after = bm[d.measure], hm[d.measure]
        d.rest = None if before is None or after is None else after - before
        d.rest_questions = len(rest)


def _deltas(pairs: list[tuple[QueryResult, QueryResult]]) -> list[Delta]:
    """Per measure computed on both sides, the paired means and test."""
    if not pairs:
        return []
    bl, hl = [b for b, _ in pairs], [h for _, h in pairs]
    deltas = [_delta(m, bl, hl) for m in hl[0].values if m in bl[0].values]
    add_intervals(deltas, bl, hl)
    return deltas


def _what_changed(out: Comparison, base: Side, head: Side, common: list[str], rule: Rule) -> None:
    """The labels, the system, and when both changed how much each did."""
    out.labels = label_changes(base, head)
    out.gold_changed = bool(out.labels)
    out.system_changed = _system_changed(base, head)
    out.relabelled_and_reranked = _relabelled_and_reranked(out.labels, common, base, head)
    if out.gold_changed and out.system_changed and common:
        out.attribution = attribution(common, base, head, list(head.evaluation.means),
                                      rule.options or Options(min_grade=rule.min_grade))


def _relabelled_and_reranked(labels: list[dict], common: list[str], base: Side, head: Side) -> list[str]:
    """The questions in both revisions whose labels (or text) and ranking changed."""
    relabelled = {e["query_id"] for e in labels if e["question"] == "changed"}
    return [q for q in common if q in relabelled and base.run.get(q) != head.run.get(q)]


def paired_ids(bq: dict[str, QueryResult], hq: dict[str, QueryResult]) -> list[str]:
    """The questions measured in both revisions (status ok in both)."""
    return sorted((q for q in hq if q in bq and hq[q].status == OK and bq[q].status == OK), key=natural_key)


def _most_dropped(e: QuestionChange) -> tuple:
    return e.delta, natural_key(e.query_id)


def _system_changed(base: Side, head: Side) -> bool:
    """The corpus differs, or the ranking of a question both gold sets hold
    (a question added or removed changes the labels, not the system)."""
    return base.fingerprint != head.fingerprint or any(
        base.run.get(q) != head.run.get(q) for q in base.gold.keys() & head.gold.keys())


def removal_effect(head: Evaluation, on_base_gold: Evaluation, removed: list[str]) -> dict[str, dict]:
    """What removing questions alone did to each of the head's means: the
    mean over the head's questions, and over them plus the removed ones (the
    head's rankings of them judged by the base's labels, the only labels they
    have). Empty when no measured question was removed."""
    gone = set(removed)
    extra = [q for q in on_base_gold.queries if q.query_id in gone and q.status == OK]
    if not extra:
        return {}
    kept = [q for q in head.queries if q.status == OK]
    measures = [m for m in head.means if m in extra[0].values]
    without, with_removed = means(kept, measures), means(kept + extra, measures)
    out = {}
    for m in measures:
        now, was = without[m], with_removed[m]
        if now is not None and was is not None:
            out[str(m)] = {"head": now, "with_removed": was, "delta": now - was, "removed": len(extra)}
    return out


def _delta(m: Measure, bq: list[QueryResult], hq: list[QueryResult]) -> Delta:
    """The means of ``m`` over the same questions on both sides, and the paired test."""
    bvals = [q.values.get(m) for q in bq]
    hvals = [q.values.get(m) for q in hq]
    n = permutations_for(len(bq))
    p = paired_randomization(bvals, hvals, permutations=n) if bq and None not in bvals + hvals else None  # type: ignore[arg-type]
    return Delta(m, means(bq, [m])[m], means(hq, [m])[m], p, len(bq), n)


def _change(b: QueryResult, h: QueryResult, m: Measure) -> QuestionChange | None:
    bv, hv = b.values.get(m), h.values.get(m)
    return None if bv is None or hv is None else QuestionChange(h.query_id, m, bv, hv)


def _question(b: QueryResult, h: QueryResult, key: Measure, runs: tuple[dict, dict], grades: dict,
              min_grade: int) -> QuestionChange:
    change = QuestionChange(h.query_id, key, b.values[key], h.values[key])  # type: ignore[arg-type]
    if change.delta < 0:
        change.documents = moves(runs[0].get(h.query_id, []), runs[1].get(h.query_id, []),
                                 grades.get(h.query_id, {}), key.k or 0, min_grade)[:MOVES_SHOWN]
    return change


def moves(base_ranking: list[str], head_ranking: list[str], grades: dict[str, int], k: int,
          min_grade: int) -> list[dict]:
    """The relevant documents whose position changed, those that left or
    entered the top k first, then by how far they moved."""
    bpos = {d: i for i, d in enumerate(base_ranking, 1)}
    hpos = {d: i for i, d in enumerate(head_ranking, 1)}
    found = [_move(d, g, bpos.get(d), hpos.get(d), k) for d, g in sorted(grades.items())
             if g >= min_grade and bpos.get(d) != hpos.get(d)]
    found.sort(key=lambda mv: (mv["change"] == "moved", -abs(mv["shift"] or 10**6), mv["doc_id"]))
    return found


_CHANGE = {(True, False): "left the top-K", (False, True): "entered the top-K"}


def _move(doc_id: str, grade: int, bp: int | None, hp: int | None, k: int) -> dict:
    change = _CHANGE.get((bp is not None and bp <= k, hp is not None and hp <= k), "moved")
    shift = hp - bp if bp and hp else None
    return {"doc_id": doc_id, "grade": grade, "base_position": bp, "head_position": hp, "change": change,
            "shift": shift}


def label_changes(base: Side, head: Side) -> list[dict]:
    """Per question: the labels added, removed and re-graded, and whether its
    text changed (with a retriever the text decides what is retrieved)."""
    changes = (_label_change(qid, base, head) for qid in sorted(set(base.gold) | set(head.gold), key=natural_key))
    return [c for c in changes if c is not None]


def _label_change(qid: str, base: Side, head: Side) -> dict | None:
    added, removed, regraded = _diff(base.gold.get(qid, {}), head.gold.get(qid, {}))
    in_both = qid in base.gold and qid in head.gold
    text = in_both and base.texts.get(qid) != head.texts.get(qid)
    if not any((added, removed, regraded, text)):
        return None
    what = "changed" if in_both else ("added" if qid in head.gold else "removed")
    return {"query_id": qid, "added": added, "removed": removed, "regraded": regraded, "question": what,
            "query_changed": text}


def _diff(b: dict[str, int], h: dict[str, int]) -> tuple[dict, dict, dict]:
    """The labels added, removed and re-graded from ``b`` to ``h``."""
    added = {d: g for d, g in h.items() if d not in b}
    removed = {d: g for d, g in b.items() if d not in h}
    regraded = {d: [b[d], g] for d, g in h.items() if d in b and b[d] != g}
    return added, removed, regraded


def attribution(common: list[str], base: Side, head: Side, measures: list[Measure], options: Options) -> dict:
    """Split the change of each mean over the common questions into the part
    from the system (head run scored on base labels) and the part from the
    labels (head labels vs base labels, on the head run). They add up."""

    def means(gold: dict, run: dict) -> dict:
        return evaluate({q: gold[q] for q in common}, {q: run.get(q, []) for q in common}, measures, options).means

    bb, hb, hh = means(base.gold, base.run), means(base.gold, head.run), means(head.gold, head.run)
    out = {}
    for m in measures:
        if None not in (bb.get(m), hb.get(m), hh.get(m)):
            out[str(m)] = {"base": bb[m], "head": hh[m], "system": hb[m] - bb[m], "labels": hh[m] - hb[m]}
    return {"questions": len(common), "measures": out}


CHANGES = ("deleted", "status", "edited")  # how a pull request changed a relevant document, the worse first


def changed_relevant(base: Side, head: Side, rule: Rule, bq: dict[str, QueryResult],
                     hq: dict[str, QueryResult]) -> list[dict]:
    """The documents a gold set (the base's or the head's) counts relevant
    that the pull request deleted from the corpus, gave another status, or
    edited (what a retriever reads of them differs: title, text, document), each
    with every question that counts it relevant: its position base → head
    and the question's key measure base → head. The documents whose
    questions dropped most first. Work: one pass over the labels, and one
    over the rankings of the questions named."""
    changed = _changed(base, head)
    relevant = _relevant_to(base.gold, head.gold, rule.min_grade, set(changed))
    changed = {d: how for d, how in changed.items() if d in relevant}
    if not changed:
        return []
    positions = (_positions(base.run, relevant, changed), _positions(head.run, relevant, changed))
    found = [(d, how, [_affected(q, d, grade, positions, (bq, hq), rule.key) for q, grade in relevant[d]])
             for d, how in changed.items()]
    found.sort(key=lambda e: (_worst(e[2]), CHANGES.index(e[1]), natural_key(e[0])))
    return [{"doc_id": d, "change": how, "status": _statuses(d, base, head), "questions": questions}
            for d, how, questions in found]


def _statuses(doc_id: str, base: Side, head: Side) -> list[str] | None:
    """[base, head] status of a document whose status changed; else None."""
    b, h = base.digests.get(doc_id), head.digests.get(doc_id)
    return [b[1], h[1]] if b is not None and h is not None and b[1] != h[1] else None


def _worst(questions: list[dict]) -> float:
    """The largest drop among ``questions`` (0 without one)."""
    return min((q["delta"] for q in questions if q["delta"] is not None), default=0.0)


def _changed(base: Side, head: Side) -> dict[str, str]:
    """The labelled documents (by either gold set) the head deleted or
    edited: a document the base's corpus held that the head's does not, or
    whose digest differs (both sides digest what their own gold set labels)."""
    held = head.ids | set(head.parents.values())
    labelled = base.digests.keys() | set(chain.from_iterable(head.gold.values()))
    out = {d: "deleted" for d in labelled if d not in held and (d in base.digests or d in base.ids)}
    for d, (text, status) in base.digests.items():
        now = head.digests.get(d)
        if now is not None and now != (text, status):
            out[d] = "edited" if now[0] != text else "status"
    return out


def _relevant_to(base: dict[str, dict[str, int]], head: dict[str, dict[str, int]], min_grade: int,
                 docs: set[str]) -> dict[str, list[tuple[str, int]]]:
    """Of ``docs``, document -> the questions that count it relevant now or
    counted it relevant at the base (a label the PR removed or graded down),
    with the grade (the head's label where the head has the question and the
    label, else the base's). A question that labels none of ``docs`` costs
    one disjointness test."""
    out: dict[str, list[tuple[str, int]]] = {}
    if not docs:
        return out
    touched = [q for q in base.keys() | head.keys()
               if not docs.isdisjoint(head.get(q, ())) or not docs.isdisjoint(base.get(q, ()))]
    for qid in sorted(touched, key=natural_key):
        was = base.get(qid, {})
        now = head.get(qid, was)
        for d in sorted((now.keys() | was.keys()) & docs):
            grade = now.get(d, was.get(d, 0))
            if max(grade, was.get(d, 0)) >= min_grade:
                out.setdefault(d, []).append((qid, grade))
    return out


def _positions(run: dict[str, list[str]], relevant: dict[str, list[tuple[str, int]]],
               changed: dict[str, str]) -> dict[str, dict[str, int]]:
    """question -> the 1-based positions of the changed documents in its ranking."""
    wanted: dict[str, set[str]] = {}
    for d in changed:
        for q, _ in relevant[d]:
            wanted.setdefault(q, set()).add(d)
    return {q: {d: i for i, d in enumerate(run.get(q, []), 1) if d in docs} for q, docs in wanted.items()}


def _affected(qid: str, doc_id: str, grade: int, positions: tuple[dict, dict],
              evaluations: tuple[dict[str, QueryResult], dict[str, QueryResult]], key: Measure) -> dict:
    b, h = (e.get(qid) for e in evaluations)
    bv = b.values.get(key) if b is not None and b.status == OK else None
    hv = h.values.get(key) if h is not None and h.status == OK else None
    return {"query_id": qid, "grade": grade, "base_position": positions[0].get(qid, {}).get(doc_id),
            "head_position": positions[1].get(qid, {}).get(doc_id), "measure": str(key), "base": bv, "head": hv,
            "delta": None if bv is None or hv is None else hv - bv}


def unjudged_new_documents(base: Side, head: Side, k: int) -> list[dict]:
    """Per question, the documents new in the head's corpus that reach its
    top k without a judgement (the labels are going stale). A chunked
    corpus evaluated per document ranks documents: a new document is a
    doc_id the base's chunks did not have (and, per chunk, a new chunk id);
    an id the base had at either level is not new (a change of chunking)."""
    new_docs = (head.ids | _documents(head)) - (base.ids | _documents(base))
    out = []
    for qid, ranking in sorted(head.run.items(), key=lambda item: natural_key(item[0])) if new_docs else ():
        judged = head.gold.get(qid, {})
        fresh = [d for d in ranking[:k] if d in new_docs and d not in judged]
        if fresh:
            out.append({"query_id": qid, "doc_ids": fresh})
    return out


def _documents(side: Side) -> set[str]:
    """The documents of a side's corpus (a chunk's doc_id; a record without one is its own)."""
    parents = side.parents
    return {parents.get(d, d) for d in side.ids} if parents else side.ids


def max_drop_failures(thresholds: Sequence[Threshold], cmp_: Comparison) -> dict[Measure, str]:
    """measure → message, for thresholds whose max_drop the head exceeds in
    any view (the paired means: the same questions on both sides)."""
    failed: dict[Measure, list[str]] = {}
    for v in cmp_.views:
        for m, message in _view_drops(thresholds, v):
            failed.setdefault(m, []).append(message)
    return {m: "; ".join(messages) for m, messages in failed.items()}


def _view_drops(thresholds: Sequence[Threshold], v: View):
    drops = {d.measure: -d.delta for d in v.deltas if d.delta is not None}
    for t in thresholds:
        drop = drops.get(t.measure, 0.0)
        if t.max_drop is not None and drop > t.max_drop + TOLERANCE:
            yield t.measure, (f"dropped {figure(drop, t.max_drop)} vs base on {GOLD_NAMES[v.gold]} ({v.paired} questions in "
                              f"both), more than max_drop {t.max_drop:g}")


GOLD_NAMES = {HEAD_GOLD: "the head's gold set", BASE_GOLD: "the base's gold set"}


def new_chunks_of_labelled(base: Side, head: Side) -> list[dict]:
    """Chunks new in the head whose document the gold set (base's or
    head's) labels: new text that inherits a label, worth a reviewer's look."""
    labelled = {d for grades in (*base.gold.values(), *head.gold.values()) for d in grades}
    fresh: dict[str, list[str]] = {}
    for chunk, doc in head.parents.items():
        if doc in labelled and chunk not in base.ids:
            fresh.setdefault(doc, []).append(chunk)
    return [{"doc_id": d, "chunk_ids": sorted(c, key=natural_key)} for d, c in sorted(fresh.items(), key=lambda x: natural_key(x[0]))]
