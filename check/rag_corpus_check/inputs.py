"""Corpus, gold and run readers (native formats and TREC) into plain records.

Each reader streams its file, validates every record against its schema,
records problems with file and line, and keeps only what the later stages need
(ids, grades, rankings, line numbers) — never document text.
"""

from __future__ import annotations

import hashlib
import marshal
import math
import os
import re
import signal
import struct
import sys
import threading
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, compress, count, filterfalse, repeat
from operator import attrgetter, ne

from rag_corpus_check import fastcheck
from rag_corpus_check import problems as P
from rag_corpus_check.progress import current as current_progress
from rag_corpus_check.safe_io import (
    InputError,
    Limits,
    Sha256,
    Slow,
    file_size,
    iter_jsonl,
    iter_text_lines,
    jsonl_blocks,
    line_of,
    load_json_document,
    load_yaml,
    no_gc,
    read_bytes,
    restart,
)
from rag_corpus_check.schemas import describe_error, error_path, errors
from rag_corpus_check.text import odd_ids, safe_text


@dataclass(frozen=True, slots=True)
class Doc:
    """What the checks need of a document. Documents with the same type,
    status and snapshot share one Doc (a million documents hold a handful)."""

    type: str | None
    status: str
    snapshot: str | None


@dataclass
class Corpus:
    file: str
    docs: dict[str, Doc] = field(default_factory=dict)
    # id -> line in the file; None when documents are on lines 1, 2, 3, …
    # in order (what the fast reader takes), see line().
    lines: dict[str, int] | None = field(default_factory=dict)
    inactive: set[str] = field(default_factory=set)  # ids whose status is not active
    fingerprint: str | None = None
    snapshots: dict[str, int] = field(default_factory=dict)  # declared label -> count

    # (type, status, snapshot) -> the one Doc with those values
    shared: dict[tuple, Doc] = field(default_factory=dict, repr=False, compare=False)

    def line(self, doc_id: str) -> int:
        """The line of a document (for messages, which are rare: the table is
        built on the first call)."""
        if self.lines is None:
            self.lines = dict(zip(self.docs, range(1, len(self.docs) + 1), strict=True))
        return self.lines[doc_id]

    def doc(self, dtype: str | None, status: str, snapshot: str | None) -> Doc:
        """The shared Doc for these values."""
        key = (dtype, status, snapshot)
        doc = self.shared.get(key)
        if doc is None:
            doc = self.shared[key] = Doc(*key)
        return doc

    @property
    def count(self) -> int:
        """How many documents."""
        return len(self.docs)

    # The two questions the cross-file checks and the report ask of the
    # corpus. A corpus read in a child process answers them there
    # (AnsweredCorpus), so its ids never have to come over.

    def facts(self, labelled: Collection[str], ranked: Collection[str]) -> Facts:
        """What the checks need to know of the labelled and the ranked ids
        (sets, or lists as they come from a question: one lookup each, in C,
        without making a set of them first)."""
        docs = self.docs
        unknown_labels = filterfalse(docs.__contains__, labelled)
        inactive_labels = filter(self.inactive.__contains__, labelled) if self.inactive else ()
        suspects = {d: docs.get(d) for d in chain(unknown_labels, inactive_labels)}
        lines = self.lines_of({d for d, doc in suspects.items() if doc is not None})
        return Facts(suspects, lines, set(filterfalse(docs.__contains__, ranked)))

    def odd_ids(self) -> list[tuple[str, str, int]]:
        """(id, why, line) of the ids that hold invisible characters or look
        like another id (:func:`text.odd_ids`)."""
        odd = odd_ids(self.docs, self.docs)
        lines = self.lines_of({d for d, _ in odd}) if odd else {}
        return [(d, why, lines[d]) for d, why in odd]

    def lines_of(self, doc_ids: set[str]) -> dict[str, int]:
        """The lines of a few documents, without the table of every line
        (0.3 s at 1M documents) unless it exists or most are wanted."""
        if self.lines is not None or len(doc_ids) * 8 > len(self.docs):
            return {d: self.line(d) for d in doc_ids}
        wanted = list(map(doc_ids.__contains__, self.docs))  # one C pass
        return dict(zip(compress(self.docs, wanted), compress(count(1), wanted), strict=True))

    def type_counts(self, doc_ids: list[str], unjudged: list[bool]) -> tuple[Counter, Counter]:
        """How many of ``doc_ids`` per document type (NO_TYPE: a document
        without one, or an id not in the corpus), and how many of those where
        ``unjudged`` is true. One lookup per id, in C."""
        types = list(map(_TYPE, map(self.docs.get, doc_ids, repeat(_UNKNOWN))))
        return _no_type(Counter(types)), _no_type(Counter(compress(types, unjudged)))


