"""The fast JSONL readers (issue 6) against the exact ones.

A fast reader either gives up (:class:`Slow`) or returns exactly what the
exact reader returns for the same file — same documents, lines, statuses,
fingerprint, questions, rankings and file digest — with the exact reader
reporting no problem at all. The exact reader stays the one that words every
message. Checked on generated files that mix valid lines with every kind of
trouble, on the whole JSONTestSuite, at the limits, and across block edges.
"""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from rag_corpus_check import inputs
from rag_corpus_check.core.problems import Problems
from rag_corpus_check.inputs import Source, checks, fast
from rag_corpus_check.inputs import corpus as exact_corpus
from rag_corpus_check.inputs import gold as exact_gold
from rag_corpus_check.inputs import run as exact_run
from rag_corpus_check.safe_io import InputError, Limits, Sha256, iter_jsonl
from rag_corpus_check.safe_io.scanner import BLOCK, Slow, jsonl_blocks, thaw

LIMITS = Limits()


def _exact(kind, path, limits):
    problems = Problems()
    h = Sha256()
    try:
        if kind == "corpus":
            out = exact_corpus.read_corpus(path, "f.jsonl", limits, problems, None, h)
        elif kind == "gold":
            out = exact_gold.read_gold(path, "f.jsonl", "jsonl", limits, problems, h)
        else:
            out = exact_run.read_run(path, "f.jsonl", "jsonl", limits, problems, h)
    except InputError as exc:
        return None, problems, exc.message
    return out, problems, h.hexdigest()


def _fast(kind, path, limits):
    h = Sha256()
    reader = {"corpus": fast.read_corpus, "gold": fast.read_gold, "run": fast.read_run}[kind]
    try:
        return reader(path, "f.jsonl", limits, h), h.hexdigest()
    except Slow:
        return None, None
    except InputError as exc:  # refused before any line (open_regular): the same for both
        return "refused", exc.message


def _view(kind, out):
    if kind == "corpus":
        return (out.docs, {d: out.line(d) for d in out.docs}, out.inactive, out.snapshots, out.fingerprint, out.blank)
    if kind == "gold":
        return {q: (g.line, g.relevant, g.label_lines, g.text, g.snapshot) for q, g in out.queries.items()}
    return {q: (r.line, r.ranking, r.snapshot) for q, r in out.queries.items()}


def same_or_slow(kind, path, limits=LIMITS) -> bool:
    """The property; True when the fast reader took the file."""
    fast, fast_digest = _fast(kind, path, limits)
    exact, problems, digest = _exact(kind, path, limits)
    if fast == "refused":
        assert exact is None and digest == fast_digest
        return False
    if fast is None:
        return False
    assert exact is not None and not problems.items, [p.message for p in problems.items]
    assert _view(kind, fast) == _view(kind, exact)
    assert fast_digest == digest
    return True


# ---------------------------------------------------------------- generated files

IDS = ["d1", "d2", "d3", "doc-é", "a" * 512, "a" * 513, "", "x\ny", "q\u2028"]
texts = st.one_of(st.sampled_from(["", "t", "ä", "x\x00", "Note: a \"quote\" \\ back", "😀", "\ud83d"]),
                  st.text(max_size=12))
scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 1003), st.floats(allow_nan=False), texts)
nested = st.recursive(scalar, lambda c: st.one_of(st.lists(c, max_size=2),
                                                  st.dictionaries(texts, c, max_size=2)), max_leaves=4)


def _opt(good):
    return st.one_of(good, good, good, nested)


RECORDS = {
    "corpus": st.fixed_dictionaries(
        {"id": _opt(st.sampled_from(IDS)), "text": _opt(texts)},
        optional={"title": _opt(texts), "type": _opt(st.sampled_from(["faq", "", "t" * 101, "a\tb"])),
                  "status": _opt(st.sampled_from(["active", "stale", "restricted", "gone"])),
                  "snapshot": _opt(st.sampled_from(["s1", "s2", "", "s" * 201])),
                  "metadata": nested, "extra": scalar}),
    "gold": st.fixed_dictionaries(
        {"query_id": _opt(st.sampled_from(["q1", "q2", "q3", "", "q\x01"])),
         "relevant": _opt(st.dictionaries(st.sampled_from(IDS), _opt(st.integers(-1, 1001)), max_size=3))},
        optional={"query": _opt(texts), "snapshot": _opt(st.sampled_from(["s1", ""])), "metadata": nested,
                  "relevance": scalar}),
    "run": st.fixed_dictionaries(
        {"query_id": _opt(st.sampled_from(["q1", "q2", "q3", "", "q\x01"])),
         "ranking": _opt(st.lists(_opt(st.sampled_from(IDS)), max_size=4))},
        optional={"snapshot": _opt(st.sampled_from(["s1", ""])), "score": scalar}),
}


