"""The values the check's stages return — what one tree measured
(:class:`Measured`), the comparison with a base (:class:`BaseResult`), what
the rules found (:class:`Gated`), the verdict (:class:`Verdict`) — and the
:class:`Outcome` made of them at the end, which every reporter reads; the one
function that decides the verdict and the exit code (:func:`decide`) — for a
check, a shard, merged shards and ``--advisory`` alike. Every one is frozen:
a stage that finds more returns a new value."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rag_corpus_check import __version__
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import figure
from rag_corpus_check.pipeline.context import Context

if TYPE_CHECKING:
    from rag_corpus_check.config.load import Config
    from rag_corpus_check.gate.bootstrap import Interval
    from rag_corpus_check.gate.budget import Ledger
    from rag_corpus_check.gate.compare import Comparison
    from rag_corpus_check.gate.label_debt import Debt
    from rag_corpus_check.gate.rules import Rules
    from rag_corpus_check.gate.significance import SignificanceResult
    from rag_corpus_check.gate.slices import Slices
    from rag_corpus_check.gate.thresholds import PerQuestionResult, ThresholdResult
    from rag_corpus_check.inputs import Corpus, Gold, Run
    from rag_corpus_check.metrics.evaluate import Evaluation
    from rag_corpus_check.metrics.measures import Measure
    from rag_corpus_check.retrieval.dense import VectorTrust
    from rag_corpus_check.retrieval.external import CommandResult

PASS, FAIL, INVALID, ERROR = "pass", "fail", "invalid", "error"
PARTIAL = "partial"  # one shard of a sharded run: valid, measured, not gated
EXIT_CODES = {PASS: 0, FAIL: 1, INVALID: 2, ERROR: 3, PARTIAL: 0}


@dataclass(frozen=True)
class Retrieval:
    """How the run was produced when no committed run was scored."""

    info: Mapping  # type and parameters, as the results file shows them
    command: CommandResult | None = None  # a retriever command's result


@dataclass(frozen=True)
class Measured:
    """What measuring one tree found (:func:`stages.measure`, the same for
    the head and the base): the inputs as evaluated, the run, and the
    evaluation when it stood (no input error)."""

    gold: Gold | None = None
    run: Run | None = None
    corpus: Corpus | None = None  # as evaluated (as documents for a chunked corpus evaluated per document)
    corpus_read: Corpus | None = None  # as read (its fingerprint, ids and parents are the comparison's)
    evaluation: Evaluation | None = None
    retrieval: Retrieval | None = None
    level: str | None = None  # a chunked corpus evaluated per "document" or per "chunk" (chunks.level)
    irrelevant_by_type: tuple[dict, ...] = ()
    formats: Mapping[str, str] = field(default_factory=dict)  # input (display path) -> the format it was read as
    digests: Mapping[str, str] = field(default_factory=dict)  # display path -> sha256, in reading order
    base_gold_rankings: Mapping[str, list[str]] | None = None  # the head's rankings of the base's questions, by text
    base_note: str | None = None  # how the base's questions were ranked (a note of the base's)
    vectors: object | None = None  # dense and hybrid: the vectors read (dense.folder.Vectors)
    # a side of a comparison: labelled document -> (hash of what a retriever reads of it, status) (inputs.labelled)
    labelled: Mapping[str, tuple[int, str]] = field(default_factory=dict)


NOT_MEASURED = Measured()


@dataclass(frozen=True)
class BaseResult:
    """The comparison with a base revision (``--base``); each step of it
    makes a new value (:func:`dataclasses.replace`, :meth:`noted`)."""

    rev: str
    sha: str | None = None
    notes: tuple[str, ...] = ()  # why a comparison is missing or partial
    comparison: Comparison | None = None
    rankings: dict[str, list[str]] | None = None  # the base's, as evaluated (for `rag-corpus-check pool`)
    slice_views: dict | None = None  # slice -> its base → head views (gate.slices.compare_slices)
    slices_left_out: tuple[str, ...] = ()  # tags of either gold set not reported (gate.slices.slice_names)

    def noted(self, note: str) -> BaseResult:
        """This result with one more note."""
        return replace(self, notes=(*self.notes, note))


@dataclass(frozen=True)
class Verdict:
    """What :func:`verdict_of` decided."""

    verdict: str = INVALID
    exit_code: int = EXIT_CODES[INVALID]  # the verdict's code (in the results file)
    exit_status: int = EXIT_CODES[INVALID]  # the process's (0 for a failed gate with --advisory)


@dataclass(frozen=True)
class Gated:
    """What :func:`stages.gate` (and a merge of shards) found against the
    rules: none of it until the measures stood and the budget allowed."""

    thresholds: tuple[ThresholdResult, ...] = ()
    per_question: PerQuestionResult | None = None  # with a base compared
    slices: Slices | None = None  # the gold set's tags, measured (gate.slices)
    intervals: Mapping[Measure, Interval | None] = field(default_factory=dict)  # the bootstrap interval of each mean
    debt: Debt | None = None  # the means if every unjudged top-k document were relevant (label_debt)
    significance: SignificanceResult | None = None  # with a base compared and `significance.alpha` set


UNDECIDED = Verdict()  # an outcome before :func:`decide` (``validate``: nothing measured)
NOT_GATED = Gated()


@dataclass(frozen=True)
class Outcome:
    """The whole check, made once from the stages' values; the reporters'
    view of them (read-only properties)."""

    problems: P.Problems
    context: Context = field(default_factory=Context)
    decision: Verdict = UNDECIDED  # made by :func:`decide` only
    config: Config | None = None  # the config that measured and gated (with a base: as enforced)
    shard: tuple[int, int] | None = None  # --shard I/N: this run measures shard I of N (the caller's option)
    config_digests: Mapping[str, str] = field(default_factory=dict)  # the config file (display path) -> sha256
    measured: Measured = NOT_MEASURED
    gated: Gated = NOT_GATED
    uncommitted: tuple[str, ...] | None = None  # inputs the checked-out commit does not hold as read (None: not known)
    changed: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)  # with a base: lines the PR changed
    resampling: Ledger | None = None  # the resampling work charged to the budget (gate.budget)
    rules: Rules | None = None  # which rules applied (None: no config to take them from)
    vector_trust: VectorTrust | None = None  # dense and hybrid, with a base: what the PR supplied
    base: BaseResult | None = None
    advisory: bool = False
    required_rules: tuple[str, ...] = ()  # --require-rules-source: the sources that may gate (empty: any)
    stage: str | None = None  # where an internal error happened

    @property
    def inputs(self) -> Mapping[str, str]:
        """Every file read (display path -> sha256), in reading order."""
        return {**self.config_digests, **self.measured.digests}

    @property
    def corpus(self) -> Corpus | None:
        return self.measured.corpus

    @property
    def gold(self) -> Gold | None:
        return self.measured.gold

    @property
    def run(self) -> Run | None:
        return self.measured.run

    @property
    def retrieval(self) -> Retrieval | None:
        return self.measured.retrieval

    @property
    def evaluation(self) -> Evaluation | None:
        return self.measured.evaluation

    @property
    def irrelevant_by_type(self) -> tuple[dict, ...]:
        return self.measured.irrelevant_by_type

    @property
    def level(self) -> str | None:
        return self.measured.level

    @property
    def formats(self) -> Mapping[str, str]:
        return self.measured.formats

    @property
    def base_gold_rankings(self) -> Mapping[str, list[str]] | None:
        return self.measured.base_gold_rankings

    @property
    def vectors(self) -> object | None:
        return self.measured.vectors

    @property
    def verdict(self) -> str:
        return self.decision.verdict

    @property
    def exit_code(self) -> int:
        return self.decision.exit_code

    @property
    def exit_status(self) -> int:
        return self.decision.exit_status

    @property
    def thresholds(self) -> tuple[ThresholdResult, ...]:
        return self.gated.thresholds

    @property
    def per_question(self) -> PerQuestionResult | None:
        return self.gated.per_question

    @property
    def slices(self) -> Slices | None:
        return self.gated.slices

    @property
    def intervals(self) -> Mapping[Measure, Interval | None]:
        return self.gated.intervals

    @property
    def debt(self) -> Debt | None:
        return self.gated.debt

    @property
    def significance(self) -> SignificanceResult | None:
        return self.gated.significance

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    @property
    def rules_source(self) -> str | None:
        return self.rules.source if self.rules else None

    @property
    def rules_refused(self) -> bool:
        """The rules came from a source the caller does not accept."""
        return bool(self.required_rules) and self.rules is not None and self.rules.source not in self.required_rules


def decide(out: Outcome, *, shard: bool = False) -> Outcome:
    """The check's last step: ``out`` with its :func:`verdict_of`."""
    return replace(out, decision=verdict_of(out, shard=shard))


