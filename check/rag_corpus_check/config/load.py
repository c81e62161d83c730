"""The configuration file: read it safely, validate it, normalise it.

Thresholds are committed in the repository and reviewed like code. Measure
names are parsed here, once; an unknown one is a config problem that lists the
valid names.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.schemas import describe_error, error_path, errors
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.metrics.measures import (
    MAX_K,
    ORDER,
    Measure,
    Options,
    headline,
    parse_measure,
)
from rag_corpus_check.retrieval.bm25 import BM25Params, Bounds
from rag_corpus_check.retrieval.dense import Endpoint, folder_files, url_problem
from rag_corpus_check.retrieval.protocol import Ranker
from rag_corpus_check.retrieval.rankers import DEFAULT, RANKERS, Command
from rag_corpus_check.safe_io import (
    CONFIG_MAX_BYTES,
    InputError,
    Limits,
    line_of,
    load_yaml,
    read_bytes,
    resolve_input,
)

DEFAULT_CONFIG = ".rag-corpus-check.yml"


def add_tree_arguments(parser) -> None:
    """`--config` and `--root`, as every subcommand that reads a tree takes them."""
    parser.add_argument("--config", default=DEFAULT_CONFIG, help=f"config file (default {DEFAULT_CONFIG})")
    parser.add_argument("--root", default=".", help="repository root (default: current directory)")
# The `limits:` a config may set: the input limits (safe_io.Limits), the
# retriever's bounds (bm25.Bounds), by their field names, and the
# resampling budget (gate.budget).
FILE_LIMITS = ("max_file_bytes", "max_line_bytes", "max_records", "max_compression_ratio")
BOUND_LIMITS = tuple(f.name for f in dataclasses.fields(Bounds))
# The resampling budget's limit and its default (gate.budget spends it).
RESAMPLING_LIMIT = "max_resampling_work_per_byte"
RESAMPLING_PER_BYTE = 200
LIMIT_NAMES = FILE_LIMITS + BOUND_LIMITS + (RESAMPLING_LIMIT,)


def limit_default(name: str) -> int:
    """The default of one of LIMIT_NAMES."""
    if name == RESAMPLING_LIMIT:
        return RESAMPLING_PER_BYTE
    return getattr(Limits if name in FILE_LIMITS else Bounds, name)


@dataclass(frozen=True)
class Threshold:
    measure: Measure
    min: float
    max_drop: float | None = None


@dataclass(frozen=True)
class PerQuestion:
    """`per_question:` — with a base, the gate fails when more than
    ``max_questions`` questions lose more than ``max_drop`` of ``measure``."""

    measure: Measure
    max_drop: float = 0.5
    max_questions: int = 0


SLICE_MIN_QUESTIONS = 10  # `slices.<tag>.min_questions` by default
# Distinct measures a config may have computed (the headline ones, thresholds,
# `measures:`, slice thresholds, per_question): the schema caps each list at
# 50, this their union (slices could name 50 new ones each). Real configs
# name fewer than 20.
MAX_MEASURES = 120


@dataclass(frozen=True)
class SliceRule:
    """`slices.<tag>`: the thresholds of the questions tagged ``tag``, gated
    when the slice has at least ``min_questions`` questions in its means.
    ``line``: where the config names it (None for a rule the base added)."""

    thresholds: tuple[Threshold, ...] = ()
    min_questions: int = SLICE_MIN_QUESTIONS
    line: int | None = None


@dataclass(frozen=True)
class Fields:
    """A field map (`gold: {path, fields}`, `corpus: {path, fields}`): the
    native fields a file writes under names of its own, as ``(native, the
    file's name)`` pairs in the config's order. A native field it does not
    rename keeps its native name."""

    renamed: tuple[tuple[str, str], ...] = ()

    def name(self, native: str) -> str:
        """The name the file writes ``native`` under."""
        return next((written for field_, written in self.renamed if field_ == native), native)

    def renames(self, native: str) -> bool:
        return any(field_ == native for field_, _ in self.renamed)

    def __str__(self) -> str:
        return "{" + ", ".join(f"{native}: {written}" for native, written in self.renamed) + "}"


@dataclass(frozen=True)
class MarkdownSpec:
    """`corpus: {format: markdown, ...}`: which pages (globs relative to the
    config's folder, `exclude` left out) and how they are chunked (`heading`:
    a record per section; `file`: a record per page). Read by
    :mod:`inputs.markdown_corpus`; all four settings are rules (:mod:`gate.rules`)."""

    paths: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    chunk: str = "heading"

    @property
    def shown(self) -> str:
        """The pages as messages name the corpus (the globs, comma-separated)."""
        return ", ".join(self.paths)


@dataclass(frozen=True)
class Config:
    """The config as read, validated and normalised: a value, never changed
    after :func:`load_config` builds it. What differs (the base's rules
    enforced, the base measured under the head's conventions, `retrieve`
    without `run:`) is a new Config (``dataclasses.replace``)."""

    path_display: str
    base_dir: str
    corpus: str
    gold: str  # the gold file, or the first of a list (the one the rules name)
    run: str | None
    k: int
    min_grade: int = 1
    max_grade: int = 2
    gain: str = "linear"
    short_list: str = "pad"
    ignore_identical_ids: bool = False  # BEIR: a question's own id is dropped from its ranking
    judged_only: bool = False  # metrics.judged_only: unjudged documents leave the ranking first (trec_eval -J)
    significance: float | None = None  # significance.alpha: the paired test's gate (None: off)
    snapshot: str | None = None
    gold_format: str = "auto"
    run_format: str = "auto"
    corpus_format: str = "jsonl"
    gold_fields: Fields | None = None  # `gold: {path, fields}`: read through the field map (inputs/fieldmap.py)
    corpus_fields: Fields | None = None  # `corpus: {path, fields}`
    list_grade: int = 1  # relevance.list_grade: the grade of a document a question lists as a plain id
    markdown: MarkdownSpec | None = None  # `corpus: {format: markdown}`: its pages (``corpus`` is then their globs, shown)
    queries: str | None = None  # a file of question texts (BEIR's queries.jsonl)
    extra_gold: tuple[str, ...] = ()  # the rest of a `gold:` list, merged with the first
    run_order: str = "descending"  # how a scored run's scores order it
    grade_map: dict[int, int] = field(default_factory=dict)  # relevance.map: grade as written -> grade used
    thresholds: tuple[Threshold, ...] = ()
    reported: tuple[Measure, ...] = ()  # `measures:`, reported without a threshold
    per_question: PerQuestion | None = None  # None only until the config is built (see _thresholds)
    slices: dict[str, SliceRule] = field(default_factory=dict)  # tag -> its rules (`slices:`)
    inactive_labels: str = "warning"
    missing_queries: str = "warning"
    extra_queries: str = "warning"
    worst: int = 5
    show_text: bool = False
    limits: Limits = field(default_factory=Limits)
    bounds: Bounds = field(default_factory=Bounds)
    resampling_per_byte: int = RESAMPLING_PER_BYTE  # limits.max_resampling_work_per_byte (gate.budget)
    ranker: type[Ranker] = DEFAULT  # used when run is None: `retriever.type`'s (retrieval.rankers.RANKERS)
    bm25: BM25Params = field(default_factory=BM25Params)
    vectors: str | None = None  # dense and hybrid: the vectors folder (retrieval/dense/folder.py)
    model: str | None = None  # dense and hybrid: the embedding model, as model.json names it
    rrf_k: int = 60  # hybrid: reciprocal rank fusion's k
    embed: tuple[str, ...] = ("text",)  # dense and hybrid: the fields a document's vector embeds
    endpoint: Endpoint | None = None  # dense and hybrid over a store: where texts the store lacks are embedded
    accept_pr_vectors: bool = False  # with a base: a store's PR-committed vectors are taken (on trust)
    command: list[str] | None = None
    command_timeout: float = 600.0
    rule_change_reason: str | None = None
    reason_line: int | None = None  # the line of `rule_change_reason` (the override's annotation)
    raw: dict = field(default_factory=dict)  # the config file as written (results.json's `config`)

    def limit(self, name: str) -> int:
        """One of LIMIT_NAMES."""
        if name == RESAMPLING_LIMIT:
            return self.resampling_per_byte
        return getattr(self.limits if name in FILE_LIMITS else self.bounds, name)

    def with_limits(self, values: dict[str, int]) -> Config:
        """This config with the limits named in ``values`` (LIMIT_NAMES) replaced."""
        files: dict[str, Any] = {k: v for k, v in values.items() if k in FILE_LIMITS}
        return dataclasses.replace(
            self, limits=dataclasses.replace(self.limits, **files),
            bounds=dataclasses.replace(self.bounds, **{k: v for k, v in values.items() if k in BOUND_LIMITS}),
            resampling_per_byte=values.get(RESAMPLING_LIMIT, self.resampling_per_byte))

    @property
    def gold_files(self) -> list[str]:
        """Every gold file the config names, in its order."""
        return [self.gold, *self.extra_gold]

    @property
    def input_files(self) -> list[str]:
        """Every input file the config names (corpus, gold, BEIR's queries,
        run), relative to its folder: what a tree must hold to be measured."""
        corpus = self.corpus if self.markdown is None else None  # the pages: globs, not a file
        files = [rel for rel in (corpus, *self.gold_files, self.queries, self.run) if rel is not None]
        return files + (folder_files(self.vectors) if self.vectors and self.uses_vectors else [])

    @property
    def uses_vectors(self) -> bool:
        """The ranking is made from the committed vectors (dense or hybrid)."""
        return self.run is None and self.ranker.needs_vectors

    def measures(self) -> list[Measure]:
        """Every measure computed: the headline ones at the config's k, then
        any other a threshold or `measures:` names (by k, Rprec last)."""
        first = headline(self.k)
        rest = ({t.measure for t in self.thresholds} | set(self.reported) | set(self._per_question_measure())
                | {t.measure for rule in self.slices.values() for t in rule.thresholds})
        rest -= set(first)
        return first + sorted(rest, key=lambda m: (m.k or MAX_K + 1, ORDER[m.name]))

    def _per_question_measure(self) -> list[Measure]:
        return [self.per_question.measure] if self.per_question is not None else []

    def options(self) -> Options:
        """The conventions the measures are computed under."""
        return Options(min_grade=self.min_grade, gain=self.gain, short_list=self.short_list,
                       judged_only=self.judged_only)


def load_config(
    root: str, config_path: str, problems: P.Problems, hasher=None, base_dir: str | None = None
) -> tuple[Config | None, str | None]:
    """Returns (config, real_path) or (None, real_path) with problems added.
    ``hasher`` is fed the bytes of the config once they are read. Paths in
    the config are relative to ``base_dir`` (default: the config's own
    directory, after resolving symlinks)."""
    try:
        rel = os.path.relpath(os.path.abspath(config_path), os.path.abspath(root))
        real, display = resolve_input(root, os.path.realpath(root), rel, "config")
        doc = load_yaml(read_bytes(real, display, CONFIG_MAX_BYTES, hasher), display, Limits())
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=exc.file or safe_text(config_path), line=exc.line)
        return None, None
    if not _schema_ok(doc, display, problems):
        return None, real
    cfg = _build(doc, display, base_dir or os.path.dirname(real))
    ok = _consistent(cfg, doc, problems)
    cfg, rules_ok = _thresholds(cfg, doc, problems)
    return (cfg if ok and rules_ok else None), real


def _schema_ok(doc, display: str, problems: P.Problems) -> bool:
    if not isinstance(doc, dict):
        problems.add(P.SCHEMA, "the config must be a YAML mapping (key: value lines)", file=display, line=1)
        return False
    errs = errors("config", doc)
    for err in errs:
        problems.add(P.SCHEMA, describe_error(err), file=display, line=line_of(doc, error_path(err)))
    return not errs


def _section(doc: dict, name: str) -> dict:
    return doc.get(name) or {}


def _build(doc: dict, display: str, base_dir: str) -> Config:
    """The config of a schema-valid document, defaults filled in."""
    rel, met, fmt = _section(doc, "relevance"), _section(doc, "metrics"), _section(doc, "formats")
    val, rep, lim = _section(doc, "validation"), _section(doc, "report"), _section(doc, "limits")
    ret = _section(doc, "retriever")
    return Config(
        path_display=display, base_dir=base_dir, **_files(doc, fmt), run=doc.get("run"),
        k=doc["k"], min_grade=rel.get("min_grade", 1), max_grade=rel.get("max_grade", 2),
        list_grade=rel.get("list_grade", 1),
        grade_map={int(k): v for k, v in (rel.get("map") or {}).items()},
        gain=met.get("gain", "linear"), short_list=met.get("short_list", "pad"),
        ignore_identical_ids=met.get("ignore_identical_ids", False), snapshot=doc.get("snapshot"),
        judged_only=met.get("judged_only", False), significance=_section(doc, "significance").get("alpha"),
        run_format=fmt.get("run", "auto"), run_order=fmt.get("run_order", "descending"),
        inactive_labels=val.get("inactive_labels", "warning"), missing_queries=val.get("missing_queries", "warning"),
        extra_queries=val.get("extra_queries", "warning"), worst=rep.get("worst", 5),
        show_text=rep.get("show_text", False),
        limits=Limits(**{name: lim.get(name, getattr(Limits, name)) for name in FILE_LIMITS}),
        bounds=Bounds(**{name: lim.get(name, getattr(Bounds, name)) for name in BOUND_LIMITS}),
        resampling_per_byte=lim.get(RESAMPLING_LIMIT, RESAMPLING_PER_BYTE),
        ranker=RANKERS[ret["type"]] if "type" in ret else Command if "command" in ret else DEFAULT, bm25=_bm25(ret),
        command=ret.get("command"), command_timeout=float(ret.get("timeout", 600)),
        vectors=ret.get("vectors"), model=ret.get("model"), rrf_k=ret.get("rrf_k", 60),
        embed=tuple(ret.get("embed", ["text"])), endpoint=_endpoint(ret.get("endpoint")),
        accept_pr_vectors=ret.get("accept_pr_vectors", False),
        rule_change_reason=doc.get("rule_change_reason"), raw=_plain(doc),
        reason_line=line_of(doc, ["rule_change_reason"]) if "rule_change_reason" in doc else None,
    )


def _files(doc: dict, fmt: dict) -> dict:
    """Where the corpus and the gold set are, and their formats: as named,
    or the files of a `dataset:` in another tool's layout."""
    data = doc.get("dataset")
    if data is None:
        gold = doc["gold"]
        first, *rest = [gold] if isinstance(gold, str) else [gold["path"]] if isinstance(gold, dict) else gold
        return {**_corpus(doc["corpus"]), "gold": first, "extra_gold": tuple(rest),
                "gold_format": fmt.get("gold", "auto"), "gold_fields": _fields(gold)}
    path = data["path"]
    if data["format"] == "llamaindex":
        return {"corpus": path, "gold": path, "corpus_format": "llamaindex", "gold_format": "llamaindex"}
    split = data.get("split", "test")
    return {"corpus": f"{path}/corpus.jsonl", "gold": f"{path}/qrels/{split}.tsv", "queries": f"{path}/queries.jsonl",
            "corpus_format": "beir", "gold_format": "beir"}


def _endpoint(doc: dict | None) -> Endpoint | None:
    if doc is None:
        return None
    return Endpoint(url=doc["url"], key_env=doc["key_env"], timeout=float(doc.get("timeout", 60)),
                    batch=doc.get("batch", 64), max_texts=doc.get("max_texts", 10_000),
                    max_tokens=doc.get("max_tokens", 5_000_000))


def _fields(spec) -> Fields | None:
    """The field map of a `gold:` or `corpus:` object (None: the native names, read as they always were)."""
    if not isinstance(spec, dict) or "fields" not in spec:
        return None
    return Fields(tuple((native, written) for native, written in spec["fields"].items()))


def _corpus(corpus: str | dict) -> dict:
    """`corpus:` as a file (a string, or `{path: ...}`), or Markdown pages."""
    if isinstance(corpus, str):
        return {"corpus": corpus}
    if corpus.get("format", "jsonl") == "jsonl":
        return {"corpus": corpus["path"], "corpus_fields": _fields(corpus)}
    spec = MarkdownSpec(tuple(corpus["paths"]), tuple(corpus.get("exclude", ())), corpus.get("chunk", "heading"))
    return {"corpus": spec.shown, "corpus_format": "markdown", "markdown": spec}


def _bm25(ret: dict) -> BM25Params:
    return BM25Params(k1=float(ret.get("k1", 1.2)), b=float(ret.get("b", 0.75)), depth=ret.get("depth", 100),
                      statuses=tuple(ret.get("statuses", ["active"])), stopwords=ret.get("stopwords"),
                      stemmer=ret.get("stemmer"))


def _consistent(cfg: Config, doc: dict, problems: P.Problems) -> bool:
    """What the schema cannot say: settings that contradict each other."""
    found = []
    if cfg.min_grade > cfg.max_grade:
        found.append((f"relevance.min_grade ({cfg.min_grade}) is above relevance.max_grade ({cfg.max_grade})",
                      ["relevance", "min_grade"]))
    if cfg.run is None:  # the retriever's settings matter only when it retrieves
        found += _retriever_problems(cfg)
    found += _field_problems(cfg)
    for message, path in found:
        problems.add(P.CONFIG, message, file=cfg.path_display, line=line_of(doc, path))
    return not found


def _field_problems(cfg: Config) -> list[tuple[str, list[str]]]:
    """A field map that reads one field of the file as two native fields."""
    found = []
    for key, fields in (("gold", cfg.gold_fields), ("corpus", cfg.corpus_fields)):
        written = [name for _, name in fields.renamed] if fields is not None else []
        twice = sorted({name for name in written if written.count(name) > 1})
        found += [(f"`{key}.fields` reads the field `{safe_text(name, 60)}` as two native fields; map each "
                   "native field to a field of its own", [key, "fields"]) for name in twice]
    return found


def _retriever_problems(cfg: Config) -> list[tuple[str, list[str]]]:
    found = []
    if cfg.ranker.runs_command and not cfg.command:
        found.append((f"`retriever.type: {cfg.ranker.name}` needs `retriever.command: [argv, ...]`", ["retriever"]))
    if not cfg.ranker.runs_command and cfg.command:
        found.append((f"`retriever.command` is set but `retriever.type` is {cfg.ranker.name}; set `type: command`",
                      ["retriever", "type"]))
    found += _vector_problems(cfg)
    if cfg.markdown is not None and cfg.ranker.runs_command:
        found.append(("`retriever.type: command` reads a corpus file, and a Markdown corpus is a folder of pages: "
                      "write the file with `rag-corpus-check export --out corpus.jsonl` and name it in the "
                      "command, or rank with the built-in retriever", ["retriever", "type"]))
    if cfg.bm25.depth < cfg.k:
        found.append((f"retriever.depth ({cfg.bm25.depth}) is below k ({cfg.k}); the ranking must be at least K "
                      "long — raise depth", ["retriever", "depth"]))
    return found


def _vector_problems(cfg: Config) -> list[tuple[str, list[str]]]:
    """`vectors` and `model` go with (and only with) dense and hybrid."""
    if cfg.ranker.needs_vectors:
        missing = [name for name in ("vectors", "model") if getattr(cfg, name) is None]
        found = [(f"`retriever.type: {cfg.ranker.name}` needs `retriever.{name}`", ["retriever"]) for name in missing]
        why = url_problem(cfg.endpoint.url) if cfg.endpoint is not None else None
        return found + ([(f"`retriever.endpoint.url` {why}", ["retriever", "endpoint", "url"])] if why else [])
    return [(f"`retriever.{name}` is set but `retriever.type` is {cfg.ranker.name}; set `type: dense` or "
             "`type: hybrid`", ["retriever", name]) for name in ("vectors", "model", "endpoint") if getattr(cfg, name)]


def _thresholds(cfg: Config, doc: dict, problems: P.Problems) -> tuple[Config, bool]:
    """``cfg`` with the thresholds, the `measures:` list, the per-question
    rule and the slice rules, each name parsed once; False when one is
    unknown or there are too many (problems say which)."""
    named = {name: _measure(cfg, doc, name, ["thresholds", name], "threshold", problems)
             for name in doc.get("thresholds", {})}
    listed = [_measure(cfg, doc, name, ["measures", i], "measure", problems)
              for i, name in enumerate(doc.get("measures", []))]
    per_question = _per_question(cfg, doc, problems)
    slices, slices_ok = _slices(cfg, doc, problems)
    thresholds = tuple(_threshold(m, doc["thresholds"][name]) for name, m in named.items() if m)
    cfg = dataclasses.replace(cfg, thresholds=thresholds, reported=tuple(filter(None, listed)),
                              per_question=per_question, slices=slices)
    ok = None not in named.values() and None not in listed and per_question is not None and slices_ok
    return cfg, ok and _few_measures(cfg, doc, problems)


def _few_measures(cfg: Config, doc: dict, problems: P.Problems) -> bool:
    """At most :data:`MAX_MEASURES` distinct measures in all (a limit problem)."""
    n = len(cfg.measures())
    if n <= MAX_MEASURES:
        return True
    where = next((key for key in ("slices", "measures", "thresholds") if key in doc), "thresholds")
    problems.add(P.LIMIT, f"the config names {n} distinct measures (the headline ones, `thresholds:`, `measures:`, "
                 f"slice thresholds and `per_question` together), more than the {MAX_MEASURES} the check computes: "
                 "each is evaluated, bootstrapped and, with --base, tested on every gold set and slice — name "
                 "fewer", file=cfg.path_display, line=line_of(doc, [where]))
    return False


def _slices(cfg: Config, doc: dict, problems: P.Problems) -> tuple[dict[str, SliceRule], bool]:
    """`slices:`, each threshold's measure parsed; False when one is unknown (a problem)."""
    ok = True
    rules = {}
    for tag, spec in _section(doc, "slices").items():
        given = spec.get("thresholds", {})
        named = {name: _measure(cfg, doc, name, ["slices", tag, "thresholds", name], f"slice `{tag}` threshold",
                                problems) for name in given}
        ok = ok and None not in named.values()
        rules[tag] = SliceRule(tuple(_threshold(m, given[name]) for name, m in named.items() if m),
                               spec.get("min_questions", SLICE_MIN_QUESTIONS), line_of(doc, ["slices", tag]))
    return rules, ok


def _per_question(cfg: Config, doc: dict, problems: P.Problems) -> PerQuestion | None:
    """`per_question:` with its defaults; None when its measure is unknown (a problem)."""
    rule = _section(doc, "per_question")
    name = rule.get("measure", str(Measure("nDCG", cfg.k)))
    measure = _measure(cfg, doc, name, ["per_question", "measure"], "per_question measure", problems)
    return PerQuestion(measure, float(rule.get("max_drop", 0.5)), rule.get("max_questions", 0)) if measure else None


def _threshold(measure: Measure, spec) -> Threshold:
    """A threshold's value as written: a number, or `{min, max_drop}`."""
    if isinstance(spec, dict):
        return Threshold(measure, float(spec["min"]), spec.get("max_drop"))
    return Threshold(measure, float(spec))


def _measure(cfg: Config, doc: dict, name: str, path: list, what: str, problems: P.Problems) -> Measure | None:
    try:
        return parse_measure(name)
    except ValueError as exc:
        problems.add(P.CONFIG, f"{what} `{safe_text(name, 40)}`: {exc}", file=cfg.path_display,
                     line=line_of(doc, path))
        return None


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
