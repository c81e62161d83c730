"""The pool round trip where the labels live in another tool's format: a
BEIR folder on disk is pooled, the worksheet graded, its grades added to
qrels/<split>.tsv by `add-labels` (existing lines kept, byte for byte, in
their order; written atomically), and the check then reads the new labels.
Also a TREC qrels gold file, a LlamaIndex dataset, a JSONL worksheet, and a
worksheet too big for one YAML file."""

from __future__ import annotations

import json
import os

import pytest

from conftest import write
from rag_corpus_check.commands.cli import main
from test_pool import example_grades, grade, unpooled

HEAD = "version: 1\nk: 5\nthresholds:\n  P@5: 0.1\n  Judged@5: 0.1\n"
QRELS = "beir/qrels/test.tsv"


def run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def check(tmp_path, capsys, config: str) -> dict:
    out = tmp_path / "out"
    code, text = run(capsys, "--config", config, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"))
    assert code == 0, text
    return json.loads((out / "r.json").read_text())


def example(kb):
    """The example's corpus and hand-labelled questions (the pooled labels removed)."""
    from rag_corpus_check.safe_io import Limits, load_yaml

    unpooled(kb)
    corpus = [json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines()]
    gold = load_yaml((kb / "gold.yaml").read_bytes(), "gold.yaml", Limits())["queries"]
    return corpus, gold


@pytest.fixture
def beir(kb):
    """The example as a BEIR folder, labelled by hand only, and its config (BM25)."""
    corpus, gold = example(kb)
    write(kb / "beir/corpus.jsonl", "".join(json.dumps({"_id": d["id"], "title": d.get("title", ""),
                                                        "text": d["text"]}) + "\n" for d in corpus))
    write(kb / "beir/queries.jsonl", "".join(json.dumps({"_id": q["query_id"], "text": q["query"]}) + "\n"
                                             for q in gold))
    rows = [f"{q['query_id']}\t{d}\t{g}\n" for q in gold for d, g in q["relevant"].items()]
    write(kb / QRELS, "query-id\tcorpus-id\tscore\n" + "".join(rows))
    write(kb / "beir.yml", HEAD + "dataset: {format: beir, path: beir}\nretriever: {stopwords: english}\n")
    return kb


def test_the_beir_round_trip(beir, tmp_path, capsys):
    before = (beir / QRELS).read_bytes()
    judged = check(tmp_path, capsys, "beir.yml")["metrics"]["Judged@5"]
    assert judged < 0.7
    code, text = run(capsys, "pool", "--config", "beir.yml", "--out", "labels.yaml")
    assert code == 0, text
    assert "add the grades to beir/qrels/test.tsv and commit that file" in text
    assert "rag-corpus-check add-labels --config beir.yml labels.yaml" in text
    assert "list the file under `gold:`" not in text + (beir / "labels.yaml").read_text()
    assert "# Then add the grades to the gold set of beir.yml (beir/qrels/test.tsv)" in (beir / "labels.yaml").read_text()

    grade(beir / "labels.yaml", example_grades())
    code, text = run(capsys, "add-labels", "--config", "beir.yml", "labels.yaml")
    assert code == 0, text
    after = (beir / QRELS).read_bytes()
    assert after.startswith(before)  # every line before kept, in its order
    added = after[len(before):].decode().splitlines()
    assert added and all(len(line.split("\t")) == 3 for line in added)
    assert f"added {len(added)} labels" in text and "git add beir/qrels/test.tsv && git commit" in text
    assert not [p for p in (beir / "beir/qrels").iterdir() if p.name != "test.tsv"]  # no temporary file left

    res = check(tmp_path, capsys, "beir.yml")
    assert res["metrics"]["Judged@5"] > judged + 0.5  # every document in a top 5 is judged now (below: nothing to pool)
    code, text = run(capsys, "pool", "--config", "beir.yml", "--out", "again.yaml")
    assert code == 0 and "nothing to judge" in text, text


def test_the_labels_added_are_the_worksheets(beir, capsys):
    run(capsys, "pool", "--config", "beir.yml", "--out", "labels.yaml")
    grade(beir / "labels.yaml", example_grades())
    from rag_corpus_check.safe_io import Limits, load_yaml

    sheet = load_yaml((beir / "labels.yaml").read_bytes(), "labels.yaml", Limits())["queries"]
    before = (beir / QRELS).read_text()
    run(capsys, "add-labels", "--config", "beir.yml", "labels.yaml")
    added = (beir / QRELS).read_text()[len(before):]
    expected = "".join(f"{q['query_id']}\t{d}\t{g}\n" for q in sheet for d, g in q["relevant"].items())
    assert added == expected


def test_a_null_left_in_adds_nothing(beir, capsys):
    run(capsys, "pool", "--config", "beir.yml", "--out", "labels.yaml")
    before = (beir / QRELS).read_bytes()
    code, text = run(capsys, "add-labels", "--config", "beir.yml", "labels.yaml")
    assert code == 2 and "labels.yaml:" in text and "not filled in (`null`)" in text, text
    assert (beir / QRELS).read_bytes() == before


def test_a_conflicting_grade_adds_nothing_and_names_both_places(beir, capsys):
    run(capsys, "pool", "--config", "beir.yml", "--out", "labels.yaml")
    grade(beir / "labels.yaml", example_grades())
    first = next(line for line in (beir / "labels.yaml").read_text().splitlines() if line.startswith('      "'))
    doc_id, qid = first.split('"')[1], "q01"
    with (beir / QRELS).open("a") as f:
        f.write(f"{qid}\t{doc_id}\t2\n")
    before = (beir / QRELS).read_bytes()
    line = before.decode().count("\n")
    code, text = run(capsys, "add-labels", "--config", "beir.yml", "labels.yaml")
    assert code == 2, text
    assert f"document `{doc_id}`: the worksheet says" in text and f"{QRELS}:{line} says 2" in text
    assert (beir / QRELS).read_bytes() == before


def test_a_failed_write_leaves_the_qrels_as_they_were(beir, capsys, monkeypatch):
    run(capsys, "pool", "--config", "beir.yml", "--out", "labels.yaml")
    grade(beir / "labels.yaml", example_grades())
    before = (beir / QRELS).read_bytes()

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    code = main(["add-labels", "--config", "beir.yml", "labels.yaml"])
    assert code == 3
    assert (beir / QRELS).read_bytes() == before
    assert sorted(p.name for p in (beir / "beir/qrels").iterdir()) == ["test.tsv"]


def test_a_new_split_gets_the_beir_header(beir, capsys):
    (beir / "beir.yml").write_text(HEAD + "dataset: {format: beir, path: beir, split: dev}\n")
    write(beir / "beir/qrels/dev.tsv", "query-id\tcorpus-id\tscore\nq01\tpolicy-002\t2\n")
    run(capsys, "pool", "--config", "beir.yml", "--out", "labels.yaml")
    (beir / "beir/qrels/dev.tsv").unlink()
    grade(beir / "labels.yaml", example_grades())
    code, text = run(capsys, "add-labels", "--config", "beir.yml", "labels.yaml")
    assert code == 0, text
    assert (beir / "beir/qrels/dev.tsv").read_text().startswith("query-id\tcorpus-id\tscore\nq01\t")


def test_a_jsonl_worksheet_round_trip(beir, tmp_path, capsys):
    code, text = run(capsys, "pool", "--config", "beir.yml", "--out", "labels.jsonl")
    assert code == 0, text
    lines = [json.loads(line) for line in (beir / "labels.jsonl").read_text().splitlines()]
    assert all(set(rec) == {"query_id", "relevant", "metadata"} for rec in lines)
    assert all(g is None for rec in lines for g in rec["relevant"].values())
    assert lines[0]["metadata"]["pool"]["documents"][0]["position"].startswith("#")
    grades = example_grades()
    graded = [rec | {"relevant": {d: grades[rec["query_id"]].get(d, 0) for d in rec["relevant"]}} for rec in lines]
    (beir / "labels.jsonl").write_text("".join(json.dumps(rec) + "\n" for rec in graded))
    code, text = run(capsys, "add-labels", "--config", "beir.yml", "labels.jsonl")
    assert code == 0, text
    assert check(tmp_path, capsys, "beir.yml")["metrics"]["Judged@5"] > 0.9


def test_a_trec_qrels_gold_file_round_trip(kb, tmp_path, capsys):
    _, gold = example(kb)
    write(kb / "gold.qrels", "".join(f"{q['query_id']} 0 {d} {g}\n" for q in gold for d, g in q["relevant"].items()))
    (kb / "corpus-only.yml").write_text(HEAD + "corpus: corpus.jsonl\ngold: gold.qrels\nrun: run.jsonl\n")
    before = (kb / "gold.qrels").read_bytes()
    code, text = run(capsys, "pool", "--config", "corpus-only.yml", "--out", "labels.yaml")
    assert code == 0 and "add-labels --config corpus-only.yml labels.yaml" in text, text
    grade(kb / "labels.yaml", example_grades())
    code, text = run(capsys, "add-labels", "--config", "corpus-only.yml", "labels.yaml")
    assert code == 0, text
    after = (kb / "gold.qrels").read_bytes()
    assert after.startswith(before) and all(len(line.split(" ")) == 4 for line in after[len(before):].decode().splitlines())
    assert check(tmp_path, capsys, "corpus-only.yml")["metrics"]["Judged@5"] == 1.0


def test_a_llamaindex_dataset_round_trip(kb, tmp_path, capsys):
    corpus, gold = example(kb)
    data = {"queries": {q["query_id"]: q["query"] for q in gold}, "corpus": {d["id"]: d["text"] for d in corpus},
            "relevant_docs": {q["query_id"]: [d for d, g in q["relevant"].items() if g >= 1] for q in gold},
            "mode": "text"}
    write(kb / "qa.json", json.dumps(data, indent=4))
    (kb / "llama.yml").write_text(HEAD + "dataset: {format: llamaindex, path: qa.json}\nrun: run.jsonl\n"
                                  'snapshot: "2026-11-30"\n')
    code, text = run(capsys, "pool", "--config", "llama.yml", "--out", "labels.yaml")
    assert code == 0 and "add-labels --config llama.yml labels.yaml" in text, text
    grades = example_grades()
    grade(kb / "labels.yaml", grades)
    code, text = run(capsys, "add-labels", "--config", "llama.yml", "labels.yaml")
    assert code == 0 and "judged not relevant cannot be kept" in text, text
    after = json.loads((kb / "qa.json").read_text())
    assert list(after) == list(data) and after["corpus"] == data["corpus"]
    for qid, docs in after["relevant_docs"].items():
        assert docs[:len(data["relevant_docs"][qid])] == data["relevant_docs"][qid]  # kept, in their order
        assert all(grades[qid][d] >= 1 for d in docs)
    assert sum(map(len, after["relevant_docs"].values())) > sum(map(len, data["relevant_docs"].values()))


def test_a_native_gold_set_is_told_to_list_the_worksheet(kb, capsys):
    before = (kb / "gold.yaml").read_bytes()
    write(kb / "labels.yaml", "queries:\n  - query_id: q01\n    relevant:\n      faq-001: 0\n")
    code, text = run(capsys, "add-labels", "labels.yaml")
    assert code == 2 and "list the worksheet under `gold:`" in text, text
    assert (kb / "gold.yaml").read_bytes() == before


def big_beir(kb, questions: int = 120, docs: int = 150):
    """A BEIR folder whose top 100 per question is full and unjudged, with
    long titles and texts: its YAML worksheet is over 4 MiB."""
    words = [f"w{i}" for i in range(40)]
    write(kb / "big/corpus.jsonl", "".join(json.dumps({
        "_id": f"d{i:04d}", "title": " ".join(words[(i + j) % 40] for j in range(30)),
        "text": " ".join(words[(i * 7 + j) % 40] for j in range(60))}) + "\n" for i in range(docs)))
    write(kb / "big/queries.jsonl", "".join(json.dumps({"_id": f"q{i:04d}", "text": f"{words[i % 40]} {words[(i + 3) % 40]} t{i}"})
                                            + "\n" for i in range(questions)))
    write(kb / "big/qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + "".join(
        f"q{i:04d}\td{i % docs:04d}\t1\n" for i in range(questions)))
    write(kb / "big.yml", HEAD + "dataset: {format: beir, path: big}\n")


