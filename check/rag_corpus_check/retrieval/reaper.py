"""Run one command and leave nothing of it behind (POSIX).

Started as a script (``python -I reaper.py ARGV...``) in a new session by
:mod:`external`. It becomes a *child subreaper* (Linux), so every
process the command starts and abandons — a daemon that double-forked and
left the session included — is re-parented to it rather than to init. When
the command exits, or this process gets SIGTERM (the caller's timeout), it
kills the command's process group, then every process re-parented to it,
round after round until none is left, and exits with the command's status.

This contains a retriever that forgets its children; it is not a sandbox. The
command runs as the job's user and can do whatever that user can, this
process included.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
ROUNDS = 50


def _become_subreaper() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _children() -> list[int]:
    """Processes whose parent is this one (Linux /proc; elsewhere none known)."""
    me = os.getpid()
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def _kill(pid: int, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid: int, flags: int = 0) -> tuple[int, int]:
    try:
        return os.waitpid(pid, flags)
    except ChildProcessError:
        return 0, 0


def _kill_all(group: int) -> None:
    """The command's group, then every process re-parented here, round
    after round, until none is left; then reap the dead."""
    _kill(group, group=True)
    for _ in range(ROUNDS):
        pids = _children()
        if not pids:
            break
        for pid in pids:
            _kill(pid)
        for pid in pids:
            _reap(pid)
        time.sleep(0.01)
    while _reap(-1, os.WNOHANG) != (0, 0):
        pass


def main(argv: list[str]) -> int:
    _become_subreaper()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    try:
        proc = subprocess.Popen(argv, start_new_session=True)  # stdin: the caller's (DEVNULL for a retriever)
    except OSError:
        return 127
    status = None
    while status is None and not stop:
        try:
            status = proc.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue
    _kill_all(proc.pid)
    if status is None:
        return 128 + signal.SIGTERM
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
