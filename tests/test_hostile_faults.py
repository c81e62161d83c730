"""Issue 7, faults: when the check itself fails (a bug, an unwritable path,
a full disk) it exits 3 with one short line that quotes nothing from the
exception, issues no workflow command but its own error annotation, sets only
``passed=false``, ``verdict=error`` and ``exit-code=3`` as step outputs, and
leaves no partial results file behind."""

import errno
import json

import pytest

from hostile import (
    CANARY,
    CONFIG_NAME,
    config_text,
    make_repo,
    parse_github_output,
    run_inprocess,
    unintended_commands,
)
from rag_corpus_check import inputs
from rag_corpus_check.commands import cli
from rag_corpus_check.pipeline import stages as pipeline
from rag_corpus_check.report import console, github, results, summary
from rag_corpus_check.retrieval import rankers as retrieval

# What the injected exception says: a secret, a workflow command and a line break.
BOOM = f"{CANARY} ::error::owned\n##[error]owned"

# Every stage the check goes through, as (module, attribute) to replace.
STAGES = [
    (cli, "github_context"),
    (pipeline, "load_config"),
    (pipeline, "resolve_input"),
    (pipeline, "read_inputs"),
    (inputs, "read_gold"),
    (inputs, "read_corpus"),
    (inputs, "read_run"),
    (pipeline, "cross_check"),
    (pipeline, "evaluate"),
    (pipeline, "irrelevant_by_type"),
    (pipeline, "apply_thresholds"),
    (summary, "build_summary"),
    (results, "write_results"),
    (console, "render_console"),
    (github, "annotation_lines"),
    (github, "outputs"),
]
# Stages after which results.json already exists: a fault there leaves the
# complete file of a finished check (it is written atomically), never a partial one.
AFTER_RESULTS = {"render_console", "annotation_lines", "outputs"}


def _boom(exc_type=RuntimeError):
    def raiser(*args, **kwargs):
        raise exc_type(BOOM)

    return raiser


def assert_clean_internal_error(res, *, results_may_exist=False):
    text = res.out + res.err
    assert res.code == 3, text
    assert "Traceback" not in text
    assert CANARY not in res.everything() and "owned" not in res.everything()
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(
        "rag-corpus-check: ERROR (internal): internal error ("
    ), lines
    assert len(lines[0]) < 300
    for stream in (res.out, res.err):
        assert not unintended_commands(stream)
    errors = [ln for ln in res.out.splitlines() if ln.startswith("::error")]
    assert errors == [ln for ln in res.out.splitlines() if ln.startswith("::")]
    assert any(ln.startswith("::error title=rag-corpus-check::internal error") for ln in errors)
    outputs = parse_github_output(res.gh_output or "")
    assert outputs.get("passed") == "false" and outputs.get("verdict") == "error"
    assert outputs.get("exit-code") == "3"
    if results_may_exist and res.results_text is not None:
        json.loads(res.results_text)  # complete, not cut
    else:
        assert res.results_text is None, "a results file after an internal error"
    leftovers = (
        list((res.work / "out").glob(".rag-corpus-check-*")) if (res.work / "out").exists() else []
    )
    assert not leftovers, leftovers


