"""The corpus read in a second process (inputs.child): the same outcome as
one process — results, messages and their order, digests — whether the child
succeeds, finds a problem, or dies; and a failure in the parent leaves no
child behind."""

import os

import pytest

from conftest import write
from rag_corpus_check.core.problems import Problems
from rag_corpus_check.inputs import child, fast
from rag_corpus_check.safe_io import Limits, Sha256


@pytest.fixture(autouse=True)
def parallel(monkeypatch):
    """A child whatever the load of the machine (RAG_CORPUS_CHECK_PARALLEL=1):
    these tests are about what it does; when it is started, below."""
    monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", "1")


@pytest.fixture
def forks(monkeypatch):
    """The pids of the corpus children started from here on."""
    pids = []
    real = child.CorpusProcess.__init__

    def recorded(self, *args):
        real(self, *args)
        pids.append(self.pid)

    monkeypatch.setattr(child.CorpusProcess, "__init__", recorded)
    return pids


@pytest.fixture
def both(repo, run_cli, monkeypatch, forks):
    """Run the check in one process and with the corpus in a child; return both."""

    def _both(*argv, children=1):
        monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", "0")
        serial = run_cli(*argv)
        monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", "1")
        monkeypatch.setattr(child, "FORK_MIN_BYTES", 0)
        before = len(forks)
        parallel = run_cli(*argv)
        assert len(forks) == before + children, "the corpus was not read in a child"
        monkeypatch.setattr(child, "FORK_MIN_BYTES", 8 * 1024**2)
        return serial, parallel

    return _both


def _same(serial, parallel):
    code_s, out_s, err_s, res_s, sum_s = serial
    code_p, out_p, err_p, res_p, sum_p = parallel
    assert code_p == code_s
    assert err_p == err_s
    assert res_p == res_s  # results.json: every digest, problem and value
    assert out_p == out_s and sum_p == sum_s


def _process(path, limits=None):
    return child.CorpusProcess(str(path), "c.jsonl", limits or Limits())


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
    assert files == sorted(files, key=["gold.yaml", "run.jsonl", "corpus.jsonl"].index), files
    assert {"gold.yaml", "corpus.jsonl", "run.jsonl"} <= set(files)


def test_a_child_that_dies_is_replaced_by_reading_here(both, monkeypatch):
    def crash(*args, **kwargs):
        os._exit(9)  # as if killed

    monkeypatch.setattr(child, "_serve", crash)
    serial, parallel = both()
    _same(serial, parallel)


def test_a_failure_in_the_parent_reaps_the_child(repo, run_cli, monkeypatch, forks):
    from rag_corpus_check.pipeline import stages as pipeline

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(child, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "cross_check", boom)
    code, *_ = run_cli()
    assert code == 3 and len(forks) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], os.WNOHANG)  # already reaped: no zombie, no orphan


def test_not_forked_below_the_size_or_when_turned_off(repo, monkeypatch):
    corpus = str(repo / "corpus.jsonl")
    assert not child.can_fork(corpus)  # 30 documents
    monkeypatch.setattr(child, "FORK_MIN_BYTES", 0)
    assert child.can_fork(corpus) == (len(os.sched_getaffinity(0)) > 1)
    monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", "0")
    assert not child.can_fork(corpus)


