"""The store found by text under act, as a consumer's pull request runs it:
the key comes from `secrets` through the gate step's `env:`, the page the
PR adds is embedded in the job by the base's endpoint (a real loopback
server with a real small model), and the key appears nowhere in the job's
output — not even masked (act, like GitHub, prints `***` for a secret it
finds in the log; none may be found)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from act_helpers import GATE_STEP, consumer_workflow, copy_repository, make_consumer_repo, run_act
from conftest import ROOT
from support.embed_server import DIMENSIONS, MODEL, EmbedServer

pytest.importorskip("static_model", reason="tokenlearn-static-model (the test extra, Linux x86-64) is not installed")

from rag_corpus_check.commands.cli import main

KEY = "sk-act-5d1c0ffee5d1c0ffee-key"
NEW_DOC = {"id": "faq-new", "title": "How long is the Trash kept?",
           "text": "Deleted backups stay in the Trash for 30 days before they are purged.", "type": "faq",
           "status": "active", "snapshot": "2026-11-30"}
GATE = "      - uses: org/rag-corpus-check@v1\n"


@pytest.fixture(scope="module")
def action(tmp_path_factory) -> Path:
    return copy_repository(tmp_path_factory.mktemp("rag-corpus-check-action"))


def store_kb(path: Path, url: str, monkeypatch) -> Path:
    shutil.copytree(ROOT / "examples" / "kb", path)
    cfg = yaml.safe_load((path / ".rag-corpus-check.yml").read_text())
    cfg["thresholds"] = {"P@5": 0.1, "R@5": 0.3, "nDCG@5": 0.25}
    cfg["retriever"] = {"type": "hybrid", "vectors": "store", "model": MODEL, "embed": ["title", "text"],
                        "endpoint": {"url": url, "key_env": "EMBEDDING_API_KEY", "timeout": 30}}
    (path / ".rag-corpus-check.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    monkeypatch.chdir(path)
    monkeypatch.setenv("EMBEDDING_API_KEY", KEY)
    assert main(["embed", "--init", "--store", "--model", MODEL, "--dimensions", str(DIMENSIONS), "--endpoint"]) == 0
    monkeypatch.delenv("EMBEDDING_API_KEY")
    return path


def files_of(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_key_from_secrets_embeds_the_new_page_and_is_never_printed(tmp_path, action, monkeypatch, capsys):
    with EmbedServer() as server:
        base = store_kb(tmp_path / "base", server.url, monkeypatch)
        head = tmp_path / "head"
        shutil.copytree(base, head)
        with (head / "corpus.jsonl").open("a") as f:
            f.write(json.dumps(NEW_DOC) + "\n")
        server.seen.requests, server.seen.keys = 0, []
        workflow = consumer_workflow()
        assert GATE in workflow, "fixture layout changed"
        workflow = workflow.replace(GATE, GATE + "        env:\n"
                                    "          EMBEDDING_API_KEY: ${{ secrets.EMBEDDING_API_KEY }}\n")
        repo = make_consumer_repo(tmp_path / "repo", files_of(head), workflow, base_files=files_of(base))
        monkeypatch.chdir(tmp_path)
        monkeypatch.delenv("EMBEDDING_API_KEY", raising=False)
        run = run_act(repo, tmp_path, action_dir=action, extra_args=["--secret", f"EMBEDDING_API_KEY={KEY}"])
    capsys.readouterr()
    assert run.job_result == "success", run.describe()
    assert run.outputs([GATE_STEP])["verdict"] == "pass"
    assert server.seen.requests == 1 and server.seen.keys == [f"Bearer {KEY}"]
    assert "1 text embedded in the job by 127.0.0.1 (" in run.summary()
    everything = run.stdout + run.stderr
    assert KEY not in everything and "***" not in everything
