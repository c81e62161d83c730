"""Every input bounded in total and read in time linear in its size.

Work is counted, never timed: text scans done inside C string calls
(``str.count``, ``str.find``) are invisible to a line tracer
(tests/test_linear.py), so the JSON document readers here get a text whose
scans count the characters they pass over.
"""

import json

from rag_corpus_check import problems as P
from rag_corpus_check.inputs import foreign
from rag_corpus_check.inputs import gold as gold_reader
from rag_corpus_check.safe_io import Limits


class Counting(str):
    """A text that counts the characters its ``count`` and ``find`` scan."""

    scanned = 0

    def count(self, sub, start=0, end=None):  # type: ignore[override]
        stop = len(self) if end is None else min(end, len(self))
        Counting.scanned += max(0, stop - start)
        return str.count(self, sub, start, stop)

    def find(self, sub, start=0, end=None):  # type: ignore[override]
        stop = len(self) if end is None else min(end, len(self))
        at = str.find(self, sub, start, stop)
        Counting.scanned += max(0, (at + len(sub) if at >= 0 else stop) - start)
        return at


def _counting(monkeypatch, module):
    real = module.load_json_document

    def load(*args, **kwargs):
        doc, text = real(*args, **kwargs)
        return doc, Counting(text)

    Counting.scanned = 0
    monkeypatch.setattr(module, "load_json_document", load)


def test_json_gold_question_lines_are_found_in_one_pass(tmp_path, monkeypatch):
    # Before: `text.count("\n", 0, pos)` per question, from the start of the
    # file each time — 4,000 questions scanned ~1,000x the text (4 MiB: 103 CPU-s).
    queries = [{"query_id": f"q{i}", "query": "a question", "relevant": {"d1": 1}} for i in range(4000)]
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"queries": queries}, indent=1))
    _counting(monkeypatch, gold_reader)
    problems = P.Problems()
    gold = gold_reader.read_gold(str(path), "gold.json", "json", Limits(), problems)
    assert len(gold.queries) == 4000 and gold.queries["q3999"].line > 4000
    size = path.stat().st_size
    assert Counting.scanned <= 2 * size, (Counting.scanned, size)


def test_json_keys_written_with_escapes_are_found_in_one_pass(tmp_path, monkeypatch):
    # Ids written with `\u` escapes that json.dumps does not produce (upper-case
    # hex, an escaped ASCII letter): before, every such key was looked for to
    # the end of the file, twice (qrels-json of 1.1 MB: 18.9 CPU-s).
    n = 3000
    body = ",\n".join(f'"q\\u00E9{i}": {{"\\u0064{i}": 1, "\\u0064x{i}": 0}}' for i in range(n))
    path = tmp_path / "qrels.json"
    path.write_text("{\n" + body + "\n}\n")
    _counting(monkeypatch, foreign)
    problems = P.Problems()
    gold = foreign.read_qrels_json(str(path), "qrels.json", Limits(), problems, {})
    assert len(gold.queries) == n and not problems.items
    q = gold.queries[f"q\u00e9{n - 1}"]
    assert q.line == n + 1 and q.label_lines == {f"d{n - 1}": n + 1, f"dx{n - 1}": n + 1}
    size = path.stat().st_size
    assert Counting.scanned <= 2 * size, (Counting.scanned, size)


# ---------------------------------------------------------------- BM25: ties are work


class CountingId(str):
    """A document id that counts the comparisons made between ids."""

    compared = 0

    def __lt__(self, other):
        CountingId.compared += 1
        return str.__lt__(self, other)

    def __gt__(self, other):
        CountingId.compared += 1
        return str.__gt__(self, other)


def test_documents_tied_at_the_cut_are_selected_within_the_work_counted():
    # Before: every document tied at the depth-th score was sorted with its id
    # (25,000 ties x 8,000 questions: 438 CPU-s), and none of it was counted.
    from rag_corpus_check.retrieve import BM25Index, BM25Params

    index = BM25Index(BM25Params(depth=10))
    for i in range(5000):
        index.add(CountingId(f"d{i:05d}"), "x")
    index.finish()
    CountingId.compared = 0
    for i in range(20):
        assert index.search(f"x {i}", 10) == [f"d{j:05d}" for j in range(10)]
    assert index.work == 20 * (5000 + 5000)  # postings visited + candidates ranked
    assert CountingId.compared <= index.work, (CountingId.compared, index.work)


def test_bm25_work_is_bounded_by_the_text_it_was_given():
    # 25,000 documents `x` and questions `x <n>`: 1.13 MB that asked for 200M
    # postings (and the ties) within the default max_retrieval_work.
    import pytest

    from rag_corpus_check.retrieve import WORK_FLOOR, BM25Index, Budget, Bounds

    index = BM25Index(bounds=Bounds())
    for i in range(25_000):
        index.add(f"d{i}", "x")
    index.finish()
    with pytest.raises(Budget) as exc:
        for i in range(8000):
            index.search(f"x {i}")
    assert exc.value.limit == "max_retrieval_work_per_byte"
    assert "limits.max_retrieval_work_per_byte" in exc.value.message
    assert index.work <= WORK_FLOOR + 8 * index.text_chars + 2 * 25_000
    assert index.work_allowed < 5_000_000


# ---------------------------------------------------------------- invalid records: described up to the cap


def test_invalid_records_past_the_listed_ones_are_counted_without_jsonschema(tmp_path, monkeypatch):
    # Before: jsonschema ran on each of 100,000 invalid lines (a 13 KB gzip: 33 CPU-s).
    from rag_corpus_check import schemas
    from rag_corpus_check.inputs import validity

    calls = []
    real = schemas.errors

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(validity, "errors", counted)
    path = tmp_path / "gold.jsonl"
    path.write_text('{"query_id": "q", "relevant": {"d1": "x"}}\n' * 2000
                    + '{"query_id": "ok", "relevant": {"d1": 1}}\n')
    problems = P.Problems()
    gold = gold_reader.read_gold(str(path), "gold.jsonl", "jsonl", Limits(), problems)
    assert len(calls) == problems.per_file_cap
    assert problems.error_count() == 2000 and problems.dropped == {"gold.jsonl (errors)": 2000 - 50}
    assert list(gold.queries) == ["ok"]  # a valid record after the cap is still read
