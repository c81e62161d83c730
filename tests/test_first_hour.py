"""The rough edges a new user hit in the first hour (issue 17), each as the
user sees it: the console, the annotations, the summary and the messages.

The CLI is called in-process (``main(argv)``); git is the real git.
"""

from __future__ import annotations

import json
import re

import cmarkgfm
import pytest

from conftest import EXAMPLE, check, write
from support.github import find_commands
from support.repos import commit, edit

CONFIG = ".rag-corpus-check.yml"


@pytest.fixture
def kb(kb):
    """The bundled example as a git repository (cwd), scoring its committed run."""
    (kb / "committed-run.rag-corpus-check.yml").replace(kb / CONFIG)
    return kb


def _problems(results, severity="error") -> list[dict]:
    return [p for p in results["problems"] if p["severity"] == severity]


# ---------------------------------------------------------------- why the gate failed


def test_a_lowered_threshold_says_which_rule_failed_the_gate(kb, tmp_path, capsys, monkeypatch):
    base = commit(kb, "base")
    edit(kb / CONFIG, "nDCG@5: 0.75", "nDCG@5: 0.1")
    commit(kb, "lower a threshold")
    output = tmp_path / "gh-output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    code, text, _, summary = check(tmp_path, capsys, "--base", base, "--github", "--no-step-summary")

    assert code == 1
    lines = [line for line in text.splitlines() if not line.startswith("::")]  # the console, not the annotations
    assert lines[0] == "rag-corpus-check: FAILED (quality gate)"
    why = lines.index("  the gate failed because:")
    assert why <= 5, lines[:8]  # among the first lines, before any table
    assert "this PR loosens a rule without a new `rule_change_reason`: threshold `nDCG@5` lowered: 0.75 → 0.1" \
        in lines[why + 1]
    errors = [c for c in find_commands(text) if c.name == "error"]
    assert any("threshold `nDCG@5` lowered" in c.data and c.props.get("file") == CONFIG for c in errors), \
        errors
    assert "**The gate failed because:**" in summary


def test_a_missed_threshold_is_the_reason_given(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLE.parent.parent)
    code, text, _, summary = check(tmp_path, capsys, config="examples/kb-regressed/.rag-corpus-check.yml")
    assert code == 1
    head = text.splitlines()[:8]
    assert "    - `nDCG@5` is 0.3792, the threshold is 0.75" in head, head
    # The code span renders as code (it was escaped: backticks and `&#64;&#8203;` showed).
    html = cmarkgfm.github_flavored_markdown_to_html(summary)
    assert "<li><code>nDCG@5</code> is 0.3792, the threshold is 0.75" in html


def test_a_passing_gate_gives_no_reason(kb, tmp_path, capsys):
    code, text, _, summary = check(tmp_path, capsys)
    assert code == 0
    assert "the gate failed because" not in text and "The gate failed because" not in summary


# ---------------------------------------------------------------- --base in the console


def _regress(kb):
    """A head whose run loses one question's best document (nDCG@5 drops)."""
    run = kb / "run.jsonl"
    lines = run.read_text().splitlines()
    first = json.loads(lines[0])
    first["ranking"] = first["ranking"][1:] + first["ranking"][:1]
    lines[0] = json.dumps(first)
    run.write_text("\n".join(lines) + "\n")
    return first["query_id"]


def test_the_console_shows_the_base_comparison(kb, tmp_path, capsys):
    base = commit(kb, "base")
    qid = _regress(kb)
    commit(kb, "head")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)

    assert f"  compared with the base {base[:12]}:" in text
    delta = results["comparison"]["deltas"]
    ndcg = next(d for d in delta if d["measure"] == "nDCG@5")
    assert re.search(rf"    nDCG@5\s+{ndcg['base']:.4f} -> {ndcg['head']:.4f}", text), text
    assert "  questions that dropped most (" in text
    assert re.search(rf"    - {qid}\s+nDCG@5 ", text), text


