"""The checks that need no ranking run before the ranking is made: a label
on a document the corpus lacks (or a grade off the scale, or a chunk label in
a gold set of documents) ends the check before the built-in BM25 searches a
single question (BEIR ArguAna: five such labels cost a whole retrieval,
7 min 47 s, before exit 2). The proof counts work, not time: the index's
``search`` is never called."""

import json
import shutil

import pytest

from conftest import EXAMPLE, write
from rag_corpus_check.commands.check import run_check
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.pipeline.stages import Options
from rag_corpus_check.retrieval.bm25 import BM25Index

BM25_CONFIG = (EXAMPLE / ".rag-corpus-check.yml").read_text()


@pytest.fixture
def kb(tmp_path):
    repo = tmp_path / "kb"
    shutil.copytree(EXAMPLE, repo)
    return repo


@pytest.fixture
def searches(monkeypatch):
    """The questions the built-in BM25 searches, counted."""
    asked: list[str] = []
    search = BM25Index.search

    def counted(self, text, depth):
        asked.append(text)
        return search(self, text, depth)

    monkeypatch.setattr(BM25Index, "search", counted)
    return asked


def _run(kb, config=".rag-corpus-check.yml", options=None):
    return run_check(str(kb), str(kb / config), Context(), options or Options())


def _gold_with(kb, old: str, new: str) -> int:
    """gold.yaml with ``old`` replaced by ``new`` once; the line of the change."""
    text = (kb / "gold.yaml").read_text()
    assert text.count(old) >= 1
    (kb / "gold.yaml").write_text(text.replace(old, new, 1))
    return text[: text.index(old)].count("\n") + 1


def _errors(out):
    return [p for p in out.problems.items if p.severity == "error"]


def test_the_example_is_searched(kb, searches):
    out = _run(kb)
    assert out.verdict == "pass" and len(searches) == len(out.gold.queries) > 0


def test_a_label_on_a_missing_document_ends_the_check_before_any_search(kb, searches):
    line = _gold_with(kb, "      faq-004: 1\n", "      faq-004: 1\n      no-such-doc: 2\n")
    out = _run(kb)
    assert out.verdict == "invalid" and searches == []
    assert out.run is None and out.evaluation is None
    [p] = _errors(out)
    assert "unknown document id" in p.message and (p.file, p.line, p.id) == ("gold.yaml", line + 1, "no-such-doc")


def test_a_grade_off_the_scale_ends_the_check_before_any_search(kb, searches):
    _gold_with(kb, "      faq-004: 1\n", "      faq-004: 7\n")
    out = _run(kb)
    assert out.verdict == "invalid" and searches == []
    assert any("outside the declared scale" in p.message for p in _errors(out))


def test_an_inactive_label_is_reported_once(kb, searches):
    """A warning found before the ranking is not found again after it."""
    _gold_with(kb, "      faq-009: 0 ", "      faq-009: 2 ")
    out = _run(kb)
    assert searches and out.evaluation is not None
    stale = [p for p in out.problems.items if p.id == "faq-009"]
    assert len(stale) == 1 and stale[0].severity == "warning", stale


def test_the_retriever_command_is_not_run_when_a_label_is_wrong(kb, tmp_path):
    marker = tmp_path / "ran"
    cfg = BM25_CONFIG.split("retriever:")[0] + (
        "retriever:\n  type: command\n  command: [python3, -c, \"open('" + str(marker) + "', 'w')\"]\n")
    (kb / "command.yml").write_text(cfg)
    _gold_with(kb, "      faq-004: 1\n", "      faq-004: 1\n      no-such-doc: 2\n")
    out = _run(kb, "command.yml", Options(allow_command=True))
    assert out.verdict == "invalid" and not marker.exists()
    assert any(p.id == "no-such-doc" for p in _errors(out))


def test_a_committed_run_still_gets_every_check(kb):
    _gold_with(kb, "      faq-004: 1\n", "      faq-004: 1\n      no-such-doc: 2\n")
    out = _run(kb, "committed-run.rag-corpus-check.yml")
    assert out.verdict == "invalid" and [p.id for p in _errors(out)] == ["no-such-doc"]


def _chunked(kb):
    """The example's corpus cut in two chunks per document (doc_id: the document)."""
    docs = [json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines()]
    chunks = []
    for d in docs:
        half = len(d["text"]) // 2
        for i, text in enumerate((d["text"][:half], d["text"][half:])):
            chunks.append(json.dumps({**d, "id": f"{d['id']}#c{i}", "doc_id": d["id"], "text": text}))
    (kb / "corpus.jsonl").write_text("\n".join(chunks) + "\n")


def test_a_chunked_corpus_labelled_by_document_is_searched(kb, searches):
    _chunked(kb)
    out = _run(kb)
    assert out.level == "document" and searches and not _errors(out)


def test_a_missing_document_of_a_chunked_corpus_ends_the_check_before_any_search(kb, searches):
    _chunked(kb)
    line = _gold_with(kb, "      faq-004: 1\n", "      faq-004: 1\n      no-such-doc: 2\n")
    out = _run(kb)
    assert out.verdict == "invalid" and searches == []
    assert [(p.file, p.line, p.id) for p in _errors(out)] == [("gold.yaml", line + 1, "no-such-doc")]


def test_a_chunk_label_among_document_labels_ends_the_check_before_any_search(kb, searches):
    _chunked(kb)
    line = _gold_with(kb, "      faq-004: 1\n", "      faq-004: 1\n      faq-001#c0: 2\n")
    out = _run(kb)
    assert out.verdict == "invalid" and searches == []
    [p] = _errors(out)
    assert "labels a chunk" in p.message and (p.line, p.id) == (line + 1, "faq-001#c0")


def test_a_beir_folder_with_qrels_on_missing_documents_is_not_searched(kb, searches, capsys, monkeypatch):
    """The ArguAna case: qrels name documents the corpus lacks."""
    from rag_corpus_check.commands.cli import main

    docs = [json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines()]
    write(kb / "beir/corpus.jsonl", "".join(json.dumps({"_id": d["id"], "title": d.get("title", ""),
                                                        "text": d["text"]}) + "\n" for d in docs))
    write(kb / "beir/queries.jsonl", "".join(json.dumps({"_id": f"q{i}", "text": f"question {i} about backups"})
                                             + "\n" for i in range(1, 6)))
    rows = [f"q{i}\t{docs[i]['id']}\t1" for i in range(1, 6)] + ["q3\tmissing-7\t1"]
    write(kb / "beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    write(kb / "beir.yml", "version: 1\nk: 5\ndataset: {format: beir, path: beir}\n")
    monkeypatch.chdir(kb)
    code = main(["--config", "beir.yml", "--output", str(kb / "out/results.json"), "--no-github"])
    cap = capsys.readouterr()
    assert code == 2 and searches == []
    assert "Traceback" not in cap.out + cap.err
    assert "beir/qrels/test.tsv:7" in cap.out and "missing-7" in cap.out, cap.out