def _line(rec, how: str) -> bytes:
    text = json.dumps(rec, ensure_ascii=how == "ascii")
    if how == "dupkey" and text.startswith("{") and len(text) > 2:
        k, v = next(iter(rec.items()))
        text = "{" + json.dumps(k) + ": " + json.dumps(v) + ", " + text[1:]
    elif how == "nested-dup":
        text = text[:-1] + (", " if len(text) > 2 else "") + '"metadata": {"a": 1, "a": 2}}'
    elif how == "inner-dup" and '": {"' in text:
        i = text.index('": {"') + 4
        text = text[:i] + '"d1": 1, "d1": 2, ' + text[i:]
    elif how == "escaped-key" and '"id"' in text:
        text = text.replace('"id"', '"\\u0069d"', 1)
    elif how == "trailing":
        text += " "
    elif how == "leading":
        text = "\t" + text
    elif how == "garbage":
        text = text[: len(text) // 2]
    elif how == "array":
        text = "[" + text + "]"
    elif how == "nan":
        text = text[:-1] + (", " if len(text) > 2 else "") + '"extra": NaN}'
    elif how == "huge":
        text = text[:-1] + (", " if len(text) > 2 else "") + '"extra": 1e400}'
    elif how == "lone":
        text = text[:-1] + (", " if len(text) > 2 else "") + '"extra": "\\udc00"}'
    elif how == "pair":
        text = text[:-1] + (", " if len(text) > 2 else "") + '"title": "\\ud83d\\ude00"}'
    data = text.encode("utf-8", "surrogatepass")
    if how == "badutf8":
        data = data[:-1] + b"\xff}"
    return data


TEXT_FAULTS = ["dupkey", "nested-dup", "inner-dup", "escaped-key", "trailing", "leading", "garbage", "array",
               "nan", "huge", "lone", "badutf8"]
HOW = ["plain"] * 12 + ["ascii", "dupkey", "nested-dup", "inner-dup", "escaped-key", "trailing", "leading", "garbage",
                        "array", "nan", "huge", "lone", "pair", "badutf8"]
ENDS = [b"\n"] * 8 + [b"\r\n", b"\r", b"\n\n", b"\n \n", b"\n\t\r\n"]


GOOD_IDS = st.sampled_from(["d1", "d2", "d3", "d4", "doc-é"])
CLEAN = {
    "corpus": st.fixed_dictionaries(
        {"id": GOOD_IDS, "text": texts},
        optional={"title": texts, "type": st.sampled_from(["faq", "howto"]),
                  "status": st.sampled_from(["active", "stale", "restricted"]),
                  "snapshot": st.sampled_from(["s1", "s2"]), "metadata": st.dictionaries(texts, nested, max_size=2)}),
    "gold": st.fixed_dictionaries(
        {"query_id": st.sampled_from(["q1", "q2", "q3"]),
         "relevant": st.dictionaries(GOOD_IDS, st.integers(0, 3), max_size=3)},
        optional={"query": texts, "snapshot": st.just("s1"), "metadata": st.dictionaries(texts, nested, max_size=2)}),
    "run": st.fixed_dictionaries(
        {"query_id": st.sampled_from(["q1", "q2", "q3"]),
         "ranking": st.lists(GOOD_IDS, max_size=4, unique=True)},
        optional={"snapshot": st.just("s1")}),
}


# One wrong value per field: a clean file with exactly one of these must
# never be taken by the fast reader.
_BAD = ["", None, 1, 1.5, True, [], {}, ["x"], "x\x00", "a" * 513]
ONE_FAULT = {
    "corpus": {"id": _BAD + ["\u2028", "a\u0085"], "text": [None, 1, [], {}], "title": [None, 1, [], "t" * 10_001],
               "type": _BAD + ["t" * 101, "a\tb"], "status": _BAD + ["gone", "Active"],
               "snapshot": _BAD + ["s" * 201], "metadata": [None, 1, "x", []], "extra": [1], "ID": ["d"]},
    "gold": {"query_id": _BAD + ["\u2028"], "relevant": [None, [], {"d1": -1}, {"d1": 1001}, {"d1": 1.0}, {"d1": True},
                                            {"": 1}, {"x\x00": 1}, {"d1": None}, {"d1": "1"}],
             "query": [None, 1, "q" * 100_001], "snapshot": _BAD, "metadata": [None, 1, []], "relevance": [1]},
    "run": {"query_id": _BAD + ["\u2028"], "ranking": [None, "d1", {}, [1], [None], [""], ["a" * 513], ["x\ny"], [["d1"]],
                                          ["d1", "d1"]],
            "snapshot": _BAD, "score": [1]},
}


@st.composite
def _one_fault(draw, kind):
    key_of = "id" if kind == "corpus" else "query_id"
    lines = draw(st.lists(st.tuples(CLEAN[kind], st.just("plain"), st.just(b"\n")), min_size=1, max_size=3,
                          unique_by=lambda t: t[0][key_of]))
    rec = dict(draw(CLEAN[kind]))
    rec[key_of] = "only-once"  # the one fault is the only thing wrong
    how = draw(st.sampled_from(["plain"] * len(TEXT_FAULTS) + TEXT_FAULTS))
    if how == "plain":
        key = draw(st.sampled_from(sorted(ONE_FAULT[kind])))
        rec[key] = draw(st.sampled_from(ONE_FAULT[kind][key]))
    elif how == "inner-dup" and kind == "corpus":
        rec["metadata"] = {"k": 1}
    lines.insert(draw(st.integers(0, len(lines))), (rec, how, b"\n"))
    return lines, False, True


def _file(kind):
    """Clean files (valid values, LF or CRLF; duplicates still happen), clean
    files with one wrong value, and anything."""
    clean = st.tuples(CLEAN[kind], st.sampled_from(["plain", "ascii", "pair"]), st.sampled_from([b"\n", b"\r\n"]))
    messy = st.tuples(RECORDS[kind], st.sampled_from(HOW), st.sampled_from(ENDS))
    return st.one_of(
        st.tuples(st.lists(clean, min_size=1, max_size=4), st.just(False), st.booleans()),
        _one_fault(kind),
        st.tuples(st.lists(messy, min_size=1, max_size=8), st.booleans(), st.booleans()),
    )


def _write(tmp_path, parts, bom, final_newline) -> str:
    data = b"".join(_line(rec, how) + end for rec, how, end in parts)
    if not final_newline:
        data = data.rstrip(b"\r\n")
    if bom:
        data = b"\xef\xbb\xbf" + data
    p = tmp_path / "f.jsonl"
    p.write_bytes(data)
    return str(p)


@pytest.mark.parametrize("kind", ["corpus", "gold", "run"])
def test_fast_equals_exact_or_gives_up(kind, tmp_path):
    taken = [0, 0]

    @settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(_file(kind))
    def check(f):
        path = _write(tmp_path, *f)
        taken[same_or_slow(kind, path)] += 1

    check()
    # Both ways were exercised, many times.
    assert taken[True] > 25 and taken[False] > 100, taken


@pytest.mark.parametrize("kind", ["corpus", "gold", "run"])
def test_fast_reader_takes_clean_files(kind, tmp_path):
    """Not only safe but used: a clean file (LF or CRLF, with or without the
    last line end, non-ASCII text) goes the fast way."""
    rng = random.Random(6)
    recs = {
        "corpus": [{"id": f"d{i}", "text": "é " * rng.randrange(1, 50), "type": rng.choice(["faq", "howto"]),
                    "status": rng.choice(["active", "active", "stale"]), "metadata": {"k": [1, {"a": None}]}}
                   for i in range(3000)],
        "gold": [{"query_id": f"q{i}", "query": "why?", "relevant": {f"d{j}": rng.randrange(3) for j in range(4)}}
                 for i in range(3000)],
        "run": [{"query_id": f"q{i}", "ranking": [f"d{j}" for j in rng.sample(range(3000), 20)]}
                for i in range(3000)],
    }[kind]
    for end in (b"\n", b"\r\n"):
        for last in (True, False):
            data = b"".join(json.dumps(r, ensure_ascii=False).encode() + end for r in recs)
            assert len(data) > 3 * BLOCK  # several blocks, lines cut at block edges
            (tmp_path / "f.jsonl").write_bytes(data if last else data.rstrip(b"\r\n"))
            assert same_or_slow(kind, str(tmp_path / "f.jsonl"))


# ---------------------------------------------------------------- limits and block edges


@pytest.mark.parametrize("limits,fast", [
    (Limits(max_records=100), True),
    (Limits(max_records=99), False),
    (Limits(max_line_bytes=2000), True),
    (Limits(max_line_bytes=25), False),  # the longest lines have 26 bytes
    (Limits(max_file_bytes=2000), False),
])
def test_limits_hand_over_to_the_exact_reader(tmp_path, limits, fast):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"".join(b'{"id": "d%d", "text": "t"}\n' % i for i in range(100)))
    assert same_or_slow("corpus", str(p), limits) is fast
    if not fast:
        exact, problems, _ = _exact("corpus", str(p), limits)
        assert exact is None or problems.items  # the exact reader refuses it, and says why


