"""A Markdown corpus checked with --base on real throw-away git repositories:
the base's pages read from the base commit's tree (never checked out), the
PRs a docs team makes (rewrite, delete, move, new page, unrelated edit, a
change of how pages are chunked)."""

import json
import shlex

import pytest
import yaml

from conftest import off_runner
from rag_corpus_check.commands.cli import main
from rag_corpus_check.core import gitrepo
from support import repos

CONFIG = """version: 1
corpus:
  format: markdown
  paths: ["docs/**/*.md"]
  exclude: ["docs/drafts/**"]
  chunk: heading
gold: gold.yaml
k: 3
thresholds: {nDCG@3: 0.5}
"""
PAGES = {
    "docs/billing/refunds.md": "---\ntitle: Refunds\ntype: policy\n---\n# Refunds\n\nHow refunds work.\n\n"
    "## How long a refund takes\n\nA refund reaches the card within five business days.\n\n"
    "```sh\n# refund-cli status  (a comment, not a heading)\n```\n",
    "docs/billing/invoices.md": "# Invoices\n\nInvoices are emailed monthly as PDF files.\n\n## VAT numbers\n\n"
    "Add a VAT number to the invoice from the account settings.\n",
    "docs/shipping/countries.md": "# Shipping countries\n\nWe ship parcels to every country of the European Union.\n",
    "docs/shipping/tracking.md": "# Tracking a parcel\n\nEach parcel has a tracking link in the dispatch email.\n",
    "docs/account/password.md": "# Password reset\n\nUse the link on the sign-in page to choose a new password when you forgot it.\n",
    "docs/drafts/secret.md": "# Refund refund refund\n\nA draft page about refunds, refunds and refund times.\n",
}
GOLD = """queries:
  - query_id: refund-time
    query: how long does a refund take to reach my card
    relevant: {"docs/billing/refunds.md": 2}
  - query_id: vat
    query: add a VAT number to an invoice
    relevant: {"docs/billing/invoices.md": 2}
  - query_id: ship
    query: which countries do you ship parcels to
    relevant: {"docs/shipping/countries.md": 2}
  - query_id: password
    query: reset a forgotten password
    relevant: {"docs/account/password.md": 2}
"""


def _write(repo, pages):
    for rel, text in pages.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    path = repos.init(tmp_path / "site")
    (path / ".rag-corpus-check.yml").write_text(CONFIG)
    (path / "gold.yaml").write_text(GOLD)
    _write(path, PAGES)
    off_runner(monkeypatch, path)
    return path


def run(tmp_path, capsys, *argv):
    out = tmp_path / "out"
    code = main(["--output", str(out / "r.json"), "--summary-file", str(out / "s.md"), *argv])
    text = capsys.readouterr().out
    return code, text, json.loads((out / "r.json").read_text()), (out / "s.md").read_text()


def _delta(res, measure="nDCG@3"):
    return next(d for d in res["comparison"]["deltas"] if d["measure"] == measure)["delta"]


def test_the_head_alone_reads_pages_and_sections(repo, tmp_path, capsys):
    code, text, res, _ = run(tmp_path, capsys)
    assert code == 0, text
    assert res["metrics"]["nDCG@3"] == 1.0
    assert "chunked corpus, evaluated per document" in text
    assert res["counts"]["documents"] == 5  # the drafts left out


