"""The fenced code blocks of the project's Markdown, for the tests that run them.

Project rule: every snippet in a README or in docs/ runs in the test command. This
module finds the blocks; the runners are:

* ```python: bindings/python/tests/test_readme_snippets.py (README.md and
  bindings/python/README.md), with the package installed;
* ```c: Tests/readme/c_snippet.py (README.md);
* ```swift: Tests/NetlayerTests/ReadmeSnippetTests.swift (README.md);
* ```sh and ```json: Tests/docs/run_blocks.py (every file in SCOPE).

docs/cli.md has a test of its own (Tests/cli) and is left out here.

A block that cannot run starts with the line ``# not run: <reason>`` (python and sh);
the runners report it as skipped with that reason, and a marker without a reason fails.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Set

ROOT = Path(__file__).resolve().parents[2]

#: The base URL the snippets are written against; the runners put the test server's.
SNIPPET_BASE_URL = "http://127.0.0.1:8080/"

#: First line of a block that is deliberately not run, followed by the reason.
NOT_RUN_MARKER = "# not run:"

#: Markdown files whose blocks must all run (docs/cli.md: its own test, see above).
OWN_TESTS = {"docs/cli.md"}


def scope(root: Path = ROOT) -> List[Path]:
    """README.md, bindings/python/README.md, benchmarks/README.md and docs/*.md."""
    files = [root / "README.md", root / "bindings" / "python" / "README.md",
             root / "benchmarks" / "README.md"]
    files += sorted((root / "docs").glob("*.md"))
    return [f for f in files if f.relative_to(root).as_posix() not in OWN_TESTS]


#: Which files each language's runner covers (None: every file in scope).
RUNNERS: Dict[str, Optional[Set[str]]] = {
    "python": {"README.md", "bindings/python/README.md"},
    "c": {"README.md"},
    "swift": {"README.md"},
    "sh": None,
    "json": None,
}

_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)(.*)$")


class Block(NamedTuple):
    path: Path
    number: int  # 1-based among the file's blocks of this language
    line: int  # 1-based line of the opening fence
    lang: str
    code: str

    @property
    def id(self) -> str:
        try:
            name = self.path.relative_to(ROOT).as_posix()
        except ValueError:
            name = str(self.path)
        return f"{name}#{self.lang}{self.number}@L{self.line}"

    def not_run_reason(self) -> Optional[str]:
        """The reason of a ``# not run:`` first line, "" when it gives none, else None."""
        first = self.code.lstrip("\n").split("\n", 1)[0].strip()
        if not first.startswith(NOT_RUN_MARKER):
            return None
        return first[len(NOT_RUN_MARKER):].strip()


def blocks(path: Path, lang: Optional[str] = None) -> List[Block]:
    """The fenced blocks of ``path`` (only ``lang``'s when given), in file order."""
    found: List[Block] = []
    counts: Dict[str, int] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, block_lang, start = m.group(1), m.group(2).lower(), i
        indent = len(lines[i]) - len(lines[i].lstrip(" "))
        body: List[str] = []
        i += 1
        while i < len(lines) and not re.match(r"^ {0,3}" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        if i >= len(lines):
            raise ValueError(f"{path}:{start + 1}: unterminated fenced block")
        counts[block_lang] = counts.get(block_lang, 0) + 1
        if lang is None or block_lang == lang:
            found.append(Block(path, counts[block_lang], start + 1, block_lang, "\n".join(body) + "\n"))
        i += 1
    return found
