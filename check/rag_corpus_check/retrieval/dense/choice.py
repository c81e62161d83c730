"""Which vector ranks each of the base's questions on the head's documents
(the view judged by the base's gold set): the vector of its text **as the
base wrote it** — the base's row of that text when the base has vectors of
the head's model (trusted: the base revision's), else the head's row of the
same text, else (reworded in the pull request) the head's row of the new
wording, taken on trust. :func:`question_vectors` says which, in the note
the output shows (``Chosen.note``); ``pipeline.base_gold`` reads the
base's folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rag_corpus_check.core.text import counted, natural_key, safe_id, safe_text
from rag_corpus_check.retrieval.dense import SHOWN
from rag_corpus_check.retrieval.dense.folder import Rows, Vectors
from rag_corpus_check.retrieval.dense.trust import text_sha256
from rag_corpus_check.retrieval.protocol import BaseQuestions


@dataclass
class Chosen:
    """A vector for each base question that has one (``qids[i]`` is row
    ``i`` of ``matrix``), and where each came from."""

    qids: list[str] = field(default_factory=list)
    rows: list[np.ndarray] = field(default_factory=list)
    from_base: int = 0
    same_text: list[str] = field(default_factory=list)  # the head's vector of the base's text
    reworded: list[str] = field(default_factory=list)  # the head's vector of another text
    missing: list[str] = field(default_factory=list)  # no vector: no ranking
    note: str | None = None  # which vectors, as the base's note shows it

    @property
    def matrix(self) -> np.ndarray:
        return np.array(self.rows, dtype=np.float64).reshape(len(self.rows), -1)

    def add(self, qid: str, vector: np.ndarray) -> None:
        self.qids.append(qid)
        self.rows.append(np.asarray(vector, dtype=np.float64))  # float16/32 are exact in float64


def question_vectors(base: BaseQuestions, head: Vectors, hybrid: bool) -> Chosen:
    """A vector for every base question (see the module's docstring), and the note that says which."""
    usable, why = _usable(base, head)
    trusted = _by_text(usable.questions) if usable is not None else {}
    own = _by_text(head.questions)
    out = Chosen()
    for qid, text in sorted(base.texts.items(), key=lambda item: natural_key(item[0])):
        digest = text_sha256(text)
        if usable is not None and digest in trusted:
            out.add(qid, usable.questions.vectors[_row(usable.questions, qid, digest, trusted)])
            out.from_base += 1
        elif digest in own:
            out.add(qid, head.questions.vectors[_row(head.questions, qid, digest, own)])
            out.same_text.append(qid)
        elif qid in head.questions.row_of:
            out.add(qid, head.questions.vectors[head.questions.row_of[qid]])
            out.reworded.append(qid)
        else:
            out.missing.append(qid)
    out.note = note(out, usable, why, head.model, hybrid)
    return out


def _usable(base: BaseQuestions, head: Vectors) -> tuple[Vectors | None, str | None]:
    vectors = base.vectors
    if not isinstance(vectors, Vectors):
        return None, base.why or "none were read"
    if vectors.dimensions != head.dimensions:
        return None, f"its vectors have {vectors.dimensions} dimensions, this PR's {head.dimensions}"
    return vectors, None


def _by_text(rows: Rows) -> dict[str, int]:
    """Text sha-256 → its first row."""
    first: dict[str, int] = {}
    for i, digest in enumerate(rows.hashes):
        first.setdefault(digest, i)
    return first


def _row(rows: Rows, qid: str, digest: str, by_text: dict[str, int]) -> int:
    """The question's own row when it embeds this text, else the first row that does."""
    own = rows.row_of.get(qid)
    return own if own is not None and rows.hashes[own] == digest else by_text[digest]


def note(chosen: Chosen, usable: Vectors | None, why: str | None, model: str, hybrid: bool) -> str:
    """How the base's gold set was ranked, in words (the output's note)."""
    fused = ", fused with the built-in BM25 over the base's question texts" if hybrid else ""
    if usable is not None:
        parts = [f"the base's gold set was ranked with the base's question vectors (`{safe_text(usable.folder, 200)}` "
                 f"at the base commit) against this PR's document vectors{fused}"]
        if chosen.same_text:
            parts.append(f"{_count(chosen.same_text)} without a vector of its base text there "
                         f"{_were(chosen.same_text)} ranked with this PR's vector of the same text: {_ids(chosen.same_text)}")
    else:
        parts = [f"the base has no question vectors of `{safe_text(model, 100)}` ({why}): the base's gold set was "
                 f"ranked with this PR's vectors of the same question texts against its document vectors{fused}"]
    if chosen.reworded:
        parts.append(f"{_count(chosen.reworded)} reworded in this PR {_were(chosen.reworded)} ranked with this PR's "
                     f"vector of its new wording (taken on trust): {_ids(chosen.reworded)}")
    if chosen.missing:
        parts.append(f"{_count(chosen.missing)} of the base {'has' if len(chosen.missing) == 1 else 'have'} no "
                     f"vector here and no ranking: {_ids(chosen.missing)}")
    return "; ".join(parts)


def _count(ids: list[str]) -> str:
    return counted(len(ids), "question")


def _were(ids: list[str]) -> str:
    return "was" if len(ids) == 1 else "were"


def _ids(ids: list[str]) -> str:
    return ", ".join(safe_id(i) for i in ids[:SHOWN]) + (f" … and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
