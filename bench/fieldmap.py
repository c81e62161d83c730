"""Benchmark: the whole check on a corpus and gold set read through field maps,
paired with the same files in the native shape.

    python bench/fieldmap.py [--data DIR] [--pairs 5]

Generates the data of bench/run.py (100,000 documents, 10,000 questions x
100 ranked ids; deterministic) unless --data points at it, writes a copy of
the corpus and the gold set with the team's field names (`chunk_id`,
`content`; `id`, `expected_docs`) and a config that maps them, and runs the
check on both in pairs (native, mapped, native, ...). Prints the median and
range of the CPU seconds (user + system) of each and of the ratio. Before
timing, both results files must hold the same means.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from generate import generate  # noqa: E402

RENAMED = {"corpus.jsonl": (("id", "chunk_id"), ("text", "content")),
           "gold.jsonl": (("query_id", "id"), ("relevant", "expected_docs"))}
CONFIG = """version: 1
corpus: {path: team-corpus.jsonl, fields: {id: chunk_id, text: content}}
gold: {path: team-gold.jsonl, fields: {query_id: id, relevant: expected_docs}}
run: run.jsonl
k: 10
snapshot: bench
thresholds:
  nDCG@10: 0.0
"""


def team_files(data: str) -> str:
    """The corpus and gold set with the team's field names, and their config."""
    for name, renames in RENAMED.items():
        with open(os.path.join(data, name), encoding="utf-8") as src, \
                open(os.path.join(data, "team-" + name), "w", encoding="utf-8") as out:
            for line in src:
                rec = json.loads(line)
                out.write(json.dumps({dict(renames).get(k, k): v for k, v in rec.items()}) + "\n")
    path = os.path.join(data, "team.rag-corpus-check.yml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(CONFIG)
    return path


def cpu(config: str, data: str, out: str) -> float:
    """The check's CPU seconds (user + system) on ``config``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-I", os.path.join(ROOT, "check", "launch.py"), "--quiet", "--no-github",
                    "--config", config, "--output", os.path.join(out, "r.json"), "--summary-file",
                    os.path.join(out, "s.md")], cwd=data, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def means(out: str) -> dict:
    with open(os.path.join(out, "r.json"), encoding="utf-8") as f:
        return json.load(f)["metrics"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="a folder bench/generate.py wrote (default: generate one)")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    data = args.data or tempfile.mkdtemp(prefix="rcc-fieldmap-")
    if not args.data:
        generate(data, 100_000, 10_000, 100)
    mapped = team_files(data)
    native = os.path.join(data, ".rag-corpus-check.yml")
    out_n, out_m = os.path.join(data, "out-native"), os.path.join(data, "out-mapped")
    cpu(native, data, out_n)
    cpu(mapped, data, out_m)
    assert means(out_n) == means(out_m), "the mapped files must score what the native ones score"
    times: dict[str, list[float]] = {"native": [], "mapped": []}
    for _ in range(args.pairs):
        times["native"].append(cpu(native, data, out_n))
        times["mapped"].append(cpu(mapped, data, out_m))
    ratios = [m / n for n, m in zip(times["native"], times["mapped"], strict=True)]
    for name, values in times.items():
        print(f"{name:7} CPU s median {statistics.median(values):.2f} (range {min(values):.2f}–{max(values):.2f})")
    print(f"mapped/native median {statistics.median(ratios):.2f} (range {min(ratios):.2f}–{max(ratios):.2f})")


if __name__ == "__main__":
    main()
