"""The Markdown of a results file: the sections the job summary and the
pull-request comment share, rendered from the dict :mod:`report.results`
writes (schemas/results.schema.json), never from the pipeline's objects.

The comment job renders a results file that came in a hostile artifact: it
is valid against the schema, but the schema leaves some fields untyped. So
every string goes through :func:`cell` (or is a schema enum), every number
through :func:`num`/:func:`limit`/:func:`count` (anything that is not a
number of a sane size shows as "?"). Standard library only: the comment job
installs nothing.
"""

from __future__ import annotations

import heapq
import re

from rag_corpus_check.core.text import DIGITS, figure, natural_key, safe_text
from rag_corpus_check.gate.terms import (  # constants only: no import past the stdlib
    GOLD_SETS,
    MIN_QUESTIONS,
    SAME_GOLD,
)
from rag_corpus_check.report.markdown import Summary, cell, prose

_MEASURE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,30}(@[0-9]{1,5})?")  # P@5, Judged@10, Rprec
MAX_QUESTIONS_SHOWN = 2000
IF_RELEVANT = "if every unjudged top-k document were relevant"

ICON = {"pass": "✅", "fail": "❌", "invalid": "⛔", "error": "💥", "partial": "🧩"}
TITLE = {"pass": "passed", "fail": "quality gate failed", "invalid": "invalid input",
         "error": "the check itself failed", "partial": "shard measured (merge the shards for the verdict)"}


def title_notes(results: dict) -> str:
    """What the title adds to the verdict: an advisory failure, rules this PR overrode."""
    advisory = " (advisory: the job is not failed)" if results.get("advisory") and results["verdict"] == "fail" else ""
    override = " · ⚠️ rules overridden by this PR (`head-override`)" if results.get("rules_source") == "head-override" \
        else ""
    return advisory + override


# ---------------------------------------------------------------- values


def is_number(value: object) -> bool:
    return type(value) in (int, float) and abs(value) < 1e9  # type: ignore[arg-type]


def num(value: object, digits: int = DIGITS) -> str:
    """A number as shown; null as "—"; anything else (an untyped field of a
    hostile file, a huge number) as "?"."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if is_number(value) else "?"


def versus(value: object, against: object) -> str:
    """A value shown beside its limit (:func:`core.text.figure`: enough
    decimals to show which side of it the value is on)."""
    if not (is_number(value) and is_number(against)):
        return num(value)
    return figure(value, against)  # type: ignore[arg-type]


def signed(value: object) -> str:
    text = num(value)
    return "+" + text if text[0].isdigit() else text


def limit(value: object) -> str:
    """A limit from the config, as written (``0.75``, ``0.05``)."""
    return f"{value:g}" if is_number(value) else "?"


def count(value: object) -> str:
    return str(value) if type(value) is int and 0 <= value < 10**9 else "?"


def measure(value: object) -> str:
    """A measure name in backticks when it looks like one, else escaped text."""
    return f"`{value}`" if isinstance(value, str) and _MEASURE.fullmatch(value) else cell(value, 40)


def dicts(value: object) -> list[dict]:
    """The objects of a list the schema leaves untyped."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def comparison(results: dict) -> dict:
    cmp_ = results.get("comparison")
    return cmp_ if isinstance(cmp_, dict) else {}


def rules_override(s: Summary, results: dict, max_rows: int | None = None) -> None:
    """A pull request gated on its own rules (a new `rule_change_reason`):
    a caution with the reason and what it changed, under the title of the
    job summary and of the PR comment."""
    if results.get("rules_source") != "head-override":
        return
    rules = comparison(results).get("rules")
    rules = rules if isinstance(rules, dict) else {}
    reason, changed = rules.get("override_reason"), rules.get("changes")
    changes = [c for c in changed if isinstance(c, str)] if isinstance(changed, list) else []
    shown = changes[:max_rows] if max_rows is not None else changes
    listed = "".join(f"\n> - {prose(c, 200)}" for c in shown) or "\n> - (none listed)"
    rest = f"\n> - …and {len(changes) - len(shown)} more (see the job summary)" if len(changes) > len(shown) else ""
    why = f" Reason given: “{cell(reason, 300)}”." if isinstance(reason, str) else ""
    s.para("> [!CAUTION]\n> This pull request changed the gate's rules (a new `rule_change_reason`): it was gated "
           f"on its own config's thresholds and conventions, not the base's.{why} Review the rule changes before "
           f"merging:{listed}{rest}")


