"""Where the check runs: the checkout and its commit, and on GitHub the event.

The events the check runs under are an allow-list: the ones whose job gets the
pull request's (or the branch's) own, read-only context. Anything else —
``pull_request_target``, ``workflow_run``, ``issue_comment``, review comments,
``check_run``/``check_suite``, ``deployment_status`` … — runs in the base
repository's context with a write token and the secrets, and checking out
pull request code there hands both to its author ("pwn request"). Such an
event needs the caller's ``--allow-untrusted-event``; a retriever command
(code from the repository) runs only under :data:`COMMAND_EVENTS`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace

from rag_corpus_check.core.gitrepo import Checkout, GitError, find_checkout, is_sha
from rag_corpus_check.core.text import safe_text

TRUSTED_EVENTS = ("pull_request", "push", "merge_group", "workflow_dispatch", "schedule")
COMMAND_EVENTS = ("pull_request", "push")


@dataclass(frozen=True)
class Context:
    """The commit checked and, on GitHub, the event. ``git_error``: the
    checkout exists but git cannot read it (the check then fails closed)."""

    commit: str | None = None
    checkout: Checkout | None = None
    git_error: str | None = None
    event_name: str | None = None
    event_head_sha: str | None = None
    github_sha: str | None = None
    server_url: str | None = None
    repository: str | None = None
    run_url: str | None = None

    @property
    def annotation_prefix(self) -> str:
        """Where the checked root is in the repository: annotations name
        files relative to the repository's top, as GitHub matches them."""
        return self.checkout.prefix if self.checkout else ""


def local_context(root: str, env=os.environ) -> Context:
    """The checkout holding ``root`` (a path as given: under Actions, inside
    the workspace) and its commit."""
    checkout = None
    try:
        checkout = find_checkout(root, env.get("GITHUB_WORKSPACE") or None)
        return Context(checkout.head() if checkout is not None else None, checkout)
    except GitError as exc:
        return Context(checkout=checkout, git_error=exc.message)


def uncommitted_inputs(ctx: Context, inputs: list[str]) -> list[str] | None:
    """Of the input files read (paths relative to the checked directory),
    those the checked-out commit does not hold as they are: the check then
    measured the working tree, not that commit. None outside git or when git
    cannot tell."""
    if ctx.checkout is None or ctx.commit is None:
        return None
    prefix = ctx.checkout.resolved
    found = ctx.checkout.uncommitted([prefix + p.replace(os.sep, "/") for p in inputs])
    return None if found is None else [p[len(prefix):] for p in found]


MAX_DIFFED = 100  # input files whose changed lines are looked up (each one git diff)


def changed_inputs(ctx: Context, base_sha: str, inputs: list[str]) -> dict[str, list[tuple[int, int]]]:
    """Per input file (paths relative to the checked directory; the first
    :data:`MAX_DIFFED`), the line ranges that differ from commit
    ``base_sha``: what the pull request touched. A file git cannot diff is left out."""
    if ctx.checkout is None:
        return {}
    prefix = ctx.checkout.resolved
    found = {p: ctx.checkout.changed_lines(base_sha, prefix + p.replace(os.sep, "/")) for p in inputs[:MAX_DIFFED]}
    return {p: ranges for p, ranges in found.items() if ranges}


def logical_path(path: str, env=os.environ) -> str:
    """``path`` made absolute without resolving symlinks. The current
    directory is the shell's ``$PWD`` when that names it: the process's own
    has every symlink resolved, and a checked directory swapped for a
    symlink must be seen as the path it was given by."""
    pwd = env.get("PWD")
    cwd = pwd if pwd and os.path.isabs(pwd) and _same(pwd, ".") else os.getcwd()
    return os.path.normpath(os.path.join(cwd, path))


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def github_context(root: str, env=os.environ) -> Context:
    event = env.get("GITHUB_EVENT_NAME") or None
    ctx = replace(local_context(root, env), event_name=event)
    if env.get("GITHUB_ACTIONS") != "true":
        return ctx
    sha = env.get("GITHUB_SHA", "")
    path = env.get("GITHUB_EVENT_PATH")
    head = _pr_head(path) if path and event in ("pull_request", "pull_request_target") else None
    server, repository, run_url = _repository(env)
    return replace(ctx, github_sha=sha if is_sha(sha) else None, event_head_sha=head, server_url=server,
                   repository=repository, run_url=run_url)


def _repository(env) -> tuple[str | None, str | None, str | None]:
    """The repository's address and the run's, when they are well formed
    (they become links in the summary)."""
    server = env.get("GITHUB_SERVER_URL", "https://github.com")
    repo = env.get("GITHUB_REPOSITORY", "")
    if not server.startswith("https://") or repo.count("/") != 1 or not all(c.isalnum() or c in "-_./" for c in repo):
        return None, None, None
    server, run_id = server.rstrip("/"), env.get("GITHUB_RUN_ID", "")
    return server, repo, f"{server}/{repo}/actions/runs/{run_id}" if run_id.isdigit() else None


def _pr_head(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            event = json.loads(f.read(16 * 1024 * 1024))
        head = ((event.get("pull_request") or {}).get("head") or {}).get("sha")
    except (OSError, ValueError, AttributeError):
        return None
    return head if is_sha(head) else None


def event_refusal(ctx: Context, allow_untrusted: bool) -> str | None:
    """Why the check must not run under this event, or None."""
    event = ctx.event_name
    if event is None or event in TRUSTED_EVENTS or allow_untrusted:
        return None
    return (
        f"refusing to run under `{safe_text(event, 60)}`: that event runs in the base repository's "
        "context with a write token and the secrets, and pull request code checked out there can "
        f"steal them. The check runs under {', '.join(TRUSTED_EVENTS)}; trigger the workflow on "
        "`pull_request` instead, or pass --allow-untrusted-event (action input "
        "`allow-untrusted-event: 'true'`) if this job checks out nothing from a pull request"
    )


def command_refusal(ctx: Context, allowed: bool) -> str | None:
    """Why a retriever command (code from the repository) must not run, or None."""
    event = ctx.event_name
    if event is not None and event not in COMMAND_EVENTS:
        return (
            f"refusing to run `retriever.command` under `{safe_text(event, 60)}`: the command is "
            "code from the repository, and runs only under `pull_request` and `push` — use a "
            "committed `run:` or the built-in BM25 here"
        )
    if not allowed:
        return (
            "`retriever.command` runs a program from the repository (in a pull request: the "
            "author's code), so the config alone cannot enable it; pass --allow-retriever-command "
            "(action input `allow-retriever-command: 'true'`) in a `pull_request` workflow with a "
            "read-only token, or use the built-in BM25 or a committed `run:`"
        )
    return None
