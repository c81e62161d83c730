"""Every invalid input exits 2 with file, line and a safe id, computes no
metrics, and prints no traceback. One bad input per case, on a copy of the
bundled example."""

import json
import os
from pathlib import Path

import pytest

from conftest import write


def lines(p: Path) -> list[str]:
    return p.read_text(encoding="utf-8").split("\n")


def set_line(p: Path, n: int, text: str) -> None:
    ls = lines(p)
    ls[n - 1] = text
    p.write_text("\n".join(ls), encoding="utf-8")


def replace(p: Path, old: str, new: str, count: int = 1) -> None:
    s = p.read_text(encoding="utf-8")
    assert old in s, old
    p.write_text(s.replace(old, new, count), encoding="utf-8")


def gold_line(repo: Path, needle: str) -> int:
    return next(i for i, line in enumerate(lines(repo / "gold.yaml"), 1) if needle in line)


def config_line(repo: Path, needle: str) -> int:
    return next(i for i, line in enumerate(lines(repo / ".rag-corpus-check.yml"), 1) if needle in line)


def corpus_record(repo, n):
    return json.loads(lines(repo / "corpus.jsonl")[n - 1])


def _dup_corpus(repo):
    rec = corpus_record(repo, 1)
    set_line(repo / "corpus.jsonl", 5, json.dumps(rec))
    return "corpus.jsonl:5", "duplicate document id", "faq-001"


def _corpus_missing_text(repo):
    rec = corpus_record(repo, 3)
    del rec["text"]
    set_line(repo / "corpus.jsonl", 3, json.dumps(rec))
    return "corpus.jsonl:3", "missing required `text`", rec["id"]


def _corpus_bad_status(repo):
    rec = corpus_record(repo, 4)
    rec["status"] = "archived"
    set_line(repo / "corpus.jsonl", 4, json.dumps(rec))
    return "corpus.jsonl:4", "must be one of active, stale, restricted", rec["id"]


def _corpus_id_trailing_newline(repo):
    rec = corpus_record(repo, 2)
    rec["id"] = rec["id"] + "\n"
    set_line(repo / "corpus.jsonl", 2, json.dumps(rec))
    return "corpus.jsonl:2", "control character", None


def _gold_unknown_doc(repo):
    replace(repo / "gold.yaml", "      faq-004: 1\n", "      doc-9: 1\n")
    return f"gold.yaml:{gold_line(repo, 'doc-9: 1')}", "unknown document id", "doc-9"


def _run_unknown_doc(repo):
    replace(repo / "run.jsonl", '"relnote-002", "policy-001"', '"relnote-002", "ghost-1"')
    return "run.jsonl:1", "unknown document id at position 5", "ghost-1"


def _run_duplicate_in_ranking(repo):
    # SPEC: [A, B, A] is an input error "duplicate id A".
    set_line(repo / "run.jsonl", 2, json.dumps({"query_id": "q02", "ranking": ["faq-002", "faq-009", "faq-002"]}))
    return "run.jsonl:2", "appears twice", "faq-002"


def _gold_duplicate_qid(repo):
    replace(repo / "gold.yaml", "- query_id: q02", "- query_id: q01")
    return f"gold.yaml:{gold_line(repo, 'What is the largest file')-1}", "duplicate question id", "q01"


def _run_duplicate_qid(repo):
    replace(repo / "run.jsonl", '{"query_id": "q02"', '{"query_id": "q01"')
    return "run.jsonl:2", "duplicate question id", "q01"


def _grade_above_scale(repo):
    replace(repo / "gold.yaml", "      policy-002: 2\n", "      policy-002: 3\n")
    return f"gold.yaml:{gold_line(repo, 'policy-002: 3')}", "outside the declared scale 0–2", "policy-002"


def _grade_negative(repo):
    replace(repo / "gold.yaml", "      policy-002: 2\n", "      policy-002: -1\n")
    return f"gold.yaml:{gold_line(repo, 'policy-002: -1')}", "must be at least 0", "q01"


