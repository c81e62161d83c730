"""Benchmark: a Markdown corpus read and chunked, against the parser alone,
and the whole check with BM25 on it, against the same pages exported to JSONL.

    python bench/markdown.py [--pages 3000] [--repeat 5] [--keep DIR]

Deterministic pages (same arguments, same bytes), generated in a temporary
folder (or ``--keep DIR``): ``--pages`` pages of ~5 KB (~15 MB for 3,000) in
30 folders, words from the Zipf-like vocabulary of bench/generate.py; each
page has 3–12 headings of levels 1–3 (some repeated), a fenced code block
with ``#`` lines, and one page in four a front matter. 300 questions label
pages (K = 10).

Two comparisons, each in alternating rounds, medians printed:

* in this process: **the parser alone** (each page read, decoded and parsed by
  markdown-it-py's CommonMark parser) against **read and chunk** (the
  check's reader, :func:`inputs.markdown_corpus.read_markdown_corpus`:
  listing, reading, front matter, the parse, anchors, section records);
* fresh processes: **the whole check** with the built-in BM25 on the
  Markdown config, and on a config naming the same records exported to
  JSONL (``rag-corpus-check export``), CPU seconds of the child.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
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

from rag_corpus_check.config.load import MarkdownSpec  # noqa: E402
from rag_corpus_check.core import problems as P  # noqa: E402
from rag_corpus_check.inputs.markdown_corpus import read_markdown_corpus  # noqa: E402
from rag_corpus_check.safe_io import Limits  # noqa: E402

CONFIG = "version: 1\ncorpus:\n  format: markdown\n  paths: [\"docs/**/*.md\"]\ngold: gold.yaml\nk: 10\n" \
         "thresholds: {nDCG@10: 0.0}\n"
JSONL_CONFIG = "version: 1\ncorpus: corpus.jsonl\ngold: gold.yaml\nk: 10\nthresholds: {nDCG@10: 0.0}\n"


def generate(out: str, pages: int, seed: int = 2026) -> int:
    """The pages, the gold set and both configs; the pages' bytes."""
    rnd = random.Random(seed)
    words, weights = vocabulary(50_000)
    cum, total = [], 0.0
    for w in weights:
        total += w
        cum.append(total)

    def text(k: int) -> str:
        return " ".join(rnd.choices(words, cum_weights=cum, k=k))

    size, ids = 0, []
    for i in range(pages):
        rel = f"docs/f{i % 30:02d}/page-{i:05d}.md"
        ids.append(rel)
        parts = [f"---\ntitle: Page {i}\ntype: guide\n---\n"] if i % 4 == 0 else []
        parts.append(f"# {text(4)}\n\n{text(40)}\n")
        for h in range(rnd.randint(3, 12)):
            title = "Example" if h % 5 == 4 else text(3)
            parts.append(f"\n{'#' * rnd.randint(2, 3)} {title}\n\n{text(rnd.randint(40, 110))}\n")
            if h == 1:
                parts.append(f"\n```sh\n# {text(5)}\n{text(6)}\n```\n")
        data = "".join(parts).encode("utf-8")
        size += len(data)
        path = os.path.join(out, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    with open(os.path.join(out, "gold.yaml"), "w", encoding="utf-8") as g:
        g.write("queries:\n")
        for q in range(300):
            g.write(f"  - query_id: q{q:03d}\n    query: {text(rnd.randint(3, 8))}\n"
                    f"    relevant: {{{rnd.choice(ids)}: 2}}\n")
    for name, body in ((".rag-corpus-check.yml", CONFIG), ("jsonl.yml", JSONL_CONFIG)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as c:
            c.write(body)
    return size


def parser_alone(folder: str) -> int:
    """Every page read, decoded and parsed; the number of heading tokens."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    n = 0
    for dirpath, _, names in sorted(os.walk(os.path.join(folder, "docs"))):
        for name in sorted(names):
            with open(os.path.join(dirpath, name), "rb") as f:
                n += sum(t.type == "heading_open" for t in md.parse(f.read().decode("utf-8")))
    return n


def read_and_chunk(folder: str) -> int:
    """The check's reader; the number of records."""
    corpus = read_markdown_corpus(folder, folder, MarkdownSpec(("docs/**/*.md",)), Limits(), P.Problems())
    return corpus.count


def _timed(fn, *args) -> float:
    start = time.process_time()
    fn(*args)
    return time.process_time() - start


def _child_cpu(argv: list[str], cwd: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", help="generate into this folder and leave it")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="bench-markdown-")
    size = generate(folder, args.pages)
    cli = [sys.executable, "-m", "rag_corpus_check"]
    env_path = os.path.join(ROOT, "check")
    os.environ["PYTHONPATH"] = env_path + os.pathsep + os.environ.get("PYTHONPATH", "")
    subprocess.run([*cli, "export", "--out", "corpus.jsonl"], cwd=folder, check=True, stdout=subprocess.DEVNULL)
    headings, records = parser_alone(folder), read_and_chunk(folder)
    print(f"{args.pages} pages, {size / 1e6:.1f} MB, {headings} headings, {records} records "
          f"(corpus.jsonl {os.path.getsize(os.path.join(folder, 'corpus.jsonl')) / 1e6:.1f} MB)")
    times: dict[str, list[float]] = {"parser": [], "reader": [], "check-md": [], "check-jsonl": []}
    for _ in range(args.repeat):
        times["parser"].append(_timed(parser_alone, folder))
        times["reader"].append(_timed(read_and_chunk, folder))
        times["check-md"].append(_child_cpu(cli, folder))
        times["check-jsonl"].append(_child_cpu([*cli, "--config", "jsonl.yml"], folder))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"parser alone (read, decode, markdown-it parse):  {med['parser']:.2f} CPU-s")
    print(f"read and chunk (the check's reader):             {med['reader']:.2f} CPU-s  "
          f"({med['reader'] / med['parser']:.2f}x the parser)")
    print(f"whole check, BM25, the Markdown pages:           {med['check-md']:.2f} CPU-s")
    print(f"whole check, BM25, the same records as JSONL:    {med['check-jsonl']:.2f} CPU-s  "
          f"(Markdown {med['check-md'] / med['check-jsonl']:.2f}x)")


if __name__ == "__main__":
    main()
