"""The "What changed in this PR" part of the summary and of the results
file: rules, metric deltas, per-question changes, labels, attribution."""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.gate.terms import (
    GOLD_SETS,
    GOLD_WORDS,
    MIN_PERMUTATIONS,
    MIN_QUESTIONS,
    PERMUTATIONS,
    SEED,
    WORK,
)
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.report import render
from rag_corpus_check.report.confidence import (
    add_explained,
    add_significance,
    delta_json,
    explained,
    explained_line,
    pool_for,
)
from rag_corpus_check.report.markdown import Summary, cell, fmt, prose

if TYPE_CHECKING:  # the comparison's records: only with a base compared
    from rag_corpus_check.gate.compare import Comparison, Delta, QuestionChange, View

SIGNIFICANCE = (
    f"two-sided paired randomization (sign-flip) test over questions, {PERMUTATIONS:,} permutations (fewer past "
    f"{8 * WORK // PERMUTATIONS:,} paired questions, at least {MIN_PERMUTATIONS:,}: see each delta's "
    f"`permutations`), seed {SEED}; fewer "
    f"than {MIN_QUESTIONS} paired questions: no conclusion"
)


SHOWN_CHANGED = 200  # changed relevant documents the summary lists (the results file has every one)


def signed(v: float | None) -> str:
    return "—" if v is None else f"{v:+.4f}"


def add_sections(s: Summary, data: dict) -> None:
    """What changed in this PR, from the results file's data ``data``."""
    cmp_ = data["comparison"]
    if cmp_ is None:
        if data["counts"]["questions"] is not None:
            s.para("No base was compared (run with `--base <rev>` / on `pull_request` to see what changed).")
        return
    s.heading("What changed in this PR", 3)
    s.para(f"Compared with the base `{cmp_['base_sha'] or cell(cmp_['base_rev'])}`.")
    for note in cmp_["notes"]:
        s.para(f"> [!NOTE]\n> {prose(note, 400)}")
    if cmp_["rules"] is not None:
        _rules(s, cmp_["rules"])
    if "deltas" in cmp_:
        render.changed_documents(s, data, max_rows=SHOWN_CHANGED)
        render.removed_questions(s, data, max_rows=SHOWN_CHANGED)
        render.deltas(s, data)
        add_explained(s, cmp_["label_debt_drops"])
        add_significance(s, data["significance"])
        _per_question(s, data["per_question"], render.same_gold_sets(data))
        _questions(s, cmp_)
        _new_chunks(s, cmp_)
        _labels(s, cmp_)
        _attribution(s, cmp_)
        _unjudged(s, cmp_)


def _rules(s: Summary, rules: dict) -> None:
    if rules["violated"]:
        s.para(
            "> [!CAUTION]\n> **This PR loosens the rules** and the gate fails because of it. The base rules "
            "were enforced. To change them on purpose, set a new `rule_change_reason:` in the config in this PR."
        )
    if rules["changes"] and not rules["override_reason"]:  # an override lists them under the title
        s.para("Rule changes: " + "; ".join(prose(c, 200) for c in rules["changes"]))
    s.para(f"Rules enforced: `{rules['source']}`.")


def view_title(v: View) -> str:
    """Which gold set a view's figures come from, in words."""
    return f"Judged by {GOLD_SETS[v.gold]}: {v.paired} questions"


def _per_question(s: Summary, rule: dict | None, same_gold: bool) -> None:
    """The per-question rule: the questions over its limit, per gold set."""
    if rule is None:
        return
    dropped = render.once_per_gold(rule["dropped"], same_gold)
    over = [(gold, q) for gold, qs in dropped.items() for q in qs]
    counts = "; ".join(f"Judged by {GOLD_WORDS.get(gold, render.BOTH_GOLD)}: "
                       f"{len(qs)}" for gold, qs in dropped.items())
    s.para(f"{'✅' if rule['passed'] else '❌'} Per-question rule (`per_question`): questions that lost more than "
           f"{rule['max_drop']:g} of `{rule['measure']}` — at most {rule['max_questions']} may. {counts}.")
    if over:
        s.table(["gold set", "question", "base", "head", "Δ"],
                [[gold, cell(q["query_id"]), fmt(q["base"]), fmt(q["head"]), signed(q["delta"])]
                 for gold, q in over[:20]])