def test_a_worksheet_over_the_yaml_bound_says_how_to_split_it(kb, capsys):
    from rag_corpus_check.safe_io import Limits

    big_beir(kb)
    code, text = run(capsys, "pool", "--config", "big.yml", "--out", "labels.yaml", "--depth", "100")
    assert code == 2 and not (kb / "labels.yaml").exists(), text
    assert f"over the {Limits.max_yaml_bytes} bytes a YAML gold file may have" in text
    assert "--changed-only" in text and "--out NAME.jsonl" in text
    limit = int(text.split("--limit ")[1].split()[0])
    assert 1 <= limit < 120
    code, text = run(capsys, "pool", "--config", "big.yml", "--out", "labels.yaml", "--depth", "100",
                     "--limit", str(limit))
    assert code == 0, text
    assert (kb / "labels.yaml").stat().st_size <= Limits.max_yaml_bytes
    assert f"{120 - limit} more questions have documents to judge" in text
    assert text.count("- query_id") == 0 and (kb / "labels.yaml").read_text().count("  - query_id:") == limit
    code, text = run(capsys, "pool", "--config", "big.yml", "--out", "labels.jsonl", "--depth", "100")
    assert code == 0 and len((kb / "labels.jsonl").read_text().splitlines()) == 120, text


def test_a_qrels_file_without_a_final_line_break_keeps_its_last_line(beir, capsys):
    text = (beir / QRELS).read_text()
    (beir / QRELS).write_text(text.rstrip("\n"))
    run(capsys, "pool", "--config", "beir.yml", "--out", "labels.yaml")
    grade(beir / "labels.yaml", example_grades())
    code, out = run(capsys, "add-labels", "--config", "beir.yml", "labels.yaml")
    assert code == 0, out
    assert (beir / QRELS).read_text().startswith(text)  # the last line ended, not joined to the first new one


