"""Packaging: the manylinux wheel of scripts/wheel installs into a fresh virtual
environment and works there without the build tree or any environment variable; an
editable install finds the source tree's build; a build without a library says so on
the terminal, at install time. These build and install the package (pip, auditwheel):
marked slow, run by scripts/test-python (about a minute in all)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import termios
import zipfile
from pathlib import Path
from typing import Dict, List

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
LICENSE_LINE = "Copyright (c) the Netlayer authors"

REQUEST = ("import sys, netlayer\n"
           "with netlayer.Client(sys.argv[1]) as client:\n"
           "    print(client.get('json').json()['title'], netlayer.library_path)\n")


def _clean_env() -> Dict[str, str]:
    """The environment for pip: this one (proxies, pip's own settings) without netlayer's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("NETLAYER_")}


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, env=_clean_env(),
                   capture_output=True, timeout=120)
    return where / "bin" / "python"


def _elf_sections(path: Path) -> List[str]:
    """The section names of a 64-bit little-endian ELF file."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i: int) -> tuple:  # (name offset, file offset, size)
        base = shoff + i * shentsize
        return (struct.unpack_from("<I", data, base)[0],) + struct.unpack_from("<QQ", data, base + 0x18)
    _, strings_at, _ = header(shstrndx)
    names = []
    for i in range(shnum):
        name_at = strings_at + header(i)[0]
        names.append(data[name_at:data.index(b"\0", name_at)].decode())
    return names


def test_wheel_installs_into_a_fresh_venv(base_url: str, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run([str(ROOT / "scripts" / "wheel"), str(dist)], capture_output=True, text=True,
                           env=_clean_env(), timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    wheels = list(dist.glob("netlayer-*.whl"))
    assert len(wheels) == 1 and re.fullmatch(r"netlayer-[0-9.]+-py3-none-manylinux_\d+_\d+_x86_64\.whl",
                                             wheels[0].name), wheels
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = wheel.namelist()
        license_file = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
        assert LICENSE_LINE in wheel.read(license_file).decode()
        assert any(n.startswith("netlayer.libs/libcurl") for n in names), names  # auditwheel grafted it
        assert any(n.startswith("netlayer.libs/libre2") for n in names), names  # and RE2, for schema patterns
        wheel.extract("netlayer/libnetlayer.so.1", tmp_path / "unpacked")
    sections = _elf_sections(tmp_path / "unpacked" / "netlayer" / "libnetlayer.so.1")
    assert ".text" in sections and not any(s.startswith(".debug") for s in sections), sections
    sdist, = dist.glob("netlayer-*.tar.gz")
    with tarfile.open(sdist) as archive:
        license_member = next(m for m in archive.getmembers() if m.name.endswith("/LICENSE"))
        assert license_member.isfile()  # a file, not the repository's symbolic link
        assert not any(m.name.endswith(".so.1") for m in archive.getmembers())

    # A fresh venv far from the build tree; installing and running with no environment.
    python = _venv(tmp_path / "fresh")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-cache-dir",
                    str(wheels[0])], check=True, env={}, capture_output=True, timeout=120)
    run = subprocess.run([str(python), "-c", REQUEST, base_url], env={}, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    title, library = run.stdout.split()
    assert title == "Dune" and library.startswith(str(tmp_path / "fresh")), run.stdout


def test_editable_install_finds_the_source_tree_build(base_url: str, tmp_path: Path) -> None:
    python = _venv(tmp_path / "editable")
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e",
                              str(ROOT / "bindings" / "python")],
                             env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    run = subprocess.run([str(python), "-c", REQUEST, base_url], env={}, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    title, library = run.stdout.split()
    assert title == "Dune" and library == str(ROOT / "build" / "lib" / "libnetlayer.so.1"), run.stdout
    assert not (ROOT / "bindings" / "python" / "netlayer" / "libnetlayer.so.1").exists()


def test_install_without_a_library_says_so_on_the_terminal(tmp_path: Path) -> None:
    source = tmp_path / "src" / "netlayer"  # no build/lib two levels up
    shutil.copytree(ROOT / "bindings" / "python", source, symlinks=False,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so*"))
    shutil.copy(ROOT / "VERSION", tmp_path / "VERSION")  # where the package's build reads its version
    main, child = pty.openpty()

    def own_terminal() -> None:  # the pty becomes the controlling terminal, as for a user
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path / "out"), str(source)],
        stdin=child, stdout=child, stderr=child, env=_clean_env(), start_new_session=True,
        preexec_fn=own_terminal)
    os.close(child)
    output = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: every writer is gone
            break
        if not chunk:
            break
        output += chunk
    os.close(main)
    assert process.wait(timeout=300) == 0, output.decode(errors="replace")
    text = output.decode(errors="replace")
    assert "netlayer: WARNING: no Netlayer library to bundle" in text, text
    assert "NETLAYER_LIBRARY" in text
    assert list((tmp_path / "out").glob("netlayer-*-py3-none-any.whl"))
