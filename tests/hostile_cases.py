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
from rag_corpus_check.core.text import safe_text


@dataclass(frozen=True, kw_only=True)
class Case:
    id: str
    group: str
    title: str  # the hostile input, in words (the docs table)
    setup: Callable[[Path, Path], None]  # (repo, outside)
    exit: int
    expect: str | None = None  # a phrase of the problem message
    where: str | None = None  # what its location starts with: "file" or "file:line"
    action: bool = False  # run as the action does (a child `python -I`), not in-process
    max_read: int | None = None  # bytes the check may read (a refusal before reading the file whole)
    forbid: tuple = ()  # text that must not appear in any output
    marker: str | None = None  # a file (relative to the repository) that must not appear
    xfail: str | None = None  # a known gap, with where it must be fixed
    base: str = "hostile"  # the repository spoiled: hostile's small one, or "example" (examples/kb)


CASES: list[Case] = []


def case(**fields) -> None:
    CASES.append(Case(**fields))


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
    id="symlink-proc-environ",
    group="paths",
    title="`corpus.jsonl` is a symlink to `/proc/self/environ` (the canary is in the environment)",
    setup=lambda r, o: symlink(r / "corpus.jsonl", "/proc/self/environ"),
    exit=2,
    expect="symlink that leads outside the repository",
    where="corpus.jsonl",
    action=True,
)
case(
    id="symlink-etc-passwd",
    group="paths",
    title="`gold.yaml` is a symlink to `/etc/passwd`",
    setup=lambda r, o: symlink(r / "gold.yaml", "/etc/passwd"),
    exit=2,
    expect="symlink that leads outside the repository",
    where="gold.yaml",
    forbid=("root:x:0",),
)


def _git_config_link(r, o):
    plant_git_dir(r)
    symlink(r / "data" / "run.jsonl", "../.git/config")
    set_config(r, run="data/run.jsonl")


case(
    id="symlink-git-config",
    group="paths",
    title="`data/run.jsonl` is a symlink to `../.git/config` (which holds a token)",
    setup=_git_config_link,
    exit=2,
    expect="symlink into `.git`",
    where="data/run.jsonl",
    action=True,
)


def _git_config_path(r, o):
    plant_git_dir(r)
    set_config(r, corpus=".git/config")


case(
    id="path-into-git",
    group="paths",
    title="the config names `.git/config` as the corpus",
    setup=_git_config_path,
    exit=2,
    expect="is inside `.git`",
    where=CONFIG_NAME,
)


def _dir_link(r, o):
    symlink(r / "data", o)
    set_config(r, corpus="data/corpus.jsonl")


case(
    id="symlinked-directory",
    group="paths",
    title="`data/` is a symlink to a directory outside; the config names `data/corpus.jsonl`",
    setup=_dir_link,
    exit=2,
    expect="symlink that leads outside the repository",
    where="data/corpus.jsonl",
)
case(
    id="symlink-relative-escape",
    group="paths",
    title="`corpus.jsonl` is a relative symlink `../outside/secret.jsonl`",
    setup=lambda r, o: symlink(r / "corpus.jsonl", os.path.relpath(o / "secret.jsonl", r)),
    exit=2,
    expect="symlink that leads outside the repository",
    where="corpus.jsonl",
)
case(
    id="symlink-target-named-canary",
    group="paths",
    title="the symlink's target path itself contains the secret",
    setup=lambda r, o: symlink(r / "corpus.jsonl", o / f"{CANARY}-dir" / f"{CANARY}.jsonl"),
    exit=2,
    expect="symlink that leads outside the repository",
    where="corpus.jsonl",
)


def _loop(r, o):
    symlink(r / "loop-a", "loop-b")
    symlink(r / "loop-b", "loop-a")
    symlink(r / "corpus.jsonl", "loop-a")


case(
    id="symlink-loop",
    group="paths",
    title="`corpus.jsonl` → `loop-a` → `loop-b` → `loop-a`",
    setup=_loop,
    exit=2,
    expect="symlink loop",
    where="corpus.jsonl",
)
case(
    id="symlink-dev-zero",
    group="paths",
    title="`run.jsonl` is a symlink to `/dev/zero`",
    setup=lambda r, o: symlink(r / "run.jsonl", "/dev/zero"),
    exit=2,
    expect="symlink that leads outside the repository",
    where="run.jsonl",
)
case(
    id="config-symlink-outside",
    group="paths",
    title="the config file itself is a symlink to a file outside",
    setup=lambda r, o: symlink(r / CONFIG_NAME, o / "secret.yaml"),
    exit=2,
    expect="symlink that leads outside the repository",
    where=CONFIG_NAME,
)
case(
    id="config-absolute-path",
    group="paths",
    title="`corpus: /etc/passwd`",
    setup=lambda r, o: set_config(r, corpus="/etc/passwd"),
    exit=2,
    expect="absolute paths are not allowed",
    where=CONFIG_NAME,
    forbid=("root:x:0",),
)
case(
    id="config-dotdot",
    group="paths",
    title="`gold: ../../etc/passwd`",
    setup=lambda r, o: set_config(r, gold="../../etc/passwd"),
    exit=2,
    expect="points outside the repository",
    where=CONFIG_NAME,
)
case(
    id="config-dotdot-inside-then-out",
    group="paths",
    title="`gold: data/../../outside/secret.jsonl`",
    setup=lambda r, o: set_config(r, gold="data/../../outside/secret.jsonl"),
    exit=2,
    expect="points outside the repository",
    where=CONFIG_NAME,
)
case(
    id="config-tilde",
    group="paths",
    title="`run: ~/run.jsonl`",
    setup=lambda r, o: set_config(r, run="~/run.jsonl"),
    exit=2,
    expect="`~` paths are not allowed",
    where=CONFIG_NAME,
)
case(
    id="config-nul",
    group="paths",
    title='a NUL in a path: `corpus: "corpus\\0.jsonl"`',
    setup=lambda r, o: set_config(r, corpus="corpus\x00.jsonl"),
    exit=2,
    expect="control character",
    where=f"{CONFIG_NAME}:2",
)


def _dir_for_file(r, o):
    (r / "golddir.yaml").mkdir()
    set_config(r, gold="golddir.yaml")


case(
    id="directory-for-file",
    group="paths",
    title="the gold path is a directory",
    setup=_dir_for_file,
    exit=2,
    expect="directory",
    where="golddir.yaml",
)


def _fifo(r, o):
    (r / "run.jsonl").unlink()
    os.mkfifo(r / "run.jsonl")


case(
    id="fifo",
    group="paths",
    title="`run.jsonl` is a FIFO (a reader would block forever)",
    setup=_fifo,
    exit=2,
    expect="not a regular file",
    where="run.jsonl",
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
    id="device-node",
    group="paths",
    title="`corpus.jsonl` is a character device (1,5: zero) inside the repository",
    setup=_device,
    exit=2,
    expect="not a regular file",
    where="corpus.jsonl",
)
case(
    id="missing-file",
    group="paths",
    title="the config names a file that does not exist",
    setup=lambda r, o: set_config(r, run="nothing.jsonl"),
    exit=2,
    expect="file not found",
    where="nothing.jsonl",
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
        id=f"name-{key}",
        group="names",
        title=f"the run file is named {_code(json.dumps(name)[1:-1])} and has an unknown id on line 2",
        setup=_named_run(name),
        exit=2,
        expect="unknown document id at position 1",
        where=f"{safe_text(name, 1024)}:2",  # shown escaped everywhere, the results file included
    )


def _newline_name(r, o):
    name = "a\n::error::owned.jsonl"
    (r / "run.jsonl").rename(r / name)
    set_config(r, run=name)


case(
    id="name-newline",
    group="names",
    title="the run file's name has a newline and `::error::`",
    setup=_newline_name,
    exit=2,
    expect="control character",
    where=f"{CONFIG_NAME}:4",
)

# ---------------------------------------------------------------- size


def _line_50mb(r, o):
    with open(r / "corpus.jsonl", "wb") as f:
        f.write((json.dumps(CORPUS[0]) + "\n").encode())
        f.write(b'{"id": "big", "text": "' + b"x" * (50 * 1024 * 1024) + b'"}\n')
        f.write("".join(json.dumps(d) + "\n" for d in CORPUS[1:]).encode())


