"""The Markdown corpus: the config's object form, GitHub's anchors
(github-slugger's own fixtures), and the pages a parser must not guess
about — headings in fenced and indented code, setext headings, HTML
blocks, repeated and non-ASCII headings, CRLF, BOM, empty pages, front
matter that does not parse — and the hostile ones (symlinks, names, bytes,
limits). Sections are checked against markdown-it-py's own heading tokens."""

import json
import os
from pathlib import Path

import pytest

from conftest import write
from rag_corpus_check.config.load import MarkdownSpec, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.anchors import Slugger, slug
from rag_corpus_check.inputs.markdown_corpus import moves, parse_page, read_markdown_corpus
from rag_corpus_check.safe_io import InputError, Limits
from rag_corpus_check.safe_io.pages import glob_regex

FIXTURES = Path(__file__).resolve().parent / "data" / "github_slugger_fixtures.json"


def test_anchors_are_github_sluggers_on_its_own_fixtures():
    slugger = Slugger()
    cases = json.loads(FIXTURES.read_text(encoding="utf-8"))
    assert len(cases) == 78
    for case in cases:
        assert slugger.slug(case["input"]) == case["expected"], case["name"]


@pytest.mark.parametrize("text, expected", [
    ("Shipping & Delivery 🚚", "shipping--delivery-"), ("Ünïcödé Straße", "ünïcödé-straße"),
    ("日本語の見出し", "日本語の見出し"), ("C++ / C#", "c--c"), ("snake_case-and-dash", "snake_case-and-dash"),
    ("!!!", ""),
])
def test_a_slug_keeps_letters_of_any_script_and_drops_punctuation(text, expected):
    assert slug(text) == expected


def _load(tmp_path, corpus_yaml):
    write(tmp_path / "cfg.yml", f"version: 1\ncorpus:\n{corpus_yaml}gold: g.yaml\nk: 5\n")
    problems = P.Problems()
    cfg, _ = load_config(str(tmp_path), str(tmp_path / "cfg.yml"), problems)
    return cfg, problems


def test_the_config_normalises_a_markdown_corpus_once(tmp_path):
    cfg, problems = _load(tmp_path, "  format: markdown\n  paths: [\"docs/**/*.md\"]\n  exclude: [\"docs/drafts/**\"]\n")
    assert not problems.items, problems.items
    assert cfg.markdown == MarkdownSpec(("docs/**/*.md",), ("docs/drafts/**",), "heading")
    assert cfg.corpus_format == "markdown" and cfg.corpus == "docs/**/*.md"
    assert cfg.input_files == ["g.yaml"]  # the pages are globs, not a file to export
    cfg, problems = _load(tmp_path, "  path: c.jsonl\n")
    assert not problems.items and cfg.corpus == "c.jsonl" and cfg.markdown is None and cfg.corpus_format == "jsonl"


@pytest.mark.parametrize("corpus_yaml, message", [
    ("  format: markdown\n", "missing required `paths`"),
    ("  format: markdown\n  paths: [\"docs/*.md\"]\n  path: c.jsonl\n", "other settings rule out"),
    ("  path: c.jsonl\n  chunk: heading\n", "other settings rule out"),
    ("  format: markdown\n  paths: [\"../elsewhere/*.md\"]\n", "not a glob relative to the config's folder"),
    ("  format: markdown\n  paths: [\"/etc/*.md\"]\n", "not a glob"),
    ("  format: markdown\n  paths: [\"docs/.git/*\"]\n", "not a glob"),
    ("  format: markdown\n  paths: [\"docs/*.md\"]\n  chunk: paragraph\n", "must be one of heading, file"),
    ("  format: html\n  paths: [\"docs/*.md\"]\n", "must be one of jsonl, markdown"),
    ("  - a list\n", "must be a path or a mapping"),
])
def test_a_wrong_corpus_object_is_a_schema_error_at_its_line(tmp_path, corpus_yaml, message):
    cfg, problems = _load(tmp_path, corpus_yaml)
    assert cfg is None
    assert problems.items and all(p.kind == P.SCHEMA and p.file == "cfg.yml" and p.line for p in problems.items)
    assert any(message in p.message for p in problems.items), [p.message for p in problems.items]


