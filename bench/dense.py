"""Benchmark: the check's exact dense search against a plain numpy script.

    python bench/dense.py [--docs 100000] [--dims 384] [--questions 1000] [--depth 100] [--repeat 3]
                          [--data DIR] [--other-check CHECK_DIR]

Writes a deterministic knowledge base (seed 23) with a vectors folder:
``--docs`` × ``--dims`` float16 document vectors (standard normal, written
block by block, so 1,000,000 × 384 needs no 1.5 GB array in memory), float16
question vectors, a corpus and a gold set (one relevant document per question)
and a dense config. Then times, each in a fresh process, in rounds, reporting
the median and the process's peak RSS (``wait4``):

* numpy-f32   the plain script: the documents memory-mapped, read in blocks
              of 65,536 rows as float32, cosine by matrix product,
              ``argpartition`` for each block's top ``depth``, merged, sorted
* numpy-f64   the same in float64 (the precision the check's first step uses)
* search      the check's search API alone (``dense.search.DenseSearch.rank``
              over the memory-mapped folder, exact ``fsum`` rescoring included)
* check       the whole CLI check (``rag-corpus-check --config ...``: reads and
              validates every file, hashes every text, checks every row,
              searches, evaluates, writes results and summary)
* check@other with ``--other-check DIR``: the same with the package in DIR
              (e.g. another worktree's ``check/``), in the same rounds: a
              paired before/after
* idle        a process that imports numpy and the check's modules and
              exits: the interpreter's own share of every peak RSS above

Prints a Markdown table: seconds, ratio to numpy-f32, peak RSS (of the whole
process, file pages it mapped included) and its ratio to the size of the
vectors (both ``.npy`` files), and the same RSS less ``idle``'s. Also checks
that ``search`` and ``numpy-f64`` return the same top ``depth`` ids (they
must, barring ties), and that both checks wrote the same per-question results.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "check")
SEED = 23
BLOCK = 65536
MODES = ("numpy-f32", "numpy-f64", "search", "check", "idle")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _doc_id(i: int) -> str:
    return f"d{i:07d}"


def generate(folder: str, docs: int, dims: int, questions: int, depth: int) -> None:
    """The knowledge base (see the module's docstring)."""
    vectors = os.path.join(folder, "vectors")
    os.makedirs(vectors, exist_ok=True)
    rng = np.random.default_rng(SEED)
    out = np.lib.format.open_memmap(os.path.join(vectors, "documents.npy"), mode="w+", dtype="<f2",
                                    shape=(docs, dims))
    for start in range(0, docs, BLOCK):
        out[start:start + BLOCK] = rng.standard_normal((min(BLOCK, docs - start), dims)).astype("<f2")
    out.flush()
    del out
    np.save(os.path.join(vectors, "questions.npy"), rng.standard_normal((questions, dims)).astype("<f2"))
    with open(os.path.join(folder, "corpus.jsonl"), "w") as c, open(os.path.join(vectors, "documents.jsonl"), "w") as j:
        for i in range(docs):
            text = f"document {i}"
            c.write(json.dumps({"id": _doc_id(i), "text": text}) + "\n")
            j.write(json.dumps({"id": _doc_id(i), "sha256": _sha(text)}) + "\n")
    _gold(folder, vectors, docs, questions, rng)
    with open(os.path.join(vectors, "model.json"), "w") as f:
        json.dump({"model": "bench-normal", "dimensions": dims}, f)
    with open(os.path.join(folder, "config.yml"), "w") as f:
        f.write(f"version: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\nk: 10\nthresholds: {{nDCG@10: 0.0}}\n"
                f"retriever: {{type: dense, vectors: vectors, model: bench-normal, depth: {depth}}}\n")


def _gold(folder: str, vectors: str, docs: int, questions: int, rng) -> None:
    relevant = rng.integers(0, docs, questions)
    with open(os.path.join(folder, "gold.jsonl"), "w") as g, open(os.path.join(vectors, "questions.jsonl"), "w") as j:
        for i in range(questions):
            text = f"question {i}"
            g.write(json.dumps({"query_id": f"q{i:05d}", "query": text,
                                "relevant": {_doc_id(int(relevant[i])): 1}}) + "\n")
            j.write(json.dumps({"query_id": f"q{i:05d}", "sha256": _sha(text)}) + "\n")


def plain_numpy(folder: str, depth: int, dtype: str) -> list[list[int]]:
    """The floor: top ``depth`` rows by cosine, block by block."""
    docs = np.load(os.path.join(folder, "vectors", "documents.npy"), mmap_mode="r")
    q = np.load(os.path.join(folder, "vectors", "questions.npy")).astype(dtype)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    best_rows = np.empty((len(q), 0), dtype=np.int64)
    best = np.empty((len(q), 0), dtype=dtype)
    for start in range(0, docs.shape[0], BLOCK):
        block = np.asarray(docs[start:start + BLOCK], dtype=dtype)
        scores = (q @ block.T) / np.linalg.norm(block, axis=1)
        top = np.argpartition(-scores, min(depth, scores.shape[1] - 1), axis=1)[:, :depth]
        best = np.concatenate([best, np.take_along_axis(scores, top, axis=1)], axis=1)
        best_rows = np.concatenate([best_rows, top + start], axis=1)
        keep = np.argpartition(-best, min(depth, best.shape[1] - 1), axis=1)[:, :depth]
        best, best_rows = np.take_along_axis(best, keep, axis=1), np.take_along_axis(best_rows, keep, axis=1)
    order = np.argsort(-best, axis=1, kind="stable")
    return np.take_along_axis(best_rows, order, axis=1).tolist()


def check_search(folder: str, depth: int) -> list[list[int]]:
    sys.path.insert(0, CHECK)
    from rag_corpus_check.retrieval.dense.search import DenseSearch

    docs = np.load(os.path.join(folder, "vectors", "documents.npy"), mmap_mode="r")
    q = np.load(os.path.join(folder, "vectors", "questions.npy"), mmap_mode="r")
    keys = [_doc_id(i) for i in range(docs.shape[0])]
    search = DenseSearch(docs, keys, np.arange(docs.shape[0], dtype=np.int64), 10**15)
    return [[int(key[1:]) for key in ranking] for ranking in search.rank(np.asarray(q), depth)]


def child(mode: str, folder: str, depth: int, check_dir: str = CHECK) -> None:
    """One measured process: writes the rankings (first 10 questions) to stdout."""
    if mode == "idle":
        sys.path.insert(0, check_dir)
        import rag_corpus_check.commands.cli
        import rag_corpus_check.retrieval.dense.ranker  # noqa: F401
        return
    if mode.startswith("check"):
        env = dict(os.environ, PYTHONPATH=check_dir)
        results = os.path.join(folder, "out", f"{mode}.json")
        res = subprocess.run([sys.executable, "-m", "rag_corpus_check", "--config", "config.yml", "--no-github",
                              "--quiet", "--output", results], cwd=folder, env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit(f"the check exited {res.returncode}: {res.stdout}{res.stderr}")
        with open(results) as f:
            print(hashlib.sha256(json.dumps(json.load(f)["queries"], sort_keys=True).encode()).hexdigest())
        return
    rankings = check_search(folder, depth) if mode == "search" else plain_numpy(folder, depth, mode[-3:].replace("f", "float"))
    print(json.dumps(rankings[:10]))


def measure(mode: str, folder: str, depth: int, check_dir: str = CHECK) -> tuple[float, int, str]:
    """(seconds, peak RSS in bytes, stdout) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--child", mode.partition("@")[0], "--data", folder,
                             "--depth", str(depth), "--other-check", check_dir], stdout=subprocess.PIPE)
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{mode} failed")
    # Linux's wait4 reports the largest of the process and its waited-for
    # descendants (the check runs in a grandchild).
    rss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return seconds, rss, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=100_000)
    p.add_argument("--dims", type=int, default=384)
    p.add_argument("--questions", type=int, default=1000)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--data", help="an existing folder from an earlier run (else a new temporary one)")
    p.add_argument("--other-check", help="another check/ folder to time in the same rounds (check@other)")
    p.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args.child, args.data, args.depth, args.other_check or CHECK)
    folder = args.data or tempfile.mkdtemp(prefix="rag-dense-bench-")
    if not os.path.exists(os.path.join(folder, "config.yml")):
        generate(folder, args.docs, args.dims, args.questions, args.depth)
    report(folder, args)


def report(folder: str, args) -> None:
    modes = [*MODES[:-1], *(["check@other"] if args.other_check else []), MODES[-1]]
    runs: dict[str, list[tuple[float, int, str]]] = {m: [] for m in modes}
    for _ in range(args.repeat):  # rounds: every mode once a round
        for mode in modes:
            other = os.path.abspath(args.other_check) if mode == "check@other" else CHECK
            runs[mode].append(measure(mode, folder, args.depth, other))
    size = sum(os.path.getsize(os.path.join(folder, "vectors", f"{k}.npy")) for k in ("documents", "questions"))
    floor = statistics.median(s for s, _, _ in runs["numpy-f32"])
    print(f"{args.docs:,} × {args.dims} float16 documents, {args.questions:,} questions, top {args.depth}; "
          f"vectors {size / 1e6:.1f} MB; median of {args.repeat}; {platform.python_version()}, numpy "
          f"{np.__version__}, {os.cpu_count()} CPUs\n")
    idle = max(r for _, r, _ in runs["idle"])
    print("| run | seconds (median) | range | × numpy-f32 | peak RSS | × vectors | RSS − idle | × vectors |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode in modes:
        times = [s for s, _, _ in runs[mode]]
        seconds = statistics.median(times)
        rss = max(r for _, r, _ in runs[mode])
        print(f"| {mode} | {seconds:.2f} | {min(times):.2f}–{max(times):.2f} | {seconds / floor:.2f} | "
              f"{rss / 1e6:.0f} MB | {rss / size:.2f} | {(rss - idle) / 1e6:.0f} MB | {(rss - idle) / size:.2f} |")
    same = runs["search"][0][2] == runs["numpy-f64"][0][2]
    print(f"\nsearch and numpy-f64 rank the first 10 questions {'identically' if same else 'DIFFERENTLY'}")
    if args.other_check:
        agree = runs["check"][0][2] == runs["check@other"][0][2]
        print(f"check and check@other give {'the same' if agree else 'DIFFERENT'} per-question results")


if __name__ == "__main__":
    main()
