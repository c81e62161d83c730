"""The "What changed in this PR" part of the summary and of the results
file: rules, metric deltas, per-question changes, labels, attribution."""

from __future__ import annotations

from rag_corpus_check.pipeline import Outcome
from rag_corpus_check.report.markdown import Summary, cell, fmt


def _signed(v: float | None) -> str:
    return "—" if v is None else f"{v:+.4f}"


def _p(d: dict) -> str:
    if d["p_value"] is None:
        return "—"
    if not d["conclusive"]:
        return f"{d['p_value']:.2f} (too few questions)"
    return f"{d['p_value']:.3f}"


def add_sections(s: Summary, out: Outcome) -> None:
    if out.base_rev is None:
        if out.evaluation is not None:
            s.para("No base was compared (run with `--base <rev>` / on `pull_request` to see what changed).")
        return
    rules, cmp_ = out.rules, out.comparison
    s.heading("What changed in this PR", 3)
    base = f"`{out.base_sha}`" if out.base_sha else f"`{cell(out.base_rev)}`"
    s.para(f"Compared with the base {base}.")
    for note in out.base_notes:
        s.para(f"> [!NOTE]\n> {cell(note, 400)}")
    if rules is not None:
        if rules.violated:
            s.para(
                "> [!CAUTION]\n> **This PR loosens the rules** and the gate fails because of it. "
                "The base rules were enforced. To change them on purpose, set a new "
                "`rule_change_reason:` in the config in this PR."
            )
        elif rules.override_reason:
            s.para(
                "> [!WARNING]\n> **Rules changed on purpose in this PR** — reason: "
                f"“{cell(rules.override_reason, 300)}”. The head config's rules were enforced."
            )
        if rules.changes:
            s.para("Rule changes: " + "; ".join(cell(c, 200) for c in rules.changes))
        s.para(f"Rules enforced: `{rules.source}`.")
    if cmp_ is None:
        return
    s.table(
        ["measure", "base", "head", "Δ", "p (paired randomization)"],
        [[f"`{d['measure']}`", fmt(d["base"]), fmt(d["head"]), _signed(d["delta"]), _p(d)] for d in cmp_.deltas],
    )
    if cmp_.paired < 10:
        s.para(f"Only {cmp_.paired} questions are in both revisions: too few to conclude that a change is real.")
    drops = [q for q in cmp_.questions if q["delta"] < 0][:10]
    rises = [q for q in reversed(cmp_.questions) if q["delta"] > 0][:5]
    if drops:
        rows = []
        for q in drops:
            docs = "; ".join(
                f"{cell(d['doc_id'])} (grade {d['grade']}): {d['change']}, "
                f"{d['base_position'] or '—'} → {d['head_position'] or '—'}"
                for d in q.get("documents", [])[:4]
            )
            rows.append([cell(q["query_id"]), fmt(q["base"]), fmt(q["head"]), _signed(q["delta"]), docs])
        s.heading(f"Questions that dropped ({sum(1 for q in cmp_.questions if q['delta'] < 0)})", 4)
        s.table(["question", "base", "head", f"Δ `{drops[0]['measure']}`", "relevant documents, position base → head"], rows)
    if rises:
        s.para("Rose most: " + ", ".join(f"{cell(q['query_id'])} ({_signed(q['delta'])})" for q in rises))
    if cmp_.added or cmp_.removed:
        s.para(
            f"Questions added: {', '.join(cell(q) for q in cmp_.added[:50]) or 'none'}; "
            f"removed: {', '.join(cell(q) for q in cmp_.removed[:50]) or 'none'}."
        )
    if cmp_.labels:
        body = Summary()
        rows = []
        for entry in cmp_.labels[:200]:
            parts = [f"+{cell(d)}={g}" for d, g in entry["added"].items()]
            parts += [f"−{cell(d)} (was {g})" for d, g in entry["removed"].items()]
            parts += [f"{cell(d)}: {a}→{b}" for d, (a, b) in entry["regraded"].items()]
            rows.append([cell(entry["query_id"]), entry["question"], "; ".join(parts)[:1000]])
        body.table(["question", "", "labels"], rows)
        s.details(f"Gold labels changed in {len(cmp_.labels)} questions", body)
    if cmp_.attribution:
        a = cmp_.attribution
        s.heading("Where the change comes from", 4)
        s.para(
            f"Both the labels and the system (corpus/run) changed. Over the {a['questions']} questions "
            "in both revisions: *system* = head run scored on the base labels minus base; *labels* = "
            "head minus head run scored on the base labels. They add up to the total."
        )
        s.table(
            ["measure", "base", "head", "from the system", "from the labels"],
            [[f"`{m}`", fmt(v["base"]), fmt(v["head"]), _signed(v["system"]), _signed(v["labels"])]
             for m, v in a["measures"].items()],
        )
    if cmp_.unjudged_new_docs:
        s.para(
            "New documents in the top K without a judgement: "
            + "; ".join(f"{cell(e['query_id'])}: {', '.join(cell(d) for d in e['doc_ids'][:5])}"
                        for e in cmp_.unjudged_new_docs[:20])
        )


def comparison_json(out: Outcome) -> dict | None:
    if out.base_rev is None:
        return None
    rules, cmp_ = out.rules, out.comparison
    data = {
        "base_rev": out.base_rev,
        "base_sha": out.base_sha,
        "notes": list(out.base_notes),
        "rules": None if rules is None else {
            "source": rules.source, "changes": rules.changes, "loosened": rules.loosened,
            "violated": rules.violated, "override_reason": rules.override_reason,
        },
    }
    if cmp_ is not None:
        data.update({
            "deltas": cmp_.deltas, "questions": cmp_.questions, "added": cmp_.added,
            "removed": cmp_.removed, "labels": cmp_.labels, "attribution": cmp_.attribution,
            "gold_changed": cmp_.gold_changed, "system_changed": cmp_.system_changed,
            "unjudged_new_docs": cmp_.unjudged_new_docs, "paired_questions": cmp_.paired,
            "significance": "two-sided paired randomization (sign-flip) test over questions, "
                            "10,000 permutations (fewer past 2,000 paired questions, at least 1,000: "
                            "see each delta's `permutations`), seed 20261130; fewer than 10 paired "
                            "questions: no conclusion",
        })
    return data
