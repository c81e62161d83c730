"""Dense retrieval under act, as a consumer's pull request runs it: a PR
that adds a document with its vector passes and says how many vectors it
supplied; a PR that edits an unchanged document's vector fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from act_helpers import GATE_STEP, consumer_workflow, copy_repository, make_consumer_repo, run_act
from conftest import ROOT
from support.vectors import dense_config, embed_kb

NEW_DOC = {"id": "faq-new", "text": "Deleted backups are kept for 30 days in the recycle bin.", "type": "faq",
           "status": "active", "snapshot": "2026-11-30"}


@pytest.fixture(scope="module")
def action(tmp_path_factory) -> Path:
    return copy_repository(tmp_path_factory.mktemp("rag-corpus-check-action"))


def dense_kb(path: Path) -> Path:
    shutil.copytree(ROOT / "examples" / "kb", path)
    embed_kb(path)
    dense_config(path)
    return path


def files_of(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def _run(tmp_path: Path, action: Path, base: Path, head: Path):
    repo = make_consumer_repo(tmp_path / "repo", files_of(head), consumer_workflow(), base_files=files_of(base))
    return run_act(repo, tmp_path, action_dir=action)


def test_a_pr_that_adds_a_document_with_its_vector_passes_and_names_it(tmp_path, action):
    base = dense_kb(tmp_path / "base")
    head = dense_kb(tmp_path / "head")
    with (head / "corpus.jsonl").open("a") as f:
        f.write(json.dumps(NEW_DOC) + "\n")
    embed_kb(head)
    run = _run(tmp_path, action, base, head)
    assert run.job_result == "success", run.describe()
    assert run.outputs([GATE_STEP])["verdict"] == "pass"
    summary = run.summary()
    assert "Vectors this PR supplied (new or changed texts, taken on trust): 1: document faq\\-new" in summary


def test_a_pr_that_edits_an_unchanged_documents_vector_fails(tmp_path, action):
    base = dense_kb(tmp_path / "base")
    head = dense_kb(tmp_path / "head")
    m = np.load(head / "vectors" / "documents.npy")
    m.view(np.uint32)[4, 0] ^= 1
    np.save(head / "vectors" / "documents.npy", m)
    run = _run(tmp_path, action, base, head)
    assert run.job_result == "failure", run.describe()
    assert run.outputs([GATE_STEP])["verdict"] == "fail"
    assert "the vectors of 1 unchanged texts differ from the base" in run.summary()
