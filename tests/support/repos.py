"""Real throw-away git repositories for the tests (one builder, one place).

Every git call here runs with the user's and the system's config switched off,
so a developer's ``~/.gitconfig`` (hooks, signing, templates) cannot change
what a test sees.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path | str, *args: str, check: bool = True) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY)
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env=env, capture_output=True, text=True,
    )
    if check and done.returncode != 0:  # git's own words, or a failure here says nothing
        raise RuntimeError(f"git {' '.join(args)} in {repo} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout.strip()


def init(path: Path, files: Path | None = None) -> Path:
    """A new repository at ``path`` (branch main), holding a copy of ``files``."""
    if files is not None:
        shutil.copytree(files, path)
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return path


def commit(repo: Path, message: str) -> str:
    """Commit everything in the working tree; the new commit's sha."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def plant_bare_repository(directory: Path, config: str, head: str = "1234567890" * 4) -> None:
    """Files that make ``directory`` look like a bare repository to git's
    discovery (``HEAD``, ``config``, ``objects/``, ``refs/``), as a pull
    request can add them to any folder of the tree."""
    (directory / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (directory / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (directory / "objects" / "info" / ".keep").write_text("")
    (directory / "refs" / "heads" / ".keep").write_text("")
    (directory / "HEAD").write_text(head + "\n")
    (directory / "config").write_text(config)


def promisor_config(marker: Path) -> str:
    """A planted config whose partial-clone promisor runs a command (the
    "upload pack" of a local remote) as soon as git misses an object."""
    return (
        "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
        "[extensions]\n\tpartialClone = origin\n"
        f"[remote \"origin\"]\n\turl = {marker.parent}\n\tpromisor = true\n"
        f"\tuploadpack = touch {marker}; false\n"
    )