@dataclass
class Facts:
    """Of the labelled ids: the unknown (None) and the inactive (their Doc),
    with the line of each inactive one; of the ranked ids: the unknown."""

    suspects: dict[str, Doc | None]
    lines: dict[str, int]
    unknown: set[str]


NO_TYPE = "(no type)"


def _no_type(counts: Counter) -> Counter:
    if None in counts:
        counts[NO_TYPE] += counts.pop(None)
    return counts


class _Unknown:
    type = None


_UNKNOWN = _Unknown()  # an id missing from the corpus: counted without a type
_TYPE = attrgetter("type")


@dataclass
class GoldQuery:
    query_id: str
    line: int | None
    relevant: dict[str, int]
    label_lines: dict[str, int | None]
    text: str | None = None
    snapshot: str | None = None


@dataclass
class Gold:
    file: str
    queries: dict[str, GoldQuery] = field(default_factory=dict)
    snapshot: str | None = None
    snapshot_line: int | None = None


@dataclass(slots=True)
class RunQuery:
    query_id: str
    line: int | None
    ranking: list[str]
    snapshot: str | None = None


@dataclass
class Run:
    file: str
    format: str
    queries: dict[str, RunQuery] = field(default_factory=dict)
    # Every ranked id, once, when the reader collected them (while they were
    # in cache: 3x cheaper than a pass afterwards); else None.
    ranked: set[str] | None = None


def _schema_problems(problems, schema, record, file, line, doc_for_lines=None, fast=None) -> bool:
    """True when ``record`` is valid against ``schema`` (name, fragment).
    ``fast`` (from :mod:`fastcheck`) accepts valid records quickly; anything it
    rejects is validated by jsonschema, which also words the messages."""
    if fast is not None and fast(record):
        return True
    errs = errors(schema[0], record, schema[1])
    for err in errs:
        ln = line_of(doc_for_lines, error_path(err)) if doc_for_lines is not None else line
        problems.add(P.SCHEMA, describe_error(err), file=file, line=ln or line, id=_rid(record))
    return not errs


_SCORE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_BAD_ID = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def _trec_id_problem(problems, value, what, file, line) -> bool:
    if len(value) > 512 or _BAD_ID.search(value):
        problems.add(
            P.SCHEMA, f"{what} is longer than 512 characters or contains control characters",
            file=file, line=line, id=value,
        )
        return True
    return False


def _rid(record):
    if isinstance(record, dict):
        for key in ("id", "query_id"):
            v = record.get(key)
            if isinstance(v, str):
                return v
    return None


# ---------------------------------------------------------------- corpus


def read_corpus(
    real: str, file: str, limits: Limits, problems: P.Problems, on_doc=None, hasher=None, fast=True
) -> Corpus:
    """Stream the corpus. ``on_doc(doc_id, record)`` is called for every valid,
    first-seen document (the built-in retriever indexes it there), so the
    text is never kept. A file with nothing unusual goes through the fast
    reader; the exact reader takes over (from the start) at the first thing
    the fast one does not handle, and is the one that reports problems
    (``fast=False``: straight to it, when the fast one already gave up)."""
    if on_doc is None and fast and (got := _try_fast(_read_corpus_fast, real, file, limits, hasher)) is not None:
        return got
    return _read_corpus_exact(real, file, limits, problems, on_doc, hasher)


