"""A small Markdown builder and the job summary built with it.

Every piece of data that reaches a table cell or a line goes through
:func:`cell`, which leaves no way for it to add a row, a column, a link, an
image or HTML.
"""

from __future__ import annotations

import re

from rag_corpus_check.core.text import DIGITS, safe_text

MAX_SUMMARY_BYTES = 900 * 1024  # GitHub drops a step summary above 1 MiB entirely

_BACKTICKS = re.compile(r"`+")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def cell(value: object, limit: int = 120) -> str:
    """Escape untrusted text for a GFM table cell or inline text."""
    s = safe_text(value, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    # Break GFM autolinks (scheme://, www., e-mail). cmark-gfm still links
    # "a&#64;b.com", so an e-mail @ gets a zero-width space after it.
    s = s.replace(":", "&#58;").replace("@", "&#64;&#8203;")
    return s


_SPAN = re.compile(r"`([^`]+)`")


def prose(value: object, limit: int = 500, in_table: bool = False) -> str:
    """Untrusted text whose `…` spans are shown as code (a measure name, an
    id, a key to write): the spans are kept as code spans, everything else
    goes through :func:`cell`. A code span's content is shown literally by
    GFM (no emphasis, link, autolink or HTML), and it cannot be closed early:
    it holds no backtick. In a table cell its ``|`` is escaped (GFM splits
    cells before it reads code spans). A backtick without its pair is text."""
    s = safe_text(value, limit)
    out, at = [], 0
    for m in _SPAN.finditer(s):
        out += [cell(s[at:m.start()], len(s)), "`" + _span(m.group(1), in_table) + "`"]
        at = m.end()
    out.append(cell(s[at:], len(s)))
    return "".join(out)


def span_text(value: object, limit: int = 120) -> str:
    """Untrusted text to go inside a code span (which shows it literally):
    single-line, its backticks made quotes so it cannot close the span."""
    return _span(safe_text(value, limit).replace("`", "'"), False)


def _span(text: str, in_table: bool) -> str:
    # A span that starts and ends with a space loses one of each; a space
    # more on both sides keeps the text as it is.
    text = text.replace("|", "\\|") if in_table else text
    return f" {text} " if text.startswith(" ") and text.endswith(" ") and text.strip() else text


def fmt(v: float | None, digits: int = DIGITS) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


class Summary:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def heading(self, text: str, level: int = 2) -> Summary:
        self.parts.append("#" * level + " " + text)
        return self

    def para(self, text: str) -> Summary:
        self.parts.append(text)
        return self

    def bullets(self, items: list[str]) -> Summary:
        self.parts.append("\n".join(f"- {i}" for i in items))
        return self

    def table(self, header: list[str], rows: list[list[str]]) -> Summary:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        self.parts.append("\n".join(lines))
        return self

    def details(self, summary: str, body: Summary) -> Summary:
        self.parts.append(f"<details><summary>{summary}</summary>\n\n{body.render()}\n\n</details>")
        return self

    def code(self, text: str) -> Summary:
        """A fenced block that ``text`` cannot close: the fence is one
        backtick longer than the longest run of backticks in it (CommonMark
        closes a fence only with a run at least as long as the opening one)."""
        longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
        fence = "`" * max(3, longest + 1)
        self.parts.append(f"{fence}\n{text}\n{fence}")
        return self

    def render(self, max_bytes: int = MAX_SUMMARY_BYTES) -> str:
        out = "\n\n".join(self.parts) + "\n"
        if len(out.encode("utf-8")) <= max_bytes:
            return out
        # Keep whole blocks while they fit; cut the first one that does not at
        # a line boundary (a table keeps its header), unless it is a folded
        # block or a code fence, which must not be left open.
        budget = max_bytes - len(CUT_NOTICE.encode("utf-8")) - 4
        kept: list[str] = []
        used = 0
        for part in self.parts:
            size = len(part.encode("utf-8")) + 2
            if used + size > budget:
                kept += _cut(part, budget - used - 2)
                break
            kept.append(part)
            used += size
        return "\n\n".join(kept) + "\n\n" + CUT_NOTICE


CUT_NOTICE = "> [!WARNING]\n> The summary was cut to stay under GitHub's 1 MiB limit; the results file has every value.\n"


def _cut(part: str, room: int) -> list[str]:
    """The lines of ``part`` that fit in ``room`` bytes, when cutting it
    leaves valid Markdown (not a fold or a fence, a table with its header)."""
    if part.startswith(("<details>", "```")):
        return []
    lines = []
    for line in part.split("\n"):
        room -= len(line.encode("utf-8")) + 1
        if room < 0:
            break
        lines.append(line)
    return ["\n".join(lines)] if lines and not (lines[0].startswith("|") and len(lines) < 3) else []
