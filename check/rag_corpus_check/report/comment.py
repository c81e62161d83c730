"""The pull-request comment, rebuilt from a results file that arrived in an
artifact (comment/action.yml).

The artifact is hostile: a fork's pull request can change the workflow that
wrote it. It is read with caps (size packed and unpacked, names, regular files
only), results.json must be strict JSON valid against the bundled results
schema, and the comment is built from its values, every string through
:func:`~rag_corpus_check.report.markdown.cell`; summary.md is never pasted.
Stdlib only: the comment job installs nothing.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass

from rag_corpus_check.core.schemas import errors, load_schema, quick_verdict
from rag_corpus_check.core.text import counted, safe_text
from rag_corpus_check.report import render as render_
from rag_corpus_check.report.markdown import Summary, cell, prose
from rag_corpus_check.report.render import (
    ICON,
    TITLE,
    comparison,
    count,
    measure,
    more,
    num,
    passed_cell,
    signed,
    threshold_row,
    title_notes,
)
from rag_corpus_check.safe_io import InputError, loads_strict

MARKER = "<!-- rag-corpus-check -->"
RESULTS, SUMMARY = "results.json", "summary.md"
MAX_ARTIFACT_BYTES = 5 * 1024 * 1024  # the zip, and again what it unpacks to
MAX_COMMENT_BYTES = 40_000  # GitHub refuses a comment over 65,536 characters
MAX_ROWS, MAX_WORST = 10, 5

# GitHub's conclusion of the run, which leads the title: the artifact is
# the run's own word and can be forged, the conclusion cannot.
CONCLUDED = {"success": "✅ run succeeded", "failure": "❌ run failed", "cancelled": "⚪ run cancelled",
             "skipped": "⚪ run skipped", "timed_out": "⏱️ run timed out", "action_required": "⚠️ run awaits approval",
             "neutral": "⚪ run neutral", "stale": "⚪ run stale", "startup_failure": "💥 run failed to start"}
_SHA = re.compile(r"[0-9a-f]{7,64}")


class ArtifactError(Exception):
    """The artifact is refused. The message is ours, with any name from the
    artifact through safe_text (fit for the log; Markdown-escape it to show)."""


@dataclass(frozen=True)
class RunInfo:
    """The workflow run, from the event payload (GitHub's word, not the artifact's)."""

    run_id: int
    run_url: str
    head_sha: str
    conclusion: str | None

    def link(self) -> str:
        return f"run [{self.run_id}]({self.run_url})"

    def title(self, what: str) -> str:
        """The comment's heading: GitHub's conclusion first, then ``what``
        (ours, from the artifact or about it)."""
        return f"### {CONCLUDED.get(self.conclusion or '', '❔ run conclusion unknown')} (GitHub) · {what}"


# ---------------------------------------------------------------- the artifact


def read_artifact(data: bytes, cap: int = MAX_ARTIFACT_BYTES) -> dict[str, bytes]:
    """The files of an artifact zip by name: results.json (required) and
    summary.md, nothing else, at most ``cap`` bytes packed and unpacked."""
    if len(data) > cap:
        raise ArtifactError(f"the artifact is over {cap} bytes")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            _check_entries(zf.infolist(), cap)
            return {i.filename: _read_entry(zf, i, cap) for i in zf.infolist()}
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError) as exc:
        raise ArtifactError(f"the artifact is not a readable zip archive ({type(exc).__name__})") from None


def _check_entries(infos: list[zipfile.ZipInfo], cap: int) -> None:
    for info in infos:
        _check_entry(info)
    names = [i.filename for i in infos]
    problem = _set_problem(names, sum(i.file_size for i in infos), cap)
    if problem:
        raise ArtifactError(problem)


def _set_problem(names: list[str], unpacked: int, cap: int) -> str | None:
    if len(set(names)) != len(names):
        return "the artifact holds the same file twice"
    if RESULTS not in names:
        return f"the artifact holds no {RESULTS}"
    return f"the artifact unpacks to over {cap} bytes" if unpacked > cap else None


def _check_entry(info: zipfile.ZipInfo) -> None:
    name, kind = safe_text(info.filename, 80), stat.S_IFMT(info.external_attr >> 16)
    if info.filename not in (RESULTS, SUMMARY):
        what = "a directory or a path" if re.search(r"[/\\]", info.filename) else "an unexpected file"
        raise ArtifactError(f"the artifact holds {what} ({name}); only {RESULTS} and {SUMMARY} are read")
    if kind and kind != stat.S_IFREG:  # a Unix mode that says symlink, directory, device...
        raise ArtifactError(f"{name} in the artifact is not a regular file (a symlink or a device)")


def _read_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    with zf.open(info) as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise ArtifactError(f"{info.filename} unpacks to over {cap} bytes")
    return data


# ---------------------------------------------------------------- results.json


def load_results(raw: bytes) -> dict:
    """results.json: strict JSON, valid against the bundled results schema."""
    try:
        value = loads_strict(raw.decode("utf-8"), RESULTS, None)  # the check's own strict JSON rules
    except UnicodeDecodeError:
        raise ArtifactError(f"{RESULTS} is not UTF-8") from None
    except InputError as exc:  # its messages quote no input (a duplicate key is shown escaped)
        raise ArtifactError(f"{RESULTS}: {exc.message}") from None
    _validate(value)
    return value


def _validate(value: object) -> None:
    schema = load_schema("results")
    verdict = quick_verdict(schema, value, schema)
    found = [] if verdict is True else _schema_errors(value)
    if found:
        why = safe_text(found[0], 200) if isinstance(found[0], str) else _where(value, schema, verdict)
        raise ArtifactError(f"{RESULTS} does not match the results schema: {why}")


def _schema_errors(value: object) -> list:
    """jsonschema's first error in words, when this Python has jsonschema;
    else [None] (invalid, or not decidable by the stdlib check)."""
    from rag_corpus_check.core.schemas import describe_error

    try:
        return [describe_error(e) for e in errors("results", value)[:1]]
    except ImportError:
        return [None]


def _where(value: object, schema: dict, verdict: bool | None) -> str:
    """The first top-level field that is wrong, found by the stdlib check alone."""
    if verdict is None or not isinstance(value, dict):
        return "it is not an object of the kinds the schema allows"
    missing = [f"`{k}` is missing" for k in schema["required"] if k not in value]
    return (missing or [_bad_field(value, schema)])[0]


def _bad_field(value: dict, schema: dict) -> str:
    props = schema["properties"]
    bad = [k for k in props if k in value and quick_verdict(props[k], value[k], schema) is False]
    return f"`{bad[0]}` is not as the schema says" if bad else "a rule fails"


# ---------------------------------------------------------------- numbers, ids, tables


def sha(value: object) -> str:
    """A commit id in backticks when it is one, else escaped text."""
    if isinstance(value, str) and _SHA.fullmatch(value):
        return f"`{value}`"
    return cell(value, 80) if value else "unknown"


def _table(header: list[str], rows: list[list[str]]) -> str:
    return Summary().table(header, rows).parts[0]


def _more(shown: int, total: int, what: str) -> str:
    return "\n\n" + more(shown, total, what) if total > shown else ""


def _section(draw, *args, **kwargs) -> str:
    """A section :mod:`report.render` draws (the job summary's too), as text."""
    s = Summary()
    draw(s, *args, **kwargs)
    return "\n\n".join(s.parts)


# ---------------------------------------------------------------- the comment


def render(results: dict, run: RunInfo) -> str:
    """The comment for a valid results file, under MAX_COMMENT_BYTES."""
    sections = [_section(render_.thresholds, results, level=4, max_rows=MAX_ROWS), _other_rules(results),
                _other_means(results), _section(render_.changed_documents, results, max_rows=MAX_ROWS),
                _section(render_.removed_questions, results, max_rows=MAX_ROWS), _deltas(results),
                _section(render_.worst, results, MAX_WORST, level=4, deltas=True),
                _section(render_.problems, results, level=4, max_rows=MAX_ROWS)]
    return _fit(_head(results, run), sections, _footer(run, f"Rebuilt from `{RESULTS}` of"))


def render_refused(reason: str, run: RunInfo) -> str:
    """The comment for a refused artifact: our reason, nothing from it."""
    head = f"{MARKER}\n{run.title('rag-corpus-check: ⚠️ the results artifact was refused')}"
    body = f"The artifact of {run.link()} for `{run.head_sha}`: {cell(reason, 400)}. Nothing from it is shown."
    return _fit(head, [body], _footer(run, "Posted for"))


def render_missing(run: RunInfo) -> str:
    head = f"{MARKER}\n{run.title('rag-corpus-check: ⚠️ no results')}"
    body = (f"{run.link()} for `{run.head_sha}` (concluded `{run.conclusion or 'unknown'}`) uploaded no results "
            "artifact: the check stopped before writing one. See the run's log.")
    return _fit(head, [body], _footer(run, "Posted for"))


def _fit(head: str, sections: list[str], footer: str) -> str:
    """Head and footer, and the sections in order while they fit."""
    kept, used = [head], len(head.encode()) + len(footer.encode()) + 200
    for section in filter(None, sections):
        used += len(section.encode()) + 2
        if used > MAX_COMMENT_BYTES:
            kept.append("_Some sections were left out to keep this comment short; the job summary has them._")
            break
        kept.append(section)
    return "\n\n".join([*kept, footer]) + "\n"


def _head(results: dict, run: RunInfo) -> str:
    verdict = results["verdict"]
    facts = [f"PR head `{run.head_sha}`", f"checked out {sha(results['provenance']['commit'])}{_uncommitted(results)}",
             f"rules: `{results.get('rules_source') or 'unknown'}`", f"{count(len(results['queries']))} questions",
             f"{run.link()} concluded `{run.conclusion or 'unknown'}`"]
    title = run.title(f"rag-corpus-check: {ICON[verdict]} {TITLE[verdict]}{title_notes(results)}")
    override = _section(render_.rules_override, results, max_rows=MAX_ROWS)
    return "\n".join([MARKER, title, "", " · ".join(facts), *_warnings(results, run),
                      *([f"\n{override}"] if override else []), *_trust(results)])


def _uncommitted(results: dict) -> str:
    """`` with uncommitted changes to …`` when the checked files were not the commit's."""
    files = render_.uncommitted(results)
    return f" with uncommitted changes to {counted(len(files), 'input file')}" if files else ""


def _trust(results: dict) -> list[str]:
    """The `trust` warnings (the check lists them first and never cuts them), right under the title."""
    found = [p.get("message") for p in results["problems"] if isinstance(p, dict) and p.get("kind") == "trust"]
    more = f"\n> - …and {len(found) - MAX_ROWS} more (see the job summary)" if len(found) > MAX_ROWS else ""
    listed = "".join(f"\n> - {prose(m, 400)}" for m in found[:MAX_ROWS]) + more
    return [f"\n> [!WARNING]\n> What this check took on trust, or whose rules it applied:{listed}"] if found else []


def _warnings(results: dict, run: RunInfo) -> list[str]:
    """What does not add up between the artifact and the event."""
    claimed = results["provenance"].get("event_head_sha")
    found = [f"the results name another pull-request head ({sha(claimed)})"] if claimed not in (None, run.head_sha) else []
    if results["verdict"] == "pass" and run.conclusion not in ("success", None):
        found.append("the results say `pass` but the run did not succeed")
    return [f"\n> [!WARNING]\n> {w}; they may be stale or forged." for w in found]


def _other_rules(results: dict) -> str:
    """The gate's other rules, failed first: each gated slice's thresholds,
    the per-question rule, the significance gate."""
    sig, rule = results.get("significance") or {}, results.get("per_question")
    slices = [(s, t) for s in (results.get("slices") or {}).get("slices") or [] if s["gated"] for t in s["thresholds"]]
    rows = [[f"slice {cell(s['name'], 64)}", *threshold_row(t)] for s, t in slices]
    if rule:
        fell = max(map(len, rule["dropped"].values()), default=0)
        rows.append(["per question", measure(rule["measure"]), f"{count(fell)} fell by > {num(rule['max_drop'])}",
                     f"at most {count(rule['max_questions'])}", passed_cell(rule["passed"])])
    rows += [[f"significance, {cell(t['gold'], 4)} gold", measure(t["measure"]), f"Δ {signed(t['delta'])}",
              f"adjusted p > {num(sig['alpha'], 3)}", f"{passed_cell(not t['failed'])} (p {num(t['adjusted_p_value'], 3)})"]
             for t in sig.get("tested", [])]
    rows.sort(key=lambda r: not r[-1].startswith("❌"))
    body = _table(["rule", "measure", "value", "must be", "result"], rows[:MAX_ROWS]) + _more(
        min(len(rows), MAX_ROWS), len(rows), "rules")
    return "#### Other rules of the gate\n\n" + body if rows else ""


def _other_means(results: dict) -> str:
    """Means of the measures without a threshold, on one line."""
    gated = {t["measure"] for t in results["thresholds"]}
    others = [f"{measure(k)} {num(v)}" for k, v in results["metrics"].items() if k not in gated]
    shown = " · ".join(others[:MAX_ROWS]) + _more(min(len(others), MAX_ROWS), len(others), "means")
    return "Other means: " + shown if others else ""


def _deltas(results: dict) -> str:
    """The job summary's tables base → head, under a heading naming the base."""
    cmp_ = comparison(results)
    tables = _section(render_.deltas, results, max_rows=MAX_ROWS)
    return f"#### Against the base {sha(cmp_.get('base_sha') or cmp_.get('base_rev'))}\n\n{tables}" if tables else ""


def _footer(run: RunInfo, what: str) -> str:
    return (f"_{what} {run.link()} by rag-corpus-check/comment. The check's own status is what gates the "
            "merge; the run's job summary has every detail._")
