"""The bundled documentation site (examples/docs-kb): Markdown pages checked
as they are, with a gold set of pages and one of sections."""

import json
from pathlib import Path

import pytest

from rag_corpus_check.commands.cli import main

SITE = Path(__file__).resolve().parent.parent / "examples" / "docs-kb"


@pytest.mark.parametrize("config, level, questions, documents", [
    (".rag-corpus-check.yml", "per document", 16, 31),
    ("sections.rag-corpus-check.yml", "per chunk", 12, 66),
])
def test_the_example_passes_at_its_level(tmp_path, capsys, monkeypatch, config, level, questions, documents):
    for var in ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "RUNNER_TEMP"):
        monkeypatch.delenv(var, raising=False)
    code = main(["--config", str(SITE / config), "--root", str(SITE.parent.parent),
                 "--output", str(tmp_path / "r.json"), "--summary-file", str(tmp_path / "s.md")])
    text = capsys.readouterr().out
    res = json.loads((tmp_path / "r.json").read_text())
    assert code == 0, text
    assert f"evaluated {level}" in text
    assert res["counts"]["questions"] == questions and res["counts"]["documents"] == documents
    assert res["problems"] == []


def test_the_example_has_what_the_reader_must_get_right():
    pages = sorted(p.relative_to(SITE).as_posix() for p in (SITE / "docs").rglob("*.md"))
    assert 20 <= len([p for p in pages if not p.startswith("docs/drafts/")]) <= 40
    texts = [(SITE / p).read_text(encoding="utf-8") for p in pages]
    assert sum(t.startswith("---\n") for t in texts) >= 5  # front matter
    assert any("```sh\n# " in t for t in texts) and any("```python\n# " in t for t in texts)  # `#` lines in code
    assert any(t.count("## Example\n") == 2 for t in texts)  # a repeated heading
