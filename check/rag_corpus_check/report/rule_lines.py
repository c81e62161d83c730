"""One line saying which rules the gate enforced, for the first lines of the
console and the summary (a reviewer or branch protection acts on it), from
the results file's data (:func:`report.results.results_dict`)."""

from __future__ import annotations

from collections.abc import Callable

from rag_corpus_check.gate import rules as R


def _why(results: dict, rules: dict, esc: Callable[..., str]) -> str:
    sha = (results["comparison"] or {}).get("base_sha")
    why = results["rules_why"]
    return {
        R.BASE: f"the config at the base commit {f'`{sha[:12]}`' if sha else 'the base commit'}"
                + (f"; {why}" if why else ""),
        R.FIRST_INTRODUCTION: "the config does not exist at the base commit: first introduction",
        R.OVERRIDE: f"changed on purpose in this PR: “{esc(rules.get('override_reason') or '', 200)}”",
        R.NO_BASE: why or "no base was compared",
    }[results["rules_source"]]


def rules_line(results: dict, esc: Callable[..., str], code: Callable[[str], str] = str) -> str | None:
    """``rules: <source> (why)``, and when the PR loosened them without a
    reason, which changes fail the gate. ``esc`` renders untrusted text."""
    source = results["rules_source"]
    if source is None:
        return None
    rules = (results["comparison"] or {}).get("rules") or {}  # the rule changes: only with a base
    line = f"rules: {code(source)} ({_why(results, rules, esc)})"
    if rules.get("violated"):
        line += (" — this PR loosens them without a new `rule_change_reason`, which fails the "
                 "gate: " + "; ".join(esc(c, 200) for c in rules["loosened"]))
    return line
