"""A big corpus read in a second process, which keeps it and answers the
:class:`CorpusView` questions the checks ask (Linux, 2+ CPUs, over
:data:`FORK_MIN_BYTES`, a CPU free: :func:`can_fork`).

Why: the parent reads the gold set and the run and computes the measures
while the child reads the corpus; the whole check at 100k documents takes
1.77 s this way against 2.72 s in one process (paired runs, median of 9;
docs/decisions/0005-fast-readers-exact-fallback.md), and the documents never have to be copied to the parent.

The child runs only the fast reader (a fork of this process: nothing from the
tree runs). It tells the parent what it read (or exits with status 2 when it
gave up: the parent then reads the file itself with the exact reader, which
words the problems) and then answers one question at a time until the parent
closes the pipe. Questions and answers are length-prefixed ``marshal`` frames
on two pipes; each side writes a whole frame before it reads, so neither can
block the other for good.
"""

from __future__ import annotations

import marshal
import math
import os
import signal
import struct
import sys
import threading
from collections import Counter
from collections.abc import Collection
from typing import Any

from rag_corpus_check.inputs import fast
from rag_corpus_check.inputs.records import Corpus, Doc, Facts
from rag_corpus_check.safe_io import InputError, Limits, Sha256, file_size
from rag_corpus_check.safe_io.scanner import Slow, no_gc

FORK_MIN_BYTES = 8 * 1024**2  # below this the fork costs more than it saves (measured)
_SIZE = struct.Struct("<Q")


def can_fork(real: str) -> bool:
    """Whether reading this corpus in a child pays: Linux (fork without exec
    is not safe everywhere), one thread (fork copies one; another could hold a
    lock forever), 2+ CPUs, a corpus over FORK_MIN_BYTES, and a CPU free for
    the child (:func:`cores_free`). RAG_CORPUS_CHECK_PARALLEL=0 turns it off,
    =1 on whatever the load (the other conditions still hold)."""
    setting = os.environ.get("RAG_CORPUS_CHECK_PARALLEL", "auto")
    if sys.platform != "linux" or setting == "0" or threading.active_count() != 1:
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return False
    size = file_size(real)
    big = cpus >= 2 and size is not None and size >= FORK_MIN_BYTES
    return big and (setting == "1" or cores_free(cpus) >= FREE_CORES_MIN)


# This process's core and one for the child, less half a core of slack for
# short bursts. Why: under load the child cannot overlap (measured: one
# process was 0.91x the wall of two on busy cores; quiet, two were 1.63x
# faster; bench/trec.py).
FREE_CORES_MIN = 1.5


def cores_free(cpus: int) -> float:
    """The CPUs not wanted by other processes (this one's included): ``cpus``
    less the smaller of the 1-minute load average and the threads runnable
    right now besides this one (``/proc/loadavg``). A process that keeps a
    core busy counts in both; a burst now, or this check's own earlier runs
    (in the average), in one only."""
    try:
        busy = os.getloadavg()[0]
    except OSError:
        return float(cpus)
    return cpus - min(busy, _runnable_others())


def _runnable_others() -> float:
    """Threads runnable now, this one not counted (inf when unknown)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return int(f.read().split()[3].split("/")[0]) - 1
    except (OSError, ValueError, IndexError):
        return math.inf


def _write(fd: int, value: Any) -> None:
    data = marshal.dumps(value, 2)
    view = memoryview(_SIZE.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _write_quietly(fd: int, value: Any, before: threading.Thread | None = None) -> None:
    """:func:`_write` in a thread, after the question posted ``before`` it
    (their frames must not mix): a child that ended closes the pipe (its
    reader says so), no traceback here."""
    if before is not None:
        before.join()
    try:
        _write(fd, value)
    except OSError:
        pass


def _read_exactly(fd: int, n: int) -> bytes | None:
    parts, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _read(fd: int):
    """The next frame's value; None at the end of the pipe."""
    head = _read_exactly(fd, _SIZE.size)
    if head is None:
        return None
    body = _read_exactly(fd, _SIZE.unpack(head)[0])
    return None if body is None else marshal.loads(body)


