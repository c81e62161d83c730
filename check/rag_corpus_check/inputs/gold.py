"""The exact gold readers: a YAML or JSON document, JSONL (a question per
line), CSV with a header row, TREC qrels (``qid iter docid grade``). With a
field map (and always for CSV) each question is read through
:mod:`fieldmap`, and a YAML or JSON document may be a plain list of questions."""

from __future__ import annotations

import re

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.schemas import describe_error, error_path, errors, quick_check
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs.checks import SNAPSHOT, gold_query
from rag_corpus_check.inputs.fieldmap import Reading, question
from rag_corpus_check.inputs.foreign import mapped
from rag_corpus_check.inputs.records import Gold, GoldQuery
from rag_corpus_check.inputs.validity import (
    other_space_note,
    record_id,
    schema_ok,
    trec_fields,
    trec_id_problem,
)
from rag_corpus_check.safe_io import (
    Limits,
    iter_csv,
    iter_jsonl,
    iter_text_lines,
    json_keys,
    line_of,
    load_json_document,
    load_yaml,
    read_bytes,
)

BEIR_HEADER = ["query-id", "corpus-id", "score"]


MAPPABLE = ("jsonl", "yaml", "json", "csv")  # the formats a field map reads


def read_gold(real: str, file: str, fmt: str, limits: Limits, problems: P.Problems, hasher=None,
              grade_map: dict[int, int] | None = None, reading: Reading | None = None) -> Gold:
    """``grade_map`` (`relevance.map`) turns each grade as written into the
    grade used, before any rule sees it. ``reading``: the field map the
    questions are read through (:mod:`fieldmap`; CSV always has one)."""
    gold = Gold(file=file, format=fmt)
    grade_map = grade_map or {}
    if fmt == "csv":
        reading = reading or Reading()
        reading = Reading(reading.fields, reading.list_grade, cells=True)
    if reading is not None:
        gold.labels_field = reading.fields.name("relevant")
        _read_mapped(real, file, fmt, limits, problems, gold, hasher, grade_map, reading)
    elif fmt in ("qrels", "beir"):
        _read_qrels(real, file, limits, problems, gold, hasher, grade_map, beir=fmt == "beir")
    elif fmt == "jsonl":
        _read_jsonl(real, file, limits, problems, gold, hasher, grade_map)
    else:
        _read_document(real, file, fmt, limits, problems, gold, hasher, grade_map)
    return gold


def _read_mapped(real, file, fmt, limits, problems, gold, hasher, grade_map, reading: Reading) -> None:
    """Questions in the team's shape, one record at a time through the field map."""
    for line, rec in _records(real, file, fmt, limits, problems, gold, hasher, reading):
        found = question(rec, reading, file, line, problems)
        if found is not None:
            native, label_lines = found
            _add_query(gold, _mapped(native, grade_map), line, label_lines, file, problems)


def _records(real, file, fmt, limits, problems, gold, hasher, reading: Reading):
    """``(line, record)`` of each question of a file read through a field map."""
    if fmt == "csv":
        yield from iter_csv(real, file, limits, hasher)
        return
    if fmt == "jsonl":
        yield from iter_jsonl(real, file, limits, hasher=hasher, bad_line=problems.add_input_error)
        return
    doc, text = _parse_mapped(real, file, fmt, limits, hasher)
    records = doc.get("queries") if isinstance(doc, dict) else doc
    if not isinstance(records, list):
        problems.add(P.SCHEMA, "a gold document read through a field map is a list of questions (or a mapping "
                     "with a `queries:` list)", file=file, line=1)
        return
    if isinstance(doc, dict) and "snapshot" in doc:
        _document_snapshot(gold, doc, file, problems)
    lines = _record_lines(records, text, reading) if text is not None else None
    for i, rec in enumerate(records):
        yield (line_of(records, [i]) if text is None else _safe_index(lines, i)), rec


def _document_snapshot(gold: Gold, doc: dict, file: str, problems: P.Problems) -> None:
    """The `snapshot:` of a gold document read through a field map, by the native rule."""
    line = line_of(doc, ["snapshot"])
    if SNAPSHOT.ok(doc["snapshot"]):
        gold.snapshot, gold.snapshot_line = doc["snapshot"], line
        return
    first = errors("gold", {"queries": [], "snapshot": doc["snapshot"]})[:1]  # the type's, when that is wrong
    for err in first:
        problems.add(P.SCHEMA, describe_error(err), file=file, line=line)


def _parse_mapped(real, file, fmt, limits, hasher):
    """A YAML or JSON document, and for JSON its text (YAML keeps lines itself)."""
    if fmt == "yaml":
        return load_yaml(read_bytes(real, file, limits.max_file_bytes, hasher), file, limits), None
    return load_json_document(real, file, limits, hasher)


