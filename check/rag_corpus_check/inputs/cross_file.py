"""Cross-file checks: ids that must exist, questions on both sides, grade
scales, snapshots and labels on documents that should not be served."""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from operator import attrgetter

from rag_corpus_check.config.load import Config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import natural_key, odd_ids, safe_text
from rag_corpus_check.inputs import Corpus, Gold, Run, chunks, snapshot_where, where


def _mixed_snapshots(corpus: Corpus, problems: P.Problems) -> None:
    shown = ", ".join(f"`{safe_text(k, 40)}` ({n} documents)" for k, n in sorted(corpus.snapshots.items())[:5])
    problems.add(P.CONSISTENCY, f"corpus documents declare different snapshots: {shown}; a corpus must be one "
                 "snapshot — regenerate the export", file=corpus.file)


def corpus_snapshot(cfg: Config, corpus: Corpus, problems: P.Problems) -> str | None:
    """The corpus's declared snapshot label: the config's ``snapshot``, else the
    one label every document declares. Documents that disagree are an error."""
    labels = corpus.snapshots
    if len(labels) > 1:
        _mixed_snapshots(corpus, problems)
    if cfg.snapshot is not None:
        other = [k for k in labels if k != cfg.snapshot]
        if other:
            problems.add(
                P.CONSISTENCY,
                f"the config declares snapshot `{safe_text(cfg.snapshot, 40)}` but corpus "
                f"documents declare `{safe_text(other[0], 40)}`; update one of them",
                file=corpus.file,
            )
        return cfg.snapshot
    if len(labels) == 1:
        return next(iter(labels))
    return None


def _snapshot_ok(declared: str, label: str | None, fingerprint: str | None) -> bool:
    return declared == label or declared == fingerprint


def check_snapshot(declared, label, fingerprint, file, line, what, problems, qid=None):
    if declared is None or _snapshot_ok(declared, label, fingerprint):
        return
    corpus_desc = f"`{safe_text(label, 40)}`" if label else "(no label)"
    problems.add(
        P.CONSISTENCY,
        f"{what} declares snapshot `{safe_text(declared, 40)}` but the corpus is snapshot "
        f"{corpus_desc}, fingerprint `{fingerprint}`; {what} must be made against the same "
        "index snapshot — regenerate it from this corpus (for a run: `rag-corpus-check "
        "retrieve --config … --out …`), or update the label",
        file=file, line=line, id=qid,
    )


# Of some document ids, those the base revision's corpus holds (with a base
# compared): a label on one of them that the head's corpus lacks is on a
# document the pull request deleted.
AtBase = Callable[[set[str]], set[str]]


def check_labels(cfg: Config, corpus: Corpus, gold: Gold, problems: P.Problems, at_base: AtBase | None = None) -> None:
    """The cross-file checks that need no ranking, made before the ranking is
    (a retrieval can take minutes; a label on a missing document makes its
    result worthless): labelled ids unknown or inactive, grades off the scale,
    the gold set's snapshots, chunk labels in a gold set of documents (a
    chunked corpus is then checked as documents, :mod:`chunks`).
    :func:`cross_check` with ``labels_checked`` makes the rest afterwards."""
    if chunks.level(corpus, gold) == chunks.DOCUMENT:
        corpus = chunks.labelled_documents(corpus, gold, problems)
    label = corpus_snapshot(cfg, corpus, problems)
    _gold_problems(cfg, corpus, gold, problems, label, corpus.facts(gold.labelled(), set()), at_base)


def _gold_problems(cfg: Config, corpus: Corpus, gold: Gold, problems: P.Problems, label, facts,
                   at_base: AtBase | None) -> None:
    fp = corpus.fingerprint
    check_snapshot(gold.snapshot, label, fp, *snapshot_where(gold), "the gold set", problems)
    grades_ok = _on_scale(gold, cfg.max_grade)
    if facts.suspects or not grades_ok or not _snapshots_ok(map(_SNAPSHOT, gold.queries.values()), label, fp):
        _label_problems(cfg, corpus, gold, problems, label, facts, grades_ok, at_base)


def cross_check(cfg: Config, corpus: Corpus, gold: Gold, run: Run, problems: P.Problems,
                labels_checked: bool = False, at_base: AtBase | None = None) -> None:
    """Every cross-file check; with ``labels_checked`` (:func:`check_labels`
    made them before the ranking) only those that need the run."""
    label = corpus_snapshot(cfg, corpus, P.Problems() if labels_checked else problems)  # reported once
    fp = corpus.fingerprint
    # Every id and snapshot at once, in C; the loops word what is wrong,
    # question by question, and only run where this found something: labelled
    # ids that are unknown or inactive, grades outside the scale, ranked ids
    # that are unknown, snapshots that differ.
    facts = corpus.facts(set() if labels_checked else gold.labelled(), run.ranked_ids())
    if not labels_checked:
        _gold_problems(cfg, corpus, gold, problems, label, facts, at_base)
    if facts.unknown or not _snapshots_ok(map(_SNAPSHOT, run.queries.values()), label, fp):
        _ranking_problems(corpus, run, problems, label, facts.unknown)
    _question_problems(cfg, gold, run, problems)
    _odd_id_problems(corpus, gold, run, problems)
    _blank_documents(corpus, problems)