def _pack(ids: Collection[str]):
    """Ids as marshal sends them fast: one text, one id per line (ids never
    hold a line end; checked), else a list (marshal sorts a set: 0.25 s for
    100k ids)."""
    joined = "\n".join(ids)
    return ("\n", joined) if joined.count("\n") == len(ids) - 1 and ids else list(ids)


def _question(kind: str, args: tuple) -> tuple:
    """A question as sent: sets of ids packed (:func:`_pack`), and the ids
    of ``facts`` (the ranked ones may be a list, repeats and all: Run.ranked)."""
    return kind, [_pack(a) if isinstance(a, (set, frozenset)) or kind == "facts" else a for a in args]


def _unpack(arg) -> list[str]:
    return (arg[1].split("\n") if arg[1] else [""]) if type(arg) is tuple else arg


def _key(doc: Doc | None):
    return None if doc is None else (doc.type, doc.status, doc.snapshot)


def _answer(corpus: Corpus, kind: str, args: list):
    """A question of :class:`RemoteCorpus`, answered in plain values."""
    if kind == "facts":
        facts = corpus.facts(_unpack(args[0]), _unpack(args[1]))
        return {d: _key(doc) for d, doc in facts.suspects.items()}, facts.lines, _pack(facts.unknown)
    if kind == "types":
        counts, unjudged = corpus.type_counts(_unpack(args[0]), args[1])
        return dict(counts), dict(unjudged)
    if kind == "ids":
        return _pack(corpus.docs)
    raise ValueError(kind)


def _serve(real: str, file: str, limits: Limits, questions: int, answers: int, scan=None) -> int:
    """The child: read the corpus (``scan`` looking for the gold questions
    in it, :mod:`question_texts`), say what was read, answer until the end."""
    hasher = Sha256()
    try:
        with no_gc():
            corpus = fast.read_corpus(real, file, limits, hasher, on_block=scan.block if scan else None)
    except (Slow, InputError):
        return 2  # the parent reads the file and says what is wrong
    _write(answers, {"count": corpus.count, "snapshots": corpus.snapshots, "fingerprint": corpus.fingerprint,
                     "digest": hasher.hexdigest(), "odd": corpus.odd_ids(), "blank": corpus.blank,
                     "leaks": scan.state() if scan else None})
    while (question := _read(questions)) is not None:
        kind, args = question
        _write(answers, _answer(corpus, kind, args))
    return 0


