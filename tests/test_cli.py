"""The CLI end to end on the bundled example: exit codes, results file,
summary, GitHub outputs and annotations, other input formats."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from conftest import ROOT, write
from rag_corpus_check.commands.cli import main
from rag_corpus_check.report.github import OUTPUT_NAMES
from support.github import parse_github_output

RESULTS_SCHEMA = json.loads((ROOT / "schemas" / "results.schema.json").read_text())


def test_example_passes(repo, run_cli):
    code, out, err, results, summary = run_cli()
    assert code == 0, out
    assert results["verdict"] == "pass"
    Draft202012Validator(RESULTS_SCHEMA).validate(results)
    assert results["metrics"]["P@5"] == pytest.approx(5 / 14, abs=1e-12)  # 25 hits / (14 x 5)
    assert results["metrics"]["nDCG@5"] > 0.75
    q15 = next(q for q in results["queries"] if q["query_id"] == "q15")
    assert q15["status"] == "no_relevant"
    assert q15["values"]["R@5"] is None and q15["values"]["nDCG@5"] is None
    assert results["counts"]["in_means"] == 14 and results["counts"]["no_relevant"] == 1
    assert set(results["provenance"]["inputs"]) == {
        ".rag-corpus-check.yml",
        "corpus.jsonl",
        "gold.yaml",
        "run.jsonl",
    }
    assert results["provenance"]["corpus_fingerprint"].startswith("sha256:")
    assert results["conventions"] == {
        "k": 5,
        "gain": "linear",
        "short_list": "pad",
        "min_grade": 1,
        "max_grade": 2,
        "discount": "1/log2(rank+1)",
        "unjudged": "grade 0",
        "means_over": "questions with at least one relevant document",
        "relevance_map": {}, "run_order": "descending", "level": None,
        "measures": ["P@5", "R@5", "nDCG@5", "Judged@5"],
        "analyzer": {"cjk": "bigrams", "stemmer": None, "stopwords": None},
    }
    assert "PASSED" in out and "q15" in out
    for text in (
        "K = 5",
        "linear",
        "log2(position + 1)",
        "padded",
        "grade ≥ 1",
        "Excluded from the means (1)",
    ):
        assert text in summary
    # Warnings (a stale document among the labels with grade 0 is fine; none here).
    assert results["counts"]["errors"] == 0


def test_quality_gate_failure_exits_1(repo, run_cli):
    regressed = ROOT / "examples" / "kb-regressed" / "run.jsonl"
    (repo / "run.jsonl").write_bytes(regressed.read_bytes())
    code, out, err, results, summary = run_cli()
    assert code == 1
    assert results["verdict"] == "fail"
    failed = {t["measure"] for t in results["thresholds"] if not t["passed"]}
    assert "nDCG@5" in failed
    assert "FAILED (quality gate)" in out
    assert summary.index("❌") < summary.index("Means over")  # failing rows first


def test_advisory_reports_failure_but_exits_0(repo, run_cli):
    regressed = ROOT / "examples" / "kb-regressed" / "run.jsonl"
    (repo / "run.jsonl").write_bytes(regressed.read_bytes())
    code, out, err, results, summary = run_cli("--advisory")
    assert code == 0
    assert results["verdict"] == "fail" and results["exit_code"] == 1 and results["advisory"]


def test_advisory_does_not_hide_invalid_input(repo, run_cli):
    (repo / "run.jsonl").write_text("{", encoding="utf-8")
    code, *_ = run_cli("--advisory")
    assert code == 2


def test_bundled_configs_from_repo_root(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    for cfg in (
        "examples/kb/.rag-corpus-check.yml",
        "examples/kb/committed-run.rag-corpus-check.yml",
    ):
        assert (
            main(
                [
                    "--config",
                    cfg,
                    "--output",
                    str(tmp_path / "a.json"),
                    "--summary-file",
                    str(tmp_path / "a.md"),
                    "--no-github",
                ]
            )
            == 0
        ), cfg
    assert (
        main(
            [
                "--config",
                "examples/kb-regressed/.rag-corpus-check.yml",
                "--output",
                str(tmp_path / "b.json"),
                "--summary-file",
                str(tmp_path / "b.md"),
                "--no-github",
            ]
        )
        == 1
    )


def test_stale_label_is_a_warning_by_default(repo, run_cli):
    s = (repo / "gold.yaml").read_text()
    (repo / "gold.yaml").write_text(s.replace("      faq-004: 1\n", "      faq-009: 1\n", 1))
    code, out, err, results, summary = run_cli()
    assert code == 0
    w = [p for p in results["problems"] if p["severity"] == "warning"]
    assert any("stale document" in p["message"] and p["id"] == "faq-009" for p in w)
    assert "warning" in out and "stale" in summary


def test_missing_question_scores_zero_and_is_reported(repo, run_cli):
    lines = (repo / "run.jsonl").read_text().splitlines()
    (repo / "run.jsonl").write_text("\n".join(ln for ln in lines if '"q03"' not in ln) + "\n")
    code, out, err, results, summary = run_cli()
    q03 = next(q for q in results["queries"] if q["query_id"] == "q03")
    assert q03["in_run"] is False and q03["values"]["nDCG@5"] == 0.0 and q03["values"]["P@5"] == 0.0
    assert any(p["id"] == "q03" and "not in run.jsonl" in p["message"] for p in results["problems"])
    assert "not in run" in summary


def test_extra_run_question_is_reported(repo, run_cli):
    with open(repo / "run.jsonl", "a") as f:
        f.write('{"query_id": "q99", "ranking": ["faq-001"]}\n')
    code, out, err, results, summary = run_cli()
    assert code == 0
    assert any(p["id"] == "q99" and p["line"] == 16 for p in results["problems"])


def test_no_thresholds_warns(repo, run_cli):
    s = (repo / ".rag-corpus-check.yml").read_text()
    (repo / ".rag-corpus-check.yml").write_text(s.split("thresholds:")[0])
    code, out, err, results, summary = run_cli()
    assert code == 0
    assert any("gate cannot fail" in p["message"] for p in results["problems"])


def test_threshold_at_another_k_and_mapping_form(repo, run_cli):
    s = (repo / ".rag-corpus-check.yml").read_text()
    s = s.replace("  P@5: 0.30\n", "  P@5: 0.30\n  R@10: {min: 0.5}\n  nDCG@3: 0.2\n")
    (repo / ".rag-corpus-check.yml").write_text(s)
    code, out, err, results, summary = run_cli()
    assert code == 0, out
    assert {"R@10", "nDCG@3", "P@5", "R@5", "nDCG@5", "Judged@5"} <= set(results["metrics"])


def test_threshold_exactly_met_passes(repo, run_cli):
    code, out, err, results, _ = run_cli()
    exact = results["metrics"]["P@5"]
    s = (repo / ".rag-corpus-check.yml").read_text().replace("  P@5: 0.30", f"  P@5: {exact!r}")
    (repo / ".rag-corpus-check.yml").write_text(s)
    code, *_ = run_cli()
    assert code == 0
    s = s.replace(f"  P@5: {exact!r}", f"  P@5: {exact + 1e-6!r}")
    (repo / ".rag-corpus-check.yml").write_text(s)
    code, *_ = run_cli()
    assert code == 1


def _to_trec(repo):
    gold = {}
    import yaml

    doc = yaml.safe_load((repo / "gold.yaml").read_text())
    qrels = []
    for q in doc["queries"]:
        for d, g in q["relevant"].items():
            qrels.append(f"{q['query_id']} 0 {d} {g}")
    write(repo / "gold.qrels", "\n".join(qrels) + "\n")
    run = []
    for line in (repo / "run.jsonl").read_text().splitlines():
        rec = json.loads(line)
        n = len(rec["ranking"])
        # Scores carry the order; ranks are deliberately scrambled (trec_eval ignores them).
        run += [
            f"{rec['query_id']} Q0 {d} {n - i} {n - i}.5 sys" for i, d in enumerate(rec["ranking"])
        ]
    write(repo / "run.trec", "\n".join(run) + "\n")
    return gold


def _use_trec(repo, gold=True):
    """The example's run (and gold set) as TREC files, and the config reading them."""
    _to_trec(repo)
    s = (repo / ".rag-corpus-check.yml").read_text().replace("run: run.jsonl", "run: run.trec")
    if gold:
        s = s.replace("gold: gold.yaml", "gold: gold.qrels")
    (repo / ".rag-corpus-check.yml").write_text(s)


