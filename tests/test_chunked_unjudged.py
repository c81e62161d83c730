"""A chunked corpus whose gold set labels documents: new documents that reach
the top K without a judgement are reported (`comparison.unjudged_new_docs`),
as they are for a corpus of whole documents."""

import json

import pytest

from conftest import off_runner
from rag_corpus_check.commands.cli import main
from support import repos

CONFIG = "version: 1\ncorpus: corpus.jsonl\ngold: gold.yaml\nk: 3\nthresholds: {nDCG@3: 0.1}\n"
GOLD = """queries:
  - query_id: q1
    query: how long do refunds take
    relevant: {refunds: 2}
  - query_id: q2
    query: where do we ship
    relevant: {shipping: 2}
"""
DOCS = [
    ("refunds#1", "refunds", "Refunds take five business days to reach the card."),
    ("refunds#2", "refunds", "A refund is sent to the original payment method."),
    ("shipping#1", "shipping", "We ship to every country in Europe."),
    ("billing#1", "billing", "Invoices are sent monthly by email."),
]
NEW = [("returns#1", "returns", "How long refunds take for returns: refunds take five days.")]


def _write(repo, docs):
    lines = [json.dumps({"id": i, "doc_id": d, "text": t}) for i, d, t in docs]
    (repo / "corpus.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    path = repos.init(tmp_path / "kb")
    (path / ".rag-corpus-check.yml").write_text(CONFIG)
    (path / "gold.yaml").write_text(GOLD)
    _write(path, DOCS)
    off_runner(monkeypatch, path)
    return path


def test_a_new_document_of_chunks_in_the_top_k_unjudged_is_reported(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    _write(repo, DOCS + NEW)
    repos.commit(repo, "a new document, chunked")
    out = tmp_path / "out"
    code = main(["--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), "--base", base])
    text = capsys.readouterr().out
    res = json.loads((out / "r.json").read_text())
    assert code == 0, text
    assert res["comparison"]["unjudged_new_docs"] == [{"query_id": "q1", "doc_ids": ["returns"]}]
    assert res["comparison"]["pool_command"].startswith("rag-corpus-check pool")
    assert "returns" in (out / "s.md").read_text()
