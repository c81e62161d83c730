"""The yardstick: thresholds and the verdict (:mod:`thresholds`), base vs
head comparison with paired tests and ``max_drop`` (:mod:`compare`), and
which rules the gate enforces and how a pull request changed them
(:mod:`rules`).

May import: core, metrics, config.
"""
