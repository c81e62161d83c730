"""Property tests (hypothesis) over the loaders and the escaping functions
(issue 7, "Fuzzing"): any input gives either a result or a clean InputError,
never another exception; what the loaders return is plain, finite, valid
Unicode; escaped text never carries a workflow-command prefix or a line break,
whatever it was. Under CI the examples are derandomised (a gate must not
flake); locally every run explores new ones. ``fuzz/`` has the atheris
harness for the same targets."""

import json
import os

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile import (
    CONFIG_NAME,
    check_invariants,
    config_text,
    make_repo,
    run_inprocess,
    summary_problems,
)
from rag_corpus_check.core import problems as P
from rag_corpus_check.core import schemas
from rag_corpus_check.inputs.gold import read_gold
from rag_corpus_check.inputs.run import read_run
from rag_corpus_check.report.github import command, escape_data, escape_property, write_outputs
from rag_corpus_check.report.markdown import Summary, cell
from rag_corpus_check.safe_io import InputError, Limits, iter_jsonl, load_yaml, yamltext
from support.github import DOTNET_WHITESPACE, find_commands, parse_github_output

CI = os.environ.get("CI") == "true"
PROPS = settings(
    max_examples=150,
    deadline=None,
    database=None,
    derandomize=CI,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
FEW = settings(PROPS, max_examples=40)

# ---------------------------------------------------------------- strategies

HOSTILE_TEXT = [
    "::add-mask::x",
    "::stop-commands::t",
    "::set-output name=passed::true",
    "##[error]x",
    ":::",
    "::",
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x85",
    "\x00",
    "\x1b[31m",
    "\u202e",
    "\u200b",
    "\ufeff",
    "\xa0::x",
    "%0A",
    "%25",
    "|",
    "`",
    "<img src=x onerror=alert(1)>",
    "[a](javascript:alert(1))",
    "![i](x.png)",
    "www.x.invalid",
    "a@b.invalid",
    "&lt;",
    "&#58;",
    "\\",
    "\\|",
    "\U0001f600",
    "é",
    "١٢",
    "\t",
]
hostile_text = st.lists(
    st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=6)), max_size=12
).map("".join)

YAML_TOKENS = [
    "- ",
    "? ",
    ": ",
    ":",
    "\n",
    "  ",
    "    ",
    "\t",
    "[",
    "]",
    "{",
    "}",
    ", ",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "!!python/object/apply:os.system ",
    "!!python/name:os.system ",
    "!!str ",
    "!!int ",
    "!!binary ",
    "!foo ",
    "!!set ",
    "<<: ",
    "'",
    '"',
    "\\u",
    "\\ud800",
    "\\x00",
    "012",
    "0x1F",
    "0b1",
    "1:20",
    "1_000",
    ".nan",
    ".inf",
    "-.Inf",
    "on",
    "NO",
    "yes",
    "2026-11-30",
    "2001-12-14t21:59:43.10-05:00",
    "1e3",
    "1.5",
    "~",
    "null",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
    "# c\n",
    "|\n",
    ">-\n",
    "queries",
    "query_id",
    "relevant",
    "q1",
    "d1",
    "::error::x",
    "##[",
    "\x00",
    "\u2028",
    "\ufeff",
    "\x85",
    "\x7f",
]
yaml_text = st.lists(st.one_of(st.sampled_from(YAML_TOKENS), st.text(max_size=4)), max_size=80).map(
    "".join
)

JSON_TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b":",
    b",",
    b'"a"',
    b'"id"',
    b"1",
    b"-0",
    b"0.5",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"7" * 30,
    b"NaN",
    b"-Infinity",
    b"Infinity",
    b"\\ud800",
    b"\\udc00",
    b"\\ud83d\\ude00",
    b"\\u0000",
    b"\\n",
    b"true",
    b"null",
    b" ",
    b"\t",
    b"\r",
    b"\n",
    b"\r\n",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xff",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xe2\x80\xa8",
    b"\xc2\x85",
    b"\x00",
]
json_bytes = st.lists(
    st.one_of(st.sampled_from(JSON_TOKENS), st.binary(max_size=4)), max_size=60
).map(b"".join)

finite = st.floats(allow_nan=False, allow_infinity=False)
plain_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), finite, st.text(max_size=10)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)

TREC_FIELDS = [
    "q1",
    "q2",
    "Q0",
    "0",
    "d1",
    "d2",
    "1",
    "2",
    "-1",
    "1.5",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "١",
    "x" * 600,
    "\x00",
    "\x7f",
    "a\u00a0b",
    "\u2028",
    "::error::x",
    "##[x",
    "\ufeff",
    "\t",
]
trec_text = st.lists(
    st.lists(st.one_of(st.sampled_from(TREC_FIELDS), st.text(max_size=5)), max_size=8).map(
        " ".join
    ),
    max_size=12,
).map("\n".join)


