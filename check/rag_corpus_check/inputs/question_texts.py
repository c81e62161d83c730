"""Gold question texts as data: the same question asked twice, and corpus
text that contains a question.

**Duplicates** (:func:`duplicate_questions`): two gold questions whose texts
are equal after :func:`normal` (Unicode NFKC, ``casefold``, whitespace runs
collapsed to one space, stripped) ask the same thing twice: the question
counts twice in every mean, which lets a gold set be padded with easy
questions. An input error at the second (file:line and id) naming the first
(its id and file:line), across every file of a `gold:` list. A question
without text (TREC qrels) is left out.

**Copies** (:class:`LeakScan`): a corpus record that a gold question judges
(its id, or its chunk's ``doc_id``, is labelled in the gold set) and whose
text contains a gold question's words in order. That is often honest — an
FAQ whose heading is the question, an abstract that states it — and it is
also the way to borrow a relevant document's label in a pull request (a chunk
``{"id": "policy-002#q0", "doc_id": "policy-002", "text": "<the
question>"}``). A warning names the record (corpus file:line and id) and the
question id, never the text, and says where the record ranks for that
question in the ranking that was measured (the configured retriever's, or
the committed run's) — a copy that ranks 31st changes no measure at 10 — or,
when nothing was ranked, makes no claim about the rank; the first
:data:`SHOWN` (the best-ranked first), then how many more. Records no question
judges are not looked in: they cannot raise a measure (an unjudged document
counts as not relevant), and tokenising every record tripled the time of a
100k-document check with a committed run (``bench/generate.py``'s data,
paired with cc637bd: 3.8x wall). A record judged by at most :data:`FEW`
questions is searched for those alone, each a substring search in C over its
joined tokens; an ASCII record is tokenised only when one of those
questions' anchor (below) is in its lower-cased text, as it must be for the
question to be in it (without a stemmer: a stem need not be a piece of the
text). On that data, where 29% of the records are judged, the scan took
0.44 CPU-s tokenising every judged record and takes 0.21 so.
One judged by more goes through the bounded trie walk below, for every
question.

"Contains" is decided on the built-in retriever's tokens (the config's
:class:`analyzer.Analyzer` without stop words: NFKC, casefold, ``\\w+``
runs, Han, Kana and Hangul runs as bigrams, the stemmer if one is
configured): the question's tokens, in order and adjacent, inside the
record's title and text as BM25 indexes them (title, a line end, text), so
neither punctuation, spacing, nor (with a stemmer) an inflection hides a
copy; a Chinese or Japanese question is found inside a longer run of text.
Only questions of at least :data:`MIN_TOKENS` words are looked
for (shorter ones turn up in ordinary text by chance); a word is a token of
two characters or more, so the ``s`` that ``\\w+`` splits from
"Parkinson's" (or the ``d`` of "vitamin D") does not make a two-word topic
a question worth looking for.

Work, linear in the corpus: each question is filed under an *anchor*, its
longest token (the rarest, as a rule), at the anchor's offset in it, in a
trie over its tokens. A record's tokens are tested against the set of
anchors in C (most records hold none); only at an anchor's positions is the
trie walked from where a question holding it there would start, a step per
token that still matches. The steps are counted per record: past
:data:`WORK_PER_TOKEN` per token of the record (plus :data:`WORK_BASE`) the
rest of that record is passed over, with a warning that names it (and counts
the others), and the scan goes on with the next record — so a crafted corpus
and gold set (one word repeated everywhere, questions made of it) cost a
bounded multiple of reading the file, and a crafted record early in the file
cannot switch the scan off for the records after it.

Where it runs — the reader seam, not a stage after it: the check keeps no
document text, so the texts are seen only while the corpus is read. The
scan is built from the gold set before the corpus is read
(:func:`inputs.read_inputs` reads the gold files first) and is fed by every
corpus reader:
the fast reader a block at a time (:meth:`LeakScan.block`), the exact and
foreign readers a record at a time through their ``on_doc`` hook
(:meth:`LeakScan.hook`, in front of the built-in BM25's). So it runs for
the built-in BM25, a retriever command and a committed run alike, and costs
no second reading of the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, count, islice

from rag_corpus_check.core import problems as P
from rag_corpus_check.core.text import nfkc, safe_text
from rag_corpus_check.inputs.gold_merge import where
from rag_corpus_check.inputs.records import Gold
from rag_corpus_check.retrieval.analyzer import Analyzer

MIN_TOKENS = 3  # shorter questions are not looked for in the corpus
SHOWN = 20  # leak warnings listed one by one (the best-ranked first); the rest are counted
KEPT = 1000  # (record, question) pairs kept to choose the listed ones from
WORK_PER_TOKEN = 4  # anchor offsets tried and trie steps allowed per corpus token read
WORK_BASE = 1024  # per record
FEW = 16  # a record judged by at most this many questions is searched for them alone, in C


def words(tokens: tuple[str, ...] | list[str]) -> int:
    """The words among a question's tokens: those of two characters or more
    (one letter is a clitic or an initial split off by punctuation: the
    ``s`` of "Parkinson's")."""
    return sum(len(t) > 1 for t in tokens)


def _judging(gold: Gold, questions: dict[tuple[str, ...], list[str]]) -> dict[str, list]:
    """Per judged id, the questions (as " tokens ", their ids and their
    anchor) that judge it."""
    by_tokens = {qid: tokens for tokens, qids in questions.items() for qid in qids}
    out: dict[str, list] = {}
    for qid, q in gold.queries.items():
        if qid in by_tokens:
            tokens = by_tokens[qid]
            entry = (" " + " ".join(tokens) + " ", [qid], max(tokens, key=_rare))
            for doc_id in q.relevant:
                out.setdefault(doc_id, []).append(entry)
    return out


def _among(tokens: list[str], judging: list) -> dict[str, None]:
    """The few questions that judge a record, each a substring search in C
    over its tokens joined (token boundaries are the spaces around them)."""
    joined = " " + " ".join(tokens) + " "
    return dict.fromkeys(qid for text, qids, _anchor in judging if text in joined for qid in qids)


def _may_hold(text: str, judging: list) -> bool:
    """False only when none of the few questions that judge a record can be
    in it: an ASCII text's tokens (no stemmer) are lower-cased runs of it,
    so a question's anchor token that is not in ``text.lower()`` is not
    among them. Saves tokenising most judged records (a third of the
    corpus-reading time on the benchmark data); True for any other text."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return any(anchor in lowered for _text, _qids, anchor in judging)


