"""What the bundled example's check imports: only what that run needs.

Start-up is most of a small check's time, and most of start-up is imports.
These tests count the modules a whole CLI run leaves in ``sys.modules`` (in a
fresh, isolated interpreter) instead of timing anything: the base-comparison
machinery only with ``--base``, the command runner only for a command
retriever, numpy only for a retriever that ranks (BM25, dense, hybrid), never
jsonschema for valid inputs — and ceilings on the counts, so a new import on
this path is a decision someone takes (raise the ceiling in the same change,
with the reason) rather than an accident.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLE, ROOT

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate

from rag_corpus_check.retrieval.bm25 import SMALL_POSTINGS, tokenize
from support.repos import git

LAUNCH = ROOT / "check" / "launch.py"
# Never needed by a check without --base (reading and checking the base), nor
# by one without a retriever command, nor by valid inputs (jsonschema words
# schema errors), nor the embed subcommand (the trusted side). Module names in
# the flat layout and in the one by concern (base/, retrieval/, commands/).
BASE_ONLY = {"rag_corpus_check.base.head_vs_base", "rag_corpus_check.base.tree", "rag_corpus_check.gate.compare",
             "rag_corpus_check.gate.significance"}
NEVER_HERE = {"rag_corpus_check.retrieval.external", "rag_corpus_check.retrieval.reaper", "rag_corpus_check.commands.embed",
              "jsonschema", "referencing"}
# Standard modules the example's run does without: git (subprocess) runs only
# in a checkout, tempfile only without --output or for a command, gzip only
# for a .gz input, and argparse's width is asked without shutil.
STDLIB_NEVER_HERE = {"subprocess", "tempfile", "gzip", "shutil", "secrets"}
# Ceilings (counted when this test was written, CPython 3.13): our modules, the
# standard library's, and exactly which other packages. Lower them when you
# remove imports; raising one is a decision, with its reason in the change.
MAX_OURS = 66  # 11 of them are the folders' __init__ modules (64 for the committed run; one is
# commands.help_format, which spares argparse's shutil import, 7 standard modules)
# (runpy here). Lowered from 130 and 141: no subprocess, tempfile, gzip or
# secrets without a git checkout, a command, a .gz input or --github, no
# shutil (bz2, lzma) for argparse, and no numpy for the example's small BM25 index.
MAX_STDLIB = {"committed-run.rag-corpus-check.yml": 114, ".rag-corpus-check.yml": 114}
# numpy only where BM25's index is past its small-index crossover (not the example's).
PACKAGES = {"committed-run.rag-corpus-check.yml": {"yaml"}, ".rag-corpus-check.yml": {"yaml"}}

# launch.py, as the action runs it; the CLI ends with os._exit, which prints
# the modules loaded by then, and those the interpreter had loaded before the
# check started (its site hooks: a .pth file such as setuptools'
# distutils-precedence.pth, which imports _distutils_hack in a venv that has
# setuptools — the one Python 3.11's venv makes).
SCRIPT = """
import sys
at_start = sorted(sys.modules)
import json, os, runpy
exit_now = os._exit
def report(code):
    print(json.dumps({"code": code, "modules": sorted(sys.modules), "at_start": at_start}), flush=True)
    exit_now(0)
os._exit = report
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def imported(cwd, *argv: str) -> tuple[int, set[str]]:
    """Exit code and every module loaded by one whole CLI run, in a fresh
    isolated interpreter (no PYTHON* variables, no user site), less the
    packages outside the standard library the interpreter's start-up loaded
    before the run (site hooks of the environment, not imports of the check)."""
    done = subprocess.run([sys.executable, "-I", "-c", SCRIPT, str(LAUNCH), *argv, "--quiet", "--no-github"],
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    hooks = {m for m in report["at_start"] if m.split(".")[0] not in sys.stdlib_module_names} - {"__main__"}
    return report["code"], set(report["modules"]) - hooks


@pytest.fixture
def example(tmp_path):
    dest = tmp_path / "kb"
    shutil.copytree(EXAMPLE, dest)
    return dest


def ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] == "rag_corpus_check"}


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def stdlib(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in sys.stdlib_module_names or m == "__main__"}


@pytest.mark.parametrize("config", list(PACKAGES))
def test_the_example_check_imports_only_what_it_needs(example, tmp_path, config):
    code, modules = imported(example, "--config", config, "--output", str(tmp_path / "r.json"))
    assert code == 0
    assert not modules & BASE_ONLY, sorted(modules & BASE_ONLY)
    assert not (modules | tops(modules)) & NEVER_HERE, sorted((modules | tops(modules)) & NEVER_HERE)
    assert not modules & STDLIB_NEVER_HERE, sorted(modules & STDLIB_NEVER_HERE)
    others = tops(modules - stdlib(modules) - ours(modules)) - {"cython_runtime"} - {
        m for m in tops(modules) if m.startswith("_cython_")}  # (numpy's and yaml's Cython runtime)
    assert others == PACKAGES[config], "numpy only for a large BM25 index, jsonschema only for invalid input"
    assert len(ours(modules)) <= MAX_OURS, sorted(ours(modules))
    if sys.version_info[:2] == (3, 13):  # other versions import other standard modules
        assert len(stdlib(modules)) <= MAX_STDLIB[config], sorted(stdlib(modules))


def test_the_base_machinery_comes_with_base(example, tmp_path):
    """The other side of the lazy import: with --base it is there (and works)."""
    git(example, "init", "--quiet")
    git(example, "add", "-A")
    git(example, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "--quiet", "-m", "base")
    code, modules = imported(example, "--config", "committed-run.rag-corpus-check.yml", "--base", "HEAD",
                             "--output", str(tmp_path / "r.json"))
    assert code == 0
    assert len(BASE_ONLY & modules) == 4, sorted(BASE_ONLY & modules)
    assert "numpy" not in modules and "jsonschema" not in tops(modules)


def large_bm25_kb(dest):
    """bench/generate.py's data, its corpus past BM25's small-index crossover
    (3,000 documents of 60-100 words: ~150k postings)."""
    generate(str(dest), 3000, 10, depth=20)
    return dest


def test_numpy_comes_with_a_large_bm25_index(tmp_path):
    """The other side of the crossover: past SMALL_POSTINGS the scorer is numpy's."""
    kb = large_bm25_kb(tmp_path / "large")
    code, modules = imported(kb, "--config", "bm25.rag-corpus-check.yml", "--output", str(tmp_path / "r.json"))
    assert code == 0
    assert "numpy" in modules
    with open(kb / "corpus.jsonl", encoding="utf-8") as f:
        docs = [d for d in map(json.loads, f) if d["status"] == "active"]
    assert sum(len(set(tokenize(f"{d['title']}\n{d['text']}"))) for d in docs) > SMALL_POSTINGS  # past it


@pytest.mark.parametrize("columns", [None, "120", "30", "0", "-5", "wide"])
def test_the_help_width_is_the_one_shutil_finds(monkeypatch, columns):
    """commands.help_format asks the terminal's width as shutil does, without it."""
    import shutil

    from rag_corpus_check.commands.help_format import RawDescriptionHelpFormatter, terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
    assert RawDescriptionHelpFormatter("p")._width == terminal_columns() - 2