def _blank_documents(corpus: Corpus, problems: P.Problems) -> None:
    """A document with no text and no title passes the schema, but no
    retriever can find it by its words (Cranfield has two)."""
    for doc_id, line in corpus.blank:
        problems.add(P.CONSISTENCY, "document with no text and no title: no retriever can find it by its words "
                     "— add its text, or remove it (or mark it `status: stale`)", file=corpus.file_of(doc_id), line=line,
                     id=doc_id, severity=P.WARNING)


def _odd_id_problems(corpus: Corpus, gold: Gold, run: Run, problems: P.Problems) -> None:
    """Warnings for ids that hold invisible characters or look like another id
    (a label on the look-alike counts for nothing, and nobody sees why)."""
    hint = "; ids that look alike are easily mixed up in labels and reviews — rename it"
    for doc_id, why, line in corpus.odd_ids():
        problems.add(P.CONSISTENCY, f"document id {why}{hint}", file=corpus.file_of(doc_id), line=line, id=doc_id,
                     severity=P.WARNING)
    questions = gold.queries.keys() | run.queries.keys()
    odd = odd_ids(sorted(questions), questions)  # text order decides which of two look-alikes is named
    for qid, why in sorted(odd, key=lambda found: natural_key(found[0])):
        file, at = where(gold, gold.queries[qid]) if qid in gold.queries else (run.file, run.queries[qid].line)
        problems.add(P.CONSISTENCY, f"question id {why}{hint}", file=file, line=at, id=qid, severity=P.WARNING)


_RELEVANT = attrgetter("relevant")


def _on_scale(gold: Gold, max_grade: int) -> bool:
    """Every grade in 0..max_grade (one pass in C over all of them)."""
    grades = set(chain.from_iterable(map(dict.values, map(_RELEVANT, gold.queries.values()))))
    return not grades or (max(grades) <= max_grade and min(grades) >= 0)
_SNAPSHOT = attrgetter("snapshot")


def _snapshots_ok(declared, label, fp) -> bool:
    """Every distinct declared snapshot (None: none declared) matches."""
    return all(s is None or _snapshot_ok(s, label, fp) for s in set(declared))


def _label_problems(cfg, corpus, gold, problems, label, facts, grades_ok, at_base: AtBase | None) -> None:
    suspects = facts.suspects
    unknown = {d for d, doc in suspects.items() if doc is None}
    deleted = at_base(unknown) if unknown and at_base is not None else set()
    for q in gold.queries.values():
        if q.snapshot is not None:
            check_snapshot(q.snapshot, label, corpus.fingerprint, *where(gold, q), "the gold set", problems,
                           q.query_id)
        if q.relevant and not suspects.keys().isdisjoint(q.relevant):
            _suspect_labels(cfg, corpus, gold, q, facts, problems, deleted)
    if not grades_ok:
        _scale_problem(cfg, gold, problems)


def _suspect_labels(cfg, corpus, gold, q, facts, problems, deleted: set[str]) -> None:
    """The labels of one question on unknown, deleted or inactive documents."""
    severity = P.ERROR if cfg.inactive_labels == "error" else P.WARNING
    for doc_id, grade in q.relevant.items():
        if doc_id not in facts.suspects:
            continue  # known and active
        doc, (file, line) = facts.suspects[doc_id], where(gold, q, doc_id)
        if doc_id in deleted:
            problems.add(P.CONSISTENCY, _deleted_label(q.query_id, corpus.file, grade >= cfg.min_grade),
                         file=file, line=line, id=doc_id, severity=P.WARNING)
        elif doc is None:
            problems.add(
                P.CONSISTENCY,
                f"unknown document id in {_labels_of(gold)} of question `{safe_text(q.query_id, 60)}` "
                f"(not in {corpus.file}) — remove the label or add the document",
                file=file, line=line, id=doc_id,
            )
        elif grade >= cfg.min_grade:
            problems.add(
                P.CONSISTENCY,
                f"question `{safe_text(q.query_id, 60)}` counts a {doc.status} document as relevant "
                f"({corpus.file_of(doc_id)}:{facts.lines[doc_id]}); {doc.status} documents should not be served — "
                "relabel it, or set validation.inactive_labels",
                file=file, line=line, id=doc_id, severity=severity,
            )