def _rare(token: str) -> tuple[int, str]:
    """A question's anchor is its longest token (the rarest, as a rule); of
    equal lengths the greatest in code-point order."""
    return len(token), token


def normal(text: str) -> str:
    """The text as two questions are compared: NFKC, casefold, whitespace
    runs collapsed to one space, stripped."""
    return " ".join(nfkc(text).casefold().split())


def _at(place: tuple[str, int | None]) -> str:
    file, line = place
    return f"{file}:{line}" if line else file


def duplicate_questions(gold: Gold, problems: P.Problems) -> None:
    """An error for each gold question whose text equals an earlier one's
    after :func:`normal` (questions without text are left out)."""
    first: dict[str, str] = {}  # normal text -> the id of the first question with it
    normals: dict[str, str] = {}  # text -> normal text: a text repeated (YAML aliases) is normalised once
    for qid, q in gold.queries.items():
        if not q.text:
            continue
        key = normals.get(q.text)
        if key is None:
            key = normals[q.text] = normal(q.text)
        if not key:
            continue
        other = first.setdefault(key, qid)
        if other == qid:
            continue
        problems.add(P.CONSISTENCY, f"the question text is that of question `{safe_text(other, 60)}` "
                     f"({_at(where(gold, gold.queries[other]))}) once case, spacing and Unicode forms are "
                     "set aside; a question asked twice counts twice in every mean — remove one, or make "
                     "them different questions", file=where(gold, q)[0], line=q.line, id=qid)


class _Node:
    """A trie node over tokens: the questions that end here, the tokens that go on."""

    __slots__ = ("ends", "next")

    def __init__(self) -> None:
        self.ends: list[str] = []
        self.next: dict[str, _Node] = {}