case(
    id="line-50mb",
    group="size",
    title="a corpus line of 50 MB",
    setup=_line_50mb,
    exit=2,
    expect="line is longer than 16777216 bytes",
    where="corpus.jsonl:2",
    action=True,
    max_read=48 * 1024**2,
)
case(
    id="sparse-2gb-jsonl",
    group="size",
    title="`corpus.jsonl` is a 2 GB sparse file (zeros)",
    setup=lambda r, o: sparse(r / "corpus.jsonl", 2_000_000_000),
    exit=2,
    expect="line is longer than 16777216 bytes",
    where="corpus.jsonl:1",
    action=True,
    max_read=48 * 1024**2,
)
case(
    id="sparse-2gb-yaml",
    group="size",
    title="`gold.yaml` is a 2 GB sparse file",
    setup=lambda r, o: sparse(r / "gold.yaml", 2_000_000_000),
    exit=2,
    expect="over the limit of 4194304 bytes for a YAML",
    where="gold.yaml",
    action=True,
    max_read=8 * 1024**2,
)
case(
    id="sparse-3gb",
    group="size",
    title="`run.jsonl` is a 3 GB sparse file (over `max_file_bytes`)",
    setup=lambda r, o: sparse(r / "run.jsonl", 3_000_000_000),
    exit=2,
    expect="over the limit of 2147483648",
    where="run.jsonl",
    action=True,
    max_read=8 * 1024**2,
)


def _many_records(r, o, extra=""):
    with open(r / "corpus.jsonl", "wb") as f:
        f.write("".join(json.dumps(d) + "\n" for d in CORPUS).encode())
        f.write(b"".join(b'{"id":"c%d","text":"t"}\n' % i for i in range(1_000_000)))
    if extra:
        set_config(r, extra=extra)


case(
    id="records-1e6",
    group="size",
    title="10^6 tiny corpus records (default limits: processed)",
    setup=_many_records,
    exit=0,
    action=True,
)
case(
    id="records-1e6-capped",
    group="size",
    title="10^6 tiny corpus records with `limits: {max_records: 100000}`",
    setup=lambda r, o: _many_records(r, o, "limits:\n  max_records: 100000\n"),
    exit=2,
    expect="more than 100000 records",
    where="corpus.jsonl:100001",
    action=True,
    max_read=16 * 1024**2,
)


def _questions_yaml(r, o):
    with open(r / "gold.yaml", "w", encoding="utf-8") as f:
        f.write(GOLD)
        f.write("".join(f"  - {{query_id: x{i}, relevant: {{d1: 1}}}}\n" for i in range(300_000)))


case(
    id="questions-300k-yaml",
    group="size",
    title="300,000 questions in `gold.yaml` (13 MB)",
    setup=_questions_yaml,
    exit=2,
    expect="over the limit of 4194304 bytes for a YAML",
    where="gold.yaml",
    action=True,
    max_read=8 * 1024**2,
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
    id="questions-300k-jsonl-capped",
    group="size",
    title="300,000 questions in `gold.jsonl` with `limits: {max_records: 100000}`",
    setup=_questions_jsonl,
    exit=2,
    expect="more than 100000 records",
    where="gold.jsonl:100001",
    action=True,
    max_read=16 * 1024**2,
)
case(
    id="config-2mb",
    group="size",
    title="a 2 MB config file",
    setup=lambda r, o: set_config(r, extra="# " + "x" * 2_000_000 + "\n"),
    exit=2,
    expect="over the limit of 1048576 bytes",
    where=CONFIG_NAME,
)

# ---------------------------------------------------------------- compressed files and impostors


def _gzip_of(r: Path, name: str, member: bytes, copies: int) -> None:
    """``name`` (a .gz the config names) holding ``member`` ``copies`` times
    (a multi-member gzip file: each copy compressed once, written many times)."""
    import gzip

    data = gzip.compress(member, compresslevel=9)
    with open(r / name, "wb") as f:
        for _ in range(copies):
            f.write(data)


def _bomb(member: bytes, copies: int, role: str = "corpus"):
    def setup(r, o):
        name = {"corpus": "corpus.jsonl.gz", "run": "run.jsonl.gz", "gold": "gold.yaml.gz"}[role]
        _gzip_of(r, name, member, copies)
        set_config(r, **{role: name})

    return setup


case(
    id="gzip-bomb-zeros",
    group="size",
    title="`corpus.jsonl.gz`: 2 MB that decompress to 2 GiB of zeros (no line end)",
    setup=_bomb(b"\0" * 64 * 1024**2, 32),
    exit=2,
    expect="decompresses to more than 8 times its compressed size",
    where="corpus.jsonl.gz:1",
    action=True,
    max_read=8 * 1024**2,
)
case(
    id="gzip-bomb-line-ends",
    group="size",
    title="`run.jsonl.gz`: 2 MB that decompress to 2 GiB of line ends (blank lines)",
    setup=_bomb(b"\n" * 64 * 1024**2, 32, "run"),
    exit=2,
    expect="decompresses to more than 8 times its compressed size",
    where="run.jsonl.gz:",
    action=True,
    max_read=8 * 1024**2,
)
case(
    id="gzip-bomb-yaml",
    group="size",
    title="`gold.yaml.gz` decompresses to 2 GiB of spaces",
    setup=_bomb(b" " * 64 * 1024**2, 32, "gold"),
    exit=2,
    expect="decompresses to more than 2 times its compressed size",
    where="gold.yaml.gz",
    action=True,
    max_read=8 * 1024**2,
)