def test_a_rewrite_of_a_relevant_page_fails_and_names_the_question(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    (repo / "docs/billing/refunds.md").write_text("# Money back\n\nContact support.\n")
    repos.commit(repo, "rewrite the refunds page")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert res["comparison"]["rules"]["source"] == "base"
    dropped = [q["query_id"] for q in res["comparison"]["questions"] if (q["delta"] or 0) < 0]
    assert dropped == ["refund-time"]
    assert r"refund\-time" in summary  # escaped for Markdown


def test_a_deleted_relevant_page_fails(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    (repo / "docs/shipping/countries.md").unlink()
    repos.commit(repo, "delete a page")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code != 0, text
    assert res["verdict"] != "pass"


def test_an_unrelated_edit_passes_with_zero_deltas(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    repos.edit(repo / "docs/shipping/tracking.md", "dispatch email", "dispatch e-mail")
    repos.commit(repo, "typo")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert all(d["delta"] == 0 for d in res["comparison"]["deltas"]), res["comparison"]["deltas"]


def test_a_new_page_in_the_top_k_unjudged_is_reported_and_pooled(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    _write(repo, {"docs/billing/card-refunds.md": "# Card refunds\n\nHow long a refund takes to reach a card: "
                  "five business days for a card refund.\n"})
    repos.commit(repo, "a new page")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    new = res["comparison"]["unjudged_new_docs"]
    assert {"query_id": "refund-time", "doc_ids": ["docs/billing/card-refunds.md"]} in new, new
    assert res["comparison"]["pool_command"].startswith("rag-corpus-check pool")
    assert r"card\-refunds" in summary
    argv = shlex.split(res["comparison"]["pool_command"])[1:]
    argv[argv.index("--out") + 1] = str(tmp_path / "sheet.yaml")
    assert main(argv) == 0, capsys.readouterr().out
    sheet = yaml.safe_load((tmp_path / "sheet.yaml").read_text())
    pooled = {q["query_id"]: q["relevant"] for q in sheet["queries"]}
    assert pooled["refund-time"]["docs/billing/card-refunds.md"] is None  # to be judged


def test_changing_chunk_is_a_rule_change(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    repos.edit(repo / ".rag-corpus-check.yml", "chunk: heading", "chunk: file")
    repos.commit(repo, "chunk by file")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert "`corpus.chunk` changed: heading → file" in res["comparison"]["rules"]["loosened"]
    repos.edit(repo / ".rag-corpus-check.yml", "version: 1", "version: 1\nrule_change_reason: pages are short")
    repos.commit(repo, "with a reason")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert res["comparison"]["rules"]["source"] == "head-override"


@pytest.mark.parametrize("setting", ["paths", "exclude"])
def test_changing_which_pages_is_a_rule_change(repo, tmp_path, capsys, setting):
    base = repos.commit(repo, "base")
    old, new = {"paths": ('["docs/**/*.md"]', '["docs/billing/*.md"]'),
                "exclude": ('["docs/drafts/**"]', "[]")}[setting]
    repos.edit(repo / ".rag-corpus-check.yml", old, new)
    repos.commit(repo, "other pages")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code != 0, text
    assert any(f"`corpus.{setting}` changed" in m for m in res["comparison"]["rules"]["loosened"])


def test_the_base_pages_are_read_with_two_git_processes_whatever_their_number(repo, tmp_path, capsys, monkeypatch):
    calls = []
    real = gitrepo.Checkout.git

    def counted(self, *args, **kwargs):
        calls.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(gitrepo.Checkout, "git", counted)
    counts = []
    for n in (0, 40):
        _write(repo, {f"docs/more/page-{i}.md": f"# Page {i}\n\nText {i}.\n" for i in range(n)})
        base = repos.commit(repo, f"base with {n} more pages")
        calls.clear()
        code, text, _, _ = run(tmp_path, capsys, "--base", base)
        assert code == 0, text
        counts.append(len(calls))
    assert counts[0] == counts[1], counts  # the same git processes for 6 pages and for 46


def test_a_pure_move_passes_and_is_listed(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    (repo / "docs/payments").mkdir()
    (repo / "docs/billing/refunds.md").rename(repo / "docs/payments/refunds.md")
    repos.commit(repo, "move the refunds page")
    code, text, res, summary = run(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert all(d["delta"] == 0 for d in res["comparison"]["deltas"]), res["comparison"]["deltas"]
    notes = res["comparison"]["notes"]
    assert any("`docs/billing/refunds.md` → `docs/payments/refunds.md`" in n for n in notes), notes
    carried = [p for p in res["problems"] if "carried to the new path" in p["message"]]
    assert [(p["file"], p["line"], p["severity"]) for p in carried] == [("gold.yaml", 4, "warning")], carried
    assert "docs/payments/refunds.md" in carried[0]["message"]
    assert res["comparison"]["rules"]["loosened"] == [] and res["comparison"]["unjudged_new_docs"] == []
    assert res["comparison"]["changed_relevant"] == []  # moved unchanged: the same document
    assert "moved with the content unchanged" in summary


def test_a_move_with_the_gold_set_updated_passes_without_a_warning(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    (repo / "docs/shipping/countries.md").rename(repo / "docs/shipping/where-we-ship.md")
    repos.edit(repo / "gold.yaml", "docs/shipping/countries.md", "docs/shipping/where-we-ship.md")
    repos.commit(repo, "rename a page and its label")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code == 0, text
    assert not [p for p in res["problems"] if "moved" in p["message"]]
    assert all(d["delta"] == 0 for d in res["comparison"]["deltas"])
    assert not res["comparison"]["gold_changed"]
    assert res["comparison"]["changed_relevant"] == []  # moved unchanged: the same document


def test_a_page_moved_and_edited_is_a_new_page_and_the_old_label_is_on_a_deleted_page(repo, tmp_path, capsys):
    """The label is not carried: the old page is deleted, so its label is a
    warning and it is measured as a relevant page nobody can retrieve."""
    base = repos.commit(repo, "base")
    (repo / "docs/shipping/countries.md").unlink()
    _write(repo, {"docs/shipping/where.md": "# Shipping countries\n\nWe ship parcels to every EU country.\n"})
    repos.commit(repo, "move and edit")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code == 1, text
    assert not [p for p in res["problems"] if "carried to the new path" in p["message"]]
    assert any("deletes" in p["message"] and p["id"] == "docs/shipping/countries.md" and p["severity"] == "warning"
               for p in res["problems"]), res["problems"]
    assert [(e["doc_id"], e["change"]) for e in res["comparison"]["changed_relevant"]] == [
        ("docs/shipping/countries.md", "deleted")]


def test_a_symlinked_page_at_the_base_is_refused_without_reading_it(repo, tmp_path, capsys):
    (repo / "docs/shipping/countries.md").unlink()
    (repo / "docs/shipping/countries.md").symlink_to("/etc/passwd")
    base = repos.commit(repo, "a base with a symlinked page")
    (repo / "docs/shipping/countries.md").unlink()
    _write(repo, {"docs/shipping/countries.md": PAGES["docs/shipping/countries.md"]})
    repos.commit(repo, "the page itself")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code == 2, text
    assert any("is a symlink" in p["message"] and base[:12] in p["message"] for p in res["problems"]), res["problems"]
    assert "root:" not in text


def test_the_base_config_decides_which_pages_the_base_has(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    # the head reads the drafts too (a rule change, with a reason); the base is still read as its config says
    repos.edit(repo / ".rag-corpus-check.yml", '  exclude: ["docs/drafts/**"]\n', "")
    repos.edit(repo / ".rag-corpus-check.yml", "version: 1", "version: 1\nrule_change_reason: index the drafts")
    repos.commit(repo, "drafts in")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert res["comparison"]["rules"]["source"] == "head-override"
    new = {d for e in res["comparison"]["unjudged_new_docs"] for d in e["doc_ids"]}
    assert new == {"docs/drafts/secret.md"}, res["comparison"]["unjudged_new_docs"]


def test_a_change_of_chunking_reports_no_page_as_new(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    repos.edit(repo / ".rag-corpus-check.yml", "chunk: heading", "chunk: file")
    repos.commit(repo, "chunk by file")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert res["comparison"]["unjudged_new_docs"] == []  # every page was there, as sections


def test_a_deleted_page_with_its_question_removed_still_fails_on_the_bases_gold(repo, tmp_path, capsys):
    base = repos.commit(repo, "base")
    (repo / "docs/shipping/countries.md").unlink()
    repos.edit(repo / "gold.yaml", '''  - query_id: ship
    query: which countries do you ship parcels to
    relevant: {"docs/shipping/countries.md": 2}
''', "")
    repos.commit(repo, "delete a page and the question it answers")
    code, text, res, _ = run(tmp_path, capsys, "--base", base)
    assert code == 1 and res["verdict"] == "fail", text
    assert any("judged by the base's gold set" in reason for reason in res["gate_reasons"]), res["gate_reasons"]
