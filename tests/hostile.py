"""What the tests of hostile input (issue 7) share: a tiny repository to
spoil, two ways to run the check on it (in-process, and as the action runs it:
``python -I check/launch.py`` in a child process), and re-implementations of
the three things GitHub does with what the check writes:

* the runner's workflow-command parser (``::name props::data`` at the start
  of a left-trimmed stdout/stderr line, and the legacy ``##[`` anywhere in one);
* the runner's ``$GITHUB_OUTPUT`` file parser (``name=value`` and
  ``name<<DELIMITER`` blocks);
* the job summary, rendered as GitHub renders it (cmark-gfm, test extra).

``check_invariants`` asserts what issue 7 asks of *every* hostile input.
"""

from __future__ import annotations

import contextlib
import html.parser
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from support.github import (
    Command,
    find_commands,
    parse_github_output,
    runner_lines,
    unintended_commands,
)

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "check" / "launch.py"
__all__ = ["Command", "find_commands", "parse_github_output", "runner_lines", "unintended_commands"]

if str(ROOT / "check") not in sys.path:
    sys.path.insert(0, str(ROOT / "check"))

# A secret the tests plant in every place a symlink may point to (a file
# outside the repository, the child's environment, .git/config). It must never
# show up in anything the check writes.
CANARY = "CANARY-7c1e4f0d-do-not-print"
CANARY_ENV = "RCC_TEST_CANARY_TOKEN"

CONFIG_NAME = ".rag-corpus-check.yml"

# ---------------------------------------------------------------- the repository

CORPUS = [
    {
        "id": "d1",
        "title": "Backups",
        "text": "Deleted backups are kept for 30 days.",
        "type": "faq",
    },
    {"id": "d2", "title": "Billing", "text": "Storage is billed per GB-month.", "type": "faq"},
    {"id": "d3", "title": "Sizes", "text": "A single object can be up to 5 TiB.", "type": "faq"},
    {
        "id": "d4",
        "title": "Regions",
        "text": "Buckets live in one of three regions.",
        "type": "howto",
        "status": "stale",
    },
]
GOLD = """queries:
  - query_id: q1
    query: "How long are deleted backups kept?"
    relevant: {d1: 2, d2: 0}
  - query_id: q2
    query: "What is the largest object?"
    relevant: {d3: 1}
"""
RUN = [
    {"query_id": "q1", "ranking": ["d1", "d2", "d3"]},
    {"query_id": "q2", "ranking": ["d3", "d4"]},
]


