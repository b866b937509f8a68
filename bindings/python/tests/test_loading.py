"""How the library is found: NETLAYER_LIBRARY, the bundled copy, the system path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

import pytest

import netlayer
from netlayer import _loader

PROBE = "import netlayer; print(netlayer.library_path)"


def run_python(env_changes: Dict[str, Optional[str]], code: str = PROBE) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ)
    for name in ("NETLAYER_LIBRARY", "NETLAYER_NO_BUNDLED", "LD_LIBRARY_PATH"):
        env.pop(name, None)
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60, cwd=str(Path(__file__).parent))


def real_library() -> str:
    """A loadable libnetlayer.so: the one this test process loaded, as a path."""
    path = Path(netlayer.library_path)
    if not path.is_absolute():
        pytest.skip("the library was loaded by name, not by path")
    return str(path)


def test_installed_package_is_the_one_under_test() -> None:
    assert "site-packages" in netlayer.__file__ or os.environ.get("NETLAYER_TEST_SOURCE_TREE")


def test_netlayer_library_env_is_used(tmp_path: Path) -> None:
    copy = tmp_path / "libnetlayer-copy.so"
    copy.write_bytes(Path(real_library()).read_bytes())
    result = run_python({"NETLAYER_LIBRARY": str(copy)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(copy)


def test_bogus_netlayer_library_is_an_import_error_naming_it() -> None:
    result = run_python({"NETLAYER_LIBRARY": "/nonexistent/libnetlayer.so"})
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert "NETLAYER_LIBRARY: /nonexistent/libnetlayer.so (" in result.stderr
    assert "no other copy was tried" in result.stderr
    assert "cmake --build build" in result.stderr


def test_a_file_that_is_not_netlayer_is_refused(tmp_path: Path) -> None:
    libc = "libc.so.6"
    with pytest.raises(ImportError, match="not a Netlayer library"):
        _loader.load([("test", libc)])


def test_nothing_found_lists_every_place_tried() -> None:
    result = run_python({"NETLAYER_NO_BUNDLED": "1"})
    if result.returncode == 0:
        pytest.skip(f"a system copy is installed: {result.stdout.strip()}")
    assert "ImportError" in result.stderr
    assert "bundled copy" in result.stderr and "NETLAYER_NO_BUNDLED" in result.stderr
    assert "find_library" in result.stderr
    assert "libnetlayer.so.1" in result.stderr
    assert "NETLAYER_LIBRARY" in result.stderr and "cmake" in result.stderr


def test_explicit_candidates_that_fail_raise_import_error() -> None:
    with pytest.raises(ImportError) as caught:
        _loader.load([("first", "/nope/a.so"), ("second", "/nope/b.so")], ["skipped thing"])
    message = str(caught.value)
    assert "/nope/a.so" in message and "/nope/b.so" in message and "skipped thing" in message


def test_system_path_is_used_without_a_bundled_copy() -> None:
    directory = str(Path(real_library()).parent)
    if not (Path(directory) / _loader.SONAME).exists():
        pytest.skip("no libnetlayer.so.1 beside the loaded library")
    result = run_python({"NETLAYER_NO_BUNDLED": "1", "LD_LIBRARY_PATH": directory})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() != str(_loader.BUNDLED_PATH)


def test_candidates_order() -> None:
    tried, _ = _loader.candidates({"NETLAYER_LIBRARY": "/x/libnetlayer.so"})
    assert tried == [("NETLAYER_LIBRARY", "/x/libnetlayer.so")]
    tried, skipped = _loader.candidates({"NETLAYER_NO_BUNDLED": "1"})
    assert all(origin != "bundled copy" for origin, _ in tried)
    assert tried[-1][1] == _loader.SONAME
    assert any("NETLAYER_NO_BUNDLED" in note for note in skipped)
