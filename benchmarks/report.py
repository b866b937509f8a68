#!/usr/bin/env python3
"""report.py — tables for run_seq.sh and run_conc.sh: per-round figures, medians,
ratios against raw libcurl side by side for repeated and distinct documents, and
the targets they are checked against.

    report.py seq|conc RESULTS_TSV OUT_MD [--mem MEM_TSV] [--failures TXT]
              [--targets-out TSV] [key=value ...]

RESULTS_TSV rows (tab-separated), one per client run:
    ok    GROUP MODE CLIENT ROUND REQ_PER_S CPU_US_PER_REQ CONNS
    fail  GROUP MODE CLIENT ROUND EXIT_CODE
GROUP is "sequential" or "K=<n>"; MODE is "repeated" or "distinct"; CLIENT "raw" is
the baseline every other client of the same group, mode and round is divided by.
MEM_TSV (conc only): ok NAME COUNT ROUND BEFORE DURING PER_REQ HELD | fail ...
key=value pairs fill the description (n, warmup, rounds, nginx, curl, netlayer,
cores, when, placement, hold_s, ceiling.<GROUP>=<req/s>, ceiling_cmd.<GROUP>=..., where
GROUP is written without its '=': sequential, K64). Prints the tables, writes Markdown to OUT_MD and,
with --targets-out, appends one line per target:
    SUITE GROUP COMPARISON MEASURE REPEATED DISTINCT TARGET RESULT
Exit status 0; the caller decides what a failed run means.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Dict, List, Optional, Tuple

MODES = ("repeated", "distinct")

# Per suite: the clients in column order (name in the TSV, label), and the targets,
# checked on distinct documents: (group, client, measure) -> (op, value).
SUITES = {
    "seq": {
        "title": "Sequential GETs, one connection",
        "clients": [("raw", "raw libcurl"), ("netlayer", "nl_request"),
                    ("borrowed", "nl_request_borrowed")],
        "targets": {("sequential", "netlayer", "req/s"): (">=", 0.9),
                    ("sequential", "netlayer", "CPU/req"): ("<=", 1.2)},
    },
    "conc": {
        "title": "Concurrent GETs, K in flight",
        "clients": [("raw", "raw libcurl multi"), ("batch", "nl_request_batch"),
                    ("async", "nl_request_async")],
        "targets": {**{(f"K={k}", c, "req/s"): (">=", 0.95) for k in (64, 256) for c in ("batch", "async")},
                    **{(f"K={k}", c, "CPU/req"): ("<=", 1.2) for k in (64, 256) for c in ("batch", "async")}},
    },
}

Run = Tuple[float, float, int]  # req/s, CPU µs per request, connections


def describe(suite: str, m: Dict[str, str]) -> str:
    """The paragraph under the title: what ran, on what."""
    common = (f"{m.get('nginx', 'nginx')} `return 200` (70-byte JSON, any query string), 1 worker "
              f"({m.get('cores', '?')} cores, loopback); {m.get('curl', 'libcurl')}; "
              f"Netlayer {m.get('netlayer', 'unknown')}. Generated {m.get('when', '')} by "
              f"`benchmarks/{'run_seq.sh' if suite == 'seq' else 'run_conc.sh'}`.")
    docs = ("*repeated*: the same document every request (`{\"path\":\"small.json\"}`, the raw "
            "client's same URL); *distinct*: a new query every request (`\"query\":{\"page\":i}`, "
            "the raw client's `?page=i`), so no request repeats an earlier one.")
    if suite == "seq":
        return (f"{m.get('rounds', '?')} rounds; each round runs, for both kinds of document (their "
                f"order alternating by round), raw, `nl_request`, `nl_request_borrowed`: N = {m.get('n')} "
                f"requests per run after {m.get('warmup')} warm-up requests on the same connection. "
                f"{m.get('placement', '')} {docs} *raw*: one reused easy handle, `CURLOPT_URL` set per "
                f"request, a write callback that discards the body, the status checked; it sends the "
                f"request Netlayer sends by default (`Accept-Encoding`, User-Agent). CPU = client "
                f"user+sys (getrusage, all threads) per request. *conns* = connections nginx accepted "
                f"during the run, warm-up included (1 = reused throughout). {common}")
    return (f"{m.get('rounds', '?')} rounds; each round runs, for each K and both kinds of document "
            f"(their order alternating by round), raw, batch, async: N = {m.get('n')} requests per run "
            f"after {m.get('warmup')} warm-up requests. {docs} *raw* = libcurl multi "
            f"(`curl_multi_socket_action` + epoll), K easy handles re-added as they finish, "
            f"`CURLOPT_URL` set per transfer, the body discarded, the status checked; *batch* = "
            f"`nl_request_batch` of K documents at a time; *async* = K `nl_request_async` kept in flight "
            f"(the callback starts the next). CPU = client user+sys (getrusage, all threads) per "
            f"request. *conns* = connections nginx accepted during the run, warm-up included (K = "
            f"reused throughout). Unpinned: Netlayer's loop and delivery threads, the caller and nginx share "
            f"both CPUs. {common}")


def fmt(v: Optional[float], digits: int) -> str:
    return "FAIL" if v is None else f"{v:.{digits}f}"


def median(values: List[Optional[float]]) -> Optional[float]:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def group_key(g: str) -> Tuple[int, str]:
    return (int(g[2:]) if g.startswith("K=") else -1, g)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("suite", choices=sorted(SUITES))
    ap.add_argument("results")
    ap.add_argument("out")
    ap.add_argument("--mem")
    ap.add_argument("--failures")
    ap.add_argument("--targets-out")
    ap.add_argument("meta", nargs="*")
    args = ap.parse_intermixed_args()
    suite = SUITES[args.suite]
    meta = dict(kv.split("=", 1) for kv in args.meta)
    clients = suite["clients"]
    labels = dict(clients)

    # runs[group][mode][round][client] = Run or None (failed)
    runs: Dict[str, Dict[str, Dict[int, Dict[str, Optional[Run]]]]] = {}
    for line in open(args.results, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if len(f) < 6:
            continue
        slot = runs.setdefault(f[1], {}).setdefault(f[2], {}).setdefault(int(f[4]), {})
        slot[f[3]] = (float(f[5]), float(f[6]), int(f[7])) if f[0] == "ok" else None

    out: List[str] = []  # terminal
    md: List[str] = []   # Markdown
    md += [f"## {suite['title']}", "", describe(args.suite, meta), ""]

    # Medians of per-round ratios: ratio[(group, client, measure)][mode]
    ratio: Dict[Tuple[str, str, str], Dict[str, Optional[float]]] = {}
    # Cost of distinctness: distinct / repeated per client, same round.
    own: Dict[Tuple[str, str, str], Optional[float]] = {}

    for group in sorted(runs, key=group_key):
        gkey = group.replace("=", "")  # K=64 -> K64 in key=value arguments
        ceiling = meta.get(f"ceiling.{gkey}")
        for mode in MODES:
            rounds = runs[group].get(mode, {})
            if not rounds:
                continue
            others = [c for c, _ in clients[1:]]
            header = ["round"]
            for c, _ in clients:
                header += [f"{c} req/s", f"{c} µs/req"]
            for c in others:
                header += [f"{c}/raw req/s", f"{c}/raw CPU"]
            header.append("conns " + "/".join(c for c, _ in clients))
            rows: List[List[str]] = []
            per: Dict[str, List[Optional[float]]] = {h: [] for h in header}
            for rnd in sorted(rounds):
                r = rounds[rnd]
                raw = r.get("raw")
                row = [str(rnd)]
                for c, _ in clients:
                    x = r.get(c)
                    row += [fmt(x and x[0], 0), fmt(x and x[1], 1)]
                    per[f"{c} req/s"].append(x and x[0])
                    per[f"{c} µs/req"].append(x and x[1])
                for c in others:
                    x = r.get(c)
                    q = (x[0] / raw[0], x[1] / raw[1]) if x and raw else None
                    row += [fmt(q and q[0], 2), fmt(q and q[1], 2)]
                    per[f"{c}/raw req/s"].append(q and q[0])
                    per[f"{c}/raw CPU"].append(q and q[1])
                row.append("/".join(str(r[c][2]) if r.get(c) else "-" for c, _ in clients))
                rows.append(row)
            med_row = ["median"]
            for h in header[1:-1]:
                digits = 0 if h.endswith("req/s") and "/raw" not in h else (1 if "µs" in h else 2)
                med_row.append(fmt(median(per[h]), digits))
            med_row.append("")
            for c in others:
                ratio.setdefault((group, c, "req/s"), {})[mode] = median(per[f"{c}/raw req/s"])
                ratio.setdefault((group, c, "CPU/req"), {})[mode] = median(per[f"{c}/raw CPU"])

            title = f"{group}, {mode} documents"
            allrows = [header] + rows + [med_row]
            widths = [max(len(x[i]) for x in allrows) for i in range(len(header))]
            line = lambda x: "  ".join(c.rjust(w) for c, w in zip(x, widths))
            out += [title, line(header), "  ".join("-" * w for w in widths)]
            out += [line(x) for x in rows]
            out += ["  ".join("-" * w for w in widths), line(med_row), ""]
            md += [f"### {title}", "",
                   "| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
            md += ["| " + " | ".join(x) + " |" for x in rows]
            md.append("| " + " | ".join(f"**{c}**" if c else "" for c in med_row) + " |")
            md.append("")
            if ceiling and mode == MODES[0]:
                raw_med = median(per["raw req/s"])
                share = f" (median raw = {raw_med / float(ceiling):.0%} of it)" if raw_med else ""
                md += [f"Ceiling, `{meta.get(f'ceiling_cmd.{gkey}', 'wrk')}` (one URL): "
                       f"**{float(ceiling):.0f} req/s**{share}.", ""]
        # distinct / repeated per client, per round
        for c, _ in clients:
            for measure, idx in (("req/s", 0), ("CPU/req", 1)):
                vals = []
                for rnd, rr in runs[group].get("distinct", {}).items():
                    d = rr.get(c)
                    p = runs[group].get("repeated", {}).get(rnd, {}).get(c)
                    vals.append(d[idx] / p[idx] if d and p else None)
                own[(group, c, measure)] = median(vals)

    # Summary: ratios side by side, targets on distinct documents.
    targets = suite["targets"]
    summary_header = ["group", "comparison", "measure", "repeated", "distinct", "target (distinct)", "result"]
    summary: List[List[str]] = []
    tsv: List[str] = []
    order = {c: i for i, (c, _) in enumerate(clients)}
    for (group, c, measure), by_mode in sorted(
            ratio.items(), key=lambda kv: (group_key(kv[0][0]), order[kv[0][1]], kv[0][2] != "req/s")):
        rep, dis = by_mode.get("repeated"), by_mode.get("distinct")
        target = targets.get((group, c, measure))
        if target:
            op, value = target
            goal = f"{'≥' if op == '>=' else '≤'} {value:.2f}"
            if dis is None:
                result = "missed (no run)"
            else:
                result = "met" if (dis >= value if op == ">=" else dis <= value) else "missed"
        else:
            goal, result = "—", ""
        comparison = f"{labels[c]} / {labels['raw']}"
        summary.append([group, comparison, measure, fmt(rep, 2), fmt(dis, 2), goal, result])
        if target:
            tsv.append("\t".join([args.suite, group, comparison, measure, fmt(rep, 2), fmt(dis, 2), goal, result]))
    widths = [max(len(x[i]) for x in [summary_header] + summary) for i in range(len(summary_header))]
    line = lambda x: "  ".join(c.ljust(w) for c, w in zip(x, widths))
    out += ["ratios (median of per-round ratios; for CPU lower is better)", line(summary_header)]
    out += [line(x) for x in summary]
    out.append("")
    md_summary = ["### Ratios against the targets", "",
                  "Medians of the per-round ratios (each a client's run divided by raw libcurl's run of "
                  "the same round and mode). req/s: higher is better; CPU/req: lower is better. The "
                  "targets are checked on distinct documents.", "",
                  "| " + " | ".join(summary_header) + " |", "|---|---|---|---:|---:|---:|---|"]
    md_summary += ["| " + " | ".join(x[:-1] + [f"**{x[-1]}**" if x[-1].startswith("missed") else x[-1]]) + " |"
                   for x in summary]
    md_summary += ["", "Cost of distinct documents to each client (median of per-round distinct ÷ repeated; "
                   "1.00 = no cost):", "",
                   "| group | client | req/s | CPU/req |", "|---|---|---:|---:|"]
    for group in sorted(runs, key=group_key):
        for c, label in clients:
            md_summary.append(f"| {group} | {label} | {fmt(own.get((group, c, 'req/s')), 2)} | "
                              f"{fmt(own.get((group, c, 'CPU/req')), 2)} |")
    md_summary.append("")
    # The summary goes first, after the description.
    cut = 4
    md[cut:cut] = md_summary

    # Memory (conc only).
    if args.mem:
        mem: Dict[Tuple[str, int], List[Tuple[int, int, float]]] = {}
        for raw_line in open(args.mem, encoding="utf-8"):
            f = raw_line.rstrip("\n").split("\t")
            if f[0] == "ok":
                mem.setdefault((f[1], int(f[2])), []).append((int(f[4]), int(f[5]), float(f[6])))
        if mem:
            hold = meta.get("hold_s", "?")
            md += ["### Memory per in-flight request", "",
                   f"A process per run: VmRSS read, then *held* requests started at once against "
                   f"`slow_server.py`, which holds each {hold} s; once the server reports all held, VmRSS "
                   f"is sampled for ~300 ms (largest kept). Netlayer: `nl_request_async`, `maxConcurrent` "
                   f"= held; raw: fresh easy handles in one multi. Target: under 64 KiB per request.", "",
                   "| client | held | runs | VmRSS before KiB | VmRSS during KiB | KiB per request (median) | min–max | under 64 KiB |",
                   "|---|---:|---:|---:|---:|---:|---:|---|"]
            out.append("memory per in-flight request (KiB, median)")
            for (name, count) in sorted(mem, key=lambda x: (x[1], x[0] != "raw")):
                v = mem[(name, count)]
                pers = [x[2] for x in v]
                per = statistics.median(pers)
                ok = "" if name == "raw" else ("met" if per < 64 else "**missed**")
                md.append(f"| {name} | {count} | {len(v)} | {statistics.median(x[0] for x in v):.0f} | "
                          f"{statistics.median(x[1] for x in v):.0f} | {per:.1f} | "
                          f"{min(pers):.1f}–{max(pers):.1f} | {ok} |")
                out.append(f"  {name:8} {count:5} held: {per:.1f}")
            md.append("")
            out.append("")

    if args.failures:
        text = open(args.failures, encoding="utf-8").read().rstrip()
        if text:
            out += ["FAILED RUNS (left out of the medians):", text, ""]
            md += ["### Failed runs (left out of the medians)", "", "```", text, "```", ""]

    print("\n".join(out))
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(md).rstrip() + "\n")
    print(f"wrote {args.out}")
    if args.targets_out:
        with open(args.targets_out, "a", encoding="utf-8") as fh:
            for t in tsv:
                fh.write(t + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
