"""CSV with a header row (a gold set kept as a spreadsheet), read as the
JSONL lines are: streamed through the same line reader, so the file, line
and record limits, gzip and the digest hold as for every text input."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.safe_io.jsontext import _lines, decode_utf8
from rag_corpus_check.safe_io.paths import InputError, Limits


def iter_csv(real: str, display: str, limits: Limits, hasher=None) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, {column: cell})`` of each row after the header, ``line``
    being where the row starts (a quoted cell may span lines). A row with
    more cells than the header, a header that names a column twice or is
    empty, or a quote left open is an InputError at its line; an empty row
    is skipped; a row with fewer cells than the header lacks the last columns."""
    where = [0, 0]  # (the line last read, the line the row being read started on)

    def text() -> Iterator[str]:
        for lineno, raw in _lines(real, display, limits, hasher, blank=True):
            if where[1] == 0:
                where[1] = lineno
            where[0] = lineno
            yield decode_utf8(raw, display, lineno) + "\n"

    rows = csv.reader(text(), strict=True)
    header = _header(rows, display, where)
    while True:
        where[1] = 0
        row = _row(rows, display, where)
        if row is None:
            return
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            raise InputError("parse", f"the row has {len(row)} cells, the header {len(header)} columns",
                             file=display, line=where[1])
        yield where[1], dict(zip(header, row, strict=False))


def _row(rows, display: str, where: list[int]) -> list[str] | None:
    try:
        return next(rows)
    except StopIteration:
        return None
    except csv.Error as exc:
        raise InputError("parse", f"not valid CSV: {exc}", file=display, line=where[1] or where[0]) from None


def _header(rows, display: str, where: list[int]) -> list[str]:
    header = _row(rows, display, where)
    if header is None or not any(cell.strip() for cell in header):
        raise InputError("parse", "a CSV gold file starts with a header row naming its columns", file=display,
                         line=where[1] or 1)
    names = [cell.strip() for cell in header]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise InputError("parse", f"the header names a column twice (`{safe_text(twice, 60)}`)", file=display, line=where[1])
    return names