def test_a_problem_after_many_blocks_is_found_and_hashed_once(tmp_path):
    """The fast reader hashed blocks before it gave up; read_corpus restarts
    the digest, so the provenance is still the file's SHA-256."""
    import hashlib

    lines = [b'{"id": "d%d", "text": "%s"}' % (i, b"w " * 40) for i in range(5000)]
    lines.append(lines[10])  # a duplicate id, far past the first block
    data = b"\n".join(lines) + b"\n"
    p = tmp_path / "f.jsonl"
    p.write_bytes(data)
    problems = Problems()
    h = Sha256()
    corpus = inputs.read_corpus(Source(str(p), "f.jsonl"), LIMITS, problems, hasher=h)
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()
    assert [(x.line, x.id) for x in problems.items] == [(5001, "d10")]
    assert "first on line 11" in problems.items[0].message
    assert len(corpus.docs) == 5000


def test_a_line_longer_than_a_block(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b'{"id": "a", "text": "%s"}\n{"id": "b", "text": "t"}\n' % (b"x" * (3 * BLOCK)))
    assert same_or_slow("corpus", str(p))


# ---------------------------------------------------------------- JSONTestSuite

SUITE = json.loads((ROOT / "tests" / "fixtures" / "jsontestsuite" / "parsing.json").read_text(encoding="utf-8"))


