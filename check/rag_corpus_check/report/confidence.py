"""Intervals, label-debt bounds and the paired test's gate, as the summary,
the terminal and the results file show them (computed in
:mod:`pipeline.uncertainty`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_corpus_check.gate import bootstrap
from rag_corpus_check.gate.bootstrap import Interval
from rag_corpus_check.gate.label_debt import ASSUMPTION, Explained, explained_drops
from rag_corpus_check.gate.terms import ADDED_FAMILY, BASE_FAMILY, FAMILIES, GOLD_WORDS, HEAD_FAMILY
from rag_corpus_check.metrics.measures import Measure
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.report.markdown import Summary, fmt

if TYPE_CHECKING:  # the comparison and the paired test: only with a base compared
    from rag_corpus_check.gate.compare import Delta

CI = f"{bootstrap.LEVEL:.0%} interval"
IF_RELEVANT = "if every unjudged top-k document were relevant"
SHORT = (f"{bootstrap.LEVEL:.0%} CI", "unjudged as relevant")  # the terminal's words for the two


def interval(i: Interval | None, sign: str = "") -> str:
    """``[low, high]``; with ``sign="+"`` signed (a delta's)."""
    return "—" if i is None else f"[{i.low:{sign}.4f}, {i.high:{sign}.4f}]"


def means_note(results: dict) -> str | None:
    """What the rows under the means are (``results``: the results file's data)."""
    debt, conventions = results["label_debt"], results["conventions"]
    if debt is None:
        return None
    return (f"{CI}: {bootstrap.METHOD}. {IF_RELEVANT[0].upper() + IF_RELEVANT[1:]}: the mean with {ASSUMPTION} — "
            f"{debt['unjudged_in_top_k']} unjudged documents are in the top {conventions['k'] if conventions else 'K'}"
            " of the questions in the means; where this row is far above the means, missing labels hold them down.")


def delta_cells(d: Delta) -> list[str]:
    b = d.bound
    bound = "—" if b is None or b.delta is None else f"{b.delta:+.4f}"
    return [interval(d.interval, "+"), bound]


def delta_json(d: Delta) -> dict:
    base, head = d.means_intervals or (None, None)
    return {"interval": d.interval.to_json() if d.interval else None,
            "base_interval": base.to_json() if base else None, "head_interval": head.to_json() if head else None,
            "if_unjudged_relevant": d.bound.to_json() if d.bound else None}


def explained(out: Outcome, every: bool = False) -> list[Explained]:
    """The gated drops that new unjudged top-k documents could explain: in
    every gold set compared, or (to show) each measure once, in the first."""
    cmp_ = out.base.comparison if out.base is not None else None
    found = explained_drops(out.config.thresholds, cmp_) if cmp_ is not None and out.config is not None else []
    return found if every else _first_per_measure(found)


def _first_per_measure(found: list[Explained]) -> list[Explained]:
    first: dict[Measure, Explained] = {}
    for e in found:
        first.setdefault(e.measure, e)
    return list(first.values())


def pool_for(out: Outcome, e: Explained, command: str) -> str:
    """``command`` (the pool command for this PR), deep enough for the measure."""
    assert out.config is not None
    depth = e.measure.k
    return command + (f" --depth {depth}" if depth > out.config.k else "")


def explained_line(e: Explained) -> str:
    return (f"`{e.measure}` dropped {e.delta:+.4f} judged by {GOLD_WORDS[e.gold]}; {IF_RELEVANT} the change "
            f"would be {e.bound:+.4f}: {e.message()}")


def add_explained(s: Summary, drops: list[dict]) -> None:
    """The gated drops new unjudged top-k documents could explain (the
    results file's `label_debt_drops`), each measure once, in the first
    gold set it is in, with the pool command deep enough for it."""
    first: dict[str, dict] = {}
    for e in drops:
        first.setdefault(e["measure"], e)
    for e in first.values():
        s.para(f"> [!IMPORTANT]\n> {e['message']}:")
        s.code(e["command"])


def add_significance(s: Summary, sig: dict | None) -> None:
    """The paired test's gate (the results file's `significance`)."""
    if sig is None:
        return
    tested = sig["tested"]
    s.para(f"{'✅' if sig['passed'] else '❌'} Paired test gate (`significance.alpha` {sig['alpha']:g}, Holm-corrected "
           f"across {_families(tested)}, per gold set): a measure fails when it dropped and its adjusted "
           "p-value is at most alpha. Questions whose value did not change do not move the p-value.")
    added = any(t["family"] == ADDED_FAMILY for t in tested)
    if tested:
        s.table(["gold set", *(["family"] if added else []), "measure", "Δ", "p", "Holm-adjusted p", "result"],
                [_tested_row(t, added) for t in tested])
    for note in sig["notes"]:
        s.para(f"> [!NOTE]\n> {note}")


def _families(tested: list[dict]) -> str:
    """The families the summary names: one, or the base's and the added one."""
    count = {f: len({t["measure"] for t in tested if t["family"] == f}) for f in FAMILIES}
    if not count[ADDED_FAMILY]:
        return f"the {count[HEAD_FAMILY] + count[BASE_FAMILY]} measures with a threshold"
    return (f"the base's {count[BASE_FAMILY]} measures with a threshold, and apart from them the "
            f"{count[ADDED_FAMILY]} this pull "
            "request added a threshold on")


def _tested_row(t: dict, family: bool) -> list[str]:
    return [t["gold"], *([t["family"]] if family else []), f"`{t['measure']}`", f"{t['delta']:+.4f}",
            f"{t['p_value']:.4f}", f"{t['adjusted_p_value']:.4f}", "❌ significant drop" if t["failed"] else "✅"]


def results_json(out: Outcome) -> dict:
    """The results file's `confidence`, `label_debt` and `significance`."""
    return {"confidence": _confidence_json(out), "label_debt": out.debt.to_json() if out.debt else None,
            "significance": out.significance.to_json() if out.significance else None}


def _confidence_json(out: Outcome) -> dict | None:
    if not out.intervals:
        return None
    return {"method": bootstrap.METHOD, "level": bootstrap.LEVEL, "seed": bootstrap.SEED,
            "means": {str(m): i.to_json() if i else None for m, i in out.intervals.items()}}


def console_interval(out: Outcome, m: Measure) -> list[str]:
    """A gated measure's interval and bound, the line under its threshold's."""
    parts = []
    i = out.intervals.get(m)
    if i is not None:
        parts.append(f"{SHORT[0]} {interval(i)}")
    bound = out.debt.means.get(m) if out.debt is not None else None
    if bound is not None:
        parts.append(f"{SHORT[1]}: {fmt(bound)}")
    return [f"         {'; '.join(parts)}"] if parts else []


def console_delta(d: Delta, gated: set[Measure]) -> str:
    """A gated measure's delta interval and bound, for its line."""
    if d.measure not in gated:
        return ""
    cells = delta_cells(d)
    return f"  {SHORT[0]} {cells[0]}; {SHORT[1]}: {cells[1]}"


def console_lines(out: Outcome, command: str | None) -> list[str]:
    """The terminal's lines for drops that could be label debt and for the paired test's gate."""
    return _explained_lines(out, command) + _significance_lines(out)


def _explained_lines(out: Outcome, command: str | None) -> list[str]:
    lines = []
    for e in explained(out):
        lines += [f"  {explained_line(e)}:"] + ([f"    {pool_for(out, e, command)}"] if command else [])
    return lines


def _significance_lines(out: Outcome) -> list[str]:
    sig = out.significance
    if sig is None:
        return []
    return [f"  paired test gate (significance.alpha {sig.alpha:g}, Holm): {'ok' if sig.passed else 'FAIL'}, "
            f"{len(sig.tested)} tested"] + [f"    - {note}" for note in sig.notes()]
