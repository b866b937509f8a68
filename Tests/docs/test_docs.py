#!/usr/bin/env python3
"""Checks of the docs that need no build: python3 Tests/docs/test_docs.py

* Hygiene: README.md, bindings/python/README.md, benchmarks/README.md and docs/*.md
  describe the product as it is: no absolute path of someone's machine (under /home,
  /root, /work or /tmp), no date, no commit id. History goes to CHANGELOG.md.
* Every fenced block of those files (docs/cli.md: its own test) has a language whose
  runner covers that file (Tests/docs/fences.py lists them), so no snippet goes
  unrun.
* benchmarks/plot.py draws a well-formed SVG from a results table, and the charts
  committed next to benchmarks/results/*.md are the ones it draws from them.
"""

from __future__ import annotations

import re
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import List, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fences import RUNNERS, ROOT, blocks, scope  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
import plot  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def hygiene_files() -> List[Path]:
    files = [ROOT / "README.md", ROOT / "bindings" / "python" / "README.md", ROOT / "benchmarks" / "README.md"]
    return files + sorted((ROOT / "docs").glob("*.md"))


#: (what it is, pattern). A path counts when it does not continue a word, a URL or a
#: variable ("$HOME/x", "http://h/tmp" and "build/tmp" are not machine paths).
PROBLEMS: List[Tuple[str, "re.Pattern[str]"]] = [
    ("an absolute path of a machine", re.compile(r"(?<![\w.~/$}:-])/(?:home|root|work|tmp)(?:/|\b)")),
    ("a commit id", re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")),
    ("a date", re.compile(r"\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b")),
    ("a date", re.compile(r"\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (?:19|20)\d\d\b")),
    ("a date", re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{1,2}, (?:19|20)\d\d\b")),
]


def problems(text: str) -> List[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in PROBLEMS:
            for match in pattern.finditer(line):
                found.append(f"line {number}: {what}: {match.group(0)!r} in {line.strip()[:100]!r}")
    return found


class Hygiene(unittest.TestCase):
    def test_the_checker_finds_what_it_should_and_only_that(self) -> None:
        for bad in ["built in /home/dev/netlayer", "NETLAYER_LIB_DIR=/work/main/.build/release",
                    "see /root/x", "RESULTS_DIR=/tmp/bench", "`/tmp`", "source `878eb26`",
                    "commit 54cd4b52af03bc8e7d630ef7d3b864365f43ef72", "on 2026-11-24",
                    "24 November 2026", "Nov 24, 2026"]:
            self.assertTrue(problems(bad), f"not flagged: {bad!r}")
        for good in ["104857600 bytes", "18446744073709551616", "`/var/run/docker.sock`", "0666 & ~umask",
                     "${TMPDIR:-/tmp}", "$HOME/.netrc", "http://127.0.0.1:8080/work/1", "build/tmp/x",
                     "sha256//base64", "deadbeef", "libcurl 7.88.1", "RFC 9110", "`0x7F`", "d=$(mktemp -d)"]:
            self.assertEqual(problems(good), [], f"flagged: {good!r}")

    def test_readmes_and_docs_carry_no_machine_paths_dates_or_commit_ids(self) -> None:
        found = []
        for path in hygiene_files():
            found += [f"{path.relative_to(ROOT)}: {p}" for p in problems(path.read_text(encoding="utf-8"))]
        self.assertEqual(found, [], "history belongs in CHANGELOG.md, machine paths nowhere:\n" + "\n".join(found))

    def test_the_changelog_follows_keep_a_changelog(self) -> None:
        text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
        self.assertTrue(text.startswith("# Changelog"))
        self.assertIn("## [Unreleased]", text)
        self.assertRegex(text, r"\n## \[0\.1\.0\]")


class EveryBlockHasARunner(unittest.TestCase):
    def test_every_fenced_block_is_run_by_some_test(self) -> None:
        unrun = []
        for path in scope():
            name = path.relative_to(ROOT).as_posix()
            for block in blocks(path):
                if block.lang not in RUNNERS:
                    unrun.append(f"{block.id}: language {block.lang or '(none)'!r} has no runner "
                                 f"(use one of {sorted(RUNNERS)}; Tests/docs/fences.py)")
                elif RUNNERS[block.lang] is not None and name not in RUNNERS[block.lang]:
                    unrun.append(f"{block.id}: the {block.lang} runner does not read {name}")
        self.assertEqual(unrun, [], "\n".join(unrun))

    def test_the_runners_read_the_files_they_are_said_to(self) -> None:
        readme_test = (ROOT / "bindings" / "python" / "tests" / "test_readme_snippets.py").read_text()
        self.assertIn('READMES = [ROOT / "bindings" / "python" / "README.md", ROOT / "README.md"]', readme_test)
        self.assertIn("README.md", (ROOT / "Tests" / "NetlayerTests" / "ReadmeSnippetTests.swift").read_text())
        cmake = (ROOT / "Tests" / "CMakeLists.txt").read_text()
        self.assertRegex(cmake, r"readme/c_snippet\.py\"\s+\"\$\{PROJECT_SOURCE_DIR\}/README\.md\"")
        self.assertIn("docs/run_blocks.py\" sh", cmake)
        self.assertIn("docs/run_blocks.py\" json", cmake)


SAMPLE = """## Sample GETs

### sequential, repeated documents

| round | raw req/s | raw µs/req | netlayer req/s | netlayer µs/req | netlayer/raw req/s | conns raw/netlayer |
|---:|---:|---:|---:|---:|---:|---:|
| 1 | 15625 | 32.3 | 14261 | 38.2 | 0.91 | 1/1 |
| **median** | **15625** | **32.3** | **14261** | **38.2** | **0.91** |  |

### sequential, distinct documents

| round | raw req/s | raw µs/req | netlayer req/s | netlayer µs/req | netlayer/raw req/s | conns raw/netlayer |
|---:|---:|---:|---:|---:|---:|---:|
| 1 | 15368 | 32.4 | 14409 | 38.7 | 0.94 | 1/1 |
| **median** | **15368** | **32.4** | **14409** | **38.7** | **0.94** |  |

### Python <clients> & co, sequential

| client | repeated req/s | repeated CPU µs/req | distinct req/s | distinct CPU µs/req | distinct ÷ repeated req/s |
|---|---:|---:|---:|---:|---:|
| netlayer | 14,524 | 40.4 | 13,734 | 43.6 | 0.92 |
| requests | 2,419 | 397.0 | 2,310 | 414.1 | 0.95 |
"""


class Plot(unittest.TestCase):
    def chart(self, text: str) -> ET.Element:
        with tempfile.TemporaryDirectory() as work:
            results = Path(work) / "sample.md"
            results.write_text(text, encoding="utf-8")
            chart = plot.write_chart(results)
            self.assertEqual(chart, Path(work) / "sample.svg")
            return ET.parse(chart).getroot()  # well-formed XML, or this raises

    def test_a_sample_results_file_gives_a_well_formed_svg_with_a_bar_per_figure(self) -> None:
        root = self.chart(SAMPLE)
        self.assertEqual(root.tag, SVG + "svg")
        texts = [t.text for t in root.iter(SVG + "text")]
        for expected in ["Sample GETs", "sequential", "Python <clients> & co, sequential", "raw", "netlayer",
                         "requests", "15,625", "38.7", "2,310", "414.1"]:
            self.assertIn(expected, texts)
        bars = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
        # sequential: 2 clients x 2 kinds x (req/s, CPU); Python: the same again.
        self.assertEqual(len(bars), 16)
        widths = {r.find(SVG + "title").text: float(r.get("width")) for r in bars}
        self.assertGreater(widths["raw, repeated: 15,625"], widths["netlayer, repeated: 14,261"])

    def test_a_file_without_a_table_of_medians_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            self.chart("## Nothing\n\nNo tables here.\n")

    def test_the_committed_charts_are_drawn_from_the_committed_results(self) -> None:
        results = ROOT / "benchmarks" / "results"
        readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
        for name in ("seq", "conc", "python"):
            title, groups = plot.parse((results / f"{name}.md").read_text(encoding="utf-8"))
            committed = (results / f"{name}.svg").read_text(encoding="utf-8")
            ET.fromstring(committed)
            self.assertEqual(committed, plot.render(title, groups),
                             f"results/{name}.svg is stale: python3 benchmarks/plot.py benchmarks/results/{name}.md")
            self.assertIn(f"(results/{name}.svg)", readme)


if __name__ == "__main__":
    unittest.main(verbosity=2)
