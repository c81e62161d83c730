"""Benchmark: the whole check on trec_eval's own input, paired with trec_eval.

    python bench/trec.py --trec-eval PATH [--data DIR] [--pairs 7] [--base OTHER_CHECKOUT/check]

Generates the data of bench/run.py (100,000 documents, 10,000 questions x
100 ranked ids; deterministic) unless --data points at it, writes the gold
set and the run also as TREC qrels and run files, and times whole processes
in pairs (A B A B ...: a slow stretch of a shared machine lands on both):

* TREC input  the check on qrels.txt + run.txt (and the corpus) / trec_eval
              -m P.10 -m recall.10 -m ndcg_cut.10 on the same two files
* JSONL input the check on gold.jsonl + run.jsonl / trec_eval, and / the
              floor (read + json.loads of every line of the three files)
* --base      this checkout's check / another's (e.g. a worktree of main),
              on both inputs

Prints per pair the median and range of the ratio A/B of wall seconds and
the median seconds of each. Before timing, the check's per-question P@10,
R@10 and nDCG@10 on the TREC files are compared with `trec_eval -q` (which
prints 4 decimals): every question the check evaluates must agree.
"""

from __future__ import annotations

import argparse
import json
import os
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
from run import FLOOR, write_trec  # noqa: E402

MEASURES = {"P_10": "P@10", "recall_10": "R@10", "ndcg_cut_10": "nDCG@10"}


def trec_config(data: str) -> str:
    """The bench config with the TREC files as gold and run."""
    path = os.path.join(data, "trec.rag-corpus-check.yml")
    with open(os.path.join(data, ".rag-corpus-check.yml"), encoding="utf-8") as f:
        text = f.read().replace("gold: gold.jsonl", "gold: qrels.txt").replace("run: run.jsonl", "run: run.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "formats:\n  gold: qrels\n  run: trec\n")
    return path


def check_command(check_dir: str, out: str, config: str) -> list[str]:
    return [sys.executable, "-I", os.path.join(check_dir, "launch.py"), "--quiet", "--no-github", "--config", config,
            "--output", os.path.join(out, "r.json"), "--summary-file", os.path.join(out, "s.md")]


def timed(cmd: list[str], cwd: str, env: dict | None = None) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    took = time.perf_counter() - t0
    if res.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({res.returncode}): {res.stderr.decode()[-2000:]}")
    return took


def paired(a: tuple, b: tuple, pairs: int, cwd: str) -> tuple[list[float], list[float]]:
    """Wall seconds of A and of B (each ``(command, env or None)``), run in
    turn after one warm-up run each."""
    timed(a[0], cwd, a[1])
    timed(b[0], cwd, b[1])
    times_a, times_b = [], []
    for _ in range(pairs):
        times_a.append(timed(a[0], cwd, a[1]))
        times_b.append(timed(b[0], cwd, b[1]))
    return times_a, times_b


def row(name: str, times_a: list[float], times_b: list[float]) -> str:
    """A table row (also printed to stderr at once: a long run shows its rows as they come)."""
    ratios = sorted(x / y for x, y in zip(times_a, times_b, strict=True))
    text = (f"| {name} | {statistics.median(ratios):.2f} ({ratios[0]:.2f}–{ratios[-1]:.2f}) | "
            f"{statistics.median(times_a):.2f} | {statistics.median(times_b):.2f} |")
    print(text, file=sys.stderr, flush=True)
    return text


def same_values(check: list[str], trec_eval: str, data: str, out: str) -> int:
    """The check's per-question values on the TREC files against trec_eval -q; the number compared."""
    subprocess.run(check, cwd=data, stdout=subprocess.DEVNULL, check=False)
    with open(os.path.join(out, "r.json"), encoding="utf-8") as f:
        ours = {q["query_id"]: q["values"] for q in json.load(f)["queries"] if q["status"] == "ok"}
    cmd = [trec_eval, "-q", *[x for m in ("P.10", "recall.10", "ndcg_cut.10") for x in ("-m", m)],
           os.path.join(data, "qrels.txt"), os.path.join(data, "run.txt")]
    theirs = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    compared = 0
    for line in theirs.splitlines():
        measure, qid, value = line.split()
        if qid in ours:
            mine = ours[qid][MEASURES[measure]]
            if abs(mine - float(value)) > 5e-5 + 1e-12:
                raise SystemExit(f"{qid} {measure}: the check {mine} and trec_eval {value} differ")
            compared += 1
    if compared != 3 * len(ours):
        raise SystemExit(f"trec_eval evaluated {compared // 3} of the check's {len(ours)} questions")
    return len(ours)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="existing data directory (else generated in a temp dir)")
    ap.add_argument("--trec-eval", default=shutil.which("trec_eval"), help="path of the trec_eval program")
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--base", help="another checkout's check/ directory, to compare with")
    ap.add_argument("--only", help="comma-separated subset of: trec,jsonl,base")
    a = ap.parse_args()
    if not a.trec_eval:
        raise SystemExit("trec_eval not found: pass --trec-eval PATH")
    data = a.data or tempfile.mkdtemp(prefix="rcc-bench-")
    if not os.path.exists(os.path.join(data, "corpus.jsonl")):
        generate(data, 100_000, 10_000, 100)
    write_trec(data)
    out = tempfile.mkdtemp(prefix="rcc-bench-out-")
    check_dir = os.path.join(ROOT, "check")
    jsonl = check_command(check_dir, out, os.path.join(data, ".rag-corpus-check.yml"))
    trec = check_command(check_dir, out, trec_config(data))
    trec_eval = [a.trec_eval, "-m", "P.10", "-m", "recall.10", "-m", "ndcg_cut.10", "qrels.txt", "run.txt"]
    print(f"per-question P@10, R@10, nDCG@10 equal to trec_eval -q's on {same_values(trec, a.trec_eval, data, out)} "
          "questions", file=sys.stderr)
    keep = set(a.only.split(",")) if a.only else {"trec", "jsonl", "base"}
    rows = []
    if "trec" in keep:
        rows.append(row("TREC input: check / trec_eval", *paired((trec, None), (trec_eval, None), a.pairs, data)))
    if "jsonl" in keep:
        rows.append(row("JSONL input: check / trec_eval", *paired((jsonl, None), (trec_eval, None), a.pairs, data)))
        rows.append(row("JSONL input: check / json.loads floor",
                        *paired((jsonl, None), ([sys.executable, "-c", FLOOR], None), a.pairs, data)))
    if a.base and "base" in keep:
        base_out = tempfile.mkdtemp(prefix="rcc-bench-base-")
        for name, config in (("TREC", trec_config(data)), ("JSONL", os.path.join(data, ".rag-corpus-check.yml"))):
            rows.append(row(f"{name} input: this check / --base", *paired(
                (check_command(check_dir, out, config), None), (check_command(a.base, base_out, config), None), a.pairs, data)))
    print(f"\n{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end, {a.pairs} pairs (A B A B ...)\n")
    print("| A / B | wall ratio, median (range) | A s | B s |\n| --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
