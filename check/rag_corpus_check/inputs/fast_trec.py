"""The fast TREC run reader (``qid Q0 docid rank score tag``): a block of
lines at a time (:func:`text_blocks`), split into fields with one
``str.split`` per block and checked a column at a time in C, without a
Python object per line. As the fast corpus reader does (:mod:`inputs.fast`),
it either returns exactly what the exact reader (:mod:`inputs.run`) returns
for the file, or gives up (:class:`Slow`) at the first thing it does not
handle — any problem, any warning, a blank line, fields not separated by
exactly one space or tab, a question whose lines are not together — and the
exact reader reads the file from the start and words the messages.
``tests/test_fast_readers.py`` proves the equality (one differential
property), ``fuzz/fuzz_loaders.py`` (target 9) fuzzes it.

Why (docs/decisions/0005-fast-readers-exact-fallback.md): on the benchmark's
TREC run (10,000 questions × 100 ranked ids) the whole check takes about a
third of the CPU time it takes with the exact reader.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from itertools import compress, count, repeat
from math import isfinite
from operator import gt, lt, mul, ne, sub

from rag_corpus_check.core.progress import current as current_progress
from rag_corpus_check.inputs.records import Run, RunQuery
from rag_corpus_check.inputs.run import rank_rises, trec_order
from rag_corpus_check.inputs.validity import trec_ids_ok, trec_lengths_ok, trec_text_plain
from rag_corpus_check.safe_io import Limits
from rag_corpus_check.safe_io.scanner import Slow, text_blocks

RUN_FIELDS = 6  # qid Q0 docid rank score tag


def expect(ok: bool) -> None:
    """Go on only if ``ok``; else give up (:class:`Slow`)."""
    if not ok:
        raise Slow


def fields(text: str, n: int, width: int) -> list[str]:
    """The fields of a block of ``n`` lines (each ending in ``\\n``) as one
    list: each line's ``width`` fields and then ``"\\n"``.
    :class:`Slow` unless every line has exactly ``width`` fields, one space
    or tab apart, none before the first or after the last (what
    :func:`validity.trec_fields` then splits the same way)."""
    flat = _spaced(text).split(" ")
    step = width + 1
    # Every "\n" is a field of its own: n of them at every step-th place
    # means n lines of `width` fields.
    expect(len(flat) == step * n + 1 and flat[width::step].count("\n") == n)
    flat.pop()  # the "" after the last line end
    return flat


def _spaced(text: str) -> str:
    """Tabs as spaces, each line end a field of its own; :class:`Slow` for
    an empty field (two spaces, a space at either end of a line, a blank line)."""
    spaced = text.replace("\t", " ").replace("\n", " \n ")
    expect("  " not in spaced and not spaced.startswith(" "))
    return spaced


def questions(blocks: Iterator[tuple[int, list[list]]], width: int) -> Iterator[tuple[list, list, list, list]]:
    """The questions of a TREC file, from its blocks ``(first line,
    columns)`` (``width`` columns, the qids first): per block, ``(qids, line
    bounds, bounds, other columns)`` of the questions whose lines ended in
    it — the rows of question i are ``bounds[i]:bounds[i + 1]`` of each
    column, on lines ``lines[i]:lines[i + 1]``. The last question of a block
    is carried into the next one. That a question's lines are together is
    the caller's to check (a qid seen before)."""
    carried: list[list] = [[] for _ in range(width)]
    carried_line = 1
    for first, block in blocks:
        old = len(carried[0])
        for column, more in zip(carried, block, strict=True):
            column.extend(more)  # in place: a question of many blocks is not copied at each one
        base = first - old
        bounds = _bounds(carried[0], old)
        end = bounds[-1]
        if end:
            cols, carried, carried_line = carried, [c[end:] for c in carried], base + end
            yield _batch(cols, bounds, base)
    if carried[0]:
        yield _batch(carried, [0, len(carried[0])], carried_line)


