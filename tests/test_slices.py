"""Slices: gold questions carry `tags`, and each tag is a slice with its
means, its base → head deltas (the paired test of the whole set) and, under
`slices:` in the config, its own thresholds — locked to the base like every
rule. Real files, real throw-away git repositories (base commit, head
commit, `--base`), as tests/test_yardstick.py plays its attacks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval
import yaml

from conftest import check, write
from rag_corpus_check.report.comment import RunInfo, load_results, render
from support.github import run_action_step
from support.repos import commit

CONFIG = ".rag-corpus-check.yml"
# The example's questions on prices, plans and money; q05 is also about the SLA, q13 also in Russian.
TAGS = {"q04": ["billing"], "q05": ["billing", "sla"], "q09": ["billing"], "q11": ["billing"],
        "q13": ["billing", "ru"], "q14": ["storage"]}
BILLING_ONLY = ("faq-001", "faq-007")  # relevant to billing questions (and to q14, storage)


def tag(kb, tags: dict[str, list[str]] = TAGS) -> None:
    """Add ``tags`` to the example's gold.yaml, as a team would write them
    (the rest of the file, comments and lines, as it is)."""
    path = kb / "gold.yaml"
    text = path.read_text()
    for qid, ts in tags.items():
        marker = f"  - query_id: {qid}\n"
        assert marker in text
        text = text.replace(marker, f"{marker}    tags: [{', '.join(ts)}]\n")
    path.write_text(text)


def configure(kb, slices: dict, config: str = CONFIG, **extra) -> None:
    """Only the comparison and the slices can fail: a low overall minimum
    with a max_drop of 0.2, a per-question rule that allows many drops."""
    cfg = yaml.safe_load((kb / config).read_text())
    cfg["thresholds"] = {"nDCG@5": {"min": 0.3, "max_drop": 0.2}}
    cfg["per_question"] = {"max_questions": 20}
    cfg["slices"] = slices
    cfg.update(extra)
    (kb / config).write_text(yaml.safe_dump(cfg, sort_keys=False))


BILLING = {"billing": {"min_questions": 3, "thresholds": {"nDCG@5": {"min": 0.3, "max_drop": 0.05}}}}


def stale(kb, *doc_ids: str) -> None:
    path = kb / "corpus.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**r, "status": "stale"} if r["id"] in doc_ids else r) + "\n" for r in rows))


def slice_of(results: dict, name: str) -> dict:
    return next(s for s in results["slices"]["slices"] if s["name"] == name)


def reasons(text: str) -> list[str]:
    out = []
    for line in text.split("the gate failed because:\n", 1)[1].splitlines():
        if not line.startswith("    - "):
            return out
        out.append(line[6:])
    return out


# ---------------------------------------------------------------- the means


def test_slice_means_equal_pytrec_eval_on_the_subset(kb, tmp_path, capsys):
    """Per slice, every mean equals trec_eval's (pytrec_eval) over the
    slice's questions alone, and the mean of the per-question values."""
    tag(kb)
    config = "committed-run.rag-corpus-check.yml"
    code, text, results, summary = check(tmp_path, capsys, config=config)
    assert code in (0, 1), text
    gold = yaml.safe_load((kb / "gold.yaml").read_text())["queries"]
    run = [json.loads(line) for line in (kb / "run.jsonl").read_text().splitlines()]
    per_q = {q["query_id"]: q for q in results["queries"]}
    names = {s["name"] for s in results["slices"]["slices"]}
    assert names == {"billing", "sla", "ru", "storage"}
    for name in names:
        members = [q for q in gold if name in q.get("tags", [])]
        ok = [q["query_id"] for q in members if max(q["relevant"].values(), default=0) >= 1]
        qrels = {q["query_id"]: q["relevant"] for q in members}
        trec_run = {r["query_id"]: {d: float(-i) for i, d in enumerate(r["ranking"], 1)}
                    for r in run if r["query_id"] in qrels}
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {"P_5", "recall_5", "ndcg_cut_5"}).evaluate(trec_run)
        got = slice_of(results, name)
        assert got["questions"] == len(members) and got["in_means"] == len(ok)
        for ours, trec in (("P@5", "P_5"), ("R@5", "recall_5"), ("nDCG@5", "ndcg_cut_5")):
            expected = sum(theirs[q][trec] for q in ok) / len(ok)
            assert got["metrics"][ours] == pytest.approx(expected, abs=1e-12), (name, ours)
            by_hand = sum(per_q[q]["values"][ours] for q in ok) / len(ok)
            assert got["metrics"][ours] == pytest.approx(by_hand, abs=1e-15), (name, ours)
    assert per_q["q04"]["tags"] == ["billing"] and "tags" not in per_q["q01"]
    assert "### Slices (4)" in summary and "| billing | 5 |" in summary


