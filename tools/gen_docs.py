"""Write the reference tables of docs/ from their one source, or check them.

    python tools/gen_docs.py           rewrite the generated blocks in docs/
    python tools/gen_docs.py --check   exit 1 when a page is stale (tests/test_docs.py runs it)

A generated block sits in a page between ``<!-- BEGIN GENERATED: name -->``
and ``<!-- END GENERATED: name -->``; everything around it is written by
hand. The sources: the JSON schemas (every property's ``description``) for
the configuration and input-format tables, and the measure registry
(``Definition.formula``) for the metrics table. The CLI and action pages are
written by hand and checked against the parsers and action.yml by
tests/test_docs.py, which takes them from :func:`parsers` below.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SCHEMAS = ROOT / "schemas"  # the package's bundled schemas (a link into check/)
sys.path.insert(0, str(ROOT / "check"))


# -- The package's sources of documentation: the one place this tool and
# -- its tests name modules of the package (update here when they move).

def measure_definitions() -> dict:
    """Measure name -> Definition (compute, formula, mean, trec_eval, cutoff)."""
    from rag_corpus_check.metrics.measures import DEFINITIONS

    return DEFINITIONS


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's argument parser, by the name a user types after
    ``rag-corpus-check`` (``check`` is also the default)."""
    from rag_corpus_check.commands.add_labels import build_parser as build_add_labels_parser
    from rag_corpus_check.commands.cli import (
        build_merge_parser,
        build_parser,
        build_retrieve_parser,
    )
    from rag_corpus_check.commands.embed import build_embed_parser
    from rag_corpus_check.commands.export import build_parser as build_export_parser
    from rag_corpus_check.commands.pool import build_parser as build_pool_parser
    from rag_corpus_check.commands.validate import build_parser as build_validate_parser

    return {"check": build_parser(), "retrieve": build_retrieve_parser(), "merge": build_merge_parser(),
            "pool": build_pool_parser(), "embed": build_embed_parser(), "validate": build_validate_parser(),
            "add-labels": build_add_labels_parser(), "export": build_export_parser()}


def subcommands() -> set[str]:
    """The names the command line dispatches on (besides ``check``)."""
    from rag_corpus_check.commands.cli import SUBCOMMANDS

    return set(SUBCOMMANDS)


def limit_defaults() -> dict[str, int]:
    """Each `limits:` key of the config and its default."""
    from rag_corpus_check.config import load as config

    return {name: config.limit_default(name) for name in config.LIMIT_NAMES}


def package_sources() -> Iterator[Path]:
    """The package's Python files (to find the environment variables it reads)."""
    return (ROOT / "check" / "rag_corpus_check").rglob("*.py")


# -- Schemas -> tables.

def load_schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def properties(node: dict, prefix: str = "") -> Iterator[tuple[str, dict]]:
    """(dotted key, schema) of every property under ``node``, depth first;
    a mapping's values appear under a placeholder for its key: ``<tag>``
    where the keys are tags (``slices``), else ``<measure>`` (``thresholds``)."""
    for key, sub in node.get("properties", {}).items():
        path = f"{prefix}{key}"
        yield path, sub
        yield from properties(sub, path + ".")
        for alt in _value_schemas(sub):
            yield from properties(alt, f"{path}.{_key_placeholder(sub)}.")
        for alt in sub.get("anyOf", []):  # a value written two ways (`corpus:` a path or a section)
            yield from properties(alt, path + ".")
        if isinstance(sub.get("items"), dict) and "properties" in sub["items"]:
            yield from properties(sub["items"], path + "[].")


def _key_placeholder(node: dict) -> str:
    """What a mapping's keys are, from its ``propertyNames``: tags or measures."""
    ref = str((node.get("propertyNames") or {}).get("$ref", ""))
    return "<tag>" if ref.endswith("/tag") else "<measure>"


def _value_schemas(node: dict) -> list[dict]:
    extra = node.get("additionalProperties")
    if not isinstance(extra, dict):
        return []
    return [alt for alt in extra.get("oneOf", [extra]) if "properties" in alt]


def undocumented(schema: dict) -> list[str]:
    """Keys of ``schema`` (its properties and those of its $defs) without a description."""
    roots = [("", schema)] + [(f"{name}.", d) for name, d in schema.get("$defs", {}).items()]
    return [prefix + path for prefix, node in roots for path, sub in properties(node) if not sub.get("description")]


def _literal(value: object) -> str:
    return "`null`" if value is None else f"`{value}`"


def kind(node: dict) -> str:
    """What a value may be, in words, from its schema."""
    if "const" in node:
        return _literal(node["const"])
    if "enum" in node:
        return " | ".join(map(_literal, node["enum"]))
    if "$ref" in node:
        return node["$ref"].rsplit("/", 1)[-1]
    if "oneOf" in node or "anyOf" in node:
        return " or ".join(kind(alt) for alt in node.get("oneOf", node.get("anyOf")))
    types = node.get("type", "")
    return " or ".join(_type(t, node) for t in ([types] if isinstance(types, str) else types))


