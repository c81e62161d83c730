"""The configuration file as committed: read safely, validated against its
schema and normalised into a :class:`load.Config` (:mod:`load`). The
caller's options (command-line flags, action inputs) are not part of it.

May import: core, safe_io, metrics, retrieval.
"""
