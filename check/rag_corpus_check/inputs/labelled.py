"""What a retriever reads of each labelled document, as a hash: seen as
the corpus is read (the check keeps no document text), so that a comparison
with the base can name the documents a pull request changed that the gold
set labels (:func:`gate.compare.changed_relevant`).

Fed like :class:`question_texts.LeakScan`: by the fast reader a block at a
time (:meth:`LabelledDigests.block`), by the exact and foreign readers a
record at a time (:meth:`LabelledDigests.hook`). Only records the gold set
labels (by their id, or by their ``doc_id`` for a chunk of a labelled
document) are hashed: the work is bounded by the labelled records' size.

The hash is Python's own (SipHash, keyed at random per process, in C):
both revisions are read in one process, so their hashes compare, and a
pull request cannot aim a collision at a key it does not know (the action
runs Python with ``-I``, which ignores ``PYTHONHASHSEED``). At worst a
collision leaves an edited document unlisted; it changes no measure.
It costs a fraction of sha-256 of the same text.
"""

from __future__ import annotations

from itertools import compress, count

from rag_corpus_check.inputs.records import Gold


class LabelledDigests:
    """Per labelled document, the hash of its records' titles and texts (a
    chunked document: its chunks in file order; ids are left out, so a page
    moved unchanged hashes the same), and its status
    (a chunked document's: its first chunk's, as the documents view has it)."""

    def __init__(self, labelled: set[str]):
        self.labelled = labelled
        self.found: dict[str, tuple[int, str]] = {}  # labelled id -> (hash, status)

    @classmethod
    def of(cls, gold: Gold | None) -> LabelledDigests | None:
        """The digests of the documents ``gold`` labels; None when it labels none."""
        labelled = gold.labelled() if gold is not None else set()
        return cls(labelled) if labelled else None

    def clear(self) -> None:
        """Forget what was hashed (the file is read again from line 1)."""
        self.found = {}

    def record(self, doc_id: str, rec: dict) -> None:
        parent = rec.get("doc_id")
        key = doc_id if doc_id in self.labelled else parent if parent in self.labelled else None
        if key is None:
            return
        seen = hash((rec.get("title"), rec.get("text")))
        before = self.found.get(key)
        status = rec.get("status") or "active"
        self.found[key] = (seen, status) if before is None else (hash((before[0], seen)), before[1])

    def block(self, first: int, records: list, ids: list[str]) -> None:
        """The fast reader's hook: a block of valid records (as pair tuples,
        ``ids`` their ids). Only the labelled ones are made dicts (the fast
        reader reads no chunked corpus, so a record is labelled by its own id)."""
        for i in compress(count(), map(self.labelled.__contains__, ids)):  # in C
            self.record(ids[i], dict(records[i]))

    def digests(self) -> dict[str, tuple[int, str]]:
        """document id -> (the hash of what a retriever reads of it, its status)."""
        return self.found
