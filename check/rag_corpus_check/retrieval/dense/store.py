"""A vector store found by content: a ``retriever.vectors`` folder holding
``store.json``.

Layout::

    store.json               {"model": "<name>", "dimensions": n, "embed": ["title", "text"]}
    segments/<name>.npy      rows × n, float32 or float16 (numpy.save)
    segments/<name>.jsonl    one {"sha256": "<hex>"} a row, in row order

A row's ``sha256`` is the sha-256 of the UTF-8 text it embeds: for a corpus
record the values of the ``embed`` fields it has, joined by a newline
(``dense.embedded_text``); for a question its text. Vectors are looked up by
that hash only, never by a record's id, so a moved, renamed or duplicated
text finds its vector. A segment's name is the first 16 hex digits of the
sha-256 of its two files' bytes (:func:`write_segment`): segments are only
ever added (two branches that add different texts add different files, and
git merges them without a conflict) or, on the trusted side, compacted into
one (:func:`compact`). A text in several segments takes the first one's
vector, by segment name.

A hostile store is bounded input like every file: at most
:data:`MAX_SEGMENTS` segments, their files at most ``limits.max_file_bytes``
together, every ``.npy`` header checked before numpy reads it (:mod:`npy`),
the store's dimensions, no NaN, infinite or all-zero row. Every failure is
an :class:`InputError` naming the file (and line).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.retrieval.dense import EMBED_FIELDS, MAX_SEGMENTS, SEGMENTS, STORE_FILE
from rag_corpus_check.retrieval.dense.folder import MAX_DIMENSIONS
from rag_corpus_check.retrieval.dense.npy import bad_row, load
from rag_corpus_check.safe_io import (
    InputError,
    Limits,
    Sha256,
    iter_jsonl,
    load_json_document,
    open_regular,
    resolve_input,
    sha256_file,
)

_NAME = re.compile(r"[0-9a-f]{16}\.(?:jsonl|npy)\Z")
_HEX = re.compile(r"[0-9a-f]{64}\Z")


def digest(text: str) -> bytes:
    """The key of a text's vector: the sha-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def is_store(root: str, base_dir: str, folder: str) -> bool:
    """Whether the folder holds ``store.json`` (else it is the committed-vectors
    layout): any file of that name, a symlink too, so that reading it
    (:func:`read_store`) names what is wrong with it."""
    return os.path.lexists(os.path.join(base_dir, *folder.split("/"), STORE_FILE))


@dataclass(frozen=True)
class StoreInfo:
    model: str
    dimensions: int
    embed: tuple[str, ...]

    def to_json(self) -> dict:
        return {"model": self.model, "dimensions": self.dimensions, "embed": list(self.embed)}


@dataclass
class Store:
    """The vectors of a store, by text sha-256."""

    folder: str  # as the config names it
    info: StoreInfo
    where: dict[bytes, tuple[int, int]] = field(default_factory=dict)  # sha-256 -> (segment, row)
    matrices: list[np.ndarray] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # the segments' names
    digests: dict[str, str] = field(default_factory=dict)  # file as shown -> its sha-256
    size: int = 0  # bytes on disk

    def __contains__(self, key: bytes) -> bool:
        return key in self.where

    def __len__(self) -> int:
        return len(self.where)

    @property
    def dtype(self) -> np.dtype:
        """The segments' dtype when they share one (float16 or float32), else float32."""
        kinds = {m.dtype.str for m in self.matrices}
        return np.dtype(kinds.pop()) if len(kinds) == 1 else np.dtype("<f4")

    def vector(self, key: bytes) -> np.ndarray:
        segment, row = self.where[key]
        return np.asarray(self.matrices[segment][row])

    def add(self, name: str, keys: list[bytes], matrix: np.ndarray) -> None:
        index = len(self.matrices)
        self.matrices.append(matrix)
        self.names.append(name)
        for row, key in enumerate(keys):
            self.where.setdefault(key, (index, row))


def _shown(folder: str, *parts: str) -> str:
    return "/".join([folder.rstrip("/"), *parts])


