import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "check"))

EXAMPLE = ROOT / "examples" / "kb"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A fresh copy of the bundled example as a repository root (cwd), with
    the committed-run config as its `.rag-corpus-check.yml`."""
    dest = tmp_path / "repo"
    shutil.copytree(EXAMPLE, dest)
    # Most tests mutate the committed run, so the repo's config scores it.
    (dest / "committed-run.rag-corpus-check.yml").replace(dest / ".rag-corpus-check.yml")
    monkeypatch.chdir(dest)
    for var in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "RUNNER_TEMP",
                "GITHUB_SHA", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH"):
        monkeypatch.delenv(var, raising=False)
    return dest


@pytest.fixture
def run_cli(tmp_path, capsys):
    """Call main(argv) with results and summary written into tmp_path."""
    from rag_corpus_check.commands.cli import main

    def _run(*argv, config=".rag-corpus-check.yml"):
        out = tmp_path / "out"
        args = ["--config", config, "--output", str(out / "results.json"),
                "--summary-file", str(out / "summary.md"), *argv]
        code = main(args)
        cap = capsys.readouterr()
        import json

        results = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else None
        summary = (out / "summary.md").read_text() if (out / "summary.md").exists() else None
        return code, cap.out, cap.err, results, summary

    return _run


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


@pytest.fixture
def kb(tmp_path, monkeypatch):
    """The bundled example as a git repository of its own (cwd), nothing
    committed yet, no GitHub or runner variables."""
    from support.repos import init

    repo = init(tmp_path / "kb", EXAMPLE)
    off_runner(monkeypatch, repo)
    return repo


def off_runner(monkeypatch, cwd: Path) -> None:
    """Work in ``cwd`` with no GitHub or runner variable set (as on a laptop)."""
    monkeypatch.chdir(cwd)
    for var in [v for v in os.environ if v.startswith(("GITHUB_", "RUNNER_"))]:
        monkeypatch.delenv(var, raising=False)


def check(tmp_path, capsys, *argv, config=".rag-corpus-check.yml"):
    """main(argv) with results and summary in tmp_path/out: (exit code,
    stdout, results or None, summary or "")."""
    import json

    from rag_corpus_check.commands.cli import main

    out = tmp_path / "out"
    code = main(["--config", config, "--output", str(out / "r.json"),
                 "--summary-file", str(out / "s.md"), *argv])
    text = capsys.readouterr().out
    results = json.loads((out / "r.json").read_text()) if (out / "r.json").exists() else None
    summary = (out / "s.md").read_text() if (out / "s.md").exists() else ""
    return code, text, results, summary