def test_trec_formats_give_the_same_numbers(repo, run_cli):
    code, out, err, native, _ = run_cli()
    _use_trec(repo)
    code, out, err, trec, _ = run_cli()
    assert code == 0, out
    assert trec["metrics"] == native["metrics"]


def test_trec_run_orders_by_score_then_docid_descending(repo, run_cli):
    _use_trec(repo, gold=False)
    lines = [ln for ln in (repo / "run.trec").read_text().splitlines() if not ln.startswith("q01 ")]
    # q01: ties at the same score; trec_eval puts the larger doc id first.
    lines += [
        "q01 Q0 faq-004 1 1.0 sys",
        "q01 Q0 policy-002 2 1.0 sys",
        "q01 Q0 howto-003 3 0.5 sys",
    ]
    write(repo / "run.trec", "\n".join(lines) + "\n")
    code, out, err, results, _ = run_cli()
    q01 = next(q for q in results["queries"] if q["query_id"] == "q01")
    # order policy-002 (2), faq-004 (1), howto-003 (0): the ideal top-2
    import math

    ideal = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert q01["values"]["nDCG@5"] == pytest.approx((2 + 1 / math.log2(3)) / ideal)


def test_trec_run_duplicate_is_invalid(repo, run_cli):
    _use_trec(repo, gold=False)
    with open(repo / "run.trec", "a") as f:
        f.write("q01 Q0 policy-002 99 0.1 sys\n")
    code, out, err, results, _ = run_cli()
    assert code == 2
    assert any(
        "appears twice" in p["message"] and p["id"] == "policy-002" for p in results["problems"]
    )


