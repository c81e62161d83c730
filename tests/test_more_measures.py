"""RR@k, Success@k, AP@k and Rprec end to end: in thresholds, `max_drop`, the
`measures:` list, the base comparison, shards and merge, the summary and the
results JSON. Their values are checked against trec_eval in test_oracle.py."""

import json

import pytest

from rag_corpus_check.commands.cli import main
from support.repos import commit, edit, init

EXTRA = """thresholds:
  P@5: 0.30
  R@5: 0.80
  nDCG@5: 0.75
  RR@5: 0.5
  AP@10: {min: 0.3, max_drop: 0.05}
measures: [Success@1, Rprec, RR@10]
"""


def _config(repo):
    cfg = repo / ".rag-corpus-check.yml"
    text = cfg.read_text()
    cfg.write_text(text[:text.index("thresholds:")] + EXTRA)


def _run(tmp_path, name, *argv):
    out = tmp_path / name
    code = main([*argv, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md")])
    return code, json.loads((out / "r.json").read_text()), (out / "s.md").read_text(), str(out / "r.json")


def test_new_measures_are_reported_gated_and_stated(repo, tmp_path, capsys):
    _config(repo)
    code, res, summary, _ = _run(tmp_path, "o")
    assert code == 0, capsys.readouterr().out
    assert {"RR@5", "AP@10", "Success@1", "Rprec", "RR@10"} <= set(res["metrics"])
    assert [t["measure"] for t in res["thresholds"]] == ["P@5", "R@5", "nDCG@5", "RR@5", "AP@10"]
    for q in res["queries"]:
        if q["status"] == "ok":
            assert q["values"]["RR@10"] >= q["values"]["RR@5"]
            assert q["values"]["Success@1"] in (0.0, 1.0)
    assert "RR@k: 1/rank of the first relevant document" in summary
    assert "Rprec: relevant documents in the top R / R" in summary
    assert "| `AP@10` |" in summary


def test_a_failing_new_measure_fails_the_gate(repo, tmp_path, capsys):
    _config(repo)
    edit(repo / ".rag-corpus-check.yml", "RR@5: 0.5", "RR@5: 0.99")
    code, res, _, _ = _run(tmp_path, "o")
    t = next(t for t in res["thresholds"] if t["measure"] == "RR@5")
    assert code == 1 and t["passed"] is False and res["verdict"] == "fail"


@pytest.mark.parametrize("name,hint", [("MRR@10", "did you mean RR@10?"), ("MAP", "did you mean AP@10?"),
                                       ("Rprec@5", "did you mean Rprec (it takes no k)?"),
                                       ("hit_rate@3", "did you mean Success@3?")])
def test_other_tools_names_get_a_hint(repo, tmp_path, capsys, name, hint):
    edit(repo / ".rag-corpus-check.yml", "  nDCG@5: 0.75", f"  nDCG@5: 0.75\nmeasures: [{name}]")
    code = main(["--output", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == 2 and hint in out and ".rag-corpus-check.yml:" in out


@pytest.mark.parametrize("n", [2, 3])
def test_merged_shards_carry_the_new_measures_bit_for_bit(repo, tmp_path, capsys, n):
    _config(repo)
    _, whole, _, _ = _run(tmp_path, "whole")
    paths = [_run(tmp_path, f"s{i}", "--shard", f"{i}/{n}")[3] for i in range(1, n + 1)]
    _, merged, _, _ = _run(tmp_path, "merged", "merge", *paths)
    assert merged["metrics"] == whole["metrics"] and merged["thresholds"] == whole["thresholds"]


def test_the_base_comparison_covers_them_and_max_drop_gates(repo, tmp_path, capsys):
    _config(repo)
    init(repo)
    base = commit(repo, "base")
    # The head ranks nothing for most questions: AP@10 drops far more than 0.05.
    rows = (repo / "run.jsonl").read_text().splitlines()
    (repo / "run.jsonl").write_text("\n".join(rows[:2]) + "\n")
    commit(repo, "a worse run")
    code, res, summary, _ = _run(tmp_path, "o", "--base", base)
    deltas = {d["measure"]: d for d in res["comparison"]["deltas"]}
    assert {"RR@5", "AP@10", "Success@1", "Rprec", "RR@10"} <= set(deltas)
    assert deltas["AP@10"]["delta"] < -0.05
    t = next(t for t in res["thresholds"] if t["measure"] == "AP@10")
    assert code == 1 and t["passed"] is False and "max_drop 0.05" in t["note"]
    assert "| `Rprec` |" in summary