def yq(s: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML for it)."""
    return json.dumps(s)


def config_text(
    *,
    corpus: str = "corpus.jsonl",
    gold: str = "gold.yaml",
    run: str | None = "run.jsonl",
    k: str = "2",
    thresholds: str = "  P@2: 0.2\n",
    extra: str = "",
) -> str:
    """The config; path values are written double-quoted (any string is safe
    there), other values as given (raw YAML)."""
    lines = ["version: 1", f"corpus: {yq(corpus)}", f"gold: {yq(gold)}"]
    if run is not None:
        lines.append(f"run: {yq(run)}")
    lines.append(f"k: {k}")
    text = "\n".join(lines) + "\n" + extra
    if thresholds:
        text += "thresholds:\n" + thresholds
    return text


def jsonl(records) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def make_repo(repo: Path) -> Path:
    """A small valid repository: passes with P@2 = 0.5 >= 0.2 (exit 0)."""
    repo.mkdir(parents=True, exist_ok=True)
    (repo / CONFIG_NAME).write_text(config_text(), encoding="utf-8")
    (repo / "corpus.jsonl").write_text(jsonl(CORPUS), encoding="utf-8")
    (repo / "gold.yaml").write_text(GOLD, encoding="utf-8")
    (repo / "run.jsonl").write_text(jsonl(RUN), encoding="utf-8")
    return repo


def make_outside(outside: Path) -> Path:
    """Targets outside the repository, each holding the canary."""
    outside.mkdir(parents=True, exist_ok=True)
    secret_record = {"id": CANARY, "text": CANARY}
    (outside / "secret.jsonl").write_text(json.dumps(secret_record) + "\n", encoding="utf-8")
    (outside / "secret.yaml").write_text(f"{CANARY}: {CANARY}\nversion: 1\n", encoding="utf-8")
    (outside / "corpus.jsonl").write_text(json.dumps(secret_record) + "\n", encoding="utf-8")
    named = outside / f"{CANARY}-dir"
    named.mkdir(exist_ok=True)
    (named / f"{CANARY}.jsonl").write_text(json.dumps(secret_record) + "\n", encoding="utf-8")
    return outside


def plant_git_dir(repo: Path) -> None:
    """What actions/checkout leaves with persist-credentials: a token in .git/config
    (of a real repository: the check refuses to run on one git cannot read)."""
    from support.repos import init

    init(repo)
    git = repo / ".git"
    (git / "config").write_text(
        '[core]\n\trepositoryformatversion = 0\n[http "https://github.com/"]\n'
        f"\textraheader = AUTHORIZATION: basic {CANARY}\n",
        encoding="utf-8",
    )
    (git / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")


# ---------------------------------------------------------------- running it


@dataclass
class Result:
    code: int
    out: str
    err: str
    results_text: str | None
    summary_bytes: bytes | None
    step_summary_bytes: bytes | None
    gh_output: str | None
    seconds: float  # shown in docs/hostile-input.md; never asserted (the machine is busy)
    work: Path
    utf8_ok: dict = field(default_factory=dict)
    bytes_read: int | None = None  # by the check's process (/proc/<pid>/io rchar), when known

    @property
    def results(self) -> dict | None:
        return json.loads(self.results_text) if self.results_text is not None else None

    @property
    def summary(self) -> str | None:
        return self.summary_bytes.decode("utf-8") if self.summary_bytes is not None else None

    def everything(self) -> str:
        """All text the check produced, for needles that must not be there."""
        parts = [self.out, self.err, self.results_text or "", self.gh_output or ""]
        for b in (self.summary_bytes, self.step_summary_bytes):
            if b is not None:
                parts.append(b.decode("utf-8", "replace"))
        return "\n".join(parts)


_GH_VARS = (
    "GITHUB_ACTIONS",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_SHA",
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_SERVER_URL",
    "GITHUB_REPOSITORY",
    "GITHUB_RUN_ID",
    "RUNNER_TEMP",
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_BASE_REF",
    "GITHUB_HEAD_REF",
    "RAG_CORPUS_CHECK_DEBUG",
)


def _paths(work: Path) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    return {
        "results": work / "out" / "results.json",
        "summary": work / "out" / "summary.md",
        "gh_output": work / "gh_output",
        "gh_summary": work / "gh_step_summary",
    }


def _argv(p: dict, argv) -> list[str]:
    return [
        "--config",
        CONFIG_NAME,
        "--output",
        str(p["results"]),
        "--summary-file",
        str(p["summary"]),
        *argv,
    ]


def _gh_env(p: dict) -> dict:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(p["gh_output"]),
        "GITHUB_STEP_SUMMARY": str(p["gh_summary"]),
    }


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _collect(code, out, err, p, seconds, work, utf8_ok, bytes_read=None) -> Result:
    results = _read(p["results"])
    gh_output = _read(p["gh_output"])
    return Result(
        code,
        out,
        err,
        results.decode("utf-8") if results is not None else None,
        _read(p["summary"]),
        _read(p["gh_summary"]),
        gh_output.decode("utf-8") if gh_output is not None else None,
        seconds,
        work,
        utf8_ok,
        bytes_read,
    )


@contextlib.contextmanager
def patched_env(values: dict, remove=_GH_VARS):
    saved = {k: os.environ.get(k) for k in set(values) | set(remove)}
    try:
        for k in remove:
            os.environ.pop(k, None)
        os.environ.update(values)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_inprocess(repo: Path, work: Path, argv=(), env=None) -> Result:
    """``main(argv)`` with cwd = the repository and GitHub's files in ``work``."""
    from rag_corpus_check.commands.cli import main

    p = _paths(work)
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    t0 = time.monotonic()
    with patched_env({**_gh_env(p), **(env or {})}):
        os.chdir(repo)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(_argv(p, argv))
        finally:
            os.chdir(cwd)
    seconds = time.monotonic() - t0
    o, e = out.getvalue(), err.getvalue()
    utf8 = {"stdout": _encodable(o), "stderr": _encodable(e)}
    return _collect(code, o, e, p, seconds, work, utf8)


