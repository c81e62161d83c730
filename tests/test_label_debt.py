"""Label debt (gate/label_debt.py): each mean and delta also as if every
unjudged top-k document were relevant, and the drops that new unjudged
documents could explain, with the pool command that judges them."""

from __future__ import annotations

import itertools
import json
import random
import re
import shlex

import pytest
import pytrec_eval

from conftest import write
from rag_corpus_check.commands.cli import main
from rag_corpus_check.gate.label_debt import Scale, bound_values, judged_relevant
from rag_corpus_check.metrics.evaluate import evaluate
from rag_corpus_check.metrics.measures import Measure, Options
from support.repos import commit, init

SCALE = Scale(Options(), k=5, grade=2)
MONOTONE = [Measure(n, k) for n in ("P", "R", "RR", "Success") for k in (1, 3, 5)]


def _values(grades, ranking, measures, scale=SCALE):
    return bound_values({"q": grades}, {"q": ranking}, measures, scale)["q"]


def test_a_bound_counts_unjudged_top_k_documents_as_relevant():
    got = _values({"a": 1, "b": 0}, ["x", "a", "b", "y", "z", "w"], [Measure("P", 3), Measure("R", 3),
                                                                     Measure("RR", 5), Measure("Judged", 5)])
    assert got[Measure("P", 3)] == 2 / 3  # x and a (y is below 3)
    assert got[Measure("R", 3)] == 1.0  # x, a of R = 2 (a, x)
    assert got[Measure("RR", 5)] == 1.0
    assert Measure("Judged", 5) not in got  # it measures the labels: no bound


def _every_judgement(grades, ranking, depth):
    """Each way of grading the unjudged top-``depth`` documents 0 or 2."""
    unjudged = [d for d in ranking[:depth] if d not in grades]
    for choice in itertools.product((0, 2), repeat=len(unjudged)):
        yield {**grades, **dict(zip(unjudged, choice, strict=True))}


def test_for_p_r_rr_and_success_the_bound_is_the_largest_value_of_any_judgement():
    rnd = random.Random(7)
    docs = [f"d{i}" for i in range(12)]
    for _ in range(200):
        ranking = rnd.sample(docs, rnd.randint(0, 8))
        grades = {d: rnd.choice((0, 1, 2)) for d in rnd.sample(docs, rnd.randint(1, 6))}
        grades[rnd.choice(docs)] = 2  # at least one relevant document
        bound = _values(grades, ranking, MONOTONE)
        for m in MONOTONE:
            best = max(evaluate({"q": g}, {"q": ranking}, [m]).queries[0].values[m]
                       for g in _every_judgement(grades, ranking, m.k))
            assert bound[m] == pytest.approx(best, abs=1e-12), (m, ranking, grades)


def test_for_ndcg_a_new_relevant_document_raises_the_ideal_too():
    """Why the nDCG bound is a judgement, not a maximum: judged relevant,
    an unjudged document at rank 3 lowers a perfect nDCG (the ideal gains it)."""
    grades, ranking = {"a": 2, "b": 0}, ["a", "b", "x"]
    m = Measure("nDCG", 3)
    plain = evaluate({"q": grades}, {"q": ranking}, [m]).queries[0].values[m]
    assert plain == 1.0 and _values(grades, ranking, [m])[m] < 1.0


def test_the_bound_equals_trec_eval_on_the_labels_it_assumes():
    """The numbers under the assumed judgement, recomputed by trec_eval
    (pytrec_eval) from qrels with the unjudged top-k documents added at grade 2."""
    rnd = random.Random(11)
    docs = [f"d{i:02d}" for i in range(40)]
    gold = {f"q{i}": {d: rnd.choice((0, 1, 2)) for d in rnd.sample(docs, 6)} | {docs[i]: 2} for i in range(30)}
    runs = {q: rnd.sample(docs, 10) for q in gold}
    measures = [Measure("nDCG", 5), Measure("P", 5), Measure("AP", 5)]
    ours = bound_values(gold, runs, measures, SCALE)
    qrels = {q: judged_relevant(g, [runs[q]], 5, 2) for q, g in gold.items()}
    trec_run = {q: {d: float(-i) for i, d in enumerate(r, 1)} for q, r in runs.items()}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_5", "P_5", "map_cut_5"}).evaluate(trec_run)
    for q in gold:
        assert ours[q][Measure("nDCG", 5)] == pytest.approx(theirs[q]["ndcg_cut_5"], abs=1e-9)
        assert ours[q][Measure("P", 5)] == pytest.approx(theirs[q]["P_5"], abs=1e-9)
        assert ours[q][Measure("AP", 5)] == pytest.approx(theirs[q]["map_cut_5"], abs=1e-9)


