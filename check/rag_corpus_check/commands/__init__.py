"""The command line: argument parsing and dispatch (:mod:`cli`), one whole
check (:mod:`check`), and the subcommands ``merge`` (:mod:`merge`),
``pool`` (:mod:`pool`, :mod:`worksheet`), ``add-labels`` (:mod:`add_labels`,
:mod:`add_labels_json`: a graded worksheet into a BEIR/TREC qrels file or a
LlamaIndex dataset), ``validate`` (:mod:`validate`: the inputs without a
ranking; the pre-commit hook) and ``embed`` (:mod:`embed`,
:mod:`vectors_refresh`).

May import: every other package.
"""
