"""Summary sections about where the ranking came from and what crowds out the
relevant documents (kept apart from summary.py so each stays small)."""

from __future__ import annotations

from rag_corpus_check.inputs.records import NO_TYPE
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.report.markdown import Summary, cell


def run_source_line(out: Outcome, esc=cell, code=lambda t: f"`{t}`") -> str | None:
    """One line on where the ranking came from; ``esc``/``code`` render
    untrusted text and code spans for the target (Markdown by default)."""
    cfg = out.config
    if cfg is None:
        return None
    if cfg.run is not None:
        return f"Run: committed file {code(esc(out.run.file if out.run else cfg.run, 200))}"
    return cfg.ranker.line(out.retrieval.info if out.retrieval else {}, esc, code)


def vectors_line(out: Outcome, esc=cell) -> str | None:
    """Dense and hybrid with a base: how many vectors the PR supplied (new
    or changed texts: taken on trust), the first of them by id."""
    trust = out.vector_trust
    if trust is None:
        return None
    n = trust.count("supplied")
    ids = ", ".join(esc(key, 80) for key in trust.first("supplied"))
    more = f" (the first {len(trust.first('supplied'))}; all in the results file)" if n > len(trust.first("supplied")) else ""
    base = "" if trust.base_model is not None else " (the base has no vectors of this model: all are)"
    return f"Vectors this PR supplied (new or changed texts, taken on trust){base}: {n}" + (f": {ids}{more}" if n else "")


def add_sections(s: Summary, out: Outcome) -> None:
    line = run_source_line(out)
    if line:
        s.para(line)
    vectors = vectors_line(out)
    if vectors:
        s.para(vectors)
    _by_type(s, out)
    _command_output(s, out)


def _by_type(s: Summary, out: Outcome) -> None:
    rows, cfg = out.irrelevant_by_type, out.config
    if not rows or not cfg or _untyped(rows):
        return
    s.heading(f"Irrelevant hits in the top {cfg.k} by document type", 3)
    s.table(["type", "irrelevant hits", "of which unjudged", "share"],
            [[cell(r["type"]), str(r["irrelevant"]), str(r["unjudged"]), f"{r['share']:.0%}"] for r in rows[:20]])


def _untyped(rows: list[dict]) -> bool:
    """A corpus without document types: one "(no type)" row says nothing."""
    return len(rows) == 1 and rows[0]["type"] == NO_TYPE


def _command_output(s: Summary, out: Outcome) -> None:
    command = out.retrieval.command if out.retrieval else None
    if command is None or not (command.stdout_tail or command.stderr_tail):
        return
    body = Summary()
    for name, tail in (("stdout", command.stdout_tail), ("stderr", command.stderr_tail)):
        if tail:
            body.para(f"{name} (last lines, escaped):").code(tail)
    s.details("Retriever command output", body)
