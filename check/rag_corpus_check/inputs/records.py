"""What the readers keep of each input: plain records, never document text."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from itertools import chain, compress, count, filterfalse, repeat
from operator import attrgetter

from rag_corpus_check.core.text import odd_ids

NO_TYPE = "(no type)"


def blank(text: str, title: str | None) -> bool:
    """A document with no text and no title (valid; a warning: no retriever
    can find it by its words)."""
    return not text.strip() and not (title or "").strip()


@dataclass(frozen=True, slots=True)
class Doc:
    """What the checks need of a document. Documents with the same type,
    status and snapshot share one Doc (a million documents hold a handful)."""

    type: str | None
    status: str
    snapshot: str | None


@dataclass
class Facts:
    """Of the labelled ids: the unknown (None) and the inactive (their Doc),
    with the line of each inactive one; of the ranked ids: the unknown."""

    suspects: dict[str, Doc | None]
    lines: dict[str, int]
    unknown: set[str]


@dataclass
class Corpus:
    """A corpus: its documents' ids and what the checks ask of them."""

    file: str
    docs: dict[str, Doc] = field(default_factory=dict)
    # id -> line in the file; None when documents are on lines 1, 2, 3, …
    # in order (what the fast reader takes), see line().
    lines: dict[str, int] | None = field(default_factory=dict)
    inactive: set[str] = field(default_factory=set)  # ids whose status is not active
    fingerprint: str | None = None
    snapshots: dict[str, int] = field(default_factory=dict)
    # (type, status, snapshot) -> the one Doc with those values
    shared: dict[tuple, Doc] = field(default_factory=dict, repr=False, compare=False)
    parents: dict[str, str] = field(default_factory=dict)  # chunk id -> doc_id (records with one)
    blank: list[tuple[str, int]] = field(default_factory=list)  # (id, line): no text, no title
    where: dict[str, str] = field(default_factory=dict)  # a Markdown corpus: record id -> its page

    def note_blank(self, doc_id: str, rec: dict, line: int) -> None:
        """Remember a document no retriever can find by its words (a warning)."""
        if blank(rec["text"], rec.get("title")):
            self.blank.append((doc_id, line))

    @property
    def count(self) -> int:
        return len(self.docs)

    def file_of(self, doc_id: str) -> str:
        """The file a record is in (a Markdown corpus: its page; else the corpus file)."""
        return self.where.get(doc_id, self.file)

    def doc(self, dtype: str | None, status: str, snapshot: str | None) -> Doc:
        """The shared Doc for these values."""
        key = (dtype, status, snapshot)
        doc = self.shared.get(key)
        if doc is None:
            doc = self.shared[key] = Doc(*key)
        return doc

    def line(self, doc_id: str) -> int:
        """The line of a document (for messages, which are rare: the table is
        built on the first call)."""
        if self.lines is None:
            self.lines = dict(zip(self.docs, range(1, len(self.docs) + 1), strict=True))
        return self.lines[doc_id]

    def ids(self) -> set[str]:
        return set(self.docs)

    def documents(self) -> Corpus:
        """The corpus seen as documents: a chunk belongs to its doc_id (a
        record without one is a document of its own); a document has the
        type, status, snapshot and line of its first chunk."""
        view = Corpus(file=self.file, fingerprint=self.fingerprint, snapshots=self.snapshots, shared=self.shared,
                      blank=self.blank, where=self.where)
        assert view.lines is not None
        parents = self.parents
        for chunk, doc in self.docs.items():
            doc_id = parents.get(chunk, chunk)
            if doc_id not in view.docs:
                view.docs[doc_id] = doc
                view.lines[doc_id] = self.line(chunk)
                if doc.status != "active":
                    view.inactive.add(doc_id)
        return view

    def facts(self, labelled: Collection[str], ranked: Collection[str]) -> Facts:
        """What the checks need to know of the labelled and the ranked ids
        (one lookup each, in C, without making a set of them first)."""
        docs = self.docs
        unknown_labels = filterfalse(docs.__contains__, labelled)
        inactive_labels = filter(self.inactive.__contains__, labelled) if self.inactive else ()
        suspects = {d: docs.get(d) for d in chain(unknown_labels, inactive_labels)}
        lines = self.lines_of({d for d, doc in suspects.items() if doc is not None})
        return Facts(suspects, lines, set(filterfalse(docs.__contains__, ranked)))

    def lines_of(self, doc_ids: set[str]) -> dict[str, int]:
        """The lines of a few documents, without the table of every line
        (0.3 s at 1M documents) unless it exists or most are wanted."""
        if self.lines is not None or len(doc_ids) * 8 > len(self.docs):
            return {d: self.line(d) for d in doc_ids}
        wanted = list(map(doc_ids.__contains__, self.docs))  # one C pass
        return dict(zip(compress(self.docs, wanted), compress(count(1), wanted), strict=True))

    def type_counts(self, doc_ids: list[str], unjudged: list[bool]) -> tuple[Counter, Counter]:
        """How many of ``doc_ids`` per document type (NO_TYPE: a document
        without one, or an id not in the corpus), and how many of those where
        ``unjudged`` is true. One lookup per id, in C."""
        types = list(map(_TYPE, map(self.docs.get, doc_ids, repeat(_UNKNOWN))))
        return _no_type(Counter(types)), _no_type(Counter(compress(types, unjudged)))

    def odd_ids(self) -> list[tuple[str, str, int]]:
        """(id, why, line) of the ids that hold invisible characters or look
        like another id (:func:`text.odd_ids`)."""
        odd = odd_ids(self.docs, self.docs)
        lines = self.lines_of({d for d, _ in odd}) if odd else {}
        return [(d, why, lines[d]) for d, why in odd]


