"""--benchmark-json: the means in github-action-benchmark's
`customBiggerIsBetter` format (a JSON list of {name, unit, value, extra}),
for a chart of every measure over time without a server. Written when the
check measured (pass or fail), from the merge of shards too; never for
invalid input; an undefined mean is left out."""

import json

import pytest

from rag_corpus_check.commands.cli import main
from rag_corpus_check.core.problems import Problems
from rag_corpus_check.metrics.evaluate import Evaluation
from rag_corpus_check.metrics.measures import Measure
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.pipeline.outcome import Measured, Outcome
from rag_corpus_check.report.results import BENCHMARK_UNIT, benchmark_entries


def _run(tmp_path, name, *argv):
    out = tmp_path / name
    code = main([*argv, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md")])
    results = out / "r.json"
    return code, json.loads(results.read_text()) if results.exists() else None


def _entries(path):
    data = json.loads(path.read_text())
    # github-action-benchmark (v1.22.0, dist/src/extract.js) parses it with
    # zod: an array of {name: string, value: number, unit: string,
    # range?: string, extra?: string}.
    assert isinstance(data, list)
    for entry in data:
        assert set(entry) <= {"name", "value", "unit", "range", "extra"}
        assert isinstance(entry["name"], str) and isinstance(entry["unit"], str)
        assert isinstance(entry["value"], float | int) and not isinstance(entry["value"], bool)
    return {e["name"]: e for e in data}


def test_every_mean_of_a_check(repo, tmp_path, capsys):
    bench = tmp_path / "bench.json"
    code, res = _run(tmp_path, "a", "--benchmark-json", str(bench))
    assert code == 0
    entries = _entries(bench)
    assert {name: e["value"] for name, e in entries.items()} == res["metrics"]
    assert list(entries) == ["P@5", "R@5", "nDCG@5", "Judged@5"]
    assert {e["unit"] for e in entries.values()} == {BENCHMARK_UNIT}
    assert entries["P@5"]["extra"] == "14 questions in the means (1 without a relevant document left out)"
    assert f"benchmark: {bench}" in capsys.readouterr().out


def test_a_failed_gate_still_charts(repo, tmp_path, capsys):
    (repo / ".rag-corpus-check.yml").write_text(
        (repo / ".rag-corpus-check.yml").read_text().replace("nDCG@5: 0.75", "nDCG@5: 0.99"))
    bench = tmp_path / "bench.json"
    code, res = _run(tmp_path, "a", "--benchmark-json", str(bench))
    assert code == 1 and _entries(bench)["nDCG@5"]["value"] == res["metrics"]["nDCG@5"]


def test_invalid_input_writes_none_and_removes_a_stale_one(repo, tmp_path, capsys):
    bench = tmp_path / "bench.json"
    bench.write_text("[]")  # from an earlier run: must not pass for this one's
    (repo / "gold.yaml").write_text("queries: [")
    code, res = _run(tmp_path, "a", "--benchmark-json", str(bench))
    assert code == 2 and not bench.exists()


def test_an_undefined_mean_is_left_out():
    out = Outcome(Problems(), Context(),
                  measured=Measured(evaluation=Evaluation([], {Measure("P", 5): 0.25, Measure("R", 5): None}, counted=4)))
    assert [e["name"] for e in benchmark_entries(out)] == ["P@5"]
    assert benchmark_entries(Outcome(Problems(), Context())) == []


def test_not_with_a_shard(repo, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--shard", "1/2", "--benchmark-json", "b.json"])
    assert exc.value.code == 2 and "write it from `rag-corpus-check merge`" in capsys.readouterr().err


def test_from_merged_shards_as_from_one_run(repo, tmp_path, capsys):
    whole = tmp_path / "whole.json"
    _run(tmp_path, "w", "--benchmark-json", str(whole))
    paths = []
    for i in (1, 2):
        _run(tmp_path, f"s{i}", "--shard", f"{i}/2")
        paths.append(str(tmp_path / f"s{i}" / "r.json"))
    merged = tmp_path / "merged.json"
    code, _ = _run(tmp_path, "m", "merge", *paths, "--benchmark-json", str(merged))
    assert code == 0 and _entries(merged) == _entries(whole)
