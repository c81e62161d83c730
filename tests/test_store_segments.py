"""A store's segment index (``segments/<name>.jsonl``) is read in one pass
when every line is as ``embed`` writes it, and line by line otherwise
(retrieval/dense/store.py ``_keys``): the two must agree on every input
(hypothesis generates the lines), and a line the one-pass reader cannot
take must never be taken silently."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_corpus_check.retrieval.dense.store import _keys, _slow_keys
from rag_corpus_check.safe_io import InputError, Limits, Sha256

DIGESTS = st.lists(st.binary(min_size=32, max_size=32), max_size=40)
STYLE = st.sampled_from([{}, {"separators": (",", ":")}, {"indent": None, "separators": (", ", ": ")}])


def _both(path) -> tuple:
    limits = Limits()
    try:
        fast = _keys(str(path), "seg.jsonl", limits)[0]
    except InputError as exc:
        fast = ("error", exc.line)
    try:
        slow = _slow_keys(str(path), "seg.jsonl", limits, Sha256())
    except InputError as exc:
        slow = ("error", exc.line)
    return fast, slow


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(digests=DIGESTS, style=STYLE, spoil=st.one_of(st.none(), st.tuples(st.integers(0, 39), st.sampled_from(
    ["upper", "short", "extra", "blank", "crlf"]))))
def test_the_one_pass_reader_and_the_line_reader_agree(tmp_path, digests, style, spoil):
    lines = [json.dumps({"sha256": d.hex()}, **style) + "\n" for d in digests]
    if spoil is not None and lines:
        at, how = spoil[0] % len(lines), spoil[1]
        hex_ = digests[at].hex()
        lines[at] = {"upper": lines[at].replace(hex_, hex_.upper()), "short": lines[at].replace(hex_, hex_[:-2]),
                     "extra": lines[at].replace("}", ', "x": 1}'), "blank": "\n" + lines[at],
                     "crlf": lines[at].replace("\n", "\r\n")}[how]
    path = tmp_path / "seg.jsonl"
    path.write_bytes("".join(lines).encode())
    fast, slow = _both(path)
    assert fast == slow
    if spoil is None:
        assert fast == digests


def test_the_one_pass_reader_hashes_the_file():
    import hashlib
    import tempfile

    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as f:
        data = b"".join(json.dumps({"sha256": bytes([i]).hex() * 32}).encode() + b"\n" for i in range(3))
        f.write(data)
    keys, digest = _keys(f.name, "seg.jsonl", Limits())
    assert digest == hashlib.sha256(data).hexdigest() and keys == [bytes([i]) * 32 for i in range(3)]


@pytest.mark.parametrize("data", [b'{"sha256": "' + b"a" * 64 + b'"}', b'{"sha256": "' + b"a" * 64 + b'"}\n\n'])
def test_a_file_that_does_not_end_like_embed_writes_it_is_read_line_by_line(tmp_path, data):
    path = tmp_path / "seg.jsonl"
    path.write_bytes(data)
    fast, slow = _both(path)
    assert fast == slow