def _truncated_gzip(r, o):
    import gzip

    data = gzip.compress((r / "corpus.jsonl").read_bytes())
    (r / "corpus.jsonl").unlink()
    w(r / "corpus.jsonl.gz", data[: len(data) // 2])
    set_config(r, corpus="corpus.jsonl.gz")


case(
    id="gzip-truncated",
    group="size",
    title="`corpus.jsonl.gz` cut in half",
    setup=_truncated_gzip,
    exit=2,
    expect="cannot decompress: it ends before its end (truncated)",
    where="corpus.jsonl.gz",
)
case(
    id="gzip-not-gzip",
    group="size",
    title="`run.jsonl.gz` is plain text",
    setup=lambda r, o: ((r / "run.jsonl").rename(r / "run.jsonl.gz"), set_config(r, run="run.jsonl.gz")),
    exit=2,
    expect="cannot decompress: it is not valid gzip data",
    where="run.jsonl.gz",
)


def _misnamed_gzip(r, o):
    import gzip

    (r / "corpus.jsonl").write_bytes(gzip.compress((r / "corpus.jsonl").read_bytes()))


case(
    id="gzip-without-gz",
    group="size",
    title="`corpus.jsonl` is gzip-compressed",
    setup=_misnamed_gzip,
    exit=2,
    expect="this file is gzip-compressed: name it with `.gz`",
    where="corpus.jsonl:1",
)
LFS = ("version https://git-lfs.github.com/spec/v1\n"
       "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
for name in ("corpus.jsonl", "gold.yaml", "run.jsonl"):
    case(
        id=f"lfs-pointer-{name.split('.')[0]}",
        group="size",
        title=f"`{name}` is a Git LFS pointer (checked out without `lfs: true`)",
        setup=lambda r, o, name=name: w(r / name, LFS),
        exit=2,
        expect="this is a Git LFS pointer, not the file",
        where=f"{name}:1",
    )

# ---------------------------------------------------------------- YAML

PWN = "touch PWNED"
case(
    id="yaml-python-object-apply",
    group="yaml",
    title="`query: !!python/object/apply:os.system [touch PWNED]` in the gold set",
    setup=lambda r, o: replace_in(
        r / "gold.yaml",
        'query: "How long are deleted backups kept?"',
        f"query: !!python/object/apply:os.system [{yq(PWN)}]",
    ),
    exit=2,
    expect="YAML tag `tag:yaml.org,2002:python/object/apply:os.system` is not allowed",
    where="gold.yaml:3",
    marker="PWNED",
)
case(
    id="yaml-python-tag-config",
    group="yaml",
    title="a `!!python/object/apply` tag in the config",
    setup=lambda r, o: set_config(r, extra=f"x: !!python/object/apply:os.system [{yq(PWN)}]\n"),
    exit=2,
    expect="is not allowed",
    where=f"{CONFIG_NAME}:6",
    marker="PWNED",
)


def _laughs(r, o):
    lol = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lol.append(f"{cur}: &{cur} [" + ", ".join(f"*{prev}" for _ in range(9)) + "]")
    w(r / "gold.yaml", "\n".join(lol) + "\nqueries: []\n")


case(
    id="yaml-billion-laughs",
    group="yaml",
    title="billion laughs: 10 levels of 9 aliases (9^10 nodes)",
    setup=_laughs,
    exit=2,
    expect="alias bomb",
    where="gold.yaml",
)
case(
    id="yaml-duplicate-key",
    group="yaml",
    title="`relevant: {d1: 2, d1: 0}`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: 2, d1: 0}")),
    exit=2,
    expect="duplicate key `d1`",
    where="gold.yaml:4",
)
case(
    id="yaml-duplicate-key-config",
    group="yaml",
    title="`k:` twice in the config (the second would win silently)",
    setup=lambda r, o: set_config(r, extra="k: 1\n"),
    exit=2,
    expect="duplicate key `k`",
    where=f"{CONFIG_NAME}:6",
)
case(
    id="yaml-NO-as-id",
    group="yaml",
    title="`query_id: NO` (YAML 1.1: false)",
    setup=lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1="NO")),
    exit=2,
    expect="expected string, got boolean",
    where="gold.yaml:2",
)
case(
    id="yaml-on-as-key",
    group="yaml",
    title="`relevant: {on: 1}` (YAML 1.1: the key true)",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{on: 1}")),
    exit=2,
    expect="quote it",
    where="gold.yaml:4",
)
case(
    id="yaml-date-as-grade",
    group="yaml",
    title="`relevant: {d1: 2026-11-30}`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: 2026-11-30}")),
    exit=2,
    expect="expected integer, got string",
    where="gold.yaml:4",
)
case(
    id="yaml-date-as-id",
    group="yaml",
    title="`query_id: 2026-11-30` stays text, not a date (a valid id; the run lacks it: warnings)",
    setup=lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1="2026-11-30")),
    exit=0,
    expect="not in run.jsonl",
    where="gold.yaml:2",
)
case(
    id="yaml-octal-k",
    group="yaml",
    title="`k: 012` (YAML 1.1: octal 10)",
    setup=lambda r, o: set_config(r, k="012"),
    exit=2,
    expect="plain decimal",
    where=f"{CONFIG_NAME}:5",
)
case(
    id="yaml-octal-grade",
    group="yaml",
    title="`relevant: {d1: 012}`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: 012}")),
    exit=2,
    expect="plain decimal",
    where="gold.yaml:4",
)
case(
    id="yaml-sexagesimal",
    group="yaml",
    title="`k: 1:20` (YAML 1.1: 80)",
    setup=lambda r, o: set_config(r, k="1:20"),
    exit=2,
    expect="plain decimal",
    where=f"{CONFIG_NAME}:5",
)
case(
    id="yaml-1e3-grade",
    group="yaml",
    title="`relevant: {d1: 1e3}` (YAML 1.1: the string 1e3)",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: 1e3}")),
    exit=2,
    expect="expected integer, got string",
    where="gold.yaml:4",
)
case(
    id="yaml-nan-threshold",
    group="yaml",
    title="`P@2: .nan` in the thresholds",
    setup=lambda r, o: set_config(r, thresholds="  P@2: .nan\n"),
    exit=2,
    expect="non-finite",
    where=f"{CONFIG_NAME}:7",
)
case(
    id="yaml-inf-grade",
    group="yaml",
    title="`relevant: {d1: .inf}`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: .inf}")),
    exit=2,
    expect="non-finite",
    where="gold.yaml:4",
)
case(
    id="yaml-deep-flow-50000",
    group="yaml",
    title="50,000 nested `[` (the C loader segfaults there)",
    setup=lambda r, o: w(r / "gold.yaml", "queries: " + "[" * 50_000 + "]" * 50_000 + "\n"),
    exit=2,
    expect="nested deeper than 64 levels",
    where="gold.yaml",
    action=True,
)
case(
    id="yaml-deep-block-50000",
    group="yaml",
    title="50,000 nested block sequences on one line (`- - - …`)",
    setup=lambda r, o: w(r / "gold.yaml", "queries:\n" + "- " * 50_000 + "x\n"),
    exit=2,
    expect="nested deeper than 64 levels",
    where="gold.yaml:2",
    action=True,
)
case(
    id="yaml-deep-indent",
    group="yaml",
    title="a mapping nested 600 levels by indentation",
    setup=lambda r, o: w(
        r / "gold.yaml", "".join(" " * i + "a:\n" for i in range(600)) + " " * 600 + "b: 1\n"
    ),
    exit=2,
    expect="nested deeper than 64 levels",
    where="gold.yaml",
)
case(
    id="yaml-multi-document",
    group="yaml",
    title="two YAML documents in `gold.yaml`",
    setup=lambda r, o: w(r / "gold.yaml", GOLD + "---\nqueries: []\n"),
    exit=2,
    expect="invalid YAML",
    where="gold.yaml",
)
case(
    id="yaml-tabs",
    group="yaml",
    title="a tab used for indentation",
    setup=lambda r, o: w(r / "gold.yaml", GOLD.replace("    relevant: {d3: 1}", "\trelevant: {d3: 1}")),
    exit=2,
    expect="invalid YAML",
    where="gold.yaml:7",
)
case(
    id="yaml-error-line-injection",
    group="yaml",
    title="a syntax error on a line that carries `::error::` and `##[error]`",
    setup=lambda r, o: w(
        r / "gold.yaml", GOLD.replace("query_id: q2", 'query_id: "::error::owned ##[error]owned')
    ),
    exit=2,
    expect="invalid YAML",
    where="gold.yaml",
    forbid=("owned",),
)
case(
    id="yaml-merge-key",
    group="yaml",
    title="a merge key `<<: *base`",
    setup=lambda r, o: w(
        r / "gold.yaml",
        "base: &b {d1: 2}\n" + GOLD.replace("relevant: {d1: 2, d2: 0}", "relevant: {<<: *b}"),
    ),
    exit=2,
    expect="merge keys",
    where="gold.yaml:5",
)
case(
    id="yaml-recursive-alias",
    group="yaml",
    title="an alias inside its own anchor: `queries: &a [*a]`",
    setup=lambda r, o: w(r / "gold.yaml", "queries: &a [*a]\n"),
    exit=2,
    expect="nested deeper than 64 levels",
    where="gold.yaml:1",
)
case(
    id="yaml-lone-surrogate",
    group="yaml",
    title='`query_id: "\\ud800"` (a lone surrogate escape)',
    setup=lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1='"\\ud800"')),
    exit=2,
    expect="invalid Unicode character escape",
    where="gold.yaml:2",
)
case(
    id="yaml-nul-byte",
    group="yaml",
    title="a raw NUL byte in `gold.yaml`",
    setup=lambda r, o: w(r / "gold.yaml", GOLD.encode().replace(b"d3: 1", b"d3: \x00")),
    exit=2,
    expect="U+0000 is not allowed",
    where="gold.yaml:7",
)
case(
    id="yaml-custom-tag",
    group="yaml",
    title="a custom tag `!env HOME`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1="!env HOME")),
    exit=2,
    expect="YAML tag `!env` is not allowed",
    where="gold.yaml:2",
)
case(
    id="yaml-empty-gold",
    group="yaml",
    title="an empty `gold.yaml`",
    setup=lambda r, o: w(r / "gold.yaml", ""),
    exit=2,
    expect="gold must be a mapping",
    where="gold.yaml",
)
case(
    id="yaml-bom-utf16",
    group="yaml",
    title="`gold.yaml` saved as UTF-16",
    setup=lambda r, o: w(r / "gold.yaml", GOLD.encode("utf-16")),
    exit=2,
    expect="UTF-16",
    where="gold.yaml",
)

# ---------------------------------------------------------------- JSON and JSONL

