"""--base: real throw-away git repositories with a base and a head commit."""

import json
import shutil

import pytest

from conftest import EXAMPLE, off_runner
from rag_corpus_check.commands.cli import main
from rag_corpus_check.gate.compare import paired_randomization
from support import repos
from support.repos import commit, edit


@pytest.fixture
def gitrepo(tmp_path, monkeypatch):
    repo = tmp_path / "kb"
    shutil.copytree(EXAMPLE, repo)
    off_runner(monkeypatch, repo)
    return repos.init(repo)


def run(tmp_path, capsys, *argv, config=".rag-corpus-check.yml"):
    out = tmp_path / "out"
    code = main(["--config", config, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), *argv])
    text = capsys.readouterr().out
    return code, text, json.loads((out / "r.json").read_text()), (out / "s.md").read_text()


def set_status(repo, doc_id, status):
    rows = (repo / "corpus.jsonl").read_text().splitlines()
    for i, row in enumerate(rows):
        rec = json.loads(row)
        if rec["id"] == doc_id:
            rec["status"] = status
            rows[i] = json.dumps(rec)
    (repo / "corpus.jsonl").write_text("\n".join(rows) + "\n")


def test_corpus_change_regression_with_positions(gitrepo, tmp_path, capsys):
    base = commit(gitrepo, "base")
    set_status(gitrepo, "policy-002", "stale")  # the answer to q01 is withdrawn from the index
    commit(gitrepo, "deprecate policy-002")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    cmp_ = res["comparison"]
    assert cmp_["base_sha"] == base and cmp_["rules"]["source"] == "base"
    q01 = next(q for q in cmp_["questions"] if q["query_id"] == "q01")
    assert q01["delta"] < 0
    moved = {d["doc_id"]: d for d in q01["documents"]}
    assert moved["policy-002"]["change"] == "left the top-K"
    assert moved["policy-002"]["base_position"] == 1 and moved["policy-002"]["head_position"] is None
    nd = next(d for d in cmp_["deltas"] if d["measure"] == "nDCG@5")
    assert nd["delta"] < 0 and nd["base"] > nd["head"]
    assert 0 < nd["p_value"] <= 1 and nd["paired_questions"] == 14
    assert "What changed in this PR" in summary and "Questions that dropped" in summary
    assert "policy\\-002 (grade 2): left the top-K, 1 → —" in summary
    assert not cmp_["gold_changed"] and cmp_["system_changed"]


def test_gold_regrade_label_diff_and_attribution(gitrepo, tmp_path, capsys):
    base = commit(gitrepo, "base")
    edit(gitrepo / "gold.yaml", "      faq-004: 1\n", "      faq-004: 2\n")  # re-grade
    edit(gitrepo / "gold.yaml", "      howto-003: 0\n", "")  # remove a label
    set_status(gitrepo, "policy-002", "stale")  # and a system change in the same PR
    commit(gitrepo, "regrade and deprecate")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    cmp_ = res["comparison"]
    q01 = next(e for e in cmp_["labels"] if e["query_id"] == "q01")
    assert q01["regraded"] == {"faq-004": [1, 2]} and q01["removed"] == {"howto-003": 0}
    att = cmp_["attribution"]["measures"]["nDCG@5"]
    total = att["head"] - att["base"]
    assert att["system"] + att["labels"] == pytest.approx(total, abs=1e-12)
    assert att["system"] < 0
    assert any("labels and the ranking of the same 1 questions (the first: `q01`)" in p["message"] for p in res["problems"])
    assert "Where the change comes from" in summary and "Gold labels changed in" in summary


def test_lowered_threshold_fails_and_base_rule_is_enforced(gitrepo, tmp_path, capsys):
    edit(gitrepo / ".rag-corpus-check.yml", "  nDCG@5: 0.65", "  nDCG@5: 0.70")
    base = commit(gitrepo, "base")
    code, *_ = run(tmp_path, capsys, "--base", base)
    assert code == 0  # 0.7010 >= 0.70
    edit(gitrepo / ".rag-corpus-check.yml", "  nDCG@5: 0.70", "  nDCG@5: 0.10")
    edit(gitrepo / ".rag-corpus-check.yml", "  P@5: 0.25", "  P@5: 0.99")  # raising is fine
    commit(gitrepo, "lower the bar")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    assert code == 1 and res["verdict"] == "fail"
    rules = res["comparison"]["rules"]
    assert rules["violated"] and rules["loosened"] == ["threshold `nDCG@5` lowered: 0.7 → 0.1"]
    limits = {t["measure"]: t["limit"] for t in res["thresholds"]}
    assert limits["nDCG@5"] == 0.70 and limits["P@5"] == 0.99  # base min kept, head raise kept
    assert "This PR loosens the rules" in summary


def test_rule_change_with_reason_is_allowed_and_called_out(gitrepo, tmp_path, capsys):
    base = commit(gitrepo, "base")
    edit(gitrepo / ".rag-corpus-check.yml", "  nDCG@5: 0.65", "  nDCG@5: 0.60")
    with open(gitrepo / ".rag-corpus-check.yml", "a") as f:
        f.write('rule_change_reason: "new product area, labels are being rebuilt (TICKET-12)"\n')
    commit(gitrepo, "lower the bar on purpose")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    assert code == 0
    assert res["comparison"]["rules"]["source"] == "head-override"
    caution = next(p for p in summary.split("\n\n") if "changed the gate's rules" in p)
    assert caution.startswith("> [!CAUTION]") and "TICKET\\-12" in caution and "`nDCG@5`" in caution
    assert summary.count("changed the gate's rules") == 1  # said once, under the title


