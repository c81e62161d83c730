"""ruff over the package and the tests (rules in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, in_ci


def _ruff():
    exe = Path(sys.executable).parent / "ruff"
    return str(exe) if exe.exists() else shutil.which("ruff")


def test_ruff_clean():
    ruff = _ruff()
    if ruff is None:
        if in_ci():
            pytest.fail("ruff is not installed (it is in the test extras)")
        pytest.skip("ruff not installed")
    res = subprocess.run([ruff, "check", "check", "tests"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