R2 = '{"query_id": "q2", "ranking": ["d3", "d4"]'
case(
    id="jsonl-duplicate-key",
    group="json",
    title='a corpus line with `"id"` twice',
    setup=lambda r, o: corpus_line(r, 2, '{"id": "d2", "id": "dX", "text": "x"}'),
    exit=2,
    expect="duplicate key `id`",
    where="corpus.jsonl:2",
)
case(
    id="jsonl-nan",
    group="json",
    title="`NaN` in a run line",
    setup=lambda r, o: run_line(r, 2, R2 + ', "score": NaN}'),
    exit=2,
    expect="NaN is not valid JSON",
    where="run.jsonl:2",
)
case(
    id="jsonl-infinity",
    group="json",
    title="`Infinity` in a run line",
    setup=lambda r, o: run_line(r, 2, R2 + ', "score": Infinity}'),
    exit=2,
    expect="Infinity is not valid JSON",
    where="run.jsonl:2",
)
case(
    id="jsonl-neg-infinity",
    group="json",
    title="`-Infinity` in a run line",
    setup=lambda r, o: run_line(r, 2, R2 + ', "score": -Infinity}'),
    exit=2,
    expect="-Infinity is not valid JSON",
    where="run.jsonl:2",
)
case(
    id="jsonl-1e400",
    group="json",
    title="`1e400` (overflows to infinity)",
    setup=lambda r, o: run_line(r, 2, R2 + ', "score": 1e400}'),
    exit=2,
    expect="too large",
    where="run.jsonl:2",
)
case(
    id="jsonl-5000-digits",
    group="json",
    title="a 5,000-digit integer",
    setup=lambda r, o: run_line(r, 2, R2 + ', "score": ' + "7" * 5000 + "}"),
    exit=2,
    expect="too many digits",
    where="run.jsonl:2",
)
case(
    id="jsonl-deep-100000",
    group="json",
    title="100,000 nested `[`",
    setup=lambda r, o: run_line(r, 2, "[" * 100_000 + "]" * 100_000),
    exit=2,
    expect="nested too deeply",
    where="run.jsonl:2",
    action=True,
)
case(
    id="jsonl-bom",
    group="json",
    title="a UTF-8 BOM before the first corpus line (accepted)",
    setup=lambda r, o: w(r / "corpus.jsonl", codecs.BOM_UTF8 + jsonl(CORPUS).encode()),
    exit=0,
)
case(
    id="jsonl-utf16",
    group="json",
    title="`run.jsonl` in UTF-16",
    setup=lambda r, o: w(r / "run.jsonl", jsonl(RUN).encode("utf-16")),
    exit=2,
    expect="UTF-16",
    where="run.jsonl:1",
)
case(
    id="jsonl-invalid-utf8",
    group="json",
    title="a byte 0xFF inside a corpus line",
    setup=lambda r, o: corpus_line(
        r, 3, json.dumps(CORPUS[2]).encode().replace(b"A single", b"A \xff single")
    ),
    exit=2,
    expect="invalid UTF-8",
    where="corpus.jsonl:3",
)
case(
    id="jsonl-overlong-utf8",
    group="json",
    title="an overlong UTF-8 encoding (`C0 AF`)",
    setup=lambda r, o: corpus_line(
        r, 3, json.dumps(CORPUS[2]).encode().replace(b"A single", b"A \xc0\xaf single")
    ),
    exit=2,
    expect="invalid UTF-8",
    where="corpus.jsonl:3",
)
case(
    id="jsonl-encoded-surrogate",
    group="json",
    title="a surrogate encoded in UTF-8 bytes (`ED A0 80`)",
    setup=lambda r, o: corpus_line(
        r, 3, json.dumps(CORPUS[2]).encode().replace(b"A single", b"A \xed\xa0\x80 single")
    ),
    exit=2,
    expect="invalid UTF-8",
    where="corpus.jsonl:3",
)
case(
    id="jsonl-lone-surrogate",
    group="json",
    title='a lone surrogate escape `"\\ud800"` in a run id',
    setup=lambda r, o: run_line(r, 2, '{"query_id": "q2", "ranking": ["d3", "\\ud800"]}'),
    exit=2,
    expect="lone UTF-16 surrogate",
    where="run.jsonl:2",
)


def _separators(r, o):
    docs = [dict(d) for d in CORPUS]
    docs[1]["text"] = "line\u2028separator and next\u0085line"
    lines = [json.dumps(d, ensure_ascii=False) for d in docs]
    lines[3] = json.dumps(dict(docs[0]))  # line 4 repeats d1: the error must say line 4
    w(r / "corpus.jsonl", "\n".join(lines) + "\n")


case(
    id="jsonl-u2028-u0085",
    group="json",
    title="U+2028 and U+0085 inside a string on line 2, a duplicate id on line 4",
    setup=_separators,
    exit=2,
    expect="duplicate document id (first on line 1)",
    where="corpus.jsonl:4",
)
case(
    id="jsonl-bare-cr",
    group="json",
    title="two run records separated by a bare CR",
    setup=lambda r, o: w(r / "run.jsonl", jsonl(RUN).replace("\n", "\r", 1)),
    exit=2,
    expect="invalid JSON",
    where="run.jsonl:1",
)
case(
    id="jsonl-crlf",
    group="json",
    title="CRLF line ends (accepted)",
    setup=lambda r, o: w(r / "run.jsonl", jsonl(RUN).replace("\n", "\r\n")),
    exit=0,
)
case(
    id="jsonl-truncated-last-line",
    group="json",
    title="the last run line cut short",
    setup=lambda r, o: w(r / "run.jsonl", jsonl(RUN).rstrip("\n")[:-6]),
    exit=2,
    expect="invalid JSON",
    where="run.jsonl:2",
)
case(
    id="jsonl-top-level-array",
    group="json",
    title="a corpus line that is an array",
    setup=lambda r, o: corpus_line(r, 2, '["d2", "text"]'),
    exit=2,
    expect="must be a JSON object",
    where="corpus.jsonl:2",
)
case(
    id="jsonl-escaped-nul-in-id",
    group="json",
    title='a run question id `"q\\u0000"`',
    setup=lambda r, o: run_line(r, 2, '{"query_id": "q\\u0000", "ranking": []}'),
    exit=2,
    expect="control character",
    where="run.jsonl:2",
)


def _gold_json(doc_text: str):
    def setup(r, o):
        (r / "gold.yaml").unlink()
        w(r / "gold.json", doc_text)
        set_config(r, gold="gold.json")

    return setup


case(
    id="json-gold-top-level-array",
    group="json",
    title="`gold.json` is a top-level array",
    setup=_gold_json('[{"query_id": "q1", "relevant": {"d1": 2}}]'),
    exit=2,
    expect="mapping with a `queries:` list",
    where="gold.json",
)
case(
    id="json-gold-duplicate-key",
    group="json",
    title="`gold.json` has `queries` twice",
    setup=_gold_json('{"queries": [], "queries": [{"query_id": "q1", "relevant": {"d1": 2}}]}'),
    exit=2,
    expect="duplicate key `queries`",
    where="gold.json",
)
case(
    id="json-gold-nan",
    group="json",
    title="`gold.json` has a NaN grade",
    setup=_gold_json('{"queries": [{"query_id": "q1", "relevant": {"d1": NaN}}]}'),
    exit=2,
    expect="NaN is not valid JSON",
    where="gold.json",
)
case(
    id="json-gold-deep",
    group="json",
    title="`gold.json` nested 100,000 deep",
    setup=_gold_json('{"queries": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    exit=2,
    expect="nested too deeply",
    where="gold.json",
)

# ---------------------------------------------------------------- schema semantics

case(
    id="id-trailing-newline",
    group="schema",
    title='a corpus id `"d1\\n"`',
    setup=lambda r, o: corpus_line(r, 1, json.dumps({**CORPUS[0], "id": "d1\n"})),
    exit=2,
    expect="control character",
    where="corpus.jsonl:1",
)
case(
    id="id-u2028",
    group="schema",
    title="a corpus id with U+2028 (a line break to some readers)",
    setup=lambda r, o: corpus_line(r, 1, json.dumps({**CORPUS[0], "id": "d1\u2028x"})),
    exit=2,
    expect="control character",
    where="corpus.jsonl:1",
)
case(
    id="k-non-ascii-digit",
    group="schema",
    title="`k: ٥` (an Arabic-Indic five)",
    setup=lambda r, o: set_config(r, k="٥"),
    exit=2,
    expect="expected integer, got string",
    where=f"{CONFIG_NAME}:5",
)
case(
    id="grade-non-ascii-digit",
    group="schema",
    title="a grade `٢` in YAML",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: ٢}")),
    exit=2,
    expect="expected integer, got string",
    where="gold.yaml:4",
)
case(
    id="measure-fullwidth-digit",
    group="schema",
    title="a threshold on `P@２` (a full-width 2)",
    setup=lambda r, o: set_config(r, thresholds="  P@２: 0.2\n"),
    exit=2,
    expect="unknown measure",
    where=f"{CONFIG_NAME}:7",
)


def _qrels(grade: str):
    def setup(r, o):
        (r / "gold.yaml").unlink()
        w(r / "gold.qrels", f"q1 0 d1 {grade}\nq2 0 d3 1\n")
        set_config(r, gold="gold.qrels")

    return setup


case(
    id="qrels-non-ascii-digit",
    group="schema",
    title="a TREC qrels grade `٢`",
    setup=_qrels("٢"),
    exit=2,
    expect="the grade must be an integer",
    where="gold.qrels:1",
)


def _trec_run_score(r, o):
    (r / "run.jsonl").unlink()
    w(r / "run.trec", "q1 Q0 d1 1 ١ t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d3 1 1.0 t\n")
    set_config(r, run="run.trec")


case(
    id="trec-score-non-ascii-digit",
    group="schema",
    title="a TREC run score `١` (Python's float() reads it as 1.0)",
    setup=_trec_run_score,
    exit=2,
    expect="score",
    where="run.trec:1",
)
def _trec_run_line(line: str):
    def setup(r, o):
        (r / "run.jsonl").unlink()
        w(r / "run.trec", f"q1 Q0 d2 2 0.5 t\n{line}\nq2 Q0 d3 1 1.0 t\n")
        set_config(r, run="run.trec")
    return setup


