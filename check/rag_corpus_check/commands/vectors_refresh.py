"""The vectors folder as ``rag-corpus-check embed`` finds it, and rewrites
it: opened (or, with ``--init``, made), its rows planned against the corpus
and the gold set (:mod:`rewrite`), the texts that need a vector embedded by
the team's command (:mod:`embed_run`), the files written anew."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from rag_corpus_check.config.load import Config
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.retrieval.dense import DOCUMENTS, MODEL_FILE, QUESTIONS
from rag_corpus_check.retrieval.dense.embed_run import embed, usable
from rag_corpus_check.retrieval.dense.folder import (
    MAX_DIMENSIONS,
    Place,
    Rows,
    Vectors,
    read_vectors,
)
from rag_corpus_check.retrieval.dense.rewrite import Table, matrix, plan, write
from rag_corpus_check.safe_io import InputError

KINDS = (DOCUMENTS, QUESTIONS)
DTYPES = {"float32": "<f4", "float16": "<f2"}


@dataclass
class Folder:
    real: str
    model: str
    dims: int
    vectors: Vectors | None  # None: a new folder
    dtypes: dict[str, str]  # kind -> dtype of its .npy
    _digests: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)  # kind -> the texts' sha-256 with a row

    def rows(self, kind: str) -> Rows | None:
        return getattr(self.vectors, kind) if self.vectors is not None else None

    def known(self, kind: str, key: str, digest: str) -> bool:
        """Some row embeds the text of sha-256 ``digest`` (``key``'s, or
        another's with the same text: a section of a moved page keeps its
        vector, :func:`rewrite.plan` copies the row)."""
        if kind not in self._digests:
            rows = self.rows(kind)
            self._digests[kind] = frozenset(rows.hashes) if rows is not None else frozenset()
        return digest in self._digests[kind]


def _error(cfg: Config, message: str) -> InputError:
    return InputError("config", message, file=cfg.path_display)


def open_folder(root: str, cfg: Config, args) -> Folder:
    """The folder of ``retriever.vectors``, read and checked; a new one with ``--init``."""
    assert cfg.vectors is not None and cfg.model is not None
    real = _inside(root, cfg)
    exists = os.path.lexists(os.path.join(real, MODEL_FILE))
    if args.init:
        return _new(real, cfg, args, exists)
    if not exists:
        raise _error(cfg, f"there is no vectors folder at `{safe_text(cfg.vectors, 200)}` (no model.json): make "
                     f"one with --init --model {safe_text(cfg.model, 200)} --dimensions N --command ...")
    vectors = read_vectors(Place(root, cfg.base_dir, cfg.vectors), cfg.model, cfg.limits)
    dtypes = {kind: getattr(vectors, kind).vectors.dtype.str for kind, _ in KINDS}
    return Folder(real, cfg.model, vectors.dimensions, vectors, dtypes)


def _inside(root: str, cfg: Config) -> str:
    assert cfg.vectors is not None
    real, top = os.path.realpath(os.path.join(cfg.base_dir, cfg.vectors)), os.path.realpath(root)
    if os.path.commonpath([real, top]) != top:
        raise _error(cfg, f"`retriever.vectors` ({safe_text(cfg.vectors, 200)}) is outside the repository root")
    return real


def _new(real: str, cfg: Config, args, exists: bool) -> Folder:
    assert cfg.model is not None
    refusals = [
        (exists, f"`{safe_text(cfg.vectors, 200)}` has a model.json already: drop --init to update it"),
        (args.model != cfg.model, f"--init --model must be the config's `retriever.model` ({safe_text(cfg.model, 200)})"),
        (not 1 <= (args.dimensions or 0) <= MAX_DIMENSIONS, f"--init needs --dimensions from 1 to {MAX_DIMENSIONS}"),
        (args.command is None, "--init needs --command: a new folder needs a vector for every text"),
    ]
    for refused, message in refusals:
        if refused:
            raise _error(cfg, message)
    os.makedirs(real, exist_ok=True)
    dtype = DTYPES[args.dtype]
    return Folder(real, cfg.model, args.dimensions, None, {kind: dtype for kind, _ in KINDS})


def plan_tables(folder: Folder, current: dict[str, dict[str, str]], wanted: dict[str, list[str]]) -> list[Table]:
    """Each kind's rows after the rewrite (see :func:`rewrite.plan`)."""
    return [plan(kind, folder.rows(kind[0]), current[kind[0]], wanted[kind[0]]) for kind in KINDS]


def apply(folder: Folder, tables: list[Table], texts: dict[tuple[str, str], str], command: list[str],
          timeout: float) -> int:
    """Embeds the texts the tables need, writes the folder; the number embedded."""
    items = [(t.kind[0], key, texts[(t.kind[0], key)]) for t in tables for key in t.new]
    vectors = embed(command, items, folder.dims, "<f8", os.getcwd(), timeout) if items else None
    at, pairs = 0, []
    for table in tables:
        kind, count = table.kind[0], len(table.new)
        part = _as(vectors[at:at + count] if vectors is not None else np.empty((0, folder.dims)),
                   folder.dtypes[kind], table.new)
        at += count
        rows = folder.rows(kind)
        pairs.append((table, matrix(table, folder.dims, folder.dtypes[kind], rows.vectors if rows else None, part)))
    write(folder.real, folder.model, folder.dims, pairs)
    return len(items)


def _as(values: np.ndarray, dtype: str, ids: list[str]) -> np.ndarray:
    """``values`` in the folder's dtype, still usable (float16 overflows, underflows)."""
    with np.errstate(over="ignore", under="ignore"):
        out = values.astype(dtype)
    usable(out, ids)
    return out