def _new_chunks(s: Summary, cmp_: dict) -> None:
    if cmp_["new_chunks"]:
        s.para("New chunks of documents the gold set labels (their text inherits the document's label — "
               "review it like a label): " + "; ".join(
                   f"{cell(e['doc_id'])}: {', '.join(cell(c) for c in e['chunk_ids'][:5])}"
                   + (f" and {len(e['chunk_ids']) - 5} more" if len(e["chunk_ids"]) > 5 else "")
                   for e in cmp_["new_chunks"][:20]))


def moved_documents(q: QuestionChange, esc=cell, limit: int = 4) -> str:
    """The relevant documents that moved in a question that dropped, as one line."""
    return documents_moved(q.documents, esc, limit)


def documents_moved(documents: list[dict], esc=cell, limit: int = 4) -> str:
    """The relevant documents that moved (a dropped question's `documents`), as one line."""
    return "; ".join(
        f"{esc(d['doc_id'])} (grade {d['grade']}): {d['change']}, {d['base_position'] or '—'} → "
        f"{d['head_position'] or '—'}" for d in documents[:limit]
    )


def _questions(s: Summary, cmp_: dict) -> None:
    questions = cmp_["questions"]
    drops = [q for q in questions if q["delta"] < 0]  # most first
    rises = [q for q in reversed(questions) if q["delta"] > 0][:5]
    if drops:
        _drops(s, drops)
    if rises:
        s.para("Rose most: " + ", ".join(f"{cell(q['query_id'])} ({signed(q['delta'])})" for q in rises))
    if cmp_["added"]:
        s.para(f"Questions added: {_ids(cmp_['added'])}.")


def dropped(cmp_: Comparison) -> list[QuestionChange]:
    """The questions that dropped, most first."""
    return [q for q in cmp_.questions if q.delta < 0]


def _ids(ids: list[str]) -> str:
    return ", ".join(cell(q) for q in ids[:50]) or "none"


def _drops(s: Summary, drops: list[dict]) -> None:
    rows = [[cell(q["query_id"]), fmt(q["base"]), fmt(q["head"]), signed(q["delta"]), documents_moved(q["documents"])]
            for q in drops[:10]]
    s.heading(f"Questions that dropped ({len(drops)})", 4)
    s.table(["question", "base", "head", f"Δ `{drops[0]['measure']}`", "relevant documents, position base → head"],
            rows)


def _labels(s: Summary, cmp_: dict) -> None:
    labels = cmp_["labels"]
    if not labels:
        return
    rows = [[cell(entry["query_id"]), entry["question"], _label_parts(entry)] for entry in labels[:200]]
    texts = sum(1 for e in labels if e.get("query_changed"))
    if texts:
        s.para(f"> [!WARNING]\n> {texts} question texts changed in this PR: with a retriever the text decides "
               "what is retrieved, so review them like labels (the attribution below counts their effect as "
               "the system's).")
    s.details(f"Gold labels changed in {len(labels)} questions", Summary().table(["question", "", "labels"], rows))


def _label_parts(entry: dict) -> str:
    parts = ["question text changed"] if entry.get("query_changed") else []
    parts += [f"+{cell(d)}={g}" for d, g in entry["added"].items()]
    parts += [f"−{cell(d)} (was {g})" for d, g in entry["removed"].items()]
    parts += [f"{cell(d)}: {a}→{b}" for d, (a, b) in entry["regraded"].items()]
    return "; ".join(parts)[:1000]


CHANGED_BY = {
    "labels": "What changed: labels only — the gold set changed; the corpus and the ranking of every question in "
              "both revisions did not.",
    "system": "What changed: the system only — the corpus or the rankings changed; the gold set did not.",
    "labels and system": "What changed: both the labels and the system (corpus/run).",
    "nothing": "What changed: nothing — the gold set, the corpus and the rankings are the same.",
}


def changed_by_line(changed_by: str) -> str:
    """What changed between the revisions, in words (`changed_by`)."""
    return CHANGED_BY.get(changed_by, "?")


def _attribution(s: Summary, cmp_: dict) -> None:
    a = cmp_["attribution"]
    s.heading("Where the change comes from", 4)
    if not a:
        s.para(changed_by_line(cmp_["changed_by"]))
        return
    s.para(
        f"{changed_by_line(cmp_['changed_by'])} Over the {a['questions']} questions in both "
        "revisions: *system* = head run scored on the base labels minus base; *labels* = head minus head run "
        "scored on the base labels. They add up to the total."
    )
    s.table(
        ["measure", "base", "head", "from the system", "from the labels"],
        [[f"`{m}`", fmt(v["base"]), fmt(v["head"]), signed(v["system"]), signed(v["labels"])]
         for m, v in a["measures"].items()],
    )