def _grade_float(repo):
    replace(repo / "gold.yaml", "      policy-002: 2\n", "      policy-002: 1.0\n")
    return f"gold.yaml:{gold_line(repo, 'policy-002: 1.0')}", "expected integer, got number", "q01"


def _grade_bool(repo):
    replace(repo / "gold.yaml", "      policy-002: 2\n", "      policy-002: yes\n")
    return f"gold.yaml:{gold_line(repo, 'policy-002: yes')}", "expected integer, got boolean", "q01"


def _k_zero(repo):
    replace(repo / ".rag-corpus-check.yml", "k: 5", "k: 0")
    return f".rag-corpus-check.yml:{config_line(repo, 'k: 0')}", "must be at least 1", None


def _unknown_measure(repo):
    replace(repo / ".rag-corpus-check.yml", "  P@5: 0.30", "  MAP@5: 0.30")
    return ".rag-corpus-check.yml:", "valid names are P@k, R@k, nDCG@k and Judged@k", None


def _run_snapshot(repo):
    replace(repo / "run.jsonl", '"snapshot": "2026-11-30"', '"snapshot": "2026-09-20"')
    return "run.jsonl:1", "declares snapshot `2026-09-20` but the corpus is snapshot `2026-11-30`", "q01"


def _gold_snapshot(repo):
    replace(repo / "gold.yaml", 'snapshot: "2026-11-30"', 'snapshot: "2026-01-01"')
    return f"gold.yaml:{gold_line(repo, 'snapshot: ')}", "declares snapshot `2026-01-01` but the corpus is snapshot `2026-11-30`", None


def _yaml_duplicate_key(repo):
    replace(repo / "gold.yaml", "      faq-004: 1\n", "      faq-004: 1\n      faq-004: 2\n")
    return f"gold.yaml:{gold_line(repo, 'faq-004: 2')}", "duplicate key `faq-004`", None


def _yaml_python_tag(repo):
    replace(repo / "gold.yaml", 'query: "How long are deleted backups kept?"',
            "query: !!python/object/apply:os.system ['echo pwned']")
    return f"gold.yaml:{gold_line(repo, 'python/object')}", "YAML tag", None


def _yaml_syntax(repo):
    replace(repo / "gold.yaml", "      faq-004: 1\n", "      faq-004: [1\n")
    return "gold.yaml:", "invalid YAML", None


def _json_nan(repo):
    set_line(repo / "run.jsonl", 3, '{"query_id": "q03", "ranking": [], "score": NaN}')
    return "run.jsonl:3", "NaN is not valid JSON", None


def _json_dup_key(repo):
    set_line(repo / "corpus.jsonl", 6, '{"id": "a", "id": "b", "text": "x"}')
    return "corpus.jsonl:6", "duplicate key `id`", None


def _json_deep(repo):
    set_line(repo / "run.jsonl", 4, "[" * 100000 + "]" * 100000)
    return "run.jsonl:4", "nested too deeply", None


def _json_truncated(repo):
    p = repo / "run.jsonl"
    p.write_text(p.read_text().rstrip("\n")[:-5], encoding="utf-8")
    return "run.jsonl:15", "invalid JSON", None


def _invalid_utf8(repo):
    p = repo / "corpus.jsonl"
    ls = p.read_bytes().split(b"\n")
    ls[6] = ls[6].replace(b'"text": "', b'"text": "\xff', 1)
    assert b"\xff" in ls[6]
    p.write_bytes(b"\n".join(ls))
    return "corpus.jsonl:7", "invalid UTF-8", None


def _utf16(repo):
    p = repo / "run.jsonl"
    p.write_bytes(p.read_text().encode("utf-16"))
    return "run.jsonl:1", "UTF-16", None


def _not_an_object(repo):
    set_line(repo / "corpus.jsonl", 8, "[1, 2]")
    return "corpus.jsonl:8", "must be a JSON object", None


def _gold_top_array(repo):
    write(repo / "gold.yaml", "- q01\n- q02\n")
    return "gold.yaml:1", "mapping with a `queries:` list", None


def _path_outside(repo):
    replace(repo / ".rag-corpus-check.yml", "corpus: corpus.jsonl", "corpus: ../../etc/passwd")
    return ".rag-corpus-check.yml", "points outside the repository", None


