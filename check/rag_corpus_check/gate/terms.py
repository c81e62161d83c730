"""The comparison's fixed terms: the tolerance of a mean at a limit, the
paired test's sizes and seed, and the names of the gold sets a comparison
is judged by. A module of their own so that a check without a base can
name them (thresholds, slices, the reports) without importing the
comparison itself (:mod:`compare`, imported only with a base)."""

from __future__ import annotations

from rag_corpus_check.core.text import (
    TOLERANCE as TOLERANCE,  # a mean this close to a limit is at it (shown alike)
)

MIN_QUESTIONS = 10  # fewer paired questions than this: no conclusion is drawn
PERMUTATIONS = 10_000
SEED = 20261130
# Look-ups one measure's test may take (~1 s here): past 2,000 questions the
# permutations shrink to fit, but never below MIN_PERMUTATIONS (a p-value
# resolution of 0.001). The count used is in each delta's `permutations`.
WORK = 2_500_000
MIN_PERMUTATIONS = 1_000

HEAD_GOLD, BASE_GOLD = "head", "base"
GOLD_SETS = {
    HEAD_GOLD: "each revision's own gold set, over the questions in both",
    BASE_GOLD: "the base's gold set (its questions and labels) for both rankings",
}
SAME_GOLD = "the gold set, unchanged in this PR (the base's and the head's are one)"
GOLD_WORDS = {HEAD_GOLD: "the head's gold set", BASE_GOLD: "the base's gold set"}  # in a sentence

# The significance gate's Holm families (gate.significance): the head's own
# rules' one family; under the base's rules, the base's thresholds' measures
# and, apart from them, those the pull request added a threshold on.
HEAD_FAMILY, BASE_FAMILY, ADDED_FAMILY = "head", "base", "added"
FAMILIES = (HEAD_FAMILY, BASE_FAMILY, ADDED_FAMILY)
