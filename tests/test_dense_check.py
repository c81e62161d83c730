"""Dense and hybrid retrieval end to end (main(argv) on the bundled example
with a vectors folder): the run is made from the committed vectors, and a
stale or missing row, another model, or a question reworded without its
vector is an input error (exit 2) at the corpus or gold line with the id."""

from __future__ import annotations

import json

from conftest import check
from support.repos import edit
from support.vectors import dense_config, embed_kb


def test_dense_ranks_the_example(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb)
    code, text, results, summary = check(tmp_path, capsys)
    assert code == 0, text
    assert results["run_source"]["type"] == "dense" and results["run_source"]["model"] == "test-model-1"
    assert "exact cosine search over the committed vectors in vectors" in text
    files = results["provenance"]["inputs"]
    assert {"vectors/documents.npy", "vectors/questions.jsonl", "vectors/model.json"} <= set(files)


def test_hybrid_ranks_the_example(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb, "hybrid", rrf_k=60)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0, text
    assert results["run_source"]["type"] == "hybrid" and results["run_source"]["rrf_k"] == 60
    assert "reciprocal rank fusion (k 60)" in text


def _problems(results) -> list[dict]:
    return [p for p in results["problems"] if p["severity"] == "error"]


def test_an_edited_record_without_a_new_vector_is_stale(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb)
    edit(kb / "corpus.jsonl", "Standard at $0.018 per GB-month", "Standard at $0.020 per GB-month")
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    first, reembed = _problems(results)
    assert (first["file"], first["line"], first["id"]) == ("corpus.jsonl", 1, "faq-001")
    assert "stale vector" in first["message"] and "vectors/documents.jsonl" in first["message"]
    assert "1 texts have no current vector" in reembed["message"] and "test-model-1" in reembed["message"]
    assert "rag-corpus-check embed --command" in reembed["message"]
    assert "Standard at" not in text  # no document text in the output


def test_a_new_record_without_a_row_is_missing(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb)
    with (kb / "corpus.jsonl").open("a") as f:
        f.write(json.dumps({"id": "faq-new", "text": "a new answer", "type": "faq", "status": "active",
                            "snapshot": "2026-11-30"}) + "\n")
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    first = _problems(results)[0]
    assert (first["file"], first["line"], first["id"]) == ("corpus.jsonl", 31, "faq-new")
    assert "has no vector row" in first["message"]


def test_an_inactive_record_needs_no_row(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb)
    with (kb / "corpus.jsonl").open("a") as f:
        f.write(json.dumps({"id": "old-1", "text": "gone", "status": "stale", "snapshot": "2026-11-30"}) + "\n")
    code, text, _, _ = check(tmp_path, capsys)
    assert code == 0, text


def test_a_reworded_question_is_stale(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb)
    edit(kb / "gold.yaml", "How long are deleted backups kept?", "How long do deleted backups stay?")
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    first = _problems(results)[0]
    assert (first["file"], first["id"]) == ("gold.yaml", "q01") and first["line"] == 9
    assert "vectors/questions.jsonl" in first["message"]


def test_another_model_is_an_input_error(kb, tmp_path, capsys):
    embed_kb(kb, model="other-model-2")
    dense_config(kb)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    first = _problems(results)[0]
    assert first["file"] == "vectors/model.json" and "other-model-2" in first["message"]


def test_dense_needs_vectors_and_model(kb, tmp_path, capsys):
    dense_config(kb)
    cfg = (kb / ".rag-corpus-check.yml").read_text().replace("  model: test-model-1\n", "")
    (kb / ".rag-corpus-check.yml").write_text(cfg)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2 and "`retriever.type: dense` needs `retriever.model`" in text


def test_a_hostile_npy_is_an_input_error(kb, tmp_path, capsys):
    import numpy as np

    embed_kb(kb)
    dense_config(kb)
    np.save(kb / "vectors" / "documents.npy", np.array([object()] * 30, dtype=object), allow_pickle=True)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    first = _problems(results)[0]
    assert first["file"] == "vectors/documents.npy" and "pickles are never read" in first["message"]


def test_hybrid_checks_freshness_too(kb, tmp_path, capsys):
    embed_kb(kb)
    dense_config(kb, "hybrid")
    edit(kb / "corpus.jsonl", "Standard at $0.018 per GB-month", "Standard at $0.020 per GB-month")
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2 and _problems(results)[0]["id"] == "faq-001", text
