"""The fast TREC readers (runs and qrels) against the exact ones.

As for JSONL (tests/test_fastread.py): a fast reader either gives up
(:class:`Slow`) or returns exactly what the exact reader returns for the same
file — same questions in the same order, lines, rankings (trec_eval's order),
grades, label lines and file digest — with the exact reader reporting no
problem at all, not even a warning. Checked on generated files that mix clean
lines with every kind of trouble, with every single fault in an otherwise
clean file, at the limits and across block edges.
"""

import hashlib
import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rag_corpus_check import inputs
from rag_corpus_check.core.problems import Problems
from rag_corpus_check.inputs import Source, fast_trec
from rag_corpus_check.inputs import gold as exact_gold
from rag_corpus_check.inputs import run as exact_run
from rag_corpus_check.safe_io import InputError, Limits, Sha256
from rag_corpus_check.safe_io.scanner import BLOCK, Slow

LIMITS = Limits()


def _exact(kind, path, limits=LIMITS, order="descending", grade_map=None):
    problems = Problems()
    h = Sha256()
    try:
        if kind == "run":
            out = exact_run.read_run(path, "f.run", "trec", limits, problems, h, order)
        else:
            out = exact_gold.read_gold(path, "f.qrels", "qrels", limits, problems, h, grade_map)
    except InputError as exc:
        return None, problems, exc.message
    return out, problems, h.hexdigest()


def _fast(kind, path, limits=LIMITS, order="descending", grade_map=None):
    h = Sha256()
    try:
        if kind == "run":
            out = fast_trec.read_run(path, "f.run", limits, h, order)
        else:
            out = fast_trec.read_qrels(path, "f.qrels", limits, h, grade_map)
    except Slow:
        return None, None
    except InputError as exc:  # refused before any line (open_regular): the same for both
        return "refused", exc.message
    return out, h.hexdigest()


def _view(kind, out):
    if kind == "run":
        return [(q, r.line, r.ranking, r.snapshot) for q, r in out.queries.items()]
    return [(q, g.line, g.relevant, g.label_lines, g.text, g.snapshot) for q, g in out.queries.items()]


def same_or_slow(kind, path, limits=LIMITS, order="descending", grade_map=None) -> bool:
    """The property; True when the fast reader took the file."""
    fast, fast_digest = _fast(kind, path, limits, order, grade_map)
    exact, problems, digest = _exact(kind, path, limits, order, grade_map)
    if fast == "refused":
        assert exact is None and digest == fast_digest
        return False
    if fast is None:
        return False
    assert exact is not None and not problems.items, [p.message for p in problems.items]
    assert _view(kind, fast) == _view(kind, exact)
    assert fast_digest == digest
    if kind == "run":
        assert fast.ranked == exact.ranked_ids()
    return True


# ---------------------------------------------------------------- generated files

QIDS = ["q1", "q2", "q3", "qé"]
DOCS = ["d1", "d2", "d3", "d4", "doc-é", "Q0"]
BAD_IDS = ["", "q\x01", "a\u00a0b", "x\u3000", "a" * 513, "a" * 512, "q\u2028", "x\x0b", "\x7f", "d\x1c"]
GOOD_SCORES = ["1", "2.5", "-3", "0", "-0", "1e3", "1E-3", "12.345600", "0.1", "7", "100000"]
ODD_SCORES = [".5", "5.", "+1", "-.5", "007", "9007199254740993", "9007199254740992", "1.0000000000000001"]
BAD_SCORES = ["inf", "-inf", "nan", "NaN", "Infinity", "1_0", "\u0661", "1e999", "-1e400", "0x1", "1e", "e1",
              "1\x0b", "\x0c1", "1.2.3", "--1", "x", "1e+", "1" * 400, "+-1", "1\u00a0", "٣.٥"]
RANKS = ["1", "2", "3", "10", "0", "123456789"]
BAD_RANKS = ["-1", "1.0", "\u0661", "1234567890", "x", "+1", "1_0", "01"]
TAGS = ["run", "t", "Q0", "é", "x\x00"]
GRADES = ["0", "1", "2", "3", "-1", "-2", "999999", "-999999"]
BAD_GRADES = ["007", "+1", "-0", "1_0", "1.0", "1000000", "\u0661", "x", "1e2", "00", "- 1"]
SEPARATORS = [" "] * 12 + ["\t", "  ", " \t", "\t\t"]
ENDS = ["\n"] * 10 + ["\r\n", "\r", "\n\n", "\n \n", "\n\t\r\n"]


