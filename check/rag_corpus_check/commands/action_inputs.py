"""The action's inputs, one row each: how a value is checked and which CLI
arguments it becomes. action.yml only declares the inputs and hands them all
over as JSON (``ACTION_INPUTS: ${{ toJSON(inputs) }}``, through ``env:``, never
pasted into a script); ``check/action_step.py`` calls :func:`main` to check
them, then runs ``check/launch.py`` (the CLI) with :func:`cli_arguments`.

To add an input: declare it in action.yml (description, default), add its row
to :data:`INPUTS`, document it; tests/test_action_inputs.py fails until the
two lists agree.

Standard library only: the ``validate`` step runs before the dependencies
are installed, with setup-python's bare interpreter.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Values = Mapping[str, str]
ToCli = Callable[[str, Values], list[str]]
INVALID_INPUT = 1  # the step fails before anything is installed or measured


@dataclass(frozen=True)
class Rule:
    """What a value must look like: a pattern (matched whole) and the words
    for the error; ``optional``: the empty string is also fine."""

    pattern: str
    must_be: str
    optional: bool = False


BOOLEAN = Rule(r"true|false", "'true' or 'false'")
ANY = Rule(r"(?s).*", "anything")


@dataclass(frozen=True)
class Input:
    name: str  # as declared in action.yml
    rule: Rule
    to_cli: ToCli
    help: str  # where the value goes, for the docs and for reviewers


def flag(option: str) -> ToCli:
    return lambda value, _: [option] if value == "true" else []


def option(name: str) -> ToCli:
    return lambda value, _: [name, value] if value else []


def no_cli(value: str, inputs: Values) -> list[str]:
    return []


INPUTS: tuple[Input, ...] = (
    Input("config", ANY, lambda value, _: ["--config", value], "--config"),
    Input("working-directory", ANY, no_cli, "the run step's working directory (action.yml)"),
    Input("advisory", BOOLEAN, flag("--advisory"), "--advisory when 'true'"),
    # A sha or a plain ref name: it ends up in git and CLI arguments.
    Input("base-ref", Rule(r"[A-Za-z0-9][A-Za-z0-9._/-]*", "a commit sha or a ref name", optional=True),
          lambda value, _: ["--base", value, "--fetch-base"] if value else [], "--base REF --fetch-base when set"),
    Input("require-base", BOOLEAN,
          lambda value, inputs: ["--no-require-base"] if value != "true" and inputs["base-ref"] else [],
          "--no-require-base when 'false' and base-ref is set"),
    # The sources themselves are checked by the CLI (one list, rules.SOURCES).
    Input("require-rules-source",
          Rule(r"[a-z-]+(,[a-z-]+)*", "rules sources separated by commas", optional=True),
          option("--require-rules-source"), "--require-rules-source when set"),
    Input("summary", BOOLEAN, lambda value, _: [] if value == "true" else ["--no-step-summary"],
          "--no-step-summary unless 'true'"),
    Input("allow-retriever-command", BOOLEAN, flag("--allow-retriever-command"),
          "--allow-retriever-command when 'true'"),
    Input("retriever-timeout", Rule(r"[0-9]{1,5}", "a whole number of seconds"), option("--retriever-timeout"),
          "--retriever-timeout"),
    # Which events the check runs under is decided by the check (context.py).
    Input("allow-untrusted-event", BOOLEAN, flag("--allow-untrusted-event"), "--allow-untrusted-event when 'true'"),
)


def _names(rows: list[Input]) -> str:
    names = [row.name for row in rows]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def problem(values: Values) -> str | None:
    """The first thing wrong with the inputs, in words; None when all are fine."""
    missing = [row.name for row in INPUTS if not isinstance(values.get(row.name), str)]
    if missing:
        return f"the action passed no value for {', '.join(missing)} (action.yml and action_inputs.py disagree)"
    booleans = [row for row in INPUTS if row.rule is BOOLEAN]
    if any(values[row.name] not in ("true", "false") for row in booleans):
        return f"{_names(booleans)} take 'true' or 'false'"
    for row in INPUTS:
        value = values[row.name]
        if row.rule is not BOOLEAN and not (row.rule.optional and value == "") \
                and not re.fullmatch(row.rule.pattern, value):
            return f"{row.name} must be {row.rule.must_be}"
    return None


def cli_arguments(values: Values, out_dir: str) -> list[str]:
    """The check's command line for these (valid) inputs."""
    argv = ["--github", "--output", os.path.join(out_dir, "results.json"),
            "--summary-file", os.path.join(out_dir, "summary.md")]
    for row in INPUTS:
        argv += row.to_cli(values[row.name], values)
    return argv


def read_inputs(environ: Mapping[str, str]) -> dict[str, str]:
    """The inputs as strings, as an action's inputs are (a JSON true, a number
    or null, should the runner ever send one, read as the workflow wrote it)."""
    try:
        values = json.loads(environ.get("ACTION_INPUTS", ""))
    except ValueError:
        values = None
    if not isinstance(values, dict):
        return {}
    return {name: text for name, value in values.items() if (text := _text(value)) is not None}


def _text(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value) if isinstance(value, (str, int, float)) else None


def main(argv: list[str]) -> list[str] | int:
    """``validate``: 0, or 1 with an annotation when an input is wrong.
    ``run``: the same check, then the CLI's arguments for the inputs (with a
    fresh results folder in the runner's temporary directory, never the
    workspace)."""
    values = read_inputs(os.environ)
    wrong = problem(values)
    if wrong is not None:
        print(f"::error title=rag-corpus-check::{wrong}", flush=True)
        return INVALID_INPUT
    if argv != ["run"]:
        return 0
    return cli_arguments(values, tempfile.mkdtemp(prefix="rag-corpus-check.",
                                                  dir=os.environ.get("RUNNER_TEMP") or None))
