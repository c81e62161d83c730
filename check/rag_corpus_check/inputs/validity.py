"""Schema problems of one record, reported with file, line and a safe id."""

from __future__ import annotations

from rag_corpus_check import problems as P
from rag_corpus_check.inputs.checks import ID
from rag_corpus_check.safe_io import line_of
from rag_corpus_check.schemas import describe_error, error_path, errors, quick_check


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


def _counted(problems: P.Problems, schema: tuple[str, str], record, file: str, line: int | None) -> bool | None:
    """Past the errors listed for ``file``: whether ``record`` is valid by the
    quick check, an invalid one counted ("... N more in file"); None when
    only jsonschema can tell."""
    verdict = quick_check(schema[0], record, schema[1])
    if verdict is False:
        problems.add(P.SCHEMA, "invalid record (not described: the file has more problems than are listed)",
                     file=file, line=line, id=record_id(record))
    return verdict


def trec_id_problem(problems: P.Problems, value: str, what: str, file: str, line: int) -> bool:
    """A TREC file's id (a whitespace-free token) against the schemas' id rule."""
    if ID.ok(value):
        return False
    problems.add(P.SCHEMA, f"{what} is longer than {ID.high} characters or contains control characters",
                 file=file, line=line, id=value)
    return True