def _encodable(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def run_action(
    repo: Path,
    work: Path,
    argv=(),
    env=None,
    memory_limit: int | None = 1536 * 1024**2,
    timeout: float = 120,
) -> Result:
    """As action.yml runs it: ``python -I <action>/check/launch.py`` with the
    checked-out repository as the working directory, a bare environment
    (plus the canary) and an address-space cap (1.5 GiB: "bounded memory" for the big inputs)."""
    p = _paths(work)
    child_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work),
        "LANG": "C.UTF-8",
        CANARY_ENV: CANARY,
        **_gh_env(p),
        **(env or {}),
    }

    def limit():  # pragma: no cover - runs in the child
        if memory_limit:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-I", str(LAUNCH), *_argv(p, argv)],
        cwd=repo,
        env=child_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=limit,
    )
    with proc:
        streams = _drain(proc)
        bytes_read = _bytes_read_at_exit(proc.pid, timeout)
        returncode = proc.wait()
        stdout, stderr = (t.result() for t in streams)
    seconds = time.monotonic() - t0
    utf8 = {}
    texts = []
    for name, data in (("stdout", stdout), ("stderr", stderr)):
        try:
            texts.append(data.decode("utf-8"))
            utf8[name] = True
        except UnicodeDecodeError:
            texts.append(data.decode("utf-8", "replace"))
            utf8[name] = False
    return _collect(returncode, texts[0], texts[1], p, seconds, work, utf8, bytes_read)


def _drain(proc: subprocess.Popen) -> list:
    """Read the child's stdout and stderr to their ends, in threads."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(2)
    futures = [pool.submit(stream.read) for stream in (proc.stdout, proc.stderr)]
    pool.shutdown(wait=False)
    return futures


def _bytes_read_at_exit(pid: int, timeout: float) -> int | None:
    """What the child read (rchar), from its /proc entry once it has exited
    and before it is reaped (a size, not a time: deterministic)."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    try:
        with open(f"/proc/{pid}/io") as f:
            fields = dict(line.split(": ") for line in f.read().splitlines())
        return int(fields["rchar"])
    except (OSError, KeyError, ValueError):
        return None


# ---------------------------------------------------------------- the summary as GitHub shows it

# Tags cmark-gfm produces from Markdown, plus the folding the summary uses on
# purpose. Anything else in the HTML came from data.
MARKDOWN_TAGS = {
    "h1",
    "h2",
    "h3",
    "h4",
    "p",
    "strong",
    "em",
    "code",
    "pre",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "ul",
    "ol",
    "li",
    "blockquote",
    "br",
    "hr",
    "del",
    "details",
    "summary",
}