def _join(fields: list[str], sep, edge: str) -> str:
    text = ""
    for i, f in enumerate(fields):
        text += (sep if isinstance(sep, str) else sep[i % len(sep)]) + f if i else f
    return {"lead": " " + text, "trail": text + " ", "tab-trail": text + "\t"}.get(edge, text)


@st.composite
def _run_file(draw, messy: bool):
    """Questions of 1-5 rows each, rows of a question together (or not),
    scores falling, tied or shuffled, ranks rising or falling."""
    qids = draw(st.lists(st.sampled_from(QIDS + (BAD_IDS if messy else [])), min_size=1, max_size=4,
                         unique=not messy))
    lines = []
    for qi, qid in enumerate(qids):
        docs = draw(st.lists(st.sampled_from(DOCS + (BAD_IDS if messy else [])), min_size=1, max_size=5,
                             unique=not messy))
        how = draw(st.sampled_from(["falling", "falling", "ties", "shuffled", "rising"]))
        if how == "ties":
            scores = [draw(st.sampled_from(["1", "1.0", "2"])) for _ in docs]
        else:
            values = sorted(draw(st.lists(st.integers(-50, 50), min_size=len(docs), max_size=len(docs),
                                          unique=True)), reverse=True)
            if how == "shuffled":
                draw(st.randoms(use_true_random=False)).shuffle(values)
            elif how == "rising":
                values.reverse()
            form = draw(st.sampled_from(["{}", "{}.5", "{}e-1", "{:.6f}"]))
            scores = [form.format(v) for v in values]
        ranks = [str(i + 1) for i in range(len(docs))]
        if draw(st.integers(0, 3)) == 0:
            ranks.reverse()
        for d, s, r in zip(docs, scores, ranks, strict=True):
            row = [qid, "Q0", d, r, s, "run"]
            if messy and draw(st.integers(0, 3)) == 0:
                col = draw(st.integers(0, 5))
                row[col] = draw(st.sampled_from({3: BAD_RANKS + RANKS, 4: BAD_SCORES + ODD_SCORES}.get(
                    col, BAD_IDS + TAGS)))
            if messy and draw(st.integers(0, 9)) == 0:
                row = row[:draw(st.integers(0, 5))] if draw(st.booleans()) else [*row, "extra"]
            lines.append((row, qi))
    if messy and draw(st.booleans()):
        draw(st.randoms(use_true_random=False)).shuffle(lines)
    return [row for row, _ in lines]


@st.composite
def _qrels_file(draw, messy: bool):
    lines = []
    for qid in draw(st.lists(st.sampled_from(QIDS + (BAD_IDS if messy else [])), min_size=1, max_size=4,
                             unique=not messy)):
        docs = draw(st.lists(st.sampled_from(DOCS + (BAD_IDS if messy else [])), min_size=1, max_size=4,
                             unique=not messy))
        for d in docs:
            row = [qid, draw(st.sampled_from(["0", "Q0", "1"])), d, draw(st.sampled_from(GRADES))]
            if messy and draw(st.integers(0, 3)) == 0:
                row[3] = draw(st.sampled_from(BAD_GRADES + GRADES))
            if messy and draw(st.integers(0, 9)) == 0:
                row = row[:draw(st.integers(0, 3))] if draw(st.booleans()) else [*row, "extra"]
            lines.append(row)
    if messy and draw(st.booleans()):
        draw(st.randoms(use_true_random=False)).shuffle(lines)
    return lines


def _layout(messy: bool):
    """(separator, line end, line edge) per line, a BOM, a last line end."""
    if not messy:
        return st.tuples(st.lists(st.tuples(st.sampled_from([" ", "\t"]), st.sampled_from(["\n", "\r\n"]),
                                            st.just("")), min_size=40, max_size=40),
                         st.just(False), st.booleans())
    return st.tuples(st.lists(st.tuples(st.sampled_from(SEPARATORS), st.sampled_from(ENDS),
                                        st.sampled_from([""] * 12 + ["lead", "trail", "tab-trail"])),
                              min_size=40, max_size=40),
                     st.booleans(), st.booleans())


def _write(tmp_path, rows, layout) -> str:
    per_line, bom, final = layout
    text = "".join(_join(row, per_line[i % 40][0], per_line[i % 40][2]) + per_line[i % 40][1]
                   for i, row in enumerate(rows))
    if not final:
        text = text.rstrip("\r\n")
    data = text.encode("utf-8", "surrogatepass")
    if bom:
        data = b"\xef\xbb\xbf" + data
    p = tmp_path / "f.trec"
    p.write_bytes(data)
    return str(p)