def _bounds(qids: list[str], old: int) -> list[int]:
    """Where each question starts; the first ``old`` rows are one question
    (carried), so only the others are compared. A question is most likely
    as long as the one before it: that guess is checked with one count in
    C over its rows, else its end is looked for (:func:`_end`). Why: one
    comparison per row called from ``map`` took 0.09 s of 1.4 s."""
    n = len(qids)
    bounds = [0]
    at, length = max(old, 1), 0
    while at < n:
        start = bounds[-1]
        q = qids[start]
        end = start + length
        if not (length and at <= end < n and qids[end] != q and qids[at:end].count(q) == end - at):
            end = _end(qids, q, at)
            if end == n:
                break
        bounds.append(end)
        length, at = end - start, end + 1
    return bounds


def _end(qids: list[str], q: str, at: int) -> int:
    """The first row from ``at`` on that is not ``q`` (``len(qids)`` when
    none): windows of doubling size counted in C, the first that holds
    another row then scanned to it."""
    size = 64
    while at < len(qids):
        window = qids[at:at + size]
        if window.count(q) != len(window):
            return at + next(compress(count(), map(ne, window, repeat(q))))
        at, size = at + len(window), size * 2
    return len(qids)


def _batch(cols: list[list], bounds: list[int], base: int) -> tuple[list, list, list, list]:
    """The questions between ``bounds`` (rows of ``cols``; row 0 on line ``base``)."""
    end = bounds[-1]
    return list(map(cols[0].__getitem__, bounds[:-1])), [base + b for b in bounds], bounds, [c[:end] for c in cols[1:]]


DOC = 2  # the column of the document ids


def _blocks(real: str, file: str, limits: Limits, hasher, width: int, columns: tuple[int, ...]):
    """``(first line, [qids, *columns])`` per block (the document ids first
    among ``columns``, checked here: :func:`_ids_ok`); progress shown."""
    assert columns[0] == DOC
    progress = current_progress()
    label = f"reading {file}"
    step = width + 1
    for first, text, n in text_blocks(real, file, limits, hasher):
        flat = fields(text, n, width)
        block = [flat[c::step] for c in (0, *columns)]
        expect(_ids_ok(text, block[1]))
        yield first, block
        progress.block(label, first + n - 1)


def _ids_ok(text: str, docs: list[str]) -> bool:
    """The id rule for every document id of a block (its fields: ``text``)."""
    return trec_lengths_ok(docs) if trec_text_plain(text) else trec_ids_ok(docs)


def _new_questions(heads: list[str], seen) -> None:
    """:class:`Slow` for a question seen before (its lines are not
    together, or an id the exact reader reports) or an invalid id."""
    expect(len(set(heads)) == len(heads) and seen.isdisjoint(heads) and trec_ids_ok(heads))


def _spans(bounds: list[int]) -> list[slice]:
    return list(map(slice, bounds, bounds[1:]))


# ---------------------------------------------------------------- runs


def _ranks(column: list[str]) -> None:
    """Every rank an integer of under 10 digits (what :func:`run._rank`
    reads; another rank leaves the question out of the upside-down test)."""
    joined = "".join(column)
    expect(joined.isascii() and joined.isdigit() and max(map(len, column)) < 10)


# float() reads "1_0", "inf", "nan", "Infinity" too (and spaces, other digits: see _decimal)
_NOT_DECIMAL = ("_", "n", "N")


def _decimal(joined: str) -> bool:
    """Whether ``float`` reads these scores (joined) only in the decimal
    forms of ``run._SCORE``: ASCII and printable (no spaces, no other
    digits), with none of :data:`_NOT_DECIMAL`."""
    return joined.isascii() and joined.isprintable() and not any(map(joined.__contains__, _NOT_DECIMAL))


def _scores(column: list[str]) -> list:
    """Keys that order the scores as their numbers do: the scores as
    written when they are :func:`_aligned`, else as floats. :class:`Slow`
    unless each is what ``run._SCORE`` matches, and finite (an overflow is
    infinite)."""
    joined = "".join(column)
    expect(_decimal(joined))
    if _aligned(column, joined):
        return column
    try:
        scores = list(map(float, column))
    except ValueError:
        raise Slow from None
    expect(isfinite(sum(scores)))  # one is infinite (or, harmlessly, the sum overflows)
    return scores


_DIGITS = 15  # a double tells apart every two decimals of this many digits, in order (DBL_DIG)


