"""A Markdown corpus: a folder of pages, read and chunked by the check.

Each page (:mod:`safe_io.pages` finds them) is parsed by markdown-it-py
(CommonMark), so a ``#`` line in a fenced or indented code block, an HTML
block or a front matter is never a heading, and a setext heading is one.

* A page's id is its path relative to the config's folder
  (``docs/billing/refunds.md``).
* ``chunk: heading``: each heading starts a section that runs to the next
  heading (of any level). Its id is ``<page id>#<anchor>``, the anchor GitHub
  shows for the heading (:mod:`core.anchors`), its ``doc_id`` the page id.
  The text before a page's first heading joins the first section; a page
  with no heading is one record whose id is the page id (no ``doc_id``).
* ``chunk: file``: one record per page, id the page id.
* A record's ``text`` is its heading trail (the page's title, then each
  enclosing heading and its own, joined with `` › ``), a blank line, and the
  Markdown source of its lines below the heading, code included: BM25 and the
  embedding model see that same text. ``title`` is the page's: the front
  matter's ``title``, else the first level-1 heading's text, else the file
  name without its extension.
* A front matter (a ``---`` line first, YAML, up to a ``---`` or ``...``
  line) gives ``title``, ``status`` and ``type``; one that does not parse,
  or a value the corpus schema refuses, is a warning at its line and the
  page is still read (without it).

A page's text is never put in a message.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from rag_corpus_check.config.load import MarkdownSpec
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.anchors import Slugger
from rag_corpus_check.core.progress import current as current_progress
from rag_corpus_check.inputs.corpus import fingerprint, line_sum
from rag_corpus_check.inputs.records import Corpus, Gold
from rag_corpus_check.safe_io import InputError, Limits
from rag_corpus_check.safe_io.pages import Globs, Page, list_pages, page_text

TRAIL = " › "
STATUSES = ("active", "stale", "restricted")
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,63}$")
_FRONT_END = ("---", "...")
# A page's records hold at most this many times its characters (plus SLACK): each section repeats
# the page's title and its heading trail, which 2-byte `#` lines under a long title would multiply.
AMPLIFICATION = 8
SLACK = 64 * 1024
MAX_FRONT_MATTER_LINES = 1000  # a `---` first line with no end this soon is a thematic break, not a front matter
# The parser's work, bounded per character before it runs: at most LINE_SLACK lines that are not
# empty plus one per BYTES_PER_LINE characters (a page of `#` lines cost 9 CPU-s a MB, one of
# `- # a` lines 4.2), and the characters of DEAR in headings (parsed inline) at most MARKUP_SLACK
# plus a MARKUP_SHARE-th of the page (`# ![![…` cost 13 CPU-s a MB). Real pages are far from both
# (bench/markdown.py: 27 characters a line; tests/test_markdown_corpus.py: an API reference's
# short sections of short list items under code-span headings).
LINE_SLACK = 4096
BYTES_PER_LINE = 6
MARKUP_SLACK = 16 * 1024
MARKUP_SHARE = 16
DEAR = "[]*_!<&"  # what the inline parser scans for at length: links, images, emphasis, HTML, entities


@dataclass(frozen=True)
class Heading:
    level: int
    text: str  # as GitHub renders it to text (markup, links and images dropped)
    line: int  # 1-based: the heading's first line
    end: int  # 0-based: the first line after it
    anchor: str


@dataclass
class Parsed:
    """One page, parsed: its lines (line ends dropped), its headings, where
    its body starts (after a front matter) and what the front matter gave."""

    lines: list[str]
    headings: list[Heading]
    body: int
    meta: dict = field(default_factory=dict)


@cache
def _parsers():
    """(blocks, inline): CommonMark's block parse alone (the text of a
    paragraph is not needed), and the inline parse a heading's text gets,
    with the page's link reference definitions."""
    from markdown_it import MarkdownIt  # a Markdown corpus only

    blocks = MarkdownIt("commonmark")
    blocks.core.ruler.disable("inline")
    return blocks, MarkdownIt("commonmark")


