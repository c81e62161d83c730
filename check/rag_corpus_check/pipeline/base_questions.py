"""The base's questions that the head's retriever ranks too (the view
judged by the base's gold set)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BaseQuestions:
    """The base's questions, for the head's retriever to rank too (the view
    judged by the base's gold set): id → text as the base wrote it. For
    dense and hybrid, ``vectors`` is the base's vectors folder read
    (``dense.folder.Vectors``) when it holds the head's model, else None and
    ``why`` says why; ranking them sets ``note``: how the view was ranked."""

    texts: dict[str, str]
    vectors: object | None = None
    why: str | None = None
    note: str | None = None
