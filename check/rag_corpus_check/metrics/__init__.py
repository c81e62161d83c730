"""Retrieval measures and their means: one pure function per measure
(:mod:`measures`, the registry and each measure's formula) and the
per-question records and means over questions (:mod:`evaluate`).

May import: core.
"""