def passed_cell(passed: object) -> str:
    return {True: "✅", False: "❌"}.get(passed, "—")  # type: ignore[call-overload]


def more(shown: int, total: int, what: str) -> str:
    return f"…and {total - shown} more {what} (see the job summary)." if total > shown else ""


def uncommitted(results: dict) -> list[str]:
    """The input files the checked commit does not hold as they were read."""
    files = results.get("provenance", {}).get("uncommitted")
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []


def checked_words(results: dict, esc, commit_words) -> str:
    """What was checked: ``commit <sha>``, or the working tree with the
    uncommitted changes named (never the commit alone for files it does not
    hold). ``esc`` escapes a path, ``commit_words`` shows the commit."""
    sha = results.get("provenance", {}).get("commit")
    if not isinstance(sha, str):
        return "commit unknown (not a git checkout)"
    files = uncommitted(results)
    if not files:
        return f"commit {commit_words(sha)}"
    names = ", ".join(esc(f) for f in files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    return f"working tree, uncommitted changes to {names} on top of commit {commit_words(sha)}"


# ---------------------------------------------------------------- thresholds


def threshold_row(t: dict, on_base: bool = False, loosened: str | None = None) -> list[str]:
    """measure, value (and on the base's gold set), the limit (and max_drop),
    the result; ``loosened``: how this PR loosened the rule (which fails the gate)."""
    drop = f", drop ≤ {limit(t['max_drop'])}" if t.get("max_drop") is not None else ""
    note = f" ({prose(t['note'], 120, in_table=True)})" if t.get("note") else ""
    values = [versus(t["value"], t["limit"]), versus(t.get("value_on_base_gold"), t["limit"])] if on_base \
        else [versus(t["value"], t["limit"])]
    rule = f" · ❌ {prose(loosened, 200, in_table=True)} in this PR without a new `rule_change_reason`" \
        if loosened else ""
    return [measure(t["measure"]), *values, f"≥ {limit(t['limit'])}{drop}", passed_cell(t["passed"]) + note + rule]


def same_gold_sets(results: dict) -> bool:
    """The gold set did not change in this PR: the head's ranking judged by
    the base's gold set is judged by its own, and the two views say one thing."""
    cmp_ = comparison(results)
    views = dicts(cmp_.get("views"))
    return (cmp_.get("gold_changed") is False and len(views) == 2
            and views[0].get("deltas") == views[1].get("deltas")
            and views[0].get("paired_questions") == views[1].get("paired_questions"))


BOTH_GOLD = "either gold set (the same here: unchanged in this PR)"


def once_per_gold(found: dict, same_gold: bool) -> dict:
    """What each gold set found (gold set -> a list); when the gold set did
    not change (``same_gold``: :func:`same_gold_sets`), once, under "both"."""
    lists = list(found.values())
    return {"both": lists[0]} if same_gold and len(lists) == 2 and lists[0] == lists[1] else found


def loosened_rules(results: dict) -> list[str]:
    """The rule changes this PR made without a new `rule_change_reason` (they fail the gate)."""
    rules = comparison(results).get("rules")
    if not isinstance(rules, dict) or rules.get("violated") is not True:
        return []
    return [r for r in rules.get("loosened") or [] if isinstance(r, str)]


def loosening(t: dict, loosened: list[str]) -> str | None:
    """How this PR loosened the top-level threshold ``t`` (its minimum or its max_drop), if it did."""
    m = t.get("measure")
    return next((r for r in loosened if r.startswith((f"threshold `{m}` ", f"`max_drop` of `{m}` "))), None)


def thresholds(s: Summary, results: dict, level: int = 3, max_rows: int | None = None) -> None:
    """The thresholds, failed first (a rule this PR loosened counts as
    failed); with a base and a changed gold set, their values on both gold
    sets; when the gate failed, why."""
    loosened = loosened_rules(results)
    rows = sorted(results["thresholds"], key=lambda t: t["passed"] is not False and not loosening(t, loosened))
    if not rows:
        return
    on_base = any("base" in (t.get("gold_sets") or ()) for t in rows) and not same_gold_sets(results)
    shown = rows[:max_rows]
    s.heading("Metrics vs thresholds", level)
    columns = ["measure", "value (head's gold set)", "value (base's gold set)"] if on_base else ["measure", "value"]
    s.table(columns + ["threshold", "result"], [threshold_row(t, on_base, loosening(t, loosened)) for t in shown])
    if len(shown) < len(rows):
        s.para(more(len(shown), len(rows), "thresholds"))
    if on_base:
        s.para("With a base, every threshold holds on the head's own gold set and on the base's: the head's "
               "ranking is judged by the base's questions and labels too, so a change to the gold set can only "
               "add failures.")
    elif any("base" in (t.get("gold_sets") or ()) for t in rows):
        s.para("The gold set did not change in this PR: judged by the base's gold set the values are the same.")
    if results["verdict"] == "fail":
        _reasons(s, [r for r in results.get("gate_reasons") or [] if isinstance(r, str)], max_rows)


def _reasons(s: Summary, reasons: list[str], max_rows: int | None) -> None:
    if not reasons:
        return
    shown = reasons[:max_rows]
    s.para("**The gate failed because:**")
    s.bullets([prose(r, 500) for r in shown])
    if len(shown) < len(reasons):
        s.para(more(len(shown), len(reasons), "reasons"))


# ---------------------------------------------------------------- against the base


def deltas(s: Summary, results: dict, max_rows: int | None = None) -> None:
    """The means base → head, a table per gold set compared, with the
    interval of each delta, its label-debt bound and the paired test's p."""
    cmp_ = comparison(results)
    same = same_gold_sets(results)
    for view in dicts(cmp_.get("views"))[:1 if same else None]:
        gold, rows = view.get("gold"), dicts(view.get("deltas"))
        words = SAME_GOLD if same else GOLD_SETS.get(gold, cell(gold, 20)) if isinstance(gold, str) else "?"
        s.para(f"**Judged by {words}: {count(view.get('paired_questions'))} questions** (the same questions on both "
               "sides; `max_drop` compares these means).")
        s.table(["measure", "base", "head", "Δ", f"{_ci_words(results)} of Δ", f"Δ {IF_RELEVANT}",
                 "p (paired randomization)"], [_delta_row(d) for d in rows[:max_rows]])
        if max_rows is not None and len(rows) > max_rows:
            s.para(more(max_rows, len(rows), "measures"))
    paired = cmp_.get("paired_questions")
    if "views" in cmp_ and type(paired) is int and paired < MIN_QUESTIONS:
        s.para(f"Only {count(paired)} questions are in both revisions: too few to conclude that a change is real.")


def _delta_row(d: dict) -> list[str]:
    i, bound, p = d.get("interval"), d.get("if_unjudged_relevant"), d.get("p_value")
    interval = f"[{signed(i.get('low'))}, {signed(i.get('high'))}]" if isinstance(i, dict) else "—"
    tested = "—" if p is None else num(p, 3) if d.get("conclusive") is not False else f"{num(p, 2)} (too few questions)"
    return [measure(d.get("measure")), num(d.get("base")), num(d.get("head")), signed(d.get("delta")), interval,
            signed(bound.get("delta")) if isinstance(bound, dict) else "—", tested]


CHANGED_TITLE = "Documents changed in this PR that the gold set marks relevant"
REMOVED_TITLE = "Questions removed from the gold set by this PR"
_CHANGE_WORDS = {"deleted": "deleted (no ranking can retrieve it)", "edited": "edited", "status": "status changed"}


def position(value: object) -> str:
    """A 1-based position in a ranking; "—" when not ranked."""
    return "—" if value is None else count(value)


def changed_documents(s: Summary, results: dict, max_rows: int | None = None, level: int = 4) -> None:
    """The relevant documents the PR deleted or edited, each with the
    questions that count it relevant: its position base → head, and the
    question's measure base → head (the drops they explain)."""
    docs = dicts(comparison(results).get("changed_relevant"))
    if not docs:
        return
    shown = docs[:max_rows]
    s.heading(f"{CHANGED_TITLE} ({len(docs)})", level)
    s.para("A drop of the questions that count these documents relevant comes from the change to the documents; "
           "the label-debt advice (pooling) is only for drops these changes do not explain.")
    s.table(["document", "change", "question (grade): position base → head", "dropped"],
            [_changed_row(e) for e in shown])
    if len(shown) < len(docs):
        s.para(f"…and {len(docs) - len(shown)} more documents (every one is in the results file's "
               "`comparison.changed_relevant`).")


def _changed_row(e: dict) -> list[str]:
    questions = dicts(e.get("questions"))
    moves = "; ".join(f"{cell(q.get('query_id'))} ({count(q.get('grade'))}): {position(q.get('base_position'))} → "
                      f"{position(q.get('head_position'))}" for q in questions[:10])
    drops = [q for q in questions if is_number(q.get("delta")) and q["delta"] < 0]
    dropped = ", ".join(f"{cell(q.get('query_id'))} {measure(q.get('measure'))} {signed(q.get('delta'))}"
                        for q in drops[:10]) or "none"
    extra = f"; …and {len(questions) - 10} more" if len(questions) > 10 else ""
    change, status = e.get("change"), e.get("status")
    words = _CHANGE_WORDS.get(change, cell(change, 20)) if isinstance(change, str) else "?"
    if isinstance(status, list) and len(status) == 2:
        moved = f"status {cell(status[0], 40)} → {cell(status[1], 40)}"
        words = moved if change == "status" else f"{words} ({moved})"
    return [cell(e.get("doc_id")), words, moves + extra, dropped]


def removed_questions(s: Summary, results: dict, max_rows: int | None = None, level: int = 4) -> None:
    """The questions the PR removed from the gold set, and how much each of
    the head's means moved from the removal alone."""
    cmp_ = comparison(results)
    removed = [q for q in cmp_.get("removed") or [] if isinstance(q, str)]
    if not removed:
        return
    effect = cmp_.get("removed_effect")
    effect = effect if isinstance(effect, dict) else {}
    s.heading(f"{REMOVED_TITLE} ({len(removed)})", level)
    s.para(", ".join(cell(q) for q in removed[:200]) + (" …" if len(removed) > 200 else ""))
    if effect:
        s.para("What the removal alone did to the head's means (the head's ranking judged over its own questions, "
               "and over them plus the removed ones with the base's labels):")
        rows = [[measure(m), num(v.get("with_removed")), num(v.get("head")), signed(v.get("delta"))]
                for m, v in list(effect.items())[:max_rows] if isinstance(v, dict)]
        s.table(["measure", "with the removed questions", "without them", "moved by the removal"], rows)


# ---------------------------------------------------------------- questions


def ranking_measure(results: dict) -> str | None:
    """The measure questions are ranked by: nDCG@K, else the first gated one."""
    k = (results.get("conventions") or {}).get("k")
    preferred = [f"nDCG@{k}", *(t["measure"] for t in results["thresholds"])]
    return next((m for m in preferred if m in results["metrics"]), None)


def worst_questions(results: dict, key: str, n: int) -> list[dict]:
    """The ``n`` lowest questions in the means by ``key``, ties in id order."""
    scored = [q for q in results["queries"] if q["status"] == "ok" and is_number(q["values"].get(key))]
    if 0 < n < len(scored):  # only those up to the n-th value are sorted (10,000 questions: 5 shown)
        cut = heapq.nsmallest(n, [q["values"][key] for q in scored])[-1]
        scored = [q for q in scored if q["values"][key] <= cut]
    return sorted(scored, key=lambda q: (q["values"][key], natural_key(q["query_id"])))[:max(n, 0)]


def question_deltas(results: dict, key: str) -> dict[str, object]:
    """Per question id, its change of ``key`` against the base. The schema
    leaves these entries open: one whose id is not text is passed over."""
    changes = dicts(comparison(results).get("questions"))
    return {q["query_id"]: q.get("delta") for q in changes
            if q.get("measure") == key and isinstance(q.get("query_id"), str)}


def worst(s: Summary, results: dict, n: int, columns: list[str] | None = None, level: int = 3,
          texts: dict[str, str | None] | None = None, deltas: bool = False) -> None:
    """The ``n`` worst questions: their ``columns`` (default: the ranking
    measure), with ``texts`` (``report.show_text``) and ``deltas`` against
    the base when asked for."""
    key = ranking_measure(results)
    rows = worst_questions(results, key, n) if key else []
    if not key or not rows:
        return
    columns = columns or [key]
    changes = question_deltas(results, key) if deltas else None
    s.heading(f"Worst questions by {key if _MEASURE.fullmatch(key) else cell(key, 40)}", level)
    s.table(["question"] + (["text"] if texts is not None else []) + [measure(c) for c in columns]
            + (["Δ against the base"] if changes is not None else []) + ["note"],
            [_worst_row(q, columns, texts, changes) for q in rows])


def _worst_row(q: dict, columns: list[str], texts: dict[str, str | None] | None,
               changes: dict[str, object] | None) -> list[str]:
    qid = q["query_id"]
    return ([cell(qid)] + ([] if texts is None else [cell(texts.get(qid) or "", 200)])
            + [num(q["values"].get(c)) for c in columns] + ([] if changes is None else [signed(changes.get(qid))])
            + ["" if q.get("in_run", True) else "not in run"])


# ---------------------------------------------------------------- problems


def _location(p: dict) -> str:
    if p["file"] and p["line"]:
        return f"{p['file']}:{p['line']}"
    return p["file"] or "-"


def problems(s: Summary, results: dict, level: int = 3, max_rows: int | None = None) -> None:
    """The input problems, in the order the check lists them (trust first)."""
    listed, dropped = results["problems"], results.get("problems_dropped") or {}
    if not listed and not dropped:
        return
    counts = results.get("counts") or {}
    s.heading(f"Input problems ({count(counts.get('errors'))} errors, {count(counts.get('warnings'))} warnings)",
              level)
    shown = listed[:max_rows]
    s.table(["severity", "kind", "where", "id", "problem"],
            [[p["severity"], cell(p["kind"], 20), cell(_location(p), 200), cell(p["id"]) if p["id"] else "",
              prose(p["message"], 400, in_table=True)] for p in shown])
    if len(shown) < len(listed):
        s.para(more(len(shown), len(listed), "problems"))
    if dropped:
        s.para("Not all problems are listed: " + ", ".join(f"{cell(k)}: {count(n)} more" for k, n in dropped.items())
               + ".")
    if results["verdict"] == "invalid":
        s.para("No metrics were computed: a verdict on invalid input would be meaningless.")


# ---------------------------------------------------------------- means


def _interval(i: object) -> str:
    return f"[{num(i.get('low'))}, {num(i.get('high'))}]" if isinstance(i, dict) else "—"


def _ci_words(results: dict) -> str:
    level = (results.get("confidence") or {}).get("level", 0.95)
    return f"{level:.0%} interval" if is_number(level) else "interval"


def means(s: Summary, results: dict, worst_count: int, headline: list[str],
          texts: dict[str, str | None] | None = None, note: str | None = None) -> None:
    """The means (with their intervals and label-debt bounds) and ``note``
    on them, the worst questions, those left out of the means, and every
    question, folded."""
    keys, queries = list(results["metrics"]), results["queries"]
    compared = "views" in comparison(results)
    s.heading(f"Means over {count((results.get('counts') or {}).get('in_means'))} questions"
              f"{' (the head' + chr(39) + 's gold set)' if compared else ''}", 3)
    s.table(["", *map(measure, keys)], _mean_rows(results, keys))
    if note:
        s.para(note)
    worst(s, results, worst_count, headline, texts=texts)
    excluded = [q["query_id"] for q in queries if q["status"] == "no_relevant"]
    if excluded:
        s.heading(f"Excluded from the means ({len(excluded)})", 3)
        s.para(f"These questions have no document with grade ≥ {limit(results['conventions'].get('min_grade'))} in "
               "gold (status `no_relevant`): recall and nDCG are undefined for them, never 0. Label a relevant "
               "document or remove the question.")
        s.para(", ".join(cell(q) for q in excluded[:200]) + (" …" if len(excluded) > 200 else ""))
    unanswerable = [q["query_id"] for q in queries if q["status"] == "unanswerable"]
    if unanswerable:
        s.heading(f"Unanswerable by design ({len(unanswerable)})", 3)
        s.para("The gold set marks these questions `answerable: false`: no document answers them, on purpose. "
               "They are left out of the means (status `unanswerable`); their labels are not missing.")
        s.para(", ".join(cell(q) for q in unanswerable[:200]) + (" …" if len(unanswerable) > 200 else ""))
    every = Summary().table(["question", "status", *map(measure, keys)],
                            [[cell(q["query_id"]), q["status"], *(num(q["values"].get(k)) for k in keys)]
                             for q in queries[:MAX_QUESTIONS_SHOWN]])
    if len(queries) > MAX_QUESTIONS_SHOWN:
        every.para(f"{len(queries) - MAX_QUESTIONS_SHOWN} more questions are in the results file.")
    s.details(f"All {len(queries)} questions", every)


def _mean_rows(results: dict, keys: list[str]) -> list[list[str]]:
    rows = [["mean", *(num(results["metrics"][k]) for k in keys)]]
    conf, debt = results.get("confidence"), results.get("label_debt")
    if isinstance(conf, dict) and isinstance(conf.get("means"), dict) and conf["means"]:
        rows.append([_ci_words(results), *(_interval(conf["means"].get(k)) for k in keys)])
    if isinstance(debt, dict) and isinstance(debt.get("means"), dict):
        rows.append([IF_RELEVANT, *(num(debt["means"].get(k)) for k in keys)])
    return rows


# ---------------------------------------------------------------- slices


def slices(s: Summary, results: dict) -> None:
    """The "Slices" section: a table of means (with the gate), the slices'
    thresholds, and with a base one table of changes per gold set."""
    block = results.get("slices")
    if not isinstance(block, dict):
        return
    rows = dicts(block.get("slices"))
    if not rows:
        return
    measures = list(rows[0]["metrics"])
    s.heading(f"Slices ({len(rows)})", 3)
    s.para("Each tag of the gold questions is a slice: the means over its questions (the head's gold set). A "
           "slice with thresholds under `slices:` in the config is gated on them when it has enough questions.")
    s.table(["slice", "questions", *map(measure, measures), "gate"],
            [[cell(r["name"]), count(r["in_means"]), *(num(r["metrics"].get(m)) for m in measures), _gate_cell(r)]
             for r in rows])
    _slice_thresholds(s, rows)
    _slice_changes(s, rows, measures)
    _left_out(s, block)


_NOT_GATED = re.compile(r"not gated: [0-9]{1,9} questions?, fewer than min_questions [0-9]{1,9} "
                        r"\(too few for its thresholds to mean anything\)")


def _gate_cell(r: dict) -> str:
    if r.get("passed") is None:
        note = r.get("note")
        if not note:
            return "not gated (no thresholds)"
        return note if isinstance(note, str) and _NOT_GATED.fullmatch(note) else prose(note, 300, in_table=True)
    return passed_cell(r["passed"])


def _slice_thresholds(s: Summary, rows: list[dict]) -> None:
    table = [_slice_threshold(r["name"], t) for r in rows for t in dicts(r.get("thresholds"))]
    if table:
        s.table(["slice", "measure", "value", "threshold", "max_drop", "result"], table)


def _slice_threshold(name: object, t: dict) -> list[str]:
    note = f" ({prose(t['note'], 300, in_table=True)})" if t.get("note") else ""
    drop = "—" if t.get("max_drop") is None else limit(t["max_drop"])
    return [cell(name), measure(t.get("measure")), versus(t.get("value"), t.get("limit")), f"≥ {limit(t.get('limit'))}", drop,
            passed_cell(t.get("passed")) + note]


_BOTH = "each revision's own gold set and by the base's (the same figures)"


def _slice_changes(s: Summary, rows: list[dict], measures: list[str]) -> None:
    """Base → head per slice, a table per gold set compared (one for both
    when they give every slice the same figures)."""
    tables = [t for i, gold in enumerate(GOLD_SETS) if (t := _slice_change_table(gold, i, rows, measures))]
    if len(tables) == 2 and tables[0][1] == tables[1][1]:
        tables = [(_BOTH, tables[0][1])]
    for title, table in tables:
        s.para(f"**Slices, base → head, judged by {title}** (Δ of the means over the slice's questions in both "
               "revisions; p of the paired randomization test, as for the whole set)")
        s.table(table[0], table[1:])


def _slice_change_table(gold: str, i: int, rows: list[dict],
                        measures: list[str]) -> tuple[str, list[list[str]]] | None:
    """The title and the rows (the header first) of the table of the
    ``i``-th gold set's views; None when no slice was compared."""
    views = [(r["name"], dicts(r.get("views"))[i]) for r in rows if len(dicts(r.get("views"))) > i]
    if not views:
        return None
    table = [[cell(name), count(v.get("paired_questions")), *_slice_delta_cells(v, measures)] for name, v in views]
    return GOLD_SETS[gold], [["slice", "in both", *(f"Δ {measure(m)}" for m in measures)], *table]


def _slice_delta_cells(v: dict, measures: list[str]) -> list[str]:
    by = {d.get("measure"): d for d in dicts(v.get("deltas"))}
    return [slice_delta(by[m]) if m in by else "—" for m in measures]


def slice_delta(d: dict) -> str:
    """Δ, and the paired test's p where something moved."""
    p = d.get("p_value")
    if p is None or not d.get("delta"):
        return signed(d.get("delta"))
    return f"{signed(d.get('delta'))}, p {num(p, 3)}" + ("" if d.get("conclusive") is not False
                                                          else " (too few questions)")


# The summary names this many of the tags left out; the results file, all.
SHOWN_LEFT_OUT = 100


def _left_out(s: Summary, block: dict) -> None:
    """The tags no config names that are past `max_slices`, by name."""
    left_out = [t for t in block.get("left_out_tags") or [] if isinstance(t, str)]
    if not left_out:
        return
    names = ", ".join(f"`{safe_text(t, 64)}`" for t in left_out[:SHOWN_LEFT_OUT])
    rest = len(left_out) - SHOWN_LEFT_OUT
    more = f", and {rest} more (every one under `slices.left_out_tags` in the results file)" if rest > 0 else ""
    s.para(f"{len(left_out)} more tags are not shown: no config names them, and {count(block.get('max_slices'))} "
           f"slices of such tags (the most carried) are shown; every slice a config names is shown and gated. "
           f"Not shown: {names}{more}.")


# ---------------------------------------------------------------- provenance


def provenance(s: Summary, results: dict, results_path: str | None = None, run_url: str | None = None) -> None:
    """Who wrote the results, from which inputs (folded)."""
    prov = results["provenance"]
    items = [f"rag-corpus-check {cell(prov['tool_version'])}, Python {cell(prov['python'])}"]
    fingerprint = prov.get("corpus_fingerprint")
    if fingerprint:
        items.append(f"corpus fingerprint {_code(fingerprint)}, "
                     f"{count((results.get('counts') or {}).get('documents'))} documents")
    if results_path:
        items.append(f"results file: {cell(results_path, 300)}")  # escaped, so no code span (it would show the escapes)
    if run_url:
        items.append(f"[workflow run]({run_url})")
    body = Summary().bullets(items)
    formats = prov.get("formats") or {}
    if prov["inputs"]:
        body.table(["input", "read as", "sha-256"],
                   [[cell(k, 200), cell(formats.get(k, "config")), f"`{v}`"] for k, v in prov["inputs"].items()])
    s.details("Provenance", body)


def _code(value: object) -> str:
    """A digest (``sha256:<hex>``) in backticks; anything else escaped."""
    return f"`{value}`" if isinstance(value, str) and re.fullmatch(r"(sha256:)?[0-9a-f]{1,128}", value) else cell(value, 80)