def verdict_of(out: Outcome, *, shard: bool = False) -> Verdict:
    """The verdict: invalid on any input error or when nothing was measured
    (no thresholds applied), fail when a threshold fails or the PR loosened
    the rules without a reason, partial for one shard (only the merge
    gates), else pass. ``--advisory`` turns a failed gate's exit status into
    0; the verdict stays ``fail``."""
    verdict = _verdict(out)
    if shard and verdict in (PASS, FAIL):
        verdict = PARTIAL
    code = EXIT_CODES[verdict]
    return Verdict(verdict, code, 0 if out.advisory and verdict == FAIL else code)


def _verdict(out: Outcome) -> str:
    if out.evaluation is None or out.problems.has_errors():
        return INVALID
    return FAIL if gate_reasons(out) else PASS


def _vectors_differ(out: Outcome) -> bool:
    return out.vector_trust is not None and out.vector_trust.count("differ") > 0


def gate_reasons(out: Outcome) -> list[str]:
    """Why the gate failed, one line each (none: it passed): a rules source
    the workflow refuses, the rules this PR loosened without a reason, then
    the thresholds and the per-question rule not met (what a reader needs
    first, in the console, the annotations and the summary)."""
    return (_refused(out) + _loosened(out) + [_below(t) for t in out.thresholds if not t.passed]
            + _slice_reasons(out) + _per_question(out) + _significance(out) + _vectors(out))


