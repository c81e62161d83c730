"""Inputs as other tools write them: the bundled example written as a BEIR
folder, a LlamaIndex dataset, pytrec_eval dicts, gzip files, a chunked
corpus; each read without conversion scores what the native files score.
Real public collections in these formats: tests/test_real_collections.py."""

import gzip
import json

import pytest

from conftest import write
from rag_corpus_check.commands.cli import main
from rag_corpus_check.safe_io import Limits, load_yaml

HEAD = "version: 1\nk: 5\nthresholds:\n  P@5: 0.1\n"


def _run(tmp_path, name="o", *argv, config=".rag-corpus-check.yml"):
    out = tmp_path / name
    code = main(["--config", config, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), *argv])
    return code, json.loads((out / "r.json").read_text()), (out / "s.md").read_text()


def _example(repo):
    corpus = [json.loads(line) for line in (repo / "corpus.jsonl").read_text().splitlines()]
    gold = load_yaml((repo / "gold.yaml").read_bytes(), "gold.yaml", Limits())["queries"]
    run = [json.loads(line) for line in (repo / "run.jsonl").read_text().splitlines()]
    return corpus, gold, run


@pytest.fixture
def native(repo, tmp_path, capsys):
    """The committed-run check on the native files: what every format must reproduce."""
    code, res, _ = _run(tmp_path, "native")
    assert code == 0, capsys.readouterr().out
    return res


def _means(res, names=("P@5", "R@5", "nDCG@5", "Judged@5")):
    return {n: res["metrics"][n] for n in names}


def test_a_beir_folder_reads_as_it_is(repo, tmp_path, native):
    corpus, gold, _ = _example(repo)
    write(repo / "beir/corpus.jsonl", "".join(json.dumps({"_id": d["id"], "title": d.get("title", ""),
                                                          "text": d["text"], "metadata": {}}) + "\n" for d in corpus))
    write(repo / "beir/queries.jsonl", "".join(json.dumps({"_id": q["query_id"], "text": q["query"]}) + "\n"
                                               for q in gold) + '{"_id": "other-split", "text": "x"}\n')
    rows = [f"{q['query_id']}\t{d}\t{g}" for q in gold for d, g in q["relevant"].items()]
    write(repo / "beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    write(repo / "beir.yml", HEAD + "dataset: {format: beir, path: beir, split: test}\nrun: run.jsonl\n"
                                    'snapshot: "2026-11-30"\n')
    code, res, summary = _run(tmp_path, config="beir.yml")
    assert code == 0
    assert _means(res) == _means(native)
    assert res["provenance"]["formats"] == {"beir/qrels/test.tsv": "beir", "beir/queries.jsonl": "beir",
                                            "run.jsonl": "jsonl", "beir/corpus.jsonl": "beir"}
    assert "| beir/corpus\\.jsonl | beir |" in summary
    # The built-in BM25 reads the question texts from queries.jsonl.
    write(repo / "beir-bm25.yml", HEAD + "dataset: {format: beir, path: beir}\n")
    code, res, _ = _run(tmp_path, "bm25", config="beir-bm25.yml")
    assert code == 0 and res["run_source"]["type"] == "bm25" and res["metrics"]["R@5"] > 0.3


def test_a_beir_folder_is_compared_with_its_base(repo, tmp_path):
    """The base tree holds every file of the dataset (queries.jsonl too): a
    drop against the base is measured, so the base's max_drop can fail it."""
    from support.repos import commit, init

    corpus, gold, _ = _example(repo)
    write(repo / "beir/corpus.jsonl", "".join(json.dumps({"_id": d["id"], "text": d["text"]}) + "\n"
                                              for d in corpus))
    write(repo / "beir/queries.jsonl", "".join(json.dumps({"_id": q["query_id"], "text": q["query"]}) + "\n"
                                               for q in gold))
    rows = [f"{q['query_id']}\t{d}\t{g}" for q in gold for d, g in q["relevant"].items()]
    write(repo / "beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    write(repo / ".rag-corpus-check.yml", "version: 1\nk: 5\ndataset: {format: beir, path: beir}\n"
                                          "thresholds:\n  nDCG@5: {min: 0.1, max_drop: 0.01}\n")
    init(repo)
    base = commit(repo, "base")
    write(repo / "beir/queries.jsonl", "".join(json.dumps({"_id": q["query_id"], "text": f"zzz unrelated {i}"})
                                               + "\n" for i, q in enumerate(gold)))  # two equal texts: an error
    commit(repo, "every question text replaced")
    code, res, _ = _run(tmp_path, "cmp", "--base", base)
    assert res["comparison"]["deltas"], res["comparison"]
    assert code == 1 and res["comparison"]["rules"]["source"] == "base"
    assert any(t["measure"] == "nDCG@5" and not t["passed"] for t in res["thresholds"]), res["thresholds"]