def _suite_text(case) -> str:
    if "input" in case:
        return case["input"]
    r = case["repeat"]
    return r["text"] * r["times"] + r["suffix"]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in SUITE])
def test_jsontestsuite_block_reader_agrees(case, tmp_path):
    """Every parsing case as a one-line file: the block reader gives up, or
    yields what iter_jsonl yields (and iter_jsonl accepts the file)."""
    p = tmp_path / "case.jsonl"
    p.write_bytes(_suite_text(case).encode("utf-8", "surrogatepass"))
    try:
        got = [thaw(v) for _, _, values in jsonl_blocks(str(p), "case.jsonl", LIMITS) for v in values]
    except Slow:
        return
    expected = [v for _, v in iter_jsonl(str(p), "case.jsonl", LIMITS)]
    assert got == expected
    assert case["name"][0] != "n" or not expected  # an n_ case only as "no data"


GOOD = {
    "corpus": {"id": "d1", "text": "t", "title": "T", "type": "faq", "status": "active", "snapshot": "s1",
               "metadata": {"k": [1]}},
    "gold": {"query_id": "q1", "query": "why?", "relevant": {"d1": 1, "d2": 0}, "snapshot": "s1",
             "metadata": {"k": 1}},
    "run": {"query_id": "q1", "ranking": ["d1", "d2"], "snapshot": "s1"},
}


