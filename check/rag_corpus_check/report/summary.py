"""The job summary (Markdown): verdict and failing rows first, details folded."""

from __future__ import annotations

import heapq

from rag_corpus_check.metrics.evaluate import OK
from rag_corpus_check.metrics.measures import Measure, headline
from rag_corpus_check.pipeline.outcome import ERROR, Outcome
from rag_corpus_check.report import render
from rag_corpus_check.report.changes import add_sections as add_change_sections
from rag_corpus_check.report.confidence import means_note
from rag_corpus_check.report.conventions import convention_lines
from rag_corpus_check.report.markdown import Summary, cell, prose
from rag_corpus_check.report.results import results_dict
from rag_corpus_check.report.rule_lines import rules_line
from rag_corpus_check.report.sources import add_sections as add_retrieval_sections


def build_summary(out: Outcome, results_path: str | None = None, data: dict | None = None) -> Summary:
    """The job summary, rendered from the results file's data ``data``
    (:func:`results_dict` of ``out`` when not given), as the pull-request
    comment is. From ``out`` come only what the results file deliberately
    leaves out: the question texts (``report.show_text``), how many worst
    questions to list, the links of the repository and the workflow run."""
    data = results_dict(out) if data is None else data
    c = out.context
    repo_url = f"{c.server_url}/{c.repository}" if c.server_url and c.repository else None
    s = Summary()
    _head(s, data, repo_url)
    render.thresholds(s, data)
    add_change_sections(s, data)  # on a pull request, what a reviewer reads first
    render.slices(s, data)
    render.problems(s, data)
    add_retrieval_sections(s, data)
    conventions = data["conventions"]
    if data["counts"]["questions"] is not None and conventions:
        worst_count = out.config.worst if out.config is not None else 0
        render.means(s, data, worst_count, [str(m) for m in headline(conventions["k"])], _question_texts(out),
                     means_note(data))
    if conventions:
        s.heading("Conventions", 3)
        s.bullets(convention_lines(conventions, cell))
    render.provenance(s, data, results_path, c.run_url)
    return s


def _commit_link(repo_url: str | None, sha: str) -> str:
    return f"[`{sha}`]({repo_url}/commit/{sha})" if repo_url else f"`{sha}`"


def _head(s: Summary, data: dict, repo_url: str | None) -> None:
    """The verdict and the commit first: a green check on an old revision
    must be visible as such."""
    checked = data["provenance"]["commit"]
    verdict = data["verdict"]
    head = f"{render.ICON[verdict]} **rag-corpus-check: {render.TITLE[verdict]}**{render.title_notes(data)}"
    head += " · " + render.checked_words(data, lambda f: cell(f, 200), lambda sha: _commit_link(repo_url, sha))
    s.heading(head, 2)
    lines = _event_lines(data, repo_url, checked)
    rules = rules_line(data, prose, lambda t: f"`{t}`")
    if rules:
        lines.append(rules[0].upper() + rules[1:])
    if lines:
        s.para(" · ".join(lines))
    render.rules_override(s, data)
    _commit_notes(s, data, checked)


def _event_lines(data: dict, repo_url: str | None, checked: str | None) -> list[str]:
    prov = data["provenance"]
    if prov["event_name"] != "pull_request" or not prov["event_head_sha"]:
        return []
    lines = [f"PR head {_commit_link(repo_url, prov['event_head_sha'])}"]
    if prov["github_sha"] and checked and prov["github_sha"] != checked:
        lines.append(f"event merge commit {_commit_link(repo_url, prov['github_sha'])}")
    return lines


def _commit_notes(s: Summary, data: dict, checked: str | None) -> None:
    prov = data["provenance"]
    if checked and render.uncommitted(data):
        s.para("> [!WARNING]\n> This result is for the working tree, not for a commit: the input files named above "
               f"differ from commit `{checked}` (or it does not hold them). Commit them and run again for a result "
               "that names the commit it is for.")
    if checked and prov["github_sha"] not in (None, checked):
        s.para(
            "> [!WARNING]\n> The workspace `HEAD` is not the commit this workflow run was "
            f"triggered for (`{prov['github_sha']}`); this result is for `{checked}`."
        )
    elif checked and prov["event_name"] == "pull_request" and prov["event_head_sha"] not in (None, checked):
        s.para("The checked commit is the merge of the PR head into its base, as `pull_request` checks out by default.")
    if data["verdict"] == ERROR and any(p["kind"] == "embedding" for p in data["problems"]):
        s.para("The check could not finish: the embedding endpoint failed (see the problems). This is not a problem "
               "with your files; re-run the job, and check the endpoint if it persists.")
    elif data["verdict"] == ERROR:
        during = f" during **{data['stage']}**" if data["stage"] else ""
        s.para(f"The check could not finish because of an internal error{during}. This is a bug or an environment "
               "fault, not a problem with your files; re-run the job, and report it if it persists.")


def worst(out: Outcome) -> tuple[Measure, list]:
    """The measure questions are ranked by, and the worst ok questions."""
    assert out.config is not None and out.evaluation is not None
    key = Measure("nDCG", out.config.k)
    ok = (q for q in out.evaluation.queries if q.status == OK)
    # The questions are listed in natural order (evaluate, merge), and
    # nsmallest keeps that order among equal values, as a stable sort does.
    return key, heapq.nsmallest(max(out.config.worst, 0), ok, key=lambda q: q.values[key])


def gold_set_note(out: Outcome) -> str:
    """Which gold set the head's own means come from, when a base's is compared too."""
    compared = out.base is not None and out.base.comparison is not None
    return " (the head's gold set)" if compared else ""


def _question_texts(out: Outcome) -> dict[str, str | None] | None:
    """question -> text, when the config's `report.show_text` allows it
    (off by default: corpora and questions are often private)."""
    if out.config is None or not out.config.show_text or out.gold is None:
        return None
    return {qid: q.text for qid, q in out.gold.queries.items()}
