"""Bootstrap intervals (gate/bootstrap.py): the properties an interval must
have, and its value recomputed independently with numpy (whose legacy
RandomState seeded with [SEED] is the same Mersenne Twister sequence as
Python's Random(SEED))."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from rag_corpus_check.gate import bootstrap as B

VALUES = [0.0, 0.25, 1.0, 0.5, 0.0, 1.0, 0.75, 0.2, 0.9, 0.0, 0.33, 1.0]
# 95 % interval of the mean of VALUES, 2,000 resamples, seed 20261130, as
# computed by numpy (see _numpy_interval) when this test was written.
PINNED = (0.27491666666666675, 0.7192083333333331)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
samples = st.lists(unit, min_size=1, max_size=40)


def _numpy_interval(values: list[float], resamples: int, seed: int = B.SEED) -> tuple[float, float]:
    """The same percentile bootstrap, written with numpy: the draws from
    RandomState([seed]).random_sample, the means, np.percentile."""
    n = len(values)
    u = np.random.RandomState([seed]).random_sample(n * resamples).reshape(resamples, n)
    means = np.asarray(values)[(u * n).astype(np.int64)].mean(axis=1)
    tail = (1 - B.LEVEL) / 2
    return float(np.percentile(means, 100 * tail)), float(np.percentile(means, 100 * (1 - tail)))


def _one(values: list[float], resamples: int | None = None) -> B.Interval:
    found = B.intervals([values], resamples=resamples)[0]
    assert found is not None
    return found


def test_the_interval_equals_numpys_and_the_pinned_value():
    got = _one(VALUES)
    want = _numpy_interval(VALUES, B.RESAMPLES)
    assert got.resamples == B.RESAMPLES == 2000
    assert abs(got.low - want[0]) < 1e-12 and abs(got.high - want[1]) < 1e-12
    assert abs(got.low - PINNED[0]) < 1e-12 and abs(got.high - PINNED[1]) < 1e-12


def _numpy_paired(base: list[float], head: list[float], resamples: int) -> tuple[float, float]:
    """The paired interval with numpy: the same draws index both sides; head mean − base mean."""
    n = len(base)
    u = np.random.RandomState([B.SEED]).random_sample(n * resamples).reshape(resamples, n)
    picked = (u * n).astype(np.int64)
    diffs = np.asarray(head)[picked].mean(axis=1) - np.asarray(base)[picked].mean(axis=1)
    tail = (1 - B.LEVEL) / 2
    return float(np.percentile(diffs, 100 * tail)), float(np.percentile(diffs, 100 * (1 - tail)))


def test_a_paired_interval_resamples_the_questions_in_pairs_numpy_agrees():
    base = VALUES
    head = [min(1.0, v + (0.1 if i % 3 else -0.2)) for i, v in enumerate(VALUES)]
    got = B.paired([base], [head])[0]
    want = _numpy_paired(base, head, B.RESAMPLES)
    assert abs(got.delta.low - want[0]) < 1e-12 and abs(got.delta.high - want[1]) < 1e-12
    # The base's and the head's means get the intervals they get alone (the same draws).
    assert got.base == _one(base) and got.head == _one(head)
    assert B.paired_intervals([base], [head]) == [got.delta]


def test_the_same_seed_gives_the_same_interval_in_another_process():
    """A fresh interpreter with another hash seed: the same numbers."""
    code = ("from rag_corpus_check.gate.bootstrap import intervals; "
            f"i = intervals([{VALUES!r}])[0]; print(repr(i.low), repr(i.high))")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "check"), "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    here = _one(VALUES)
    assert done.stdout.split() == [repr(here.low), repr(here.high)]


def test_another_seed_gives_another_interval():
    """The seed matters (so a fixed one is what makes the interval repeatable)."""
    assert B.intervals([VALUES], seed=B.SEED + 1)[0] != _one(VALUES)


@settings(max_examples=60, deadline=None)
@given(samples)
def test_the_interval_contains_the_point_estimate(values):
    got = _one(values, resamples=400)
    mean = sum(values) / len(values)
    assert got.low - 1e-12 <= mean <= got.high + 1e-12


@settings(max_examples=40, deadline=None)
@given(st.lists(unit, min_size=2, max_size=30).filter(lambda v: max(v) - min(v) > 1e-6))
def test_it_narrows_when_every_question_is_duplicated(values):
    """The property tested: for questions with at least two distinct
    values, the interval over the same questions each taken 4 times (the
    same distribution of values, 4x the questions) is strictly narrower,
    with the same seed and number of resamples — in theory by half."""
    once, four = _one(values, resamples=400), _one(values * 4, resamples=400)
    assert four.width < once.width


@settings(max_examples=40, deadline=None)
@given(samples, samples)
def test_a_paired_interval_contains_the_mean_difference(base, head):
    n = min(len(base), len(head))
    base, head = base[:n], head[:n]
    got = B.paired_intervals([base], [head], resamples=400)[0]
    assert got is not None
    delta = sum(h - b for b, h in zip(base, head, strict=True)) / n
    assert got.low - 1e-12 <= delta <= got.high + 1e-12


def test_constant_values_give_a_point_and_no_questions_give_none():
    assert _one([0.5] * 7).width == 0
    assert B.intervals([[], []]) == [None, None]


def test_the_resamples_shrink_with_the_questions_but_not_below_the_floor():
    assert B.resamples_for(10) == B.RESAMPLES
    assert B.resamples_for(1500) == B.WORK // 1500 < B.RESAMPLES
    assert B.resamples_for(10**6) == B.MIN_RESAMPLES


def test_one_set_of_draws_serves_every_column():
    """Two columns in one call: each gets the interval it gets alone."""
    other = [1 - v for v in VALUES]
    together = B.intervals([VALUES, other])
    assert together == [_one(VALUES), _one(other)]


def test_merged_shards_give_the_intervals_of_the_unsharded_run(repo, tmp_path, capsys):
    """The same questions in the same order: the same intervals, bit for bit."""
    import json

    from rag_corpus_check.commands.cli import main

    def run(name, *argv):
        out = tmp_path / name
        main([*argv, "--output", str(out / "r.json"), "--summary-file", str(out / "s.md")])
        return json.loads((out / "r.json").read_text()), str(out / "r.json")

    whole, _ = run("whole")
    paths = [run(f"s{i}", "--shard", f"{i}/3")[1] for i in (1, 2, 3)]
    merged, _ = run("merged", "merge", *paths)
    capsys.readouterr()
    assert whole["confidence"]["means"] and merged["confidence"] == whole["confidence"]


def test_the_draws_are_random_randoms_and_the_means_sum_them():
    """numpy's generator starts in ``random.Random(SEED)``'s state: the same
    doubles, so the same questions; each mean is its drawn questions' sum / n."""
    import random

    rnd = random.Random(B.SEED)
    assert B.mersenne(B.SEED).random_sample(1000).tolist() == [rnd.random() for _ in range(1000)]
    columns = [np.random.default_rng(7).random(300).tolist(), [float(i) for i in range(300)]]
    rnd = random.Random(B.SEED)
    picked = [[int(rnd.random() * 300) for _ in range(300)] for _ in range(100)]
    means = B.resampled_means(columns, 100)
    assert len(means) == 2 and all(len(m) == 100 for m in means)
    assert means[1] == [sum(p) / 300 for p in picked]  # sums of integers are exact in any order
    assert max(abs(m - sum(columns[0][i] for i in p) / 300) for m, p in zip(means[0], picked, strict=True)) < 1e-12
