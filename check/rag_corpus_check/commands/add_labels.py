"""``rag-corpus-check add-labels SHEET``: the way back from a graded `pool`
worksheet into a gold set that cannot take a second file — a BEIR folder's
``qrels/<split>.tsv`` (``dataset: {format: beir}``), a TREC qrels gold file,
a LlamaIndex dataset's ``relevant_docs``.

The worksheet is read by the gold reader (a `null` left in is refused there,
at its line). Labels the file already has are kept as they are, in their
order, byte for byte; the new ones are appended in the worksheet's order. A
label the file already has with another grade is a conflict: nothing is
written and both places are named. The file is replaced atomically (a
temporary file in its folder, then a rename): a reader sees the old file or
the new one, never half of it. A native YAML/JSON/JSONL gold set needs none
of this: the worksheet is listed under ``gold:`` (`pool` says so).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import dataclass, field

from rag_corpus_check.config.load import Config, add_tree_arguments, load_config
from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import safe_text
from rag_corpus_check.inputs import Gold, Source, read_gold
from rag_corpus_check.pipeline.context import logical_path
from rag_corpus_check.safe_io import InputError, compressed, resolve_input

VALID, INVALID = 0, 2
SHOWN = 10  # conflicts listed one per line
SHEET_FORMATS = {".yaml": "yaml", ".yml": "yaml", ".jsonl": "jsonl"}  # what `pool` writes


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rag-corpus-check add-labels",
        description="Add the grades of a filled-in `rag-corpus-check pool` worksheet to the gold set of a config "
        "that takes no second gold file: the qrels/<split>.tsv of a BEIR `dataset:`, a TREC qrels `gold:` file, "
        "or the relevant_docs of a LlamaIndex dataset. Existing labels stay as they are, in their order; the "
        "file is replaced atomically; then commit that file.")
    add_tree_arguments(p)
    p.add_argument("worksheet", metavar="SHEET", help="the graded worksheet (.yaml or .jsonl) that `pool` wrote")
    return p


@dataclass(frozen=True)
class Target:
    """Where a config's labels live, when the worksheet cannot be listed next to them."""

    kind: str  # "beir", "qrels" or "llamaindex"
    rel: str  # as the config names it (relative to the config's folder)


def labels_target(cfg: Config) -> Target | None:
    """The file the grades go into, or None for a native gold set (the
    worksheet is listed under ``gold:`` then)."""
    if cfg.gold_format in ("beir", "llamaindex"):
        return Target(cfg.gold_format, cfg.gold_files[0])
    if cfg.gold_format == "qrels" or (len(cfg.gold_files) == 1 and cfg.gold_files[0].endswith(".qrels")):
        return Target("qrels", cfg.gold_files[0])  # a declared format holds for every file of a list
    return None


def command_line(cfg: Config, sheet: str) -> str:
    """The add-labels command a user runs for ``sheet`` (shown by `pool`)."""
    import shlex

    return f"rag-corpus-check add-labels --config {shlex.quote(cfg.path_display)} {shlex.quote(sheet)}"


