"""Vectors are PR data only where the text changed: with a base of the same
model, every head row whose text sha-256 the base has a row for must hold
the base's vector, bit for bit (compared as integers, so a flipped sign of
zero or another NaN payload counts too); the other rows are what the PR
supplied (:class:`VectorTrust`)."""

from __future__ import annotations

import numpy as np

from rag_corpus_check.retrieval.dense import VectorTrust
from rag_corpus_check.retrieval.dense.folder import Rows, Vectors
from rag_corpus_check.retrieval.dense.npy import block_rows

_UINT = {2: np.uint16, 4: np.uint32}


def vector_trust(head: Vectors, base: Vectors | None) -> VectorTrust:
    """The head's rows against the base's (None: no vectors of the head's model at the base)."""
    trust = VectorTrust(base_model=base.model if base is not None else None)
    for kind in ("documents", "questions"):
        rows: Rows = getattr(head, kind)
        if base is None:
            trust.supplied[kind], trust.differ[kind] = list(rows.keys), []
        else:
            trust.supplied[kind], trust.differ[kind] = compare_rows(rows, getattr(base, kind))
    return trust


def compare_rows(head: Rows, base: Rows) -> tuple[list[str], list[str]]:
    """(ids of head rows whose text the base has no row for, ids of head
    rows whose text the base has with other bits)."""
    first = _first_rows(base.digests)
    mine = _each(head.digests)
    supplied = [key for key, digest in zip(head.keys, mine, strict=True) if digest not in first]
    pairs = np.array([(i, first[d]) for i, d in enumerate(mine) if d in first], dtype=np.int64)
    return supplied, [head.keys[i] for i in _differing(head.vectors, base.vectors, pairs.reshape(-1, 2))]


def _each(digests: bytes | bytearray) -> list[bytes]:
    """The 32-byte digests of a row table, one per row."""
    raw = bytes(digests)
    return [raw[i:i + 32] for i in range(0, len(raw), 32)]


def _first_rows(digests: bytes | bytearray) -> dict[bytes, int]:
    """Text sha-256 -> its first row."""
    first: dict[bytes, int] = {}
    for i, digest in enumerate(_each(digests)):
        first.setdefault(digest, i)
    return first


def _differing(head: np.ndarray, base: np.ndarray, pairs: np.ndarray) -> list[int]:
    """The head rows of ``pairs`` (head row, base row) whose bits differ."""
    if head.dtype != base.dtype or head.shape[1] != base.shape[1]:
        return [int(i) for i in pairs[:, 0]]
    uint = _UINT[head.dtype.itemsize]
    out: list[int] = []
    step = block_rows(head)
    for start in range(0, len(pairs), step):
        chunk = pairs[start:start + step]
        h = np.asarray(head[chunk[:, 0]]).view(uint)
        b = np.asarray(base[chunk[:, 1]]).view(uint)
        out += [int(i) for i in chunk[np.flatnonzero((h != b).any(axis=1)), 0]]
    return out
