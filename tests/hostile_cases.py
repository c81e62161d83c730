"""Every hostile input of issue 7, as data.

A :class:`Case` spoils the small repository of :mod:`hostile` in one way and
says what must happen: the exit code, a phrase of the problem message and the
``file:line`` it points at. ``tests/test_hostile.py`` runs each case and checks
the invariants that hold for all of them; this file also writes the table in
``docs/hostile-input.md`` from real runs::

    PYTHONPATH=check python3 tests/hostile_cases.py --doc docs/hostile-input.md
"""

from __future__ import annotations

import codecs
import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import write as w
from hostile import (
    CANARY,
    CONFIG_NAME,
    CORPUS,
    GOLD,
    RUN,
    config_text,
    jsonl,
    plant_git_dir,
    yq,
)
from rag_corpus_check.text import safe_text


@dataclass(frozen=True)
class Case:
    id: str
    group: str
    title: str  # the hostile input, in words (the docs table)
    setup: Callable[[Path, Path], None]  # (repo, outside)
    exit: int
    expect: str | None = None  # a phrase of the problem message
    where: str | None = None  # what its location starts with: "file" or "file:line"
    action: bool = False  # run as the action does (a child `python -I`), not in-process
    budget: float = 5.0  # seconds
    forbid: tuple = ()  # text that must not appear in any output
    marker: str | None = None  # a file (relative to the repository) that must not appear
    xfail: str | None = None  # a known gap, with where it must be fixed


CASES: list[Case] = []


def case(*args, **kwargs) -> None:
    CASES.append(Case(*args, **kwargs))


# ---------------------------------------------------------------- helpers for setups


def _code(s: str) -> str:
    """A Markdown code span that survives backticks in ``s``."""
    return f"`` {s} ``" if "`" in s else f"`{s}`"


def set_config(repo: Path, **kw) -> None:
    w(repo / CONFIG_NAME, config_text(**kw))


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def symlink(link: Path, target: str | Path) -> None:
    if link.exists() or link.is_symlink():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


def run_line(repo: Path, n: int, text: str | bytes) -> None:
    """Replace line ``n`` (1-based) of run.jsonl."""
    lines = (repo / "run.jsonl").read_bytes().split(b"\n")
    lines[n - 1] = text.encode("utf-8") if isinstance(text, str) else text
    (repo / "run.jsonl").write_bytes(b"\n".join(lines))


def corpus_line(repo: Path, n: int, text: str | bytes) -> None:
    lines = (repo / "corpus.jsonl").read_bytes().split(b"\n")
    lines[n - 1] = text.encode("utf-8") if isinstance(text, str) else text
    (repo / "corpus.jsonl").write_bytes(b"\n".join(lines))


def gold_with(relevant_q1: str = "{d1: 2, d2: 0}", query_id_q1: str = "q1") -> str:
    return GOLD.replace("{d1: 2, d2: 0}", relevant_q1).replace(
        "query_id: q1", f"query_id: {query_id_q1}"
    )


def sparse(path: Path, size: int) -> None:
    if path.exists() or path.is_symlink():
        path.unlink()
    with open(path, "wb"):
        pass
    os.truncate(path, size)


# ---------------------------------------------------------------- paths and symlinks

case(
    "symlink-proc-environ",
    "paths",
    "`corpus.jsonl` is a symlink to `/proc/self/environ` (the canary is in the environment)",
    lambda r, o: symlink(r / "corpus.jsonl", "/proc/self/environ"),
    2,
    "symlink that leads outside the repository",
    "corpus.jsonl",
    action=True,
)
case(
    "symlink-etc-passwd",
    "paths",
    "`gold.yaml` is a symlink to `/etc/passwd`",
    lambda r, o: symlink(r / "gold.yaml", "/etc/passwd"),
    2,
    "symlink that leads outside the repository",
    "gold.yaml",
    forbid=("root:x:0",),
)


def _git_config_link(r, o):
    plant_git_dir(r)
    symlink(r / "data" / "run.jsonl", "../.git/config")
    set_config(r, run="data/run.jsonl")


case(
    "symlink-git-config",
    "paths",
    "`data/run.jsonl` is a symlink to `../.git/config` (which holds a token)",
    _git_config_link,
    2,
    "symlink into `.git`",
    "data/run.jsonl",
    action=True,
)


def _git_config_path(r, o):
    plant_git_dir(r)
    set_config(r, corpus=".git/config")


case(
    "path-into-git",
    "paths",
    "the config names `.git/config` as the corpus",
    _git_config_path,
    2,
    "is inside `.git`",
    CONFIG_NAME,
)


def _dir_link(r, o):
    symlink(r / "data", o)
    set_config(r, corpus="data/corpus.jsonl")


case(
    "symlinked-directory",
    "paths",
    "`data/` is a symlink to a directory outside; the config names `data/corpus.jsonl`",
    _dir_link,
    2,
    "symlink that leads outside the repository",
    "data/corpus.jsonl",
)
case(
    "symlink-relative-escape",
    "paths",
    "`corpus.jsonl` is a relative symlink `../outside/secret.jsonl`",
    lambda r, o: symlink(r / "corpus.jsonl", os.path.relpath(o / "secret.jsonl", r)),
    2,
    "symlink that leads outside the repository",
    "corpus.jsonl",
)
case(
    "symlink-target-named-canary",
    "paths",
    "the symlink's target path itself contains the secret",
    lambda r, o: symlink(r / "corpus.jsonl", o / f"{CANARY}-dir" / f"{CANARY}.jsonl"),
    2,
    "symlink that leads outside the repository",
    "corpus.jsonl",
)


