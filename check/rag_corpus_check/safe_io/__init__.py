"""The only place input files are opened and parsed (see docs/security.md):
:mod:`paths` (path rules, size caps), :mod:`content` (gzip, LFS pointers), :mod:`jsontext` (strict JSON, JSONL and
TREC lines), :mod:`yamltext` (safe YAML with lines), :mod:`csvtext` (CSV with a header row), :mod:`digest` (input
digests) and :mod:`scanner` (the fast JSONL scanner).

May import: core.
"""

from rag_corpus_check.safe_io.content import compressed, open_input, plain_name, read_bytes
from rag_corpus_check.safe_io.csvtext import iter_csv
from rag_corpus_check.safe_io.digest import Sha256, restart, sha256_file
from rag_corpus_check.safe_io.jsontext import (
    decode_utf8,
    iter_jsonl,
    iter_text_lines,
    json_keys,
    load_json_document,
    loads_strict,
)
from rag_corpus_check.safe_io.paths import (
    CONFIG_MAX_BYTES,
    MAX_DOCUMENT_BYTES,
    InputError,
    Limits,
    file_size,
    open_regular,
    resolve_input,
    stored_bytes,
)

_YAML_NAMES = ("LineDict", "LineList", "line_of", "load_yaml")


def __getattr__(name: str):
    """The YAML names, imported on first use: the comment action
    (report/comment.py) reads strict JSON here and runs with no PyYAML."""
    if name in _YAML_NAMES:
        from rag_corpus_check.safe_io import yamltext

        return getattr(yamltext, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "CONFIG_MAX_BYTES", "MAX_DOCUMENT_BYTES", "InputError", "LineDict", "LineList", "Limits", "Sha256",
    "decode_utf8", "file_size", "iter_csv", "iter_jsonl", "iter_text_lines", "json_keys", "line_of", "load_json_document",
    "load_yaml", "loads_strict", "compressed", "open_input", "plain_name", "open_regular", "read_bytes", "resolve_input", "restart", "sha256_file",
    "stored_bytes",
]
