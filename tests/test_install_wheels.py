"""check/install_wheels.py, the action's installer, and requirements/runtime-wheels.txt.

The act tests (tests/test_action_act.py) run it for real against PyPI; these
check its rules offline: the wheel list agrees with runtime.lock, a file whose
sha-256 the lock does not pin installs nothing, members go where they must
(and never outside site-packages), and a runner it cannot serve goes to pip.
"""

from __future__ import annotations

import hashlib
import re
import stat
import zipfile
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.utils import canonicalize_name, parse_wheel_filename

import install_wheels as iw
from conftest import ROOT

LOCK = ROOT / "requirements" / "runtime.lock"
WHEELS = ROOT / "requirements" / "runtime-wheels.txt"
PLATFORM_TAGS = {
    ("Linux", "X64"): r"manylinux\w*_x86_64",
    ("Linux", "ARM64"): r"manylinux\w*_aarch64",
    ("macOS", "X64"): r"macosx_\d+_\d+_x86_64",
    ("macOS", "ARM64"): r"macosx_\d+_\d+_arm64",
    ("Windows", "X64"): r"win_amd64",
    ("Windows", "ARM64"): r"win_arm64",
}


def pins_for_313() -> dict[str, str]:
    env = {"python_full_version": "3.13.0", "python_version": "3.13"}
    out = {}
    for m in re.finditer(r"(?m)^([A-Za-z0-9][\w.-]*)==([^\s;\\]+)(?:\s*;\s*([^\\\n]+?))?\s*\\?$",
                         LOCK.read_text(encoding="utf-8")):
        if m.group(3) is None or Marker(m.group(3)).evaluate(env):
            out[canonicalize_name(m.group(1))] = m.group(2)
    return out


@pytest.mark.parametrize("platform", sorted(PLATFORM_TAGS), ids=" ".join)
def test_each_runner_platform_gets_one_locked_wheel_per_package(platform):
    """For every hosted runner platform: exactly the lock's packages for Python
    3.13, each wheel one that platform's CPython 3.13 can install, its sha-256
    one the lock pins for that version, its URL on PyPI's file host."""
    lock = iw.read_lock(LOCK.read_text(encoding="utf-8"))
    rows = iw.read_wheels(WHEELS.read_text(encoding="utf-8"), " ".join(platform))
    found = {}
    for sha, url in rows:
        assert re.fullmatch(r"https://files\.pythonhosted\.org/packages/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}/"
                            r"[\w.+-]+\.whl", url), url
        name, version, _, tags = parse_wheel_filename(url.rsplit("/", 1)[1])
        assert sha in lock[(name, str(version))], (name, version, sha)
        assert any(t.interpreter in ("cp313", "py3") and t.abi in ("cp313", "none", "abi3") for t in tags), url
        assert all(t.platform == "any" for t in tags) or any(
            re.fullmatch(PLATFORM_TAGS[platform], t.platform) for t in tags), url
        assert name not in found, f"two wheels of {name}"
        found[name] = str(version)
    assert found == pins_for_313()


def test_the_lock_is_read_with_every_hash_of_each_pin():
    lock = iw.read_lock(LOCK.read_text(encoding="utf-8"))
    text = LOCK.read_text(encoding="utf-8")
    assert sum(len(h) for h in lock.values()) == len(re.findall(r"--hash=sha256:", text))
    assert ("numpy", "2.5.5") in lock and ("numpy", "2.4.6") in lock
    assert all(lock.values())


# --- a small fake wheel set --------------------------------------------------------------