@pytest.mark.parametrize("options", [Options(), Options(judged_only=True), Options(min_grade=2, gain="exponential"),
                                     Options(short_list="actual")])
def test_each_question_scored_as_evaluate_scores_it_under_the_added_labels(options):
    """bound_values scores each question alone (metrics.evaluate.scorer):
    the same values as evaluate() over the whole gold set with the unjudged
    top-k documents (of both sides, unjudged by every gold set) added."""
    rnd = random.Random(5)
    docs = [f"d{i:02d}" for i in range(30)]
    gold = {f"q{i}": {d: rnd.choice((0, 1, 2)) for d in rnd.sample(docs, rnd.randint(0, 5))} for i in range(60)}
    runs = {q: rnd.sample(docs, rnd.randint(0, 12)) for q in gold if rnd.random() < 0.9}
    other_gold = {q: {d: 1 for d in rnd.sample(docs, 2)} for q in gold}
    other_runs = {q: rnd.sample(docs, 6) for q in gold}
    measures = [Measure(n, k) for n in ("P", "R", "nDCG", "RR", "AP", "Success", "Judged") for k in (1, 3, 8)]
    measures.append(Measure("Rprec", 0))
    scale = Scale(options, k=5, grade=2)
    for other in (None, ([other_gold], other_runs)):
        labels, sides = other or ([], {})
        ours = bound_values(gold, runs, measures, scale, other)
        for m in (m for m in measures if m.name != "Judged"):
            depth = m.k or scale.k
            judged = {q: judged_relevant(g, [runs.get(q, []), sides.get(q, [])], depth, 2,
                                         [gs.get(q, {}) for gs in labels]) for q, g in gold.items()}
            plain = {r.query_id: r.values[m] for r in evaluate(judged, runs, [m], options).queries}
            assert {q: v[m] for q, v in ours.items()} == plain, m


# ------------------------------------------------------------ with a base

RUN_CONFIG = "committed-run.rag-corpus-check.yml"
NEW = [f"new-{i}" for i in range(1, 9)]
QUESTIONS = [f"q0{i}" for i in range(1, 9)]


def _config(kb, extra: str = "") -> None:
    text = (kb / RUN_CONFIG).read_text()
    text = text.replace("  nDCG@5: 0.75", "  nDCG@5: {min: 0.3, max_drop: 0.02}").replace("  R@5: 0.80", "  R@5: 0.3")
    write(kb / RUN_CONFIG, text.replace("  P@5: 0.30", "  P@5: 0.1") + extra)


def _new_documents_on_top(kb) -> None:
    """Eight new documents, each ranked first for one question: every
    judged document of those questions moves one place down."""
    with open(kb / "corpus.jsonl", "a") as f:
        for d in NEW:
            f.write(json.dumps({"id": d, "title": f"New page {d}", "text": "A new page about backups and uploads.",
                                "type": "faq", "status": "active", "snapshot": "2026-11-30"}) + "\n")
    rows = [json.loads(line) for line in (kb / "run.jsonl").read_text().splitlines()]
    for row in rows:
        if row["query_id"] in QUESTIONS:
            row["ranking"] = [NEW[QUESTIONS.index(row["query_id"])], *row["ranking"]]
    write(kb / "run.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def _judge_new_as_not_relevant(kb) -> None:
    text = (kb / "gold.yaml").read_text()
    for q, d in zip(QUESTIONS, NEW, strict=True):
        text = text.replace(f"  - query_id: {q}\n", f"  - query_id: {q}\n", 1)
        text = re.sub(rf"(- query_id: {q}\n    query: .*\n    relevant:\n)", rf"\g<1>      {d}: 0\n", text, count=1)
    write(kb / "gold.yaml", text)


def _check(tmp_path, capsys, *argv):
    out = tmp_path / "out"
    code = main(["--config", RUN_CONFIG, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), *argv])
    return code, capsys.readouterr().out, json.loads((out / "r.json").read_text()), (out / "s.md").read_text()


def _delta(res, gold, measure):
    view = next(v for v in res["comparison"]["views"] if v["gold"] == gold)
    return next(d for d in view["deltas"] if d["measure"] == measure)


