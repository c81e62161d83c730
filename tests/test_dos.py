"""Every input bounded in total and read in time linear in its size.

Work is counted, never timed: text scans done inside C string calls
(``str.count``, ``str.find``) are invisible to a line tracer
(tests/test_linear.py), so the JSON document readers here get a text whose
scans count the characters they pass over.
"""

import json
import re

import pytest

from rag_corpus_check.core import problems as P
from rag_corpus_check.inputs import foreign
from rag_corpus_check.inputs import gold as gold_reader
from rag_corpus_check.safe_io import Limits
from rag_corpus_check.safe_io.paths import RATIO_ALLOWANCE


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
    from rag_corpus_check.retrieval.bm25 import BM25Index, BM25Params

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

    from rag_corpus_check.retrieval.bm25 import WORK_FLOOR, BM25Index, Bounds, Budget

    index = BM25Index(bounds=Bounds())
    for i in range(25_000):
        index.add(f"d{i}", "x")
    index.finish()
    with pytest.raises(Budget) as exc:
        for i in range(8000):
            index.search(f"x {i}")
    assert exc.value.limit == "max_retrieval_work_per_byte"
    assert "limits.max_retrieval_work_per_byte" in exc.value.message
    per_byte = Bounds().max_retrieval_work_per_byte
    assert index.work <= WORK_FLOOR + per_byte * index.text_chars + 2 * 25_000
    assert index.work_allowed < 5_000_000


# ---------------------------------------------------------------- invalid records: described up to the cap


def test_invalid_records_past_the_listed_ones_are_counted_without_jsonschema(tmp_path, monkeypatch):
    # Before: jsonschema ran on each of 100,000 invalid lines (a 13 KB gzip: 33 CPU-s).
    from rag_corpus_check.core import schemas
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


# ---------------------------------------------------------------- totals across files, gzip ratio


