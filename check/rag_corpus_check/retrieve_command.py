"""The team's own retriever: an argv list from the config, run without a
shell, with a timeout. It reads the corpus and a questions file we write, and
writes a run (JSONL or TREC) that is then validated like a committed one.

This executes code from the repository being checked: only safe under
``pull_request`` with a read-only token (see the README).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass

from rag_corpus_check.text import safe_text

MAX_SHOWN = 2000  # characters of stdout/stderr kept for the report


# Variables a retrieval command must not see: the runner's command files
# (writing to them changes outputs, the summary, later steps' environment),
# its tokens, and the action's inputs.
_HIDDEN_PREFIXES = ("ACTIONS_", "INPUT_", "GITHUB_")
_KEPT_GITHUB = ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "GITHUB_SHA", "GITHUB_REF", "GITHUB_REPOSITORY")


def command_environment(environ=None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    env = {}
    for k, v in environ.items():
        if k.startswith(_HIDDEN_PREFIXES) and k not in _KEPT_GITHUB:
            continue
        if "TOKEN" in k.upper() or "SECRET" in k.upper():
            continue
        env[k] = v
    return env


@dataclass
class CommandResult:
    ok: bool
    message: str
    output_path: str | None
    stdout_tail: str
    stderr_tail: str
    workdir: str


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    if len(text) > MAX_SHOWN:
        text = "…" + text[-MAX_SHOWN:]
    return "\n".join(safe_text(line, 300) for line in text.splitlines()[-40:])


def run_command(
    argv: list[str],
    *,
    corpus_path: str,
    questions: list[tuple[str, str]],
    cwd: str,
    timeout: float,
    depth: int,
    k: int,
) -> CommandResult:
    workdir = tempfile.mkdtemp(prefix="rag-corpus-check-retriever-")
    qpath = os.path.join(workdir, "questions.jsonl")
    out = os.path.join(workdir, "run.jsonl")
    with open(qpath, "w", encoding="utf-8") as f:
        for qid, text in questions:
            f.write(json.dumps({"query_id": qid, "query": text}, ensure_ascii=False) + "\n")
    values = {"corpus": corpus_path, "queries": qpath, "output": out, "depth": str(depth), "k": str(k)}
    try:
        args = [a.format_map(values) for a in argv]
    except (KeyError, ValueError, IndexError):
        return CommandResult(
            False,
            "retriever.command has an unknown placeholder; use {corpus}, {queries}, {output}, "
            "{depth}, {k} (double braces for a literal brace)",
            None, "", "", workdir,
        )
    try:
        res = subprocess.run(
            args, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
            check=False, shell=False, env=command_environment(),
        )
    except FileNotFoundError:
        return CommandResult(
            False, f"retriever command not found: `{safe_text(argv[0], 100)}`", None, "", "", workdir
        )
    except PermissionError:
        return CommandResult(
            False, f"retriever command is not executable: `{safe_text(argv[0], 100)}`", None, "", "", workdir
        )
    except subprocess.TimeoutExpired as exc:
        return CommandResult(
            False, f"retriever command timed out after {timeout:g} s (retriever.timeout)",
            None, _tail(exc.stdout or b""), _tail(exc.stderr or b""), workdir,
        )
    so, se = _tail(res.stdout), _tail(res.stderr)
    if res.returncode != 0:
        return CommandResult(False, f"retriever command exited with status {res.returncode}", None, so, se, workdir)
    if not os.path.isfile(out):
        return CommandResult(False, "retriever command did not write its run to {output}", None, so, se, workdir)
    return CommandResult(True, "ok", out, so, se, workdir)
