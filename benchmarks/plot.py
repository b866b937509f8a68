#!/usr/bin/env python3
"""plot.py RESULTS.md [CHART.svg] — an SVG chart of a benchmark results file.

Reads the tables a suite writes (results/seq.md and results/conc.md from report.py,
results/python.md from bindings/python/benchmarks/bench_http.py) and draws, for each
group of runs (sequential; K=64; 256 in flight; ...), the median throughput (req/s)
and the client CPU per request (µs) of every client, repeated and distinct documents
side by side. Writes CHART.svg (default: RESULTS.md with .svg) next to the table.
Standard library only; the output depends on nothing but the input, so a chart can be
regenerated from a committed results file and compared.

Two table shapes are understood:

* per-round tables under a heading ``### GROUP, KIND documents`` with columns
  ``NAME req/s`` and ``NAME µs/req`` and a ``**median**`` row (report.py); the client
  names come from the "Cost of distinct documents" table (``| group | client | ...``)
  when it lists as many clients for the group;
* per-client tables under a heading ``### GROUP`` with columns ``client``,
  ``KIND req/s`` and ``KIND CPU µs/req`` (bench_http.py).
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple
from xml.sax.saxutils import escape

KINDS = ("repeated", "distinct")
MEASURES = ("rps", "cpu")
COLORS = {"repeated": "#9ecae1", "distinct": "#2171b5"}
PANEL_TITLES = {"rps": "throughput, req/s (higher is better)",
                "cpu": "client CPU per request, µs (lower is better)"}


class Group:
    """One group of runs: its clients, in table order, and their medians."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.clients: List[str] = []
        self.values: Dict[Tuple[str, str, str], float] = {}  # (client, kind, measure)

    def add(self, client: str, kind: str, measure: str, value: float) -> None:
        if client not in self.clients:
            self.clients.append(client)
        self.values[(client, kind, measure)] = value


class Table(NamedTuple):
    heading: str
    header: List[str]
    rows: List[List[str]]


def cells(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(text: str) -> Iterator[Table]:
    """The Markdown tables of ``text``, each with the ### heading above it."""
    heading = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            heading = line[4:].strip()
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1].strip()):
            header, rows = cells(line), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            yield Table(heading, header, rows)
            continue
        i += 1


def number(cell: str) -> float:
    return float(cell.replace("*", "").replace(",", "").strip())


def parse(text: str) -> Tuple[str, List[Group]]:
    """The title (the ## heading) and the groups of a results file."""
    title_match = re.search(r"^## (.+)$", text, flags=re.M)
    title = title_match.group(1).strip() if title_match else "Benchmark results"
    groups: Dict[str, Group] = {}
    names: Dict[str, List[str]] = {}  # group -> client names of the "cost" table
    for table in tables(text):
        if table.header[:2] == ["group", "client"]:
            for row in table.rows:
                names.setdefault(row[0], []).append(row[1])
            continue
        per_round = re.match(r"^(.+), (repeated|distinct) documents$", table.heading)
        if per_round and table.header and table.header[0] == "round":
            group = groups.setdefault(per_round.group(1), Group(per_round.group(1)))
            kind = per_round.group(2)
            median = next((r for r in table.rows if r[0].replace("*", "") == "median"), None)
            if median is None:
                continue
            for column, cell in zip(table.header, median):
                m = re.match(r"^(\w+) (req/s|µs/req)$", column)
                if m and cell.replace("*", "").strip():
                    group.add(m.group(1), kind, "rps" if m.group(2) == "req/s" else "cpu", number(cell))
        elif table.header and table.header[0] == "client":
            group = groups.setdefault(table.heading, Group(table.heading))
            for row in table.rows:
                for column, cell in zip(table.header, row):
                    m = re.match(r"^(repeated|distinct) (req/s|CPU µs/req)$", column)
                    if m and cell.strip() not in ("", "–", "-"):  # "–": a kind not measured
                        group.add(row[0], m.group(1), "rps" if m.group(2) == "req/s" else "cpu", number(cell))
    for name, group in groups.items():
        if group.clients and len(names.get(name, [])) == len(group.clients):
            renames = dict(zip(group.clients, names[name]))
            group.clients = [renames[c] for c in group.clients]
            group.values = {(renames[c], k, m): v for (c, k, m), v in group.values.items()}
    return title, [g for g in groups.values() if g.clients]