def _record_lines(records: list, text: str, reading: Reading) -> list[int] | None:
    """The line of each question of a JSON document: the n-th occurrence of
    a field every question has (its id, text or labels field, as written)."""
    names = [reading.fields.name(f) for f in ("query_id", "query", "relevant")]
    for name in names:
        if all(isinstance(r, dict) and name in r for r in records):
            return [line for key, line, _end in json_keys(text) if key == name] or None
    return None


def _mapped(rec, grade_map: dict[int, int]):
    """A question's grades mapped in place (a YAML mapping keeps its lines)."""
    rel = rec.get("relevant") if grade_map and isinstance(rec, dict) else None
    if isinstance(rel, dict):
        rel.update(mapped(rel, grade_map))
    return rec


def _read_jsonl(real, file, limits, problems, gold, hasher, grade_map) -> None:
    for line, rec in iter_jsonl(real, file, limits, hasher=hasher):
        rec = _mapped(rec, grade_map)
        if not isinstance(rec, dict):
            problems.add(P.SCHEMA, "each line must be a JSON object (one question)", file=file, line=line)
        elif _unfilled(rec, file, lambda doc_id, line=line: line, problems):
            continue
        elif schema_ok(problems, ("gold", "#/$defs/query"), rec, file, line, fast=gold_query):
            # Every label of a JSONL question is on its line: no label lines.
            _add_query(gold, rec, line, {}, file, problems)


def _read_document(real, file, fmt, limits, problems, gold, hasher, grade_map) -> None:
    doc, query_lines = _parse_document(real, file, fmt, limits, hasher)
    if not isinstance(doc, dict):
        problems.add(P.SCHEMA, "gold must be a mapping with a `queries:` list", file=file, line=1)
        return
    _map_in_place(doc.get("queries"), grade_map)
    unfilled = _unfilled_questions(doc, file, problems)
    bad = _document_problems(doc, query_lines, file, problems, unfilled)
    if bad is None:
        return
    bad |= unfilled
    gold.snapshot = doc.get("snapshot")
    gold.snapshot_line = line_of(doc, ["snapshot"]) if "snapshot" in doc else None
    for i, q in enumerate(doc.get("queries", [])):
        if i not in bad:
            _add_document_query(gold, doc, i, q, query_lines, problems)


def _add_document_query(gold: Gold, doc, i: int, q: dict, query_lines, problems: P.Problems) -> None:
    """Question ``i`` of a valid YAML or JSON document, with its lines."""
    qline = line_of(doc, ["queries", i]) or _safe_index(query_lines, i)
    label_lines = {d: (line_of(doc, ["queries", i, "relevant", d]) or qline) for d in q["relevant"]}
    _add_query(gold, q, qline, label_lines, gold.file, problems)


def _parse_document(real, file, fmt, limits, hasher):
    """The document, and for JSON the line of each question (YAML keeps lines itself)."""
    if fmt == "yaml":
        return load_yaml(read_bytes(real, file, limits.max_file_bytes, hasher), file, limits), None
    doc, text = load_json_document(real, file, limits, hasher)
    return doc, _json_query_lines(text)


def _map_in_place(queries, grade_map: dict[int, int]) -> None:
    """A document's grades mapped where they are (YAML keeps their lines)."""
    if grade_map and isinstance(queries, list):
        for q in queries:
            _mapped(q, grade_map)


def _unfilled_questions(doc: dict, file: str, problems: P.Problems) -> set[int]:
    """The indices of the questions with a grade left empty (reported here)."""
    queries = doc.get("queries")
    if not isinstance(queries, list):
        return set()
    return {i for i, q in enumerate(queries)
            if _unfilled(q, file, lambda doc_id, i=i: line_of(doc, ["queries", i, "relevant", doc_id]), problems)}


def _unfilled(rec, file: str, line_of_label, problems: P.Problems) -> bool:
    """Labels whose grade is empty (`null`: a worksheet of `rag-corpus-check
    pool` not filled in), each reported at its line; True when there are."""
    relevant = rec.get("relevant") if isinstance(rec, dict) else None
    if not isinstance(relevant, dict) or None not in relevant.values():
        return False
    empty = [d for d, g in relevant.items() if g is None]
    qid = safe_text(record_id(rec), 60)
    for doc_id in empty:
        problems.add(P.SCHEMA, f"the grade of this document for question `{qid}` is not filled in (`null`) — "
                     "write its grade (0 = judged, not relevant; up to relevance.max_grade), or delete the line "
                     "to leave it unjudged", file=file, line=line_of_label(doc_id), id=doc_id)
    return bool(empty)


def _document_problems(doc: dict, query_lines, file: str, problems: P.Problems,
                       reported: set[int]) -> set[int] | None:
    """The schema problems of a gold document: the indices of the invalid
    questions, or None when the document itself (not one question) is
    invalid. Questions in ``reported`` have been reported already."""
    if quickly_valid(doc):
        return set()
    bad: set[int] = set()
    for index, err in _document_errors(doc, file, problems, reported):
        if err is None:  # past the errors listed: counted, not described
            problems.add(P.SCHEMA, "invalid question (not described: the file has more problems than are listed)",
                         file=file, line=line_of(doc, ["queries", index]) or _safe_index(query_lines, index))
            bad.add(index)
            continue
        path = error_path(err)
        line = line_of(doc, path) or _safe_index(query_lines, index)
        problems.add(P.SCHEMA, describe_error(err), file=file, line=line,
                     id=record_id(doc["queries"][index]) if index is not None else None)
        if index is None:
            return None
        bad.add(index)
    return bad