def test_beir_problems_name_beirs_fields_and_lines(repo, tmp_path, capsys):
    write(repo / "beir/corpus.jsonl", '{"_id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n')
    write(repo / "beir/queries.jsonl", '{"_id": "q1", "text": "x"}\n')
    write(repo / "beir/qrels/test.tsv", "q1\ta\t1\n")
    write(repo / "beir.yml", HEAD + "dataset: {format: beir, path: beir}\n")
    code, res, _ = _run(tmp_path, config="beir.yml")
    where = {(p["file"], p["line"]): p["message"] for p in res["problems"]}
    assert code == 2
    assert "`_id`" in where[("beir/corpus.jsonl", 2)]
    assert "header `query-id corpus-id score`" in where[("beir/qrels/test.tsv", 1)]


def test_a_llamaindex_dataset_reads_as_it_is(repo, tmp_path, native):
    corpus, gold, _ = _example(repo)
    data = {"queries": {q["query_id"]: q["query"] for q in gold},
            "corpus": {d["id"]: d["text"] for d in corpus},
            "relevant_docs": {q["query_id"]: [d for d, g in q["relevant"].items() if g >= 1] for q in gold},
            "mode": "text"}
    write(repo / "qa.json", json.dumps(data, indent=2))
    write(repo / "llama.yml", HEAD + "dataset: {format: llamaindex, path: qa.json}\nrun: run.jsonl\n"
                                     'snapshot: "2026-11-30"\n')
    code, res, _ = _run(tmp_path, config="llama.yml")
    assert code == 0
    # Binary labels, grade 0 dropped: P and R as the native gold's (min_grade 1); Judged differs.
    assert _means(res, ("P@5", "R@5")) == _means(native, ("P@5", "R@5"))
    assert res["provenance"]["formats"] == {"qa.json": "llamaindex", "run.jsonl": "jsonl"}


def test_a_llamaindex_problem_has_its_line(repo, tmp_path):
    write(repo / "qa.json", '{\n "queries": {"q1": "x"},\n "corpus": {\n  "n1": "a",\n  "n2": 7\n },\n'
                            ' "relevant_docs": {"q1": ["n1"]},\n "mode": "text"\n}\n')
    write(repo / "llama.yml", HEAD + "dataset: {format: llamaindex, path: qa.json}\n")
    code, res, _ = _run(tmp_path, config="llama.yml")
    assert code == 2
    assert [(p["file"], p["line"], p["id"]) for p in res["problems"] if p["severity"] == "error"] == [
        ("qa.json", 5, "n2")]


@pytest.mark.parametrize(("text", "said"), [
    ('{"queries": {}, "corpus": {}, "relevant_docs": {}, "mode": "image"}', "only `mode: text` datasets"),
    ("{", "invalid JSON"),
])
def test_a_llamaindex_file_problem_is_said_once(repo, tmp_path, text, said):
    """The dataset is read as corpus and as gold: a problem of the whole file once, not twice."""
    write(repo / "qa.json", text)
    write(repo / "llama.yml", HEAD + "dataset: {format: llamaindex, path: qa.json}\n")
    code, res, _ = _run(tmp_path, config="llama.yml")
    assert code == 2
    assert [p["file"] for p in res["problems"] if said in p["message"]] == ["qa.json"], res["problems"]


def _dicts(repo, gold, run, scores=lambda i: -float(i)):
    write(repo / "qrels.json", json.dumps({q["query_id"]: q["relevant"] for q in gold}))
    write(repo / "run.json", json.dumps({r["query_id"]: {d: scores(i) for i, d in enumerate(r["ranking"])}
                                         for r in run}))


def test_pytrec_eval_dicts_read_as_they_are(repo, tmp_path, native):
    _, gold, run = _example(repo)
    _dicts(repo, gold, run)
    write(repo / "dicts.yml", HEAD + "corpus: corpus.jsonl\ngold: qrels.json\nrun: run.json\n"
                                     "formats: {gold: qrels-json, run: run-json}\n")
    code, res, _ = _run(tmp_path, config="dicts.yml")
    assert code == 0 and _means(res) == _means(native)
    assert res["provenance"]["formats"]["run.json"] == "run-json"