def test_tags_read_alike_from_yaml_json_and_jsonl_fast_and_exact(kb, tmp_path, capsys):
    """The gold formats that can carry tags (YAML, JSON, JSONL — read by
    the fast reader, and by the exact one when a line is unusual) give the
    same slices."""
    tag(kb)
    config = "committed-run.rag-corpus-check.yml"
    _, _, from_yaml, _ = check(tmp_path / "yaml", capsys, config=config)
    doc = yaml.safe_load((kb / "gold.yaml").read_text())
    lines = [json.dumps(q) for q in doc["queries"]]
    write(kb / "gold.json", json.dumps(doc))
    write(kb / "gold.jsonl", "\n".join(lines) + "\n")
    write(kb / "gold-exact.jsonl", "\n".join(lines) + "\n\n")  # a blank line: the exact reader
    for name in ("gold.json", "gold.jsonl", "gold-exact.jsonl"):
        cfg = (kb / config).read_text().replace("gold: gold.yaml", f"gold: {name}")
        write(kb / f"{name}.yml", cfg)
        _, text, results, _ = check(tmp_path / name, capsys, config=f"{name}.yml")
        assert results["slices"] == from_yaml["slices"], (name, text)


@pytest.mark.parametrize("tags,why", [
    ("[billing, billing]", "tags: lists the same item twice; keep one"),
    ("['bil ling']", "tags[0]: does not match the pattern"),
    ('["billing\\t"]', "tags[0]: does not match the pattern"),
    ("[" + ", ".join(f"t{i}" for i in range(21)) + "]", "tags: more than 20 items"),
    ("billing", "tags: expected array, got string"),
])
def test_an_invalid_tag_is_an_input_error_at_its_line(kb, tmp_path, capsys, tags, why):
    tag(kb)
    path = kb / "gold.yaml"
    path.write_text(path.read_text().replace("tags: [storage]", f"tags: {tags}"))
    line = path.read_text().splitlines().index(f"    tags: {tags}") + 1
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    problem = next(p for p in results["problems"] if p["severity"] == "error")
    assert (problem["file"], problem["line"], problem["id"]) == ("gold.yaml", line, "q14"), problem
    assert why in problem["message"], problem


def test_a_gold_list_merges_tags_and_refuses_two_different_ones(kb, tmp_path, capsys):
    """A worksheet (no tags) listed after the gold file keeps the gold's
    tags; the same question tagged differently in two files is an error."""
    tag(kb)
    write(kb / "more.yaml", "queries:\n  - query_id: q04\n    relevant: {howto-004: 0}\n")
    cfg = (kb / CONFIG).read_text().replace("gold: gold.yaml", "gold: [gold.yaml, more.yaml]")
    write(kb / CONFIG, cfg)
    code, text, results, _ = check(tmp_path / "a", capsys)
    assert slice_of(results, "billing")["questions"] == 5, text
    write(kb / "more.yaml", "queries:\n  - query_id: q04\n    tags: [sales]\n    relevant: {howto-004: 0}\n")
    code, text, results, _ = check(tmp_path / "b", capsys)
    assert code == 2, text
    problem = next(p for p in results["problems"] if p["severity"] == "error")
    assert (problem["file"], problem["line"], problem["id"]) == ("more.yaml", 2, "q04")
    assert "tags differ between more.yaml:2 and gold.yaml:" in problem["message"]


