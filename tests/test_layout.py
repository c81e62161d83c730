"""The package's layout is its architecture: each folder's docstring says
what it may import (``May import: ...``), and this test holds every import
of the package to it, so an import running back up fails the suite."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "check" / "rag_corpus_check"
EVERY = "every other package"


def _folders() -> dict[str, set[str] | None]:
    """folder -> the folders it may import (None: any)."""
    out: dict[str, set[str] | None] = {}
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        m = re.search(r"^May import: (.+?)\.?$", doc, re.M)
        assert m, f"{init.relative_to(PACKAGE)}: the docstring says nothing of what the folder may import"
        said = m.group(1)
        out[init.parent.name] = None if said == EVERY else (
            set() if said.startswith("nothing") else {x.strip() for x in said.split(",")})
    return out


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rag_corpus_check"):
            names = [node.module] if node.module != "rag_corpus_check" else [f"rag_corpus_check.{a.name}" for a in node.names]
            found += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("rag_corpus_check")]
    return found


def test_every_folder_says_what_it_may_import_and_keeps_to_it():
    allowed = _folders()
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if len(rel.parts) == 1:
            continue  # __init__.py and __main__.py at the top
        folder = rel.parts[0]
        for line, module in _imports(path):
            parts = module.split(".")
            target = parts[1] if len(parts) > 1 else ""
            if target in (folder, "__version__", "") or allowed[folder] is None:
                continue
            if target not in allowed[folder]:
                wrong.append(f"{rel}:{line} imports {module}")
    assert wrong == []


def test_the_folders_are_layered_with_no_cycle():
    allowed = {k: v for k, v in _folders().items() if v is not None}
    seen: dict[str, int] = {}

    def depth(folder: str, path: tuple[str, ...] = ()) -> int:
        assert folder not in path, f"folders import each other: {' -> '.join(path + (folder,))}"
        if folder not in seen:
            seen[folder] = 1 + max((depth(f, path + (folder,)) for f in allowed.get(folder, ())), default=0)
        return seen[folder]

    for folder in allowed:
        depth(folder)


def test_no_two_modules_share_a_name():
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            names.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE)))
    assert {k: v for k, v in names.items() if len(v) > 1} == {}


def test_no_module_sits_loose_in_the_package_root():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert loose == []


def test_the_layer_test_sees_an_import_running_back_up(tmp_path, monkeypatch):
    """The check itself can fail: a core module importing pipeline is found."""
    bad = tmp_path / "core_bad.py"
    bad.write_text("from rag_corpus_check.pipeline.stages import Options\n", encoding="utf-8")
    assert _imports(bad) == [(1, "rag_corpus_check.pipeline.stages")]
    assert "pipeline" not in (_folders()["core"] or set())