def _document_errors(doc: dict, file: str, problems: P.Problems, reported: set[int]):
    """``(question index or None, error)`` of a gold document, the document's
    own first, then each question's (jsonschema on one question at a time,
    each error's path from the document); past the errors ``problems``
    lists for the file, ``(index, None)`` for an invalid question, decided
    without jsonschema where its quick check can (1 MB of invalid YAML
    questions took 10 CPU-s in jsonschema)."""
    queries = doc.get("queries")
    if not isinstance(queries, list):
        yield from ((_question_index(error_path(e)), e) for e in errors("gold", doc))
        return
    shell = {k: v for k, v in doc.items() if k != "queries"}
    shell["queries"] = []
    for err in errors("gold", shell):
        yield None, err
    for i, q in enumerate(queries):
        if i not in reported:
            yield from _question_errors(i, q, file, problems)


def _question_errors(i: int, q, file: str, problems: P.Problems):
    """:func:`_document_errors` of question ``i``."""
    plain = _plain(q)
    if gold_query(plain):
        return
    verdict = quick_check("gold", plain, "#/$defs/query") if problems.full(file) else None
    if verdict is False:
        yield i, None
    elif verdict is None:
        for err in errors("gold", q, "#/$defs/query"):
            err.path.extendleft((i, "queries"))  # as the whole document's validation would name it
            yield i, err


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
    if isinstance(q.get("tags"), list):
        q["tags"] = list(q["tags"])
    return q


def _safe_index(seq, i):
    return seq[i] if seq and isinstance(i, int) and 0 <= i < len(seq) else None


def _json_query_lines(text: str) -> list[int] | None:
    # JSON has no line information after parsing; the n-th `"query_id"` key in
    # the text belongs to the n-th question in the usual layout. One pass
    # (counting from the start per key was quadratic: 4 MiB took 103 CPU-s).
    lines = [line for key, line, _end in json_keys(text) if key == "query_id"]
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
                                  rec.get("snapshot"), tuple(rec.get("tags", ())), rec.get("answerable"))


_GRADE = re.compile(r"-?[0-9]{1,6}")


def _read_qrels(real, file, limits, problems, gold, hasher, grade_map, beir: bool = False) -> None:
    """TREC qrels (``qid iter docid grade``), or a BEIR qrels file (a header
    ``query-id corpus-id score``, then ``qid docid grade``, tab-separated)."""
    for line, text in iter_text_lines(real, file, limits, hasher):
        fields = _qrels_fields(trec_fields(text), beir, file, line, problems, text)
        if fields is None:
            continue
        qid, doc_id, grade_s = fields
        if trec_id_problem(problems, qid, "question id", file, line) or trec_id_problem(
                problems, doc_id, "document id", file, line):
            continue
        grade = _qrels_grade(grade_s, doc_id, file, line, problems, grade_map)
        if grade is not None:
            _qrels_label(gold, qid, doc_id, grade, file, line, problems)


def _qrels_fields(parts: list[str], beir: bool, file: str, line: int, problems: P.Problems,
                  text: str) -> list[str] | None:
    """(qid, docid, grade) of a line; None for BEIR's header or a bad line."""
    if beir and line == 1:
        _beir_header(parts, file, problems)
        return None
    form = _QRELS_FORMS[beir]
    if len(parts) != len(form):
        problems.add(P.PARSE, f"a qrels line needs {len(form)} fields `{' '.join(form)}`, found {len(parts)}"
                     + other_space_note(text), file=file, line=line)
        return None
    return [parts[0], parts[-2], parts[-1]]


_QRELS_FORMS = {False: ["qid", "iter", "docid", "grade"], True: BEIR_HEADER}


def _beir_header(parts: list[str], file: str, problems: P.Problems) -> None:
    if parts != BEIR_HEADER:
        problems.add(P.PARSE, "a BEIR qrels file starts with the header `query-id corpus-id score` "
                     "(BEIR skips its first line)", file=file, line=1)


def _qrels_grade(text: str, doc_id: str, file: str, line: int, problems: P.Problems,
                 grade_map: dict[int, int]) -> int | None:
    if not _GRADE.fullmatch(text):
        problems.add(P.PARSE, "the grade must be an integer", file=file, line=line, id=doc_id)
        return None
    # A grade off the scale (negative ones too: TREC Web's spam grades) is
    # one problem for the whole file in the cross-check, with the setting to add.
    grade = grade_map.get(int(text), int(text))
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
