"""Deterministic benchmark data: a corpus, a gold set and a run.

    python bench/generate.py OUT_DIR --docs 100000 --queries 10000 --depth 100

Documents have ~80 words drawn from a Zipf-like vocabulary of 50,000 words
(so some words are very common and most are rare, as in real text); each
question has 3-8 words and 1-6 judged documents with grades 0-2; the run
holds `depth` ranked ids per question. Same arguments, same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import random


def vocabulary(n: int) -> tuple[list[str], list[float]]:
    words = [f"t{i:05d}" for i in range(n)]
    weights = [1.0 / (i + 1) ** 1.07 for i in range(n)]
    return words, weights


def generate(out: str, docs: int, queries: int, depth: int, seed: int = 2026) -> dict:
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    words, weights = vocabulary(50_000)
    cum = []
    total = 0.0
    for w in weights:
        total += w
        cum.append(total)
    ids = [f"doc-{i:07d}" for i in range(docs)]
    types = ["faq", "policy", "howto", "release-note"]
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for i, doc_id in enumerate(ids):
            n = rnd.randint(60, 100)
            text = " ".join(rnd.choices(words, cum_weights=cum, k=n))
            status = "active" if i % 50 else "stale"
            f.write(json.dumps({"id": doc_id, "title": f"Document {i}", "text": text,
                                "type": types[i % 4], "status": status,
                                "snapshot": "bench"}) + "\n")
    with open(os.path.join(out, "gold.jsonl"), "w", encoding="utf-8") as g, \
         open(os.path.join(out, "run.jsonl"), "w", encoding="utf-8") as r:
        for q in range(queries):
            qid = f"q{q:06d}"
            text = " ".join(rnd.choices(words[50:5000], k=rnd.randint(3, 8)))
            judged = rnd.sample(ids, rnd.randint(1, 6))
            rel = {d: rnd.choice([0, 1, 1, 2]) for d in judged}
            g.write(json.dumps({"query_id": qid, "query": text, "relevant": rel}) + "\n")
            ranking = list(dict.fromkeys(judged[: rnd.randint(0, len(judged))] + rnd.sample(ids, depth)))[:depth]
            rnd.shuffle(ranking)
            r.write(json.dumps({"query_id": qid, "ranking": ranking, "snapshot": "bench"}) + "\n")
    with open(os.path.join(out, ".rag-corpus-check.yml"), "w", encoding="utf-8") as c:
        c.write("version: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\nrun: run.jsonl\nk: 10\n"
                "snapshot: bench\nthresholds:\n  nDCG@10: 0.0\n")
    with open(os.path.join(out, "bm25.rag-corpus-check.yml"), "w", encoding="utf-8") as c:
        c.write("version: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\nk: 10\n"
                f"snapshot: bench\nretriever:\n  depth: {depth}\nthresholds:\n  nDCG@10: 0.0\n")
    return {"docs": docs, "queries": queries, "depth": depth}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    print(generate(a.out, a.docs, a.queries, a.depth, a.seed))


if __name__ == "__main__":
    main()