def test_a_csv_gold_set_reads_as_the_native_one(repo, tmp_path, native):
    """CSV with a header row of the native names (no field map): labels as a
    JSON object per cell score what gold.yaml scores; a bad row is exit 2 at
    its line. Other shapes and field maps: tests/test_fieldmap.py."""
    _, gold, _ = _example(repo)
    rows = ["query_id,query,relevant"] + [
        f'{q["query_id"]},"{q["query"]}","' + json.dumps(q["relevant"]).replace('"', '""') + '"' for q in gold]
    write(repo / "gold.csv", "\n".join(rows) + "\n")
    write(repo / "csv.yml", HEAD + 'corpus: corpus.jsonl\ngold: gold.csv\nrun: run.jsonl\nsnapshot: "2026-11-30"\n')
    code, res, _ = _run(tmp_path, config="csv.yml")
    assert code == 0 and _means(res) == _means(native)
    assert res["provenance"]["formats"]["gold.csv"] == "csv"
    write(repo / "gold.csv", "\n".join([*rows[:4], "q99,x,{}", "q98,y,7"]) + "\n")
    code, res, _ = _run(tmp_path, "bad", config="csv.yml")
    assert code == 2
    assert [(p["file"], p["line"]) for p in res["problems"] if p["severity"] == "error"] == [("gold.csv", 6)]


def test_a_distance_run_needs_run_order_ascending(repo, tmp_path, native):
    _, gold, run = _example(repo)
    _dicts(repo, gold, run, scores=float)  # a distance: the best document has the smallest score
    cfg = HEAD + "corpus: corpus.jsonl\ngold: qrels.json\nrun: run.json\nformats: {gold: qrels-json, run: run-json"
    write(repo / "up.yml", cfg + "}\n")
    _, upside_down, _ = _run(tmp_path, "up", config="up.yml")
    assert upside_down["metrics"]["nDCG@5"] < native["metrics"]["nDCG@5"] - 0.2
    write(repo / "asc.yml", cfg + ", run_order: ascending}\n")
    code, res, _ = _run(tmp_path, "asc", config="asc.yml")
    assert code == 0 and _means(res) == _means(native)


def _trec_run(run, score):
    return "".join(f"{r['query_id']} Q0 {d} {i} {score(i)} tag\n" for r in run for i, d in enumerate(r["ranking"], 1))


def test_a_trec_run_scored_by_distance_is_warned_about(repo, tmp_path, native):
    _, _, run = _example(repo)
    write(repo / "run.trec", _trec_run(run, score=lambda i: i * 0.5))  # rank 1 has the lowest score
    write(repo / "trec.yml", HEAD + "corpus: corpus.jsonl\ngold: gold.yaml\nrun: run.trec\n")
    _, res, _ = _run(tmp_path, "d", config="trec.yml")
    warning = [p["message"] for p in res["problems"] if "rank column rises" in p["message"]]
    assert warning and "set `formats: {run_order: ascending}`" in warning[0]
    write(repo / "trec.yml", HEAD + "corpus: corpus.jsonl\ngold: gold.yaml\nrun: run.trec\n"
                                    "formats: {run_order: ascending}\n")
    code, res, _ = _run(tmp_path, "a", config="trec.yml")
    assert code == 0 and _means(res) == _means(native)
    assert not [p for p in res["problems"] if "rank column" in p["message"]]
    write(repo / "run.trec", _trec_run(run, score=lambda i: 100 - i))  # a similarity: no warning
    write(repo / "trec.yml", HEAD + "corpus: corpus.jsonl\ngold: gold.yaml\nrun: run.trec\n")
    _, res, _ = _run(tmp_path, "s", config="trec.yml")
    assert not [p for p in res["problems"] if "rank column" in p["message"]]


def test_relevance_map_reads_negative_and_inverted_grades(repo, tmp_path, native):
    _, gold, run = _example(repo)
    # TREC Web style: -2 for spam; and the scale written upside down (Cranfield: 1 best).
    inverted = {0: 3, 1: 2, 2: 1}
    lines = [f"{q['query_id']} 0 {d} {inverted[g]}" for q in gold for d, g in q["relevant"].items()]
    write(repo / "gold.qrels", "\n".join(lines) + f"\n{gold[0]['query_id']} 0 spam-doc -2\n")
    write(repo / "map.yml", HEAD + "corpus: corpus.jsonl\ngold: gold.qrels\nrun: run.jsonl\n")
    code, res, _ = _run(tmp_path, "nomap", config="map.yml")
    scale = [p for p in res["problems"] if "outside the declared scale" in p["message"]]
    assert code == 2 and len(scale) == 1
    assert '`relevance: {map: {"-2": 0}}`' in scale[0]["message"] and "max_grade: 3" in scale[0]["message"]
    write(repo / "map.yml", HEAD + "corpus: corpus.jsonl\ngold: gold.qrels\nrun: run.jsonl\n"
                                   'relevance: {map: {"-2": 0, "3": 0, "2": 1, "1": 2}}\n')
    code, res, _ = _run(tmp_path, "map", config="map.yml")
    # spam-doc is not in the corpus: a label on an unknown document is an error; drop it and all agree.
    assert code == 2 and any("spam-doc" == p["id"] for p in res["problems"])
    write(repo / "gold.qrels", "\n".join(lines) + "\n")
    code, res, _ = _run(tmp_path, "map2", config="map.yml")
    assert code == 0 and _means(res) == _means(native)