def test_a_retriever_command_needs_a_corpus_file(tmp_path):
    write(tmp_path / "cfg.yml", "version: 1\ncorpus: {format: markdown, paths: [\"*.md\"]}\ngold: g.yaml\nk: 5\n"
          "retriever: {type: command, command: [\"x\"]}\n")
    problems = P.Problems()
    cfg, _ = load_config(str(tmp_path), str(tmp_path / "cfg.yml"), problems)
    assert cfg is None and "export --out corpus.jsonl" in problems.items[0].message


@pytest.mark.parametrize("pattern, yes, no", [
    ("docs/**/*.md", ["docs/a.md", "docs/x/y/a.md"], ["docs/a.mdx", "other/a.md", "docsa.md"]),
    ("*.md", ["a.md"], ["d/a.md"]),
    ("docs/drafts/**", ["docs/drafts/a.md", "docs/drafts/x/b.md"], ["docs/draftsx/a.md"]),
    ("docs/?.md", ["docs/a.md"], ["docs/ab.md"]),
    ("docs/[a].md", ["docs/[a].md"], ["docs/a.md"]),
])
def test_globs(pattern, yes, no):
    rx = glob_regex(pattern)
    assert all(rx.fullmatch(p) for p in yes) and not any(rx.fullmatch(p) for p in no)


HOSTILE = (
    "\ufeff---\ntitle: [unclosed\n---\n"  # a BOM, then a front matter that does not parse
    "Intro before any heading.\r\n\r\n"
    "# Main title\r\n\r\n"
    "```python\n# a comment in a fence\n```\n\n"
    "    # indented code, not a heading\n\n"
    "<div>\n# inside an HTML block\n</div>\n\n"
    "Setext heading\n--------------\n\nbody\n\n"
    "## Repeat\n\none\n\n## Repeat\n\ntwo\n\n"
    "### Ünïcödé *emphasis* `code` [link](x) ![img](y)\n\nthree\n"
    "> ## In a quote\n"
)


def _corpus(tmp_path, pages: dict, chunk="heading", paths=("docs/**/*.md",), exclude=(), limits=None):
    for rel, data in pages.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    problems = P.Problems()
    seen = []
    corpus = read_markdown_corpus(str(tmp_path), str(tmp_path), MarkdownSpec(tuple(paths), tuple(exclude), chunk),
                                  limits or Limits(), problems, lambda i, rec: seen.append(rec))
    return corpus, seen, problems


def test_hostile_markdown_sections_follow_the_parser(tmp_path):
    from markdown_it import MarkdownIt

    corpus, seen, problems = _corpus(tmp_path, {"docs/h.md": HOSTILE})
    ids = [r["id"] for r in seen]
    assert ids == ["docs/h.md#main-title", "docs/h.md#setext-heading", "docs/h.md#repeat", "docs/h.md#repeat-1",
                   "docs/h.md#ünïcödé-emphasis-code-link-", "docs/h.md#in-a-quote"]
    # the parser's own heading tokens, one section each
    body = HOSTILE.lstrip("\ufeff").replace("\r\n", "\n").split("\n---\n", 1)[1]
    tokens = [t for t in MarkdownIt("commonmark").parse(body) if t.type == "heading_open"]
    assert len(tokens) == len(ids)
    assert all(r["doc_id"] == "docs/h.md" and r["title"] == "Main title" for r in seen)
    first = seen[0]["text"]
    assert first.startswith("Main title\n\n") and "Intro before any heading." in first
    assert "# a comment in a fence" in first and "# inside an HTML block" in first and "unclosed" not in first
    assert seen[4]["text"].startswith("Main title › Repeat › Ünïcödé emphasis code link\n\nthree")
    assert [(p.kind, p.file, p.line, p.severity) for p in problems.items] == [(P.PARSE, "docs/h.md", 3, P.WARNING)]  # where YAML finds the flow unclosed
    assert corpus.lines["docs/h.md#main-title"] == 6 and corpus.file_of("docs/h.md#repeat") == "docs/h.md"


