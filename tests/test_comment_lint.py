"""The rules that make the comment split safe (tests/test_lint.py runs the
linters and the generic rules over the comment action and the example
workflows too): the check job holds no write token, the comment job holds only
`actions: read` and `pull-requests: write` and runs nothing from the pull
request. The comment action's Python outside the package (comment/*.py) gets
the package's ruff and mypy rules.
"""

from __future__ import annotations

import os
import re
import subprocess

from act_helpers import CHECK_WORKFLOW, COMMENT_WORKFLOW, ROOT, require_tool
from test_lint import COMMENT_ACTION, load, rel, report, run_tool, steps_of

PYTHON = [ROOT / "comment" / "launch.py", ROOT / "comment" / "sticky.py"]


# --- rules checked directly (the generic linters run in tests/test_lint.py) ---------------


def test_comment_action_inputs_reach_the_script_only_through_env():
    for where, step in steps_of(load(COMMENT_ACTION)):
        for key, value in step.items():
            if key not in ("env", "with", "if"):
                assert "inputs." not in str(value), f"comment/action.yml {where}: inputs used in {key}"


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
