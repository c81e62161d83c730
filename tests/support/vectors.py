"""Vectors folders for the tests (retriever.vectors): the layout the README
documents, written from texts with made-up (seeded) vectors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

MODEL = "test-model-1"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def random_vectors(n: int, dims: int, seed: int = 0, dtype: str = "<f4") -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dims)).astype(dtype)


def write_rows(folder: Path, kind: str, key: str, items: list[tuple[str, str]], matrix: np.ndarray) -> None:
    """``<kind>.npy`` and ``<kind>.jsonl`` for (id, text) pairs, row i = item i."""
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / f"{kind}.npy", matrix)
    (folder / f"{kind}.jsonl").write_text("".join(json.dumps({key: i, "sha256": sha(t)}) + "\n" for i, t in items))


def write_folder(folder: Path, docs: list[tuple[str, str]], questions: list[tuple[str, str]], dims: int = 8,
                 model: str = MODEL, dtype: str = "<f4", seed: int = 0,
                 doc_matrix: np.ndarray | None = None, question_matrix: np.ndarray | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.json").write_text(json.dumps({"model": model, "dimensions": dims}))
    dm = random_vectors(len(docs), dims, seed, dtype) if doc_matrix is None else doc_matrix
    qm = random_vectors(len(questions), dims, seed + 1, dtype) if question_matrix is None else question_matrix
    write_rows(folder, "documents", "id", docs, dm)
    write_rows(folder, "questions", "query_id", questions, qm)
    return folder
