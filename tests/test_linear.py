"""No quadratic step: the Python lines executed by the whole check (load,
validate, cross-check, evaluate, report) and by the BM25 retriever grow
linearly with the data. Lines executed are counted with a tracer, so the
result is deterministic (no wall-clock thresholds)."""

import sys

import pytest

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "bench"))

from generate import generate

from rag_corpus_check.commands.cli import main


def _lines_executed(fn) -> int:
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def _check_lines(tmp_path, docs, queries, config, monkeypatch):
    data = tmp_path / f"d{docs}"
    generate(str(data), docs, queries, depth=20)
    monkeypatch.chdir(data)
    out = tmp_path / f"o{docs}"
    argv = ["--config", config, "--quiet", "--no-github", "--output", str(out / "r.json"),
            "--summary-file", str(out / "s.md")]
    return _lines_executed(lambda: main(argv))


@pytest.mark.parametrize("config", [".rag-corpus-check.yml", "bm25.rag-corpus-check.yml"],
                         ids=["committed-run", "bm25"])
def test_work_grows_linearly(tmp_path, monkeypatch, capsys, config):
    # numpy imported before counting: its import is thousands of lines
    # counted in whichever run imports it first, which would compare
    # different work, not find a quadratic step.
    pytest.importorskip("numpy")
    small = _check_lines(tmp_path, 500, 200, config, monkeypatch)
    large = _check_lines(tmp_path, 2000, 800, config, monkeypatch)
    ratio = large / small
    # 4x the data: linear work gives ~4x (fixed costs make it less); a
    # quadratic step anywhere would push it towards 16x.
    assert 2.0 < ratio < 5.0, (small, large, ratio)
