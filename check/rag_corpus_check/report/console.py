"""The terminal summary for local dry runs (and the GitHub log).

Every line starts with text of our own, so untrusted ids never begin a line
(the runner reads ``::`` at the start of a line as a command)."""

from __future__ import annotations

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.gate.rules import OVERRIDE
from rag_corpus_check.gate.terms import GOLD_WORDS, SAME_GOLD
from rag_corpus_check.metrics.measures import headline
from rag_corpus_check.pipeline.outcome import (
    ERROR,
    FAIL,
    INVALID,
    PARTIAL,
    PASS,
    Outcome,
    gate_reasons,
)
from rag_corpus_check.report import render
from rag_corpus_check.report.by_slice import console_lines as slice_lines
from rag_corpus_check.report.changes import (
    changed_by_line,
    dropped,
    moved_documents,
    pool_command,
    signed,
    view_title,
)
from rag_corpus_check.report.confidence import console_delta, console_interval, console_lines
from rag_corpus_check.report.conventions import convention_lines
from rag_corpus_check.report.markdown import fmt
from rag_corpus_check.report.results import results_dict
from rag_corpus_check.report.rule_lines import rules_line
from rag_corpus_check.report.sources import source_line, supplied_line
from rag_corpus_check.report.summary import gold_set_note, worst

WORD = {PASS: "PASSED", FAIL: "FAILED (quality gate)", INVALID: "INVALID INPUT", ERROR: "ERROR (internal)",
        PARTIAL: "SHARD MEASURED (merge the shards for the verdict)"}


def render_console(out: Outcome, results_path: str | None, summary_path: str | None, data: dict | None = None) -> str:
    """The terminal's text; ``data``: the results file's (:func:`results_dict`
    of ``out`` when not given), which the rules, the run source and the
    conventions are rendered from."""
    data = results_dict(out) if data is None else data
    lines = (_head(out, data) + _why_failed(out) + _comparison(out, data) + _thresholds(out, data)
             + slice_lines(out) + _means(out))
    lines += _problem_lines(out)
    lines += _verdict_note(out) + _conventions(data)
    lines += _path_line("results", results_path) + _path_line("summary", summary_path)
    return "\n".join(lines) + "\n"


def _verdict_note(out: Outcome) -> list[str]:
    if out.verdict == INVALID:
        return ["  no metrics were computed: fix the input problems above"]
    if out.verdict == ERROR:
        return [f"  internal error during {out.stage or 'the check'}; this is a bug, not your input"]
    return []


def _conventions(data: dict) -> list[str]:
    if not data["conventions"]:
        return []
    return ["  conventions:"] + [f"    - {c}" for c in convention_lines(data["conventions"])]


def _path_line(what: str, path: str | None) -> list[str]:
    return [f"  {what}: {safe_text(path, 500)}"] if path else []


def _why_failed(out: Outcome) -> list[str]:
    if out.verdict != FAIL:
        return []
    return ["  the gate failed because:"] + [f"    - {safe_text(r, 500)}" for r in gate_reasons(out)]


def verdict_line(out: Outcome) -> str:
    """The console's first line (all that --quiet prints). A pull request
    that overrode the rules says so here, where nobody reads past."""
    advisory = " [advisory]" if out.advisory and out.verdict == FAIL else ""
    override = (" -- RULES OVERRIDDEN BY THIS PR (rules-source head-override: gated on its own config, not the "
                "base's)") if out.rules_source == OVERRIDE else ""
    return f"rag-corpus-check: {WORD[out.verdict]}{advisory}{override}"


def _head(out: Outcome, data: dict) -> list[str]:
    lines = [verdict_line(out), "  " + _checked(data)]
    rules = rules_line(data, safe_text)
    if rules:
        lines.append("  " + rules)
    source = data["run_source"]
    for line in (source_line(source, esc=safe_text, code=str), supplied_line(source, esc=safe_text)):
        if line:
            lines.append("  " + line)
    return lines


def _checked(data: dict) -> str:
    """``commit: <sha>``, or ``checked: working tree, uncommitted changes to … on top of commit <sha>``."""
    words = render.checked_words(data, safe_text, str)
    return "commit: " + words.removeprefix("commit ") if words.startswith("commit ") else "checked: " + words


