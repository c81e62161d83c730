"""Progress lines for long runs: records read, percent, rate.

Silent for the first few seconds (so small runs and tests print nothing),
then at most one line every ``interval`` seconds, on stderr. Under GitHub
Actions the lines are folded in a ``::group::``. Only numbers and our own
labels are printed, never input text.
"""

from __future__ import annotations

import os
import sys
import time

from rag_corpus_check.core.text import safe_text


class Progress:
    def __init__(self, *, enabled: bool = True, github: bool = False, delay: float = 3.0,
                 interval: float = 5.0, stream=None) -> None:
        self.enabled = enabled and os.environ.get("RAG_CORPUS_CHECK_PROGRESS", "1") != "0"
        self.github = github
        self.delay = delay
        self.interval = interval
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.last = self.start
        self.grouped = False
        self.printed = 0

    def tick(self, label: str, done: int, total: int | None = None, unit: str = "records",
             part: tuple[int, int | None] | None = None) -> None:
        """Cheap enough to call per record: it reads the clock every 4096
        calls. The percent is ``done/total``, or ``part`` = (bytes read, size)."""
        if self.enabled and not done & 4095:
            self._due(label, done, total, unit, part)

    def block(self, label: str, done: int, part: tuple[int, int | None] | None = None) -> None:
        """:meth:`tick` for a reader that goes a block of lines at a time."""
        if self.enabled:
            self._due(label, done, None, "records", part)

    def _due(self, label, done, total, unit, part) -> None:
        now = time.monotonic()
        if now - self.start < self.delay or now - self.last < self.interval:
            return
        self.last = now
        self._emit(label, done, total, unit, now, part)

    def _emit(self, label, done, total, unit, now, part=None) -> None:
        if self.github and not self.grouped:
            self.stream.write("::group::rag-corpus-check progress\n")
            self.grouped = True
        if part and part[1]:
            pct = f", {100 * part[0] / part[1]:.0f}%"
        else:
            pct = f", {100 * done / total:.0f}%" if total else ""
        rate = done / max(now - self.start, 1e-9)
        # Labels carry file names (already escaped by safe_io); escape again.
        self.stream.write(f"rag-corpus-check: {safe_text(label, 200)}: {done:,} {unit}{pct}, {rate:,.0f}/s\n")
        self.stream.flush()
        self.printed += 1

    def close(self) -> None:
        if self.grouped:
            self.stream.write("::endgroup::\n")
            self.stream.flush()
            self.grouped = False


_current = Progress(enabled=False)


def current() -> Progress:
    return _current


def install(p: Progress) -> None:
    global _current
    _current = p
