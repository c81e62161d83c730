"""What a reviewer reads on a pull request (issue 35): the words, code spans,
numbers and tables of the console, the summary rendered by a GFM renderer
(cmarkgfm, GitHub's own cmark-gfm), the annotations and the results file.

The CLI is called in-process (``main(argv)``); git is the real git on
throw-away repositories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options

from rag_corpus_check.report import render
from rag_corpus_check.report.markdown import Summary, prose


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
    from support.repos import commit, init

    from conftest import EXAMPLE
    from rag_corpus_check.commands.cli import main

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
