"""The exact run readers: JSONL (a ranked list per line) and TREC runs
(``qid Q0 docid rank score tag``, ordered as trec_eval orders them)."""

from __future__ import annotations

import math
import re
from functools import partial

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.progress import current as current_progress
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs.checks import run_record
from rag_corpus_check.inputs.records import Run, RunQuery
from rag_corpus_check.inputs.validity import (
    other_space_note,
    schema_ok,
    trec_fields,
    trec_id_problem,
)
from rag_corpus_check.safe_io import Limits, iter_jsonl, iter_text_lines

_SCORE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def read_run(real: str, file: str, fmt: str, limits: Limits, problems: P.Problems, hasher=None,
             order: str = "descending") -> Run:
    run = Run(file=file, format=fmt)
    if fmt == "trec":
        _read_trec(real, file, limits, problems, run, hasher, order)
    else:
        _read_jsonl(real, file, limits, problems, run, hasher)
    return run


def _read_jsonl(real, file, limits, problems, run, hasher) -> None:
    """Each line checked. The ranked ids of the lines :func:`run_record`
    accepted, collected by its id check, are :attr:`Run.ranked` when those
    are the lines kept (else it is worked out when asked for)."""
    progress = current_progress()
    label = f"reading {file}"
    ranked: set[str] = set()
    valid = partial(run_record, valid_ids=ranked)
    exact = True  # every kept line's ids are in `ranked`, and only theirs
    for line, rec in iter_jsonl(real, file, limits, hasher=hasher, bad_line=problems.add_input_error):
        progress.tick(label, line, unit="lines")
        if not isinstance(rec, dict):
            problems.add(P.SCHEMA, "each line must be a JSON object (one question)", file=file, line=line)
            continue
        accepted = valid(rec)
        if not (accepted or schema_ok(problems, ("run", ""), rec, file, line)):
            continue
        kept = _new(run, rec, file, line, problems)
        if kept:
            run.queries[rec["query_id"]] = RunQuery(rec["query_id"], line, rec["ranking"], rec.get("snapshot"))
        exact = exact and accepted and kept
    run.ranked = ranked if exact else None


def _new(run: Run, rec: dict, file: str, line: int, problems: P.Problems) -> bool:
    """A question not seen before whose ranking holds no document twice."""
    qid = rec["query_id"]
    if qid in run.queries:
        problems.add(P.CONSISTENCY, f"duplicate question id in the run (first on line {run.queries[qid].line})",
                     file=file, line=line, id=qid)
        return False
    ranking = rec["ranking"]
    if len(set(ranking)) == len(ranking):  # the common case, checked in C
        return True
    seen: dict[str, int] = {}
    for pos, d in enumerate(ranking, 1):
        if d in seen:
            problems.add(
                P.CONSISTENCY,
                f"document appears twice in the ranking of question `{safe_text(qid, 60)}` (positions "
                f"{seen[d]} and {pos}); a duplicate must not count as two pieces of evidence — "
                "deduplicate the ranking",
                file=file, line=line, id=d,
            )
            return False
        seen[d] = pos
    return True


def _read_trec(real, file, limits, problems, run, hasher=None, order: str = "descending") -> None:
    rows: dict[str, list] = {}
    ranks: dict[str, list] = {}
    first_line: dict[str, int] = {}
    seen: dict[tuple[str, str], int] = {}
    bad: set[str] = set()
    sign = -1.0 if order == "ascending" else 1.0
    for line, row in _trec_rows(real, file, limits, problems, hasher):
        qid, doc_id, score, rank = row
        if score is None or _twice(qid, doc_id, seen.get((qid, doc_id)), file, line, problems):
            bad.add(qid)
            continue
        seen[(qid, doc_id)] = line
        rows.setdefault(qid, []).append((sign * score, doc_id))
        ranks.setdefault(qid, []).append(rank)
        first_line.setdefault(qid, line)
    _upside_down(rows, ranks, order, file, problems)
    for qid, items in rows.items():
        if qid not in bad:
            run.queries[qid] = RunQuery(qid, first_line[qid], trec_order(items))


def _upside_down(rows: dict[str, list], ranks: dict[str, list], order: str, file: str, problems: P.Problems) -> None:
    """A warning when in most questions the rank column rises as the run is
    ordered (the best-ordered line has the largest rank): a run scored by
    distance read as similarity, or the other way round."""
    judged = [rank_rises(items, ranks[qid]) for qid, items in rows.items() if len(items) > 1 and None not in ranks[qid]]
    if judged and sum(judged) * 2 > len(judged):
        problems.add(P.CONSISTENCY, _upside_down_message(sum(judged), len(judged), order), file=file,
                     severity=P.WARNING)


_OTHER_ORDER = {"descending": ("ascending", "lower scores are better (a distance)"),
                "ascending": ("descending", "higher scores are better (a similarity)")}


def _upside_down_message(rising: int, counted: int, order: str) -> str:
    other, why = _OTHER_ORDER[order]
    return (f"in {rising} of {counted} questions the rank column rises as the scores order the run ({order}): "
            f"it looks as if {why} — if so, set `formats: {{run_order: {other}}}` in the config (the rank "
            "column itself is ignored, as trec_eval ignores it)")


def trec_order(items: list[tuple[float, str]]) -> list[str]:
    """trec_eval's order: score descending, ties by docno descending (byte
    order); the rank column is ignored."""
    items.sort(key=lambda t: (t[0], t[1].encode("utf-8", "surrogatepass")), reverse=True)
    return [d for _, d in items]


def _twice(qid: str, doc_id: str, first: int | None, file: str, line: int, problems: P.Problems) -> bool:
    if first is None:
        return False
    problems.add(P.CONSISTENCY, f"document appears twice in the ranking of question `{safe_text(qid, 60)}` "
                 f"(lines {first} and {line}) — deduplicate the run", file=file, line=line, id=doc_id)
    return True


def _trec_rows(real, file, limits, problems, hasher):
    """(line, (qid, docid, score, rank)) of each line worth keeping."""
    for line, text in iter_text_lines(real, file, limits, hasher):
        row = _trec_row(text, file, line, problems)
        if row is not None:
            yield line, row


def rank_rises(items: list, ranks: list) -> bool:
    """Whether the line the run puts first has a larger rank than the one it puts last."""
    best = max(range(len(items)), key=items.__getitem__)
    worst = min(range(len(items)), key=items.__getitem__)
    return ranks[best] > ranks[worst]


def _rank(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


def _trec_row(text: str, file: str, line: int, problems: P.Problems) -> tuple | None:
    """(qid, docid, score, rank) of a TREC run line (rank None when it is no
    integer); score None for a line whose ids are invalid (the question is
    then left out); None for a line to skip."""
    parts = trec_fields(text)
    if len(parts) != 6:
        problems.add(P.PARSE, f"a TREC run line needs 6 fields `qid Q0 docid rank score tag`, found {len(parts)}"
                     + other_space_note(text), file=file, line=line)
        return None
    qid, _q0, doc_id, rank_s, score_s, _tag = parts
    if trec_id_problem(problems, qid, "question id", file, line) or trec_id_problem(
            problems, doc_id, "document id", file, line):
        return qid, doc_id, None, None
    # float() also reads "١٢", "1_0" and " inf": take the ASCII forms only.
    score = float(score_s) if _SCORE.fullmatch(score_s) else math.nan
    if not math.isfinite(score):
        problems.add(P.PARSE, "the score must be a finite number", file=file, line=line, id=doc_id)
        return None
    return qid, doc_id, score, _rank(rank_s)