# trec_eval splits fields on spaces and tabs only; str.split() also on these.
OTHER_SPACES = ["\u00a0", "\u3000", "\u2028", "\u0085", "\u2009"]


@pytest.mark.parametrize("space", OTHER_SPACES, ids=lambda c: f"U+{ord(c):04X}")
def test_trec_qrels_split_as_trec_eval_splits(repo, run_cli, space):
    """`q01 0 faq-001<NBSP>2` is three fields to trec_eval (four to
    str.split(), which read it as a label): a wrong field count, at its line."""
    _use_trec(repo)
    n = len((repo / "gold.qrels").read_text().splitlines()) + 1
    with open(repo / "gold.qrels", "a", encoding="utf-8") as f:
        f.write(f"q01 0 faq-001{space}2\n")
    code, out, err, results, _ = run_cli()
    assert code == 2, out
    p = next(p for p in results["problems"] if p["file"] == "gold.qrels")
    assert p["line"] == n and "found 3" in p["message"], p
    assert f"U+{ord(space):04X}, which is not a field separator" in p["message"]


@pytest.mark.parametrize("space", OTHER_SPACES, ids=lambda c: f"U+{ord(c):04X}")
def test_a_non_ascii_space_in_a_trec_id_is_an_error_naming_the_safe_id(repo, run_cli, space):
    _use_trec(repo)
    qrels = (repo / "gold.qrels").read_text().splitlines()
    run = (repo / "run.trec").read_text().splitlines()
    with open(repo / "gold.qrels", "a", encoding="utf-8") as f:
        f.write(f"q01 0 faq{space}001 2\n")
    with open(repo / "run.trec", "a", encoding="utf-8") as f:
        f.write(f"q{space}01 Q0 faq-001 77 0.5 sys\n")
    code, out, err, results, _ = run_cli()
    assert code == 2, out
    found = {(p["file"], p["line"]): p for p in results["problems"]}
    g, r = found[("gold.qrels", len(qrels) + 1)], found[("run.trec", len(run) + 1)]
    assert g["id"] == f"faq\\u{ord(space):04x}001" and r["id"] == f"q\\u{ord(space):04x}01", (g, r)
    # U+2028 and U+0085 are control characters to the id rule already.
    assert g["message"].startswith("document id ") and r["message"].startswith("question id ")
    assert all("contains" in m for m in (g["message"], r["message"]))
    assert all(space not in p["message"] + (p["id"] or "") for p in results["problems"])


