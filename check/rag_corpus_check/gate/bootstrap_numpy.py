"""The bootstrap's draws and resampled means in numpy, for large inputs.

The same draws as :func:`bootstrap.draws`: numpy's Mersenne Twister is given
the state of ``random.Random(seed)`` and its ``random_sample`` makes the same
doubles as ``random.random()`` (both take 53 bits of two outputs), so
question ``int(u * n)`` is the same question. Only the sums differ: numpy
adds pairwise, CPython's ``sum`` with compensation, so a resampled mean may
differ in its last bits (``tests/test_bootstrap.py`` holds the two paths
within 1e-12 of each other). Why: at 10,000 questions the pure-Python draws
made the check of a committed run take 2.1x as long (bench/generate.py data,
100k documents; see docs/confidence.md, "Cost").
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

BLOCK = 64  # resamples drawn at once: 64 x n indices in memory


def mersenne(seed: int) -> np.random.RandomState:
    """A numpy generator in the state ``random.Random(seed)`` starts in."""
    state = random.Random(seed).getstate()[1]
    generator = np.random.RandomState()
    generator.set_state(("MT19937", np.array(state[:624], dtype=np.uint32), int(state[624]), 0, 0.0))
    return generator


def resampled_means(columns: Sequence[Sequence[float]], resamples: int, seed: int) -> list[list[float]]:
    """Per column, the mean of each resampled question set (as
    :func:`bootstrap.resampled_means`)."""
    n = len(columns[0])
    generator = mersenne(seed)
    values = [np.asarray(c, dtype=np.float64) for c in columns]
    means = [np.empty(resamples) for _ in columns]
    for start in range(0, resamples, BLOCK):
        count = min(BLOCK, resamples - start)
        picked = (generator.random_sample(count * n) * n).astype(np.intp).reshape(count, n)
        for out, column in zip(means, values, strict=True):
            out[start:start + count] = column[picked].sum(axis=1) / n
    return [m.tolist() for m in means]
