"""Issue 7: every hostile input of a pull request is rejected cleanly (or
measured, where it is harmless), nothing leaks, nothing is executed, and the
result is the same on every run.

One case per hostile input, from ``hostile_cases.CASES``. Each runs the
check on a small spoiled repository, in-process with ``main(argv)`` or, where
the case needs a real process (the canary in the environment, planted
modules, memory caps), exactly as action.yml runs it:
``python -I check/launch.py`` with the repository as the working directory.
``hostile.check_invariants`` then asserts, for every case: the exit code; a
problem naming file, line and a safe id; no traceback; no workflow command
but the intended annotations on stdout and stderr (the runner's parser,
re-implemented); ``$GITHUB_OUTPUT`` parsed as the runner does yields exactly
the intended keys; a summary under 1 MiB, valid UTF-8, that GitHub renders
without links, images or HTML from data and with intact tables; the canary
nowhere; for the inputs that must be refused before they are read whole,
a bound on the bytes read (never on seconds: the machines are busy).
"""

import json

import pytest

from hostile import (
    CANARY,
    CONFIG_NAME,
    check_invariants,
    config_text,
    make_outside,
    make_repo,
    normalised,
    parse_github_output,
    run_action,
    run_inprocess,
)
from hostile_cases import CASES


@pytest.fixture(scope="module")
def output_keys(tmp_path_factory):
    """The step outputs of a normal run: every hostile run must set exactly these."""
    base = tmp_path_factory.mktemp("baseline")
    res = run_inprocess(make_repo(base / "repo"), base / "work")
    assert res.code == 0, res.out + res.err
    return set(parse_github_output(res.gh_output))


