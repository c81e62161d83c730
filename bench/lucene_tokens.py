"""The analyzer's tokens against Lucene's EnglishAnalyzer and CJKAnalyzer.

    python bench/lucene_tokens.py --fetch      # once: the Lucene jar (see below)
    python bench/lucene_tokens.py [FILE ...]   # default: tests/fixtures/analyzer/*.txt
    python bench/lucene_tokens.py --mixed      # 300 lines of CJK, Latin and digits mixed at random

Runs tests/lucene/LuceneTokens.java (Java 11+, single-file launch) over each
line of the text, `english` for en*.txt (against ``retriever.stemmer:
porter``) and `cjk` for the others (against the default analyzer), both
without stop words, and prints how many lines and tokens agree and which
tokens differ. tests/test_analyzer_lucene.py runs the same comparison.

Lucene comes from ``LUCENE_CLASSPATH`` or, after ``--fetch``, from
~/.cache/rag-corpus-check/anserini-0.39.0-fatjar.jar: Anserini's fat jar
(Lucene 9.9.1) from the source distribution of pyserini 0.44.0 on PyPI
(195 MB download; `pip download`), as Maven Central may not be reachable.
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "check"))
FIXTURES = ROOT / "tests" / "fixtures" / "analyzer"
JAVA = ROOT / "tests" / "lucene" / "LuceneTokens.java"
CACHE = Path.home() / ".cache" / "rag-corpus-check"
JAR = "anserini-0.39.0-fatjar.jar"
PYSERINI = "pyserini==0.44.0"


def classpath() -> str | None:
    """Lucene's class path: ``LUCENE_CLASSPATH``, else the fetched jar, else None."""
    given = os.environ.get("LUCENE_CLASSPATH")
    if given:
        return given
    jar = CACHE / JAR
    return str(jar) if jar.is_file() else None


def fetch() -> Path:
    """Anserini's fat jar out of pyserini's source distribution (PyPI)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", PYSERINI,
                        "-d", tmp], check=True)
        [sdist] = Path(tmp).glob("pyserini-*.tar.gz")
        with tarfile.open(sdist) as tar:
            member = next(m for m in tar.getmembers() if m.name.endswith("/" + JAR) and m.isfile())
            src = tar.extractfile(member)
            assert src is not None
            (CACHE / JAR).write_bytes(src.read())
    return CACHE / JAR


def lucene_tokens(cp: str, analyzer: str, lines: list[str]) -> list[list[str]]:
    """Lucene's tokens of each line (``analyzer``: english or cjk)."""
    out = subprocess.run(["java", "-cp", cp, str(JAVA), analyzer], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, encoding="utf-8", check=True, timeout=600)
    got = out.stdout.split("\n")[: len(lines)]
    return [line.split() for line in got]


def agreement(ours: list[list[str]], theirs: list[list[str]]) -> tuple[int, int, int, list[str]]:
    """(lines identical, tokens in the longest common runs, tokens in all, the tokens that differ)."""
    same_lines = same_tokens = total = 0
    diffs: list[str] = []
    for a, b in zip(ours, theirs, strict=True):
        same_lines += a == b
        total += max(len(a), len(b))
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        same_tokens += sum(block.size for block in matcher.get_matching_blocks())
        diffs += [t for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal" for t in a[i1:i2] + b[j1:j2]]
    return same_lines, same_tokens, total, diffs


def mixed_lines(n: int = 300, seed: int = 3) -> list[str]:
    """Characters of every script the bigram rule touches, and its neighbours,
    mixed at random: the worst case for the rules, not text anyone writes."""
    import random

    rnd = random.Random(seed)
    pools = {
        "han": [chr(c) for c in range(0x4E00, 0x4E00 + 300)], "hiragana": [chr(c) for c in range(0x3041, 0x3097)],
        "katakana": [chr(c) for c in range(0x30A1, 0x30FB)] + ["ー", "ヽ", "ヾ"],
        "hangul": [chr(c) for c in range(0xAC00, 0xAC00 + 200)], "latin": list("abcdefgxyz"),
        "digit": list("0123456789"), "punctuation": list("、。，！？・「」 "),
        "other": ["々", "〆", "〇", "ｶ", "ﾞ", "ｱ", "ﾟ", "ㄱ", "ㅏ"],
    }
    names = list(pools)
    return ["".join(rnd.choice(pools[rnd.choice(names)]) for _ in range(rnd.randint(5, 40))) for _ in range(n)]


def _report(name: str, lines: list[str], english: bool, cp: str) -> None:
    from rag_corpus_check.retrieval.analyzer import Analyzer

    ours = Analyzer(stemmer="porter") if english else Analyzer()
    same_lines, same, total, diffs = agreement([ours.tokens(line) for line in lines],
                                               lucene_tokens(cp, "english" if english else "cjk", lines))
    shown = " ".join(diffs) if len(diffs) <= 40 else " ".join(diffs[:40]) + f" … ({len(diffs)} in all)"
    print(f"{name} vs {'EnglishAnalyzer (porter)' if english else 'CJKAnalyzer'}: {same_lines}/{len(lines)} "
          f"lines identical, {same}/{total} tokens ({same / max(total, 1):.2%}); differing tokens: {shown or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--fetch", action="store_true", help="download the Lucene jar first")
    parser.add_argument("--mixed", action="store_true", help="compare on generated lines of mixed scripts")
    args = parser.parse_args()
    if args.fetch:
        print(f"fetched {fetch()}")
    cp = classpath()
    if cp is None:
        raise SystemExit("no Lucene jar: set LUCENE_CLASSPATH or run with --fetch")
    if args.mixed:
        _report("300 mixed lines", mixed_lines(), False, cp)
        return
    for path in args.files or sorted(FIXTURES.glob("*.txt")):
        _report(path.name, path.read_text(encoding="utf-8").splitlines(), path.name.startswith("en"), cp)


if __name__ == "__main__":
    main()
