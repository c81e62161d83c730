"""The exact corpus reader (JSONL) and the corpus fingerprint.

It streams the file, validates every document against its schema, records
problems with file and line, and keeps only what the checks need (ids, types,
statuses, snapshots) — never document text. ``on_doc(doc_id, record)`` sees
every valid, first-seen document (the built-in retriever indexes it there).
"""

from __future__ import annotations

import hashlib

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.progress import current as current_progress
from rag_corpus_check.inputs.checks import corpus_record
from rag_corpus_check.inputs.records import Corpus
from rag_corpus_check.inputs.validity import schema_ok
from rag_corpus_check.safe_io import Limits, file_size, iter_jsonl

_SHA256 = hashlib.sha256
_DIGEST = type(hashlib.sha256()).digest
_FROM_BYTES = int.from_bytes


def line_sum(raw_lines) -> int:
    """The sum of the SHA-256 of each line (without its line end), as integers."""
    return sum(map(_FROM_BYTES, map(_DIGEST, map(_SHA256, raw_lines))))


def fingerprint(total: int, count: int) -> str:
    """Order-free: from the sum (mod 2^256) of the SHA-256 of each line, so a
    reordered file or CRLF line ends keep the fingerprint, and nothing per
    line is kept (a sorted list of digests held 65 MB at 1M documents)."""
    summed = (total % (1 << 256)).to_bytes(32, "big")
    return "sha256:" + hashlib.sha256(count.to_bytes(8, "big") + summed).hexdigest()[:16]


def read_corpus(real: str, file: str, limits: Limits, problems: P.Problems, on_doc=None, hasher=None,
                native=None) -> Corpus:
    """``native(record, file, line, problems)``: for a corpus in another
    tool's layout, the native record of a line (None, with its problems
    added, when the line is invalid in that layout)."""
    corpus = Corpus(file=file)
    total, count = 0, 0
    progress = current_progress()
    total_bytes, done_bytes = file_size(real), 0
    label = f"reading {file}"
    for line, rec, raw_line in iter_jsonl(real, file, limits, with_raw=True, hasher=hasher,
                                          bad_line=problems.add_input_error):
        done_bytes += len(raw_line) + 1
        progress.tick(label, line, part=(done_bytes, total_bytes))
        if native is not None and (rec := native(rec, file, line, problems)) is None:
            continue
        if not _valid(rec, corpus, file, line, problems):
            continue
        doc_id = rec["id"]
        _add(corpus, doc_id, rec, line)
        if on_doc is not None:
            on_doc(doc_id, rec)
        total += line_sum((raw_line,))
        count += 1
    corpus.fingerprint = fingerprint(total, count)
    return corpus


def _valid(rec, corpus: Corpus, file: str, line: int, problems: P.Problems) -> bool:
    if not isinstance(rec, dict):
        problems.add(P.SCHEMA, "each line must be a JSON object (one document)", file=file, line=line)
        return False
    if not schema_ok(problems, ("corpus", ""), rec, file, line, fast=corpus_record):
        return False
    if rec["id"] in corpus.docs:
        problems.add(
            P.CONSISTENCY,
            f"duplicate document id (first on line {corpus.line(rec['id'])}); "
            "ids must be unique — rename or remove one of them",
            file=file, line=line, id=rec["id"],
        )
        return False
    return True


def _add(corpus: Corpus, doc_id: str, rec: dict, line: int) -> None:
    status = rec.get("status", "active")
    snap = rec.get("snapshot")
    corpus.docs[doc_id] = corpus.doc(rec.get("type"), status, snap)
    assert corpus.lines is not None  # the exact reader keeps every line
    corpus.lines[doc_id] = line
    corpus.note_blank(doc_id, rec, line)
    if status != "active":
        corpus.inactive.add(doc_id)
    if snap is not None:
        corpus.snapshots[snap] = corpus.snapshots.get(snap, 0) + 1
    if "doc_id" in rec:
        corpus.parents[doc_id] = rec["doc_id"]
