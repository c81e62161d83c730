"""Schema problems of one record, reported with file, line and a safe id."""

from __future__ import annotations

import re

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.schemas import describe_error, error_path, errors, quick_check
from rag_corpus_check.inputs.checks import ID
from rag_corpus_check.safe_io import line_of


def record_id(record) -> str | None:
    """The id a record gives itself, to name it in a message."""
    if isinstance(record, dict):
        for key in ("id", "query_id"):
            v = record.get(key)
            if isinstance(v, str):
                return v
    return None


def schema_ok(problems: P.Problems, schema: tuple[str, str], record, file: str, line: int | None,
              doc_for_lines=None, fast=None) -> bool:
    """True when ``record`` is valid against ``schema`` (name, fragment).
    ``fast`` (from :mod:`inputs.checks`) accepts valid records quickly;
    anything it rejects is validated by jsonschema, which words the messages,
    until ``problems`` lists no more errors of ``file``: then the record is
    counted as invalid without jsonschema (100,000 invalid lines of a 13 KB
    gzip took 33 CPU-s, nearly all in jsonschema)."""
    if fast is not None and fast(record):
        return True
    verdict = _counted(problems, schema, record, file, line) if problems.full(file) else None
    if verdict is not None:
        return verdict
    errs = errors(schema[0], record, schema[1])
    for err in errs:
        ln = line_of(doc_for_lines, error_path(err)) if doc_for_lines is not None else line
        problems.add(P.SCHEMA, describe_error(err), file=file, line=ln or line, id=record_id(record))
    return not errs


_OTHER_SPACE = re.compile(r"[^\S \t]")  # whitespace that is not a field separator


def trec_fields(text: str) -> list[str]:
    """The fields of a TREC line as trec_eval splits them: on spaces and tabs
    only (``str.split()`` also splits on U+00A0, U+3000, U+2028 …, so
    ``q1 0 d1<U+00A0>1`` would be four fields here and three in trec_eval)."""
    parts = text.replace("\t", " ").split(" ")
    return parts if "" not in parts else [f for f in parts if f]  # one space between fields needs no filter


def other_space_note(text: str) -> str:
    """For a line with the wrong number of fields: the space it may have
    meant as a separator."""
    m = None if text.isascii() else _OTHER_SPACE.search(text)
    return "" if m is None else (f" (it holds U+{ord(m.group()):04X}, which is not a field separator: "
                                 "trec_eval splits on spaces and tabs only)")

def _counted(problems: P.Problems, schema: tuple[str, str], record, file: str, line: int | None) -> bool | None:
    """Past the errors listed for ``file``: whether ``record`` is valid by the
    quick check, an invalid one counted ("... N more in file"); None when
    only jsonschema can tell."""
    verdict = quick_check(schema[0], record, schema[1])
    if verdict is False:
        problems.add(P.SCHEMA, "invalid record (not described: the file has more problems than are listed)",
                     file=file, line=line, id=record_id(record))
    return verdict


def trec_ids_ok(values: list[str]) -> bool:
    """Whether :func:`trec_id_problem` finds nothing in any of ``values``
    (a few C passes over them all)."""
    if not ID.all_ok(values):
        return False
    joined = " ".join(values)
    return joined.isascii() or _OTHER_SPACE.search(joined) is None


# The ASCII characters trec_id_problem refuses in an id: the id rule's
# control characters and the other spaces (the tab and the line end separate
# fields: never in one).
_ASCII_REFUSED = bytes(c for c in range(128) if chr(c) not in "\t\n"
                       and ((ID.bad is not None and ID.bad(chr(c))) or _OTHER_SPACE.match(chr(c))))
assert ID.low <= 1 and ID.good is None  # a plain text's ids: valid by their length alone (below)


def trec_text_plain(text: str) -> bool:
    """Whether no field of a TREC text (lines of fields split on spaces and
    tabs) holds a character :func:`trec_id_problem` refuses: ASCII without
    them (two C passes; the id rule's pattern over each id took 0.16 s per
    million ids). Its ids are then valid when :func:`trec_lengths_ok`."""
    return text.isascii() and len(text.encode("ascii").translate(None, _ASCII_REFUSED)) == len(text)


def trec_lengths_ok(fields: list[str]) -> bool:
    """:func:`trec_ids_ok` for non-empty fields of a :func:`trec_text_plain` text."""
    return max(map(len, fields), default=0) <= ID.high


def trec_id_problem(problems: P.Problems, value: str, what: str, file: str, line: int) -> bool:
    """A TREC file's id (a token without spaces and tabs) against the
    schemas' id rule; any other space in it is an error too (trec_eval keeps
    it in the id, where no other id matches it by eye)."""
    if not ID.ok(value):
        problems.add(P.SCHEMA, f"{what} is longer than {ID.high} characters or contains control characters",
                     file=file, line=line, id=value)
        return True
    m = None if value.isascii() else _OTHER_SPACE.search(value)
    if m is None:
        return False
    problems.add(P.PARSE, f"{what} contains U+{ord(m.group()):04X}, a space that is not a field separator "
                 "(trec_eval splits fields on spaces and tabs only, so it is part of the id) — use a space or "
                 "tab between fields, and none inside an id", file=file, line=line, id=value)
    return True