def _files(kind):
    make = _run_file if kind == "run" else _qrels_file
    return st.one_of(st.tuples(make(False), _layout(False)), st.tuples(make(True), _layout(True)),
                     st.tuples(make(False), _layout(True)), st.tuples(make(True), _layout(False)))


@pytest.mark.parametrize("kind,order,grade_map", [
    ("run", "descending", None), ("run", "ascending", None), ("qrels", None, None), ("qrels", None, {-1: 0, 3: 2}),
])
def test_fast_equals_exact_or_gives_up(kind, order, grade_map, tmp_path):
    taken = [0, 0]

    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(_files(kind))
    def check(f):
        path = _write(tmp_path, *f)
        taken[same_or_slow(kind, path, LIMITS, order or "descending", grade_map)] += 1

    check()
    assert taken[True] > 60 and taken[False] > 100, taken  # both ways, many times


@pytest.mark.parametrize("value", ODD_SCORES + BAD_SCORES + GOOD_SCORES)
@pytest.mark.parametrize("where", ["first", "middle"])
def test_every_score_form(value, where, tmp_path):
    """Each score form, alone in an otherwise clean run: taken exactly when
    the exact reader reads the file without a problem (and then the same)."""
    rows = [["q1", "Q0", f"d{i}", str(i), str(100 - i), "t"] for i in range(1, 5)]
    rows[0 if where == "first" else 2][4] = value
    p = tmp_path / "f.run"
    p.write_text("".join(" ".join(r) + "\n" for r in rows), encoding="utf-8")
    _, problems, _ = _exact("run", str(p))
    assert same_or_slow("run", str(p)) is not problems.items  # (a score that turns the order round: a warning)
    assert problems.items or value in GOOD_SCORES + ODD_SCORES


@st.composite
def _one_width(draw):
    """Scores of one width (the fast reader orders them as text when their
    digits line up): digits, a point at one place (or, sometimes, at
    another), ties, leading zeros, and 15 to 17 digits, where doubles
    start to merge decimals (9007199254740993 reads as 9007199254740992)."""
    width = draw(st.sampled_from([1, 2, 3, 5, 8, 15, 16, 17]))
    point = draw(st.one_of(st.none(), st.integers(0, width - 1)))  # None half the time
    digits = st.text("0123456789" if width < 15 else "09", min_size=width, max_size=width)
    scores = []
    for _ in range(draw(st.integers(2, 6))):
        text = draw(st.sampled_from(["900719925474099" + "3" * (width - 15), "900719925474099" + "2" * (width - 15)])
                    if width >= 16 and draw(st.booleans()) else digits)
        at = point if draw(st.integers(0, 9)) else draw(st.sampled_from([None, *range(width)]))
        scores.append(text if at is None else text[:at] + "." + text[at + 1:])
    order = draw(st.sampled_from(["falling", "as drawn", "ties"]))
    if order == "falling":
        scores.sort(key=lambda x: float(x) if x != "." else 0.0, reverse=True)
    elif order == "ties":
        scores = [scores[0]] * len(scores)
    return scores


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scores=_one_width(), order=st.sampled_from(["descending", "ascending"]))
@example(scores=["9007199254740993", "9007199254740992"], order="descending")  # one double: a tie
@example(scores=["900719925474099.3", "900719925474099.2"], order="descending")
@example(scores=["12.5", "1.50"], order="descending")  # one width, points apart
def test_scores_of_one_width_are_ordered_as_their_numbers(scores, order, tmp_path):
    """Aligned scores are compared as text (fast_trec._aligned): the order,
    ties included, is still trec_eval's order of the numbers."""
    rows = [f"q1 Q0 d{i} {i + 1} {s} t\n" for i, s in enumerate(scores)] + ["q2 Q0 d1 1 1 t\n"]
    p = tmp_path / "f.run"
    p.write_text("".join(rows), encoding="utf-8")
    _, problems, _ = _exact("run", str(p), order=order)
    assert same_or_slow("run", str(p), order=order) is not problems.items


@pytest.mark.parametrize("value", BAD_GRADES + GRADES)
def test_every_grade_form(value, tmp_path):
    p = tmp_path / "f.qrels"
    p.write_text(f"q1 0 d1 1\nq1 0 d2 {value}\nq2 0 d1 0\n", encoding="utf-8")
    _, problems, _ = _exact("qrels", str(p))
    taken = same_or_slow("qrels", str(p))
    assert not taken if problems.items else value not in GRADES or taken


