"""What a reviewer reads on a pull request (issue 35): the words, code spans,
numbers and tables of the console, the summary rendered by a GFM renderer
(cmarkgfm, GitHub's own cmark-gfm), the annotations and the results file.

The CLI is called in-process (``main(argv)``); git is the real git on
throw-away repositories."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_corpus_check.core.text import natural_key
from rag_corpus_check.report import render
from rag_corpus_check.report.markdown import Summary, prose
from rag_corpus_check.report.render import worst_questions


def gfm(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


# ---------------------------------------------------------------- code spans render as code


def test_a_reason_s_code_spans_render_as_code_and_nothing_else_does():
    s = Summary()
    render._reasons(s, ["`nDCG@5` is 0.61, the threshold is 0.7", "id `<img src=x>|[a](http://e.com)` @someone <b>"],
                    None)
    html = gfm(s.render())
    assert "<li><code>nDCG@5</code> is 0.61, the threshold is 0.7</li>" in html
    assert "<code>&lt;img src=x&gt;|[a](http://e.com)</code>" in html  # literal, not an image or a link
    assert "<img" not in html and "<a " not in html and "<b>" not in html and "\\`" not in html


def test_a_span_in_a_table_cell_keeps_its_pipe_and_the_table_its_columns():
    html = gfm("| a | b |\n|---|---|\n| " + prose("x `a|b` y", in_table=True) + " | z |\n")
    assert "<td>x <code>a|b</code> y</td>\n<td>z</td>" in html


def test_a_lone_backtick_is_text():
    assert gfm(prose("one ` alone")) == "<p>one ` alone</p>\n"


# ---------------------------------------------------------------- the default results path


def test_two_repositories_never_share_the_default_results_file(tmp_path, monkeypatch, capsys):
    """Was: both runs wrote /tmp/rag-corpus-check-<uid>/results.json, the
    second over the first."""
    from conftest import EXAMPLE
    from rag_corpus_check.commands.cli import main
    from support.repos import commit, init

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    for var in [v for v in os.environ if v.startswith(("GITHUB_", "RUNNER_"))]:
        monkeypatch.delenv(var, raising=False)
    written = {}
    for name, config in (("one", "committed-run.rag-corpus-check.yml"), ("two", "dense.rag-corpus-check.yml")):
        repo = init(tmp_path / name / "kb", EXAMPLE)  # two repositories, both folders named kb
        commit(repo, "kb")
        monkeypatch.chdir(repo)
        assert main(["--config", config]) == 0
        out = capsys.readouterr().out
        path = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("  results: "))
        written[name] = (path, json.loads(Path(path).read_text(encoding="utf-8")))
    (one, r1), (two, r2) = written["one"], written["two"]
    assert one != two and os.path.dirname(one) != os.path.dirname(two)
    assert r1 != r2
    assert json.loads(Path(one).read_text(encoding="utf-8")) == r1  # the first run's file is still its own


# ---------------------------------------------------------------- the commit checked


def _scored_committed_run(kb):
    (kb / "committed-run.rag-corpus-check.yml").replace(kb / ".rag-corpus-check.yml")
    return kb


def test_a_dry_run_on_uncommitted_changes_names_the_working_tree_not_head(kb, tmp_path, capsys):
    """Was: `commit: <HEAD>` and PASSED for a corpus line appended and not
    committed, in the console, the results and the summary alike."""
    from conftest import check
    from support.repos import commit

    head = commit(_scored_committed_run(kb), "kb")
    with (kb / "corpus.jsonl").open("a") as f:
        f.write('{"id": "new-1", "text": "appended, not committed"}\n')
    (kb / "notes.txt").write_text("not an input\n")
    code, text, results, summary = check(tmp_path, capsys)

    assert code == 0
    assert text.splitlines()[1] == f"  checked: working tree, uncommitted changes to corpus.jsonl on top of commit {head}"
    assert f"commit: {head}" not in text
    assert results["provenance"]["commit"] == head and results["provenance"]["uncommitted"] == ["corpus.jsonl"]
    html = gfm(summary)
    assert f"working tree, uncommitted changes to corpus.jsonl on top of commit <code>{head}</code>" in html
    assert "This result is for the working tree, not for a commit" in html


def test_an_untracked_input_in_a_checked_subdirectory_is_named_by_its_path_there(tmp_path, capsys, monkeypatch):
    from conftest import EXAMPLE, check
    from support.repos import commit, init

    repo = init(tmp_path / "repo")
    import shutil

    shutil.copytree(EXAMPLE, repo / "kb")
    (repo / "kb" / "committed-run.rag-corpus-check.yml").replace(repo / "kb" / ".rag-corpus-check.yml")
    (repo / "kb" / "run.jsonl").rename(repo / "run.jsonl.keep")
    head = commit(repo, "kb without its run")
    (repo / "run.jsonl.keep").rename(repo / "kb" / "run.jsonl")  # the run: untracked
    monkeypatch.chdir(repo / "kb")
    for var in [v for v in os.environ if v.startswith(("GITHUB_", "RUNNER_"))]:
        monkeypatch.delenv(var, raising=False)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0 and results["provenance"]["uncommitted"] == ["run.jsonl"], text
    assert f"uncommitted changes to run.jsonl on top of commit {head}" in text


def test_a_clean_tree_names_its_commit(kb, tmp_path, capsys):
    from conftest import check
    from support.repos import commit

    head = commit(_scored_committed_run(kb), "kb")
    (kb / "notes.txt").write_text("not an input\n")  # an untracked file the check does not read
    code, text, results, summary = check(tmp_path, capsys)
    assert code == 0 and text.splitlines()[1] == f"  commit: {head}"
    assert results["provenance"]["uncommitted"] == []
    assert "working tree" not in summary


# ---------------------------------------------------------------- small truths in the docs


def test_retrieval_md_names_the_stop_words_module_and_lists_its_english_words():
    from conftest import ROOT
    from rag_corpus_check.retrieval.analyzer import STOPWORDS

    text = " ".join((ROOT / "docs" / "retrieval.md").read_text(encoding="utf-8").split())
    assert "`retrieval/analyzer.py`, `STOPWORDS`" in text
    assert (ROOT / "check" / "rag_corpus_check" / "retrieval" / "analyzer.py").is_file()
    listed = text.split("`english` is 49 words (", 1)[1].split(")", 1)[0].split()
    assert sorted(listed) == sorted(STOPWORDS["english"]) and len(STOPWORDS["russian"]) == 151


def test_configuration_md_names_a_slice_by_its_tag():
    """Was `slices.<measure>.thresholds`: the key of a slice is a tag."""
    from conftest import ROOT

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert "| `slices.<tag>.thresholds` |" in text and "| `slices.<tag>.min_questions` |" in text
    assert "slices.<measure>" not in text and "| `thresholds.<measure>.min` |" in text


# ---------------------------------------------------------------- digits enough to see the comparison


def test_a_mean_just_below_its_threshold_shows_the_digits_that_put_it_below(kb, tmp_path, capsys):
    """Was "`R@5` is 0.6905, the threshold is 0.6905" for a mean of 0.690476."""
    from conftest import check
    from support.repos import commit, edit

    edit(kb / ".rag-corpus-check.yml", "R@5: 0.65", "R@5: 0.6905")
    commit(kb, "kb")
    code, text, results, summary = check(tmp_path, capsys)
    r5 = next(t for t in results["thresholds"] if t["measure"] == "R@5")
    assert code == 1 and 0.69047 < r5["value"] < 0.69048 and r5["passed"] is False
    assert "    - `R@5` is 0.69048, the threshold is 0.6905" in text.splitlines()
    assert "    FAIL R@5          0.69048  >= 0.6905" in text.splitlines()
    html = gfm(summary)
    assert "<li><code>R@5</code> is 0.69048, the threshold is 0.6905</li>" in html
    assert "<td><code>R@5</code></td>\n<td>0.69048</td>\n<td>≥ 0.6905</td>" in html
    assert "0.6905, the threshold" not in text + html


def test_one_rule_for_a_value_beside_its_limit():
    from rag_corpus_check.core.text import figure

    assert figure(0.139999, 0.14) == "0.139999" and figure(0.1400001, 0.14) == "0.1400001"
    assert figure(0.14, 0.14) == "0.1400" and figure(0.7 - 1e-13, 0.7) == "0.7000"  # at it, within the tolerance
    assert figure(0.3792, 0.75) == "0.3792" and figure(0.3792) == "0.3792"


# ---------------------------------------------------------------- said once; the failed rule marked


def _regress_run(kb, n: int = 3) -> None:
    """The committed run loses the best document of its first ``n`` questions."""
    run = kb / "run.jsonl"
    lines = run.read_text().splitlines()
    for i in range(n):
        q = json.loads(lines[i])
        q["ranking"] = q["ranking"][1:] + q["ranking"][:1]
        lines[i] = json.dumps(q)
    run.write_text("\n".join(lines) + "\n")


def test_an_unchanged_gold_set_gets_one_delta_table_and_each_question_once(kb, tmp_path, capsys):
    """Was: two identical delta tables (each revision's gold set, the base's),
    every per-question row twice, the failing value said twice."""
    from conftest import check
    from support.repos import commit

    base = commit(_scored_committed_run(kb), "base")
    _regress_run(kb)
    commit(kb, "a run that lost three best documents")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 1 and results["comparison"]["gold_changed"] is False
    assert len(results["comparison"]["views"]) == 2  # the results keep both

    html = gfm(summary)
    assert html.count("<th>p (paired randomization)</th>") == 1
    assert "Judged by the gold set, unchanged in this PR (the base's and the head's are one): 14 questions" in html
    assert "<th>value (base's gold set)</th>" not in html and "below 0.75" not in html
    rows = [r for r in html.split("<tr>") if "<td>q02</td>" in r and "-0.7104" in r]
    assert len(rows) == 2, rows  # once in the per-question rule's table, once in "Questions that dropped"
    assert "<td>both</td>" in rows[0]
    assert text.count("judged by the gold set, unchanged in this PR") == 1
    assert text.count("    nDCG@5       0.8234 -> 0.6946") == 1 and "(base's gold set:" not in text


def test_a_pr_that_only_loosened_a_threshold_marks_that_rule(kb, tmp_path, capsys):
    """Was: an all-✅ table under a ❌ title."""
    from conftest import check
    from support.repos import commit, edit

    base = commit(_scored_committed_run(kb), "base")
    edit(kb / ".rag-corpus-check.yml", "nDCG@5: 0.75", "nDCG@5: 0.1")
    commit(kb, "lower a threshold")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 1 and all(t["passed"] for t in results["thresholds"])
    assert ("    ok   nDCG@5       0.8234  >= 0.75  -- FAIL: threshold `nDCG@5` lowered: 0.75 → 0.1 in this PR "
            "without a new `rule_change_reason`") in text.splitlines()
    html = gfm(summary)
    table = html.split("<h3>Metrics vs thresholds</h3>")[1].split("</table>")[0]
    first = table.split("<tbody>")[1].split("</tr>")[0]
    assert "<td><code>nDCG@5</code></td>" in first
    assert ("❌ threshold <code>nDCG@5</code> lowered: 0.75 → 0.1 in this PR without a new "
            "<code>rule_change_reason</code>") in first
    assert table.count("❌") == 1


# ---------------------------------------------------------------- a question copied into a judged record


Q01 = "How long are deleted backups kept?"


def _copy_of_q01(kb, doc_id: str = "faq-099", text: str = f"FAQ. {Q01} Thirty days in the Trash.") -> None:
    """A record holding q01's words in order, labelled (grade 1) on q01."""
    with (kb / "corpus.jsonl").open("a") as f:
        f.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    from support.repos import edit

    edit(kb / "gold.yaml", "      howto-003: 0\n", f"      howto-003: 0\n      {doc_id}: 1\n")