def test_changed_convention_needs_the_override(gitrepo, tmp_path, capsys):
    base = commit(gitrepo, "base")
    edit(gitrepo / ".rag-corpus-check.yml", "  gain: linear", "  gain: exponential")
    commit(gitrepo, "switch gain")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    assert code == 1
    assert res["conventions"]["gain"] == "linear"  # the base convention was used
    assert "convention `gain` changed: linear → exponential" in res["comparison"]["rules"]["loosened"]


def test_max_drop_exceeded_while_above_minimum(gitrepo, tmp_path, capsys):
    edit(gitrepo / ".rag-corpus-check.yml", "  nDCG@5: 0.65", "  nDCG@5: {min: 0.50, max_drop: 0.01}")
    base = commit(gitrepo, "base")
    set_status(gitrepo, "policy-002", "stale")
    commit(gitrepo, "deprecate")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    t = next(t for t in res["thresholds"] if t["measure"] == "nDCG@5")
    assert t["value"] > 0.50 and t["passed"] is False and "more than max_drop 0.01" in t["note"]
    assert code == 1


def test_unknown_base_revision_is_an_input_error(gitrepo, tmp_path, capsys):
    commit(gitrepo, "only")
    code, text, res, summary = run(tmp_path, capsys, "--base", "0" * 40)
    assert code == 2
    p = res["problems"][0]
    assert p["kind"] == "base" and "fetch-depth: 2" in p["message"] and "git fetch" in p["message"]


def test_not_a_git_repository(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "plain"
    shutil.copytree(EXAMPLE, repo)
    monkeypatch.chdir(repo)
    code, text, res, summary = run(tmp_path, capsys, "--base", "main")
    assert code == 2 and "no git checkout" in text


def test_config_introduced_in_this_pr(gitrepo, tmp_path, capsys):
    (gitrepo / ".rag-corpus-check.yml").rename(tmp_path / "cfg.yml")
    base = commit(gitrepo, "data only")
    (tmp_path / "cfg.yml").rename(gitrepo / ".rag-corpus-check.yml")
    commit(gitrepo, "add the check")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    assert code == 0
    assert res["comparison"]["rules"]["source"] == "head-first-introduction"
    assert "first introduction" in summary


def test_base_symlink_is_refused(gitrepo, tmp_path, capsys):
    (gitrepo / "gold.yaml").rename(gitrepo / "real-gold.yaml")
    (gitrepo / "gold.yaml").symlink_to("/etc/passwd")
    base = commit(gitrepo, "base with a symlink")
    (gitrepo / "gold.yaml").unlink()
    (gitrepo / "real-gold.yaml").rename(gitrepo / "gold.yaml")
    commit(gitrepo, "fixed")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    assert code == 2, text  # the head is fine, but the base cannot be measured: nothing could be compared
    assert any("is a symlink" in p["message"] and base[:12] in p["message"] for p in res["problems"]), res["problems"]
    code, text, res, summary = run(tmp_path, capsys, "--base", base, "--no-require-base")
    assert code == 0, text  # the caller opted out: the base's rules, no comparison, and notes that say so
    assert any("is a symlink" in n for n in res["comparison"]["notes"])


def test_without_base_says_so(gitrepo, tmp_path, capsys):
    commit(gitrepo, "x")
    code, text, res, summary = run(tmp_path, capsys)
    assert res["comparison"] is None and "No base was compared" in summary


def test_new_documents_without_judgement_warn(gitrepo, tmp_path, capsys):
    base = commit(gitrepo, "base")
    with open(gitrepo / "corpus.jsonl", "a") as f:
        f.write(json.dumps({"id": "faq-100", "title": "How long are deleted backups kept in the Trash?",
                            "text": "Deleted backups are kept in the Trash for 30 days.", "type": "faq",
                            "status": "active", "snapshot": "2026-11-30"}) + "\n")
    commit(gitrepo, "new doc")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    new = res["comparison"]["unjudged_new_docs"]
    assert any(e["query_id"] == "q01" and "faq-100" in e["doc_ids"] for e in new)
    assert any("without a gold judgement" in p["message"] for p in res["problems"])


def test_randomization_test():
    assert paired_randomization([0.5] * 20, [0.5] * 20) == 1.0
    p_big = paired_randomization([0.2] * 20, [0.8] * 20)
    assert p_big < 0.001
    p_noise = paired_randomization([0.5, 0.6, 0.4, 0.5] * 5, [0.6, 0.5, 0.5, 0.4] * 5)
    assert p_noise > 0.5
    assert paired_randomization([0.1, 0.2], [0.3, 0.1]) == paired_randomization([0.1, 0.2], [0.3, 0.1])


def test_randomization_work_is_bounded():
    """Look-ups per measure: n/8 per permutation, the permutations shrinking
    past 2,000 questions so the product stays within WORK (never below
    1,000 permutations)."""
    from rag_corpus_check.gate.compare import MIN_PERMUTATIONS, PERMUTATIONS, WORK, permutations_for

    assert permutations_for(10) == permutations_for(2000) == PERMUTATIONS
    for n in (4000, 10_000, 20_000):
        assert permutations_for(n) * -(-n // 8) <= WORK
    assert permutations_for(1_000_000) == MIN_PERMUTATIONS
