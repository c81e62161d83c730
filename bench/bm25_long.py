"""Benchmark: the built-in BM25 against bm25s on long questions and at 100k.

    python bench/bm25_long.py [--cases long,100k] [--repeat 3] [--compare REV]

Two deterministic cases (same arguments, same data), generated in memory from
the Zipf-like vocabulary of bench/generate.py:

* long   shaped like BEIR ArguAna: 8,674 documents of ~160 words and 1,406
         questions of ~194 words on average (log-normal lengths, 20-900),
         both drawn from the whole Zipf vocabulary, as real arguments are;
* 100k   100,000 documents of 60-100 words and 2,000 questions of 3-8 words
         (the shape of bench/generate.py's data).

Each case times, in the same process and in alternating rounds, the built-in
BM25 (tokenize + ``add`` + ``finish`` + ``search`` top 100 for every question)
and bm25s 0.3 ``method="lucene"`` (the same tokenizer, ``index`` +
``retrieve(k=100, n_threads=1)``), and prints the medians and their ratio.
bm25s is optional (``pip install bm25s``); without it only the built-in runs.

``--compare REV`` also loads ``check/rag_corpus_check/retrieval/bm25.py`` as of the
git revision REV and checks that it ranks every question of every case
identically (same ids, same order, scores equal to 1e-9; they are bit-equal
when the addition order is the same), timing one run of each.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "check"))

from generate import vocabulary  # noqa: E402

from rag_corpus_check.retrieval import analyzer  # noqa: E402
from rag_corpus_check.retrieval import bm25 as retrieve  # noqa: E402

DEPTH = 100


def _sampler(rnd: random.Random):
    words, weights = vocabulary(50_000)
    cum, total = [], 0.0
    for w in weights:
        total += w
        cum.append(total)
    return lambda k: " ".join(rnd.choices(words, cum_weights=cum, k=k))


def _lognormal(rnd: random.Random, mean: float, sigma: float, lo: int, hi: int) -> int:
    mu = math.log(mean) - sigma * sigma / 2
    return min(hi, max(lo, round(rnd.lognormvariate(mu, sigma))))


def long_case(seed: int = 2026) -> tuple[list[tuple[str, str]], list[str]]:
    """ArguAna's shape: 8,674 documents of ~160 words, 1,406 questions of ~194."""
    rnd = random.Random(seed)
    text = _sampler(rnd)
    docs = [(f"doc-{i:05d}", text(_lognormal(rnd, 160, 0.45, 20, 900))) for i in range(8674)]
    queries = [text(_lognormal(rnd, 194, 0.45, 20, 900)) for _ in range(1406)]
    return docs, queries


def short_case(seed: int = 2026, docs: int = 100_000, queries: int = 2000) -> tuple[list, list[str]]:
    """bench/generate.py's shape: 60-100 words a document, 3-8 a question."""
    rnd = random.Random(seed)
    text = _sampler(rnd)
    words = vocabulary(50_000)[0][50:5000]
    corpus = [(f"doc-{i:07d}", text(rnd.randint(60, 100))) for i in range(docs)]
    return corpus, [" ".join(rnd.choices(words, k=rnd.randint(3, 8))) for _ in range(queries)]


def run_builtin(module, docs, queries) -> list[list[tuple[str, float]]]:
    # The benchmark times the scorer, not the work budget (docs/configuration.md,
    # "Limits"): lifted here.
    index = module.BM25Index(bounds=module.Bounds(max_retrieval_work=10**12, max_retrieval_work_per_byte=10**6))
    for doc_id, text in docs:
        index.add(doc_id, text)
    index.finish()
    return [index.search_scored(q, DEPTH) for q in queries]


def run_bm25s(docs, queries) -> None:
    import bm25s

    model = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    model.index([analyzer.tokenize(text) for _, text in docs], show_progress=False)
    vocab = model.vocab_dict
    tokens = [[t for t in analyzer.tokenize(q) if t in vocab] or [next(iter(vocab))] for q in queries]
    model.retrieve(tokens, k=DEPTH, show_progress=False, n_threads=1)


def _timed(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def load_revision(rev: str):
    """retrieval/bm25.py as of git revision ``rev``, as a module of its own."""
    source = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:check/rag_corpus_check/retrieval/bm25.py"],
                            capture_output=True, text=True, check=True).stdout
    path = os.path.join(tempfile.mkdtemp(), "retrieve_old.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("retrieve_old", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["retrieve_old"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def compare(old, docs, queries) -> str:
    """Check that ``old`` and the current module rank identically."""
    t0 = time.perf_counter()
    new_runs = run_builtin(retrieve, docs, queries)
    t1 = time.perf_counter()
    old_runs = run_builtin(old, docs, queries)
    t2 = time.perf_counter()
    bit_equal, worst = True, 0.0
    for q, (a, b) in enumerate(zip(new_runs, old_runs, strict=True)):
        if [d for d, _ in a] != [d for d, _ in b]:
            raise SystemExit(f"question {q}: the rankings differ")
        for (_, x), (_, y) in zip(a, b, strict=True):
            bit_equal &= x == y
            worst = max(worst, abs(x - y))
    if worst > 1e-9:
        raise SystemExit(f"scores differ by {worst}")
    same = f"scores {'bit-equal' if bit_equal else f'within {worst:.1e}'}"
    return (f"identical rankings of {len(queries)} questions, {same}; one run each: "
            f"this tree {t1 - t0:.2f} s, the revision {t2 - t1:.2f} s ({(t2 - t1) / (t1 - t0):.1f}x)")


def bench(name: str, docs, queries, repeat: int) -> None:
    words = sum(len(q.split()) for q in queries) / len(queries)
    print(f"\n{name}: {len(docs)} documents, {len(queries)} questions of {words:.0f} words on average")
    try:
        import bm25s  # noqa: F401
        have_bm25s = True
    except ImportError:
        have_bm25s = False
    builtin, peer = [], []
    for _ in range(repeat):
        builtin.append(_timed(run_builtin, retrieve, docs, queries))
        if have_bm25s:
            peer.append(_timed(run_bm25s, docs, queries))
    b = statistics.median(builtin)
    print(f"  built-in BM25 (index + top {DEPTH}): {b:.2f} s  (runs: {', '.join(f'{t:.2f}' for t in builtin)})")
    if have_bm25s:
        p = statistics.median(peer)
        print(f"  bm25s lucene  (index + top {DEPTH}): {p:.2f} s  (runs: {', '.join(f'{t:.2f}' for t in peer)})")
        print(f"  built-in / bm25s: {b / p:.2f}x  ({'faster' if b < p else 'slower'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="long,100k")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries-100k", type=int, default=2000)
    ap.add_argument("--compare", metavar="REV", help="check the rankings equal retrieval/bm25.py at git REV")
    args = ap.parse_args()
    cases = {"long": long_case, "100k": lambda: short_case(queries=args.queries_100k)}
    for name in args.cases.split(","):
        docs, queries = cases[name]()
        if args.compare:
            print(f"{name}: against {args.compare}: {compare(load_revision(args.compare), docs, queries)}")
        bench(name, docs, queries, args.repeat)


if __name__ == "__main__":
    main()