def _unjudged(s: Summary, cmp_: dict) -> None:
    if cmp_["unjudged_new_docs"]:
        s.para(
            "New documents in the top K without a judgement: "
            + "; ".join(f"{cell(e['query_id'])}: {', '.join(cell(d) for d in e['doc_ids'][:5])}"
                        for e in cmp_["unjudged_new_docs"][:20])
        )
        s.para("To judge them, run this where the check ran; it writes a worksheet of every unjudged document in "
               "the top K of the questions whose top K changed. Fill in its grades, commit it next to the gold "
               "file and list it under `gold:` after it:")
        s.code(cmp_["pool_command"])


def pool_command(out: Outcome) -> str:
    """The `rag-corpus-check pool` command that pools this PR's changed
    questions against its base (every value escaped and shell-quoted)."""
    assert out.base is not None and out.config is not None
    base = out.base.sha or out.base.rev
    folder = os.path.dirname(out.gold.file) if out.gold is not None else ""
    worksheet = os.path.join(folder, f"labels-{base[:7]}.yaml")
    words = ["--config", out.config.path_display, "--base", base, "--fetch-base", "--changed-only", "--out", worksheet]
    return "rag-corpus-check pool " + " ".join(shlex.quote(safe_text(w, 300)) for w in words)


def _delta_json(d: Delta) -> dict:
    return {"measure": str(d.measure), "base": d.base, "head": d.head, "delta": d.delta, "p_value": d.p_value,
            "paired_questions": d.paired_questions, "permutations": d.permutations, "conclusive": d.conclusive,
            **delta_json(d)}


def _question_json(q: QuestionChange) -> dict:
    entry = {"query_id": q.query_id, "measure": str(q.measure), "base": q.base, "head": q.head, "delta": q.delta}
    if q.delta < 0:
        entry["documents"] = q.documents
    return entry


def _view_json(v: View) -> dict:
    return {"gold": v.gold, "description": GOLD_SETS[v.gold], "paired_questions": v.paired,
            "deltas": [_delta_json(d) for d in v.deltas], "questions": [_question_json(q) for q in v.questions]}


def per_question_json(out: Outcome) -> dict | None:
    rule = out.per_question
    if rule is None:
        return None
    return {"measure": str(rule.rule.measure), "max_drop": rule.rule.max_drop, "max_questions": rule.rule.max_questions,
            "passed": rule.passed, "dropped": {gold: [_question_json(q) for q in qs] for gold, qs in rule.dropped.items()}}


def comparison_json(out: Outcome) -> dict | None:
    if out.base is None:
        return None
    rules = out.rules
    data: dict = {
        "base_rev": out.base.rev,
        "base_sha": out.base.sha,
        "notes": list(out.base.notes),
        "rules": None if rules is None else {
            "source": rules.source, "changes": list(rules.changes), "loosened": list(rules.loosened),
            "violated": rules.violated, "override_reason": rules.override_reason,
        },
    }
    cmp_ = out.base.comparison
    if cmp_ is not None:
        data.update({
            "deltas": [_delta_json(d) for d in cmp_.deltas], "questions": [_question_json(q) for q in cmp_.questions],
            "added": cmp_.added, "removed": cmp_.removed, "labels": cmp_.labels, "attribution": cmp_.attribution,
            "gold_changed": cmp_.gold_changed, "system_changed": cmp_.system_changed, "changed_by": cmp_.changed_by,
            "removed_effect": cmp_.removed_effect, "changed_relevant": cmp_.changed_relevant,
            "unjudged_new_docs": cmp_.unjudged_new_docs, "paired_questions": cmp_.paired,
            "views": [_view_json(v) for v in cmp_.views], "new_chunks": cmp_.new_chunks,
            "relabelled_and_reranked": cmp_.relabelled_and_reranked,
            "significance": SIGNIFICANCE,
            "pool_command": pool_command(out),
            "label_debt_drops": [{"gold": e.gold, "measure": str(e.measure), "delta": e.delta, "if_unjudged_relevant":
                                  e.bound, "new_unjudged": e.new_unjudged, "message": explained_line(e),
                                  "command": pool_for(out, e, pool_command(out))} for e in explained(out, every=True)],
        })
    return data
