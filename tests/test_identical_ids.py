"""`metrics.ignore_identical_ids`: BEIR's EvaluateRetrieval.evaluate drops
from each question's results the document whose id is the question's own id
(ArguAna's questions are documents of its corpus: they retrieve themselves
at rank 1). With the option the check measures what BEIR publishes —
compared here with BEIR's own definition (the results dict filtered as
beir/retrieval/evaluation.py does, then pytrec_eval); it is a convention,
so with a base the base's value applies and a change needs a reason."""

from __future__ import annotations

import json

import pytest

from conftest import write
from rag_corpus_check.commands.cli import main
from support.repos import commit
from test_pool_back import example

pytrec_eval = pytest.importorskip("pytrec_eval")

HEAD = "version: 1\nk: 5\nthresholds:\n  nDCG@5: 0.1\n"


@pytest.fixture
def arguana(kb):
    """The example as an ArguAna-like BEIR folder: each question is also a
    document of the corpus, under the question's id and with its text."""
    corpus, gold = example(kb)
    docs = [{"_id": d["id"], "text": d["text"]} for d in corpus] + [
        {"_id": q["query_id"], "text": q["query"]} for q in gold]
    write(kb / "beir/corpus.jsonl", "".join(json.dumps(d) + "\n" for d in docs))
    write(kb / "beir/queries.jsonl", "".join(json.dumps({"_id": q["query_id"], "text": q["query"]}) + "\n"
                                             for q in gold))
    write(kb / "beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + "".join(
        f"{q['query_id']}\t{d}\t{g}\n" for q in gold for d, g in q["relevant"].items()))
    write(kb / "bm25.yml", HEAD + "dataset: {format: beir, path: beir}\nretriever: {stopwords: english}\n")
    assert main(["retrieve", "--config", "bm25.yml", "--out", "run.jsonl"]) == 0
    return kb


def rankings(kb) -> dict[str, list[str]]:
    return {r["query_id"]: r["ranking"] for r in map(json.loads, (kb / "run.jsonl").read_text().splitlines())}


def measured(kb, tmp_path, capsys, ignore: bool | None) -> dict[str, dict]:
    metrics = "" if ignore is None else f"metrics: {{ignore_identical_ids: {str(ignore).lower()}}}\n"
    write(kb / "run.yml", HEAD + "measures: [P@5, R@5]\ndataset: {format: beir, path: beir}\nrun: run.jsonl\n"
          + metrics)
    out = tmp_path / f"out-{ignore}"
    code = main(["--config", "run.yml", "--output", str(out / "r.json"), "--summary-file", str(out / "s.md")])
    text = capsys.readouterr().out
    assert code == 0, text
    res = json.loads((out / "r.json").read_text())
    res["console"], res["summary"] = text, (out / "s.md").read_text()
    return res


def beir_evaluate(kb, ignore_identical_ids: bool) -> dict[str, dict]:
    """beir.retrieval.evaluation.EvaluateRetrieval.evaluate, for k 5."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (kb / "beir/qrels/test.tsv").read_text().splitlines()[1:]:
        qid, doc, score = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(score)
    results = {qid: {d: float(1000 - i) for i, d in enumerate(r)} for qid, r in rankings(kb).items()}
    if ignore_identical_ids:
        for qid, rels in results.items():
            for pid in list(rels):
                if qid == pid:
                    results[qid].pop(pid)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5", "P.5", "recall.5"})
    return evaluator.evaluate(results)


def values(res) -> dict[str, dict[str, float]]:
    return {q["query_id"]: q["values"] for q in res["queries"]}


def test_most_questions_retrieve_themselves_at_rank_1(arguana):
    ranked = rankings(arguana)
    assert sum(r[0] == qid for qid, r in ranked.items()) >= len(ranked) - 2


@pytest.mark.parametrize("ignore", [True, False])
def test_the_measures_are_beirs(arguana, tmp_path, capsys, ignore):
    ours = values(measured(arguana, tmp_path, capsys, ignore))
    theirs = beir_evaluate(arguana, ignore)
    compared = 0
    for qid, v in theirs.items():
        if ours[qid]["nDCG@5"] is None:  # no relevant document: a status here, 0 in trec_eval
            assert v["ndcg_cut_5"] == 0 and v["recall_5"] == 0
            continue
        compared += 1
        assert ours[qid]["nDCG@5"] == pytest.approx(v["ndcg_cut_5"], abs=1e-12), qid
        assert ours[qid]["P@5"] == pytest.approx(v["P_5"], abs=1e-12), qid
        assert ours[qid]["R@5"] == pytest.approx(v["recall_5"], abs=1e-12), qid
    assert compared >= 10


def test_the_option_changes_the_numbers_and_is_stated(arguana, tmp_path, capsys):
    off, on = measured(arguana, tmp_path, capsys, None), measured(arguana, tmp_path, capsys, True)
    assert on["metrics"]["nDCG@5"] > off["metrics"]["nDCG@5"]
    assert on["conventions"]["ignore_identical_ids"] is True and "ignore_identical_ids" not in off["conventions"]
    assert "removed from its ranking before the cut at K (BEIR's ignore_identical_ids)" in on["console"]
    assert "BEIR's ignore_identical_ids" in on["summary"] and "ignore_identical_ids" not in off["summary"]


def test_the_bases_value_applies_and_a_change_needs_a_reason(arguana, tmp_path, capsys):
    from support.repos import init

    init(arguana)
    on = measured(arguana, tmp_path, capsys, True)
    base = commit(arguana, "base: BEIR's convention")
    write(arguana / "run.yml", (arguana / "run.yml").read_text().replace("ignore_identical_ids: true",
                                                                          "ignore_identical_ids: false"))
    commit(arguana, "head turns it off")
    out = tmp_path / "cmp"
    code = main(["--config", "run.yml", "--base", base, "--output", str(out / "r.json"),
                 "--summary-file", str(out / "s.md")])
    text = capsys.readouterr().out
    res = json.loads((out / "r.json").read_text())
    assert code == 1, text
    assert res["conventions"]["ignore_identical_ids"] is True  # measured under the base's value
    assert res["metrics"]["nDCG@5"] == on["metrics"]["nDCG@5"]
    assert "convention `ignore_identical_ids` changed: True → False" in text
