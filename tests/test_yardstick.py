"""A pull request cannot move its own yardstick: with a base, the head's
ranking is judged by the base's gold set too, `max_drop` compares the same
questions on both sides, and the per-question rule catches a large drop of a
few questions that a mean over many would hide. Each test plays the attack on
a real throw-away git repository (base commit, head commit, `--base`).
"""

from __future__ import annotations

import json

import yaml

from conftest import check
from support.repos import commit

CONFIG = ".rag-corpus-check.yml"
STALE = ("policy-002", "faq-002", "howto-001", "faq-003")  # relevant documents the attacks withdraw


def configure(kb, **extra) -> None:
    """The example's config with an nDCG@5 max_drop of 0.02 and a low
    minimum (only the comparison can fail), plus ``extra`` top-level keys."""
    cfg = yaml.safe_load((kb / CONFIG).read_text())
    cfg["thresholds"] = {"nDCG@5": {"min": 0.3, "max_drop": 0.02}}
    cfg.update(extra)
    (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))


def stale(kb, *doc_ids: str) -> None:
    path = kb / "corpus.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**r, "status": "stale"} if r["id"] in doc_ids else r) + "\n" for r in rows))


def gold(kb) -> dict:
    return yaml.safe_load((kb / "gold.yaml").read_text())


