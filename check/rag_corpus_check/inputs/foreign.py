"""Inputs as other tools write them, read without conversion: pytrec_eval /
ranx / ir_measures dicts (``qrels-json``: ``{qid: {doc: grade}}``;
``run-json``: ``{qid: {doc: score}}``), a LlamaIndex
``EmbeddingQAFinetuneDataset`` JSON file, and a BEIR folder's
``corpus.jsonl`` and ``queries.jsonl`` (its qrels are read in :mod:`gold`).

Each foreign record is turned into the native record and checked by the
native rules (:mod:`inputs.checks`, from the schemas), so an id, a grade or a
text obeys the same rule whatever the format; BEIR's own field names are
checked against ``schemas/beir.schema.json`` first, so a message names the
field the file has. A JSON document has no lines once parsed: each question
and document is found in the text in order (:class:`KeyLines`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs import checks
from rag_corpus_check.inputs.checks import corpus_record, gold_query, run_record
from rag_corpus_check.inputs.corpus import fingerprint, line_sum
from rag_corpus_check.inputs.records import Corpus, Gold, GoldQuery, Run, RunQuery
from rag_corpus_check.inputs.run import trec_order
from rag_corpus_check.inputs.validity import schema_ok
from rag_corpus_check.safe_io import Limits, iter_jsonl, json_keys, load_json_document

MAX_JSON_BYTES = 512 * 1024**2  # a JSON document is parsed whole: ~10x its size in memory


class KeyLines:
    """The line of each key of a JSON document, found in its text in the
    order a parser returns them; None when not found. One pass over the
    text (:func:`json_keys`) for all the keys looked up: a key that is not
    found ends the search (every later one is None), so no key costs a
    rescan to the end of the file (ids written with ``\\u`` escapes cost
    one each, 18.9 CPU-s for 1.1 MB, before)."""

    def __init__(self, text: str, start: int = 0, line: int | None = None):
        self.text = text
        self._keys: Iterator[tuple[str, int, int]] | None = json_keys(text, start, line)

    def find(self, key: str) -> int | None:
        if self._keys is not None:
            for found, line, _end in self._keys:
                if found == key:
                    return line
            self._keys = None
        return None

    def section(self, key: str) -> KeyLines:
        """The lines of the keys inside the top-level value ``key``."""
        for found, line, end in json_keys(self.text):
            if found == key:
                return KeyLines(self.text, end, line)
        return KeyLines(self.text)


def _document(real: str, file: str, limits: Limits, hasher, problems: P.Problems, what: str):
    """The parsed document and its lines, or (None, None) with a problem
    when it is not a JSON object."""
    doc, text = load_json_document(real, file, limits, hasher, ceiling=MAX_JSON_BYTES)
    if not isinstance(doc, dict):
        problems.add(P.SCHEMA, f"the file must be a JSON object: {what}", file=file, line=1)
        return None, None
    return doc, KeyLines(text)


def mapped(relevant: dict, grade_map: dict[int, int]) -> dict:
    """Grades as the config's `relevance.map` turns them (a grade not in it stays)."""
    if not grade_map:
        return relevant
    return {d: grade_map.get(g, g) if type(g) is int else g for d, g in relevant.items()}


# ---------------------------------------------------------------- pytrec_eval dicts


def read_qrels_json(real: str, file: str, limits: Limits, problems: P.Problems, grade_map: dict[int, int],
                    hasher=None) -> Gold:
    """``{question id: {document id: grade}}``."""
    gold = Gold(file=file, format="qrels-json")
    doc, lines = _document(real, file, limits, hasher, problems, "{question id: {document id: grade}}")
    for qid, labels in (doc or {}).items():
        assert lines is not None
        line = lines.find(qid)
        if not isinstance(labels, dict):
            problems.add(P.SCHEMA, "a question's labels must be an object {document id: grade}", file=file,
                         line=line, id=qid)
            continue
        rec = {"query_id": qid, "relevant": mapped(labels, grade_map)}
        if schema_ok(problems, ("gold", "#/$defs/query"), rec, file, line, fast=gold_query):
            label_lines = {d: lines.find(d) for d in labels}
            gold.queries[qid] = GoldQuery(qid, line, rec["relevant"], label_lines)
    return gold


def read_run_json(real: str, file: str, limits: Limits, problems: P.Problems, order: str, hasher=None) -> Run:
    """``{question id: {document id: score}}``, ordered as trec_eval orders
    (score descending, ties by id descending; `run_order: ascending` turns
    the scores round)."""
    run = Run(file=file, format="run-json")
    doc, lines = _document(real, file, limits, hasher, problems, "{question id: {document id: score}}")
    for qid, scores in (doc or {}).items():
        assert lines is not None
        line = lines.find(qid)
        ranking = _ranking(qid, scores, order, file, line, problems)
        if ranking is None:
            continue
        rec = {"query_id": qid, "ranking": ranking}
        if schema_ok(problems, ("run", ""), rec, file, line, fast=run_record):
            run.queries[qid] = RunQuery(qid, line, ranking)
    return run


def _ranking(qid: str, scores, order: str, file: str, line: int | None, problems: P.Problems) -> list[str] | None:
    if not isinstance(scores, dict):
        problems.add(P.SCHEMA, "a question's run must be an object {document id: score}", file=file, line=line,
                     id=qid)
        return None
    sign = -1.0 if order == "ascending" else 1.0
    items = [(sign * _score(s), d) for d, s in scores.items()]
    bad = next((d for score, d in items if not math.isfinite(score)), None)
    if bad is not None:
        problems.add(P.SCHEMA, f"the score of a document must be a finite number (question `{safe_text(qid, 60)}`)",
                     file=file, line=line, id=bad)
        return None
    return trec_order(items)


