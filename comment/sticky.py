"""The comment job's side of GitHub: the event, the artifact, one sticky comment.

Runs under ``workflow_run`` with a token that may write pull-request comments
and read actions (for the artifact). What the comment says is built by
:mod:`rag_corpus_check.report.comment` from the artifact's results.json; the
pull request comes from the event payload (or, for a fork, from the API by the
run's head commit), never from the artifact. Every request goes to
``$GITHUB_API_URL``; the token is not sent on to a redirect's host (the
artifact zip is served from blob storage).
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from rag_corpus_check.core.text import safe_text
from rag_corpus_check.report.comment import (
    MARKER,
    MAX_ARTIFACT_BYTES,
    RESULTS,
    ArtifactError,
    RunInfo,
    load_results,
    read_artifact,
    render,
    render_missing,
    render_refused,
)
from rag_corpus_check.report.github import command

TIMEOUT_S = 60
MAX_JSON_BYTES = 10 * 1024 * 1024
MAX_COMMENT_PAGES = 10
CONCLUSIONS = frozenset(
    ("success", "failure", "cancelled", "skipped", "timed_out", "action_required", "neutral", "stale", "startup_failure")
)
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_URL = re.compile(r"https?://[A-Za-z0-9.:\[\]-]+(/[A-Za-z0-9._~/-]*)?")
_ARTIFACT_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
_WORKFLOW_PATH = re.compile(r"\.github/workflows/[A-Za-z0-9._-]{1,100}\.ya?ml")


class GitHubError(Exception):
    """The job cannot do its work; the message is ours."""


@dataclass(frozen=True)
class Api:
    base: str
    repo: str
    token: str

    def call(self, method: str, path: str, body: object = None, limit: int = MAX_JSON_BYTES) -> bytes:
        """The response body, at most ``limit`` + 1 bytes (the caller sees it is over)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        for key, value in (("Accept", "application/vnd.github+json"), ("X-GitHub-Api-Version", "2022-11-28"),
                           ("User-Agent", "rag-corpus-check-comment"), ("Content-Type", "application/json")):
            req.add_header(key, value)
        req.add_unredirected_header("Authorization", f"Bearer {self.token}")
        where = f"{method} {path.split('?')[0]}"
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                return resp.read(limit + 1)
        except urllib.error.HTTPError as exc:
            raise GitHubError(f"{where} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise GitHubError(f"{where} failed ({type(exc).__name__})") from None

    def json(self, method: str, path: str, body: object = None) -> Any:
        raw = self.call(method, path, body)
        try:
            return json.loads(raw) if len(raw) <= MAX_JSON_BYTES else None
        except ValueError:
            raise GitHubError(f"{method} {path.split('?')[0]} answered something that is not JSON") from None


def _dicts(value: object) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _get(value: object, *keys: str) -> object:
    """value[k1][k2]... or None where a level is missing or not an object."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


# ---------------------------------------------------------------- the event


def _env(name: str, pattern: re.Pattern | None = None) -> str:
    value = os.environ.get(name, "")
    if not value or (pattern is not None and not pattern.fullmatch(value)):
        raise GitHubError(f"{name} is not set or not as expected")
    return value


def run_info(event: dict, repo: str, server: str) -> RunInfo:
    wr = event.get("workflow_run")
    run_id, head = _get(wr, "id"), _get(wr, "head_sha")
    if type(run_id) is not int or not isinstance(head, str) or not _SHA.fullmatch(head):
        raise GitHubError("the event has no workflow_run with an id and a head commit")
    conclusion = _get(wr, "conclusion")
    return RunInfo(run_id, f"{server}/{repo}/actions/runs/{run_id}", head,
                   conclusion if isinstance(conclusion, str) and conclusion in CONCLUSIONS else None)


def workflow_refusal(event: dict, expected: str) -> str | None:
    """Why the run is not of the expected workflow file, or None. The
    trigger matches workflows by `name:`, which any workflow a pull request
    adds can copy (and upload a forged results file); the path is GitHub's
    word. Compared exactly: no suffix is stripped."""
    path = _get(event, "workflow_run", "path")
    if path == expected:
        return None
    shown = f"`{safe_text(path, 200)}`" if isinstance(path, str) else "not given"
    return (f"the run's workflow file is {shown}, not `{expected}` (input `workflow-path`): another workflow with "
            "the same name can upload forged results, so nothing was posted")


def pr_number(api: Api, event: dict, head_sha: str) -> int | None:
    """The pull request the run checked: from the payload, whose
    ``pull_requests`` is empty for a fork's branch, else by the head commit."""
    wr = event["workflow_run"]
    if wr.get("event") != "pull_request":
        return None
    repo_id = _get(event, "repository", "id")
    listed = [_get(p, "number") for p in _dicts(wr.get("pull_requests")) if _get(p, "base", "repo", "id") == repo_id]
    found = listed or _by_head(api, wr, head_sha)
    return found[0] if found and type(found[0]) is int and found[0] > 0 else None


def _by_head(api: Api, wr: dict, head_sha: str) -> list:
    owner, branch = _get(wr, "head_repository", "owner", "login"), wr.get("head_branch")
    if not isinstance(owner, str) or not isinstance(branch, str):
        return []
    query = urllib.parse.urlencode({"state": "open", "head": f"{owner}:{branch}", "per_page": 100})
    pulls = _dicts(api.json("GET", f"/repos/{api.repo}/pulls?{query}"))
    found = [_get(p, "number") for p in pulls if _get(p, "head", "sha") == head_sha]
    return found if len(found) == 1 else []


# ---------------------------------------------------------------- the artifact


def _usable(artifact: dict, name: str) -> bool:
    return artifact.get("name") == name and not artifact.get("expired") and type(artifact.get("id")) is int


def download(api: Api, run_id: int, name: str) -> bytes | None:
    """The newest unexpired artifact ``name`` of the run (a re-run uploads
    another), refused before download when GitHub says it is too big."""
    query = urllib.parse.urlencode({"name": name, "per_page": 100})
    listing = api.json("GET", f"/repos/{api.repo}/actions/runs/{run_id}/artifacts?{query}")
    found = [a for a in _dicts(_get(listing, "artifacts")) if _usable(a, name)]
    if not found:
        return None
    newest = max(found, key=lambda a: a["id"])
    size = newest.get("size_in_bytes")
    if type(size) is int and size > MAX_ARTIFACT_BYTES:
        raise ArtifactError(f"the artifact is {size} bytes, over the limit of {MAX_ARTIFACT_BYTES}")
    return api.call("GET", f"/repos/{api.repo}/actions/artifacts/{newest['id']}/zip", limit=MAX_ARTIFACT_BYTES)


def comment_body(api: Api, run: RunInfo, name: str) -> tuple[str, str]:
    """The comment and what became of the artifact: ok, missing or refused."""
    try:
        data = download(api, run.run_id, name)
        if data is None:
            print(command("notice", f"run {run.run_id} has no artifact named {name}", title="rag-corpus-check"))
            return render_missing(run), "missing"
        return render(load_results(read_artifact(data)[RESULTS]), run), "ok"
    except ArtifactError as exc:
        reason = str(exc)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        # A value of a shape the schema allows but the comment cannot show: the
        # artifact is hostile, so refuse it rather than leave an older comment up.
        reason = f"{RESULTS} holds a value the comment cannot show ({type(exc).__name__})"
    print(command("error", f"the results artifact was refused: {reason}", title="rag-corpus-check"))
    return render_refused(reason, run), "refused"


# ---------------------------------------------------------------- the comment


def _ours(c: dict) -> bool:
    """A comment of a bot (the job's token) that starts with the marker. The
    marker alone is not enough: anyone can write it in a comment."""
    body = c.get("body")
    return isinstance(body, str) and body.startswith(MARKER) and _get(c, "user", "type") == "Bot"


def find_comment(api: Api, number: int) -> int | None:
    for page in range(1, MAX_COMMENT_PAGES + 1):
        comments = _dicts(api.json("GET", f"/repos/{api.repo}/issues/{number}/comments?per_page=100&page={page}"))
        ours = [c["id"] for c in comments if _ours(c) and type(c.get("id")) is int]
        if ours or len(comments) < 100:
            return ours[0] if ours else None
    return None


def upsert(api: Api, number: int, body: str) -> tuple[str, int]:
    """Update the sticky comment, or create it: ("updated" | "created", id)."""
    found = find_comment(api, number)
    if found is not None:
        api.json("PATCH", f"/repos/{api.repo}/issues/comments/{found}", {"body": body})
        return "updated", found
    made = api.json("POST", f"/repos/{api.repo}/issues/{number}/comments", {"body": body})
    made_id = _get(made, "id")
    return "created", made_id if type(made_id) is int else 0


# ---------------------------------------------------------------- the job


def _outputs(**values: object) -> None:
    """Step outputs: numbers and words of our own, one line each."""
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(f"{k.replace('_', '-')}={v}\n" for k, v in values.items())


def _load_event(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            event = json.load(f)
    except (OSError, ValueError):
        raise GitHubError("the event payload cannot be read") from None
    if not isinstance(event, dict):
        raise GitHubError("the event payload is not an object")
    return event


def run() -> int:
    if os.environ.get("GITHUB_EVENT_NAME") != "workflow_run":
        raise GitHubError("this action runs on `workflow_run` (after the workflow that ran the check)")
    repo = _env("GITHUB_REPOSITORY", _REPOSITORY)
    api = Api(_env("GITHUB_API_URL", _URL).rstrip("/"), repo, _env("RAG_COMMENT_TOKEN"))
    expected = os.environ.get("WORKFLOW_PATH", "")
    if not _WORKFLOW_PATH.fullmatch(expected):
        raise GitHubError("input `workflow-path` must name the check's workflow file, e.g. "
                          "`.github/workflows/rag-corpus-check.yml`")
    event = _load_event(_env("GITHUB_EVENT_PATH"))
    info = run_info(event, repo, _env("GITHUB_SERVER_URL", _URL).rstrip("/"))
    refusal = workflow_refusal(event, expected)
    if refusal is not None:
        print(command("error", f"run {info.run_id}: {refusal}", title="rag-corpus-check"))
        _outputs(result="wrong-workflow")
        return 1
    number = pr_number(api, event, info.head_sha)
    if number is None:
        print(command("notice", f"run {info.run_id} was not for an open pull request of this repository; "
                      "nothing to comment on", title="rag-corpus-check"))
        _outputs(result="skipped")
        return 0
    body, artifact = comment_body(api, info, _env("ARTIFACT_NAME", _ARTIFACT_NAME))
    result, comment_id = upsert(api, number, body)
    print(f"rag-corpus-check: {result} comment {comment_id} on pull request {number} (artifact: {artifact})")
    _outputs(result=result, comment_id=comment_id, pr_number=number, artifact=artifact)
    return 1 if artifact == "refused" else 0


def main() -> int:
    try:
        return run()
    except GitHubError as exc:
        print(command("error", f"rag-corpus-check comment: {exc}", title="rag-corpus-check"))
        return 1