def _loop(r, o):
    symlink(r / "loop-a", "loop-b")
    symlink(r / "loop-b", "loop-a")
    symlink(r / "corpus.jsonl", "loop-a")


case(
    "symlink-loop",
    "paths",
    "`corpus.jsonl` → `loop-a` → `loop-b` → `loop-a`",
    _loop,
    2,
    "symlink loop",
    "corpus.jsonl",
)
case(
    "symlink-dev-zero",
    "paths",
    "`run.jsonl` is a symlink to `/dev/zero`",
    lambda r, o: symlink(r / "run.jsonl", "/dev/zero"),
    2,
    "symlink that leads outside the repository",
    "run.jsonl",
)
case(
    "config-symlink-outside",
    "paths",
    "the config file itself is a symlink to a file outside",
    lambda r, o: symlink(r / CONFIG_NAME, o / "secret.yaml"),
    2,
    "symlink that leads outside the repository",
    CONFIG_NAME,
)
case(
    "config-absolute-path",
    "paths",
    "`corpus: /etc/passwd`",
    lambda r, o: set_config(r, corpus="/etc/passwd"),
    2,
    "absolute paths are not allowed",
    CONFIG_NAME,
    forbid=("root:x:0",),
)
case(
    "config-dotdot",
    "paths",
    "`gold: ../../etc/passwd`",
    lambda r, o: set_config(r, gold="../../etc/passwd"),
    2,
    "points outside the repository",
    CONFIG_NAME,
)
case(
    "config-dotdot-inside-then-out",
    "paths",
    "`gold: data/../../outside/secret.jsonl`",
    lambda r, o: set_config(r, gold="data/../../outside/secret.jsonl"),
    2,
    "points outside the repository",
    CONFIG_NAME,
)
case(
    "config-tilde",
    "paths",
    "`run: ~/run.jsonl`",
    lambda r, o: set_config(r, run="~/run.jsonl"),
    2,
    "`~` paths are not allowed",
    CONFIG_NAME,
)
case(
    "config-nul",
    "paths",
    'a NUL in a path: `corpus: "corpus\\0.jsonl"`',
    lambda r, o: set_config(r, corpus="corpus\x00.jsonl"),
    2,
    "control character",
    f"{CONFIG_NAME}:2",
)


def _dir_for_file(r, o):
    (r / "golddir.yaml").mkdir()
    set_config(r, gold="golddir.yaml")


case(
    "directory-for-file",
    "paths",
    "the gold path is a directory",
    _dir_for_file,
    2,
    "directory",
    "golddir.yaml",
)


def _fifo(r, o):
    (r / "run.jsonl").unlink()
    os.mkfifo(r / "run.jsonl")


case(
    "fifo",
    "paths",
    "`run.jsonl` is a FIFO (a reader would block forever)",
    _fifo,
    2,
    "not a regular file",
    "run.jsonl",
)


