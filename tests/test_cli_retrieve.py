"""The check with the built-in retriever, the command retriever and the
`retrieve` subcommand, end to end."""

import json
import os
import shutil
import sys

import pytest

from conftest import ROOT, write
from rag_corpus_check.commands.cli import main


def _no_run(repo, extra=""):
    """The example config without `run:` (and with `extra` in its place)."""
    cfg = repo / ".rag-corpus-check.yml"
    s = (ROOT / "examples" / "kb" / "committed-run.rag-corpus-check.yml").read_text()
    s = "\n".join(ln for ln in s.splitlines() if not ln.startswith(("run:", "retriever:", "  stopwords:")))
    cfg.write_text(s.replace("k: 5\n", "k: 5\n" + extra) + "\n")


def test_no_run_means_builtin_bm25(repo, run_cli):
    _no_run(repo)
    code, out, err, results, summary = run_cli()
    assert code in (0, 1), out
    src = results["run_source"]
    assert src["type"] == "bm25" and src["k1"] == 1.2 and src["b"] == 0.75 and src["depth"] == 100
    assert src["indexed_documents"] == 26  # 30 documents minus 3 stale and 1 restricted
    assert "built-in BM25 over 26 documents" in out and "built-in BM25" in summary
    assert "Irrelevant hits in the top 5 by document type" in summary
    assert results["irrelevant_by_type"] and all(r["type"] for r in results["irrelevant_by_type"])
    assert "run.jsonl" not in results["provenance"]["inputs"]


def test_inactive_documents_are_not_retrieved_unless_configured(repo, run_cli, tmp_path):
    _no_run(repo)
    assert main(["retrieve", "--out", str(tmp_path / "a.jsonl")]) == 0
    ranked = {d for line in (tmp_path / "a.jsonl").read_text().splitlines() for d in json.loads(line)["ranking"]}
    assert not ranked & {"faq-009", "policy-007", "howto-009", "runbook-001"}
    _no_run(repo, "retriever:\n  statuses: [active, stale, restricted]\n")
    assert main(["retrieve", "--out", str(tmp_path / "b.jsonl")]) == 0
    ranked = {d for line in (tmp_path / "b.jsonl").read_text().splitlines() for d in json.loads(line)["ranking"]}
    assert "faq-009" in ranked


def test_retrieve_subcommand_output_is_a_valid_committed_run(repo, run_cli, tmp_path, capsys):
    _no_run(repo)
    code, _, _, bm25_results, _ = run_cli()
    assert main(["retrieve", "--out", str(repo / "bm25.jsonl")]) == 0
    printed = capsys.readouterr().out
    assert "wrote 15 rankings" in printed
    lines = (repo / "bm25.jsonl").read_text().splitlines()
    assert len(lines) == 15
    first = json.loads(lines[0])
    assert first["snapshot"].startswith("sha256:") and len(first["ranking"]) <= 100
    # Scored as a committed run it gives exactly the same numbers.
    cfg = repo / ".rag-corpus-check.yml"
    cfg.write_text(cfg.read_text().replace("gold: gold.yaml\n", "gold: gold.yaml\nrun: bm25.jsonl\n"))
    code2, _, _, committed, _ = run_cli()
    assert code2 == code and committed["metrics"] == bm25_results["metrics"]
    # Edit one document: the committed run is now stale, and that is an input error.
    corpus = repo / "corpus.jsonl"
    rows = corpus.read_text().splitlines()
    rec = json.loads(rows[0])
    rec["text"] += " Updated."
    rows[0] = json.dumps(rec)
    corpus.write_text("\n".join(rows) + "\n")
    code3, out3, _, stale, _ = run_cli()
    assert code3 == 2
    msg = next(p["message"] for p in stale["problems"] if p["file"] == "bm25.jsonl")
    assert "declares snapshot `sha256:" in msg and "rag-corpus-check retrieve" in msg


def test_bm25_needs_question_text(repo, run_cli):
    _no_run(repo)
    g = repo / "gold.yaml"
    g.write_text(g.read_text().replace('    query: "How long are deleted backups kept?"\n', "", 1))
    code, out, err, results, _ = run_cli()
    assert code == 2
    p = next(p for p in results["problems"] if p["id"] == "q01")
    line = next(i for i, t in enumerate(g.read_text().splitlines(), 1) if "query_id: q01" in t)
    assert p["file"] == "gold.yaml" and p["line"] == line and "no `query` text" in p["message"]