def test_without_base_the_console_has_no_comparison(kb, tmp_path, capsys):
    _, text, _, _ = check(tmp_path, capsys)
    assert "compared with the base" not in text


def test_what_changed_comes_right_after_the_thresholds(kb, tmp_path, capsys):
    base = commit(kb, "base")
    _regress(kb)
    commit(kb, "head")
    _, _, _, summary = check(tmp_path, capsys, "--base", base)
    headings = re.findall(r"(?m)^### (.+)$", summary)
    at = headings.index("Metrics vs thresholds")
    assert headings[at + 1] == "What changed in this PR", headings


# ---------------------------------------------------------------- natural order


def test_numeric_question_ids_are_listed_in_natural_order(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ids = ["q1", "q2", "q10", "q11", "q100"]
    write(tmp_path / "corpus.jsonl", "".join(json.dumps({"id": f"d{i}", "text": "x"}) + "\n" for i in range(3)))
    write(tmp_path / "gold.jsonl", "".join(json.dumps({"query_id": q, "query": f"question {q}?", "relevant": {"d0": 1}}) + "\n"
                                         for q in reversed(ids)))
    write(tmp_path / "run.jsonl", "".join(json.dumps({"query_id": q, "ranking": ["d1", "d2", "d0"]}) + "\n"
                                        for q in ids))
    write(tmp_path / CONFIG, "version: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\nrun: run.jsonl\nk: 3\n"
                             "report: {worst: 5}\n")
    code, text, results, summary = check(tmp_path, capsys)
    assert code == 0, text
    assert [q["query_id"] for q in results["queries"]] == ids
    listed = re.findall(r"(?m)^    - (q\d+) ", text)
    assert listed == ids, text
    # The means are summed in the ids' text order (trec_eval's), whatever the listing order.
    assert results["metrics"]["nDCG@3"] == pytest.approx(0.5)


# ---------------------------------------------------------------- messages


def test_a_document_with_no_text_and_no_title_is_a_warning(kb, tmp_path, capsys):
    with (kb / "corpus.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"id": "empty-1", "text": "  "}\n{"id": "titled", "title": "A title", "text": ""}\n'
                '{"id": "empty-2", "title": " ", "text": ""}\n')
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0, text
    blank = [p for p in _problems(results, "warning") if "no text and no title" in p["message"]]
    assert [(p["id"], p["line"], p["file"]) for p in blank] == [("empty-1", 31, "corpus.jsonl"),
                                                                 ("empty-2", 33, "corpus.jsonl")]
    assert "corpus.jsonl:31 [empty-1]: document with no text and no title" in text


@pytest.mark.parametrize(("typo", "fix"), [("K: 5", "`K` (did you mean `k`?)"),
                                           ("treshold:", "`treshold` (did you mean `thresholds`?)")])
def test_a_config_key_typo_gets_a_did_you_mean(kb, tmp_path, capsys, typo, fix):
    text = (kb / CONFIG).read_text()
    text = text.replace("k: 5", typo) if typo.startswith("K") else text.replace("thresholds:", typo)
    (kb / CONFIG).write_text(text)
    code, out, results, _ = check(tmp_path, capsys)
    assert code == 2
    assert any(fix in p["message"] and "allowed:" in p["message"] for p in _problems(results)), out


def test_an_unknown_key_far_from_any_gets_no_guess(kb, tmp_path, capsys):
    (kb / CONFIG).write_text((kb / CONFIG).read_text() + "zzz_unrelated: 1\n")
    code, out, results, _ = check(tmp_path, capsys)
    assert code == 2
    message = next(p["message"] for p in _problems(results) if "zzz_unrelated" in p["message"])
    assert "did you mean" not in message


def test_an_enum_error_lists_null_as_yaml_writes_it(kb, tmp_path, capsys):
    (kb / CONFIG).write_text((kb / CONFIG).read_text() + "retriever:\n  stopwords: french\n")
    code, out, results, _ = check(tmp_path, capsys)
    assert code == 2
    assert "retriever.stopwords: must be one of english, russian, null" in out
    assert "None" not in out


@pytest.mark.parametrize("name", ["corpus.jsonl", "run.jsonl"])
def test_every_bad_line_of_a_jsonl_file_is_reported(kb, tmp_path, capsys, name):
    path = kb / name
    lines = path.read_text().splitlines()
    lines[2], lines[6] = '{"id": broken', "not json at all"
    lines[8] = lines[8].replace('"', "'", 2)
    path.write_text("\n".join(lines) + "\n")
    code, out, results, _ = check(tmp_path, capsys)
    assert code == 2
    parse = [(p["file"], p["line"]) for p in _problems(results) if p["kind"] == "parse"]
    assert parse == [(name, 3), (name, 7), (name, 9)], out


def test_a_limit_still_ends_the_file(kb, tmp_path, capsys):
    """Past a bad line the reader goes on, but a limit ends the file at once."""
    (kb / CONFIG).write_text((kb / CONFIG).read_text() + "limits:\n  max_records: 5\n")
    lines = (kb / "corpus.jsonl").read_text().splitlines()
    lines[1] = "not json"
    (kb / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    code, out, results, _ = check(tmp_path, capsys)
    assert code == 2
    kinds = [(p["kind"], p["line"]) for p in _problems(results) if p["file"] == "corpus.jsonl"]
    assert kinds == [("parse", 2), ("limit", 6)], out


# ---------------------------------------------------------------- the by-type table


def test_an_untyped_corpus_has_no_by_type_table(kb, tmp_path, capsys):
    docs = [json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines()]
    (kb / "corpus.jsonl").write_text("".join(json.dumps({k: v for k, v in d.items() if k != "type"}) + "\n"
                                             for d in docs))
    code, _, results, summary = check(tmp_path, capsys)
    assert code == 0
    assert [r["type"] for r in results["irrelevant_by_type"]] == ["(no type)"]  # still in the results
    assert "by document type" not in summary


def test_a_typed_corpus_keeps_its_by_type_table(kb, tmp_path, capsys):
    _, _, _, summary = check(tmp_path, capsys)
    assert "### Irrelevant hits in the top 5 by document type" in summary


def test_the_results_path_reads_as_it_is_in_the_rendered_summary(kb, tmp_path, capsys):
    """It is escaped like any text; in a code span the escapes would show."""
    code, _, _, summary = check(tmp_path, capsys)
    assert code == 0
    html = cmarkgfm.github_flavored_markdown_to_html(summary)
    assert f"results file: {tmp_path}/out/r.json" in html.replace("&#8203;", "")


def test_quiet_prints_the_verdict_line_alone(kb, tmp_path, capsys):
    _, full, _, _ = check(tmp_path, capsys)
    code, quiet, _, _ = check(tmp_path, capsys, "--quiet")
    assert code == 0 and quiet == full.splitlines()[0] + "\n" == "rag-corpus-check: PASSED\n"


def test_two_ids_alike_in_their_first_80_characters_are_two_problems(kb, tmp_path, capsys):
    """Exact repeats of a problem are said once; ids are shown cut at 80
    characters, but two different ids stay two problems."""
    long_a, long_b = "x" * 90 + "A", "x" * 90 + "B"
    with (kb / "gold.yaml").open("a") as f:  # both labels on one line: the same file:line
        f.write(f'  - query_id: q99\n    query: "long ids"\n    relevant: {{{long_a}: 1, {long_b}: 1}}\n')
    code, out, results, _ = check(tmp_path, capsys)
    assert code == 2
    unknown = [p for p in _problems(results) if "unknown document id" in p["message"]]
    assert len(unknown) == 2 and results["counts"]["errors"] == 2, out
