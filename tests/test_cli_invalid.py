"""Every invalid input exits 2 with file, line and a safe id, computes no
metrics, and prints no traceback. One bad input per case, on a copy of the
bundled example."""

import json

import pytest

from hostile_cases import CASES, corpus_record, lines, set_line

EXAMPLE_CASES = [c for c in CASES if c.base == "example"]


@pytest.mark.parametrize("case", EXAMPLE_CASES, ids=[c.id for c in EXAMPLE_CASES])
def test_invalid_input_exits_2(case, repo, run_cli):
    where, message, safe_id = case.setup(repo, None)
    code, out, err, results, summary = run_cli()
    assert code == 2, out + err
    assert "Traceback" not in out + err
    assert results["verdict"] == "invalid" and results["exit_code"] == 2
    assert results["metrics"] == {} and results["queries"] == []  # never a partial verdict
    errors = [p for p in results["problems"] if p["severity"] == "error"]
    assert errors, results["problems"]
    hits = [p for p in errors if message in p["message"]]
    assert hits, [p["message"] for p in errors]
    p = hits[0]
    loc = f"{p['file']}:{p['line']}" if p["line"] else p["file"]
    assert loc.startswith(where), (loc, where)
    if safe_id is not None:
        assert p["id"] == safe_id
    assert where in out  # the terminal names the place too
    assert "INVALID INPUT" in out
    assert "Invalid input" in summary or "invalid input" in summary


def test_no_document_text_in_any_output(repo, run_cli):
    """An input error must not echo document text (corpora are private)."""
    rec = corpus_record(repo, 3)
    secret = "SECRET-TEXT-7f3a"
    rec["text"] = secret
    rec["status"] = secret  # invalid enum value: the schema message must not quote it
    set_line(repo / "corpus.jsonl", 3, json.dumps(rec))
    code, out, err, results, summary = run_cli()
    assert code == 2
    assert secret not in out + err + summary + json.dumps(results)


def test_problems_are_collected_not_only_the_first(repo, run_cli):
    p = repo / "corpus.jsonl"
    ls = lines(p)
    for n in (2, 4, 6):
        rec = json.loads(ls[n - 1])
        rec["status"] = "gone"
        ls[n - 1] = json.dumps(rec)
    p.write_text("\n".join(ls), encoding="utf-8")
    code, out, err, results, summary = run_cli()
    assert code == 2
    assert sorted(pr["line"] for pr in results["problems"] if pr["file"] == "corpus.jsonl") == [2, 4, 6]


def test_problem_count_is_capped_with_a_count(repo, run_cli):
    p = repo / "corpus.jsonl"
    p.write_text("\n".join(f'{{"id": "x{i}"}}' for i in range(300)) + "\n", encoding="utf-8")
    code, out, err, results, summary = run_cli()
    assert code == 2
    assert len([x for x in results["problems"] if x["file"] == "corpus.jsonl"]) == 50
    assert results["counts"]["errors"] >= 300
    assert sum(results["problems_dropped"].values()) >= 250
    assert "more" in out


def test_grades_outside_the_scale_are_one_problem_that_says_what_to_set(repo, run_cli):
    """Cranfield grades 1-4 against the default scale 0-2 gave one error per
    label (515 lines); now one problem names the grades seen and the setting."""
    gold = (repo / "gold.yaml").read_text(encoding="utf-8")
    gold = gold.replace("      faq-004: 1\n", "      faq-004: 3\n").replace("      howto-003: 0\n", "      howto-003: 4\n")
    gold = gold.replace("      policy-007: 0", "      policy-007: 4", 1)
    (repo / "gold.yaml").write_text(gold, encoding="utf-8")
    code, out, err, results, _ = run_cli()
    assert code == 2
    scale = [p for p in results["problems"] if "outside the declared scale" in p["message"]]
    assert len(scale) == 1, results["problems"]
    assert "12 labels have grades outside the declared scale 0–2 (grades seen: 3, 4" in scale[0]["message"]
    assert "`relevance: {max_grade: 4}`" in scale[0]["message"] and scale[0]["line"]