class LeakScan:
    """Gold questions looked for in corpus records as they are read."""

    def __init__(self, questions: dict[tuple[str, ...], list[str]], judging: dict[str, list] | None = None,
                 analyzer: Analyzer | None = None):
        analyzer = analyzer or Analyzer()
        self.tokens_of = analyzer.tokens  # the question tokens' analyzer (no stop words)
        self.plain = analyzer.stemmer is None  # tokens are pieces of the text (a stem need not be)
        # record or document id -> (" tokens ", question ids) of the questions that judge it
        self.judging = judging or {}
        # anchor -> its offset in a question -> the trie of the questions with the anchor there
        self.tries: dict[str, dict[int, _Node]] = {}
        for tokens, qids in questions.items():
            anchor = max(tokens, key=_rare)
            node = self.tries.setdefault(anchor, {}).setdefault(tokens.index(anchor), _Node())
            for token in tokens:
                node = node.next.setdefault(token, _Node())
            node.ends.extend(qids)
        self._anchors = frozenset(self.tries)
        self.found: list[tuple[str, int | None, str]] = []  # (record id, line or None, question id), the first KEPT
        self.count = 0  # every (record, question) found
        self.stopped: tuple[str, int | None] | None = None  # (id, line) of the first record passed over (work bound)
        self.skipped = 0  # records passed over at the work bound
        self.tokens = 0
        self.work = 0

    @classmethod
    def of(cls, gold: Gold | None, analyzer: Analyzer | None = None) -> LeakScan | None:
        """The scan for the questions of ``gold`` long enough to look for, or
        None when there is none; ``analyzer``: the config's (its stop words
        are not used)."""
        analyzer = (analyzer or Analyzer()).without_stopwords()
        texts: dict[str, list[str]] = {}  # a text repeated (YAML aliases) is tokenised once
        for qid, q in (gold.queries.items() if gold is not None else ()):
            if q.text:
                texts.setdefault(q.text, []).append(qid)
        questions: dict[tuple[str, ...], list[str]] = {}
        for text, qids in texts.items():
            tokens = tuple(analyzer.tokens(text))
            if words(tokens) >= MIN_TOKENS:
                questions.setdefault(tokens, []).extend(qids)
        return cls(questions, _judging(gold, questions), analyzer) if questions and gold is not None else None

    def clear(self) -> None:
        """Forget what was found (the file is read again from line 1)."""
        self.found, self.count, self.stopped, self.skipped, self.tokens, self.work = [], 0, None, 0, 0, 0

    def record(self, doc_id: str, rec: dict, line: int | None = None) -> None:
        """Look for the questions in one record (title and text as BM25 reads
        them), when the gold set judges it or its document."""
        judging = self.judging.get(doc_id, []) + self.judging.get(rec.get("doc_id"), [])  # type: ignore[arg-type]
        if not judging:
            return
        title = rec.get("title")
        text = rec["text"] if not title else title + "\n" + rec["text"]
        few = len(judging) <= FEW
        if few and self.plain and not _may_hold(text, judging):
            return
        tokens = self.tokens_of(text)
        self.tokens += len(tokens)
        found = _among(tokens, judging) if few else self._everywhere(tokens, doc_id, line)
        for qid in found:
            self.count += 1
            if len(self.found) < KEPT:
                self.found.append((doc_id, line, qid))

    def _everywhere(self, tokens: list[str], doc_id: str, line: int | None) -> dict[str, None]:
        """Every question in ``tokens``, by the bounded trie walk (a record
        past the bound is passed over and noted)."""
        found: dict[str, None] = {}
        bound = self.work + WORK_PER_TOKEN * len(tokens) + WORK_BASE
        if not self._anchors.isdisjoint(tokens) and not self._look(tokens, found, bound):
            self.skipped += 1
            self.stopped = self.stopped or (doc_id, line)
        return found

    def _look(self, tokens: list[str], found: dict[str, None], bound: int) -> bool:
        """The questions in ``tokens`` added to ``found``; False when the
        work bound is reached (checked at each anchor)."""
        tries = self.tries
        for at in compress(count(), map(self._anchors.__contains__, tokens)):  # the anchors' positions, in C
            offsets = tries[tokens[at]]
            if self.work + len(offsets) > bound:
                return False
            self.work += len(offsets)
            for offset, root in offsets.items():
                # The first step here (most end at it); the rest in _walk.
                if at >= offset and (node := root.next.get(tokens[at - offset])) is not None:
                    self._walk(tokens, at - offset + 1, node, found, bound)
        return self.work < bound  # at the bound a walk may have been cut short

    def _walk(self, tokens: list[str], start: int, node: _Node, found: dict[str, None], bound: int) -> None:
        """From ``node``, the questions whose further tokens start at ``start``, added to ``found``."""
        found.update(dict.fromkeys(node.ends))
        for token in islice(tokens, start, None):
            if self.work >= bound:
                break
            self.work += 1
            got = node.next.get(token)
            if got is None:
                break
            node = got
            found.update(dict.fromkeys(node.ends))

    def block(self, first: int, records: list, ids: list[str]) -> None:
        """The fast reader's hook: a block of valid records (as pair tuples,
        ``ids`` their ids), the first on line ``first``. Only the judged ones
        are made dicts and looked in (the fast reader reads no chunked
        corpus, so a record is judged by its own id)."""
        for i in compress(count(), map(self.judging.__contains__, ids)):  # in C
            self.record(ids[i], dict(records[i]), first + i)

    def report(self, corpus, problems: P.Problems, ranked: Ranks | None = None) -> None:
        """The warnings: one per record and question found (the first
        :data:`SHOWN`), how many more, and the records passed over at the
        work bound. ``ranked``: the ranking that was measured and what made
        it, to say where each record ranks for its question (None: nothing
        was ranked, and no rank is claimed)."""
        lines = getattr(corpus, "lines", None) or {}
        shown = sorted(self.found, key=lambda f: _rank_key(ranked, f[2], f[0]))[:SHOWN]  # stable: file order
        for doc_id, line, qid in shown:
            problems.add(P.CONSISTENCY, f"the record contains the words of gold question `{safe_text(qid, 60)}` in "
                         f"order{_rank_words(ranked, qid, doc_id)}: a record that holds a question is easy to "
                         "retrieve for it, so that question's measures say more about the copy than about how the "
                         "rest of the corpus answers it. Expected of an FAQ whose heading is the question or an "
                         "abstract that states it; look again if the record is a chunk holding little but the "
                         "question (it borrows its document's label)", file=corpus.file_of(doc_id),
                         line=line or lines.get(doc_id), id=doc_id, severity=P.WARNING)
        if self.count > len(shown):
            problems.add(P.CONSISTENCY, f"and {self.count - len(shown)} more records contain the words of a "
                         "gold question (not listed)", file=corpus.file, severity=P.WARNING)
        if self.stopped is not None:
            doc_id, line = self.stopped
            more = f" (and {self.skipped - 1} more records)" if self.skipped > 1 else ""
            problems.add(P.CONSISTENCY, f"gold question texts were looked for in only part of this record{more}: "
                         f"it took over {WORK_PER_TOKEN} steps per token (questions that share long runs of words "
                         "the record repeats); the rest of it was passed over", file=corpus.file_of(doc_id),
                         line=line or lines.get(doc_id), id=doc_id, severity=P.WARNING)


