"""A store found by text (``retriever.vectors`` holding ``store.json``) as
``rag-corpus-check embed`` keeps it on the trusted side: the texts the
check ranks that the store lacks are embedded — through the config's
``retriever.endpoint`` (``--endpoint``) or the team's command
(``--command``, :mod:`embed_run`'s protocol) — and added as one new
segment; ``--compact`` then rewrites the store as one segment of the texts
still ranked. What it prints is a summary, never a line per text."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from rag_corpus_check.config.load import Config
from rag_corpus_check.core.text import counted, safe_text
from rag_corpus_check.retrieval.dense import SEGMENTS, STORE_FILE
from rag_corpus_check.retrieval.dense.embed_run import embed as run_command
from rag_corpus_check.retrieval.dense.embed_run import usable
from rag_corpus_check.retrieval.dense.endpoint import Client, EndpointError
from rag_corpus_check.retrieval.dense.folder import MAX_DIMENSIONS
from rag_corpus_check.retrieval.dense.store import (
    Store,
    StoreInfo,
    compact,
    init_store,
    read_store,
    write_segment,
)
from rag_corpus_check.safe_io import InputError

DTYPES = {"float32": "<f4", "float16": "<f2"}


@dataclass
class Wanted:
    """The texts the check ranks, by sha-256: each one's text, and how many of each kind."""

    texts: dict[bytes, str] = field(default_factory=dict)
    kinds: dict[bytes, str] = field(default_factory=dict)  # "document" or "question" (the first seen)


def _error(cfg: Config, message: str) -> InputError:
    return InputError("config", message, file=cfg.path_display)


def open_store(root: str, cfg: Config, args) -> tuple[str, Store]:
    """The store (its real folder and contents); a new one with ``--init``."""
    assert cfg.vectors is not None and cfg.model is not None
    real = os.path.realpath(os.path.join(cfg.base_dir, cfg.vectors))
    top = os.path.realpath(root)
    if os.path.commonpath([real, top]) != top:
        raise _error(cfg, f"`retriever.vectors` ({safe_text(cfg.vectors, 200)}) is outside the repository root")
    if args.init:
        if os.path.lexists(os.path.join(real, STORE_FILE)):
            raise _error(cfg, f"`{safe_text(cfg.vectors, 200)}` has a store.json already: drop --init")
        if args.model != cfg.model or not 1 <= (args.dimensions or 0) <= MAX_DIMENSIONS:
            raise _error(cfg, f"--init --store needs --model {safe_text(cfg.model, 200)} (the config's) and "
                         f"--dimensions from 1 to {MAX_DIMENSIONS}")
        init_store(real, StoreInfo(cfg.model, args.dimensions, tuple(cfg.embed)))
    store = read_store(root, cfg.base_dir, cfg.vectors, cfg.limits)
    if store.info.model != cfg.model or store.info.embed != tuple(cfg.embed):
        raise _error(cfg, f"the store holds vectors of `{safe_text(store.info.model, 100)}` embedding "
                     f"{', '.join(store.info.embed)}, but the config says `{safe_text(cfg.model, 100)}` embedding "
                     f"{', '.join(cfg.embed)}: a new model or `embed` needs a new store (--init --store)")
    return real, store


def refresh(real: str, store: Store, cfg: Config, wanted: Wanted, args) -> int:
    """Embed what the store lacks (with --endpoint or --command), compact
    with --compact; prints the summary. The exit code (0, or 1 for a dry run
    that found texts without a vector)."""
    todo = {d: t for d, t in wanted.texts.items() if d not in store}
    docs = sum(1 for d in todo if wanted.kinds[d] == "document")
    print(f"rag-corpus-check embed: the store `{safe_text(cfg.vectors, 200)}` holds {counted(len(store), 'vector')} "
          f"in {counted(len(store.names), 'segment')}; {counted(len(wanted.texts), 'text')} ranked, "
          f"{len(todo)} without a vector ({docs} documents, {len(todo) - docs} questions)")
    if todo and args.endpoint:
        _add(real, store, todo, _by_endpoint(cfg, todo, store.info.dimensions), DTYPES[args.dtype])
    elif todo and args.command is not None:
        items = [(wanted.kinds[d] + "s", d.hex()[:16], t) for d, t in todo.items()]
        _add(real, store, todo, run_command(args.command, items, store.info.dimensions, "<f4", os.getcwd(),
                                            args.timeout), DTYPES[args.dtype])
    elif todo:
        print("rag-corpus-check embed: run again with --endpoint (the config's `retriever.endpoint`, its key in "
              "the environment) or --command \"<your embedding command>\" to add them")
        return 1
    if args.compact:
        name, dropped = compact(real, store, wanted.texts.keys())
        print(f"rag-corpus-check embed: compacted into {name or 'no segment'} ({counted(len(store) - dropped, 'vector')}; "
              f"{dropped} of texts no longer ranked dropped)")
    return 0


def _by_endpoint(cfg: Config, todo: dict[bytes, str], dims: int) -> np.ndarray:
    endpoint = cfg.endpoint
    if endpoint is None:
        raise _error(cfg, "--endpoint needs `retriever.endpoint` in the config")
    key = os.environ.get(endpoint.key_env)
    if not key:
        raise _error(cfg, f"--endpoint needs the key in ${endpoint.key_env} (the job passes the secret there)")
    assert cfg.model is not None
    client = Client(endpoint, key, cfg.model, dims)
    try:
        got = client.embed(todo)
    except EndpointError as exc:
        raise InputError(exc.kind, exc.message, file=cfg.path_display) from None
    stats = client.stats()
    print(f"rag-corpus-check embed: embedded {counted(stats['texts'], 'text')} through {stats['host']} "
          f"({stats['tokens']} tokens, {stats['requests']} requests)")
    return np.stack([got[d] for d in todo])


def _add(real: str, store: Store, todo: dict[bytes, str], vectors: np.ndarray, dtype: str) -> None:
    """A new segment of ``vectors``, in the store's dtype (``dtype`` for an empty store)."""
    keys = list(todo)
    with np.errstate(over="ignore", under="ignore"):
        matrix = np.asarray(vectors).astype(store.dtype if store.matrices else np.dtype(dtype))
    usable(matrix, [k.hex()[:16] for k in keys])
    name = write_segment(real, keys, matrix)
    store.add(name, keys, matrix)
    print(f"rag-corpus-check embed: added {counted(len(keys), 'vector')} as segment {SEGMENTS}/{name}")