def test_a_trec_line_of_only_a_non_ascii_space_is_a_line(repo, run_cli):
    """trec_eval reads a line of U+3000 as one field (a malformed line);
    only spaces, tabs and CR make a blank line."""
    _use_trec(repo, gold=False)
    n = len((repo / "run.trec").read_text().splitlines()) + 1
    with open(repo / "run.trec", "a", encoding="utf-8") as f:
        f.write("\u3000\n \t\r\n")
    code, out, err, results, _ = run_cli()
    assert code == 2, out
    errors = [p for p in results["problems"] if p["severity"] == "error"]
    assert [(p["line"], "found 1" in p["message"]) for p in errors] == [(n, True)], errors


def test_gold_as_json_and_jsonl(repo, run_cli):
    import yaml

    code, out, err, native, _ = run_cli()
    doc = yaml.safe_load((repo / "gold.yaml").read_text())
    write(repo / "gold.json", json.dumps(doc, indent=2))
    write(repo / "gold.jsonl", "\n".join(json.dumps(q) for q in doc["queries"]) + "\n")
    original = (repo / ".rag-corpus-check.yml").read_text()
    for name in ("gold.json", "gold.jsonl"):
        (repo / ".rag-corpus-check.yml").write_text(
            original.replace("gold: gold.yaml", f"gold: {name}")
        )
        code, out, err, res, _ = run_cli()
        assert code == 0, (name, out)
        assert res["metrics"] == native["metrics"]


def test_gold_json_reports_line_of_the_question(repo, run_cli):
    import yaml

    doc = yaml.safe_load((repo / "gold.yaml").read_text())
    doc["queries"][2]["relevant"]["faq-001"] = "high"
    write(repo / "gold.json", json.dumps(doc, indent=2))
    s = (repo / ".rag-corpus-check.yml").read_text().replace("gold: gold.yaml", "gold: gold.json")
    (repo / ".rag-corpus-check.yml").write_text(s)
    code, out, err, res, _ = run_cli()
    assert code == 2
    text = (repo / "gold.json").read_text().splitlines()
    p = res["problems"][0]
    assert '"query_id": "q03"' in text[p["line"] - 1] and p["id"] == "q03"


def test_github_outputs_annotations_and_step_summary(repo, run_cli, tmp_path, monkeypatch):
    out_file = tmp_path / "gh_output"
    sum_file = tmp_path / "gh_summary"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_OUTPUT", str(out_file))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(sum_file))
    monkeypatch.setenv("GITHUB_SHA", "a" * 40)
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/kb")
    s = (repo / "gold.yaml").read_text()
    (repo / "gold.yaml").write_text(s.replace("      faq-004: 1\n", "      doc-9: 1\n", 1))
    code, out, err, results, summary = run_cli()
    assert code == 2
    line = next(
        i for i, t in enumerate((repo / "gold.yaml").read_text().splitlines(), 1) if "doc-9" in t
    )
    assert (
        f"::error file=gold.yaml,line={line},title=rag-corpus-check%3A consistency::[doc-9] unknown document id"
        in out
    )
    outputs = parse_github_output(out_file.read_text())
    assert (
        outputs["passed"] == "false"
        and outputs["verdict"] == "invalid"
        and outputs["exit-code"] == "2"
    )
    assert Path(outputs["results-path"]).is_file()
    assert sum_file.read_text() == summary
    # Not a git checkout: the commit comes from GITHUB_SHA, with a link.
    assert "https://github.com/acme/kb/commit/" + "a" * 40 in summary


