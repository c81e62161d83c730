"""Rankings made in the job: the built-in BM25 (:mod:`bm25`), the team's
own retriever command (:mod:`external`, run under :mod:`reaper`), and dense
and hybrid retrieval from committed vectors (:mod:`dense`). :mod:`rankers`
is the one interface to them and the registry of `retriever.type`s; the
config names a check's ranker once (``Config.ranker``).

May import: core, safe_io.
"""
