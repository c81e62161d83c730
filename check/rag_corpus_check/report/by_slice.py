"""Slices in the results file and the console: per tag of the gold set, the
means, base → head per gold set with the paired test, and the slice's
thresholds — or why it is not gated (the summary renders them from the
results file: :func:`report.render.slices`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.gate.slices import MAX_SLICES, SliceResult, questions, view_moved
from rag_corpus_check.gate.thresholds import ThresholdResult
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.report.changes import signed
from rag_corpus_check.report.markdown import fmt
from rag_corpus_check.report.render import versus

if TYPE_CHECKING:  # the comparison's records: only with a base compared
    from rag_corpus_check.gate.compare import Delta, View


def _results(out: Outcome) -> list[SliceResult]:
    return out.slices.results if out.slices is not None else []


# ------------------------------------------------------------------ results


def slices_json(out: Outcome) -> dict | None:
    """The `slices` of the results file (None: nothing was measured)."""
    if out.slices is None:
        return None
    return {"slices": list(map(_slice_json, out.slices.results)), "left_out": len(out.slices.left_out),
            "left_out_tags": out.slices.left_out, "max_slices": MAX_SLICES}


def _slice_json(s: SliceResult) -> dict:
    return {
        "name": s.name, "questions": s.questions, "in_means": s.counted,
        "metrics": {str(m): v for m, v in s.means.items()}, "min_questions": s.rule.min_questions,
        "gated": s.gated, "passed": s.passed, "note": s.not_gated(),
        "thresholds": list(map(_threshold_json, s.thresholds)), "views": list(map(_view_json, s.views)),
    }


def _view_json(v: View) -> dict:
    return {"gold": v.gold, "paired_questions": v.paired, "deltas": list(map(_delta_json, v.deltas))}


def _delta_json(d: Delta) -> dict:
    return {"measure": str(d.measure), "base": d.base, "head": d.head, "delta": d.delta, "p_value": d.p_value,
            "paired_questions": d.paired_questions, "permutations": d.permutations, "conclusive": d.conclusive}


def _threshold_json(t: ThresholdResult) -> dict:
    return {"measure": str(t.measure), "limit": t.limit, "value": t.value, "passed": t.passed, "max_drop": t.max_drop,
            "note": t.note, "value_on_base_gold": t.on_base_gold}


# ------------------------------------------------------------------ console


def console_lines(out: Outcome) -> list[str]:
    """The slices with thresholds (met, failed, or too small to gate) and,
    with a base, those whose means moved."""
    lines = [line for s in filter(_shown, _results(out)) for line in _console_slice(s)]
    return ["  slices:", *lines] if lines else []


def _shown(s: SliceResult) -> bool:
    return bool(s.rule.thresholds) or s.moved


_WORD = {True: "ok  ", False: "FAIL", None: "----"}


def _console_slice(s: SliceResult) -> list[str]:
    note = s.not_gated()
    return ([f"    {_WORD[s.passed]} {safe_text(s.name, 64)} ({questions(s.counted)} in the means)"]
            + list(map(_threshold_line, s.thresholds)) + ([f"      {note}"] if note else [])
            + [f"      {line}" for line in _view_lines(s.views)])


def _threshold_line(t: ThresholdResult) -> str:
    on_base = f"  (base's gold set: {versus(t.on_base_gold, t.limit)})" if t.base_gold_checked else ""
    note = f"  ({safe_text(t.note, 400)})" if t.note else ""
    return f"      {_WORD[t.passed]} {str(t.measure):<12} {versus(t.value, t.limit)}  >= {t.limit:g}{on_base}{note}"


def _view_lines(views: list[View]) -> list[str]:
    """A line per gold set whose means moved; one for both when they say the same."""
    said = [(v, _moves(v)) for v in views if view_moved(v)]
    if len(said) == 2 and said[0][1] == said[1][1]:
        return [f"both gold sets, {said[0][0].paired} in both: {said[0][1]}"]
    return [f"{v.gold}'s gold set, {v.paired} in both: {moves}" for v, moves in said]


def _moves(v: View) -> str:
    return "; ".join(f"{d.measure} {fmt(d.base)} -> {fmt(d.head)} {_delta_cell(d)}" for d in v.deltas if d.delta)


def _delta_cell(d: Delta) -> str:
    """Δ, and the paired test's p where something moved."""
    if d.p_value is None or not d.delta:
        return signed(d.delta)
    return f"{signed(d.delta)}, p {d.p_value:.3f}" + ("" if d.conclusive else " (too few questions)")
