"""Digests of the inputs, for the provenance and the corpus fingerprint."""

from __future__ import annotations

import hashlib

from rag_corpus_check.safe_io.paths import _REFUSED, InputError, _identity, open_regular


class Sha256:
    """``hashlib.sha256`` that can start over, for a fast reader that hands a
    file to the exact reader halfway through."""

    __slots__ = ("_h", "update")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._h = hashlib.sha256()
        self.update = self._h.update

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def restart(hasher) -> None:
    if hasher is not None:
        hasher.reset()


def sha256_file(real: str, display: str, max_bytes: int) -> str:
    h = hashlib.sha256()
    with open_regular(real, display, max_bytes) as f:
        if _identity(f) in _REFUSED:
            raise InputError("limit", "not hashed: its reader refused it for a size limit", file=display)
        for chunk in iter(lambda: f.read(1024 * 1024), b""):
            h.update(chunk)
    return h.hexdigest()
