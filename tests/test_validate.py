"""cross_check (validate.py) against a plain reference: every label and every
ranked id looked at one by one, in file order, with no shortcut.

cross_check first looks at everything at once (in C) and walks questions only
where that found something; its problems must be the reference's, message for
message and in the same order."""

import random

import pytest

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs import Corpus, Gold, GoldQuery, Run, RunQuery
from rag_corpus_check.inputs.cross_file import (
    check_snapshot,
    corpus_snapshot,
    cross_check,
    scale_hint,
)


def reference(cfg, corpus, gold, run, problems):
    label = corpus_snapshot(cfg, corpus, problems)
    fp = corpus.fingerprint
    check_snapshot(gold.snapshot, label, fp, gold.file, gold.snapshot_line, "the gold set", problems)
    inactive_sev = P.ERROR if cfg.inactive_labels == "error" else P.WARNING
    outside = []
    for q in gold.queries.values():
        check_snapshot(q.snapshot, label, fp, gold.file, q.line, "the gold set", problems, q.query_id)
        for doc_id, grade in q.relevant.items():
            line = q.label_lines.get(doc_id) or q.line
            if grade > cfg.max_grade or grade < 0:
                outside.append((line, grade, doc_id))
            doc = corpus.docs.get(doc_id)
            if doc is None:
                problems.add(P.CONSISTENCY, f"unknown document id in the labels of question "
                             f"`{safe_text(q.query_id, 60)}` (not in {corpus.file}) — remove the label or add the "
                             "document", file=gold.file, line=line, id=doc_id)
            elif doc.status != "active" and grade >= cfg.min_grade:
                problems.add(P.CONSISTENCY, f"question `{safe_text(q.query_id, 60)}` counts a {doc.status} "
                             f"document as relevant ({corpus.file}:{corpus.line(doc_id)}); {doc.status} documents "
                             "should not be served — relabel it, or set validation.inactive_labels",
                             file=gold.file, line=line, id=doc_id, severity=inactive_sev)
    if outside:  # one problem for all of them, at the first
        line, _, doc_id = min(outside)
        seen = sorted({g for _, g, _ in outside})
        problems.add(P.SCHEMA, f"{len(outside)} labels have grades outside the declared scale 0–{cfg.max_grade} "
                     f"(grades seen: {', '.join(map(str, seen))}; the first is here) — "
                     f"{scale_hint(seen, cfg.max_grade)} in {cfg.path_display}",
                     file=gold.file, line=line, id=doc_id)
    for rq in run.queries.values():
        check_snapshot(rq.snapshot, label, fp, run.file, rq.line, "the run", problems, rq.query_id)
        for pos, doc_id in enumerate(rq.ranking, 1):
            if doc_id not in corpus.docs:
                problems.add(P.CONSISTENCY, f"unknown document id at position {pos} of question "
                             f"`{safe_text(rq.query_id, 60)}` (not in {corpus.file}); the run was made against "
                             "another corpus — regenerate the run", file=run.file, line=rq.line, id=doc_id)
    for qid, q in gold.queries.items():
        if qid not in run.queries:
            problems.add(P.CONSISTENCY, f"question is in the gold set but not in {run.file}; it is scored as an "
                         "empty ranking (0) — add it to the run", file=gold.file, line=q.line, id=qid,
                         severity=P.ERROR if cfg.missing_queries == "error" else P.WARNING)
    for qid, rq in run.queries.items():
        if qid not in gold.queries:
            problems.add(P.CONSISTENCY, f"question is in the run but not in {gold.file}; it cannot be scored and "
                         "is left out — label it or remove it from the run", file=run.file, line=rq.line, id=qid,
                         severity=P.ERROR if cfg.extra_queries == "error" else P.WARNING)