def _plain(value, depth=0):
    """Only the types JSON has, finite numbers, valid Unicode."""
    assert depth <= 200
    if isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, str)
            k.encode("utf-8")
            _plain(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _plain(v, depth + 1)
    elif isinstance(value, float):
        assert value == value and value not in (float("inf"), float("-inf"))
    elif isinstance(value, str):
        value.encode("utf-8")
    else:
        assert value is None or isinstance(value, bool | int)


def _clean(exc: InputError):
    assert exc.kind in (P.PARSE, P.SCHEMA, P.LIMIT, P.PATH)
    assert "\n" not in exc.message and "\r" not in exc.message
    assert "::" not in exc.message and "##[" not in exc.message
    exc.message.encode("utf-8")


def _write(tmp_path_factory, data: bytes, name="f.jsonl"):
    p = tmp_path_factory.mktemp("p") / name
    p.write_bytes(data)
    return str(p)


# ---------------------------------------------------------------- loaders


@PROPS
@given(json_bytes)
def test_jsonl_reader_any_bytes(tmp_path_factory, data):
    path = _write(tmp_path_factory, data)
    try:
        records = list(iter_jsonl(path, "f.jsonl", Limits()))
    except InputError as exc:
        _clean(exc)
        assert exc.line is None or 1 <= exc.line <= data.count(b"\n") + 1
        return
    lines = [n for n, _ in records]
    assert lines == sorted(set(lines)) and all(1 <= n <= data.count(b"\n") + 1 for n in lines)
    for _, value in records:
        _plain(value)


@PROPS
@given(plain_json, st.booleans())
def test_jsonl_reader_round_trips_json(tmp_path_factory, value, ascii_only):
    """Any JSON value we could have written comes back as it was, on its line."""
    line = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    path = _write(tmp_path_factory, b"\n" + line + b"\r\n")
    assert list(iter_jsonl(path, "f.jsonl", Limits())) == [(2, value)]


@pytest.fixture(params=["libyaml", "pure"])
def yaml_loader(request, monkeypatch):
    if request.param == "pure":
        monkeypatch.setattr(yamltext, "_YAML_LOADER", yaml.SafeLoader)
    elif not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml")
    return request.param


@PROPS
@given(yaml_text)
def test_yaml_loader_any_text(yaml_loader, text):
    try:
        value = load_yaml(text.encode("utf-8"), "f.yaml", Limits())
    except InputError as exc:
        _clean(exc)
        return
    _plain(value)


@PROPS
@given(st.binary(max_size=200))
def test_yaml_loader_any_bytes(yaml_loader, data):
    try:
        _plain(load_yaml(data, "f.yaml", Limits()))
    except InputError as exc:
        _clean(exc)


@PROPS
@given(trec_text, st.sampled_from(["qrels", "trec"]))
def test_trec_readers_any_text(tmp_path_factory, text, fmt):
    path = _write(tmp_path_factory, text.encode("utf-8"), "f." + fmt)
    problems = P.Problems()
    try:
        if fmt == "qrels":
            gold = read_gold(path, "f.qrels", "qrels", Limits(), problems)
            for q in gold.queries.values():
                for doc_id, grade in q.relevant.items():
                    # A negative grade is read as written (TREC Web's -2/-1): the
                    # scale check reports it, or relevance.map maps it.
                    assert (
                        isinstance(grade, int)
                        and doc_id
                        and not any(c.isspace() for c in doc_id)
                    )
        else:
            run = read_run(path, "f.trec", "trec", Limits(), problems)
            for q in run.queries.values():
                assert len(q.ranking) == len(set(q.ranking))
    except InputError as exc:
        _clean(exc)
    for p in problems.items:
        assert p.id is None or ("\n" not in p.id and "::" not in p.id and len(p.id) <= 80)


# ---------------------------------------------------------------- the gold fast path


query = st.fixed_dictionaries(
    {"query_id": st.one_of(st.sampled_from(["q1", "", "a\n", "x" * 513]), st.text(max_size=5))},
    optional={
        "relevant": st.dictionaries(
            st.one_of(st.sampled_from(["d1", "", "d\x00"]), st.text(max_size=4)),
            st.one_of(st.integers(-2, 1002), st.booleans(), finite, st.text(max_size=2)),
            max_size=4,
        ),
        "query": st.one_of(st.text(max_size=5), st.integers()),
        "snapshot": st.one_of(st.text(max_size=4), st.none()),
        "extra": st.integers(),
    },
)
gold_doc = st.fixed_dictionaries(
    {},
    optional={
        "queries": st.one_of(st.lists(query, max_size=4), st.integers()),
        "snapshot": st.one_of(st.text(max_size=4), st.integers()),
        "x": st.none(),
    },
)


@PROPS
@given(gold_doc)
def test_gold_fast_path_never_passes_what_jsonschema_rejects(doc):
    from rag_corpus_check.inputs.gold import quickly_valid

    v = schemas.validator("gold")
    if quickly_valid(doc):
        assert not list(v.iter_errors(doc))
    assert bool(schemas.errors("gold", doc)) == bool(list(v.iter_errors(doc)))


# ---------------------------------------------------------------- escaping


def _no_command_prefix(s: str):
    assert (
        "\n" not in s
        and "\r" not in s
        and "\u2028" not in s
        and "\u2029" not in s
        and "\x85" not in s
    )
    assert "::" not in s and "##[" not in s
    assert not s.lstrip(DOTNET_WHITESPACE).startswith("::")
    s.encode("utf-8")


@PROPS
@given(st.one_of(hostile_text, st.text()), st.integers(2, 400))
def test_safe_text_never_a_command_or_a_line_break(s, limit):
    from rag_corpus_check.core.text import safe_id, safe_text

    out = safe_text(s, limit)
    _no_command_prefix(out)
    assert len(out) <= 2 * limit + 2
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in out)
    _no_command_prefix(safe_id(s))
    assert len(safe_id(s)) <= 200


