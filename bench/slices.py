"""What slices cost: two git repositories, the same gold set, corpus and
committed runs, one with every question tagged (``tagged/``), one without
(``plain/``). Each has a base commit and a head commit whose run swaps the
first two documents of every third question, so every slice moved and every
slice's paired test runs. ``--gated N`` names the slices t0..t<N-1> in the
config of both commits, each with thresholds (that always pass), so that
every one is measured and gated (the schema allows 100). Measured from the
repository's top with:

    python bench/slices.py /tmp/slices --questions 2000 --tags 50
    for d in plain tagged; do (cd /tmp/slices/$d && PYTHONPATH="$OLDPWD/check" /usr/bin/time -f "$d %U+%S s %M KB" \\
        python -m rag_corpus_check --base HEAD~1 --quiet --no-github --output out/r.json --summary-file out/s.md); done
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess

CONFIG = """version: 1
corpus: corpus.jsonl
gold: gold.jsonl
run: run.jsonl
k: 10
thresholds:
  nDCG@10: {min: 0.0, max_drop: 1.0}
per_question: {max_questions: 1000000, max_drop: 1.0}
"""


def _write(folder: str, name: str, text: str) -> None:
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        f.write(text)


def _git(folder: str, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "b",
           "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


def _data(questions: int, tags: int, seed: int = 20261203):
    rnd = random.Random(seed)
    docs = [f"d{i:05d}" for i in range(max(100, questions // 2))]
    gold, runs = [], []
    for q in range(questions):
        ranking = rnd.sample(docs, 20)
        relevant = {d: rnd.choice([1, 2]) for d in rnd.sample(ranking[:12], 3)}
        relevant.update({d: 0 for d in ranking[12:15]})
        gold.append({"query_id": f"q{q:05d}", "relevant": relevant, "tags": [f"t{q % tags}", f"u{q % 7}"]})
        runs.append({"query_id": f"q{q:05d}", "ranking": ranking})
    corpus = "".join(json.dumps({"id": d, "text": f"document {d}"}) + "\n" for d in docs)
    return corpus, gold, runs


def _config(gated: int) -> str:
    """The config, naming the slices t0..t<gated-1> with thresholds that pass."""
    rule = "{min_questions: 1, thresholds: {nDCG@10: {min: 0.0, max_drop: 1.0}}}"
    return CONFIG + ("slices:\n" + "".join(f"  t{i}: {rule}\n" for i in range(gated)) if gated else "")


def _repo(folder: str, corpus: str, gold: list[dict], runs: list[dict], tagged: bool, gated: int = 0) -> None:
    os.makedirs(folder)
    _git(folder, "init", "-q", "-b", "main")
    _write(folder, ".rag-corpus-check.yml", _config(gated if tagged else 0))
    _write(folder, "corpus.jsonl", corpus)
    lines = (q if tagged else {k: v for k, v in q.items() if k != "tags"} for q in gold)
    _write(folder, "gold.jsonl", "".join(json.dumps(q) + "\n" for q in lines))
    _write(folder, "run.jsonl", "".join(json.dumps(r) + "\n" for r in runs))
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "base")
    moved = [{**r, "ranking": [r["ranking"][1], r["ranking"][0], *r["ranking"][2:]]} if i % 3 == 0 else r
             for i, r in enumerate(runs)]
    _write(folder, "run.jsonl", "".join(json.dumps(r) + "\n" for r in moved))
    _git(folder, "commit", "-q", "-am", "head")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--tags", type=int, default=50, help="tags t0..t<n-1>, besides u0..u6 (each question has one of each)")
    ap.add_argument("--gated", type=int, default=0, help="slices t0..t<n-1> named and gated in the config (<= --tags)")
    args = ap.parse_args()
    if not 0 <= args.gated <= min(args.tags, 100):
        ap.error("--gated must be between 0 and min(--tags, 100)")
    corpus, gold, runs = _data(args.questions, args.tags)
    _repo(os.path.join(args.out, "plain"), corpus, gold, runs, tagged=False)
    _repo(os.path.join(args.out, "tagged"), corpus, gold, runs, tagged=True, gated=args.gated)


if __name__ == "__main__":
    main()
