"""The job summary (Markdown): verdict and failing rows first, details folded."""

from __future__ import annotations

from rag_corpus_check.pipeline import ERROR, FAIL, INVALID, PARTIAL, PASS, Outcome, environment
from rag_corpus_check.report.changes import add_sections as add_change_sections
from rag_corpus_check.report.conventions import convention_lines
from rag_corpus_check.report.markdown import Summary, cell, fmt
from rag_corpus_check.report.retrieval import add_sections as add_retrieval_sections
from rag_corpus_check.report.rules import rules_line

ICON = {PASS: "✅", FAIL: "❌", INVALID: "⛔", ERROR: "💥", PARTIAL: "🧩"}
TITLE = {
    PASS: "passed",
    FAIL: "quality gate failed",
    INVALID: "invalid input",
    ERROR: "the check itself failed",
    PARTIAL: "shard measured (merge the shards for the verdict)",
}


def _commit_link(out: Outcome, sha: str) -> str:
    c = out.context
    if c.server_url and c.repository:
        return f"[`{sha}`]({c.server_url}/{c.repository}/commit/{sha})"
    return f"`{sha}`"


def build_summary(out: Outcome, results_path: str | None = None) -> Summary:
    s = Summary()
    c = out.context
    checked = c.commit or c.github_sha
    head = f"{ICON[out.verdict]} **rag-corpus-check: {TITLE[out.verdict]}**"
    if out.advisory and out.verdict == FAIL:
        head += " (advisory: the job is not failed)"
    # The first line names the commit: a green check on an old revision must
    # be visible as such.
    head += f" · commit {_commit_link(out, checked)}" if checked else " · commit unknown (not a git checkout)"
    s.heading(head, 2)
    lines = []
    if c.event_name == "pull_request" and c.event_head_sha:
        lines.append(f"PR head {_commit_link(out, c.event_head_sha)}")
        if c.github_sha and checked and c.github_sha != checked:
            lines.append(f"event merge commit {_commit_link(out, c.github_sha)}")
    rules = rules_line(out, cell, lambda t: f"`{t}`")
    if rules:
        lines.append(rules[0].upper() + rules[1:])
    if lines:
        s.para(" · ".join(lines))
    if c.github_sha and checked and c.github_sha != checked:
        s.para(
            "> [!WARNING]\n> The workspace `HEAD` is not the commit this workflow run was "
            f"triggered for (`{c.github_sha}`); this result is for `{checked}`."
        )
    elif c.event_name == "pull_request" and c.event_head_sha and checked and checked != c.event_head_sha:
        s.para(
            "The checked commit is the merge of the PR head into its base, as "
            "`pull_request` checks out by default."
        )

    if out.verdict == ERROR:
        s.para(
            "The check could not finish because of an internal error"
            + (f" during **{out.stage}**" if out.stage else "")
            + ". This is a bug or an environment fault, not a problem with your files; "
            "re-run the job, and report it if it persists."
        )

    if out.thresholds:
        rows = []
        ordered = sorted(out.thresholds, key=lambda t: t.passed is not False)
        for t in ordered:
            mark = "✅" if t.passed else "❌"
            note = f" ({cell(t.note)})" if t.note else ""
            rows.append([f"`{t.measure}`", fmt(t.value), f"≥ {t.limit:g}", mark + note])
        s.heading("Metrics vs thresholds", 3)
        s.table(["measure", "value", "threshold", "result"], rows)

    errors = out.problems.errors
    warnings = out.problems.warnings
    if errors or warnings:
        s.heading(f"Input problems ({out.problems.error_count()} errors, {out.problems.warning_count()} warnings)", 3)
        rows = []
        for p in errors + warnings:
            rows.append([
                "error" if p.severity == "error" else "warning",
                p.kind,
                cell(p.location(), 200),
                cell(p.id) if p.id else "",
                cell(p.message, 400),
            ])
        s.table(["severity", "kind", "where", "id", "problem"], rows)
        if out.problems.dropped:
            more = ", ".join(f"{cell(k)}: {n} more" for k, n in out.problems.dropped.items())
            s.para(f"Not all problems are listed: {more}.")
        if out.verdict == INVALID:
            s.para("No metrics were computed: a verdict on invalid input would be meaningless.")

    add_retrieval_sections(s, out)
    add_change_sections(s, out)

    ev = out.evaluation
    cfg = out.config
    if ev and cfg:
        keys = [k for k in ev.means]
        head_keys = [f"P@{cfg.k}", f"R@{cfg.k}", f"nDCG@{cfg.k}", f"Judged@{cfg.k}"]
        s.heading(f"Means over {ev.counted} questions", 3)
        s.table([f"`{k}`" for k in keys], [[fmt(ev.means[k]) for k in keys]])
        worst_key = f"nDCG@{cfg.k}"
        ok = [q for q in ev.queries if q.status == "ok"]
        ok.sort(key=lambda q: (q.values.get(worst_key), q.query_id))
        if ok and cfg.worst:
            s.heading(f"Worst questions by {worst_key}", 3)
            rows = [
                [cell(q.query_id)] + [fmt(q.values.get(k)) for k in head_keys]
                + ["" if q.in_run else "not in run"]
                for q in ok[: cfg.worst]
            ]
            s.table(["question"] + [f"`{k}`" for k in head_keys] + ["note"], rows)
        if ev.excluded:
            s.heading(f"Excluded from the means ({len(ev.excluded)})", 3)
            s.para(
                "These questions have no document with grade ≥ "
                f"{cfg.min_grade} in gold (status `no_relevant`): recall and nDCG are "
                "undefined for them, never 0. Label a relevant document or remove the question."
            )
            s.para(", ".join(cell(q) for q in ev.excluded[:200]) + (" …" if len(ev.excluded) > 200 else ""))
        per_q = Summary()
        per_q.table(
            ["question", "status"] + [f"`{k}`" for k in keys],
            [[cell(q.query_id), q.status] + [fmt(q.values.get(k)) for k in keys] for q in ev.queries[:2000]],
        )
        if len(ev.queries) > 2000:
            per_q.para(f"{len(ev.queries) - 2000} more questions are in the results file.")
        s.details(f"All {len(ev.queries)} questions", per_q)

    if cfg:
        s.heading("Conventions", 3)
        s.bullets(convention_lines(cfg))

    prov = Summary()
    env = environment()
    items = [f"rag-corpus-check {cell(env['tool_version'])}, Python {cell(env['python'])}"]
    if out.corpus and out.corpus.fingerprint:
        items.append(f"corpus fingerprint `{out.corpus.fingerprint}`, {out.corpus.count} documents")
    if results_path:
        items.append(f"results file: `{cell(results_path, 300)}`")
    if out.context.run_url:
        items.append(f"[workflow run]({out.context.run_url})")
    prov.bullets(items)
    if out.inputs:
        prov.table(["input", "sha-256"], [[cell(k, 200), f"`{v}`"] for k, v in out.inputs.items()])
    s.details("Provenance", prov)
    return s