def _scenario(rng):
    cfg = Config(path_display="c.yml", base_dir=".", corpus="corpus.jsonl", gold="gold.jsonl", run="run.jsonl",
                 k=5, min_grade=rng.choice([1, 2]), max_grade=rng.choice([2, 3]),
                 snapshot=rng.choice([None, None, "s1"]),
                 inactive_labels=rng.choice(["warning", "error"]), missing_queries=rng.choice(["warning", "error"]),
                 extra_queries=rng.choice(["warning", "error"]))
    clean = rng.random() < 0.3  # nothing to report, most likely
    corpus = Corpus(file="corpus.jsonl")
    for i in range(30 if clean else rng.randrange(0, 30)):
        status = "active" if clean else rng.choice(["active"] * 6 + ["stale", "restricted"])
        corpus.docs[f"d{i}"] = corpus.doc(rng.choice([None, "faq"]), status, None)
        corpus.lines[f"d{i}"] = i + 1
        if status != "active":
            corpus.inactive.add(f"d{i}")
    corpus.fingerprint = "sha256:0123456789abcdef"
    if rng.random() < 0.2 and not clean:
        corpus.snapshots = rng.choice([{"s1": 3}, {"s2": 3}, {"s1": 2, "s2": 1}])
    ids = [f"d{i}" for i in range(30 if clean else 35)]  # d30 and up are never in the corpus
    snaps = [None] if clean else [None] * 12 + ["s1", "s2", corpus.fingerprint]
    gold = Gold(file="gold.jsonl", snapshot=rng.choice(snaps), snapshot_line=1)
    run = Run(file="run.jsonl", format="jsonl")
    for i in range(rng.randrange(0, 25)):
        rel = {d: rng.choice([0, 1, 2, 2, 3, 4] if rng.random() < 0.2 and not clean else [0, 1, 2])
               for d in rng.sample(ids, rng.randrange(0, 6))}
        gold.queries[f"q{i}"] = GoldQuery(f"q{i}", i + 2, rel, {d: i + 2 for d in rel if rng.random() < 0.5},
                                          None, rng.choice(snaps))
    for i in range(len(gold.queries) if clean else rng.randrange(0, 25)):
        pool = ids if rng.random() < 0.2 else ids[:30]
        run.queries[f"q{i}"] = RunQuery(f"q{i}", i + 1, rng.sample(pool, rng.randrange(0, 8)), rng.choice(snaps))
    if rng.random() < 0.5:
        run.ranked = set().union(*(rq.ranking for rq in run.queries.values()))
    return cfg, corpus, gold, run


KINDS = ["outside the declared scale", "unknown document id in the labels", "document as relevant",
         "unknown document id at position", "the gold set declares snapshot", "the run declares snapshot",
         "is in the gold set but not", "is in the run but not", "the config declares snapshot",
         "declare different snapshots"]


def _found(fn, scenario):
    problems = P.Problems()
    fn(*scenario, problems)
    return [(p.kind, p.message, p.file, p.line, p.id, p.severity) for p in problems.items]


def test_cross_check_reports_what_the_plain_walk_reports():
    rng = random.Random(11)
    kinds = set()
    clean = 0
    for _ in range(3000):
        scenario = _scenario(rng)
        got = _found(cross_check, scenario)
        assert got == _found(reference, scenario)
        kinds.update(k for _, m, *_ in got for k in KINDS if k in m)
        clean += not got
    # Every kind of message came up, and clean inputs too.
    assert kinds == set(KINDS) and clean > 300, (kinds, clean)


# ---------------------------------------------------------------- ids that look like others (issue 13, item 8)


def test_invisible_and_lookalike_ids_are_warned_and_shown_escaped(tmp_path, capsys, monkeypatch):
    import json
    import shutil

    from conftest import EXAMPLE
    from rag_corpus_check.commands.cli import main

    repo = tmp_path / "kb"
    shutil.copytree(EXAMPLE, repo)
    monkeypatch.chdir(repo)
    docs = [("d\u043ec-x", "faq-001 in Cyrillic letters"), ("faq\u3164", "a Hangul filler"),
            ("\u2800", "a blank Braille pattern"), ("pol\u034ficy", "a grapheme joiner"),
            ("faq\ufe0f-002", "a variation selector")]
    with open(repo / "corpus.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "doc-x", "text": "plain"}) + "\n")
        for doc_id, text in docs:
            f.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    code = main(["--output", str(tmp_path / "r.json"), "--summary-file", str(tmp_path / "s.md")])
    out = capsys.readouterr().out
    assert code == 0, out
    warned = [p for p in json.loads((tmp_path / "r.json").read_text())["problems"]
              if p["message"].startswith("document id")]
    assert len(warned) == 6, warned  # the variation selector's twice: invisible, and like faq-002
    assert "looks like `doc-x` (`d\\u043ec-x`)" in warned[0]["message"]
    assert "looks like `faq-002` (`faq\\ufe0f-002`)" in warned[5]["message"]
    for p in warned[1:5]:
        assert "invisible or blank characters" in p["message"]
    for p in warned:
        assert not any(ord(c) in (0x3164, 0x2800, 0x34F, 0xFE0F) for c in p["id"] + p["message"])
    assert "\u3164" not in out and "\u2800" not in out


@pytest.mark.parametrize(("odd", "like"), [
    ("p\u0585licy-001", "policy-001"),  # Armenian o
    ("faq\u2010001", "faq-001"),  # Unicode hyphen
    ("faq\u2212001", "faq-001"),  # minus sign
    ("h\u0578w-to", "hnw-to"),  # Armenian n (drawn like n)
])
def test_lookalikes_of_other_scripts_and_dashes(odd, like):
    from rag_corpus_check.core.text import odd_ids

    found = odd_ids([odd], {odd, like})
    assert len(found) == 1 and found[0][0] == odd and f"looks like `{like}`" in found[0][1], found