def _tree(tmp_path, config: str, files: dict) -> None:
    corpus = "".join(json.dumps({"id": f"d{i}", "text": f"document {i}"}) + "\n" for i in range(3))
    (tmp_path / "corpus.jsonl").write_text(corpus)
    (tmp_path / "run.jsonl").write_text(json.dumps({"query_id": "q0", "ranking": ["d0"]}) + "\n")
    for name, data in files.items():
        (tmp_path / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    (tmp_path / "c.yml").write_text("version: 1\nk: 1\ncorpus: corpus.jsonl\nrun: run.jsonl\n" + config)


def _check(tmp_path, capsys, monkeypatch):
    from rag_corpus_check.commands.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(["--config", "c.yml", "--quiet", "--no-github", "--output", "out/r.json",
                 "--summary-file", "out/s.md"])
    capsys.readouterr()
    return code, json.loads((tmp_path / "out" / "r.json").read_text())["problems"]


def _gold_lines(start: int, n: int) -> str:
    return "".join(json.dumps({"query_id": f"q{i}", "relevant": {"d1": 1}}) + "\n" for i in range(start, start + n))


def test_max_records_bounds_a_list_of_gold_files_together(tmp_path, capsys, monkeypatch):
    # Before: each file was held to max_records on its own: five of 999 lines passed `max_records: 1000`.
    files = {f"g{j}.jsonl": _gold_lines(j * 1000, 999) for j in range(5)}
    _tree(tmp_path, f"gold: [{', '.join(files)}]\nlimits: {{max_records: 1000}}\n", files)
    code, problems = _check(tmp_path, capsys, monkeypatch)
    assert code == 2
    p = problems[0]
    assert p["kind"] == "limit" and p["file"] == "g1.jsonl" and p["line"] == 2
    assert "more than 1000 records in the gold files together" in p["message"]
    assert "limits.max_records" in p["message"]


def test_questions_of_gold_documents_are_bounded_together(tmp_path, capsys, monkeypatch):
    yaml_gold = "queries:\n" + "".join(f"  - {{query_id: y{i}, relevant: {{d1: 1}}}}\n" for i in range(600))
    files = {"a.yaml": yaml_gold, "b.yaml": yaml_gold.replace(" y", " z")}
    _tree(tmp_path, "gold: [a.yaml, b.yaml]\nlimits: {max_records: 1000}\n", files)
    code, problems = _check(tmp_path, capsys, monkeypatch)
    assert code == 2 and problems[0]["kind"] == "limit" and problems[0]["file"] == "b.yaml"
    assert "more than 1000 questions in the gold files together" in problems[0]["message"]


class Unpacked:
    """The decompressed bytes every gzip stream handed out (counted in the
    standard library's GzipFile, whatever reads it)."""

    def __init__(self, monkeypatch):
        import gzip

        self.total = 0
        for name in ("read", "readline"):
            real = getattr(gzip.GzipFile, name)

            def count(gz, *args, _real=real, **kwargs):
                data = _real(gz, *args, **kwargs)
                self.total += len(data)
                return data

            monkeypatch.setattr(gzip.GzipFile, name, count)


def test_a_gzip_bomb_ends_at_the_compression_ratio(tmp_path, capsys, monkeypatch):
    # Before: a 6.3 MB gzip corpus of one repeated line decompressed to 2.3 GB
    # (2,097,152 "duplicate id" errors, 57 CPU-s) and no `limit` error.
    import gzip

    line = (json.dumps({"id": "a", "text": "x" * 1000}) + "\n").encode()
    bomb = gzip.compress(line * 40_000, 9, mtime=0)  # 40 MB from ~120 KB
    _tree(tmp_path, "gold: gold.jsonl\ncorpus: corpus.jsonl.gz\n", {"corpus.jsonl.gz": bomb,
                                                                   "gold.jsonl": _gold_lines(0, 1)})
    (tmp_path / "c.yml").write_text((tmp_path / "c.yml").read_text().replace("corpus: corpus.jsonl\n", ""))
    unpacked = Unpacked(monkeypatch)
    code, problems = _check(tmp_path, capsys, monkeypatch)
    assert code == 2
    limit = [p for p in problems if p["kind"] == "limit"]
    assert limit and limit[0]["file"] == "corpus.jsonl.gz" and "limits.max_compression_ratio" in limit[0]["message"]
    # The line being read: the first whose bytes pass the ratio of the compressed bytes gzip had
    # consumed by then (its read-ahead: 8 KiB a read up to Python 3.11, 128 KiB from 3.12).
    counted, packed = map(int, re.search(r"\((\d+) bytes counted from the first (\d+) compressed\)",
                                         limit[0]["message"]).groups())
    assert counted == limit[0]["line"] * len(line) > 8 * packed + RATIO_ALLOWANCE >= counted - len(line)
    assert unpacked.total < 8 * len(bomb) + 2 * 1024**2, unpacked.total  # the ratio, an allowance, a read's worth


def test_gzip_gold_files_are_held_to_the_ratio_together(tmp_path, capsys, monkeypatch):
    # Per file, each of these 12 gold files is within the allowance; together they are not.
    import gzip

    files = {f"g{j}.jsonl.gz": gzip.compress(b"\n" * 12_000, 9, mtime=0) for j in range(12)}  # 16 bytes a line
    _tree(tmp_path, f"gold: [{', '.join(files)}]\n", files)
    unpacked = Unpacked(monkeypatch)
    code, problems = _check(tmp_path, capsys, monkeypatch)
    assert code == 2 and problems[0]["kind"] == "limit", problems
    assert "in the gold files together" in problems[0]["message"] and "max_compression_ratio" in problems[0]["message"]
    assert problems[0]["file"] == "g1.jsonl.gz" and unpacked.total < 4 * 12_000  # two files, each read twice at most


def test_the_new_limits_are_rules_the_base_holds(tmp_path):
    # A PR that raises a limit does not get it without a new rule_change_reason.
    from rag_corpus_check.config.load import LIMIT_NAMES, load_config
    from rag_corpus_check.gate.rules import Layout, decide, enforce

    assert {"max_compression_ratio", "max_retrieval_work_per_byte"} <= set(LIMIT_NAMES)
    _tree(tmp_path, "gold: gold.jsonl\n", {"gold.jsonl": _gold_lines(0, 1)})
    cfgs = []
    for name, ratio in (("base.yml", 4), ("head.yml", 100)):
        (tmp_path / name).write_text((tmp_path / "c.yml").read_text()
                                     + f"limits: {{max_compression_ratio: {ratio}, max_retrieval_work_per_byte: {ratio}}}\n")
        cfg, _ = load_config(str(tmp_path), str(tmp_path / name), P.Problems())
        cfgs.append(cfg)
    base, head = cfgs
    assert head.limits.max_compression_ratio == 100 and head.bounds.max_retrieval_work_per_byte == 100
    layout = Layout("", "c.yml", "corpus.jsonl", "gold.jsonl", "run.jsonl")
    rules = decide(base, head, (layout, layout), "c.yml", "")
    assert rules.source == "base"
    assert any("`limits.max_compression_ratio` raised" in c for c in rules.changes)
    assert any("`limits.max_retrieval_work_per_byte` raised" in c for c in rules.changes)
    enforced = enforce(rules, base, head)
    assert enforced.limits.max_compression_ratio == 4 and enforced.bounds.max_retrieval_work_per_byte == 4
    assert head.limits.max_compression_ratio == 100  # the head's config as read is not changed


def test_bm25_work_is_per_byte_as_stored(tmp_path, capsys, monkeypatch):
    # A gzip corpus gets the work budget of its size on disk, not of its text.
    import gzip

    from rag_corpus_check.pipeline import rankings as retrieval

    corpus = "".join(json.dumps({"id": f"d{i}", "text": "x"}) + "\n" for i in range(20_000)).encode()
    gold = "".join(json.dumps({"query_id": f"q{i}", "query": f"x {i}", "relevant": {"d1": 1}}) + "\n"
                   for i in range(3000))
    _tree(tmp_path, "gold: gold.jsonl\n", {"corpus.jsonl.gz": gzip.compress(corpus, 9, mtime=0), "gold.jsonl": gold})
    (tmp_path / "c.yml").write_text("version: 1\nk: 1\ncorpus: corpus.jsonl.gz\ngold: gold.jsonl\n"
                                    "limits: {max_compression_ratio: 100}\n")
    seen = []
    real = retrieval.stored_bytes
    monkeypatch.setattr(retrieval, "stored_bytes", lambda base_dir, files: seen.append(real(base_dir, files)) or seen[-1])
    code, problems = _check(tmp_path, capsys, monkeypatch)
    assert code == 2 and problems[0]["kind"] == "limit", problems
    assert "limits.max_retrieval_work_per_byte" in problems[0]["message"]
    stored = (tmp_path / "corpus.jsonl.gz").stat().st_size + len(gold)
    assert seen == [stored]


def test_a_limit_after_the_listed_errors_is_listed_too(tmp_path, capsys, monkeypatch):
    # 100,000 invalid lines in a few KB of gzip: 50 described, the rest
    # counted, and the limit that ends the file is listed (not one of the "more").
    import gzip

    lines = b'{"query_id": "q", "relevant": {"d1": "x"}}\n' * 100_000
    _tree(tmp_path, "gold: gold.jsonl.gz\n", {"gold.jsonl.gz": gzip.compress(lines, 9, mtime=0)})
    code, problems = _check(tmp_path, capsys, monkeypatch)
    assert code == 2
    assert [p["kind"] for p in problems].count("schema") == 50
    limit = [p for p in problems if p["kind"] == "limit"]
    assert len(limit) == 1 and limit[0]["file"] == "gold.jsonl.gz" and limit[0]["line"] > 50


def test_a_gold_document_of_invalid_questions_is_described_up_to_the_cap(tmp_path, monkeypatch):
    # Before: jsonschema validated the whole document and produced (and the
    # reader described) every error (1 MB of invalid YAML questions: 10 CPU-s).
    from rag_corpus_check.core import schemas

    produced = []
    real = schemas.validator

    class Counting:
        def __init__(self, validator):
            self.validator = validator

        def iter_errors(self, instance):
            for err in self.validator.iter_errors(instance):
                produced.append(err)
                yield err

    monkeypatch.setattr(schemas, "validator", lambda *a, **k: Counting(real(*a, **k)))
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n" + "".join(f"- {{query_id: q{i}, relevant: {{d1: x}}}}\n" for i in range(3000))
                    + "- {query_id: ok, relevant: {d1: 1}}\n")
    problems = P.Problems()
    gold = gold_reader.read_gold(str(path), "gold.yaml", "yaml", Limits(), problems)
    assert len(produced) <= problems.per_file_cap, len(produced)  # one error a question, the listed ones
    assert problems.error_count() == 3000 and list(gold.queries) == ["ok"]
    first = problems.items[0]
    assert first.line == 2 and first.message.startswith("queries[0].relevant.d1: expected integer")


