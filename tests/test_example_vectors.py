"""The bundled example's real vectors (examples/kb/vectors-static): made by
`rag-corpus-check embed` with a real static embedding model that ships in its
wheel (examples/kb/embed_static.py), fresh for the corpus and gold set, and
retrieving as the documentation says — BM25, dense and hybrid side by side."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from conftest import EXAMPLE, check

MODEL = "tokenlearn-static-model==0.1.1"
FILES = ("model.json", "documents.jsonl", "documents.npy", "questions.jsonl", "questions.npy")
CONFIGS = {"bm25": ".rag-corpus-check.yml", "dense": "dense.rag-corpus-check.yml",
           "hybrid": "hybrid.rag-corpus-check.yml"}
# The means the documentation shows (docs: the example's three rankings), to 4 places.
MEANS = {
    "bm25": {"P@5": 0.2714, "R@5": 0.6905, "nDCG@5": 0.7010},
    "dense": {"P@5": 0.2000, "R@5": 0.4762, "nDCG@5": 0.3970},
    "hybrid": {"P@5": 0.2571, "R@5": 0.6310, "nDCG@5": 0.5677},
}
# Top 3 of a few questions, as the documentation shows them.
TOP3 = {
    "q01": {"bm25": ["policy-002", "policy-001", "faq-004"], "dense": ["policy-002", "howto-007", "policy-001"],
            "hybrid": ["policy-002", "policy-001", "faq-004"]},
    "q06": {"bm25": ["howto-006", "howto-001", "relnote-003"], "dense": ["faq-008", "howto-003", "faq-004"],
            "hybrid": ["howto-006", "faq-008", "howto-002"]},
    "q11": {"bm25": ["faq-008", "policy-006", "policy-004"], "dense": ["policy-004", "policy-008", "howto-001"],
            "hybrid": ["policy-004", "faq-008", "howto-004"]},
}


@pytest.fixture
def example(tmp_path, monkeypatch):
    """A copy of examples/kb (cwd), no GitHub or runner variables."""
    dest = tmp_path / "kb"
    shutil.copytree(EXAMPLE, dest)
    monkeypatch.chdir(dest)
    for var in [v for v in __import__("os").environ if v.startswith(("GITHUB_", "RUNNER_"))]:
        monkeypatch.delenv(var, raising=False)
    return dest


def test_re_embedding_the_example_gives_the_committed_vectors_bit_for_bit(example, capsys):
    pytest.importorskip("static_model", reason="tokenlearn-static-model (the test extra, Linux x86-64) is not installed")
    from rag_corpus_check.commands.embed import embed_main

    shutil.rmtree(example / "vectors-static")
    command = f"{sys.executable} embed_static.py {{input}} {{output}}"
    code = embed_main(["--config", "dense.rag-corpus-check.yml", "--init", "--model", MODEL, "--dimensions", "64",
                       "--command", command])
    out = capsys.readouterr().out
    assert code == 0 and "embedded 41 texts" in out, out  # 26 served records, 15 questions
    for name in FILES:
        assert (example / "vectors-static" / name).read_bytes() == (EXAMPLE / "vectors-static" / name).read_bytes(), name
    assert embed_main(["--config", "hybrid.rag-corpus-check.yml"]) == 0  # one folder serves both
    assert "every text has a current vector" in capsys.readouterr().out


def test_an_edited_document_is_stale_until_re_embedded(example, capsys, tmp_path):
    rows = (example / "corpus.jsonl").read_text().splitlines()
    rows[0] = json.dumps({**json.loads(rows[0]), "text": "Storage classes changed; see the price list."})
    (example / "corpus.jsonl").write_text("\n".join(rows) + "\n")
    code, text, _, _ = check(tmp_path, capsys, config="dense.rag-corpus-check.yml")
    assert code == 2 and "corpus.jsonl:1" in text and "faq-001" in text and "stale vector" in text, text


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_example_passes_with_the_means_the_docs_show(example, capsys, tmp_path, name):
    code, text, results, _ = check(tmp_path, capsys, config=CONFIGS[name])
    assert code == 0, text
    assert {m: round(results["metrics"][m], 4) for m in MEANS[name]} == MEANS[name]
    assert results["run_source"]["type"] == name


def _rankings(capsys, tmp_path, name: str) -> dict[str, list[str]]:
    from rag_corpus_check.commands.cli import main

    out = tmp_path / f"{name}.jsonl"
    assert main(["retrieve", "--config", CONFIGS[name], "--out", str(out)]) == 0
    capsys.readouterr()
    return {r["query_id"]: r["ranking"] for r in map(json.loads, out.read_text().splitlines())}


def test_the_top_three_are_the_docs_and_hybrid_fuses_the_other_two(example, capsys, tmp_path):
    runs = {name: _rankings(capsys, tmp_path, name) for name in CONFIGS}
    for qid, tops in TOP3.items():
        assert {name: runs[name][qid][:3] for name in CONFIGS} == tops, qid
    for qid, fused in runs["hybrid"].items():  # reciprocal rank fusion, k 60, written out here
        score: dict[str, float] = {}
        for ranking in (runs["bm25"][qid], runs["dense"][qid]):
            for rank, doc in enumerate(ranking, 1):
                score[doc] = score.get(doc, 0.0) + 1 / (60 + rank)
        assert fused == sorted(score, key=lambda d: (-score[d], d)), qid
