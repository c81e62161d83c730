"""The command line: argument parsing and dispatch (:mod:`cli`), one whole
check (:mod:`check`), and the subcommands ``merge`` (:mod:`merge`),
``pool`` (:mod:`pool`, :mod:`worksheet`) and ``embed`` (:mod:`embed`,
:mod:`vectors_refresh`).

May import: every other package.
"""
