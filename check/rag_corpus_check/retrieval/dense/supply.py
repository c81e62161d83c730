"""Where each vector of a check over a store (:mod:`store`) comes from, in
this order: the **trusted** store (with a base revision the base's, read
from the base commit; without one the config's own), then — only when the
trusted config allows it (``retriever.accept_pr_vectors``) — the pull
request's store (each such text listed, taken on trust), then the trusted
config's endpoint (:mod:`endpoint`: embedded in the job, when the job holds
the key). A text none of them has is an input error that says which and
what to do (:func:`missing_message`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from rag_corpus_check.retrieval.dense.npy import block_rows, row_blocks
from rag_corpus_check.retrieval.dense.store import Store

if TYPE_CHECKING:
    from rag_corpus_check.retrieval.dense.endpoint import Client


@dataclass
class Supply:
    """A check's sources of vectors (see the module's docstring)."""

    with_base: bool  # a base revision was given: the trusted store is the base's, and the PR's is data
    trusted: Store | None = None  # with a base: the base's store (None: the base has none of this model)
    accept_pr: bool = False  # the trusted config takes the PR's vectors of texts the trusted store lacks
    client: Client | None = None  # the trusted config's endpoint, with the key
    no_client: str = ""  # why there is no client, in words (for the missing-vector message)
    key_env: str | None = None  # the trusted config's `endpoint.key_env` (the variable the key belongs in)
    note: str | None = None  # a note for the output (e.g. the base's store was not usable)


@dataclass
class Found:
    """The vectors of one kind's texts, and where each came from."""

    matrix: np.ndarray
    stored: int = 0  # rows found in a trusted store
    embedded: int = 0  # rows whose text was embedded in the job
    from_pr: list[str] = field(default_factory=list)  # ids whose vector is the PR's (taken on trust)
    missing: list[str] = field(default_factory=list)  # ids with no vector anywhere


def gather(ids: list[str], digests: bytes | bytearray, sources: list[Store], got: dict[bytes, np.ndarray],
           dims: int, pr: Store | None) -> Found:
    """Row ``i``: the vector of ``ids[i]``'s text (``digests`` 32 bytes each)
    from the first source that has it: the trusted ``sources``, ``got``
    (embedded in the job), then ``pr``; zeros where none has. Rows are
    copied a segment at a time (one row at a time was 1.5 s at 100k). The
    rows are in the stores' dtype when they share one (float16 halves the
    memory; a vector embedded in the job is rounded as ``embed`` will store
    it), else float32."""
    matrix = np.zeros((len(ids), dims), dtype=common_dtype([*sources, *([pr] if pr else [])], got))
    out = Found(matrix)
    picks: dict[tuple[int, int], tuple[list[int], list[int]]] = {}  # (store, segment) -> (rows here, rows there)
    stores = [*sources, *([pr] if pr is not None else [])]
    raw = bytes(digests)
    for i, key in enumerate(ids):
        d = raw[32 * i:32 * i + 32]
        at = _where(d, sources)
        if at is not None:
            out.stored += 1
        elif d in got:
            matrix[i] = got[d]
            out.embedded += 1
            continue
        elif pr is not None and d in pr.where:
            at = (len(sources), *pr.where[d])
            out.from_pr.append(key)
        else:
            out.missing.append(key)
            continue
        mine, theirs = picks.setdefault(at[:2], ([], []))
        mine.append(i)
        theirs.append(at[2])
    for (store, segment), (mine, theirs) in picks.items():
        _copy_rows(matrix, np.array(mine, dtype=np.int64), stores[store].matrices[segment],
                   np.array(theirs, dtype=np.int64))
    return out


def common_dtype(stores: list[Store], got: dict[bytes, np.ndarray]) -> np.dtype:
    """The stores' common dtype, if every vector embedded in the job fits it; else float32."""
    kinds = {store.dtype.str for store in stores if store.matrices}
    if len(kinds) != 1:
        return np.dtype("<f4")
    dtype = np.dtype(kinds.pop())
    with np.errstate(over="ignore", under="ignore"):
        fits = all(np.isfinite(v.astype(dtype)).all() and v.astype(dtype).any() for v in got.values())
    return dtype if fits else np.dtype("<f4")


def _copy_rows(matrix: np.ndarray, mine: np.ndarray, segment: np.ndarray, theirs: np.ndarray) -> None:
    """``matrix[mine] = segment[theirs]``, the segment read once, block by
    block, into one reused buffer (:func:`npy.row_blocks`): indexing the
    memory-mapped file kept every page read in the process's memory."""
    order = np.argsort(theirs, kind="stable")
    mine, theirs = mine[order], theirs[order]
    for start, rows in row_blocks(segment, block_rows(segment)):
        lo, hi = np.searchsorted(theirs, [start, start + len(rows)])
        if hi > lo:
            matrix[mine[lo:hi]] = rows[theirs[lo:hi] - start]


def _where(d: bytes, sources: list[Store]) -> tuple[int, int, int] | None:
    """(store, segment, row) of the first trusted store holding ``d``."""
    for n, store in enumerate(sources):
        found = store.where.get(d)
        if found is not None:
            return n, found[0], found[1]
    return None


def missing_message(n: int, folder: str, supply: Supply, key_env: str | None) -> str:
    """What to do about ``n`` texts without a vector."""
    ways = [f"run `rag-corpus-check embed --endpoint` where the key is (it adds them to `{folder}`)"]
    if key_env:
        ways.insert(0, f"give this job the key in ${key_env} (a fork's pull request gets no secrets)")
    if supply.with_base:
        ways.append("or set `retriever.accept_pr_vectors: true` in the base's config to take the vectors a "
                    "PR commits (on trust)")
    why = f" ({supply.no_client})" if supply.no_client else ""
    texts = "1 text has" if n == 1 else f"{n} texts have"
    return f"{texts} no vector in the store `{folder}`{why}: {'; '.join(ways)}"