def _significance(out: Outcome) -> list[str]:
    return out.significance.reasons() if out.significance else []


def _slice_reasons(out: Outcome) -> list[str]:
    results = out.slices.results if out.slices is not None else []
    return [f"slice `{s.name}`: {_below(t)}" for s in results for t in s.thresholds if not t.passed]


def _refused(out: Outcome) -> list[str]:
    if not out.rules_refused:
        return []
    accepted = " or ".join(f"`{s}`" for s in out.required_rules)
    return [f"rules-source is `{out.rules_source}`, and this workflow accepts only {accepted} "
            "(--require-rules-source, action input `require-rules-source`)"]


def _loosened(out: Outcome) -> list[str]:
    loosened = out.rules.loosened if out.rules is not None and out.rules.violated else []
    return [f"this PR loosens a rule without a new `rule_change_reason`: {c}" for c in loosened]


def _per_question(out: Outcome) -> list[str]:
    rule = out.per_question
    return [rule.reason()] if rule is not None and not rule.passed else []


def _vectors(out: Outcome) -> list[str]:
    return [out.vector_trust.reason()] if out.vector_trust is not None and _vectors_differ(out) else []


def _below(t: ThresholdResult) -> str:
    value = "undefined" if t.value is None else figure(t.value, t.limit)
    return f"`{t.measure}` is {value}, the threshold is {t.limit:g}" + (f" ({t.note})" if t.note else "")


def environment() -> dict:
    return {"tool_version": __version__, "python": sys.version.split()[0]}
