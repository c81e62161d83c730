"""Turning untrusted text into something safe to show.

Ids and file names come from the pull request. Before they reach a terminal, a
GitHub log, an annotation or a Markdown summary they go through :func:`safe_id`
(or :func:`safe_text`), which removes every way such text can act: control
characters (newlines make new log lines and new table rows), the workflow
command prefixes ``::`` and ``##[``, and excessive length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable
from itertools import filterfalse

MAX_ID_CHARS = 80

# Characters that render as nothing (or as a blank) but are not format
# characters (Cf, escaped anyway): fillers, blank patterns, joiners, variation
# selectors. An id made of them, or holding one, looks like another id.
_INVISIBLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0, 0x1D159]
    + list(range(0x180B, 0x1810)) + list(range(0xFE00, 0xFE10)) + list(range(0xE0100, 0xE01F0))
)


def _shown_escaped(code: int) -> bool:
    cat = unicodedata.category(chr(code))
    # Line/paragraph separators, format characters (bidi overrides, zero-width),
    # surrogates, unassigned code points, spaces other than U+0020 and the
    # invisible characters above are shown as escapes.
    return cat in ("Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn") or (cat == "Zs" and code != 0x20) or (
        code in _INVISIBLE)


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if code == 0x85 or _shown_escaped(code):
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


MAX_PIECE = 256
_PIECES = re.compile(rf"\S{{1,{MAX_PIECE}}}|\s+")


def nfkc(text: str, piece: int = MAX_PIECE) -> str:
    """Unicode NFKC in time linear in the text. CPython reorders a run of
    combining marks (and U+0F73 and its kin, which decompose into them) in
    quadratic time: 100k characters of U+0F73 took 48 s. Runs of marks never
    cross a space, so a text whose runs without a space are all at most
    MAX_PIECE characters is normalised whole; one with a longer run (no
    language writes a 256-character word) is normalised MAX_PIECE characters
    at a time. Text already in NFKC (the quick check, linear) is returned as it is."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    if max(map(len, text.split()), default=0) <= piece:
        return unicodedata.normalize("NFKC", text)
    pieces = _PIECES.findall(text) if piece == MAX_PIECE else re.findall(rf"\S{{1,{piece}}}|\s+", text)
    return "".join(unicodedata.normalize("NFKC", p) for p in pieces)


# ---------------------------------------------------------------- ids that look like other ids

# Letters of other scripts drawn like Latin ones (the common part of
# Unicode's confusables for Cyrillic, Greek and Armenian), and dashes and
# minus signs drawn like the hyphen-minus; NFKC already folds full-width and
# compatibility forms.
_LOOKALIKE = str.maketrans(
    "аАВсСеЕһНіІјЈКӏМоОрРԛԚѕЅТуУҮхХԁԝԜ"
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοονρικυϲɑɡı"
    "օՕսՍհոցզ"
    "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\u02d7",
    "aABcCeEhHiIjJKlMoOpPqQsSTyYYxXdwW"
    "ABEZHIKMNOPTYXoovpikucagi"
    "oOuUhngq"
    "----------",
)


def skeleton(text: str) -> str:
    """How ``text`` looks: NFKC (32 characters at a time in a run without a
    space, see :func:`nfkc`: ids are many), invisible characters dropped,
    look-alike letters of other scripts as the Latin letter they resemble."""
    norm = nfkc(text, 32)
    return "".join(ch for ch in norm if not _shown_escaped(ord(ch))).translate(_LOOKALIKE)


def escaped(text: str, limit: int = MAX_ID_CHARS) -> str:
    """Every non-ASCII character as an escape: two ids that look alike are
    told apart."""
    return safe_text(text.encode("ascii", "backslashreplace").decode("ascii"), limit)


def odd_ids(ids: Iterable[str], known: Collection[str]) -> list[tuple[str, str]]:
    """(id, why) for each id of ``ids`` that holds an invisible character or
    looks like another id (of ``known``, or of ``ids``). ASCII ids are passed
    over in C: they can be neither."""
    found = []
    first: dict[str, str] = {}  # skeleton -> the first id with it
    for ident in filterfalse(str.isascii, ids):
        if any(_shown_escaped(ord(ch)) for ch in ident):
            found.append((ident, f"holds invisible or blank characters (`{escaped(ident)}`)"))
        look = skeleton(ident)
        other = look if look != ident and look in known else first.setdefault(look, ident)
        if other != ident:
            found.append((ident, f"looks like `{escaped(other)}` (`{escaped(ident)}`)"))
    return found


_DIGITS = re.compile(r"([0-9]+)")


DIGITS = 4  # decimals a measured value is shown with
_MAX_DIGITS = 15
# Means are sums of fractions; 0.7 can come out as 0.69999999999999996. A mean
# within this distance of a limit is at it (thresholds and max_drop alike).
TOLERANCE = 1e-12


def figure(value: float, limit: float | None = None) -> str:
    """A measured value as every output shows it: :data:`DIGITS` decimals,
    or more when these would hide which side of ``limit`` it is on — a mean
    of 0.139999 against a threshold of 0.14 shows as 0.139999, never 0.1400
    (which reads as meeting it). The one rule for a value beside its limit."""
    digits = DIGITS
    while limit is not None and digits < _MAX_DIGITS and _side(float(f"{value:.{digits}f}"), limit) != _side(value, limit):
        digits += 1
    return f"{value:.{digits}f}"


def _side(value: float, limit: float) -> int:
    """-1 below ``limit``, 0 at it (within the gate's tolerance), 1 above."""
    return -1 if value < limit - TOLERANCE else (0 if value <= limit + TOLERANCE else 1)


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless one: "1 problem", "3 questions"."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def natural_key(text: str) -> tuple[list, str]:
    """Sort key for ids as people read them: runs of digits by their value
    (q2 before q10, 1 before 10 before 100), the rest as text; ties by the
    text. The split alternates text and number, so two keys compare text
    with text and number with number at every place."""
    parts: list = _DIGITS.split(text)
    parts[1::2] = map(int, parts[1::2])
    return parts, text