def _score(s: object) -> float:
    """A JSON number as a float; NaN for anything else (or too large)."""
    return float(s) if type(s) in (int, float) and abs(s) < 1e308 else math.nan  # type: ignore[arg-type]


# ---------------------------------------------------------------- LlamaIndex


_LLAMA = "{queries: {id: text}, corpus: {id: text}, relevant_docs: {id: [ids]}} (LlamaIndex EmbeddingQAFinetuneDataset)"


def _llama(real: str, file: str, limits: Limits, hasher, problems: P.Problems):
    """The dataset and its lines, or (None, None) when its shape is wrong."""
    doc, lines = _document(real, file, limits, hasher, problems, _LLAMA)
    return (doc, lines) if doc is not None and _llama_sections(doc, file, problems) else (None, None)


def _llama_sections(doc: dict, file: str, problems: P.Problems) -> bool:
    """The document's shape: three objects, `mode` text (or absent)."""
    ok = True
    for key in ("queries", "corpus", "relevant_docs"):
        if not isinstance(doc.get(key), dict):
            problems.add(P.SCHEMA, f"`{key}` must be an object: the file must be {_LLAMA}", file=file, line=1)
            ok = False
    if doc.get("mode", "text") != "text":
        problems.add(P.SCHEMA, "only `mode: text` datasets can be checked (documents are texts)", file=file, line=1)
        ok = False
    return ok


def read_llamaindex_corpus(real: str, file: str, limits: Limits, problems: P.Problems, on_doc=None,
                           hasher=None) -> Corpus:
    """The ``corpus`` of a LlamaIndex dataset: ``{node id: text}``."""
    corpus = Corpus(file=file)
    doc, lines = _llama(real, file, limits, hasher, problems)
    if doc is None:
        return corpus
    assert lines is not None and corpus.lines is not None
    found, total = lines.section("corpus"), 0
    for doc_id, text in doc["corpus"].items():
        line = found.find(doc_id)
        rec = {"id": doc_id, "text": text}
        if schema_ok(problems, ("corpus", ""), rec, file, line, fast=corpus_record):
            corpus.docs[doc_id] = corpus.doc(None, "active", None)
            corpus.lines[doc_id] = line or 1
            corpus.note_blank(doc_id, rec, line or 1)
            total += line_sum((json.dumps(rec, ensure_ascii=False).encode(),))
            if on_doc is not None:
                on_doc(doc_id, rec)
    corpus.fingerprint = fingerprint(total, len(corpus.docs))
    return corpus


def read_llamaindex_gold(real: str, file: str, limits: Limits, problems: P.Problems, hasher=None) -> Gold:
    """The questions (``queries``) and their labels (``relevant_docs``, each
    grade 1: LlamaIndex's labels are binary)."""
    gold = Gold(file=file, format="llamaindex")
    doc, lines = _llama(real, file, limits, hasher, problems)
    if doc is None:
        return gold
    assert lines is not None
    found, relevant = lines.section("queries"), doc["relevant_docs"]
    for qid, text in doc["queries"].items():
        line = found.find(qid)
        docs = relevant.get(qid, [])
        if not isinstance(docs, list):
            problems.add(P.SCHEMA, "`relevant_docs` of a question must be a list of node ids", file=file,
                         line=line, id=qid)
            continue
        rec = {"query_id": qid, "query": text, "relevant": dict.fromkeys(docs, 1)}
        if schema_ok(problems, ("gold", "#/$defs/query"), rec, file, line, fast=gold_query):
            gold.queries[qid] = GoldQuery(qid, line, rec["relevant"], {}, text)
    found = lines.section("relevant_docs")
    for qid in relevant:
        line = found.find(qid)
        if qid not in doc["queries"]:
            problems.add(P.CONSISTENCY, "`relevant_docs` names a question that is not in `queries`", file=file,
                         line=line, id=qid)
    return gold


# ---------------------------------------------------------------- BEIR


def beir_document(rec, file: str, line: int, problems: P.Problems) -> dict | None:
    """A line of a BEIR ``corpus.jsonl`` as the native document (``_id`` → id)."""
    if not isinstance(rec, dict):
        problems.add(P.SCHEMA, "each line must be a JSON object (one document)", file=file, line=line)
        return None
    if not schema_ok(problems, ("beir", "#/$defs/document"), rec, file, line, fast=checks.beir_document):
        return None
    native = {"id": rec["_id"], "text": rec["text"]}
    if rec.get("title"):
        native["title"] = rec["title"]
    return native


def read_beir_queries(real: str, file: str, limits: Limits, problems: P.Problems,
                      hasher=None) -> dict[str, str]:
    """A BEIR ``queries.jsonl``: question id → text."""
    texts: dict[str, str] = {}
    lines: dict[str, int] = {}
    for line, rec in iter_jsonl(real, file, limits, hasher=hasher, bad_line=problems.add_input_error):
        if not isinstance(rec, dict):
            problems.add(P.SCHEMA, "each line must be a JSON object (one question)", file=file, line=line)
        elif schema_ok(problems, ("beir", "#/$defs/query"), rec, file, line):
            qid = rec["_id"]
            if qid in texts:
                problems.add(P.CONSISTENCY, f"duplicate question id (first on line {lines[qid]})", file=file,
                             line=line, id=qid)
                continue
            texts[qid], lines[qid] = rec["text"], line
    return texts
