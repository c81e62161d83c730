"""Golden sets and corpora as teams write them (`gold: {path, fields}`,
`corpus: {path, fields}`, CSV), read without conversion: each shape scores
per question what trec_eval (pytrec_eval) scores on the equivalent qrels;
every bad field is an error at its line naming the field as the file writes
it; `answerable: false` questions are listed apart and kept out of the
means; a field map is a rule, locked to the base."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import check, write
from rag_corpus_check.config.load import Fields
from rag_corpus_check.core import problems as P
from rag_corpus_check.inputs import Source, read_corpus, read_gold
from rag_corpus_check.inputs.fieldmap import question_id
from rag_corpus_check.metrics.evaluate import UNANSWERABLE, evaluate
from rag_corpus_check.metrics.measures import parse_measure
from rag_corpus_check.safe_io import InputError, Limits, load_yaml

pytrec_eval = pytest.importorskip("pytrec_eval")

K = 5
TREC = {"P@5": "P_5", "R@5": "recall_5", "nDCG@5": "ndcg_cut_5", "AP@5": "map_cut_5", "RR@5": "recip_rank"}


def _example(repo):
    corpus = [json.loads(line) for line in (repo / "corpus.jsonl").read_text().splitlines()]
    gold = load_yaml((repo / "gold.yaml").read_bytes(), "gold.yaml", Limits())["queries"]
    run = {r["query_id"]: r["ranking"] for r in map(json.loads, (repo / "run.jsonl").read_text().splitlines())}
    return corpus, gold, run


def _config(repo, gold: str, corpus: str = "corpus.jsonl", name="team.yml", extra: str = "") -> str:
    write(repo / name, f"version: 1\nk: {K}\nrun: team-run.jsonl\ncorpus: {corpus}\ngold: {gold}\n"
                       "measures: [AP@5, RR@5]\nthresholds:\n  P@5: 0.1\n" + extra)
    return name


def _run_file(repo, run: dict[str, list[str]]) -> None:
    write(repo / "team-run.jsonl", "".join(json.dumps({"query_id": q, "ranking": r}) + "\n" for q, r in run.items()))


def _trec(qrels: dict, run: dict[str, list[str]]) -> dict:
    """trec_eval's per-question values (the run's order as descending scores)."""
    scored = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items() if q in qrels}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values()) - {"recip_rank"} | {"recip_rank"})
    return evaluator.evaluate(scored)


def _assert_trec(results: dict, qrels: dict, run: dict[str, list[str]]) -> None:
    """Every question in the means scores what trec_eval scores (RR@5: trec_eval's recip_rank on the top 5)."""
    top = {q: r[:K] for q, r in run.items()}
    expected = _trec(qrels, top)
    counted = [q for q in results["queries"] if q["status"] == "ok"]
    assert counted
    for q in counted:
        for ours, theirs in TREC.items():
            assert q["values"][ours] == pytest.approx(expected[q["query_id"]][theirs], abs=1e-12), (q, ours)


def _relevant_ids(q: dict) -> list[str]:
    return [d for d, g in q["relevant"].items() if g >= 1]


def test_id_query_expected_docs_jsonl(repo, tmp_path, capsys):
    """`{"id", "query", "expected_docs": [...]}`: a list of ids, each grade 1."""
    _, gold, run = _example(repo)
    write(repo / "eval/golden.jsonl", "".join(json.dumps({"id": q["query_id"], "query": q["query"],
                                                          "expected_docs": _relevant_ids(q), "category": "x"}) + "\n"
                                              for q in gold))
    _run_file(repo, run)
    cfg = _config(repo, "{path: eval/golden.jsonl, fields: {query_id: id, relevant: expected_docs}}")
    code, text, results, _ = check(tmp_path, capsys, config=cfg)
    assert code == 0, text
    qrels = {q["query_id"]: dict.fromkeys(_relevant_ids(q), 1) for q in gold}
    _assert_trec(results, qrels, run)
    assert results["counts"]["questions"] == len(gold)
    assert results["conventions"]["fields"] == {"gold": {"query_id": "id", "relevant": "expected_docs"}}
    assert "the gold set is read through the field map query_id ← id, relevant ← expected_docs" in text


def test_question_relevant_sources_paths_and_unanswerable(repo, tmp_path, capsys):
    """`{"question", "relevant_sources": [paths], "answerable": false}`: no
    question ids (each is named by its text's hash), document ids that are
    file paths (a corpus with its own field names), and questions no
    document answers, listed apart and kept out of the means."""
    corpus, gold, run = _example(repo)
    path = {d["id"]: f"docs/{d['type']}/{d['id']}.md" for d in corpus}
    write(repo / "data/chunks.jsonl", "".join(json.dumps({"source_path": path[d["id"]], "content": d["text"],
                                                          "heading": d.get("title"), "url": "https://x"}) + "\n"
                                              for d in corpus))
    unanswerable = ["Who won the 1954 World Cup?", "What does the Suez Canal cost to cross?"]
    rows = [{"question": q["query"], "relevant_sources": [path[d] for d in _relevant_ids(q)]} for q in gold]
    rows += [{"question": text, "relevant_sources": ["docs/faq/faq-001.md"] if i else [], "answerable": False}
             for i, text in enumerate(unanswerable)]
    write(repo / "evals/ground_truth.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    team_run = {question_id(q["query"]): [path[d] for d in run[q["query_id"]]] for q in gold}
    team_run |= {question_id(text): [path["faq-001"]] for text in unanswerable}
    _run_file(repo, team_run)
    cfg = _config(repo, "{path: evals/ground_truth.jsonl, fields: {query: question, relevant: relevant_sources}}",
                  "{path: data/chunks.jsonl, fields: {id: source_path, text: content, title: heading}}")
    code, text, results, summary = check(tmp_path, capsys, config=cfg)
    assert code == 0, text
    qrels = {question_id(q["query"]): {path[d]: 1 for d in _relevant_ids(q)} for q in gold}
    _assert_trec(results, qrels, team_run)
    hashed = sorted(question_id(t) for t in unanswerable)
    assert sorted(q["query_id"] for q in results["queries"] if q["status"] == UNANSWERABLE) == hashed
    labelled = [q for q in gold if _relevant_ids(q)]
    assert results["counts"]["unanswerable"] == 2 and results["counts"]["in_means"] == len(labelled)
    assert results["counts"]["no_relevant"] == len(gold) - len(labelled)  # missing labels: the others only
    unanswerable_section = summary.split("### Unanswerable by design (2)")[1]
    excluded_section = summary.split("### Excluded from the means (1)")[1].split("###")[0]
    shown = [q.replace("-", "\\-") for q in hashed]  # as Markdown escapes them
    assert all(q in unanswerable_section and q not in excluded_section for q in shown)
    assert "unanswerable by design" in text


def test_expected_chunk_ids_with_a_chunked_corpus(repo, tmp_path, capsys):
    """`{"expected_chunk_ids": [...]}` over a corpus of chunks (`chunk_id`,
    `content`, `source` as the parent document)."""
    corpus, gold, run = _example(repo)
    write(repo / "chunks.jsonl", "".join(json.dumps({"chunk_id": d["id"], "content": d["text"],
                                                     "source": d["id"].split("-")[0]}) + "\n" for d in corpus))
    write(repo / "eval/golden_set.jsonl", "".join(json.dumps({"query_id": q["query_id"], "query": q["query"],
                                                              "expected_chunk_ids": _relevant_ids(q)}) + "\n"
                                                  for q in gold))
    _run_file(repo, run)
    cfg = _config(repo, "{path: eval/golden_set.jsonl, fields: {relevant: expected_chunk_ids}}",
                  "{path: chunks.jsonl, fields: {id: chunk_id, text: content, doc_id: source}}")
    code, text, results, _ = check(tmp_path, capsys, config=cfg)
    assert code == 0, text
    _assert_trec(results, {q["query_id"]: dict.fromkeys(_relevant_ids(q), 1) for q in gold}, run)


def test_a_yaml_list_with_graded_mappings_scores_as_the_native_gold(repo, tmp_path, capsys):
    """YAML: a plain list of questions whose labels are a mapping id -> grade
    under the team's names; graded as the native gold.yaml is."""
    _, gold, run = _example(repo)
    lines = []
    for q in gold:
        lines += [f"- id: {q['query_id']}", f"  question: {json.dumps(q['query'])}", "  labels:"]
        lines += [f"    {d}: {g}" for d, g in q["relevant"].items()]
    write(repo / "eval/golden.yaml", "\n".join(lines) + "\n")
    _run_file(repo, run)
    cfg = _config(repo, "{path: eval/golden.yaml, fields: {query_id: id, query: question, relevant: labels}}")
    code, text, results, _ = check(tmp_path, capsys, config=cfg)
    assert code == 0, text
    _assert_trec(results, {q["query_id"]: dict(q["relevant"]) for q in gold}, run)


def test_csv_with_a_header_row(repo, tmp_path, capsys):
    """CSV: a header row, `;` between ids, a JSON object for grades, a
    question text with a comma and a line break in quotes, answerable as text."""
    _, gold, run = _example(repo)
    rows = ["id,question,sources,answerable"]
    for i, q in enumerate(gold):
        text = '"' + q["query"].replace('"', '""') + (',\nreally?' if i == 0 else "") + '"'
        sources = (";".join(_relevant_ids(q)) if i % 2 else
                   '"' + json.dumps(dict(q["relevant"])).replace('"', '""') + '"')
        rows.append(f"{q['query_id']},{text},{sources},{'TRUE' if i % 3 else ''}")
    rows.append('nope,"Is there a moon base?",,false')
    write(repo / "eval/golden.csv", "\n".join(rows) + "\n")
    _run_file(repo, run)
    cfg = _config(repo, "{path: eval/golden.csv, fields: {query_id: id, query: question, relevant: sources}}")
    code, text, results, _ = check(tmp_path, capsys, config=cfg)
    assert code == 0, text
    qrels = {q["query_id"]: dict.fromkeys(_relevant_ids(q), 1) if i % 2 else dict(q["relevant"])
             for i, q in enumerate(gold)}
    _assert_trec(results, qrels, run)
    assert [q["query_id"] for q in results["queries"] if q["status"] == UNANSWERABLE] == ["nope"]
    assert results["provenance"]["formats"]["eval/golden.csv"] == "csv"


def test_a_field_name_reaches_the_summary_escaped(repo, tmp_path, capsys):
    """Field names are the config's (a pull request's) text: the summary's
    conventions escape them like every other value from an input."""
    _, gold, run = _example(repo)
    name = "[x](https://evil.example)<b>"
    write(repo / "golden.jsonl", "".join(json.dumps({"id": q["query_id"], name: _relevant_ids(q)}) + "\n"
                                         for q in gold))
    _run_file(repo, run)
    cfg = _config(repo, "{path: golden.jsonl, fields: {query_id: id, relevant: " + json.dumps(name) + "}}")
    code, text, _, summary = check(tmp_path, capsys, config=cfg)
    assert code == 0, text
    line = next(x for x in summary.splitlines() if "read through the field map" in x)
    assert "](" not in line and "<b>" not in line and "\\[x\\]" in line


def test_list_grade_gives_a_listed_id_its_grade(tmp_path):
    gold = write(tmp_path / "g.jsonl", '{"query_id": "q1", "docs": ["a", "b"]}\n')
    problems = P.Problems()
    read = read_gold(Source(str(gold), "g.jsonl", "jsonl", fields=Fields((("relevant", "docs"),)), list_grade=2),
                     Limits(), problems)
    assert not problems.items and read.queries["q1"].relevant == {"a": 2, "b": 2}
    native_csv = write(tmp_path / "g.csv", "query_id,relevant,tags\nq1,a; b,billing; ru\n")  # no field map too
    read = read_gold(Source(str(native_csv), "g.csv", "csv", list_grade=2), Limits(), problems)
    assert not problems.items and read.queries["q1"].relevant == {"a": 2, "b": 2}
    assert read.queries["q1"].tags == ("billing", "ru")


def _problems(results) -> list[tuple[str, int | None, str]]:
    return [(p["file"], p["line"], p["message"]) for p in results["problems"] if p["severity"] == "error"]


def test_every_bad_field_is_an_error_at_its_line_naming_the_field(repo, tmp_path, capsys):
    _, gold, run = _example(repo)
    good = [json.dumps({"qid": q["query_id"], "q": q["query"], "docs": _relevant_ids(q)}) for q in gold]
    bad = [
        '{"qid": "b1", "q": "no labels"}',                                   # the labels field missing
        '{"qid": "b2", "q": "x", "docs": 7}',                                # of the wrong type
        '{"qid": "b3", "q": "x", "docs": ["faq-001", {"id": 1}]}',           # an item that is no id
        '{"qid": "b4", "q": "x", "docs": ["faq-001"], "ok": "maybe"}',       # answerable not true/false
        '{"q": "no id"}',                                                    # the mapped id missing
        '{"qid": "b6", "q": 5, "docs": []}',                                 # the text of the wrong type
        '{"qid": "b7", "q": "x", "docs": ["faq-001", "faq-001"]}',           # an id twice
        '{"qid": "b8", "q": "x", "docs": {"faq-001": "high"}}',              # a grade that is no integer
    ]
    write(repo / "golden.jsonl", "\n".join(good + bad) + "\n")
    _run_file(repo, run)
    cfg = _config(repo, "{path: golden.jsonl, fields: {query_id: qid, query: q, relevant: docs, answerable: ok}}")
    code, text, results, _ = check(tmp_path, capsys, config=cfg)
    assert code == 2, text
    first = len(good) + 1
    found = _problems(results)
    assert [(f, line) for f, line, _ in found] == [("golden.jsonl", first + i) for i in range(len(bad))]
    names = ["`docs` is missing", "`docs` must be a list", "`docs` item 2", "`ok` must be true or false",
             "`qid` is missing", "q: expected string", "`docs` lists `faq-001` twice", "docs.faq-001: expected integer"]
    for (_, _, message), name in zip(found, names, strict=True):
        assert message.startswith(name), message


def test_an_unknown_id_is_an_error_at_its_line_naming_the_field(repo, tmp_path, capsys):
    _, gold, run = _example(repo)
    rows = [json.dumps({"id": q["query_id"], "expected_docs": _relevant_ids(q)}) for q in gold]
    rows[3] = json.dumps({"id": gold[3]["query_id"], "expected_docs": ["faq-001", "guides/missing.md"]})
    write(repo / "golden.jsonl", "\n".join(rows) + "\n")
    _run_file(repo, run)
    cfg = _config(repo, "{path: golden.jsonl, fields: {query_id: id, relevant: expected_docs}}")
    code, text, results, _ = check(tmp_path, capsys, config=cfg)
    assert code == 2, text
    [(file, line, message)] = _problems(results)
    assert (file, line) == ("golden.jsonl", 4) and message.startswith("unknown document id in `expected_docs`")
    assert [p["id"] for p in results["problems"] if p["severity"] == "error"] == ["guides/missing.md"]


def test_bad_fields_of_yaml_and_csv_at_their_lines(tmp_path):
    fields = Fields((("query_id", "id"), ("relevant", "docs")))
    yaml_file = write(tmp_path / "g.yaml", "- id: a\n  docs: [x]\n- id: b\n  docs: 3\n- id: c\n  docs:\n    - y\n"
                                           "    - [z]\n")
    csv_file = write(tmp_path / "g.csv", 'id,docs,answerable\na,x;y,\nb,"[1, ",\nc,x,perhaps\n')
    json_file = write(tmp_path / "g.json", '[\n  {"id": "a", "docs": ["x"]},\n  {"id": "b",\n   "docs": 3}\n]\n')
    found = {}
    for path, fmt in ((yaml_file, "yaml"), (csv_file, "csv"), (json_file, "json")):
        problems = P.Problems()
        read_gold(Source(str(path), path.name, fmt, fields=fields), Limits(), problems)
        found[fmt] = [(p.line, p.message.split(" ", 2)[:2]) for p in problems.items]
    assert found["yaml"] == [(3, ["`docs`", "must"]), (5, ["`docs`", "item"])]
    assert found["csv"] == [(3, ["`docs`", "starts"]), (4, ["`answerable`", "must"])]
    assert found["json"] == [(3, ["`docs`", "must"])]
    snapshot = write(tmp_path / "s.yaml", "snapshot: [1]\nqueries:\n  - {id: a, docs: [x]}\n")
    problems = P.Problems()
    gold = read_gold(Source(str(snapshot), "s.yaml", "yaml", fields=fields), Limits(), problems)
    assert [(p.line, p.message) for p in problems.items] == [(1, "snapshot: expected string, got array")]
    assert list(gold.queries) == ["a"] and gold.snapshot is None


def test_a_corpus_field_that_is_missing_or_of_the_wrong_type(tmp_path):
    path = write(tmp_path / "c.jsonl", '{"chunk_id": "a", "content": "x"}\n{"chunk_id": "b"}\n'
                                       '{"chunk_id": "c", "content": ["x"]}\n{"chunk_id": "d", "content": "y", '
                                       '"src": 5}\n')
    problems = P.Problems()
    corpus = read_corpus(Source(str(path), "c.jsonl", "jsonl", fields=Fields((("id", "chunk_id"), ("text", "content"),
                                                                               ("doc_id", "src")))), Limits(), problems)
    assert list(corpus.docs) == ["a", "d"] and corpus.parents == {"d": "5"}
    assert [(p.line, p.message.split(":")[0]) for p in problems.items] == [
        (2, "`content` missing"), (3, "content")]


def test_a_mapped_corpus_reads_as_the_same_corpus_native(tmp_path):
    """The field map routes to the exact reader; what it keeps is what the
    native file gives (the fast reader's equality to the exact one is
    tests/test_fast_readers.py's property)."""
    docs = [{"id": f"d{i}", "text": f"text {i}", "doc_id": f"p{i % 3}", "type": "faq",
             "status": "stale" if i == 4 else "active", "snapshot": "s1"} for i in range(9)]
    native = write(tmp_path / "n.jsonl", "".join(json.dumps(d) + "\n" for d in docs))
    names = {"id": "uid", "text": "body", "doc_id": "parent", "type": "kind", "status": "state", "snapshot": "snap"}
    team = write(tmp_path / "t.jsonl", "".join(json.dumps({names[k]: v for k, v in d.items()} | {"extra": 1}) + "\n"
                                               for d in docs))
    problems = P.Problems()
    a = read_corpus(Source(str(native), "c.jsonl"), Limits(), problems)
    b = read_corpus(Source(str(team), "c.jsonl", fields=Fields(tuple(names.items()))), Limits(), problems)
    assert not problems.items
    assert (b.docs, b.parents, b.inactive, b.snapshots, b.line("d3")) == (a.docs, a.parents, a.inactive,
                                                                          a.snapshots, a.line("d3"))


def test_answerable_false_in_the_native_gold_and_across_a_gold_list(tmp_path):
    """`answerable` is a native gold field too; two files of a `gold:` list
    that disagree on it are an error at the second."""
    from rag_corpus_check.inputs import read_gold_set

    a = write(tmp_path / "a.yaml", "queries:\n  - query_id: q1\n    relevant: {}\n    answerable: false\n"
                                   "  - query_id: q2\n    relevant: {x: 1}\n")
    b = write(tmp_path / "b.jsonl", '{"query_id": "q1", "relevant": {}, "answerable": true}\n'
                                    '{"query_id": "q2", "relevant": {}, "answerable": false}\n')
    problems = P.Problems()
    gold = read_gold_set([Source(str(a), "a.yaml", "yaml"), Source(str(b), "b.jsonl", "jsonl")], None, Limits(),
                         problems)
    assert gold is not None and gold.unanswerable() == {"q1", "q2"}
    [problem] = problems.items
    assert (problem.file, problem.line, problem.id) == ("b.jsonl", 1, "q1")
    assert problem.message.startswith("the question's `answerable` differs between b.jsonl:1 and a.yaml:")


def test_pool_leaves_unanswerable_questions_out():
    from rag_corpus_check.commands.worksheet import select
    from rag_corpus_check.inputs.records import Gold, GoldQuery

    gold = Gold("g.yaml", queries={"a": GoldQuery("a", 1, {}, {}), "b": GoldQuery("b", 2, {}, {}, answerable=False)})
    assert [q.query_id for q in select(gold, {"a": ["x"], "b": ["y"]}, None, 5)] == ["a"]


def test_pool_says_where_the_grades_of_a_field_mapped_gold_set_go(repo, tmp_path, capsys):
    """A worksheet cannot join a field-mapped gold set as a `gold:` list
    entry (the map would read it): pool says to copy the grades over."""
    from rag_corpus_check.commands.pool import pool

    _, gold, run = _example(repo)
    write(repo / "golden.jsonl", "".join(json.dumps({"id": q["query_id"], "docs": _relevant_ids(q)[:1]}) + "\n"
                                         for q in gold))
    _run_file(repo, run)
    cfg = _config(repo, "{path: golden.jsonl, fields: {query_id: id, relevant: docs}}")
    assert pool(["--config", cfg, "--out", str(tmp_path / "labels.yaml")]) == 0
    said = capsys.readouterr().out
    assert "copy the grades into golden.jsonl in its own shape" in said and "gold: [" not in said
    assert "copy the grades into golden.jsonl" in (tmp_path / "labels.yaml").read_text()


def test_unanswerable_questions_are_no_mean_and_no_missing_label():
    m = [parse_measure("P@2"), parse_measure("R@2")]
    ev = evaluate({"a": {"x": 1}, "b": {}, "c": {"x": 1}}, {"a": ["x"], "b": ["x"], "c": ["y"]}, m,
                  unanswerable={"c"})
    assert [q.status for q in ev.queries] == ["ok", "no_relevant", "unanswerable"]
    assert ev.counted == 1 and ev.excluded == ["b"] and ev.unanswerable == ["c"]
    assert ev.means[m[1]] == 1.0


def test_a_field_map_needs_a_format_it_can_read(repo, tmp_path, capsys):
    write(repo / "gold.qrels", "q01 0 faq-001 1\n")
    _run_file(repo, {"q01": ["faq-001"]})
    cfg = _config(repo, "{path: gold.qrels, fields: {relevant: docs}}")
    code, text, results, _ = check(tmp_path, capsys, config=cfg)
    assert code == 2 and "a field map reads JSONL, YAML, JSON or CSV questions" in text


def test_two_native_fields_read_from_one_field_is_a_config_error(repo, tmp_path, capsys):
    cfg = _config(repo, "{path: gold.yaml, fields: {query_id: id, query: id}}")
    code, text, _, _ = check(tmp_path, capsys, config=cfg)
    assert code == 2 and "`gold.fields` reads the field `id` as two native fields" in text


# ---------------------------------------------------------------- a rule, locked to the base


def _team_repo(kb, relevant_field: str) -> None:
    _, gold, run = _example(kb)
    write(kb / "eval/golden.jsonl", "".join(json.dumps({"id": q["query_id"], "query": q["query"],
                                                        relevant_field: _relevant_ids(q)}) + "\n" for q in gold))
    _run_file(kb, run)
    write(kb / ".rag-corpus-check.yml", f"version: 1\nk: {K}\nrun: team-run.jsonl\ncorpus: corpus.jsonl\n"
          f"gold: {{path: eval/golden.jsonl, fields: {{query_id: id, relevant: {relevant_field}}}}}\n"
          "thresholds:\n  P@5: 0.1\n")


def test_a_field_map_change_is_a_rule_change(kb, tmp_path, capsys):
    """A PR that renames the labels field in the file and the map together
    changes how the gold set is read: without a new rule_change_reason the
    base's map reads the head's file (and the change fails the gate); with
    one, each side is read with its own map and the check passes."""
    from support.repos import commit, edit

    _team_repo(kb, "expected_docs")
    base = commit(kb, "base")
    _team_repo(kb, "sources")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code != 0, text
    assert results["rules_source"] == "base"
    rules = results["comparison"]["rules"]
    change = "`gold.fields` changed: {query_id: id, relevant: expected_docs} → {query_id: id, relevant: sources}"
    assert change in rules["loosened"] and rules["violated"], rules
    assert any(p["message"].startswith("`expected_docs` is missing") and p["line"] == 1 for p in results["problems"])
    edit(kb / ".rag-corpus-check.yml", "thresholds:", "rule_change_reason: the labels field is `sources` now\n"
                                                       "thresholds:")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert results["rules_source"] == "head-override"
    assert results["comparison"]["base_sha"] == base


# ---------------------------------------------------------------- hostile CSV


_CELLS = st.sampled_from(['', 'q1', '"a,b"', '"x\n\ny"', '[', '{"a": 1}', '["a", 2]', 'a;b;a', 'false', '"', '\x00',
                          '""', ' ', 'yes', '{"a": "b"}', '[[1]]'])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_CELLS, min_size=0, max_size=5), min_size=0, max_size=6))
