"""Benchmark: the bundled example's whole CLI, the check and the pre-commit
hook's ``validate``, against a bare ``python -c "import yaml"``.

    python bench/startup.py [--repeat 15] [--config .rag-corpus-check.yml] [--compare REV]

Runs, in turn (A B C A B C ...), on a copy of examples/kb: the check exactly
as the action runs it (``python -I check/launch.py --config ... --output
...``), ``validate --quiet`` (what the pre-commit hook runs: the inputs
checked, nothing ranked) the same way, and ``python -c "import yaml"`` with
the same interpreter, each a fresh process, and prints the median and range
of wall and CPU (user + system, from ``wait4``) seconds of each, and of the
per-pair ratios to ``import yaml``. Bytecode: every command runs with
whatever ``__pycache__`` exists (run once before timing: the warm-up).

``--config committed-run.rag-corpus-check.yml`` times the committed-run check;
the default is the BM25 one. ``--compare REV`` adds the example's CLI as of
git revision REV (``git archive``) to each round, so before/after and the
yardstick are measured in one sitting.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from revision import archive

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one process run to its end."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={"PATH": os.environ.get("PATH", "")})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def spread(values: list[float], unit: str = " s") -> str:
    return f"{statistics.median(values):.3f}{unit} ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--config", default=".rag-corpus-check.yml")
    p.add_argument("--compare", metavar="REV")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="startup-") as tmp:
        base = Path(tmp)
        kb = base / "kb"
        shutil.copytree(ROOT / "examples" / "kb", kb)
        trees = {"working tree": ROOT}
        if args.compare:
            trees[args.compare] = archive(args.compare, base / "rev")
        commands: dict[str, list[str]] = {}
        for label, tree in trees.items():
            launch = [sys.executable, "-I", str(tree / "check" / "launch.py")]
            commands[f"check, {label}"] = [*launch, "--config", args.config, "--output", str(base / "results.json"),
                                           "--quiet"]
            commands[f"validate, {label}"] = [*launch, "validate", "--config", args.config, "--quiet"]
        commands["import yaml"] = [sys.executable, "-c", "import yaml"]
        for argv in commands.values():  # warm-up: bytecode written, files cached
            timed(argv, kb)
        runs: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
        for _ in range(args.repeat):
            for label, argv in commands.items():
                runs[label].append(timed(argv, kb))
    print(f"{args.config}, {args.repeat} rounds, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    width = max(map(len, runs))
    for label, values in runs.items():
        print(f"{label:>{width}}: wall {spread([w for w, _ in values])}, cpu {spread([c for _, c in values])}")
    yard = runs["import yaml"]
    for label in commands:
        if label == "import yaml":
            continue
        walls = [a[0] / b[0] for a, b in zip(runs[label], yard, strict=True)]
        cpus = [a[1] / b[1] for a, b in zip(runs[label], yard, strict=True)]
        print(f"{label:>{width}} / import yaml: wall {spread(walls, 'x')}, cpu {spread(cpus, 'x')}")


if __name__ == "__main__":
    main()