case(
    id="trec-nbsp-separator",
    group="schema",
    title="a TREC run line `q1 Q0 d1 1<U+00A0>1.0 t` (str.split() saw six fields, trec_eval five)",
    setup=_trec_run_line("q1 Q0 d1 1\u00a01.0 t"),
    exit=2,
    expect="found 5 (it holds U+00A0, which is not a field separator",
    where="run.trec:2",
)
case(
    id="trec-nbsp-in-id",
    group="schema",
    title="a TREC run document id `d<U+3000>1` (trec_eval keeps the space in the id)",
    setup=_trec_run_line("q1 Q0 d\u30001 1 1.0 t"),
    exit=2,
    expect="document id contains U+3000",
    where="run.trec:2",
)
case(
    id="grade-float",
    group="schema",
    title="a grade `1.0`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: 1.0}")),
    exit=2,
    expect="expected integer, got number",
    where="gold.yaml:4",
)
case(
    id="grade-bool",
    group="schema",
    title="a grade `true`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: true}")),
    exit=2,
    expect="expected integer, got boolean",
    where="gold.yaml:4",
)
case(
    id="grade-string",
    group="schema",
    title='a grade `"2"`',
    setup=lambda r, o: w(r / "gold.yaml", gold_with('{d1: "2"}')),
    exit=2,
    expect="expected integer, got string",
    where="gold.yaml:4",
)
case(
    id="grade-negative",
    group="schema",
    title="a grade `-1`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{d1: -1}")),
    exit=2,
    expect="must be at least 0",
    where="gold.yaml:4",
)
case(
    id="empty-doc-id",
    group="schema",
    title='a corpus id `""`',
    setup=lambda r, o: corpus_line(r, 1, json.dumps({**CORPUS[0], "id": ""})),
    exit=2,
    expect="must not be empty",
    where="corpus.jsonl:1",
)
case(
    id="empty-query-id",
    group="schema",
    title="`query_id: ''`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with(query_id_q1="''")),
    exit=2,
    expect="must not be empty",
    where="gold.yaml:2",
)
case(
    id="empty-label-key",
    group="schema",
    title="a label on the document id `''`",
    setup=lambda r, o: w(r / "gold.yaml", gold_with("{'': 1}")),
    exit=2,
    expect="must not be empty",
    where="gold.yaml:4",
)
case(
    id="k-as-string",
    group="schema",
    title='`k: "2"`',
    setup=lambda r, o: set_config(r, k='"2"'),
    exit=2,
    expect="expected integer, got string",
    where=f"{CONFIG_NAME}:5",
)
case(
    id="k-bool",
    group="schema",
    title="`k: yes`",
    setup=lambda r, o: set_config(r, k="yes"),
    exit=2,
    expect="expected integer, got boolean",
    where=f"{CONFIG_NAME}:5",
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
        id=f"inject-{key}",
        group="injection",
        title=f"a run lists the unknown document id `{json.dumps(s)[1:-1]}`",
        setup=_inject_unknown(s),
        exit=2,
        expect="unknown document id at position 2",
        where="run.jsonl:2",
    )
case(
    id="inject-newline",
    group="injection",
    title='a run lists the id `"ok\\n::error::x"`',
    setup=lambda r, o: run_line(
        r, 2, json.dumps({"query_id": "q2", "ranking": ["d3", "ok\n::error::x"]})
    ),
    exit=2,
    expect="control character",
    where="run.jsonl:2",
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
    id="inject-valid-ids",
    group="injection",
    title="every string above as a valid question and document id (the run passes)",
    setup=_valid_hostile_ids,
    exit=0,
)
case(
    id="inject-snapshot-label",
    group="injection",
    title="a run snapshot `::set-output name=passed::true` that does not match",
    setup=lambda r, o: run_line(
        r,
        2,
        json.dumps(
            {"query_id": "q2", "ranking": ["d3"], "snapshot": "::set-output name=passed::true"}
        ),
    ),
    exit=2,
    expect="declares snapshot",
    where="run.jsonl:2",
)
case(
    id="inject-key-name",
    group="injection",
    title="a duplicate JSON key named `::add-mask::x`",
    setup=lambda r, o: run_line(r, 2, '{"query_id": "q2", "::add-mask::x": 1, "::add-mask::x": 2}'),
    exit=2,
    expect="duplicate key",
    where="run.jsonl:2",
)
case(
    id="inject-unknown-field",
    group="injection",
    title="an unknown corpus field named `<img src=x onerror=alert(1)>`",
    setup=lambda r, o: corpus_line(r, 2, json.dumps({**CORPUS[1], "<img src=x onerror=alert(1)>": 1})),
    exit=2,
    expect="unknown field",
    where="corpus.jsonl:2",
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
    id="planted-modules",
    group="code",
    title="`yaml.py`, `jsonschema/`, `check/`, `sitecustomize.py`, `usercustomize.py`, "
    "a `.pth` (and more) next to the config; `PYTHONPATH`/`PYTHONSTARTUP` point at them",
    setup=_planted,
    exit=0,
    action=True,
    forbid=("PLANTED-CODE-RAN",),
)


def by_id(case_id: str) -> Case:
    return next(c for c in CASES if c.id == case_id)


# ---------------------------------------------------------------- the docs table


# ---------------------------------------------------------------- one bad input each, on the bundled example
#
# These spoil a copy of examples/kb (scored on its committed run, as the
# `repo` fixture has it) instead of the small repository of :mod:`hostile`;
# their setup returns where the problem must point, a phrase of its message
# and its safe id (tests/test_cli_invalid.py).

def lines(p: Path) -> list[str]:
    return p.read_text(encoding="utf-8").split("\n")


def set_line(p: Path, n: int, text: str) -> None:
    ls = lines(p)
    ls[n - 1] = text
    p.write_text("\n".join(ls), encoding="utf-8")


def replace(p: Path, old: str, new: str, count: int = 1) -> None:
    s = p.read_text(encoding="utf-8")
    assert old in s, old
    p.write_text(s.replace(old, new, count), encoding="utf-8")


def gold_line(repo: Path, needle: str) -> int:
    return next(i for i, line in enumerate(lines(repo / "gold.yaml"), 1) if needle in line)


def config_line(repo: Path, needle: str) -> int:
    return next(i for i, line in enumerate(lines(repo / ".rag-corpus-check.yml"), 1) if needle in line)


def corpus_record(repo, n):
    return json.loads(lines(repo / "corpus.jsonl")[n - 1])


def _dup_corpus(repo):
    rec = corpus_record(repo, 1)
    set_line(repo / "corpus.jsonl", 5, json.dumps(rec))
    return "corpus.jsonl:5", "duplicate document id", "faq-001"


def _corpus_missing_text(repo):
    rec = corpus_record(repo, 3)
    del rec["text"]
    set_line(repo / "corpus.jsonl", 3, json.dumps(rec))
    return "corpus.jsonl:3", "missing required `text`", rec["id"]


def _corpus_bad_status(repo):
    rec = corpus_record(repo, 4)
    rec["status"] = "archived"
    set_line(repo / "corpus.jsonl", 4, json.dumps(rec))
    return "corpus.jsonl:4", "must be one of active, stale, restricted", rec["id"]


def _corpus_id_trailing_newline(repo):
    rec = corpus_record(repo, 2)
    rec["id"] = rec["id"] + "\n"
    set_line(repo / "corpus.jsonl", 2, json.dumps(rec))
    return "corpus.jsonl:2", "control character", None


def _gold_unknown_doc(repo):
    replace(repo / "gold.yaml", "      faq-004: 1\n", "      doc-9: 1\n")
    return f"gold.yaml:{gold_line(repo, 'doc-9: 1')}", "unknown document id", "doc-9"


def _run_unknown_doc(repo):
    replace(repo / "run.jsonl", '"relnote-002", "policy-001"', '"relnote-002", "ghost-1"')
    return "run.jsonl:1", "unknown document id at position 5", "ghost-1"


def _run_duplicate_in_ranking(repo):
    # docs/metrics.md: [A, B, A] is an input error "duplicate id A".
    set_line(repo / "run.jsonl", 2, json.dumps({"query_id": "q02", "ranking": ["faq-002", "faq-009", "faq-002"]}))
    return "run.jsonl:2", "appears twice", "faq-002"


def _gold_duplicate_qid(repo):
    replace(repo / "gold.yaml", "- query_id: q02", "- query_id: q01")
    return f"gold.yaml:{gold_line(repo, 'What is the largest file')-1}", "duplicate question id", "q01"


def _run_duplicate_qid(repo):
    replace(repo / "run.jsonl", '{"query_id": "q02"', '{"query_id": "q01"')
    return "run.jsonl:2", "duplicate question id", "q01"


def _grade_above_scale(repo):
    replace(repo / "gold.yaml", "      policy-002: 2\n", "      policy-002: 3\n")
    return f"gold.yaml:{gold_line(repo, 'policy-002: 3')}", "outside the declared scale 0–2", "policy-002"