def _labels_of(gold) -> str:
    """How a message names a question's labels: by the field the file writes them in, under a field map."""
    return "the labels" if gold.labels_field == "relevant" else f"`{safe_text(gold.labels_field, 60)}`"


def _deleted_label(query_id: str, corpus_file: str, relevant: bool) -> str:
    """A label on a document the pull request deleted (in the base's corpus, not in the head's)."""
    qid, where_ = safe_text(query_id, 60), f"in {corpus_file} at the base, not at the head"
    if relevant:
        return (f"question `{qid}` counts a document this pull request deletes as relevant ({where_}): it is "
                "measured as a relevant document no ranking can retrieve — when the page is retired on purpose, "
                "remove the label or give the question another relevant document")
    return f"question `{qid}` judges a document this pull request deletes ({where_}): the label no longer counts — remove it"


def _outside(gold, max_grade: int):
    """(file, line, grade, document) of every label off the scale 0..max_grade."""
    for q in gold.queries.values():
        for d, g in q.relevant.items():
            if not 0 <= g <= max_grade:
                file, line = where(gold, q, d)
                yield file, line or 0, g, d


def _scale_problem(cfg, gold, problems) -> None:
    """One problem for every grade outside the declared scale (a collection
    on another scale has hundreds: one line of what was seen and what to set)."""
    outside = sorted(_outside(gold, cfg.max_grade))
    file, line, _, doc_id = outside[0]
    seen = sorted({g for *_, g, _ in outside})
    shown = ", ".join(map(str, seen[:10])) + (" …" if len(seen) > 10 else "")
    problems.add(
        P.SCHEMA,
        f"{len(outside)} labels have grades outside the declared scale 0–{cfg.max_grade} (grades seen: {shown}; "
        f"the first is here) — {scale_hint(seen, cfg.max_grade)} in {cfg.path_display}",
        file=file, line=line or None, id=doc_id,
    )


def scale_hint(seen: list[int], max_grade: int) -> str:
    """What to set: a map of the negative grades (not relevant), a larger max_grade."""
    negative = [g for g in seen if g < 0][:10]
    fixes = [_map_hint(negative)] if negative else []
    if seen[-1] > max_grade:
        fixes.append(f"`relevance: {{max_grade: {seen[-1]}}}` if the collection uses that scale (or a "
                     "`relevance.map` if its scale is inverted, best grade lowest)")
    return "set " + ", and ".join(fixes)


def _map_hint(negative: list[int]) -> str:
    pairs = ", ".join(f'"{g}": 0' for g in negative)
    return f"`relevance: {{map: {{{pairs}}}}}` if {'they mean' if len(negative) > 1 else 'it means'} judged not relevant"


def _ranking_problems(corpus, run, problems, label, unknown: set[str]) -> None:
    fp = corpus.fingerprint
    for rq in run.queries.values():
        if rq.snapshot is not None:
            check_snapshot(rq.snapshot, label, fp, run.file, rq.line, "the run", problems, rq.query_id)
        if unknown.isdisjoint(rq.ranking):
            continue
        for pos, doc_id in enumerate(rq.ranking, 1):
            if doc_id in unknown:
                problems.add(
                    P.CONSISTENCY,
                    f"unknown document id at position {pos} of question "
                    f"`{safe_text(rq.query_id, 60)}` (not in {corpus.file}); the run was made "
                    "against another corpus — regenerate the run",
                    file=run.file, line=rq.line, id=doc_id,
                )


def _question_problems(cfg, gold, run, problems) -> None:
    _only_in(gold.queries, run.queries, lambda q: where(gold, q), cfg.missing_queries, problems,
             f"question is in the gold set but not in {run.file}; it is scored as an empty "
             "ranking (0) — add it to the run")
    _only_in(run.queries, gold.queries, lambda q: (run.file, q.line), cfg.extra_queries, problems,
             f"question is in the run but not in {gold.file}; it cannot be scored and is "
             "left out — label it or remove it from the run")


def _only_in(queries: dict, other: dict, place, setting: str, problems, message: str) -> None:
    """One problem per question of ``queries`` that ``other`` lacks (a
    comparison of the key sets in C first), an error or a warning as the
    config's ``setting`` says."""
    if other.keys() >= queries.keys():
        return
    severity = P.ERROR if setting == "error" else P.WARNING
    for qid, q in queries.items():
        if qid not in other:
            file, line = place(q)  # (file, line) of the question
            problems.add(P.CONSISTENCY, message, file=file, line=line, id=qid, severity=severity)
