"""The labelling worksheet of `rag-corpus-check pool`: what goes on it and how
it is written. No file is read or written here (:mod:`pool` does that).

Per gold question, the documents in the top of the ranking (the head's; with
a base, the base's too) that no label of the question judges, each with an
empty grade (`null`) to fill in. It is a YAML file in the gold format, so
once graded it is committed next to the gold file and listed under `gold:`;
left unfilled, the gold reader refuses it with a message that says so. What
a judge needs to see — the question, each document's title and the start of
its text — is in comments: every comment is one line of escaped text
(:func:`text.safe_text`: no line break or control character, no workflow
command), cut to a bounded length, so nothing from the corpus can leave its
comment and become YAML. Ids are written as double-quoted YAML scalars with
every character that is not printable escaped, so they read back exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from rag_corpus_check.core.text import natural_key, safe_text
from rag_corpus_check.inputs import Gold

MAX_QUESTION_CHARS = 300
MAX_TITLE_CHARS = 160
MAX_EXCERPT_CHARS = 240
MAX_HEADER_CHARS = 400


@dataclass(frozen=True)
class Pooled:
    """An unjudged document and its positions (from 1) in the top of the
    head's and the base's rankings (None: not there)."""

    doc_id: str
    head: int | None
    base: int | None = None


@dataclass
class PoolQuestion:
    query_id: str
    text: str | None
    docs: list[Pooled]


@dataclass(frozen=True)
class Excerpt:
    """What a judge sees of a document."""

    title: str
    text: str
    type: str | None = None
    status: str = "active"


def excerpt(rec: dict) -> Excerpt:
    """The excerpt of a corpus record (only its start is kept)."""
    return Excerpt(_one_line(rec.get("title") or "", MAX_TITLE_CHARS),
                   _one_line(rec.get("text") or "", MAX_EXCERPT_CHARS),
                   rec.get("type"), rec.get("status") or "active")


def _one_line(text: str, limit: int) -> str:
    """The start of ``text`` with its runs of white space as one space, cut
    at ``limit`` characters ("…" where it was cut)."""
    line = " ".join(text[: limit * 4].split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def select(gold: Gold, head: dict[str, list[str]], base: dict[str, list[str]] | None, depth: int,
           changed_only: bool = False) -> list[PoolQuestion]:
    """Per gold question (in natural order), the documents in the top
    ``depth`` of ``head`` (and of ``base``) that it does not judge; with
    ``changed_only``, only the questions whose top ``depth`` changed (another
    set of documents, or a question the base does not have). A question
    unanswerable by design is not pooled: what it retrieves is no label debt."""
    found = []
    for qid in sorted(gold.queries, key=natural_key):
        if gold.queries[qid].answerable is False:
            continue
        top, was = head.get(qid, [])[:depth], (base or {}).get(qid, [])[:depth]
        if changed_only and not _changed(qid, top, was, base):
            continue
        docs = _unjudged(top, was, gold.queries[qid].relevant)
        if docs:
            found.append(PoolQuestion(qid, gold.queries[qid].text, docs))
    return found


def _changed(qid: str, top: list[str], was: list[str], base: dict[str, list[str]] | None) -> bool:
    return base is None or qid not in base or set(top) != set(was)


def _unjudged(top: list[str], was: list[str], judged: dict[str, int]) -> list[Pooled]:
    """The documents of ``top`` then those only in ``was``, none judged."""
    head = {d: i for i, d in enumerate(top, 1)}
    base = {d: i for i, d in enumerate(was, 1)}
    return [Pooled(d, head.get(d), base.get(d)) for d in dict.fromkeys(top + was) if d not in judged]


def wanted(questions: list[PoolQuestion]) -> set[str]:
    """Every document on the worksheet."""
    return {d.doc_id for q in questions for d in q.docs}


@dataclass
class Sheet:
    """What the worksheet holds: the questions, the excerpts of their
    documents, and how many pooled documents were left out (not in the
    head's corpus)."""

    questions: list[PoolQuestion]
    excerpts: dict[str, Excerpt]
    dropped: int = 0


def known_only(questions: list[PoolQuestion], excerpts: dict[str, Excerpt]) -> Sheet:
    """The worksheet of ``questions`` with only the documents the head's
    corpus has (one only the base had cannot be labelled any more)."""
    kept = [PoolQuestion(q.query_id, q.text, _known(q.docs, excerpts)) for q in questions]
    return Sheet([q for q in kept if q.docs], excerpts, count(questions) - count(kept))


def _known(docs: list[Pooled], excerpts: dict[str, Excerpt]) -> list[Pooled]:
    return [d for d in docs if d.doc_id in excerpts]


def count(questions: list[PoolQuestion]) -> int:
    """How many documents are on the worksheet."""
    return sum(len(q.docs) for q in questions)


def render(sheet: Sheet, header: list[str], with_base: bool = False) -> str:
    """The worksheet: ``header`` (one comment line each), then the questions;
    ``with_base``: the positions name the head's and the base's ranking."""
    lines = [comment(h, MAX_HEADER_CHARS) for h in header] + ["queries:"]
    for q in sheet.questions:
        lines += _question(q, sheet.excerpts, with_base)
    return "\n".join(lines) + "\n"


def render_jsonl(sheet: Sheet, with_base: bool = False) -> str:
    """The worksheet as JSONL gold (no comments there): a question a line,
    each document with an empty grade, and what a judge needs to see under
    ``metadata.pool`` (the question, each document's position, title and
    the start of its text), which the gold reader ignores. JSON escapes
    every character that could leave its string."""
    return "".join(json.dumps(_record(q, sheet.excerpts, with_base), ensure_ascii=True) + "\n"
                   for q in sheet.questions)


def _record(q: PoolQuestion, excerpts: dict[str, Excerpt], with_base: bool) -> dict:
    docs = [{"id": d.doc_id, "position": position(d, with_base), "title": excerpts[d.doc_id].title,
             "text": excerpts[d.doc_id].text} for d in q.docs]
    about = {"question": _one_line(q.text, MAX_QUESTION_CHARS)} if q.text else {}
    return {"query_id": q.query_id, "relevant": dict.fromkeys((d.doc_id for d in q.docs), None),
            "metadata": {"pool": about | {"documents": docs}}}


def _question(q: PoolQuestion, excerpts: dict[str, Excerpt], with_base: bool) -> list[str]:
    lines = [f"  - query_id: {quoted(q.query_id)}"]
    if q.text:
        lines.append("    " + comment("question: " + _one_line(q.text, MAX_QUESTION_CHARS), MAX_HEADER_CHARS))
    lines.append("    relevant:")
    for d in q.docs:
        lines += ["      " + c for c in _about(d, excerpts[d.doc_id], with_base)]
        lines.append(f"      {quoted(d.doc_id)}: null")
    return lines


def _about(d: Pooled, ex: Excerpt, with_base: bool) -> list[str]:
    """The comment lines above a document: where it ranks, its type, status and title; its text's start."""
    facts = [position(d, with_base), ex.type, None if ex.status == "active" else ex.status, ex.title or "(no title)"]
    about = [comment(" · ".join(f for f in facts if f), MAX_HEADER_CHARS)]
    return about + ([comment("  " + ex.text, MAX_HEADER_CHARS)] if ex.text else [])


def position(d: Pooled, with_base: bool) -> str:
    """Where a document ranks: "#3", or with a base "head #3, base —"."""
    return f"head {_rank(d.head)}, base {_rank(d.base)}" if with_base else _rank(d.head)


def _rank(pos: int | None) -> str:
    return "—" if pos is None else f"#{pos}"


def comment(text: str, limit: int) -> str:
    """A YAML comment that holds ``text`` on one line, escaped and cut."""
    return "# " + safe_text(text, limit) if text else "#"


def quoted(value: str) -> str:
    """``value`` as a YAML double-quoted scalar that reads back exactly:
    `"` and `\\` escaped, and every character that is not printable (line
    breaks, controls, format characters, U+0085, U+2028, a byte-order mark)
    as a `\\x`, `\\u` or `\\U` escape."""
    return '"' + "".join(map(_yaml_char, value)) + '"'


def _yaml_char(ch: str) -> str:
    if ch in '"\\':
        return "\\" + ch
    if ch.isprintable():  # a subset of what YAML may hold unescaped
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
