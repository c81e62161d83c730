"""The text analyzer: how a text becomes the tokens the built-in BM25 indexes
and searches for, and the tokens the question-in-record check compares
(:mod:`inputs.question_texts`). One place, so the two never disagree.

1. Unicode NFKC (:func:`core.text.nfkc`: full-width forms, ligatures,
   half-width katakana folded), then ``str.casefold()``.
2. Words are the ``\\w+`` runs of the result (letters, digits and
   underscore of any script). A run is cut where Han, Hiragana, Katakana or
   Hangul characters (:data:`CJK`) begin or end; such a CJK part becomes its
   overlapping bigrams (``東京タワー`` → ``東京 京タ タワ ワー``), a lone
   character its unigram, as Lucene's ``CJKAnalyzer`` (``CJKBigramFilter``,
   ``outputUnigrams=false``) does: scripts mixed in one run are bigrammed
   across the boundary, as there. Text of other scripts is split exactly as
   before bigrams existed.
3. Stop words (``retriever.stopwords``, :data:`STOPWORDS`) are removed.
4. With ``retriever.stemmer``, each token is stemmed by that Snowball
   stemmer (PyStemmer, imported only then); ``porter`` is the original
   Porter algorithm of Lucene's ``EnglishAnalyzer`` (which, as Porter's
   reference code, leaves words of one or two characters as they are).

The question-in-record check takes the same analyzer without stop words
(contiguous tokens are compared, so a dropped word would join others).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from rag_corpus_check.core.text import nfkc

# Han (with the ideographic iteration and number marks), Hiragana, Katakana
# (with the prolonged sound mark) and Hangul, as they stand after NFKC (which
# maps half-width katakana, compatibility jamo, Kangxi radicals and CJK
# compatibility ideographs onto these blocks). Only word characters count
# (``(?=\w)`` below): an unassigned code point in a range stays a separator.
CJK = ("\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c\u3041-\u3096\u309d-\u309f"
       "\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
       "\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\U00020000-\U0003ffff")
PORTER = "porter"  # the original Porter stemmer, as Lucene's EnglishAnalyzer applies it
CJK_BIGRAMS = "bigrams"  # what the analyzer does to CJK runs, as the results file names it

_WORD = re.compile(r"\w+")


@cache
def _cjk() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Any CJK character; a CJK run (group 1) or a run of other word
    characters. Compiled at the first text that is not ASCII: the ranges
    take 9 ms to compile, which every check would pay at start-up."""
    return re.compile(f"[{CJK}]"), re.compile(f"((?:(?=\\w)[{CJK}])+)|[^\\W{CJK}]+")


# ASCII is its own NFKC, its casefold is lower(), and its word characters are
# letters, digits and "_": every other character ends a token. Twice as fast
# as the regular expression (100k documents hold 8M tokens).
_ASCII_GAPS = str.maketrans({chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})

STOPWORDS = {
    "english": frozenset(
        "a an and are as at be but by for from has have how i if in into is it its of on or "
        "that the their there these they this to was were what when where which who why will "
        "with can do does my our you your".split()
    ),
    "russian": frozenset(
        "и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по "
        "только ее мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если "
        "уже или ни быть был него до вас нибудь опять уж вам ведь там потом себя ничего ей "
        "может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто чего раз "
        "тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь этом "
        "один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец "
        "два об другой хоть после над больше тот через эти нас про всего них какая много "
        "разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой "
        "им более всегда конечно всю между".split()
    ),
}


def bigrams(run: str) -> list[str]:
    """A CJK run's overlapping bigrams; a lone character is its unigram."""
    if len(run) < 2:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)]


def words(text: str) -> list[str]:
    """Steps 1 and 2: NFKC, casefold, ``\\w+`` runs, CJK parts as bigrams."""
    if text.isascii():
        return text.translate(_ASCII_GAPS).lower().split()
    norm = nfkc(text).casefold()
    any_cjk, parts = _cjk()
    if any_cjk.search(norm) is None:
        return _WORD.findall(norm)
    out: list[str] = []
    for m in parts.finditer(norm):
        run = m.group(1)
        if run is None:
            out.append(m.group())
        else:
            out += bigrams(run)
    return out


def tokenize(text: str, stopwords: frozenset[str] = frozenset()) -> list[str]:
    """:func:`words` minus stop words (no stemming)."""
    tokens = words(text)
    if stopwords:
        tokens = [t for t in tokens if t not in stopwords]
    return tokens


@dataclass(frozen=True)
class Analyzer:
    """Stop words and stemmer of :func:`tokens`; the CJK bigrams are not a setting."""

    stopwords: str | None = None  # a key of STOPWORDS
    stemmer: str | None = None  # a Snowball algorithm of PyStemmer ("porter": Lucene's EnglishAnalyzer)
    _stem: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.stemmer is not None:
            import Stemmer  # PyStemmer: imported only when a stemmer is configured

            object.__setattr__(self, "_stem", Stemmer.Stemmer(self.stemmer).stemWords)

    @property
    def stopword_set(self) -> frozenset[str]:
        return STOPWORDS[self.stopwords] if self.stopwords else frozenset()

    def tokens(self, text: str) -> list[str]:
        """The text's tokens: :func:`tokenize`, then the stemmer's stems."""
        tokens = tokenize(text, self.stopword_set)
        if self._stem is None or not tokens:
            return tokens
        stems = self._stem(tokens)
        if self.stemmer == PORTER:
            # Porter's own C and Java code (and Lucene's PorterStemmer) leave
            # words of one or two letters alone; Snowball's "porter" does
            # not ("as" -> "a", "s" -> "").
            return [t if len(t) <= 2 else s for t, s in zip(tokens, stems, strict=True)]
        return stems

    def without_stopwords(self) -> Analyzer:
        """The question-in-record check's analyzer: the same, keeping every word."""
        return self if self.stopwords is None else replace(self, stopwords=None)

    def rules(self) -> dict:
        """The analyzer as the results file records it (``conventions.analyzer``)."""
        return {"cjk": CJK_BIGRAMS, "stemmer": self.stemmer, "stopwords": self.stopwords}