def _try_fast(reader, real, file, limits, hasher):
    """A fast reader's result, or None when it gave up (:class:`Slow`): the
    digest then starts over for the exact reader, which reads from line 1."""
    try:
        with no_gc():
            return reader(real, file, limits, hasher)
    except Slow:
        restart(hasher)
        return None


_SHA256 = hashlib.sha256
_DIGEST = type(hashlib.sha256()).digest
_FROM_BYTES = int.from_bytes


def _line_sum(raw_lines) -> int:
    """The sum of the SHA-256 of each line (without its line end), as integers."""
    return sum(map(_FROM_BYTES, map(_DIGEST, map(_SHA256, raw_lines))))


def _fingerprint(total: int, count: int) -> str:
    """Order-free: from the sum (mod 2^256) of the SHA-256 of each line, so a
    reordered file or CRLF line ends keep the fingerprint, and nothing per
    line is kept (a sorted list of digests held 65 MB at 1M documents)."""
    summed = (total % (1 << 256)).to_bytes(32, "big")
    return "sha256:" + hashlib.sha256(count.to_bytes(8, "big") + summed).hexdigest()[:16]


def _read_corpus_exact(real, file, limits, problems, on_doc, hasher) -> Corpus:
    corpus = Corpus(file=file)
    v = ("corpus", "")
    total, count = 0, 0
    progress = current_progress()
    total_bytes = file_size(real)
    done_bytes = 0
    label = f"reading {file}"
    for line, rec, raw_line in iter_jsonl(real, file, limits, with_raw=True, hasher=hasher):
        done_bytes += len(raw_line) + 1
        progress.tick(label, line, part=(done_bytes, total_bytes))
        if not isinstance(rec, dict):
            problems.add(P.SCHEMA, "each line must be a JSON object (one document)", file=file, line=line)
            continue
        if not _schema_problems(problems, v, rec, file, line, fast=fastcheck.corpus_record):
            continue
        doc_id = rec["id"]
        if doc_id in corpus.docs:
            problems.add(
                P.CONSISTENCY,
                f"duplicate document id (first on line {corpus.line(doc_id)}); "
                "ids must be unique — rename or remove one of them",
                file=file, line=line, id=doc_id,
            )
            continue
        status = rec.get("status", "active")
        snap = rec.get("snapshot")
        corpus.docs[doc_id] = corpus.doc(rec.get("type"), status, snap)
        corpus.lines[doc_id] = line
        if status != "active":
            corpus.inactive.add(doc_id)
        if on_doc is not None:
            on_doc(doc_id, rec)
        if snap is not None:
            corpus.snapshots[snap] = corpus.snapshots.get(snap, 0) + 1
        total += _line_sum((raw_line,))
        count += 1
    corpus.fingerprint = _fingerprint(total, count)
    return corpus


def _checked_blocks(real, file, limits, hasher, check):
    """``(first_line, raw_lines, count, check(records))`` per block of the
    fast reader; :class:`Slow` when ``check`` finds a record invalid."""
    for first, raw_lines, values in jsonl_blocks(real, file, limits, hasher):
        try:
            checked = check(values)
        except (KeyError, TypeError, ValueError):
            raise Slow from None
        yield first, raw_lines, len(values), checked


def _read_corpus_fast(real, file, limits, hasher) -> Corpus:
    """The corpus a block of lines at a time, each check one pass in C over
    the block (see :mod:`fastcheck`); :class:`Slow` at anything else."""
    corpus = Corpus(file=file, lines=None)  # no blank lines here: document i is on line i + 1
    docs = corpus.docs
    shared = corpus.shared
    count = 0
    total = 0
    snapshots: Counter = Counter()
    progress = current_progress()
    total_bytes = file_size(real)
    done_bytes = 0
    label = f"reading {file}"
    for first, raw_lines, n, (ids, types, statuses, snaps) in _checked_blocks(
        real, file, limits, hasher, fastcheck.corpus_block
    ):
        count += n
        keys = list(zip(types, statuses, snaps, strict=True))
        for key in set(keys).difference(shared):
            corpus.doc(*key)
        docs.update(zip(ids, map(shared.__getitem__, keys), strict=True))
        if len(set(statuses)) > 1 or statuses[0] != "active":
            corpus.inactive.update(compress(ids, map(ne, statuses, repeat("active"))))
        snapshots.update(snaps)
        total += _line_sum(raw_lines)
        done_bytes += sum(map(len, raw_lines)) + n
        progress.block(label, first + n - 1, part=(done_bytes, total_bytes))
    if len(docs) != count:
        raise Slow  # an id twice (the second overwrote the first): the exact reader says where
    snapshots.pop(None, None)
    corpus.snapshots = dict(snapshots)
    corpus.fingerprint = _fingerprint(total, count)
    return corpus