def _type(name: str, node: dict) -> str:
    if name in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum"))
        if "exclusiveMinimum" in node:
            return f"{name} > {low}, ≤ {node['maximum']}"
        return f"{name} {low}–{node['maximum']}" if "maximum" in node else name
    if name == "array":
        items = node.get("items")
        return "list of " + (kind(items) if isinstance(items, dict) else "values")
    if name == "object":
        return "mapping" if "properties" not in node or _value_schemas(node) else "section"
    if name == "string" and "maxLength" in node:
        return f"text of {node.get('minLength', 0)}–{node['maxLength']} characters"
    return {"string": "text", "boolean": "`true` | `false`"}.get(name, name)


def _cell(text: str) -> str:
    """Text for a table cell: no row break, no cell break, no HTML tag."""
    return _code(text).replace("<", "&lt;")


def _code(text: str) -> str:
    """Text for a table cell inside backticks (where an entity would show as written)."""
    return text.replace("|", "\\|").replace("\n", " ")


def schema_table(name: str, required_note: Callable[[str], str] | None = None) -> str:
    """The Markdown table of one schema's keys: key, values, description."""
    schema = load_schema(name)
    roots = [("", schema)] + [(f"{d}.", node) for d, node in schema.get("$defs", {}).items()
                              if name in ("beir", "results")]
    rows = ["| key | values | description |", "| --- | --- | --- |"]
    for prefix, root in roots:
        required = set(root.get("required", []))
        for path, sub in properties(root):
            must = " (**required**)" if "." not in path and path in required else ""
            rows.append(f"| `{_code(prefix + path)}` | {_cell(kind(sub))}{must} | {_cell(sub.get('description', ''))} |")
    return "\n".join(rows)


def common_table() -> str:
    """The definitions the input schemas share (ids, texts, labels)."""
    rows = ["| name | values | description |", "| --- | --- | --- |"]
    for name, node in load_schema("common")["$defs"].items():
        rows.append(f"| {name} | {_cell(kind(node))} | {_cell(node.get('description', ''))} |")
    return "\n".join(rows)


def gold_table() -> str:
    """The gold schema's keys, with a question's keys under ``queries[]``."""
    schema = load_schema("gold")
    rows = ["| key | values | description |", "| --- | --- | --- |"]
    query = schema["$defs"]["query"]
    for path, sub in properties(schema):
        rows.append(f"| `{path}` | {_cell(kind(sub))} | {_cell(sub.get('description', ''))} |")
        if path == "queries":
            for qpath, qsub in properties(query, "queries[]."):
                must = " (**required**)" if qpath.split(".")[-1] in query.get("required", []) else ""
                rows.append(f"| `{qpath}` | {_cell(kind(qsub))}{must} | {_cell(qsub.get('description', ''))} |")
    return "\n".join(rows)


# -- The measure registry -> the metrics table.

def metrics_table() -> str:
    rows = ["| measure | definition for one question | its mean | trec_eval |", "| --- | --- | --- | --- |"]
    for name, d in measure_definitions().items():
        shown = f"{name}@k" if d.cutoff else name
        rows.append(f"| `{shown}` | {_cell(d.formula)} | {_cell(d.mean) or '—'} | {_cell(d.trec_eval) or '—'} |")
    return "\n".join(rows)


# -- Pages.

BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "config": ("configuration.md", lambda: schema_table("config")),
    "corpus": ("input-formats.md", lambda: schema_table("corpus")),
    "gold": ("input-formats.md", gold_table),
    "run": ("input-formats.md", lambda: schema_table("run")),
    "beir": ("input-formats.md", lambda: schema_table("beir")),
    "common": ("input-formats.md", common_table),
    "metrics": ("metrics.md", metrics_table),
    "results": ("results.md", lambda: schema_table("results")),
}


def _block(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- BEGIN GENERATED: {name} [^>]*-->\n)(.*?)(<!-- END GENERATED: {name} -->)", re.S)


def render(text: str, name: str, body: str) -> str:
    pattern = _block(name)
    if not pattern.search(text):
        raise SystemExit(f"no generated block `{name}` in the page")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(3), text, count=1)


def pages() -> dict[Path, str]:
    """Every page with generated blocks, as it should read."""
    out: dict[Path, str] = {}
    for name, (page, make) in BLOCKS.items():
        path = DOCS / page
        out[path] = render(out.get(path) or path.read_text(encoding="utf-8"), name, make())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale pages (exit 1)")
    args = parser.parse_args(argv)
    stale = [p for p, text in pages().items() if p.read_text(encoding="utf-8") != text]
    if args.check:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is stale: run python tools/gen_docs.py")
        return 1 if stale else 0
    for p in stale:
        p.write_text(pages()[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