def _copies(results) -> list[dict]:
    return [p for p in results["problems"] if "the record contains the" in p["message"]]  # any wording


def test_the_copy_warning_says_the_rank_the_record_has_in_the_committed_run(kb, tmp_path, capsys):
    """Was: "it ranks first for that question under any lexical retriever …
    remove or reword the copy", whatever its rank."""
    from conftest import check

    _scored_committed_run(kb)
    _copy_of_q01(kb)
    run = kb / "run.jsonl"
    lines = run.read_text().splitlines()
    q01 = json.loads(lines[0])
    q01["ranking"].insert(2, "faq-099")
    lines[0] = json.dumps(q01)
    run.write_text("\n".join(lines) + "\n")
    code, text, results, summary = check(tmp_path, capsys)
    [p] = _copies(results)
    assert p["id"] == "faq-099" and "`q01` in order (rank 3 for it under the committed run)" in p["message"]
    assert "ranks first" not in p["message"] and "remove or reword" not in p["message"]
    assert "Expected of an FAQ whose heading is the question" in p["message"]


def test_the_copy_warning_says_the_rank_under_the_configured_retriever(kb, tmp_path, capsys):
    from rag_corpus_check.commands.check import run_check
    from rag_corpus_check.pipeline.context import Context

    _copy_of_q01(kb)
    out = run_check(str(kb), str(kb / ".rag-corpus-check.yml"), Context())
    [p] = [p for p in out.problems.items if "words of gold question" in p.message]
    rank = out.run.rankings()["q01"].index("faq-099") + 1  # the ranking the check measured
    assert f"(rank {rank} for it under the configured retriever (`bm25`))" in p.message