def parse_page(text: str, file: str, problems: P.Problems) -> Parsed:
    """The headings and front matter of one page's text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    body, meta = _front_matter(lines, file, problems)
    source = "\n" * body + "\n".join(lines[body:])  # the front matter blanked: lines keep their numbers
    filled = len(lines) - lines.count("")
    if filled > LINE_SLACK + len(text) // BYTES_PER_LINE:
        raise InputError("limit", f"the page has {filled} lines that are not empty in {len(text)} characters, "
                         f"fewer than {BYTES_PER_LINE} characters each (beyond {LINE_SLACK} lines): the parser's "
                         "work is per line; join the short lines", file=file)
    blocks, inline = _parsers()
    env: dict = {}
    tokens = blocks.parse(source, env)
    found = [(tok, tokens[i + 1].content) for i, tok in enumerate(tokens)
             if tok.type == "heading_open" and tok.map is not None]
    marked = sum(content.count(c) for _, content in found for c in DEAR)
    if marked > MARKUP_SLACK + len(text) // MARKUP_SHARE:
        raise InputError("limit", f"the page's headings hold {marked} of the characters `{DEAR}` (links, images, "
                         f"emphasis, HTML, entities), more than {MARKUP_SLACK} plus one per {MARKUP_SHARE} "
                         "characters of the page: shorten the headings", file=file)
    slugger = Slugger()
    headings = []
    for tok, content in found:
        shown = heading_text(content, inline, env)
        assert tok.map is not None
        headings.append(Heading(int(tok.tag[1]), shown, tok.map[0] + 1, tok.map[1], slugger.slug(shown)))
    return Parsed(lines, headings, body, meta)


# A heading's text with none of these is its text as rendered (CommonMark's inline
# syntax starts at one of them; the "commonmark" preset has no strikethrough or linkify).
_MARKUP = re.compile(r"[\n\\`*_\[\]!<>&~]")


def heading_text(content: str, inline, env: dict) -> str:
    """A heading's text as rendered: its source when it holds no inline
    syntax, else the inline parse's text (with the page's references)."""
    if _MARKUP.search(content) is None:
        return content
    return _inline_text(inline.parseInline(content, env)[0])


def _inline_text(inline) -> str:
    """A heading's text as the rendered page has it (HTML tags and images
    have none; code spans, emphasis and link texts keep theirs)."""
    out = []
    for child in inline.children or ():
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return "".join(out)  # a space before an image stays (GitHub's anchor keeps its `-`)


def _front_matter(lines: list[str], file: str, problems: P.Problems) -> tuple[int, dict]:
    """(the first line of the body, the front matter's fields)."""
    if not lines or lines[0].rstrip() != "---":
        return 0, {}
    end = next((i for i in range(1, min(len(lines), MAX_FRONT_MATTER_LINES)) if lines[i].rstrip() in _FRONT_END), None)
    if end is None:
        return 0, {}
    from rag_corpus_check.safe_io import load_yaml

    try:
        doc = load_yaml("\n".join(lines[1:end]).encode("utf-8"), file, Limits())
    except InputError as exc:
        line = exc.line + 1 if exc.line else 1  # its line in the page, past the opening `---`
        problems.add(P.PARSE, "the front matter does not parse as YAML, so its title, status and type are not "
                     "read (the page is); fix the YAML between the `---` lines", file=file, line=line,
                     severity=P.WARNING)
        return end + 1, {}
    return end + 1, _meta(doc, file, problems)


def _meta(doc, file: str, problems: P.Problems) -> dict:
    """The front matter's `title`, `status` and `type`, each when valid (else a warning)."""
    if not isinstance(doc, dict):
        return {}
    out = {}
    title, status, kind = doc.get("title"), doc.get("status"), doc.get("type")
    if isinstance(title, str) and title.strip():
        out["title"] = title.strip()
    for name, value, ok in (("status", status, status in STATUSES),
                            ("type", kind, isinstance(kind, str) and _LABEL.match(kind) is not None)):
        if value is None:
            continue
        if ok:
            out[name] = value
        else:
            problems.add(P.SCHEMA, f"the front matter's `{name}` is not valid (a status is one of "
                         f"{', '.join(STATUSES)}; a type is a short label), so it is not read",
                         file=file, line=1, severity=P.WARNING)
    return out


def title_of(page: Page, parsed: Parsed) -> str:
    """The front matter's title, else the first level-1 heading's text, else the file name."""
    if "title" in parsed.meta:
        return parsed.meta["title"]
    first = next((h.text.strip() for h in parsed.headings if h.level == 1 and h.text.strip()), None)
    return first or os.path.splitext(page.id.rsplit("/", 1)[-1])[0]


def records(page: Page, parsed: Parsed, chunk: str) -> list[tuple[dict, int]]:
    """The page's records, each with its line: one per section (``heading``)
    or the page (``file``, or a page without a heading). :class:`InputError`
    as soon as their texts pass :data:`AMPLIFICATION` times the page's size."""
    title = title_of(page, parsed)
    extra = {k: parsed.meta[k] for k in ("type", "status") if k in parsed.meta}
    lines, heads = parsed.lines, parsed.headings
    if chunk == "file" or not heads:
        return [({"id": page.id, "title": title, "text": _joined(title, lines[parsed.body:]), **extra},
                 parsed.body + 1)]
    allowed = AMPLIFICATION * sum(map(len, lines)) + SLACK
    out = []
    trail: list[Heading] = []
    for i, h in enumerate(heads):
        trail = [t for t in trail if t.level < h.level] + [h]
        stop = heads[i + 1].line - 1 if i + 1 < len(heads) else len(lines)
        body = lines[parsed.body:h.line - 1] + lines[h.end:stop] if i == 0 else lines[h.end:stop]
        text = _joined(_trail(title, trail), body)
        allowed -= len(text) + len(title)
        if allowed < 0:
            raise InputError("limit", f"the page's sections repeat its title and headings (their trails) to more "
                             f"than {AMPLIFICATION} times the page's own size; use fewer or shorter headings, or "
                             "`chunk: file`", file=page.display)
        out.append(({"id": f"{page.id}#{h.anchor}", "doc_id": page.id, "title": title, "text": text, **extra},
                    h.line))
    return out


def _trail(title: str, trail: list[Heading]) -> str:
    """The page's title, then each enclosing heading's text and the section's
    own (a first level-1 heading that is the title not twice)."""
    words = [title] + [t.text.strip() for t in trail]
    if trail[0].level == 1 and words[1] == title:
        del words[1]
    return TRAIL.join(w for w in words if w)


def _joined(head: str, body: list[str]) -> str:
    """A record's text: its heading trail (or title), a blank line, its lines."""
    text = "\n".join(body).strip("\n")
    return f"{head}\n\n{text}" if text else head


def read_markdown_corpus(root: str, base_dir: str, spec: MarkdownSpec, limits: Limits, problems: P.Problems,
                         on_doc: Callable[[str, dict], None] | None = None, hasher=None,
                         shown: str | None = None) -> Corpus:
    """Every page ``spec`` (a :class:`config.load.MarkdownSpec`) names, as
    records (``on_doc`` sees each); the corpus is named by its globs
    (``shown``: as the root sees them)."""
    shown = shown or spec.shown
    corpus = Corpus(file=shown)
    shared = limits.of_kind("the Markdown pages")
    pages = list_pages(root, base_dir, Globs(spec.paths, spec.exclude), limits, shown)
    progress = current_progress()
    total, count = 0, 0
    for n, page in enumerate(pages, 1):
        progress.tick(f"reading {shown}", n, part=(n, len(pages)))
        text = page_text(page, shared, hasher)
        for rec, line in records(page, parse_page(text, page.display, problems), spec.chunk):
            count += 1
            if count > limits.max_records:
                raise InputError("limit", f"the pages of `{shown}` hold more than {limits.max_records} records "
                                 "(raise `limits.max_records` in the config if this is intended)",
                                 file=page.display)
            if rec["id"] in corpus.docs:
                problems.add(P.CONSISTENCY, "a section's id is also another page's or section's id (a file "
                             "name with `#`?); rename the page", file=page.display, line=line, id=rec["id"])
                continue
            _add(corpus, rec, line, page.display)
            if on_doc is not None:
                on_doc(rec["id"], rec)
            total += line_sum(((rec["id"] + "\x00" + rec["text"]).encode("utf-8"),))
    corpus.fingerprint = fingerprint(total, count)
    return corpus


def _add(corpus: Corpus, rec: dict, line: int, display: str) -> None:
    doc_id, status = rec["id"], rec.get("status", "active")
    corpus.docs[doc_id] = corpus.doc(rec.get("type"), status, None)
    assert corpus.lines is not None
    corpus.lines[doc_id] = line
    corpus.where[doc_id] = display
    corpus.note_blank(doc_id, rec, line)
    if status != "active":
        corpus.inactive.add(doc_id)
    if "doc_id" in rec:
        corpus.parents[doc_id] = rec["doc_id"]


def page_digests(root: str, base_dir: str, spec: MarkdownSpec, limits: Limits) -> dict[str, str]:
    """page id → the sha-256 of its bytes, for every page ``spec`` names
    (no parse: what a move is found from). Empty when the pages cannot be
    read (the reader then says why)."""
    shared = limits.of_kind("the Markdown pages")
    try:
        pages = list_pages(root, base_dir, Globs(spec.paths, spec.exclude), limits, spec.shown)
        return {p.id: _digest(p, shared) for p in pages}
    except InputError:
        return {}


def _digest(page: Page, limits: Limits) -> str:
    from rag_corpus_check.safe_io import read_bytes
    from rag_corpus_check.safe_io.paths import MAX_DOCUMENT_BYTES

    return hashlib.sha256(read_bytes(page.real, page.display, limits.max_file_bytes, ceiling=MAX_DOCUMENT_BYTES,
                                     limits=limits)).hexdigest()


def moves(base: dict[str, str], head: dict[str, str]) -> dict[str, str]:
    """old page id → new page id, for each page gone from the head whose
    exact content is on a page new in the head (one page each way: a page
    copied twice, or two pages alike, is no move)."""
    gone = [(digest, page) for page, digest in base.items() if page not in head]
    new = [(digest, page) for page, digest in head.items() if page not in base]
    once_gone = _once(gone)
    once_new = _once(new)
    return {once_gone[d]: once_new[d] for d in once_gone.keys() & once_new.keys()}


def _once(pairs: list[tuple[str, str]]) -> dict[str, str]:
    seen: dict[str, str | None] = {}
    for digest, page in pairs:
        seen[digest] = None if digest in seen else page
    return {d: p for d, p in seen.items() if p is not None}


def moved_id(doc_id: str, moved: dict[str, str]) -> str:
    """``doc_id`` (a page, or ``page#anchor``) on its page's new path."""
    page, sep, anchor = doc_id.partition("#")
    return moved[page] + sep + anchor if page in moved else doc_id


SHOWN = 5


def carry_labels(gold: Gold, moved: dict[str, str], problems: P.Problems) -> None:
    """Labels of ``gold`` on a page the PR moved (content unchanged) put on
    its new path, each with a warning (the first :data:`SHOWN`) saying what
    to update."""
    from rag_corpus_check.inputs.gold_merge import where

    origins = getattr(gold, "origins", None)
    carried = 0
    for q in gold.queries.values():
        if not any(moved_id(d, moved) != d for d in q.relevant):
            continue
        relevant, lines = {}, {}
        for d, grade in q.relevant.items():
            new = moved_id(d, moved)
            if new != d:
                carried += 1
                if carried <= SHOWN:
                    file, line = where(gold, q, d)
                    problems.add(P.CONSISTENCY, f"labels a page this PR moved to `{new}` with its content "
                                 "unchanged: the label is carried to the new path — write the new path in the "
                                 "gold set", file=file, line=line, id=d, severity=P.WARNING)
                if origins is not None and (q.query_id, d) in origins:
                    origins[(q.query_id, new)] = origins[(q.query_id, d)]
            relevant[new] = grade
            lines[new] = q.label_lines.get(d)
        q.relevant, q.label_lines = relevant, lines
    if carried > SHOWN:
        problems.add(P.CONSISTENCY, f"{carried - SHOWN} more labels name pages this PR moved; they are carried to "
                     "the new paths — write the new paths in the gold set", file=gold.file, severity=P.WARNING)