# ---------------------------------------------------------------- corpus in a second process

# Reading the corpus in a child process while this one reads the gold set and
# the run and evaluates; the child keeps the documents and answers what the
# checks ask of them (CorpusJob.ask). Measured in README, "Performance".
# Linux only (fork without exec is not safe everywhere); below 8 MiB the fork
# costs more than it saves; RAG_CORPUS_CHECK_PARALLEL=0 turns it off.
FORK_MIN_BYTES = 8 * 1024**2


def _can_fork(real: str) -> bool:
    if sys.platform != "linux" or os.environ.get("RAG_CORPUS_CHECK_PARALLEL", "1") == "0":
        return False
    if threading.active_count() != 1:
        return False  # fork copies one thread; another could hold a lock forever
    try:
        if len(os.sched_getaffinity(0)) < 2:
            return False
    except (AttributeError, OSError):
        return False
    size = file_size(real)
    return size is not None and size >= FORK_MIN_BYTES


class CorpusJob:
    """The fast corpus reader running in a forked child, which then answers
    the questions this process asks (:meth:`ask`: ``facts``, ``types``,
    ``docs``) once it has read the corpus. :meth:`result` gives ``(corpus,
    sha256 hex)``, or None when the child gave up (anything unusual, a
    problem, a crash): the caller then reads the file itself, with the reader
    that reports problems.

    Questions never block this process: their bodies go to a memory file
    both processes share (pwrite/pread at known offsets), the pipe carries
    only where each one is (a pipe holds 64 KiB; a question can hold 2 MB)."""

    def __init__(self, real: str, file: str, limits: Limits):
        self.file = file
        self.asked: dict[str, tuple] = {}
        self.offset = 0
        self.store = os.memfd_create("rag-corpus-check", os.MFD_CLOEXEC)
        fds = []
        try:
            rfd, wfd = os.pipe()  # answers: child -> parent
            fds += (rfd, wfd)
            qrfd, qwfd = os.pipe()  # where the questions are: parent -> child
            fds += (qrfd, qwfd)
            self.pid = os.fork()
        except OSError:
            for fd in (*fds, self.store):
                os.close(fd)
            raise
        if self.pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(rfd)
                os.close(qwfd)
                code = _child(real, file, limits, wfd, qrfd, self.store)
            finally:
                os._exit(code)
        os.close(wfd)
        os.close(qrfd)
        self.rfd: int | None = rfd
        self.qfd: int | None = qwfd

    def ask(self, kind: str, *args) -> None:
        """Ask the child ``Corpus.<kind>(*args)`` (``docs``: send every id).
        A child that is gone (it gave up) is not asked; result() says so."""
        if self.qfd is None:
            return
        body = marshal.dumps((kind, list(map(_pack, args))), 2)
        try:
            os.pwrite(self.store, body, self.offset)
            os.write(self.qfd, _WHERE.pack(self.offset, len(body)))
        except OSError:
            self._end_questions()
            return
        self.offset += len(body)
        self.asked[kind] = tuple(map(len, args))

    def _end_questions(self) -> None:
        if self.qfd is not None:
            os.close(self.qfd)
            self.qfd = None

    def cancel(self) -> None:
        """End the child and reap it (the parent failed first, or is done)."""
        self._end_questions()
        if self.rfd is not None:
            os.close(self.rfd)
            self.rfd = None
        if self.store is not None:
            os.close(self.store)
            self.store = None
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = None

    def result(self) -> tuple[Corpus, str] | None:
        try:
            self._end_questions()  # no more: the child answers and exits
            with os.fdopen(self.rfd, "rb") as f:
                self.rfd = None
                data = f.read()
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
        finally:
            self.cancel()  # nothing left to do, unless reading failed
        if status != 0 or not data:
            return None
        try:
            answers = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None
        return AnsweredCorpus(self.file, answers, self.asked), answers["digest"]


