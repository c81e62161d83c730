"""Progress lines: silent at first, then rate-limited, folded on GitHub, numbers only."""

import io

from rag_corpus_check.core.progress import Progress


def test_quiet_during_the_first_seconds():
    out = io.StringIO()
    p = Progress(stream=out, delay=3600)
    for i in range(100_000):
        p.tick("reading corpus.jsonl", i)
    p.close()
    assert out.getvalue() == ""


def test_rate_limited_and_folded_on_github():
    out = io.StringIO()
    p = Progress(stream=out, delay=0, interval=0, github=True)
    p.tick("reading corpus.jsonl", 4096, part=(50, 200))
    p.tick("retrieving with BM25", 8192, 16384, unit="questions")
    p.tick("reading corpus.jsonl", 4097)  # not a sampling point: nothing
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "::group::rag-corpus-check progress"
    assert lines[1].startswith("rag-corpus-check: reading corpus.jsonl: 4,096 records, 25%, ")
    assert lines[2].startswith("rag-corpus-check: retrieving with BM25: 8,192 questions, 50%, ")
    assert lines[3] == "::endgroup::" and len(lines) == 4


def test_interval_between_lines():
    out = io.StringIO()
    p = Progress(stream=out, delay=0, interval=3600)
    p.start -= 10
    for i in range(0, 10 * 4096, 4096):
        p.tick("x", i + 4096)
    assert p.printed == 0  # the first sampling point is within the interval of start


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("RAG_CORPUS_CHECK_PROGRESS", "0")
    out = io.StringIO()
    p = Progress(stream=out, delay=0, interval=0)
    p.tick("x", 4096)
    assert out.getvalue() == ""
