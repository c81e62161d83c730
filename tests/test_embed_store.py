"""A vector store found by text hash, with texts the store lacks embedded in
the job through the base's OpenAI-compatible endpoint: real throw-away git
repositories checked with --base, a real loopback server computing vectors
with a real small model (tests/support/embed_server.py) that counts what it
receives."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import yaml

from conftest import check
from support.embed_server import DIMENSIONS, MODEL, EmbedServer
from support.repos import commit, git

pytest.importorskip("static_model", reason="tokenlearn-static-model (the test extra, Linux x86-64) is not installed")

from rag_corpus_check.commands.cli import main

CONFIG = ".rag-corpus-check.yml"
KEY_ENV = "EMBEDDING_API_KEY"
KEY = "sk-live-abcdef0123456789-never-printed"
NEW_DOC = {"id": "faq-new", "title": "How long is the Trash kept?",
           "text": "Deleted backups stay in the Trash for 30 days before they are purged.", "type": "faq",
           "status": "active", "snapshot": "2026-11-30"}


def store_config(kb, url: str, **retriever) -> None:
    cfg = yaml.safe_load((kb / CONFIG).read_text())
    cfg["thresholds"] = {"P@5": 0.1, "R@5": 0.3, "nDCG@5": 0.25}
    cfg["retriever"] = {"type": "dense", "vectors": "store", "model": MODEL, "embed": ["title", "text"],
                        "depth": 100, "endpoint": {"url": url, "key_env": KEY_ENV, "timeout": 10}, **retriever}
    (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))


def embed(capsys, *argv: str) -> tuple[int, str]:
    code = main(["embed", "--config", CONFIG, *argv])
    return code, capsys.readouterr().out


def base_with_store(kb, capsys, monkeypatch, server: EmbedServer, **retriever) -> str:
    """The example with a full store, embedded by `embed --init --store --endpoint` (the push-to-main job)."""
    store_config(kb, server.url, **retriever)
    monkeypatch.setenv(KEY_ENV, KEY)
    code, out = embed(capsys, "--init", "--store", "--model", MODEL, "--dimensions", str(DIMENSIONS), "--endpoint")
    assert code == 0, out
    monkeypatch.delenv(KEY_ENV)
    server.seen.requests, server.seen.texts, server.seen.keys = 0, [], []
    return commit(kb, "base")


def add_doc(kb, doc: dict, first: bool = False) -> None:
    lines = (kb / "corpus.jsonl").read_text().splitlines(keepends=True)
    line = json.dumps(doc) + "\n"
    (kb / "corpus.jsonl").write_text("".join([line, *lines] if first else [*lines, line]))


def no_key_anywhere(*texts: str) -> None:
    for text in texts:
        assert KEY not in text


def test_push_to_main_embed_fills_the_store_once_and_prints_a_summary(kb, capsys, monkeypatch):
    with EmbedServer() as server:
        store_config(kb, server.url)
        monkeypatch.setenv(KEY_ENV, KEY)
        code, out = embed(capsys, "--init", "--store", "--model", MODEL, "--dimensions", str(DIMENSIONS),
                          "--endpoint")
        assert code == 0 and len(out.splitlines()) == 3, out  # a summary, not a line per text
        assert "0 vectors in 0 segments; 41 texts ranked, 41 without a vector (26 documents, 15 questions)" in out
        assert "embedded 41 texts through 127.0.0.1 (" in out and "added 41 vectors as segment segments/" in out
        assert server.seen.requests == 1 and len(server.seen.texts) == 41
        code, out = embed(capsys, "--endpoint", "--compact")
        assert code == 0 and server.seen.requests == 1, out  # nothing left to embed
        assert "41 vectors in 1 segment; 41 texts ranked, 0 without a vector" in out
    no_key_anywhere(out)
    segments = sorted(p.name for p in (kb / "store" / "segments").iterdir())
    assert len(segments) == 2 and segments[0].endswith(".jsonl")


def test_a_pr_that_adds_a_page_is_embedded_in_the_job_with_no_vector_in_the_pr(kb, tmp_path, capsys, monkeypatch):
    with EmbedServer() as server:
        base = base_with_store(kb, capsys, monkeypatch, server)
        add_doc(kb, NEW_DOC)
        commit(kb, "head: a new page, no vector")
        monkeypatch.setenv(KEY_ENV, KEY)
        code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert server.seen.requests == 1 and server.seen.texts == [NEW_DOC["title"] + "\n" + NEW_DOC["text"]]
    embedding = results["run_source"]["embedding"]
    assert embedding["texts"] == 1 and embedding["host"] == "127.0.0.1" and embedding["tokens"] > 0
    assert embedding["from_store"] == 41 and embedding["embedded_rows"] == 1 and embedding["from_pr"] == 0
    assert results["run_source"]["vectors_check"]["supplied"] == 0
    assert "41 vectors found in the store by text, 1 text embedded in the job by 127.0.0.1 (" in text
    assert "1 text embedded in the job by 127.0.0.1 (" in summary
    no_key_anywhere(text, summary, json.dumps(results))


def test_a_move_embeds_nothing(kb, tmp_path, capsys, monkeypatch):
    with EmbedServer() as server:
        base = base_with_store(kb, capsys, monkeypatch, server)
        lines = (kb / "corpus.jsonl").read_text().splitlines(keepends=True)
        moved = [json.loads(line) for line in lines if '"runbook-001"' in line][0]
        rest = [line for line in lines if '"runbook-001"' not in line]
        moved["id"] = "runbooks/restore-001"
        (kb / "corpus.jsonl").write_text(json.dumps(moved) + "\n" + "".join(rest))
        commit(kb, "head: a page renamed and moved")
        monkeypatch.setenv(KEY_ENV, KEY)
        code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert server.seen.requests == 0 and results["run_source"]["embedding"]["texts"] == 0


def _flip_every_bit_of(kb) -> None:
    for npy in (kb / "store" / "segments").glob("*.npy"):
        m = np.load(npy)
        m[:] = -m  # every vector of the PR's store turned around
        np.save(npy, m)


def test_a_pr_that_edits_stored_vectors_of_unchanged_texts_changes_nothing(kb, tmp_path, capsys, monkeypatch):
    with EmbedServer() as server:
        base = base_with_store(kb, capsys, monkeypatch, server)
        commit(kb, "head: nothing changed")
        _, _, untouched, _ = check(tmp_path / "a", capsys, "--base", base)
        _flip_every_bit_of(kb)
        commit(kb, "head: every stored vector edited")
        code, text, edited, _ = check(tmp_path / "b", capsys, "--base", base)
    assert code == 0, text
    assert edited["per_question"] == untouched["per_question"] and edited["metrics"] == untouched["metrics"]
    assert server.seen.requests == 0


def test_a_pr_that_points_the_endpoint_elsewhere_sends_the_key_nowhere_else(kb, tmp_path, capsys, monkeypatch):
    with EmbedServer() as server, EmbedServer() as elsewhere:
        base = base_with_store(kb, capsys, monkeypatch, server)
        add_doc(kb, NEW_DOC)
        cfg = yaml.safe_load((kb / CONFIG).read_text())
        cfg["retriever"]["endpoint"]["url"] = elsewhere.url
        cfg["rule_change_reason"] = "our own embedding proxy from now on"
        (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
        commit(kb, "head: the endpoint points elsewhere")
        monkeypatch.setenv(KEY_ENV, KEY)
        code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert elsewhere.seen.requests == 0 and elsewhere.seen.keys == []
    assert server.seen.requests == 1 and server.seen.keys == [f"Bearer {KEY}"]
    assert code == 0 and results["rules_source"] == "head-override", text
    assert "`retriever.endpoint` http" in summary  # the change is shown as a rule change


def test_without_the_key_a_text_the_store_lacks_is_an_input_error_saying_what_to_do(kb, tmp_path, capsys,
                                                                                    monkeypatch):
    with EmbedServer() as server:
        base = base_with_store(kb, capsys, monkeypatch, server)
        add_doc(kb, NEW_DOC)
        commit(kb, "head: a fork's PR (no secrets)")
        code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2 and server.seen.requests == 0, text
    first, then = results["problems"][:2]
    assert (first["file"], first["line"], first["id"]) == ("corpus.jsonl", 31, "faq-new")
    assert first["message"] == "has no vector: its text is not in the store in `store`"
    assert then["message"].startswith("1 text has no vector in the store `store` (this job has no key in "
                                      "$EMBEDDING_API_KEY): give this job the key in $EMBEDDING_API_KEY (a fork's "
                                      "pull request gets no secrets); run `rag-corpus-check embed --endpoint`")


def test_a_base_that_allows_pr_vectors_takes_them_listed_on_trust(kb, tmp_path, capsys, monkeypatch):
    with EmbedServer() as server:
        base = base_with_store(kb, capsys, monkeypatch, server, accept_pr_vectors=True)
        add_doc(kb, NEW_DOC)
        monkeypatch.setenv(KEY_ENV, KEY)
        assert embed(capsys, "--endpoint")[0] == 0  # the writer embeds it on the branch
        monkeypatch.delenv(KEY_ENV)
        commit(kb, "head: a page and its vector")
        code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    trust = results["run_source"]["vectors_check"]
    assert trust["supplied"] == 1 and trust["supplied_ids"]["documents"] == ["faq-new"]
    assert "Vectors this PR supplied (new or changed texts, taken on trust): 1: document faq-new" in text


def test_two_branches_adding_different_pages_merge_without_a_conflict(kb, tmp_path, capsys, monkeypatch):
    other = dict(NEW_DOC, id="faq-other", title="Can I export invoices?", text="Invoices export as PDF or CSV.")
    with EmbedServer() as server:
        base_with_store(kb, capsys, monkeypatch, server)
        monkeypatch.setenv(KEY_ENV, KEY)
        for branch, doc, first in (("a", NEW_DOC, True), ("b", other, False)):
            git(kb, "checkout", "-q", "-b", branch, "main")
            add_doc(kb, doc, first)
            assert embed(capsys, "--endpoint")[0] == 0
            commit(kb, f"{branch}: a page and its vector")
        git(kb, "checkout", "-q", "main")
        git(kb, "merge", "-q", "--no-edit", "a")
        git(kb, "merge", "-q", "--no-edit", "b")  # raises on a conflict
        requests = server.seen.requests
        code, out = embed(capsys)
        assert code == 0 and "43 texts ranked, 0 without a vector" in out, out
        assert "in 3 segments" in out
        code, text, _, _ = check(tmp_path, capsys)
        assert code == 0 and server.seen.requests == requests, text


def test_an_endpoint_that_fails_is_exit_3_naming_the_host(kb, tmp_path, capsys, monkeypatch):
    with EmbedServer() as server:
        base = base_with_store(kb, capsys, monkeypatch, server)
        add_doc(kb, NEW_DOC)
        commit(kb, "head")
        server.mode = "500"
        monkeypatch.setenv(KEY_ENV, KEY)
        waits: list[float] = []
        monkeypatch.setattr("rag_corpus_check.retrieval.dense.endpoint._pause", waits.append)
        code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 3 and results["verdict"] == "error" and server.seen.requests == 4, text
    assert waits == [1.0, 2.0, 4.0]  # backed off, without waiting in the test
    assert "the embedding endpoint 127.0.0.1 failed: HTTP 500, 4 attempts" in text
    assert "ERROR (the embedding endpoint failed)" in text and "the embedding endpoint failed" in summary
    no_key_anywhere(text, summary)


@pytest.mark.parametrize(("attack", "words"), [
    ("nan", "has a NaN or infinite value"),
    ("dims", "rows have 63 dimensions, but store.json says 64"),
    ("stray", "is no segment file"),
    ("unpaired", "has no .npy file; a segment is a pair"),
    ("badline", ':4: each line must be {"sha256": "<64 lowercase hex digits>"}'),
])
def test_a_hostile_store_is_an_input_error(kb, tmp_path, capsys, monkeypatch, attack, words):
    with EmbedServer() as server:
        store_config(kb, server.url)
        monkeypatch.setenv(KEY_ENV, KEY)
        embed(capsys, "--init", "--store", "--model", MODEL, "--dimensions", str(DIMENSIONS), "--endpoint")
    segments = kb / "store" / "segments"
    npy = next(segments.glob("*.npy"))
    m = np.load(npy)
    if attack == "nan":
        m[3, 5] = np.nan
        np.save(npy, m)
    elif attack == "dims":
        np.save(npy, np.ascontiguousarray(m[:, :-1]))
    elif attack == "badline":
        index = npy.with_suffix(".jsonl")
        lines = index.read_text().splitlines(keepends=True)
        lines[3] = lines[3].replace('"sha256": "', '"sha256": "X', 1)
        index.write_text("".join(lines))
    elif attack == "stray":
        (segments / "notes.txt").write_text("hi")
    else:
        shutil.copy(npy.with_suffix(".jsonl"), segments / "0123456789abcdef.jsonl")
    code, text, _, _ = check(tmp_path, capsys)
    assert code == 2 and words in text, text


def test_the_store_is_bounded_in_bytes(kb, tmp_path, capsys, monkeypatch):
    with EmbedServer() as server:
        store_config(kb, server.url)
        monkeypatch.setenv(KEY_ENV, KEY)
        embed(capsys, "--init", "--store", "--model", MODEL, "--dimensions", str(DIMENSIONS), "--endpoint")
    for one in (kb / "store" / "segments").iterdir():  # the same segment twice: 2 × 13.8 KB
        shutil.copy(one, one.with_name("0123456789abcdef" + one.suffix))
    cfg = yaml.safe_load((kb / CONFIG).read_text())
    cfg["limits"] = {"max_file_bytes": 20000}  # the corpus is 16.5 KB
    (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
    code, text, _, _ = check(tmp_path, capsys)
    assert code == 2 and "the store's segments are over `limits.max_file_bytes` (20000) together" in text, text
    assert os.path.exists(kb / "store" / "store.json")


def test_a_pr_cannot_allow_its_own_vectors(kb, tmp_path, capsys, monkeypatch):
    """`accept_pr_vectors` is read from the base's config: a PR that sets it
    (with its vector committed, no key in the job) neither passes nor has its
    vector used, and the change is listed as a rule change."""
    with EmbedServer() as server:
        base = base_with_store(kb, capsys, monkeypatch, server)
        add_doc(kb, NEW_DOC)
        monkeypatch.setenv(KEY_ENV, KEY)
        assert embed(capsys, "--endpoint")[0] == 0
        monkeypatch.delenv(KEY_ENV)
        cfg = yaml.safe_load((kb / CONFIG).read_text())
        cfg["retriever"]["accept_pr_vectors"] = True
        (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
        commit(kb, "head: take my vectors")
        code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2 and "1 text has no vector in the store `store`" in text, text
    assert not any(p["kind"] == "trust" and "supplied" in p["message"] for p in results["problems"])


def test_a_pr_that_turns_committed_vectors_into_a_store_keeps_the_bases_vectors(kb, tmp_path, capsys):
    """The committed-vectors layout at the base is read as a store by text:
    a PR that migrates the folder embeds nothing and changes no vector."""
    from rag_corpus_check.retrieval.dense.store import StoreInfo, init_store, write_segment
    from support.vectors import MODEL as TEST_MODEL
    from support.vectors import dense_config, embed_kb

    embed_kb(kb)
    dense_config(kb)
    base = commit(kb, "base: committed vectors")
    _, _, before, _ = check(tmp_path / "a", capsys, "--base", base)
    folder = kb / "vectors"
    keys, rows = [], []
    for kind in ("documents", "questions"):
        keys += [bytes.fromhex(json.loads(line)["sha256"]) for line in (folder / f"{kind}.jsonl").read_text().splitlines()]
        rows.append(np.load(folder / f"{kind}.npy"))
    for name in ("model.json", "documents.npy", "documents.jsonl", "questions.npy", "questions.jsonl"):
        (folder / name).unlink()
    init_store(str(folder), StoreInfo(TEST_MODEL, 16, ("text",)))
    write_segment(str(folder), keys, -np.concatenate(rows))  # even every vector turned around: the base's are used
    commit(kb, "head: the folder as a store")
    code, text, after, _ = check(tmp_path / "b", capsys, "--base", base)
    assert code == 0, text
    assert after["per_question"] == before["per_question"]
    assert after["run_source"]["embedding"]["from_store"] == 41 and after["run_source"]["embedding"]["texts"] == 0


def test_a_segment_written_another_way_is_read_the_same(kb, tmp_path, capsys, monkeypatch):
    """The one-pass reader of a segment's .jsonl and the line-by-line one agree."""
    with EmbedServer() as server:
        store_config(kb, server.url)
        monkeypatch.setenv(KEY_ENV, KEY)
        embed(capsys, "--init", "--store", "--model", MODEL, "--dimensions", str(DIMENSIONS), "--endpoint")
    _, _, fast, _ = check(tmp_path / "a", capsys)
    index = next((kb / "store" / "segments").glob("*.jsonl"))
    index.write_text("".join(json.dumps(json.loads(line), separators=(",", ":")) + "\n"
                             for line in index.read_text().splitlines()))
    _, _, slow, _ = check(tmp_path / "b", capsys)
    assert fast["verdict"] == "pass" and fast["per_question"] == slow["per_question"]


