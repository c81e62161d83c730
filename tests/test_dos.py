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
