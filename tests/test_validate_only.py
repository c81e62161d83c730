"""`rag-corpus-check validate`: every input checked by the check's own rules,
nothing ranked or measured (the pre-commit hook runs it)."""

from __future__ import annotations

import json

import pytest

from rag_corpus_check.commands.cli import main
from support.repos import edit
from support.vectors import dense_config, embed_kb


def validate(capsys, *argv: str) -> tuple[int, str]:
    code = main(["validate", *argv])
    return code, capsys.readouterr().out


@pytest.fixture
def no_ranking(monkeypatch):
    """Building a BM25 index, searching or evaluating fails the test."""
    from rag_corpus_check.metrics import evaluate
    from rag_corpus_check.retrieval import bm25

    def refuse(*args, **kwargs):
        raise AssertionError("validate ranked or measured")

    monkeypatch.setattr(bm25.BM25Index, "__init__", refuse)
    monkeypatch.setattr(bm25.BM25Index, "search", refuse)
    monkeypatch.setattr(evaluate, "evaluate", refuse)


def test_the_example_is_valid_and_nothing_is_ranked(kb, capsys, no_ranking):
    code, text = validate(capsys)
    assert code == 0, text
    assert "valid — .rag-corpus-check.yml, gold.yaml, corpus.jsonl (30 corpus records, 15 questions)" in text
    assert "nothing ranked or measured" in text


def test_a_committed_run_is_checked_against_the_corpus(kb, capsys, no_ranking):
    code, text = validate(capsys, "--config", "committed-run.rag-corpus-check.yml")
    assert code == 0 and "run.jsonl" in text, text
    edit(kb / "run.jsonl", '"howto-003", "faq-004"', '"howto-003", "faq-404"')
    code, text = validate(capsys, "--config", "committed-run.rag-corpus-check.yml")
    assert code == 2, text
    assert "INVALID INPUT" in text and "run.jsonl:1" in text and "[faq-404]" in text


def test_a_label_on_an_unknown_document_is_invalid_with_its_line(kb, capsys, no_ranking):
    edit(kb / "gold.yaml", "      policy-002: 2\n      faq-004: 1", "      policy-002: 2\n      faq-404: 1")
    code, text = validate(capsys)
    assert code == 2, text
    assert "gold.yaml:" in text and "[faq-404]" in text


def test_a_thresholds_no_ranking_could_meet_does_not_fail_it(kb, capsys, no_ranking):
    # It measures nothing, so a threshold cannot fail it (the check would exit 1).
    edit(kb / ".rag-corpus-check.yml", "nDCG@5: 0.65", "nDCG@5: 1.0")
    code, text = validate(capsys)
    assert code == 0, text


def test_an_invalid_config_is_exit_2(kb, capsys):
    edit(kb / ".rag-corpus-check.yml", "k: 5", "k: 0")
    code, text = validate(capsys)
    assert code == 2 and ".rag-corpus-check.yml" in text, text


def test_a_broken_corpus_line_is_named(kb, capsys):
    with (kb / "corpus.jsonl").open("a") as f:
        f.write('{"id": "x", "text": \n')
    code, text = validate(capsys)
    assert code == 2 and "corpus.jsonl:31" in text, text


def test_file_names_pre_commit_passes_are_ignored(kb, capsys):
    code, text = validate(capsys, "--quiet", "gold.yaml", "corpus.jsonl")
    assert (code, text) == (0, "")


def test_vectors_are_read_and_must_be_current(kb, capsys, monkeypatch):
    from rag_corpus_check.retrieval.dense import search

    embed_kb(kb)
    dense_config(kb)
    monkeypatch.setattr(search.DenseSearch, "rank", lambda *a, **k: pytest.fail("validate ranked"))
    code, text = validate(capsys)
    assert code == 0 and "vectors current" in text, text
    edit(kb / "corpus.jsonl", "Standard at $0.018 per GB-month", "Standard at $0.020 per GB-month")
    code, text = validate(capsys)
    assert code == 2, text
    assert "corpus.jsonl:1" in text and "[faq-001]" in text and "stale vector" in text
    assert "Standard at" not in text  # no document text in the output


def test_a_missing_vectors_folder_is_invalid(kb, capsys):
    dense_config(kb)
    code, text = validate(capsys)
    assert code == 2 and "vectors" in text, text


def test_a_bug_is_exit_3_without_a_traceback(kb, capsys, monkeypatch):
    from rag_corpus_check.pipeline import validate_only

    monkeypatch.setattr(validate_only, "check_labels", lambda *a: 1 / 0)
    code = main(["validate"])
    cap = capsys.readouterr()
    assert code == 3 and "internal error (ZeroDivisionError) during validate" in cap.err
    assert "Traceback" not in cap.err + cap.out


def test_json_lines_of_the_example_are_untouched(kb, capsys):
    before = {p.name: p.read_bytes() for p in kb.iterdir() if p.is_file()}
    validate(capsys)
    assert before == {p.name: p.read_bytes() for p in kb.iterdir() if p.is_file()}
    assert json.loads((kb / "corpus.jsonl").read_text().splitlines()[0])["id"]
