"""Summary sections about where the ranking came from and what crowds out the
relevant documents, from the results file's `run_source` and
`irrelevant_by_type` (kept apart from :mod:`report.render`, which the
comment job runs on the standard library alone: a ranker words its own line)."""

from __future__ import annotations

from rag_corpus_check.inputs.records import NO_TYPE
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.report.markdown import Summary, cell, span_text
from rag_corpus_check.retrieval.dense import SHOWN
from rag_corpus_check.retrieval.rankers import RANKERS

TAILS = ("stdout_tail", "stderr_tail")


def run_source_json(out: Outcome) -> dict | None:
    """The results file's `run_source`: a committed run file, or the ranker's
    info with a command's output and, with a base, the vectors' check."""
    if out.config is None:
        return None
    info: dict
    if out.config.run is not None:
        info = {"type": "file", "path": out.run.file if out.run else out.config.run}
    elif out.retrieval is None:
        info = {"type": out.config.ranker.name}
    else:
        info = dict(out.retrieval.info)
        if out.retrieval.command is not None:
            info["stdout_tail"] = out.retrieval.command.stdout_tail
            info["stderr_tail"] = out.retrieval.command.stderr_tail
    if out.vector_trust is not None:
        info["vectors_check"] = out.vector_trust.to_json()
    return info


def source_line(source: dict | None, esc=span_text, code=lambda t: f"`{t}`") -> str | None:
    """One line on where the ranking came from (``source``: the results
    file's `run_source`); ``esc``/``code`` render untrusted text inside a
    code span and the span for the target (Markdown by default: the text
    as it is, in backticks — escapes would show inside a span)."""
    if source is None:
        return None
    if source["type"] == "file":
        return f"Run: committed file {code(esc(source['path'], 200))}"
    info = {k: v for k, v in source.items() if k not in TAILS}
    ranked = set(info) - {"type", "vectors_check"}  # only the type: nothing was ranked
    return RANKERS[source["type"]].line(info if ranked else {}, esc, code)


def supplied_line(source: dict | None, esc=cell) -> str | None:
    """Dense and hybrid with a base: how many vectors the PR supplied (new
    or changed texts: taken on trust), the first of them by id."""
    trust = (source or {}).get("vectors_check")
    if trust is None:
        return None
    n = trust["supplied"]
    first = [f"{kind[:-1]} {key}" for kind, keys in trust["supplied_ids"].items() for key in keys][:SHOWN]
    ids = ", ".join(esc(key, 80) for key in first)
    more = f" (the first {len(first)}; all in the results file)" if n > len(first) else ""
    base = "" if trust["compared_with_base_model"] is not None else " (the base has no vectors of this model: all are)"
    return f"Vectors this PR supplied (new or changed texts, taken on trust){base}: {n}" + (f": {ids}{more}" if n else "")


def run_source_line(out: Outcome, esc=cell, code=lambda t: f"`{t}`") -> str | None:
    """:func:`source_line` of the run ``out`` checked (the pool worksheet)."""
    return source_line(run_source_json(out), esc, code)


def add_sections(s: Summary, results: dict) -> None:
    """Where the ranking came from, the vectors this PR supplied, the
    irrelevant hits by document type, a command's output."""
    source = results["run_source"]
    for line in (source_line(source), supplied_line(source)):
        if line:
            s.para(line)
    _by_type(s, results)
    _command_output(s, source)


def _by_type(s: Summary, results: dict) -> None:
    rows, conventions = results["irrelevant_by_type"], results["conventions"]
    if not rows or not conventions or _untyped(rows):
        return
    s.heading(f"Irrelevant hits in the top {conventions['k']} by document type", 3)
    s.table(["type", "irrelevant hits", "of which unjudged", "share"],
            [[cell(r["type"]), str(r["irrelevant"]), str(r["unjudged"]), f"{r['share']:.0%}"] for r in rows[:20]])


def _untyped(rows: list[dict]) -> bool:
    """A corpus without document types: one "(no type)" row says nothing."""
    return len(rows) == 1 and rows[0]["type"] == NO_TYPE


def _command_output(s: Summary, source: dict | None) -> None:
    stdout, stderr = ((source or {}).get(t) for t in TAILS)
    if not (stdout or stderr):
        return
    body = Summary()
    for name, tail in (("stdout", stdout), ("stderr", stderr)):
        if tail:
            body.para(f"{name} (last lines, escaped):").code(tail)
    s.details("Retriever command output", body)