def _no_type(counts: Counter) -> Counter:
    if None in counts:
        counts[NO_TYPE] += counts.pop(None)
    return counts


class _Unknown:
    type = None


_UNKNOWN = _Unknown()
_RELEVANT = attrgetter("relevant")  # an id missing from the corpus: counted without a type
_TYPE = attrgetter("type")


@dataclass
class GoldQuery:
    query_id: str
    line: int | None
    relevant: dict[str, int]
    label_lines: dict[str, int | None]
    text: str | None = None
    snapshot: str | None = None
    tags: tuple[str, ...] = ()  # the slices the question belongs to (gold `tags:`)
    answerable: bool | None = None  # False: unanswerable by design (gold `answerable: false`); None: not said


@dataclass
class Gold:
    file: str
    format: str = "yaml"
    queries: dict[str, GoldQuery] = field(default_factory=dict)
    snapshot: str | None = None
    snapshot_line: int | None = None
    labels_field: str = "relevant"  # the labels' field as the file writes it (a field map names it)

    def grades(self) -> dict[str, dict[str, int]]:
        """question -> its judged grades."""
        return {qid: q.relevant for qid, q in self.queries.items()}

    def unanswerable(self) -> frozenset[str]:
        """The questions unanswerable by design (`answerable: false`)."""
        return frozenset(qid for qid, q in self.queries.items() if q.answerable is False)

    def tags(self) -> dict[str, tuple[str, ...]]:
        """question -> its tags (the questions that have some)."""
        return {qid: q.tags for qid, q in self.queries.items() if q.tags}

    def labelled(self) -> set[str]:
        """Every document id some question labels (in C: one pass over the labels)."""
        return set(chain.from_iterable(map(_RELEVANT, self.queries.values())))


@dataclass(slots=True)
class RunQuery:
    query_id: str
    line: int | None
    ranking: list[str]
    snapshot: str | None = None


@dataclass
class Run:
    file: str
    format: str
    queries: dict[str, RunQuery] = field(default_factory=dict)
    # Every ranked id, when the reader collected them (while they were in
    # cache: 3x cheaper than a pass afterwards); else None.
    ranked: set[str] | None = None

    def rankings(self) -> dict[str, list[str]]:
        """question -> its ranking."""
        return {qid: q.ranking for qid, q in self.queries.items()}

    def ranked_ids(self) -> set[str]:
        """Every ranked id (:attr:`ranked`)."""
        if self.ranked is None:
            self.ranked = set(chain.from_iterable(q.ranking for q in self.queries.values()))
        return self.ranked

    def drop_identical(self) -> None:
        """BEIR's ``ignore_identical_ids``: the document whose id is the
        question's own id removed from its ranking."""
        for q in self.queries.values():
            q.ranking = without_own_id(q.query_id, q.ranking)
        self.ranked = None

    def only(self, keep: Iterable[str]) -> None:
        """Keep only the questions in ``keep`` (one shard's)."""
        keep = set(keep)
        self.queries = {q: v for q, v in self.queries.items() if q in keep}
        self.ranked = None  # held the other questions' ids too


def without_own_id(query_id: str, ranking: list[str]) -> list[str]:
    """``ranking`` without the document whose id is ``query_id`` (BEIR's ignore_identical_ids)."""
    return [d for d in ranking if d != query_id]