def test_without_a_ranking_the_copy_warning_claims_no_rank(kb, tmp_path, capsys):
    from rag_corpus_check.commands.cli import main

    _copy_of_q01(kb)
    assert main(["validate", "--config", ".rag-corpus-check.yml"]) == 0
    out = capsys.readouterr().out
    assert "words of gold question `q01` in order:" in out and "rank" not in out.split("q01", 1)[1].split("\n")[0]


def test_a_two_word_topic_with_an_apostrophe_is_not_looked_for(kb, tmp_path, capsys):
    """Was: "Parkinson's disease" is three tokens (parkinson, s, disease),
    and every abstract naming the disease was warned."""
    from conftest import check

    _scored_committed_run(kb)
    with (kb / "gold.yaml").open("a") as f:
        f.write("\n  - query_id: q90\n    query: \"Parkinson's disease\"\n    relevant: {faq-098: 1}\n"
                "\n  - query_id: q91\n    query: \"vitamin D deficiency\"\n    relevant: {faq-098: 1}\n")
    with (kb / "corpus.jsonl").open("a") as f:
        f.write(json.dumps({"id": "faq-098", "text": "Vitamin D deficiency in Parkinson's disease patients"}) + "\n")
    _, _, results, _ = check(tmp_path, capsys)
    assert _copies(results) == []


