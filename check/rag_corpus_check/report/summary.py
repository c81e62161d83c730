"""The job summary (Markdown): verdict and failing rows first, details folded."""

from __future__ import annotations

import heapq

from rag_corpus_check.gate.rules import OVERRIDE
from rag_corpus_check.metrics.evaluate import OK
from rag_corpus_check.metrics.measures import Measure, headline
from rag_corpus_check.pipeline.outcome import (
    ERROR,
    FAIL,
    INVALID,
    PARTIAL,
    PASS,
    Outcome,
    environment,
    gate_reasons,
)
from rag_corpus_check.report.by_slice import add_section as add_slice_section
from rag_corpus_check.report.changes import add_sections as add_change_sections
from rag_corpus_check.report.confidence import mean_rows, means_note
from rag_corpus_check.report.conventions import convention_lines
from rag_corpus_check.report.markdown import Summary, cell, fmt
from rag_corpus_check.report.rule_lines import rules_line
from rag_corpus_check.report.sources import add_sections as add_retrieval_sections

ICON = {PASS: "✅", FAIL: "❌", INVALID: "⛔", ERROR: "💥", PARTIAL: "🧩"}
TITLE = {
    PASS: "passed",
    FAIL: "quality gate failed",
    INVALID: "invalid input",
    ERROR: "the check itself failed",
    PARTIAL: "shard measured (merge the shards for the verdict)",
}
MAX_QUESTIONS_SHOWN = 2000


def _commit_link(out: Outcome, sha: str) -> str:
    c = out.context
    if c.server_url and c.repository:
        return f"[`{sha}`]({c.server_url}/{c.repository}/commit/{sha})"
    return f"`{sha}`"


def build_summary(out: Outcome, results_path: str | None = None) -> Summary:
    s = Summary()
    _head(s, out)
    _thresholds(s, out)
    add_change_sections(s, out)  # on a pull request, what a reviewer reads first
    add_slice_section(s, out)
    _problems(s, out)
    add_retrieval_sections(s, out)
    _means(s, out)
    if out.config:
        s.heading("Conventions", 3)
        s.bullets(convention_lines(out.config, out.level))
    _provenance(s, out, results_path)
    return s


def _head(s: Summary, out: Outcome) -> None:
    """The verdict and the commit first: a green check on an old revision
    must be visible as such."""
    checked = out.context.commit or out.context.github_sha
    head = f"{ICON[out.verdict]} **rag-corpus-check: {TITLE[out.verdict]}**"
    if out.advisory and out.verdict == FAIL:
        head += " (advisory: the job is not failed)"
    if out.rules_source == OVERRIDE:
        head += " · ⚠️ rules overridden by this PR (`head-override`)"
    head += f" · commit {_commit_link(out, checked)}" if checked else " · commit unknown (not a git checkout)"
    s.heading(head, 2)
    lines = _event_lines(out, checked)
    rules = rules_line(out, cell, lambda t: f"`{t}`")
    if rules:
        lines.append(rules[0].upper() + rules[1:])
    if lines:
        s.para(" · ".join(lines))
    if out.rules_source == OVERRIDE:
        s.para("> [!CAUTION]\n> This pull request sets a new `rule_change_reason`: it was gated on its own config's "
               "thresholds and conventions, not the base's. Review the rule changes below before merging.")
    _commit_notes(s, out, checked)


def _event_lines(out: Outcome, checked: str | None) -> list[str]:
    c = out.context
    if c.event_name != "pull_request" or not c.event_head_sha:
        return []
    lines = [f"PR head {_commit_link(out, c.event_head_sha)}"]
    if c.github_sha and checked and c.github_sha != checked:
        lines.append(f"event merge commit {_commit_link(out, c.github_sha)}")
    return lines


def _commit_notes(s: Summary, out: Outcome, checked: str | None) -> None:
    c = out.context
    if checked and c.github_sha not in (None, checked):
        s.para(
            "> [!WARNING]\n> The workspace `HEAD` is not the commit this workflow run was "
            f"triggered for (`{c.github_sha}`); this result is for `{checked}`."
        )
    elif checked and c.event_name == "pull_request" and c.event_head_sha not in (None, checked):
        s.para("The checked commit is the merge of the PR head into its base, as `pull_request` checks out by default.")
    if out.verdict == ERROR:
        during = f" during **{out.stage}**" if out.stage else ""
        s.para(f"The check could not finish because of an internal error{during}. This is a bug or an environment "
               "fault, not a problem with your files; re-run the job, and report it if it persists.")


def _thresholds(s: Summary, out: Outcome) -> None:
    if not out.thresholds:
        return
    on_base = any(t.base_gold_checked for t in out.thresholds)
    rows = [_threshold_row(t, on_base) for t in sorted(out.thresholds, key=lambda t: t.passed is not False)]
    s.heading("Metrics vs thresholds", 3)
    columns = ["measure", "value (head's gold set)", "value (base's gold set)"] if on_base else ["measure", "value"]
    s.table(columns + ["threshold", "result"], rows)
    if on_base:
        s.para("With a base, every threshold holds on the head's own gold set and on the base's: the head's "
               "ranking is judged by the base's questions and labels too, so a change to the gold set can only "
               "add failures.")
    if out.verdict == FAIL:
        s.para("**The gate failed because:**")
        s.bullets([cell(r, 500) for r in gate_reasons(out)])


