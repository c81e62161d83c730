"""--shard i/n and merge: exactly the means and verdict of one unsharded run."""

import json

import pytest

from rag_corpus_check.commands.cli import main
from rag_corpus_check.pipeline.stages import in_shard


def _run(tmp_path, name, *argv):
    out = tmp_path / name
    code = main([*argv, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md")])
    return code, json.loads((out / "r.json").read_text()), str(out / "r.json")


@pytest.mark.parametrize("config", [".rag-corpus-check.yml", "bm25.yml"])
@pytest.mark.parametrize("n", [1, 3, 4])
def test_merged_shards_equal_the_unsharded_run(repo, tmp_path, capsys, n, config):
    if config == "bm25.yml":  # the built-in retriever, sharded too
        s = (repo / ".rag-corpus-check.yml").read_text().replace("run: run.jsonl\n", "")
        (repo / "bm25.yml").write_text(s)
    code, whole, _ = _run(tmp_path, "whole", "--config", config)
    paths = []
    for i in range(1, n + 1):
        c, part, path = _run(tmp_path, f"s{i}", "--config", config, "--shard", f"{i}/{n}")
        assert c == 0 and part["verdict"] == "partial" and part["shard"] == {"index": i, "count": n}
        paths.append(path)
    capsys.readouterr()
    mcode, merged, _ = _run(tmp_path, "merged", "merge", "--config", config, *reversed(paths))
    assert mcode == code
    assert merged["verdict"] == whole["verdict"]
    assert merged["metrics"] == whole["metrics"]  # bit for bit
    assert merged["thresholds"] == whole["thresholds"]
    assert merged["queries"] == whole["queries"]
    assert merged["irrelevant_by_type"] == whole["irrelevant_by_type"]


def test_merge_refuses_missing_or_duplicate_shards(repo, tmp_path, capsys):
    _, _, p1 = _run(tmp_path, "a", "--shard", "1/3")
    _, _, p2 = _run(tmp_path, "b", "--shard", "2/3")
    code, merged, _ = _run(tmp_path, "m", "merge", p1, p2)
    assert code == 2 and any("shards missing: 3 of 3" in p["message"] for p in merged["problems"])
    code, merged, _ = _run(tmp_path, "m2", "merge", p1, p1, p2)
    assert code == 2 and any("given twice" in p["message"] for p in merged["problems"])


def test_merge_refuses_shards_of_other_inputs(repo, tmp_path, capsys):
    _, _, p1 = _run(tmp_path, "a", "--shard", "1/2")
    rows = (repo / "run.jsonl").read_text().splitlines()
    (repo / "run.jsonl").write_text("\n".join(reversed(rows)) + "\n")
    _, _, p2 = _run(tmp_path, "b", "--shard", "2/2")
    code, merged, _ = _run(tmp_path, "m", "merge", p1, p2)
    assert code == 2 and any("different input files" in p["message"] for p in merged["problems"])


def test_shards_partition_the_questions():
    ids = [f"q{i}" for i in range(1000)]
    for n in (1, 2, 7):
        owners = [[i for i in range(1, n + 1) if in_shard(q, (i, n))] for q in ids]
        assert all(len(o) == 1 for o in owners)


@pytest.mark.parametrize("bad", ["0/2", "3/2", "x", "1/0", "1-2"])
def test_bad_shard_argument(repo, bad, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--shard", bad])
    assert exc.value.code == 2


@pytest.mark.parametrize("forge", ["measure", "kind"])
def test_a_forged_shard_is_refused_and_prints_nothing_raw(repo, tmp_path, capsys, forge):
    """A shard result is an artifact another job wrote: a measure name that
    is a workflow command, or a problem kind that is HTML, is refused as not
    ours (exit 2) and never printed raw."""
    _, _, p1 = _run(tmp_path, "a", "--shard", "1/2")
    _, _, p2 = _run(tmp_path, "b", "--shard", "2/2")
    with open(p2) as f:
        doc = json.load(f)
    if forge == "measure":
        doc["queries"][0]["values"]["x\n::error title=forged::all good\n"] = 1.0
    else:
        doc["problems"].append({"kind": "<img src=x onerror=alert(1)> [l](https://e.x)", "severity": "warning",
                                "file": None, "line": None, "id": None, "message": "m"})
    with open(p2, "w") as f:
        json.dump(doc, f)
    capsys.readouterr()
    out = tmp_path / "m"
    code = main(["merge", p1, p2, "--github", "--output", str(out / "r.json"), "--summary-file", str(out / "s.md")])
    printed = capsys.readouterr().out
    assert code == 2
    assert "not written by rag-corpus-check" in printed
    assert "::error title=forged" not in printed and "<img" not in (out / "s.md").read_text()
