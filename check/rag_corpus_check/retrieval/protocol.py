"""What every ranker is (:class:`Ranker`) and what it is given: the config's
settings it reads (:class:`Settings`), the check it works for (:class:`Job`:
where, and how the pipeline builds and reads a run), the questions to rank
(:class:`Questions`) and, with a base, the base's (:class:`BaseQuestions`).
The rankers themselves and their registry are in :mod:`rankers`.

A ranker is made for one check, sees the corpus's served records as the
corpus is read (:meth:`Ranker.on_doc`, :meth:`Ranker.hook`), then ranks the
questions (:meth:`Ranker.rank`) and, with a base, the base's questions too
(:meth:`Ranker.rank_base`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from rag_corpus_check.core import problems as P
from rag_corpus_check.retrieval.bm25 import BM25Params, Bounds, Budget
from rag_corpus_check.safe_io import Limits

if TYPE_CHECKING:  # subprocess: only for a command
    from rag_corpus_check.retrieval.external import CommandResult

R = TypeVar("R")  # a run, as the pipeline builds and reads it
Where = Callable[[str], tuple[str, int | None]]  # an id -> its file and line
Rankings = dict[str, list[str]]  # question id -> ranked ids


class Settings(Protocol):
    """What a ranker reads of the config (``config.load.Config`` has it all)."""

    @property
    def bm25(self) -> BM25Params: ...
    @property
    def bounds(self) -> Bounds: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def vectors(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def rrf_k(self) -> int: ...
    @property
    def command(self) -> list[str] | None: ...
    @property
    def base_dir(self) -> str: ...
    @property
    def path_display(self) -> str: ...
    @property
    def k(self) -> int: ...


@dataclass(frozen=True)
class Job(Generic[R]):
    """Where a ranker works, and how the pipeline builds and reads a run."""

    root: str
    corpus_file: str  # the corpus as messages name it
    corpus_path: str  # the corpus file a command reads
    stored: int | None  # the input files' size on disk: the work budget is per byte as stored
    timeout: float  # a command's timeout (the config's, capped by the caller's)
    build: Callable[[str, str, Rankings], R]  # (file, format, rankings) -> a run
    read: Callable[[str, P.Problems], R | None]  # a command's output file -> its run


@dataclass(frozen=True)
class Questions:
    """The questions to rank, (id, text) by id, and where each is written."""

    items: list[tuple[str, str]]
    where: Where


@dataclass(frozen=True)
class BaseQuestions:
    """The base's questions, for the head's ranker to rank too (the view
    judged by the base's gold set): id → text as the base wrote it. For
    dense and hybrid, ``vectors`` is the base's vectors folder read
    (``dense.folder.Vectors``) when it holds the head's model, else None and
    ``why`` says why."""

    texts: Mapping[str, str]
    vectors: object | None = None
    why: str | None = None


@dataclass(frozen=True)
class BaseRanked:
    """The base's questions ranked on this corpus (None: ranked by id, or
    the work budget ran out: a problem says so), and how (a note of the
    base's: which vectors dense and hybrid ranked them with)."""

    rankings: Rankings | None = None
    note: str | None = None


def budget_message(exc: Budget, s: Settings) -> str:
    return (f"{exc.message}; raise `limits.{exc.limit}` in {s.path_display} if this input is "
            "meant (with --base, in a PR that sets a new `rule_change_reason`)")


class Ranker(Generic[R]):
    """The protocol every ranker keeps; the defaults are those of a ranker
    that sees no corpus record and cannot rank the base's questions."""

    name: ClassVar[str]  # its `retriever.type`
    said: ClassVar[str]  # how a note names it ("the base ranks with …")
    needs_vectors: ClassVar[bool] = False  # reads `retriever.vectors` and `model`
    runs_command: ClassVar[bool] = False  # runs the repository's code (`retriever.command`)
    ranks_base: ClassVar[bool] = False  # ranks the base's questions as the base wrote them (else by id)

    def __init__(self, s: Settings, job: Job[R]):
        self.s, self.job = s, job
        self.result: CommandResult | None = None  # a command's result, for the summary

    @classmethod
    def rules(cls, s: Settings) -> dict:
        """How it ranks, as values the base's rules are compared with (``source`` names it)."""
        raise NotImplementedError

    @classmethod
    def line(cls, info: dict, esc: Callable[[str, int], str], code: Callable[[str], str]) -> str | None:
        """The summary's line on the ranking, from :meth:`info` ({} when nothing was ranked)."""
        return None

    def on_doc(self) -> Callable[[str, dict], None] | None:
        """What the corpus reader hands every valid record to, or None."""
        return None

    def hook(self) -> Any:
        """What sees the corpus's valid records in blocks (``inputs.RecordHook``), or None."""
        return None

    def rank(self, corpus: Where, questions: Questions, problems: P.Problems) -> R | None:
        """The run; None (with problems) when it cannot be made. ``corpus``:
        a corpus record's file and line, for messages."""
        raise NotImplementedError

    def rank_base(self, base: BaseQuestions, problems: P.Problems) -> BaseRanked:
        """The base's questions on this corpus, after :meth:`rank` (none
        when they are ranked by id, or when the work budget runs out: a
        problem), and :meth:`base_note`."""
        try:
            rankings = self._rank_base(base)
        except Budget as exc:
            problems.add(P.LIMIT, budget_message(exc, self.s) + " (ranking the base's questions)",
                         file=self.s.path_display)
            rankings = None
        return BaseRanked(rankings, self.base_note())

    def _rank_base(self, base: BaseQuestions) -> Rankings | None:
        return None

    def base_note(self) -> str | None:
        """How the base's questions were ranked, once :meth:`_rank_base` chose it (None: nothing to say)."""
        return None

    def info(self) -> dict:
        """How the run was made, as the results file shows it (``type`` is :attr:`name`)."""
        raise NotImplementedError

    @property
    def vectors(self) -> Any:
        """The vectors folder read (``dense.folder.Vectors``), or None."""
        return None
