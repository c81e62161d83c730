"""The team's embedding command, for ``rag-corpus-check embed`` (the
trusted side: never the pull request gate).

The protocol: the command reads one JSON object per line,
``{"id": "<id>", "kind": "document" | "question", "text": "<text>"}`` — from
the file named by a ``{input}`` argument, or on its standard input when no
argument has ``{input}`` — and writes one JSON array of numbers per line, in
the same order (line *i* embeds text *i*) — to the file named by a
``{output}`` argument, or on its standard output when none has ``{output}``.
It exits 0. Its vectors are checked before anything is written: as many
lines as texts, ``dimensions`` numbers each, finite and not all zero in the
folder's dtype.

It runs as :mod:`external` runs a retriever: without a shell, in a
session of its own under :mod:`reaper` (everything it leaves behind is
killed), with a timeout, its standard error's tail kept for the message. Its
environment is this one's without the runner's file-command and
``ACTIONS_*``/``INPUT_*`` variables; unlike a retriever's it keeps tokens and
secrets (the embedding provider's key is why this runs on the trusted side).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from rag_corpus_check.core.text import safe_id, safe_text
from rag_corpus_check.retrieval.dense.npy import bad_row
from rag_corpus_check.retrieval.external import _HIDDEN_PREFIXES, _KEPT_GITHUB, REAPER, _stop, _Tail
from rag_corpus_check.safe_io import InputError

SHOWN = "(embedding command output)"
POSIX = os.name == "posix"
LINE_BYTES = 40  # at most this many bytes per number in the output, on average


def trusted_environment(environ=None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items() if not k.startswith(_HIDDEN_PREFIXES) or k in _KEPT_GITHUB}


def _bad(message: str, line: int | None = None) -> InputError:
    return InputError("embedding", message, file=SHOWN, line=line)


def arguments(argv: list[str], paths: dict[str, str]) -> list[str]:
    """``argv`` with ``{input}`` and ``{output}`` filled in."""
    try:
        return [a.format_map(paths) for a in argv]
    except (KeyError, ValueError, IndexError):
        raise InputError("config", "--command has an unknown placeholder; use {input} and {output} (double "
                         "braces for a literal brace)") from None


def embed(argv: list[str], items: list[tuple[str, str, str]], dims: int, dtype: str, cwd: str,
          timeout: float) -> np.ndarray:
    """The vectors of ``items`` ((kind, id, text)), ``len(items)`` × ``dims`` in ``dtype``."""
    with tempfile.TemporaryDirectory(prefix="rag-corpus-check-embed-") as work:
        paths = {"input": os.path.join(work, "texts.jsonl"), "output": os.path.join(work, "vectors.jsonl")}
        with open(paths["input"], "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"id": i, "kind": k[:-1], "text": t}, ensure_ascii=False) + "\n"
                         for k, i, t in items)
        args = arguments(argv, paths)
        _run(args, cwd, paths, _streams(argv), timeout)
        return read_output(paths["output"], [i for _, i, _ in items], dims, dtype)


def _streams(argv: list[str]) -> tuple[bool, bool]:
    """Whether the input goes on stdin, and the output comes on stdout."""
    return not any("{input}" in a for a in argv), not any("{output}" in a for a in argv)


def _run(args: list[str], cwd: str, paths: dict[str, str], streams: tuple[bool, bool], timeout: float) -> None:
    env = trusted_environment()
    _findable(args[0], cwd, env)
    command = [sys.executable, "-I", REAPER, *args] if POSIX else args
    with open(paths["input"] if streams[0] else os.devnull, "rb") as fin, \
            open(paths["output"] if streams[1] else os.devnull, "wb") as fout:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=fin, stdout=fout, stderr=subprocess.PIPE,
                                start_new_session=POSIX)
        tail = _Tail(proc.stderr)
        tail.start()
        status = _wait(proc, timeout)
    if status != 0:
        why = f"timed out after {timeout:g} s" if status is None else f"exited with status {status}"
        raise _bad(f"the embedding command {why}; nothing was written. Its last output:\n{tail.text()}")


def _findable(program: str, cwd: str, env: dict[str, str]) -> None:
    if shutil.which(program, path=env.get("PATH")) is None and not os.path.isfile(os.path.join(cwd, program)):
        raise InputError("config", f"embedding command not found: `{safe_text(program, 100)}`")


def _wait(proc: subprocess.Popen, timeout: float) -> int | None:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        _stop(proc, POSIX)
        return None


def read_output(path: str, ids: list[str], dims: int, dtype: str) -> np.ndarray:
    """The command's vectors, checked (see the module's docstring)."""
    cap = len(ids) * (dims * LINE_BYTES + 8) + 4096
    if not os.path.isfile(path) or os.path.getsize(path) > cap:
        raise _bad(f"the embedding command wrote no output, or more than {cap} bytes for {len(ids)} texts")
    with open(path, "rb") as f:
        lines = f.read(cap).split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    if len(lines) != len(ids):
        raise _bad(f"the embedding command wrote {len(lines)} lines for {len(ids)} texts (one JSON array per "
                   "text, in order)")
    matrix = np.empty((len(ids), dims), dtype=dtype)
    for i, line in enumerate(lines):
        matrix[i] = _vector(line, dims, i + 1, ids[i])
    usable(matrix, ids)
    return matrix


def _vector(line: bytes, dims: int, number: int, key: str) -> list[float]:
    try:
        value = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        value = None
    if not (isinstance(value, list) and len(value) == dims and all(_number(x) for x in value)):
        raise _bad(f"not a JSON array of {dims} numbers (the vector of `{safe_id(key)}`)", number)
    return value


def _no_constant(name: str):
    raise ValueError(name)


def _number(x) -> bool:
    return type(x) in (int, float)


def usable(matrix: np.ndarray, ids: list[str]) -> None:
    bad = bad_row(matrix)
    if bad is not None:
        row, why = bad
        raise _bad(f"the vector of `{safe_id(ids[row])}` has {why} (in {matrix.dtype}), which is no vector to "
                   "compare by cosine", row + 1)
