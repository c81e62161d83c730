"""Dense and hybrid with a base: the head's ranking is judged by the base's
gold set too, and a question of the base is ranked as the base wrote it —
with the base's question vector (trusted: it comes from the base revision),
against the head's document vectors, fused with BM25 over the base's text for
hybrid. A pull request that degrades a document and rewords its question with
a flattering vector of its own cannot lift the base's question. Each test is a
real throw-away git repository (base commit, head commit, `--base`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from conftest import check
from support.repos import commit
from support.vectors import dense_config, embed_kb, sha

CONFIG = ".rag-corpus-check.yml"
DIMS = 256  # random vectors this long are nearly orthogonal: the attack's geometry is clean
QUESTION, ANSWER, PARTLY = "q02", "faq-002", "relnote-003"  # faq-002 (grade 2) is relevant to q02 alone
NEW_TEXT = "Upload size limits moved: see the storage handbook for the current figures."
NEW_QUESTION = "Where are the upload size limits described?"


def base_repo(kb, kind: str) -> str:
    embed_kb(kb, dims=DIMS)
    dense_config(kb, kind)
    cfg = yaml.safe_load((kb / CONFIG).read_text())
    cfg["thresholds"] = {"nDCG@5": {"min": 0.3, "max_drop": 0.02}}
    (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
    return commit(kb, "base: dense vectors")


def _rows(kb, kind: str) -> tuple[np.ndarray, list[dict]]:
    folder = kb / "vectors"
    return np.load(folder / f"{kind}.npy"), [json.loads(x) for x in (folder / f"{kind}.jsonl").read_text().splitlines()]


def _save(kb, kind: str, matrix: np.ndarray, rows: list[dict]) -> None:
    np.save(kb / "vectors" / f"{kind}.npy", matrix)
    (kb / "vectors" / f"{kind}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def degrade_and_reword(kb) -> None:
    """The PR: the answer's text is gutted, with a new vector orthogonal to
    the base's question (and to the other relevant document), and the
    question is reworded, with a vector pointing at the new answer and the
    other relevant document: on the head's own gold set it is perfect."""
    docs, doc_rows = _rows(kb, "documents")
    questions, question_rows = _rows(kb, "questions")
    at = {r["id"]: i for i, r in enumerate(doc_rows)}
    q = next(i for i, r in enumerate(question_rows) if r["query_id"] == QUESTION)
    basis = np.linalg.qr(np.stack([questions[q], docs[at[PARTLY]]]).T.astype(np.float64))[0]
    r = np.random.default_rng(7).standard_normal(DIMS)
    answer = _unit(r - basis @ (basis.T @ r))  # orthogonal to the base's question: far down its ranking
    docs[at[ANSWER]] = answer * np.linalg.norm(docs[at[ANSWER]])
    doc_rows[at[ANSWER]]["sha256"] = sha(NEW_TEXT)
    questions[q] = 2 * answer + _unit(docs[at[PARTLY]].astype(np.float64))
    question_rows[q]["sha256"] = sha(NEW_QUESTION)
    _save(kb, "documents", docs, doc_rows)
    _save(kb, "questions", questions, question_rows)
    corpus = [json.loads(x) for x in (kb / "corpus.jsonl").read_text().splitlines()]
    (kb / "corpus.jsonl").write_text("".join(
        json.dumps({**d, "text": NEW_TEXT} if d["id"] == ANSWER else d) + "\n" for d in corpus))
    gold = yaml.safe_load((kb / "gold.yaml").read_text())
    next(x for x in gold["queries"] if x["query_id"] == QUESTION)["query"] = NEW_QUESTION
    (kb / "gold.yaml").write_text(yaml.safe_dump(gold, sort_keys=False, allow_unicode=True))


def _value(results: dict, qid: str) -> float:
    return next(q for q in results["queries"] if q["query_id"] == qid)["values"]["nDCG@5"]


def _base_gold_question(results: dict, qid: str) -> dict:
    view = next(v for v in results["comparison"]["views"] if v["gold"] == "base")
    return next(q for q in view["questions"] if q["query_id"] == qid)


