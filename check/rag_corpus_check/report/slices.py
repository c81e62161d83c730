"""Slices in the results file, the console and the summary: per tag of the
gold set, the means, base → head per gold set with the paired test, and the
slice's thresholds — or why it is not gated."""

from __future__ import annotations

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.gate.compare import GOLD_SETS
from rag_corpus_check.gate.slices import MAX_SLICES, SliceResult, questions
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.report.changes import signed
from rag_corpus_check.report.markdown import Summary, cell, fmt

# ------------------------------------------------------------------ results


def slices_json(out: Outcome) -> dict | None:
    """The `slices` of the results file (None: nothing was measured)."""
    if out.slices is None:
        return None
    return {"slices": [_slice_json(s) for s in out.slices.results], "left_out": out.slices.left_out,
            "max_slices": MAX_SLICES}


def _slice_json(s: SliceResult) -> dict:
    rule = s.rule
    return {
        "name": s.name, "questions": s.questions, "in_means": s.counted,
        "metrics": {str(m): v for m, v in s.means.items()},
        "min_questions": rule.min_questions if rule else None,
        "gated": s.gated, "passed": s.passed, "note": s.not_gated(),
        "thresholds": [_threshold_json(t) for t in s.thresholds],
        "views": [{"gold": v.gold, "paired_questions": v.paired,
                   "deltas": [{"measure": str(d.measure), "base": d.base, "head": d.head, "delta": d.delta,
                               "p_value": d.p_value, "paired_questions": d.paired_questions,
                               "permutations": d.permutations, "conclusive": d.conclusive} for d in v.deltas]}
                  for v in s.views],
    }


def _threshold_json(t) -> dict:
    return {"measure": str(t.measure), "limit": t.limit, "value": t.value, "passed": t.passed, "max_drop": t.max_drop,
            "note": t.note, "value_on_base_gold": t.on_base_gold}


# ------------------------------------------------------------------ console


def console_lines(out: Outcome) -> list[str]:
    """The slices with a gate (met, failed, or too small to gate) and, with
    a base, those whose means moved."""
    shown = [s for s in (out.slices.results if out.slices else []) if s.rule is not None or s.moved]
    lines = ["  slices:"] if shown else []
    for s in shown:
        lines.append(f"    {_gate_word(s)} {safe_text(s.name, 64)} ({questions(s.counted)} in the means)")
        lines += [_threshold_line(t) for t in s.thresholds]
        note = s.not_gated()
        lines += [f"      {note}"] if note else []
        lines += [f"      {line}" for line in _view_lines(s.views)]
    return lines


def _view_lines(views: list) -> list[str]:
    """A line per gold set whose means moved; one for both when they say the same."""
    lines = [_view_line(v) for v in views if _moved(v)]
    if len(lines) == 2 and lines[0].partition(":")[2] == lines[1].partition(":")[2]:
        return [f"both gold sets, {views[0].paired} in both:" + lines[0].partition(":")[2]]
    return lines


def _threshold_line(t) -> str:
    on_base = f"  (base's gold set: {fmt(t.on_base_gold)})" if t.base_gold_checked else ""
    note = f"  ({safe_text(t.note, 400)})" if t.note else ""
    return f"      {'ok  ' if t.passed else 'FAIL'} {str(t.measure):<12} {fmt(t.value)}  >= {t.limit:g}{on_base}{note}"


def _gate_word(s: SliceResult) -> str:
    return {True: "ok  ", False: "FAIL", None: "----"}[s.passed]


def _moved(v) -> bool:
    return any(d.delta for d in v.deltas)


def _view_line(v) -> str:
    deltas = "  ".join(f"{d.measure} {fmt(d.base)} -> {fmt(d.head)} ({signed(d.delta)}{_p(d)})" for d in v.deltas
                       if d.delta)
    return f"{v.gold}'s gold set, {v.paired} in both: {deltas}"


def _p(d) -> str:
    if d.p_value is None:
        return ""
    return f", p {d.p_value:.3f}" + ("" if d.conclusive else " too few")


# ------------------------------------------------------------------ summary


def add_section(s: Summary, out: Outcome) -> None:
    """The "Slices" section: a table of means (with the gate), the failed
    and ungated thresholds, and with a base one table of changes per gold set."""
    results = out.slices.results if out.slices else []
    if not results:
        return
    measures = list(results[0].means)
    s.heading(f"Slices ({len(results)})", 3)
    s.para("Each tag of the gold questions is a slice: the means over its questions (the head's gold set)"
           + ("; a slice named under `slices:` in the config is gated on its own thresholds." if out.config and
              out.config.slices else "."))
    s.table(["slice", "questions", *(f"`{m}`" for m in measures), "gate"],
            [[cell(r.name), str(r.counted), *(fmt(r.means[m]) for m in measures), _gate_cell(r)] for r in results])
    _threshold_rows(s, results)
    _change_tables(s, results)
    if out.slices and out.slices.left_out:
        s.para(f"{out.slices.left_out} more tags are not shown (at most {MAX_SLICES} slices: those the config "
               "names, then the most carried).")


def _gate_cell(r: SliceResult) -> str:
    if r.passed is None:
        return r.not_gated() or "not gated (no thresholds)"  # our words and numbers only
    return "✅" if r.passed else "❌"


def _threshold_rows(s: Summary, results: list[SliceResult]) -> None:
    rows = [[cell(r.name), f"`{t.measure}`", fmt(t.value), f"≥ {t.limit:g}",
             "—" if t.max_drop is None else f"{t.max_drop:g}", ("✅" if t.passed else "❌") + _note(t)]
            for r in results for t in sorted(r.thresholds, key=lambda t: t.passed is not False)]
    if rows:
        s.table(["slice", "measure", "value", "threshold", "max_drop", "result"], rows)


def _note(t) -> str:
    return f" ({cell(t.note, 300)})" if t.note else ""


def _change_tables(s: Summary, results: list[SliceResult]) -> None:
    """Base → head per slice, one table per gold set compared (the views
    are in the order of GOLD_SETS): Δ and p per measure."""
    for i, gold in enumerate(GOLD_SETS):
        compared = [r for r in results if len(r.views) > i]
        measures = [d.measure for d in next((r.views[i].deltas for r in compared if r.views[i].deltas), [])]
        if not measures:
            continue
        s.para(f"**Slices, base → head, judged by {GOLD_SETS[gold]}** (Δ of the means over the slice's questions "
               "in both revisions; p of the paired randomization test, as for the whole set)")
        s.table(["slice", "in both", *(f"Δ `{m}`" for m in measures)],
                [[cell(r.name), str(r.views[i].paired), *_delta_cells(r.views[i], measures)] for r in compared])


def _delta_cells(v, measures: list) -> list[str]:
    by = {d.measure: d for d in v.deltas}
    return [_delta_cell(by[m]) if m in by else "—" for m in measures]


def _delta_cell(d) -> str:
    if d.p_value is None or not d.delta:
        return signed(d.delta)
    return f"{signed(d.delta)} (p {d.p_value:.3f}{'' if d.conclusive else ', too few'})"