def test_an_id_with_a_space_is_not_written_to_qrels(tmp_path):
    from rag_corpus_check.commands.add_labels import Plan, _add_to_qrels
    from rag_corpus_check.core import problems as P

    target = write(tmp_path / "test.tsv", "query-id\tcorpus-id\tscore\n")
    problems = P.Problems()
    plan = Plan(new=[("q1", "doc 1", 1), ("q1", "d2", 0)])
    assert _add_to_qrels(str(target), "beir", plan, problems) is None
    assert [(p.id, "space" in p.message) for p in problems.errors] == [("doc 1", True)]
    plan = Plan(new=[("q1", "d2", 0)])
    assert _add_to_qrels(str(target), "trec", plan, P.Problems()).endswith(b"q1 0 d2 0\n")


def test_a_gzip_gold_file_is_not_rewritten(kb, capsys):
    import gzip

    _, gold = example(kb)
    data = gzip.compress("".join(f"{q['query_id']} 0 {d} {g}\n" for q in gold for d, g in q["relevant"].items()).encode())
    write(kb / "gold.qrels.gz", data)
    (kb / "gz.yml").write_text(HEAD + "corpus: corpus.jsonl\ngold: gold.qrels.gz\nformats: {gold: qrels}\nrun: run.jsonl\n")
    write(kb / "labels.yaml", "queries:\n  - query_id: q01\n    relevant:\n      faq-001: 0\n")
    code, text = run(capsys, "add-labels", "--config", "gz.yml", "labels.yaml")
    assert code == 2 and "gzip-compressed and is not rewritten" in text, text
    assert (kb / "gold.qrels.gz").read_bytes() == data


