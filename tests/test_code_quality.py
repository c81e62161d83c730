"""The code checked like its behaviour: ruff clean, types checked (mypy,
configured in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, in_ci


def _tool(name: str) -> str:
    exe = Path(sys.executable).parent / name
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        if in_ci():
            pytest.fail(f"{name} is not installed (it is in the test extras)")
        pytest.skip(f"{name} not installed")
    return found


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_clean():
    res = _run(_tool("ruff"), "check", "check", "tests", "bench", "fuzz", "tools")
    assert res.returncode == 0, res.stdout + res.stderr


def test_types_check():
    res = _run(_tool("mypy"))
    assert res.returncode == 0, res.stdout + res.stderr
