"""A vectors folder (``retriever.vectors``), read and checked.

Layout: ``model.json`` (``{"model": "<name and version>", "dimensions": n}``,
equal to the config's ``retriever.model``); ``documents.npy`` (rows × n,
float32 or float16) with ``documents.jsonl`` (one ``{"id", "sha256"}`` per
row, in row order); ``questions.npy`` with ``questions.jsonl``
(``{"query_id", "sha256"}``). ``sha256`` is the hex sha-256 of the UTF-8
bytes of the text the row embeds. Every failure is an :class:`InputError`
naming the file and line (for a row: the ``.jsonl`` line and the id).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from rag_corpus_check.core.text import safe_id, safe_text
from rag_corpus_check.retrieval.dense import DOCUMENTS, MODEL_FILE, QUESTIONS
from rag_corpus_check.retrieval.dense.index import read_index, valid_id
from rag_corpus_check.retrieval.dense.npy import bad_row, load
from rag_corpus_check.safe_io import (
    InputError,
    Limits,
    Sha256,
    iter_jsonl,
    load_json_document,
    resolve_input,
    restart,
    sha256_file,
)
from rag_corpus_check.safe_io.scanner import Slow

MAX_DIMENSIONS = 65536
_HEX = re.compile(r"[0-9a-f]{64}\Z")


class Hashes(Sequence[str]):
    """The rows' sha-256 as hex text, read from 32 bytes a row (100,000
    hex strings held 11 MB; their bytes, 3.2 MB)."""

    def __init__(self, digests: bytes | bytearray):
        self.digests = digests

    def __len__(self) -> int:
        return len(self.digests) // 32

    def __getitem__(self, row):  # one row at a time (no slices)
        if not 0 <= row < len(self):
            raise IndexError(row)
        return self.digests[32 * row:32 * row + 32].hex()

    def __iter__(self) -> Iterator[str]:
        return map(self.__getitem__, range(len(self)))


@dataclass
class Rows:
    """One ``.npy`` and its ``.jsonl``: row ``i`` embeds the text of
    ``keys[i]`` whose sha-256 is ``digest(i)`` (``hashes[i]`` as hex), on
    line ``line(i)`` of the ``.jsonl``."""

    file: str  # the .npy, as shown
    index: str  # the .jsonl, as shown
    keys: list[str] = field(default_factory=list)
    digests: bytes | bytearray = field(default_factory=bytearray)  # 32 bytes a row
    lines: array | None = None  # each row's line; None: row i is on line i + 1 (no blank line)
    matrix: np.ndarray | None = None
    _row_of: dict[str, int] | None = None

    @property
    def row_of(self) -> dict[str, int]:
        """Id -> row; made when first asked (a check whose corpus lists the
        rows' ids in row order never asks: 70 MB at 1M rows)."""
        if self._row_of is None:
            self._row_of = dict(zip(self.keys, range(len(self.keys)), strict=True))
        return self._row_of

    @property
    def vectors(self) -> np.ndarray:
        assert self.matrix is not None
        return self.matrix

    @property
    def hashes(self) -> Hashes:
        return Hashes(self.digests)

    def digest(self, row: int) -> bytes:
        return bytes(self.digests[32 * row:32 * row + 32])

    def line(self, row: int) -> int:
        return row + 1 if self.lines is None else self.lines[row]


@dataclass
class Vectors:
    folder: str
    model: str
    dimensions: int
    documents: Rows
    questions: Rows
    digests: dict[str, str] = field(default_factory=dict)  # file as shown -> sha-256
    from_store: bool = False  # assembled from a store found by text (dense/store.py), not a folder of rows
    supplied: dict[str, list[str]] = field(default_factory=dict)  # a store's: kind -> ids whose vector is the PR's


@dataclass(frozen=True)
class Place:
    """Where a vectors folder is: the repository root, the config's folder
    and the folder as the config names it."""

    root: str
    base_dir: str
    folder: str


def read_vectors(place: Place, model: str, limits: Limits) -> Vectors:
    """The folder, every file checked (see the module's docstring)."""
    digests: dict[str, str] = {}
    dims = _model(_resolve(place, MODEL_FILE), model, limits, digests)
    documents = _rows(place, DOCUMENTS, dims, limits, digests)
    questions = _rows(place, QUESTIONS, dims, limits, digests)
    return Vectors(place.folder, model, dims, documents, questions, digests)


def _resolve(place: Place, name: str) -> tuple[str, str]:
    return resolve_input(place.root, place.base_dir, f"{place.folder.rstrip('/')}/{name}", "retriever.vectors")


def _model(where: tuple[str, str], model: str, limits: Limits, digests: dict[str, str]) -> int:
    real, display = where
    hasher = Sha256()
    doc, _ = load_json_document(real, display, limits, hasher)
    digests[display] = hasher.hexdigest()
    dims = _dimensions(doc, display)
    if doc["model"] != model:
        raise InputError("consistency", f"the vectors were made with `{safe_text(doc['model'], 100)}`, but the "
                         f"config's `retriever.model` is `{safe_text(model, 100)}`; re-embed every text with the "
                         "configured model, or set the model the vectors were made with", file=display, line=1)
    return dims


def _dimensions(doc, display: str) -> int:
    if not (isinstance(doc, dict) and set(doc) == {"model", "dimensions"} and isinstance(doc["model"], str)):
        raise InputError("schema", 'must be {"model": "<name and version>", "dimensions": <int>}', file=display, line=1)
    dims = doc["dimensions"]
    if type(dims) is not int or not 1 <= dims <= MAX_DIMENSIONS:
        raise InputError("schema", f"`dimensions` must be an integer from 1 to {MAX_DIMENSIONS}", file=display, line=1)
    return dims


def _rows(place: Place, kind: tuple[str, str], dims: int, limits: Limits, digests: dict[str, str]) -> Rows:
    name, key = kind
    index_real, index = _resolve(place, f"{name}.jsonl")
    npy_real, npy = _resolve(place, f"{name}.npy")
    rows = Rows(npy, index)
    hasher = Sha256()
    _read_index(rows, key, index_real, limits, hasher)
    digests[index] = hasher.hexdigest()
    rows.matrix = load(npy_real, npy, limits.max_file_bytes)
    digests[npy] = sha256_file(npy_real, npy, limits.max_file_bytes)
    _check_matrix(rows, dims)
    return rows


def _read_index(rows: Rows, key: str, real: str, limits: Limits, hasher: Sha256) -> None:
    """The ``.jsonl``: fast (:mod:`index`) when every line has the usual
    shape, else line by line, each problem worded."""
    mark = limits.tally.mark() if limits.tally is not None else None
    try:
        rows.keys, rows.digests = read_index(real, rows.index, limits, hasher, key)
        return
    except Slow:
        restart(hasher)
        if limits.tally is not None and mark is not None:
            limits.tally.reset(mark)
    rows.lines, rows._row_of = array("q"), {}
    for line, rec in iter_jsonl(real, rows.index, limits, hasher=hasher):
        _add_row(rows, key, rec, line)


def _add_row(rows: Rows, key: str, rec, line: int) -> None:
    if not (isinstance(rec, dict) and set(rec) == {key, "sha256"}):
        raise InputError("schema", f'each line must be {{"{key}": "<id>", "sha256": "<hex>"}} (one per row of '
                         f"{rows.file}, in row order)", file=rows.index, line=line)
    rid, digest = rec[key], rec["sha256"]
    _check_row(rows, key, rid, digest, line)
    assert isinstance(rows.digests, bytearray) and rows.lines is not None
    rows.row_of[rid] = len(rows.keys)
    rows.keys.append(rid)
    rows.digests += bytes.fromhex(digest)
    rows.lines.append(line)


def _check_row(rows: Rows, key: str, rid, digest, line: int) -> None:
    if not valid_id(rid):
        raise InputError("schema", f"`{key}` must be a non-empty id of at most 512 characters without control "
                         "characters", file=rows.index, line=line)
    if not (isinstance(digest, str) and _HEX.match(digest)):
        raise InputError("schema", "`sha256` must be 64 lowercase hex digits (the sha-256 of the UTF-8 text)",
                         file=rows.index, line=line)
    if rid in rows.row_of:
        raise InputError("consistency", f"`{safe_id(rid)}` has a row already (line "
                         f"{rows.line(rows.row_of[rid])}); keep one row per {key}", file=rows.index, line=line)


def _check_matrix(rows: Rows, dims: int) -> None:
    n, cols = rows.vectors.shape
    if n != len(rows.keys):
        raise InputError("consistency", f"{n} rows, but {rows.index} has {len(rows.keys)} lines; the two must "
                         "describe the same rows in the same order", file=rows.file)
    if cols != dims:
        raise InputError("consistency", f"rows have {cols} dimensions, but model.json says {dims}", file=rows.file)
    bad = bad_row(rows.vectors)
    if bad is not None:
        row, why = bad
        raise InputError("consistency", f"row {row} of {rows.file} (`{safe_id(rows.keys[row])}`) has {why}, which is no vector to compare "
                         "by cosine; re-embed this text", file=rows.index, line=rows.line(row))
