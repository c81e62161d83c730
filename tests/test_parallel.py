"""The corpus read in a second process (issue 6): the same outcome as one
process — results, messages and their order, digests — whether the child
succeeds, finds a problem, or dies; and a failure in the parent leaves no
child behind."""

import os

import pytest

from conftest import write
from rag_corpus_check import inputs


@pytest.fixture
def both(repo, run_cli, monkeypatch):
    """Run the check in one process and with the corpus in a child; return both."""
    forks = []
    real_job = inputs.CorpusJob

    def counting_job(*args):
        job = real_job(*args)
        forks.append(job.pid)
        return job

    def _both(*argv):
        monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", "0")
        serial = run_cli(*argv)
        monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", "1")
        monkeypatch.setattr(inputs, "FORK_MIN_BYTES", 0)
        monkeypatch.setattr(inputs, "CorpusJob", counting_job)
        before = len(forks)
        parallel = run_cli(*argv)
        assert len(forks) == before + 1, "the corpus was not read in a child"
        monkeypatch.setattr(inputs, "FORK_MIN_BYTES", 8 * 1024**2)
        return serial, parallel

    return _both


def _same(serial, parallel):
    code_s, out_s, err_s, res_s, sum_s = serial
    code_p, out_p, err_p, res_p, sum_p = parallel
    assert code_p == code_s
    assert err_p == err_s
    assert res_p == res_s  # results.json: every digest, problem and value
    assert out_p == out_s and sum_p == sum_s


def test_clean_corpus_same_as_one_process(both):
    serial, parallel = both()
    assert serial[0] == 0
    _same(serial, parallel)


def test_problems_in_every_file_reported_in_file_order(repo, both):
    lines = (repo / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    lines.append(lines[0])  # a duplicate id: the child gives up, the parent says where
    write(repo / "corpus.jsonl", "\n".join(lines) + "\n")
    with open(repo / "run.jsonl", "a", encoding="utf-8") as f:
        f.write('{"query_id": 7, "ranking": []}\n')
    gold = (repo / "gold.yaml").read_text(encoding="utf-8")
    write(repo / "gold.yaml", gold.replace("relevant:", "relevant:\n      bogus-\x01: x\n", 1))
    serial, parallel = both()
    assert serial[0] == 2
    _same(serial, parallel)
    files = [p["file"] for p in serial[3]["problems"]]
    assert files == sorted(files, key=["gold.yaml", "corpus.jsonl", "run.jsonl"].index), files
    assert {"gold.yaml", "corpus.jsonl", "run.jsonl"} <= set(files)


def test_a_child_that_dies_is_replaced_by_reading_here(both, monkeypatch):
    def crash(*args, **kwargs):
        os._exit(9)  # as if killed

    monkeypatch.setattr(inputs, "_child", crash)
    serial, parallel = both()
    _same(serial, parallel)


def test_a_failure_in_the_parent_reaps_the_child(repo, run_cli, monkeypatch):
    from rag_corpus_check import pipeline

    jobs = []
    real_job = inputs.CorpusJob

    def keep(*args):
        job = real_job(*args)
        jobs.append(job.pid)
        return job

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(inputs, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(inputs, "CorpusJob", keep)
    monkeypatch.setattr(pipeline, "read_run", boom)
    code, *_ = run_cli()
    assert code == 3 and len(jobs) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(jobs[0], os.WNOHANG)  # already reaped: no zombie, no orphan


def test_not_forked_below_the_size_or_when_turned_off(repo, monkeypatch):
    corpus = str(repo / "corpus.jsonl")
    assert not inputs._can_fork(corpus)  # 30 documents
    monkeypatch.setattr(inputs, "FORK_MIN_BYTES", 0)
    assert inputs._can_fork(corpus) == (len(os.sched_getaffinity(0)) > 1)
    monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", "0")
    assert not inputs._can_fork(corpus)


def test_child_result_equals_reading_here(tmp_path):
    """Several blocks, every status, two snapshots, no type: what comes back
    through the pipe is what this process would have read."""
    import hashlib
    import json
    import random

    from rag_corpus_check.safe_io import Limits, Sha256

    rng = random.Random(1)
    recs = [{"id": f"doc-{i}", "text": "w " * rng.randrange(80), "snapshot": rng.choice(["s1", "s2"]),
             "status": rng.choice(["active", "active", "stale", "restricted"]),
             **({"type": rng.choice(["faq", "howto"])} if i % 3 else {})} for i in range(5000)]
    data = "".join(json.dumps(r) + "\n" for r in recs).encode()
    path = tmp_path / "c.jsonl"
    path.write_bytes(data)
    corpus, digest = inputs.CorpusJob(str(path), "c.jsonl", Limits()).result()
    here = inputs._read_corpus_fast(str(path), "c.jsonl", Limits(), Sha256())
    assert digest == hashlib.sha256(data).hexdigest()
    assert corpus.docs == here.docs and list(corpus.docs) == list(here.docs)
    assert corpus.inactive == here.inactive and len(corpus.inactive) > 1000
    assert corpus.snapshots == here.snapshots == {"s1": corpus.snapshots["s1"], "s2": 5000 - corpus.snapshots["s1"]}
    assert corpus.fingerprint == here.fingerprint
    assert [corpus.line(d) for d in ("doc-0", "doc-4999")] == [1, 5000]


def test_after_the_child_gave_up_the_file_is_read_once_more_not_twice(repo, run_cli, monkeypatch):
    """A bad corpus costs the child's fast read and one exact read here."""
    calls = []
    real_fast = inputs._read_corpus_fast

    def counting(*args, **kwargs):
        calls.append(os.getpid())
        return real_fast(*args, **kwargs)

    lines = (repo / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    write(repo / "corpus.jsonl", "\n".join([*lines, lines[0]]) + "\n")
    monkeypatch.setattr(inputs, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(inputs, "_read_corpus_fast", counting)
    code, *_ = run_cli()
    assert code == 2
    assert os.getpid() not in calls  # the fast reader ran in the child only
