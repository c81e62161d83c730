"""Install the action's hash-locked runtime wheels into a fresh venv (stdlib only).

action.yml's install step runs it with setup-python's interpreter, isolated::

    python -I check/install_wheels.py --lock requirements/runtime.lock \\
        --wheels requirements/runtime-wheels.txt --platform "Linux X64" \\
        --venv DIR --download-dir DIR

It makes the venv (as ``python -m venv --clear --without-pip`` would) while
the wheels download.

``runtime-wheels.txt`` names, for each runner platform, the one wheel of each
package of ``runtime.lock`` that Python 3.13 on that platform installs (by its
PyPI URL and sha-256). All of them are downloaded at once (one ``curl
--parallel``, https only); each file's sha-256 must be the listed one AND one
of the hashes ``runtime.lock`` pins for that package and version, or nothing
is installed. Then the wheels are unpacked into the venv's site-packages,
leaving out what no run imports: test suites (``*/tests/*``) and type stubs
(``.pyi``), which are most of numpy's files. No build step, no dependency
resolution, no entry-point scripts.

Why not uv or pip: on a busy runner, creating files dominates the install,
and uv (which must first be downloaded and unpacked itself, ~38 MB) writes
every file of every wheel into its cache and links it into the venv; this
writes the ~400 files a run can use, once (bench/install_step.py).

Exit status: 0 installed; 2 a downloaded file failed its hash check or is
not a wheel of the lock (nothing installed: the step fails, no fallback); 3
this runner cannot use the fast path (no wheel set for its platform, no curl,
a download failed, a C library older than a wheel needs): the step installs
with pip instead.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

INSTALLED = 0
TAMPERED = 2
UNSUPPORTED = 3

# Members no run needs: test suites and type stubs (numpy: ~700 of ~1,040 files).
SKIP = re.compile(r"/tests/|\.pyi$")
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
CURL = ("--parallel", "--fail", "--silent", "--no-progress-meter", "--show-error", "--location", "--proto", "=https",
        "--proto-redir", "=https", "--tlsv1.2", "--retry", "2", "--connect-timeout", "15",
        "--max-time", "120")


class Unsupported(Exception):
    """The fast path cannot run here; pip can."""


class Tampered(Exception):
    """A file is not what the lock pins."""


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> dict[tuple[str, str], set[str]]:
    """(canonical name, version) -> the sha-256 hashes runtime.lock pins for it."""
    pins: dict[tuple[str, str], set[str]] = {}
    current: set[str] | None = None
    for line in text.splitlines():
        m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line)
        if m:
            current = pins.setdefault((canonical(m.group(1)), m.group(2)), set())
        elif current is not None and not line.startswith((" ", "\t")):
            current = None
        if current is not None:
            current.update(re.findall(r"--hash=sha256:([0-9a-f]{64})\b", line))
    return pins


def read_wheels(text: str, where: str) -> list[tuple[str, str]]:
    """The (sha-256, url) rows of runtime-wheels.txt for ``where`` ("OS ARCH")."""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 4 and not line.startswith("#") and " ".join(fields[:2]) == where:
            rows.append((fields[2], fields[3]))
    return rows


def wheel_pin(filename: str) -> tuple[str, str]:
    """(canonical name, version) of a wheel file name."""
    parts = filename[: -len(".whl")].split("-") if filename.endswith(".whl") else []
    if len(parts) not in (5, 6):
        raise Tampered(f"{filename}: not a wheel file name")
    return canonical(parts[0]), parts[1]


def glibc_needed(filename: str) -> tuple[int, int] | None:
    """The oldest glibc any of a wheel's manylinux tags accepts (None: not manylinux)."""
    needs = [(int(a), int(b)) for a, b in re.findall(r"manylinux_(\d+)_(\d+)_", filename)]
    needs += [LEGACY_MANYLINUX[tag] for tag in re.findall(r"(manylinux(?:1|2010|2014))_", filename)]
    return min(needs) if needs else None


def check_runner(filenames: Iterable[str]) -> None:
    """Refuse (to pip, which chooses for itself) a Linux without glibc or with
    an older one than a manylinux wheel needs, and a macOS older than a wheel's."""
    for name in filenames:
        need = glibc_needed(name)
        if need is not None:
            libc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
            have = re.fullmatch(r"glibc (\d+)\.(\d+).*", libc or "")
            if have is None or (int(have.group(1)), int(have.group(2))) < need:
                raise Unsupported(f"{name} needs glibc {need[0]}.{need[1]}, this runner has {libc or 'none'}")
        mac = re.search(r"macosx_(\d+)_(\d+)_", name)
        if mac:
            release = tuple(int(x) for x in (platform.mac_ver()[0] or "0").split(".")[:2])
            if release < (int(mac.group(1)), int(mac.group(2))):
                raise Unsupported(f"{name} needs macOS {mac.group(1)}.{mac.group(2)}")


