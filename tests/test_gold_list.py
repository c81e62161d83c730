"""`gold:` as a list of files, merged into one gold set: the union of the
labels; a document graded differently in two files, or a question whose text
differs, is an input error naming both places; the same grade twice is a
warning; every file is in the provenance; a worksheet left unfilled is
refused with a message that says so; the base comparison reads the list."""

import json

import pytest

from conftest import write
from rag_corpus_check.commands.check import run_check
from rag_corpus_check.config.load import load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.inputs import GoldQuery, where
from rag_corpus_check.inputs.gold_merge import MergedGold, merge_gold
from rag_corpus_check.inputs.records import Gold
from rag_corpus_check.pipeline.context import Context
from support.repos import commit, edit, init

CONFIG = ".rag-corpus-check.yml"


def _listed(kb, *files, config=CONFIG):
    edit(kb / config, "gold: gold.yaml", f"gold: [{', '.join(files)}]")


def _check(kb, config=CONFIG):
    return run_check(str(kb), str(kb / config), Context())


def _problems(out, severity=P.ERROR):
    return [f"{p.location()} [{p.id}]: {p.message}" for p in out.problems.items if p.severity == severity]


def _line(path, text):
    """The line of ``path`` that holds ``text`` (from 1)."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_the_labels_of_every_file_count(kb):
    write(kb / "more.yaml", "queries:\n  - query_id: q05\n    relevant: {faq-009: 0, howto-005: 1}\n")
    before = _check(kb)
    _listed(kb, "gold.yaml", "more.yaml")
    out = _check(kb)
    assert out.verdict in ("pass", "fail") and not _problems(out), _problems(out)
    assert out.gold.queries["q05"].relevant.items() >= {"faq-009": 0, "howto-005": 1}.items()
    assert len(out.gold.queries["q05"].relevant) == len(before.gold.queries["q05"].relevant) + 2
    assert list(out.inputs) == [CONFIG, "gold.yaml", "more.yaml", "corpus.jsonl"]  # a sha-256 for each
    assert all(len(digest) == 64 for digest in out.inputs.values())
    assert out.formats["more.yaml"] == "yaml"


def test_a_list_of_one_is_the_file(kb):
    before = _check(kb)
    _listed(kb, "gold.yaml")
    out = _check(kb)
    assert out.verdict == "pass" and not isinstance(out.gold, MergedGold)
    assert out.evaluation.means == before.evaluation.means


def test_different_grades_are_an_error_naming_both_places(kb):
    write(kb / "more.yaml", "queries:\n  - query_id: q01\n    relevant:\n      policy-002: 1\n")
    _listed(kb, "gold.yaml", "more.yaml")
    out = _check(kb)
    assert out.verdict == "invalid" and out.evaluation is None
    [problem] = out.problems.errors
    first = _line(kb / "gold.yaml", "policy-002: 2")
    assert (problem.file, problem.line, problem.id, problem.kind) == ("more.yaml", 4, "policy-002", P.CONSISTENCY)
    assert f"graded 1 in more.yaml:4 but 2 in gold.yaml:{first}" in problem.message


def test_the_same_grade_twice_is_a_warning(kb):
    write(kb / "more.yaml", "queries:\n  - query_id: q01\n    relevant:\n      policy-002: 2\n")
    _listed(kb, "gold.yaml", "more.yaml")
    out = _check(kb)
    assert out.verdict == "pass"
    first = _line(kb / "gold.yaml", "policy-002: 2")
    [warning] = [p for p in _problems(out, P.WARNING) if "policy-002" in p]
    assert warning.startswith("more.yaml:4 [policy-002]:")
    assert f"graded 2 in more.yaml:4 and again in gold.yaml:{first} (the same grade)" in warning


def test_a_question_text_that_differs_is_an_error(kb):
    write(kb / "more.yaml", 'queries:\n  - query_id: q02\n    query: "How big can a file be?"\n'
                            "    relevant: {faq-009: 0}\n")
    _listed(kb, "gold.yaml", "more.yaml")
    [problem] = _problems(_check(kb))
    first = _line(kb / "gold.yaml", "query_id: q02")
    assert problem.startswith("more.yaml:2 [q02]: the question text differs between more.yaml:2 and "
                              f"gold.yaml:{first}")


def test_a_question_only_in_the_second_file_takes_its_text(kb):
    write(kb / "more.yaml", 'queries:\n  - query_id: q99\n    query: "Where is the status page?"\n'
                            "    relevant: {faq-003: 2}\n")
    _listed(kb, "gold.yaml", "more.yaml")
    out = _check(kb)
    assert out.verdict == "pass" and out.gold.queries["q99"].text == "Where is the status page?"
    assert where(out.gold, out.gold.queries["q99"], "faq-003") == ("more.yaml", 4)
    assert where(out.gold, out.gold.queries["q01"]) == ("gold.yaml", _line(kb / "gold.yaml", "query_id: q01"))


def test_snapshots_of_two_files_must_agree(kb):
    write(kb / "more.yaml", 'snapshot: "2026-12-01"\nqueries:\n  - query_id: q01\n    relevant: {faq-009: 0}\n')
    _listed(kb, "gold.yaml", "more.yaml")
    [problem] = _problems(_check(kb))
    assert problem.startswith("more.yaml:1 [None]: the gold set declares snapshot `2026-12-01` here and "
                              f"`2026-11-30` in gold.yaml:{_line(kb / 'gold.yaml', 'snapshot:')}")


def test_files_of_other_formats_merge(kb):
    write(kb / "more.qrels", "q05 0 faq-009 0\nq05 0 howto-005 1\n")
    write(kb / "more.jsonl", json.dumps({"query_id": "q06", "relevant": {"faq-009": 0}}) + "\n")
    _listed(kb, "gold.yaml", "more.qrels", "more.jsonl")
    out = _check(kb)
    assert out.verdict == "pass", _problems(out)
    assert out.formats["more.qrels"] == "qrels" and out.formats["more.jsonl"] == "jsonl"
    assert where(out.gold, out.gold.queries["q05"], "howto-005") == ("more.qrels", 2)
    assert where(out.gold, out.gold.queries["q06"], "faq-009") == ("more.jsonl", 1)


@pytest.mark.parametrize("gold, message", [
    ("[]", "gold: must not be empty"),
    ("[gold.yaml, gold.yaml]", "gold: lists the same item twice; keep one"),
    ("[gold.yaml, 5]", "gold[1]: expected string, got integer"),
    ("5", "gold: expected string or array or object, got integer"),
    ('["gold.yaml", "a\\nb"]', "gold[1]: contains a control character or line break"),
])
def test_the_schema_of_the_list(kb, gold, message):
    edit(kb / CONFIG, "gold: gold.yaml", f"gold: {gold}")
    problems = P.Problems()
    cfg, _ = load_config(str(kb), str(kb / CONFIG), problems)
    assert cfg is None and [p.message for p in problems.items] == [message]


def test_one_file_twice_under_two_names(kb):
    _listed(kb, "gold.yaml", "./gold.yaml")
    [problem] = _problems(_check(kb))
    assert "`gold:` names the file `gold.yaml` twice" in problem


def test_a_missing_file_of_the_list(kb):
    _listed(kb, "gold.yaml", "labels.yaml")
    out = _check(kb)
    assert out.verdict == "invalid" and any("labels.yaml" in p for p in _problems(out))


def test_an_unfilled_worksheet_is_refused_with_a_clear_message(kb):
    write(kb / "labels.yaml", "# a worksheet\nqueries:\n  - query_id: \"q05\"\n    relevant:\n"
                              "      # #2 · policy · ...\n      \"policy-008\": null\n      \"howto-003\": 0\n")
    _listed(kb, "gold.yaml", "labels.yaml")
    out = _check(kb)
    assert out.verdict == "invalid" and out.exit_code == 2
    assert _problems(out) == [
        "labels.yaml:6 [policy-008]: the grade of this document for question `q05` is not filled in (`null`) — "
        "write its grade (0 = judged, not relevant; up to relevance.max_grade), or delete the line to leave it "
        "unjudged"]


def test_an_unfilled_grade_in_jsonl(kb):
    write(kb / "labels.jsonl", json.dumps({"query_id": "q05", "relevant": {"policy-008": None}}) + "\n")
    _listed(kb, "gold.yaml", "labels.jsonl")
    [problem] = _problems(_check(kb))
    assert problem.startswith("labels.jsonl:1 [policy-008]: the grade of this document for question `q05` is "
                              "not filled in")


def test_merge_keeps_a_single_gold_as_it_is():
    gold = Gold(file="g.yaml")
    assert merge_gold([gold], P.Problems()) is gold


def test_where_in_a_single_file():
    gold = Gold(file="g.yaml")
    q = gold.queries["q1"] = GoldQuery("q1", 3, {"d": 1, "e": 0}, {"d": 4})
    assert where(gold, q) == ("g.yaml", 3)
    assert where(gold, q, "d") == ("g.yaml", 4) and where(gold, q, "e") == ("g.yaml", 3)


def test_an_unknown_document_in_the_second_file_is_reported_there(kb):
    write(kb / "more.yaml", "queries:\n  - query_id: q01\n    relevant:\n      doc-nope: 0\n")
    _listed(kb, "gold.yaml", "more.yaml")
    [problem] = _problems(_check(kb))
    assert problem.startswith("more.yaml:4 [doc-nope]: unknown document id")


def test_the_base_reads_every_file_of_its_list(kb, tmp_path, capsys):
    from rag_corpus_check.commands.cli import main

    write(kb / "more.yaml", "queries:\n  - query_id: q05\n    relevant: {faq-009: 0}\n")
    _listed(kb, "gold.yaml", "more.yaml")
    init(kb)
    base = commit(kb, "base with a gold list")
    edit(kb / "more.yaml", "faq-009: 0", "faq-009: 1")
    commit(kb, "regrade in the second file")
    out = tmp_path / "out"
    code = main(["--config", CONFIG, "--base", base, "--output", str(out / "r.json"),
                 "--summary-file", str(out / "s.md")])
    capsys.readouterr()
    res = json.loads((out / "r.json").read_text())
    assert code in (0, 1) and res["comparison"]["rules"]["source"] == "base"
    [change] = [e for e in res["comparison"]["labels"] if e["query_id"] == "q05"]
    assert change["regraded"] == {"faq-009": [0, 1]}


def test_a_question_without_text_in_the_second_file_is_reported_there(kb):
    """The built-in retriever needs every question's text; the problem names
    the file of a merged list that holds the question."""
    write(kb / "more.yaml", "queries:\n  - query_id: q99\n    relevant:\n      faq-001: 1\n")
    _listed(kb, "gold.yaml", "more.yaml")
    [problem] = _problems(_check(kb))
    assert problem.startswith("more.yaml:2 [q99]: question has no `query` text"), problem
