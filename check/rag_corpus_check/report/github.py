"""GitHub workflow commands: annotations, step outputs, the step summary.

Escaping follows actions/toolkit (``core/src/command.ts``): data ``%``→``%25``,
``\\r``→``%0D``, ``\\n``→``%0A``; property values also ``:``→``%3A`` and
``,``→``%2C``. Untrusted text is first made single-line and stripped of the
``::``/``##[`` prefixes by :func:`safe_text`.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping, Sequence

from rag_corpus_check.core.problems import TRUST
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.metrics.measures import Measure
from rag_corpus_check.pipeline.outcome import FAIL, Outcome, gate_reasons

MAX_PER_TYPE = 10  # GitHub shows at most 10 annotations of a type per step


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: object) -> str:
    prop = ",".join(
        f"{k}={escape_property(safe_text(str(v), 300))}" for k, v in props.items() if v is not None
    )
    return f"::{name}{' ' + prop if prop else ''}::{escape_data(safe_text(message, 3000))}"


def repository_path(out: Outcome, file: str | None) -> str | None:
    """A problem's file as GitHub matches annotations to the diff: relative
    to the repository's top (the checked root may be a subdirectory, the
    action's `working-directory`), with forward slashes."""
    if not file or file.startswith("(") or os.path.isabs(file):
        return file  # "(built-in BM25)" and the like name no file of the tree
    return out.context.annotation_prefix + file.replace(os.sep, "/")


def annotation_lines(out: Outcome) -> list[str]:
    """At most MAX_PER_TYPE errors and warnings, and a notice with the count
    of the rest; the warnings about trust and rules first, never cut, then
    the problems on lines the pull request changed (with a base), then the rest."""
    lines = _gate_annotations(out)
    override = _override_annotation(out)
    totals = {"error": out.problems.error_count(), "warning": out.problems.warning_count()}
    for severity, total in totals.items():
        probs = sorted((p for p in out.problems.listed() if p.severity == severity),
                       key=lambda p: (p.kind != TRUST, not touched(out.changed, p.file, p.line)))
        trust = sum(p.kind == TRUST for p in probs)
        room = max(MAX_PER_TYPE - (len(override) if severity == "warning" else 0), trust)
        lines += (override if severity == "warning" else []) + [_annotation(out, p) for p in probs[:room]]
        if total > room:
            lines.append(command("notice", f"{total - room} more {severity}s are listed in the job summary "
                                 "and the results file"))
    return lines


def touched(changed: Mapping[str, Sequence[tuple[int, int]]], file: str | None, line: int | None) -> bool:
    """A problem at ``file``:``line`` is on what the pull request changed:
    a changed line, or anywhere in a changed file when it names no line."""
    ranges = changed.get(file or "")
    if not ranges:
        return False
    return line is None or any(first <= line <= last for first, last in ranges)


def _override_annotation(out: Outcome) -> list[str]:
    """A pull request that set a new `rule_change_reason` was gated on its own
    rules: a warning on the config's diff (the first warning, never cut)."""
    # Imported here: the comment action imports this module for `command`,
    # with no PyYAML installed, and rules imports the config reader.
    from rag_corpus_check.gate.rules import OVERRIDE

    rules, cfg = out.rules, out.config
    if rules is None or rules.source != OVERRIDE or cfg is None:
        return []
    changes = "; ".join(rules.changes[:10]) or "none listed"
    message = (f"This PR changes the gate's rules with a new rule_change_reason (“{rules.override_reason}”): it was "
               f"gated on its own config, not the base's (rules-source head-override). Rule changes: {changes}")
    return [command("warning", message, file=repository_path(out, cfg.path_display), line=cfg.reason_line,
                    title="rag-corpus-check: rules overridden by this PR")]


def _gate_annotations(out: Outcome) -> list[str]:
    """Why a failed gate failed, at the config (where the rules are)."""
    if out.verdict != FAIL or out.config is None:
        return []
    where = repository_path(out, out.config.path_display)
    return [command("error", r, file=where, title="rag-corpus-check: quality gate failed") for r in gate_reasons(out)]


def _annotation(out: Outcome, p) -> str:
    msg = (f"[{p.id}] " if p.id else "") + p.message
    return command(p.severity, msg, file=repository_path(out, p.file), line=p.line, title=f"rag-corpus-check: {p.kind}")


def _fmt(v) -> str:
    return "" if v is None else repr(round(v, 10))


# The step outputs, in the order they are written; action.yml declares each.
OUTPUT_NAMES = (
    "passed", "verdict", "exit-code", "rules-source", "results-path", "summary-path",
    "k", "precision", "recall", "ndcg", "judged",
)


def outputs(out: Outcome, results_path: str, summary_path: str) -> dict[str, str]:
    cfg, ev = out.config, out.evaluation
    means = ev.means if ev else {}
    k = cfg.k if cfg else 0
    return {
        "passed": "true" if out.passed else "false",
        "verdict": out.verdict,
        "exit-code": str(out.exit_code),
        "rules-source": out.rules_source or "",
        "results-path": results_path,
        "summary-path": summary_path,
        "k": str(k) if cfg else "",
        "precision": _fmt(means.get(Measure("P", k))),
        "recall": _fmt(means.get(Measure("R", k))),
        "ndcg": _fmt(means.get(Measure("nDCG", k))),
        "judged": _fmt(means.get(Measure("Judged", k))),
    }


def write_outputs(path: str, values: dict[str, str]) -> None:
    """Append ``name<<DELIM`` blocks with a random delimiter, the form that
    cannot be broken by a value (values here are ours, paths included). The
    whole text goes out in one write, so a full disk cuts it short at worst
    once, not between every pair of outputs. Lines end in ``\\n`` on every
    OS: on Windows a text-mode write made ``true\\r`` of ``true``, and
    ``passed == 'true'`` never matched."""
    blocks = []
    for name, value in values.items():
        delim = "ghadelim_" + secrets.token_hex(16)
        while delim in value:  # 128 random bits; never, but cheap to be sure
            delim = "ghadelim_" + secrets.token_hex(16)
        blocks.append(f"{name}<<{delim}\n{value}\n{delim}\n")
    with open(path, "a", encoding="utf-8", newline="") as f:
        f.write("".join(blocks))


def append_step_summary(path: str, markdown: str) -> None:
    with open(path, "a", encoding="utf-8", newline="") as f:
        f.write(markdown)