def _device(r, o):
    (r / "corpus.jsonl").unlink()
    if os.geteuid() == 0:
        os.mknod(r / "corpus.jsonl", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's numbers
    else:
        os.mkfifo(
            r / "corpus.jsonl"
        )  # cannot make a device without root; a FIFO is refused the same way


case(
    "device-node",
    "paths",
    "`corpus.jsonl` is a character device (1,5: zero) inside the repository",
    _device,
    2,
    "not a regular file",
    "corpus.jsonl",
)
case(
    "missing-file",
    "paths",
    "the config names a file that does not exist",
    lambda r, o: set_config(r, run="nothing.jsonl"),
    2,
    "file not found",
    "nothing.jsonl",
)

# ---------------------------------------------------------------- file names

NAMES = {
    "semicolon": "a;id;b.jsonl",
    "backticks": "a`id`b.jsonl",
    "dollar-paren": "$(id).jsonl",
    "error-command": "::error::owned.jsonl",
    "percent-0a": "%0A::warning::owned.jsonl",
    "comma": "a,b.jsonl",
    "colon": "a:b.jsonl",
    "legacy-command": "##[error]owned.jsonl",
    "html": "<img src=x onerror=alert(1)>.jsonl",
    "md-link": "[ok](javascript:alert(1)).jsonl",
    "pipe": "a|b.jsonl",
    "u2028": "a\u2028::error::owned.jsonl",
    "nbsp-command": "\u00a0::error::owned.jsonl",
}


def _named_run(name: str):
    def setup(r, o):
        lines = jsonl(RUN).split("\n")
        lines[1] = json.dumps({"query_id": "q2", "ranking": ["ghost"]})
        (r / "run.jsonl").unlink()
        w(r / name, "\n".join(lines))
        set_config(r, run=name)

    return setup


for key, name in NAMES.items():
    case(
        f"name-{key}",
        "names",
        f"the run file is named {_code(json.dumps(name)[1:-1])} and has an unknown id on line 2",
        _named_run(name),
        2,
        "unknown document id at position 1",
        f"{safe_text(name, 1024)}:2",  # shown escaped everywhere, the results file included
    )


def _newline_name(r, o):
    name = "a\n::error::owned.jsonl"
    (r / "run.jsonl").rename(r / name)
    set_config(r, run=name)


case(
    "name-newline",
    "names",
    "the run file's name has a newline and `::error::`",
    _newline_name,
    2,
    "control character",
    f"{CONFIG_NAME}:4",
)

# ---------------------------------------------------------------- size


def _line_50mb(r, o):
    with open(r / "corpus.jsonl", "wb") as f:
        f.write((json.dumps(CORPUS[0]) + "\n").encode())
        f.write(b'{"id": "big", "text": "' + b"x" * (50 * 1024 * 1024) + b'"}\n')
        f.write("".join(json.dumps(d) + "\n" for d in CORPUS[1:]).encode())


case(
    "line-50mb",
    "size",
    "a corpus line of 50 MB",
    _line_50mb,
    2,
    "line is longer than 16777216 bytes",
    "corpus.jsonl:2",
    action=True,
    budget=5,
)
case(
    "sparse-2gb-jsonl",
    "size",
    "`corpus.jsonl` is a 2 GB sparse file (zeros)",
    lambda r, o: sparse(r / "corpus.jsonl", 2_000_000_000),
    2,
    "line is longer than 16777216 bytes",
    "corpus.jsonl:1",
    action=True,
    budget=5,
)
case(
    "sparse-2gb-yaml",
    "size",
    "`gold.yaml` is a 2 GB sparse file",
    lambda r, o: sparse(r / "gold.yaml", 2_000_000_000),
    2,
    "over the limit of 4194304 bytes for a YAML",
    "gold.yaml",
    action=True,
    budget=5,
)
case(
    "sparse-3gb",
    "size",
    "`run.jsonl` is a 3 GB sparse file (over `max_file_bytes`)",
    lambda r, o: sparse(r / "run.jsonl", 3_000_000_000),
    2,
    "over the limit of 2147483648",
    "run.jsonl",
    action=True,
    budget=5,
)


def _many_records(r, o, extra=""):
    with open(r / "corpus.jsonl", "wb") as f:
        f.write("".join(json.dumps(d) + "\n" for d in CORPUS).encode())
        f.write(b"".join(b'{"id":"c%d","text":"t"}\n' % i for i in range(1_000_000)))
    if extra:
        set_config(r, extra=extra)


case(
    "records-1e6",
    "size",
    "10^6 tiny corpus records (default limits: processed)",
    _many_records,
    0,
    action=True,
    budget=30,
)
case(
    "records-1e6-capped",
    "size",
    "10^6 tiny corpus records with `limits: {max_records: 100000}`",
    lambda r, o: _many_records(r, o, "limits:\n  max_records: 100000\n"),
    2,
    "more than 100000 records",
    "corpus.jsonl:100001",
    action=True,
    budget=5,
)


def _questions_yaml(r, o):
    with open(r / "gold.yaml", "w", encoding="utf-8") as f:
        f.write(GOLD)
        f.write("".join(f"  - {{query_id: x{i}, relevant: {{d1: 1}}}}\n" for i in range(300_000)))


case(
    "questions-300k-yaml",
    "size",
    "300,000 questions in `gold.yaml` (13 MB)",
    _questions_yaml,
    2,
    "over the limit of 4194304 bytes for a YAML",
    "gold.yaml",
    action=True,
    budget=5,
)


def _questions_jsonl(r, o):
    (r / "gold.yaml").unlink()
    with open(r / "gold.jsonl", "w", encoding="utf-8") as f:
        f.write(
            '{"query_id": "q1", "relevant": {"d1": 2}}\n{"query_id": "q2", "relevant": {"d3": 1}}\n'
        )
        f.write(
            "".join(f'{{"query_id": "x{i}", "relevant": {{"d1": 1}}}}\n' for i in range(300_000))
        )
    set_config(r, gold="gold.jsonl", extra="limits:\n  max_records: 100000\n")


case(
    "questions-300k-jsonl-capped",
    "size",
    "300,000 questions in `gold.jsonl` with `limits: {max_records: 100000}`",
    _questions_jsonl,
    2,
    "more than 100000 records",
    "gold.jsonl:100001",
    action=True,
    budget=5,
)
case(
    "config-2mb",
    "size",
    "a 2 MB config file",
    lambda r, o: set_config(r, extra="# " + "x" * 2_000_000 + "\n"),
    2,
    "over the limit of 1048576 bytes",
    CONFIG_NAME,
)

# ---------------------------------------------------------------- YAML

PWN = "touch PWNED"
case(
    "yaml-python-object-apply",
    "yaml",
    "`query: !!python/object/apply:os.system [touch PWNED]` in the gold set",
    lambda r, o: replace_in(
        r / "gold.yaml",
        'query: "How long are deleted backups kept?"',
        f"query: !!python/object/apply:os.system [{yq(PWN)}]",
    ),
    2,
    "YAML tag `tag:yaml.org,2002:python/object/apply:os.system` is not allowed",
    "gold.yaml:3",
    marker="PWNED",
)
case(
    "yaml-python-tag-config",
    "yaml",
    "a `!!python/object/apply` tag in the config",
    lambda r, o: set_config(r, extra=f"x: !!python/object/apply:os.system [{yq(PWN)}]\n"),
    2,
    "is not allowed",
    f"{CONFIG_NAME}:6",
    marker="PWNED",
)


def _laughs(r, o):
    lol = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lol.append(f"{cur}: &{cur} [" + ", ".join(f"*{prev}" for _ in range(9)) + "]")
    w(r / "gold.yaml", "\n".join(lol) + "\nqueries: []\n")


case(
    "yaml-billion-laughs",
    "yaml",
    "billion laughs: 10 levels of 9 aliases (9^10 nodes)",
    _laughs,
    2,
    "alias bomb",
    "gold.yaml",
)
case(
    "yaml-duplicate-key",
    "yaml",
    "`relevant: {d1: 2, d1: 0}`",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: 2, d1: 0}")),
    2,
    "duplicate key `d1`",
    "gold.yaml:4",
)
case(
    "yaml-duplicate-key-config",
    "yaml",
    "`k:` twice in the config (the second would win silently)",
    lambda r, o: set_config(r, extra="k: 1\n"),
    2,
    "duplicate key `k`",
    f"{CONFIG_NAME}:6",
)
case(
    "yaml-NO-as-id",
    "yaml",
    "`query_id: NO` (YAML 1.1: false)",
    lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1="NO")),
    2,
    "expected string, got boolean",
    "gold.yaml:2",
)
case(
    "yaml-on-as-key",
    "yaml",
    "`relevant: {on: 1}` (YAML 1.1: the key true)",
    lambda r, o: w(r / "gold.yaml", gold_with("{on: 1}")),
    2,
    "quote it",
    "gold.yaml:4",
)
case(
    "yaml-date-as-grade",
    "yaml",
    "`relevant: {d1: 2026-11-30}`",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: 2026-11-30}")),
    2,
    "expected integer, got string",
    "gold.yaml:4",
)
case(
    "yaml-date-as-id",
    "yaml",
    "`query_id: 2026-11-30` stays text, not a date (a valid id; the run lacks it: warnings)",
    lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1="2026-11-30")),
    0,
    "not in run.jsonl",
    "gold.yaml:2",
)
case(
    "yaml-octal-k",
    "yaml",
    "`k: 012` (YAML 1.1: octal 10)",
    lambda r, o: set_config(r, k="012"),
    2,
    "plain decimal",
    f"{CONFIG_NAME}:5",
)
case(
    "yaml-octal-grade",
    "yaml",
    "`relevant: {d1: 012}`",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: 012}")),
    2,
    "plain decimal",
    "gold.yaml:4",
)
case(
    "yaml-sexagesimal",
    "yaml",
    "`k: 1:20` (YAML 1.1: 80)",
    lambda r, o: set_config(r, k="1:20"),
    2,
    "plain decimal",
    f"{CONFIG_NAME}:5",
)
case(
    "yaml-1e3-grade",
    "yaml",
    "`relevant: {d1: 1e3}` (YAML 1.1: the string 1e3)",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: 1e3}")),
    2,
    "expected integer, got string",
    "gold.yaml:4",
)
case(
    "yaml-nan-threshold",
    "yaml",
    "`P@2: .nan` in the thresholds",
    lambda r, o: set_config(r, thresholds="  P@2: .nan\n"),
    2,
    "non-finite",
    f"{CONFIG_NAME}:7",
)
case(
    "yaml-inf-grade",
    "yaml",
    "`relevant: {d1: .inf}`",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: .inf}")),
    2,
    "non-finite",
    "gold.yaml:4",
)
case(
    "yaml-deep-flow-50000",
    "yaml",
    "50,000 nested `[` (the C loader segfaults there)",
    lambda r, o: w(r / "gold.yaml", "queries: " + "[" * 50_000 + "]" * 50_000 + "\n"),
    2,
    "nested deeper than 64 levels",
    "gold.yaml",
    action=True,
)
case(
    "yaml-deep-block-50000",
    "yaml",
    "50,000 nested block sequences on one line (`- - - …`)",
    lambda r, o: w(r / "gold.yaml", "queries:\n" + "- " * 50_000 + "x\n"),
    2,
    "nested deeper than 64 levels",
    "gold.yaml:2",
    action=True,
)
case(
    "yaml-deep-indent",
    "yaml",
    "a mapping nested 600 levels by indentation",
    lambda r, o: w(
        r / "gold.yaml", "".join(" " * i + "a:\n" for i in range(600)) + " " * 600 + "b: 1\n"
    ),
    2,
    "nested deeper than 64 levels",
    "gold.yaml",
)
case(
    "yaml-multi-document",
    "yaml",
    "two YAML documents in `gold.yaml`",
    lambda r, o: w(r / "gold.yaml", GOLD + "---\nqueries: []\n"),
    2,
    "invalid YAML",
    "gold.yaml",
)
case(
    "yaml-tabs",
    "yaml",
    "a tab used for indentation",
    lambda r, o: w(r / "gold.yaml", GOLD.replace("    relevant: {d3: 1}", "\trelevant: {d3: 1}")),
    2,
    "invalid YAML",
    "gold.yaml:7",
)
case(
    "yaml-error-line-injection",
    "yaml",
    "a syntax error on a line that carries `::error::` and `##[error]`",
    lambda r, o: w(
        r / "gold.yaml", GOLD.replace("query_id: q2", 'query_id: "::error::owned ##[error]owned')
    ),
    2,
    "invalid YAML",
    "gold.yaml",
    forbid=("owned",),
)
case(
    "yaml-merge-key",
    "yaml",
    "a merge key `<<: *base`",
    lambda r, o: w(
        r / "gold.yaml",
        "base: &b {d1: 2}\n" + GOLD.replace("relevant: {d1: 2, d2: 0}", "relevant: {<<: *b}"),
    ),
    2,
    "merge keys",
    "gold.yaml:5",
)
case(
    "yaml-recursive-alias",
    "yaml",
    "an alias inside its own anchor: `queries: &a [*a]`",
    lambda r, o: w(r / "gold.yaml", "queries: &a [*a]\n"),
    2,
    "nested deeper than 64 levels",
    "gold.yaml:1",
)
case(
    "yaml-lone-surrogate",
    "yaml",
    '`query_id: "\\ud800"` (a lone surrogate escape)',
    lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1='"\\ud800"')),
    2,
    "invalid Unicode character escape",
    "gold.yaml:2",
)
case(
    "yaml-nul-byte",
    "yaml",
    "a raw NUL byte in `gold.yaml`",
    lambda r, o: w(r / "gold.yaml", GOLD.encode().replace(b"d3: 1", b"d3: \x00")),
    2,
    "U+0000 is not allowed",
    "gold.yaml:7",
)
case(
    "yaml-custom-tag",
    "yaml",
    "a custom tag `!env HOME`",
    lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1="!env HOME")),
    2,
    "YAML tag `!env` is not allowed",
    "gold.yaml:2",
)
case(
    "yaml-empty-gold",
    "yaml",
    "an empty `gold.yaml`",
    lambda r, o: w(r / "gold.yaml", ""),
    2,
    "gold must be a mapping",
    "gold.yaml",
)
case(
    "yaml-bom-utf16",
    "yaml",
    "`gold.yaml` saved as UTF-16",
    lambda r, o: w(r / "gold.yaml", GOLD.encode("utf-16")),
    2,
    "UTF-16",
    "gold.yaml",
)

