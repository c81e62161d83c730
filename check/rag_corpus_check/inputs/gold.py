"""The exact gold readers: a YAML or JSON document, JSONL (a question per
line), TREC qrels (``qid iter docid grade``)."""

from __future__ import annotations

import os
import re

from rag_corpus_check import problems as P
from rag_corpus_check.inputs.checks import gold_query
from rag_corpus_check.inputs.records import Gold, GoldQuery
from rag_corpus_check.inputs.validity import record_id, schema_ok, trec_id_problem
from rag_corpus_check.safe_io import (
    Limits,
    iter_jsonl,
    iter_text_lines,
    line_of,
    load_json_document,
    load_yaml,
    read_bytes,
)
from rag_corpus_check.schemas import describe_error, error_path, errors
from rag_corpus_check.text import safe_text

EXTENSIONS = {".yml": "yaml", ".yaml": "yaml", ".json": "json", ".jsonl": "jsonl", ".qrels": "qrels"}


def gold_format(path: str, declared: str) -> str | None:
    return declared if declared != "auto" else EXTENSIONS.get(os.path.splitext(path)[1].lower())


def read_gold(real: str, file: str, fmt: str, limits: Limits, problems: P.Problems, hasher=None) -> Gold:
    gold = Gold(file=file, format=fmt)
    if fmt == "qrels":
        _read_qrels(real, file, limits, problems, gold, hasher)
    elif fmt == "jsonl":
        _read_jsonl(real, file, limits, problems, gold, hasher)
    else:
        _read_document(real, file, fmt, limits, problems, gold, hasher)
    return gold


def _read_jsonl(real, file, limits, problems, gold, hasher) -> None:
    for line, rec in iter_jsonl(real, file, limits, hasher=hasher):
        if not isinstance(rec, dict):
            problems.add(P.SCHEMA, "each line must be a JSON object (one question)", file=file, line=line)
        elif schema_ok(problems, ("gold", "#/$defs/query"), rec, file, line, fast=gold_query):
            # Every label of a JSONL question is on its line: no label lines.
            _add_query(gold, rec, line, {}, file, problems)


def _read_document(real, file, fmt, limits, problems, gold, hasher) -> None:
    doc, query_lines = _parse_document(real, file, fmt, limits, hasher)
    if not isinstance(doc, dict):
        problems.add(P.SCHEMA, "gold must be a mapping with a `queries:` list", file=file, line=1)
        return
    bad = _document_problems(doc, query_lines, file, problems)
    if bad is None:
        return
    gold.snapshot = doc.get("snapshot")
    gold.snapshot_line = line_of(doc, ["snapshot"]) if "snapshot" in doc else None
    for i, q in enumerate(doc.get("queries", [])):
        if i not in bad:
            qline = line_of(doc, ["queries", i]) or _safe_index(query_lines, i)
            label_lines = {d: (line_of(doc, ["queries", i, "relevant", d]) or qline) for d in q["relevant"]}
            _add_query(gold, q, qline, label_lines, file, problems)


def _parse_document(real, file, fmt, limits, hasher):
    """The document, and for JSON the line of each question (YAML keeps lines itself)."""
    if fmt == "yaml":
        return load_yaml(read_bytes(real, file, limits.max_file_bytes, hasher), file, limits), None
    doc, text = load_json_document(real, file, limits, hasher)
    return doc, _json_query_lines(text)


def _document_problems(doc: dict, query_lines, file: str, problems: P.Problems) -> set[int] | None:
    """The schema problems of a gold document: the indices of the invalid
    questions, or None when the document itself (not one question) is invalid."""
    if quickly_valid(doc):
        return set()
    bad: set[int] = set()
    for err in errors("gold", doc):
        path = error_path(err)
        index = _question_index(path)
        line = line_of(doc, path) or _safe_index(query_lines, index)
        problems.add(P.SCHEMA, describe_error(err), file=file, line=line,
                     id=record_id(doc["queries"][index]) if index is not None else None)
        if index is None:
            return None
        bad.add(index)
    return bad