@pytest.mark.parametrize("kind", ["dense", "hybrid"])
def test_a_reworded_question_with_a_flattering_vector_is_judged_by_the_base_vector(kb, tmp_path, capsys, kind):
    base = base_repo(kb, kind)
    degrade_and_reword(kb)
    commit(kb, "head: gut the answer, reword its question")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    assert _value(results, QUESTION) > 0.9, text  # the head's own question: (nearly) perfect
    moved = _base_gold_question(results, QUESTION)
    assert moved["head"] < 0.6 <= moved["base"], moved  # the base's question loses its answer
    assert code == 1, text
    assert "on the base's gold set" in text.split("the gate failed because:", 1)[-1], text
    note = "the base's gold set was ranked with the base's question vectors"
    assert note in text and note in " ".join(results["comparison"]["notes"]) and note in summary
    assert ("fused with the built-in BM25 over the base's question texts" in text) == (kind == "hybrid")


def test_an_honest_rewording_keeps_passing(kb, tmp_path, capsys):
    """The same rewording with the answer left alone passes: the base's
    question still finds it."""
    base = base_repo(kb, "dense")
    questions, rows = _rows(kb, "questions")
    q = next(i for i, r in enumerate(rows) if r["query_id"] == QUESTION)
    rows[q]["sha256"] = sha(NEW_QUESTION)
    _save(kb, "questions", questions, rows)
    gold = yaml.safe_load((kb / "gold.yaml").read_text())
    next(x for x in gold["queries"] if x["query_id"] == QUESTION)["query"] = NEW_QUESTION
    (kb / "gold.yaml").write_text(yaml.safe_dump(gold, sort_keys=False, allow_unicode=True))
    commit(kb, "head: reword a question")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert results["run_source"]["vectors_check"]["supplied_ids"] == {"documents": [], "questions": [QUESTION]}


def _switch_to_dense(kb, model: str = "test-model-1") -> None:
    embed_kb(kb, dims=DIMS, model=model)
    dense_config(kb, model=model)
    cfg = yaml.safe_load((kb / CONFIG).read_text())
    cfg["rule_change_reason"] = "dense retrieval from now on"
    (kb / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))


def test_a_base_without_vectors_says_which_view_was_used(kb, tmp_path, capsys):
    """The base ranks with BM25: there is no base question vector, so the
    base's questions are ranked with the head's vectors of the same text,
    and the output says so (a reworded question, with the PR's vector of
    its new wording, is named)."""
    base = commit(kb, "base: BM25")
    gold = yaml.safe_load((kb / "gold.yaml").read_text())
    next(x for x in gold["queries"] if x["query_id"] == QUESTION)["query"] = NEW_QUESTION
    (kb / "gold.yaml").write_text(yaml.safe_dump(gold, sort_keys=False, allow_unicode=True))
    _switch_to_dense(kb)
    commit(kb, "head: dense, one question reworded")
    code, text, results, summary = check(tmp_path, capsys, "--base", base)
    notes = " ".join(results["comparison"]["notes"])
    assert "the base has no question vectors of `test-model-1` (the base ranks with the built-in BM25)" in notes
    assert "ranked with this PR's vectors of the same question texts" in notes
    assert f"1 question reworded in this PR was ranked with this PR's vector of its new wording (taken on trust): {QUESTION}" in notes
    assert "ranked with this PR's vectors" in text and "ranked with this PR" in summary
    assert results["rules_source"] == "head-override", text


def test_a_base_of_another_model_says_which_view_was_used(kb, tmp_path, capsys):
    embed_kb(kb, dims=DIMS)
    dense_config(kb)
    base = commit(kb, "base: model 1")
    _switch_to_dense(kb, "test-model-2")
    commit(kb, "head: model 2")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    notes = " ".join(results["comparison"]["notes"])
    assert "the base has no question vectors of `test-model-2` (its vectors are of `test-model-1`)" in notes, notes
    assert "reworded" not in notes
    assert code == 0, text


