"""Every ```python block of bindings/python/README.md and of the top-level README.md runs.

Project rule: every snippet in a README or docs file runs in the test command. Each
block is extracted in file order and run on its own, in a fresh Python process (a
crash or a hang fails only its test, and no block depends on another), with a
timeout, and must exit with status 0. Test ids name the README and the block number
(1-based, in file order) with the line its fence opens on.

What the test changes in a block before running it, and nothing else:

* ``SNIPPET_BASE_URL`` ("http://127.0.0.1:8080/", the demo server the READMEs show) is
  replaced by the base URL of the session's loopback test server
  (``Tests/server/server.py``, which serves the endpoints the snippets use: /movies,
  /movies/<id>, /echo, /sse, /lines, /bytes/<n>, /delay/<ms>, ...). Any other mention
  of 127.0.0.1:8080 left after that fails the test, so a snippet cannot silently reach
  for a server that is not there.

What the process gets:

* ``NETLAYER_LIBRARY`` is set to ``netlayer.library_path``, the file the installed
  package loaded, so the raw-ctypes block (which loads
  ``os.environ.get("NETLAYER_LIBRARY", "libnetlayer.so.1")``, as
  examples/ctypes_example.py does) finds the same library without a system install;
  for the blocks that use the package it names the file they would load anyway.
* The working directory is a temporary directory of the test's own.

A block that cannot run opts out with a first line ``# not run: <reason>``; the test
then reports it as skipped with that reason (a marker without a reason fails).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, NamedTuple

import pytest

import netlayer

ROOT = Path(__file__).resolve().parents[3]
READMES = [ROOT / "bindings" / "python" / "README.md", ROOT / "README.md"]

#: The base URL the snippets are written against; replaced by the test server's.
SNIPPET_BASE_URL = "http://127.0.0.1:8080/"

#: First line of a block that is deliberately not run, followed by the reason.
NOT_RUN_MARKER = "# not run:"

#: Seconds a block may take (the slowest snippet needs about one).
TIMEOUT = 60

FENCE_OPEN = re.compile(r"^```python\s*$")
FENCE_CLOSE = re.compile(r"^```\s*$")


class Block(NamedTuple):
    readme: Path
    number: int  # 1-based among the README's python blocks
    line: int  # 1-based line of the opening fence
    code: str

    @property
    def id(self) -> str:
        return f"{self.readme.relative_to(ROOT)}#{self.number}@L{self.line}"


def python_blocks(readme: Path) -> List[Block]:
    """The ```python blocks of ``readme``, in file order."""
    blocks: List[Block] = []
    lines = readme.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if FENCE_OPEN.match(lines[i]):
            start = i
            i += 1
            body: List[str] = []
            while i < len(lines) and not FENCE_CLOSE.match(lines[i]):
                body.append(lines[i])
                i += 1
            assert i < len(lines), f"{readme}:{start + 1}: unterminated ```python block"
            blocks.append(Block(readme, len(blocks) + 1, start + 1, "\n".join(body) + "\n"))
        i += 1
    return blocks


BLOCKS = [block for readme in READMES for block in python_blocks(readme)]


def test_each_readme_has_python_blocks() -> None:
    for readme in READMES:
        assert python_blocks(readme), f"no ```python block found in {readme}"


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_readme_block_runs(block: Block, base_url: str, tmp_path: Path) -> None:
    first_line = block.code.lstrip("\n").split("\n", 1)[0].strip()
    if first_line.startswith(NOT_RUN_MARKER):
        reason = first_line[len(NOT_RUN_MARKER):].strip()
        assert reason, f"{block.id}: '{NOT_RUN_MARKER}' needs a reason"
        pytest.skip(f"{block.id} not run: {reason}")

    code = block.code.replace(SNIPPET_BASE_URL, base_url)
    assert "127.0.0.1:8080" not in code, \
        f"{block.id}: use exactly {SNIPPET_BASE_URL!r} for the demo server, so the test can point it at its own"

    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    env = dict(os.environ, NETLAYER_LIBRARY=str(netlayer.library_path), PYTHONFAULTHANDLER="1")
    try:
        result = subprocess.run([sys.executable, str(script)], env=env, cwd=str(tmp_path),
                                capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{block.id} did not finish within {TIMEOUT} s\n"
                    f"--- stdout\n{e.stdout or ''}\n--- stderr\n{e.stderr or ''}\n--- code\n{code}")
    assert result.returncode == 0, (
        f"{block.id} exited with {result.returncode}\n--- stdout\n{result.stdout}\n"
        f"--- stderr\n{result.stderr}\n--- code\n{code}")