def test_child_answers_equal_reading_here(tmp_path):
    """Several blocks, every status, two snapshots, no type: what the child
    says of the corpus is what this process finds reading it."""
    import hashlib
    import json
    import random

    rng = random.Random(1)
    recs = [{"id": f"doc-{i}", "text": "w " * rng.randrange(1, 80), "snapshot": rng.choice(["s1", "s2"]),
             "status": rng.choice(["active", "active", "stale", "restricted"]),
             **({"type": rng.choice(["faq", "howto"])} if i % 3 else {})} for i in range(5000)]
    data = "".join(json.dumps(r) + "\n" for r in recs).encode()
    path = tmp_path / "c.jsonl"
    path.write_bytes(data)
    ids = [r["id"] for r in recs] + ["ghost-1", "ghost-2"]
    labelled, ranked = set(rng.sample(ids, 800)), set(rng.sample(ids, 3000))
    irrelevant = rng.choices(ids, k=4000)
    unjudged = [rng.random() < 0.5 for _ in irrelevant]
    process = _process(path)
    try:
        corpus, digest = process.result()
        here = fast.read_corpus(str(path), "c.jsonl", Limits(), Sha256())
        assert digest == hashlib.sha256(data).hexdigest()
        assert corpus.snapshots == here.snapshots and corpus.fingerprint == here.fingerprint
        assert corpus.count == here.count == 5000
        facts = corpus.facts(labelled, ranked)
        assert facts == here.facts(labelled, ranked)
        assert len(facts.suspects) > 200 and facts.lines and facts.unknown >= {"ghost-1", "ghost-2"} & ranked
        assert corpus.type_counts(irrelevant, unjudged) == here.type_counts(irrelevant, unjudged)
        assert corpus.ids() == here.ids() and corpus.odd_ids() == here.odd_ids() == []
    finally:
        process.close()


def test_a_closed_child_is_not_asked(tmp_path):
    """After close() a question is an error here, never a silent empty answer."""
    path = tmp_path / "c.jsonl"
    path.write_text("".join(f'{{"id": "d{i}", "text": "t", "status": "stale"}}\n' for i in range(300)))
    process = _process(path)
    corpus, _ = process.result()
    facts = corpus.facts({"d1", "x"}, {"d2", "y"})
    assert facts.suspects.keys() == {"d1", "x"} and facts.suspects["x"] is None
    assert facts.suspects["d1"].status == "stale" and facts.lines == {"d1": 2} and facts.unknown == {"y"}
    process.close()
    with pytest.raises(RuntimeError):
        corpus.facts({"d1"}, {"d2"})
    assert corpus.count == 300  # what it said when it was ready stays known


def test_a_child_that_gave_up_says_so(tmp_path):
    """A corpus with a problem: the child exits without a word, and result()
    is None (the caller reads the file itself); nothing is left running."""
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "d1", "text": "t"}\n{"id": "d1", "text": "t"}\n')
    process = _process(path)
    pid = process.pid
    assert process.result() is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped


def test_a_question_far_larger_than_a_pipe_goes_through(tmp_path):
    """A question is written whole while the child reads it (a pipe holds
    64 KiB): 200,000 ids each way, no deadlock."""
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "d1", "text": "t"}\n')
    process = _process(path)
    try:
        corpus, _ = process.result()
        big = {f"id-{i}" for i in range(200_000)}
        facts = corpus.facts(big, big)
        assert len(facts.suspects) == len(facts.unknown) == 200_000
    finally:
        process.close()


def test_a_parent_gone_mid_question_ends_the_child(tmp_path):
    """Half a question, then nothing: the child ends rather than guess."""
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "d1", "text": "t"}\n')
    process = _process(path)
    process.result()
    os.write(process.questions, b"\0" * 5)
    os.close(process.questions)
    process.open = False
    _, status = os.waitpid(process.pid, 0)
    process.pid = None
    process.close()
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("broken", ["pipe", "fork"])
def test_no_pipe_or_fork_reads_here_and_leaks_nothing(repo, monkeypatch, broken):
    def fail(*args):
        raise OSError("not here")

    corpus = str(repo / "corpus.jsonl")
    monkeypatch.setattr(child, "FORK_MIN_BYTES", 0)
    before = set(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, broken, fail)
    assert child.CorpusProcess.start(corpus, "corpus.jsonl", Limits()) is None
    monkeypatch.undo()
    assert set(os.listdir("/proc/self/fd")) == before


