"""The check with a base revision: the base's files read from git without a
checkout (:mod:`tree`), the base measured by the head's own stage
(:func:`pipeline.stages.measure`) and its rules enforced on the head
(:mod:`head_vs_base`).

May import: core, safe_io, metrics, retrieval, config, inputs, gate, pipeline.
"""
