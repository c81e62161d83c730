"""A git revision's files, for the benchmarks that time another revision in the same rounds."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def archive(rev: str, dest: Path) -> Path:
    """The repository's files as of ``rev`` (``git archive``), unpacked into ``dest``."""
    data = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True,
                          check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest
