"""What the gate takes from a vectors folder on trust, and what it checks:
every text the check ranks (a served corpus record, a gold question) must
have a row whose ``sha256`` is its current text's (else it is stale); with
a base, the vectors of texts on both sides must be the base's, bit for bit.
No numpy here: rows are compared as bytes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from rag_corpus_check.core import problems as P

# The one line on how to re-embed, after the stale rows are listed.
REEMBED = ("{n} texts have no current vector in `{folder}`: embed each listed text (the record's `text`, the "
           "question's text) with `{model}`, and write its row to {kind}.npy with "
           '{{"{key}": <id>, "sha256": <sha-256 of the UTF-8 text>}} on the same line of {kind}.jsonl — '
           '`rag-corpus-check embed --command "<your embedding command>"` does this, on a developer\'s machine '
           "or in a push job (never in the pull request's job)")


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def stale(texts: dict[str, str], row_of: dict[str, int], hashes: list[str]) -> list[tuple[str, str]]:
    """``(id, why)`` for every id of ``texts`` (id → sha-256 of its text)
    whose row is missing or embeds another text."""
    out = []
    for key, digest in texts.items():
        row = row_of.get(key)
        if row is None:
            out.append((key, "has no vector row"))
        elif hashes[row] != digest:
            out.append((key, "has a stale vector: its row embeds another text (the sha256 differs)"))
    return out


def report_stale(found: list[tuple[str, str]], where: Callable[[str], tuple[str, int | None]], index: str,
                 problems: P.Problems) -> None:
    for key, why in found:
        file, line = where(key)
        problems.add(P.CONSISTENCY, f"{why} in {index}", file=file, line=line, id=key)
