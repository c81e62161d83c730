"""Benchmark: where the BM25 scorer's Python path stops paying for numpy's import.

    python bench/bm25_small.py [--repeat 7] [--cases 30x15,1000x200,...] [--words 20]

Each case ``DOCSxQUESTIONS`` is a deterministic corpus of ``DOCS`` documents
of ``--words`` words (Zipf-like vocabulary of bench/generate.py) and
``QUESTIONS`` questions of 3-8 words. Each is timed whole in a fresh process
(import of the scorer, ``add``, ``finish``, every question's top 100), in
turn (A B A B ...): A forced onto the Python path, B onto numpy (its import
included, as a check pays it). Prints the postings and the work visited
(the quantities the thresholds :data:`SMALL_POSTINGS` and :data:`SMALL_WORK`
of retrieval/bm25.py bound), the median wall seconds of each and B/A.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import random, sys, time
sys.path.insert(0, {check!r}); sys.path.insert(0, {bench!r})
from generate import vocabulary
rnd = random.Random(2026)
words, weights = vocabulary(50_000)
docs = [" ".join(rnd.choices(words, weights, k={words_per_doc})) for _ in range({docs})]
questions = [" ".join(rnd.choices(words, weights, k=rnd.randint(3, 8))) for _ in range({questions})]
start = time.perf_counter()
from rag_corpus_check.retrieval import bm25
bm25.SMALL_POSTINGS, bm25.SMALL_WORK = {small}
index = bm25.BM25Index(bm25.BM25Params())
for i, text in enumerate(docs):
    index.add(f"d{{i}}", text)
index.finish()
for q in questions:
    index.search(q, 100)
print(time.perf_counter() - start, index.postings, index.work, isinstance(index._csr[1], list))
"""

SMALL = (10**12, 10**12)
NUMPY = (-1, -1)


def timed(case: tuple[int, int], words: int, small: tuple[int, int]) -> tuple[float, int, int, bool]:
    code = CHILD.format(check=os.path.join(ROOT, "check"), bench=os.path.join(ROOT, "bench"), docs=case[0],
                        questions=case[1], words_per_doc=words, small=small)
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2]), out[3] == "True"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--words", type=int, default=20)
    p.add_argument("--cases", default="30x15,300x100,1000x300,2500x500,5000x1000,10000x2000")
    args = p.parse_args()
    cases = [tuple(int(x) for x in c.split("x")) for c in args.cases.split(",")]
    print(f"{args.repeat} rounds, {os.cpu_count()} cores, Python {sys.version.split()[0]}, {args.words} words a document")
    print(f"{'case':>12} {'postings':>9} {'work':>10} {'python s':>9} {'numpy s':>9} {'numpy/python':>12}")
    for case in cases:
        py, nps = [], []
        for _ in range(args.repeat):
            a = timed(case, args.words, SMALL)
            b = timed(case, args.words, NUMPY)
            assert a[3] and not b[3] and a[1:3] == b[1:3]
            py.append(a[0])
            nps.append(b[0])
        ratios = [b / a for a, b in zip(py, nps, strict=True)]
        print(f"{'x'.join(map(str, case)):>12} {a[1]:>9} {a[2]:>10} {statistics.median(py):>9.4f} "
              f"{statistics.median(nps):>9.4f} {statistics.median(ratios):>11.2f}x")


if __name__ == "__main__":
    main()