def nice_step(maximum: float, ticks: int = 4) -> float:
    raw = maximum / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * magnitude >= raw:
            return factor * magnitude
    return 10 * magnitude


def label(value: float, measure: str) -> str:
    return f"{value:,.0f}" if measure == "rps" else f"{value:.1f}"


def tick_label(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


def render(title: str, groups: List[Group]) -> str:
    """The SVG document (a string) for ``groups``."""
    width, label_w, bar_area, panel_w = 960, 180, 240, 480
    bar_h, bar_gap, client_gap = 9, 1, 8
    row_h = 2 * bar_h + bar_gap + client_gap
    out: List[str] = []
    y = 74
    scales = {}
    for measure in MEASURES:
        top = max([v for g in groups for (c, k, m), v in g.values.items() if m == measure] or [1.0])
        step = nice_step(top)
        scales[measure] = (step, step * math.ceil(top / step))
    for group in groups:
        out.append(f'<text x="10" y="{y}" class="group">{escape(group.title)}</text>')
        y += 22
        for p, measure in enumerate(MEASURES):
            x0 = p * panel_w + label_w
            step, full = scales[measure]
            out.append(f'<text x="{x0}" y="{y}" class="panel">{escape(PANEL_TITLES[measure])}</text>')
            bottom = y + 8 + len(group.clients) * row_h
            tick = 0.0
            while tick <= full + 1e-9:
                tx = x0 + bar_area * tick / full
                out.append(f'<line x1="{tx:.1f}" y1="{y + 6}" x2="{tx:.1f}" y2="{bottom}" class="grid"/>')
                out.append(f'<text x="{tx:.1f}" y="{bottom + 12}" class="tick">{tick_label(tick)}</text>')
                tick += step
            for i, client in enumerate(group.clients):
                cy = y + 10 + i * row_h
                out.append(f'<text x="{x0 - 6}" y="{cy + bar_h + 4}" class="client">{escape(client)}</text>')
                for j, kind in enumerate(KINDS):
                    value = group.values.get((client, kind, measure))
                    if value is None:
                        continue
                    by = cy + j * (bar_h + bar_gap)
                    w = bar_area * value / full
                    out.append(f'<rect x="{x0}" y="{by}" width="{w:.1f}" height="{bar_h}" fill="{COLORS[kind]}">'
                               f'<title>{escape(client)}, {kind}: {label(value, measure)}</title></rect>')
                    out.append(f'<text x="{x0 + w + 4:.1f}" y="{by + bar_h - 1}" class="value">'
                               f'{label(value, measure)}</text>')
        y += 8 + len(group.clients) * row_h + 34
    height = y
    legend = []
    for j, kind in enumerate(KINDS):
        lx = 10 + j * 170
        legend.append(f'<rect x="{lx}" y="30" width="12" height="12" fill="{COLORS[kind]}"/>')
        legend.append(f'<text x="{lx + 18}" y="40" class="legend">{kind} documents</text>')
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
        f"<title>{escape(title)}</title>",
        "<style>.title{font-size:16px;font-weight:bold}.group{font-size:14px;font-weight:bold}"
        ".panel{font-size:12px;fill:#333}.client{font-size:11px;text-anchor:end}"
        ".value,.tick{font-size:10px;fill:#444}.tick{text-anchor:middle}.legend{font-size:12px}"
        ".grid{stroke:#ddd;stroke-width:1}</style>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="20" class="title">{escape(title)}</text>',
    ]
    return "\n".join(head + legend + out + ["</svg>"]) + "\n"


def write_chart(results: Path, chart: Optional[Path] = None) -> Path:
    """Writes the chart of ``results`` (default: the same name with .svg) and returns its path."""
    chart = chart or results.with_suffix(".svg")
    title, groups = parse(results.read_text(encoding="utf-8"))
    if not groups:
        raise ValueError(f"{results}: no table of medians per client found")
    chart.write_text(render(title, groups), encoding="utf-8")
    return chart


def main(argv: List[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    chart = write_chart(Path(argv[1]), Path(argv[2]) if len(argv) == 3 else None)
    print(f"plot: wrote {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
