"""Benchmark: the whole check and its parts against a floor and peers.

    python bench/run.py [--docs 100000] [--queries 10000] [--repeat 5] [--data DIR]

Generates the data with bench/generate.py (deterministic) unless --data points
at it, then times, each as a fresh process, in rounds (every command once a
round) and reported as the median:

* floor      read + json.loads every line of corpus, gold and run
* check      rag-corpus-check on the committed run (load, validate every
             record, cross-check ids, all measures, results and summary)
* bm25       rag-corpus-check with the built-in BM25 (index + retrieve top 100
             for every question + evaluate)
* bm25s      bm25s (numpy/scipy) indexing the same tokens and retrieving the
             top 100 (if installed)
* pytrec_eval  P/recall/ndcg_cut at 10 over the same run (if installed)
* trec_eval  the C program (--trec-eval PATH, or on PATH) over the same data
             written as TREC qrels and run files (rank = position)

Prints a Markdown table with ratios to the floor and peak RSS per command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from generate import generate  # noqa: E402

FLOOR = """
import json, sys
for name in ("corpus.jsonl", "gold.jsonl", "run.jsonl"):
    with open(name, "rb") as f:
        for line in f:
            json.loads(line)
"""

BM25S = """
import json, sys
sys.path.insert(0, sys.argv[1])
import bm25s
from rag_corpus_check.retrieval.analyzer import tokenize
ids, docs = [], []
for line in open("corpus.jsonl", encoding="utf-8"):
    r = json.loads(line)
    if r.get("status", "active") == "active":
        ids.append(r["id"]); docs.append(tokenize(r.get("title", "") + "\\n" + r["text"]))
model = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
model.index(docs, show_progress=False)
vocab = model.vocab_dict
queries = [[t for t in tokenize(json.loads(l)["query"]) if t in vocab] for l in open("gold.jsonl", encoding="utf-8")]
queries = [q or ["t00000"] for q in queries]
model.retrieve(queries, k=100, show_progress=False, n_threads=1)
"""

PYTREC = """
import json, pytrec_eval
qrels, run = {}, {}
for l in open("gold.jsonl", encoding="utf-8"):
    q = json.loads(l); qrels[q["query_id"]] = q["relevant"]
for l in open("run.jsonl", encoding="utf-8"):
    q = json.loads(l); run[q["query_id"]] = {d: float(-i) for i, d in enumerate(q["ranking"])}
pytrec_eval.RelevanceEvaluator(qrels, {"P_10", "recall_10", "ndcg_cut_10"}).evaluate(run)
"""


def timed(cmd: list[str], cwd: str) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in MB of the child, exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if res.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({res.returncode}): {res.stderr.decode()[-2000:]}")
    return dt, max(after, before) // 1024, res.returncode


def rss_of(cmd: list[str], cwd: str) -> int:
    """Peak RSS (MB) of one run, measured with a fresh helper process so the
    maximum of earlier children does not mask it."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
             " stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=cwd, capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) // 1024


def write_trec(data: str) -> tuple[str, str]:
    """The gold set and the run as TREC files, once per data directory."""
    qrels, run = os.path.join(data, "qrels.txt"), os.path.join(data, "run.txt")
    if not os.path.exists(run):
        with open(os.path.join(data, "gold.jsonl"), encoding="utf-8") as f, open(qrels, "w") as out:
            for line in f:
                q = json.loads(line)
                for doc, grade in q["relevant"].items():
                    out.write(f"{q['query_id']} 0 {doc} {grade}\n")
        with open(os.path.join(data, "run.jsonl"), encoding="utf-8") as f, open(run + ".tmp", "w") as out:
            for line in f:
                q = json.loads(line)
                for i, doc in enumerate(q["ranking"], 1):
                    out.write(f"{q['query_id']} Q0 {doc} {i} {100000 - i} bench\n")
        os.replace(run + ".tmp", run)
    return qrels, run


def have(module: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, check=False).returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", help="existing data directory (else generated in a temp dir)")
    ap.add_argument("--only", help="comma-separated subset of: floor,check,bm25,bm25s,pytrec_eval,trec_eval")
    ap.add_argument("--trec-eval", default=shutil.which("trec_eval"), help="path of the trec_eval program")
    a = ap.parse_args()
    data = a.data or tempfile.mkdtemp(prefix="rcc-bench-")
    if not os.path.exists(os.path.join(data, "corpus.jsonl")):
        generate(data, a.docs, a.queries, a.depth)
    out = tempfile.mkdtemp(prefix="rcc-bench-out-")
    cli = [sys.executable, "-I", os.path.join(ROOT, "check", "launch.py"), "--quiet", "--no-github",
           "--output", os.path.join(out, "r.json"), "--summary-file", os.path.join(out, "s.md")]
    commands = {
        "floor": [sys.executable, "-c", FLOOR],
        "check": cli,
        "bm25": [*cli, "--config", "bm25.rag-corpus-check.yml"],
    }
    if have("bm25s"):
        commands["bm25s"] = [sys.executable, "-c", BM25S, os.path.join(ROOT, "check")]
    if have("pytrec_eval"):
        commands["pytrec_eval"] = [sys.executable, "-c", PYTREC]
    if a.trec_eval:
        qrels, run = write_trec(data)
        commands["trec_eval"] = [a.trec_eval, "-m", "P.10", "-m", "recall.10", "-m", "ndcg_cut.10", qrels, run]
    if a.only:
        keep = set(a.only.split(","))
        commands = {k: v for k, v in commands.items() if k in keep}
    rows = {}
    # Round by round, every command once a round: a noisy stretch on the
    # machine then lands on all of them rather than on one.
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(a.repeat):
        for name, cmd in commands.items():
            times[name].append(timed(cmd, data)[0])
    for name, cmd in commands.items():
        rows[name] = (statistics.median(times[name]), rss_of(cmd, data))
        print(f"{name}: median {rows[name][0]:.2f} s of {a.repeat}, peak RSS {rows[name][1]} MB", file=sys.stderr)
    floor = rows.get("floor", (None,))[0]
    sizes = {n: os.path.getsize(os.path.join(data, n)) // 1024**2 for n in ("corpus.jsonl", "gold.jsonl", "run.jsonl")}
    counts = {}
    for n in ("corpus.jsonl", "gold.jsonl"):
        with open(os.path.join(data, n), "rb") as f:
            counts[n] = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    print(f"\n{counts['corpus.jsonl']} documents, {counts['gold.jsonl']} questions; files (MB): {json.dumps(sizes)}")
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, median of {a.repeat} runs\n")
    print("| command | seconds | × floor | peak RSS (MB) |\n| --- | --- | --- | --- |")
    for name, (t, rss) in rows.items():
        ratio = f"{t / floor:.1f}" if floor else "—"
        print(f"| {name} | {t:.2f} | {ratio} | {rss} |")


if __name__ == "__main__":
    main()
