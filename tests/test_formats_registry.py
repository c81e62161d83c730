"""The format registry (inputs/formats.py) is the one list of input formats:
the config schema's enums, the auto-detection by extension and the message
for an unknown extension all follow it."""

from __future__ import annotations

import json
from pathlib import Path

from rag_corpus_check.inputs import formats

SCHEMA = Path(__file__).resolve().parent.parent / "check" / "rag_corpus_check" / "schemas" / "config.schema.json"


def _config_schema() -> dict:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def test_the_config_schema_names_exactly_the_registry_formats():
    props = _config_schema()["properties"]
    for kind in ("gold", "run"):
        assert props["formats"]["properties"][kind]["enum"] == ["auto", *formats.settable(kind)], kind
    datasets = sorted({f.name for f in formats.FORMATS if f.dataset})
    assert sorted(props["dataset"]["properties"]["format"]["enum"]) == datasets


def test_each_kind_names_a_format_once_and_every_kind_has_a_native_one():
    seen = [(f.kind, f.name) for f in formats.FORMATS]
    assert len(seen) == len(set(seen))
    assert {f.kind for f in formats.FORMATS} == {"corpus", "gold", "run", "queries"}
    assert all(callable(f.read) for f in formats.FORMATS)


def test_auto_detection_follows_the_extensions_of_the_registry():
    for f in formats.FORMATS:
        for ext in f.extensions:
            assert formats.format_of(f.kind, "x/name" + ext.upper() + ".gz", "auto") == f.name
    assert formats.format_of("run", "run.tsv", "auto") is None
    assert formats.format_of("run", "run.tsv", "trec") == "trec"


def test_the_unknown_extension_message_lists_every_extension_and_settable_format():
    for kind in ("gold", "run"):
        message = formats.unknown_format(kind)
        for f in formats.FORMATS:
            if f.kind == kind:
                assert all(ext in message for ext in f.extensions)
                assert (f.name in message) != f.dataset, (kind, f.name)


def test_a_new_format_is_one_registry_entry(monkeypatch):
    """Adding a format: one reader and one entry; detection and the message follow."""
    extra = formats.Format("tsv-run", "run", lambda *a: None, (".tsvrun",))
    monkeypatch.setattr(formats, "FORMATS", (*formats.FORMATS, extra))
    assert formats.format_of("run", "r.tsvrun", "auto") == "tsv-run"
    assert ".tsvrun" in formats.unknown_format("run") and "tsv-run" in formats.unknown_format("run")
    assert formats.find("run", "tsv-run") is extra


def test_the_corpus_object_names_exactly_the_registry_corpus_formats():
    spec = _config_schema()["properties"]["corpus"]["anyOf"][1]
    assert spec["properties"]["format"]["enum"] == formats.settable("corpus")