@pytest.mark.parametrize("module,name", [pytest.param(m, n, id=n) for m, n in STAGES])
def test_exception_in_each_stage(module, name, tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    monkeypatch.setattr(module, name, _boom())
    res = run_inprocess(repo, tmp_path / "work")
    assert_clean_internal_error(res, results_may_exist=name in AFTER_RESULTS)


@pytest.mark.parametrize("exc_type", [MemoryError, RecursionError, KeyError, UnicodeEncodeError])
def test_exception_types(exc_type, tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    if exc_type is UnicodeEncodeError:

        def raiser(*a, **k):
            raise UnicodeEncodeError("utf-8", BOOM, 0, 1, BOOM)
    else:
        raiser = _boom(exc_type)
    monkeypatch.setattr(pipeline, "evaluate", raiser)
    res = run_inprocess(repo, tmp_path / "work")
    assert_clean_internal_error(res)
    assert f"internal error ({exc_type.__name__})" in res.err


def test_retriever_stage(tmp_path, monkeypatch):
    """The built-in BM25 (no committed run): a fault while indexing."""
    repo = make_repo(tmp_path / "repo")
    (repo / CONFIG_NAME).write_text(config_text(run=None), encoding="utf-8")
    assert run_inprocess(repo, tmp_path / "ok").code in (0, 1)
    monkeypatch.setattr(retrieval, "BM25Index", _boom())
    assert_clean_internal_error(run_inprocess(repo, tmp_path / "work"))


class _FullDisk:
    """A text file whose write fails half-way with ENOSPC, as on a full disk."""

    def __init__(self, f):
        self._f = f

    def write(self, s):
        self._f.write(s[: len(s) // 2])
        self._f.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()
        return False


def test_disk_full_leaves_no_results_file(tmp_path, monkeypatch):
    import os

    real_fdopen = os.fdopen
    monkeypatch.setattr(
        results.os, "fdopen", lambda fd, *a, **k: _FullDisk(real_fdopen(fd, *a, **k))
    )
    repo = make_repo(tmp_path / "repo")
    res = run_inprocess(repo, tmp_path / "work")
    assert_clean_internal_error(res)
    assert "internal error (OSError)" in res.err
    assert not (tmp_path / "work" / "out" / "results.json").exists()


def test_disk_full_on_github_output(tmp_path, monkeypatch):
    """$GITHUB_OUTPUT cannot be written: exit 3 all the same, no traceback."""
    repo = make_repo(tmp_path / "repo")

    def full(path, values):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(github, "write_outputs", full)
    res = run_inprocess(repo, tmp_path / "work")
    assert res.code == 3 and "Traceback" not in res.out + res.err
    assert "internal error (OSError)" in res.err


@pytest.mark.parametrize("which", ["results", "summary"])
def test_unwritable_output_paths(which, tmp_path):
    repo = make_repo(tmp_path / "repo")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = str(blocker / "sub" / f"{which}.out")  # a path under a regular file
    argv = ["--output", target] if which == "results" else ["--summary-file", target]
    res = run_inprocess(repo, tmp_path / "work", argv=argv)
    # argv comes after the defaults, so this path wins.
    assert res.code == 3
    assert "Traceback" not in res.out + res.err
    assert "internal error (NotADirectoryError)" in res.err
    outputs = parse_github_output(res.gh_output or "")
    assert outputs["verdict"] == "error" and outputs["passed"] == "false"


@pytest.mark.parametrize("var", ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"])
def test_unwritable_github_files(var, tmp_path):
    repo = make_repo(tmp_path / "repo")
    a_dir = tmp_path / "is-a-directory"
    a_dir.mkdir()
    res = run_inprocess(repo, tmp_path / "work", env={var: str(a_dir)})
    assert res.code == 3 and "Traceback" not in res.out + res.err
    assert "internal error (IsADirectoryError)" in res.err
    for stream in (res.out, res.err):
        assert not unintended_commands(stream)


def test_results_path_is_a_directory(tmp_path):
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "dir.json").mkdir()
    res = run_inprocess(repo, tmp_path / "work", argv=["--output", str(tmp_path / "dir.json")])
    assert res.code == 3 and "Traceback" not in res.out + res.err
    assert list((tmp_path / "dir.json").iterdir()) == []
    assert not list(tmp_path.glob(".rag-corpus-check-*"))


def test_stale_results_file_is_not_left_as_this_runs(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    out = tmp_path / "work" / "out"
    out.mkdir(parents=True)
    (out / "results.json").write_text('{"verdict": "pass", "exit_code": 0}\n')
    monkeypatch.setattr(pipeline, "evaluate", _boom())
    res = run_inprocess(repo, tmp_path / "work")
    assert res.code == 3
    assert res.results_text is None or json.loads(res.results_text).get("verdict") == "error"
