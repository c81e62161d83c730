"""The code's shape, checked like its behaviour: ruff clean, types checked
(mypy, configured in pyproject.toml), modules a reader can hold (at most 400
lines), functions small enough to read at once (radon: cyclomatic complexity
at most 15 each, at most 3.5 on average)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, in_ci

PACKAGE = ROOT / "check" / "rag_corpus_check"
MAX_MODULE_LINES = 400
MAX_COMPLEXITY = 15
MAX_MEAN_COMPLEXITY = 3.5


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


def test_modules_are_at_most_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, long


def _blocks():
    res = _run(_tool("radon"), "cc", "--json", str(PACKAGE))
    assert res.returncode == 0, res.stderr
    found = [(file, b["name"], b["complexity"]) for file, blocks in json.loads(res.stdout).items() for b in blocks]
    assert len(found) > 300, "radon measured too little"
    return found


def test_no_function_is_above_complexity_15():
    over = [(f, name, c) for f, name, c in _blocks() if c > MAX_COMPLEXITY]
    assert over == [], over


def test_mean_complexity_is_at_most_3_5():
    blocks = _blocks()
    mean = sum(c for *_, c in blocks) / len(blocks)
    assert mean <= MAX_MEAN_COMPLEXITY, f"mean complexity {mean:.3f} over {len(blocks)} blocks"
