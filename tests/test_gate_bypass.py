"""A pull request must not get around the gate (issue 13): each test plays an
attack on a real throw-away git repository and shows that it fails closed.

The CLI is called in-process (``main(argv)``); git is the real git.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import EXAMPLE, check
from support.github import run_action_step
from support.repos import commit, edit, git, init, plant_bare_repository, promisor_config

CONFIG = ".rag-corpus-check.yml"


def messages(results) -> str:
    return "\n".join(p["message"] for p in results["problems"])


# ---------------------------------------------------------------- 1. git reads no config from the tree


@pytest.fixture
def monorepo(tmp_path, monkeypatch):
    """A repository with the knowledge base in `kb/` (cwd: kb/), as a monorepo
    with `working-directory: kb` has it."""
    repo = init(tmp_path / "mono")
    shutil.copytree(EXAMPLE, repo / "kb")
    monkeypatch.chdir(repo / "kb")
    for var in [v for v in os.environ if v.startswith(("GITHUB_", "RUNNER_"))]:
        monkeypatch.delenv(var, raising=False)
    return repo


def test_a_planted_bare_repository_runs_nothing_without_base(monorepo, tmp_path, capsys):
    """HEAD, config, objects/, refs/ added to kb/ make it a bare repository to
    git's discovery; its promisor remote would run a command on the first
    missing object — here the checked commit, which the CLI always reads."""
    marker = tmp_path / "PWNED"
    plant_bare_repository(monorepo / "kb", promisor_config(marker))
    head = commit(monorepo, "a pull request that plants a repository in kb/")
    code, text, results, _ = check(tmp_path, capsys)
    assert not marker.exists(), "git ran a command from the pull request's files"
    assert code == 0, text
    assert results["provenance"]["commit"] == head  # the real checkout's commit


@pytest.mark.parametrize("entry", ["", ".", "bin"])
def test_a_git_program_in_the_tree_never_runs(kb, tmp_path, capsys, monkeypatch, entry):
    """A pull request can commit an executable named `git`. Git is run in the
    checkout's top directory, so a relative PATH entry (an empty one is the
    current directory) would find it there; on Windows the current directory
    is searched before PATH. Only git on an absolute PATH entry is run."""
    marker = tmp_path / "PWNED"
    fake = kb / (entry or ".") / "git"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    base = commit(kb, "base")
    commit(kb, "a pull request that commits a `git` program")
    monkeypatch.setenv("PATH", f"{entry}{os.pathsep}{os.environ['PATH']}")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert not marker.exists(), "a `git` from the pull request ran"
    assert code == 0 and results["rules_source"] == "base", text


def test_without_git_on_an_absolute_path_the_check_fails_closed(kb, tmp_path, capsys, monkeypatch):
    commit(kb, "base")
    monkeypatch.setenv("PATH", "relative-only")
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    assert "git could not be run" in messages(results)


def test_a_planted_bare_repository_runs_nothing_with_base(monorepo, tmp_path, capsys):
    base = commit(monorepo, "base")
    marker = tmp_path / "PWNED"
    plant_bare_repository(monorepo / "kb", promisor_config(marker))
    commit(monorepo, "plant")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert not marker.exists(), "git ran a command from the pull request's files"
    assert code == 0, text
    assert results["comparison"]["base_sha"] == base
    assert results["rules_source"] == "base"


def test_a_planted_repository_cannot_forge_the_checked_commit(monorepo, tmp_path, capsys):
    """The planted repository's objects (here: a copy of a real one with
    another history) would name a commit that was never checked out."""
    real_head = commit(monorepo, "real")
    forged = init(tmp_path / "forged")
    (forged / "x").write_text("x")
    fake = commit(forged, "forged history")
    bare = monorepo / "kb"
    plant_bare_repository(bare, "[core]\n\trepositoryformatversion = 0\n\tbare = true\n", head=fake)
    shutil.copytree(forged / ".git" / "objects", bare / "objects", dirs_exist_ok=True)
    head = commit(monorepo, "plant a forged repository")
    assert head != real_head
    code, text, results, summary = check(tmp_path, capsys)
    assert results["provenance"]["commit"] == head != fake
    assert fake not in summary


def test_replace_refs_do_not_change_what_the_base_is(kb, tmp_path, capsys):
    """`refs/replace/` swaps one object for another everywhere git looks;
    the base is read as committed (GIT_NO_REPLACE_OBJECTS)."""
    base = commit(kb, "base")
    edit(kb / CONFIG, "  nDCG@5: 0.65", "  nDCG@5: 0.05")
    lax = commit(kb, "lax thresholds")
    git(kb, "replace", base, lax)  # whoever reads `base` now gets `lax`
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text  # the base's 0.65 holds against the head's 0.05
    assert "threshold `nDCG@5` lowered: 0.65 → 0.05" in results["comparison"]["rules"]["loosened"]


def test_an_unreadable_repository_fails_closed(kb, tmp_path, capsys):
    """A `.git` that git cannot open is not "not a checkout": exit 2 with the reason."""
    commit(kb, "x")
    (kb / ".git" / "HEAD").write_text("garbage\n")
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    assert results["problems"][0]["kind"] == "git"
    assert "git cannot read the repository" in messages(results)


def test_base_outside_a_checkout_is_an_input_error(tmp_path, capsys, monkeypatch):
    plain = tmp_path / "plain"
    shutil.copytree(EXAMPLE, plain)
    monkeypatch.chdir(plain)
    code, text, results, _ = check(tmp_path, capsys, "--base", "main")
    assert code == 2 and "no git checkout" in text


# ---------------------------------------------------------------- 2. the base config at the configured path


def test_a_config_swapped_for_a_symlink_keeps_the_base_rules(kb, tmp_path, capsys):
    base = commit(kb, "base")
    lax = (kb / CONFIG).read_text().replace("  nDCG@5: 0.65", "  nDCG@5: 0.05")
    (kb / "lax.yml").write_text(lax)
    (kb / CONFIG).unlink()
    (kb / CONFIG).symlink_to("lax.yml")
    commit(kb, "the config is now a symlink to a lax file")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert results["rules_source"] == "base"
    loosened = results["comparison"]["rules"]["loosened"]
    assert "the config `.rag-corpus-check.yml` now resolves to `lax.yml` (at the base: `.rag-corpus-check.yml`)" in loosened
    assert "threshold `nDCG@5` lowered: 0.65 → 0.05" in loosened


def test_a_committed_config_symlink_is_read_in_the_base_tree(kb, tmp_path, capsys):
    (kb / "conf").mkdir()
    (kb / CONFIG).rename(kb / "conf" / "rag.yml")
    edit(kb / "conf" / "rag.yml", "corpus: corpus.jsonl", "corpus: ../corpus.jsonl")
    edit(kb / "conf" / "rag.yml", "gold: gold.yaml", "gold: ../gold.yaml")
    (kb / CONFIG).symlink_to("conf/rag.yml")
    base = commit(kb, "the config lives in conf/, linked from the root")
    edit(kb / "conf" / "rag.yml", "  nDCG@5: 0.65", "  nDCG@5: 0.05")
    commit(kb, "lower a threshold")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert results["rules_source"] == "base"
    assert results["comparison"]["rules"]["loosened"] == ["threshold `nDCG@5` lowered: 0.65 → 0.05"]


def test_a_directory_symlink_in_the_base_path_is_followed(kb, tmp_path, capsys):
    """`cfg/` is a symlink to `conf/` at the base: the base config at
    `cfg/rag.yml` exists, it is no "first introduction"."""
    (kb / "conf").mkdir()
    (kb / CONFIG).rename(kb / "conf" / "rag.yml")
    edit(kb / "conf" / "rag.yml", "corpus: corpus.jsonl", "corpus: ../corpus.jsonl")
    edit(kb / "conf" / "rag.yml", "gold: gold.yaml", "gold: ../gold.yaml")
    (kb / "cfg").symlink_to("conf")
    base = commit(kb, "base")
    edit(kb / "conf" / "rag.yml", "  nDCG@5: 0.65", "  nDCG@5: 0.05")
    commit(kb, "lower")
    code, text, results, _ = check(tmp_path, capsys, "--base", base, config="cfg/rag.yml")
    assert code == 1, text
    assert results["rules_source"] == "base"


def test_a_base_config_symlink_out_of_the_tree_is_an_input_error(kb, tmp_path, capsys):
    good = (kb / CONFIG).read_text()
    (kb / CONFIG).unlink()
    (kb / CONFIG).symlink_to("/etc/passwd")
    base = commit(kb, "base config points outside")
    (kb / CONFIG).unlink()
    (kb / CONFIG).write_text(good)
    commit(kb, "fixed")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2, text
    assert "leads outside the repository" in messages(results)


def test_a_symlink_loop_at_the_base_ends(kb, tmp_path, capsys):
    good = (kb / CONFIG).read_text()
    (kb / CONFIG).unlink()
    (kb / CONFIG).symlink_to("a.yml")
    (kb / "a.yml").symlink_to(CONFIG)
    base = commit(kb, "a loop")
    (kb / CONFIG).unlink()
    (kb / CONFIG).write_text(good)
    commit(kb, "fixed")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2, text
    assert "symlinks" in messages(results)


def test_an_invalid_base_config_is_an_input_error(kb, tmp_path, capsys):
    cfg = kb / CONFIG
    good = cfg.read_text()
    cfg.write_text(good.replace("k: 5", "k: 0"))
    base = commit(kb, "broken config at base")
    cfg.write_text(good.replace("  nDCG@5: 0.65", "  nDCG@5: 0.05"))
    commit(kb, "fixed, and lax")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2, text
    assert results["rules_source"] is None
    assert "the base config cannot be used" in messages(results)
    assert "--no-require-base" in messages(results)


def test_no_require_base_runs_on_head_rules_and_says_so(kb, tmp_path, capsys):
    cfg = kb / CONFIG
    good = cfg.read_text()
    cfg.write_text(good.replace("k: 5", "k: 0"))
    base = commit(kb, "broken config at base")
    cfg.write_text(good)
    commit(kb, "fixed")
    code, text, results, summary = check(tmp_path, capsys, "--base", base, "--no-require-base")
    assert code == 0, text
    assert results["rules_source"] == "head-no-base"
    assert "rules: head-no-base" in text.splitlines()[2]
    assert any(p["severity"] == "warning" and "head's own rules" in p["message"] for p in results["problems"])


def test_a_base_revision_missing_from_the_clone(kb, tmp_path, capsys):
    commit(kb, "only")
    code, text, results, _ = check(tmp_path, capsys, "--base", "0" * 40)
    assert code == 2 and "fetch-depth: 2" in messages(results)
    assert messages(results).count("the head's own rules") == 1, messages(results)  # how to opt out, once
    code, text, results, _ = check(tmp_path, capsys, "--base", "0" * 40, "--no-require-base")
    assert code == 0 and results["rules_source"] == "head-no-base"
    assert "fetch-depth: 2" in messages(results)


# ---------------------------------------------------------------- 3. how the ranking is produced is a rule


def _lorem_and_a_fabricated_run(kb, run: str) -> None:
    """Every text replaced by lorem ipsum, and `run` written from the gold set
    (each question's relevant documents first: nDCG 1.0)."""
    rows = [json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines()]
    (kb / "corpus.jsonl").write_text("".join(
        json.dumps({**r, "title": "lorem", "text": "lorem ipsum"}) + "\n" for r in rows))
    import yaml

    gold = yaml.safe_load((kb / "gold.yaml").read_text())
    with open(kb / run, "w") as f:
        for q in gold["queries"]:
            ranking = sorted(q["relevant"], key=lambda d: -q["relevant"][d])
            f.write(json.dumps({"query_id": q["query_id"], "ranking": ranking}) + "\n")


def test_a_fabricated_run_over_an_emptied_corpus_fails(kb, tmp_path, capsys):
    """The review's attack: every text replaced by lorem ipsum, and `run:`
    pointing at a run made from the gold set (nDCG 1.0)."""
    base = commit(kb, "base: built-in BM25")
    _lorem_and_a_fabricated_run(kb, "fabricated.jsonl")
    with open(kb / CONFIG, "a") as f:
        f.write("run: fabricated.jsonl\n")
    commit(kb, "lorem ipsum and a fabricated run")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert results["rules_source"] == "base"
    loosened = results["comparison"]["rules"]["loosened"]
    assert any("how the ranking is produced changed" in c and "committed run `fabricated.jsonl`" in c
               for c in loosened), loosened
    assert "FAILED" in text.splitlines()[0]


def test_a_committed_run_rewritten_in_place_is_shown_as_pull_request_data(kb, tmp_path, capsys, monkeypatch):
    """With `run:` at the base already, the same file rewritten from the gold
    set is no change of rules: a committed run is what the pull request says
    it retrieves. The gate cannot tell a fabricated run from a better
    retriever's, so it says so where a reviewer looks (a warning annotation at
    the run file, the summary), and docs/security.md says to leave `run:` out when
    the corpus itself must be measured."""
    (kb / "committed-run.rag-corpus-check.yml").replace(kb / CONFIG)
    base = commit(kb, "base: a committed run")
    _lorem_and_a_fabricated_run(kb, "run.jsonl")
    commit(kb, "lorem ipsum and the committed run rewritten from the gold set")
    output = tmp_path / "gh-output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    code, text, results, summary = check(tmp_path, capsys, "--base", base, "--github", "--no-step-summary")
    assert results["rules_source"] == "base"
    warning = [p for p in results["problems"] if "committed run's rankings changed" in p["message"]]
    assert [(p["severity"], p["file"]) for p in warning] == [("warning", "run.jsonl")], results["problems"]
    assert "::warning file=run.jsonl," in text and "committed run" in summary


TRUST_WARNING = "the committed run's rankings changed in this PR"


def _run_rewritten_under_harmless_warnings(kb) -> str:
    """The base scores a committed run; the PR rewrites it from the gold set
    and adds 60 run questions the gold set lacks (60 harmless warnings on the
    run file, more than the 50 listed a file). The base's sha."""
    (kb / "committed-run.rag-corpus-check.yml").replace(kb / CONFIG)
    base = commit(kb, "base: a committed run")
    _lorem_and_a_fabricated_run(kb, "run.jsonl")
    with open(kb / "run.jsonl", "a") as f:
        f.writelines(json.dumps({"query_id": f"extra-{i:02d}", "ranking": ["faq-001"]}) + "\n" for i in range(60))
    commit(kb, "the committed run rewritten, and 60 questions the gold set lacks")
    return base


def _first_warning(lines) -> str:
    return next(line for line in lines if "::warning" in line or "- warning:" in line)


def test_the_committed_run_warning_is_never_cut_by_harmless_warnings(kb, tmp_path, capsys, monkeypatch):
    """60 "question is in the run but not in gold" warnings on run.jsonl came
    first and filled its 50 listed warnings: the trust warning was only counted
    in `problems_dropped`. It is listed first everywhere now."""
    base = _run_rewritten_under_harmless_warnings(kb)
    output = tmp_path / "gh-output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    code, text, results, summary = check(tmp_path, capsys, "--base", base, "--github", "--no-step-summary")
    assert code == 0 and results["rules_source"] == "base", text
    first = results["problems"][0]
    assert (first["kind"], first["severity"], first["file"]) == ("trust", "warning", "run.jsonl"), first
    assert TRUST_WARNING in first["message"]
    assert sum("but not in gold.yaml" in p["message"] for p in results["problems"]) == 50  # the rest still capped
    assert results["problems_dropped"] == {"run.jsonl (warnings)": 10}
    lines = text.splitlines()
    annotation = _first_warning(line for line in lines if line.startswith("::"))
    assert annotation.startswith("::warning file=run.jsonl,") and TRUST_WARNING in annotation, annotation
    assert TRUST_WARNING in _first_warning(line for line in lines if not line.startswith("::"))
    table = [row for row in summary.splitlines() if row.startswith("| warning |")]
    assert "the committed run" in table[0], table[:2]


def test_the_action_step_lists_the_committed_run_warning_first(kb, tmp_path):
    """The same pull request through the action's own entry point, as
    GitHub runs it on `pull_request`."""
    base = _run_rewritten_under_harmless_warnings(kb)
    head = git(kb, "rev-parse", "HEAD")
    runner = tmp_path / "runner"
    done, _ = run_action_step(kb, runner, base, head)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    annotation = _first_warning(line for line in lines if line.startswith("::"))
    assert annotation.startswith("::warning file=run.jsonl,") and TRUST_WARNING in annotation, annotation
    assert TRUST_WARNING in _first_warning(line for line in lines if not line.startswith("::"))
    table = [row for row in (runner / "summary.md").read_text().splitlines() if row.startswith("| warning |")]
    assert "the committed run" in table[0], table[:2]
    [results_path] = runner.glob("rag-corpus-check.*/results.json")
    results = json.loads(results_path.read_text())
    assert TRUST_WARNING in results["problems"][0]["message"], results["problems"][:2]


def test_an_unchanged_committed_run_is_not_warned_about(kb, tmp_path, capsys):
    (kb / "committed-run.rag-corpus-check.yml").replace(kb / CONFIG)
    base = commit(kb, "base: a committed run")
    commit(kb, "nothing changed")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 0 and "committed run's rankings changed" not in messages(results)


@pytest.mark.parametrize("old, new, change", [
    ("  type: bm25 ", "  k1: 3\n  type: bm25 ", "`retriever.k1` 1.2 → 3"),
    ("  depth: 100 ", "  depth: 10 ", "`retriever.depth` 100 → 10"),
    ("  statuses: [active] ", "  statuses: [active, stale] ", "`retriever.statuses` [active] → [active, stale]"),
    ("  stopwords: english", "  stopwords: null", "`retriever.stopwords` english → null"),
    ("  stopwords: english", "  stopwords: english\n  stemmer: porter", "`retriever.stemmer` null → porter"),
])
def test_changed_retriever_parameters_are_a_rule_change(kb, tmp_path, capsys, old, new, change):
    base = commit(kb, "base")
    edit(kb / CONFIG, old, new)
    commit(kb, "tune the retriever")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    loosened = results["comparison"]["rules"]["loosened"]
    assert any(change in c for c in loosened), loosened


def test_a_ranking_change_with_a_reason_is_an_override(kb, tmp_path, capsys):
    base = commit(kb, "base: built-in BM25")
    with open(kb / CONFIG, "a") as f:
        f.write("run: run.jsonl\nrule_change_reason: \"score the committed baseline run (TICKET-7)\"\n")
    commit(kb, "switch to the committed run, on purpose")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert results["rules_source"] == "head-override"
    assert "rules: head-override" in text.splitlines()[2]
    assert "head-override" in summary.split("###", 1)[0]


def test_raised_limits_do_not_apply_without_a_reason(kb, tmp_path, capsys):
    cfg = kb / CONFIG
    cfg.write_text(cfg.read_text() + "limits:\n  max_records: 30\n")
    base = commit(kb, "base: at most 30 documents")
    edit(cfg, "  max_records: 30\n", "  max_records: 5000000\n")
    with open(kb / "corpus.jsonl", "a") as f:
        f.write(json.dumps({"id": "extra-1", "text": "x"}) + "\n")
    commit(kb, "one document more, and the limit raised")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2, text  # the base's limit, not the head's
    assert "more than 30 records" in messages(results)


def test_loosened_validation_is_a_rule_change(kb, tmp_path, capsys):
    cfg = kb / CONFIG
    cfg.write_text(cfg.read_text() + "validation:\n  inactive_labels: error\n")
    base = commit(kb, "base")
    edit(cfg, "  inactive_labels: error\n", "  inactive_labels: warning\n")
    commit(kb, "relax")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert "`validation.inactive_labels` error → warning" in " ".join(results["comparison"]["rules"]["loosened"])


# ---------------------------------------------------------------- 4. which rules applied is always an output


def test_rules_source_without_base(kb, tmp_path, capsys):
    commit(kb, "x")
    code, text, results, summary = check(tmp_path, capsys)
    assert results["rules_source"] == "head-no-base"
    assert text.splitlines()[2] == "  rules: head-no-base (no base revision was compared)"
    assert "head-no-base" in summary.split("###", 1)[0]


def test_rules_source_first_introduction(kb, tmp_path, capsys):
    (kb / CONFIG).rename(tmp_path / "cfg.yml")
    base = commit(kb, "data only")
    (tmp_path / "cfg.yml").rename(kb / CONFIG)
    commit(kb, "add the check")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert results["rules_source"] == "head-first-introduction"
    assert "head-first-introduction" in summary.split("###", 1)[0]


# ---------------------------------------------------------------- 9. small ones


def test_step_outputs_end_lines_with_newline_on_every_os(tmp_path, monkeypatch):
    """On Windows os.linesep is \\r\\n; the runner then read `true\\r`."""
    from rag_corpus_check.report.github import write_outputs

    monkeypatch.setattr(os, "linesep", "\r\n")
    path = tmp_path / "out"
    write_outputs(str(path), {"passed": "true"})
    data = path.read_bytes()
    assert b"\r" not in data and b"\ntrue\n" in data


def test_annotations_name_files_from_the_repository_top(monorepo, tmp_path, capsys):
    """working-directory: kb — GitHub matches annotations by the path from
    the repository's top (kb/gold.yaml), not from the checked directory."""
    edit(monorepo / "kb" / "gold.yaml", "      faq-004: 1\n", "      faq-004: 7\n")
    commit(monorepo, "a grade off the scale")
    code, text, results, _ = check(tmp_path, capsys, "--github")
    assert code == 2
    annotations = [line for line in text.splitlines() if line.startswith("::error ")]
    assert annotations and all("file=kb/gold.yaml," in a for a in annotations), annotations
    assert results["problems"][0]["file"] == "gold.yaml"  # messages keep the checked root's view


# ---------------------------------------------------------------- 5. events: an allow-list


@pytest.mark.parametrize("event", ["pull_request_target", "workflow_run", "issue_comment",
                                   "pull_request_review_comment", "check_run", "check_suite",
                                   "deployment_status", "release", "some_future_event"])
def test_events_outside_the_allow_list_are_refused(kb, tmp_path, capsys, monkeypatch, event):
    commit(kb, "x")
    monkeypatch.setenv("GITHUB_EVENT_NAME", event)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 2, text
    assert f"refusing to run under `{event}`" in messages(results)
    assert results["metrics"] == {}
    code, text, results, _ = check(tmp_path, capsys, "--allow-untrusted-event")
    assert code == 0, text
    assert any(p["severity"] == "warning" and event in p["message"] for p in results["problems"])


@pytest.mark.parametrize("event", ["pull_request", "push", "merge_group", "workflow_dispatch", "schedule"])
def test_events_on_the_allow_list_run(kb, tmp_path, capsys, monkeypatch, event):
    commit(kb, "x")
    monkeypatch.setenv("GITHUB_EVENT_NAME", event)
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0, text


# ---------------------------------------------------------------- found by an attacker after the first fix


def _demo_copy(repo, lax: bool = True):
    """examples/demo: a second knowledge base in the tree, with a lax config."""
    demo = repo / "examples" / "demo"
    shutil.copytree(EXAMPLE, demo)
    if lax:
        edit(demo / CONFIG, "  nDCG@5: 0.65", "  nDCG@5: 0.05")
        for m in ("P@5: 0.25", "R@5: 0.65", "Judged@5: 0.8"):
            edit(demo / CONFIG, f"  {m}", f"  {m.split(':')[0]}: 0")
    return demo


def _blank_policies(corpus):
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    corpus.write_text("".join(json.dumps({**r, "title": "x", "text": "lorem ipsum"} if r["id"].startswith("policy")
                                         else r) + "\n" for r in rows))


@pytest.mark.parametrize("how", ["--root", "cwd"])
def test_a_checked_directory_swapped_for_a_symlink_keeps_its_rules(monorepo, tmp_path, capsys, monkeypatch, how):
    """working-directory: kb. The PR replaces kb/ by a symlink to a lax
    knowledge base elsewhere in the tree: the base's kb/ rules still apply,
    and the swap is a rule change."""
    _demo_copy(monorepo)
    base = commit(monorepo, "base: kb/ strict, examples/demo lax")
    _blank_policies(monorepo / "examples" / "demo" / "corpus.jsonl")
    shutil.rmtree(monorepo / "kb")
    (monorepo / "kb").symlink_to("examples/demo")
    commit(monorepo, "kb is now examples/demo")
    if how == "--root":
        monkeypatch.chdir(monorepo)
        argv = ["--root", "kb", "--base", base]
        config = "kb/" + CONFIG
    else:
        monkeypatch.chdir(monorepo / "kb")  # the process's cwd is examples/demo
        monkeypatch.setenv("PWD", str(monorepo / "kb"))  # the shell's: kb
        argv, config = ["--base", base], CONFIG
    code, text, results, _ = check(tmp_path, capsys, *argv, config=config)
    assert code == 1, text
    assert results["rules_source"] == "base"
    loosened = results["comparison"]["rules"]["loosened"]
    assert "the checked directory `kb` now resolves to `examples/demo` (at the base: `kb`)" in loosened, loosened


def test_a_checked_directory_outside_the_checkout_is_refused(monorepo, tmp_path, capsys, monkeypatch):
    shutil.rmtree(monorepo / "kb")
    outside = tmp_path / "outside"
    shutil.copytree(EXAMPLE, outside)
    (monorepo / "kb").symlink_to(outside)
    commit(monorepo, "kb leads out of the repository")
    monkeypatch.chdir(monorepo)
    code, text, results, _ = check(tmp_path, capsys, "--root", "kb", config="kb/" + CONFIG)
    assert code == 2, text
    assert "leads outside the repository" in messages(results)


@pytest.mark.parametrize("key", ["corpus", "gold"])
def test_another_corpus_or_gold_file_is_a_rule_change(kb, tmp_path, capsys, key):
    """`corpus: corpus-eval.jsonl` (a copy) while corpus.jsonl, the file that
    ships, is emptied: the paths the base measured are part of the rules."""
    base = commit(kb, "base")
    name = {"corpus": "corpus.jsonl", "gold": "gold.yaml"}[key]
    copy = {"corpus": "corpus-eval.jsonl", "gold": "gold-eval.yaml"}[key]
    shutil.copy(kb / name, kb / copy)
    edit(kb / CONFIG, f"{key}: {name}", f"{key}: {copy}")
    if key == "corpus":
        _blank_policies(kb / name)
    commit(kb, "measure a copy")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert f"`{key}` now names `{copy}` (at the base: `{name}`)" in results["comparison"]["rules"]["loosened"]


def test_a_symlinked_corpus_file_is_a_rule_change(kb, tmp_path, capsys):
    base = commit(kb, "base")
    shutil.copy(kb / "corpus.jsonl", kb / "corpus-eval.jsonl")
    _blank_policies(kb / "corpus-eval.jsonl")
    (kb / "corpus.jsonl").unlink()
    (kb / "corpus.jsonl").symlink_to("corpus-eval.jsonl")
    commit(kb, "corpus.jsonl now a symlink")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert "`corpus` now names `corpus-eval.jsonl` (at the base: `corpus.jsonl`)" in (
        results["comparison"]["rules"]["loosened"]), text


def test_rewritten_question_texts_are_a_gold_change(kb, tmp_path, capsys):
    """With the built-in retriever the question text decides what is
    retrieved: rewriting it is a change of the gold set, shown and warned."""
    import yaml

    base = commit(kb, "base")
    _blank_policies(kb / "corpus.jsonl")
    gold = yaml.safe_load((kb / "gold.yaml").read_text())
    rows = {json.loads(line)["id"]: json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines()}
    text = (kb / "gold.yaml").read_text()
    for q in gold["queries"]:
        titles = " ".join(rows[d].get("title", "") for d in q["relevant"] if d in rows)
        text = text.replace(f'query: "{q["query"]}"', f"query: {json.dumps(titles)}", 1)
    (kb / "gold.yaml").write_text(text)
    commit(kb, "blank policies, and questions that name their answers")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    cmp_ = results["comparison"]
    assert cmp_["gold_changed"] and any(e.get("query_changed") for e in cmp_["labels"]), cmp_["labels"][:2]
    assert any("labels and the ranking of the same" in p["message"] for p in results["problems"]), \
        [p["message"] for p in results["problems"]]
    assert "question texts changed" in summary


def test_the_callers_timeout_is_not_a_rule_change(kb, tmp_path, capsys):
    cfg = kb / CONFIG
    cfg.write_text(cfg.read_text().replace("  type: bm25", "  type: command\n  command: [python3, r.py]"))
    base = commit(kb, "base: a command retriever (timeout 600)")
    commit(kb, "nothing changed")
    code, text, results, _ = check(tmp_path, capsys, "--base", base, "--retriever-timeout", "60")
    assert results["comparison"]["rules"]["loosened"] == [], text


def test_a_raised_retriever_timeout_is_listed_and_not_applied(kb, tmp_path, capsys):
    """`retriever.timeout` raised in a PR (above the caller's ceiling too):
    listed as a rule change; the base's lower value holds (issue "The
    smaller ones", item 5)."""
    cfg = kb / CONFIG
    cfg.write_text(cfg.read_text().replace("  type: bm25", "  type: bm25\n  timeout: 30"))
    base = commit(kb, "base: retriever.timeout 30")
    edit(cfg, "  timeout: 30", "  timeout: 3600")
    commit(kb, "a PR raising the timeout")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    changes = results["comparison"]["rules"]["changes"]
    assert any("`retriever.timeout` raised: 30 → 3600 s" in c for c in changes), changes
    assert results["rules_source"] == "base" and code == 0, text
    assert "`retriever.timeout` raised" in summary  # a code span, rendered as code


def test_a_relevance_map_is_a_convention_the_base_holds(kb, tmp_path, capsys):
    """`relevance.map` (issue 15) turns grades: a PR mapping grade 0 to 2
    would make every judged document relevant without touching gold.yaml."""
    base = commit(kb, "base")
    _, _, before, _ = check(tmp_path, capsys)
    cfg = kb / CONFIG
    edit(cfg, "relevance:\n", 'relevance:\n  map: {"0": 2}\n')
    commit(kb, "every judged document relevant")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert "convention `grade_map` changed: {} → {0: 2}" in " ".join(results["comparison"]["rules"]["loosened"])
    assert results["metrics"]["P@5"] == before["metrics"]["P@5"]  # the base's map (none) applied


# ---------------------------------------------------------------- an override where reviewers look


def _zero_thresholds_with_a_reason(kb):
    """A PR that sets every threshold to 0, with a new rule_change_reason."""
    import re

    cfg = kb / CONFIG
    text = re.sub(r"(?m)^(  (?:P|R|nDCG|Judged)@5): [0-9.]+", r"\1: 0", cfg.read_text())
    cfg.write_text(text + 'rule_change_reason: "labels are being rebuilt (TICKET-9) ::warning::x"\n')
    return len(text.splitlines()) + 1  # the line of rule_change_reason


def test_an_override_is_the_first_console_line_and_a_warning_on_the_config(kb, tmp_path, capsys):
    """Every threshold 0 and a new reason pass (exit 0, head-override) — as
    designed; but the first console line, a warning annotation on the config
    and the summary's title now say so (before: only the summary's rules line)."""
    base = commit(kb, "base")
    reason_line = _zero_thresholds_with_a_reason(kb)
    commit(kb, "every threshold 0, with a reason")
    code, text, results, summary = check(tmp_path, capsys, "--base", base, "--github")
    assert code == 0 and results["rules_source"] == "head-override", text
    lines = text.splitlines()
    warnings = [ln for ln in lines if ln.startswith("::warning ")]
    assert warnings and warnings[0].startswith(
        f"::warning file=.rag-corpus-check.yml,line={reason_line},title=rag-corpus-check%3A rules overridden by this "
        "PR::This PR changes the gate's rules with a new rule_change_reason"), warnings
    assert "threshold `nDCG@5` lowered: 0.65 → 0" in warnings[0] and warnings[0].count("::") == 2
    console = [ln for ln in lines if not ln.startswith("::")]
    assert console[0] == ("rag-corpus-check: PASSED -- RULES OVERRIDDEN BY THIS PR (rules-source head-override: "
                          "gated on its own config, not the base's)"), console[:2]
    title = summary.splitlines()[0]
    assert title.startswith("## ✅ **rag-corpus-check: passed** · ⚠️ rules overridden by this PR"), title
    assert "> [!CAUTION]" in summary.split("###", 1)[0]


def test_the_override_warning_is_never_cut_by_the_annotation_limit(kb, tmp_path, capsys):
    """At most 10 warnings per step: the override's comes first, and the
    count of the rest says how many more there are."""
    from rag_corpus_check.config.load import Config
    from rag_corpus_check.core import problems as P
    from rag_corpus_check.gate.rules import OVERRIDE, Rules
    from rag_corpus_check.pipeline.outcome import Outcome
    from rag_corpus_check.report.github import MAX_PER_TYPE, annotation_lines

    problems = P.Problems()
    for i in range(12):
        problems.add(P.CONSISTENCY, f"warning {i}", file="gold.yaml", line=i + 1, severity=P.WARNING)
    out = Outcome(problems, config=Config(path_display=CONFIG, base_dir=".", corpus="c", gold="g", run=None, k=5),
                  rules=Rules(OVERRIDE, ("threshold lowered",), (), "a reason of ten+"))
    lines = annotation_lines(out)
    warnings = [ln for ln in lines if ln.startswith("::warning ")]
    assert len(warnings) == MAX_PER_TYPE and "rules overridden by this PR" in warnings[0]
    assert any(ln.startswith("::notice::3 more warnings") for ln in lines), lines


@pytest.mark.parametrize("required, code, verdict", [
    ("base", 1, "fail"),
    ("base,head-override", 0, "pass"),
])
def test_require_rules_source_fails_an_override(kb, tmp_path, capsys, required, code, verdict):
    base = commit(kb, "base")
    _zero_thresholds_with_a_reason(kb)
    commit(kb, "every threshold 0, with a reason")
    got, text, results, summary = check(tmp_path, capsys, "--base", base, "--require-rules-source", required)
    assert (got, results["verdict"], results["rules_source"]) == (code, verdict, "head-override"), text
    if code:
        assert "rules-source is `head-override`, and this workflow accepts only `base`" in text
        assert "- rules\\-source is `head-override`, and this workflow accepts only `base`" in summary


def test_require_rules_source_base_passes_a_pr_on_the_bases_rules(kb, tmp_path, capsys):
    base = commit(kb, "base")
    commit(kb, "nothing changed")
    code, text, results, _ = check(tmp_path, capsys, "--base", base, "--require-rules-source", "base")
    assert code == 0 and results["rules_source"] == "base", text