def test_front_matter_titles_types_statuses_and_the_fallbacks(tmp_path):
    pages = {"docs/a.md": "---\ntitle: Alpha\ntype: faq\nstatus: stale\n---\n# Heading\n\ntext\n",
             "docs/b.md": "no heading at all\n",
             "docs/c.md": "---\nstatus: gone\n---\n## Only a level two\n\nx\n",
             "docs/empty.md": ""}
    corpus, seen, problems = _corpus(tmp_path, pages)
    by = {r["id"]: r for r in seen}
    assert by["docs/a.md#heading"]["title"] == "Alpha"
    assert (by["docs/a.md#heading"]["type"], by["docs/a.md#heading"]["status"]) == ("faq", "stale")
    assert "docs/a.md#heading" in corpus.inactive
    assert by["docs/b.md"]["title"] == "b" and "doc_id" not in by["docs/b.md"]  # a page with no heading is one record
    assert by["docs/c.md#only-a-level-two"]["title"] == "c" and "status" not in by["docs/c.md#only-a-level-two"]
    assert by["docs/empty.md"]["text"] == "empty"
    assert [(p.kind, p.file, p.severity) for p in problems.items] == [(P.SCHEMA, "docs/c.md", P.WARNING)]


def test_chunk_file_gives_one_record_per_page(tmp_path):
    corpus, seen, _ = _corpus(tmp_path, {"docs/h.md": HOSTILE, "docs/x/y.md": "# Y\n"}, chunk="file")
    assert [r["id"] for r in seen] == ["docs/h.md", "docs/x/y.md"] and not corpus.parents


def test_exclude_and_other_files_are_left_out(tmp_path):
    _, seen, _ = _corpus(tmp_path, {"docs/a.md": "# A\n", "docs/drafts/b.md": "# B\n", "docs/c.txt": "# C\n",
                                    "other/d.md": "# D\n"}, exclude=("docs/drafts/**",))
    assert [r["id"] for r in seen] == ["docs/a.md#a"]


def test_the_text_of_a_page_is_never_in_a_message(tmp_path):
    secret = "SECRET-TEXT-42"
    _, _, problems = _corpus(tmp_path, {"docs/a.md": f"---\n{secret}: [\n---\n# A\n"})
    assert problems.items and not any(secret in p.message for p in problems.items)
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, {"docs/b.md": f"# {secret}\n".encode() + b"\xff\xfe\n"})
    assert secret not in exc.value.message


def test_a_page_that_is_not_utf8_is_an_error_at_its_line(tmp_path):
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, {"docs/a.md": b"# A\n\nfine\n\xe9t\xe9\n"})
    assert (exc.value.kind, exc.value.file, exc.value.line) == ("parse", "docs/a.md", 4)


def test_a_symlinked_page_or_folder_is_refused(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").symlink_to("/etc/hostname")
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, {})
    assert exc.value.kind == "path" and exc.value.file == "docs/a.md" and "symlink" in exc.value.message
    (tmp_path / "docs" / "a.md").unlink()
    (tmp_path / "docs" / "sub").symlink_to("/etc")
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, {})
    assert exc.value.kind == "path" and exc.value.file == "docs/sub"


def test_a_symlinked_start_folder_is_refused(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("# A\n")
    (tmp_path / "docs").symlink_to(tmp_path / "real")
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, {})
    assert exc.value.kind == "path" and "symlink" in exc.value.message


def test_a_page_name_that_is_not_an_id_is_refused(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a\x1bb.md").write_text("# A\n")
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, {})
    assert exc.value.kind == "path" and "\x1b" not in exc.value.file