# ---------------------------------------------------------------- JSON and JSONL

R2 = '{"query_id": "q2", "ranking": ["d3", "d4"]'
case(
    "jsonl-duplicate-key",
    "json",
    'a corpus line with `"id"` twice',
    lambda r, o: corpus_line(r, 2, '{"id": "d2", "id": "dX", "text": "x"}'),
    2,
    "duplicate key `id`",
    "corpus.jsonl:2",
)
case(
    "jsonl-nan",
    "json",
    "`NaN` in a run line",
    lambda r, o: run_line(r, 2, R2 + ', "score": NaN}'),
    2,
    "NaN is not valid JSON",
    "run.jsonl:2",
)
case(
    "jsonl-infinity",
    "json",
    "`Infinity` in a run line",
    lambda r, o: run_line(r, 2, R2 + ', "score": Infinity}'),
    2,
    "Infinity is not valid JSON",
    "run.jsonl:2",
)
case(
    "jsonl-neg-infinity",
    "json",
    "`-Infinity` in a run line",
    lambda r, o: run_line(r, 2, R2 + ', "score": -Infinity}'),
    2,
    "-Infinity is not valid JSON",
    "run.jsonl:2",
)
case(
    "jsonl-1e400",
    "json",
    "`1e400` (overflows to infinity)",
    lambda r, o: run_line(r, 2, R2 + ', "score": 1e400}'),
    2,
    "too large",
    "run.jsonl:2",
)
case(
    "jsonl-5000-digits",
    "json",
    "a 5,000-digit integer",
    lambda r, o: run_line(r, 2, R2 + ', "score": ' + "7" * 5000 + "}"),
    2,
    "too many digits",
    "run.jsonl:2",
)
case(
    "jsonl-deep-100000",
    "json",
    "100,000 nested `[`",
    lambda r, o: run_line(r, 2, "[" * 100_000 + "]" * 100_000),
    2,
    "nested too deeply",
    "run.jsonl:2",
    action=True,
)
case(
    "jsonl-bom",
    "json",
    "a UTF-8 BOM before the first corpus line (accepted)",
    lambda r, o: w(r / "corpus.jsonl", codecs.BOM_UTF8 + jsonl(CORPUS).encode()),
    0,
)
case(
    "jsonl-utf16",
    "json",
    "`run.jsonl` in UTF-16",
    lambda r, o: w(r / "run.jsonl", jsonl(RUN).encode("utf-16")),
    2,
    "UTF-16",
    "run.jsonl:1",
)
case(
    "jsonl-invalid-utf8",
    "json",
    "a byte 0xFF inside a corpus line",
    lambda r, o: corpus_line(
        r, 3, json.dumps(CORPUS[2]).encode().replace(b"A single", b"A \xff single")
    ),
    2,
    "invalid UTF-8",
    "corpus.jsonl:3",
)
case(
    "jsonl-overlong-utf8",
    "json",
    "an overlong UTF-8 encoding (`C0 AF`)",
    lambda r, o: corpus_line(
        r, 3, json.dumps(CORPUS[2]).encode().replace(b"A single", b"A \xc0\xaf single")
    ),
    2,
    "invalid UTF-8",
    "corpus.jsonl:3",
)
case(
    "jsonl-encoded-surrogate",
    "json",
    "a surrogate encoded in UTF-8 bytes (`ED A0 80`)",
    lambda r, o: corpus_line(
        r, 3, json.dumps(CORPUS[2]).encode().replace(b"A single", b"A \xed\xa0\x80 single")
    ),
    2,
    "invalid UTF-8",
    "corpus.jsonl:3",
)
case(
    "jsonl-lone-surrogate",
    "json",
    'a lone surrogate escape `"\\ud800"` in a run id',
    lambda r, o: run_line(r, 2, '{"query_id": "q2", "ranking": ["d3", "\\ud800"]}'),
    2,
    "lone UTF-16 surrogate",
    "run.jsonl:2",
)