@dataclass(frozen=True)
class Ranks:
    """The ranking a check measured (question -> ids, best first) and what
    made it, in words ("the configured retriever (`bm25`)", "the committed run")."""

    rankings: dict[str, list[str]]
    by: str


def _rank_of(ranked: Ranks, qid: str, doc_id: str) -> int | None:
    return next((i for i, d in enumerate(ranked.rankings.get(qid) or (), 1) if d == doc_id), None)


def _rank_key(ranked: Ranks | None, qid: str, doc_id: str) -> int:
    """The order copies are listed in: the best-ranked first (they move the
    measures), the unranked after them."""
    rank = _rank_of(ranked, qid, doc_id) if ranked is not None else None
    return rank if rank is not None else 1 << 62


def _rank_words(ranked: Ranks | None, qid: str, doc_id: str) -> str:
    """`` (rank 3 for it under …)``, `` (not in …'s ranking for it, 100 deep)``, or "" with no ranking."""
    if ranked is None:
        return ""
    ranking = ranked.rankings.get(qid)
    if ranking is None:
        return f" ({ranked.by} did not rank that question)"
    rank = _rank_of(ranked, qid, doc_id)
    if rank is None:
        return f" (not among the {len(ranking)} it ranks for it under {ranked.by})"
    return f" (rank {rank} for it under {ranked.by})"
