"""Shared pieces every layer uses: safe text for messages (:mod:`text`),
problems collected as values (:mod:`problems`), progress lines
(:mod:`progress`), the one way git is run (:mod:`gitrepo`) and the bundled
JSON Schemas with validators built from them (:mod:`schemas`; the schema
files are package data in ``rag_corpus_check/schemas/``).

May import: nothing of the package outside core.
"""