def _grade_negative(repo):
    replace(repo / "gold.yaml", "      policy-002: 2\n", "      policy-002: -1\n")
    return f"gold.yaml:{gold_line(repo, 'policy-002: -1')}", "must be at least 0", "q01"


def _grade_float(repo):
    replace(repo / "gold.yaml", "      policy-002: 2\n", "      policy-002: 1.0\n")
    return f"gold.yaml:{gold_line(repo, 'policy-002: 1.0')}", "expected integer, got number", "q01"


def _grade_bool(repo):
    replace(repo / "gold.yaml", "      policy-002: 2\n", "      policy-002: yes\n")
    return f"gold.yaml:{gold_line(repo, 'policy-002: yes')}", "expected integer, got boolean", "q01"


def _k_zero(repo):
    replace(repo / ".rag-corpus-check.yml", "k: 5", "k: 0")
    return f".rag-corpus-check.yml:{config_line(repo, 'k: 0')}", "must be at least 1", None


def _unknown_measure(repo):
    replace(repo / ".rag-corpus-check.yml", "  P@5: 0.30", "  MAP@5: 0.30")
    return ".rag-corpus-check.yml:", "valid names are P@k, R@k, nDCG@k, Judged@k, RR@k, Success@k, AP@k and Rprec", None


def _run_snapshot(repo):
    replace(repo / "run.jsonl", '"snapshot": "2026-11-30"', '"snapshot": "2026-09-20"')
    return "run.jsonl:1", "declares snapshot `2026-09-20` but the corpus is snapshot `2026-11-30`", "q01"


def _gold_snapshot(repo):
    replace(repo / "gold.yaml", 'snapshot: "2026-11-30"', 'snapshot: "2026-01-01"')
    return f"gold.yaml:{gold_line(repo, 'snapshot: ')}", "declares snapshot `2026-01-01` but the corpus is snapshot `2026-11-30`", None


def _yaml_duplicate_key(repo):
    replace(repo / "gold.yaml", "      faq-004: 1\n", "      faq-004: 1\n      faq-004: 2\n")
    return f"gold.yaml:{gold_line(repo, 'faq-004: 2')}", "duplicate key `faq-004`", None


def _yaml_python_tag(repo):
    replace(repo / "gold.yaml", 'query: "How long are deleted backups kept?"',
            "query: !!python/object/apply:os.system ['echo pwned']")
    return f"gold.yaml:{gold_line(repo, 'python/object')}", "YAML tag", None


def _yaml_syntax(repo):
    replace(repo / "gold.yaml", "      faq-004: 1\n", "      faq-004: [1\n")
    return "gold.yaml:", "invalid YAML", None


def _json_nan(repo):
    set_line(repo / "run.jsonl", 3, '{"query_id": "q03", "ranking": [], "score": NaN}')
    return "run.jsonl:3", "NaN is not valid JSON", None


def _json_dup_key(repo):
    set_line(repo / "corpus.jsonl", 6, '{"id": "a", "id": "b", "text": "x"}')
    return "corpus.jsonl:6", "duplicate key `id`", None


def _json_deep(repo):
    set_line(repo / "run.jsonl", 4, "[" * 100000 + "]" * 100000)
    return "run.jsonl:4", "nested too deeply", None


def _json_truncated(repo):
    p = repo / "run.jsonl"
    p.write_text(p.read_text().rstrip("\n")[:-5], encoding="utf-8")
    return "run.jsonl:15", "invalid JSON", None


def _invalid_utf8(repo):
    p = repo / "corpus.jsonl"
    ls = p.read_bytes().split(b"\n")
    ls[6] = ls[6].replace(b'"text": "', b'"text": "\xff', 1)
    assert b"\xff" in ls[6]
    p.write_bytes(b"\n".join(ls))
    return "corpus.jsonl:7", "invalid UTF-8", None


def _utf16(repo):
    p = repo / "run.jsonl"
    p.write_bytes(p.read_text().encode("utf-16"))
    return "run.jsonl:1", "UTF-16", None


def _not_an_object(repo):
    set_line(repo / "corpus.jsonl", 8, "[1, 2]")
    return "corpus.jsonl:8", "must be a JSON object", None


def _gold_top_array(repo):
    w(repo / "gold.yaml", "- q01\n- q02\n")
    return "gold.yaml:1", "mapping with a `queries:` list", None


def _path_outside(repo):
    replace(repo / ".rag-corpus-check.yml", "corpus: corpus.jsonl", "corpus: ../../etc/passwd")
    return ".rag-corpus-check.yml", "points outside the repository", None


def _path_absolute(repo):
    replace(repo / ".rag-corpus-check.yml", "corpus: corpus.jsonl", "corpus: /etc/passwd")
    return ".rag-corpus-check.yml", "absolute paths are not allowed", None


def _symlink_escape(repo):
    (repo / "gold.yaml").unlink()
    os.symlink("/etc/passwd", repo / "gold.yaml")
    return "gold.yaml", "symlink that leads outside the repository", None


def _directory(repo):
    (repo / "run.jsonl").unlink()
    (repo / "run.jsonl").mkdir()
    return "run.jsonl", "directory", None


def _missing_file(repo):
    (repo / "run.jsonl").unlink()
    return "run.jsonl", "file not found", None


def _inactive_label_error(repo):
    replace(repo / ".rag-corpus-check.yml", "thresholds:", "validation:\n  inactive_labels: error\nthresholds:")
    replace(repo / "gold.yaml", "      faq-004: 1\n", "      faq-009: 1\n")
    return f"gold.yaml:{gold_line(repo, 'faq-009: 1')}", "counts a stale document as relevant", "faq-009"


def _missing_query_error(repo):
    replace(repo / ".rag-corpus-check.yml", "thresholds:", "validation:\n  missing_queries: error\nthresholds:")
    ls = lines(repo / "run.jsonl")
    (repo / "run.jsonl").write_text("\n".join(ls[1:]), encoding="utf-8")
    return f"gold.yaml:{gold_line(repo, 'query_id: q01')}", "not in run.jsonl", "q01"


def _config_unknown_field(repo):
    replace(repo / ".rag-corpus-check.yml", "k: 5", "k: 5\ntop_k: 5")
    return f".rag-corpus-check.yml:{config_line(repo, 'top_k')}", "unknown field `top_k`", None


def _min_above_max(repo):
    replace(repo / ".rag-corpus-check.yml", "  min_grade: 1", "  min_grade: 3")
    return ".rag-corpus-check.yml:", "min_grade (3) is above relevance.max_grade (2)", None



