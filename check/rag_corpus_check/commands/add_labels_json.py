"""`add-labels` into a LlamaIndex ``EmbeddingQAFinetuneDataset`` JSON file:
each new relevant document's id appended to its question's
``relevant_docs`` list. The format holds relevant documents only, so a
worksheet's grade-0 labels cannot be kept (they are counted, and `pool`
lists those documents again). The file is written back as LlamaIndex's
``save_json`` writes it (``json.dump(..., indent=4)``), keys in their order."""

from __future__ import annotations

import json

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.safe_io import InputError, load_json_document


def add_to_llamaindex(real: str, display: str, cfg: Config, plan, problems: P.Problems) -> bytes | None:
    """The dataset with the plan's relevant labels added (None: none to add);
    ``plan.new`` keeps only those, ``plan.dropped`` counts the others."""
    try:
        doc, _ = load_json_document(real, display, cfg.limits, ceiling=cfg.limits.max_file_bytes)
    except InputError as exc:
        problems.add_input_error(exc)
        return None
    relevant = doc["relevant_docs"]  # read and checked by the gold reader before
    kept = [(q, d, g) for q, d, g in plan.new if g >= 1]
    plan.dropped, plan.new = len(plan.new) - len(kept), kept
    for qid, doc_id, _ in kept:
        relevant.setdefault(qid, []).append(doc_id)
    return (json.dumps(doc, indent=4, ensure_ascii=False) + "\n").encode("utf-8") if kept else None