def test_any_csv_is_read_or_refused_at_a_line(tmp_path_factory, rows):
    """Whatever a CSV holds, its gold set is read with problems at lines,
    or refused as an input error: never another exception."""
    path = tmp_path_factory.mktemp("csv") / "g.csv"
    path.write_text("id,question,docs,answerable\n" + "\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
    problems = P.Problems()
    fields = Fields((("query_id", "id"), ("query", "question"), ("relevant", "docs")))
    try:
        gold = read_gold(Source(str(path), "g.csv", "csv", fields=fields), Limits(), problems)
    except InputError as exc:
        assert exc.line is not None
        return
    assert all(p.line is not None for p in problems.items)
    for q in gold.queries.values():
        assert isinstance(q.query_id, str) and all(isinstance(d, str) for d in q.relevant)


@pytest.mark.parametrize(("body", "line", "said"), [
    ('a,"' + "x" * 131_073 + '",\n', 2, "not valid CSV: field larger than field limit"),
    ('a,b\nc,"open\n\n', 3, "not valid CSV: unexpected end of data"),
    ("a,b,c,d\n", 2, "the row has 4 cells, the header 3 columns"),
], ids=["a cell over 128 KiB", "a quote left open", "more cells than the header"])
def test_a_broken_csv_is_refused_at_the_row(tmp_path, body, line, said):
    path = write(tmp_path / "g.csv", "id,query,relevant\n" + body)
    with pytest.raises(InputError) as caught:
        read_gold(Source(str(path), "g.csv", "csv"), Limits(), P.Problems())
    assert (caught.value.file, caught.value.line) == ("g.csv", line) and caught.value.message.startswith(said)


def test_marking_questions_unanswerable_does_not_loosen_the_gate(kb, tmp_path, capsys):
    """A pull request that marks its worst questions `answerable: false`
    lifts the head gold set's mean over the threshold, but the base's gold
    set still judges the head's ranking on them: the gate fails on it."""
    from support.repos import commit, edit

    (kb / "committed-run.rag-corpus-check.yml").replace(kb / ".rag-corpus-check.yml")
    edit(kb / ".rag-corpus-check.yml", "  nDCG@5: 0.75", "  nDCG@5: 0.85")
    edit(kb / ".rag-corpus-check.yml", "  R@5: 0.80", "  R@5: 0.10")
    base = commit(kb, "base")
    code, _, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1 and results["metrics"]["nDCG@5"] < 0.85  # as it is, the gate fails
    for qid in ("q07", "q10", "q12"):  # the three lowest nDCG@5
        edit(kb / "gold.yaml", f"  - query_id: {qid}\n", f"  - query_id: {qid}\n    answerable: false\n")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert results["counts"]["unanswerable"] == 3 and results["metrics"]["nDCG@5"] > 0.85  # the head's gold set
    assert code == 1, text
    assert any("the base's gold set" in reason for reason in results["gate_reasons"]), results["gate_reasons"]


def test_page_paths_and_anchors_as_ids_with_a_markdown_corpus(tmp_path, capsys, monkeypatch):
    """With the Markdown corpus, a golden set written as lists of `page#anchor`
    ids (JSONL, and CSV) scores per question what the native gold set scores."""
    import shutil

    from conftest import ROOT

    kb = tmp_path / "docs-kb"
    shutil.copytree(ROOT / "examples" / "docs-kb", kb)
    monkeypatch.chdir(kb)
    code, text, native, _ = check(tmp_path / "native", capsys, config="sections.rag-corpus-check.yml")
    assert code == 0, text
    gold = load_yaml((kb / "gold" / "sections.yaml").read_bytes(), "sections.yaml", Limits())["queries"]
    grades = {g for q in gold for g in q["relevant"].values()}
    assert grades == {2}  # one grade: the list's grade reproduces every label
    write(kb / "eval/golden.jsonl", "".join(json.dumps({"id": q["query_id"], "question": q["query"],
                                                        "relevant_sources": list(q["relevant"])}) + "\n"
                                            for q in gold))
    rows = ["id,question,relevant_sources"] + [f'{q["query_id"]},"{q["query"]}",{";".join(q["relevant"])}'
                                               for q in gold]
    write(kb / "eval/golden.csv", "\n".join(rows) + "\n")
    config = (kb / "sections.rag-corpus-check.yml").read_text()
    for name in ("golden.jsonl", "golden.csv"):
        team = config.replace("gold: gold/sections.yaml", f"gold: {{path: eval/{name}, fields: {{query_id: id, "
                              "query: question, relevant: relevant_sources}}\nrelevance: {list_grade: 2}")
        write(kb / "team.yml", team)
        code, text, results, _ = check(tmp_path / name, capsys, config="team.yml")
        assert code == 0, text
        assert [(q["query_id"], q["values"]) for q in results["queries"]] == [
            (q["query_id"], q["values"]) for q in native["queries"]]
