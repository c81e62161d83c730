"""Turning untrusted text into something safe to show.

Ids and file names come from the pull request. Before they reach a terminal, a
GitHub log, an annotation or a Markdown summary they go through :func:`safe_id`
(or :func:`safe_text`), which removes every way such text can act: control
characters (newlines make new log lines and new table rows), the workflow
command prefixes ``::`` and ``##[``, and excessive length.
"""

from __future__ import annotations

import unicodedata

MAX_ID_CHARS = 80


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    cat = unicodedata.category(ch)
    # Line/paragraph separators, format characters (bidi overrides, zero-width),
    # surrogates and unassigned code points are shown as escapes.
    if cat in ("Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn") or code in (0x85,):
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return ch


def safe_text(value: object, limit: int = 300) -> str:
    """A single-line, printable rendering of untrusted text, at most ``limit``
    characters (cut with "…")."""
    s = value if isinstance(value, str) else repr(value)
    # Every character yields at least one, so the first `limit` are enough.
    cut = len(s) > limit
    head = s[:limit]
    # Printable ASCII (the usual id) has nothing to escape: skip the loop.
    out = head if head.isascii() and head.isprintable() else "".join(map(_escape_char, head))
    # Neutralise workflow-command prefixes wherever they are: the runner reads
    # ``##[`` anywhere in a line and ``::`` at the start of a (trimmed) line.
    out = out.replace("##[", "#\\#[")
    if out.lstrip().startswith("::"):
        out = "\\" + out.lstrip()
    # Repeat: ":::" becomes ":\::" after one pass, which still holds "::".
    while "::" in out:
        out = out.replace("::", ":\\:")
    # Cut last: escaping lengthens the text, and a prefix of a string with no
    # "::" or "##[" has none either.
    if cut or len(out) > limit:
        out = out[: max(limit - 1, 0)] + "…"
    return out


def safe_id(value: object) -> str:
    """A document or question id as it may appear in any output."""
    return safe_text(value, MAX_ID_CHARS)
