"""Run the atheris harness (fuzz/fuzz_loaders.py) for a bounded time.

atheris ships wheels for Linux x86-64 and CPython 3.12/3.13 only (it is in
the test extras for those, by its environment marker in pyproject.toml);
elsewhere this test is skipped, but under CI (CI=true) a missing atheris is a
failure, not a skip, where that marker installs it. Any crash or broken invariant found by the fuzzer fails
the test and leaves the reproducer in the temporary directory it prints.
"""

import importlib.util
import os
import subprocess
import sys
import tomllib

import pytest
from packaging.requirements import Requirement

from conftest import ROOT, in_ci

FUZZ_SECONDS = int(os.environ.get("RCC_FUZZ_SECONDS", "20"))


def extras_install_atheris() -> bool:
    """Whether ``pip install -e '.[test]'`` installs atheris on this platform and Python."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    atheris = next(r for r in map(Requirement, extras["test"]) if r.name == "atheris")
    return atheris.marker is None or atheris.marker.evaluate()


def test_atheris_harness_runs_clean(tmp_path):
    if importlib.util.find_spec("atheris") is None:
        if in_ci() and extras_install_atheris():
            pytest.fail(
                "atheris is not installed (it is in the test extras for Linux x86-64, Python 3.12/3.13)"
            )
        pytest.skip("atheris not installed")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    cmd = [
        sys.executable,
        str(ROOT / "fuzz" / "fuzz_loaders.py"),
        f"-max_total_time={FUZZ_SECONDS}",
        "-seed=1"
        if in_ci()
        else "-seed=0",  # CI: the same exploration each time; locally a new one
        "-rss_limit_mb=2048",
        "-max_len=4096",
        "-timeout=10",
        "-print_final_stats=1",
        f"-artifact_prefix={tmp_path}/",
        str(corpus),
        str(ROOT / "fuzz" / "seeds"),
    ]
    res = subprocess.run(
        cmd, capture_output=True, text=True, timeout=FUZZ_SECONDS + 120, check=False
    )
    log = res.stdout + res.stderr
    crashes = [
        p.name
        for p in tmp_path.iterdir()
        if p.name.startswith(("crash-", "timeout-", "oom-", "leak-"))
    ]
    assert res.returncode == 0 and not crashes, (
        f"fuzzer found {crashes} in {tmp_path}:\n{log[-4000:]}"
    )
    assert "Done" in log and "runs in" in log, log[-2000:]
