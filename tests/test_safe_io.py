"""The safe readers: YAML and JSON hazards of docs/security.md (threat model), each a clean
InputError with a line (never a traceback, never a crash)."""

import pytest

from conftest import write
from rag_corpus_check.safe_io import InputError, Limits, iter_jsonl, load_yaml, resolve_input

L = Limits()


def y(text: str):
    return load_yaml(text.encode("utf-8"), "f.yaml", L)


def y_err(text: str) -> InputError:
    with pytest.raises(InputError) as exc:
        y(text)
    return exc.value


def test_yaml_plain_values_and_lines():
    doc = y("a: 1\nb:\n  - x\n  - 2.5\nc: null\nd: true\n")
    assert doc == {"a": 1, "b": ["x", 2.5], "c": None, "d": True}
    assert doc.key_lines == {"a": 1, "b": 2, "c": 5, "d": 6}
    assert doc["b"].item_lines == [3, 4]


def test_yaml_timestamps_stay_text():
    assert y("snapshot: 2026-11-30\n") == {"snapshot": "2026-11-30"}


@pytest.mark.parametrize(
    "text,value", [("NO", False), ("on", True), ("1e3", "1e3"), ("2026-11-30", "2026-11-30")]
)
def test_yaml_11_typing_is_visible_to_the_schema(text, value):
    # YAML 1.1 reads these as non-strings; the schema then rejects them where
    # a string or integer is expected (tested in test_cli_invalid).
    assert y(f"v: {text}\n")["v"] == value


@pytest.mark.parametrize("text", ["012", "1:20", "1_000", "0x1F", "0b11", "1_0.5", "!!int '012'"])
def test_yaml_11_surprising_numbers_are_refused(text):
    # YAML 1.1 reads 012 as 10 and 1:20 as 80; YAML 1.2 and people disagree.
    e = y_err(f"a: 1\nv: {text}\n")
    assert e.line == 2 and "plain decimal" in e.message


def test_yaml_non_string_key_is_an_error():
    e = y_err("relevant:\n  on: 1\n")
    assert e.line == 2 and "quote it" in e.message


@pytest.mark.parametrize("text", ["v: .nan\n", "v: .inf\n", "v: -.Inf\n"])
def test_yaml_non_finite_rejected(text):
    assert "non-finite" in y_err(text).message


@pytest.mark.parametrize("tag", ["!!python/object/apply:os.system ['id']", "!!python/name:os.system",
                                 "!!binary aGk=", "!!set {a, b}", "!custom x", "!!omap [a: 1]"])
def test_yaml_tags_rejected(tag):
    e = y_err(f"a: 1\nv: {tag}\n")
    assert "not allowed" in e.message and e.line == 2


def test_yaml_duplicate_key():
    e = y_err("a: 1\nb: 2\na: 3\n")
    assert e.line == 3 and "duplicate key `a` (first on line 1)" in e.message


def test_yaml_merge_key_rejected():
    assert "merge keys" in y_err("base: &b {x: 1}\nd:\n  <<: *b\n").message


