"""Merge the results of a sharded run (``--shard i/n`` on each machine of a
matrix) into the results of one unsharded run: the same per-question values,
the same means (summed in the same order), the same thresholds and verdict."""

from __future__ import annotations

from rag_corpus_check import problems as P
from rag_corpus_check.config import load_config
from rag_corpus_check.evaluate import NO_RELEVANT, OK, Evaluation, QueryResult
from rag_corpus_check.gate import apply_thresholds
from rag_corpus_check.pipeline import INVALID, Outcome, _finish
from rag_corpus_check.report.conventions import conventions_json
from rag_corpus_check.rules import NO_BASE, head_rules
from rag_corpus_check.safe_io import InputError, loads_strict
from rag_corpus_check.schemas import validator
from rag_corpus_check.text import safe_text

MAX_RESULTS_BYTES = 2 * 1024**3


def _read(path: str, problems: P.Problems) -> dict | None:
    shown = safe_text(path, 200)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RESULTS_BYTES + 1)
        doc = loads_strict(data.decode("utf-8"), shown, None)
    except (OSError, UnicodeDecodeError):
        problems.add(P.PATH, "cannot read this results file", file=shown)
        return None
    except InputError as exc:
        problems.add(exc.kind, exc.message, file=shown, line=exc.line)
        return None
    if not validator("results").is_valid(doc):
        problems.add(P.SCHEMA, "not a rag-corpus-check results file", file=shown)
        return None
    return doc


def merge(root: str, config_path: str, paths: list[str], context=None) -> Outcome:
    problems = P.Problems()
    out = Outcome(INVALID, 2, problems, rules=head_rules(NO_BASE, "shards are measured without a base"))
    if context is not None:
        out.context = context
    cfg, _ = load_config(root, config_path, problems)
    out.config = cfg
    docs = [(p, _read(p, problems)) for p in paths]
    if cfg is None or problems.has_errors():
        return _finish(out, None)
    count = None
    seen_index: dict[int, str] = {}
    inputs = None
    queries: dict[str, dict] = {}
    by_type: dict[str, list[int]] = {}
    for path, doc in docs:
        shown = safe_text(path, 200)
        shard = doc.get("shard")
        if doc["verdict"] != "partial" or not shard:
            problems.add(P.CONSISTENCY, f"not a shard result (verdict `{doc['verdict']}`); "
                         "only results of `--shard i/n` runs can be merged", file=shown)
            continue
        if count is None:
            count = shard["count"]
        if shard["count"] != count:
            problems.add(P.CONSISTENCY, f"shard count {shard['count']} differs from {count}", file=shown)
        if shard["index"] in seen_index:
            problems.add(P.CONSISTENCY, f"shard {shard['index']} given twice (also {seen_index[shard['index']]})", file=shown)
        seen_index[shard["index"]] = shown
        if inputs is None:
            inputs = doc["provenance"]["inputs"]
            out.inputs = dict(inputs)
        elif doc["provenance"]["inputs"] != inputs:
            problems.add(P.CONSISTENCY, "this shard checked different input files (sha-256 differ); "
                         "all shards must check the same commit", file=shown)
        if doc["conventions"] != conventions_json(cfg):
            problems.add(P.CONSISTENCY, "this shard used other conventions than the config", file=shown)
        for q in doc["queries"]:
            if q["query_id"] in queries:
                problems.add(P.CONSISTENCY, "question measured by two shards", file=shown, id=q["query_id"])
            queries[q["query_id"]] = q
        for row in doc.get("irrelevant_by_type") or []:
            c = by_type.setdefault(row["type"], [0, 0])
            c[0] += row["irrelevant"]
            c[1] += row["unjudged"]
        for p in doc["problems"]:
            problems.add(p["kind"], p["message"], file=p["file"], line=p["line"], id=p["id"],
                         severity=p["severity"])
    if count is not None:
        missing = sorted(set(range(1, count + 1)) - set(seen_index))
        if missing:
            problems.add(P.CONSISTENCY, f"shards missing: {', '.join(map(str, missing))} of {count}",
                         file=safe_text(config_path, 200))
    if problems.has_errors() or not queries:
        return _finish(out, None)
    results, sums, counted, excluded = [], {}, 0, []
    for qid in sorted(queries):  # the order evaluate() sums in
        q = queries[qid]
        results.append(QueryResult(qid, q["status"], q.get("in_run", True), q.get("relevant", 0), q["values"]))
        if q["status"] == OK:
            counted += 1
            for key, v in q["values"].items():
                sums[key] = sums.get(key, 0.0) + v
        elif q["status"] == NO_RELEVANT:
            excluded.append(qid)
    if counted == 0:
        problems.add(
            P.CONSISTENCY,
            "no gold question has a relevant document; there is nothing to measure — label at "
            "least one relevant document", file=safe_text(config_path, 200),
        )
        return _finish(out, None)
    keys = list(results[0].values)
    means = {k: (sums.get(k, 0.0) / counted if counted else None) for k in keys}
    out.evaluation = Evaluation(results, means, counted, excluded)
    total = sum(n for n, _ in by_type.values())
    out.irrelevant_by_type = sorted(
        ({"type": t, "irrelevant": n, "unjudged": u, "share": n / total if total else 0.0}
         for t, (n, u) in by_type.items()), key=lambda r: (-r["irrelevant"], r["type"]))
    out.thresholds = apply_thresholds(cfg.thresholds, means)
    return _finish(out, out.thresholds)