def test_a_drop_new_unjudged_documents_could_explain_names_them_and_the_pool_command(kb, tmp_path, capsys):
    _config(kb)
    init(kb)
    base = commit(kb, "base")
    _new_documents_on_top(kb)
    commit(kb, "new documents ranked first")
    code, console, res, summary = _check(tmp_path, capsys, "--base", base)
    assert code == 1  # nDCG@5 dropped by more than its max_drop: the gate fails, and says why it may not be real
    nd = _delta(res, "head", "nDCG@5")
    assert nd["delta"] < -0.02
    bound = nd["if_unjudged_relevant"]
    assert bound["new_unjudged"] == 8 and bound["delta"] >= -0.02
    command = (f"rag-corpus-check pool --config {RUN_CONFIG} --base {base} --fetch-base --changed-only "
               f"--out labels-{base[:7]}.yaml")
    assert "8 new unjudged documents could explain this drop; pool them" in summary
    assert f"could explain this drop; pool them:\n\n```\n{command}\n```" in summary
    assert "8 new unjudged documents could explain this drop; pool them:\n    " + command in console
    drops = res["comparison"]["label_debt_drops"]
    assert {(e["gold"], e["measure"]) for e in drops} >= {("head", "nDCG@5"), ("base", "nDCG@5")}
    assert all(e["command"] == command for e in drops)
    code = main(["pool", *shlex.split(command)[2:]])  # the command as the reviewer runs it
    sheet = (kb / f"labels-{base[:7]}.yaml").read_text()
    assert code == 0 and all(f'"{d}": null' in sheet for d in NEW)


def test_a_drop_to_judged_documents_is_not_called_label_debt(kb, tmp_path, capsys):
    """The failure it must not hide: the new documents are judged not
    relevant, so the drop is real and nothing suggests pooling."""
    _config(kb)
    init(kb)
    base = commit(kb, "base")
    _new_documents_on_top(kb)
    _judge_new_as_not_relevant(kb)
    commit(kb, "new documents ranked first, judged")
    code, console, res, summary = _check(tmp_path, capsys, "--base", base)
    assert code == 1
    nd = _delta(res, "head", "nDCG@5")
    assert nd["delta"] < -0.02
    assert nd["if_unjudged_relevant"]["new_unjudged"] == 0
    assert nd["if_unjudged_relevant"]["delta"] == pytest.approx(nd["delta"], abs=1e-12)
    assert res["comparison"]["label_debt_drops"] == []
    assert "could explain this drop" not in summary and "could explain this drop" not in console


def test_the_means_carry_their_bound_and_the_unjudged_count(kb, tmp_path, capsys):
    code, console, res, summary = _check(tmp_path, capsys)
    debt = res["label_debt"]
    assert code == 0 and debt["unjudged_in_top_k"] >= 0
    for m, bound in debt["means"].items():
        assert bound >= res["metrics"][m] - 1e-12 or m.startswith(("nDCG", "AP", "Rprec"))
    assert "Judged@5" not in debt["means"]
    assert "| if every unjudged top-k document were relevant |" in summary and "| 95% interval | [" in summary
    assert set(res["confidence"]["means"]) == set(res["metrics"])
    assert "95% CI [" in console  # under each threshold line


def test_the_results_pass_the_comments_stdlib_schema_check(kb, tmp_path, capsys):
    """The PR comment validates results.json without jsonschema (the quick
    check must decide it: an unsure verdict refuses the artifact)."""
    from rag_corpus_check.core.schemas import load_schema, quick_verdict

    _config(kb, "significance: {alpha: 0.05}\n")
    init(kb)
    base = commit(kb, "base")
    _new_documents_on_top(kb)
    commit(kb, "new documents ranked first")
    code, console, res, summary = _check(tmp_path, capsys, "--base", base)
    schema = load_schema("results")
    assert res["significance"] is not None and res["comparison"]["label_debt_drops"]
    assert quick_verdict(schema, res, schema) is True
    nd = _delta(res, "head", "nDCG@5")
    assert nd["base_interval"]["low"] <= nd["base"] <= nd["base_interval"]["high"]
    assert nd["head_interval"]["low"] <= nd["head"] <= nd["head_interval"]["high"]
    assert nd["interval"]["low"] <= nd["delta"] <= nd["interval"]["high"]