def test_yaml_billion_laughs_is_capped():
    lol = ["a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lol.append(f"{cur}: &{cur} [" + ",".join(f"*{prev}" for _ in range(9)) + "]")
    e = y_err("\n".join(lol) + "\n")
    assert e.kind == "limit" and "alias bomb" in e.message


@pytest.mark.parametrize("text", ["[" * 50000 + "]" * 50000, "- " * 50000 + "x", "{a: " * 50000 + "1" + "}" * 50000])
def test_yaml_deep_nesting_is_refused_not_a_crash(text):
    e = y_err(text)
    assert e.kind == "limit" and "nested" in e.message


def test_yaml_multi_document_rejected():
    assert "invalid YAML" in y_err("a: 1\n---\nb: 2\n").message


def test_yaml_tabs_error_has_line():
    e = y_err("a:\n\tb: 1\n")
    assert e.line == 2


def test_yaml_error_does_not_echo_source():
    e = y_err("a: 1\n::error::owned: [\n")
    assert "::error::" not in e.message and "owned" not in e.message


def j(tmp_path, data: bytes):
    p = write(tmp_path / "x.jsonl", data)
    return list(iter_jsonl(str(p), "x.jsonl", L))


def j_err(tmp_path, data: bytes) -> InputError:
    with pytest.raises(InputError) as exc:
        j(tmp_path, data)
    return exc.value


def test_jsonl_lines_split_on_newline_only(tmp_path):
    recs = j(tmp_path, '{"a": "x\u2028y\u0085z"}\n\n{"a": 2}\r\n'.encode())
    assert recs == [(1, {"a": "x\u2028y\u0085z"}), (3, {"a": 2})]


def test_jsonl_bom_accepted(tmp_path):
    assert j(tmp_path, b'\xef\xbb\xbf{"a": 1}\n') == [(1, {"a": 1})]


@pytest.mark.parametrize(
    "data,line,msg",
    [
        (b'{"a": 1}\n{"a": NaN}\n', 2, "NaN"),
        (b'{"a": Infinity}\n', 1, "Infinity"),
        (b'{"a": 1e400}\n', 1, "too large"),
        (b'{"a": ' + b"1" * 5000 + b"}\n", 1, "too many digits"),
        (b'{"a": 1, "a": 2}\n', 1, "duplicate key"),
        (b"[" * 100000 + b"]" * 100000 + b"\n", 1, "nested too deeply"),
        (b'{"a": 1}\n{"a": \xff}\n', 2, "invalid UTF-8"),
        (b'{"a": "\\ud834\\udd1e"}\n{"b": 1}\n{', 3, "invalid JSON"),
        (b'{"a": 1}\n{"a": ["\\ud800"]}\n', 2, "lone UTF-16 surrogate"),
        (b"\xff\xfe{\x00}\x00", 1, "UTF-16"),
        (b'{"a": 1}\r{"b": 2}\n', 1, "invalid JSON"),
    ],
)
def test_jsonl_hazards(tmp_path, data, line, msg):
    e = j_err(tmp_path, data)
    assert e.line == line and msg in e.message, e.message


def test_jsonl_line_cap(tmp_path):
    p = write(tmp_path / "big.jsonl", b'{"a": "' + b"x" * 5000 + b'"}\n')
    with pytest.raises(InputError) as exc:
        list(iter_jsonl(str(p), "big.jsonl", Limits(max_line_bytes=1000)))
    assert exc.value.kind == "limit" and "longer than 1000 bytes" in exc.value.message


def test_jsonl_record_cap(tmp_path):
    p = write(tmp_path / "many.jsonl", b'{"a": 1}\n' * 20)
    with pytest.raises(InputError) as exc:
        list(iter_jsonl(str(p), "many.jsonl", Limits(max_records=10)))
    assert exc.value.line == 11 and "more than 10 records" in exc.value.message


def test_fifo_and_devices_refused(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(InputError, match="not a regular file"):
        list(iter_jsonl(str(tmp_path / "fifo.jsonl"), "fifo.jsonl", L))
    with pytest.raises(InputError, match="not a regular file"):
        list(iter_jsonl("/dev/zero", "zero", L))


@pytest.mark.parametrize("rel,msg", [
    ("/etc/passwd", "absolute"), ("../x", "outside the repository"), ("a/../../x", "outside"),
    ("~/x", "`~`"), ("a\x00b", "NUL"), ("", "non-empty"),
])
def test_resolve_rules(tmp_path, rel, msg):
    with pytest.raises(InputError, match=msg):
        resolve_input(str(tmp_path), str(tmp_path), rel, "config: `corpus`")


def test_symlink_inside_repo_is_fine_outside_is_not(tmp_path):
    import os

    write(tmp_path / "real.jsonl", "{}\n")
    os.symlink("real.jsonl", tmp_path / "link.jsonl")
    real, display = resolve_input(str(tmp_path), str(tmp_path), "link.jsonl", "x")
    assert real.endswith("real.jsonl")
    os.symlink("/proc/self/environ", tmp_path / "env.jsonl")
    with pytest.raises(InputError, match="symlink"):
        resolve_input(str(tmp_path), str(tmp_path), "env.jsonl", "x")
    os.symlink("/etc", tmp_path / "etcdir")
    with pytest.raises(InputError, match="symlink"):
        resolve_input(str(tmp_path), str(tmp_path), "etcdir/passwd", "x")


@pytest.mark.parametrize("code", ["33990334", "87980668"])
@pytest.mark.parametrize("pure", [False, True])
def test_yaml_escape_beyond_unicode_is_a_parse_error(monkeypatch, pure, code):
    """`"\\U33990334"` names no character: libyaml says so, the pure-Python
    scanner (used where PyYAML has no libyaml) raised ValueError from chr() —
    found by fuzzing; past 2**31 (`\\U87980668`) Python 3.11 and 3.12 raise
    OverflowError instead (found by fuzzing on 3.12). Each is an invalid-YAML
    error on the right line."""
    import yaml

    from rag_corpus_check.safe_io import yamltext as safe_io

    if pure:
        monkeypatch.setattr(safe_io, "_YAML_LOADER", yaml.SafeLoader)
    e = y_err('a: 1\nb: "x\\U' + code + '"\n')
    assert e.kind == "parse" and e.line == 2
    assert "invalid Unicode character escape" in e.message


def test_stored_bytes_is_the_size_on_disk_of_every_file_or_none(tmp_path):
    """The one size the per-byte work budgets (BM25, dense, resampling) are
    given: a gzip file counts compressed; a file that cannot be stat'ed
    makes the size unknown."""
    import gzip

    from rag_corpus_check.safe_io import stored_bytes

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "corpus.jsonl.gz").write_bytes(gzip.compress(b"x" * 100_000, mtime=0))
    (tmp_path / "gold.yaml").write_text("queries: []\n")
    packed = (tmp_path / "sub" / "corpus.jsonl.gz").stat().st_size
    assert stored_bytes(str(tmp_path), ["sub/corpus.jsonl.gz", "gold.yaml"]) == packed + len("queries: []\n") < 1000
    assert stored_bytes(str(tmp_path), []) == 0
    assert stored_bytes(str(tmp_path), ["gold.yaml", "missing.jsonl"]) is None
    assert stored_bytes(str(tmp_path), ["nul\0name"]) is None
