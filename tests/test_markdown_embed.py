"""`rag-corpus-check embed` on a Markdown corpus: one vector per section,
keyed by the section text's sha-256 — an untouched section keeps its vector,
also when its page moves; an edited section alone is embedded again."""

import numpy as np
import pytest

from conftest import check, off_runner
from support.repos import edit
from test_embed import MODEL, embed, embedder, init  # noqa: F401  (the fixture)
from test_markdown_base import CONFIG, GOLD, PAGES, _write


@pytest.fixture
def site(tmp_path, monkeypatch):
    path = tmp_path / "site"
    path.mkdir()
    config = CONFIG.replace("thresholds: {nDCG@3: 0.5}", "thresholds: {nDCG@3: 0.0}")
    (path / ".rag-corpus-check.yml").write_text(config + f"retriever: {{type: dense, vectors: vectors, model: {MODEL}}}\n")
    (path / "gold.yaml").write_text(GOLD)
    _write(path, PAGES)
    off_runner(monkeypatch, path)
    return path


def test_sections_are_embedded_once_and_keep_their_vectors(site, tmp_path, capsys, embedder):  # noqa: F811
    code, out = init(capsys, embedder())
    assert code == 0, out
    assert embedder.calls() == [11]  # 7 sections of the 5 pages (the drafts left out) + 4 questions
    assert check(tmp_path, capsys)[0] == 0
    vectors = site / "vectors"
    before = dict(zip((site / "vectors" / "documents.jsonl").read_text().splitlines(),
                      np.load(vectors / "documents.npy"), strict=True))
    (site / "docs" / "payments").mkdir()
    (site / "docs/billing/refunds.md").rename(site / "docs/payments/refunds.md")
    code, out = embed(capsys)
    assert code == 0 and "every text has a current vector" in out, out  # the moved sections' texts have rows
    code, out = embed(capsys, "--command", embedder())
    assert code == 0 and "embedded 0 texts" in out, out
    assert embedder.calls() == [11]  # the command was not run again
    after = dict(zip((vectors / "documents.jsonl").read_text().splitlines(), np.load(vectors / "documents.npy"),
                     strict=True))
    moved = [k for k in after if "docs/payments/refunds.md" in k]
    assert len(moved) == 2
    for key in moved:
        old = key.replace("docs/payments/refunds.md", "docs/billing/refunds.md")
        assert after[key].tobytes() == before[old].tobytes()
    edit(site / "gold.yaml", "docs/billing/refunds.md", "docs/payments/refunds.md")  # no base here: the label moves too
    assert check(tmp_path, capsys)[0] == 0
    edit(site / "docs/shipping/tracking.md", "dispatch email", "dispatch e-mail")
    code, out = embed(capsys, "--command", embedder())
    assert code == 0 and "embedded 1 texts" in out, out
    assert embedder.calls() == [11, 1]
