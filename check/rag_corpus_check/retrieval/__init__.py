"""Rankings made in the job: the built-in BM25 (:mod:`bm25`, its tokens from
:mod:`analyzer`, which the question-in-record check shares), the team's
own retriever command (:mod:`external`, run under :mod:`reaper`), and dense
and hybrid retrieval from committed vectors (:mod:`dense`). :mod:`rankers`
puts each behind the one interface (:mod:`protocol`) and lists them by
`retriever.type`; the config names a check's ranker once (``Config.ranker``).

May import: core, safe_io.
"""
