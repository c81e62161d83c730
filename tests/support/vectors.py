"""Vectors folders for the tests (retriever.vectors): the layout docs/retrieval.md
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


def text_vector(text: str, dims: int) -> np.ndarray:
    """A made-up embedding: a function of the text alone (seeded by its sha-256)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng(seed).standard_normal(dims)


def embed_kb(kb: Path, folder: str = "vectors", model: str = MODEL, dims: int = 16, gold: str = "gold.yaml",
             dtype: str = "<f4") -> Path:
    """Vectors for every corpus record and gold question of ``kb``. A
    question's vector leans towards its relevant documents' (by grade), so
    dense retrieval finds them, as a real model would."""
    import yaml

    rows = [json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines() if line.strip()]
    docs = [(r["id"], r["text"]) for r in rows]
    by_id = {d: text_vector(t, dims) for d, t in docs}
    queries = yaml.safe_load((kb / gold).read_text())["queries"]
    qs = [(q["query_id"], q["query"]) for q in queries]
    qm = [0.3 * text_vector(q["query"], dims) + sum((g + 0.4) * by_id[d] for d, g in (q.get("relevant") or {}).items()
                                                    if d in by_id) for q in queries]
    return write_folder(kb / folder, docs, qs, dims, model, dtype,
                        doc_matrix=np.array([by_id[d] for d, _ in docs], dtype=dtype),
                        question_matrix=np.array(qm, dtype=dtype))


def dense_config(kb: Path, kind: str = "dense", folder: str = "vectors", model: str = MODEL, **extra) -> None:
    """The example's config with a dense (or hybrid) retriever (no Judged@5
    threshold: made-up vectors bring unjudged documents up)."""
    import yaml

    path = kb / ".rag-corpus-check.yml"
    cfg = yaml.safe_load(path.read_text())
    cfg["thresholds"].pop("Judged@5", None)
    cfg["retriever"] = {"type": kind, "vectors": folder, "model": model, "depth": 100, **extra}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
