"""The fast reader of a vectors folder's row index (rag_corpus_check.retrieval.dense.index)
against the exact one (folder's line-by-line reader): on any file, the fast
reader either gives up (Slow) or returns exactly what the exact one returns —
ids, digests, row lines, file digest, records counted — with the exact
reader refusing nothing. Checked on generated files mixing the usual lines
with every kind of unusual one, across block edges and at the limits."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_corpus_check.retrieval.dense import folder as F
from rag_corpus_check.retrieval.dense.index import read_index
from rag_corpus_check.safe_io import InputError, Limits, Sha256
from rag_corpus_check.safe_io.paths import Tally
from rag_corpus_check.safe_io.scanner import BLOCK, Slow

HEX = hashlib.sha256(b"x").hexdigest()


def exact(path, key: str, limits: Limits):
    """The exact reader alone: (ids, digests, lines, file digest) or the error's message."""
    rows = F.Rows("f.npy", "f.jsonl")
    hasher = Sha256()
    rows.lines, rows._row_of = F.array("q"), {}
    try:
        for line, rec in F.iter_jsonl(str(path), "f.jsonl", limits, hasher=hasher):
            F._add_row(rows, key, rec, line)
    except InputError as exc:
        return exc.message
    return rows.keys, bytes(rows.digests), list(rows.lines), hasher.hexdigest()


def fast(path, key: str, limits: Limits):
    hasher = Sha256()
    try:
        ids, digests = read_index(str(path), "f.jsonl", limits, hasher, key)
    except Slow:
        return None
    return ids, digests, list(range(1, len(ids) + 1)), hasher.hexdigest()


def same_or_slow(path, key: str = "id", limits: Limits | None = None) -> bool:
    """The property; True when the fast reader took the file."""
    got = fast(path, key, limits or Limits())
    if got is None:
        return False
    assert (got[0], bytes(got[1]), *got[2:]) == exact(path, key, limits or Limits())
    return True


def _line(key: str, rid, digest, how: str) -> bytes:
    if how == "usual":
        return (json.dumps({key: rid, "sha256": digest}, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
    if how == "ascii":
        return (json.dumps({key: rid, "sha256": digest}) + "\n").encode()
    if how == "compact":
        return (json.dumps({key: rid, "sha256": digest}, separators=(",", ":")) + "\n").encode()
    if how == "swapped":
        return (json.dumps({"sha256": digest, key: rid}) + "\n").encode()
    if how == "extra":
        return (json.dumps({key: rid, "sha256": digest, "x": 1}) + "\n").encode()
    if how == "crlf":
        return (json.dumps({key: rid, "sha256": digest}) + "\r\n").encode()
    if how == "blank":
        return b"\n" + (json.dumps({key: rid, "sha256": digest}) + "\n").encode()
    if how == "spaces":
        return (" " + json.dumps({key: rid, "sha256": digest}) + " \n").encode()
    return b"{" + json.dumps(key).encode() + b": " + json.dumps(rid).encode() + b', "sha256": "' + HEX.encode() + b'"\n'


IDS = st.one_of(st.sampled_from(["d1", "d2", "d3", "doc-é", "a" * 512, "a" * 513, "é" * 512, "é" * 513, "", "x\ny",
                                 "q\u2028", "q\u0085", "t\x7f", "tab\t", 'quote"', "back\\", "\ud83d", "😀", " "]),
                 st.text(max_size=6))
DIGESTS = st.sampled_from([HEX, HEX.upper(), HEX[:-1], HEX + "0", "", "x" * 64])
HOW = st.sampled_from(["usual"] * 8 + ["ascii", "compact", "swapped", "extra", "crlf", "blank", "spaces", "broken"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(IDS, DIGESTS, HOW), max_size=8), key=st.sampled_from(["id", "query_id"]),
       end=st.booleans(), bom=st.booleans())
def test_fast_equals_exact_or_gives_up(tmp_path, lines, key, end, bom):
    data = b"".join(_line(key, rid, digest, how) for rid, digest, how in lines)
    data = (b"\xef\xbb\xbf" if bom else b"") + (data if end else data.rstrip(b"\n"))
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    same_or_slow(path, key)


def _usual(n: int, key: str = "id", width: int = 1) -> bytes:
    return "".join(json.dumps({key: f"doc-{i:0{width}d}", "sha256": hashlib.sha256(str(i).encode()).hexdigest()})
                   + "\n" for i in range(n)).encode()


@pytest.mark.parametrize("key", ["id", "query_id"])
def test_the_usual_file_is_read_fast_across_blocks(tmp_path, key):
    data = _usual(3 * BLOCK // 80, key, 6)  # lines of ~100 bytes: ~4 blocks, lines across their edges
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    assert same_or_slow(path, key)
    path.write_bytes(data.rstrip(b"\n"))  # no line end at the end
    assert same_or_slow(path, key)
    path.write_bytes(data.replace(b'"}\n', b'"}\n', 1000) + b"{}")  # one unusual line, at the very end
    assert not same_or_slow(path, key)


def test_non_ascii_ids_are_read_fast(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(_line("id", "doc-é", HEX, "usual") + _line("id", "文書" * 256, HEX, "usual"))
    assert same_or_slow(path)
    path.write_bytes(_line("id", "doc-é", HEX, "usual") + _line("id", "a\u2028b", HEX, "usual"))
    assert not same_or_slow(path)  # a control character: the exact reader refuses it


def test_an_id_twice_gives_up(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(_line("id", "d1", HEX, "usual") * 2)
    assert fast(path, "id", Limits()) is None
    assert "has a row already" in exact(path, "id", Limits())


def test_limits_within_reach_give_up_and_the_tally_is_the_same(tmp_path):
    path = tmp_path / "f.jsonl"
    data = _usual(50)
    path.write_bytes(data)
    assert fast(path, "id", Limits(max_records=49)) is None
    assert fast(path, "id", Limits(max_line_bytes=90)) is None
    with pytest.raises(InputError) as info:  # refused before any line: the same error as the exact reader's
        fast(path, "id", Limits(max_file_bytes=len(data) - 1))
    assert info.value.message == exact(path, "id", Limits(max_file_bytes=len(data) - 1))
    a, b = Limits(max_records=50, tally=Tally("a")), Limits(max_records=50, tally=Tally("b"))
    assert fast(path, "id", a) is not None and exact(path, "id", b)[0]
    assert a.used() == b.used() == (len(data), 50)


def test_the_folder_reader_falls_back_and_words_the_problem(tmp_path):
    from support.vectors import write_folder

    f = write_folder(tmp_path / "vec", [("d1", "a"), ("d2", "b")], [("q1", "q")])
    lines = (f / "documents.jsonl").read_bytes().splitlines(keepends=True)
    (f / "documents.jsonl").write_bytes(lines[0] + b"\n" + lines[1])  # a blank line: row 1 is on line 3
    v = F.read_vectors(F.Place(str(tmp_path), str(tmp_path), "vec"), "test-model-1", Limits())
    assert v.documents.keys == ["d1", "d2"] and v.documents.line(1) == 3
    assert v.documents.hashes[1] == hashlib.sha256(b"b").hexdigest()
    (f / "documents.jsonl").write_bytes(lines[0] + lines[0])
    with pytest.raises(InputError) as info:
        F.read_vectors(F.Place(str(tmp_path), str(tmp_path), "vec"), "test-model-1", Limits())
    assert (info.value.file, info.value.line) == ("vec/documents.jsonl", 2) and "line 1" in info.value.message
