"""The rows' ``.jsonl`` of a vectors folder, read fast: every line that the
embed subcommand (or ``json.dumps``) writes has one fixed shape,
``{"<key>": "<id>", "sha256": "<64 hex digits>"}``, so a block of lines is
checked by one bytes regex (each match one whole line, the matches tiling
the block) instead of a JSON parse and a dict per line. Anything else — an
escape in an id, other spacing or key order, a blank line, CRLF, a BOM, an
invalid id, an id twice, a limit within reach — gives up (:class:`Slow`)
and :mod:`folder`'s exact reader reads the file from line 1 and words the
problem. Why: 100,000 lines took 1.1 s the exact way (0.5 s of it
``json.loads``), 0.1 s here (``bench/dense.py``); ``tests/test_dense_index.py``
proves the two readers equal, side by side, on generated files.
"""

from __future__ import annotations

import re

from rag_corpus_check.safe_io import Limits
from rag_corpus_check.safe_io.scanner import Slow, _whole_lines

MAX_ID = 512  # characters
CONTROL = re.compile("[\u0000-\u001f\u007f\u0085\u2028\u2029]")  # never in an id
_ID = rb'([^"\\\x00-\x1f\x7f]{1,%d})' % (4 * MAX_ID)  # UTF-8 bytes, no escape, no ASCII control
_WIDE_CONTROL = re.compile("[\u0085\u2028\u2029]")  # the controls a UTF-8 id can still hold


def valid_id(rid) -> bool:
    """The rule for a row's id (both readers)."""
    return isinstance(rid, str) and 1 <= len(rid) <= MAX_ID and not CONTROL.search(rid)


def _line(key: str) -> re.Pattern[bytes]:
    return re.compile(rb'\{"' + key.encode("ascii") + rb'": "' + _ID + rb'", "sha256": "([0-9a-f]{64})"\}\n')


def read_index(real: str, display: str, limits: Limits, hasher, key: str) -> tuple[list[str], bytearray]:
    """``(ids, digests)``: the id of each line, in order, and the 32-byte
    sha-256 each line gives, concatenated; row ``i`` is on line ``i + 1``.
    :class:`Slow` on anything unusual (see the module's docstring)."""
    pattern = _line(key)
    fixed = len(f'{{"{key}": "", "sha256": ""}}\n') + 64  # a line's bytes besides its id
    ids: list[str] = []
    digests = bytearray()
    seen = limits.used()[1]
    for block in _whole_lines(real, display, limits, hasher):
        found = pattern.findall(block if block.endswith(b"\n") else block + b"\n")
        raw_ids = [rid for rid, _ in found]
        longest = max(map(len, raw_ids), default=0) + fixed
        if (sum(map(len, raw_ids)) + fixed * len(found) != len(block) + (not block.endswith(b"\n"))
                or longest >= limits.max_line_bytes or seen + len(ids) + len(found) > limits.max_records):
            raise Slow  # the matches do not tile the block: some line has another shape
        ids += _ids(raw_ids, block.isascii())
        digests += bytes.fromhex(b"".join([digest for _, digest in found]).decode("ascii"))
    if len(set(ids)) != len(ids):
        raise Slow  # an id twice: the exact reader names both lines
    limits.charge(0, len(ids))
    return ids, digests


def _ids(raw: list[bytes], ascii_only: bool) -> list[str]:
    """The ids of a block (none holds a line end: one join, one decode)."""
    if not raw:
        return []
    try:
        text = b"\n".join(raw).decode("ascii" if ascii_only else "utf-8")
    except UnicodeDecodeError:
        raise Slow from None
    ids = text.split("\n")
    if not ascii_only and (_WIDE_CONTROL.search(text) or max(map(len, ids)) > MAX_ID):
        raise Slow
    if ascii_only and max(map(len, raw)) > MAX_ID:
        raise Slow
    return ids