def download(rows: list[tuple[str, str]], folder: str, meanwhile: Callable[[], None]) -> list[tuple[str, str]]:
    """Every wheel at once, ``meanwhile()`` running while they come; (expected
    sha-256, path) of each."""
    curl = shutil.which("curl")
    if curl is None:
        raise Unsupported("no curl on this runner")
    argv, got = [curl, *CURL], []
    for sha, url in rows:
        if not url.startswith("https://"):
            raise Tampered(f"{url}: not an https URL")
        path = os.path.join(folder, os.path.basename(url))
        argv += ["--output", path, url]
        got.append((sha, path))
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL) as proc:
        try:
            meanwhile()
        except BaseException:
            proc.kill()
            raise
    if proc.returncode != 0:
        raise Unsupported("a wheel could not be downloaded (see curl's message above)")
    return got


def make_venv(path: str) -> None:
    """What ``python -m venv --clear --without-pip`` makes."""
    import venv

    venv.EnvBuilder(clear=True, symlinks=os.name != "nt", with_pip=False).create(path)


def verify(files: list[tuple[str, str]], pins: dict[tuple[str, str], set[str]]) -> list[str]:
    """The paths, once each file's sha-256 is both the listed one and one the
    lock pins for its package and version; one wheel per package."""
    seen: set[str] = set()
    for listed, path in files:
        name = os.path.basename(path)
        pin = wheel_pin(name)
        with open(path, "rb") as f:
            got = hashlib.file_digest(f, "sha256").hexdigest()
        if got != listed or got not in pins.get(pin, set()):
            raise Tampered(f"{name} failed its sha-256 check: {got} is not the hash runtime-wheels.txt "
                           f"lists and runtime.lock pins for {pin[0]}=={pin[1]}")
        if pin[0] in seen:
            raise Tampered(f"{name}: a second wheel of {pin[0]}")
        seen.add(pin[0])
    return [path for _, path in files]


def target(member: str) -> str | None:
    """Where a wheel member goes, relative to site-packages; None to leave it out."""
    parts = member.split("/")
    if member.startswith("/") or "\\" in member or ":" in parts[0] or ".." in parts or "" in parts[:-1]:
        raise Tampered(f"{member}: a path outside the install folder")
    if member.endswith("/") or SKIP.search("/" + member):
        return None
    if parts[0].endswith(".data"):
        # purelib/platlib go to site-packages; scripts, headers, data are not needed.
        return "/".join(parts[2:]) if len(parts) > 2 and parts[1] in ("purelib", "platlib") else None
    return member


def extract(wheels: list[str], site: str) -> int:
    """Unpack every wheel into ``site``; the number of files written. The big
    libraries first, in threads beside the small files (zlib inflates without
    holding the GIL)."""
    jobs = []
    with ExitStack() as stack:
        for wheel in wheels:
            z = stack.enter_context(zipfile.ZipFile(wheel))
            jobs += [(z, info, os.path.join(site, *rel.split("/")))
                     for info in z.infolist() if (rel := target(info.filename)) is not None]
        for folder in sorted({os.path.dirname(path) for _, _, path in jobs}):
            os.makedirs(folder, exist_ok=True)
        jobs.sort(key=lambda job: -job[1].file_size)
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(_write, jobs))
    for _, _, path in jobs:
        if path.endswith(f".dist-info{os.sep}RECORD"):
            with open(os.path.join(os.path.dirname(path), "INSTALLER"), "w", encoding="utf-8") as f:
                f.write("rag-corpus-check\n")
    return len(jobs)


def _write(job: tuple[zipfile.ZipFile, zipfile.ZipInfo, str]) -> None:
    z, info, path = job
    with z.open(info) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    if info.external_attr >> 16 & 0o111:
        os.chmod(path, 0o755)


def site_packages(venv: str) -> str:
    return sysconfig.get_path("purelib", "venv", vars={"base": venv, "platbase": venv})


def install(args: argparse.Namespace) -> int:
    start = time.monotonic()
    with open(args.wheels, encoding="utf-8") as f:
        rows = read_wheels(f.read(), args.platform)
    if not rows:
        raise Unsupported(f"no wheel set for {args.platform} in {os.path.basename(args.wheels)}")
    check_runner(os.path.basename(url) for _, url in rows)
    with open(args.lock, encoding="utf-8") as f:
        pins = read_lock(f.read())
    os.makedirs(args.download_dir, exist_ok=True)
    wheels = verify(download(rows, args.download_dir, lambda: make_venv(args.venv)), pins)
    fetched = time.monotonic()
    files = extract(wheels, site_packages(args.venv))
    print(f"Installed {len(wheels)} wheels ({files} files): downloaded and verified in {fetched - start:.2f} s, "
          f"unpacked in {time.monotonic() - fetched:.2f} s")
    for wheel in wheels:
        print(f" + {os.path.basename(wheel)}")
    return INSTALLED


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    for option in ("--lock", "--wheels", "--platform", "--venv", "--download-dir"):
        p.add_argument(option, required=True)
    args = p.parse_args(argv)
    try:
        return install(args)
    except Tampered as exc:
        print(f"::error title=rag-corpus-check::{exc}; nothing was installed", flush=True)
        return TAMPERED
    except Unsupported as exc:
        print(f"::notice title=rag-corpus-check::{exc}; installing with pip, which takes a few seconds longer",
              flush=True)
        return UNSUPPORTED


if __name__ == "__main__":
    sys.exit(main())