_WHERE = struct.Struct("<QQ")  # offset and size of a question in the memory file


def _pack(arg):
    """A question's argument as marshal sends it fast: ids as one text, one
    per line (ids never hold a line end; checked), else a list (marshal sorts
    a set: 0.25 s for 100k ids)."""
    if isinstance(arg, (set, list)) and arg:
        try:
            joined = "\n".join(arg)
        except TypeError:
            return list(arg)  # not ids
        if joined.count("\n") == len(arg) - 1:
            return ("\n", joined)
        return list(arg)
    return arg


def _unpack(arg):
    return arg[1].split("\n") if type(arg) is tuple else arg


def _child(real: str, file: str, limits: Limits, wfd: int, qfd: int, store: int) -> int:
    hasher = Sha256()
    try:
        with no_gc():
            corpus = _read_corpus_fast(real, file, limits, hasher)
    except (Slow, InputError):
        return 2  # the parent reads the file and says what is wrong
    answers = {"count": corpus.count, "snapshots": corpus.snapshots, "fingerprint": corpus.fingerprint,
               "digest": hasher.hexdigest(), "odd": corpus.odd_ids()}
    with os.fdopen(qfd, "rb") as questions:
        while where := questions.read(_WHERE.size):
            if len(where) != _WHERE.size:
                return 2  # the parent is gone
            offset, size = _WHERE.unpack(where)
            kind, args = marshal.loads(os.pread(store, size, offset))
            answers[kind] = _answer(corpus, kind, list(map(_unpack, args)))
    with os.fdopen(wfd, "wb") as f:
        f.write(marshal.dumps(answers, 2))
    return 0


def _key(doc: Doc | None):
    return None if doc is None else (doc.type, doc.status, doc.snapshot)


def _answer(corpus: Corpus, kind: str, args: tuple):
    """A question of :meth:`CorpusJob.ask`, answered in plain values."""
    if kind == "facts":
        facts = corpus.facts(*args)
        return {d: _key(doc) for d, doc in facts.suspects.items()}, facts.lines, list(facts.unknown)
    if kind == "types":
        counts, unjudged = corpus.type_counts(*args)
        return dict(counts), dict(unjudged)
    if kind == "docs":
        index = {d: i for i, d in enumerate(corpus.shared.values())}
        return list(corpus.docs), list(corpus.shared), list(map(index.__getitem__, corpus.docs.values()))
    raise ValueError(kind)


class AnsweredCorpus(Corpus):
    """The corpus as the child read it: counts, fingerprint, snapshots, and
    the answers to what this process asked. The documents themselves are
    here only when asked for (``docs``, for a comparison with the base);
    otherwise ``docs`` is None, so a use nobody asked for fails loudly."""

    def __init__(self, file: str, answers: dict, asked: dict[str, tuple]):
        super().__init__(file=file, lines=None, fingerprint=answers["fingerprint"],
                         snapshots=answers["snapshots"])
        self._count = answers["count"]
        self._asked = asked
        self._answers = answers
        self.docs = None
        self.inactive = None
        if "docs" in answers:
            ids, keys, key_index = answers["docs"]
            docs = [self.doc(*key) for key in keys]
            self.docs = dict(zip(ids, map(docs.__getitem__, key_index), strict=True))
            inactive = {i for i, d in enumerate(docs) if d.status != "active"}
            self.inactive = set(compress(ids, map(inactive.__contains__, key_index)))

    @property
    def count(self) -> int:
        return self._count

    def odd_ids(self) -> list[tuple[str, str, int]]:
        return [tuple(x) for x in self._answers["odd"]]

    def _answered(self, kind: str, args: tuple):
        if kind in self._answers and self._asked.get(kind) == tuple(map(len, args)):
            return self._answers[kind]
        if self.docs is None:
            raise RuntimeError(f"the corpus child was not asked for `{kind}` of these ids")
        return None

    def facts(self, labelled: set[str], ranked: set[str]) -> Facts:
        got = self._answered("facts", (labelled, ranked))
        if got is None:
            return super().facts(labelled, ranked)
        suspects, lines, unknown = got
        return Facts({d: None if key is None else self.doc(*key) for d, key in suspects.items()}, lines, set(unknown))

    def type_counts(self, doc_ids: list[str], unjudged: list[bool]) -> tuple[Counter, Counter]:
        got = self._answered("types", (doc_ids, unjudged))
        if got is None:
            return super().type_counts(doc_ids, unjudged)
        return Counter(got[0]), Counter(got[1])


