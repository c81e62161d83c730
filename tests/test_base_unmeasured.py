"""A base that cannot be measured is not a pass: when the base's config names
a corpus or a gold set the base commit does not hold (generated in CI and
ignored by git), holds invalid inputs, or ranks with a retriever command,
nothing can be compared — `max_drop`, the per-question rule and the paired
test need the base's numbers. With require-base (the default) that is an
input error (exit 2) saying which file, at which base commit, and what to
do; with --no-require-base the base's rules apply without a comparison and a
warning says so. Each test plays the pull request on a real git repository.
"""

from __future__ import annotations

import json
import shutil

from conftest import ROOT, check
from support.github import find_commands, run_action_step
from support.repos import commit, edit

CONFIG = ".rag-corpus-check.yml"
OPT_OUT = "--no-require-base"


def messages(results) -> str:
    return "\n".join(p["message"] for p in results["problems"])


def _lax_with_max_drop(kb) -> None:
    """Minimums a damaged corpus still meets; only the comparison
    (`max_drop`, the per-question rule) can fail the PR below."""
    cfg = kb / CONFIG
    for old, new in (("  P@5: 0.25", "  P@5: 0.05"), ("  R@5: 0.65", "  R@5: 0.05"),
                     ("  nDCG@5: 0.65", "  nDCG@5: {min: 0.05, max_drop: 0.02}"), ("  Judged@5: 0.8", "  Judged@5: 0.05")):
        edit(cfg, old, new)


def _blank_policies(corpus) -> None:
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    corpus.write_text("".join(json.dumps({**r, "title": "x", "text": "lorem ipsum"} if r["id"].startswith("policy")
                                         else r) + "\n" for r in rows))


def _ignored_at_base(kb, name: str) -> str:
    """The base commit: the config names `name`, which is generated in CI and
    ignored by git (present in the working tree, absent at the base)."""
    _lax_with_max_drop(kb)
    (kb / ".gitignore").write_text(name + "\n")
    return commit(kb, f"base: {name} is generated in CI")


def test_the_damage_fails_the_gate_when_the_base_holds_the_corpus(kb, tmp_path, capsys):
    """The control: the same PR against a base that holds its corpus fails
    on the comparison alone."""
    _lax_with_max_drop(kb)
    base = commit(kb, "base")
    _blank_policies(kb / "corpus.jsonl")
    commit(kb, "blank every policy")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert results["rules_source"] == "base" and not results["per_question"]["passed"]


def test_a_corpus_missing_at_the_base_is_invalid_input(kb, tmp_path, capsys):
    base = _ignored_at_base(kb, "corpus.jsonl")
    _blank_policies(kb / "corpus.jsonl")
    commit(kb, "a PR (the generated corpus blanks every policy)")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 2, text
    said = messages(results)
    assert f"`corpus.jsonl` does not exist at the base commit `{base[:12]}`" in said, said
    assert "generated" in said and "commit it" in said and OPT_OUT in said, said
    assert [p["file"] for p in results["problems"] if p["severity"] == "error"] == ["corpus.jsonl"]
    assert results["verdict"] == "invalid" and not results["metrics"]  # nothing measured
    assert "does not exist at the base commit" in summary and "corpus\\.jsonl" in summary, summary


def test_a_gold_set_missing_at_the_base_is_invalid_input(kb, tmp_path, capsys):
    base = _ignored_at_base(kb, "gold.yaml")
    _blank_policies(kb / "corpus.jsonl")
    commit(kb, "a PR that blanks every policy")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2, text
    assert f"`gold.yaml` does not exist at the base commit `{base[:12]}`" in messages(results)


def test_base_inputs_that_cannot_be_read_are_invalid_input(kb, tmp_path, capsys):
    """The base's corpus is a symlink out of the repository: it exists at
    the base but cannot be read there."""
    _lax_with_max_drop(kb)
    real = (kb / "corpus.jsonl").read_text()
    (kb / "corpus.jsonl").unlink()
    (kb / "corpus.jsonl").symlink_to("../corpus.jsonl")
    base = commit(kb, "base: the corpus is a link out of the repository")
    (kb / "corpus.jsonl").unlink()
    (kb / "corpus.jsonl").write_text(real)
    _blank_policies(kb / "corpus.jsonl")
    commit(kb, "a PR that commits the corpus, every policy blanked")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2, text
    said = messages(results)
    assert "leads outside the repository" in said and f"`{base[:12]}`" in said and OPT_OUT in said, said


