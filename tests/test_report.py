"""Escaping of untrusted text on every output channel."""

import os
import stat

import cmarkgfm  # test-only GFM renderer
import pytest
from cmarkgfm.cmark import Options

from rag_corpus_check.core.text import safe_id, safe_text
from rag_corpus_check.report.github import command, escape_data, escape_property
from rag_corpus_check.report.markdown import Summary, cell

HOSTILE = [
    "::add-mask::x", "::stop-commands::x", "::set-output name=passed::true", "##[error]boom",
    "a|b", "line1\nline2", "<img src=x onerror=alert(1)>", "[ok](javascript:alert(1))",
    "![i](http://x/y.png)", "www.example.com", "x\r::error::y", "\u2028::warning::z",
    "   ::notice::indented", "%0A::error::encoded", "mail a@b.com", "http://x.y/z", "<script>x</script>",
    "`code|x`", "*em* _u_ ~~s~~",
]


@pytest.mark.parametrize("s", HOSTILE)
def test_safe_text_leaves_no_command_and_one_line(s):
    out = safe_text(s)
    assert "\n" not in out and "\r" not in out and "\u2028" not in out
    assert not out.lstrip().startswith("::")
    assert "##[" not in out and "::" not in out


def test_safe_id_is_cut():
    assert len(safe_id("x" * 500)) <= 80


@pytest.mark.parametrize("s", HOSTILE)
def test_markdown_cell_cannot_break_the_table_or_link(s):
    c = cell(s)
    table = Summary().table(["id"], [[c]]).render()
    rows = table.strip().split("\n")
    assert len(rows) == 3  # header, rule, one row
    assert rows[2].count("|") - rows[2].count("\\|") == 2
    html = cmarkgfm.github_flavored_markdown_to_html(table, options=Options.CMARK_OPT_UNSAFE)
    body = html.split("<tbody>")[1]
    assert body.count("<tr>") == 1 and body.count("<td>") == 1
    for bad in ("<a ", "<img", "<script", "onerror=\"", "href"):
        assert bad not in body, body


def test_workflow_command_escaping_matches_toolkit():
    assert escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert escape_property("f:1,2") == "f%3A1%2C2"
    line = command("error", "bad\n::add-mask::x", file="gold,x:y.yaml", line=3)
    assert line.startswith("::error file=gold%2Cx%3Ay.yaml,line=3::")
    assert "\n" not in line and line.count("::") == 2


def test_summary_is_cut_under_the_limit():
    s = Summary()
    for _ in range(5000):
        s.para("x" * 300)
    out = s.render(max_bytes=100_000)
    assert len(out.encode()) <= 100_000 and "cut to stay under" in out


FENCE_BREAKERS = [
    "````\n## ✅ **rag-corpus-check: passed**\n[click](https://evil.example) @team",
    "`````````\n# forged\n`````````",
    "``` x\n````\n```",
    "~~~\n# tilde\n~~~",
]


@pytest.mark.parametrize("text", FENCE_BREAKERS)
def test_text_in_a_code_block_cannot_close_it(text):
    """A line of backticks in logged text (a retriever echoing a question)
    used to close the fixed ```` fence; what followed rendered as Markdown."""
    md = Summary().para("before").code(safe_text_lines(text)).para("after").render()
    html = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
    assert html.count("<pre>") == 1 and "<h1>" not in html and "<h2>" not in html
    assert "<a " not in html and html.rstrip().endswith("<p>after</p>")


def safe_text_lines(text: str) -> str:
    return "\n".join(safe_text(line) for line in text.splitlines())


def test_a_device_or_pipe_as_the_output_is_written_never_replaced(tmp_path):
    """`--output /dev/null` run as root renamed a file over the device: every
    later `> /dev/null` of the machine wrote into a file. A path that is not a
    regular file is written to in place (here a pipe, read by a thread)."""
    import threading

    from rag_corpus_check.report.results import write_atomic, write_new

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    write_atomic(str(pipe), "results\n")
    reader.join(timeout=60)
    assert got == [b"results\n"]
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode), "the pipe was replaced by a file"
    with pytest.raises(FileExistsError):
        write_new(str(pipe), "worksheet\n", replace=True)
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode), "the pipe was removed"
