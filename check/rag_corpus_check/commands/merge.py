"""Merge the results of a sharded run (``--shard i/n`` on each machine of a
matrix) into the results of one unsharded run: the same per-question values,
the same means (:func:`evaluate.summarize`, summed in the same order), the
same thresholds and verdict (:func:`outcome.decide`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from rag_corpus_check.config.load import Config, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.schemas import validator
from rag_corpus_check.core.text import natural_key, safe_text
from rag_corpus_check.gate.bootstrap import mean_intervals
from rag_corpus_check.gate.rules import NO_BASE, head_rules
from rag_corpus_check.gate.slices import Slices, measure_slices, slice_names, unknown_slices
from rag_corpus_check.gate.thresholds import apply_thresholds
from rag_corpus_check.inputs import Gold, GoldQuery
from rag_corpus_check.metrics.evaluate import QueryResult, by_type_rows, summarize
from rag_corpus_check.metrics.measures import parse_measure
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.pipeline.outcome import NOT_GATED, Gated, Measured, Outcome, decide
from rag_corpus_check.report.conventions import conventions_json
from rag_corpus_check.safe_io import InputError, loads_strict

MAX_RESULTS_BYTES = 2 * 1024**3


def _read(path: str, problems: P.Problems) -> dict | None:
    shown = safe_text(path, 200)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RESULTS_BYTES + 1)
        doc = loads_strict(data.decode("utf-8"), shown, None)
    except (OSError, UnicodeDecodeError):
        problems.add(P.PATH, "cannot read this results file", file=shown)
        return None
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=shown, line=exc.line)
        return None
    if not validator("results").is_valid(doc):
        problems.add(P.SCHEMA, "not a rag-corpus-check results file", file=shown)
        return None
    return doc


class _Shards:
    """What the shard results add up to, and what is wrong with them."""

    def __init__(self, cfg: Config, problems: P.Problems):
        self.cfg, self.problems = cfg, problems
        self.count: int | None = None
        self.seen: dict[int, str] = {}
        self.inputs: dict | None = None
        self.queries: dict[str, dict] = {}
        self.by_type: tuple[Counter, Counter] = (Counter(), Counter())
        self.level: str | None = None  # a chunked corpus's evaluation level (the last shard's)

    def add(self, shown: str, doc: dict) -> None:
        shard = doc.get("shard")
        if not _well_formed(doc):
            self.problems.add(P.SCHEMA, "a shard result with an unknown measure name or problem kind; it was "
                              "not written by rag-corpus-check", file=shown)
            return
        if doc["verdict"] != "partial" or not shard:
            self.problems.add(P.CONSISTENCY, f"not a shard result (verdict `{doc['verdict']}`); only results of "
                              "`--shard i/n` runs can be merged", file=shown)
            return
        self._shard(shown, shard)
        self._same_inputs(shown, doc)
        self._contents(shown, doc)

    def _contents(self, shown: str, doc: dict) -> None:
        for q in doc["queries"]:
            if q["query_id"] in self.queries:
                self.problems.add(P.CONSISTENCY, "question measured by two shards", file=shown, id=q["query_id"])
            self.queries[q["query_id"]] = q
        for row in doc.get("irrelevant_by_type") or []:
            self.by_type[0][row["type"]] += row["irrelevant"]
            self.by_type[1][row["type"]] += row["unjudged"]
        for p in doc["problems"]:
            self.problems.add(p["kind"], p["message"], file=p["file"], line=p["line"], id=p["id"],
                              severity=p["severity"])

    def _shard(self, shown: str, shard: dict) -> None:
        if self.count is None:
            self.count = shard["count"]
        if shard["count"] != self.count:
            self.problems.add(P.CONSISTENCY, f"shard count {shard['count']} differs from {self.count}", file=shown)
        if shard["index"] in self.seen:
            self.problems.add(P.CONSISTENCY, f"shard {shard['index']} given twice (also {self.seen[shard['index']]})",
                              file=shown)
        self.seen[shard["index"]] = shown

    def _same_inputs(self, shown: str, doc: dict) -> None:
        if self.inputs is None:
            self.inputs = doc["provenance"]["inputs"]
        elif doc["provenance"]["inputs"] != self.inputs:
            self.problems.add(P.CONSISTENCY, "this shard checked different input files (sha-256 differ); all "
                              "shards must check the same commit", file=shown)
        self._same_conventions(shown, doc)

    def _same_conventions(self, shown: str, doc: dict) -> None:
        conventions = dict(doc["conventions"])
        self.level = conventions.pop("level", None)
        if conventions != conventions_json(self.cfg):
            self.problems.add(P.CONSISTENCY, "this shard used other conventions than the config", file=shown)

    def missing(self) -> list[int]:
        return sorted(set(range(1, self.count + 1)) - set(self.seen)) if self.count is not None else []


def merge(root: str, config_path: str, paths: list[str], context: Context | None = None,
          advisory: bool = False) -> Outcome:
    problems = P.Problems()
    cfg, _ = load_config(root, config_path, problems)
    out = Outcome(problems, context or Context(), config=cfg, advisory=advisory,
                  rules=head_rules(NO_BASE, "shards are measured without a base"))
    docs = [(safe_text(p, 200), _read(p, problems)) for p in paths]
    if cfg is None or problems.has_errors():
        return decide(out)
    shards = _added(cfg, docs, problems, config_path)
    measured, gated = Measured(level=shards.level, digests=dict(shards.inputs or {})), NOT_GATED
    if not problems.has_errors() and shards.queries:
        measured, gated = _measured(measured, cfg, shards, config_path, problems)
    return decide(replace(out, measured=measured, gated=gated))


def _added(cfg: Config, docs: list, problems: P.Problems, config_path: str) -> _Shards:
    shards = _Shards(cfg, problems)
    for shown, doc in docs:
        shards.add(shown, doc)
    if shards.missing():
        problems.add(P.CONSISTENCY, f"shards missing: {', '.join(map(str, shards.missing()))} of {shards.count}",
                     file=safe_text(config_path, 200))
    return shards


def _measured(measured: Measured, cfg: Config, shards: _Shards, config_path: str, problems: P.Problems
              ) -> tuple[Measured, Gated]:
    results = [_result(shards.queries[qid]) for qid in sorted(shards.queries, key=natural_key)]  # the order evaluate() lists them in
    evaluation = summarize(results, list(results[0].values))
    if evaluation.counted == 0:
        problems.add(P.CONSISTENCY, "no gold question has a relevant document; there is nothing to measure — "
                     "label at least one relevant document", file=safe_text(config_path, 200))
        return measured, NOT_GATED
    intervals = mean_intervals(evaluation)  # from the merged questions: as one check would give them
    tags = {qid: tuple(q["tags"]) for qid, q in shards.queries.items() if q.get("tags")}
    gold = Gold(file=cfg.path_display, queries={qid: GoldQuery(qid, None, {}, {}, tags=t) for qid, t in tags.items()})
    measured = replace(measured, gold=gold, evaluation=evaluation,
                       irrelevant_by_type=tuple(by_type_rows(*shards.by_type)))
    thresholds = apply_thresholds(cfg.thresholds, evaluation.means)
    return measured, Gated(tuple(thresholds), slices=_slices(cfg, tags, evaluation, problems), intervals=intervals)


def _slices(cfg: Config, tags: dict[str, tuple[str, ...]], evaluation, problems: P.Problems) -> Slices:
    """The slices over every shard's questions (their tags are in the shard
    results), gated as in one unsharded run."""
    unknown_slices(cfg, tags, problems)
    names, left_out = slice_names(cfg, tags)
    return Slices(measure_slices(cfg, evaluation, tags, names, None), left_out)


def _well_formed(doc: dict) -> bool:
    """What the schema cannot say: every measure name is one (values are
    keyed by it and printed), every problem kind is ours."""
    try:
        for q in doc["queries"]:
            for name in q["values"]:
                parse_measure(name)
    except ValueError:
        return False
    return all(p["kind"] in P.KINDS for p in doc["problems"])


def _result(q: dict) -> QueryResult:
    values = {parse_measure(name): v for name, v in q["values"].items()}
    return QueryResult(q["query_id"], q["status"], q.get("in_run", True), q.get("relevant", 0), values)