def start_corpus_read(real: str, file: str, limits: Limits) -> CorpusJob | None:
    """A :class:`CorpusJob` when the corpus is big enough to gain from one."""
    if not _can_fork(real):
        return None
    try:
        return CorpusJob(real, file, limits)
    except (OSError, AttributeError):  # no fork, pipe or memfd_create: read it here
        return None


# ---------------------------------------------------------------- gold


def gold_format(path: str, declared: str) -> str | None:
    if declared != "auto":
        return declared
    ext = os.path.splitext(path)[1].lower()
    return {".yml": "yaml", ".yaml": "yaml", ".json": "json", ".jsonl": "jsonl", ".qrels": "qrels"}.get(ext)


def read_gold(
    real: str, file: str, fmt: str, limits: Limits, problems: P.Problems, hasher=None
) -> Gold:
    gold = Gold(file=file)
    if fmt == "qrels":
        _read_qrels(real, file, limits, problems, gold, hasher)
        return gold
    if fmt == "jsonl":
        if (got := _try_fast(_read_gold_fast, real, file, limits, hasher)) is not None:
            return got
        v = ("gold", "#/$defs/query")
        for line, rec in iter_jsonl(real, file, limits, hasher=hasher):
            if not isinstance(rec, dict):
                problems.add(P.SCHEMA, "each line must be a JSON object (one question)", file=file, line=line)
                continue
            if _schema_problems(problems, v, rec, file, line, fast=fastcheck.gold_query):
                # Every label of a JSONL question is on its line: no label lines.
                _add_query(gold, rec, line, {}, file, problems)
        return gold
    if fmt == "yaml":
        doc = load_yaml(read_bytes(real, file, limits.max_file_bytes, hasher), file, limits)
        query_lines = None
    else:  # json
        doc, text = load_json_document(real, file, limits, hasher)
        query_lines = _json_query_lines(text)
    if not isinstance(doc, dict):
        problems.add(P.SCHEMA, "gold must be a mapping with a `queries:` list", file=file, line=1)
        return gold
    errs = errors("gold", doc)
    bad_queries = set()
    for err in errs:
        path = error_path(err)
        line = line_of(doc, path)
        if line is None and query_lines and len(path) >= 2 and path[0] == "queries":
            line = _safe_index(query_lines, path[1])
        qid = None
        if len(path) >= 2 and path[0] == "queries" and isinstance(path[1], int):
            bad_queries.add(path[1])
            q = doc["queries"][path[1]]
            qid = _rid(q)
        problems.add(P.SCHEMA, describe_error(err), file=file, line=line, id=qid)
        if not path or path[0] != "queries" or len(path) < 2:
            return gold
    gold.snapshot = doc.get("snapshot")
    gold.snapshot_line = line_of(doc, ["snapshot"]) if "snapshot" in doc else None
    for i, q in enumerate(doc.get("queries", [])):
        if i in bad_queries:
            continue
        qline = line_of(doc, ["queries", i]) or _safe_index(query_lines, i)
        rel = q["relevant"]
        label_lines = {d: (line_of(doc, ["queries", i, "relevant", d]) or qline) for d in rel}
        _add_query(gold, q, qline, label_lines, file, problems)
    return gold


