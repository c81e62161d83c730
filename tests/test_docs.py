"""The documentation agrees with its sources: the generated pages are
current, every config key, measure, action input/output, CLI option and
environment variable has its entry, every link resolves, every table is whole.

The package's modules are named only in tools/gen_docs.py (its "sources"
functions), which this test imports."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

DOCS = ROOT / "docs"
_spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
assert _spec and _spec.loader
gen_docs = importlib.util.module_from_spec(_spec)
sys.modules["gen_docs"] = gen_docs
_spec.loader.exec_module(gen_docs)

INPUT_SCHEMAS = ["config", "corpus", "gold", "run", "beir"]
# docs/pending/ holds drafts other changes leave for the pages; they are checked once folded in.
PAGES = sorted([ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "RELEASING.md",
                *(p for p in DOCS.rglob("*.md") if "pending" not in p.relative_to(DOCS).parts)])


# -- Generated pages.

def test_generated_pages_are_current():
    stale = [str(p.relative_to(ROOT)) for p, text in gen_docs.pages().items()
             if p.read_text(encoding="utf-8") != text]
    assert stale == [], f"run `python tools/gen_docs.py`: {stale}"


def test_check_mode_reports_a_stale_page(tmp_path, monkeypatch, capsys):
    page = tmp_path / "metrics.md"
    page.write_text((DOCS / "metrics.md").read_text(encoding="utf-8").replace("`P@k`", "`P@k (edited)`"))
    monkeypatch.setattr(gen_docs, "BLOCKS", {"metrics": ("metrics.md", gen_docs.metrics_table)})
    monkeypatch.setattr(gen_docs, "DOCS", tmp_path)
    monkeypatch.setattr(gen_docs, "ROOT", tmp_path)
    assert gen_docs.main(["--check"]) == 1
    assert "metrics.md is stale" in capsys.readouterr().out
    assert gen_docs.main([]) == 0
    assert gen_docs.main(["--check"]) == 0


@pytest.mark.parametrize("name", [*INPUT_SCHEMAS, "results"])
def test_every_schema_key_has_a_description(name):
    assert gen_docs.undocumented(gen_docs.load_schema(name)) == []


def test_every_shared_definition_has_a_description():
    defs = gen_docs.load_schema("common")["$defs"]
    assert [n for n, d in defs.items() if not d.get("description")] == []


def test_a_key_without_a_description_is_found():
    schema = gen_docs.load_schema("config")
    del schema["properties"]["retriever"]["properties"]["k1"]["description"]
    schema["properties"]["thresholds"]["additionalProperties"]["oneOf"][1]["properties"]["new"] = {"type": "number"}
    schema["properties"]["brand_new"] = {"type": "string"}
    assert sorted(gen_docs.undocumented(schema)) == ["brand_new", "retriever.k1", "thresholds.<measure>.new"]


def test_the_config_table_lists_every_key():
    table = gen_docs.schema_table("config")
    keys = [path for path, _ in gen_docs.properties(gen_docs.load_schema("config"))]
    assert len(keys) > 50
    for key in keys:
        assert f"| `{key}` |" in table, key


def test_every_measure_has_its_formula_on_the_metrics_page():
    page = (DOCS / "metrics.md").read_text(encoding="utf-8")
    definitions = gen_docs.measure_definitions()
    assert len(definitions) >= 8
    for name, d in definitions.items():
        assert d.formula.strip(), name
        shown = f"{name}@k" if d.cutoff else name
        assert f"| `{shown}` | {gen_docs._cell(d.formula)} |" in page, name


# -- Tables written by hand, checked against their source.

def _cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def _table_after(text: str, heading: str) -> list[list[str]]:
    """The rows (cells) of the first table after ``heading``."""
    start = text.index(heading)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append(_cells(line))
        elif rows:
            break
    return [r for r in rows[1:] if not set("".join(r)) <= set("-: ")]


def _section(text: str, title: str) -> str:
    start = text.index(title)
    nxt = text.find("\n## ", start + len(title))
    return text[start:] if nxt < 0 else text[start:nxt]


ACTIONS = {"action.yml": "## The check:", "comment/action.yml": "## The comment:"}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_action_reference_matches_action_yml(action):
    spec = yaml.safe_load((ROOT / action).read_text(encoding="utf-8"))
    page = _section((DOCS / "action.md").read_text(encoding="utf-8"), ACTIONS[action])
    inputs = {row[0].strip("`"): row for row in _table_after(page, "### Inputs")}
    outputs = {row[0].strip("`"): row for row in _table_after(page, "### Outputs")}
    assert set(inputs) == set(spec["inputs"]), "docs/action.md inputs differ from " + action
    assert set(outputs) == set(spec["outputs"]), "docs/action.md outputs differ from " + action
    for name, row in inputs.items():
        default = str(spec["inputs"][name].get("default", ""))
        shown = row[1].replace("\\|", "|")
        assert f"`{default}`" in shown or f"`'{default}'`" in shown, (name, default, shown)
        assert row[2], name
    assert all(row[1] for row in outputs.values())


def _options(parser) -> set[str]:
    found = set()
    for act in parser._actions:
        if "-h" in act.option_strings:
            continue
        found |= set(act.option_strings) if act.option_strings else {act.dest.upper()}
    return found


def _documented(section: str) -> set[str]:
    rows = _table_after(section, "| option | meaning |")
    names = set()
    for row in rows:
        names |= set(re.findall(r"--[a-z0-9][a-z0-9-]*", row[0]))
        names |= set(re.findall(r"`([A-Z]+)\.\.\.`", row[0]))
        assert row[1], row
    return names


def test_every_subcommand_has_a_parser_for_the_docs():
    assert gen_docs.subcommands() | {"check"} == set(gen_docs.parsers())


@pytest.mark.parametrize("command", ["check", "retrieve", "merge", "pool", "embed", "validate", "add-labels"])
def test_cli_reference_matches_the_parser(command):
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    section = _section(page, f"## `rag-corpus-check {command}`")
    parser = gen_docs.parsers()[command]
    assert _documented(section) == _options(parser)


def test_every_command_has_a_section():
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^## `rag-corpus-check ([\w-]+)`", page, re.M))
    assert documented == set(gen_docs.parsers())


def test_an_undocumented_option_is_found():
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    parser = gen_docs.parsers()["pool"]
    parser.add_argument("--brand-new", action="store_true")
    assert _options(parser) - _documented(_section(page, "## `rag-corpus-check pool`")) == {"--brand-new"}


def test_limit_defaults_are_the_code_s():
    """The defaults of `limits:` as docs/hostile-input.md and the annotated
    config in docs/configuration.md state them are the ones the code uses."""
    defaults = gen_docs.limit_defaults()
    assert len(defaults) == 10
    limits = {row[0].strip("`"): row[1] for row in _table_after((DOCS / "hostile-input.md").read_text(encoding="utf-8"),
                                                                "## Limits")}
    config = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for name, value in defaults.items():
        assert limits[name].split()[0] == str(value), name
        assert re.search(rf"^  {name}: {value}\b", config, re.M), name


def test_every_environment_variable_is_documented():
    used = set()
    for path in gen_docs.package_sources():
        used |= set(re.findall(r"RAG_CORPUS_CHECK_[A-Z_]+", path.read_text(encoding="utf-8")))
    assert "RAG_CORPUS_CHECK_DEBUG" in used
    table = {row[0].strip("`") for row in _table_after((DOCS / "cli.md").read_text(encoding="utf-8"),
                                                         "## Environment variables")}
    assert used <= table, used - table


# -- Every page: size, links, tables.

def test_readme_is_at_most_300_lines():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


# Keep a Changelog 1.1.0: `## [Unreleased]`, then `## [X.Y.Z] - YYYY-MM-DD`
# newest first, each with `### <kind>` sections of one-line bullets.
_KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
_RELEASE = re.compile(r"\[(Unreleased|\d+\.\d+\.\d+)\]( - \d{4}-\d{2}-\d{2})?")


def changelog_shape_problems(text: str) -> list[str]:
    """What keeps ``text`` from being a Keep a Changelog file (empty: it is one)."""
    problems, releases, kinds = [], [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            release = _RELEASE.fullmatch(line[3:])
            if not release or (release.group(1) == "Unreleased") == bool(release.group(2)):
                problems.append(f"{n}: not `## [Unreleased]` or `## [X.Y.Z] - YYYY-MM-DD`: {line}")
            releases.append(line[3:])
            kinds = []
        elif line.startswith("### "):
            kind = line[4:]
            if kind not in _KINDS or kind in kinds or (kinds and _KINDS.index(kind) < _KINDS.index(kinds[-1])):
                problems.append(f"{n}: a section must be one of {', '.join(_KINDS)}, once, in that order: {line}")
            kinds.append(kind)
        elif line.startswith("#") and not line.startswith("# "):
            problems.append(f"{n}: only `##` releases and `###` kinds: {line}")
        elif line.startswith(("- ", "* ")) and not releases:
            problems.append(f"{n}: an entry before `## [Unreleased]`")
        elif line.startswith(" ") and line.strip() and releases:
            problems.append(f"{n}: one line an entry, no continuation or sub-list: {line.strip()[:40]}")
    if not releases or releases[0] != "[Unreleased]":
        problems.append("the first section must be `## [Unreleased]`")
    return problems


def test_the_changelog_keeps_a_changelog():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog_shape_problems(text) == []
    assert len(text.splitlines()) < 150, "entries are one line each: history belongs in docs/performance.md"


def test_a_changelog_of_another_shape_is_found():
    journal = "# Changelog\n\n## [Unreleased]\n\n### Start-up\n\n- timings\n  - sub-entry\n"
    assert [p.split(":")[0] for p in changelog_shape_problems(journal)] == ["5", "8"]
    assert changelog_shape_problems("# Changelog\n\n## [1.0.0]\n") != []


_FENCE = re.compile(r"^(```+|~~~+).*?^\1\s*$", re.M | re.S)
_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """``text`` without code blocks and code spans (they hold no links)."""
    return _CODE.sub("", _FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _broken_links(page: Path) -> list[str]:
    broken = []
    for target in _LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif anchor and (dest.is_dir() or dest.suffix != ".md" or anchor not in _anchors(dest)):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page):
    assert _broken_links(page) == []


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "b.md").write_text("# Title here\n")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md#title-here) [gone](c.md) [bad anchor](b.md#nope) `[code](x.md)` [web](https://x.invalid)\n")
    assert _broken_links(page) == ["c.md", "b.md#nope"]


def _table_problems(text: str) -> list[str]:
    """Rows whose cell count differs from their table's header (a stray `|`)."""
    problems, width = [], None
    for line in _FENCE.sub("", text).splitlines():
        if not line.startswith("|"):
            width = None
            continue
        n = len(_cells(line))
        if width is None:
            width = n
        elif n != width:
            problems.append(line[:80])
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_table_is_whole(page):
    assert _table_problems(page.read_text(encoding="utf-8")) == []


def test_a_broken_table_is_found():
    assert _table_problems("| a | b |\n| --- | --- |\n| x | y | z |\n| `p|q` | r |\n") == [
        "| x | y | z |", "| `p|q` | r |"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_page_renders_its_tables(page):
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    html = cmarkgfm.github_flavored_markdown_to_html(page.read_text(encoding="utf-8"), options=Options.CMARK_OPT_UNSAFE)
    assert "<p>|" not in html  # a table GitHub would show as text
    assert "&lt;!-- BEGIN" not in html
