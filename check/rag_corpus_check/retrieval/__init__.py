"""Rankings made in the job: the built-in BM25 (:mod:`bm25`), the team's
own retriever command (:mod:`external`, run under :mod:`reaper`), and dense
and hybrid retrieval from committed vectors (:mod:`dense`). These are the
algorithms; which one a check uses is decided in :mod:`pipeline.rankings`.

May import: core, safe_io.
"""