def _comparison(out: Outcome, data: dict) -> list[str]:
    """With --base: the relevant documents the PR changed and the questions
    it removed, the means base → head (once when the gold set did not
    change) and the questions that dropped most (what the summary's "What
    changed in this PR" opens with)."""
    cmp_ = out.base.comparison if out.base else None
    notes = [f"  base: {safe_text(n, 300)}" for n in (out.base.notes if out.base else [])]
    if cmp_ is None:
        return notes
    lines = [f"  compared with the base {safe_text(cmp_.base_sha[:12], 40)}:"]
    compared = data.get("comparison") or {}  # the results file's comparison
    lines += _changed_lines(compared.get("changed_relevant") or []) + _removed_lines(compared)
    lines.append(f"   {changed_by_line(cmp_.changed_by).lower()}")
    gated = {t.measure for t in out.thresholds}
    same = render.same_gold_sets(data)
    for v in cmp_.views[:1 if same else None]:
        lines.append(f"   judged by {SAME_GOLD}: {v.paired} questions:" if same else f"   {view_title(v).lower()}:")
        lines += [f"    {str(d.measure):<12} {fmt(d.base)} -> {fmt(d.head)}  ({signed(d.delta)})"
                  + console_delta(d, gated) for d in v.deltas]
    lines += console_lines(out, pool_command(out))
    return lines + notes + _drop_lines(dropped(cmp_)) + _pool_lines(out, cmp_.unjudged_new_docs)


def _changed_lines(docs: list[dict], shown: int = 10) -> list[str]:
    """The relevant documents the PR changed, how each moved, and the questions that dropped."""
    if not docs:
        return []
    lines = [f"   {render.CHANGED_TITLE} ({len(docs)}):"]
    for e in docs[:shown]:
        moves = "; ".join(f"{safe_text(q['query_id'], 40)} {render.position(q['base_position'])} -> "
                          f"{render.position(q['head_position'])}" for q in e["questions"][:5])
        drops = [q for q in e["questions"] if q["delta"] is not None and q["delta"] < 0]
        fell = ", ".join(f"{safe_text(q['query_id'], 40)} {q['measure']} {signed(q['delta'])}" for q in drops[:5])
        lines.append(f"    - {safe_text(e['doc_id'], 60)} ({_change_words(e)}): {moves}"
                     + (f"; dropped: {fell}" if fell else ""))
    return lines + ([f"    - ... and {len(docs) - shown} more in the summary"] if len(docs) > shown else [])


def _change_words(e: dict) -> str:
    """How a relevant document changed: deleted, edited, and its status base -> head when that changed."""
    if not e["status"]:
        return e["change"]
    moved = f"status {safe_text(e['status'][0], 40)} -> {safe_text(e['status'][1], 40)}"
    return moved if e["change"] == "status" else f"{e['change']}, {moved}"


def _removed_lines(data: dict) -> list[str]:
    """The questions the PR removed from the gold set, and what the removal alone did to the means."""
    removed = data.get("removed") or []
    if not removed:
        return []
    shown = ", ".join(safe_text(q, 40) for q in removed[:20]) + (f" and {len(removed) - 20} more"
                                                               if len(removed) > 20 else "")
    lines = [f"   {render.REMOVED_TITLE} ({len(removed)}): {shown}"]
    effect = data.get("removed_effect") or {}
    if effect:
        lines.append("    the removal alone moved the head's means by: " + ", ".join(
            f"{m} {signed(v['delta'])} ({fmt(v['with_removed'])} -> {fmt(v['head'])})" for m, v in effect.items()))
    return lines


def _pool_lines(out: Outcome, unjudged: list[dict]) -> list[str]:
    """New documents in the top K that nobody judged, and the command that
    writes the worksheet to judge them."""
    if not unjudged:
        return []
    return [f"  {len(unjudged)} questions have new documents in the top K without a judgement; to judge them:",
            f"    {pool_command(out)}"]


