"""Questions and documents as teams write them, read without conversion: a
field map (`gold: {path, fields}`, `corpus: {path, fields}`) names the
file's field for each native one, and each record becomes the native record,
which the native rules then check (:mod:`inputs.checks`, from the schemas),
so an id, a grade or a text obeys one rule whatever the shape. Every message
names the field as the file writes it. A native field the map does not
rename is read under its native name; the file's other fields are ignored.

A question's labels are a list of ids (each relevant with
`relevance.list_grade`) or a mapping id -> grade; ``answerable: false``
marks it unanswerable by design. Ids written as integers are their decimal
text. A CSV gold file (:func:`safe_io.iter_csv`) is read the same way, with
or without a map: its cells are text, so a list of ids is a JSON array or
ids separated by ``;``, a mapping a JSON object, ``answerable`` one of
true/false/yes/no/1/0, and an empty cell is no value.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from rag_corpus_check.config.load import Fields
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.schemas import describe_error, describe_path, errors
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs.checks import corpus_record, gold_query
from rag_corpus_check.safe_io import InputError, LineDict, line_of, loads_strict

QUESTION = ("query_id", "query", "relevant", "answerable")
PASSED = ("tags", "snapshot")  # a question's fields read under their native names only
DOCUMENT = ("id", "text", "doc_id", "title", "type", "status", "snapshot")
_IDS = ("query_id", "id", "doc_id")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


@dataclass(frozen=True)
class Reading:
    """How a gold file's records become native questions: the field map
    (no renames: the native names), the grade of a listed id, and whether
    every value is text (CSV)."""

    fields: Fields = Fields()
    list_grade: int = 1
    cells: bool = False


class _Bad(Exception):
    """A mapped field that is missing or of the wrong type (the message names it as written)."""


def question_id(text: str) -> str:
    """The id of a question that has none: ``q-`` and the first 12 hex
    digits of the sha-256 of its text (stable when questions are reordered
    or added; a reworded question is another question)."""
    return "q-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def question(rec, reading: Reading, file: str, line: int | None,
             problems: P.Problems) -> tuple[dict, dict[str, int | None]] | None:
    """The native question of ``rec`` and the line of each label (where the
    file keeps lines: YAML), or None with its problems added."""
    if not isinstance(rec, dict):
        problems.add(P.SCHEMA, "each record must be an object (one question)", file=file, line=line)
        return None
    try:
        native = _question(rec, reading, file, line)
    except _Bad as exc:
        problems.add(P.SCHEMA, str(exc), file=file, line=line, id=_own_id(rec, reading))
        return None
    if not _native_ok(native, ("gold", "#/$defs/query"), reading.fields, file, line, problems):
        return None
    return native, _label_lines(rec, reading.fields.name("relevant"), line)


def _question(rec: dict, reading: Reading, file: str, line: int | None) -> dict:
    names = reading.fields
    answerable = _answerable(_value(rec, names.name("answerable"), reading), names.name("answerable"))
    native: dict = {"query_id": _query_id(rec, reading)}
    text = _value(rec, names.name("query"), reading)
    if text is not None:
        native["query"] = text
    native["relevant"] = _relevant(rec, reading, answerable, file, line)
    if answerable is not None:
        native["answerable"] = answerable
    for name in PASSED:
        value = _value(rec, name, reading)
        if value is not None:
            native[name] = _cell_list(value) if reading.cells and name == "tags" else value
    return native


def _value(rec: dict, name: str, reading: Reading):
    """The value of field ``name`` (None: absent, null or an empty cell)."""
    value = rec.get(name)
    if reading.cells and isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def _query_id(rec: dict, reading: Reading) -> object:
    names = reading.fields
    qid = _value(rec, names.name("query_id"), reading)
    if qid is not None:
        return _id(qid)
    if names.renames("query_id"):
        raise _Bad(_missing(names.name("query_id"), "the question's id (`gold.fields.query_id`)"))
    text = _value(rec, names.name("query"), reading)
    if not isinstance(text, str) or not text.strip():
        raise _Bad(f"no `query_id` field and no question text (`{_shown(names.name('query'))}`) to make an id from "
                   "— give the question an id, or map `gold.fields.query_id` to the field that holds it")
    return question_id(text)


def _id(value: object) -> object:
    """An id as the native rules read it: an integer as its decimal text."""
    return str(value) if type(value) is int else value


def _relevant(rec: dict, reading: Reading, answerable: bool | None, file: str, line: int | None) -> object:
    name = reading.fields.name("relevant")
    value = _value(rec, name, reading)
    if value is None:
        if answerable is False:
            return {}
        raise _Bad(_missing(name, "the question's relevant documents: a list of ids or a mapping id → grade; "
                                  f"a question no document answers has `{_shown(reading.fields.name('answerable'))}`"
                                  ": false"))
    if reading.cells and isinstance(value, str):
        value = _cell_labels(value, name, file, line)
    if isinstance(value, list):
        return _listed(value, name, reading.list_grade)
    if isinstance(value, dict):
        return {_id(d): g for d, g in value.items()}
    raise _Bad(f"`{_shown(name)}` must be a list of document ids or a mapping document id → grade "
               f"(found {_kind(value)})")


def _cell_labels(text: str, name: str, file: str, line: int | None) -> object:
    """A CSV cell's labels: a JSON array or object, else ids separated by ``;``."""
    if not text.startswith(("[", "{")):
        return _cell_list(text)
    try:
        return loads_strict(text, file, line)
    except InputError as exc:
        raise _Bad(f"`{_shown(name)}` starts as JSON but is not valid JSON ({exc.message})") from None


