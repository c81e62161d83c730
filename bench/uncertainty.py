"""Benchmark: what the intervals and label-debt bounds cost next to the
evaluation they describe.

    python bench/uncertainty.py [--questions 100,1000,10000] [--repeat 3]

For each size, deterministic generated questions (8 labels each, grades
0-2, one relevant document at least, rankings of 10 from 5,000 documents)
are evaluated at P@5, R@5, nDCG@5 and Judged@5; then, in alternating rounds
(A B C D A B C D ...), the evaluation, the bootstrap intervals of its 4 means
(gate.bootstrap.mean_intervals), the paired intervals of 4 deltas (base,
head and delta of each: gate.bootstrap.paired) and the bounds if every unjudged top-k
document were relevant (gate.label_debt.head_debt) are timed in CPU seconds.
Prints, per size, the median and range of each, the resamples used, and
the ratio of each to the evaluation. A base comparison adds, per gold set
compared, one set of paired intervals and two sets of bounds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "check"))

from rag_corpus_check.gate.bootstrap import mean_intervals, paired
from rag_corpus_check.gate.label_debt import Scale, head_debt
from rag_corpus_check.metrics.evaluate import evaluate
from rag_corpus_check.metrics.measures import Measure, Options

MEASURES = [Measure(name, 5) for name in ("P", "R", "nDCG", "Judged")]


def data(n: int, seed: int = 1):
    rnd = random.Random(seed)
    docs = [f"d{i}" for i in range(5000)]
    gold = {f"q{i}": {d: rnd.choice((0, 1, 2)) for d in rnd.sample(docs, 8)} | {docs[i % 5000]: 2} for i in range(n)}
    return gold, {q: rnd.sample(docs, 10) for q in gold}


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--questions", default="100,1000,10000")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    for n in map(int, args.questions.split(",")):
        print(one_size(n, args.repeat))


def one_size(n: int, repeat: int) -> str:
    gold, runs = data(n)
    ev = evaluate(gold, runs, MEASURES)
    ok = [q for q in ev.queries if q.status == "ok"]
    cols = [[float(q.values[m] or 0) for q in ok] for m in MEASURES]
    shifted = [[min(1.0, v + 0.01) for v in c] for c in cols]
    jobs = {"evaluate": lambda: evaluate(gold, runs, MEASURES), "intervals": lambda: mean_intervals(ev),
            "paired": lambda: paired(cols, shifted), "bounds": lambda: head_debt(gold, runs, ev, Scale(Options(), 5, 2))}
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            times[name].append(cpu(job))
    med = {k: statistics.median(v) for k, v in times.items()}
    resamples = next(iter(mean_intervals(ev).values())).resamples  # type: ignore[union-attr]
    return f"{n:>6} questions ({resamples} resamples): " + "; ".join(
        f"{k} {med[k]:.3f} s [{min(v):.3f}-{max(v):.3f}] = {med[k] / med['evaluate']:.1f}x evaluate"
        for k, v in times.items())


if __name__ == "__main__":
    main()