def read_store(root: str, base_dir: str, folder: str, limits: Limits) -> Store:
    """The store at ``folder`` (relative to ``base_dir``), every file checked."""
    real, shown = resolve_input(root, base_dir, _shown(folder, STORE_FILE), "retriever.vectors")
    hasher = Sha256()
    doc, _ = load_json_document(real, shown, limits, hasher)
    store = Store(folder, _info(doc, shown))
    store.digests[shown] = hasher.hexdigest()
    names = _segment_names(os.path.join(os.path.dirname(real), SEGMENTS), _shown(folder, SEGMENTS))
    for name in names:
        _read_segment(root, base_dir, store, name, limits)
    return store


def _info(doc, shown: str) -> StoreInfo:
    keys = {"model", "dimensions", "embed"}
    if not (isinstance(doc, dict) and set(doc) == keys and isinstance(doc["model"], str) and doc["model"]):
        raise InputError("schema", 'must be {"model": "<name and version>", "dimensions": <int>, "embed": '
                         '["title", "text"]}', file=shown, line=1)
    dims, embed = doc["dimensions"], doc["embed"]
    if type(dims) is not int or not 1 <= dims <= MAX_DIMENSIONS:
        raise InputError("schema", f"`dimensions` must be an integer from 1 to {MAX_DIMENSIONS}", file=shown, line=1)
    if not (isinstance(embed, list) and embed and all(f in EMBED_FIELDS for f in embed) and len(set(embed)) == len(embed)):
        raise InputError("schema", f"`embed` must list fields of {', '.join(EMBED_FIELDS)}, each once", file=shown,
                         line=1)
    return StoreInfo(doc["model"], dims, tuple(embed))


def _segment_names(path: str, shown: str) -> list[str]:
    """The segments' names, sorted; every file of ``segments/`` must be one
    of a pair, and the folder no symlink."""
    if not os.path.lexists(path):
        return []
    if os.path.islink(path) or not os.path.isdir(path):
        raise InputError("path", "must be a folder (not a symlink) holding the store's segments", file=shown)
    files: list[str] = []
    with os.scandir(path) as entries:
        for entry in entries:
            if len(files) > 2 * MAX_SEGMENTS:
                raise InputError("limit", f"more than {MAX_SEGMENTS} segments; compact the store with "
                                 "`rag-corpus-check embed --compact` on the default branch", file=shown)
            if not _NAME.match(entry.name):
                raise InputError("schema", f"`{safe_text(entry.name, 80)}` is no segment file (`<16 hex "
                                 "digits>.npy` and `.jsonl`, as `rag-corpus-check embed` writes them)", file=shown)
            files.append(entry.name)
    stems = sorted({name.split(".")[0] for name in files})
    for stem in stems:
        for ext in ("jsonl", "npy"):
            if f"{stem}.{ext}" not in files:
                raise InputError("consistency", f"segment {stem} has no .{ext} file; a segment is a pair",
                                 file=f"{shown}/{stem}.jsonl")
    return stems


def _read_segment(root: str, base_dir: str, store: Store, name: str, limits: Limits) -> None:
    folder = store.folder
    index_real, index = resolve_input(root, base_dir, _shown(folder, SEGMENTS, f"{name}.jsonl"), "retriever.vectors")
    npy_real, npy = resolve_input(root, base_dir, _shown(folder, SEGMENTS, f"{name}.npy"), "retriever.vectors")
    left = limits.max_file_bytes - store.size
    for real, shown in ((index_real, index), (npy_real, npy)):
        store.size += os.path.getsize(real)
        if store.size > limits.max_file_bytes:
            raise InputError("limit", f"the store's segments are over `limits.max_file_bytes` "
                             f"({limits.max_file_bytes}) together; compact it (`rag-corpus-check embed --compact`) "
                             "or raise the limit", file=shown)
    keys, store.digests[index] = _keys(index_real, index, limits)
    matrix = load(npy_real, npy, left)
    store.digests[npy] = sha256_file(npy_real, npy, left)
    rows, cols = matrix.shape
    if rows != len(keys):
        raise InputError("consistency", f"{rows} rows, but {index} has {len(keys)} lines; the two must describe "
                         "the same rows in the same order", file=npy)
    if cols != store.info.dimensions:
        raise InputError("consistency", f"rows have {cols} dimensions, but store.json says "
                         f"{store.info.dimensions}", file=npy)
    bad = bad_row(matrix)
    if bad is not None:
        raise InputError("consistency", f"row {bad[0]} has {bad[1]}, which is no vector to compare by cosine; "
                         "remove the segment and embed its texts again", file=index, line=bad[0] + 1)
    store.add(name, keys, matrix)


