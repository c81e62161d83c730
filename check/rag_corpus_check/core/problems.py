"""Problems found in the user's input, collected as values (never raised).

Every user-facing problem is a :class:`Problem`: what kind it is, where it is
(file and line), a *safe* id (a document or question id, escaped and cut), and a
message that says how to fix it. Only the reporter prints them; the exit code is
decided from them in one place (:mod:`rag_corpus_check.pipeline.stages`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_corpus_check.core.text import safe_id

ERROR = "error"
WARNING = "warning"

# Kinds of problem (the first word of every message).
PARSE = "parse"  # the file cannot be read as its format (JSON, YAML, TREC)
SCHEMA = "schema"  # a record does not match its JSON Schema
CONSISTENCY = "consistency"  # files disagree (unknown id, snapshot, duplicates)
CONFIG = "config"  # the configuration itself
PATH = "path"  # file access rules (outside the repository, symlink, not a file)
LIMIT = "limit"  # a size or count cap was exceeded
RETRIEVER = "retriever"  # the configured retriever command failed
BASE = "base"  # the base revision given with --base cannot be read
GIT = "git"  # the checkout itself cannot be read by git
TRUST = "trust"  # what the gate takes on trust from the pull request, or whose rules it applies
EMBEDDING = "embedding"  # the embedding endpoint failed: the check could not finish (exit 3, not the input's fault)
KINDS = (PARSE, SCHEMA, CONSISTENCY, CONFIG, PATH, LIMIT, RETRIEVER, BASE, GIT, TRUST, EMBEDDING)
# Never cut by the cap a file: a limit ends a file (one each), and a warning
# about trust and rules is said once from one place of the check, never a
# record. They are bounded by the places that add them, not by the cap.
UNCAPPED = (LIMIT, TRUST)


@dataclass(frozen=True)
class Problem:
    kind: str
    message: str
    file: str | None = None
    line: int | None = None
    id: str | None = None
    severity: str = ERROR

    def location(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "-"

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "id": self.id,
            "message": self.message,
        }


@dataclass
class Problems:
    """An append-only collection with a cap per (file, severity) so a broken
    million-line file cannot flood the report; what was dropped is counted.
    :meth:`listed` is the order every output lists them in."""

    per_file_cap: int = 50
    items: list[Problem] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    _counts: dict[tuple, int] = field(default_factory=dict)
    _listed: set[tuple] = field(default_factory=set)

    def add(
        self,
        kind: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        id: object = None,
        severity: str = ERROR,
    ) -> None:
        # The whole id: two ids that differ only past what safe_id shows are two problems.
        same = (kind, message, file, line, None if id is None else str(id), severity)
        if same in self._listed:
            return  # said already (e.g. a file two readers read: a LlamaIndex dataset is corpus and gold)
        key = (file, severity)
        n = self._counts.get(key, 0) + 1
        self._counts[key] = n
        if n > self.per_file_cap and kind not in UNCAPPED:
            label = f"{file or '-'} ({severity}s)"
            self.dropped[label] = self.dropped.get(label, 0) + 1
            return
        self._listed.add(same)
        self.items.append(Problem(kind, message, file, line, safe_id(id) if id is not None else None, severity))

    def full(self, file: str | None) -> bool:
        """Whether ``file`` has as many errors as are listed: a reader may
        then stop describing its records (jsonschema's words cost ~0.3 ms
        a record) and add a short problem, which is only counted."""
        return self._counts.get((file, ERROR), 0) >= self.per_file_cap

    def add_input_error(self, exc) -> None:
        """A reader's :class:`safe_io.InputError` (kind, message, file, line)."""
        self.add(exc.kind, exc.message, file=exc.file, line=exc.line)

    def listed(self) -> list[Problem]:
        """Every listed problem in the one order of every output (console,
        annotations, summary, results file, comment): the warnings about
        trust and rules first, then the errors, then the other warnings."""
        trust = [p for p in self.items if p.kind == TRUST]
        rest = [p for p in self.items if p.kind != TRUST]
        return trust + [p for p in rest if p.severity == ERROR] + [p for p in rest if p.severity != ERROR]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.severity == ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.severity == WARNING]

    def error_count(self) -> int:
        return sum(n for (f, s), n in self._counts.items() if s == ERROR)

    def warning_count(self) -> int:
        return sum(n for (f, s), n in self._counts.items() if s == WARNING)

    def has_errors(self) -> bool:
        return self.error_count() > 0
