"""Hostile inputs built to cost the most per byte, one folder each, with a
config (``.rag-corpus-check.yml``) — the attacks and the worst cases of docs/performance.md
("The worst input of at most 1 MB"), measured from the repository's top with:

    python bench/dos.py /tmp/dos
    for d in /tmp/dos/*/; do (cd "$d" && PYTHONPATH="$OLDPWD/check" /usr/bin/time -f "$d %U+%S s %M KB" \\
        python -m rag_corpus_check --quiet --no-github --output out/r.json --summary-file out/s.md); done

Same arguments, same bytes. The `cost-*` cases are git repositories with a
base commit: run them also with `--base "$(cat .git/BASE)"`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random

CORPUS = "".join(json.dumps({"id": f"d{i}", "text": f"document {i}"}) + "\n" for i in range(10))
RUN = json.dumps({"query_id": "q0", "ranking": ["d0"]}) + "\n"
HEAD = "version: 1\nk: 1\ncorpus: corpus.jsonl\n"


def _write(folder: str, name: str, data: str | bytes) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def _case(out: str, name: str, config: str, files: dict[str, str | bytes]) -> None:
    folder = os.path.join(out, name)
    _write(folder, "corpus.jsonl", CORPUS)
    _write(folder, "run.jsonl", RUN)
    for file, data in files.items():
        _write(folder, file, data)
    _write(folder, ".rag-corpus-check.yml", HEAD + config)


def _question(i: int) -> dict:
    return {"query_id": f"q{i}", "query": "x", "relevant": {"d1": 1}}


def json_gold(out: str, size: int = 1_070_000) -> None:
    """A JSON gold document: a `"query_id"` key per ~60 bytes."""
    n = size // 85
    text = json.dumps({"queries": [_question(i) for i in range(n)]}, indent=1)
    _case(out, "json-gold", "gold: gold.json\nrun: run.jsonl\n", {"gold.json": text})


def escaped_qrels(out: str, size: int = 1_100_000, name: str = "escaped-qrels") -> None:
    """pytrec_eval qrels with ids written with `\\u` escapes json.dumps does not write."""
    n = size // 31
    body = ",\n".join(f'"\\u0071{i}": {{"\\u0064{i % 10}": 1}}' for i in range(n))
    _case(out, name, "gold: qrels.json\nrun: run.jsonl\nformats: {gold: qrels-json}\n",
          {"qrels.json": "{\n" + body + "\n}\n"})


def gold_list(out: str) -> None:
    """`max_records: 1000`, and six gold files of 999 questions each."""
    files = {f"gold{j}.jsonl": "".join(json.dumps(_question(j * 1000 + i)) + "\n" for i in range(999))
             for j in range(6)}
    names = ", ".join(files)
    _case(out, "gold-list", f"gold: [{names}]\nrun: run.jsonl\nlimits: {{max_records: 1000}}\n", files)


def gzip_gold(out: str) -> None:
    """A ~1 MB `.jsonl.gz` of questions (each line different)."""
    lines = "".join(json.dumps(_question(i)) + "\n" for i in range(420_000))
    _case(out, "gzip-gold", "gold: gold.jsonl.gz\nrun: run.jsonl\n",
          {"gold.jsonl.gz": gzip.compress(lines.encode(), 9, mtime=0)})


def gzip_invalid(out: str) -> None:
    """A few KB of `.jsonl.gz`: 100,000 lines, each failing the schema."""
    lines = "".join('{"query_id": "q", "relevant": {"d1": "x"}}\n' for _ in range(100_000))
    _case(out, "gzip-invalid", "gold: gold.jsonl.gz\nrun: run.jsonl\n",
          {"gold.jsonl.gz": gzip.compress(lines.encode(), 9, mtime=0)})


def gzip_corpus(out: str, lines: int = 2_097_152) -> None:
    """A gzip corpus of one repeated line: 2.3 GB decompressed."""
    line = (json.dumps({"id": "a", "text": "x" * 1000}) + "\n").encode()
    comp = gzip.compress(line * 4096, 9, mtime=0)  # gzip members concatenate
    folder = os.path.join(out, "gzip-corpus")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "corpus.jsonl.gz"), "wb") as f:
        for _ in range(lines // 4096):
            f.write(comp)
    _write(folder, "gold.jsonl", json.dumps(_question(0)) + "\n")
    _write(folder, "run.jsonl", RUN)
    _write(folder, ".rag-corpus-check.yml", "version: 1\nk: 1\ncorpus: corpus.jsonl.gz\ngold: gold.jsonl\n"
                                            "run: run.jsonl\n")


def bm25_ties(out: str, docs: int = 25_000, questions: int = 8_000) -> None:
    """Every document ties for every question: `x` and `x <n>`."""
    folder = os.path.join(out, "bm25-ties")
    _write(folder, "corpus.jsonl", "".join(json.dumps({"id": f"d{i}", "text": "x"}) + "\n" for i in range(docs)))
    gold = "".join(json.dumps({"query_id": f"q{i}", "query": f"x {i}", "relevant": {"d1": 1}}) + "\n"
                   for i in range(questions))
    _write(folder, "gold.jsonl", gold)
    _write(folder, ".rag-corpus-check.yml", "version: 1\nk: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\n")


# ---------------------------------------------------------------- the worst that passes the default limits


def worst_gzip_jsonl(out: str, size: int = 1_000_000) -> None:
    """1 MB of `.jsonl.gz` questions compressed just under max_compression_ratio (8)."""
    rnd = random.Random(1)
    data, lines = b"", []
    while True:
        lines.append(json.dumps({"query_id": f"{rnd.getrandbits(48):012x}", "query": "x",
                                 "relevant": {"d1": 1}}) + "\n")
        if len(lines) % 20_000 == 0:
            data = gzip.compress("".join(lines).encode(), 9, mtime=0)
            if len(data) >= size:
                break
    _case(out, "worst-gzip-jsonl", "gold: gold.jsonl.gz\nrun: run.jsonl\n", {"gold.jsonl.gz": data})


def worst_gzip_yaml(out: str) -> None:
    """A `.yaml.gz` gold set of 4 MiB (the most a YAML document may be), ratio
    about 7: refused, a compressed document keeps to 8 // 3 = 2."""
    rnd = random.Random(2)
    text, n = [], 0
    while n < 4 * 1024**2 - 64:
        line = f"- {{query_id: q{rnd.getrandbits(32):08x}, relevant: {{d1: 1}}}}\n"
        text.append(line)
        n += len(line)
    data = gzip.compress(("queries:\n" + "".join(text[:-1])).encode(), 9, mtime=0)
    _case(out, "worst-gzip-yaml", "gold: gold.yaml.gz\nrun: run.jsonl\n", {"gold.yaml.gz": data})


