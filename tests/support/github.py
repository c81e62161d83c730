"""The Actions runner's two parsers, re-implemented for the tests (one copy):
``$GITHUB_OUTPUT`` files (:func:`parse_github_output`) and workflow commands
in a step's output (:func:`find_commands`, :func:`unintended_commands`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# .NET char.IsWhiteSpace, which string.TrimStart() strips.
DOTNET_WHITESPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


@dataclass(frozen=True)
class Command:
    form: str  # "v2" (::name props::data) or "legacy" (##[name props]data)
    name: str
    props: dict
    data: str
    line: str


def _unescape_data(s: str) -> str:
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_prop(s: str) -> str:
    return _unescape_data(s).replace("%3A", ":").replace("%2C", ",")


def runner_lines(text: str) -> list[str]:
    # The runner reads process output with .NET's line reader: \r\n, \r and \n
    # each end a line.
    return re.split(r"\r\n|\r|\n", text)


def find_commands(text: str) -> list[Command]:
    """Every workflow command the Actions runner would see in ``text`` (one
    of stdout or stderr): ``ActionCommand.TryParseV2`` on the left-trimmed
    line, and the legacy ``##[`` form anywhere in a line."""
    found = []
    for line in runner_lines(text):
        t = line.lstrip(DOTNET_WHITESPACE)
        if t.startswith("::"):
            end = t.find("::", 2)
            if end >= 0:
                section, data = t[2:end], t[end + 2 :]
                name, _, props_text = section.partition(" ")
                props = {}
                for pair in filter(None, props_text.split(",")):
                    k, _, v = pair.partition("=")
                    props[k] = _unescape_prop(v)
                found.append(Command("v2", name, props, _unescape_data(data), line))
        start = line.find("##[")
        while start >= 0:
            close = line.find("]", start + 3)
            body = line[start + 3 : close if close >= 0 else len(line)]
            found.append(
                Command(
                    "legacy", body.split(" ")[0], {}, line[close + 1 :] if close >= 0 else "", line
                )
            )
            start = line.find("##[", start + 3)
    return found


INTENDED_COMMANDS = {"error", "warning", "notice"}
# The progress fold for long runs (rag_corpus_check/core/progress.py), exactly.
INTENDED_FOLDS = {("group", "rag-corpus-check progress"), ("endgroup", "")}
INTENDED_PROPS = {"file", "line", "col", "endLine", "endColumn", "title"}


def unintended_commands(text: str) -> list[Command]:
    """Commands the check did not mean to issue: anything but an annotation
    (error/warning/notice) with our title and the usual properties, any legacy
    form, and any annotation whose message, unescaped, has a line break."""
    bad = []
    for c in find_commands(text):
        if c.form == "v2" and (c.name, c.data) in INTENDED_FOLDS and not c.props:
            continue
        if c.form != "v2" or c.name not in INTENDED_COMMANDS or not set(c.props) <= INTENDED_PROPS:
            bad.append(c)
        elif not c.props.get("title", "rag-corpus-check").startswith("rag-corpus-check"):
            bad.append(c)
        elif "\n" in c.data or "\r" in c.data or "\n" in "".join(c.props.values()):
            bad.append(c)
        elif c.props.get("line") is not None and not c.props["line"].isdigit():
            bad.append(c)
    return bad


def parse_github_output(text: str) -> dict:
    """``$GITHUB_OUTPUT`` read as the runner reads it (FileCommandManager:
    ``name=value`` lines and ``name<<DELIMITER`` ... ``DELIMITER`` blocks);
    raises ValueError where the runner would fail the step."""
    result: dict[str, str] = {}
    pos = 0

    def read_line():
        nonlocal pos
        if pos >= len(text):
            return None, None
        lf = text.find("\n", pos)
        if lf < 0:
            line, newline, pos = text[pos:], None, len(text)
            return line, newline
        if lf > pos and text[lf - 1] == "\r":
            line, newline = text[pos : lf - 1], "\r\n"
        else:
            line, newline = text[pos:lf], "\n"
        pos = lf + 1
        return line, newline

    line, _ = read_line()
    while line is not None:
        if line:
            eq, hd = line.find("="), line.find("<<")
            if eq >= 0 and (hd < 0 or eq < hd):
                key, value = line.split("=", 1)
                if not key:
                    raise ValueError(f"invalid format {line!r}")
            elif hd >= 0 and (eq < 0 or hd < eq):
                key, delim = line.split("<<", 1)
                if not key or not delim:
                    raise ValueError(f"invalid format {line!r}")
                start = end = pos
                tmp, newline = read_line()
                while tmp != delim:
                    if tmp is None:
                        raise ValueError(f"delimiter {delim!r} not found")
                    if newline is None:
                        raise ValueError("EOF marker missing new line")
                    end = pos - len(newline)
                    tmp, newline = read_line()
                value = text[start:end] if end > start else ""
            else:
                raise ValueError(f"invalid format {line!r}")
            result[key] = value
        line, _ = read_line()
    return result




def run_action_step(repo, runner, base: str, head: str, **inputs: str):
    """The action's run step (``check/action_step.py run``) as the runner
    starts it for a pull request from ``base`` to ``head``: every input at
    action.yml's default but ``inputs`` (``base_ref`` for ``base-ref``),
    RUNNER_TEMP, the event, ``$GITHUB_OUTPUT`` and the step summary in
    ``runner``. The finished process and its step outputs."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    runner = Path(runner)
    runner.mkdir(parents=True, exist_ok=True)
    action = yaml.safe_load((root / "action.yml").read_text(encoding="utf-8"))
    given = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    given.update({"base-ref": base, **{k.replace("_", "-"): v for k, v in inputs.items()}})
    event = runner / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base}, "head": {"sha": head}, "number": 1}}))
    env = {"PATH": os.environ["PATH"], "ACTION_INPUTS": json.dumps(given), "RUNNER_TEMP": str(runner),
           "GITHUB_OUTPUT": str(runner / "output.txt"), "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
           "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
           "GITHUB_SHA": head, "GITHUB_WORKSPACE": str(repo), "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run([sys.executable, "-I", str(root / "check" / "action_step.py"), "run"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    output = runner / "output.txt"
    return done, parse_github_output(output.read_text(encoding="utf-8")) if output.exists() else {}