def _question_index(path: list) -> int | None:
    """The question an error path is in, or None for the document itself."""
    return path[1] if len(path) >= 2 and path[0] == "queries" and isinstance(path[1], int) else None


def quickly_valid(doc: dict) -> bool:
    """A whole document proven valid without jsonschema, which takes ~12 s
    for 70,000 questions (measured): every question passes the per-record
    check and the rest of the document, with no questions, its schema."""
    queries = doc.get("queries")
    if not isinstance(queries, list):
        return False
    shell = {k: v for k, v in doc.items() if k != "queries"}
    shell["queries"] = []
    return not errors("gold", shell) and all(gold_query(_plain(q)) for q in queries)


def _plain(q):
    """The YAML loader's LineDict as the plain dict the per-record check wants."""
    if type(q) is dict or not isinstance(q, dict):
        return q
    q = dict(q)
    for key in ("relevant", "metadata"):
        if isinstance(q.get(key), dict):
            q[key] = dict(q[key])
    return q


def _safe_index(seq, i):
    return seq[i] if seq and isinstance(i, int) and 0 <= i < len(seq) else None


def _json_query_lines(text: str) -> list[int] | None:
    # JSON has no line information after parsing; the n-th `"query_id"` key in
    # the text belongs to the n-th question in the usual layout.
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r'"query_id"\s*:', text)]
    return lines or None


def _add_query(gold: Gold, rec: dict, line, label_lines, file: str, problems: P.Problems) -> None:
    qid = rec["query_id"]
    if qid in gold.queries:
        problems.add(
            P.CONSISTENCY,
            f"duplicate question id (first on line {gold.queries[qid].line}); give each question its own id",
            file=file, line=line, id=qid,
        )
        return
    gold.queries[qid] = GoldQuery(qid, line, dict(rec["relevant"]), label_lines, rec.get("query"),
                                  rec.get("snapshot"))


_GRADE = re.compile(r"-?[0-9]{1,6}")


def _read_qrels(real, file, limits, problems, gold, hasher=None) -> None:
    for line, text in iter_text_lines(real, file, limits, hasher):
        parts = text.split()
        if len(parts) != 4:
            problems.add(P.PARSE, f"a qrels line needs 4 fields `qid iter docid grade`, found {len(parts)}",
                         file=file, line=line)
            continue
        qid, _iter, doc_id, grade_s = parts
        if trec_id_problem(problems, qid, "question id", file, line) or trec_id_problem(
                problems, doc_id, "document id", file, line):
            continue
        grade = _qrels_grade(grade_s, doc_id, file, line, problems)
        if grade is not None:
            _qrels_label(gold, qid, doc_id, grade, file, line, problems)


def _qrels_grade(text: str, doc_id: str, file: str, line: int, problems: P.Problems) -> int | None:
    if not _GRADE.fullmatch(text):
        problems.add(P.PARSE, "the grade must be an integer", file=file, line=line, id=doc_id)
        return None
    grade = int(text)
    if grade < 0:
        problems.add(P.SCHEMA, "negative grades are invalid; use 0 for judged not relevant",
                     file=file, line=line, id=doc_id)
        return None
    return grade


def _qrels_label(gold: Gold, qid: str, doc_id: str, grade: int, file: str, line: int, problems: P.Problems) -> None:
    q = gold.queries.get(qid)
    if q is None:
        q = gold.queries[qid] = GoldQuery(qid, line, {}, {})
    if doc_id in q.relevant:
        problems.add(
            P.CONSISTENCY,
            f"document judged twice for question `{safe_text(qid, 60)}` (first on line {q.label_lines[doc_id]})",
            file=file, line=line, id=doc_id,
        )
        return
    q.relevant[doc_id] = grade
    q.label_lines[doc_id] = line