def _drop_lines(drops: list) -> list[str]:
    head = [f"  questions that dropped most ({len(drops)}):"] if drops else []
    return head + [f"    - {safe_text(q.query_id, 40):<16} {q.measure} {fmt(q.base)} -> {fmt(q.head)}  "
                   f"{safe_text(moved_documents(q, esc=str, limit=2), 300)}" for q in drops[:5]]


def _thresholds(out: Outcome, data: dict) -> list[str]:
    """Each threshold; its value on the base's gold set too when that set
    differs from the head's; a threshold this PR loosened, marked."""
    lines = ["  thresholds:"] if out.thresholds else []
    same_gold, loosened = render.same_gold_sets(data), render.loosened_rules(data)
    for t in out.thresholds:
        change = render.loosening({"measure": str(t.measure)}, loosened)
        mark = f"  -- FAIL: {safe_text(change, 200)} in this PR without a new `rule_change_reason`" if change else ""
        lines += [_threshold_line(t, same_gold) + mark, *console_interval(out, t.measure)]
    return lines + _per_question_line(out, same_gold)


def _threshold_line(t, same_gold: bool = False) -> str:
    note = f"  ({safe_text(t.note)})" if t.note else ""
    on_base = f"  (base's gold set: {render.versus(t.on_base_gold, t.limit)})" if t.base_gold_checked and not same_gold else ""
    return f"    {'ok  ' if t.passed else 'FAIL'} {str(t.measure):<12} {render.versus(t.value, t.limit)}  >= {t.limit:g}{on_base}{note}"


def _per_question_line(out: Outcome, same_gold: bool) -> list[str]:
    rule = out.per_question
    if rule is None:
        return []
    counts = ", ".join(f"{len(qs)} judged by {GOLD_WORDS.get(gold, render.BOTH_GOLD)}"
                       for gold, qs in render.once_per_gold(rule.dropped, same_gold).items())
    return [f"    {'ok  ' if rule.passed else 'FAIL'} per_question: questions that lost more than "
            f"{rule.rule.max_drop:g} of {rule.rule.measure}: {counts} (at most {rule.rule.max_questions})"]


def _means(out: Outcome) -> list[str]:
    ev, cfg = out.evaluation, out.config
    if not ev or not cfg:
        return []
    lines = [f"  means over {ev.counted} questions{gold_set_note(out)}:", "    " + "   ".join(f"{k} {fmt(v)}" for k, v in ev.means.items())]
    lines += _worst(out)
    if ev.excluded:
        shown = ", ".join(safe_text(q, 40) for q in ev.excluded[:20])
        more = f" and {len(ev.excluded) - 20} more" if len(ev.excluded) > 20 else ""
        lines.append(f"  excluded (no relevant document in gold): {shown}{more}")
    if ev.unanswerable:
        shown = ", ".join(safe_text(q, 40) for q in ev.unanswerable[:20])
        more = f" and {len(ev.unanswerable) - 20} more" if len(ev.unanswerable) > 20 else ""
        lines.append(f"  unanswerable by design (answerable: false in gold; not in the means): {shown}{more}")
    return lines


def _worst(out: Outcome) -> list[str]:
    assert out.config is not None
    key, rows = worst(out)
    lines = [f"  worst questions by {key}:"] if rows else []
    for q in rows:
        vals = "  ".join(f"{k} {fmt(q.values.get(k))}" for k in headline(out.config.k))
        lines.append(f"    - {safe_text(q.query_id, 40):<16} {vals}" + ("" if q.in_run else "  (not in run)"))
    return lines


def _problem_lines(out: Outcome) -> list[str]:
    problems = out.problems
    if not problems.items:
        return []
    lines = [f"  problems: {problems.error_count()} errors, {problems.warning_count()} warnings"]
    for p in problems.listed():
        sid = f" [{p.id}]" if p.id else ""
        lines.append(f"    - {p.severity}: {safe_text(p.kind, 20)}: {safe_text(p.location(), 200)}{sid}: "
                     f"{safe_text(p.message, 500)}")
    lines += [f"    - ... {n} more in {safe_text(k, 200)}" for k, n in problems.dropped.items()]
    return lines


def render_problems(out: Outcome) -> str:
    return "".join(line + "\n" for line in _problem_lines(out))