def _cell_list(text: str) -> list[str]:
    """A CSV cell's items separated by ``;``."""
    return [part.strip() for part in text.split(";") if part.strip()]


def _listed(ids: list, name: str, grade: int) -> dict:
    """A list of ids as labels, each of grade ``grade``; an id twice is an error."""
    out: dict = {}
    for i, doc_id in enumerate(ids, 1):
        doc_id = _id(doc_id)
        if not isinstance(doc_id, str):
            raise _Bad(f"`{_shown(name)}` item {i}: a document id must be text (found {_kind(doc_id)})")
        if doc_id in out:
            raise _Bad(f"`{_shown(name)}` lists `{safe_text(doc_id, 60)}` twice (items {list(out).index(doc_id) + 1} "
                       f"and {i}); list each document once")
        out[doc_id] = grade
    return out


def _answerable(value: object, name: str) -> bool | None:
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise _Bad(f"`{_shown(name)}` must be true or false (found {_kind(value)})")


def _label_lines(rec, name: str, line: int | None) -> dict[str, int | None]:
    """Each label's line, where the file keeps lines (YAML); else none (the question's)."""
    labels = rec.get(name) if isinstance(rec, LineDict) else None
    if isinstance(labels, list):
        return {str(_id(d)): line_of(rec, [name, i]) or line for i, d in enumerate(labels)}
    if isinstance(labels, dict):
        return {str(_id(d)): line_of(rec, [name, d]) or line for d in labels}
    return {}


def document(fields: Fields, rec, file: str, line: int, problems: P.Problems) -> dict | None:
    """The native document of a corpus line read through ``fields`` (the
    exact corpus reader's ``native``), or None with its problems added."""
    if not isinstance(rec, dict):
        problems.add(P.SCHEMA, "each line must be a JSON object (one document)", file=file, line=line)
        return None
    native = {}
    for field_ in DOCUMENT:
        value = rec.get(fields.name(field_))
        if value is not None:
            native[field_] = _id(value) if field_ in _IDS else value
    missing = [fields.name(f) for f in ("id", "text") if f not in native]
    if missing:
        problems.add(P.SCHEMA, " and ".join(f"`{_shown(m)}`" for m in missing) + " missing: a document needs its id "
                     "and text (`corpus.fields` names the fields that hold them)", file=file, line=line,
                     id=native.get("id") if isinstance(native.get("id"), str) else None)
        return None
    return native if _native_ok(native, ("corpus", ""), fields, file, line, problems) else None


def _native_ok(native: dict, schema: tuple[str, str], fields: Fields, file: str, line: int | None,
               problems: P.Problems) -> bool:
    """The native record valid, or its schema problems added, each naming
    the field as the file writes it."""
    if (corpus_record if schema[0] == "corpus" else gold_query)(native):
        return True
    errs = errors(schema[0], native, schema[1])
    for err in errs:
        path = list(err.absolute_path)
        said = describe_error(err)[len(describe_path(path)):]
        if path and isinstance(path[0], str):
            path[0] = fields.name(path[0])
        own = native.get("query_id", native.get("id"))
        problems.add(P.SCHEMA, describe_path(path) + said, file=file, line=line,
                     id=own if isinstance(own, str) else None)
    return not errs


def _own_id(rec: dict, reading: Reading) -> str | None:
    qid = _id(rec.get(reading.fields.name("query_id")))
    return qid if isinstance(qid, str) else None


def _missing(name: str, what: str) -> str:
    return f"`{_shown(name)}` is missing: {what}"


def _shown(name: str) -> str:
    return safe_text(name, 60)


def _kind(value: object) -> str:
    return {bool: "true/false", int: "a number", float: "a number", str: "text", list: "a list",
            type(None): "null"}.get(type(value), "an object")
