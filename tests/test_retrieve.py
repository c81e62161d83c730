"""The built-in BM25: tokenisation, hand-computed scores, ranking rules, and a
cross-check against bm25s (test-only) on a generated corpus."""

import math
import random

import pytest

from rag_corpus_check.retrieval.analyzer import tokenize
from rag_corpus_check.retrieval.bm25 import BM25Index, BM25Params, Bounds, Budget


@pytest.mark.parametrize("text,tokens", [
    ("Hello, World!", ["hello", "world"]),
    ("Привет, МИР", ["привет", "мир"]),
    ("Ёлка и ЕЛКА", ["ёлка", "и", "елка"]),
    ("nwbackup 3.2 — v2.x", ["nwbackup", "3", "2", "v2", "x"]),
    ("snake_case and CamelCase", ["snake_case", "and", "camelcase"]),
    ("Straße STRASSE", ["strasse", "strasse"]),  # casefold
    ("ﬁle ＡＢＣ １２", ["file", "abc", "12"]),  # NFKC: ligature, full-width
    ("5xx-ошибки API", ["5xx", "ошибки", "api"]),
    ("", []),
    ("!!! ... ---", []),
])
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


def test_stopwords_are_opt_in():
    assert tokenize("how do I restore the data") == ["how", "do", "i", "restore", "the", "data"]
    idx = BM25Index(BM25Params(stopwords="english"))
    assert [t for t in tokenize("how do I restore the data", idx.params.stopword_set())] == ["restore", "data"]
    ru = BM25Params(stopwords="russian").stopword_set()
    assert tokenize("как восстановить и удалить", ru) == ["восстановить", "удалить"]


def _index(docs, **kw):
    idx = BM25Index(BM25Params(**kw))
    for d, text in docs.items():
        idx.add(d, text)
    return idx.finish()


def test_bm25_hand_computed():
    # N = 3, avgdl = 2; "apple" has df = 2.
    idx = _index({"d1": "apple banana", "d2": "apple apple cherry", "d3": "banana"})
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    d1 = idf * 1 / (1 + 1.2 * (1 - 0.75 + 0.75 * 2 / 2))
    d2 = idf * 2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / 2))
    scored = dict(idx.search_scored("apple"))
    assert scored == {"d2": pytest.approx(d2, abs=1e-15), "d1": pytest.approx(d1, abs=1e-15)}
    assert idx.search("apple") == ["d2", "d1"]  # d3 scores 0: not returned
    # A query term twice counts twice.
    assert dict(idx.search_scored("apple apple"))["d1"] == pytest.approx(2 * d1)


def test_bm25_k1_b_configurable():
    docs = {"d1": "apple banana", "d2": "apple apple cherry", "d3": "banana"}
    a = dict(_index(docs, k1=2.0, b=0.0).search_scored("apple"))
    idf = math.log(1 + 1.5 / 2.5)
    assert a["d2"] == pytest.approx(idf * 2 / (2 + 2.0))


def test_ties_broken_by_id_ascending_and_depth():
    idx = _index({"b": "x", "a": "x", "c": "x", "d": "y"})
    assert idx.search("x") == ["a", "b", "c"]
    assert idx.search("x", depth=2) == ["a", "b"]
    assert idx.search("nothing") == []


def _generate(seed=7, n_docs=3000, n_queries=300):
    rnd = random.Random(seed)
    # Zipf-like vocabulary so some terms are frequent and some rare.
    vocab = [f"w{i}" for i in range(3000)] + ["данные", "резервная", "копия", "ключ", "доступ"]
    weights = [1 / (i + 1) ** 0.9 for i in range(len(vocab))]
    docs = {}
    for i in range(n_docs):
        n = rnd.randint(5, 120)
        docs[f"doc{i:05d}"] = " ".join(rnd.choices(vocab, weights, k=n))
    queries = [" ".join(rnd.choices(vocab, weights, k=rnd.randint(1, 6))) for _ in range(n_queries)]
    return docs, queries


def _against_bm25s(docs, queries, ours, tokens) -> int:
    """Our top 10 of each question against bm25s's (``method="lucene"``)
    over the documents as ``tokens`` splits them; the questions compared."""
    import bm25s  # test-only independent implementation
    ids = list(docs)
    theirs = bm25s.BM25(method="lucene", k1=1.2, b=0.75, dtype="float64")
    theirs.index([tokens(docs[d]) for d in ids], show_progress=False)
    vocab = theirs.vocab_dict
    compared = 0
    for q in queries:
        qt = [t for t in tokens(q) if t in vocab]
        mine = ours.search_scored(q, 10)
        if not qt:
            assert mine == []
            continue
        scores = theirs.get_scores(qt)
        # bm25s scores every document; rank them with our rule (score desc, id asc).
        ref = sorted(((-float(s), ids[i]) for i, s in enumerate(scores) if s > 0))[:10]
        ref_ids = [d for _, d in ref]
        # Identical top-10, except where a score tie straddles the cut.
        if [d for d, _ in mine] != ref_ids:
            cut = -ref[-1][0]
            assert any(abs(s - cut) < 1e-9 for _, s in mine), (q, mine, ref)
        for d, s in mine:
            assert s == pytest.approx(float(scores[ids.index(d)]), abs=1e-9)
        compared += 1
    return compared


def test_cross_check_against_bm25s():
    docs, queries = _generate()
    assert _against_bm25s(docs, queries, _index(docs), tokenize) > 250


