"""Writers of what the check produces: results JSON, Markdown summary,
terminal text and GitHub workflow commands. They read an Outcome (render.py,
shared by the summary and the PR comment, reads the results file's data);
they know nothing of how the inputs were read.

May import: core, safe_io, metrics, retrieval, config, inputs, gate, pipeline.
"""
