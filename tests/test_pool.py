"""`rag-corpus-check pool`: the labelling loop. The worksheet of the unjudged
documents in the top K is valid gold (refused while a grade is `null`),
graded and listed under `gold:` it raises Judged@K to what the ranking
allows; with --base it pools the base's top K too and --changed-only keeps
the questions whose top K changed; hostile corpus text stays inside its
comment; --out is written exactly where named and never over a file without
--force, never over an input."""

import json
import os
import re
import shlex

import pytest

from conftest import EXAMPLE, write
from rag_corpus_check.commands.cli import main
from rag_corpus_check.commands.worksheet import quoted
from rag_corpus_check.safe_io import Limits, load_yaml
from support.repos import commit, edit, init

RUN_CONFIG = "committed-run.rag-corpus-check.yml"
BM25_CONFIG = ".rag-corpus-check.yml"
# Every line of a worksheet is a comment or one of these (nothing else can get in).
STRUCTURE = re.compile(r'( *#.*|queries:|  - query_id: ".*"|    relevant:|      ".*": null)')


def unpooled(kb):
    """The example's gold set as it was before pooling: the labels after each
    "# pooled" comment removed (what the team had judged by hand)."""
    kept, skipping = [], False
    for line in (kb / "gold.yaml").read_text().splitlines():
        if line.strip().startswith("# pooled"):
            skipping = True
            continue
        if skipping and (not line.strip() or line.lstrip().startswith("- query_id")):
            skipping = False
        if not skipping:
            kept.append(line)
    (kb / "gold.yaml").write_text("\n".join(kept) + "\n")


def check(tmp_path, capsys, config, *argv, console=None):
    out = tmp_path / "out"
    code = main(["--config", config, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), *argv])
    printed = capsys.readouterr().out
    if console is not None:
        console.append(printed)
    return code, json.loads((out / "r.json").read_text()), (out / "s.md").read_text()


def pool(capsys, *argv):
    code = main(["pool", *argv])
    return code, capsys.readouterr().out


def grade(path, grades):
    """Fill in a worksheet as a judge would: each `null` replaced with the
    grade ``grades[question][document]`` (0 when there is none)."""
    qid, lines = None, []
    for line in path.read_text().splitlines():
        if m := re.fullmatch(r'  - query_id: "(.*)"', line):
            qid = m.group(1)
        if m := re.fullmatch(r'      "(.*)": null', line):
            line = line.replace("null", str(grades.get(qid, {}).get(m.group(1), 0)))
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")


def example_grades():
    doc = load_yaml((EXAMPLE / "gold.yaml").read_bytes(), "gold.yaml", Limits())
    return {q["query_id"]: dict(q["relevant"]) for q in doc["queries"]}


def listed(kb, config, *files):
    edit(kb / config, "gold: gold.yaml", f"gold: [{', '.join(files)}]")


def means(res):
    return res["metrics"]


def test_pool_grade_and_list_it_reaches_judged_1(kb, tmp_path, capsys):
    unpooled(kb)
    code, res, _ = check(tmp_path, capsys, RUN_CONFIG)
    assert means(res)["Judged@5"] < 0.6
    code, text = pool(capsys, "--config", RUN_CONFIG, "--out", "labels.yaml")
    assert code == 0 and "wrote 32 documents to judge for 15 questions" in text, text
    sheet = (kb / "labels.yaml").read_text()
    assert all(STRUCTURE.fullmatch(line) for line in sheet.splitlines())
    assert "#   gold: [gold.yaml, labels.yaml]" in sheet

    listed(kb, RUN_CONFIG, "gold.yaml", "labels.yaml")  # committed as it is: refused, and says why
    code, res, _ = check(tmp_path, capsys, RUN_CONFIG)
    assert code == 2 and len(res["problems"]) == 32
    first = res["problems"][0]
    assert first["file"] == "labels.yaml" and "is not filled in (`null`)" in first["message"]
    assert sheet.splitlines()[first["line"] - 1].endswith(": null")

    grade(kb / "labels.yaml", example_grades())  # the judge's grades: the example's own
    code, res, _ = check(tmp_path, capsys, RUN_CONFIG)
    assert code == 0 and means(res)["Judged@5"] == 1.0
    assert list(res["provenance"]["inputs"])[1:3] == ["gold.yaml", "labels.yaml"]
    assert all(p["severity"] == "warning" for p in res["problems"])


def test_the_bundled_example_has_nothing_left_to_judge(kb, tmp_path, capsys):
    # Its Judged@5 is 0.9000 with BM25, but only because BM25 returns fewer
    # than 5 documents for q02, q05 and q12 (only documents with a score >
    # 0): an empty position counts as unjudged, and no label can fill it.
    code, res, _ = check(tmp_path, capsys, BM25_CONFIG)
    assert means(res)["Judged@5"] == pytest.approx(0.9)
    short = {q["query_id"] for q in res["queries"] if q["values"]["Judged@5"] < 1}
    assert short == {"q02", "q05", "q12"}
    code, text = pool(capsys, "--out", "labels.yaml")
    assert code == 0 and "nothing to judge" in text and not (kb / "labels.yaml").exists()