# ---------------------------------------------------------------- the bound, per stored byte


def _bench():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "bench" / "dos.py"
    spec = importlib.util.spec_from_file_location("dos_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# bench/dos.py's hostile inputs, a quarter of the size measured in docs/performance.md
# (the counters are linear: what holds per byte here holds at 1 MB).
WORST = {
    "json-gold": ("json_gold", {"size": 250_000}),
    "escaped-qrels": ("escaped_qrels", {"size": 250_000}),
    "gzip-invalid": ("gzip_invalid", {}),
    "gzip-corpus": ("gzip_corpus", {"lines": 40_960}),
    "bm25-ties": ("bm25_ties", {"docs": 6000, "questions": 2000}),
    "worst-bm25": ("worst_bm25", {"docs": 4000, "questions": 2000}),
    "worst-gzip-jsonl": ("worst_gzip_jsonl", {"size": 250_000}),
    "worst-vocabulary": ("worst_vocabulary", {"size": 250_000}),
    "worst-gzip-corpus": ("worst_gzip_corpus", {"size": 200_000}),
    "worst-document-yaml": ("worst_document_yaml", {"size": 560_000}),
}


@pytest.mark.parametrize("case", list(WORST))
def test_hostile_input_does_work_bounded_by_its_stored_size(tmp_path, capsys, monkeypatch, case):
    """Every counted kind of work is bounded by the bytes stored: decompressed
    bytes (8x, a document's 2x, + 256 KiB), BM25 work (4M + 8 a byte),
    jsonschema validations (the 50 errors listed a file, + 2). docs/performance.md
    ("The worst input of at most 1 MB") gives the measured cost of a unit of each, so
    1 MB of any input is at most ~7 CPU-s and ~0.3 GB here."""
    from rag_corpus_check.commands.cli import main
    from rag_corpus_check.core import schemas
    from rag_corpus_check.retrieval.bm25 import BM25Index

    name, kwargs = WORST[case]
    getattr(_bench(), name)(str(tmp_path), **kwargs)
    folder = tmp_path / case
    stored = sum(f.stat().st_size for f in folder.iterdir() if f.name != ".rag-corpus-check.yml")
    unpacked = Unpacked(monkeypatch)
    work, validations = [0], [0]
    search, validator = BM25Index.search, schemas.validator

    def counted_search(index, *args, **kwargs):
        try:
            return search(index, *args, **kwargs)
        finally:
            work[0] = index.work

    def counted_validator(*args, **kwargs):
        validations[0] += 1
        return validator(*args, **kwargs)

    monkeypatch.setattr(BM25Index, "search", counted_search)
    monkeypatch.setattr(schemas, "validator", counted_validator)
    monkeypatch.chdir(folder)
    code = main(["--quiet", "--no-github", "--output", "out/r.json", "--summary-file", "out/s.md"])
    capsys.readouterr()
    assert code in (0, 1, 2)
    packed = sum(f.stat().st_size for f in folder.iterdir() if f.name.endswith(".gz"))
    # Twice at most: a fast reader that meets the limit hands the file to the
    # exact reader, which reads it again to the limit to name the line.
    assert unpacked.total <= 2 * (8 * packed + 256 * 1024 + 8 * 128 * 1024), (unpacked.total, packed)
    assert work[0] <= 4_000_000 + 8 * stored + 20_000, (work[0], stored)  # + the last question's candidates
    assert validations[0] <= 2 * (50 + 2), validations[0]  # two files at most are invalid here


def test_a_trust_warning_is_never_cut_and_listed_first():
    """The cap a file counts every problem, but like a limit a `trust`
    warning is always listed, and every output lists it before the rest."""
    problems = P.Problems()
    for i in range(60):
        problems.add(P.CONSISTENCY, "question is in the run but not in gold.yaml", file="run.jsonl", id=f"x{i}",
                     severity=P.WARNING)
    problems.add(P.SCHEMA, "not an object", file="corpus.jsonl", line=3)
    problems.add(P.TRUST, "the committed run's rankings changed in this PR", file="run.jsonl", severity=P.WARNING)
    listed = problems.listed()
    assert [p.kind for p in listed[:2]] == [P.TRUST, P.SCHEMA] and len(listed) == 52
    assert problems.dropped == {"run.jsonl (warnings)": 10} and problems.warning_count() == 61


def _git_runs_with_base(tmp_path, capsys, monkeypatch, segments: int) -> int:
    """The git processes a check with --base runs on bench/dos.py's
    worst-store-segments case of ``segments`` segments, committed as the base."""
    from rag_corpus_check.base.tree import BaseTree
    from rag_corpus_check.commands.cli import main
    from support.repos import commit, init

    out = tmp_path / str(segments)
    _bench().worst_store_segments(str(out), segments=segments)
    folder = out / "worst-store-segments"
    init(folder)
    base = commit(folder, "base")
    runs = [0]
    real = BaseTree._git

    def counted(tree, *args, **kwargs):
        runs[0] += 1
        return real(tree, *args, **kwargs)

    monkeypatch.setattr(BaseTree, "_git", counted)
    monkeypatch.chdir(folder)
    code = main(["--quiet", "--no-github", "--output", "out/r.json", "--summary-file", "out/s.md", "--base", base])
    text = capsys.readouterr().out
    assert code == 0, text
    return runs[0]


def test_a_base_store_is_read_out_of_git_in_a_number_of_runs_its_segments_do_not_set(tmp_path, capsys,
                                                                                      monkeypatch):
    """4,096 one-row segments (0.86 MB) at the base took 72 CPU-s with
    --base when each was copied out of git by six processes of its own."""
    few = _git_runs_with_base(tmp_path, capsys, monkeypatch, 16)
    many = _git_runs_with_base(tmp_path, capsys, monkeypatch, 64)
    assert many == few, (few, many)