def test_safe_text_skips_the_escaping_loop_only_where_it_changes_nothing():
    """Printable ASCII skips the per-character loop; it may, because every
    printable ASCII character escapes to itself (and nothing else passes)."""
    from rag_corpus_check.core import text

    printable = [chr(c) for c in range(0x80) if chr(c).isprintable()]
    assert printable == [chr(c) for c in range(0x20, 0x7F)]
    assert all(text.safe_text("é" + c)[1:] == c for c in printable)  # through the loop: unchanged
    assert text.safe_text("q-001 policy/2026", 300) == "q-001 policy/2026"


@PROPS
@given(hostile_text, hostile_text, hostile_text, st.one_of(st.none(), st.integers(-5, 10**6)))
def test_annotation_is_one_command_with_our_properties(message, file, title, line):
    out = command("error", message, file=file, line=line, title="rag-corpus-check: " + title)
    assert "\n" not in out and "\r" not in out
    found = find_commands(out)
    assert len(found) == 1
    c = found[0]
    assert c.form == "v2" and c.name == "error"
    assert set(c.props) == {"file", "title"} | ({"line"} if line is not None else set())
    assert "\n" not in c.data and "\r" not in c.data
    assert "::" not in c.data and "##[" not in c.data
    assert escape_data(message).count("\n") == 0 and escape_property(file).count(",") == 0


@PROPS
@given(st.lists(hostile_text, min_size=1, max_size=4), st.integers(1, 3))
def test_markdown_cells_keep_the_table_shape(cells, rows):
    table = Summary().table([f"h{i}" for i in range(len(cells))], [[cell(c) for c in cells]] * rows)
    md = table.render()
    assert not summary_problems(md), summary_problems(md)
    for c in cells:
        assert "\n" not in cell(c) and "::" not in cell(c)


@PROPS
@given(
    st.dictionaries(
        st.sampled_from(["passed", "verdict", "results-path", "ndcg", "k"]),
        st.one_of(hostile_text, st.text()),
        min_size=1,
    )
)
def test_github_output_round_trips(tmp_path_factory, values):
    path = tmp_path_factory.mktemp("o") / "out"
    path.write_text("earlier=step\n", encoding="utf-8")
    write_outputs(str(path), values)
    parsed = parse_github_output(path.read_bytes().decode("utf-8"))  # no newline translation
    # The runner ends a value's last line at "\r\n" as well as "\n": one
    # trailing CR of a value is taken as part of the line end (and only that).
    expected = {k: v[:-1] if v.endswith("\r") else v for k, v in values.items()}
    assert parsed == {"earlier": "step", **expected}


# ---------------------------------------------------------------- end to end


@FEW
@given(hostile_text.filter(lambda s: s.strip()))
def test_any_unknown_id_is_reported_safely(tmp_path_factory, hostile):
    """Any string as an unknown document id in the run: exit 2, the problem
    names run.jsonl:2 and a safe id, and no output channel misbehaves."""
    base = tmp_path_factory.mktemp("e2e")
    repo = make_repo(base / "repo")
    (repo / "run.jsonl").write_text(
        json.dumps({"query_id": "q1", "ranking": ["d1"]})
        + "\n"
        + json.dumps({"query_id": "q2", "ranking": ["d3", "x" + hostile]})
        + "\n",
        encoding="utf-8",
    )
    (repo / CONFIG_NAME).write_text(config_text(), encoding="utf-8")
    res = run_inprocess(repo, base / "work")
    check_invariants(res, exit_code=2, where="run.jsonl:2")
