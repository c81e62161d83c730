"""The job summaries of two pull requests on the bundled example, as a
reviewer sees them: docs/images/pr-damaging.png and docs/images/pr-harmless.png
(docs/pr-comparison.md shows them).

Each PR is made on a throw-away git repository holding examples/kb (the
built-in BM25 config): the base commit, then the PR's commit; the check runs
with ``--base`` as the action runs it, and its summary is rendered by cmark-gfm
(GitHub's Markdown renderer, PyPI ``cmarkgfm``) and photographed by a headless
Chromium (Debian ``chromium``), then cut below its last line (PyPI ``pillow``).
Nothing here runs in the check or in the tests; it is how the images are made:

    .venv/bin/python tools/pr_screenshots.py            # needs chromium on PATH
    .venv/bin/python tools/pr_screenshots.py --markdown DIR   # the two summaries only

The damaging PR replaces the text of three documents the gold set marks
relevant with a one-line stub; the harmless one adds an unrelated page and
fixes a typo.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "kb"
IMAGES = ROOT / "docs" / "images"
STUBBED = ("policy-002", "faq-002", "howto-002", "faq-005", "howto-005")  # each answers a gold question
WIDTH = 1012  # GitHub's job summary column, about

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Reviewer", "GIT_AUTHOR_EMAIL": "reviewer@example.invalid",
    "GIT_COMMITTER_NAME": "Reviewer", "GIT_COMMITTER_EMAIL": "reviewer@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_DATE": "2026-12-01T12:00:00Z", "GIT_COMMITTER_DATE": "2026-12-01T12:00:00Z",  # the same shas each time
}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    done = subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env=env, check=True,
                          capture_output=True, text=True)
    return done.stdout.strip()


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def damaging(repo: Path) -> None:
    """Three relevant documents' texts replaced by a stub."""
    corpus = repo / "corpus.jsonl"
    docs = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    for d in docs:
        if d["id"] in STUBBED:
            d["text"] = "This page moved to the new handbook."
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")


def harmless(repo: Path) -> None:
    """An unrelated page added, and a typo fixed."""
    corpus = repo / "corpus.jsonl"
    text = corpus.read_text(encoding="utf-8")
    page = {"id": "howto-020", "type": "howto", "status": "active", "title": "Change the dashboard's colour theme",
            "text": "Open Settings, then Appearance, and pick Light, Dark or System."}
    corpus.write_text(text.replace("GB-month", "GB per month", 1) + json.dumps(page) + "\n", encoding="utf-8")


def summary_of(change, name: str, work: Path) -> str:
    """The job summary of the PR ``change`` makes on a fresh copy of the example."""
    from rag_corpus_check.commands.cli import main

    repo = work / name / "kb"
    shutil.copytree(EXAMPLE, repo)
    git(repo, "init", "-q", "-b", "main")
    base = commit(repo, "base")
    change(repo)
    commit(repo, f"the {name} PR")
    out = work / name / "out"
    here = os.getcwd()
    os.chdir(repo)
    try:
        main(["--config", ".rag-corpus-check.yml", "--base", base, "--quiet",
              "--output", str(out / "results.json"), "--summary-file", str(out / "summary.md")])
    finally:
        os.chdir(here)
    return (out / "summary.md").read_text(encoding="utf-8")


STYLE = """
body { font: 14px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1f2328; margin: 16px 24px;
       width: WIDTHpx; }
h2 { font-size: 1.4em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
h3 { font-size: 1.15em; } h4 { font-size: 1em; }
table { border-collapse: collapse; margin: 8px 0 16px; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 4px 10px; } th { background: #f6f8fa; }
code { background: #eff1f3; border-radius: 4px; padding: .1em .35em; font: 12px "DejaVu Sans Mono", monospace; }
blockquote { margin: 8px 0; padding: 4px 14px; border-left: 4px solid #d1d9e0; color: #1f2328; }
blockquote.note { border-color: #0969da; } blockquote.warning { border-color: #9a6700; }
blockquote.caution { border-color: #cf222e; } blockquote.important { border-color: #8250df; }
blockquote .alert { font-weight: 600; }
details summary { cursor: pointer; }
""".replace("WIDTH", str(WIDTH))


def html_of(markdown: str) -> str:
    """The summary as GitHub renders it: cmark-gfm, and its alerts styled
    (`> [!NOTE]` is a blockquote to cmark-gfm, a coloured box on GitHub)."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    body = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    for kind in ("NOTE", "WARNING", "CAUTION", "IMPORTANT", "TIP"):
        body = body.replace(f"<blockquote>\n<p>[!{kind}]",
                            f'<blockquote class="{kind.lower()}">\n<p><span class="alert">{kind.title()}</span><br>')
    return f"<!doctype html><meta charset=utf-8><style>{STYLE}</style>{body}"


def screenshot(html: str, png: Path, work: Path) -> None:
    """A headless Chromium's picture of ``html``, cut below its last line."""
    from PIL import Image, ImageChops

    page = work / (png.stem + ".html")
    page.write_text(html, encoding="utf-8")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is not on PATH (Debian: apt-get install chromium)")
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                    "--disable-extensions", f"--user-data-dir={work / 'profile'}", f"--screenshot={png}",
                    f"--window-size={WIDTH + 64},6000", page.as_uri()], check=True, capture_output=True, timeout=120)
    image = Image.open(png).convert("RGB")
    box = ImageChops.difference(image, Image.new("RGB", image.size, (255, 255, 255))).getbbox()
    if box is not None:
        image = image.crop((0, 0, image.width, min(image.height, box[3] + 16)))
    image.save(png, optimize=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--markdown", metavar="DIR", help="write the two summaries here instead of the images")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT / "check"))
    with tempfile.TemporaryDirectory(prefix="rag-corpus-check-pr-") as tmp:
        work = Path(tmp)
        for name, change in (("damaging", damaging), ("harmless", harmless)):
            markdown = summary_of(change, name, work)
            if args.markdown:
                Path(args.markdown, f"pr-{name}.md").write_text(markdown, encoding="utf-8")
                continue
            IMAGES.mkdir(parents=True, exist_ok=True)
            screenshot(html_of(markdown), IMAGES / f"pr-{name}.png", work)
            print(f"wrote docs/images/pr-{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