def _read_gold_fast(real, file, limits, hasher) -> Gold:
    """JSONL gold without a problem in it (else :class:`Slow`), a block of
    lines at a time (see :func:`fastcheck.gold_block`)."""
    gold = Gold(file=file)
    queries = gold.queries
    for first, _raw, n, (qids, relevant, texts, snaps) in _checked_blocks(
        real, file, limits, hasher, fastcheck.gold_block
    ):
        if len(set(qids)) != n or not queries.keys().isdisjoint(qids):
            raise Slow  # a question twice
        # Every label of a JSONL question is on its line: no label lines.
        no_lines = map(dict, repeat((), n))
        queries.update(zip(qids, map(GoldQuery, qids, range(first, first + n), relevant, no_lines, texts, snaps),
                           strict=True))
    return gold


def _safe_index(seq, i):
    if seq and isinstance(i, int) and 0 <= i < len(seq):
        return seq[i]
    return None


def _json_query_lines(text: str) -> list[int] | None:
    # JSON has no line information after parsing; the n-th `"query_id"` key in
    # the text belongs to the n-th question in the usual layout.
    lines = []
    for m in re.finditer(r'"query_id"\s*:', text):
        lines.append(text.count("\n", 0, m.start()) + 1)
    return lines or None


def _add_query(gold, rec, line, label_lines, file, problems):
    qid = rec["query_id"]
    if qid in gold.queries:
        first = gold.queries[qid].line
        problems.add(
            P.CONSISTENCY,
            f"duplicate question id (first on line {first}); give each question its own id",
            file=file, line=line, id=qid,
        )
        return
    gold.queries[qid] = GoldQuery(
        qid, line, dict(rec["relevant"]), label_lines, rec.get("query"), rec.get("snapshot")
    )


def _read_qrels(real, file, limits, problems, gold, hasher=None):
    for line, text in iter_text_lines(real, file, limits, hasher):
        parts = text.split()
        if len(parts) != 4:
            problems.add(
                P.PARSE,
                f"a qrels line needs 4 fields `qid iter docid grade`, found {len(parts)}",
                file=file, line=line,
            )
            continue
        qid, _iter, doc_id, grade_s = parts
        if _trec_id_problem(problems, qid, "question id", file, line) or _trec_id_problem(
            problems, doc_id, "document id", file, line
        ):
            continue
        if not re.fullmatch(r"-?[0-9]{1,6}", grade_s):
            problems.add(P.PARSE, "the grade must be an integer", file=file, line=line, id=doc_id)
            continue
        grade = int(grade_s)
        if grade < 0:
            problems.add(
                P.SCHEMA, "negative grades are invalid; use 0 for judged not relevant",
                file=file, line=line, id=doc_id,
            )
            continue
        q = gold.queries.get(qid)
        if q is None:
            q = gold.queries[qid] = GoldQuery(qid, line, {}, {})
        if doc_id in q.relevant:
            problems.add(
                P.CONSISTENCY,
                f"document judged twice for question `{safe_text(qid, 60)}` "
                f"(first on line {q.label_lines[doc_id]})",
                file=file, line=line, id=doc_id,
            )
            continue
        q.relevant[doc_id] = grade
        q.label_lines[doc_id] = line


# ---------------------------------------------------------------- run


def run_format(path: str, declared: str) -> str | None:
    if declared != "auto":
        return declared
    ext = os.path.splitext(path)[1].lower()
    return {".jsonl": "jsonl", ".run": "trec", ".trec": "trec"}.get(ext)