case(id="example-corpus-duplicate-id", group="example", title="the example with corpus duplicate id", setup=lambda r, o, f=_dup_corpus: f(r), exit=2, base="example")
case(id="example-corpus-missing-text", group="example", title="the example with corpus missing text", setup=lambda r, o, f=_corpus_missing_text: f(r), exit=2, base="example")
case(id="example-corpus-bad-status", group="example", title="the example with corpus bad status", setup=lambda r, o, f=_corpus_bad_status: f(r), exit=2, base="example")
case(id="example-corpus-id-trailing-newline", group="example", title="the example with corpus id trailing newline", setup=lambda r, o, f=_corpus_id_trailing_newline: f(r), exit=2, base="example")
case(id="example-gold-unknown-document", group="example", title="the example with gold unknown document", setup=lambda r, o, f=_gold_unknown_doc: f(r), exit=2, base="example")
case(id="example-run-unknown-document", group="example", title="the example with run unknown document", setup=lambda r, o, f=_run_unknown_doc: f(r), exit=2, base="example")
case(id="example-run-same-doc-twice", group="example", title="the example with run same doc twice", setup=lambda r, o, f=_run_duplicate_in_ranking: f(r), exit=2, base="example")
case(id="example-gold-duplicate-question", group="example", title="the example with gold duplicate question", setup=lambda r, o, f=_gold_duplicate_qid: f(r), exit=2, base="example")
case(id="example-run-duplicate-question", group="example", title="the example with run duplicate question", setup=lambda r, o, f=_run_duplicate_qid: f(r), exit=2, base="example")
case(id="example-grade-above-scale", group="example", title="the example with grade above scale", setup=lambda r, o, f=_grade_above_scale: f(r), exit=2, base="example")
case(id="example-grade-negative", group="example", title="the example with grade negative", setup=lambda r, o, f=_grade_negative: f(r), exit=2, base="example")
case(id="example-grade-float", group="example", title="the example with grade float", setup=lambda r, o, f=_grade_float: f(r), exit=2, base="example")
case(id="example-grade-yaml-bool", group="example", title="the example with grade yaml bool", setup=lambda r, o, f=_grade_bool: f(r), exit=2, base="example")
case(id="example-k-zero", group="example", title="the example with k zero", setup=lambda r, o, f=_k_zero: f(r), exit=2, base="example")
case(id="example-threshold-unknown-measure", group="example", title="the example with threshold unknown measure", setup=lambda r, o, f=_unknown_measure: f(r), exit=2, base="example")
case(id="example-run-other-snapshot", group="example", title="the example with run other snapshot", setup=lambda r, o, f=_run_snapshot: f(r), exit=2, base="example")
case(id="example-gold-other-snapshot", group="example", title="the example with gold other snapshot", setup=lambda r, o, f=_gold_snapshot: f(r), exit=2, base="example")
case(id="example-yaml-duplicate-key", group="example", title="the example with yaml duplicate key", setup=lambda r, o, f=_yaml_duplicate_key: f(r), exit=2, base="example")
case(id="example-yaml-python-tag", group="example", title="the example with yaml python tag", setup=lambda r, o, f=_yaml_python_tag: f(r), exit=2, base="example")
case(id="example-yaml-syntax", group="example", title="the example with yaml syntax", setup=lambda r, o, f=_yaml_syntax: f(r), exit=2, base="example")
case(id="example-json-nan", group="example", title="the example with json nan", setup=lambda r, o, f=_json_nan: f(r), exit=2, base="example")
case(id="example-json-duplicate-key", group="example", title="the example with json duplicate key", setup=lambda r, o, f=_json_dup_key: f(r), exit=2, base="example")
case(id="example-json-deep-nesting", group="example", title="the example with json deep nesting", setup=lambda r, o, f=_json_deep: f(r), exit=2, base="example")
case(id="example-json-truncated-last-line", group="example", title="the example with json truncated last line", setup=lambda r, o, f=_json_truncated: f(r), exit=2, base="example")
case(id="example-invalid-utf8", group="example", title="the example with invalid utf8", setup=lambda r, o, f=_invalid_utf8: f(r), exit=2, base="example")
case(id="example-utf16", group="example", title="the example with utf16", setup=lambda r, o, f=_utf16: f(r), exit=2, base="example")
case(id="example-jsonl-not-an-object", group="example", title="the example with jsonl not an object", setup=lambda r, o, f=_not_an_object: f(r), exit=2, base="example")
case(id="example-gold-top-level-array", group="example", title="the example with gold top level array", setup=lambda r, o, f=_gold_top_array: f(r), exit=2, base="example")
case(id="example-path-outside-repo", group="example", title="the example with path outside repo", setup=lambda r, o, f=_path_outside: f(r), exit=2, base="example")
case(id="example-path-absolute", group="example", title="the example with path absolute", setup=lambda r, o, f=_path_absolute: f(r), exit=2, base="example")
case(id="example-symlink-escape", group="example", title="the example with symlink escape", setup=lambda r, o, f=_symlink_escape: f(r), exit=2, base="example")
case(id="example-directory-not-file", group="example", title="the example with directory not file", setup=lambda r, o, f=_directory: f(r), exit=2, base="example")
case(id="example-missing-file", group="example", title="the example with missing file", setup=lambda r, o, f=_missing_file: f(r), exit=2, base="example")
case(id="example-inactive-label-as-error", group="example", title="the example with inactive label as error", setup=lambda r, o, f=_inactive_label_error: f(r), exit=2, base="example")
case(id="example-missing-question-as-error", group="example", title="the example with missing question as error", setup=lambda r, o, f=_missing_query_error: f(r), exit=2, base="example")
case(id="example-config-unknown-field", group="example", title="the example with config unknown field", setup=lambda r, o, f=_config_unknown_field: f(r), exit=2, base="example")
case(id="example-config-min-above-max", group="example", title="the example with config min above max", setup=lambda r, o, f=_min_above_max: f(r), exit=2, base="example")


# ---------------------------------------------------------------- the Markdown corpus

MD_CORPUS = 'corpus: {format: markdown, paths: ["docs/**/*.md"]}'
MD_PAGES = {
    "docs/backups.md": "# Backups\n\nDeleted backups are kept for 30 days.\n",
    "docs/sizes.md": "# Sizes\n\nA single object can be up to 5 TiB.\n",
}


def markdown_repo(r: Path, pages: dict | None = None, corpus: str = MD_CORPUS, extra: str = "") -> None:
    """The small repository with its corpus as Markdown pages under ``docs/``
    (ranked by the built-in BM25: no run to point at the old ids)."""
    (r / "corpus.jsonl").unlink()
    (r / "run.jsonl").unlink()
    for rel, data in (MD_PAGES if pages is None else pages).items():
        (r / rel).parent.mkdir(parents=True, exist_ok=True)
        (r / rel).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    gold = GOLD.replace("{d1: 2, d2: 0}", '{"docs/backups.md#backups": 2}').replace(
        "{d3: 1}", '{"docs/sizes.md#sizes": 1}'
    )
    w(r / "gold.yaml", gold)
    text = config_text(run=None, extra=extra).replace(f"corpus: {yq('corpus.jsonl')}", corpus, 1)
    w(r / CONFIG_NAME, text)


def _md_page(name: str, data: str | bytes, extra: str = ""):
    return lambda r, o: markdown_repo(r, {**MD_PAGES, name: data}, extra=extra)


def _md_symlinked_page(r, o):
    markdown_repo(r)
    symlink(r / "docs" / "leak.md", o / "secret.yaml")


def _md_symlinked_folder(r, o):
    markdown_repo(r)
    symlink(r / "docs" / "sub", o)


case(
    id="md-front-matter-unparsable",
    group="markdown",
    title="a page's front matter does not parse (`title: [unclosed`): a warning, the page is read",
    setup=_md_page("docs/fm.md", f"---\ntitle: [unclosed {CANARY}\n---\n# Front\n\ntext\n"),
    exit=0,
    expect="front matter",
    where="docs/fm.md:3",
)
case(
    id="md-symlinked-page",
    group="markdown",
    title="a page `docs/leak.md` is a symlink to a file outside holding the secret",
    setup=_md_symlinked_page,
    exit=2,
    expect="symlink",
    where="docs/leak.md",
)
case(
    id="md-symlinked-folder",
    group="markdown",
    title="a folder `docs/sub` the glob walks is a symlink to a folder outside",
    setup=_md_symlinked_folder,
    exit=2,
    expect="symlink",
    where="docs/sub",
)
case(
    id="md-glob-dotdot",
    group="markdown",
    title="the corpus glob climbs out of the repository: `paths: [\"../outside/*.md\"]`",
    setup=lambda r, o: markdown_repo(r, corpus='corpus: {format: markdown, paths: ["../outside/*.md"]}'),
    exit=2,
    expect="not a glob relative to the config's folder",
    where=f"{CONFIG_NAME}:",
)
case(
    id="md-glob-absolute",
    group="markdown",
    title="the corpus glob is absolute: `paths: [\"/etc/*\"]`",
    setup=lambda r, o: markdown_repo(r, corpus='corpus: {format: markdown, paths: ["/etc/*"]}'),
    exit=2,
    expect="not a glob",
    where=f"{CONFIG_NAME}:",
    forbid=("root:x:0",),
)
case(
    id="md-invalid-utf8",
    group="markdown",
    title="a page has a byte that is not UTF-8 on line 4",
    setup=_md_page("docs/latin1.md", f"# Latin\n\n{CANARY}\n".encode() + b"\xe9t\xe9\n"),
    exit=2,
    where="docs/latin1.md:4",
)
case(
    id="md-page-name-escape",
    group="markdown",
    title="a page's file name holds an ESC character and `::error::`",
    setup=_md_page("docs/a\x1b::error::b.md", "# A\n"),
    exit=2,
    where="docs/",
)
case(
    id="md-too-many-pages",
    group="markdown",
    title="the globs name more pages than `limits.max_records` (3 here, 5 pages)",
    setup=lambda r, o: markdown_repo(
        r, {**MD_PAGES, **{f"docs/p{i}.md": "# P\n" for i in range(3)}}, extra="limits: {max_records: 3}\n"
    ),
    exit=2,
    expect="name more than 3 pages",
    where="docs/",
)
case(
    id="md-too-many-sections",
    group="markdown",
    title="one page of 10 headings, `limits.max_records: 9` (sections count as records)",
    setup=lambda r, o: markdown_repo(
        r, {**MD_PAGES, "docs/many.md": "".join(f"# H{i}\n" for i in range(10))}, extra="limits: {max_records: 9}\n"
    ),
    exit=2,
    expect="more than 9 records",
    where="docs/",
)
def _md_sparse_page(r, o):
    markdown_repo(r)
    sparse(r / "docs" / "big.md", 2**31)