def worst_gzip_lines(out: str, size: int = 1_000_000) -> None:
    """1 MB of `.jsonl.gz` blank lines of random spaces, tabs and CRs: the
    most lines a compressed byte can hold under the ratio."""
    rnd = random.Random(4)
    lines: list[str] = []
    data = b""
    while len(data) < size:
        lines += ["".join(rnd.choice(" \t\r") for _ in range(rnd.randint(0, 12))) + "\n" for _ in range(50_000)]
        data = gzip.compress("".join(lines).encode(), 9, mtime=0)
    _case(out, "worst-gzip-lines", "gold: gold.jsonl.gz\nrun: run.jsonl\n", {"gold.jsonl.gz": data})


def worst_invalid_yaml(out: str, size: int = 1_000_000) -> None:
    """YAML gold of 26,000 questions whose grade is not a number (1.04 MB)."""
    text = "queries:\n" + "".join(f"- {{query_id: q{i}, relevant: {{d1: x}}}}\n" for i in range(size // 38))
    _case(out, "worst-invalid-yaml", "gold: gold.yaml\nrun: run.jsonl\n", {"gold.yaml": text})


# What 1 MB of a compressed YAML or JSON document may decompress to: 2 x 1 MB + 256 KiB.
DOCUMENT_BOUND = 2 * 1_000_000 + 256 * 1024


def worst_document_yaml(out: str, size: int = DOCUMENT_BOUND) -> None:
    """YAML gold of small nodes, as large as 1 MB of `.yaml.gz` may hold."""
    text, n, i = ["queries:\n"], 9, 0
    while True:
        line = f"- {{query_id: q{i:08x}, relevant: {{d1: 1}}}}\n"
        if n + len(line) > size:
            break
        text.append(line)
        n += len(line)
        i += 1
    _case(out, "worst-document-yaml", "gold: gold.yaml\nrun: run.jsonl\n", {"gold.yaml": "".join(text)})


def worst_document_qrels(out: str, size: int = DOCUMENT_BOUND) -> None:
    """qrels-json with escaped keys, as large as 1 MB of `.json.gz` may hold."""
    escaped_qrels(out, size, "worst-document-qrels")


def worst_bm25(out: str, docs: int = 15_000, questions: int = 8_000, terms: int = 2) -> None:
    """1 MB: every document holds the terms of every question (all but the
    longest posting list are added in Python), until the work budget."""
    name = "worst-bm25" if terms == 2 else f"worst-bm25-{terms}"
    folder = os.path.join(out, name)
    words = " ".join("abcdefghijklmnop"[:terms])
    _write(folder, "corpus.jsonl", "".join(json.dumps({"id": f"d{i}", "text": words}) + "\n" for i in range(docs)))
    _write(folder, "gold.jsonl", "".join(json.dumps({"query_id": f"q{i}", "query": f"{words} {i}", "relevant": {"d1": 1}})
                                         + "\n" for i in range(questions)))
    _write(folder, ".rag-corpus-check.yml", "version: 1\nk: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\n")


def worst_bm25_8(out: str) -> None:
    """As worst_bm25 with eight terms (seven posting lists added in Python)."""
    worst_bm25(out, docs=12_000, questions=6_000, terms=8)


def worst_vocabulary(out: str, size: int = 1_000_000) -> None:
    """1 MB corpus of distinct tokens for BM25's index."""
    folder = os.path.join(out, "worst-vocabulary")
    words = (f"w{i:x}" for i in range(10**8))
    lines, n, i = [], 0, 0
    while n < size:
        line = json.dumps({"id": f"d{i}", "text": " ".join(next(words) for _ in range(100))}) + "\n"
        lines.append(line)
        n += len(line)
        i += 1
    _write(folder, "corpus.jsonl", "".join(lines[:-1]))
    _write(folder, "gold.jsonl", json.dumps({"query_id": "q0", "query": "w1 w2", "relevant": {"d1": 1}}) + "\n")
    _write(folder, ".rag-corpus-check.yml", "version: 1\nk: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\n")


def worst_gzip_corpus(out: str, size: int = 850_000) -> None:
    """1 MB `.jsonl.gz` corpus for BM25, words from 4,096, ratio about 7."""
    rnd = random.Random(3)
    lines: list[str] = []
    data = b""
    while len(data) < size:
        for _ in range(5000):
            words = " ".join(f"t{rnd.getrandbits(12):03x}" for _ in range(40))
            lines.append(json.dumps({"id": f"d{len(lines)}", "text": words}) + "\n")
        data = gzip.compress("".join(lines).encode(), 9, mtime=0)
    folder = os.path.join(out, "worst-gzip-corpus")
    _write(folder, "corpus.jsonl.gz", data)
    _write(folder, "gold.jsonl", "".join(json.dumps({"query_id": f"q{i}", "query": f"t{i:03x} t{i + 1:03x}",
                                                     "relevant": {"d1": 1}}) + "\n" for i in range(2000)))
    _write(folder, ".rag-corpus-check.yml", "version: 1\nk: 1\ncorpus: corpus.jsonl.gz\ngold: gold.jsonl\n")


# ---------------------------------------------------------------- dense retrieval: ties are work


def worst_markdown(out: str, lines: int = 166_666) -> None:
    """A 1 MB Markdown page within the reader's bounds: a heading in a list
    item every 6 bytes (`- # a`), one section record each."""
    folder = os.path.join(out, "worst-markdown")
    _write(os.path.join(folder, "docs"), "p.md", "- # a\n" * lines)
    _write(folder, "gold.jsonl", json.dumps({"query_id": "q0", "query": "a", "relevant": {"docs/p.md#a": 1}}) + "\n")
    _write(folder, ".rag-corpus-check.yml", 'version: 1\nk: 1\ncorpus: {format: markdown, paths: ["docs/*.md"]}\n'
           "gold: gold.jsonl\n")


def worst_store_segments(out: str, segments: int = 4096) -> None:
    """A vector store of the most segments it may hold (4,096 pairs, ~0.85 MB),
    one 1-dimension row each: a file pair opened, checked and hashed per
    208 bytes. The texts have vectors, the one question in the last segment."""
    import hashlib

    import numpy as np

    folder = os.path.join(out, "worst-store-segments")
    seg = os.path.join(folder, "store", "segments")
    os.makedirs(seg, exist_ok=True)
    texts = [f"document {i}" for i in range(10)] + ["x"]
    for i in range(segments):
        text = texts[i] if i < len(texts) - 1 else (texts[-1] if i == segments - 1 else f"filler {i}")
        key = hashlib.sha256(text.encode()).hexdigest()
        name = f"{i:016x}"
        with open(os.path.join(seg, name + ".npy"), "wb") as f:
            np.save(f, np.full((1, 1), 1.0 + i % 7, dtype="<f4"))
        _write(seg, name + ".jsonl", json.dumps({"sha256": key}) + "\n")
    _write(os.path.join(folder, "store"), "store.json",
           json.dumps({"model": "m-1", "dimensions": 1, "embed": ["text"]}))
    _write(folder, "corpus.jsonl", CORPUS)
    _write(folder, "gold.jsonl", json.dumps({"query_id": "q0", "query": "x", "relevant": {"d1": 1}}) + "\n")
    _write(folder, ".rag-corpus-check.yml", HEAD + "gold: gold.jsonl\n"
           "retriever: {type: dense, vectors: store, model: m-1, embed: [text], depth: 5}\n")


def dense_ties(out: str, docs: int = 3_900, questions: int = 3_300, kind: str = "dense") -> None:
    """997 KB: 1-D float16 vectors all equal (every document ties with every
    other for every question), `depth: 5`; the vectors folder as
    docs/retrieval.md describes it."""
    import hashlib

    import numpy as np

    folder = os.path.join(out, f"{kind}-ties")
    vectors = os.path.join(folder, "vectors")
    texts = [f"{i}" for i in range(docs)]
    asked = [f"x {i}" for i in range(questions)]
    tight = {"separators": (",", ":")}
    _write(folder, "corpus.jsonl", "".join(json.dumps({"id": f"d{i}", "text": t}, **tight) + "\n"
                                           for i, t in enumerate(texts)))
    _write(folder, "gold.jsonl", "".join(json.dumps({"query_id": f"q{i}", "query": t, "relevant": {"d1": 1}}, **tight)
                                         + "\n" for i, t in enumerate(asked)))
    sha = [hashlib.sha256(t.encode()).hexdigest() for t in texts + asked]
    _write(vectors, "model.json", json.dumps({"model": "m", "dimensions": 1}))
    _write(vectors, "documents.jsonl", "".join(json.dumps({"id": f"d{i}", "sha256": h}) + "\n"
                                               for i, h in enumerate(sha[:docs])))
    _write(vectors, "questions.jsonl", "".join(json.dumps({"query_id": f"q{i}", "sha256": h}) + "\n"
                                               for i, h in enumerate(sha[docs:])))
    np.save(os.path.join(vectors, "documents.npy"), np.ones((docs, 1), dtype="<f2"))
    np.save(os.path.join(vectors, "questions.npy"), np.ones((questions, 1), dtype="<f2"))
    _write(folder, ".rag-corpus-check.yml", "version: 1\nk: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\n"
                                            f"retriever: {{type: {kind}, vectors: vectors, model: m, depth: 5}}\n")


def hybrid_ties(out: str) -> None:
    """As dense_ties, `type: hybrid` (BM25 and dense fused)."""
    dense_ties(out, kind="hybrid")


# ---------------------------------------------------------------- resampling: measures x slices x questions


def _cost_tree(folder: str, config: str, questions: int, tags: int, seed: int, pad: int = 0) -> None:
    """A corpus of 30 documents (``pad`` bytes of text each), ``questions``
    questions with ``tags`` tags each and a run (``seed``: which system)."""
    rnd = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    _write(folder, "corpus.jsonl", "".join(json.dumps({"id": d, "text": f"document {d} " + "x" * pad}) + "\n"
                                           for d in docs))
    _write(folder, "gold.jsonl", "".join(json.dumps({"query_id": f"q{i}", "relevant": {f"d{i % 30}": 1},
                                                     "tags": [f"t{j}" for j in range(tags)]}) + "\n"
                                         for i in range(questions)))
    _write(folder, "run.jsonl", "".join(json.dumps({"query_id": f"q{i}", "ranking": rnd.sample(docs, 10)}) + "\n"
                                        for i in range(questions)))
    _write(folder, ".rag-corpus-check.yml", "version: 1\nk: 1\ncorpus: corpus.jsonl\ngold: gold.jsonl\n"
                                            "run: run.jsonl\n" + config)


def _cost_repo(folder: str, config: str, questions: int, tags: int, pad: int = 0) -> None:
    """:func:`_cost_tree` as a git repository: a base commit and a head
    commit (another run); the base's sha in ``BASE`` for ``--base``."""
    import subprocess

    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "b",
           "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True, text=True).stdout

    _cost_tree(folder, config, questions, tags, seed=1, pad=pad)
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD").strip()
    _cost_tree(folder, config, questions, tags, seed=2, pad=pad)
    git("commit", "-qam", "head")
    with open(os.path.join(folder, ".git", "BASE"), "w") as f:  # out of the tree: `--base $(cat .git/BASE)`
        f.write(base + "\n")


def cost_thresholds(out: str) -> None:
    """1,000 thresholds `P@j: 0` (11 KB of config), 200 questions; a git
    repository: run with and without `--base $(cat .git/BASE)`."""
    config = "thresholds:\n" + "".join(f"  P@{j}: 0\n" for j in range(1, 1001))
    _cost_repo(os.path.join(out, "cost-thresholds"), config, 200, 0)


def cost_measures_slices(out: str) -> None:
    """The most the caps allow: 50 thresholds and 50 `measures:` (103
    measures with the headline ones), 1,000 questions with 20 tags each
    (200 KB of gold); a git repository, with and without `--base`."""
    config = ("thresholds:\n" + "".join(f"  P@{j}: 0\n" for j in range(2, 52))
              + "measures: [" + ", ".join(f"R@{j}" for j in range(2, 52)) + "]\n")
    _cost_repo(os.path.join(out, "cost-measures-slices"), config, 1000, 20)


def cost_at_budget(out: str) -> None:
    """0.9 MB (a corpus padded to 750 KB), 1,000 questions and 7 thresholds
    (11 measures): with `--base`, 79 % of the default resampling budget of
    its size."""
    config = "thresholds:\n" + "".join(f"  P@{j}: 0\n" for j in range(2, 9))
    _cost_repo(os.path.join(out, "cost-at-budget"), config, 1000, 0, pad=25_000)


def cost_many_questions(out: str) -> None:
    """1 MB: 6,000 questions and the 103 measures of `cost-measures-slices`
    (each question's measures are taken before the budget can be planned)."""
    config = ("thresholds:\n" + "".join(f"  P@{j}: 0\n" for j in range(2, 52))
              + "measures: [" + ", ".join(f"R@{j}" for j in range(2, 52)) + "]\n")
    _cost_repo(os.path.join(out, "cost-many-questions"), config, 6000, 0)


COST_CASES = (cost_thresholds, cost_measures_slices, cost_at_budget, cost_many_questions)

CASES = {f.__name__.replace("_", "-"): f for f in COST_CASES}
CASES |= {f.__name__.replace("_", "-"): f for f in (json_gold, escaped_qrels, gold_list, gzip_gold, gzip_invalid,
                                                   gzip_corpus, bm25_ties, worst_gzip_jsonl, worst_gzip_lines, worst_gzip_yaml, worst_invalid_yaml,
                                                   worst_document_yaml, worst_document_qrels, worst_bm25, worst_bm25_8,
                                                   worst_vocabulary, worst_gzip_corpus)}
CASES |= {"dense-ties": dense_ties, "hybrid-ties": hybrid_ties}
CASES |= {"worst-markdown": worst_markdown, "worst-store-segments": worst_store_segments}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("cases", nargs="*", default=list(CASES), help=", ".join(CASES))
    args = parser.parse_args()
    for name in args.cases:
        CASES[name](args.out)


if __name__ == "__main__":
    main()