def _threshold_row(t, on_base: bool) -> list[str]:
    note = f" ({cell(t.note)})" if t.note else ""
    values = [fmt(t.value), fmt(t.on_base_gold)] if on_base else [fmt(t.value)]
    return [f"`{t.measure}`", *values, f"≥ {t.limit:g}", ("✅" if t.passed else "❌") + note]


def _problems(s: Summary, out: Outcome) -> None:
    problems = out.problems
    if not problems.items:
        return
    s.heading(f"Input problems ({problems.error_count()} errors, {problems.warning_count()} warnings)", 3)
    s.table(["severity", "kind", "where", "id", "problem"], [_problem_row(p) for p in problems.listed()])
    if problems.dropped:
        s.para("Not all problems are listed: " + ", ".join(f"{cell(k)}: {n} more" for k, n in problems.dropped.items())
               + ".")
    if out.verdict == INVALID:
        s.para("No metrics were computed: a verdict on invalid input would be meaningless.")


def _problem_row(p) -> list[str]:
    return [p.severity, cell(p.kind, 20), cell(p.location(), 200), cell(p.id) if p.id else "", cell(p.message, 400)]


def worst(out: Outcome) -> tuple[Measure, list]:
    """The measure questions are ranked by, and the worst ok questions."""
    assert out.config is not None and out.evaluation is not None
    key = Measure("nDCG", out.config.k)
    ok = (q for q in out.evaluation.queries if q.status == OK)
    # The questions are listed in natural order (evaluate, merge), and
    # nsmallest keeps that order among equal values, as a stable sort does.
    return key, heapq.nsmallest(max(out.config.worst, 0), ok, key=lambda q: q.values[key])


def gold_set_note(out: Outcome) -> str:
    """Which gold set the head's own means come from, when a base's is compared too."""
    compared = out.base is not None and out.base.comparison is not None
    return " (the head's gold set)" if compared else ""


def _means(s: Summary, out: Outcome) -> None:
    ev, cfg = out.evaluation, out.config
    if not ev or not cfg:
        return
    keys = list(ev.means)
    s.heading(f"Means over {ev.counted} questions{gold_set_note(out)}", 3)
    s.table(["", *(f"`{k}`" for k in keys)], mean_rows(out, keys))
    if note := means_note(out):
        s.para(note)
    _worst(s, out)
    if ev.excluded:
        s.heading(f"Excluded from the means ({len(ev.excluded)})", 3)
        s.para(
            f"These questions have no document with grade ≥ {cfg.min_grade} in gold (status `no_relevant`): "
            "recall and nDCG are undefined for them, never 0. Label a relevant document or remove the question."
        )
        s.para(", ".join(cell(q) for q in ev.excluded[:200]) + (" …" if len(ev.excluded) > 200 else ""))
    s.details(f"All {len(ev.queries)} questions", _all_questions(ev, keys))


def _worst(s: Summary, out: Outcome) -> None:
    assert out.config is not None
    key, rows = worst(out)
    if not rows:
        return
    head_keys = headline(out.config.k)
    texts = _question_texts(out)
    s.heading(f"Worst questions by {key}", 3)
    s.table(["question"] + (["text"] if texts is not None else []) + [f"`{k}`" for k in head_keys] + ["note"],
            [[cell(q.query_id)] + ([] if texts is None else [cell(texts.get(q.query_id) or "", 200)])
             + [fmt(q.values.get(k)) for k in head_keys] + ["" if q.in_run else "not in run"]
             for q in rows])


def _question_texts(out: Outcome) -> dict[str, str | None] | None:
    """question -> text, when the config's `report.show_text` allows it
    (off by default: corpora and questions are often private)."""
    if out.config is None or not out.config.show_text or out.gold is None:
        return None
    return {qid: q.text for qid, q in out.gold.queries.items()}


def _all_questions(ev, keys: list[Measure]) -> Summary:
    per_q = Summary().table(
        ["question", "status"] + [f"`{k}`" for k in keys],
        [[cell(q.query_id), q.status] + [fmt(q.values.get(k)) for k in keys] for q in ev.queries[:MAX_QUESTIONS_SHOWN]],
    )
    if len(ev.queries) > MAX_QUESTIONS_SHOWN:
        per_q.para(f"{len(ev.queries) - MAX_QUESTIONS_SHOWN} more questions are in the results file.")
    return per_q


def _provenance(s: Summary, out: Outcome, results_path: str | None) -> None:
    env = environment()
    items = [f"rag-corpus-check {cell(env['tool_version'])}, Python {cell(env['python'])}"]
    if out.corpus and out.corpus.fingerprint:
        items.append(f"corpus fingerprint `{out.corpus.fingerprint}`, {out.corpus.count} documents")
    if results_path:
        items.append(f"results file: {cell(results_path, 300)}")  # escaped, so no code span (it would show the escapes)
    if out.context.run_url:
        items.append(f"[workflow run]({out.context.run_url})")
    prov = Summary().bullets(items)
    if out.inputs:
        prov.table(["input", "read as", "sha-256"],
                   [[cell(k, 200), cell(out.formats.get(k, "config")), f"`{v}`"] for k, v in out.inputs.items()])
    s.details("Provenance", prov)