def test_bm25_back_to_its_ceiling_and_depth_beyond_k(kb, tmp_path, capsys):
    unpooled(kb)
    assert means(check(tmp_path, capsys, BM25_CONFIG)[1])["Judged@5"] < 0.9
    code, text = pool(capsys, "--out", "top10.yaml", "--depth", "10")
    assert code == 0, text
    code, text = pool(capsys, "--out", "top5.yaml")
    five, ten = (load_yaml((kb / f).read_bytes(), f, Limits()) for f in ("top5.yaml", "top10.yaml"))
    count = [sum(len(q["relevant"]) for q in doc["queries"]) for doc in (five, ten)]
    assert 0 < count[0] < count[1]
    grade(kb / "top5.yaml", example_grades())
    listed(kb, BM25_CONFIG, "gold.yaml", "top5.yaml")
    code, res, _ = check(tmp_path, capsys, BM25_CONFIG)
    assert code == 0 and means(res)["Judged@5"] == pytest.approx(0.9)  # what BM25's short lists allow


def test_a_worksheet_alone_is_valid_gold_refused_only_for_its_empty_grades(kb, tmp_path, capsys):
    unpooled(kb)
    pool(capsys, "--config", RUN_CONFIG, "--out", "labels.yaml")
    edit(kb / RUN_CONFIG, "gold: gold.yaml", "gold: labels.yaml")
    code, res, _ = check(tmp_path, capsys, RUN_CONFIG)
    assert code == 2 and {p["kind"] for p in res["problems"]} == {"schema"}
    assert all("not filled in" in p["message"] for p in res["problems"])


def test_depth_below_k_and_changed_only_without_base(kb, capsys):
    code, text = pool(capsys, "--out", "x.yaml", "--depth", "3")
    assert code == 2 and "--depth 3 is below k (5)" in text
    with pytest.raises(SystemExit) as exc:
        main(["pool", "--out", "x.yaml", "--changed-only"])
    assert exc.value.code == 2 and "--changed-only needs --base" in capsys.readouterr().err


def test_invalid_input_is_refused_with_its_problems(kb, capsys):
    write(kb / "gold.yaml", "queries: [")
    code, text = pool(capsys, "--out", "labels.yaml")
    assert code == 2 and "INVALID INPUT" in text and "gold.yaml" in text
    assert not (kb / "labels.yaml").exists()


# ---------------------------------------------------------------- --out


def test_an_existing_out_needs_force(kb, capsys):
    unpooled(kb)
    write(kb / "labels.yaml", "mine")
    code, text = pool(capsys, "--out", "labels.yaml")
    assert code == 2 and "exists and pool never overwrites a file" in text
    assert (kb / "labels.yaml").read_text() == "mine"
    code, text = pool(capsys, "--out", "labels.yaml", "--force")
    assert code == 0 and (kb / "labels.yaml").read_text().startswith("# rag-corpus-check pool")


def test_force_replaces_a_symlink_never_its_target(kb, tmp_path, capsys):
    unpooled(kb)
    target = write(tmp_path / "elsewhere.txt", "keep me")
    os.symlink(target, kb / "labels.yaml")
    code, text = pool(capsys, "--out", "labels.yaml")
    assert code == 2 and target.read_text() == "keep me"
    code, text = pool(capsys, "--out", "labels.yaml", "--force")
    assert code == 0 and target.read_text() == "keep me"
    assert not (kb / "labels.yaml").is_symlink() and "queries:" in (kb / "labels.yaml").read_text()


@pytest.mark.parametrize("out", ["gold.yaml", "corpus.jsonl", BM25_CONFIG])
def test_never_over_an_input(kb, capsys, out):
    unpooled(kb)
    before = (kb / out).read_bytes()
    code, text = pool(capsys, "--out", out, "--force")
    assert code == 2 and "is an input of the check" in text and (kb / out).read_bytes() == before


def test_no_directory_is_made(kb, capsys):
    code, text = pool(capsys, "--out", "new/dir/labels.yaml")
    assert code == 2 and "does not exist; make it first" in text and not (kb / "new").exists()


# ---------------------------------------------------------------- hostile text


HOSTILE_ID = 'doc "#1": \\ - x\u00a0\u200b\U0001f600'