def _separators(r, o):
    docs = [dict(d) for d in CORPUS]
    docs[1]["text"] = "line\u2028separator and next\u0085line"
    lines = [json.dumps(d, ensure_ascii=False) for d in docs]
    lines[3] = json.dumps(dict(docs[0]))  # line 4 repeats d1: the error must say line 4
    w(r / "corpus.jsonl", "\n".join(lines) + "\n")


case(
    "jsonl-u2028-u0085",
    "json",
    "U+2028 and U+0085 inside a string on line 2, a duplicate id on line 4",
    _separators,
    2,
    "duplicate document id (first on line 1)",
    "corpus.jsonl:4",
)
case(
    "jsonl-bare-cr",
    "json",
    "two run records separated by a bare CR",
    lambda r, o: w(r / "run.jsonl", jsonl(RUN).replace("\n", "\r", 1)),
    2,
    "invalid JSON",
    "run.jsonl:1",
)
case(
    "jsonl-crlf",
    "json",
    "CRLF line ends (accepted)",
    lambda r, o: w(r / "run.jsonl", jsonl(RUN).replace("\n", "\r\n")),
    0,
)
case(
    "jsonl-truncated-last-line",
    "json",
    "the last run line cut short",
    lambda r, o: w(r / "run.jsonl", jsonl(RUN).rstrip("\n")[:-6]),
    2,
    "invalid JSON",
    "run.jsonl:2",
)
case(
    "jsonl-top-level-array",
    "json",
    "a corpus line that is an array",
    lambda r, o: corpus_line(r, 2, '["d2", "text"]'),
    2,
    "must be a JSON object",
    "corpus.jsonl:2",
)
case(
    "jsonl-escaped-nul-in-id",
    "json",
    'a run question id `"q\\u0000"`',
    lambda r, o: run_line(r, 2, '{"query_id": "q\\u0000", "ranking": []}'),
    2,
    "control character",
    "run.jsonl:2",
)