@pytest.mark.parametrize("language, words", [
    ("english", "connect connected connecting connection connections refund refunds refunded refunding "
                "process processes processed processing policy policies backup backups restore restored"),
    ("russian", "копия копии копию копий хранить хранятся хранение удалить удалённые удаление резервная "
                "резервные резервную возврат возврата возвраты"),
])
def test_cross_check_with_a_stemmer_against_bm25s(language, words):
    """``retriever.stemmer`` against bm25s given the same words stemmed by
    PyStemmer itself: the stemmer changes which documents match, and the
    scores still agree."""
    import Stemmer

    stem = Stemmer.Stemmer(language).stemWords
    rnd = random.Random(11)
    forms = words.split()
    docs, queries = _generate(seed=3, n_docs=2000, n_queries=250)
    docs = {d: text + " " + " ".join(rnd.choices(forms, k=rnd.randint(0, 6))) for d, text in docs.items()}
    queries = [" ".join(rnd.choices(forms, k=rnd.randint(1, 4))) + " " + q for q in queries]
    ours = _index(docs, stemmer=language)
    assert _against_bm25s(docs, queries, ours, lambda text: stem(tokenize(text))) > 240
    # The stemmer matters here: without it, other documents rank.
    plain = _index(docs)
    assert sum(plain.search(q, 10) != ours.search(q, 10) for q in queries) > 100


# ---------------------------------------------------------------- work and memory bounded by the input (issue 13, item 7)


def _common_index(n_docs=2000):
    return _index({f"d{i}": f"common word t{i}" for i in range(n_docs)})


def test_every_question_is_scored_from_zero():
    # A question scores the same after others as on a fresh index, whether
    # its postings are summed by their distinct documents (rare terms: under
    # 1/16 of the documents) or into an array of every document (common).
    docs = {f"d{i:03d}": "common " * (i % 3 + 1) + f"rare{i % 50}" for i in range(200)}
    idx = _index(docs)
    for q in ["rare7", "common", "rare7 common rare9", "rare7", "nothing", "common common"]:
        assert idx.search_scored(q) == _index(docs).search_scored(q), q
    assert len(idx.search("rare7")) == 4 and len(idx.search("common")) == 100


def test_repeated_query_terms_cost_one_pass():
    """10,000 copies of one token visit that token's postings once: the
    same work as one copy (it was 10,000 passes), and the scores are the
    single copy's times the count."""
    once, many = _common_index(), _common_index()
    many.bounds = Bounds(max_query_tokens=10_000)
    one = dict(once.search_scored("common", 5))
    lots = dict(many.search_scored(" ".join(["common"] * 10_000), 5))
    assert once.work == many.work == 2000 + 2000  # postings visited + candidates ranked
    assert lots == {d: pytest.approx(10_000 * s, rel=1e-12) for d, s in one.items()}


def test_work_grows_with_distinct_terms_not_with_repeats():
    idx = _common_index()
    idx.search("common word", 5)
    two_terms = idx.work
    idx.search("common common word word word", 5)
    assert idx.work == 2 * two_terms


def test_query_token_cap():
    idx = BM25Index(BM25Params(), Bounds(max_query_tokens=5))
    idx.add("d", "a b c")
    idx.finish()
    idx.search("a b c d e", 5)
    with pytest.raises(Budget) as exc:
        idx.search("a b c d e f", 5)
    assert exc.value.limit == "max_query_tokens" and "limits.max_query_tokens" in exc.value.message


def test_nfkc_expansion_counts_against_the_cap():
    """U+FDFA is one character and four words after NFKC."""
    assert len(tokenize("\ufdfa")) == 4
    idx = BM25Index(BM25Params(), Bounds(max_query_tokens=1024))
    idx.add("d", "x")
    idx.finish()
    idx.search("\ufdfa " * 256, 5)
    with pytest.raises(Budget):
        idx.search("\ufdfa " * 257, 5)


def test_work_budget():
    idx = BM25Index(BM25Params(), Bounds(max_retrieval_work=8000))  # a search: 2000 postings + 2000 candidates
    for i in range(2000):
        idx.add(f"d{i}", "common")
    idx.finish()
    idx.search("common", 5)
    idx.search("common", 5)
    with pytest.raises(Budget) as exc:
        idx.search("common", 5)
    assert exc.value.limit == "max_retrieval_work"


@pytest.mark.parametrize("bounds, limit", [
    (Bounds(max_vocabulary=100), "max_vocabulary"),
    (Bounds(max_index_postings=150), "max_index_postings"),
])
def test_index_budgets(bounds, limit):
    idx = BM25Index(BM25Params(), bounds)
    with pytest.raises(Budget) as exc:
        for i in range(1000):
            idx.add(f"d{i}", f"unique{i}")
    assert exc.value.limit == limit
    assert idx.postings <= 151 and len(idx._terms) <= 151  # stopped at the bound, not at the end


def test_normalisation_is_linear_in_long_runs(monkeypatch):
    """NFKC reorders a run of combining marks in quadratic time (CPython; a
    100k-character run of U+0F73 took 48 s): a text with a run over 256
    characters without a space is normalised 256 characters at a time, so no
    call sees more. Ordinary text is normalised whole (or not at all when it
    already is NFKC), with the same tokens."""
    from rag_corpus_check.core import text as retrieve

    seen = []
    real = retrieve.unicodedata.normalize

    def spy(form, text):
        seen.append(len(text))
        return real(form, text)

    monkeypatch.setattr(retrieve.unicodedata, "normalize", spy)
    tokenize("\u0f73" * 20_000 + " a " + "a\u0f72\u0f71" * 5_000)
    assert seen and max(seen) <= 256
    seen.clear()
    text = "Ｆｕｌｌ-width ﬁle ＡＢＣ and Straße " * 50
    import re

    assert tokenize(text) == re.findall(r"\w+", real("NFKC", text).casefold())
    assert seen == [len(text)]  # one call, the whole text
    seen.clear()
    tokenize("already normal text, no call at all")
    assert seen == []