# ---------------------------------------------------------------- the gate


def test_a_pr_breaking_only_billing_fails_naming_the_slice(kb, tmp_path, capsys):
    """The overall mean drops by less than its max_drop and stays above its
    minimum; the billing slice loses a third of its nDCG@5."""
    tag(kb)
    configure(kb, BILLING)
    base = commit(kb, "base: billing is a slice with its own bar")
    code, text, results, _ = check(tmp_path / "base", capsys)
    assert code == 0, text
    stale(kb, *BILLING_ONLY)
    commit(kb, "withdraw two documents only billing questions need")
    code, text, results, summary = check(tmp_path / "pr", capsys, "--base", base)
    assert code == 1 and results["rules_source"] == "base", text
    assert all(t["passed"] for t in results["thresholds"]), results["thresholds"]
    overall = next(d for d in results["comparison"]["deltas"] if d["measure"] == "nDCG@5")
    assert -0.2 < overall["delta"] < -0.05, overall
    why = reasons(text)
    assert len(why) == 1 and why[0].startswith("slice `billing`: `nDCG@5` is "), why
    assert "more than max_drop 0.05" in why[0], why
    billing = slice_of(results, "billing")
    assert billing["gated"] is True and billing["passed"] is False
    views = {v["gold"]: v for v in billing["views"]}
    assert set(views) == {"head", "base"} and views["head"]["paired_questions"] == 5
    delta = next(d for d in views["head"]["deltas"] if d["measure"] == "nDCG@5")
    assert delta["delta"] < -0.3 and delta["p_value"] is not None and delta["paired_questions"] == 5
    # every slice reported; the console lists only the slices that moved (and the gated ones)
    assert {s["name"] for s in results["slices"]["slices"]} == {"billing", "sla", "ru", "storage"}
    console = text.split("  slices:\n", 1)[1].split("\n  means over", 1)[0]
    assert "FAIL billing (5 questions in the means)" in console and "nDCG@5 0.4993 -> 0.1658" in console
    assert "| billing | 5 | " in summary and "❌" in summary.split("### Slices", 1)[1]
    # the PR comment, rebuilt from the results file, says which rule failed
    body = render(load_results(json.dumps(results).encode()), RunInfo(1, "https://github.com/o/r/actions/runs/1",
                                                                         "0" * 40, "failure"))
    rules = body.split("#### Other rules of the gate\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert rules[2].startswith("| slice billing | `nDCG@5` | 0.1658 | ≥ 0.3, drop ≤ 0.05 | ❌ ("), rules
    assert rules[3] == "| per question | `nDCG@5` | 2 fell by > 0.5000 | at most 20 | ✅ |", rules


def test_a_slice_that_did_not_move_is_not_in_the_console(kb, tmp_path, capsys):
    tag(kb)
    configure(kb, BILLING)
    base = commit(kb, "base")
    stale(kb, "howto-003")  # relevant to q10 only (no tag)
    commit(kb, "withdraw a document of an untagged question")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    console = text.split("  slices:\n", 1)[1].split("\n  means over", 1)[0]
    assert console.splitlines() == ["    ok   billing (5 questions in the means)",
                                    "      ok   nDCG@5       0.4993  >= 0.3  (base's gold set: 0.4993)"], console
    assert not any(d["delta"] for s in results["slices"]["slices"] for v in s["views"] for d in v["deltas"])


def test_loosening_a_slice_rule_is_reported_and_the_base_rule_holds(kb, tmp_path, capsys):
    tag(kb)
    configure(kb, BILLING)
    base = commit(kb, "base")
    stale(kb, *BILLING_ONLY)
    configure(kb, {"billing": {"min_questions": 6, "thresholds": {"nDCG@5": {"min": 0.1, "max_drop": 0.5}}}})
    commit(kb, "withdraw billing documents and lower the billing bar")
    code, text, results, _ = check(tmp_path / "loose", capsys, "--base", base)
    assert code == 1 and results["rules_source"] == "base", text
    rules = results["comparison"]["rules"]
    assert rules["violated"] is True
    assert set(rules["loosened"]) == {
        "slice `billing`: threshold `nDCG@5` lowered: 0.3 → 0.1",
        "slice `billing`: `max_drop` of `nDCG@5` loosened: 0.05 → 0.5",
        "slice `billing`: `min_questions` raised: 3 → 6",
    }, rules
    billing = slice_of(results, "billing")
    assert billing["min_questions"] == 3 and billing["gated"] is True
    assert [(t["limit"], t["max_drop"], t["passed"]) for t in billing["thresholds"]] == [(0.3, 0.05, False)]
    assert any(r.startswith("slice `billing`: `nDCG@5` is") for r in reasons(text)), text
    # the same change with a new reason: the head's rules, and the slice passes its own (lower) bar
    configure(kb, {"billing": {"min_questions": 6, "thresholds": {"nDCG@5": {"min": 0.1, "max_drop": 0.5}}}},
              rule_change_reason="billing answers moved to the new pricing pages")
    commit(kb, "state why")
    code, text, results, _ = check(tmp_path / "override", capsys, "--base", base)
    assert code == 0 and results["rules_source"] == "head-override", text


def test_removing_a_slice_loosens_and_tightening_one_does_not(kb, tmp_path, capsys):
    tag(kb)
    configure(kb, BILLING)
    base = commit(kb, "base")
    configure(kb, {})
    commit(kb, "drop the billing slice")
    code, text, results, _ = check(tmp_path / "removed", capsys, "--base", base)
    assert code == 1 and results["comparison"]["rules"]["loosened"] == ["slice `billing` removed from `slices`"]
    assert slice_of(results, "billing")["gated"] is True  # the base's rule still applies
    configure(kb, {"billing": {"min_questions": 2, "thresholds": {"nDCG@5": {"min": 0.4, "max_drop": 0.01}}},
                   "storage": {"min_questions": 1, "thresholds": {"R@5": 0.5}}})
    commit(kb, "raise the billing bar, gate storage too")
    code, text, results, _ = check(tmp_path / "tightened", capsys, "--base", base)
    rules = results["comparison"]["rules"]
    assert code == 0 and rules["loosened"] == [], text
    assert set(rules["changes"]) == {
        "slice `billing`: threshold `nDCG@5` raised: 0.3 → 0.4",
        "slice `billing`: `max_drop` of `nDCG@5` tightened: 0.05 → 0.01",
        "slice `billing`: `min_questions` lowered: 3 → 2",
        "slice `storage` added to `slices`",
    }, rules
    assert [t["limit"] for t in slice_of(results, "billing")["thresholds"]] == [0.4]
    assert slice_of(results, "storage")["passed"] is True


def test_a_small_slice_is_shown_but_not_gated(kb, tmp_path, capsys):
    """`sla` (one question, nDCG@5 0) under a bar of 0.9: too few questions
    at the default min_questions (10), so shown and said so, not failed;
    at min_questions 1 the same slice fails."""
    tag(kb)
    configure(kb, {"sla": {"thresholds": {"nDCG@5": 0.9}}})
    code, text, results, summary = check(tmp_path / "small", capsys)
    assert code == 0, text
    sla = slice_of(results, "sla")
    assert (sla["gated"], sla["passed"], sla["thresholds"], sla["min_questions"]) == (False, None, [], 10)
    assert sla["note"] == ("not gated: 1 question, fewer than min_questions 10 (too few for its thresholds to "
                           "mean anything)")
    assert "---- sla (1 question in the means)" in text and sla["note"] in text
    assert "| sla | 1 | " in summary and sla["note"] in summary
    configure(kb, {"sla": {"min_questions": 1, "thresholds": {"nDCG@5": 0.9}}})
    code, text, results, _ = check(tmp_path / "gated", capsys)
    assert code == 1 and reasons(text) == ["slice `sla`: `nDCG@5` is 0.0000, the threshold is 0.9"], text


def test_a_slice_no_question_carries_is_exit_2_at_its_line(kb, tmp_path, capsys):
    tag(kb)
    configure(kb, {**BILLING, "biling": {"thresholds": {"nDCG@5": 0.5}}})
    line = (kb / CONFIG).read_text().splitlines().index("  biling:") + 1
    code, text, results, summary = check(tmp_path, capsys)
    assert code == 2, text
    [problem] = [p for p in results["problems"] if p["severity"] == "error"]
    assert (problem["kind"], problem["file"], problem["line"]) == ("config", CONFIG, line), problem
    assert "no gold question carries the tag `biling`" in problem["message"]
    assert f"{CONFIG}:{line}" in text


def test_stripping_the_tags_a_base_slice_needs_is_exit_2(kb, tmp_path, capsys):
    """The base's slice rule holds on the head; a head gold set that no
    longer carries the tag is an input error, not a silent pass."""
    tag(kb)
    configure(kb, BILLING)
    base = commit(kb, "base")
    path = kb / "gold.yaml"
    path.write_text(path.read_text().replace("billing, ", "").replace("[billing]", "[other]"))
    configure(kb, {})
    commit(kb, "untag billing and drop its slice")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2, text
    [problem] = [p for p in results["problems"] if p["severity"] == "error"]
    assert problem["file"] == CONFIG and problem["line"] is None
    assert "`billing` (a rule of the base's config, enforced here)" in problem["message"]


def test_merged_shards_give_the_slices_of_one_run(kb, tmp_path, capsys):
    from rag_corpus_check.commands.cli import main

    tag(kb)
    configure(kb, {"billing": {"min_questions": 3, "thresholds": {"nDCG@5": 0.95}}},
              config="committed-run.rag-corpus-check.yml")
    config = "committed-run.rag-corpus-check.yml"
    code, _, whole, _ = check(tmp_path / "whole", capsys, config=config)
    paths = []
    for i in (1, 2, 3):
        out = tmp_path / f"s{i}" / "r.json"
        assert main(["--config", config, "--shard", f"{i}/3", "--output", str(out)]) == 0
        paths.append(str(out))
    capsys.readouterr()
    merged_path = tmp_path / "merged.json"
    mcode = main(["merge", "--config", config, *paths, "--output", str(merged_path)])
    merged = json.loads(merged_path.read_text())
    assert (mcode, merged["verdict"]) == (code, whole["verdict"]) and code == 1
    assert merged["slices"] == whole["slices"]


def test_the_slice_of_every_question_is_the_whole_set(kb, tmp_path, capsys):
    """A tag on every question: the slice's means and paired means are the
    whole set's, bit for bit; its test is the whole set's test (at most
    SLICE_PERMUTATIONS permutations, the count recorded)."""
    from rag_corpus_check.gate.compare import paired_randomization
    from rag_corpus_check.gate.slices import SLICE_PERMUTATIONS

    tag(kb, {f"q{i:02d}": ["all"] for i in range(1, 16)})
    configure(kb, {})
    base = commit(kb, "base")
    stale(kb, *BILLING_ONLY)
    commit(kb, "withdraw two documents")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    everything = slice_of(results, "all")
    assert everything["metrics"] == results["metrics"], text
    for whole, part in zip(results["comparison"]["views"], everything["views"], strict=True):
        assert whole["gold"] == part["gold"] and whole["paired_questions"] == part["paired_questions"] == 14
        for w, p in zip(whole["deltas"], part["deltas"], strict=True):
            assert (w["measure"], w["base"], w["head"], w["delta"]) == (p["measure"], p["base"], p["head"], p["delta"])
            assert p["permutations"] == SLICE_PERMUTATIONS
            changes = {q["query_id"]: q for q in whole["questions"]}
            if w["measure"] == "nDCG@5":
                pairs = [changes[q] for q in sorted(changes)]
                assert p["p_value"] == paired_randomization([c["base"] for c in pairs], [c["head"] for c in pairs],
                                                            permutations=SLICE_PERMUTATIONS)


def test_a_qrels_gold_set_takes_its_tags_from_a_yaml_file_listed_after_it(kb, tmp_path, capsys):
    """TREC qrels cannot carry tags: a YAML file of tags only (`relevant: {}`),
    listed after the qrels under `gold:`, gives them."""
    doc = yaml.safe_load((kb / "gold.yaml").read_text())
    write(kb / "gold.qrels", "".join(f"{q['query_id']} 0 {d} {g}\n" for q in doc["queries"] for d, g in q["relevant"].items()))
    write(kb / "tags.yaml", "queries:\n" + "".join(f"  - query_id: {q}\n    tags: {ts}\n    relevant: {{}}\n"
                                                   for q, ts in TAGS.items()))
    config = "committed-run.rag-corpus-check.yml"
    write(kb / "qrels.yml", (kb / config).read_text().replace("gold: gold.yaml", "gold: [gold.qrels, tags.yaml]"))
    _, _, from_qrels, _ = check(tmp_path / "qrels", capsys, config="qrels.yml")
    tag(kb)
    _, text, from_yaml, _ = check(tmp_path / "yaml", capsys, config=config)
    assert from_qrels["slices"] == from_yaml["slices"] and from_yaml["slices"]["slices"], text


def test_untagging_the_questions_a_pr_breaks_does_not_hide_them(kb, tmp_path, capsys):
    """The PR breaks billing and takes the tag off the broken questions (and
    off enough others to shrink the slice below min_questions): judged by
    the base's gold set — its tags — the slice is whole, gated, and fails."""
    tag(kb)
    configure(kb, BILLING)
    base = commit(kb, "base")
    stale(kb, *BILLING_ONLY)
    path = kb / "gold.yaml"
    path.write_text(path.read_text().replace("tags: [billing, ru]", "tags: [ru]").replace("tags: [billing]\n", "tags: [misc]\n"))
    commit(kb, "withdraw billing documents, untag most billing questions")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    billing = slice_of(results, "billing")
    assert billing["in_means"] == 1 and billing["gated"] is True, billing
    assert [v["paired_questions"] for v in billing["views"]] == [1, 5]
    assert code == 1 and any(r.startswith("slice `billing`:") and "on the base's gold set (5 questions in both)" in r
                             for r in reasons(text)), text


def test_every_new_schema_key_has_a_description():
    from rag_corpus_check.core.schemas import load_schema

    config = load_schema("config")["properties"]["slices"]
    rule = config["additionalProperties"]
    tags = load_schema("gold")["$defs"]["query"]["properties"]["tags"]
    results = load_schema("results")["properties"]["slices"]
    entry = results["properties"]["slices"]["items"]
    nodes = [config, rule, *rule["properties"].values(), tags, load_schema("common")["$defs"]["tag"], results,
             *results["properties"].values(), *entry["properties"].values(),
             *entry["properties"]["thresholds"]["items"]["properties"].values(),
             *entry["properties"]["views"]["items"]["properties"].values(),
             load_schema("results")["properties"]["queries"]["items"]["properties"]["tags"]]
    assert all(node.get("description") for node in nodes), [n for n in nodes if not n.get("description")]


# ---------------------------------------------------------------- the display cap never drops a gated slice


def many(n: int, prefix: str = "t") -> dict[str, list[str]]:
    """``n`` new tags on the untagged questions q01, q02, q03, q06 (at most
    20 a question), each tag on one question."""
    names = [f"{prefix}{i:03d}" for i in range(n)]
    return {("q01", "q02", "q03", "q06")[j]: names[i:i + 20] for j, i in enumerate(range(0, n, 20))}


def named(tags: dict[str, list[str]]) -> dict:
    """A slice rule for each of ``tags``' tags, one that can never fail."""
    return {t: {"min_questions": 1, "thresholds": {"nDCG@5": 0}} for ts in tags.values() for t in ts}


BILLING_REASON = "slice `billing`: `nDCG@5` is 0.1658, the threshold is 0.3"


def _fifty_slices_first(kb) -> tuple[str, str]:
    """The attack's base (billing a slice with its own bar) and its PR (50
    new slices listed before billing, and billing's documents withdrawn)."""
    tag(kb)
    configure(kb, BILLING)
    base = commit(kb, "base: billing is a slice with its own bar")
    extra = many(50)
    tag(kb, extra)
    configure(kb, {**named(extra), **BILLING})
    stale(kb, *BILLING_ONLY)
    return base, commit(kb, "fifty new slices first, and withdraw the documents billing needs")


def test_fifty_new_slices_listed_first_do_not_push_the_base_billing_rule_out(kb, tmp_path, capsys):
    """The attack: a PR breaks billing and lists 50 new slices (a bar of 0,
    one question each) before `billing`. Every slice a config names is
    measured and gated: the base's billing rule fails the PR."""
    base, _ = _fifty_slices_first(kb)
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert results["rules_source"] == "base", text
    assert code == 1 and any(r.startswith(BILLING_REASON) for r in reasons(text)), text
    billing = slice_of(results, "billing")
    assert billing["gated"] is True and billing["passed"] is False
    names = [s["name"] for s in results["slices"]["slices"]]
    assert names[0] == "billing" and len(names) == 54  # the base's rules first; 51 named + sla, ru, storage
    assert (results["slices"]["left_out"], results["slices"]["left_out_tags"]) == (0, [])


def test_a_base_config_gating_more_than_fifty_slices_gates_every_one(kb, tmp_path, capsys):
    """The base's own config names 60 slices, `billing` last: it is gated
    all the same, with a base and without one."""
    extra = many(59)
    tag(kb, {**TAGS, **extra})
    configure(kb, {**named(extra), **BILLING})
    base = commit(kb, "base: sixty slices")
    stale(kb, *BILLING_ONLY)
    commit(kb, "withdraw the documents billing needs")
    code, text, results, _ = check(tmp_path / "pr", capsys, "--base", base)
    assert code == 1 and any(r.startswith(BILLING_REASON) for r in reasons(text)), text
    assert len(results["slices"]["slices"]) == 63 and results["slices"]["left_out_tags"] == []
    code, text, results, _ = check(tmp_path / "alone", capsys)  # no base: the head's rules alone
    assert code == 1 and any(r.startswith(BILLING_REASON) for r in reasons(text)), text
    assert slice_of(results, "billing")["passed"] is False


def test_tags_no_config_names_past_the_cap_are_listed_by_name(kb, tmp_path, capsys):
    """Reported-only slices stop at MAX_SLICES (the named ones do not count
    against it); the tags left out are listed in the results and summary."""
    from rag_corpus_check.gate.slices import MAX_SLICES

    extra = many(MAX_SLICES)
    tag(kb, {**TAGS, **extra})
    configure(kb, BILLING)
    code, text, results, summary = check(tmp_path, capsys)
    names = [s["name"] for s in results["slices"]["slices"]]
    assert code == 0 and names[0] == "billing", text
    assert len(names) == 1 + MAX_SLICES and results["slices"]["max_slices"] == MAX_SLICES
    left_out = results["slices"]["left_out_tags"]
    assert results["slices"]["left_out"] == len(left_out) == 3, results["slices"]  # 53 tags not named, 50 reported
    assert set(left_out) | set(names) == {t for ts in {**TAGS, **extra}.values() for t in ts}
    assert left_out == [f"t{i:03d}" for i in range(MAX_SLICES - 3, MAX_SLICES)]  # carried once: last by name
    assert "Not shown: `t047`, `t048`, `t049`." in summary, summary.split("### Slices", 1)[1][-600:]


def test_the_action_run_step_fails_the_fifty_slice_attack(kb, tmp_path):
    """The same attack through the action's own entry point, as a
    pull_request run: the run step exits 1 naming the billing slice."""
    base, head = _fifty_slices_first(kb)
    done, outputs = run_action_step(kb, tmp_path, base, head, summary="true")
    assert done.returncode == 1, done.stdout + done.stderr
    assert outputs["verdict"] == "fail", outputs
    results = json.loads(Path(outputs["results-path"]).read_text(encoding="utf-8"))
    assert results["rules_source"] == "base" and slice_of(results, "billing")["passed"] is False
    assert BILLING_REASON in done.stdout + done.stderr