def _gold_json(doc_text: str):
    def setup(r, o):
        (r / "gold.yaml").unlink()
        w(r / "gold.json", doc_text)
        set_config(r, gold="gold.json")

    return setup


case(
    "json-gold-top-level-array",
    "json",
    "`gold.json` is a top-level array",
    _gold_json('[{"query_id": "q1", "relevant": {"d1": 2}}]'),
    2,
    "mapping with a `queries:` list",
    "gold.json",
)
case(
    "json-gold-duplicate-key",
    "json",
    "`gold.json` has `queries` twice",
    _gold_json('{"queries": [], "queries": [{"query_id": "q1", "relevant": {"d1": 2}}]}'),
    2,
    "duplicate key `queries`",
    "gold.json",
)
case(
    "json-gold-nan",
    "json",
    "`gold.json` has a NaN grade",
    _gold_json('{"queries": [{"query_id": "q1", "relevant": {"d1": NaN}}]}'),
    2,
    "NaN is not valid JSON",
    "gold.json",
)
case(
    "json-gold-deep",
    "json",
    "`gold.json` nested 100,000 deep",
    _gold_json('{"queries": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    2,
    "nested too deeply",
    "gold.json",
)

# ---------------------------------------------------------------- schema semantics

case(
    "id-trailing-newline",
    "schema",
    'a corpus id `"d1\\n"`',
    lambda r, o: corpus_line(r, 1, json.dumps({**CORPUS[0], "id": "d1\n"})),
    2,
    "control character",
    "corpus.jsonl:1",
)
case(
    "id-u2028",
    "schema",
    "a corpus id with U+2028 (a line break to some readers)",
    lambda r, o: corpus_line(r, 1, json.dumps({**CORPUS[0], "id": "d1\u2028x"})),
    2,
    "control character",
    "corpus.jsonl:1",
)
case(
    "k-non-ascii-digit",
    "schema",
    "`k: ٥` (an Arabic-Indic five)",
    lambda r, o: set_config(r, k="٥"),
    2,
    "expected integer, got string",
    f"{CONFIG_NAME}:5",
)
case(
    "grade-non-ascii-digit",
    "schema",
    "a grade `٢` in YAML",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: ٢}")),
    2,
    "expected integer, got string",
    "gold.yaml:4",
)
case(
    "measure-fullwidth-digit",
    "schema",
    "a threshold on `P@２` (a full-width 2)",
    lambda r, o: set_config(r, thresholds="  P@２: 0.2\n"),
    2,
    "unknown measure",
    f"{CONFIG_NAME}:7",
)