def test_a_question_the_base_has_and_nothing_can_rank_is_named_and_counts_as_lost(kb, tmp_path, capsys):
    """No base vectors (the base ranks with BM25) and the question removed
    in the PR: no vector of it anywhere, so it has an empty ranking in the
    view judged by the base's gold set (it scores 0 there), named in the note."""
    base = commit(kb, "base: BM25")
    gold = yaml.safe_load((kb / "gold.yaml").read_text())
    gold["queries"] = [x for x in gold["queries"] if x["query_id"] != QUESTION]
    (kb / "gold.yaml").write_text(yaml.safe_dump(gold, sort_keys=False, allow_unicode=True))
    _switch_to_dense(kb)
    commit(kb, "head: dense, one question removed")
    code, text, results, _ = check(tmp_path, capsys, "--base", base)
    assert f"1 question of the base has no vector here and no ranking: {QUESTION}" in " ".join(results["comparison"]["notes"])
    assert _base_gold_question(results, QUESTION)["head"] == 0.0 < _base_gold_question(results, QUESTION)["base"]
    assert code == 0, text  # the made-up vectors lift every other question more than q02 lost


def _folder(tmp_path, name: str, questions: list[tuple[str, str]], seed: int, dims: int = 8):
    from rag_corpus_check.retrieval.dense.folder import Place, read_vectors
    from rag_corpus_check.safe_io import Limits
    from support.vectors import write_folder

    write_folder(tmp_path / name, [("d1", "a document")], questions, dims=dims, seed=seed)
    return read_vectors(Place(str(tmp_path), str(tmp_path), name), "test-model-1", Limits())


def test_each_base_question_takes_the_most_trusted_vector_there_is(tmp_path):
    """The base's row of the base's text; else the head's row of that text;
    else (reworded) the head's row of the id; else none — each counted."""
    from rag_corpus_check.retrieval.dense.choice import question_vectors
    from rag_corpus_check.retrieval.protocol import BaseQuestions

    base_vectors = _folder(tmp_path, "base", [("a", "alpha?")], seed=1)
    head = _folder(tmp_path, "head", [("a", "alpha?"), ("b", "beta?"), ("c", "gamma, reworded?")], seed=5)
    base = BaseQuestions({"a": "alpha?", "b": "beta?", "c": "gamma?", "d": "delta?"}, base_vectors)
    chosen = question_vectors(base, head, hybrid=False)
    assert chosen.qids == ["a", "b", "c"] and chosen.from_base == 1
    assert (chosen.same_text, chosen.reworded, chosen.missing) == (["b"], ["c"], ["d"])
    assert np.array_equal(chosen.matrix[0], base_vectors.questions.vectors[0].astype(np.float64))
    assert np.array_equal(chosen.matrix[1], head.questions.vectors[1].astype(np.float64))
    assert chosen.note == (
        "the base's gold set was ranked with the base's question vectors (`base` at the base commit) against this "
        "PR's document vectors; 1 question without a vector of its base text there was ranked with this PR's "
        "vector of the same text: b; 1 question reworded in this PR was ranked with this PR's vector of its new "
        "wording (taken on trust): c; 1 question of the base has no vector here and no ranking: d")


def test_base_vectors_of_other_dimensions_are_not_used_and_the_note_says_why(tmp_path):
    from rag_corpus_check.retrieval.dense.choice import question_vectors
    from rag_corpus_check.retrieval.protocol import BaseQuestions

    base = BaseQuestions({"a": "alpha?"}, _folder(tmp_path, "base", [("a", "alpha?")], seed=1, dims=4))
    chosen = question_vectors(base, _folder(tmp_path, "head", [("a", "alpha?")], seed=5), hybrid=True)
    assert chosen.from_base == 0 and chosen.same_text == ["a"]
    assert chosen.note == ("the base has no question vectors of `test-model-1` (its vectors have 4 dimensions, this "
                         "PR's 8): the base's gold set was ranked with this PR's vectors of the same question texts "
                         "against its document vectors, fused with the built-in BM25 over the base's question texts")