def test_hostile_text_stays_in_its_comment(kb, capsys):
    title = "Trash\nqueries: []\r\n::error file=a,line=1::owned\u2028  - query_id: injected\x85#\x1b[31m" + "T" * 5000
    text = "How long are deleted backups kept? \n\n::warning::x\u2029\n" * 3000
    with open(kb / "corpus.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": HOSTILE_ID, "title": title, "text": text, "type": "faq ::x", "status": "active",
                            "snapshot": "2026-11-30"}) + "\n")
    edit(kb / "gold.yaml", 'query: "How long are deleted backups kept?"',
         'query: "How long are deleted backups kept?\\n::error::q\\u2028- query_id: x"')
    code, out = pool(capsys, "--out", "labels.yaml")
    assert code == 0, out
    sheet = (kb / "labels.yaml").read_text(encoding="utf-8")
    lines = sheet.splitlines()
    assert sheet.count("\n") == len(lines) and "\r" not in sheet and "\x85" not in sheet and "\u2028" not in sheet
    assert all(STRUCTURE.fullmatch(line) and len(line) < 450 for line in lines)
    assert not any(line.lstrip("# ").startswith("::") or "::error" in line for line in lines)
    doc = load_yaml(sheet.encode(), "labels.yaml", Limits())
    [q01] = [q for q in doc["queries"] if q["query_id"] == "q01"]
    assert HOSTILE_ID in q01["relevant"] and q01["relevant"][HOSTILE_ID] is None
    assert "…" in sheet  # the long title and text were cut


@pytest.mark.parametrize("value", ["plain", 'a"b\\c', "#: - [x]", "tab\there", "\u2028\u2029\x85\ufeff", "é😀",
                                   "\x00\x1f\x7f", "\ud800"])
def test_ids_read_back_exactly(value):
    import yaml

    assert yaml.safe_load(f"k: {quoted(value)}") == {"k": value}
    assert "\n" not in quoted(value)


# ---------------------------------------------------------------- with a base


def new_document(kb, doc_id="faq-100"):
    with open(kb / "corpus.jsonl", "a") as f:
        f.write(json.dumps({"id": doc_id, "title": "How long are deleted backups kept in the Trash?",
                            "text": "Deleted backups are kept in the Trash for 30 days.", "type": "faq",
                            "status": "active", "snapshot": "2026-11-30"}) + "\n")


def test_base_and_changed_only(kb, tmp_path, capsys):
    init(kb)
    base = commit(kb, "base")
    new_document(kb)
    commit(kb, "a new document")
    code, text = pool(capsys, "--base", base, "--out", "all.yaml")
    assert code == 0, text
    code, text = pool(capsys, "--base", base, "--changed-only", "--out", "changed.yaml")
    assert code == 0, text
    every, changed = (load_yaml((kb / f).read_bytes(), f, Limits()) for f in ("all.yaml", "changed.yaml"))
    assert every == changed or len(changed["queries"]) < len(every["queries"])
    q01 = next(q for q in changed["queries"] if q["query_id"] == "q01")
    assert "faq-100" in q01["relevant"]
    sheet = (kb / "changed.yaml").read_text()
    assert re.search(r"# head #\d, base — · faq · How long are deleted backups kept in the Trash\?", sheet)
    assert f"with the base {base}" in sheet


def test_the_summary_gives_the_exact_pool_command(kb, tmp_path, capsys):
    init(kb)
    base = commit(kb, "base")
    new_document(kb)
    commit(kb, "a new document")
    console: list[str] = []
    code, res, summary = check(tmp_path, capsys, BM25_CONFIG, "--base", base, console=console)
    command = (f"rag-corpus-check pool --config .rag-corpus-check.yml --base {base} --fetch-base --changed-only "
               f"--out labels-{base[:7]}.yaml")
    assert "New documents in the top K without a judgement" in summary and command in summary
    assert f"without a judgement; to judge them:\n    {command}\n" in console[0]  # the local dry run says it too
    code, text = pool(capsys, *shlex.split(command)[2:])  # the command as the reader would run it
    assert code == 0 and (kb / f"labels-{base[:7]}.yaml").exists(), text
    grade(kb / f"labels-{base[:7]}.yaml", {})
    listed(kb, BM25_CONFIG, "gold.yaml", f"labels-{base[:7]}.yaml")
    commit(kb, "judged")
    code, res, summary = check(tmp_path, capsys, BM25_CONFIG, "--base", base, console=console)
    assert not res["comparison"]["unjudged_new_docs"] and "rag-corpus-check pool" not in summary
    assert "rag-corpus-check pool" not in console[1]


def test_a_chunked_corpus_is_pooled_by_document(kb, capsys):
    unpooled(kb)
    rows = [json.loads(line) for line in (kb / "corpus.jsonl").read_text().splitlines()]
    with open(kb / "corpus.jsonl", "w") as f:
        for d in rows:
            half = len(d["text"]) // 2
            for part, text in (("a", d["text"][:half]), ("b", d["text"][half:])):
                f.write(json.dumps({**d, "id": f"{d['id']}#{part}", "doc_id": d["id"], "text": text}) + "\n")
    code, text = pool(capsys, "--out", "labels.yaml")
    assert code == 0, text
    sheet = (kb / "labels.yaml").read_text()
    doc = load_yaml(sheet.encode(), "labels.yaml", Limits())
    pooled = {d for q in doc["queries"] for d in q["relevant"]}
    assert pooled and pooled <= {d["id"] for d in rows}  # documents (doc_id), not chunks
    first = next(d for d in rows if d["id"] in pooled)
    assert "#   " + " ".join(first["text"].split())[:40] in sheet  # the excerpt is its first chunk's start