class CorpusProcess:
    """The child reading a corpus; :meth:`result` waits for what it read."""

    def __init__(self, real: str, file: str, limits: Limits, scan=None):
        self.file = file
        q_read, self.questions = os.pipe()
        self.answers, a_write = os.pipe()
        try:
            self.pid: int | None = os.fork()
        except OSError:
            for fd in (q_read, self.questions, self.answers, a_write):
                os.close(fd)
            raise
        if self.pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(self.questions)
                os.close(self.answers)
                code = _serve(real, file, limits, q_read, a_write, scan)
            finally:
                os._exit(code)
        os.close(q_read)
        os.close(a_write)
        self.open = True
        self._posted: list[tuple] = []  # (kind, args, writer thread) asked ahead, not yet read, in order

    @classmethod
    def start(cls, real: str, file: str, limits: Limits, scan=None) -> CorpusProcess | None:
        """A child reading the corpus, when that pays (:func:`can_fork`)."""
        if not can_fork(real):
            return None
        try:
            return cls(real, file, limits, scan)
        except OSError:  # no fork or pipe: read it here
            return None

    def result(self) -> tuple[RemoteCorpus, str] | None:
        """The corpus as the child read it and the file's sha-256, or None
        when the child gave up (the caller reads the file itself)."""
        told = _read(self.answers) if self.open else None
        if told is None:
            self.close()
            return None
        return RemoteCorpus(self, told), told["digest"]

    def post(self, kind: str, *args) -> None:
        """Ask ahead: the question is written by a thread (a big one fills
        the pipe until the child, still reading, takes it), and :meth:`ask`
        with equal arguments reads its answer. Why: the child then answers
        the cross-check's and the by-type table's questions while this
        process evaluates (at 100k documents 0.2-0.4 s of the wall time;
        docs/decisions/0005-fast-readers-exact-fallback.md)."""
        if self.open:
            before = self._posted[-1][2] if self._posted else None
            writer = threading.Thread(target=_write_quietly, args=(self.questions, _question(kind, args), before),
                                      daemon=True)
            writer.start()
            self._posted.append((kind, args, writer))

    def post_types(self, doc_ids: list[str], unjudged: list[bool]) -> None:
        """:meth:`post` the question :meth:`RemoteCorpus.type_counts` will ask."""
        self.post("types", _pack(doc_ids), unjudged)

    def ask(self, kind: str, *args):
        if not self.open:
            raise RuntimeError("the corpus process was closed")
        if not self._answer_posted(kind, args):
            _write(self.questions, _question(kind, args))
        answer = _read(self.answers)
        if answer is None:
            raise RuntimeError("the corpus process ended before it answered")
        return answer

    def _answer_posted(self, kind: str, args: tuple) -> bool:
        """Whether this question was posted (its answer is then next in the
        pipe); a question posted before it and not asked after all is
        answered, and its answer dropped."""
        while self._posted:
            posted_kind, posted_args, writer = self._posted.pop(0)
            writer.join()
            if posted_kind == kind and posted_args == args:
                return True
            _read(self.answers)
        return False

    def close(self) -> None:
        """End the child (it is done, or the parent failed first) and reap it."""
        if self._posted:  # a writer may wait on a full pipe: end the reader first
            self._kill()
            for _, _, writer in self._posted:
                writer.join()
            self._posted = []
        if self.open:
            self.open = False
            os.close(self.questions)
            os.close(self.answers)
        if self.pid is not None:
            self._kill()
            os.waitpid(self.pid, 0)
            self.pid = None

    def _kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)  # type: ignore[arg-type]
        except ProcessLookupError:
            pass


class RemoteCorpus:
    """A :class:`CorpusView` whose documents stay in the child process."""

    def __init__(self, process: CorpusProcess, told: dict):
        self.process = process
        self.file = process.file
        self.fingerprint: str | None = told["fingerprint"]
        self.snapshots: dict[str, int] = told["snapshots"]
        self._count = told["count"]
        self._odd = [tuple(x) for x in told["odd"]]
        self._shared: dict[tuple, Doc] = {}
        self.parents: dict[str, str] = {}  # the child reads no chunked corpus (its fast reader gives up)
        self.blank: list[tuple[str, int]] = told["blank"]  # (id, line) of each blank document
        self.leaks = told["leaks"]  # what the child's LeakScan found (its state()), or None

    @property
    def count(self) -> int:
        return self._count

    def _doc(self, key) -> Doc | None:
        if key is None:
            return None
        key = tuple(key)
        return self._shared.setdefault(key, Doc(*key))

    def facts(self, labelled: Collection[str], ranked: Collection[str]) -> Facts:
        suspects, lines, unknown = self.process.ask("facts", labelled, ranked)
        return Facts({d: self._doc(key) for d, key in suspects.items()}, lines, set(_unpack(unknown)))

    def type_counts(self, doc_ids: list[str], unjudged: list[bool]) -> tuple[Counter, Counter]:
        counts, flagged = self.process.ask("types", _pack(doc_ids), unjudged)  # as post_types posts it
        return Counter(counts), Counter(flagged)

    def odd_ids(self) -> list[tuple[str, str, int]]:
        return list(self._odd)

    def ids(self) -> set[str]:
        return set(_unpack(self.process.ask("ids")))
