"""The inputs, read: one call (:func:`read_inputs`) gives the corpus, the gold
set and the run, each read by the fastest reader that reads it exactly, with
every problem reported in the order of the files (gold, run, corpus) and the
digest of each file.

Modules: :mod:`records` (what is kept), :mod:`corpus`, :mod:`gold`,
:mod:`run` (the exact readers), :mod:`fast` and :mod:`fast_trec` (the fast
readers of a JSONL corpus and a TREC run),
:mod:`checks` (record validity from the schemas); :mod:`fieldmap` (questions
and documents in a team's own field names, through the config's field maps);
:mod:`chunks` (chunked corpora), :mod:`question_texts` (gold question texts
as data), :mod:`labelled` (what a retriever reads of each labelled document,
hashed for a comparison with the base), :mod:`cross_file` (checks across
files: ids, grades, snapshots).

May import: core, safe_io, metrics, retrieval, config.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Protocol

from rag_corpus_check.config.load import Fields, MarkdownSpec
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs import fieldmap, formats
from rag_corpus_check.inputs.gold_merge import merge_gold, snapshot_where, where
from rag_corpus_check.inputs.labelled import LabelledDigests
from rag_corpus_check.inputs.question_texts import LeakScan, Ranks
from rag_corpus_check.inputs.records import (
    NO_TYPE,
    Corpus,
    Doc,
    Facts,
    Gold,
    GoldQuery,
    Run,
    RunQuery,
)
from rag_corpus_check.retrieval.analyzer import Analyzer
from rag_corpus_check.safe_io import InputError, Limits, Sha256, compressed, restart, sha256_file
from rag_corpus_check.safe_io.scanner import Slow, no_gc

__all__ = [
    "NO_TYPE", "Corpus", "Doc", "Facts", "Gold", "GoldQuery", "Inputs", "RecordHook", "Run", "RunQuery",
    "Source", "read_corpus", "read_gold", "read_inputs", "read_run",
    "read_gold_set", "snapshot_where", "where",
]


class RecordHook(Protocol):
    """What sees the corpus's valid records as it is read: a block at a
    time from the fast reader (records as pair tuples with their ids, the
    first on line ``first``), one at a time from the others; ``clear`` when the file is
    read again from line 1 (the fast reader gave up)."""

    def add(self, doc_id: str, rec: dict) -> None: ...

    def block(self, first: int, records: list, ids: list[str]) -> None: ...

    def clear(self) -> None: ...


@dataclass(frozen=True)
class Source:
    """One input file: where it is, how it is shown, how it is read."""

    real: str
    display: str
    format: str = "jsonl"
    grade_map: tuple[tuple[int, int], ...] = ()  # relevance.map, for a gold set
    order: str = "descending"  # formats.run_order, for a scored run
    fields: Fields | None = None  # the field map of `gold:` or `corpus:` as an object (inputs/fieldmap.py)
    list_grade: int = 1  # relevance.list_grade, for a gold set
    # A Markdown corpus (``real`` is then the config's folder, ``display`` the globs):
    # its MarkdownSpec, and the root its pages must stay inside.
    markdown: MarkdownSpec | None = None
    root: str = ""

    @property
    def reading(self) -> fieldmap.Reading | None:
        """How a gold file's questions are read through its field map (None:
        the native reader); a CSV file has one always (its columns' names)."""
        if self.fields is None and self.format != "csv":
            return None
        return fieldmap.Reading(self.fields or Fields(), self.list_grade)

    @property
    def native(self) -> Callable[..., dict | None] | None:
        """A corpus line as the native document, through the field map (None: native already)."""
        return partial(fieldmap.document, self.fields) if self.fields is not None else None

    @property
    def shown_format(self) -> str:
        """The format, as the summary and the results name it."""
        return self.format + (" (gzip)" if compressed(self.display) else "")


class Inputs:
    """What was read (None where a file could not be), and each file's
    sha-256 in reading order. The corpus is read when it is first asked for
    (:attr:`corpus`): what needs only the gold set and the run (the
    measures) comes first, and its problems before the corpus's."""

    def __init__(self) -> None:
        self.gold: Gold | None = None
        self.run: Run | None = None
        self.digests: dict[str, str] = {}
        self.scan: LeakScan | None = None  # gold questions looked for in the corpus as it is read
        self.labelled: LabelledDigests | None = None  # the labelled documents' digests, taken as it is read
        self.corpus_reader: Callable[[], Corpus | None] | None = None  # set by read_inputs
        self.copies_later = False  # the copies found are reported by the caller, with the ranking

    def report_copies(self, corpus: Corpus | None, problems: P.Problems, ranked: Ranks | None = None) -> None:
        """The warnings for gold questions found in the corpus (:mod:`question_texts`)."""
        if self.scan is not None and corpus is not None:
            self.scan.report(corpus, problems, ranked)

    @cached_property
    def corpus(self) -> Corpus | None:
        """The corpus, read at the first ask (None: none, or not readable)."""
        return self.corpus_reader() if self.corpus_reader is not None else None


def read_inputs(corpus: Source, gold: Source | list[Source], run: Source | None, limits: Limits,
                problems: P.Problems, on_doc: Callable[[str, dict], None] | None = None,
                queries: Source | None = None, hook: RecordHook | None = None, labelled: bool = False,
                copies_later: bool = False, analyzer: Analyzer | None = None) -> Inputs:
    """Read the gold set (with the question texts of ``queries``, a BEIR
    queries.jsonl; from several files, merged: :mod:`gold_merge`) and the
    run, and the corpus when it is asked for.
    ``on_doc(doc_id, record)`` sees every valid document (the built-in
    retriever indexes it; the corpus is then read here and now, by the exact
    reader, which streams the records). ``hook`` sees them too, in blocks
    from the fast reader when it can (the corpus is then read here and now).
    With ``labelled`` (a side of a comparison with the base), the labelled
    documents' digests are taken as the corpus is read (:mod:`labelled`).
    ``copies_later``: the caller reports the questions found in the corpus
    (:meth:`Inputs.report_copies`) once it has ranked, to say where each
    record ranks; else they follow the corpus's problems.
    ``analyzer``: the config's text analyzer, which the question-in-record
    check compares tokens with (:mod:`question_texts`)."""
    out = Inputs()
    out.copies_later = copies_later
    _read_questions(out, gold, queries, limits, problems)
    out.scan = LeakScan.of(out.gold, analyzer)  # fed by the corpus reader (question_texts)
    out.labelled = LabelledDigests.of(out.gold) if labelled else None  # fed by the corpus reader too
    if run is not None:
        out.run = _read(out, run, problems, read_run, limits, problems)
    out.corpus_reader = partial(_corpus, out, corpus, limits, problems, on_doc, hook)
    if on_doc is not None or hook is not None:
        out.corpus  # noqa: B018  (read now: the retriever needs its index)
    return out


def _read_questions(out: Inputs, gold: Source | list[Source], queries: Source | None, limits: Limits,
                    problems: P.Problems) -> None:
    """The gold set, with its question texts (read before the corpus,
    which is searched for them: :mod:`question_texts`)."""
    out.gold = _read_golds(out, [gold] if isinstance(gold, Source) else gold, limits, problems)
    if queries is not None:
        texts = _read(out, queries, problems, read_queries, limits, problems)
        _with_texts(out.gold, texts, queries.display, problems)


def read_gold_set(gold: list[Source], queries: Source | None, limits: Limits, problems: P.Problems) -> Gold | None:
    """A gold set alone (every file merged, with its question texts)."""
    out = Inputs()
    out.gold = _read_golds(out, gold, limits, problems)
    if queries is not None:
        _with_texts(out.gold, _read(out, queries, problems, read_queries, limits, problems), queries.display, problems)
    return out.gold


def _read_golds(out: Inputs, sources: list[Source], limits: Limits, problems: P.Problems) -> Gold | None:
    """Every gold file (each one's digest kept), merged; None when one could
    not be read. The files are bounded together: their bytes, lines,
    questions and labels by the limits of one file (a list of six files of
    999 lines passed `max_records: 1000`)."""
    shared = limits.of_kind("the gold files")
    golds, questions, labels = [], 0, 0
    for source in sources:
        limits_before = _limit_count(problems)
        gold = _read(out, source, problems, read_gold, shared, problems)
        golds.append(gold)
        questions, labels = questions + _questions(gold), labels + _labels(gold)
        if _over_total(questions, labels, limits, source, problems) or _limit_count(problems) > limits_before:
            return None  # a limit ended this file: the next ones would only add to it
    if any(gold is None for gold in golds):
        return None
    return merge_gold(golds, problems)


def _questions(gold: Gold | None) -> int:
    return len(gold.queries) if gold is not None else 0


def _labels(gold: Gold | None) -> int:
    return sum(len(q.relevant) for q in gold.queries.values()) if gold is not None else 0


def _over_total(questions: int, labels: int, limits: Limits, source: Source, problems: P.Problems) -> bool:
    """Whether the gold files so far hold more questions or labels than
    ``max_records`` (a problem at the file that went over)."""
    if max(questions, labels) <= limits.max_records:
        return False
    what = "questions" if questions > limits.max_records else "labels"
    problems.add(P.LIMIT, f"more than {limits.max_records} {what} in the gold files together (raise "
                 "`limits.max_records` in the config if this is intended)", file=source.display)
    return True


def _limit_count(problems: P.Problems) -> int:
    return sum(p.kind == P.LIMIT for p in problems.items)


def _with_texts(gold: Gold | None, texts: dict[str, str] | None, file: str, problems: P.Problems) -> None:
    """The question texts of a separate file (BEIR's queries.jsonl), on the
    gold questions; one the file lacks is a warning (the built-in retriever
    needs it). The file's other questions belong to other splits."""
    if gold is None or texts is None:
        return
    missing = [qid for qid in gold.queries if qid not in texts]
    for q in gold.queries.values():
        q.text = texts.get(q.query_id)
    if missing:
        problems.add(P.CONSISTENCY, f"{len(missing)} questions of the qrels have no text in {file} (the first: "
                     f"`{safe_text(missing[0], 60)}`); the built-in retriever cannot search for them",
                     file=gold.file, severity=P.WARNING)


def _corpus(out: Inputs, source: Source, limits: Limits, problems: P.Problems, on_doc, hook) -> Corpus | None:
    """The corpus read (the gold questions looked for in it: their warnings follow its problems)."""
    corpus = _read(out, source, problems, read_corpus, limits, problems, on_doc=on_doc, scan=out.scan, hook=hook,
                   labelled=out.labelled)
    if not out.copies_later:
        out.report_copies(corpus, problems)
    return corpus


def _read(out: Inputs, source: Source, problems: P.Problems, reader, *args, **kwargs):
    """One reader on one file; the reader hashes what it reads, so the file
    is read once. A reader that stopped early (an InputError) is reported,
    and the file is hashed on its own for provenance when its size allows."""
    hasher = Sha256()
    try:
        result = reader(source, *args, hasher=hasher, **kwargs)
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=exc.file, line=exc.line)
        try:
            out.digests[source.display] = sha256_file(source.real, source.display, args[0].max_file_bytes)
        except InputError:
            pass  # already reported by the reader
        return None
    out.digests[source.display] = hasher.hexdigest()
    return result


