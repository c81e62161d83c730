"""Coverage-guided fuzzing (atheris, libFuzzer) of what reads and writes
untrusted text: the JSONL, YAML, JSON and TREC readers, the fast JSONL
blocks and corpus reader against the exact ones, and the escaping for the
log, annotations and the Markdown summary. Targets: 0 JSONL, 1-2 YAML
(libyaml, pure), 3 JSON document, 4 qrels and CSV gold (through a field map), 5 TREC run, 7 fast JSONL blocks,
8 fast corpus, 9 fast TREC run, 6 escaping and the fast row index of a vectors folder.

The first input byte picks a target (the seeds start with its digit), the
rest is its input. A finding is any
exception other than ``InputError`` from a reader (a crash, a RecursionError,
an IndexError inside PyYAML...) or a broken promise of the escaping (a line
break, a ``::`` or ``##[`` in its output, a table cell that splits a row).

Run (Linux x86-64, Python 3.12/3.13, ``pip install atheris``)::

    python fuzz/fuzz_loaders.py -max_total_time=600 fuzz-corpus/ fuzz/seeds/

``tests/test_hostile_fuzz.py`` runs it for a bounded time in CI.
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "check"))

with atheris.instrument_imports(include=["rag_corpus_check", "yaml"]):
    import yaml

    from rag_corpus_check.config.load import Fields
    from rag_corpus_check.core import problems as P
    from rag_corpus_check.core.text import safe_text
    from rag_corpus_check.inputs import corpus as exact_corpus
    from rag_corpus_check.inputs import fast as fast_readers
    from rag_corpus_check.inputs import fast_trec
    from rag_corpus_check.inputs.fieldmap import Reading
    from rag_corpus_check.inputs.gold import read_gold
    from rag_corpus_check.inputs.run import read_run
    from rag_corpus_check.report.github import command
    from rag_corpus_check.report.markdown import Summary, cell
    from rag_corpus_check.retrieval.dense import folder as dense_folder
    from rag_corpus_check.retrieval.dense.index import read_index
    from rag_corpus_check.safe_io import (
        InputError,
        Limits,
        Sha256,
        iter_jsonl,
        load_json_document,
        load_yaml,
        yamltext,
    )
    from rag_corpus_check.safe_io.scanner import Slow, jsonl_blocks, thaw

LIMITS = Limits(max_line_bytes=1 << 16, max_records=10_000)
WORK = tempfile.mkdtemp(prefix="rcc-fuzz-")
LOADERS = [getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader]


def _file(name: str, data: bytes) -> str:
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _plain(value, depth=0) -> None:
    if depth > 300:
        raise AssertionError("nesting deeper than the loaders allow")
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise AssertionError(f"non-string key {type(k)}")
            k.encode("utf-8")
            _plain(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _plain(v, depth + 1)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise AssertionError("non-finite number")
    elif isinstance(value, str):
        value.encode("utf-8")  # no lone surrogates
    elif not (value is None or isinstance(value, bool | int)):
        raise AssertionError(f"not a plain value: {type(value)}")


def _clean(exc: InputError) -> None:
    m = exc.message
    if "\n" in m or "\r" in m or "::" in m or "##[" in m:
        raise AssertionError(f"unsafe message {m!r}")


def _escaped(s: str) -> None:
    for bad in ("\n", "\r", "\u2028", "\u2029", "\x85", "::", "##["):
        if bad in s:
            raise AssertionError(f"{bad!r} in escaped text {s!r}")


def target_jsonl(data: bytes) -> None:
    try:
        for _, value in iter_jsonl(_file("f.jsonl", data), "f.jsonl", LIMITS):
            _plain(value)
    except InputError as exc:
        _clean(exc)


def target_yaml(data: bytes, loader) -> None:
    yamltext._YAML_LOADER = loader
    try:
        _plain(load_yaml(data, "f.yaml", LIMITS))
    except InputError as exc:
        _clean(exc)


def target_json_document(data: bytes) -> None:
    try:
        value, _ = load_json_document(_file("f.json", data), "f.json", LIMITS)
        _plain(value)
    except InputError as exc:
        _clean(exc)


def target_trec(data: bytes, fmt: str) -> None:
    problems = P.Problems()
    try:
        if fmt == "qrels":
            read_gold(_file("f.qrels", data), "f.qrels", "qrels", LIMITS, problems)
        else:
            read_run(_file("f.trec", data), "f.trec", "trec", LIMITS, problems)
    except InputError as exc:
        _clean(exc)
    for p in problems.items:
        if p.id is not None:
            _escaped(p.id)


CSV_READING = Reading(Fields((("query_id", "id"), ("query", "question"), ("relevant", "docs"))), 2)


def target_csv_gold(data: bytes) -> None:
    """A CSV gold file through a field map: problems or an InputError, never another exception."""
    problems = P.Problems()
    try:
        read_gold(_file("f.csv", data), "f.csv", "csv", LIMITS, problems, reading=CSV_READING)
    except InputError as exc:
        _clean(exc)
    for p in problems.items:
        if p.id is not None:
            _escaped(p.id)


def target_fast_jsonl(data: bytes) -> None:
    """The fast block reader gives up, or yields what iter_jsonl yields."""
    path = _file("f.jsonl", data)
    try:
        fast = [thaw(v) for _, _, values in jsonl_blocks(path, "f.jsonl", LIMITS) for v in values]
    except Slow:
        return
    except InputError as exc:
        _clean(exc)
        return
    exact = [v for _, v in iter_jsonl(path, "f.jsonl", LIMITS)]
    if fast != exact:
        raise AssertionError("fast and exact JSONL readers disagree")


def target_fast_corpus(data: bytes) -> None:
    """The fast corpus reader gives up, or returns what the exact one does
    with no problem reported."""
    path = _file("c.jsonl", data)
    try:
        fast = fast_readers.read_corpus(path, "c.jsonl", LIMITS, None)
    except Slow:
        return
    except InputError as exc:
        _clean(exc)
        return
    problems = P.Problems()
    exact = exact_corpus.read_corpus(path, "c.jsonl", LIMITS, problems, None, None)
    same = (fast.docs == exact.docs and fast.inactive == exact.inactive
            and fast.snapshots == exact.snapshots and fast.fingerprint == exact.fingerprint
            and all(fast.line(d) == exact.line(d) for d in exact.docs))
    if problems.items or not same:
        raise AssertionError("fast and exact corpus readers disagree")


def target_fast_trec(data: bytes) -> None:
    """The fast TREC run reader gives up, or returns what the exact one does
    with no problem reported, in both orders."""
    path = _file("f.trec", data)
    for order in ("descending", "ascending"):
        try:
            fast = fast_trec.read_run(path, "f.trec", LIMITS, None, order)
        except Slow:
            continue
        except InputError as exc:
            _clean(exc)
            return
        problems = P.Problems()
        exact = read_run(path, "f.trec", "trec", LIMITS, problems, None, order)
        if problems.items or list(fast.queries.items()) != list(exact.queries.items()):
            raise AssertionError("fast and exact TREC run readers disagree")


def target_fast_index(data: bytes) -> None:
    """The fast row index reader of a vectors folder gives up, or returns
    what the line-by-line reader does, which refuses nothing."""
    path = _file("i.jsonl", data)
    key = "query_id" if data[:1] == b"q" else "id"
    fast_hasher, exact_hasher = Sha256(), Sha256()
    try:
        ids, digests = read_index(path, "i.jsonl", LIMITS, fast_hasher, key)
    except Slow:
        return
    except InputError as exc:
        _clean(exc)
        return
    rows = dense_folder.Rows("i.npy", "i.jsonl")
    rows.lines, rows._row_of = dense_folder.array("q"), {}
    for line, rec in iter_jsonl(path, "i.jsonl", LIMITS, hasher=exact_hasher):
        dense_folder._add_row(rows, key, rec, line)
    same = (ids == rows.keys and bytes(digests) == bytes(rows.digests)
            and list(rows.lines) == list(range(1, len(ids) + 1)) and fast_hasher.hexdigest() == exact_hasher.hexdigest())
    if not same:
        raise AssertionError("fast and exact row index readers disagree")


def target_escaping(data: bytes) -> None:
    s = data.decode("utf-8", "surrogateescape")
    _escaped(safe_text(s, 1 + len(data) % 300))
    line = command("error", s, file=s, line=1, title=s)
    if "\n" in line or "\r" in line or line.count("::") != 2:
        raise AssertionError(f"annotation {line!r}")
    c = cell(s)
    table = Summary().table(["a", "b"], [[c, c]]).render().strip().split("\n")
    if len(table) != 3:
        raise AssertionError(f"table rows {table!r}")


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    which, body = (data[0] - ord("0")) % 10, data[1:]  # seeds start with the digit
    if which == 0:
        target_jsonl(body)
    elif which in (1, 2):
        target_yaml(body, LOADERS[which - 1])
    elif which == 3:
        target_json_document(body)
    elif which == 4:
        target_trec(body, "qrels")
        target_csv_gold(body)
    elif which == 5:
        target_trec(body, "trec")
    elif which == 7:
        target_fast_jsonl(body)
    elif which == 8:
        target_fast_corpus(body)
    elif which == 9:
        target_fast_trec(body)
    else:
        target_escaping(body)
        target_fast_index(body)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