def _path_absolute(repo):
    replace(repo / ".rag-corpus-check.yml", "corpus: corpus.jsonl", "corpus: /etc/passwd")
    return ".rag-corpus-check.yml", "absolute paths are not allowed", None


def _symlink_escape(repo):
    (repo / "gold.yaml").unlink()
    os.symlink("/etc/passwd", repo / "gold.yaml")
    return "gold.yaml", "symlink that leads outside the repository", None


def _directory(repo):
    (repo / "run.jsonl").unlink()
    (repo / "run.jsonl").mkdir()
    return "run.jsonl", "directory", None


def _missing_file(repo):
    (repo / "run.jsonl").unlink()
    return "run.jsonl", "file not found", None


def _inactive_label_error(repo):
    replace(repo / ".rag-corpus-check.yml", "thresholds:", "validation:\n  inactive_labels: error\nthresholds:")
    replace(repo / "gold.yaml", "      faq-004: 1\n", "      faq-009: 1\n")
    return f"gold.yaml:{gold_line(repo, 'faq-009: 1')}", "counts a stale document as relevant", "faq-009"


def _missing_query_error(repo):
    replace(repo / ".rag-corpus-check.yml", "thresholds:", "validation:\n  missing_queries: error\nthresholds:")
    ls = lines(repo / "run.jsonl")
    (repo / "run.jsonl").write_text("\n".join(ls[1:]), encoding="utf-8")
    return f"gold.yaml:{gold_line(repo, 'query_id: q01')}", "not in run.jsonl", "q01"


def _config_unknown_field(repo):
    replace(repo / ".rag-corpus-check.yml", "k: 5", "k: 5\ntop_k: 5")
    return f".rag-corpus-check.yml:{config_line(repo, 'top_k')}", "unknown field `top_k`", None


def _min_above_max(repo):
    replace(repo / ".rag-corpus-check.yml", "  min_grade: 1", "  min_grade: 3")
    return ".rag-corpus-check.yml:", "min_grade (3) is above relevance.max_grade (2)", None


CASES = {
    "corpus-duplicate-id": _dup_corpus,
    "corpus-missing-text": _corpus_missing_text,
    "corpus-bad-status": _corpus_bad_status,
    "corpus-id-trailing-newline": _corpus_id_trailing_newline,
    "gold-unknown-document": _gold_unknown_doc,
    "run-unknown-document": _run_unknown_doc,
    "run-same-doc-twice": _run_duplicate_in_ranking,
    "gold-duplicate-question": _gold_duplicate_qid,
    "run-duplicate-question": _run_duplicate_qid,
    "grade-above-scale": _grade_above_scale,
    "grade-negative": _grade_negative,
    "grade-float": _grade_float,
    "grade-yaml-bool": _grade_bool,
    "k-zero": _k_zero,
    "threshold-unknown-measure": _unknown_measure,
    "run-other-snapshot": _run_snapshot,
    "gold-other-snapshot": _gold_snapshot,
    "yaml-duplicate-key": _yaml_duplicate_key,
    "yaml-python-tag": _yaml_python_tag,
    "yaml-syntax": _yaml_syntax,
    "json-nan": _json_nan,
    "json-duplicate-key": _json_dup_key,
    "json-deep-nesting": _json_deep,
    "json-truncated-last-line": _json_truncated,
    "invalid-utf8": _invalid_utf8,
    "utf16": _utf16,
    "jsonl-not-an-object": _not_an_object,
    "gold-top-level-array": _gold_top_array,
    "path-outside-repo": _path_outside,
    "path-absolute": _path_absolute,
    "symlink-escape": _symlink_escape,
    "directory-not-file": _directory,
    "missing-file": _missing_file,
    "inactive-label-as-error": _inactive_label_error,
    "missing-question-as-error": _missing_query_error,
    "config-unknown-field": _config_unknown_field,
    "config-min-above-max": _min_above_max,
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_invalid_input_exits_2(case, repo, run_cli):
    where, message, safe_id = CASES[case](repo)
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
