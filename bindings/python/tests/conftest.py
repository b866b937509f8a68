"""Fixtures: the loopback test server (once per session) and a client per test.

This conftest never touches sys.path: the tests exercise the *installed* package
(scripts/test-python installs it into a venv and runs pytest with
--import-mode=importlib from outside the source tree).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import netlayer

SERVER = Path(os.environ.get(
    "NETLAYER_TEST_SERVER",
    Path(__file__).resolve().parents[3] / "Tests" / "server" / "server.py"))


@pytest.fixture(scope="session")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL ("http://127.0.0.1:PORT/") of a server.py started for this session."""
    port_file = tmp_path_factory.mktemp("server") / "port"
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", "0", "--port-file", str(port_file),
         "--exit-on-stdin-eof"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while not port_file.exists():
            if process.poll() is not None:
                pytest.fail(f"server.py exited with {process.returncode}")
            if time.monotonic() > deadline:
                pytest.fail("server.py did not write its port within 15 s")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{int(port_file.read_text())}/"
    finally:
        assert process.stdin is not None
        process.stdin.close()  # --exit-on-stdin-eof: the server stops
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def client(base_url: str) -> Iterator[netlayer.Client]:
    """A client on the test server, closed after the test."""
    with netlayer.Client({"baseURL": base_url}, timeout=10) as c:
        yield c


#: ``run_script(code, timeout=...)``: runs ``code`` in a new Python process
#: (``NETLAYER_TEST_URL`` holds the server's base URL), so that a crash or a hang fails
#: the test instead of killing or hanging the run.
RunScript = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def run_script(base_url: str) -> RunScript:
    def run(code: str, timeout: float = 60) -> "subprocess.CompletedProcess[str]":
        env = dict(os.environ, NETLAYER_TEST_URL=base_url, PYTHONFAULTHANDLER="1")
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                              text=True, timeout=timeout, cwd=str(Path(__file__).parent))
    return run


#: ``script_result(code, timeout=...)``: ``run_script``, which must exit 0, and the JSON
#: value the script printed on its last line.
ScriptResult = Callable[..., Any]


@pytest.fixture
def script_result(run_script: RunScript) -> ScriptResult:
    def result(code: str, timeout: float = 60) -> Any:
        process = run_script(code, timeout=timeout)
        assert process.returncode == 0, (process.returncode, process.stdout, process.stderr)
        return json.loads(process.stdout.strip().splitlines()[-1])
    return result


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: builds or installs the package (test_packaging.py)")