# ---------------------------------------------------------------- annotations go first to what the PR changed


def test_annotations_go_first_to_the_lines_the_pr_changed(kb, tmp_path, capsys, monkeypatch):
    """Was: the ten warning slots went to problems the base already had,
    in file order; the two blank records this PR added got none."""
    from conftest import check
    from support.github import find_commands
    from support.repos import commit

    _scored_committed_run(kb)
    corpus = kb / "corpus.jsonl"
    with corpus.open("a") as f:  # twelve blank records the base already has
        f.writelines(json.dumps({"id": f"old-{i:02}", "text": " "}) + "\n" for i in range(12))
    base = commit(kb, "base")
    with corpus.open("a") as f:  # this PR adds two blank records after them
        f.writelines(json.dumps({"id": f"new-{i}", "text": ""}) + "\n" for i in range(2))
    blanked, new_lines = ["new-0", "new-1"], [str(len(corpus.read_text().splitlines()) - i) for i in (1, 0)]
    commit(kb, "two blank documents")
    output = tmp_path / "gh-output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    code, text, results, _ = check(tmp_path, capsys, "--base", base, "--github", "--no-step-summary")

    warnings = [c for c in find_commands(text) if c.name == "warning" and "no text and no title" in c.data]
    assert len(warnings) == 10 and results["counts"]["warnings"] >= 14, text
    assert [c.props.get("line") for c in warnings[:2]] == new_lines, [c.props for c in warnings]
    assert all(d in warnings[i].data for i, d in enumerate(blanked))
    listed = [p["id"] for p in results["problems"] if "no text and no title" in p["message"]]
    assert listed[-2:] == blanked  # the results keep the one order of every output (here: file order)