def test_base_inputs_that_are_invalid_are_invalid_input(kb, tmp_path, capsys):
    _lax_with_max_drop(kb)
    with (kb / "corpus.jsonl").open("a") as f:
        f.write("{not json\n")
    base = commit(kb, "base: a broken corpus line")
    lines = (kb / "corpus.jsonl").read_text().splitlines()
    (kb / "corpus.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    _blank_policies(kb / "corpus.jsonl")
    commit(kb, "a PR that fixes the line and blanks every policy")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 2, text
    said = messages(results)
    assert f"the base's inputs are invalid at the base commit `{base[:12]}`" in said, said
    assert "corpus.jsonl" in said and OPT_OUT in said, said
    assert results["metrics"]  # the head was measured; the verdict is still invalid


def test_no_require_base_applies_the_base_rules_without_a_comparison(kb, tmp_path, capsys):
    """The documented way out for a generated corpus: the base's rules hold
    (a lowered threshold still fails), nothing is compared, and a warning,
    the rules line and the base notes say so."""
    base = _ignored_at_base(kb, "corpus.jsonl")
    _blank_policies(kb / "corpus.jsonl")
    commit(kb, "a PR (the generated corpus blanks every policy)")
    code, text, results, summary = check(tmp_path, capsys, "--base", base, OPT_OUT)
    assert code == 0, text
    assert results["rules_source"] == "base"
    warnings = [p for p in results["problems"] if p["severity"] == "warning"]
    assert any("does not exist at the base commit" in p["message"] and "nothing was compared" in p["message"]
               for p in warnings), warnings
    rules_line = text.splitlines()[2]
    assert rules_line.startswith("  rules: base (") and "nothing was compared" in rules_line, rules_line
    assert results["comparison"]["notes"] and "deltas" not in results["comparison"]
    assert "nothing was compared" in summary.split("###", 1)[0]

    edit(kb / CONFIG, "  P@5: 0.05", "  P@5: 0.0")
    commit(kb, "and a lowered threshold")
    code, text, results, _ = check(tmp_path, capsys, "--base", base, OPT_OUT)
    assert code == 1 and "threshold `P@5` lowered: 0.05 → 0" in results["comparison"]["rules"]["loosened"], text


def test_a_base_ranked_by_a_command_cannot_be_measured(kb, tmp_path, capsys):
    """The check does not run the base's retriever command, so it cannot
    measure the base: an input error under require-base, the base's rules
    without a comparison under --no-require-base."""
    shutil.copy(ROOT / "examples" / "kb-command" / "title_overlap.py", kb / "title_overlap.py")
    _lax_with_max_drop(kb)
    edit(kb / CONFIG, "  type: bm25        # the default when no run is given",
         '  type: command\n  command: [python3, title_overlap.py, "{corpus}", "{queries}", "{output}", "{depth}"]')
    base = commit(kb, "base: the team's retriever")
    _blank_policies(kb / "corpus.jsonl")
    commit(kb, "a PR that blanks every policy")
    code, text, results, _ = check(tmp_path, capsys, "--base", base, "--allow-retriever-command")
    assert code == 2, text
    said = messages(results)
    assert "retriever command" in said and f"`{base[:12]}`" in said and OPT_OUT in said, said
    code, text, results, _ = check(tmp_path, capsys, "--base", base, "--allow-retriever-command", OPT_OUT)
    assert code == 0 and results["rules_source"] == "base", text
    assert any(p["severity"] == "warning" and "retriever command" in p["message"] for p in results["problems"])


def test_the_action_fails_a_pull_request_whose_base_corpus_is_generated(kb, tmp_path):
    """Through the action's own run step, on a pull_request event."""
    base = _ignored_at_base(kb, "corpus.jsonl")
    _blank_policies(kb / "corpus.jsonl")
    head = commit(kb, "a PR (the generated corpus blanks every policy)")
    done, outputs = run_action_step(kb, tmp_path / "runner", base, head, summary="false")
    assert done.returncode == 2, done.stdout + done.stderr
    assert outputs["verdict"] == "invalid" and outputs["exit-code"] == "2", outputs
    errors = [c.data for c in find_commands(done.stdout) if c.name == "error"]
    assert any(f"does not exist at the base commit `{base[:12]}`" in e and "require-base: 'false'" in e
               for e in errors), done.stdout


def _action_inputs() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
