"""The base's vectors folder, the trusted source of the vectors the base's
questions are ranked with in the view judged by the base's gold set (it
comes from the base revision, like the base's rules): a pull request that
rewords a question and supplies a flattering vector for the new wording
cannot lift the base's question, which is ranked with the base's vector
against the head's documents (:mod:`dense.choice`). When the base has no
vectors of the head's model (it ranks with BM25, a run or a command, or with
another model, or its folder cannot be read), :func:`base_vectors` says why.
"""

from __future__ import annotations

from rag_corpus_check.config.load import Config
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.retrieval.dense.folder import Place, Vectors, read_vectors
from rag_corpus_check.safe_io import InputError


def base_vectors(root: str, base_cfg: Config, cfg: Config) -> tuple[Vectors | None, str | None]:
    """The base's vectors folder when it holds the head's model, else (None, why not)."""
    if not base_cfg.uses_vectors or base_cfg.vectors is None or base_cfg.model is None:
        return None, f"the base ranks with {'a committed run' if base_cfg.run is not None else base_cfg.ranker.said}"
    if base_cfg.model != cfg.model:
        return None, f"its vectors are of `{safe_text(base_cfg.model, 100)}`"
    try:
        return read_vectors(Place(root, base_cfg.base_dir, base_cfg.vectors), base_cfg.model, base_cfg.limits), None
    except InputError as exc:
        return None, f"its vectors cannot be read: {safe_text(exc.message, 200)}"
