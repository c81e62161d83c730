"""The terminal summary for local dry runs (and the GitHub log).

Every line starts with text of our own, so untrusted ids never begin a line
(the runner reads ``::`` at the start of a line as a command)."""

from __future__ import annotations

from rag_corpus_check.pipeline import ERROR, FAIL, INVALID, PARTIAL, PASS, Outcome
from rag_corpus_check.report.conventions import convention_lines
from rag_corpus_check.report.markdown import fmt
from rag_corpus_check.report.retrieval import run_source_line
from rag_corpus_check.report.rules import rules_line
from rag_corpus_check.text import safe_text

WORD = {PASS: "PASSED", FAIL: "FAILED (quality gate)", INVALID: "INVALID INPUT", ERROR: "ERROR (internal)",
        PARTIAL: "SHARD MEASURED (merge the shards for the verdict)"}


def render_console(out: Outcome, results_path: str | None, summary_path: str | None) -> str:
    lines = []
    commit = out.context.commit or out.context.github_sha
    lines.append(f"rag-corpus-check: {WORD[out.verdict]}" + (" [advisory]" if out.advisory and out.verdict == FAIL else ""))
    lines.append(f"  commit: {commit or 'unknown (not a git checkout)'}")
    rules = rules_line(out, safe_text)
    if rules:
        lines.append("  " + rules)
    cfg, ev = out.config, out.evaluation
    source = run_source_line(out, esc=safe_text, code=str)
    if source:
        lines.append("  " + source)
    if out.thresholds:
        lines.append("  thresholds:")
        for t in out.thresholds:
            mark = "ok  " if t.passed else "FAIL"
            note = f"  ({safe_text(t.note)})" if t.note else ""
            lines.append(f"    {mark} {t.measure:<12} {fmt(t.value)}  >= {t.limit:g}{note}")
    if ev and cfg:
        lines.append(f"  means over {ev.counted} questions:")
        lines.append("    " + "   ".join(f"{k} {fmt(v)}" for k, v in ev.means.items()))
        key = f"nDCG@{cfg.k}"
        ok = sorted((q for q in ev.queries if q.status == "ok"), key=lambda q: (q.values.get(key), q.query_id))
        if ok and cfg.worst:
            lines.append(f"  worst questions by {key}:")
            for q in ok[: cfg.worst]:
                vals = "  ".join(
                    f"{k} {fmt(q.values.get(k))}" for k in (f"P@{cfg.k}", f"R@{cfg.k}", key, f"Judged@{cfg.k}")
                )
                lines.append(f"    - {safe_text(q.query_id, 40):<16} {vals}" + ("" if q.in_run else "  (not in run)"))
        if ev.excluded:
            shown = ", ".join(safe_text(q, 40) for q in ev.excluded[:20])
            more = f" and {len(ev.excluded) - 20} more" if len(ev.excluded) > 20 else ""
            lines.append(f"  excluded (no relevant document in gold): {shown}{more}")
    lines += _problem_lines(out)
    if out.verdict == INVALID:
        lines.append("  no metrics were computed: fix the input problems above")
    if out.verdict == ERROR:
        lines.append(f"  internal error during {out.stage or 'the check'}; this is a bug, not your input")
    if cfg:
        lines.append("  conventions:")
        lines += [f"    - {c}" for c in convention_lines(cfg)]
    if results_path:
        lines.append(f"  results: {safe_text(results_path, 500)}")
    if summary_path:
        lines.append(f"  summary: {safe_text(summary_path, 500)}")
    return "\n".join(lines) + "\n"


def _problem_lines(out: Outcome) -> list[str]:
    lines = []
    if out.problems.items:
        lines.append(f"  problems: {out.problems.error_count()} errors, {out.problems.warning_count()} warnings")
        for p in out.problems.errors + out.problems.warnings:
            sid = f" [{p.id}]" if p.id else ""
            lines.append(f"    - {p.severity}: {p.kind}: {safe_text(p.location(), 200)}{sid}: {safe_text(p.message, 500)}")
        for k, n in out.problems.dropped.items():
            lines.append(f"    - ... {n} more in {safe_text(k, 200)}")
    return lines


def render_problems(out: Outcome) -> str:
    return "".join(line + "\n" for line in _problem_lines(out))
