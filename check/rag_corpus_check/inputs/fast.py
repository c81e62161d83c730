"""The fast JSONL corpus reader: a block of lines at a time, every check one
pass in C over the block (:mod:`inputs.checks`). It either returns exactly
what the exact reader (:mod:`inputs.corpus`) returns for the same file
(digest included) or gives up (:class:`Slow`) at the first thing it does not
handle — any problem among them — and the exact reader reads the file from
the start and words the messages. Never a problem of its own. Why: on the
benchmark data it saves about a fifth of the whole check's CPU time
(docs/decisions/0005-fast-readers-exact-fallback.md);
``tests/test_fast_readers.py`` proves the equality (one differential
property) and ``fuzz/fuzz_loaders.py`` (targets 7 and 8) fuzzes it.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress, repeat
from operator import ne

from rag_corpus_check.core.progress import current as current_progress
from rag_corpus_check.inputs.checks import corpus_block
from rag_corpus_check.inputs.corpus import fingerprint, line_sum
from rag_corpus_check.inputs.records import Corpus
from rag_corpus_check.safe_io import Limits, file_size
from rag_corpus_check.safe_io.scanner import Slow, jsonl_blocks


def checked_blocks(real, file, limits, hasher, check):
    """``(first_line, raw_lines, records, check(records))`` per block;
    :class:`Slow` when ``check`` finds a record invalid."""
    for first, raw_lines, values in jsonl_blocks(real, file, limits, hasher):
        try:
            checked = check(values)
        except (KeyError, TypeError, ValueError):
            raise Slow from None
        yield first, raw_lines, values, checked


def read_corpus(real: str, file: str, limits: Limits, hasher=None, on_block=None) -> Corpus:
    """A JSONL corpus; ``on_block(first_line, records, ids)`` sees the
    records' text (:meth:`question_texts.LeakScan.block`) once they passed."""
    corpus = Corpus(file=file, lines=None)  # no blank lines here: document i is on line i + 1
    count, total = 0, 0
    snapshots: Counter = Counter()
    progress = current_progress()
    total_bytes, done_bytes = file_size(real), 0
    label = f"reading {file}"
    for first, raw_lines, records, (ids, types, statuses, snaps, blank) in checked_blocks(real, file, limits, hasher,
                                                                                          corpus_block):
        if on_block is not None:
            on_block(first, records, ids)
        n = len(records)
        count += n
        _add_block(corpus, ids, types, statuses, snaps)
        corpus.blank.extend((ids[i], first + i) for i in blank)  # a warning, said by validate
        snapshots.update(snaps)
        total += line_sum(raw_lines)
        done_bytes += sum(map(len, raw_lines)) + n
        progress.block(label, first + n - 1, part=(done_bytes, total_bytes))
    if len(corpus.docs) != count:
        raise Slow  # an id twice (the second overwrote the first): the exact reader says where
    snapshots.pop(None, None)
    corpus.snapshots = dict(snapshots)
    corpus.fingerprint = fingerprint(total, count)
    return corpus


def _add_block(corpus: Corpus, ids: list, types: list, statuses: list, snaps: list) -> None:
    keys = list(zip(types, statuses, snaps, strict=True))
    for key in set(keys).difference(corpus.shared):
        corpus.doc(*key)
    corpus.docs.update(zip(ids, map(corpus.shared.__getitem__, keys), strict=True))
    if len(set(statuses)) > 1 or statuses[0] != "active":
        corpus.inactive.update(compress(ids, map(ne, statuses, repeat("active"))))
