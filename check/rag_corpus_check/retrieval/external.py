"""The team's own retriever: an argv list from the config, run without a
shell, with a timeout. It reads the corpus and a questions file we write, and
writes a run (JSONL) that is then validated like a committed one.

This executes code from the repository being checked — in a pull request,
the author's — with everything the job's user can do: it can read the
environment of the job's processes through ``/proc``, find the runner's
files, write to the summary. Only the caller can enable it, and only under
``pull_request``/``push`` (see :mod:`context`). What is done here contains a
command that misbehaves by accident, not one that attacks:

* its environment has no runner command files, ``ACTIONS_*``/``INPUT_*``
  variables, or anything named like a token or secret;
* it runs under :mod:`reaper` in a session of its own: when it exits or
  times out, its process group and every process it left behind are killed;
* what it prints is read as it comes and only the last :data:`MAX_CAPTURE`
  bytes of each stream are kept;
* the timeout is the lower of the config's and the caller's ceiling;
* its files live in a temporary directory the caller removes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass

from rag_corpus_check.core.text import safe_text

MAX_SHOWN = 2000  # characters of stdout/stderr kept for the report
MAX_CAPTURE = 64 * 1024  # bytes of each stream kept while reading
GRACE = 10.0  # seconds the reaper has to kill everything after a timeout
REAPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reaper.py")

# Variables a retrieval command must not see: the runner's command files
# (writing to them changes outputs, the summary, later steps' environment),
# its tokens, and the action's inputs.
_HIDDEN_PREFIXES = ("ACTIONS_", "INPUT_", "GITHUB_")
_KEPT_GITHUB = ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "GITHUB_SHA", "GITHUB_REF", "GITHUB_REPOSITORY")
# Names of variables that hold credentials (an embedding endpoint's key
# variable must be named with one: `retriever.endpoint.key_env`).
_SECRET_WORDS = ("TOKEN", "SECRET", "KEY", "PASSWORD", "CREDENTIAL")


def command_environment(environ=None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    env = {}
    for k, v in environ.items():
        if k.startswith(_HIDDEN_PREFIXES) and k not in _KEPT_GITHUB:
            continue
        if any(word in k.upper() for word in _SECRET_WORDS):
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


class _Tail(threading.Thread):
    """Reads a stream to its end, keeping only its last MAX_CAPTURE bytes."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.data = b""

    def run(self) -> None:
        while chunk := self.stream.read1(65536):
            self.data = (self.data + chunk)[-MAX_CAPTURE:]
        self.stream.close()

    def text(self) -> str:
        # A process the command started (and nobody could kill) may hold the
        # pipe open: wait a little, then go on with what was read. The stream
        # is left to the thread: closing it under a read would block here.
        self.join(GRACE)
        text = self.data.decode("utf-8", "replace")
        if len(text) > MAX_SHOWN:
            text = "…" + text[-MAX_SHOWN:]
        return "\n".join(safe_text(line, 300) for line in text.splitlines()[-40:])


def _failed(message: str) -> CommandResult:
    return CommandResult(False, message, None, "", "")


def _missing(program: str, cwd: str, env: dict) -> str | None:
    """Why ``program`` cannot be started (checked before starting it), or None."""
    path = os.path.join(cwd, program) if os.sep in program else shutil.which(program, path=env.get("PATH"))
    if path is None or not os.path.exists(path):
        return f"retriever command not found: `{safe_text(program, 100)}`"
    if not os.access(path, os.X_OK) or os.path.isdir(path):
        return f"retriever command is not executable: `{safe_text(program, 100)}`"
    return None


def run_command(argv: list[str], *, corpus_path: str, questions: list[tuple[str, str]], cwd: str,
                timeout: float, depth: int, k: int, workdir: str) -> CommandResult:
    qpath = os.path.join(workdir, "questions.jsonl")
    out = os.path.join(workdir, "run.jsonl")
    with open(qpath, "w", encoding="utf-8") as f:
        for qid, text in questions:
            f.write(json.dumps({"query_id": qid, "query": text}, ensure_ascii=False) + "\n")
    values = {"corpus": corpus_path, "queries": qpath, "output": out, "depth": str(depth), "k": str(k)}
    try:
        args = [a.format_map(values) for a in argv]
    except (KeyError, ValueError, IndexError):
        return _failed("retriever.command has an unknown placeholder; use {corpus}, {queries}, "
                       "{output}, {depth}, {k} (double braces for a literal brace)")
    env = command_environment()
    why = _missing(args[0], cwd, env)
    if why:
        return _failed(why)
    status, so, se = _run_contained(args, cwd, env, timeout)
    failure = _failure(status, timeout, out)
    return CommandResult(failure is None, failure or "ok", None if failure else out, so, se)


def _failure(status: int | None, timeout: float, out: str) -> str | None:
    if status is None:
        return (f"retriever command timed out after {timeout:g} s (retriever.timeout, at most "
                "--retriever-timeout); it and everything it started were killed")
    if status != 0:
        return f"retriever command exited with status {status}"
    if not os.path.isfile(out):
        return "retriever command did not write its run to {output}"
    return None


def _run_contained(args: list[str], cwd: str, env: dict, timeout: float) -> tuple[int | None, str, str]:
    """(exit status or None on timeout, stdout tail, stderr tail)."""
    posix = os.name == "posix"
    command = [sys.executable, "-I", REAPER, *args] if posix else args
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=posix)
    tails = [_Tail(proc.stdout), _Tail(proc.stderr)]
    for t in tails:
        t.start()
    try:
        status: int | None = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        status = None
        _stop(proc, posix)
    so, se = (t.text() for t in tails)
    return status, so, se


def _stop(proc: subprocess.Popen, posix: bool) -> None:
    """Ask the reaper to kill everything; kill it if it does not in time."""
    proc.send_signal(signal.SIGTERM) if posix else proc.kill()
    try:
        proc.wait(GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
