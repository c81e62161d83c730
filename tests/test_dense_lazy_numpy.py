"""numpy is imported only for a dense or hybrid retriever: a BM25 check on
a small knowledge base keeps its start-up time (a fresh interpreter, the
check run in it, then ``sys.modules`` asked)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT
from support.vectors import dense_config, embed_kb

PROBE = ("import sys; from rag_corpus_check.cli import main; code = main(['--quiet', '--output', sys.argv[1]]); "
         "print(code, 'numpy' in sys.modules)")


def _probe(kb, tmp_path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "check")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "r.json")], cwd=kb, env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_bm25_check_never_imports_numpy(kb, tmp_path):
    assert _probe(kb, tmp_path) == "0 False"


@pytest.mark.parametrize("kind", ["dense", "hybrid"])
def test_dense_and_hybrid_import_it(kb, tmp_path, kind):
    embed_kb(kb)
    dense_config(kb, kind)
    assert _probe(kb, tmp_path) == "0 True"