def test_validate_reads_a_beir_folder(beir, capsys):
    code, text = run(capsys, "validate", "--config", "beir.yml")
    assert code == 0 and "beir/qrels/test.tsv" in text, text
    with (beir / QRELS).open("a") as f:
        f.write("q01\tno-such-doc\t1\n")
    code, text = run(capsys, "validate", "--config", "beir.yml")
    lines = (beir / QRELS).read_text().count("\n")
    assert code == 2 and f"{QRELS}:{lines}" in text and "[no-such-doc]" in text, text


def test_a_grade_above_the_scale_adds_nothing(beir, capsys):
    run(capsys, "pool", "--config", "beir.yml", "--out", "labels.yaml")
    grade(beir / "labels.yaml", example_grades())
    text = (beir / "labels.yaml").read_text()
    first = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith('      "'))
    lines = text.splitlines()
    lines[first - 1] = lines[first - 1].rsplit(":", 1)[0] + ": 7"
    (beir / "labels.yaml").write_text("\n".join(lines) + "\n")
    before = (beir / QRELS).read_bytes()
    code, out = run(capsys, "add-labels", "--config", "beir.yml", "labels.yaml")
    assert code == 2 and f"labels.yaml:{first}" in out and "grade 7 is above relevance.max_grade (2)" in out, out
    assert (beir / QRELS).read_bytes() == before