def _params():
    for c in CASES:
        if c.base != "hostile":
            continue  # the bundled example's cases: tests/test_cli_invalid.py
        marks = [pytest.mark.xfail(reason=c.xfail, strict=True)] if c.xfail else []
        yield pytest.param(c, id=c.id, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_hostile_input(case, tmp_path, output_keys):
    repo = make_repo(tmp_path / "repo")
    outside = make_outside(tmp_path / "outside")
    case.setup(repo, outside)
    if case.action:
        # What the environment of a job could add is ignored by `python -I`.
        env = {
            "PYTHONPATH": str(repo),
            "PYTHONSTARTUP": str(repo / "sitecustomize.py"),
            "PYTHONUSERBASE": str(repo),
        }
        res = run_action(repo, tmp_path / "work-1", env=env)
    else:
        res = run_inprocess(repo, tmp_path / "work-1")
    check_invariants(
        res,
        exit_code=case.exit,
        expect=case.expect,
        where=case.where,
        forbid=case.forbid,
        max_read=case.max_read,
        output_keys=output_keys,
    )
    assert not list(outside.glob("PWNED*")), "code from the pull request ran"
    if case.marker:
        assert not (repo / case.marker).exists(), "code from the pull request ran"

    # The same result on every run (the big inputs once is enough).
    if res.seconds < 2:
        again = (
            run_action(repo, tmp_path / "work-2", env=env)
            if case.action
            else run_inprocess(repo, tmp_path / "work-2")
        )
        assert normalised(again) == normalised(res)


def test_cases_cover_the_issue():
    """Every hostile input issue 7 names has a case (ids are the checklist)."""
    ids = {c.id for c in CASES}
    wanted = {
        "symlink-proc-environ",
        "symlink-etc-passwd",
        "symlink-git-config",
        "symlinked-directory",
        "symlink-loop",
        "config-absolute-path",
        "config-dotdot",
        "config-tilde",
        "config-nul",
        "directory-for-file",
        "fifo",
        "symlink-dev-zero",
        "name-semicolon",
        "name-backticks",
        "name-newline",
        "name-error-command",
        "name-percent-0a",
        "name-comma",
        "name-colon",
        "line-50mb",
        "sparse-2gb-jsonl",
        "records-1e6",
        "questions-300k-yaml",
        "yaml-python-object-apply",
        "yaml-billion-laughs",
        "yaml-duplicate-key",
        "yaml-NO-as-id",
        "yaml-on-as-key",
        "yaml-date-as-grade",
        "yaml-octal-k",
        "yaml-1e3-grade",
        "yaml-nan-threshold",
        "yaml-deep-flow-50000",
        "yaml-multi-document",
        "yaml-tabs",
        "yaml-error-line-injection",
        "jsonl-duplicate-key",
        "jsonl-nan",
        "jsonl-infinity",
        "jsonl-1e400",
        "jsonl-5000-digits",
        "jsonl-deep-100000",
        "jsonl-bom",
        "jsonl-utf16",
        "jsonl-invalid-utf8",
        "jsonl-lone-surrogate",
        "jsonl-u2028-u0085",
        "jsonl-bare-cr",
        "jsonl-crlf",
        "jsonl-truncated-last-line",
        "jsonl-top-level-array",
        "json-gold-top-level-array",
        "id-trailing-newline",
        "k-non-ascii-digit",
        "grade-float",
        "grade-bool",
        "grade-string",
        "empty-doc-id",
        "inject-add-mask",
        "inject-stop-commands",
        "inject-set-output",
        "inject-legacy",
        "inject-pipe",
        "inject-newline",
        "inject-html-img",
        "inject-md-link",
        "planted-modules",
    }
    assert wanted <= ids, wanted - ids
    assert len(ids) == len(CASES), "duplicate case ids"
    assert CANARY not in "".join(c.title for c in CASES)


@pytest.mark.parametrize("event", ["pull_request", "pull_request_target", "workflow_run"])
def test_config_cannot_make_the_check_run_code(event, tmp_path):
    """A config in the pull request names a "retriever command": under a
    privileged event (and without an explicit opt-in) it must not run."""
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "outside" / "PWNED-command"
    marker.parent.mkdir()
    code = f"open({str(marker)!r}, 'w').write('x')"
    extra = f"retriever:\n  type: command\n  command: [python3, -c, {json.dumps(code)}]\n"
    (repo / CONFIG_NAME).write_text(config_text(run=None, extra=extra), encoding="utf-8")
    res = run_inprocess(repo, tmp_path / "work", env={"GITHUB_EVENT_NAME": event})
    assert not marker.exists(), "the pull request's command ran"
    assert res.code == 2


def test_progress_lines_never_carry_a_command(tmp_path):
    """Progress lines (long runs) name the file being read: a file named
    `##[error]…` must not turn a progress line into a workflow command."""
    import io

    from hostile import find_commands, unintended_commands
    from rag_corpus_check.core import problems as P
    from rag_corpus_check.core import progress
    from rag_corpus_check.inputs import Source, read_corpus
    from rag_corpus_check.safe_io import Limits, resolve_input

    name = "##[error]owned ::add-mask::x.jsonl"
    (tmp_path / name).write_text("".join(f'{{"id": "d{i}", "text": "t"}}\n' for i in range(9000)))
    real, display = resolve_input(str(tmp_path), str(tmp_path), name, "config: `corpus`")
    buf = io.StringIO()
    saved = progress.current()
    progress.install(progress.Progress(enabled=True, github=True, delay=0, interval=0, stream=buf))
    try:
        read_corpus(Source(real, display), Limits(), P.Problems())
        progress.current().close()
    finally:
        progress.install(saved)
    text = buf.getvalue()
    assert "reading" in text, text  # progress was printed
    assert not unintended_commands(text), find_commands(text)


def test_oversized_summary_is_cut_at_a_block_boundary():
    """GitHub drops a step summary over 1 MiB: the cut keeps whole blocks (a
    table keeps its header, a fold is never left open) and says so."""
    from hostile import summary_problems
    from rag_corpus_check.report.markdown import Summary, cell

    s = Summary().heading("h").para("intro")
    s.table(["id", "value"], [[cell(f"::add-mask::{i}|x"), str(i)] for i in range(5000)])
    inner = Summary().table(["a"], [["x"]] * 3000)
    s.details("folded", inner)
    out = s.render(max_bytes=60_000)
    assert len(out.encode("utf-8")) <= 60_000
    assert out.rstrip().endswith("the results file has every value.")
    assert out.count("<details>") == out.count("</details>")
    assert not summary_problems(out)