def test_the_pages_are_bounded_together(tmp_path):
    pages = {f"docs/p{i}.md": "# P\n\n" + "x" * 100 for i in range(5)}
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, pages, limits=Limits(max_records=4))
    assert exc.value.kind == "limit" and "max_records" in exc.value.message
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, pages, limits=Limits(max_file_bytes=300))
    assert exc.value.kind == "limit" and "together" in exc.value.message
    with pytest.raises(InputError) as exc:  # sections count as records too
        _corpus(tmp_path, {"docs/many.md": "".join(f"# H{i}\n" for i in range(10))}, limits=Limits(max_records=9))
    assert exc.value.kind == "limit"


def test_git_is_never_walked(tmp_path):
    _, seen, _ = _corpus(tmp_path, {".git/x.md": "# X\n", "a.md": "# A\n"}, paths=("**/*.md", "*.md"))
    assert [r["id"] for r in seen] == ["a.md#a"]


def test_moves_pair_only_unique_contents():
    base = {"a.md": "1", "b.md": "2", "c.md": "3", "d.md": "3"}
    head = {"x.md": "1", "b.md": "2", "y.md": "3", "z.md": "4"}
    assert moves(base, head) == {"a.md": "x.md"}  # c and d alike: no move


def test_parse_page_on_crlf_and_empty():
    problems = P.Problems()
    assert parse_page("", "e.md", problems).headings == []
    parsed = parse_page("# A\r\n\r\ntext\r\n## B\r\n", "c.md", problems)
    assert [(h.anchor, h.line) for h in parsed.headings] == [("a", 1), ("b", 4)]
    assert not problems.items
    assert os.sep  # noqa: the module is used on every platform


def test_headings_cannot_multiply_a_long_title(tmp_path):
    page = "---\ntitle: " + "T" * 5000 + "\n---\n" + "#\n" * 5000
    with pytest.raises(InputError) as exc:
        _corpus(tmp_path, {"docs/bomb.md": page})
    assert exc.value.kind == "limit" and exc.value.file == "docs/bomb.md" and "chunk: file" in exc.value.message
    _, seen, _ = _corpus(tmp_path, {"docs/bomb.md": page}, chunk="file")  # one record: no trail repeated
    assert len(seen) == 1


def test_the_ascii_shortcut_removes_what_the_ranges_remove():
    from rag_corpus_check.core import anchors

    for code in range(128):
        c = chr(code)
        assert (anchors._ASCII.sub("", c) == "") == anchors._removed(c), code


@pytest.mark.parametrize("content", [
    "Plain words 42", "Tabs\tand  two spaces", "Price: $5 + 10% {x} #tag @me = ^up", "a - b : c",
    "*emph* and _under_", "`code` span", "[link](url)", "![image](x) after", "<b>html</b>", "&amp; &copy;",
    "back\\\\slash \\*", "~~strike~~", "trailing space ", "é unicode ✓",
])
def test_the_heading_text_shortcut_is_the_parsers_text(content):
    from markdown_it import MarkdownIt

    from rag_corpus_check.inputs.markdown_corpus import _inline_text, heading_text

    full = MarkdownIt("commonmark")
    assert heading_text(content, full, {}) == _inline_text(full.parseInline(content, {})[0])


@pytest.mark.parametrize("page, what", [
    ("- #\n" * 20_000, "lines that are not empty"),  # 4 characters a line: the parser's work is per line
    ("# " + "![" * 20_000 + "\n", "links, images"),  # a heading parsed inline at 13 CPU-s a MB
])
def test_the_parsers_work_is_bounded_before_it_runs(page, what):
    with pytest.raises(InputError) as exc:
        parse_page(page, "docs/p.md", P.Problems())
    assert exc.value.kind == "limit" and exc.value.file == "docs/p.md" and what in exc.value.message


def test_real_pages_are_far_from_the_parsers_bounds():
    from rag_corpus_check.inputs import markdown_corpus as mc

    page = "# API\n\n" + "".join(f"### `client.get_item_{i}(key_name)`\n\n- a\n- b\n\n```sh\n# x\n```\n\n"
                                   for i in range(2000))
    assert len(page.split("\n")) > mc.LINE_SLACK
    assert len(parse_page(page, "docs/p.md", P.Problems()).headings) == 2001
