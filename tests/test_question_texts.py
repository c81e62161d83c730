"""Question texts as data: two gold questions asking the same thing (equal
after NFKC, casefold and collapsed whitespace) are an input error naming both
places; corpus text that contains a gold question is a warning naming the
record and the question, never the text (:mod:`question_texts`)."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import check, write
from rag_corpus_check.commands.check import run_check
from rag_corpus_check.core import problems as P
from rag_corpus_check.inputs import Corpus, Gold, GoldQuery
from rag_corpus_check.inputs.question_texts import (
    SHOWN,
    WORK_BASE,
    WORK_PER_TOKEN,
    LeakScan,
    normal,
)
from rag_corpus_check.pipeline.context import Context
from rag_corpus_check.retrieval.analyzer import Analyzer
from support.repos import edit

CONFIG = ".rag-corpus-check.yml"
Q02 = "What is the largest file I can upload?"


def _check(kb, config=CONFIG):
    return run_check(str(kb), str(kb / config), Context())


def _errors(out):
    return [p for p in out.problems.items if p.severity == P.ERROR]


def _line(path, text):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _add_question(path, qid, text, relevant="{faq-002: 2}"):
    with path.open("a", encoding="utf-8") as f:
        f.write(f'\n  - query_id: {qid}\n    query: "{text}"\n    relevant: {relevant}\n')


# ---------------------------------------------------------------- duplicate question texts

def test_two_questions_with_one_text_are_an_input_error_naming_both(kb, tmp_path, capsys):
    _add_question(kb / "gold.yaml", "q99", "  what IS the largest\\tfile  I can ＵＰＬＯＡＤ? ")
    code, out, results, _ = check(tmp_path, capsys)
    assert code == 2 and "Traceback" not in out
    [p] = [p for p in results["problems"] if p["severity"] == "error"]
    first, second = _line(kb / "gold.yaml", "query_id: q02"), _line(kb / "gold.yaml", "query_id: q99")
    assert (p["file"], p["line"], p["id"]) == ("gold.yaml", second, "q99")
    assert f"`q02` (gold.yaml:{first})" in p["message"]
    assert "largest" not in p["message"]  # the text is not repeated
    assert f"gold.yaml:{second} [q99]" in out


def test_the_same_text_in_two_files_of_a_gold_list(kb):
    write(kb / "more.yaml", f'queries:\n  - query_id: q77\n    query: "{Q02.upper()}"\n    relevant: {{faq-002: 2}}\n')
    edit(kb / CONFIG, "gold: gold.yaml", "gold: [gold.yaml, more.yaml]")
    [p] = _errors(_check(kb))
    assert (p.file, p.line, p.id) == ("more.yaml", 2, "q77")
    assert f"`q02` (gold.yaml:{_line(kb / 'gold.yaml', 'query_id: q02')})" in p.message


def test_different_texts_and_questions_without_text_pass(kb):
    _add_question(kb / "gold.yaml", "q99", Q02.replace("?", "!"))  # punctuation differs: another text
    assert not _errors(_check(kb))
    write(kb / "gold.qrels", "a 0 faq-001 1\nb 0 faq-002 1\nc 0 faq-003 1\n")  # TREC qrels: no texts
    write(kb / "run.jsonl", "".join(f'{{"query_id": "{q}", "ranking": ["faq-001"]}}\n' for q in "abc"))
    edit(kb / "committed-run.rag-corpus-check.yml", "gold: gold.yaml", "gold: gold.qrels")
    out = _check(kb, "committed-run.rag-corpus-check.yml")
    assert not _errors(out), _errors(out)


# ---------------------------------------------------------------- questions in the corpus

Q01 = "How long are deleted backups kept?"


def _append_records(path, *records):
    with path.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    return len(path.read_text().splitlines())


def _judge(kb, *doc_ids):
    """Label ``doc_ids`` (grade 0) on q01: only records a gold question judges are looked in."""
    labels = "".join(f"      {d}: 0\n" for d in doc_ids)
    edit(kb / "gold.yaml", "      howto-003: 0\n", "      howto-003: 0\n" + labels)


def _leaks(results):
    return [p for p in results["problems"] if "words of gold question" in p["message"]
            or "contain the words of a gold question" in p["message"]]


def test_a_chunk_borrowing_a_label_with_the_question_is_warned_under_bm25(kb, tmp_path, capsys):
    """The attack: a chunk of a relevant document whose text is the question."""
    line = _append_records(kb / "corpus.jsonl", {"id": "policy-002#q0", "doc_id": "policy-002", "text": Q01})
    code, out, results, summary = check(tmp_path, capsys)
    [p] = _leaks(results)
    assert (p["severity"], p["file"], p["line"], p["id"]) == ("warning", "corpus.jsonl", line, "policy-002#q0")
    assert "`q01`" in p["message"]
    assert code in (0, 1) and results["verdict"] in ("pass", "fail")  # a warning, not an input error
    assert "deleted backups kept" not in out + summary + json.dumps(results["problems"])


def test_a_record_quoting_a_question_is_warned_with_a_committed_run(kb, tmp_path, capsys):
    text = "Our FAQ answers it:  HOW long are deleted\nbackups kept — for 30 days in the Trash."
    line = _append_records(kb / "corpus.jsonl", {"id": "faq-099", "text": text})
    _judge(kb, "faq-099")
    code, out, results, _ = check(tmp_path, capsys, config="committed-run.rag-corpus-check.yml")
    [p] = _leaks(results)
    assert (p["file"], p["line"], p["id"]) == ("corpus.jsonl", line, "faq-099") and "`q01`" in p["message"]


def test_a_record_is_looked_in_for_the_few_questions_that_judge_it(kb, tmp_path, capsys):
    """q01 judges faq-099, q02 does not: only q01 is looked for in it."""
    _append_records(kb / "corpus.jsonl", {"id": "faq-099", "text": f"{Q01} {Q02}"})
    _judge(kb, "faq-099")
    _, _, results, _ = check(tmp_path, capsys, config="committed-run.rag-corpus-check.yml")
    assert [(p["id"], "`q01`" in p["message"]) for p in _leaks(results)] == [("faq-099", True)]


def test_a_record_no_question_judges_is_not_looked_in(kb, tmp_path, capsys):
    """It cannot raise a measure (an unjudged document counts as not
    relevant), and looking in every record would cost a tokenisation of the
    whole corpus (3x the 100k check's time)."""
    _append_records(kb / "corpus.jsonl", {"id": "faq-099", "text": f"Q: {Q01} A: 30 days."})
    _, _, results, _ = check(tmp_path, capsys, config="committed-run.rag-corpus-check.yml")
    assert _leaks(results) == []


def test_short_questions_and_partial_copies_are_not_warned(kb, tmp_path, capsys):
    _add_question(kb / "gold.yaml", "q98", "Backups kept?", "{policy-002: 2}")  # 2 tokens: not looked for
    _append_records(kb / "corpus.jsonl", {"id": "x-1", "text": "How long are deleted backups? Backups kept?"},
                    {"id": "x-2", "text": "how long are deleted files kept"})
    _, _, results, _ = check(tmp_path, capsys, config="committed-run.rag-corpus-check.yml")
    assert _leaks(results) == []


def test_at_most_twenty_are_listed_then_a_count(kb, tmp_path, capsys):
    _append_records(kb / "corpus.jsonl", *({"id": f"copy-{i:02}", "text": f"{i}: {Q01}"} for i in range(25)))
    _judge(kb, *(f"copy-{i:02}" for i in range(25)))
    _, _, results, _ = check(tmp_path, capsys, config="committed-run.rag-corpus-check.yml")
    leaks = _leaks(results)
    assert [p["id"] for p in leaks[:SHOWN]] == [f"copy-{i:02}" for i in range(SHOWN)]
    assert len(leaks) == SHOWN + 1 and "and 5 more records" in leaks[-1]["message"]


def _judging(gold, *doc_ids):
    """Every question judges ``doc_ids`` (grade 0): only judged records are looked in."""
    for q in gold.queries.values():
        q.relevant.update(dict.fromkeys(doc_ids, 0))
    return gold


def test_the_work_is_bounded_on_a_crafted_corpus():
    """One word everywhere and long questions made of it: the trie steps
    stop at the bound, a multiple of the record's tokens; the records after
    it are still looked at."""
    gold = Gold(file="g.yaml")
    for i in range(1, 200):
        gold.queries[f"q{i}"] = GoldQuery(f"q{i}", i, {}, {}, text="zzzz " * (1000 - i) + "b")
    gold.queries["leak"] = GoldQuery("leak", 300, {}, {}, text="how long are backups kept")
    scan = LeakScan.of(_judging(gold, "big0", "big1", "big2", "copy"))
    tokens = 100_000
    for i in range(3):
        scan.record(f"big{i}", {"text": "zzzz " * tokens}, i + 1)
    assert scan.work <= 3 * (WORK_PER_TOKEN * tokens + WORK_BASE)
    scan.record("copy", {"text": "Q: how long are backups kept? A: 30 days"}, 4)
    assert scan.stopped == ("big0", 1) and scan.skipped == 3 and scan.found == [("copy", 4, "leak")]
    problems = P.Problems()
    scan.report(Corpus(file="c.jsonl"), problems)
    leak, passed_over = problems.items
    assert (leak.line, leak.id) == (4, "copy")
    assert (passed_over.line, passed_over.id, passed_over.severity) == (1, "big0", P.WARNING)
    assert "only part of this record (and 2 more records)" in passed_over.message


def test_one_anchor_at_a_thousand_offsets_is_bounded_too():
    gold = Gold(file="g.yaml")
    for i in range(1000):
        gold.queries[f"q{i}"] = GoldQuery(f"q{i}", i + 1, {}, {}, text="aa " * i + "zzzzzz bb")  # words of two letters: one is not a word
    scan = LeakScan.of(_judging(gold, "d"))
    scan.record("d", {"text": "zzzzzz " * 10_000}, 1)
    assert scan.work <= WORK_PER_TOKEN * 10_000 + WORK_BASE and scan.skipped == 1


def test_benign_work_is_a_few_steps_per_token():
    gold = Gold(file="g.yaml")
    for i in range(2000):
        gold.queries[f"q{i}"] = GoldQuery(f"q{i}", i + 1, {}, {}, text=f"how do I configure setting{i} for backups")
    scan = LeakScan.of(_judging(gold, "d", "e"))
    text = " ".join(f"how do I configure setting{i} for the backups" for i in range(500))
    scan.record("d", {"text": text}, 1)
    assert scan.count == 0 and scan.stopped is None
    assert scan.work <= 2 * scan.tokens  # every position a near miss, here
    scan.record("e", {"title": "How do I configure setting7 for backups?", "text": "See below."}, 2)
    assert scan.found == [("e", 2, "q7")]


def test_the_normal_form():
    assert normal("  Ｗhat\u00a0IS\tthe\n file? ") == "what is the file?"
    assert normal("Straße") == normal("STRASSE")


def test_a_text_repeated_through_aliases_is_normalised_and_tokenised_once(monkeypatch):
    from rag_corpus_check.inputs import question_texts

    text = "why " * 50_000  # YAML aliases give every question this one object
    gold = Gold(file="g.yaml", queries={f"q{i}": GoldQuery(f"q{i}", i + 1, {}, {}, text=text) for i in range(2000)})
    from rag_corpus_check.retrieval import analyzer

    calls = []
    for module, name in ((question_texts, "normal"), (analyzer, "words")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda t, real=real: calls.append(len(t)) or real(t))
    problems = P.Problems()
    question_texts.duplicate_questions(gold, problems)
    assert LeakScan.of(gold) is not None
    assert calls == [len(text), len(text)] and problems.error_count() == 1999


_WORDS = st.sampled_from(["Backups", "kept", "how", "long", "are", "X", "30", "days", "café", "ß", "保存", "e_mail"])
_GAPS = st.sampled_from([" ", "  ", "-", "?", "\n", "'s ", ", "])


@st.composite
def _texts(draw, most=12):
    words = draw(st.lists(_WORDS, max_size=most))
    return "".join(w + draw(_GAPS) for w in words)


@settings(max_examples=300, deadline=None)
@given(questions=st.lists(_texts(6), min_size=1, max_size=4), title=st.none() | _texts(4), text=_texts(30),
       stemmer=st.sampled_from([None, "english"]))
def test_looking_only_where_an_anchor_occurs_finds_what_tokenising_every_judged_record_finds(
        questions, title, text, stemmer):
    """The few-questions path skips an ASCII record whose lower-cased text
    lacks every judging question's anchor; found and counted as if every
    judged record were tokenised."""
    gold = Gold(file="g.yaml", queries={f"q{i}": GoldQuery(f"q{i}", i + 1, {"d": 1}, {}, text=t)
                                        for i, t in enumerate(questions)})
    analyzer = Analyzer(stemmer=stemmer)
    rec = {"id": "d", "text": text} | ({"title": title} if title is not None else {})
    fast, plain = LeakScan.of(gold, analyzer), LeakScan.of(gold, analyzer)
    if fast is None:
        return
    plain.plain = False  # every judged record tokenised
    fast.record("d", rec, 1)
    plain.record("d", rec, 1)
    assert (fast.found, fast.count) == (plain.found, plain.count)
