"""One whole check: the stages of :mod:`pipeline` on the tree at ``root``,
or with a base revision compared and its rules enforced (:mod:`base.head_vs_base`)."""

from __future__ import annotations

from rag_corpus_check.core import problems as P
from rag_corpus_check.gate import rules as R
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.pipeline.stages import Options, configure, enter, head_alone


def run_check(root: str, config_path: str, context: Context | None = None,
              options: Options | None = None) -> Outcome:
    """The whole check under ``options``: the tree at ``root`` alone, or with
    ``options.base`` compared and its rules enforced."""
    enter(None)
    begun = configure(root, config_path, P.Problems(), context or Context(), options or Options())
    if begun.config is None:
        return begun.decided()
    if begun.options.base is not None:
        from rag_corpus_check.base.head_vs_base import (
            check_with_base,  # only with a base: its imports too
        )

        return check_with_base(root, config_path, begun)
    return head_alone(root, begun, R.head_rules(R.NO_BASE, "no base revision was compared"))

