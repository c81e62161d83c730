"""The analyzer's token streams against Lucene's own analyzers on real text
(tests/fixtures/analyzer/: public-domain English, the Universal Declaration
of Human Rights' first article in Chinese, Japanese and Korean, openings of
Natsume Sōseki and Akutagawa, the Analects, and knowledge-base sentences):
``retriever.stemmer: porter`` against ``EnglishAnalyzer``, the default
against ``CJKAnalyzer`` (both without stop words).

Needs Java 11+ and a Lucene 9 jar (``LUCENE_CLASSPATH``, or the Anserini
fat jar that ``python bench/lucene_tokens.py --fetch`` puts in
``~/.cache/rag-corpus-check/``); skipped, saying which is missing, otherwise.
Every token that differs must be one of the known differences
(docs/retrieval.md): UAX#29 word breaks Lucene's StandardTokenizer keeps and
``\\w`` runs do not (possessive ``'s``, Hangul glued to digits or Latin, the
iteration mark 々 as a word of its own).
"""

import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from lucene_tokens import FIXTURES, agreement, classpath, lucene_tokens

from rag_corpus_check.retrieval.analyzer import Analyzer

HANGUL_GLUED = re.compile(r"^(?=.*[0-9a-z])(?=.*[\uac00-\ud7af])[0-9a-z\uac00-\ud7af]+$")


def _lucene_or_skip() -> str:
    import shutil

    if shutil.which("java") is None:
        pytest.skip("no `java` on PATH (Java 11+ runs tests/lucene/LuceneTokens.java)")
    cp = classpath()
    if cp is None:
        pytest.skip("no Lucene jar: set LUCENE_CLASSPATH, or run `python bench/lucene_tokens.py --fetch`")
    return cp


@pytest.mark.parametrize("name, lucene, ours, known", [
    ("en.txt", "english", Analyzer(stemmer="porter"), lambda t: t == "s"),  # Lucene drops a possessive 's
    ("cjk.txt", "cjk", Analyzer(),  # Lucene: 々 a word of its own, Hangul glued to digits one word
     lambda t: "々" in t or bool(HANGUL_GLUED.match(t)) or t.isdigit() or len(t) == 1),
])
def test_tokens_agree_with_lucene(name, lucene, ours, known):
    cp = _lucene_or_skip()
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    theirs = lucene_tokens(cp, lucene, lines)
    mine = [ours.tokens(line) for line in lines]
    same_lines, same_tokens, total, diffs = agreement(mine, theirs)
    print(f"{name}: {same_lines}/{len(lines)} lines identical, {same_tokens}/{total} tokens agree; differ: {diffs}")
    unexplained = [t for t in diffs if not known(t)]
    assert unexplained == [], diffs
    assert same_tokens >= 0.98 * total


def test_the_fixtures_are_real_text():
    """Not a token list made to agree: sentences, several scripts."""
    cjk = (FIXTURES / "cjk.txt").read_text(encoding="utf-8")
    assert all(re.search(p, cjk) for p in ("[\u4e00-\u9fff]", "[\u3041-\u3096]", "[\u30a1-\u30fa]", "[\uac00-\ud7af]"))
    assert len(Path(FIXTURES / "en.txt").read_text(encoding="utf-8").split()) > 400
