"""Benchmark: what the analyzer costs (retrieval/analyzer.py).

    python bench/analyzer.py [--cases stem,cjk,stemmers] [--repeat 3]

Three deterministic cases, generated in memory:

* stem   bench/bm25_long.py's long-question case (8,674 documents of ~160
         words, 1,406 questions of ~194, ArguAna's shape), every word given
         one of the endings "", "s", "ed", "ing" at random so the stemmer
         has work: the built-in BM25 (index + top 100 of every question)
         without a stemmer, with ``stemmer: english``, and bm25s 0.3
         ``method="lucene"`` on the same tokens stemmed by the same PyStemmer
         stemmer (tokenize + stem + ``index`` + ``retrieve(k=100,
         n_threads=1)``); and how many top-10 lists the two agree on.
* cjk    100,000 Chinese documents of 60-100 characters (Zipf-drawn from
         3,000 Han characters, a punctuation mark every 8-20) and 2,000
         questions of 6-12 characters: the built-in BM25 with overlapping
         bigrams against the tokens before bigrams (one per run of text:
         ``\\w+``), and the index's size both ways.
* stemmers  1,000,000 tokens (20,000 inflected forms) through PyStemmer's
         ``english`` (C), and through the pure-Python ``snowballstemmer``
         when it is installed without PyStemmer (it uses PyStemmer when it
         can): why the check depends on PyStemmer.

CPU seconds (``time.process_time``: the machine may be busy), the median
of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "check"))

from bm25_long import DEPTH, long_case  # noqa: E402

from rag_corpus_check.core.text import nfkc  # noqa: E402
from rag_corpus_check.retrieval import analyzer  # noqa: E402
from rag_corpus_check.retrieval.bm25 import BM25Index, BM25Params, Bounds  # noqa: E402

LIFTED = Bounds(max_retrieval_work=10**12, max_retrieval_work_per_byte=10**6, max_vocabulary=10**8,
                max_index_postings=10**9)


def _cpu(fn, *args):
    t0 = time.process_time()
    out = fn(*args)
    return time.process_time() - t0, out


def builtin(docs, queries, stemmer=None) -> tuple[list[list[str]], BM25Index]:
    index = BM25Index(BM25Params(stemmer=stemmer), LIFTED)
    for doc_id, text in docs:
        index.add(doc_id, text)
    index.finish()
    return [index.search(q, DEPTH) for q in queries], index


def with_bm25s(docs, queries, stemmer: str) -> list[list[str]]:
    import bm25s
    import Stemmer

    stem = Stemmer.Stemmer(stemmer).stemWords
    model = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    model.index([stem(analyzer.tokenize(text)) for _, text in docs], show_progress=False)
    vocab = model.vocab_dict
    tokens = [[t for t in stem(analyzer.tokenize(q)) if t in vocab] or [next(iter(vocab))] for q in queries]
    found, _ = model.retrieve(tokens, k=DEPTH, show_progress=False, n_threads=1)
    return [[docs[i][0] for i in row] for row in found.tolist()]


def stem_case(repeat: int) -> None:
    docs, queries = long_case()
    rnd = random.Random(7)

    def inflect(text: str) -> str:
        return " ".join(w + rnd.choice(("", "s", "ed", "ing")) for w in text.split())

    docs = [(d, inflect(t)) for d, t in docs]
    queries = [inflect(q) for q in queries]
    print(f"stem: {len(docs)} documents, {len(queries)} questions of "
          f"{sum(len(q.split()) for q in queries) / len(queries):.0f} words on average (inflected)")
    times: dict[str, list[float]] = {"built-in BM25, no stemmer": [], "built-in BM25, stemmer english": [],
                                     "bm25s lucene + PyStemmer english": []}
    ours = theirs = None
    for _ in range(repeat):
        times["built-in BM25, no stemmer"].append(_cpu(builtin, docs, queries)[0])
        t, (ours, _) = _cpu(builtin, docs, queries, "english")
        times["built-in BM25, stemmer english"].append(t)
        t, theirs = _cpu(with_bm25s, docs, queries, "english")
        times["bm25s lucene + PyStemmer english"].append(t)
    for name, ts in times.items():
        print(f"  {name:34} {statistics.median(ts):6.2f} CPU-s  (runs: {', '.join(f'{t:.2f}' for t in ts)})")
    assert ours is not None and theirs is not None
    same = sum(a[:10] == b[:10] for a, b in zip(ours, theirs, strict=True))
    rest = "" if same == len(queries) else " (the rest: ties at the cut in bm25s's order, or its float32 scores)"
    print(f"  top 10 identical to bm25s's: {same} of {len(queries)} questions{rest}")


def cjk_corpus(n_docs: int = 100_000, n_queries: int = 2000, seed: int = 2026) -> tuple[list, list[str]]:
    rnd = random.Random(seed)
    chars = [chr(0x4E00 + i * 7) for i in range(3000)]
    cum, total = [], 0.0
    for i in range(len(chars)):
        total += 1.0 / (i + 1) ** 1.07
        cum.append(total)

    def text(n: int) -> str:
        out, left = [], n
        while left > 0:
            k = min(left, rnd.randint(8, 20))
            out.append("".join(rnd.choices(chars, cum_weights=cum, k=k)))
            left -= k
        return "，".join(out) + "。"

    docs = [(f"doc-{i:07d}", text(rnd.randint(60, 100))) for i in range(n_docs)]
    return docs, [text(rnd.randint(6, 12)) for _ in range(n_queries)]


def _old_words(text: str) -> list[str]:
    return re.findall(r"\w+", nfkc(text).casefold())


def cjk_case(repeat: int) -> None:
    docs, queries = cjk_corpus()
    chars = sum(len(t) for _, t in docs)
    print(f"cjk: {len(docs)} documents ({chars / 1e6:.1f}M characters), {len(queries)} questions")
    rows = []
    for name, words in (("runs as one token (before)", _old_words), ("overlapping bigrams (now)", analyzer.words)):
        saved = analyzer.words
        analyzer.words = words
        try:
            tok = [_cpu(lambda w=words: [w(t) for _, t in docs])[0] for _ in range(repeat)]
            full = []
            for _ in range(repeat):
                t, (_, index) = _cpu(builtin, docs, queries)
                full.append(t)
        finally:
            analyzer.words = saved
        rows.append((name, statistics.median(tok), statistics.median(full), index.postings, len(index._terms)))
    for name, tok, full, postings, terms in rows:
        print(f"  {name:28} tokenize {tok:6.2f} CPU-s; index + top {DEPTH} of every question {full:6.2f} CPU-s; "
              f"{postings:,} postings, {terms:,} terms")


def stemmers_case(repeat: int) -> None:
    from generate import vocabulary

    rnd = random.Random(1)
    forms = [w + end for w in vocabulary(5000)[0] for end in ("", "s", "ing", "ed")]
    tokens = rnd.choices(forms, k=1_000_000)
    found = []
    try:
        import Stemmer

        found.append(("PyStemmer (C)", Stemmer.Stemmer("english").stemWords))
    except ImportError:
        import snowballstemmer

        found.append(("snowballstemmer (pure Python)", snowballstemmer.stemmer("english").stemWords))
    for name, stem in found:
        ts = [_cpu(stem, tokens)[0] for _ in range(repeat)]
        print(f"stemmers: {name}, english, 1,000,000 tokens: {statistics.median(ts):.2f} CPU-s "
              f"(runs: {', '.join(f'{t:.2f}' for t in ts)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="stem,cjk,stemmers")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for case in args.cases.split(","):
        {"stem": stem_case, "cjk": cjk_case, "stemmers": stemmers_case}[case](args.repeat)


if __name__ == "__main__":
    main()
