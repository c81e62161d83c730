"""The action's inputs table (rag_corpus_check/commands/action_inputs.py) against
action.yml and the CLI: one row per declared input, the same checks and
messages the inputs always had, and arguments the CLI's parser accepts.
(tests/test_action_act.py runs both steps under act.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT
from rag_corpus_check.commands import action_inputs as ai

try:  # the package's layout moves the CLI into commands/
    from rag_corpus_check.commands.cli import build_parser
except ImportError:
    from rag_corpus_check.commands.cli import build_parser
from support.github import parse_github_output

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEP = ROOT / "check" / "action_step.py"


def defaults(**changed: str) -> dict[str, str]:
    """The inputs as GitHub hands them over when the workflow sets ``changed``."""
    values = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    values["base-ref"] = ""  # its default is an expression (the PR's base sha)
    values.update(changed)
    return values


def test_every_input_of_action_yml_has_one_row_and_every_row_an_input():
    rows = [row.name for row in ai.INPUTS]
    assert len(rows) == len(set(rows)), rows
    assert rows == list(ACTION["inputs"]), "same inputs, in the same order as action.yml"
    assert all(row.help for row in ai.INPUTS)


def test_the_steps_get_the_inputs_as_one_json_object_only():
    """No step reads an input by name (but the run step's working directory):
    adding an input touches action.yml's `inputs:` and the table, nothing else."""
    steps = {s.get("id") or s["name"]: s for s in ACTION["runs"]["steps"]}
    for name in ("Check the inputs", "check"):
        assert steps[name]["env"]["ACTION_INPUTS"] == "${{ toJSON(inputs) }}", name
    for step in ACTION["runs"]["steps"]:
        for key, value in step.get("env", {}).items():
            assert "inputs." not in value, (step["name"], key)
    assert steps["check"]["working-directory"] == "${{ inputs.working-directory }}"


def test_defaults_are_valid_and_become_the_plain_check():
    values = defaults()
    assert ai.problem(values) is None
    argv = ai.cli_arguments(values, "/out")
    assert argv == ["--github", "--output", "/out/results.json", "--summary-file", "/out/summary.md",
                    "--config", ".rag-corpus-check.yml", "--retriever-timeout", "600"]


@pytest.mark.parametrize(("changed", "added"), [
    ({"advisory": "true"}, ["--advisory"]),
    ({"summary": "false"}, ["--no-step-summary"]),
    ({"allow-retriever-command": "true"}, ["--allow-retriever-command"]),
    ({"allow-untrusted-event": "true"}, ["--allow-untrusted-event"]),
    ({"require-rules-source": "base,head-first-introduction"},
     ["--require-rules-source", "base,head-first-introduction"]),
    ({"base-ref": "a" * 40}, ["--base", "a" * 40, "--fetch-base"]),
    ({"base-ref": "main", "require-base": "false"}, ["--base", "main", "--fetch-base", "--no-require-base"]),
    ({"require-base": "false"}, []),  # no base, nothing to require
    ({"retriever-timeout": "30"}, []),
    ({"working-directory": "kb"}, []),  # the run step's directory, not an argument
], ids=lambda v: json.dumps(v))
def test_each_input_becomes_its_cli_arguments(changed, added):
    values = defaults(**changed)
    assert ai.problem(values) is None
    argv = ai.cli_arguments(values, "/out")
    plain = ai.cli_arguments(defaults(), "/out")
    extra = [a for a in argv if a not in plain or a == "30"]
    assert extra == [a for a in added if a not in plain] + (["30"] if "retriever-timeout" in changed else [])
    build_parser().parse_args(argv)  # the CLI takes them (argparse exits on an unknown option)


def test_the_cli_reads_the_arguments_as_meant():
    args = build_parser().parse_args(ai.cli_arguments(defaults(**{
        "base-ref": "main", "require-base": "false", "summary": "false", "advisory": "true",
        "retriever-timeout": "45", "require-rules-source": "base", "config": "kb/x.yml"}), "/out"))
    assert (args.base, args.fetch_base, args.require_base) == ("main", True, False)
    assert (args.no_step_summary, args.advisory, args.retriever_timeout) == (True, True, 45.0)
    assert (args.require_rules_source, args.config, args.github) == (("base",), "kb/x.yml", True)
    assert (args.output, args.summary_file) == ("/out/results.json", "/out/summary.md")


BOOLEANS_MESSAGE = ("advisory, require-base, summary, allow-retriever-command and allow-untrusted-event "
                    "take 'true' or 'false'")


@pytest.mark.parametrize(("changed", "message"), [
    ({"advisory": "yes"}, BOOLEANS_MESSAGE),
    ({"summary": "True"}, BOOLEANS_MESSAGE),
    ({"require-base": ""}, BOOLEANS_MESSAGE),
    ({"allow-untrusted-event": "true\n"}, BOOLEANS_MESSAGE),
    ({"base-ref": "--output=/tmp/x"}, "base-ref must be a commit sha or a ref name"),
    ({"base-ref": "main\nx"}, "base-ref must be a commit sha or a ref name"),
    ({"base-ref": "a b"}, "base-ref must be a commit sha or a ref name"),
    ({"retriever-timeout": ""}, "retriever-timeout must be a whole number of seconds"),
    ({"retriever-timeout": "1.5"}, "retriever-timeout must be a whole number of seconds"),
    ({"retriever-timeout": "123456"}, "retriever-timeout must be a whole number of seconds"),
    ({"require-rules-source": "base;echo"}, "require-rules-source must be rules sources separated by commas"),
    ({"require-rules-source": "base,"}, "require-rules-source must be rules sources separated by commas"),
], ids=lambda v: json.dumps(v))
def test_a_wrong_value_is_refused_with_the_inputs_message(changed, message):
    assert ai.problem(defaults(**changed)) == message


def test_inputs_are_read_as_text():
    read = ai.read_inputs({"ACTION_INPUTS": json.dumps({"advisory": True, "retriever-timeout": 30,
                                                        "base-ref": None, "config": "x.yml", "odd": [1]})})
    assert read == {"advisory": "true", "retriever-timeout": "30", "base-ref": "", "config": "x.yml"}
    assert ai.read_inputs({"ACTION_INPUTS": "not json"}) == {} == ai.read_inputs({})


def test_a_missing_input_is_an_error_of_the_action_itself():
    values = defaults()
    del values["summary"]
    assert "no value for summary" in (ai.problem(values) or "")
    assert "no value for config" in (ai.problem({}) or "")


def step(tmp_path, command: str, inputs: dict[str, str], cwd) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "ACTION_INPUTS": json.dumps(inputs), "RUNNER_TEMP": str(tmp_path),
           "GITHUB_OUTPUT": str(tmp_path / "output.txt"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    return subprocess.run([sys.executable, "-I", str(STEP), command], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_validate_step_refuses_a_wrong_input_with_exit_1(tmp_path):
    done = step(tmp_path, "validate", defaults(advisory="yes"), tmp_path)
    assert done.returncode == 1, done
    assert done.stdout == f"::error title=rag-corpus-check::{BOOLEANS_MESSAGE}\n"


def test_the_validate_step_needs_only_the_standard_library(tmp_path):
    """It runs on setup-python's bare interpreter, before anything is installed."""
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'check')!r}); "
            "import rag_corpus_check.commands.action_inputs; print(' '.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    ours = {m for m in done.stdout.split() if m.startswith("rag_corpus_check")}
    assert ours == {"rag_corpus_check", "rag_corpus_check.commands", "rag_corpus_check.commands.action_inputs"}
    assert not {"yaml", "jsonschema", "numpy"} & set(done.stdout.split())


def test_the_run_step_runs_the_check_with_the_inputs(repo, tmp_path):
    """As the action's run step: isolated, in the workspace, which holds a
    planted yaml.py that must not be imported."""
    (repo / "yaml.py").write_text("raise SystemExit('planted yaml imported')\n", encoding="utf-8")
    done = step(tmp_path, "run", defaults(summary="false"), repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "planted" not in done.stdout + done.stderr
    outputs = parse_github_output((tmp_path / "output.txt").read_text(encoding="utf-8"))
    assert outputs["verdict"] == "pass", outputs
    results = outputs["results-path"]
    assert results.startswith(str(tmp_path / "rag-corpus-check.")) and os.path.isfile(results)
    assert not (tmp_path / "summary.md").exists()  # summary: 'false'


def test_the_run_step_refuses_a_wrong_input_too(repo, tmp_path):
    done = step(tmp_path, "run", defaults(**{"retriever-timeout": "ten"}), repo)
    assert done.returncode == 1
    assert "retriever-timeout must be a whole number of seconds" in done.stdout
    assert not (tmp_path / "output.txt").exists()
