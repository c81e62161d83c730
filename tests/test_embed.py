"""`rag-corpus-check embed` (the trusted side of dense retrieval) on the
bundled example, with a tiny deterministic embedding command written here
(tokens hashed into 8 dimensions): a new folder the check then accepts, an
edited record re-embedded alone (the command's input lines counted), and a
command whose output does not fit — exit 2, the folder left byte for byte."""

from __future__ import annotations

import json
import shlex
import sys

import numpy as np
import pytest
import yaml

from conftest import check
from support.repos import edit
from support.vectors import dense_config

MODEL = "toy-hash-8"
EMBEDDER = r'''
import hashlib, json, sys
mode, log = sys.argv[1], sys.argv[2]
src = open(sys.argv[3], encoding="utf-8") if len(sys.argv) > 3 else sys.stdin
out = open(sys.argv[4], "w") if len(sys.argv) > 4 else sys.stdout
lines = [json.loads(line) for line in src]
with open(log, "a") as f:
    f.write(f"{len(lines)}\n")
for i, rec in enumerate(lines):
    v = [0.0] * 8
    for tok in rec["text"].lower().split():
        h = hashlib.sha256(tok.encode()).digest()
        v[h[0] % 8] += 1.0 if h[1] % 2 else -1.0
    v[7] += 0.5 if rec["kind"] == "document" else 0.25
    if mode == "dims":
        v = v[:7]
    if mode == "nan" and i == 0:
        v[0] = float("nan")
    if mode == "zero" and i == 0:
        v = [0] * 8
    if mode == "short" and i == len(lines) - 1:
        break
    if mode == "huge":
        v[0] = 1e6
    out.write(json.dumps(v) + "\n")
sys.exit(3 if mode == "exit" else 0)
'''


@pytest.fixture
def embedder(tmp_path):
    script = tmp_path / "embedder.py"
    script.write_text(EMBEDDER)
    log = tmp_path / "calls.log"

    def command(mode: str = "ok", files: bool = False) -> str:
        argv = [sys.executable, str(script), mode, str(log)] + (["{input}", "{output}"] if files else [])
        return shlex.join(argv)

    command.calls = lambda: [int(n) for n in log.read_text().split()] if log.exists() else []  # type: ignore[attr-defined]
    return command


@pytest.fixture
def dense_kb(kb):
    dense_config(kb, model=MODEL)
    path = kb / ".rag-corpus-check.yml"
    cfg = yaml.safe_load(path.read_text())
    cfg["thresholds"] = {name: 0.0 for name in cfg["thresholds"]}  # made-up vectors: freshness is the point
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return kb


def embed(capsys, *argv: str) -> tuple[int, str]:
    from rag_corpus_check.commands.cli import main

    code = main(["embed", *argv])
    return code, capsys.readouterr().out


def init(capsys, command: str, *extra: str) -> tuple[int, str]:
    return embed(capsys, "--init", "--model", MODEL, "--dimensions", "8", "--command", command, *extra)


