"""One check's stages: config -> inputs -> rankings -> evaluation ->
validation -> gate (:mod:`stages`), each returning a frozen value of
:mod:`outcome` (the same :func:`stages.measure` for the head and the
base); the choice of ranking
(:mod:`rankings`: the config's ranker made and run; the base's vectors for the
view judged by the base's gold set, :mod:`base_gold`), the inputs checked
without a ranking (:mod:`validate_only`), where the check runs
(:mod:`context`) and the frozen outcome made of the stages' values, which
every reporter reads (:mod:`outcome`).

May import: core, safe_io, metrics, retrieval, config, inputs, gate.
"""
