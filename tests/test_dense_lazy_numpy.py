"""numpy is imported only for a retriever that needs it: the built-in BM25
past its small-index crossover (its scorer adds posting lists with numpy
there: 27x faster on long questions, for ~0.06 s of import; a small index
adds them in Python, bit for bit the same), dense or hybrid. A check of the example's committed
run never imports it (a fresh interpreter, the check run in it, then
``sys.modules`` asked); a large gold set's bootstrap does (gate/bootstrap.py,
FAST_DRAWS), whatever ranks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT
from support.vectors import dense_config, embed_kb
from test_startup_imports import large_bm25_kb

PROBE = ("import sys; from rag_corpus_check.commands.cli import main; code = main(['--quiet', '--output', *sys.argv[1:]]); "
         "print(code, 'numpy' in sys.modules)")


def _probe(kb, tmp_path, *argv: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "check")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "r.json"), *argv], cwd=kb, env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_committed_run_check_never_imports_numpy(kb, tmp_path):
    assert _probe(kb, tmp_path, "--config", "committed-run.rag-corpus-check.yml") == "0 False"


def test_the_built_in_bm25_on_the_example_does_not_import_it(kb, tmp_path):
    assert _probe(kb, tmp_path) == "0 False"


def test_the_built_in_bm25_imports_it_past_the_crossover(tmp_path):
    large = large_bm25_kb(tmp_path / "large")
    assert _probe(large, tmp_path, "--config", "bm25.rag-corpus-check.yml") == "0 True"


@pytest.mark.parametrize("kind", ["dense", "hybrid"])
def test_dense_and_hybrid_import_it(kb, tmp_path, kind):
    embed_kb(kb)
    dense_config(kb, kind)
    assert _probe(kb, tmp_path) == "0 True"
