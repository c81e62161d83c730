"""Benchmark: a dense check over a store found by text, with new texts
embedded in the job, against today's committed-vectors check.

    python bench/store_check.py [--docs 100000] [--new 100] [--dims 384] [--questions 200] [--repeat 3]
                                [--data DIR]

Writes one deterministic knowledge base (seed 29) twice: ``--docs`` +
``--new`` documents, ``--questions`` questions, float16 vectors (a text's
vector is seeded by its sha-256: a stand-in model, so the check's own cost
is measured, not a model's):

* committed  today's layout: every row in documents.npy/.jsonl and
             questions.npy/.jsonl, the ``--new`` documents' rows committed
             too (as a pull request supplies them today)
* store      a store (store.json + one segment) holding the ``--docs``
             documents and the questions; the ``--new`` documents are not in
             it and are embedded in the job through ``retriever.endpoint``, a
             loopback OpenAI-compatible server run by this script (the same
             stand-in vectors, so both checks rank alike)

Then times the whole CLI check (``python -m rag_corpus_check``) on each, in
rounds, each in a fresh process: the median seconds and the process's peak
RSS (``wait4``), the server's request count, and whether both wrote the same
per-question results; and the CPU time of reading the store's segment index
in one pass against line by line (the best of ``--repeat``).
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
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "check")
MODEL = "bench-seeded"
KEY_ENV = "BENCH_EMBEDDING_KEY"


def vector(text: str, dims: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    return np.random.default_rng(seed).standard_normal(dims).astype("<f2")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def generate(folder: str, docs: int, new: int, dims: int, questions: int, url: str) -> None:
    texts = [f"document {i}" for i in range(docs + new)]
    qtexts = [f"question {i}" for i in range(questions)]
    rng = np.random.default_rng(29)
    relevant = rng.integers(0, docs + new, questions)
    for kind in ("committed", "store"):
        base = os.path.join(folder, kind)
        os.makedirs(base, exist_ok=True)
        with open(os.path.join(base, "corpus.jsonl"), "w") as f:
            f.writelines(json.dumps({"id": f"d{i:07d}", "text": t}) + "\n" for i, t in enumerate(texts))
        with open(os.path.join(base, "gold.jsonl"), "w") as f:
            f.writelines(json.dumps({"query_id": f"q{i:05d}", "query": q, "relevant": {f"d{int(relevant[i]):07d}": 1}})
                         + "\n" for i, q in enumerate(qtexts))
    dmat = np.stack([vector(t, dims) for t in texts])
    qmat = np.stack([vector(q, dims) for q in qtexts])
    _committed(os.path.join(folder, "committed"), texts, qtexts, dmat, qmat, dims)
    _store(os.path.join(folder, "store"), texts[:docs], qtexts, dmat[:docs], qmat, dims, url)


def _committed(base: str, texts, qtexts, dmat, qmat, dims: int) -> None:
    vectors = os.path.join(base, "vectors")
    os.makedirs(vectors, exist_ok=True)
    np.save(os.path.join(vectors, "documents.npy"), dmat)
    np.save(os.path.join(vectors, "questions.npy"), qmat)
    with open(os.path.join(vectors, "documents.jsonl"), "w") as f:
        f.writelines(json.dumps({"id": f"d{i:07d}", "sha256": _sha(t)}) + "\n" for i, t in enumerate(texts))
    with open(os.path.join(vectors, "questions.jsonl"), "w") as f:
        f.writelines(json.dumps({"query_id": f"q{i:05d}", "sha256": _sha(q)}) + "\n" for i, q in enumerate(qtexts))
    with open(os.path.join(vectors, "model.json"), "w") as f:
        json.dump({"model": MODEL, "dimensions": dims}, f)
    with open(os.path.join(base, "config.yml"), "w") as f:
        f.write("version: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\nk: 10\nthresholds: {nDCG@10: 0.0}\n"
                f"retriever: {{type: dense, vectors: vectors, model: {MODEL}, depth: 100}}\n")


def _store(base: str, texts, qtexts, dmat, qmat, dims: int, url: str) -> None:
    sys.path.insert(0, CHECK)
    from rag_corpus_check.retrieval.dense.store import StoreInfo, digest, init_store, write_segment

    folder = os.path.join(base, "vectors")
    init_store(folder, StoreInfo(MODEL, dims, ("text",)))
    keys = [digest(t) for t in texts] + [digest(q) for q in qtexts]
    write_segment(folder, keys, np.concatenate([dmat, qmat]))
    _store_config(base, url)


def _store_config(base: str, url: str) -> None:
    with open(os.path.join(base, "config.yml"), "w") as f:
        f.write("version: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\nk: 10\nthresholds: {nDCG@10: 0.0}\n"
                f"retriever: {{type: dense, vectors: vectors, model: {MODEL}, depth: 100, "
                f"endpoint: {{url: '{url}', key_env: {KEY_ENV}}}}}\n")


class Server:
    """A loopback OpenAI-compatible embeddings endpoint answering the stand-in vectors."""

    def __init__(self, dims: int):
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests += 1
                data = json.dumps({"data": [{"index": i, "embedding": [float(x) for x in vector(t, dims)]}
                                            for i, t in enumerate(body["input"])],
                                   "usage": {"total_tokens": sum(len(t.split()) for t in body["input"])}}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/embeddings"


def measure(base: str) -> tuple[float, int, str]:
    """(seconds, peak RSS in bytes, per-question results' sha-256) of one check."""
    results = os.path.join(base, "out.json")
    env = dict(os.environ, PYTHONPATH=CHECK, **{KEY_ENV: "bench-key"})
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "rag_corpus_check", "--config", "config.yml", "--no-github",
                             "--quiet", "--output", results], cwd=base, env=env, stdout=subprocess.PIPE)
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the check in {base} failed: {out}")
    with open(results) as f:
        data = json.load(f)
    digest = hashlib.sha256(json.dumps(data["queries"], sort_keys=True).encode()).hexdigest()
    return seconds, usage.ru_maxrss * 1024, digest


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=100_000)
    p.add_argument("--new", type=int, default=100)
    p.add_argument("--dims", type=int, default=384)
    p.add_argument("--questions", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--data", help="an existing folder from an earlier run (else a new temporary one)")
    p.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    folder = args.data or tempfile.mkdtemp(prefix="rag-store-bench-")
    if args.generate:
        return generate(folder, args.docs, args.new, args.dims, args.questions, "http://127.0.0.1:9/")
    if not os.path.exists(os.path.join(folder, "store", "config.yml")):
        # In a process of its own: a child's peak RSS starts from its parent's at fork (Linux keeps
        # it across exec), so the measuring process must stay small.
        subprocess.run([sys.executable, __file__, "--generate", "--data", folder, "--docs", str(args.docs),
                        "--new", str(args.new), "--dims", str(args.dims), "--questions", str(args.questions)],
                       check=True)
    server = Server(args.dims)
    _store_config(os.path.join(folder, "store"), server.url)  # this run's port
    runs: dict[str, list[tuple[float, int, str]]] = {"committed": [], "store": []}
    requests = []
    for _ in range(args.repeat):
        for kind in runs:
            before = server.requests
            runs[kind].append(measure(os.path.join(folder, kind)))
            if kind == "store":
                requests.append(server.requests - before)
    print(f"{args.docs:,} documents in the store + {args.new} new, {args.questions} questions, {args.dims} dims "
          f"float16; median of {args.repeat}; {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs\n")
    print("| check | seconds (median) | range | peak RSS |\n| --- | ---: | ---: | ---: |")
    for kind, rs in runs.items():
        secs = [s for s, _, _ in rs]
        print(f"| {kind} | {statistics.median(secs):.2f} | {min(secs):.2f}–{max(secs):.2f} | "
              f"{max(r for _, r, _ in rs) / 1e6:.0f} MB |")
    same = {d for rs in runs.values() for _, _, d in rs}
    print(f"\nrequests to the endpoint per store check: {requests}; same per-question results: {len(same) == 1}")
    segment_read(os.path.join(folder, "store", "vectors", "segments"), args.repeat)


def segment_read(folder: str, repeat: int) -> None:
    """CPU seconds to read the segment index: one pass against line by line."""
    sys.path.insert(0, CHECK)
    from rag_corpus_check.retrieval.dense.store import _keys, _slow_keys
    from rag_corpus_check.safe_io import Limits, Sha256

    index = next(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl"))
    for name, read in (("one pass", lambda: _keys(index, "index", Limits())),
                       ("line by line", lambda: _slow_keys(index, "index", Limits(), Sha256()))):
        times = []
        for _ in range(repeat):
            start = time.process_time()
            read()
            times.append(time.process_time() - start)
        print(f"segment index read {name}: {min(times):.3f} CPU-s")


if __name__ == "__main__":
    main()
