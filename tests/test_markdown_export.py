"""`rag-corpus-check export`: the records the Markdown reader produced, as
JSONL; the same pages checked as that JSONL file measure the same."""

import json

import pytest

from conftest import off_runner
from rag_corpus_check.commands.cli import main
from test_markdown_base import CONFIG, GOLD, PAGES, _write


@pytest.fixture
def site(tmp_path, monkeypatch):
    path = tmp_path / "site"
    path.mkdir()
    (path / ".rag-corpus-check.yml").write_text(CONFIG)
    (path / "gold.yaml").write_text(GOLD)
    _write(path, PAGES)
    off_runner(monkeypatch, path)
    return path


def _check(tmp_path, config, name):
    out = tmp_path / name
    code = main(["--config", config, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md")])
    return code, json.loads((out / "r.json").read_text())


def test_the_export_is_what_the_check_measured(site, tmp_path, capsys):
    assert main(["export", "--out", "corpus.jsonl"]) == 0
    assert "records written to corpus.jsonl" in capsys.readouterr().out
    rows = [json.loads(line) for line in (site / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows][:3] == ["docs/account/password.md#password-reset",
                                            "docs/billing/invoices.md#invoices", "docs/billing/invoices.md#vat-numbers"]
    assert all(set(r) <= {"id", "doc_id", "title", "text", "type", "status"} for r in rows)
    assert not any(r["id"].startswith("docs/drafts/") for r in rows)
    (site / "jsonl.yml").write_text(CONFIG.replace(
        'corpus:\n  format: markdown\n  paths: ["docs/**/*.md"]\n  exclude: ["docs/drafts/**"]\n  chunk: heading\n',
        "corpus: corpus.jsonl\n"))
    code_md, md = _check(tmp_path, ".rag-corpus-check.yml", "md")
    code_jl, jl = _check(tmp_path, "jsonl.yml", "jl")
    assert code_md == code_jl == 0
    assert md["metrics"] == jl["metrics"]
    assert md["per_question"] == jl["per_question"]


def test_an_invalid_corpus_writes_nothing(site, capsys):
    (site / "docs" / "bad.md").write_bytes(b"# Bad\n\n\xff\n")
    assert main(["export", "--out", "corpus.jsonl"]) == 2
    text = capsys.readouterr().out
    assert "INVALID INPUT; nothing written" in text and "docs/bad.md:3" in text
    assert not (site / "corpus.jsonl").exists()