def _qrels(grade: str):
    def setup(r, o):
        (r / "gold.yaml").unlink()
        w(r / "gold.qrels", f"q1 0 d1 {grade}\nq2 0 d3 1\n")
        set_config(r, gold="gold.qrels")

    return setup


case(
    "qrels-non-ascii-digit",
    "schema",
    "a TREC qrels grade `٢`",
    _qrels("٢"),
    2,
    "the grade must be an integer",
    "gold.qrels:1",
)


def _trec_run_score(r, o):
    (r / "run.jsonl").unlink()
    w(r / "run.trec", "q1 Q0 d1 1 ١ t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d3 1 1.0 t\n")
    set_config(r, run="run.trec")


case(
    "trec-score-non-ascii-digit",
    "schema",
    "a TREC run score `١` (Python's float() reads it as 1.0)",
    _trec_run_score,
    2,
    "score",
    "run.trec:1",
)
case(
    "grade-float",
    "schema",
    "a grade `1.0`",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: 1.0}")),
    2,
    "expected integer, got number",
    "gold.yaml:4",
)
case(
    "grade-bool",
    "schema",
    "a grade `true`",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: true}")),
    2,
    "expected integer, got boolean",
    "gold.yaml:4",
)
case(
    "grade-string",
    "schema",
    'a grade `"2"`',
    lambda r, o: w(r / "gold.yaml", gold_with('{d1: "2"}')),
    2,
    "expected integer, got string",
    "gold.yaml:4",
)
case(
    "grade-negative",
    "schema",
    "a grade `-1`",
    lambda r, o: w(r / "gold.yaml", gold_with("{d1: -1}")),
    2,
    "must be at least 0",
    "gold.yaml:4",
)
case(
    "empty-doc-id",
    "schema",
    'a corpus id `""`',
    lambda r, o: corpus_line(r, 1, json.dumps({**CORPUS[0], "id": ""})),
    2,
    "must not be empty",
    "corpus.jsonl:1",
)
case(
    "empty-query-id",
    "schema",
    "`query_id: ''`",
    lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1="''")),
    2,
    "must not be empty",
    "gold.yaml:2",
)
case(
    "empty-label-key",
    "schema",
    "a label on the document id `''`",
    lambda r, o: w(r / "gold.yaml", gold_with("{'': 1}")),
    2,
    "must not be empty",
    "gold.yaml:4",
)
case(
    "k-as-string",
    "schema",
    '`k: "2"`',
    lambda r, o: set_config(r, k='"2"'),
    2,
    "expected integer, got string",
    f"{CONFIG_NAME}:5",
)
case(
    "k-bool",
    "schema",
    "`k: yes`",
    lambda r, o: set_config(r, k="yes"),
    2,
    "expected integer, got boolean",
    f"{CONFIG_NAME}:5",
)

# ---------------------------------------------------------------- output injection

INJECT = {
    "add-mask": "::add-mask::d3",
    "stop-commands": "::stop-commands::x",
    "set-output": "::set-output name=passed::true",
    "error-with-props": "::error file=x,line=1::owned",
    "legacy": "##[error]owned",
    "triple-colon": ":::error:::owned",
    "nbsp-prefix": "\u00a0::error::nbsp",
    "percent-0a": "%0A::error::owned",
    "pipe": "a|b|c",
    "html-img": "<img src=x onerror=alert(1)>",
    "md-link": "[ok](javascript:alert(1))",
    "md-image": "![x](https://example.invalid/x.png)",
    "autolink": "www.example.invalid",
    "email": "a@example.invalid",
    "bidi": "abc\u202egnp.exe",
}


def _inject_unknown(s: str):
    return lambda r, o: run_line(r, 2, json.dumps({"query_id": "q2", "ranking": ["d3", s]}))


for key, s in INJECT.items():
    case(
        f"inject-{key}",
        "injection",
        f"a run lists the unknown document id `{json.dumps(s)[1:-1]}`",
        _inject_unknown(s),
        2,
        "unknown document id at position 2",
        "run.jsonl:2",
    )
case(
    "inject-newline",
    "injection",
    'a run lists the id `"ok\\n::error::x"`',
    lambda r, o: run_line(
        r, 2, json.dumps({"query_id": "q2", "ranking": ["d3", "ok\n::error::x"]})
    ),
    2,
    "control character",
    "run.jsonl:2",
)


def _valid_hostile_ids(r, o):
    """Hostile strings as *valid* ids everywhere: the run passes and they
    fill the summary's tables."""
    ids = [s for s in INJECT.values()]
    corpus = [{"id": f"D{s}", "text": "t"} for s in ids] + CORPUS
    queries = [{"query_id": f"Q{s}", "relevant": {f"D{s}": 1}} for s in ids]
    run = [{"query_id": f"Q{s}", "ranking": ["d1", f"D{s}"]} for s in ids]
    w(r / "corpus.jsonl", jsonl(corpus))
    (r / "gold.yaml").unlink()
    w(r / "gold.jsonl", jsonl(queries))
    w(r / "run.jsonl", jsonl(run))
    set_config(r, gold="gold.jsonl", extra="report:\n  worst: 20\n")


