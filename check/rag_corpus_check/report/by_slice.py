"""Slices in the results file, the console and the summary: per tag of the
gold set, the means, base → head per gold set with the paired test, and the
slice's thresholds — or why it is not gated."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.gate.slices import MAX_SLICES, SliceResult, questions, view_moved
from rag_corpus_check.gate.terms import GOLD_SETS
from rag_corpus_check.gate.thresholds import ThresholdResult
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.report.changes import signed
from rag_corpus_check.report.markdown import Summary, cell, fmt

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
    on_base = f"  (base's gold set: {fmt(t.on_base_gold)})" if t.base_gold_checked else ""
    note = f"  ({safe_text(t.note, 400)})" if t.note else ""
    return f"      {_WORD[t.passed]} {str(t.measure):<12} {fmt(t.value)}  >= {t.limit:g}{on_base}{note}"


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


# ------------------------------------------------------------------ summary


def add_section(s: Summary, out: Outcome) -> None:
    """The "Slices" section: a table of means (with the gate), the slices'
    thresholds, and with a base one table of changes per gold set."""
    results = _results(out)
    if not results:
        return
    measures = list(results[0].means)
    s.heading(f"Slices ({len(results)})", 3)
    s.para("Each tag of the gold questions is a slice: the means over its questions (the head's gold set). A "
           "slice with thresholds under `slices:` in the config is gated on them when it has enough questions.")
    s.table(["slice", "questions", *(f"`{m}`" for m in measures), "gate"],
            [[cell(r.name), str(r.counted), *(fmt(r.means[m]) for m in measures), _gate_cell(r)] for r in results])
    _threshold_table(s, results)
    _change_tables(s, results)
    _left_out(s, out)


def _gate_cell(r: SliceResult) -> str:
    if r.passed is None:
        return r.not_gated() or "not gated (no thresholds)"  # our words and numbers only
    return "✅" if r.passed else "❌"


def _threshold_table(s: Summary, results: list[SliceResult]) -> None:
    rows = [_threshold_row(r.name, t) for r in results for t in r.thresholds]
    if rows:
        s.table(["slice", "measure", "value", "threshold", "max_drop", "result"], rows)


def _threshold_row(name: str, t: ThresholdResult) -> list[str]:
    note = f" ({cell(t.note, 300)})" if t.note else ""
    drop = "—" if t.max_drop is None else f"{t.max_drop:g}"
    return [cell(name), f"`{t.measure}`", fmt(t.value), f"≥ {t.limit:g}", drop, ("✅" if t.passed else "❌") + note]


_BOTH = "each revision's own gold set and by the base's (the same figures)"


def _change_tables(s: Summary, results: list[SliceResult]) -> None:
    """Base → head per slice, a table per gold set compared (one for both
    when they give every slice the same figures)."""
    tables = [t for i, gold in enumerate(GOLD_SETS) if (t := _change_table(gold, i, results))]
    if len(tables) == 2 and tables[0][1] == tables[1][1]:
        tables = [(_BOTH, tables[0][1])]
    for title, rows in tables:
        s.para(f"**Slices, base → head, judged by {title}** (Δ of the means over the slice's questions in both "
               "revisions; p of the paired randomization test, as for the whole set)")
        s.table(rows[0], rows[1:])


def _change_table(gold: str, i: int, results: list[SliceResult]) -> tuple[str, list[list[str]]] | None:
    """The title and the rows (the header first) of the table of the
    ``i``-th gold set's views; None when no slice was compared."""
    views = [(r.name, r.views[i]) for r in results if len(r.views) > i]
    if not views:
        return None
    measures = list(results[0].means)  # the measures of every view's deltas too
    rows = [[cell(name), str(v.paired), *_delta_cells(v, measures)] for name, v in views]
    return GOLD_SETS[gold], [["slice", "in both", *(f"Δ `{m}`" for m in measures)], *rows]


def _delta_cells(v: View, measures: list) -> list[str]:
    by = {d.measure: d for d in v.deltas}
    return [_delta_cell(by[m]) if m in by else "—" for m in measures]


# The summary names this many of the tags left out; the results file, all.
SHOWN_LEFT_OUT = 100


def _left_out(s: Summary, out: Outcome) -> None:
    """The tags no config names that are past MAX_SLICES, by name."""
    left_out = out.slices.left_out if out.slices is not None else []
    if not left_out:
        return
    names = ", ".join(f"`{safe_text(t, 64)}`" for t in left_out[:SHOWN_LEFT_OUT])
    rest = len(left_out) - SHOWN_LEFT_OUT
    more = f", and {rest} more (every one under `slices.left_out_tags` in the results file)" if rest > 0 else ""
    s.para(f"{len(left_out)} more tags are not shown: no config names them, and {MAX_SLICES} slices of such tags "
           f"(the most carried) are shown; every slice a config names is shown and gated. Not shown: {names}{more}.")