class _HTMLShape(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.bad: list[str] = []
        self.tables: list[dict] = []
        self._row: list | None = None
        self._section = None

    def handle_starttag(self, tag, attrs):
        if tag not in MARKDOWN_TAGS:
            self.bad.append(f"<{tag}>")
        for k, v in attrs:
            if k not in ("align",) and not (
                tag == "code" and k == "class" and (v or "").startswith("language-")
            ):
                self.bad.append(f"<{tag} {k}={v!r}>")
        if tag == "table":
            self.tables.append({"header": None, "rows": []})
        elif tag in ("thead", "tbody"):
            self._section = tag
        elif tag == "tr":
            self._row = []
        elif tag in ("th", "td") and self._row is not None:
            self._row.append(tag)

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None and self.tables:
            t = self.tables[-1]
            if self._section == "thead":
                t["header"] = len(self._row)
            else:
                t["rows"].append(len(self._row))
            self._row = None


def render_gfm(markdown: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options

    # UNSAFE keeps raw HTML in the output, so HTML smuggled in by data shows.
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def summary_problems(markdown: str) -> list[str]:
    """What is wrong with a summary as GitHub would show it: HTML, links or
    images that came from data, tables whose rows do not have the header's
    number of cells (in the Markdown: GFM silently drops extra cells)."""
    bad = []
    rendered = render_gfm(markdown)
    shape = _HTMLShape()
    shape.feed(rendered)
    bad += shape.bad
    for t in shape.tables:
        if t["header"] is None or any(n != t["header"] for n in t["rows"]):
            bad.append(f"table shape {t}")
    lines = markdown.split("\n")
    in_code = False
    header_cells = None
    for i, line in enumerate(lines):
        if line.startswith("````") or line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        if line.startswith("|"):
            cells = len(re.findall(r"(?<!\\)\|", line)) - 1
            if header_cells is None:
                header_cells = cells
            elif cells != header_cells and not re.fullmatch(r"\|(---\|)+", line):
                bad.append(
                    f"markdown row {i + 1} has {cells} cells, header {header_cells}: {line[:120]!r}"
                )
        else:
            header_cells = None
    return bad


# ---------------------------------------------------------------- invariants

MAX_SUMMARY = 1024 * 1024
BAD_ID_CHARS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029\ud800-\udfff]")


def problem_errors(results: dict) -> list[dict]:
    return [p for p in results.get("problems", []) if p["severity"] == "error"]


def first_match(results: dict, phrase: str) -> dict | None:
    for p in results.get("problems", []):
        if phrase in p["message"]:
            return p
    return None


def location(p: dict) -> str:
    return f"{p['file']}:{p['line']}" if p.get("line") else (p.get("file") or "-")


def results_schema_errors(results: dict) -> list[str]:
    from jsonschema import Draft202012Validator

    schema = json.loads(
        (ROOT / "check" / "rag_corpus_check" / "schemas" / "results.schema.json").read_text()
    )
    return [e.message[:200] for e in Draft202012Validator(schema).iter_errors(results)]


def check_invariants(
    res: Result,
    *,
    exit_code: int,
    expect: str | None = None,
    where: str | None = None,
    forbid=(),
    max_read: int | None = None,
    output_keys: set | None = None,
) -> None:
    """What must hold for every hostile input (issue 7, "What must hold")."""
    ctx = f"\n--- stdout ---\n{res.out[-3000:]}\n--- stderr ---\n{res.err[-3000:]}"
    assert res.code == exit_code, f"exit {res.code}, expected {exit_code}{ctx}"
    assert "Traceback" not in res.out + res.err, ctx
    assert all(res.utf8_ok.values()), f"not UTF-8: {res.utf8_ok}"
    if max_read is not None and res.bytes_read is not None:
        # Refused before reading the file whole: a bound on bytes, not seconds.
        assert res.bytes_read <= max_read, f"read {res.bytes_read} bytes (at most {max_read})"

    # Workflow commands: only the annotations the check meant to write.
    for stream in (res.out, res.err):
        bad = unintended_commands(stream)
        assert not bad, f"unintended workflow commands: {bad[:3]}{ctx}"

    results = res.results
    if exit_code == 3:
        assert "internal error" in res.err, ctx
        assert results is None, "a results file after an internal error"
    else:
        assert results is not None, f"no results file{ctx}"
        assert not results_schema_errors(results), results_schema_errors(results)
        assert results["exit_code"] == exit_code
        verdict = {0: "pass", 1: "fail", 2: "invalid"}[exit_code]
        assert results["verdict"] == verdict
        if exit_code == 2:
            assert results["metrics"] == {} and results["queries"] == [], (
                "a verdict on invalid input"
            )
            assert problem_errors(results), "exit 2 without an error problem"
        for p in results["problems"]:
            assert p["id"] is None or (
                len(p["id"]) <= 80
                and not BAD_ID_CHARS.search(p["id"])
                and "::" not in p["id"]
                and "##[" not in p["id"]
            ), p
            msg = p["message"]
            assert not BAD_ID_CHARS.search(msg) and "::" not in msg and "##[" not in msg, p
            assert len(msg) <= 2000, p
        if expect is not None:
            p = first_match(results, expect)
            assert p is not None, (
                f"no problem says {expect!r}: {[x['message'] for x in results['problems']]}"
            )
            if where is not None:
                assert location(p).startswith(where), (location(p), where)
            # The terminal names the same place (escaped, as everything untrusted is).
            from rag_corpus_check.core.text import safe_text

            assert safe_text(location(p), 200) in res.out, ctx
        # The summary: present, small, UTF-8, and GitHub shows no data as markup.
        assert res.summary_bytes is not None
        assert len(res.summary_bytes) < MAX_SUMMARY
        summary = res.summary_bytes.decode("utf-8")  # strict
        bad = summary_problems(summary)
        assert not bad, bad[:5]
        if res.step_summary_bytes is not None:
            assert res.step_summary_bytes == res.summary_bytes

    # $GITHUB_OUTPUT as the runner reads it: exactly the intended keys.
    if res.gh_output is not None:
        outputs = parse_github_output(res.gh_output)
        if exit_code == 3:
            assert set(outputs) == {"passed", "verdict", "exit-code"}, outputs
            assert outputs["verdict"] == "error"
        else:
            if output_keys is not None:
                assert set(outputs) == output_keys, set(outputs) ^ output_keys
            assert outputs["exit-code"] == str(exit_code)
        assert outputs["passed"] == ("true" if exit_code == 0 else "false")

    everything = res.everything()
    for needle in (CANARY, *forbid):
        assert needle not in everything, f"{needle!r} leaked into the output"


def normalised(res: Result) -> tuple:
    """What must be the same on every run: results and terminal text, with
    the per-run temporary paths taken out."""
    work = str(res.work)
    results = (res.results_text or "").replace(work, "<work>")
    return res.code, results, res.out.replace(work, "<work>"), res.err.replace(work, "<work>")


def fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path