def _fast_or_none(reader, limits: Limits, hasher=None):
    """A fast reader's result, or None when it gave up (:class:`Slow`): the
    digest and the kind's tally then start over for the exact reader, which
    reads from line 1."""
    mark = limits.tally.mark() if limits.tally is not None else None
    try:
        with no_gc():
            return reader(limits, hasher=hasher)
    except Slow:
        restart(hasher)
        if limits.tally is not None and mark is not None:
            limits.tally.reset(mark)
        return None


def _then(first: Callable[[str, dict], None],
          after: Callable[[str, dict], None] | None) -> Callable[[str, dict], None]:
    """An exact reader's ``on_doc``: ``first``, then ``after`` if any."""

    def seen(doc_id: str, rec: dict) -> None:
        first(doc_id, rec)
        if after is not None:
            after(doc_id, rec)

    return seen


def read_corpus(source: Source, limits: Limits, problems: P.Problems, on_doc=None, hasher=None,
                scan: LeakScan | None = None, hook: RecordHook | None = None,
                labelled: LabelledDigests | None = None) -> Corpus:
    """A corpus: the fast reader when nothing is unusual (and no ``on_doc``),
    else the exact one, which reports the problems. ``scan``, ``hook`` and
    ``labelled`` see every valid record (:mod:`question_texts`; the dense
    retriever; :mod:`labelled`)."""
    every = hook.add if hook is not None and on_doc is None else on_doc
    seen = _then(scan.record, every) if scan is not None else every
    seen = _then(labelled.record, seen) if labelled is not None else seen
    entry = formats.find("corpus", source.format)
    if entry.fast is not None and on_doc is None and source.fields is None:  # a field map: the exact reader
        reader = partial(entry.fast, source, on_block=_on_block(scan, hook, labelled))
        got = _fast_or_none(reader, limits, hasher)
        if got is not None:
            return got
        for seer in (scan, hook, labelled):
            if seer is not None:
                seer.clear()  # the exact reader starts over
    return entry.read(source, limits, problems, seen, hasher)