_LINE = re.compile(rb'(?:\{"sha256": "[0-9a-f]{64}"\}\n)*\Z')
_LINE_BYTES = len(b'{"sha256": ""}\n') + 64


def _keys(real: str, shown: str, limits: Limits) -> tuple[list[bytes], str]:
    """The rows' text sha-256 and the file's own: in one pass when every line
    is as :func:`write_segment` writes it, else line by line, each problem worded."""
    with open_regular(real, shown, limits.max_file_bytes) as f:
        data = f.read(limits.max_file_bytes + 1)
    if len(data) <= limits.max_file_bytes and _LINE.match(data):
        hexes = b"".join(data[i + 12:i + 76] for i in range(0, len(data), _LINE_BYTES))
        raw = bytes.fromhex(hexes.decode("ascii"))
        return [raw[i:i + 32] for i in range(0, len(raw), 32)], hashlib.sha256(data).hexdigest()
    hasher = Sha256()
    return _slow_keys(real, shown, limits, hasher), hasher.hexdigest()


def _slow_keys(real: str, shown: str, limits: Limits, hasher: Sha256) -> list[bytes]:
    keys: list[bytes] = []
    for line, rec in iter_jsonl(real, shown, limits, hasher=hasher):
        if not (isinstance(rec, dict) and set(rec) == {"sha256"} and isinstance(rec["sha256"], str)
                and _HEX.match(rec["sha256"])):
            raise InputError("schema", 'each line must be {"sha256": "<64 lowercase hex digits>"} (the sha-256 of '
                             "the UTF-8 text the row embeds)", file=shown, line=line)
        keys.append(bytes.fromhex(rec["sha256"]))
        if len(keys) != line:
            raise InputError("schema", "a blank line; one line per row, in row order", file=shown, line=line)
    return keys


# The trusted side: writing.


def init_store(folder_path: str, info: StoreInfo) -> None:
    os.makedirs(os.path.join(folder_path, SEGMENTS), exist_ok=True)
    _atomic(folder_path, STORE_FILE, (json.dumps(info.to_json()) + "\n").encode("utf-8"))


def segment_bytes(keys: list[bytes], matrix: np.ndarray) -> tuple[str, bytes, bytes]:
    """A segment's name and its two files' bytes."""
    import io

    index = "".join(json.dumps({"sha256": key.hex()}) + "\n" for key in keys).encode("ascii")
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(matrix, dtype=matrix.dtype.newbyteorder("<")),
                              allow_pickle=False)
    data = buffer.getvalue()
    return hashlib.sha256(index + data).hexdigest()[:16], index, data


def write_segment(folder_path: str, keys: list[bytes], matrix: np.ndarray) -> str:
    """A new segment of ``keys`` (row ``i`` is ``matrix[i]``); its name."""
    name, index, data = segment_bytes(keys, matrix)
    where = os.path.join(folder_path, SEGMENTS)
    os.makedirs(where, exist_ok=True)
    _atomic(where, f"{name}.npy", data)
    _atomic(where, f"{name}.jsonl", index)
    return name


def compact(folder_path: str, store: Store, keep: Iterable[bytes] | None = None) -> tuple[str | None, int]:
    """The store as one segment (of the texts in ``keep``, when given: the
    others' rows are dropped), the old segments removed; (its name, rows dropped)."""
    wanted = sorted(store.where if keep is None else set(keep) & store.where.keys())
    dropped = len(store.where) - len(wanted)
    dtype = np.result_type(*[m.dtype for m in store.matrices]) if store.matrices else np.float32
    matrix = np.empty((len(wanted), store.info.dimensions), dtype=dtype)
    for row, key in enumerate(wanted):
        matrix[row] = store.vector(key)
    name = write_segment(folder_path, wanted, matrix) if wanted else None
    for old in store.names:
        if old != name:
            for ext in ("jsonl", "npy"):
                os.unlink(os.path.join(folder_path, SEGMENTS, f"{old}.{ext}"))
    return name, dropped


def _atomic(folder: str, name: str, data: bytes) -> None:
    import tempfile

    fd, path = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(path, 0o644)
        os.replace(path, os.path.join(folder, name))
    except BaseException:
        if os.path.exists(path):
            os.unlink(path)
        raise