def test_github_outputs_on_pass(repo, run_cli, tmp_path, monkeypatch):
    out_file = tmp_path / "gh_output"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_OUTPUT", str(out_file))
    code, *_ = run_cli("--no-step-summary")
    outputs = parse_github_output(out_file.read_text())
    assert outputs["passed"] == "true" and outputs["k"] == "5"
    results = json.loads(Path(outputs["results-path"]).read_text())
    assert float(outputs["ndcg"]) == pytest.approx(results["metrics"]["nDCG@5"], abs=1e-10)
    assert float(outputs["precision"]) == pytest.approx(5 / 14, abs=1e-10)
    assert tuple(outputs) == OUTPUT_NAMES


def test_annotations_are_capped_at_ten_per_type(repo, run_cli, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    (repo / "corpus.jsonl").write_text("\n".join(f'{{"id": "x{i}"}}' for i in range(30)) + "\n")
    code, out, *_ = run_cli()
    assert sum(1 for ln in out.splitlines() if ln.startswith("::error ")) == 10
    assert "::notice::20 more errors are listed in the job summary" in out


def test_pr_head_and_merge_commit_in_summary(repo, run_cli, tmp_path, monkeypatch):
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"], cwd=repo, check=True
    )
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
        cwd=repo,
        check=True,
    )
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"pull_request": {"head": {"sha": "b" * 40}, "base": {"sha": "c" * 40}}})
    )
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_SHA", "d" * 40)
    code, out, err, results, summary = run_cli("--no-step-summary")
    first = summary.splitlines()[0]
    assert first.startswith("## ✅")
    assert head in summary and "b" * 40 in summary
    assert "[!WARNING]" in summary and "d" * 40 in summary  # HEAD is not the event's commit
    assert results["provenance"]["commit"] == head
    assert results["provenance"]["event_head_sha"] == "b" * 40


def test_internal_error_exits_3_without_traceback(repo, run_cli, monkeypatch):
    import rag_corpus_check.pipeline.stages as pipeline

    def boom(*a, **k):
        raise KeyError("secret-document-text")

    monkeypatch.setattr(pipeline, "evaluate", boom)
    code, out, err, results, summary = run_cli()
    assert code == 3
    assert "Traceback" not in out + err and "secret-document-text" not in out + err
    assert "internal error (KeyError) during evaluate" in err  # the failing stage is named


def test_unwritable_results_path_exits_3(repo, run_cli, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(
        [
            "--output",
            str(blocker / "sub" / "results.json"),
            "--summary-file",
            str(tmp_path / "s.md"),
        ]
    )
    cap = capsys.readouterr()
    assert code == 3 and "Traceback" not in cap.out + cap.err


def test_default_output_goes_to_runner_temp(repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path / "rt"))
    assert main([]) == 0
    out = capsys.readouterr().out
    (folder,) = (tmp_path / "rt" / "rag-corpus-check").iterdir()  # the checked directory's own
    expected = folder / "results.json"
    assert folder.name.startswith(repo.name + "-") and expected.is_file() and str(expected) in out
    assert not any(
        p.name.endswith(".json") and p.name.startswith("results") for p in repo.iterdir()
    )


def test_python_dash_m_and_console_script(repo, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "check")}
    env.pop("GITHUB_ACTIONS", None)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "rag_corpus_check",
            "--output",
            str(tmp_path / "r.json"),
            "--summary-file",
            str(tmp_path / "s.md"),
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASSED" in res.stdout
    script = Path(sys.executable).parent / "rag-corpus-check"
    if script.exists():  # installed by `make test`
        res = subprocess.run([str(script), "--version"], capture_output=True, text=True)
        assert res.returncode == 0 and "rag-corpus-check" in res.stdout