@pytest.mark.parametrize("kind,key,bad", [
    pytest.param(kind, key, bad, id=f"{kind}-{key}-{i}")
    for kind, faults in ONE_FAULT.items() for key, values in faults.items() for i, bad in enumerate(values)
] + [pytest.param(kind, None, how, id=f"{kind}-{how}") for kind in GOOD for how in TEXT_FAULTS])
@pytest.mark.parametrize("layout", ["same-keys", "other-order"])
def test_every_single_fault_makes_the_fast_reader_give_up(kind, key, bad, layout, tmp_path):
    """Each wrong value (and each text-level fault) alone, in an otherwise
    valid file: the exact reader reports it, the fast reader never takes it.
    With the other line's keys in the same order the block's records have
    one shape (the column path of inputs.checks); in another order, not (the
    dict path)."""
    rec = dict(GOOD[kind])
    how = "plain"
    if key is None:
        how = bad
    else:
        rec[key] = bad
    key_of = "id" if kind == "corpus" else "query_id"
    other = dict(GOOD[kind], **{key_of: "other"})
    if layout == "other-order":
        other = dict(reversed(other.items()))
    p = tmp_path / "f.jsonl"
    p.write_bytes(_line(other, "plain") + b"\n" + _line(rec, how) + b"\n")
    exact, problems, _ = _exact(kind, str(p), LIMITS)
    faulty = exact is None or bool(problems.items)
    # Every wrong value is one; of the text faults, spaces around a line are
    # valid JSON (the fast reader leaves them to the exact one all the same)
    # and a few do not apply to every kind (no `id` key, no nested object).
    assert faulty or (key is None and how in ("trailing", "leading", "escaped-key", "inner-dup"))
    taken = same_or_slow(kind, str(p))
    assert not taken if faulty or how in ("trailing", "leading") else taken


def test_corpus_fingerprint_is_order_free_and_follows_its_definition(tmp_path):
    """sha256(count ‖ Σ sha256(line) mod 2^256), first 16 hex digits; the
    same from both readers, for any line order and line ends."""
    import hashlib

    lines = [b'{"id": "d%d", "text": "t %d"}' % (i, i * i) for i in range(3000)]
    total = sum(int.from_bytes(hashlib.sha256(x).digest(), "big") for x in lines) % (1 << 256)
    want = "sha256:" + hashlib.sha256((3000).to_bytes(8, "big") + total.to_bytes(32, "big")).hexdigest()[:16]
    p = tmp_path / "c.jsonl"
    seen = set()
    for order, end in ((lines, b"\n"), (lines[::-1], b"\n"), (sorted(lines), b"\r\n")):
        p.write_bytes(end.join(order) + end)
        for reader in ("fast", "exact"):
            if reader == "fast":
                corpus = fast.read_corpus(str(p), "c.jsonl", LIMITS, None)
            else:
                corpus = exact_corpus.read_corpus(str(p), "c.jsonl", LIMITS, Problems(), None, None)
            seen.add(corpus.fingerprint)
    assert seen == {want}
    p.write_bytes(b"\n".join([*lines[:-1], lines[-1].replace(b"t ", b"T ")]) + b"\n")
    assert fast.read_corpus(str(p), "c.jsonl", LIMITS, None).fingerprint != want


def test_blocks_of_one_shape_are_read_as_columns(tmp_path, monkeypatch):
    """Lines that all have the same keys in the same order (what an export
    writes) are checked column by column, without a dict per line; a block
    of mixed shapes goes through dicts. Both give the exact reader's result."""
    calls = []
    real = checks.dict_columns
    monkeypatch.setattr(checks, "dict_columns", lambda *a: calls.append(1) or real(*a))
    rows = [{"id": f"d{i}", "title": "T", "text": "t", "type": "faq", "status": "stale", "snapshot": "s1",
             "metadata": {"k": [1]}} for i in range(3000)]
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
    assert same_or_slow("corpus", str(p))
    assert calls == []
    rows[1500] = dict(reversed(rows[1500].items()))
    del rows[2000]["status"], rows[2500]["title"]
    p.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
    assert same_or_slow("corpus", str(p))
    assert len(calls) == 3  # the blocks of lines 1501, 2001 and 2501 (~430 lines a block)
    fast, _ = _fast("corpus", str(p), LIMITS)
    assert fast.inactive == {f"d{i}" for i in range(3000)} - {"d2000"}


