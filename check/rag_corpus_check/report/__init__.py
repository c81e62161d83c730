"""Writers of what the check produces: results JSON, Markdown summary,
terminal text and GitHub workflow commands. They read an Outcome; they know
nothing of how the inputs were read.

May import: core, safe_io, metrics, retrieval, config, inputs, gate, pipeline.
"""
