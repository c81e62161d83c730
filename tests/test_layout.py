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


ARCHITECTURE = PACKAGE.parent.parent / "docs" / "architecture.md"
_GRAPH = re.compile(r"```mermaid\n(graph TD\n.*?)```", re.S)


def folder_graph() -> str:
    """The folders and the imports between them, as the code has them, as a
    Mermaid graph (docs/architecture.md shows it; this test keeps it true)."""
    edges: set[tuple[str, str]] = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if len(rel.parts) == 1:
            continue
        for _, module in _imports(path):
            parts = module.split(".")
            if len(parts) > 1 and parts[1] != rel.parts[0] and (PACKAGE / parts[1]).is_dir():
                edges.add((rel.parts[0], parts[1]))
    # Only the arrows no other path implies (a transitive reduction), so the picture stays readable.
    def reaches(a: str, b: str, skip: tuple[str, str]) -> bool:
        todo, seen = [a], set()
        while todo:
            x = todo.pop()
            for s, t in edges:
                if s == x and (s, t) != skip and t not in seen:
                    if t == b:
                        return True
                    seen.add(t)
                    todo.append(t)
        return False
    kept = sorted(e for e in edges if not reaches(e[0], e[1], e))
    return "graph TD\n" + "".join(f"  {a} --> {b}\n" for a, b in kept)


def test_the_architecture_page_draws_the_imports_as_they_are():
    """docs/architecture.md's graph is the code's: regenerate it with
    `python -c "import tests.test_layout as t; print(t.folder_graph())"`."""
    m = _GRAPH.search(ARCHITECTURE.read_text(encoding="utf-8"))
    assert m, "docs/architecture.md has no ```mermaid graph TD``` block"
    assert m.group(1) == folder_graph()


def test_the_architecture_page_names_every_folder_and_what_it_may_import():
    page = ARCHITECTURE.read_text(encoding="utf-8")
    for folder, allowed in _folders().items():
        said = "every other package" if allowed is None else ", ".join(sorted(allowed)) or "nothing"
        assert f"| `{folder}/` |" in page, folder
        row = next(line for line in page.splitlines() if line.startswith(f"| `{folder}/` |"))
        assert row.rstrip(" |").endswith(said), (folder, row, said)
