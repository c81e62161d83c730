"""The metric conventions, written out in words (summary, terminal)."""

from __future__ import annotations

from collections.abc import Callable

from rag_corpus_check.config.load import Config
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs import chunks
from rag_corpus_check.metrics.measures import DEFINITIONS, HEADLINE

JUDGED_ONLY = "removed from the ranking (judged only)"


def _plain(text: str) -> str:
    return safe_text(text, 60)


def convention_lines(conventions: dict, shown: Callable[[str], str] = _plain) -> list[str]:
    """The conventions in words, from the results file's `conventions`
    (:func:`conventions_json` and the level, how a chunked corpus was
    evaluated: :mod:`chunks`). ``shown`` writes a name from the config (a
    field map's: the Markdown summary escapes it)."""
    c = conventions
    gain = "linear (gain = grade)" if c["gain"] == "linear" else "exponential (gain = 2^grade − 1)"
    short = (
        "a ranking shorter than K is padded with non-relevant positions (P@K divides by K)"
        if c["short_list"] == "pad"
        else "a ranking shorter than K is scored on its actual length (P@K divides by min(K, length))"
    )
    return [
        f"K = {c['k']}",
        f"relevant = grade ≥ {c['min_grade']} on the scale 0–{c['max_grade']}",
        f"nDCG: {gain}, discount 1/log2(position + 1), ideal from all judged grades of the question",
        f"short lists: {short}",
        _UNJUDGED[c["unjudged"] == JUDGED_ONLY],
        "questions with no relevant document are excluded from every mean and listed",
    ] + _extra_lines({m.split("@")[0] for m in c["measures"]}) + [
        line for line in [chunks.convention(c.get("level"))] if line] + (
        [IDENTICAL] if c.get("ignore_identical_ids") else []) + _reading_lines(c, shown) + _analyzer_lines(
        c.get("analyzer"))


def _reading_lines(c: dict, shown: Callable[[str], str]) -> list[str]:
    """How the gold set and the corpus were read, when through field maps (`conventions.fields`)."""
    fields = c.get("fields") or {}
    lines = [f"the {'gold set' if kind == 'gold' else 'corpus'} is read through the field map "
             + ", ".join(f"{native} ← {shown(str(written))}" for native, written in renamed.items())
             for kind, renamed in fields.items() if isinstance(renamed, dict)]
    if c.get("list_grade") is not None:
        lines.append(f"a document a question lists as a plain id has grade {c['list_grade']}")
    return lines


def _analyzer_lines(analyzer: dict | None) -> list[str]:
    """How text becomes tokens (the built-in BM25's and the question-in-record check's)."""
    if not analyzer:
        return []
    stop = f"{analyzer['stopwords']} stop words removed" if analyzer.get("stopwords") else "no stop words"
    stem = f"stemmer {analyzer['stemmer']} (Snowball)" if analyzer.get("stemmer") else "no stemmer"
    if analyzer.get("stemmer") == "porter":
        stem = "stemmer porter (as Lucene's EnglishAnalyzer)"
    return [f"text as tokens (the built-in BM25 and the question-in-record check): NFKC, casefold, word runs; Han, "
            f"Hiragana, Katakana and Hangul runs as overlapping {analyzer['cjk']}; {stop}; {stem}"]


IDENTICAL = ("a document whose id is the question's own id is removed from its ranking before the cut at K "
             "(BEIR's ignore_identical_ids)")


_UNJUDGED = {
    False: "documents the gold set does not judge count as grade 0 (Judged@K shows how much of the top-K was judged)",
    True: "judged only (`metrics.judged_only`, trec_eval -J): documents the gold set does not judge are removed from "
          "the ranking before every measure but Judged@K (which shows how much of the top-K was judged)",
}


def _extra_lines(names: set[str]) -> list[str]:
    """The definitions of the measures a config adds (the headline ones are
    stated above with the config's own settings), from the measure registry."""
    return [f"{name}{'@k' if d.cutoff else ''}: {d.formula}" + (f"; its mean is {d.mean}" if d.mean else "")
            for name, d in DEFINITIONS.items() if name in names and name not in HEADLINE]


def conventions_json(cfg: Config) -> dict:
    return {
        "k": cfg.k,
        "gain": cfg.gain,
        "short_list": cfg.short_list,
        "min_grade": cfg.min_grade,
        "max_grade": cfg.max_grade,
        "discount": "1/log2(rank+1)",
        "unjudged": JUDGED_ONLY if cfg.judged_only else "grade 0",
        "means_over": "questions with at least one relevant document",
        "relevance_map": {str(k): v for k, v in sorted(cfg.grade_map.items())},
        "run_order": cfg.run_order,
        "measures": [str(m) for m in cfg.measures()],
        "analyzer": cfg.bm25.analyzer().rules(),
    } | ({"ignore_identical_ids": True} if cfg.ignore_identical_ids else {}) | _reading_json(cfg)


def _reading_json(cfg: Config) -> dict:
    """The field maps the gold set and the corpus were read through, and the
    grade of a listed id (only when not the defaults: a native config's
    conventions stay as they were)."""
    fields = {kind: dict(m.renamed) for kind, m in (("gold", cfg.gold_fields), ("corpus", cfg.corpus_fields))
              if m is not None}
    return ({"fields": fields} if fields else {}) | ({"list_grade": cfg.list_grade} if cfg.list_grade != 1 else {})
