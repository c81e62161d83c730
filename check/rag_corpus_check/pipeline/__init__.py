"""One check's stages: config -> inputs -> rankings -> evaluation ->
validation -> gate (:mod:`stages`), the choice of ranking
(:mod:`rankings`: the config's ranker made and run; the base's vectors for the
view judged by the base's gold set, :mod:`base_gold`), the inputs checked
without a ranking (:mod:`validate_only`), where the check runs
(:mod:`context`) and the typed outcome every reporter reads
(:mod:`outcome`).

May import: core, safe_io, metrics, retrieval, config, inputs, gate.
"""
