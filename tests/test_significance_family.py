"""Under the base's rules the significance gate corrects over the base's
family (gate/significance.py): thresholds a pull request adds are tested as
a family of their own, so adding them can never widen the base's Holm
correction. The attack on a real repository (through the CLI and through
the action's own run step), and a property over generated configs: a pull
request that only ADDS rules (thresholds, slices, measures, significance)
is never judged more leniently than the same pull request without them."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import write
from rag_corpus_check.commands.cli import main
from rag_corpus_check.config.load import Threshold
from rag_corpus_check.gate.compare import Comparison, Delta, View
from rag_corpus_check.gate.significance import significance_gate
from rag_corpus_check.metrics.measures import Measure
from support.github import run_action_step
from support.repos import commit, git, init

CONFIG = ".rag-corpus-check.yml"
QUESTIONS = 30
DOCS = [f"d{i:02d}" for i in range(QUESTIONS + 20)]
ALWAYS_MET = ("R@10", "P@20", "R@5", "P@5", "R@3", "P@10", "R@20")  # a move from rank 1 to 2 changes none
ATTACK_MOVED = 8  # answers moved from rank 1 to rank 2: nDCG@5 -0.098, p ≈ 0.0078 (2 of 256 sign patterns)


ND, P5, R5, R10 = Measure("nDCG", 5), Measure("P", 5), Measure("R", 5), Measure("R", 10)


def _comparison(*deltas: Delta) -> Comparison:
    out = Comparison("base", "0" * 40)
    out.head_gold = View("head", list(deltas), paired=50)
    return out


def test_the_base_family_is_corrected_alone_and_the_added_one_apart():
    deltas = (Delta(ND, .8, .7, 0.02, 50, 10_000), Delta(P5, .5, .45, 0.03, 50, 10_000),
              Delta(R5, .6, .6, 1.0, 50, 10_000), Delta(R10, .6, .5, 0.013, 50, 10_000))
    thresholds = [Threshold(m, 0) for m in (ND, P5, R5, R10)]
    one = significance_gate(0.05, thresholds, _comparison(*deltas))  # the head's rules: one family of four
    assert {t.family for t in one.tested} == {"head"} and one.passed  # 0.013 x 4 = 0.052: none fails
    got = significance_gate(0.05, thresholds, _comparison(*deltas), frozenset({ND, P5}))
    by = {t.measure: t for t in got.tested}
    assert (by[ND].family, by[P5].family, by[R5].family, by[R10].family) == ("base", "base", "added", "added")
    assert by[ND].adjusted == pytest.approx(0.04) and by[P5].adjusted == pytest.approx(0.04)  # two, not four
    assert by[R10].adjusted == pytest.approx(0.026) and by[R10].failed  # an added measure can fail too
    assert not got.passed and len(got.reasons()) == 3
    alone = significance_gate(0.05, thresholds[:2], _comparison(*deltas), frozenset({ND, P5}))
    assert [(t.measure, t.adjusted) for t in alone.tested] == [(t.measure, t.adjusted) for t in got.tested[:2]]


def test_each_family_has_its_own_floor_and_the_additions_do_not_raise_the_base_s():
    deltas = [Delta(ND, .8, .1, 1 / 1_001, 50, 1_000)] + [
        Delta(Measure("R", k), .5, .5, 1.0, 50, 1_000) for k in range(1, 61)]
    thresholds = [Threshold(d.measure, 0) for d in deltas]
    got = significance_gate(0.05, thresholds, _comparison(*deltas), frozenset({ND}))
    assert got.floors == {"base": pytest.approx(1 / 1_001), "added": pytest.approx(60 / 1_001)}
    assert not got.passed and not got.reachable
    assert got.notes() == ["`significance.alpha` 0.05 is below the smallest Holm-adjusted p-value the permutations "
                           "can give the measures this pull request added a threshold on (0.05994): that family "
                           "cannot fail"]
    one = significance_gate(0.05, thresholds, _comparison(*deltas))  # one family of 61: the drop is not seen
    assert one.passed and one.notes()[-1].endswith("(0.06094): this gate cannot fail")


def _tags(q: int) -> list[str]:
    return [f"half{q % 2}", f"tenth{q % 10}"]


TAGS = sorted({t for q in range(QUESTIONS) for t in _tags(q)})  # 12 tags, so fewer than 50 slices


def _files(repo: Path) -> None:
    """30 questions, one relevant document each (d<q>), and 20 fillers."""
    corpus = [{"id": d, "title": f"Document {d}", "text": f"Text of document {d} about topic {d}.", "type": "faq",
               "status": "active"} for d in DOCS]
    gold = [{"query_id": f"q{q:02d}", "query": f"Where is topic d{q:02d}?", "relevant": {f"d{q:02d}": 1},
             "tags": _tags(q)} for q in range(QUESTIONS)]
    write(repo / "corpus.jsonl", "".join(json.dumps(d) + "\n" for d in corpus))
    write(repo / "gold.jsonl", "".join(json.dumps(g) + "\n" for g in gold))
    _run(repo, {})


def _run(repo: Path, moved: dict[int, int]) -> None:
    """The committed run: each question's answer at rank 1, except ``moved``
    (question -> the 1-based rank its answer is moved to)."""
    fillers = DOCS[QUESTIONS:]
    lines = []
    for q in range(QUESTIONS):
        ranking = list(fillers)
        ranking.insert(moved.get(q, 1) - 1, f"d{q:02d}")
        lines.append(json.dumps({"query_id": f"q{q:02d}", "ranking": ranking}) + "\n")
    write(repo / "run.jsonl", "".join(lines))


def _config(repo: Path, rules: dict) -> None:
    cfg = {"version": 1, "corpus": "corpus.jsonl", "gold": "gold.jsonl", "run": "run.jsonl", "k": 5,
           "relevance": {"min_grade": 1, "max_grade": 1},
           # only the rules under test can fail: no per-question limit, no judged-only surprises
           "per_question": {"max_questions": QUESTIONS}, **rules}
    write(repo / CONFIG, yaml.safe_dump(cfg, sort_keys=False))


def _check(repo: Path, base: str, capsys) -> tuple[int, dict, str]:
    out = repo.parent / "out"
    code = main(["--config", CONFIG, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md"),
                 "--base", base])
    console = capsys.readouterr().out
    return code, json.loads((out / "r.json").read_text()), console


BASE_RULES = {"thresholds": {"nDCG@5": 0.5}, "significance": {"alpha": 0.05}}
PADDED = {**BASE_RULES, "thresholds": {"nDCG@5": 0.5, **{m: 0 for m in ALWAYS_MET}}}


@pytest.fixture
def attacked(tmp_path, monkeypatch):
    """The base (a significance gate over nDCG@5) and a PR moving 8 answers
    to rank 2; the PR's config is the test's to write."""
    repo = init(tmp_path / "kb")
    monkeypatch.chdir(repo)
    for var in [v for v in os.environ if v.startswith(("GITHUB_", "RUNNER_"))]:
        monkeypatch.delenv(var, raising=False)
    _files(repo)
    _config(repo, BASE_RULES)
    base = commit(repo, "base")
    _run(repo, dict.fromkeys(range(ATTACK_MOVED), 2))
    return repo, base


def _significance_reasons(console: str) -> list[str]:
    return [line for line in console.splitlines() if "and the drop is significant" in line]


def test_the_drop_alone_fails_on_significance(attacked, capsys):
    repo, base = attacked
    commit(repo, "8 answers to rank 2")
    code, res, console = _check(repo, base, capsys)
    assert code == 1 and res["rules_source"] == "base"
    assert all(t["passed"] for t in res["thresholds"])  # only the paired test fails
    assert _significance_reasons(console), console


def test_always_met_thresholds_the_pr_adds_do_not_dilute_the_base_family(attacked, capsys):
    repo, base = attacked
    _config(repo, PADDED)
    commit(repo, "8 answers to rank 2, and seven thresholds that are always met")
    code, res, console = _check(repo, base, capsys)
    assert res["rules_source"] == "base" and all(t["passed"] for t in res["thresholds"])
    assert code == 1, console
    reasons = _significance_reasons(console)
    assert len(reasons) == 2 and all("`nDCG@5` dropped -0.0984" in r for r in reasons), reasons
    tested = {(t["gold"], t["measure"]): t for t in res["significance"]["tested"]}
    nd = tested["head", "nDCG@5"]
    assert nd["family"] == "base" and nd["failed"] and nd["adjusted_p_value"] == nd["p_value"]  # a family of one
    assert {m for (g, m), t in tested.items() if t["family"] == "added"} == set(ALWAYS_MET)


def test_through_the_action_run_step_on_a_pull_request(attacked, tmp_path):
    repo, base = attacked
    _config(repo, PADDED)
    head = commit(repo, "8 answers to rank 2, and seven thresholds that are always met")
    done, outputs = run_action_step(repo, tmp_path, base, head, summary="false")
    assert outputs["rules-source"] == "base" and outputs["verdict"] == "fail", outputs
    assert done.returncode == 1, done.stdout + done.stderr
    assert "`nDCG@5` dropped -0.0984 vs base judged by the head's gold set, and the drop is significant" \
        in done.stdout, done.stdout


# ------------------------------------------------- the property: additions only add

PROPS = settings(max_examples=20, deadline=None, database=None, derandomize=os.environ.get("CI") == "true",
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
POOL = ("nDCG@5", "nDCG@3", "nDCG@10", "P@1", "P@5", "R@1", "R@3", "R@10", "RR@10", "Success@1", "AP@10", "R@20",
        "P@10", "P@20", "nDCG@20")
MINIMUMS = (0, 0.5, 0.7, 0.9, 1)
SLICE_SIZES = (1, 3, 10)  # min_questions: the tenth<n> slices hold 3 questions, half<n> 15
ALPHAS = (0.01, 0.05, 0.1, 0.2)


def _threshold(draw, pool: list[str] | tuple[str, ...], most: int) -> dict:
    names = draw(st.lists(st.sampled_from(pool), unique=True, max_size=most)) if pool else []
    drop = st.one_of(st.none(), st.sampled_from((0.0, 0.05, 0.2)))
    out = {}
    for name in names:
        minimum, max_drop = draw(st.sampled_from(MINIMUMS)), draw(drop)
        out[name] = minimum if max_drop is None else {"min": minimum, "max_drop": max_drop}
    return out


@st.composite
def base_rules(draw) -> dict:
    rules: dict = {"thresholds": _threshold(draw, POOL, 4)}
    alpha = draw(st.one_of(st.none(), st.sampled_from(ALPHAS)))
    if alpha is not None:
        rules["significance"] = {"alpha": alpha}
    tags = draw(st.lists(st.sampled_from(TAGS), unique=True, max_size=3))
    slices = {t: {"thresholds": _threshold(draw, POOL, 2), "min_questions": draw(st.sampled_from(SLICE_SIZES))}
              for t in tags}
    if slices:
        rules["slices"] = slices
    return rules


@st.composite
def additions(draw, base: dict) -> dict:
    """``base`` with rules only added: thresholds on new measures (top-level
    and in the base's slices), new slices, reported measures, a significance
    gate where there was none or a larger alpha. The slices stay far below 50
    (12 tags in all): how many slices a config names is not what this tests
    (a display cap on slices is fixed apart)."""
    out = json.loads(json.dumps(base))
    new = [m for m in POOL if m not in out["thresholds"]]
    out["thresholds"].update(_threshold(draw, new, 10))
    slices = out.setdefault("slices", {})
    for rule in slices.values():
        rule["thresholds"].update(_threshold(draw, [m for m in POOL if m not in rule["thresholds"]], 2))
    for tag in draw(st.lists(st.sampled_from([t for t in TAGS if t not in slices]), unique=True, max_size=4)):
        slices[tag] = {"thresholds": _threshold(draw, POOL, 2), "min_questions": draw(st.sampled_from(SLICE_SIZES))}
    if not slices:
        del out["slices"]
    measures = draw(st.lists(st.sampled_from(("RR@10", "Success@1", "AP@100", "Rprec", "nDCG@20")), unique=True,
                             max_size=3))
    if measures:
        out["measures"] = measures
    alpha = (base.get("significance") or {}).get("alpha")
    raised = draw(st.one_of(st.none(), st.sampled_from([a for a in ALPHAS if alpha is None or a > alpha] or [alpha])))
    if raised is not None:
        out["significance"] = {"alpha": raised}
    return out


def _reasons(console: str) -> set[str]:
    """The gate's reasons, every number but a measure's cut-off made `#`
    (an added rule may change the figures a reason quotes, e.g. the alpha)."""
    lines = console.splitlines()
    start = lines.index("  the gate failed because:") + 1 if "  the gate failed because:" in lines else len(lines)
    found = []
    for line in lines[start:]:
        if not line.startswith("    - "):
            break
        found.append(re.sub(r"(?<![@\w])[-+]?\d+(?:\.\d+)?", "#", line[6:]))
    return set(found)


@pytest.fixture
def kb30(tmp_path, monkeypatch):
    """The 30-question repository, built once per test (each example commits
    its base on top). Fewer sign flips and resamples (1,000 and 200) keep the
    examples cheap: they only coarsen the p-values, which the two checks an
    example compares share."""
    from rag_corpus_check.gate import bootstrap, compare

    monkeypatch.setattr(compare, "PERMUTATIONS", 1_000)
    monkeypatch.setattr(compare, "MIN_PERMUTATIONS", 1_000)
    monkeypatch.setattr(bootstrap, "RESAMPLES", 200)
    monkeypatch.setattr(bootstrap, "MIN_RESAMPLES", 200)
    repo = init(tmp_path / "kb")
    git(repo, "config", "gc.auto", "0")  # no background gc holding the index while the next example commits
    git(repo, "config", "maintenance.auto", "false")
    monkeypatch.chdir(repo)
    for var in [v for v in os.environ if v.startswith(("GITHUB_", "RUNNER_"))]:
        monkeypatch.delenv(var, raising=False)
    _files(repo)
    return repo


RANKS = st.sampled_from((2, 3, 6, 12))
# The pull request's ranking: answers moved down, any of them anywhere, or the first n to one rank (as in the
# attack): 4 to 10 alike drops give p-values (2 / 2^n) near the alphas, where a wider family changes the verdict.
MOVED = st.one_of(st.dictionaries(st.integers(0, QUESTIONS - 1), RANKS, max_size=QUESTIONS),
                  st.builds(lambda n, rank: dict.fromkeys(range(n), rank), st.integers(0, QUESTIONS), RANKS),
                  st.builds(lambda n, rank: dict.fromkeys(range(n), rank), st.integers(4, 10), RANKS))


@PROPS
@given(data=st.data(), moved=MOVED)
def test_adding_rules_never_makes_the_verdict_more_lenient(kb30, capsys, data, moved):
    base_cfg = data.draw(base_rules(), "base")
    added = data.draw(additions(base_cfg), "added")
    _run(kb30, {})
    _config(kb30, base_cfg)
    base = commit(kb30, "base")
    _run(kb30, moved)  # the pull request: its ranking, and the base's rules as they were...
    code, res, console = _check(kb30, base, capsys)
    _config(kb30, added)  # ...and the same with rules added
    code_added, res_added, console_added = _check(kb30, base, capsys)
    assert res["rules_source"] == "base" == res_added["rules_source"]
    event(f"exit {code} -> {code_added}")
    assert code in (0, 1), console
    assert code_added >= code, console_added
    if code_added == 1:
        assert _reasons(console) <= _reasons(console_added), (console, console_added)
