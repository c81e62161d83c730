"""The bundled JSON Schemas carry a real, stable `$id` (the raw URL of the
file in this repository at the `v1` tag), so an editor (yaml-language-server,
SchemaStore) can fetch them; their `$ref`s between one another still resolve
from the package alone, and validation never touches the network.
"""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from act_helpers import require_tool
from rag_corpus_check.core import schemas as S

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "check" / "rag_corpus_check" / "schemas"
RAW = "https://raw.githubusercontent.com/org/rag-corpus-check/v1/"
CONFIG_EXAMPLES = sorted(ROOT.glob("examples/*/*.rag-corpus-check.yml")) + sorted(
    ROOT.glob("examples/*/.rag-corpus-check.yml"))


def refs(node) -> list[str]:
    if isinstance(node, dict):
        return [*([node["$ref"]] if isinstance(node.get("$ref"), str) else []),
                *(r for v in node.values() for r in refs(v))]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


@pytest.mark.parametrize("name", S.SCHEMA_NAMES)
def test_id_is_the_raw_url_of_the_file_at_the_v1_tag(name):
    schema = S.load_schema(name)
    path = SCHEMA_DIR / f"{name}.schema.json"
    assert schema["$id"] == RAW + path.relative_to(ROOT).as_posix()
    assert ".invalid" not in json.dumps(schema)


def test_the_repository_named_is_the_one_the_action_is_used_as():
    # README and the workflows users copy call the action `org/rag-corpus-check@v1`.
    assert "uses: org/rag-corpus-check@v1" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert RAW.split("/")[3:5] == ["org", "rag-corpus-check"]


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket or resolve a name fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the network was used")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.mark.parametrize("name", S.SCHEMA_NAMES)
def test_every_ref_resolves_in_the_local_registry(name, no_network):
    schema = S.load_schema(name)
    resolver = S._registry().resolver(base_uri=schema["$id"])
    found = refs(schema)
    for ref in found:
        assert resolver.lookup(ref).contents is not None, ref
    if name in ("gold", "corpus", "run", "beir"):
        assert any(r.startswith("common.schema.json#") for r in found)  # the cross-schema case is covered


def test_validation_across_schemas_uses_no_network(no_network):
    S.validator.cache_clear()
    bad = {"query_id": "", "relevant": {"d1": 1}}  # `common.schema.json#/$defs/id` refuses an empty id
    assert list(S.validator("gold", "#/$defs/query").iter_errors(bad))
    good = {"query_id": "q1", "relevant": {"d1": 1}}
    assert not list(S.validator("gold", "#/$defs/query").iter_errors(good))


def test_an_unknown_ref_is_not_fetched(no_network):
    # A $ref out of the bundled schemas is an error, never a download.
    from referencing.exceptions import Unresolvable

    resolver = S._registry().resolver(base_uri=S.load_schema("gold")["$id"])
    with pytest.raises(Unresolvable):
        resolver.lookup("other.schema.json#/$defs/x")


def check_jsonschema(*args: str) -> subprocess.CompletedProcess:
    tool = require_tool("check-jsonschema", "check-jsonschema")
    return subprocess.run([tool, "--no-cache", *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("config", CONFIG_EXAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_config_examples_validate_with_check_jsonschema(config):
    assert CONFIG_EXAMPLES
    done = check_jsonschema("--schemafile", "schemas/config.schema.json", str(config.relative_to(ROOT)))
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_jsonschema_refuses_a_bad_config(tmp_path):
    bad = tmp_path / ".rag-corpus-check.yml"
    bad.write_text("version: 1\ncorpus: c.jsonl\ngold: g.yaml\nk: 0\n", encoding="utf-8")
    done = check_jsonschema("--schemafile", "schemas/config.schema.json", str(bad))
    assert done.returncode == 1 and "k" in done.stdout, done.stdout + done.stderr


def test_gold_validates_offline_with_base_uri_pointing_at_the_local_folder():
    # Without --base-uri, check-jsonschema resolves `common.schema.json` against
    # the `$id` (a download); with it, against the local folder.
    base = (SCHEMA_DIR / "gold.schema.json").as_uri()
    done = check_jsonschema("--base-uri", base, "--schemafile", "schemas/gold.schema.json", "examples/kb/gold.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
