"""The exact JSONL run reader keeps the ranked ids as it reads
(:attr:`Run.ranked`): the ids of the rankings it kept, every valid line's
ids checked by the id rule once per distinct id."""

from __future__ import annotations

import json
from itertools import chain

from conftest import write
from rag_corpus_check.core.problems import Problems
from rag_corpus_check.inputs import Source, read_run


def _read(tmp_path, lines: list) -> tuple:
    path = write(tmp_path / "run.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    problems = Problems()
    return read_run(Source(str(path), "run.jsonl"), _limits(), problems), problems


def _limits():
    from rag_corpus_check.safe_io import Limits

    return Limits()


def _kept(run) -> set:
    return set(chain.from_iterable(q.ranking for q in run.queries.values()))


def test_a_clean_run_keeps_its_ranked_ids_as_read(tmp_path):
    run, problems = _read(tmp_path, [{"query_id": f"q{i}", "ranking": [f"d{i + 1}", f"d{i + 2}", "d0"]} for i in range(5)])
    assert not problems.items
    assert run.ranked == _kept(run) == {f"d{i}" for i in range(7)}


def test_ids_of_lines_left_out_are_not_ranked(tmp_path):
    lines = [
        {"query_id": "q1", "ranking": ["a", "b"]},
        {"query_id": "q1", "ranking": ["c"]},  # a question twice: left out, its id valid
        {"query_id": "q2", "ranking": ["d", "d"]},  # a document twice: left out
        {"query_id": "q3", "ranking": ["a", "bad\u0000id"]},  # an invalid id: the line left out
        {"query_id": "q4", "ranking": ["a", 7]},  # not an id at all
        {"query_id": "q5", "ranking": ["b", ["x"]]},  # unhashable
        {"query_id": "q6", "ranking": ["e"], "snapshot": ""},  # invalid snapshot after valid ids
        {"query_id": "q7", "ranking": ["a", "f"]},
    ]
    run, problems = _read(tmp_path, lines)
    assert sorted(run.queries) == ["q1", "q7"]
    assert run.ranked_ids() == _kept(run) == {"a", "b", "f"}
    assert sorted({p.line for p in problems.items}) == [2, 3, 4, 5, 6, 7]


def test_an_invalid_id_is_reported_where_it_is_met_again(tmp_path):
    """An id refused on one line is refused on the next line too (only
    valid ids are remembered)."""
    run, problems = _read(tmp_path, [{"query_id": "q1", "ranking": ["x\u0007"]},
                                     {"query_id": "q2", "ranking": ["ok", "x\u0007"]}])
    assert not run.queries
    assert [p.line for p in problems.items] == [1, 2]


def test_lines_jsonschema_accepted_are_ranked_too(tmp_path, monkeypatch):
    """Should run_record ever refuse a line jsonschema accepts, the line is
    kept (jsonschema decides) and its ids are still counted as ranked."""
    from rag_corpus_check.inputs import run as run_module

    monkeypatch.setattr(run_module, "run_record", lambda rec, valid_ids=None: False)
    run, problems = _read(tmp_path, [{"query_id": "q1", "ranking": ["a", "b"]}, {"query_id": "q2", "ranking": ["c"]}])
    assert not problems.items
    assert run.ranked_ids() == {"a", "b", "c"}
