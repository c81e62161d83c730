"""A gold set kept in several files (`gold:` as a list), merged into one.

The hand-edited gold file stays as it is; a worksheet `rag-corpus-check pool`
wrote, once graded, is committed next to it and listed after it. A question
may appear in several files; its labels are the union. Two files must not
disagree: the same (question, document) graded differently, or a question
whose text (or snapshot) differs, is an input error that names both places —
which one is right is not for file order to decide (the retriever searches
the text). The same grade twice is a warning: harmless, but one of the two
should go.

Messages about a merged gold set must name the file each question and label
came from: :func:`where` answers that for any :class:`Gold`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs.records import Gold, GoldQuery


@dataclass
class MergedGold(Gold):
    """A gold set read from several files. ``file`` is the first of them;
    ``origins`` holds the file of every question (by id) and label (by
    (question id, document id)) that comes from another one."""

    files: list[str] = field(default_factory=list)
    origins: dict[object, str] = field(default_factory=dict)
    snapshot_file: str | None = None  # the file the document-level snapshot is declared in


def where(gold: Gold, q: GoldQuery, doc_id: str | None = None) -> tuple[str, int | None]:
    """The file and line of question ``q`` of ``gold`` (of its label on
    ``doc_id`` when given), for a message."""
    origins = gold.origins if isinstance(gold, MergedGold) else {}
    if doc_id is None:
        return origins.get(q.query_id, gold.file), q.line
    # A label merged from another file has its own line there (see _label).
    file = origins.get((q.query_id, doc_id)) or origins.get(q.query_id, gold.file)
    return file, q.label_lines.get(doc_id) or q.line


def snapshot_where(gold: Gold) -> tuple[str, int | None]:
    """Where the gold set's document-level `snapshot:` is declared."""
    declared = gold.snapshot_file if isinstance(gold, MergedGold) else None
    return declared or gold.file, gold.snapshot_line


def merge_gold(golds: list[Gold], problems: P.Problems) -> Gold:
    """One gold set of ``golds`` (in the config's order); disagreements are
    added to ``problems``. A single file is returned as it is."""
    if len(golds) == 1:
        return golds[0]
    first = golds[0]
    merged = MergedGold(file=first.file, format=first.format, files=[g.file for g in golds])
    for gold in golds:
        _snapshot(merged, gold, problems)
        for q in gold.queries.values():
            _question(merged, gold.file, q, problems)
    return merged


def _at(place: tuple[str, int | None]) -> str:
    file, line = place
    return f"{file}:{line}" if line else file


def _snapshot(merged: MergedGold, gold: Gold, problems: P.Problems) -> None:
    """The document-level snapshot: the first declared; another one is an error."""
    if gold.snapshot is None:
        return
    if merged.snapshot is None:
        merged.snapshot, merged.snapshot_line, merged.snapshot_file = gold.snapshot, gold.snapshot_line, gold.file
    elif merged.snapshot != gold.snapshot:
        problems.add(P.CONSISTENCY, f"the gold set declares snapshot `{safe_text(gold.snapshot, 40)}` here and "
                     f"`{safe_text(merged.snapshot, 40)}` in {_at(snapshot_where(merged))}; the files of one gold "
                     "set must agree — make them equal (or leave it out of one)", file=gold.file,
                     line=gold.snapshot_line)


def _question(merged: MergedGold, file: str, q: GoldQuery, problems: P.Problems) -> None:
    have = merged.queries.get(q.query_id)
    if have is None:
        merged.queries[q.query_id] = q
        if file != merged.file:
            merged.origins[q.query_id] = file
        return
    for what in ("text", "snapshot", "answerable"):
        _same(merged, have, file, q, what, problems)
    _same_tags(merged, have, file, q, problems)
    for doc_id, grade in q.relevant.items():
        _label(merged, have, file, q, doc_id, grade, problems)


_WHAT = {"text": "question text", "snapshot": "question's snapshot", "answerable": "question's `answerable`"}


def _same(merged: MergedGold, have: GoldQuery, file: str, q: GoldQuery, what: str, problems: P.Problems) -> None:
    """A question's text (snapshot, `answerable`) in two files: taken from
    the one that has it; two that differ are an error."""
    mine, theirs = getattr(q, what), getattr(have, what)
    if mine is None or mine == theirs:
        return
    if theirs is None:
        setattr(have, what, mine)
        return
    problems.add(P.CONSISTENCY, f"the {_WHAT[what]} differs between {_at((file, q.line))} and "
                 f"{_at(where(merged, have))}; a question has one (with a retriever, its text decides what is "
                 "retrieved) — make them equal, or leave it out of one file", file=file, line=q.line, id=q.query_id)


def _same_tags(merged: MergedGold, have: GoldQuery, file: str, q: GoldQuery, problems: P.Problems) -> None:
    """A question's tags in two files: taken from the one that has them (a
    worksheet of `pool` has none); two that differ (as sets) are an error."""
    if not q.tags or set(q.tags) == set(have.tags):
        return
    if not have.tags:
        have.tags = q.tags
        return
    problems.add(P.CONSISTENCY, f"the question's tags differ between {_at((file, q.line))} and "
                 f"{_at(where(merged, have))}; a question has one set of tags (its slices) — make them equal, or "
                 "leave them out of one file", file=file, line=q.line, id=q.query_id)


def _label(merged: MergedGold, have: GoldQuery, file: str, q: GoldQuery, doc_id: str, grade: int,
           problems: P.Problems) -> None:
    """One label of ``q`` (read from ``file``) added to the merged question
    ``have``; a document judged there already is reported."""
    line = q.label_lines.get(doc_id) or q.line
    if doc_id not in have.relevant:
        have.relevant[doc_id] = grade
        have.label_lines[doc_id] = line
        if file != merged.origins.get(have.query_id, merged.file):
            merged.origins[(have.query_id, doc_id)] = file
        return
    first, before = _at(where(merged, have, doc_id)), have.relevant[doc_id]
    here = _at((file, line))
    qid = safe_text(q.query_id, 60)
    if before == grade:
        problems.add(P.CONSISTENCY, f"question `{qid}`: the document is graded {grade} in {here} and again in "
                     f"{first} (the same grade) — remove one of the two", file=file, line=line, id=doc_id,
                     severity=P.WARNING)
        return
    problems.add(P.CONSISTENCY, f"question `{qid}`: the document is graded {grade} in {here} but {before} in "
                 f"{first}; a document has one grade per question — keep the right one, remove the other",
                 file=file, line=line, id=doc_id)