def snapshot(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_without_a_folder_it_says_how_to_make_one(dense_kb, capsys):
    code, out = embed(capsys)
    assert code == 2 and "--init --model toy-hash-8" in out and "INVALID INPUT" in out


def test_init_makes_a_folder_the_check_accepts(dense_kb, tmp_path, capsys, embedder):
    code, out = init(capsys, embedder())
    assert code == 0, out
    assert embedder.calls() == [41]  # 26 served records (3 are stale) + 15 questions, in one run
    assert "embedded 41 texts" in out and "  questions without a vector row: 15 (the first: gold.yaml:9 `q01`)" in out
    folder = dense_kb / "vectors"
    assert json.loads((folder / "model.json").read_text()) == {"model": MODEL, "dimensions": 8}
    assert np.load(folder / "documents.npy").dtype == np.float32
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temporary file left
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0, text
    assert results["run_source"]["type"] == "dense" and results["run_source"]["model"] == MODEL
    code, out = embed(capsys, "--command", embedder())
    assert code == 0 and "every text has a current vector" in out and embedder.calls() == [41]


def test_an_edited_record_is_re_embedded_alone(dense_kb, tmp_path, capsys, embedder):
    assert init(capsys, embedder())[0] == 0
    folder = dense_kb / "vectors"
    before = np.load(folder / "documents.npy")
    edit(dense_kb / "corpus.jsonl", "Standard at $0.018 per GB-month", "Standard at $0.020 per GB-month")
    assert check(tmp_path, capsys)[0] == 2  # stale: the gate refuses
    code, out = embed(capsys)  # the dry run: listed, exit 1, nothing run
    assert code == 1 and "  documents with a stale vector (the text changed): 1 (the first: corpus.jsonl:1 `faq-001`)" in out
    assert embedder.calls() == [41]
    code, out = embed(capsys, "--command", embedder())
    assert code == 0 and "embedded 1 texts" in out, out
    assert embedder.calls() == [41, 1]
    after = np.load(folder / "documents.npy")
    assert after[1:].tobytes() == before[1:].tobytes() and after[0].tobytes() != before[0].tobytes()
    assert check(tmp_path, capsys)[0] == 0


def test_a_gone_record_loses_its_row_and_a_new_one_gets_one(dense_kb, tmp_path, capsys, embedder):
    assert init(capsys, embedder(files=True))[0] == 0  # the {input} / {output} form
    lines = (dense_kb / "corpus.jsonl").read_text().splitlines(keepends=True)
    new = json.dumps({"id": "faq-new", "text": "a new answer", "type": "faq", "status": "active",
                      "snapshot": "2026-11-30"}) + "\n"
    (dense_kb / "corpus.jsonl").write_text("".join(lines[:4] + lines[5:]) + new)  # faq-005 gone
    code, out = embed(capsys, "--command", embedder())
    assert code == 0 and "embedded 1 texts, dropped 1 rows" in out, out
    ids = [json.loads(line)["id"] for line in (dense_kb / "vectors" / "documents.jsonl").read_text().splitlines()]
    assert "faq-005" not in ids and ids[-1] == "faq-new" and len(ids) == 26
    code, text, results, _ = check(tmp_path, capsys)
    errors = [p for p in results["problems"] if p["severity"] == "error"]
    assert code == 2 and errors and all(p["id"] == "faq-005" and "vector" not in p["message"] for p in errors), text


@pytest.mark.parametrize(("mode", "message"), [
    ("dims", "not a JSON array of 8 numbers"),
    ("nan", "not a JSON array of 8 numbers"),  # NaN is no JSON number
    ("zero", "all zeros"),
    ("short", "wrote 0 lines for 1 texts"),
    ("exit", "exited with status 3"),
    ("huge", "a NaN or infinite value (in float16)"),  # 1e6 overflows float16
])
def test_output_that_does_not_fit_changes_nothing(dense_kb, capsys, embedder, mode, message):
    assert init(capsys, embedder(), "--dtype", "float16")[0] == 0
    folder = dense_kb / "vectors"
    edit(dense_kb / "corpus.jsonl", "Standard at $0.018 per GB-month", "Standard at $0.020 per GB-month")
    before = snapshot(folder)
    code, out = embed(capsys, "--command", embedder(mode))
    assert code == 2 and message in out and "nothing was written" in out, out
    assert snapshot(folder) == before


def test_a_new_folder_is_not_written_from_short_output(dense_kb, capsys, embedder):
    code, out = init(capsys, embedder("short"))
    assert code == 2 and "wrote 40 lines for 41 texts" in out
    assert not (dense_kb / "vectors" / "model.json").exists()


def test_float16_folders_stay_float16(dense_kb, tmp_path, capsys, embedder):
    assert init(capsys, embedder(), "--dtype", "float16")[0] == 0
    edit(dense_kb / "gold.yaml", "How long are deleted backups kept?", "How long do deleted backups stay?")
    code, out = embed(capsys, "--command", embedder())
    assert code == 0 and "  questions with a stale vector (the text changed): 1 (the first: gold.yaml:9 `q01`)" in out
    assert np.load(dense_kb / "vectors" / "questions.npy").dtype == np.float16
    assert check(tmp_path, capsys)[0] == 0


@pytest.mark.parametrize("event", ["pull_request", "pull_request_target", "issue_comment"])
def test_it_refuses_to_run_on_a_pull_request(dense_kb, capsys, embedder, monkeypatch, event):
    monkeypatch.setenv("GITHUB_EVENT_NAME", event)
    code, out = init(capsys, embedder())
    assert code == 2 and f"refusing to run under `{event}`" in out and embedder.calls() == []
    code, out = init(capsys, embedder(), "--allow-untrusted-event")
    assert code == 0, out


def test_push_is_allowed(dense_kb, capsys, embedder, monkeypatch):
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    assert init(capsys, embedder())[0] == 0


def test_init_checks_its_arguments(dense_kb, capsys, embedder):
    code, out = embed(capsys, "--init", "--model", "other", "--dimensions", "8", "--command", embedder())
    assert code == 2 and "must be the config's `retriever.model`" in out
    code, out = embed(capsys, "--init", "--model", MODEL, "--command", embedder())
    assert code == 2 and "--dimensions from 1 to" in out
    assert init(capsys, embedder())[0] == 0
    code, out = init(capsys, embedder())
    assert code == 2 and "drop --init" in out


def test_a_bm25_config_is_refused(kb, capsys):
    code, out = embed(capsys)
    assert code == 2 and "`retriever.type: dense` or `hybrid`" in out


def test_a_missing_command_or_placeholder_is_exit_2(dense_kb, capsys, embedder):
    code, out = init(capsys, "no-such-embedder-here --fast")
    assert code == 2 and "embedding command not found: `no-such-embedder-here`" in out
    code, out = init(capsys, embedder() + " {texts}")
    assert code == 2 and "unknown placeholder" in out
    assert not (dense_kb / "vectors" / "model.json").exists()


def test_a_hybrid_config_is_embedded_too(dense_kb, tmp_path, capsys, embedder):
    path = dense_kb / ".rag-corpus-check.yml"
    path.write_text(path.read_text().replace("type: dense", "type: hybrid"))
    assert init(capsys, embedder())[0] == 0
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0 and results["run_source"]["type"] == "hybrid", text


def test_the_command_sees_no_runner_files_but_keeps_its_key():
    from rag_corpus_check.retrieval.dense.embed_run import trusted_environment

    env = trusted_environment({"GITHUB_OUTPUT": "/x", "GITHUB_ENV": "/y", "ACTIONS_RUNTIME_TOKEN": "t",
                               "INPUT_CONFIG": "c", "OPENAI_API_KEY": "k", "HF_TOKEN": "h", "GITHUB_SHA": "s"})
    assert env == {"OPENAI_API_KEY": "k", "HF_TOKEN": "h", "GITHUB_SHA": "s"}


def test_ids_are_printed_safely(dense_kb, capsys, embedder):
    with (dense_kb / "corpus.jsonl").open("a") as f:
        f.write(json.dumps({"id": "::error::owned", "text": "x", "status": "active", "snapshot": "2026-11-30"}) + "\n")
    assert init(capsys, embedder())[0] == 0
    with (dense_kb / "corpus.jsonl").open("a") as f:
        f.write(json.dumps({"id": "##[error]owned", "text": "y", "status": "active", "snapshot": "2026-11-30"}) + "\n")
    code, out = embed(capsys)
    assert code == 1 and "##[" not in out and not any(line.lstrip().startswith("::") for line in out.splitlines())


def test_many_texts_to_embed_are_counted_not_listed(dense_kb, capsys, embedder):
    """Was a line per text (200 lines, then "… and 3756 more"): a line per
    kind and reason, with the first of them."""
    assert init(capsys, embedder())[0] == 0
    docs = [json.loads(line) for line in (dense_kb / "corpus.jsonl").read_text().splitlines()]
    (dense_kb / "corpus.jsonl").write_text("".join(json.dumps({**d, "text": d["text"] + " (edited)"}) + "\n"
                                                   for d in docs))
    edit(dense_kb / "gold.yaml", "How long are deleted backups kept?", "How long do deleted backups stay?")
    code, out = embed(capsys)
    served = sum(d.get("status", "active") == "active" for d in docs)
    assert code == 1 and out.splitlines() == [
        f"  documents with a stale vector (the text changed): {served} (the first: corpus.jsonl:1 `faq-001`)",
        "  questions with a stale vector (the text changed): 1 (the first: gold.yaml:9 `q01`)",
        f"rag-corpus-check embed: {served + 1} texts need a vector; run again with --command \"<your embedding "
        "command>\" to embed them",
    ], out