@pytest.mark.parametrize("kind,lines", [
    ("corpus", [b'{"id": "d1", "text": "t", "type": null}', b'{"id": "d2", "text": "t", "type": null}']),
    ("corpus", [b'{"id": "d1", "text": "t", "metadata": null}', b'{"id": "d2", "text": "t", "metadata": null}']),
    ("corpus", [b'{"id": "d1", "id": "d1", "text": "t"}', b'{"id": "d2", "id": "d2", "text": "t"}']),
    ("corpus", [b'{"id": "d1", "text": "t", "status": null}', b'{"id": "d2", "text": "t"}']),
    ("gold", [b'{"query_id": "q1", "relevant": {"d1": 1, "d2": true}}']),
    ("gold", [b'{"query_id": "q1", "relevant": {"d1": 1}}', b'{"query_id": "q2", "relevant": {"d1": 1.0}}']),
    ("gold", [b'{"query_id": "q1", "relevant": {"d1": 1, "d1": 2}}', b'{"query_id": "q2", "relevant": {"d1": 1, "d1": 2}}']),
    ("gold", [b'{"query_id": "q1", "query": null, "relevant": {}}', b'{"query_id": "q2", "query": null, "relevant": {}}']),
    ("gold", [b'{"query_id": "q1", "relevant": {"": 1}}', b'{"query_id": "q2", "relevant": {"d1": 1001}}']),
    ("run", [b'{"query_id": "q1", "ranking": ["d1"], "snapshot": null}'] * 2),
    ("run", [b'{"query_id": "q1", "ranking": [1]}', b'{"query_id": "q2", "ranking": ["d1"]}']),
    ("run", [b'{"query_id": "q1", "ranking": [["d1"]]}', b'{"query_id": "q2", "ranking": ["d1"]}']),
    ("run", [b'{"query_id": "q1", "ranking": [{"d": ["x"]}]}']),
    ("run", [b'{"query_id": "q1", "ranking": ["d1", "d2"]}', b'{"query_id": "q2", "ranking": ["d2", "d2"]}']),
])
def test_faults_every_line_shares_are_not_taken(kind, lines, tmp_path):
    """The column path sees a whole column at once: a JSON null or a repeated
    key on every line, a ranked id that is not a string (checked once per
    distinct id, at the end) or ranked twice."""
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    exact, problems, _ = _exact(kind, str(p), LIMITS)
    assert exact is None or problems.items
    assert not same_or_slow(kind, str(p))


@pytest.mark.parametrize("data", [
    # a value spread over two lines (a line end is a space to JSON)
    b'{"id": "d0", "text": "t"}\n{"id": "d1",\n"text": "t"}\n{"id": "d2", "text": "t"}\n',
    # ... and one more value on a line, so the count of line ends still fits
    b'{"id": "d0", "text": "t"} {"id": "d1",\n"text": "t"}\n{"id": "d2", "text": "t"}\n',
    b'{"id": "d0", "text": "t"}{"id": "d1", "text": "t"}\n',
    b'{"id": "d0", "text": "t"}\n\n{"id": "d1", "text": "t"}',
])
@pytest.mark.parametrize("ascii_only", [True, False])
def test_lines_that_are_not_one_value_each_are_not_taken(data, ascii_only, tmp_path):
    """An ASCII block is scanned in place, value after value; each value must
    end its line and each line end must close a value. (A block with other
    characters is split into lines first.)"""
    if not ascii_only:
        data = data.replace(b'"t"', '"é"'.encode())
    p = tmp_path / "f.jsonl"
    p.write_bytes(data)
    exact, problems, _ = _exact("corpus", str(p), LIMITS)
    assert exact is None or problems.items or b"\n\n" in data  # a blank line is valid, and unusual
    assert not same_or_slow("corpus", str(p))


def test_what_a_fast_reader_built_is_frozen_for_the_gc(tmp_path):
    """The cyclic GC is paused while reading and then freezes what was read:
    later collections (evaluation, report) do not walk a million ranked ids
    again. The GC is on again afterwards, and off if it was off."""
    import gc

    p = tmp_path / "f.jsonl"
    p.write_text("".join(f'{{"query_id": "q{i}", "ranking": ["d1", "d2"]}}\n' for i in range(2000)))
    gc.unfreeze()
    try:
        run = inputs.read_run(Source(str(p), "f.jsonl", "jsonl"), LIMITS, Problems())
        assert gc.isenabled() and len(run.queries) == 2000
        assert gc.get_freeze_count() >= 2000  # the rankings at least
        first = next(iter(run.queries.values())).ranking
        assert not any(o is first for o in gc.get_objects())  # not in any generation the GC walks
        gc.disable()
        inputs.read_run(Source(str(p), "f.jsonl", "jsonl"), LIMITS, Problems())
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