def test_a_new_model_embeds_everything_through_the_bases_endpoint_and_says_why(kb, tmp_path, capsys, monkeypatch):
    """A PR that changes the model (a rule change, with its reason) and
    brings a new store: the base's store is of another model, so every text
    is embedded in the job (the PR's vectors are not taken), and a trust
    warning says why."""
    with EmbedServer() as server:
        base = base_with_store(kb, capsys, monkeypatch, server)
        cfg = yaml.safe_load((kb / CONFIG).read_text())
        cfg["retriever"]["model"] = MODEL + "-v2"
        cfg["rule_change_reason"] = "the same model under its new name"
        (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
        info = json.loads((kb / "store" / "store.json").read_text())
        (kb / "store" / "store.json").write_text(json.dumps(dict(info, model=MODEL + "-v2")))
        commit(kb, "head: a new model")
        monkeypatch.setenv(KEY_ENV, KEY)
        code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert results["run_source"]["embedding"]["embedded_rows"] == 41 and server.seen.models[-1] == MODEL
    warning = [p for p in results["problems"] if p["kind"] == "trust" and "store cannot be used" in p["message"]]
    assert warning and "the base has no vectors of this model" in warning[0]["message"]


@pytest.mark.parametrize("url", ["http://api.example.com/v1/embeddings", "ftp://127.0.0.1/v1",
                                 "http://127.0.0.1.example.com/v1/embeddings"])
def test_the_key_goes_over_https_only_or_to_loopback(kb, tmp_path, capsys, url):
    store_config(kb, url)
    code, text, _, _ = check(tmp_path, capsys)
    assert code == 2 and "`retriever.endpoint.url` must be https:// (plain http:// only to a loopback" in text, text


def test_validate_reads_a_store_and_names_the_texts_the_check_will_embed(kb, capsys, monkeypatch):
    """`validate` (the pre-commit hook) reads a store as the check does: a
    full store is valid; a new text is a warning when the config names an
    endpoint (the check embeds it in the job), an error at its line without one."""
    with EmbedServer() as server:
        base_with_store(kb, capsys, monkeypatch, server)
        assert main(["validate", "--config", CONFIG]) == 0, capsys.readouterr().out
        capsys.readouterr()
        add_doc(kb, NEW_DOC)
        code = main(["validate", "--config", CONFIG])
        out = capsys.readouterr().out
        assert code == 0 and server.seen.requests == 0, out
        assert "1 text is not in the store `store` yet: the check embeds it through 127.0.0.1" in out
        cfg = yaml.safe_load((kb / CONFIG).read_text())
        del cfg["retriever"]["endpoint"]
        (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
        code = main(["validate", "--config", CONFIG])
        out = capsys.readouterr().out
    assert code == 2 and "corpus.jsonl:31" in out and "has no vector: its text is not in the store" in out, out