def test_after_the_child_gave_up_the_file_is_read_once_more_not_twice(repo, run_cli, monkeypatch):
    """A bad corpus costs the child's fast read and one exact read here."""
    calls = []
    real_fast = fast.read_corpus

    def counting(*args, **kwargs):
        calls.append(os.getpid())
        return real_fast(*args, **kwargs)

    lines = (repo / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    write(repo / "corpus.jsonl", "\n".join([*lines, lines[0]]) + "\n")
    monkeypatch.setattr(child, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(fast, "read_corpus", counting)
    code, *_ = run_cli()
    assert code == 2
    assert os.getpid() not in calls  # the fast reader ran in the child only


def test_cross_file_problems_answered_by_the_child_read_the_same(repo, both):
    """Unknown and stale labels, unknown ranked ids, a run line of another
    snapshot: found from the child's answers (Corpus.facts), worded and
    ordered as one process does it."""
    gold = (repo / "gold.yaml").read_text(encoding="utf-8")
    gold = gold.replace("      policy-007: 0", "      policy-007: 1\n      ghost-label: 2", 1)
    write(repo / "gold.yaml", gold)
    lines = (repo / "run.jsonl").read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"howto-003"', '"ghost-ranked"')
    lines[1] = lines[1].replace('"snapshot": "2026-11-30"', '"snapshot": "2025-01-01"')
    write(repo / "run.jsonl", "\n".join(lines) + "\n")
    serial, parallel = both()
    assert serial[0] == 2
    _same(serial, parallel)
    messages = " ".join(p["message"] for p in serial[3]["problems"])
    for part in ("unknown document id in the labels", "counts a stale document as relevant",
                 "unknown document id at position 2", "declares snapshot `2025-01-01`"):
        assert part in messages, part


def test_base_comparison_with_the_corpus_in_a_child(repo, both):
    """--base needs every id of both corpora (new unjudged documents): the
    child sends them over when asked."""
    import json
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()
    with open(repo / "corpus.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "faq-100", "text": "Deleted backups stay in the Trash for 30 days.",
                            "type": "faq", "status": "active", "snapshot": "2026-11-30"}) + "\n")
    lines = (repo / "run.jsonl").read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"howto-003"', '"faq-100"')
    write(repo / "run.jsonl", "\n".join(lines) + "\n")
    subprocess.run([*git, "commit", "-qam", "new doc"], cwd=repo, check=True)
    serial, parallel = both("--base", base, children=2)  # the head's corpus and the base's
    _same(serial, parallel)
    new = serial[3]["comparison"]["unjudged_new_docs"]
    assert any("faq-100" in e["doc_ids"] for e in new), new