@pytest.mark.parametrize("broken", [False, True])
def test_entry_points_exit_with_all_output_and_the_exit_code(repo, tmp_path, capsys, broken):
    """The command ends with os._exit (cli.run: no freeing of a million
    objects one by one). Its output, through a pipe, must be all of what
    main() prints, and its exit code main()'s."""
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"rag-corpus-check": "rag_corpus_check.commands.cli:run"}
    assert "run()" in (ROOT / "check" / "launch.py").read_text()
    if broken:
        (repo / "run.jsonl").write_text('{"query_id": "q01", "ranking": ["ghost"]}\n')
    args = ["--no-github", "--output", str(tmp_path / "r.json"), "--summary-file", str(tmp_path / "s.md")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    for cmd in ([sys.executable, "-I", str(ROOT / "check" / "launch.py")],
                [sys.executable, "-m", "rag_corpus_check"]):
        res = subprocess.run([*cmd, *args], cwd=repo, capture_output=True, text=True,
                             env={**env, "PYTHONPATH": str(ROOT / "check")})
        code = main(args)
        assert (res.returncode, res.stdout) == (code, capsys.readouterr().out)
        assert code == (2 if broken else 0) and len(res.stdout.splitlines()) > 10


def test_run_lets_an_interrupt_out_the_usual_way(monkeypatch):
    """Ctrl-C (or a broken pipe) is not swallowed by the fast exit: it
    leaves run() as an exception, and the kept outcome is let go."""
    from rag_corpus_check.commands import cli

    def interrupted():
        cli.LAST_OUTCOME[0] = object()
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.run()
    assert cli.LAST_OUTCOME == [None]


def test_launcher_ignores_modules_in_the_workspace(repo, tmp_path):
    """`python -I check/launch.py` (what action.yml runs) must not import a
    yaml.py or check/ package planted in the checked-out tree."""
    write(repo / "yaml.py", "raise SystemExit('planted yaml imported')\n")
    write(repo / "jsonschema" / "__init__.py", "raise SystemExit('planted jsonschema imported')\n")
    write(
        repo / "rag_corpus_check" / "__init__.py", "raise SystemExit('planted package imported')\n"
    )
    write(repo / "sitecustomize.py", "raise SystemExit('planted sitecustomize imported')\n")
    res = subprocess.run(
        [
            sys.executable,
            "-I",
            str(ROOT / "check" / "launch.py"),
            "--output",
            str(tmp_path / "r.json"),
            "--summary-file",
            str(tmp_path / "s.md"),
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"]},
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "planted" not in res.stdout + res.stderr


def test_readme_quick_start_output_is_true(tmp_path, monkeypatch, capsys):
    """The README shows what `make demo` prints; keep it honest."""
    monkeypatch.chdir(ROOT)
    assert (
        main(
            [
                "--config",
                "examples/kb/.rag-corpus-check.yml",
                "--no-github",
                "--output",
                str(tmp_path / "r.json"),
                "--summary-file",
                str(tmp_path / "s.md"),
            ]
        )
        == 0
    )
    actual = capsys.readouterr().out.splitlines()
    readme = (ROOT / "README.md").read_text()
    block = (
        readme.split("```text\nrag-corpus-check: PASSED\n", 1)[1].split("```", 1)[0].splitlines()
    )
    shown = [
        ln
        for ln in block
        if ln.strip() and "..." not in ln and "XXXX" not in ln and "<the commit" not in ln
    ]
    assert len(shown) > 10
    for line in shown:
        assert line in actual, line
    assert (ROOT / "Makefile").read_text().count("examples/kb/.rag-corpus-check.yml") == 1


def test_docs_annotated_config_is_valid(tmp_path):
    """The annotated configuration in docs/configuration.md loads without a problem."""
    from rag_corpus_check.config.load import load_config
    from rag_corpus_check.core.problems import Problems

    page = (ROOT / "docs" / "configuration.md").read_text()
    block = page.split("## An annotated config", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    write(tmp_path / ".rag-corpus-check.yml", block)
    problems = Problems()
    cfg, _ = load_config(str(tmp_path), str(tmp_path / ".rag-corpus-check.yml"), problems)
    assert cfg is not None, [p.message for p in problems.items]
    assert (
        cfg.k == 5
        and cfg.run == "run.jsonl"
        and {str(t.measure) for t in cfg.thresholds} == {"P@5", "R@5", "nDCG@5"}
    )


@pytest.mark.parametrize("variant", ["yaml-jsonl", "json", "trec"])
def test_provenance_digests_are_the_files_sha256(repo, run_cli, variant):
    """Inputs are hashed while they are read (one pass): the digests must be
    exactly the files' SHA-256, whatever the format."""
    import hashlib

    if variant == "json":
        import yaml

        write(repo / "gold.json", json.dumps(yaml.safe_load((repo / "gold.yaml").read_text())))
        cfg = (repo / ".rag-corpus-check.yml").read_text().replace("gold: gold.yaml", "gold: gold.json")
        (repo / ".rag-corpus-check.yml").write_text(cfg)
    elif variant == "trec":
        _use_trec(repo)
    code, out, err, results, _ = run_cli()
    assert code == 0, out
    inputs = results["provenance"]["inputs"]
    assert len(inputs) == 4
    for name, digest in inputs.items():
        assert digest == hashlib.sha256((repo / name).read_bytes()).hexdigest(), name


def test_the_summary_goes_next_to_the_results_and_nothing_elsewhere(repo, tmp_path, monkeypatch, capsys):
    """--output DIR/results.json alone: the summary is DIR/summary.md (it
    went to a new temporary directory), and no directory is left in the
    system's temporary one."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    out = tmp_path / "out" / "results.json"
    assert main(["--output", str(out)]) == 0
    assert (out.parent / "summary.md").is_file()
    assert list(tmp.iterdir()) == []


def test_local_runs_reuse_one_directory(repo, tmp_path, monkeypatch, capsys):
    """Without --output every local run left a /tmp/rag-corpus-check-* behind
    (188 after an hour): now the last run's files, in one directory of this user's."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    for _ in range(3):
        assert main([]) == 0
    (made,) = tmp.iterdir()
    (folder,) = made.iterdir()  # the checked directory's own
    assert sorted(p.name for p in folder.iterdir()) == ["results.json", "summary.md"]
    assert made.stat().st_mode & 0o077 == 0 and folder.stat().st_mode & 0o077 == 0
    capsys.readouterr()


def test_someone_elses_directory_is_not_used(repo, tmp_path, monkeypatch, capsys):
    """In a shared temporary directory the name may be taken (by another
    user, or as a symlink): a fresh directory of its own then."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp / f"rag-corpus-check-{os.getuid()}").symlink_to(elsewhere)
    assert main([]) == 0
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("show", [False, True])
def test_report_show_text_puts_escaped_question_texts_in_the_worst_table(repo, run_cli, show):
    """`report.show_text` (off by default): the worst-questions table gains a
    text column, escaped like every cell; without it no question text is shown."""
    cfg = repo / ".rag-corpus-check.yml"
    cfg.write_text(cfg.read_text() + f"report:\n  worst: 14\n  show_text: {str(show).lower()}\n")
    gold = repo / "gold.yaml"
    hostile = "Deleted backups | kept? <img src=x> [l](http://x.y) ::error::z"
    gold.write_text(gold.read_text().replace('"How long are deleted backups kept?"', json.dumps(hostile), 1))
    code, out, err, results, summary = run_cli()
    assert code == 0, out
    worst = summary.split("Worst questions by")[1].split("\n\n", 2)[1]
    row = next(line for line in worst.splitlines() if line.startswith("| q01 |"))
    if not show:
        assert "| question | `P@5`" in worst and "backups" not in summary
        return
    assert "| question | text | `P@5`" in worst
    assert "Deleted backups \\| kept? &lt;img src=x&gt; \\[l\\]\\(http&#58;//x\\.y\\)" in row
    assert "::" not in row
    assert row.count("|") - row.count("\\|") == 2 + 1 + 4 + 1  # question, text, 4 headline measures, note