case(
    id="md-page-2gb-sparse",
    group="markdown",
    title="a page `docs/big.md` is a sparse 2 GB file",
    setup=_md_sparse_page,
    exit=2,
    expect="over the limit of 4194304 bytes for one page",
    where="docs/big.md",
    forbid=("put a gold set",),  # the advice is for pages, not for a gold set
    action=True,
    max_read=8 * 1024**2,
)
case(
    id="md-heading-bomb",
    group="markdown",
    title="a 5,000-character front-matter title and 5,000 empty headings (each section repeats the title)",
    setup=_md_page("docs/bomb.md", "---\ntitle: " + "T" * 5000 + "\n---\n" + "#\n" * 5000),
    exit=2,
    expect="chunk: file",
    where="docs/bomb.md",
)
case(
    id="md-parser-lines",
    group="markdown",
    title="20,000 lines of `- #` (a list item with an empty heading each: the parser's work per line)",
    setup=_md_page("docs/list.md", "- #\n" * 20_000),
    exit=2,
    expect="lines that are not empty",
    where="docs/list.md",
)
case(
    id="md-parser-inline",
    group="markdown",
    title="one heading of 20,000 `![` (link openers the inline parser would retry)",
    setup=_md_page("docs/inline.md", "# " + "![" * 20_000 + "\n"),
    exit=2,
    expect="links, images",
    where="docs/inline.md",
)

# ---------------------------------------------------------------- the vector store


def _store_texts() -> list[str]:
    import yaml

    from hostile import CORPUS as DOCS

    texts = [f"{d['title']}\n{d['text']}" for d in DOCS]
    return texts + [q["query"] for q in yaml.safe_load(GOLD)["queries"]]


def store_repo(r: Path, dims: int = 8, extra: str = "") -> Path:
    """The small repository ranked by a dense retriever from a store holding a
    vector for every text (no endpoint needed); returns the segments folder."""
    import numpy as np

    from rag_corpus_check.retrieval.dense.store import StoreInfo, digest, init_store, write_segment

    (r / "run.jsonl").unlink()
    folder = r / "store"
    init_store(str(folder), StoreInfo("test-model-1", dims, ("title", "text")))
    texts = _store_texts()
    rows = np.random.default_rng(0).standard_normal((len(texts), dims)).astype("<f4")
    write_segment(str(folder), [digest(t) for t in texts], rows)
    retriever = 'retriever: {type: dense, vectors: store, model: test-model-1, embed: [title, text], depth: 10}\n'
    set_config(r, run=None, extra=retriever + extra)
    return folder / "segments"


def _segment(r: Path, ext: str) -> Path:
    return next(store_repo(r).glob(f"*.{ext}"))


def _store_nan(r, o):
    import numpy as np

    npy = _segment(r, "npy")
    m = np.load(npy)
    m[3, 5] = np.nan
    np.save(npy, m)


def _store_dims(r, o):
    import numpy as np

    npy = _segment(r, "npy")
    np.save(npy, np.ascontiguousarray(np.load(npy)[:, :-1]))


def _store_unpaired(r, o):
    index = _segment(r, "jsonl")
    index.with_name("0123456789abcdef.jsonl").write_bytes(index.read_bytes())


def _store_stray(r, o):
    (store_repo(r) / "notes\x1b[31m::error::x.txt").write_text("hi")


def _store_big_header(r, o):
    """A .npy whose header says it is 60,000 bytes long (numpy refuses over 10,000)."""
    npy = _segment(r, "npy")
    npy.write_bytes(b"\x93NUMPY\x02\x00" + (60_000).to_bytes(4, "little") + b" " * 60_000)


def _store_lying_header(r, o):
    """A 200-byte .npy whose header says (2**20, 2**20) float32 rows: 4 TB."""
    npy = _segment(r, "npy")
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }"
    header += b" " * (118 - len(header)) + b"\n"
    npy.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 64)


def _store_object_npy(r, o):
    """A pickled object array (numpy's allow_pickle would run code)."""
    import pickle

    npy = _segment(r, "npy")
    payload = pickle.dumps(_Pwned(str(o / "PWNED-store")))
    header = b"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
    header += b" " * (118 - len(header)) + b"\n"
    npy.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + payload)


class _Pwned:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _store_segment_link(r, o):
    npy = _segment(r, "npy")
    symlink(npy, o / "secret.jsonl")


def _store_segments_folder_link(r, o):
    segments = store_repo(r)
    import shutil

    shutil.rmtree(segments)
    symlink(segments, o)


def _store_too_many(r, o):
    segments = store_repo(r)
    from rag_corpus_check.retrieval.dense import MAX_SEGMENTS

    for i in range(MAX_SEGMENTS + 1):
        for ext in ("npy", "jsonl"):
            (segments / f"{i:016x}.{ext}").touch()


def _store_bad_line(r, o):
    index = _segment(r, "jsonl")
    lines = index.read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace('"sha256": "', f'"sha256": "{CANARY}', 1)
    index.write_text("".join(lines))


def _store_over_bytes(r, o):
    segments = store_repo(r, extra="limits: {max_file_bytes: 1000}\n")
    for one in list(segments.iterdir()):
        (segments / ("0123456789abcdef" + one.suffix)).write_bytes(one.read_bytes())


case(
    id="store-nan-row",
    group="vector store",
    title="a segment's row 4 holds a NaN",
    setup=_store_nan,
    exit=2,
    expect="which is no vector to compare by cosine",
    where="store/segments/",
)
case(
    id="store-wrong-dims",
    group="vector store",
    title="a segment's rows have 7 dimensions, store.json says 8",
    setup=_store_dims,
    exit=2,
    expect="rows have 7 dimensions, but store.json says 8",
    where="store/segments/",
)
case(
    id="store-unpaired-segment",
    group="vector store",
    title="`segments/0123456789abcdef.jsonl` has no `.npy`",
    setup=_store_unpaired,
    exit=2,
    expect="has no .npy file; a segment is a pair",
    where="store/segments/0123456789abcdef.jsonl",
)
case(
    id="store-stray-file",
    group="vector store",
    title="a stray file in `segments/` whose name holds an ESC and `::error::`",
    setup=_store_stray,
    exit=2,
    expect="is no segment file",
    where="store/segments",
)
case(
    id="store-bad-index-line",
    group="vector store",
    title="line 4 of a segment's `.jsonl` is no sha-256 (it holds the secret)",
    setup=_store_bad_line,
    exit=2,
    expect='each line must be {"sha256"',
    where="store/segments/",
)
case(
    id="store-npy-header-60k",
    group="vector store",
    title="a segment's `.npy` header says it is 60,000 bytes long",
    setup=_store_big_header,
    exit=2,
    where="store/segments/",
)
case(
    id="store-npy-shape-lies",
    group="vector store",
    title="a 200-byte `.npy` whose header says 2^20 × 2^20 float32 (4 TB)",
    setup=_store_lying_header,
    exit=2,
    where="store/segments/",
)
case(
    id="store-npy-pickle",
    group="vector store",
    title="a segment's `.npy` is a pickled object array whose unpickling writes a file",
    setup=_store_object_npy,
    exit=2,
    where="store/segments/",
)
case(
    id="store-segment-symlink",
    group="vector store",
    title="a segment's `.npy` is a symlink to a file outside",
    setup=_store_segment_link,
    exit=2,
    expect="symlink",
    where="store/segments/",
)
case(
    id="store-segments-folder-symlink",
    group="vector store",
    title="`store/segments` is a symlink to a folder outside",
    setup=_store_segments_folder_link,
    exit=2,
    expect="not a symlink",
    where="store/segments",
)
def _store_json_link(r, o):
    store_repo(r)
    symlink(r / "store" / "store.json", o / "secret.jsonl")


case(
    id="store-json-symlink",
    group="vector store",
    title="`store/store.json` is a symlink to a file outside",
    setup=_store_json_link,
    exit=2,
    expect="symlink that leads outside the repository",
    where="store/store.json",
)
case(
    id="store-too-many-segments",
    group="vector store",
    title="4,097 empty segment pairs in `segments/`",
    setup=_store_too_many,
    exit=2,
    expect="more than 4096 segments",
    where="store/segments",
)
case(
    id="store-over-bytes",
    group="vector store",
    title="the segments are over `limits.max_file_bytes` (1000) together",
    setup=_store_over_bytes,
    exit=2,
    expect="over `limits.max_file_bytes` (1000) together",
    where="store/segments/",
)


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


def _base_repo(c: Case, path: Path) -> Path:
    from hostile import make_repo

    if c.base == "hostile":
        return make_repo(path)
    import shutil

    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "kb", path)
    (path / "committed-run.rag-corpus-check.yml").replace(path / CONFIG_NAME)
    return path


def write_doc(path: Path) -> None:
    import tempfile

    from hostile import fresh, make_outside, run_action, run_inprocess

    rows = {}
    with tempfile.TemporaryDirectory(prefix="rcc-hostile-doc-") as tmp:
        for c in CASES:
            base = fresh(Path(tmp) / c.id)
            repo, outside = _base_repo(c, base / "repo"), make_outside(base / "outside")
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