@pytest.mark.parametrize("kind", ["run", "qrels"])
@pytest.mark.parametrize("column", [0, 2])
@pytest.mark.parametrize("bad", BAD_IDS)
def test_every_bad_id_is_left_to_the_exact_reader(kind, column, bad, tmp_path):
    rows = ([["q1", "Q0", "d1", "1", "2", "t"], ["q1", "Q0", "d2", "2", "1", "t"]] if kind == "run"
            else [["q1", "0", "d1", "1"], ["q1", "0", "d2", "0"]])
    rows[1][column] = bad
    p = tmp_path / "f.trec"
    p.write_text("".join(" ".join(r) + "\n" for r in rows), encoding="utf-8")
    _, problems, _ = _exact(kind, str(p))
    assert problems.items or bad == "a" * 512
    assert same_or_slow(kind, str(p)) is (bad == "a" * 512)


@pytest.mark.parametrize("column", [2, 5])
@pytest.mark.parametrize("elsewhere", ["", "doc-é"])
@pytest.mark.parametrize("code", [c for c in range(128) if chr(c) not in "\t\n\r "])
def test_every_ascii_character_in_an_id_or_a_tag(code, elsewhere, column, tmp_path):
    """Ids of a block that is ASCII without control characters are checked
    by their length alone (validity.trec_text_plain): each ASCII character
    in a document id (or in a tag, which no rule reads), in a block of such
    text or with a non-ASCII id elsewhere, is taken exactly when the exact
    reader reports nothing."""
    rows = [["q1", "Q0", "d1", "1", "2", "t"], ["q1", "Q0", "d2", "2", "1", "t"], ["q2", "Q0", "d3", "1", "1", "t"]]
    rows[1][column] = f"x{chr(code)}y"
    if elsewhere:
        rows[2][2] = elsewhere
    p = tmp_path / "f.trec"
    p.write_text("".join(" ".join(r) + "\n" for r in rows), encoding="utf-8")
    _, problems, _ = _exact("run", str(p))
    assert same_or_slow("run", str(p)) is not problems.items
    assert problems.items or column == 5 or code >= 32 and code != 127


# ---------------------------------------------------------------- big files, block edges, limits