def read_run(
    real: str, file: str, fmt: str, limits: Limits, problems: P.Problems, hasher=None
) -> Run:
    run = Run(file=file, format=fmt)
    if fmt == "trec":
        _read_trec_run(real, file, limits, problems, run, hasher)
        return run
    if (got := _try_fast(_read_run_fast, real, file, limits, hasher)) is not None:
        return got
    v = ("run", "")
    progress = current_progress()
    label = f"reading {file}"
    for line, rec in iter_jsonl(real, file, limits, hasher=hasher):
        progress.tick(label, line, unit="lines")
        if not isinstance(rec, dict):
            problems.add(P.SCHEMA, "each line must be a JSON object (one question)", file=file, line=line)
            continue
        if not _schema_problems(problems, v, rec, file, line, fast=fastcheck.run_record):
            continue
        qid = rec["query_id"]
        if qid in run.queries:
            problems.add(
                P.CONSISTENCY,
                f"duplicate question id in the run (first on line {run.queries[qid].line})",
                file=file, line=line, id=qid,
            )
            continue
        ranking = rec["ranking"]
        seen: dict[str, int] = {}
        dup = False
        unique = len(set(ranking)) == len(ranking)  # the common case, checked in C
        for pos, d in enumerate([] if unique else ranking, 1):
            if d in seen:
                problems.add(
                    P.CONSISTENCY,
                    f"document appears twice in the ranking of question `{safe_text(qid, 60)}` "
                    f"(positions {seen[d]} and {pos}); a duplicate must not count as two pieces "
                    "of evidence — deduplicate the ranking",
                    file=file, line=line, id=d,
                )
                dup = True
                break
            seen[d] = pos
        if not dup:
            run.queries[qid] = RunQuery(qid, line, list(ranking), rec.get("snapshot"))
    return run


def _read_run_fast(real, file, limits, hasher) -> Run:
    """A JSONL run without a problem in it (else :class:`Slow`)."""
    run = Run(file=file, format="jsonl", ranked=set())
    queries = run.queries
    ranked = run.ranked
    progress = current_progress()
    label = f"reading {file}"
    check = partial(fastcheck.run_block, ranked=ranked)
    for first, _raw, n, (qids, rankings, snaps) in _checked_blocks(real, file, limits, hasher, check):
        if len(set(qids)) != n or not queries.keys().isdisjoint(qids):
            raise Slow  # a question twice
        queries.update(zip(qids, map(RunQuery, qids, range(first, first + n), rankings, snaps), strict=True))
        progress.block(label, first + n - 1)
    if not fastcheck.ranked_ids_ok(ranked):
        raise Slow
    return run


def _read_trec_run(real, file, limits, problems, run, hasher=None):
    rows: dict[str, list] = {}
    first_line: dict[str, int] = {}
    seen: dict[tuple[str, str], int] = {}
    bad: set[str] = set()
    for line, text in iter_text_lines(real, file, limits, hasher):
        parts = text.split()
        if len(parts) != 6:
            problems.add(
                P.PARSE,
                f"a TREC run line needs 6 fields `qid Q0 docid rank score tag`, found {len(parts)}",
                file=file, line=line,
            )
            continue
        qid, _q0, doc_id, _rank, score_s, _tag = parts
        if _trec_id_problem(problems, qid, "question id", file, line) or _trec_id_problem(
            problems, doc_id, "document id", file, line
        ):
            bad.add(qid)
            continue
        # float() also reads "١٢", "1_0" and " inf": take the ASCII forms only.
        score = float(score_s) if _SCORE.fullmatch(score_s) else math.nan
        if not math.isfinite(score):
            problems.add(P.PARSE, "the score must be a finite number", file=file, line=line, id=doc_id)
            continue
        if (qid, doc_id) in seen:
            problems.add(
                P.CONSISTENCY,
                f"document appears twice in the ranking of question `{safe_text(qid, 60)}` "
                f"(lines {seen[(qid, doc_id)]} and {line}) — deduplicate the run",
                file=file, line=line, id=doc_id,
            )
            bad.add(qid)
            continue
        seen[(qid, doc_id)] = line
        rows.setdefault(qid, []).append((score, doc_id))
        first_line.setdefault(qid, line)
    for qid, items in rows.items():
        if qid in bad:
            continue
        # trec_eval's order: score descending, ties by docno descending
        # (byte order); the rank column is ignored.
        items.sort(key=lambda t: (t[0], t[1].encode("utf-8", "surrogatepass")), reverse=True)
        run.queries[qid] = RunQuery(qid, first_line[qid], [d for _, d in items])
