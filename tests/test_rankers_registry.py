"""The ranker registry (retrieval/rankers.py) is the one list of retriever
types: the config schema's `retriever.type` enum and the results schema's
`run_source.type` enum follow it, and the config names its ranker from it."""

from __future__ import annotations

import json
from pathlib import Path

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.retrieval import rankers

SCHEMAS = Path(__file__).resolve().parent.parent / "check" / "rag_corpus_check" / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def test_the_config_schema_names_exactly_the_registry_rankers():
    types = _schema("config")["properties"]["retriever"]["properties"]["type"]["enum"]
    assert sorted(types) == sorted(rankers.RANKERS)


def test_the_results_schema_names_the_registry_rankers_and_a_committed_run():
    types = _schema("results")["properties"]["run_source"]["properties"]["type"]["enum"]
    assert sorted(types) == sorted(["file", *rankers.RANKERS])


def test_each_ranker_is_registered_under_its_own_name_and_describes_itself():
    settings = Config(path_display="c.yml", base_dir=".", corpus="c.jsonl", gold="g.jsonl", run=None, k=5,
                      vectors="v", model="m", command=["x"])
    for name, ranker in rankers.RANKERS.items():
        assert ranker.name == name
        rules = ranker.rules(settings)
        assert rules["source"] and all(not isinstance(v, tuple) for v in rules.values()), name
    assert rankers.DEFAULT is rankers.RANKERS["bm25"]


def _load(tmp_path, retriever: str):
    from rag_corpus_check.config.load import load_config

    (tmp_path / "c.yml").write_text(f"version: 1\nk: 5\ncorpus: c.jsonl\ngold: g.jsonl\nretriever: {retriever}\n")
    problems = P.Problems()
    cfg, _ = load_config(str(tmp_path), str(tmp_path / "c.yml"), problems)
    return cfg, problems


def test_the_config_chooses_its_ranker_once_from_the_registry(tmp_path):
    cases = {"{}": "bm25", "{command: [x]}": "command", "{type: hybrid, vectors: v, model: m}": "hybrid",
             "{type: dense, vectors: v, model: m}": "dense", "{type: command, command: [x]}": "command"}
    for text, name in cases.items():
        cfg, problems = _load(tmp_path, text)
        assert cfg is not None and not problems.items, (text, problems.items)
        assert cfg.ranker is rankers.RANKERS[name]
        assert cfg.uses_vectors == (name in ("dense", "hybrid"))