def _on_block(*seers: LeakScan | RecordHook | LabelledDigests | None) -> Callable[[int, list, list], None] | None:
    """The fast reader's ``on_block``: each of ``seers`` (None: not there) in turn."""
    hooks = [seer.block for seer in seers if seer is not None]
    if len(hooks) < 2:
        return hooks[0] if hooks else None

    def each(first: int, records: list, ids: list[str]) -> None:
        for hook in hooks:
            hook(first, records, ids)

    return each


def read_gold(source: Source, limits: Limits, problems: P.Problems, hasher=None) -> Gold:
    return _read_kind("gold", source, limits, problems, hasher)


def read_queries(source: Source, limits: Limits, problems: P.Problems, hasher=None) -> dict[str, str]:
    """Question texts kept apart from the labels (BEIR's queries.jsonl)."""
    return formats.find("queries", source.format).read(source, limits, problems, hasher)


def read_run(source: Source, limits: Limits, problems: P.Problems, hasher=None) -> Run:
    return _read_kind("run", source, limits, problems, hasher)


def _read_kind(kind: str, source: Source, limits: Limits, problems: P.Problems, hasher):
    """The fast reader of the source's format when it has one and it reads
    the file, else the exact one (:mod:`formats`), with the cyclic GC paused
    as for a fast reader (:func:`no_gc`: on the benchmark data the
    collections during and after the exact JSONL run reader took 0.06 s)."""
    entry = formats.find(kind, source.format)
    if entry.fast is not None:
        got = _fast_or_none(partial(entry.fast, source), limits, hasher)
        if got is not None:
            return got
    with no_gc():
        return entry.read(source, limits, problems, hasher)