def make_wheel(folder: Path, name: str = "demo", version: str = "1.0",
               members: dict[str, bytes] | None = None) -> Path:
    path = folder / f"{name}-{version}-py3-none-any.whl"
    members = members if members is not None else {
        f"{name}/__init__.py": b"VALUE = 1\n",
        f"{name}/core.py": b"",
        f"{name}/tests/test_core.py": b"assert True\n",
        f"{name}/tests/data/x.txt": b"",
        f"{name}/__init__.pyi": b"VALUE: int\n",
        f"{name}-{version}.data/purelib/{name}_extra.py": b"",
        f"{name}-{version}.data/scripts/{name}-cli": b"#!python\n",
        f"{name}-{version}.dist-info/METADATA": f"Name: {name}\nVersion: {version}\n".encode(),
        f"{name}-{version}.dist-info/RECORD": b"",
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for member, data in members.items():
            info = zipfile.ZipInfo(member)
            info.external_attr = (0o755 if member.endswith(".so") else 0o644) << 16
            z.writestr(info, data)
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lock_for(*wheels: Path, extra_hash: str = "") -> dict[tuple[str, str], set[str]]:
    text = ""
    for w in wheels:
        name, version = w.name.split("-")[:2]
        text += f"{name}=={version} \\\n    --hash=sha256:{sha(w)}{' ' + extra_hash if extra_hash else ''}\n"
    return iw.read_lock(text)


def test_a_locked_wheel_verifies(tmp_path):
    wheel = make_wheel(tmp_path)
    assert iw.verify([(sha(wheel), str(wheel))], lock_for(wheel)) == [str(wheel)]


def test_a_file_the_lock_does_not_pin_is_refused(tmp_path):
    """The listed hash and the file agree, but the lock pins another file."""
    wheel = make_wheel(tmp_path)
    pins = iw.read_lock(f"demo==1.0 \\\n    --hash=sha256:{'0' * 64}\n")
    with pytest.raises(iw.Tampered, match="failed its sha-256 check"):
        iw.verify([(sha(wheel), str(wheel))], pins)


def test_a_file_that_is_not_the_listed_one_is_refused(tmp_path):
    """The lock pins this file too, but runtime-wheels.txt names another."""
    wheel = make_wheel(tmp_path)
    with pytest.raises(iw.Tampered, match="failed its sha-256 check"):
        iw.verify([("1" * 64, str(wheel))], lock_for(wheel))


def test_a_version_the_lock_does_not_pin_is_refused(tmp_path):
    wheel = make_wheel(tmp_path, version="2.0")
    pins = iw.read_lock(f"demo==1.0 \\\n    --hash=sha256:{sha(wheel)}\n")
    with pytest.raises(iw.Tampered):
        iw.verify([(sha(wheel), str(wheel))], pins)


def test_members_go_to_site_packages_without_tests_stubs_or_scripts(tmp_path):
    wheel = make_wheel(tmp_path)
    site = tmp_path / "site"
    n = iw.extract([str(wheel)], str(site))
    files = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    assert files == ["demo-1.0.dist-info/INSTALLER", "demo-1.0.dist-info/METADATA", "demo-1.0.dist-info/RECORD",
                     "demo/__init__.py", "demo/core.py", "demo_extra.py"]
    assert n == 5  # INSTALLER is ours
    assert (site / "demo-1.0.dist-info" / "INSTALLER").read_text() == "rag-corpus-check\n"


def test_an_executable_member_stays_executable(tmp_path):
    wheel = make_wheel(tmp_path, members={"demo/_lib.so": b"\x7fELF", "demo-1.0.dist-info/RECORD": b""})
    site = tmp_path / "site"
    iw.extract([str(wheel)], str(site))
    assert (site / "demo" / "_lib.so").stat().st_mode & stat.S_IXUSR


@pytest.mark.parametrize("member", ["../evil.py", "/etc/evil", "demo/../../evil.py", "C:/evil.py",
                                    "demo\\..\\evil.py", "demo//evil.py"])
def test_a_member_outside_site_packages_is_refused(tmp_path, member):
    wheel = make_wheel(tmp_path, members={member: b"x", "demo/ok.py": b""})
    with pytest.raises(iw.Tampered, match="outside the install folder"):
        iw.extract([str(wheel)], str(tmp_path / "site"))
    assert not (tmp_path / "evil.py").exists()


@pytest.mark.parametrize(("filename", "need"), [
    ("numpy-2.5.5-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", (2, 27)),
    ("pyyaml-6.0.3-cp313-cp313-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl", (2, 17)),
    ("x-1-cp313-cp313-manylinux1_x86_64.whl", (2, 5)),
    ("attrs-26.1.0-py3-none-any.whl", None),
])
def test_the_glibc_a_wheel_needs(filename, need):
    assert iw.glibc_needed(filename) == need


def test_a_runner_with_an_older_glibc_than_a_wheel_needs_goes_to_pip(monkeypatch):
    monkeypatch.setattr(iw.os, "confstr", lambda name: "glibc 2.17", raising=False)
    iw.check_runner(["x-1-cp313-cp313-manylinux2014_x86_64.whl"])
    with pytest.raises(iw.Unsupported, match="needs glibc 2.27"):
        iw.check_runner(["x-1-cp313-cp313-manylinux_2_27_x86_64.whl"])
    monkeypatch.setattr(iw.os, "confstr", lambda name: None, raising=False)  # musl
    with pytest.raises(iw.Unsupported):
        iw.check_runner(["x-1-cp313-cp313-manylinux2014_x86_64.whl"])


# --- the whole run ---------------------------------------------------------------------


def run_main(tmp_path: Path, wheels_text: str, lock_text: str, platform: str = "Linux X64") -> int:
    (tmp_path / "wheels.txt").write_text(wheels_text, encoding="utf-8")
    (tmp_path / "runtime.lock").write_text(lock_text, encoding="utf-8")
    return iw.main(["--lock", str(tmp_path / "runtime.lock"), "--wheels", str(tmp_path / "wheels.txt"),
                    "--platform", platform, "--venv", str(tmp_path / "venv"),
                    "--download-dir", str(tmp_path / "downloads")])


def fake_download(source: Path):
    """``download`` without the network: the wheels come from ``source``."""
    def download(rows, folder, meanwhile):
        meanwhile()
        return [(listed, str(source / url.rsplit("/", 1)[1])) for listed, url in rows]
    return download


def test_a_platform_without_a_wheel_set_goes_to_pip(tmp_path, capsys):
    assert run_main(tmp_path, "# nothing for this platform\n", "") == iw.UNSUPPORTED
    assert "::notice title=rag-corpus-check::no wheel set for Linux X64" in capsys.readouterr().out


def test_a_download_that_fails_goes_to_pip(tmp_path, capsys):
    """(A closed port on loopback: curl fails at once, nothing leaves the machine.)"""
    if iw.shutil.which("curl") is None:
        pytest.skip("no curl here")
    row = f"Linux X64 {'0' * 64} https://127.0.0.1:9/demo-1.0-py3-none-any.whl\n"
    assert run_main(tmp_path, row, "") == iw.UNSUPPORTED
    assert "could not be downloaded" in capsys.readouterr().out


def test_one_tampered_wheel_installs_nothing(tmp_path, capsys, monkeypatch):
    """Every hash is checked before anything is unpacked."""
    source = tmp_path / "source"
    source.mkdir()
    good = make_wheel(source, "good")
    bad = make_wheel(source, "bad")
    lock = f"good==1.0 \\\n    --hash=sha256:{sha(good)}\nbad==1.0 \\\n    --hash=sha256:{'0' * 64}\n"
    rows = "".join(f"Linux X64 {sha(w)} https://files.pythonhosted.org/p/{w.name}\n" for w in (good, bad))
    monkeypatch.setattr(iw, "download", fake_download(source))
    assert run_main(tmp_path, rows, lock) == iw.TAMPERED
    out = capsys.readouterr().out
    assert "::error title=rag-corpus-check::bad-1.0-py3-none-any.whl failed its sha-256 check" in out
    assert "nothing was installed" in out
    assert list(Path(iw.site_packages(str(tmp_path / "venv"))).iterdir()) == []


def test_a_locked_set_installs(tmp_path, capsys, monkeypatch):
    source = tmp_path / "source"
    source.mkdir()
    wheel = make_wheel(source)
    rows = f"Linux X64 {sha(wheel)} https://files.pythonhosted.org/p/{wheel.name}\n"
    monkeypatch.setattr(iw, "download", fake_download(source))
    assert run_main(tmp_path, rows, f"demo==1.0 \\\n    --hash=sha256:{sha(wheel)}\n") == iw.INSTALLED
    assert re.search(r"^Installed 1 wheels \(5 files\)", capsys.readouterr().out, re.M)
    assert (Path(iw.site_packages(str(tmp_path / "venv"))) / "demo" / "__init__.py").is_file()
    assert (tmp_path / "venv" / "pyvenv.cfg").is_file()


def test_a_url_that_is_not_https_is_refused(tmp_path, capsys):
    row = f"Linux X64 {'0' * 64} http://files.pythonhosted.org/p/demo-1.0-py3-none-any.whl\n"
    assert run_main(tmp_path, row, "") == iw.TAMPERED
    assert "not an https URL" in capsys.readouterr().out
