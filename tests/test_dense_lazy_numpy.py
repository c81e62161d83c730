"""numpy is imported only for a retriever: the built-in BM25 (since issue 23
its scorer adds posting lists with numpy: 27x faster on long questions, for
~0.1 s of import), dense or hybrid. A check of a committed run never imports
it (a fresh interpreter, the check run in it, then ``sys.modules`` asked)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT
from support.vectors import dense_config, embed_kb

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


def test_the_built_in_bm25_imports_it(kb, tmp_path):
    assert _probe(kb, tmp_path) == "0 True"


@pytest.mark.parametrize("kind", ["dense", "hybrid"])
def test_dense_and_hybrid_import_it(kb, tmp_path, kind):
    embed_kb(kb)
    dense_config(kb, kind)
    assert _probe(kb, tmp_path) == "0 True"
