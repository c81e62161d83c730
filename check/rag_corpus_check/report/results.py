"""The results file (schema: schemas/results.schema.json)."""

from __future__ import annotations

import json
import os
import stat
import tempfile

from rag_corpus_check.core.text import natural_key
from rag_corpus_check.pipeline.outcome import ERROR, Outcome, environment, gate_reasons
from rag_corpus_check.report.by_slice import slices_json
from rag_corpus_check.report.changes import comparison_json, per_question_json
from rag_corpus_check.report.confidence import results_json
from rag_corpus_check.report.conventions import conventions_json
from rag_corpus_check.report.sources import run_source_json


def results_dict(out: Outcome) -> dict:
    cfg, ev = out.config, out.evaluation
    return {
        "schema_version": 1,
        "verdict": out.verdict,
        "exit_code": out.exit_code,
        "advisory": out.advisory,
        "rules_source": out.rules_source,
        "rules_why": out.rules.why if out.rules else None,
        "stage": out.stage if out.verdict == ERROR else None,
        "shard": _shard(out),
        "conventions": {**conventions_json(cfg), "level": out.level} if cfg else None,
        "metrics": {str(m): v for m, v in ev.means.items()} if ev else {},
        "counts": _counts(out),
        "thresholds": [_threshold(t) for t in out.thresholds],
        "gate_reasons": gate_reasons(out),
        "per_question": per_question_json(out),
        **results_json(out),
        "slices": slices_json(out),
        "queries": [_query(q, out) for q in (ev.queries if ev else [])],
        "run_source": run_source_json(out),
        "comparison": comparison_json(out),
        "irrelevant_by_type": out.irrelevant_by_type,
        "problems": [p.to_json() for p in out.problems.listed()],
        "problems_dropped": dict(out.problems.dropped),
        "provenance": _provenance(out),
    }


def _shard(out: Outcome) -> dict | None:
    shard = out.shard
    return {"index": shard[0], "count": shard[1]} if shard else None


def _query(q, out: Outcome) -> dict:
    entry = {"query_id": q.query_id, "status": q.status, "in_run": q.in_run, "relevant": q.relevant,
             "values": {str(m): v for m, v in q.values.items()}}
    tags = _tags(out, q.query_id)
    if tags:
        entry["tags"] = list(tags)
    return entry


def _tags(out: Outcome, query_id: str) -> tuple[str, ...]:
    question = out.gold.queries.get(query_id) if out.gold is not None else None
    return question.tags if question is not None else ()


def _counts(out: Outcome) -> dict:
    ev = out.evaluation
    return {
        "questions": len(ev.queries) if ev else None,
        "in_means": ev.counted if ev else None,
        "no_relevant": len(ev.excluded) if ev else None,
        "unanswerable": len(ev.unanswerable) if ev else None,
        "documents": out.corpus.count if out.corpus else None,
        "errors": out.problems.error_count(),
        "warnings": out.problems.warning_count(),
    }


def _threshold(t) -> dict:
    return {"measure": str(t.measure), "limit": t.limit, "value": t.value, "passed": t.passed,
            "max_drop": t.max_drop, "note": t.note, "gold_sets": ["head", "base"] if t.base_gold_checked else ["head"],
            "value_on_base_gold": t.on_base_gold}


def _provenance(out: Outcome) -> dict:
    env = environment()
    return {
        "tool": "rag-corpus-check",
        "tool_version": env["tool_version"],
        "python": env["python"],
        "commit": out.context.commit or out.context.github_sha,
        "uncommitted": None if out.uncommitted is None else list(out.uncommitted),
        "event_head_sha": out.context.event_head_sha,
        "event_name": out.context.event_name,
        "github_sha": out.context.github_sha,
        "inputs": dict(out.inputs),
        "formats": dict(out.formats),
        "corpus_fingerprint": out.corpus.fingerprint if out.corpus else None,
        "config": out.config.raw if out.config else None,
    }


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename, so a reader
    never sees a half-written file presented as complete. A path that is
    neither a file nor absent (``/dev/null``, a pipe) is written to, never
    replaced: renaming over it would put a file where the device was."""
    if _special(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".rag-corpus-check-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _special(path: str) -> bool:
    """Whether ``path`` names something that exists and is not a regular file."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def write_results(path: str, data: dict) -> None:
    """Write the results file of ``data`` (:func:`results_dict`)."""
    # Indented JSON goes through the pure-Python encoder; large results are
    # written compact (C encoder), small ones readable.
    indent = 2 if len(data["queries"]) <= 2000 else None
    write_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False) + "\n")


BENCHMARK_UNIT = "mean over questions"


def benchmark_entries(out: Outcome) -> list[dict]:
    """The means in github-action-benchmark's `customBiggerIsBetter` format:
    one ``{"name", "unit", "value", "extra"}`` per measure whose mean is
    defined (every measure is bigger-is-better). An undefined mean (no
    question to average) is left out: the chart shows a gap, where a 0
    would show a drop that did not happen."""
    ev = out.evaluation
    if ev is None:
        return []
    extra = f"{ev.counted} questions in the means ({len(ev.excluded)} without a relevant document left out)"
    return [{"name": str(m), "unit": BENCHMARK_UNIT, "value": v, "extra": extra}
            for m, v in ev.means.items() if v is not None]


def write_benchmark(path: str, out: Outcome) -> None:
    write_atomic(path, json.dumps(benchmark_entries(out), indent=2, allow_nan=False) + "\n")


def write_run(path: str, out: Outcome) -> None:
    """The run as JSONL, one question per line in id order, each declaring the
    corpus fingerprint as its snapshot."""
    assert out.run is not None and out.corpus is not None
    snap = out.corpus.fingerprint
    lines = [
        json.dumps({"query_id": qid, "ranking": out.run.queries[qid].ranking, "snapshot": snap}, ensure_ascii=False)
        for qid in sorted(out.run.queries, key=natural_key)
    ]
    write_atomic(path, "\n".join(lines) + ("\n" if lines else ""))


def write_new(path: str, text: str, replace: bool = False) -> None:
    """Write ``text`` to a new file at exactly ``path``: no directory is
    made and no symlink followed. With ``replace``, a file or symlink already
    at ``path`` is removed first (the symlink itself, never what it points
    to); else :class:`FileExistsError`. A directory is never replaced."""
    if replace and os.path.lexists(path):
        mode = os.lstat(path).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):  # a directory, a device, a pipe: never removed
            raise IsADirectoryError(path) if stat.S_ISDIR(mode) else FileExistsError(path)
        os.unlink(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