def test_gzip_inputs_score_the_same_and_are_named(repo, tmp_path, native):
    for name in ("corpus.jsonl", "run.jsonl", "gold.yaml"):
        (repo / f"{name}.gz").write_bytes(gzip.compress((repo / name).read_bytes()))
    write(repo / "gz.yml", HEAD + "corpus: corpus.jsonl.gz\ngold: gold.yaml.gz\nrun: run.jsonl.gz\n"
                                  'snapshot: "2026-11-30"\n')
    code, res, summary = _run(tmp_path, config="gz.yml")
    assert code == 0 and _means(res) == _means(native)
    assert res["provenance"]["formats"]["corpus.jsonl.gz"] == "jsonl (gzip)"
    assert res["provenance"]["corpus_fingerprint"] == native["provenance"]["corpus_fingerprint"]
    import hashlib
    assert res["provenance"]["inputs"]["run.jsonl.gz"] == hashlib.sha256((repo / "run.jsonl.gz").read_bytes()).hexdigest()


def _chunked(repo, gold_level="document"):
    """The example's corpus cut into two chunks per document; the run ranks
    chunks (each document's chunks next to each other, the second first)."""
    corpus, gold, run = _example(repo)
    rows = []
    for d in corpus:
        half = len(d["text"]) // 2
        for part, text in (("a", d["text"][:half]), ("b", d["text"][half:])):
            rows.append({**d, "id": f"{d['id']}#{part}", "doc_id": d["id"], "text": text})
    write(repo / "chunks.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    write(repo / "chunks-run.jsonl", "".join(json.dumps({"query_id": r["query_id"], "ranking": [
        c for d in r["ranking"] for c in (f"{d}#b", f"{d}#a")]}) + "\n" for r in run))
    if gold_level == "chunk":
        lines = [f"{q['query_id']} 0 {d}#{p} {g}" for q in gold for d, g in q["relevant"].items() for p in "ab"]
        write(repo / "chunk-gold.qrels", "\n".join(lines) + "\n")


def test_a_chunked_corpus_is_evaluated_per_document(repo, tmp_path, native):
    _chunked(repo)
    write(repo / "chunks.yml", HEAD + "corpus: chunks.jsonl\ngold: gold.yaml\nrun: chunks-run.jsonl\n"
                                      'snapshot: "2026-11-30"\n')
    code, res, summary = _run(tmp_path, config="chunks.yml")
    assert code == 0, [p["message"] for p in res["problems"]]
    assert res["metrics"] == native["metrics"]  # a document's position is its first chunk's
    assert res["irrelevant_by_type"] == native["irrelevant_by_type"]  # documents, not chunks
    assert "evaluated per document" in summary


def test_a_gold_set_of_chunks_is_evaluated_per_chunk(repo, tmp_path, native):
    _chunked(repo, gold_level="chunk")
    write(repo / "chunks.yml", HEAD + "corpus: chunks.jsonl\ngold: chunk-gold.qrels\nrun: chunks-run.jsonl\n")
    code, res, summary = _run(tmp_path, config="chunks.yml")
    assert code == 0 and "evaluated per chunk" in summary
    # Each document's label is on both its chunks: twice the relevant items, ranked as chunks.
    assert [q["relevant"] for q in res["queries"]] == [2 * q["relevant"] for q in native["queries"]]
    assert res["metrics"]["R@5"] != native["metrics"]["R@5"]


def test_labels_of_both_levels_are_an_error(repo, tmp_path):
    _chunked(repo)
    text = (repo / "gold.yaml").read_text().replace("      faq-004: 1\n", "      faq-004#a: 1\n", 1)
    write(repo / "gold.yaml", text)
    write(repo / "chunks.yml", HEAD + "corpus: chunks.jsonl\ngold: gold.yaml\nrun: chunks-run.jsonl\n")
    code, res, _ = _run(tmp_path, config="chunks.yml")
    bad = [p for p in res["problems"] if p["severity"] == "error"]
    assert code == 2 and len(bad) == 1 and bad[0]["id"] == "faq-004#a" and bad[0]["line"] == 13
    assert "labels a chunk (of document `faq-004`)" in bad[0]["message"]