def _aligned(column: list[str], joined: str) -> bool:
    """Whether the scores (``joined``: one after the other) are digits of
    one width with a point at one place or none, at most :data:`_DIGITS`
    of them: their digits then line up, so text order is number order, and
    two that differ as text differ as floats (finite ones). What a fixed
    format writes: cosine similarities 0.834512, integer scores. Why:
    float() took 0.2 s of 1.4 s for a million of them."""
    width = len(column[0])
    if not joined.replace(".", "").isdigit() or len(set(map(len, column))) != 1:
        return False
    dots = joined.count(".")
    if dots == 0:
        return width <= _DIGITS
    return dots == len(column) and width - 1 <= _DIGITS and joined[column[0].find("."):: width].count(".") == dots


class _Order:
    """trec_eval's order of each question, and the upside-down test of
    :func:`run._upside_down`: in how many questions the rank column rises."""

    def __init__(self, order: str):
        self.sign = -1.0 if order == "ascending" else 1.0
        self.before = lt if order == "ascending" else gt  # a row that stays before the next
        self.rising = self.judged = 0

    def rankings(self, docs: list[str], ranks: list[str], scores: list, bounds: list[int]) -> list[list[str]]:
        """Each question's ranking: its rows as they are when the scores
        (:func:`_scores`' keys) fall strictly (the common case, one C pass),
        else as :func:`run.trec_order` sorts them."""
        spans = _spans(bounds)
        rankings = list(map(docs.__getitem__, spans))
        lasts = list(map(sub, bounds[1:], repeat(1)))
        rises = list(map(gt, map(int, map(ranks.__getitem__, bounds[:-1])), map(int, map(ranks.__getitem__, lasts))))
        for q in self._unsorted(scores, bounds):
            items = list(zip(map(mul, repeat(self.sign), map(float, scores[spans[q]])), rankings[q], strict=True))
            rises[q] = rank_rises(items, list(map(int, ranks[spans[q]])))
            rankings[q] = trec_order(items)
        several = list(map(gt, lasts, bounds[:-1]))
        self.judged += sum(several)
        self.rising += sum(compress(rises, several))
        return rankings

    def _unsorted(self, scores: list, bounds: list[int]) -> set[int]:
        """The questions whose scores do not fall strictly in file order."""
        falls = list(map(self.before, scores, scores[1:]))
        starts = set(bounds)
        return {bisect_right(bounds, at) - 1 for at in _false_at(falls) if at + 1 not in starts}

    def upside_down(self) -> bool:
        return bool(self.judged) and self.rising * 2 > self.judged


def _false_at(values: list[bool]) -> Iterator[int]:
    """The places of False in ``values`` (a C scan to each: they are few)."""
    at = -1
    while True:
        try:
            at = values.index(False, at + 1)
        except ValueError:
            return
        yield at


def _distinct(rankings: list[list[str]], docs: list[str], ranked: set[str]) -> None:
    """:class:`Slow` for an id twice in a ranking; the ids (``docs``) into
    ``ranked``, each once (added while they are in cache; the small sets
    first: see :func:`checks.run_block`)."""
    sets = list(map(set, rankings))
    expect(sum(map(len, sets)) == len(docs))
    ranked.update(*sets)


def read_run(real: str, file: str, limits: Limits, hasher=None, order: str = "descending") -> Run:
    """A TREC run (rows of a question together), ordered as trec_eval orders
    it, with its ranked ids (:attr:`Run.ranked`)."""
    ranked: set[str] = set()
    run = Run(file=file, format="trec", ranked=ranked)
    queries = run.queries
    ordering = _Order(order)
    for heads, lines, bounds, (docs, ranks, score_column) in questions(
            _blocks(real, file, limits, hasher, RUN_FIELDS, (2, 3, 4)), 4):
        _new_questions(heads, queries.keys())
        _ranks(ranks)
        rankings = ordering.rankings(docs, ranks, _scores(score_column), bounds)
        _distinct(rankings, docs, ranked)
        queries.update(zip(heads, map(RunQuery, heads, lines[:-1], rankings), strict=True))
    expect(not ordering.upside_down())
    return run