def write_gold(kb, doc: dict) -> None:
    (kb / "gold.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))


def per_question(results, qid: str) -> float:
    return next(q for q in results["queries"] if q["query_id"] == qid)["values"]["nDCG@5"]


def perfect_questions(tmp_path, capsys) -> list[str]:
    code, text, results, _ = check(tmp_path, capsys)
    assert code == 0, text
    return [q["query_id"] for q in results["queries"] if q["status"] == "ok" and per_question(results, q["query_id"]) == 1.0]


def copies(questions: list[dict], ids: list[str], n: int) -> list[dict]:
    """``n`` new questions copied from ``ids``, each under a new id, its text
    made distinct by a word no document has (BM25 ranks them as the originals)."""
    by_id = {q["query_id"]: q for q in questions}
    return [{**by_id[ids[i % len(ids)]], "query_id": f"easy-{i:03d}",
             "query": f"{by_id[ids[i % len(ids)]]['query']} zzq{i}"} for i in range(n)]


def reasons(text: str) -> str:
    return text.split("the gate failed because:", 1)[-1]


def test_the_regression_alone_fails(kb, tmp_path, capsys):
    configure(kb)
    base = commit(kb, "base")
    stale(kb, *STALE)
    commit(kb, "withdraw four relevant documents")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1 and results["rules_source"] == "base", text
    assert "more than max_drop 0.02" in reasons(text), text


def test_copies_of_perfect_questions_do_not_dilute_a_regression(kb, tmp_path, capsys):
    """Seen: the same PR plus 40 copies of already-perfect questions under new
    ids passed (each side's mean over its own questions)."""
    configure(kb)
    perfect = perfect_questions(tmp_path, capsys)
    assert perfect, "the example has perfect questions to copy"
    base = commit(kb, "base")
    stale(kb, *STALE)
    doc = gold(kb)
    doc["queries"] += copies(doc["queries"], perfect, 40)
    write_gold(kb, doc)
    commit(kb, "withdraw four relevant documents, add 40 easy questions")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 1 and results["rules_source"] == "base", text
    why = reasons(text)
    assert "on the base's gold set" in why and "more than max_drop 0.02" in why, text
    views = {v["gold"]: v for v in results["comparison"]["views"]}
    assert set(views) == {"head", "base"}
    ok_at_base = [q for q in gold_ids_at(kb, base) if q != "q15"]  # q15 has no relevant document
    assert views["base"]["paired_questions"] == len(ok_at_base)
    assert "judged by the base's gold set" in summary.lower(), summary


def gold_ids_at(kb, rev: str) -> list[str]:
    from support.repos import git

    return [q["query_id"] for q in yaml.safe_load(git(kb, "show", f"{rev}:gold.yaml"))["queries"]]


def test_deleting_the_questions_that_dropped_does_not_hide_them(kb, tmp_path, capsys):
    """Seen: deleting the regressed questions instead passed (with the weak
    ones, the mean over the head's own questions even rose)."""
    configure(kb)
    code, text, before, _ = check(tmp_path, capsys)
    base = commit(kb, "base")
    stale(kb, *STALE)
    code, text, after, _ = check(tmp_path, capsys)
    dropped = {q["query_id"] for q in after["queries"]
               if q["status"] == "ok" and per_question(after, q["query_id"]) < per_question(before, q["query_id"])}
    weak = {q["query_id"] for q in before["queries"] if q["status"] == "ok" and per_question(before, q["query_id"]) < 0.5}
    assert dropped
    doc = gold(kb)
    doc["queries"] = [q for q in doc["queries"] if q["query_id"] not in dropped | weak]
    write_gold(kb, doc)
    commit(kb, "withdraw four relevant documents and delete the questions they answered")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1 and results["rules_source"] == "base", text
    assert "on the base's gold set" in reasons(text), text
    base_view = next(v for v in results["comparison"]["views"] if v["gold"] == "base")
    assert dropped <= {q["query_id"] for q in base_view["questions"] if q["delta"] < 0}


def test_a_reworded_question_is_judged_as_the_base_wrote_it(kb, tmp_path, capsys):
    """The built-in retriever ranks the base's question texts on the head's
    corpus: rewording a question to name its answer cannot lift it."""
    configure(kb)
    base = commit(kb, "base")
    stale(kb, *STALE)
    doc = gold(kb)
    rows = {json.loads(line)["id"]: json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines()}
    for q in doc["queries"]:
        q["query"] = " ".join(rows[d]["title"] for d, g in q["relevant"].items() if g >= 1 and d in rows) or q["query"]
    write_gold(kb, doc)
    commit(kb, "withdraw documents, and questions that name their answers")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert "on the base's gold set" in reasons(text), text


def two_pull_requests(kb, tmp_path, capsys, **rule):
    """PR 1 adds 200 easy questions (gold only); PR 2 withdraws the answers of
    two perfect questions (q07, q12), which the easy ones do not need.
    Returns the second check."""
    configure(kb, **rule)
    perfect = perfect_questions(tmp_path, capsys)
    assert {"q07", "q12"} <= set(perfect)
    commit(kb, "base")
    doc = gold(kb)
    doc["queries"] += copies(doc["queries"], [q for q in perfect if q not in ("q07", "q12")], 200)
    write_gold(kb, doc)
    pr1 = commit(kb, "PR 1: 200 easy questions")
    stale(kb, "faq-008", "howto-008")
    commit(kb, "PR 2: withdraw two documents")
    return check(tmp_path, capsys, "--base", pr1)


def test_many_easy_questions_cannot_hide_a_large_drop_of_a_few(kb, tmp_path, capsys):
    """Seen: split over two PRs the harmful one changes no gold; the mean
    moves by less than max_drop while single questions lose most of their
    nDCG. The per-question rule fails it."""
    code, text, results, summary = two_pull_requests(kb, tmp_path, capsys)
    assert code == 1 and results["rules_source"] == "base", text
    deltas = {d["measure"]: d for d in results["comparison"]["deltas"]}
    assert -deltas["nDCG@5"]["delta"] <= 0.02, "the mean alone would pass"
    rule = results["per_question"]
    assert rule["passed"] is False and rule["max_questions"] == 0 and rule["max_drop"] == 0.5
    assert rule["dropped"]["base"], rule
    assert {q["query_id"] for q in rule["dropped"]["base"]} == {"q07", "q12"}
    assert all(q["delta"] < -0.5 for q in rule["dropped"]["base"])
    assert "per_question" in reasons(text)
    assert "lost more than 0.5" in summary


def test_the_per_question_rule_is_configurable(kb, tmp_path, capsys):
    code, text, results, _ = two_pull_requests(kb, tmp_path, capsys, per_question={"max_questions": 50})
    assert code == 0, text
    assert results["per_question"]["passed"] is True


def test_raising_the_per_question_limit_in_the_pr_is_a_loosened_rule(kb, tmp_path, capsys):
    configure(kb)
    base = commit(kb, "base")
    stale(kb, "faq-008", "howto-008")
    configure(kb, per_question={"max_questions": 50, "max_drop": 0.9})
    commit(kb, "withdraw two documents and raise the per-question limit")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    loosened = results["comparison"]["rules"]["loosened"]
    assert "`per_question.max_questions` raised: 0 → 50" in loosened
    assert "`per_question.max_drop` raised: 0.5 → 0.9" in loosened
    assert results["per_question"]["max_questions"] == 0  # the base's rule was enforced


def test_a_gold_only_pr_that_adds_questions_gets_no_relabelling_warning(kb, tmp_path, capsys):
    """The "labels and ranking changed together" warning is for questions in
    both revisions whose labels and ranking changed, not for new questions."""
    configure(kb)
    perfect = perfect_questions(tmp_path, capsys)
    base = commit(kb, "base")
    doc = gold(kb)
    doc["queries"] += copies(doc["queries"], perfect, 3)
    write_gold(kb, doc)
    commit(kb, "three new questions")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert not any("labels and the ranking" in p["message"] for p in results["problems"]), text


def test_adding_a_chunk_to_a_labelled_document_is_a_rule_change_and_listed(kb, tmp_path, capsys):
    """Seen: a PR blanks the grade-2 documents and adds chunks
    {"id": "policy-002#q0", "doc_id": "policy-002", "text": <the question>}:
    the evaluation level switched silently from none to document."""
    configure(kb)
    base = commit(kb, "base")
    doc = gold(kb)
    path = kb / "corpus.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    answers = {d: q["query"] for q in doc["queries"] for d, g in q["relevant"].items() if g == 2}
    rows = [{**r, "text": "lorem ipsum", "title": "x"} if r["id"] in answers else r for r in rows]
    rows += [{"id": f"{d}#q0", "doc_id": d, "text": text, "type": "faq", "status": "active", "snapshot": "2026-11-30"}
             for d, text in answers.items() if any(r["id"] == d for r in rows)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    commit(kb, "chunks that repeat the questions")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert code == 1, text
    loosened = results["comparison"]["rules"]["loosened"]
    assert any("evaluation level changed: no chunks → document" in c for c in loosened), loosened
    new = results["comparison"]["new_chunks"]
    assert {"doc_id": "policy-002", "chunk_ids": ["policy-002#q0"]} in new
    assert "New chunks of documents the gold set labels" in summary and "policy\\-002\\#q0" in summary, summary
