"""One whole check: the stages of :mod:`pipeline` on the tree at ``root``,
or with a base revision compared and its rules enforced (:mod:`base.head_vs_base`)."""

from __future__ import annotations

from rag_corpus_check.core import problems as P
from rag_corpus_check.gate import rules as R
from rag_corpus_check.pipeline.context import Context, changed_inputs, uncommitted_inputs
from rag_corpus_check.pipeline.outcome import Outcome, decide
from rag_corpus_check.pipeline.stages import Options, configure, enter, gate, measure


def run_check(root: str, config_path: str, context: Context | None = None,
              options: Options | None = None) -> Outcome:
    """The whole check under ``options``: the tree at ``root`` alone, or with
    ``options.base`` compared and its rules enforced."""
    options = options or Options()
    out = Outcome(P.Problems(), context or Context(), advisory=options.advisory,
                  required_rules=options.required_rules)
    checked = _check(root, config_path, out, options)
    checked.uncommitted = uncommitted_inputs(checked.context, list(checked.inputs))
    if checked.base is not None and checked.base.sha is not None:
        checked.changed = changed_inputs(checked.context, checked.base.sha, list(checked.inputs))
    return checked


def _check(root: str, config_path: str, out: Outcome, options: Options) -> Outcome:
    enter(out, None)
    cfg = configure(root, config_path, out, options)
    if cfg is None:
        return decide(out)
    if options.base is not None:
        from rag_corpus_check.base.head_vs_base import (
            check_with_base,  # only with a base: its imports too
        )

        return check_with_base(root, config_path, cfg, out, options)
    out.rules = R.head_rules(R.NO_BASE, "no base revision was compared")
    measure(root, cfg, out, options)
    out.gated = gate(cfg, out)
    return decide(out, shard=options.shard is not None)