case(
    "inject-valid-ids",
    "injection",
    "every string above as a valid question and document id (the run passes)",
    _valid_hostile_ids,
    0,
)
case(
    "inject-snapshot-label",
    "injection",
    "a run snapshot `::set-output name=passed::true` that does not match",
    lambda r, o: run_line(
        r,
        2,
        json.dumps(
            {"query_id": "q2", "ranking": ["d3"], "snapshot": "::set-output name=passed::true"}
        ),
    ),
    2,
    "declares snapshot",
    "run.jsonl:2",
)
case(
    "inject-key-name",
    "injection",
    "a duplicate JSON key named `::add-mask::x`",
    lambda r, o: run_line(r, 2, '{"query_id": "q2", "::add-mask::x": 1, "::add-mask::x": 2}'),
    2,
    "duplicate key",
    "run.jsonl:2",
)
case(
    "inject-unknown-field",
    "injection",
    "an unknown corpus field named `<img src=x onerror=alert(1)>`",
    lambda r, o: corpus_line(r, 2, json.dumps({**CORPUS[1], "<img src=x onerror=alert(1)>": 1})),
    2,
    "unknown field",
    "corpus.jsonl:2",
)

# ---------------------------------------------------------------- code execution


def _planted(r, o):
    mark = str(o / "PWNED")
    code = f"open({mark!r} + '-' + __name__, 'w').write('x'); print('PLANTED-CODE-RAN')\n"
    for rel in (
        "yaml.py",
        "jsonschema/__init__.py",
        "referencing/__init__.py",
        "rpds.py",
        "json/__init__.py",
        "check/rag_corpus_check/__init__.py",
        "check/launch.py",
        "rag_corpus_check/__init__.py",
        "sitecustomize.py",
        "usercustomize.py",
        "encodings/__init__.py",
        "typing.py",
        "re.py",
    ):
        w(r / rel, code)
    w(
        r / "planted.pth",
        f"import os; open({mark!r} + '-pth', 'w').write('x'); print('PLANTED-CODE-RAN')\n",
    )


case(
    "planted-modules",
    "code",
    "`yaml.py`, `jsonschema/`, `check/`, `sitecustomize.py`, `usercustomize.py`, "
    "a `.pth` (and more) next to the config; `PYTHONPATH`/`PYTHONSTARTUP` point at them",
    _planted,
    0,
    action=True,
    forbid=("PLANTED-CODE-RAN",),
)


def by_id(case_id: str) -> Case:
    return next(c for c in CASES if c.id == case_id)


# ---------------------------------------------------------------- the docs table


def _doc_row(c: Case, res) -> str:
    results = res.results
    msg = ""
    if results:
        errors = [p for p in results["problems"] if p["severity"] == "error"]
        p = None
        if c.expect:
            p = next((x for x in results["problems"] if c.expect in x["message"]), None)
        p = p or (errors[0] if errors else None)
        if p:
            loc = f"{p['file']}:{p['line']}" if p.get("line") else (p.get("file") or "-")
            sid = f" [{_code(p['id'])}]" if p.get("id") else ""
            text = p["message"] if len(p["message"]) <= 200 else p["message"][:199] + "…"
            msg = f"{_code(loc)}{sid}: {text}"
    elif res.code == 3:
        msg = res.err.strip().splitlines()[-1] if res.err.strip() else ""
    if c.xfail:
        msg += f" *(known gap: {c.xfail.split(':')[0]})*"
    return f"| `{c.id}` | {_md(c.title)} | {res.code} | {_md(msg)} | {res.seconds:.1f} |"


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def write_doc(path: Path) -> None:
    import tempfile

    from hostile import fresh, make_outside, make_repo, run_action, run_inprocess

    rows = {}
    with tempfile.TemporaryDirectory(prefix="rcc-hostile-doc-") as tmp:
        for c in CASES:
            base = fresh(Path(tmp) / c.id)
            repo, outside = make_repo(base / "repo"), make_outside(base / "outside")
            c.setup(repo, outside)
            env = {"PYTHONPATH": str(repo), "PYTHONSTARTUP": str(repo / "sitecustomize.py")}
            res = (
                run_action(repo, base / "work", env=env)
                if c.action
                else run_inprocess(repo, base / "work")
            )
            rows.setdefault(c.group, []).append(_doc_row(c, res))
            print(f"{c.id}: exit {res.code} ({res.seconds:.1f} s)", file=sys.stderr)
    text = path.read_text(encoding="utf-8")
    start, end = "<!-- hostile-table:start -->", "<!-- hostile-table:end -->"
    head = (
        "| case | hostile input | exit | first message: `file:line` [safe id]: message, as in results.json | s |\n"
        "|---|---|---|---|---|\n"
    )
    body = ""
    for group, lines in rows.items():
        body += f"| **{group}** | | | | |\n" + "\n".join(lines) + "\n"
    text = text[: text.index(start) + len(start)] + "\n" + head + body + text[text.index(end) :]
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--doc", type=Path, help="rewrite the table in this Markdown file from real runs"
    )
    args = ap.parse_args()
    if args.doc:
        write_doc(args.doc)
    else:
        for c in CASES:
            print(f"{c.group:10} {c.id:34} exit {c.exit}  {c.title}")
