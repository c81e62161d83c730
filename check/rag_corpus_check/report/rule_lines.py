"""One line saying which rules the gate enforced, for the first lines of the
console and the summary (a reviewer or branch protection acts on it)."""

from __future__ import annotations

from collections.abc import Callable

from rag_corpus_check.gate import rules as R
from rag_corpus_check.pipeline.outcome import Outcome


def _why(out: Outcome, esc: Callable[..., str]) -> str:
    rules = out.rules
    assert rules is not None
    sha = out.base.sha if out.base else None
    return {
        R.BASE: f"the config at the base commit {f'`{sha[:12]}`' if sha else 'the base commit'}"
                + (f"; {rules.why}" if rules.why else ""),
        R.FIRST_INTRODUCTION: "the config does not exist at the base commit: first introduction",
        R.OVERRIDE: f"changed on purpose in this PR: “{esc(rules.override_reason or '', 200)}”",
        R.NO_BASE: rules.why or "no base was compared",
    }[rules.source]


def rules_line(out: Outcome, esc: Callable[..., str], code: Callable[[str], str] = str) -> str | None:
    """``rules: <source> (why)``, and when the PR loosened them without a
    reason, which changes fail the gate. ``esc`` renders untrusted text."""
    rules = out.rules
    if rules is None:
        return None
    line = f"rules: {code(rules.source)} ({_why(out, esc)})"
    if rules.violated:
        line += (" — this PR loosens them without a new `rule_change_reason`, which fails the "
                 "gate: " + "; ".join(esc(c, 200) for c in rules.loosened))
    return line
