"""A vectors folder's rows planned and written anew, for ``rag-corpus-check embed``.

:func:`plan` decides each row: an existing row whose id still has that text
is kept (its vector copied bit for bit), one whose text changed gets a new
vector in its place, an id with no row gets a new row at the end, and a row
whose id is gone (or whose text changed and is not ranked) is dropped.
:func:`write` writes the five files (``model.json`` and the two pairs) to
temporary files in the folder, fsyncs them, then moves each over the old
with :func:`os.replace` (each file is replaced whole; a crash between two
replaces leaves a folder the check refuses as inconsistent, never a torn
file).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rag_corpus_check.retrieval.dense import MODEL_FILE
from rag_corpus_check.retrieval.dense.folder import Rows

NEW = -1


@dataclass
class Table:
    """One kind's rows after the rewrite: id, text sha-256, and the old row
    to copy (or :data:`NEW`: the next new vector)."""

    kind: tuple[str, str]  # (kind, id key): DOCUMENTS or QUESTIONS
    ids: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    old: list[int] = field(default_factory=list)
    dropped: int = 0
    stale: set[str] = field(default_factory=set)  # ids whose row embeds another text

    def add(self, key: str, digest: str, old: int) -> None:
        self.ids.append(key)
        self.hashes.append(digest)
        self.old.append(old)

    @property
    def new(self) -> list[str]:
        """The ids that need a new vector, in row order."""
        return [key for key, old in zip(self.ids, self.old, strict=True) if old == NEW]


def plan(kind: tuple[str, str], rows: Rows | None, current: dict[str, str], wanted: list[str]) -> Table:
    """``current``: every id there is (id → sha-256 of its text);
    ``wanted``: the ids that must have a current row, in file order. A
    vector is the text's: an id whose text another row embeds (a section
    of a moved page) gets a copy of that row, not a new vector."""
    table = Table(kind)
    need = set(wanted)
    placed: set[str] = set()
    pairs = list(zip(rows.keys, rows.hashes, strict=True)) if rows else []
    by_text = {digest: row for row, (_, digest) in reversed(list(enumerate(pairs)))}
    for row, (key, digest) in enumerate(pairs):
        if current.get(key) == digest:
            table.add(key, digest, row)
        elif key in need:
            table.add(key, current[key], by_text.get(current[key], NEW))
            if current[key] not in by_text:
                table.stale.add(key)
        else:
            table.dropped += 1
            continue
        placed.add(key)
    for key in wanted:
        if key not in placed:
            table.add(key, current[key], by_text.get(current[key], NEW))
    return table


def matrix(table: Table, dims: int, dtype: str, old: np.ndarray | None, new: np.ndarray) -> np.ndarray:
    """The rows of ``table``: old ones copied, new ones in order."""
    out = np.empty((len(table.ids), dims), dtype=dtype)
    rows = np.array(table.old, dtype=np.int64)
    kept = rows != NEW
    if kept.any():
        assert old is not None
        out[kept] = old[rows[kept]]
    out[~kept] = new
    return out


def write(folder: str, model: str, dims: int, tables: list[tuple[Table, np.ndarray]]) -> None:
    """The folder's files, each replaced atomically (see the module's docstring)."""
    files: dict[str, Callable] = {MODEL_FILE: _text(json.dumps({"model": model, "dimensions": dims}) + "\n")}
    for table, values in tables:
        name, key = table.kind
        files[f"{name}.jsonl"] = _text("".join(
            json.dumps({key: k, "sha256": h}, ensure_ascii=False) + "\n"
            for k, h in zip(table.ids, table.hashes, strict=True)))
        files[f"{name}.npy"] = _array(values)
    temps: dict[str, str] = {}
    try:
        for name, fill in files.items():
            temps[name] = _temporary(folder, name, fill)
        for name in list(temps):
            os.replace(temps.pop(name), os.path.join(folder, name))
    finally:
        for path in temps.values():
            os.unlink(path)
    _sync_dir(folder)


def _text(text: str) -> Callable:
    return lambda f: f.write(text.encode("utf-8"))


def _array(values: np.ndarray) -> Callable:
    contiguous = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<"))
    return lambda f: np.lib.format.write_array(f, contiguous, allow_pickle=False)


def _temporary(folder: str, name: str, fill: Callable) -> str:
    fd, path = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(path, 0o644)
    except BaseException:
        os.unlink(path)
        raise
    return path


def _sync_dir(folder: str) -> None:
    if os.name == "posix":
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

