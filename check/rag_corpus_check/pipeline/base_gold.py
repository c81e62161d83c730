"""The base's vectors folder, the trusted source of the vectors the base's
questions are ranked with in the view judged by the base's gold set (it
comes from the base revision, like the base's rules): a pull request that
rewords a question and supplies a flattering vector for the new wording
cannot lift the base's question, which is ranked with the base's vector
against the head's documents (:mod:`dense.choice`). When the base has no
vectors of the head's model (it ranks with BM25, a run or a command, or with
another model, or its folder cannot be read), :func:`base_vectors` says why.

For a store (:mod:`dense.store`), the sources of the vectors
(:mod:`dense.supply`): :func:`own_supply` without a base, :func:`base_supply`
with one (the base's store trusted, the base's endpoint and its key),
:func:`head_only_supply` when the base's config cannot be used.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rag_corpus_check.config.load import Config
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.retrieval.dense.folder import Place, Vectors, read_vectors
from rag_corpus_check.retrieval.dense.store import Store, StoreInfo, is_store, read_store
from rag_corpus_check.retrieval.dense.supply import Supply
from rag_corpus_check.safe_io import InputError

if TYPE_CHECKING:
    from rag_corpus_check.retrieval.dense.endpoint import Client


def base_vectors(root: str, base_cfg: Config, cfg: Config) -> tuple[Vectors | None, str | None]:
    """The base's vectors folder when it holds the head's model, else (None, why not)."""
    if not base_cfg.uses_vectors or base_cfg.vectors is None or base_cfg.model is None:
        return None, f"the base ranks with {'a committed run' if base_cfg.run is not None else base_cfg.ranker.said}"
    if base_cfg.model != cfg.model:
        return None, f"its vectors are of `{safe_text(base_cfg.model, 100)}`"
    if is_store(root, base_cfg.base_dir, base_cfg.vectors):
        return None, "it keeps a store found by text"
    try:
        return read_vectors(Place(root, base_cfg.base_dir, base_cfg.vectors), base_cfg.model, base_cfg.limits), None
    except InputError as exc:
        return None, f"its vectors cannot be read: {safe_text(exc.message, 200)}"


# A store's sources of vectors (retrieval/dense/supply.py): which store is
# trusted, whether the PR's vectors are taken, and the endpoint with its key.


def client_for(cfg: Config) -> Client | None:
    """A client of ``cfg``'s endpoint (a trusted config's), when the job holds its key."""
    endpoint = cfg.endpoint
    key = os.environ.get(endpoint.key_env) if endpoint is not None else None
    if endpoint is None or not key or cfg.model is None:
        return None
    # The HTTP stack is imported only when an endpoint is configured.
    from rag_corpus_check.retrieval.dense.endpoint import Client

    return Client(endpoint, key, cfg.model, 0)


def _no_client(cfg: Config | None) -> str:
    if cfg is None or cfg.endpoint is None:
        return ("the base's config names no `retriever.endpoint`" if cfg is not None else
                "there is no base config whose `retriever.endpoint` could embed them")
    return f"this job has no key in ${cfg.endpoint.key_env}"


def own_supply(cfg: Config) -> Supply:
    """Without a base revision: the config's own store is trusted, and its endpoint embeds what it lacks."""
    client = client_for(cfg)
    return Supply(with_base=False, client=client, no_client="" if client else _no_client(cfg).replace("base's ", ""),
                  key_env=cfg.endpoint.key_env if cfg.endpoint is not None else None)


def head_only_supply() -> Supply:
    """With a base revision whose config cannot be used (a first
    introduction, --no-require-base): the PR's vectors are taken on trust
    (a warning says so) and nothing is embedded — the key never goes to a
    URL the PR's config names."""
    return Supply(with_base=True, accept_pr=True, no_client=_no_client(None))


def base_supply(root: str, base_cfg: Config, cfg: Config, client: Client | None) -> Supply:
    """With a base: the base's store (``root``: the exported base tree) is
    trusted; the base's config says whether the PR's vectors are taken; the
    base's endpoint embeds what is left (``client``, shared with the base's
    own measurement)."""
    trusted, why = _base_store(root, base_cfg, cfg)
    return Supply(with_base=True, trusted=trusted, accept_pr=base_cfg.accept_pr_vectors, client=client,
                  no_client="" if client else _no_client(base_cfg), note=why,
                  key_env=base_cfg.endpoint.key_env if base_cfg.endpoint is not None else None)


def _base_store(root: str, base_cfg: Config, cfg: Config) -> tuple[Store | None, str | None]:
    if not base_cfg.uses_vectors or base_cfg.vectors is None or base_cfg.model is None or base_cfg.model != cfg.model:
        return None, "the base has no vectors of this model"
    if tuple(base_cfg.embed) != tuple(cfg.embed):
        return None, "the base's vectors embed other fields"
    try:
        if is_store(root, base_cfg.base_dir, base_cfg.vectors):
            return read_store(root, base_cfg.base_dir, base_cfg.vectors, base_cfg.limits), None
        return as_store(read_vectors(Place(root, base_cfg.base_dir, base_cfg.vectors), base_cfg.model,
                                     base_cfg.limits), tuple(base_cfg.embed)), None
    except InputError as exc:
        return None, f"its vectors cannot be read: {safe_text(exc.message, 200)}"


def as_store(vectors: Vectors, embed: tuple[str, ...]) -> Store:
    """A committed-vectors folder seen as a store (its rows by text sha-256)."""
    store = Store(vectors.folder, StoreInfo(vectors.model, vectors.dimensions, embed))
    for rows in (vectors.documents, vectors.questions):
        store.add(rows.file, [rows.digest(i) for i in range(len(rows.keys))], rows.vectors)
    return store
