"""`metrics.judged_only` (trec_eval -J, ir_measures' judged_only): every
measure but Judged@k is taken on the ranking without its unjudged
documents. Checked against trec_eval (pytrec_eval, test-only) two ways: on
the run filtered to judged documents, and with trec_eval's own
judged-docs-only flag."""

from __future__ import annotations

import pytest
import pytrec_eval

from rag_corpus_check.metrics.evaluate import evaluate
from rag_corpus_check.metrics.measures import Measure, Options
from test_oracle import _generate

KS = (1, 3, 5, 10)
NAMES = {"P": "P_{k}", "R": "recall_{k}", "nDCG": "ndcg_cut_{k}", "AP": "map_cut_{k}", "Success": "success_{k}"}


def _trec(gold, runs, filtered: bool, flag: bool) -> dict:
    trec_run = {q: {d: float(-i) for i, d in enumerate(r, 1) if not filtered or d in gold[q]}
                for q, r in runs.items()}
    trec_run = {q: r for q, r in trec_run.items() if r}
    names = {t.format(k=k) for t in NAMES.values() for k in KS}
    return pytrec_eval.RelevanceEvaluator(gold, names, judged_docs_only_flag=flag).evaluate(trec_run)


def _compare(ours, theirs) -> int:
    compared = 0
    for q in ours.queries:
        t = theirs.get(q.query_id)
        if q.status != "ok" or t is None:
            continue
        for name, template in NAMES.items():
            for k in KS:
                assert q.values[Measure(name, k)] == pytest.approx(t[template.format(k=k)], abs=1e-9), (
                    q.query_id, name, k)
                compared += 1
    return compared


def test_judged_only_equals_trec_eval_on_the_filtered_run_and_with_its_flag():
    gold, runs = _generate()
    measures = [Measure(n, k) for k in KS for n in NAMES] + [Measure("Judged", 5)]
    ours = evaluate(gold, runs, measures, Options(judged_only=True))
    assert _compare(ours, _trec(gold, runs, filtered=True, flag=False)) > 3000
    assert _compare(ours, _trec(gold, runs, filtered=False, flag=True)) > 3000


def test_without_it_the_numbers_differ_from_the_judged_only_ones():
    """The failure the option exists for: unjudged documents count as
    non-relevant and take places in the top k, so the default numbers are
    not trec_eval -J's."""
    gold, runs = _generate()
    measures = [Measure(n, k) for k in KS for n in NAMES]
    default = evaluate(gold, runs, measures)
    with pytest.raises(AssertionError):
        _compare(default, _trec(gold, runs, filtered=True, flag=False))


def test_judged_at_k_still_reads_the_ranking_as_ranked():
    gold = {"q1": {"a": 1, "c": 0}}
    runs = {"q1": ["x", "a", "y", "c"]}
    measures = [Measure("Judged", 4), Measure("P", 2), Measure("RR", 4)]
    q = evaluate(gold, runs, measures, Options(judged_only=True)).queries[0]
    assert q.values[Measure("Judged", 4)] == 0.5  # x and y are still seen as unjudged
    assert q.values[Measure("P", 2)] == 0.5  # [a, c]: one relevant of two
    assert q.values[Measure("RR", 4)] == 1.0  # a is first once x is gone
    plain = evaluate(gold, runs, measures).queries[0]
    assert plain.values[Measure("P", 2)] == 0.5 and plain.values[Measure("RR", 4)] == 0.5


def test_switching_it_in_a_pr_loosens_the_rules_and_the_bases_setting_holds(kb, tmp_path, capsys):
    import json

    from conftest import write
    from rag_corpus_check.commands.cli import main
    from support.repos import commit, init

    config = "committed-run.rag-corpus-check.yml"
    init(kb)
    base = commit(kb, "base")
    write(kb / config, (kb / config).read_text().replace("  short_list: pad", "  short_list: pad\n  judged_only: true"))
    commit(kb, "judged only")
    out = tmp_path / "out"
    code = main(["--config", config, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"),
                 "--base", base])
    res = json.loads((out / "r.json").read_text())
    capsys.readouterr()
    assert code == 1
    assert "convention `judged_only` changed: False → True" in res["comparison"]["rules"]["loosened"]
    assert res["conventions"]["unjudged"] == "grade 0"  # the base's convention measured the head


def test_the_attribution_is_computed_judged_only_too(kb, tmp_path, capsys):
    """Labels and the system changed: the attribution's base and head equal
    the deltas' (before, it used the default conventions, counting the new
    unjudged document the judged-only means leave out)."""
    import json

    from conftest import write
    from rag_corpus_check.commands.cli import main
    from support.repos import commit, init

    config = "committed-run.rag-corpus-check.yml"
    write(kb / config, (kb / config).read_text().replace("  short_list: pad", "  short_list: pad\n  judged_only: true"))
    init(kb)
    base = commit(kb, "base")
    with open(kb / "corpus.jsonl", "a") as f:
        f.write(json.dumps({"id": "new-1", "title": "New", "text": "A new page.", "type": "faq", "status": "active",
                            "snapshot": "2026-11-30"}) + "\n")
    rows = [json.loads(line) for line in (kb / "run.jsonl").read_text().splitlines()]
    rows[2]["ranking"] = ["new-1", *rows[2]["ranking"]]
    write(kb / "run.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    gold = (kb / "gold.yaml").read_text()
    write(kb / "gold.yaml", gold.replace("      faq-004: 1\n", "      faq-004: 2\n", 1))  # a label changes too
    commit(kb, "labels and system")
    out = tmp_path / "out"
    main(["--config", config, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), "--base", base])
    capsys.readouterr()
    cmp_ = json.loads((out / "r.json").read_text())["comparison"]
    nd = next(d for d in cmp_["deltas"] if d["measure"] == "nDCG@5")
    split = cmp_["attribution"]["measures"]["nDCG@5"]
    assert split["base"] == pytest.approx(nd["base"], abs=1e-12) and split["head"] == pytest.approx(nd["head"], abs=1e-12)
