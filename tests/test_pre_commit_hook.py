"""The pre-commit hooks (.pre-commit-hooks.yaml) run `rag-corpus-check
validate` in a repository that uses them: tried with `pre-commit try-repo`
on a throw-away git repository holding the bundled example.

The `language: system` hook is run here (it needs no environment built, so
no network); the `language: python` hook has pre-commit pip-install this
package and its dependencies, which needs the package index, so here only
its manifest entry is checked to be the same command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from act_helpers import require_tool
from support.repos import commit, edit, init

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "kb"
MANIFEST = ROOT / ".pre-commit-hooks.yaml"


def hooks() -> dict[str, dict]:
    return {h["id"]: h for h in yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))}


def test_the_manifest_is_valid():
    tool = require_tool("pre-commit", "pre-commit")
    done = subprocess.run([tool, "validate-manifest", str(MANIFEST)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_both_hooks_run_the_same_command_on_no_file_names():
    found = hooks()
    python, system = found["rag-corpus-check"], found["rag-corpus-check-system"]
    assert (python["language"], system["language"]) == ("python", "system")
    assert python["entry"] == system["entry"] == "rag-corpus-check validate --quiet"
    assert python["pass_filenames"] is system["pass_filenames"] is False


@pytest.fixture
def cli_on_path(tmp_path) -> dict[str, str]:
    """An environment whose `rag-corpus-check` runs this checkout's code (as
    an installed one would), with pre-commit's cache in tmp_path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "rag-corpus-check"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT / "check"}" exec "{sys.executable}" -m rag_corpus_check "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITHUB_", "PRE_COMMIT"))}
    return env | {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "PRE_COMMIT_HOME": str(tmp_path / "cache")}


def try_repo(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    tool = require_tool("pre-commit", "pre-commit")
    return subprocess.run([tool, "try-repo", str(ROOT), "rag-corpus-check-system", "--all-files"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture
def kb_repo(tmp_path) -> Path:
    repo = init(tmp_path / "kb", EXAMPLE)
    commit(repo, "the example")
    return repo


def test_try_repo_passes_on_the_example(kb_repo, cli_on_path):
    if not (ROOT / ".git").exists():
        pytest.skip("try-repo needs this checkout to be a git repository")
    done = try_repo(kb_repo, cli_on_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rag-corpus-check validate (installed)" in done.stdout and "Passed" in done.stdout


def test_try_repo_fails_on_a_label_for_an_unknown_document(kb_repo, cli_on_path):
    if not (ROOT / ".git").exists():
        pytest.skip("try-repo needs this checkout to be a git repository")
    edit(kb_repo / "gold.yaml", "      policy-002: 2\n      faq-004: 1", "      policy-002: 2\n      faq-404: 1")
    commit(kb_repo, "a label on a document that does not exist")
    done = try_repo(kb_repo, cli_on_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout and "INVALID INPUT" in done.stdout
    assert "gold.yaml:" in done.stdout and "[faq-404]" in done.stdout


def test_try_repo_fails_on_a_broken_config(kb_repo, cli_on_path):
    if not (ROOT / ".git").exists():
        pytest.skip("try-repo needs this checkout to be a git repository")
    edit(kb_repo / ".rag-corpus-check.yml", "k: 5", "k: five")
    commit(kb_repo, "k is not a number")
    done = try_repo(kb_repo, cli_on_path)
    assert done.returncode == 1 and ".rag-corpus-check.yml" in done.stdout, done.stdout + done.stderr
