"""Dense and hybrid with a base revision: the vectors of texts the base has
must be the base's bit for bit (else the gate fails naming the ids), the
vectors a PR supplies are counted and listed, and the retriever's type,
model, folder, depth and rrf_k are rules (a PR that changes one needs a new
`rule_change_reason`). Each test is a real throw-away git repository."""

from __future__ import annotations

import json

import numpy as np
import yaml

from conftest import check
from support.repos import commit
from support.vectors import dense_config, embed_kb

CONFIG = ".rag-corpus-check.yml"
NEW_DOC = {"id": "faq-new", "text": "Deleted backups are kept for 30 days in the recycle bin.", "type": "faq",
           "status": "active", "snapshot": "2026-11-30"}


def dense_base(kb, kind: str = "dense", **extra) -> str:
    embed_kb(kb)
    dense_config(kb, kind, **extra)
    return commit(kb, "base")


def set_retriever(kb, **changes) -> None:
    cfg = yaml.safe_load((kb / CONFIG).read_text())
    cfg["retriever"].update(changes)
    (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))


def test_a_pr_that_adds_a_document_with_its_vector_passes_and_says_so(kb, tmp_path, capsys):
    base = dense_base(kb)
    with (kb / "corpus.jsonl").open("a") as f:
        f.write(json.dumps(NEW_DOC) + "\n")
    embed_kb(kb)  # every other text keeps its vector: the embedding is a function of the text
    commit(kb, "head")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    trust = results["run_source"]["vectors_check"]
    assert trust["supplied"] == 1 and trust["supplied_ids"] == {"documents": ["faq-new"], "questions": []}
    assert trust["differ"] == 0
    line = "Vectors this PR supplied (new or changed texts, taken on trust): 1: document faq-new"
    assert line in text
    assert "Vectors this PR supplied (new or changed texts, taken on trust): 1: document faq\\-new" in summary


def _flip_last_bit(path, row: int) -> None:
    m = np.load(path)
    bits = m.view(np.uint32)
    bits[row, 0] ^= 1  # the smallest change a float32 can take
    np.save(path, m)


def test_a_pr_that_edits_an_unchanged_texts_vector_fails_naming_it(kb, tmp_path, capsys):
    base = dense_base(kb)
    _flip_last_bit(kb / "vectors" / "documents.npy", 4)
    commit(kb, "head")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert "the vectors of 1 unchanged texts differ from the base (the first: document faq-005)" in text
    trust = results["run_source"]["vectors_check"]
    assert trust["differ_ids"] == {"documents": ["faq-005"], "questions": []} and trust["supplied"] == 0


def test_a_tampered_question_vector_fails_too_and_a_reason_does_not_help(kb, tmp_path, capsys):
    base = dense_base(kb)
    _flip_last_bit(kb / "vectors" / "questions.npy", 0)
    cfg = yaml.safe_load((kb / CONFIG).read_text())
    cfg["rule_change_reason"] = "just because"
    (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
    commit(kb, "head")
    code, text, _, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1 and "(the first: question q01)" in text, text


def test_without_a_base_nothing_is_counted(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0 and "vectors_check" not in results["run_source"] and "Vectors this PR" not in text


def _rule_change(kb, tmp_path, capsys, base: str, reason: str | None = None):
    if reason:
        cfg = yaml.safe_load((kb / CONFIG).read_text())
        cfg["rule_change_reason"] = reason
        (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
    commit(kb, "head")
    return check(tmp_path, capsys, "--base", base)


def test_another_model_is_a_rule_change(kb, tmp_path, capsys):
    base = dense_base(kb)
    embed_kb(kb, model="test-model-2")
    set_retriever(kb, model="test-model-2")
    code, text, _, _ = _rule_change(kb, tmp_path, capsys, base)
    assert code == 1 and "`retriever.model` test-model-1 → test-model-2" in text, text
    code, text, results, _ = _rule_change(kb, tmp_path, capsys, base, "new embedding model, re-embedded all")
    assert code == 0 and results["rules_source"] == "head-override", text
    trust = results["run_source"]["vectors_check"]
    assert trust["compared_with_base_model"] is None and trust["supplied"] == 30 + 15
    assert "(the base has no vectors of this model: all are): 45" in text
    first = results["problems"][0]  # a warning about trust: listed first, never cut
    assert (first["kind"], first["severity"]) == ("trust", "warning") and first["file"].endswith("documents.jsonl")
    assert "every vector of this PR is taken on trust" in first["message"], first


def test_depth_rrf_k_folder_and_type_are_rules(kb, tmp_path, capsys):
    base = dense_base(kb, "hybrid", rrf_k=60)
    set_retriever(kb, rrf_k=1, depth=50)
    code, text, _, _ = _rule_change(kb, tmp_path, capsys, base)
    assert code == 1 and "`retriever.rrf_k` 60 → 1" in text and "`retriever.depth` 100 → 50" in text, text
    set_retriever(kb, rrf_k=60, depth=100, type="dense")
    code, text, _, _ = _rule_change(kb, tmp_path, capsys, base)
    assert code == 1 and "hybrid retrieval (BM25 + dense) → dense retrieval" in text, text
    (kb / "vectors").rename(kb / "vectors2")
    set_retriever(kb, type="hybrid", vectors="vectors2")
    code, text, _, _ = _rule_change(kb, tmp_path, capsys, base)
    assert code == 1 and "`retriever.vectors` vectors → vectors2" in text, text


def test_a_switch_from_bm25_to_dense_is_a_rule_change(kb, tmp_path, capsys):
    base = commit(kb, "base")
    embed_kb(kb)
    dense_config(kb)
    code, text, _, _ = _rule_change(kb, tmp_path, capsys, base)
    assert code == 1 and "built-in BM25 → dense retrieval" in text, text
