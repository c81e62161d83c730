"""Every hostile input of ``bench/dos.py`` in every mode a user runs it in,
with the CPU seconds (user + sys) and the peak memory of each run, as the
operating system accounts the finished child process:

    python bench/dos.py /tmp/dos
    python bench/dos_modes.py /tmp/dos            # or name cases after the folder

Modes: ``check`` (the gate), ``base`` (``--base``: a case that is no git
repository is committed as the base and checked against itself, so both
trees are read and measured), ``validate`` and ``pool``. The dense and hybrid
retrievers are cases of their own (``dense-ties``, ``hybrid-ties``). The
table is what docs/hostile-input.md quotes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "check")
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "b",
           "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "GIT_"))}
    return {**env, **GIT_ENV, "PYTHONPATH": CHECK}


def _base(folder: str) -> str:
    """The case's base commit: its own (cost cases), else the folder committed as it is."""
    named = os.path.join(folder, ".git", "BASE")
    if os.path.exists(named):
        with open(named) as f:
            return f.read().strip()
    if not os.path.isdir(os.path.join(folder, ".git")):
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
            subprocess.run(["git", *args], cwd=folder, env=_env(), check=True, capture_output=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, env=_env(), check=True, capture_output=True,
                          text=True).stdout.strip()


def _argv(mode: str, folder: str, out: str) -> list[str]:
    run = [sys.executable, "-m", "rag_corpus_check"]
    files = ["--quiet", "--no-github", "--output", f"{out}/r.json", "--summary-file", f"{out}/s.md"]
    if mode == "check":
        return run + files
    if mode == "base":
        return run + files + ["--base", _base(folder)]
    if mode == "validate":
        return run + ["validate", "--quiet"]
    return run + ["pool", "--out", f"{out}/pool.yaml", "--force"]


def measure(folder: str, mode: str) -> tuple[int, float, int]:
    """(exit code, CPU seconds, peak resident KB) of one run."""
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.Popen(_argv(mode, folder, out), cwd=folder, env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dos", help="the folder bench/dos.py wrote")
    parser.add_argument("cases", nargs="*", help="folder names (default: all)")
    parser.add_argument("--modes", default="check,base,validate,pool")
    args = parser.parse_args()
    cases = args.cases or sorted(os.listdir(args.dos))
    modes = args.modes.split(",")
    print("| case | " + " | ".join(f"{m}: exit, CPU s, peak MB" for m in modes) + " |")
    print("| --- |" + " --- |" * len(modes))
    worst = (0.0, 0)
    for case in cases:
        cells = []
        for mode in modes:
            code, cpu, kb = measure(os.path.join(args.dos, case), mode)
            worst = (max(worst[0], cpu), max(worst[1], kb))
            cells.append(f"{code}, {cpu:.1f}, {kb // 1024}")
        print(f"| `{case}` | " + " | ".join(cells) + " |", flush=True)
    print(f"\nworst: {worst[0]:.1f} CPU-s, {worst[1] // 1024} MB")


if __name__ == "__main__":
    main()