def _trec_run(repo, unknown: str | None = None) -> None:
    """The repo's run as a TREC run (run.trec), ``unknown`` ranked first by its first question."""
    import json

    rows = []
    for line in (repo / "run.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        ranking = ([unknown] if unknown and not rows else []) + rec["ranking"]
        rows += [f"{rec['query_id']} Q0 {d} {i} {100 - i} t\n" for i, d in enumerate(ranking, 1)]
    write(repo / "run.trec", "".join(rows))
    config = (repo / ".rag-corpus-check.yml").read_text(encoding="utf-8")
    write(repo / ".rag-corpus-check.yml", config.replace("run: run.jsonl", "run: run.trec"))


def test_ranked_ids_of_a_trec_run_are_asked_of_the_child_as_ranked(repo, both, monkeypatch):
    """With a corpus child the fast TREC reader keeps the ranked ids as
    ranked, repeats and all (no set of them here): the child finds the
    unknown one as one process does."""
    from rag_corpus_check.inputs import fast_trec

    _trec_run(repo, unknown="ghost-ranked")
    asked, distinct = [], []
    real, real_read = child.CorpusProcess.post, fast_trec.read_run

    def post(self, kind, *args):
        asked.append((kind, args))
        real(self, kind, *args)

    monkeypatch.setattr(child.CorpusProcess, "post", post)
    monkeypatch.setattr(fast_trec, "read_run", lambda *a: distinct.append(a[-1]) or real_read(*a))
    serial, parallel = both()
    assert distinct == [True, False]  # each once in one process (a set, while in cache), as ranked with the child
    assert serial[0] == 2
    _same(serial, parallel)
    assert "unknown document id" in " ".join(p["message"] for p in serial[3]["problems"])
    ranked = next(args[1] for kind, args in asked if kind == "facts")
    assert isinstance(ranked, list) and len(ranked) > len(set(ranked))  # as ranked: ids repeat across questions


@pytest.mark.parametrize("base", [False, True])
def test_the_means_uncertainty_is_taken_while_the_child_reads(repo, both, monkeypatch, base):
    """The bootstrap intervals and the label debt need no corpus: with a
    child they are taken before the check waits for it, once, and are the
    same; a base measured for comparison takes none."""
    import subprocess

    from rag_corpus_check.pipeline import stages, uncertainty

    _trec_run(repo)
    calls = {"ahead": 0, "at the gate": 0}
    real = uncertainty.head_uncertainty

    def counted(where):
        def call(*args):
            calls[where] += 1
            return real(*args)
        return call

    monkeypatch.setattr(stages, "head_uncertainty", counted("ahead"))
    monkeypatch.setattr(uncertainty, "head_uncertainty", counted("at the gate"))
    argv = []
    if base:
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
        subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
        subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
        argv = ["--base", "HEAD"]
    serial, parallel = both(*argv, children=2 if base else 1)
    assert serial[0] == 0 and serial[3]["label_debt"]["means"]
    _same(serial, parallel)
    assert calls == {"ahead": 1, "at the gate": 1}  # with the child (for the head only), and without


def test_uncertainty_taken_ahead_of_another_evaluation_is_not_used(tmp_path):
    """Taken ahead of an evaluation that did not stand (a chunked corpus is
    evaluated again per document), the intervals and bounds are taken anew."""
    from rag_corpus_check.config.load import load_config
    from rag_corpus_check.inputs.records import Gold, GoldQuery, Run, RunQuery
    from rag_corpus_check.metrics.evaluate import evaluate
    from rag_corpus_check.pipeline.outcome import Outcome
    from rag_corpus_check.pipeline.uncertainty import add_uncertainty, head_uncertainty

    write(tmp_path / "c.yml", "version: 1\ncorpus: c.jsonl\ngold: g.jsonl\nrun: r.jsonl\nk: 2\n")
    problems = Problems()
    cfg, _ = load_config(str(tmp_path), str(tmp_path / "c.yml"), problems)
    assert cfg is not None, [p.message for p in problems.items]
    gold = Gold("g", "jsonl", {"q": GoldQuery("q", 1, {"a": 2}, {})})
    run = Run("r", "jsonl", {"q": RunQuery("q", 1, ["x", "a"])})
    first = evaluate(gold.grades(), run.rankings(), cfg.measures(), cfg.options())
    out = Outcome(Problems(), gold=gold, run=run, evaluation=first)
    out.uncertainty_ahead = ahead = head_uncertainty(cfg, gold, run, first)
    add_uncertainty(cfg, out)
    assert out.debt is ahead.debt  # the same evaluation: used
    run.queries["q"].ranking = ["a"]
    out.evaluation = evaluate(gold.grades(), run.rankings(), cfg.measures(), cfg.options())
    add_uncertainty(cfg, out)
    assert out.debt is not ahead.debt and out.debt.to_json() != ahead.debt.to_json()


def test_lines_of_a_few_documents_without_the_table(tmp_path):
    """The fast reader keeps no line table (document i is on line i + 1);
    lines_of finds a few lines in one pass and agrees with the table."""
    path = tmp_path / "c.jsonl"
    path.write_text("".join(f'{{"id": "d{i}", "text": "t"}}\n' for i in range(1000)))
    corpus = fast.read_corpus(str(path), "c.jsonl", Limits(), Sha256())
    few = {"d0", "d17", "d999"}
    assert corpus.lines_of(few) == {"d0": 1, "d17": 18, "d999": 1000}
    assert corpus.lines is None  # no table was built for that
    many = {f"d{i}" for i in range(0, 1000, 3)}
    assert corpus.lines_of(many) == {d: int(d[1:]) + 1 for d in many}
    assert corpus.lines is not None


def test_odd_ids_found_by_the_child_read_the_same(repo, both):
    """Invisible and look-alike ids: the child finds them (with their lines)."""
    import json

    with open(repo / "corpus.jsonl", "a", encoding="utf-8") as f:
        for doc_id in ("f\u0430q-001", "faq\u3164"):
            f.write(json.dumps({"id": doc_id, "text": "x", "snapshot": "2026-11-30"}) + "\n")
    serial, parallel = both()
    _same(serial, parallel)
    odd = [p for p in serial[3]["problems"] if p["message"].startswith("document id")]
    assert [(p["line"], "looks like" in p["message"]) for p in odd] == [(31, True), (32, False)]


def _count_writes(monkeypatch):
    """How many question frames this process writes to a child."""
    writes = []
    real = child._write

    def counted(fd, value):
        if isinstance(value, tuple) and os.getpid() == parent:  # a question (the child writes answers)
            import threading
            writes.append(value[0] if threading.current_thread() is threading.main_thread() else "ahead")
        return real(fd, value)

    parent = os.getpid()

    monkeypatch.setattr(child, "_write", counted)
    return writes


def test_a_question_asked_ahead_is_answered_once_and_equally(tmp_path, monkeypatch):
    """post(): a question larger than a pipe, written while the child still
    reads; the later ask with equal arguments reads that answer (one frame
    sent), and it is the answer a fresh question gets."""
    path = tmp_path / "c.jsonl"
    path.write_text("".join(f'{{"id": "d{i}", "text": "t", "status": "stale"}}\n' for i in range(300)))
    labelled, ranked = {f"id-{i}" for i in range(200_000)} | {"d1"}, {"d2", "y"}
    writes = _count_writes(monkeypatch)
    process = _process(path)
    try:
        process.post("facts", labelled, ranked)
        corpus, _ = process.result()
        ahead = corpus.facts(set(labelled), set(ranked))  # equal, not the same objects
        assert writes == ["ahead"]  # written by post()'s thread, not asked again
        assert ahead == corpus.facts(labelled, ranked) and len(ahead.suspects) == 200_001
        assert writes == ["ahead", "facts"]
    finally:
        process.close()


def test_a_question_asked_ahead_but_not_asked_is_dropped(tmp_path, monkeypatch):
    """A shard asks about fewer ids than were posted: the posted answer is
    read and dropped, the question asked anew, the answer its own."""
    path = tmp_path / "c.jsonl"
    path.write_text("".join(f'{{"id": "d{i}", "text": "t"}}\n' for i in range(300)))
    process = _process(path)
    try:
        process.post("facts", {"d1", "x"}, {"y"})
        corpus, _ = process.result()
        facts = corpus.facts({"z"}, {"d2"})
        assert facts.suspects == {"z": None} and facts.unknown == set()
        assert corpus.ids() == {f"d{i}" for i in range(300)}
    finally:
        process.close()


def test_two_questions_asked_ahead_are_answered_in_order(tmp_path, monkeypatch):
    """The cross-check's question and the by-type table's, both posted (each
    larger than a pipe, so the second writer must wait for the first): asked
    in that order, each is answered from what was posted, and equally."""
    path = tmp_path / "c.jsonl"
    path.write_text("".join(f'{{"id": "d{i}", "text": "t", "type": "{"faq" if i % 2 else "howto"}"}}\n'
                            for i in range(300)))
    labelled, ranked = {f"id-{i}" for i in range(100_000)} | {"d1"}, {"d2", "y"}
    irrelevant = [f"d{i % 300}" for i in range(100_000)] + ["ghost"]
    unjudged = [i % 3 == 0 for i in range(len(irrelevant))]
    writes = _count_writes(monkeypatch)
    process = _process(path)
    try:
        process.post("facts", labelled, ranked)
        process.post_types(irrelevant, unjudged)
        corpus, _ = process.result()
        facts = corpus.facts(set(labelled), set(ranked))
        types = corpus.type_counts(list(irrelevant), list(unjudged))
        assert writes == ["ahead", "ahead"]  # nothing asked again
        assert facts == corpus.facts(labelled, ranked) and types == corpus.type_counts(irrelevant, unjudged)
        assert types[0] == {"faq": 50_000, "howto": 50_000, "(no type)": 1}
    finally:
        process.close()


def test_a_later_question_asked_first_drops_the_earlier_answer(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("".join(f'{{"id": "d{i}", "text": "t", "type": "faq"}}\n' for i in range(300)))
    process = _process(path)
    try:
        process.post("facts", {"d1", "x"}, {"y"})
        process.post_types(["d1", "d2"], [True, False])
        corpus, _ = process.result()
        assert corpus.type_counts(["d1", "d2"], [True, False]) == ({"faq": 2}, {"faq": 1})
        assert corpus.facts({"x"}, {"y"}).suspects == {"x": None}  # asked anew
    finally:
        process.close()


def test_closing_with_a_question_still_being_written_ends_everything(tmp_path):
    """The parent fails while its posted question fills the pipe: close()
    ends the child, the writer thread ends, nothing is left."""
    import threading

    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "d1", "text": "t"}\n')
    process = _process(path)
    pid = process.pid
    process.post("facts", {f"id-{i}" for i in range(500_000)}, set())
    process.close()
    assert threading.active_count() == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


# ---------------------------------------------------------------- when a child pays


@pytest.mark.parametrize("load,runnable,setting,forked", [
    (0.1, 0, "auto", True),  # quiet
    (1.6, 0, "auto", True),  # this check's own earlier runs, in the average only
    (0.2, 3, "auto", True),  # a burst right now
    (1.1, 1, "auto", False),  # another process keeps a core busy: the child could not overlap
    (3.0, 5, "auto", False),
    (1.1, 1, "1", True),  # turned on whatever the load
    (0.1, 0, "0", False),
])
def test_a_child_only_when_a_cpu_is_free_for_it(repo, monkeypatch, load, runnable, setting, forked):
    monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", setting)
    monkeypatch.setattr(child, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(child, "_runnable_others", lambda: runnable)
    assert child.can_fork(str(repo / "corpus.jsonl")) is forked


def test_a_process_that_keeps_a_core_busy_is_counted(tmp_path):
    """/proc/loadavg's runnable threads, read for real: a process spinning
    on a core is one of them (the machine's other processes only add)."""
    import subprocess
    import sys

    flag = tmp_path / "spinning"
    spin = subprocess.Popen([sys.executable, "-c", f"open({str(flag)!r}, 'w').close()\nwhile True: pass"])
    try:
        while not flag.exists():
            os.sched_yield()
        with open(f"/proc/{spin.pid}/stat") as f:
            assert f.read().rsplit(")", 1)[1].split()[0] == "R"  # runnable: running or waiting for a CPU
        assert child._runnable_others() >= 1
    finally:
        spin.kill()
        spin.wait()


def test_a_blank_document_is_a_warning_of_the_fast_reader_not_a_second_read(repo, run_cli, monkeypatch):
    """A corpus with blank texts is read once, by the fast reader (in the
    child or here), which notes each blank document; the warnings are the
    exact reader's, line for line."""
    from rag_corpus_check.inputs import corpus as exact_corpus

    exact_calls = []
    real = exact_corpus.read_corpus
    monkeypatch.setattr(exact_corpus, "read_corpus", lambda *a, **k: exact_calls.append(a[0]) or real(*a, **k))
    with open(repo / "corpus.jsonl", "a", encoding="utf-8") as f:
        f.write('{"id": "empty-1", "text": "  "}\n{"id": "titled", "title": "A title", "text": ""}\n'
                '{"id": "empty-2", "title": " ", "text": "\\n"}\n')
    monkeypatch.setattr(child, "FORK_MIN_BYTES", 0)
    results = {}
    for setting in ("1", "0"):  # in a child, then here
        monkeypatch.setenv("RAG_CORPUS_CHECK_PARALLEL", setting)
        code, _, _, res, _ = run_cli()
        assert code == 0 and exact_calls == []
        results[setting] = [(p["id"], p["line"]) for p in res["problems"] if "no text and no title" in p["message"]]
    assert results["1"] == results["0"] == [("empty-1", 31), ("empty-2", 33)]
    fast_corpus = fast.read_corpus(str(repo / "corpus.jsonl"), "corpus.jsonl", Limits())
    exact = real(str(repo / "corpus.jsonl"), "corpus.jsonl", Limits(), Problems())
    assert fast_corpus.blank == exact.blank == [("empty-1", 31), ("empty-2", 33)]