def _big_run(rng, questions=800, depth=60, sep=" ", end="\n", form="{:.6f}") -> str:
    lines = []
    for q in range(questions):
        scores = sorted((rng.uniform(-5, 30) for _ in range(depth)), reverse=True)
        docs = rng.sample(range(5000), depth)
        lines += [sep.join([f"q{q}", "Q0", f"doc-{d}", str(i + 1), form.format(s), "bm25"])
                  for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
    return end.join(lines) + end


@pytest.mark.parametrize("sep,end,last", [(" ", "\n", True), ("\t", "\r\n", False), (" ", "\n", False)])
def test_fast_reader_takes_a_clean_run_of_many_blocks(sep, end, last, tmp_path):
    """Not only safe but used: a clean run (spaces or tabs, LF or CRLF, with
    or without the last line end) of many blocks, questions cut at block
    edges, goes the fast way."""
    text = _big_run(random.Random(26), sep=sep, end=end)
    assert len(text) > 20 * BLOCK
    p = tmp_path / "f.run"
    p.write_text(text if last else text.rstrip("\r\n"), encoding="utf-8")
    assert same_or_slow("run", str(p))
    assert same_or_slow("run", str(p), order="ascending") is False  # upside down: the exact reader warns


def test_ties_and_shuffled_questions_are_sorted_as_trec_eval_sorts(tmp_path):
    """Scores that do not fall strictly in file order (ties broken by the
    document id, descending; shuffled lines) are sorted, each question on
    its own, as the exact reader sorts them."""
    rng = random.Random(7)
    lines = []
    for q in range(300):
        rows = [[f"q{q}", "Q0", f"d{d}", "0", str(rng.choice([1, 2, 2, 3]))] for d in rng.sample(range(10**6), 40)]
        rows.sort(key=lambda r: (int(r[4]), r[2]), reverse=True)  # trec_eval's order, to number the ranks
        for i, r in enumerate(rows):
            r[3] = str(i + 1)
        if q % 3:
            rng.shuffle(rows)
        lines += [" ".join([*r, "t"]) for r in rows]
    p = tmp_path / "f.run"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert same_or_slow("run", str(p))
    exact, _, _ = _exact("run", str(p))
    assert all(r.ranking != sorted(r.ranking) for r in exact.queries.values())  # not in id order: ties mattered


def test_a_question_cut_by_every_block_edge(tmp_path):
    """One question longer than many blocks, then small ones."""
    rows = [f"q0 Q0 d{i} {i + 1} {-i} t" for i in range(30_000)] + [f"q{j} Q0 d1 1 1 t" for j in range(1, 50)]
    p = tmp_path / "f.run"
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert same_or_slow("run", str(p))


def test_a_question_of_many_blocks_is_read_in_linear_work(tmp_path, monkeypatch):
    """A question longer than a block is carried from block to block in
    place: each row is compared once to find where questions start, and
    handed on once (copying the carried rows at every block was quadratic)."""
    scanned, handed = [], []
    real_bounds, real_batch = fast_trec._bounds, fast_trec._batch
    monkeypatch.setattr(fast_trec, "_bounds", lambda qids, old: scanned.append(len(qids) - old) or real_bounds(qids, old))
    monkeypatch.setattr(fast_trec, "_batch", lambda cols, bounds, base: handed.append(bounds[-1])
                        or real_batch(cols, bounds, base))
    rows = 60_000
    p = tmp_path / "f.run"
    p.write_text("".join(f"q0 Q0 d{i} {i + 1} {-i} t\n" for i in range(rows)) + "q1 Q0 d1 1 1 t\n")
    assert same_or_slow("run", str(p))
    assert len(scanned) > 20  # many blocks
    assert sum(scanned) == rows + 1 and sum(handed) == rows + 1


def test_a_question_whose_lines_are_apart_is_left_to_the_exact_reader(tmp_path):
    p = tmp_path / "f.run"
    p.write_text("q1 Q0 d1 1 2 t\nq2 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n", encoding="utf-8")
    exact, problems, _ = _exact("run", str(p))
    assert not problems.items and exact.queries["q1"].ranking == ["d1", "d2"]
    assert not same_or_slow("run", str(p))


@pytest.mark.parametrize("limits,fast", [
    (Limits(max_records=100), True),
    (Limits(max_records=99), False),
    (Limits(max_line_bytes=2000), True),
    (Limits(max_line_bytes=16), False),  # the longest lines have 17 bytes
    (Limits(max_file_bytes=1000), False),
])
def test_limits_hand_over_to_the_exact_reader(tmp_path, limits, fast):
    p = tmp_path / "f.run"
    p.write_text("".join(f"q{i // 10} Q0 d{i} {i % 10 + 1} {100 - i % 10} t\n" for i in range(100)))
    assert same_or_slow("run", str(p), limits) is fast
    if not fast:
        exact, problems, _ = _exact("run", str(p), limits)
        assert exact is None or problems.items


def test_a_big_qrels_file_with_a_grade_map(tmp_path):
    rng = random.Random(3)
    lines = [f"{q} 0 doc-{d} {rng.choice([-2, -1, 0, 1, 2])}" for q in range(3000) for d in rng.sample(range(900), 8)]
    p = tmp_path / "f.qrels"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert same_or_slow("qrels", str(p))
    assert same_or_slow("qrels", str(p), grade_map={-2: 0, -1: 0})


# ---------------------------------------------------------------- behind the reader seam


def test_the_seam_reads_a_clean_file_once_and_a_faulty_one_exactly(tmp_path, monkeypatch):
    """inputs.read_run / read_gold: a clean TREC file never reaches the
    exact reader; one with a fault is read by it from the start (its
    messages), and the digest is the file's either way."""
    calls = []
    for module, name in ((exact_run, "read_run"), (exact_gold, "read_gold")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, **k: calls.append(a[0]) or _real(*a, **k))
    run, qrels = tmp_path / "r.run", tmp_path / "g.qrels"
    run.write_text(_big_run(random.Random(1), questions=200), encoding="utf-8")
    qrels.write_text("".join(f"q{q} 0 doc-{d} 1\n" for q in range(200) for d in range(3)), encoding="utf-8")
    for _ in range(2):
        h1, h2 = Sha256(), Sha256()
        problems = Problems()
        got_run = inputs.read_run(Source(str(run), "r.run", "trec"), LIMITS, problems, hasher=h1)
        got_gold = inputs.read_gold(Source(str(qrels), "g.qrels", "qrels"), LIMITS, problems, hasher=h2)
        assert h1.hexdigest() == hashlib.sha256(run.read_bytes()).hexdigest()
        assert h2.hexdigest() == hashlib.sha256(qrels.read_bytes()).hexdigest()
        assert len(got_run.queries) == 200 and len(got_gold.queries) == 200
        if not calls:
            assert not problems.items
            run.write_bytes(run.read_bytes() + b"q0 Q0 doc-x 1 nan t\n")  # a fault at the very end
            qrels.write_bytes(qrels.read_bytes() + b"q0 0 doc-0 2\n")  # judged twice, far from the first
            continue
        assert calls == [str(run), str(qrels)]
        assert [(p.file, p.line) for p in problems.items] == [("r.run", 12001), ("g.qrels", 601)]
