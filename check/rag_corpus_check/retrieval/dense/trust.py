"""What the gate takes from a vectors folder on trust, and what it checks:
every text the check ranks (a served corpus record, a gold question) must
have a row whose ``sha256`` is its current text's (else it is stale); with
a base, the vectors of texts on both sides must be the base's, bit for bit.
No numpy here: rows are compared as bytes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Protocol

from rag_corpus_check.core import problems as P

# The one line on how to re-embed, after the stale rows are listed.
REEMBED = ("{n} texts have no current vector in `{folder}`: embed each listed text (the record's `text`, the "
           "question's text) with `{model}`, and write its row to {kind}.npy with "
           '{{"{key}": <id>, "sha256": <sha-256 of the UTF-8 text>}} on the same line of {kind}.jsonl — '
           '`rag-corpus-check embed --command "<your embedding command>"` does this, on a developer\'s machine '
           "or in a push job (never in the pull request's job)")


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def text_digest(text: str) -> bytes:
    """:func:`text_sha256` as its 32 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class RowTable(Protocol):
    """A vectors file's rows (:class:`folder.Rows`)."""

    @property
    def keys(self) -> list[str]: ...

    @property
    def digests(self) -> bytes | bytearray: ...

    @property
    def row_of(self) -> dict[str, int]: ...


def stale(ids: list[str], digests: bytes | bytearray, rows: RowTable) -> list[tuple[str, str]]:
    """``(id, why)`` for every id whose row is missing or embeds another
    text; ``digests`` holds the sha-256 of each id's text (32 bytes each, in
    the order of ``ids``)."""
    if ids == rows.keys and digests == rows.digests:
        return []  # every row, in row order, current: one comparison in C
    out = []
    have, row_of = rows.digests, rows.row_of
    for at, key in enumerate(ids):
        row = row_of.get(key)
        if row is None:
            out.append((key, "has no vector row"))
        elif have[32 * row:32 * row + 32] != digests[32 * at:32 * at + 32]:
            out.append((key, "has a stale vector: its row embeds another text (the sha256 differs)"))
    return out


def report_stale(found: list[tuple[str, str]], where: Callable[[str], tuple[str, int | None]], index: str,
                 problems: P.Problems) -> None:
    for key, why in found:
        file, line = where(key)
        problems.add(P.CONSISTENCY, f"{why} in {index}", file=file, line=line, id=key)