def test_depth_below_k_is_a_config_error(repo, run_cli):
    _no_run(repo, "retriever:\n  depth: 3\n")
    code, out, err, results, _ = run_cli()
    assert code == 2 and "retriever.depth (3) is below k (5)" in out


def _command_repo(repo, script: str, extra: str = ""):
    write(repo / "ret.py", script)
    _no_run(repo, "retriever:\n  type: command\n  command: [" + json.dumps(sys.executable)
            + ', ret.py, "{corpus}", "{queries}", "{output}"]\n' + extra)


ALLOW = "--allow-retriever-command"

GOOD = """
import json, sys
corpus, questions, output = sys.argv[1:4]
ids = [json.loads(l)["id"] for l in open(corpus) if l.strip()]
with open(output, "w") as out:
    for line in open(questions):
        q = json.loads(line)
        out.write(json.dumps({"query_id": q["query_id"], "ranking": ids[:10]}) + "\\n")
print("::error::injected from the retriever")
"""


def test_command_retriever(repo, run_cli):
    _command_repo(repo, GOOD)
    code, out, err, results, summary = run_cli(ALLOW)
    assert code in (0, 1), out
    assert results["run_source"]["type"] == "command"
    assert results["counts"]["errors"] == 0
    # Its output is shown, escaped: no line of ours starts a workflow command.
    assert "Retriever command output" in summary
    assert "::error::injected" not in summary
    assert results["run_source"]["stdout_tail"].startswith("\\:")


def test_command_retriever_run_is_validated(repo, run_cli):
    bad = GOOD.replace('ids[:10]', '["faq-001", "faq-001"]')
    _command_repo(repo, bad)
    code, out, err, results, _ = run_cli(ALLOW)
    assert code == 2
    p = next(p for p in results["problems"] if "appears twice" in p["message"])
    assert p["file"] == "(retriever command output)" and p["id"] == "faq-001"


def test_command_retriever_failure_is_reported(repo, run_cli):
    _command_repo(repo, "import sys\nprint('boom on stderr', file=sys.stderr)\nsys.exit(4)\n")
    code, out, err, results, summary = run_cli(ALLOW)
    assert code == 2
    assert "exited with status 4" in out
    assert "boom on stderr" in summary


def test_command_retriever_timeout(repo, run_cli):
    _command_repo(repo, "import time\ntime.sleep(30)\n", "  timeout: 0.5\n")
    code, out, *_ = run_cli(ALLOW)
    assert code == 2 and "timed out after 0.5 s" in out


def test_command_not_found(repo, run_cli):
    cfg = repo / ".rag-corpus-check.yml"
    _no_run(repo, "retriever:\n  command: [no-such-retriever-xyz]\n")
    code, out, *_ = run_cli(ALLOW)
    assert code == 2 and "retriever command not found" in out
    assert cfg.exists()