def add_labels(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    root, problems = logical_path(args.root), P.Problems()
    cfg, _ = load_config(root, logical_path(args.config), problems)
    if cfg is None or problems.has_errors():
        return _refuse("the config is not valid:", problems)
    target = labels_target(cfg)
    if target is None:
        return _say(f"{cfg.path_display} names a gold set in its own format: list the worksheet under `gold:` "
                    "next to it (no file is changed)", INVALID)
    if compressed(target.rel):
        return _say(f"{safe_text(target.rel, 300)} is gzip-compressed and is not rewritten: decompress it, point "
                    f"{cfg.path_display} at the plain file, and run this again", INVALID)
    try:
        real, display = _resolve(root, cfg, target)
    except InputError as exc:
        return _say(f"{exc.file + ': ' if exc.file else ''}{exc.message}", INVALID)
    return _merge(cfg, target, real, display, _sheet(args.worksheet, cfg, problems), problems)


def _resolve(root: str, cfg: Config, target: Target) -> tuple[str, str]:
    """The target inside the repository, by the input rules; a BEIR split's
    qrels file that does not exist yet is resolved by its folder."""
    hint = f"{cfg.path_display}: the gold set"
    if target.kind == "llamaindex" or os.path.lexists(os.path.join(cfg.base_dir, target.rel)):
        return resolve_input(root, cfg.base_dir, target.rel, hint)
    folder, shown = resolve_input(root, cfg.base_dir, os.path.dirname(target.rel) or ".", hint)
    name = os.path.basename(target.rel)
    return os.path.join(folder, name), f"{shown}/{name}"


def _sheet(path: str, cfg: Config, problems: P.Problems) -> Gold | None:
    """The worksheet as the gold reader reads it (grades as written: no `relevance.map`)."""
    fmt = SHEET_FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        problems.add(P.CONFIG, "the worksheet must be the .yaml or .jsonl file `pool` wrote", file=safe_text(path, 300))
        return None
    try:
        sheet = read_gold(Source(os.path.abspath(path), safe_text(path, 300), fmt), cfg.limits, problems)
    except InputError as exc:
        problems.add_input_error(exc)
        return None
    _off_scale(sheet, cfg, problems)
    return sheet


def _off_scale(sheet: Gold, cfg: Config, problems: P.Problems) -> None:
    """Grades above the config's scale (after its `relevance.map`), at their lines: the check would refuse them."""
    for q in sheet.queries.values():
        for doc_id, grade in q.relevant.items():
            if cfg.grade_map.get(grade, grade) > cfg.max_grade:
                problems.add(P.SCHEMA, f"grade {grade} is above relevance.max_grade ({cfg.max_grade}) of "
                             f"{cfg.path_display}", file=sheet.file, line=q.label_lines.get(doc_id) or q.line,
                             id=doc_id)


def _merge(cfg: Config, target: Target, real: str, display: str, sheet: Gold | None, problems: P.Problems) -> int:
    if sheet is None or problems.has_errors():
        return _refuse("the worksheet cannot be read:", problems)
    have = _existing(cfg, target, real, display, problems)
    if have is None or problems.has_errors():
        return _refuse(f"{display} cannot be read, so nothing was added:", problems)
    plan = plan_labels(_binary(sheet, cfg.min_grade) if target.kind == "llamaindex" else sheet, have, cfg.min_grade)
    if plan.conflicts:
        return _say(_conflicts(plan, sheet.file, display), INVALID)
    return _apply(cfg, target, (real, display), plan, sheet.file, problems)


def _apply(cfg: Config, target: Target, where: tuple[str, str], plan: Plan, sheet: str, problems: P.Problems) -> int:
    """The new labels written (the file replaced at once), and what to commit."""
    real, display = where
    write = _new_content(cfg, target, real, display, plan, problems)
    if problems.has_errors():
        return _refuse(f"nothing was added to {display}:", problems)
    if write is not None:
        replace_atomically(real, write)
    return _say(done_message(plan, display, sheet, target.kind), VALID)


def _new_content(cfg: Config, target: Target, real: str, display: str, plan: Plan, problems: P.Problems
                 ) -> bytes | None:
    if target.kind != "llamaindex":
        return _add_to_qrels(real, target.kind, plan, problems)
    from rag_corpus_check.commands.add_labels_json import add_to_llamaindex

    return add_to_llamaindex(real, display, cfg, plan, problems)


def _binary(sheet: Gold, min_grade: int) -> Gold:
    """The worksheet's grades as LlamaIndex holds them: 1 relevant, 0 not."""
    for q in sheet.queries.values():
        q.relevant = {d: int(g >= min_grade) for d, g in q.relevant.items()}
    return sheet


def _existing(cfg: Config, target: Target, real: str, display: str, problems: P.Problems) -> Gold | None:
    if not os.path.exists(real):
        if target.kind == "llamaindex":
            problems.add(P.PATH, "the dataset file does not exist", file=display)
            return None
        return Gold(file=display, format=target.kind)  # a new split: the file is made
    try:
        return read_gold(Source(real, display, target.kind), cfg.limits, problems)
    except InputError as exc:
        problems.add_input_error(exc)
        return None


@dataclass
class Plan:
    """The labels to add (question id, document id, grade, in the
    worksheet's order), those already there with the same grade, and the
    conflicts (question, document, the worksheet's grade, the file's grade
    and line)."""

    new: list[tuple[str, str, int]] = field(default_factory=list)
    same: int = 0
    conflicts: list[tuple[str, str, int, int, int | None]] = field(default_factory=list)
    min_grade: int = 1
    dropped: int = 0  # judged not relevant, which the target cannot hold (LlamaIndex)

    @property
    def relevant(self) -> int:
        return sum(1 for _, _, g in self.new if g >= self.min_grade)

    @property
    def questions(self) -> int:
        return len({q for q, _, _ in self.new})


def plan_labels(sheet: Gold, have: Gold, min_grade: int) -> Plan:
    """What the worksheet adds to ``have``."""
    plan = Plan(min_grade=min_grade)
    for qid, q in sheet.queries.items():
        old = have.queries.get(qid)
        for doc_id, grade in q.relevant.items():
            _plan_label(plan, qid, doc_id, grade, old)
    return plan


def _plan_label(plan: Plan, qid: str, doc_id: str, grade: int, old) -> None:
    was = old.relevant.get(doc_id) if old is not None else None
    if was is None:
        plan.new.append((qid, doc_id, grade))
    elif was == grade:
        plan.same += 1
    else:
        plan.conflicts.append((qid, doc_id, grade, was, old.label_lines.get(doc_id)))


def _conflicts(plan: Plan, sheet: str, display: str) -> str:
    lines = [f"{len(plan.conflicts)} labels of {sheet} are in {display} with another grade; nothing was added — "
             "change the grade in one of the two files, then run this again:"]
    for qid, doc_id, grade, was, line in plan.conflicts[:SHOWN]:
        where = f"{display}:{line}" if line else display
        lines.append(f"  - question `{safe_text(qid, 60)}`, document `{safe_text(doc_id, 60)}`: the worksheet says "
                     f"{grade}, {where} says {was}")
    more = len(plan.conflicts) - SHOWN
    return "\n".join(lines + ([f"  - ... {more} more"] if more > 0 else []))


def _add_to_qrels(real: str, kind: str, plan: Plan, problems: P.Problems) -> bytes | None:
    """The qrels file with the new lines appended (None: nothing to add)."""
    if not plan.new or _spaced_ids(plan, problems):
        return None
    form = "{q}\t{d}\t{g}\n" if kind == "beir" else "{q} 0 {d} {g}\n"
    return _old_lines(real, kind) + "".join(form.format(q=q, d=d, g=g) for q, d, g in plan.new).encode("utf-8")


def _spaced_ids(plan: Plan, problems: P.Problems) -> bool:
    """Ids a qrels line cannot hold (its fields are separated by white space), reported."""
    bad = {v for q, d, _ in plan.new for v in (q, d) if len(v.split()) != 1 or v.strip() != v}
    for value in sorted(bad):
        problems.add(P.SCHEMA, "an id with a space cannot be written to a qrels file (its fields are separated "
                     "by spaces)", id=value)
    return bool(bad)


def _old_lines(real: str, kind: str) -> bytes:
    """The file as it is, ending in a line break (a new BEIR file: its header)."""
    if not os.path.exists(real):
        return b"query-id\tcorpus-id\tscore\n" if kind == "beir" else b""
    with open(real, "rb") as f:
        old = f.read()
    return old + b"\n" if old and not old.endswith(b"\n") else old


def replace_atomically(real: str, data: bytes) -> None:
    """``real`` replaced by ``data`` through a temporary file in its folder
    and a rename; the file's mode is kept."""
    folder = os.path.dirname(real)
    mode = os.stat(real).st_mode & 0o777 if os.path.exists(real) else 0o644
    fd, tmp = tempfile.mkstemp(prefix=".rag-corpus-check-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def done_message(plan: Plan, display: str, sheet: str, kind: str) -> str:
    same = f"; {plan.same} were there already with the same grade" if plan.same else ""
    if plan.dropped:
        same += (f"; {plan.dropped} judged not relevant cannot be kept (the format lists relevant documents "
                 "only), so `pool` lists them again")
    if not plan.new:
        return f"rag-corpus-check add-labels: nothing to add to {display}{same}; no file changed"
    kept = ("its labels before are unchanged, in their order" if kind != "llamaindex"
            else "its other contents are unchanged")
    return (f"rag-corpus-check add-labels: added {len(plan.new)} labels ({plan.relevant} relevant) for "
            f"{plan.questions} questions to {display}{same}; {kept}.\n"
            f"  commit it:  git add {display} && git commit -m \"gold: {len(plan.new)} labels from pooling\"\n"
            f"  {sheet} is not read by the check: delete it, or leave it out of the commit")


def _refuse(head: str, problems: P.Problems) -> int:
    lines = [f"  - {safe_text(p.location(), 200)}{f' [{p.id}]' if p.id else ''}: {safe_text(p.message, 500)}"
             for p in problems.errors[:SHOWN]]
    return _say("\n".join([head, *lines]), INVALID)


def _say(message: str, code: int) -> int:
    prefix = "" if message.startswith("rag-corpus-check") else "rag-corpus-check add-labels: "
    print(prefix + message)
    return code