# ---------------------------------------------------------------- the rendered summaries in docs/pr-comparison.md


def test_the_pages_pictures_are_of_the_summaries_the_tool_makes(tmp_path):
    """docs/pr-comparison.md shows both PRs' summaries (tools/pr_screenshots.py
    makes them); the summaries it photographs say what the page says."""
    import subprocess
    import sys

    from conftest import ROOT

    page = (ROOT / "docs" / "pr-comparison.md").read_text(encoding="utf-8")
    for name in ("damaging", "harmless"):
        assert f"](images/pr-{name}.png)" in page
        assert (ROOT / "docs" / "images" / f"pr-{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "tools/pr_screenshots.py" in page
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "pr_screenshots.py"), "--markdown", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    damaging = gfm((tmp_path / "pr-damaging.md").read_text(encoding="utf-8"))
    harmless = gfm((tmp_path / "pr-harmless.md").read_text(encoding="utf-8"))
    assert "rag-corpus-check: quality gate failed" in damaging
    assert "<li><code>R@5</code> is 0.6429, the threshold is 0.65</li>" in damaging
    assert "<td>q02</td>" in damaging.split("Questions that dropped")[1]
    assert "rag-corpus-check: passed" in harmless and "Questions that dropped" not in harmless


def test_the_listed_copies_are_the_best_ranked_first(kb, tmp_path, capsys):
    """Twenty are listed: those that rank (and so move the measures) before
    those that do not, whatever their place in the file."""
    from conftest import check
    from support.repos import edit

    _scored_committed_run(kb)
    with (kb / "corpus.jsonl").open("a") as f:
        f.writelines(json.dumps({"id": f"copy-{i:02}", "text": f"{i}: {Q01}"}) + "\n" for i in range(25))
    edit(kb / "gold.yaml", "      howto-003: 0\n", "      howto-003: 0\n" + "".join(f"      copy-{i:02}: 0\n"
                                                                                   for i in range(25)))
    run = kb / "run.jsonl"
    lines = run.read_text().splitlines()
    q01 = json.loads(lines[0])
    q01["ranking"] = ["copy-24", *q01["ranking"][:5], "copy-23"]
    lines[0] = json.dumps(q01)
    run.write_text("\n".join(lines) + "\n")
    _, _, results, _ = check(tmp_path, capsys)
    listed = [p["id"] for p in _copies(results) if p["id"]]
    assert listed[:3] == ["copy-24", "copy-23", "copy-00"] and len(listed) == 20
    assert "(rank 1 for it under the committed run)" in _copies(results)[0]["message"]


def test_the_pr_comment_names_uncommitted_inputs_and_renders_trust_code_spans():
    from conftest import ROOT
    from rag_corpus_check.report.comment import RunInfo, load_results
    from rag_corpus_check.report.comment import render as render_comment

    results = load_results((ROOT / "tests" / "fixtures" / "comment" / "results-example.json").read_bytes())
    results["provenance"]["uncommitted"] = ["corpus.jsonl"]
    results["problems"].insert(0, {"severity": "warning", "kind": "trust", "file": "run.jsonl", "line": None,
                                   "id": None, "message": "with `run:` the gate measures the PR's rankings"})
    body = render_comment(results, RunInfo(1, "https://github.com/o/r/actions/runs/1", "a" * 40, "success"))
    head = gfm(body)
    assert "with uncommitted changes to 1 input file " in head
    assert "<li>with <code>run:</code> the gate measures the PR's rankings</li>" in head


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), max_size=40), n=st.integers(-1, 45))
def test_the_worst_questions_are_those_of_sorting_every_question(values, n):
    """Sorting only the questions up to the n-th value lists what sorting
    all of them lists: value, then id in natural order."""
    ids = [f"q{i}" for i in random.Random(len(values)).sample(range(1000), len(values))]
    results = {"queries": [{"query_id": qid, "status": "ok", "values": {"nDCG@10": v}}
                           for qid, v in zip(ids, values, strict=True)]}
    everything = sorted(results["queries"], key=lambda q: (q["values"]["nDCG@10"], natural_key(q["query_id"])))
    assert worst_questions(results, "nDCG@10", n) == everything[:max(n, 0)]
