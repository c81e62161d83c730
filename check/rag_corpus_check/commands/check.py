"""One whole check: the stages of :mod:`pipeline` on the tree at ``root``,
or with a base revision compared and its rules enforced (:mod:`base.head_vs_base`)."""

from __future__ import annotations

from dataclasses import replace

from rag_corpus_check.core import problems as P
from rag_corpus_check.gate import rules as R
from rag_corpus_check.pipeline.context import Context, changed_inputs, uncommitted_inputs
from rag_corpus_check.pipeline.outcome import Outcome
from rag_corpus_check.pipeline.stages import Options, configure, enter, head_alone
from rag_corpus_check.report.github import MAX_PER_TYPE


def run_check(root: str, config_path: str, context: Context | None = None,
              options: Options | None = None) -> Outcome:
    """The whole check under ``options``: the tree at ``root`` alone, or with
    ``options.base`` compared and its rules enforced; then what git says of
    the files it read (uncommitted, changed since the base)."""
    out = _check(root, config_path, context, options)
    return replace(out, uncommitted=_tuple(uncommitted_inputs(out.context, list(out.inputs))), changed=_changed(out))


def _tuple(files: list[str] | None) -> tuple[str, ...] | None:
    return None if files is None else tuple(files)


def _changed(out: Outcome) -> dict[str, tuple[tuple[int, int], ...]]:
    """With a base, the lines the pull request changed in the files the
    problems name — looked up only when some annotations will be left out
    (more problems of a severity than GitHub shows), since they only decide
    which go first; git's diff of `bench/generate.py`'s 100k-document corpus
    (68 MB) with every line rewritten took 10.8 s and 161 MB here."""
    if out.base is None or out.base.sha is None:
        return {}
    probs = out.problems
    if max(probs.error_count(), probs.warning_count()) <= MAX_PER_TYPE:
        return {}
    named = {p.file for p in probs.listed() if p.file}
    found = changed_inputs(out.context, out.base.sha, [f for f in out.inputs if f in named])
    return {f: tuple(ranges) for f, ranges in found.items()}


def _check(root: str, config_path: str, context: Context | None, options: Options | None) -> Outcome:
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