def test_bundled_command_example(tmp_path, monkeypatch, capsys):
    if shutil.which("python3") is None:
        raise AssertionError("python3 is needed on PATH for the example")
    monkeypatch.chdir(ROOT)
    code = main(["--config", "examples/kb-command/.rag-corpus-check.yml", ALLOW, "--output",
                 str(tmp_path / "r.json"), "--summary-file", str(tmp_path / "s.md"), "--no-github"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert json.loads((tmp_path / "r.json").read_text())["run_source"]["type"] == "command"


def test_command_sees_no_runner_files_or_tokens(repo, run_cli, monkeypatch, tmp_path):
    for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", "canary-runtime")
    monkeypatch.setenv("GITHUB_TOKEN", "canary-token")
    monkeypatch.setenv("MY_SECRET", "canary-secret")
    monkeypatch.setenv("INPUT_CONFIG", "x")
    script = GOOD.replace('print("::error::injected from the retriever")', """
import os
leaked = sorted(k for k in os.environ if k.startswith(("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH",
    "GITHUB_STEP", "GITHUB_STATE", "ACTIONS_", "INPUT_")) or "TOKEN" in k or "SECRET" in k)
print("leaked:" + ",".join(leaked))
""")
    _command_repo(repo, script)
    code, out, err, results, summary = run_cli("--no-github", ALLOW)
    assert "leaked:" in results["run_source"]["stdout_tail"]
    assert results["run_source"]["stdout_tail"].strip().endswith("leaked:")


def test_command_sees_no_embedding_key(repo, run_cli, monkeypatch):
    """The key a workflow passes for `retriever.endpoint` (any name: `key_env`
    is the config's) is no business of the team's retriever command."""
    monkeypatch.setenv("EMBEDDING_API_KEY", "canary-key")
    monkeypatch.setenv("OPENAI_API_KEY", "canary-key")
    monkeypatch.setenv("DB_PASSWORD", "canary-key")
    script = GOOD.replace('print("::error::injected from the retriever")', """
import os
print("leaked:" + ",".join(sorted(k for k, v in os.environ.items() if v == "canary-key")))
""")
    _command_repo(repo, script)
    code, out, err, results, summary = run_cli("--no-github", ALLOW)
    assert results["run_source"]["stdout_tail"].strip().endswith("leaked:"), results["run_source"]["stdout_tail"]


def test_command_needs_the_callers_opt_in(repo, run_cli, tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    _command_repo(repo, f"open({str(marker)!r}, 'w').write('x')\n")
    code, out, err, results, _ = run_cli()
    assert code == 2 and not marker.exists()
    assert "--allow-retriever-command" in out
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request_target")
    code, out, *_ = run_cli(ALLOW)
    assert code == 2 and not marker.exists() and "refusing to run under `pull_request_target`" in out


@pytest.mark.parametrize("event", ["workflow_dispatch", "schedule", "merge_group", "issue_comment"])
def test_command_runs_only_under_pull_request_and_push(repo, run_cli, tmp_path, monkeypatch, event):
    """Even where the check itself may run (or is allowed to), the command does not."""
    marker = tmp_path / "ran"
    _command_repo(repo, f"open({str(marker)!r}, 'w').write('x')\n")
    monkeypatch.setenv("GITHUB_EVENT_NAME", event)
    code, out, *_ = run_cli(ALLOW, "--allow-untrusted-event")
    assert code == 2 and not marker.exists(), out
    assert f"refusing to run `retriever.command` under `{event}`" in out
    assert "only under `pull_request` and `push`" in out


@pytest.mark.parametrize("event", ["pull_request", "push"])
def test_command_runs_under_pull_request_and_push(repo, run_cli, tmp_path, monkeypatch, event):
    marker = tmp_path / "ran"
    _command_repo(repo, f"open({str(marker)!r}, 'w').write('x')\n")
    monkeypatch.setenv("GITHUB_EVENT_NAME", event)
    run_cli(ALLOW)
    assert marker.exists()


# ---------------------------------------------------------------- containment of the command (issue 13, item 6)

# A retriever that does its job (GOOD), then leaves two processes behind: one
# in its process group (`sleep &`), one that double-forks into a session of
# its own (a daemon). Both write their pid where the test can find it.
LEAVES_CHILDREN = GOOD + """
import os, subprocess, time
pids = os.environ["PIDS_FILE"]
subprocess.Popen([sys.executable, "-c", "import os,time; open(%r,'a').write(str(os.getpid())+'\\\\n'); time.sleep(600)" % pids])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(pids, "a").write(str(os.getpid()) + "\\n")
        time.sleep(600)
    os._exit(0)
while len(open(pids).read().split()) < 2:
    time.sleep(0.01)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and the subreaper are Linux's")
@pytest.mark.parametrize("how", ["exits", "times out"])
def test_nothing_the_command_started_outlives_it(repo, run_cli, tmp_path, monkeypatch, how):
    pids = tmp_path / "pids"
    pids.write_text("")
    monkeypatch.setenv("PIDS_FILE", str(pids))
    script = LEAVES_CHILDREN + ("time.sleep(600)\n" if how == "times out" else "")
    _command_repo(repo, script, "  timeout: 600\n")
    code, out, *_ = run_cli(ALLOW, "--retriever-timeout", "5" if how == "times out" else "600")
    left = [int(p) for p in pids.read_text().split()]
    assert len(left) == 2, out
    assert [p for p in left if _alive(p)] == [], "processes the retriever started are still running"
    if how == "times out":
        assert code == 2 and "timed out after 5 s" in out and "everything it started were killed" in out
    else:
        assert code == 1, out  # measured (GOOD ranks badly): the gate decided


def test_the_callers_timeout_is_the_ceiling(repo, run_cli):
    """The config (the PR's) says 600 s; the caller's 1 s wins."""
    _command_repo(repo, "import time\ntime.sleep(30)\n", "  timeout: 600\n")
    code, out, err, results, _ = run_cli(ALLOW, "--retriever-timeout", "1")
    assert code == 2 and "timed out after 1 s" in out
    assert results["run_source"]["timeout"] == 1


def test_output_is_capped_while_it_is_read(repo, run_cli):
    """40 MB on stdout: read as it comes (no deadlock on a full pipe), only
    the tail kept (MAX_CAPTURE bytes), the last line shown."""
    from rag_corpus_check.retrieval import external as retrieve_command

    script = GOOD + "for i in range(400_000):\n    print('x' * 99)\nprint('the last line')\n"
    _command_repo(repo, script)
    seen = []
    real = retrieve_command._Tail.run

    def watched(self):
        real(self)
        seen.append(len(self.data))

    retrieve_command._Tail.run = watched
    try:
        code, out, err, results, _ = run_cli(ALLOW)
    finally:
        retrieve_command._Tail.run = real
    assert code == 1, out
    assert max(seen) <= retrieve_command.MAX_CAPTURE
    assert results["run_source"]["stdout_tail"].endswith("the last line")


def test_the_commands_files_are_removed(repo, run_cli, tmp_path):
    where = tmp_path / "where"
    _command_repo(repo, GOOD + f"open({str(where)!r}, 'w').write(questions)\n")
    code, out, *_ = run_cli(ALLOW)
    assert code == 1, out
    questions = where.read_text()
    assert questions.endswith("questions.jsonl") and not os.path.exists(os.path.dirname(questions))


# ---------------------------------------------------------------- the retriever's bounds (issue 13, item 7)


@pytest.mark.parametrize("limit, file", [
    ("max_query_tokens: 2", "gold.yaml"),
    ("max_vocabulary: 10", "corpus.jsonl"),
    ("max_index_postings: 10", "corpus.jsonl"),
    ("max_retrieval_work: 10", "gold.yaml"),
])
def test_a_bound_ends_in_a_limit_problem_naming_it(repo, run_cli, limit, file):
    _no_run(repo, f"limits:\n  {limit}\n")
    code, out, err, results, _ = run_cli()
    assert code == 2, out
    p = results["problems"][0]
    name = limit.split(":")[0]
    assert p["kind"] == "limit" and p["file"] == file and f"limits.{name}" in p["message"]
    if file == "gold.yaml":
        assert p["line"] and p["id"]


def test_limits_have_maxima(repo, run_cli):
    _no_run(repo, "limits:\n  max_records: 1000000000000\n")
    code, out, err, results, _ = run_cli()
    assert code == 2 and results["problems"][0]["kind"] == "schema", out


def test_the_same_question_text_is_refused_before_any_search(repo, run_cli, monkeypatch):
    """A YAML gold set can repeat one long question through aliases: a
    question asked twice is an input error (question_texts), found before
    anything is searched."""
    from rag_corpus_check.retrieval import bm25 as retrieve

    _no_run(repo)
    gold = (repo / "gold.yaml").read_text(encoding="utf-8")
    anchored = gold.replace('query: "', 'query: &q "', 1)
    extra = "".join(f"  - query_id: alias-{i}\n    query: *q\n    relevant: {{faq-001: 1}}\n" for i in range(50))
    write(repo / "gold.yaml", anchored.rstrip("\n") + "\n" + extra)
    calls = []
    real = retrieve.BM25Index.search
    monkeypatch.setattr(retrieve.BM25Index, "search", lambda self, *a: calls.append(a) or real(self, *a))
    code, out, _, results, _ = run_cli()
    assert code == 2, out
    assert calls == []
    repeated = [p for p in results["problems"] if "the question text is that of question `q01`" in p["message"]]
    assert [p["id"] for p in repeated] == [f"alias-{i}" for i in range(50)]


def test_a_questions_file_past_its_cap_is_a_limit(repo, run_cli, monkeypatch):
    from rag_corpus_check.retrieval import rankers as retrieval

    monkeypatch.setattr(retrieval, "MAX_QUESTIONS_BYTES", 1000)
    _command_repo(repo, GOOD)
    code, out, err, results, _ = run_cli(ALLOW)
    assert code == 2 and results["problems"][0]["kind"] == "limit", out
    assert "questions file for the retriever command" in results["problems"][0]["message"]
