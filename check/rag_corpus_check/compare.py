"""Base vs head: which rules apply, and what changed.

Pure functions over already-evaluated data; reading the base revision is
:mod:`git_source`'s job, running both evaluations is :mod:`pipeline`'s.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from rag_corpus_check.config import Config, Threshold
from rag_corpus_check.evaluate import evaluate
from rag_corpus_check.measures import Measure

CONVENTIONS = ("k", "gain", "short_list", "min_grade", "max_grade")
MIN_QUESTIONS = 10  # fewer paired questions than this: no conclusion is drawn
PERMUTATIONS = 10_000
SEED = 20261130


# ---------------------------------------------------------------- rules


@dataclass
class Rules:
    """The rules the gate enforces, and how the PR changed them."""

    source: str  # "base", "head (first introduction)", "head (base config unusable)", "head (override)"
    changes: list[str] = field(default_factory=list)  # every rule change, loosening or not
    loosened: list[str] = field(default_factory=list)  # changes that need the override
    override_reason: str | None = None
    thresholds: list[Threshold] = field(default_factory=list)
    conventions: dict = field(default_factory=dict)

    @property
    def violated(self) -> bool:
        return bool(self.loosened) and self.override_reason is None


def _conv(cfg: Config) -> dict:
    return {name: getattr(cfg, name) for name in CONVENTIONS}


def decide_rules(base: Config | None, head: Config, why_no_base: str = "first introduction") -> Rules:
    """Thresholds and conventions come from the base config unless the PR
    introduces the config, or sets a new ``rule_change_reason`` (a field that
    must change in this PR to count)."""
    if base is None:
        return Rules(f"head ({why_no_base})", thresholds=list(head.thresholds), conventions=_conv(head))
    changes, loosened = [], []
    bconv, hconv = _conv(base), _conv(head)
    for name in CONVENTIONS:
        if bconv[name] != hconv[name]:
            msg = f"convention `{name}` changed: {bconv[name]} → {hconv[name]}"
            changes.append(msg)
            loosened.append(msg)  # numbers under other conventions are not comparable
    bth = {str(t.measure): t for t in base.thresholds}
    hth = {str(t.measure): t for t in head.thresholds}
    for name, bt in bth.items():
        ht = hth.get(name)
        if ht is None:
            msg = f"threshold `{name}` removed (was ≥ {bt.min:g})"
            changes.append(msg)
            loosened.append(msg)
            continue
        if ht.min < bt.min:
            msg = f"threshold `{name}` lowered: {bt.min:g} → {ht.min:g}"
            changes.append(msg)
            loosened.append(msg)
        elif ht.min > bt.min:
            changes.append(f"threshold `{name}` raised: {bt.min:g} → {ht.min:g}")
        if bt.max_drop is not None and (ht.max_drop is None or ht.max_drop > bt.max_drop):
            msg = f"`max_drop` of `{name}` loosened: {bt.max_drop:g} → {'none' if ht.max_drop is None else f'{ht.max_drop:g}'}"
            changes.append(msg)
            loosened.append(msg)
        elif ht.max_drop is not None and (bt.max_drop is None or ht.max_drop < bt.max_drop):
            changes.append(f"`max_drop` of `{name}` tightened: {bt.max_drop} → {ht.max_drop:g}")
    for name, ht in hth.items():
        if name not in bth:
            changes.append(f"threshold `{name}` added (≥ {ht.min:g})")
    reason = head.rule_change_reason
    if reason and reason != base.rule_change_reason:
        return Rules("head (override)", changes, loosened, reason, list(head.thresholds), hconv)
    # Base rules, tightened by anything stricter the head adds.
    merged: dict[str, Threshold] = dict(bth)
    for name, ht in hth.items():
        bt = bth.get(name)
        if bt is None:
            merged[name] = ht
        else:
            drops = [d for d in (bt.max_drop, ht.max_drop) if d is not None]
            merged[name] = Threshold(bt.measure, max(bt.min, ht.min), min(drops) if drops else None)
    return Rules("base", changes, loosened, None, list(merged.values()), bconv)


def apply_rules(cfg: Config, rules: Rules) -> None:
    for name, value in rules.conventions.items():
        setattr(cfg, name, value)
    cfg.thresholds = list(rules.thresholds)


# ---------------------------------------------------------------- comparison


def paired_randomization(base: list[float], head: list[float], seed: int = SEED,
                         permutations: int = PERMUTATIONS) -> float | None:
    """Two-sided p-value of the mean paired difference under random sign
    flips (Fisher's randomization test over questions), fixed seed. None when
    there is nothing to test."""
    diffs = [h - b for b, h in zip(base, head, strict=True)]
    n = len(diffs)
    if n == 0:
        return None
    observed = abs(sum(diffs))
    if observed == 0:
        return 1.0
    rnd = random.Random(seed)
    hits = 0
    for _ in range(permutations):
        s = sum(d if rnd.random() < 0.5 else -d for d in diffs)
        if abs(s) >= observed - 1e-12:
            hits += 1
    return (hits + 1) / (permutations + 1)


@dataclass
class Comparison:
    base_rev: str
    base_sha: str
    rules: Rules
    deltas: list[dict] = field(default_factory=list)  # per measure
    questions: list[dict] = field(default_factory=list)  # per common question, sorted by change
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    labels: list[dict] = field(default_factory=list)  # per question label diff
    attribution: dict | None = None
    gold_changed: bool = False
    system_changed: bool = False
    unjudged_new_docs: list[dict] = field(default_factory=list)
    paired: int = 0
    notes: list[str] = field(default_factory=list)


def _positions(ranking: list[str]) -> dict[str, int]:
    return {d: i for i, d in enumerate(ranking, 1)}


def compare(base_out, head_out, rules: Rules, base_rev: str, base_sha: str) -> Comparison:
    cfg = head_out.config
    k = cfg.k
    key = f"nDCG@{k}"
    bev, hev = base_out.evaluation, head_out.evaluation
    bq = {q.query_id: q for q in bev.queries}
    hq = {q.query_id: q for q in hev.queries}
    common = sorted(q for q in hq if q in bq and hq[q].status == "ok" and bq[q].status == "ok")
    cmp_ = Comparison(base_rev, base_sha, rules, paired=len(common))
    cmp_.added = sorted(set(hq) - set(bq))
    cmp_.removed = sorted(set(bq) - set(hq))

    for m in hev.means:
        b, h = bev.means.get(m), hev.means.get(m)
        bvals = [bq[q].values.get(m) for q in common]
        hvals = [hq[q].values.get(m) for q in common]
        p = paired_randomization(bvals, hvals) if common and None not in bvals + hvals else None
        cmp_.deltas.append({
            "measure": m, "base": b, "head": h,
            "delta": (h - b) if b is not None and h is not None else None,
            "p_value": p, "paired_questions": len(common),
            "conclusive": len(common) >= MIN_QUESTIONS,
        })

    bgold = {qid: q.relevant for qid, q in base_out.gold.queries.items()}
    hgold = {qid: q.relevant for qid, q in head_out.gold.queries.items()}
    brun = {qid: q.ranking for qid, q in base_out.run.queries.items()}
    hrun = {qid: q.ranking for qid, q in head_out.run.queries.items()}
    min_grade = cfg.min_grade

    for qid in common:
        b, h = bq[qid].values[key], hq[qid].values[key]
        entry = {"query_id": qid, "measure": key, "base": b, "head": h, "delta": h - b}
        if h < b:
            bpos, hpos = _positions(brun.get(qid, [])), _positions(hrun.get(qid, []))
            moves = []
            for d, g in sorted(hgold.get(qid, {}).items()):
                if g < min_grade:
                    continue
                bp, hp = bpos.get(d), hpos.get(d)
                if bp == hp:
                    continue
                in_b, in_h = bp is not None and bp <= k, hp is not None and hp <= k
                change = "left the top-K" if in_b and not in_h else "entered the top-K" if in_h and not in_b else "moved"
                moves.append({"doc_id": d, "grade": g, "base_position": bp, "head_position": hp, "change": change,
                              "shift": (hp or 10**9) - (bp or 10**9) if bp and hp else None})
            moves.sort(key=lambda mv: (mv["change"] == "moved", -abs(mv["shift"] or 10**6), mv["doc_id"]))
            entry["documents"] = moves[:10]
        cmp_.questions.append(entry)
    cmp_.questions.sort(key=lambda e: (e["delta"], e["query_id"]))

    for qid in sorted(set(bgold) | set(hgold)):
        b, h = bgold.get(qid, {}), hgold.get(qid, {})
        added = {d: h[d] for d in h if d not in b}
        removed = {d: b[d] for d in b if d not in h}
        regraded = {d: [b[d], h[d]] for d in h if d in b and b[d] != h[d]}
        if added or removed or regraded:
            cmp_.labels.append({"query_id": qid, "added": added, "removed": removed, "regraded": regraded,
                                "question": "added" if qid not in bgold else "removed" if qid not in hgold else "changed"})
    cmp_.gold_changed = bool(cmp_.labels)
    corpus_changed = base_out.corpus.fingerprint != head_out.corpus.fingerprint
    run_changed = any(brun.get(q) != hrun.get(q) for q in set(brun) | set(hrun))
    cmp_.system_changed = corpus_changed or run_changed
    if cmp_.gold_changed and cmp_.system_changed and common:
        cmp_.attribution = _attribution(common, bgold, hgold, brun, hrun, head_out.config, list(hev.means))
    new_docs = set(head_out.corpus.docs) - set(base_out.corpus.docs)
    if new_docs:
        for qid, ranking in sorted(hrun.items()):
            judged = hgold.get(qid, {})
            fresh = [d for d in ranking[:k] if d in new_docs and d not in judged]
            if fresh:
                cmp_.unjudged_new_docs.append({"query_id": qid, "doc_ids": fresh})
    return cmp_


def _attribution(common, bgold, hgold, brun, hrun, cfg, measure_names):
    """Split the change of each mean over the common questions into the part
    from the system (head run scored on base labels) and the part from the
    labels (head labels vs base labels, on the head run). They add up."""
    measures = [Measure(n.split("@")[0], int(n.split("@")[1])) for n in measure_names]

    def means(gold, run):
        ev = evaluate({q: gold[q] for q in common}, {q: run.get(q, []) for q in common}, measures,
                      min_grade=cfg.min_grade, gain=cfg.gain, short_list=cfg.short_list)
        return ev.means

    bb, hb, hh = means(bgold, brun), means(bgold, hrun), means(hgold, hrun)
    out = {}
    for m in measure_names:
        if None in (bb.get(m), hb.get(m), hh.get(m)):
            continue
        out[m] = {"base": bb[m], "head": hh[m], "system": hb[m] - bb[m], "labels": hh[m] - hb[m]}
    return {"questions": len(common), "measures": out}


def max_drop_failures(rules: Rules, cmp_: Comparison) -> dict[str, str]:
    """measure → message, for thresholds whose max_drop the head exceeds."""
    deltas = {d["measure"]: d for d in cmp_.deltas}
    failed = {}
    for t in rules.thresholds:
        d = deltas.get(str(t.measure))
        if t.max_drop is None or d is None or d["delta"] is None:
            continue
        drop = -d["delta"]
        if drop > t.max_drop + 1e-12:
            failed[str(t.measure)] = f"dropped {drop:.4f} vs base, more than max_drop {t.max_drop:g}"
    return failed
