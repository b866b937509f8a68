#!/usr/bin/env python3
"""HTTP clients compared on a small JSON document served by nginx on loopback,
for repeated and for distinct documents in the same rounds.

    bindings/python/benchmarks/run_bench.sh          # venv + nginx + this script

or by hand, with requests, httpx, urllib3, pycurl, aiohttp and netlayer importable:

    python3 bench_http.py http://127.0.0.1:PORT/small.json [--rounds 7] [--seq 5000]
                          [--conc 20000] [--out results.md]

Two kinds of document, measured side by side:

* *repeated*: the same request every time (``GET /small.json``);
* *distinct*: a new query every request (``GET /small.json?page=i``, ``i`` counting
  up), so no request repeats an earlier one: what a client fetching pages, ids or
  searches sends. nginx answers the same body for any query.

Each client is written the way its users write it, with the JSON body decoded every
time. Sequential (one connection, keep-alive, one GET at a time): netlayer
``client.get(path, query={"page": i}).value``; ``requests.Session`` and
``httpx.Client`` ``get(url, params={"page": i}).json()``; ``urllib3.PoolManager``
``request("GET", url, fields=...)`` + ``json.loads``; ``pycurl`` (one reused handle,
``URL`` set per request, the body into a ``BytesIO``, the status checked,
``json.loads``; no other option, as in pycurl's own examples). Concurrent (256 requests in flight): netlayer
``arequest({"path": ..., "query": {"page": i}})`` (256 worker tasks), netlayer
``Client.batch`` (chunks of 256), ``aiohttp`` (TCPConnector limit 256,
``params=``), and with ``--httpx-async`` ``httpx.AsyncClient`` (limits 256; slow).
Repeated mode drops the query. Clients run interleaved, round after round, and
measure wall time and the process's CPU time (``resource.getrusage``: user + system,
every thread, so the library's own threads count for netlayer). Reported: medians over
the rounds of req/s and CPU µs per request, and medians of the per-round ratios.

Within a sequential round every (client, kind of document) pair is built and warmed
up first, then the pairs take turns in slices of ``--slice`` requests (each turn
starting one pair later) until each has made ``--seq``: this VM's speed drifts within
seconds, and a client measured in one stretch met other conditions than the client it
is compared with. ``--raw-c`` adds benchmarks/seq_raw.c (libcurl from C, one reused
handle, the body discarded) to the turns as a reference: what any libcurl-based client
can reach on this machine in the same moments.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

import aiohttp
import httpx
import pycurl
import requests
import urllib3

import netlayer

EXPECTED = {"id": 1, "title": "Dune", "year": 2021, "tags": ["sf", "novel"], "rating": 8.1}
WARMUP = 200
CONCURRENCY = 256
MODES = ("repeated", "distinct")

# ---- sequential ----------------------------------------------------------------------
# Each factory builds the client for one kind of document and returns
# (one request, given its page number i; close).

One = Callable[[int], Any]
Sequential = Callable[[str, str], Tuple[One, Callable[[], None]]]


def _split(url: str) -> Tuple[str, str]:
    """http://host:port/small.json -> ("http://host:port/", "small.json")"""
    base, path = url.rsplit("/", 1)
    return base + "/", path


def seq_netlayer(url: str, mode: str) -> Tuple[One, Callable[[], None]]:
    base, path = _split(url)
    client = netlayer.Client({"baseURL": base})
    if mode == "distinct":
        return (lambda i: client.get(path, query={"page": i}).value), client.close
    return (lambda i: client.get(path).value), client.close


def seq_requests(url: str, mode: str) -> Tuple[One, Callable[[], None]]:
    session = requests.Session()
    if mode == "distinct":
        return (lambda i: session.get(url, params={"page": i}).json()), session.close
    return (lambda i: session.get(url).json()), session.close


def seq_httpx(url: str, mode: str) -> Tuple[One, Callable[[], None]]:
    client = httpx.Client()
    if mode == "distinct":
        return (lambda i: client.get(url, params={"page": i}).json()), client.close
    return (lambda i: client.get(url).json()), client.close


def seq_urllib3(url: str, mode: str) -> Tuple[One, Callable[[], None]]:
    pool = urllib3.PoolManager()
    if mode == "distinct":
        return (lambda i: json.loads(pool.request("GET", url, fields={"page": i}).data)), pool.clear
    return (lambda i: json.loads(pool.request("GET", url).data)), pool.clear


def seq_pycurl(url: str, mode: str) -> Tuple[One, Callable[[], None]]:
    handle = pycurl.Curl()
    distinct = mode == "distinct"

    def one(i: int) -> Any:
        buffer = io.BytesIO()
        handle.setopt(pycurl.URL, f"{url}?page={i}" if distinct else url)
        handle.setopt(pycurl.WRITEDATA, buffer)
        handle.perform()
        status = handle.getinfo(pycurl.RESPONSE_CODE)
        if status != 200:
            raise RuntimeError(f"pycurl: status {status}")
        return json.loads(buffer.getvalue())

    return one, handle.close


SEQUENTIAL: Dict[str, Sequential] = {
    "netlayer": seq_netlayer,
    "requests": seq_requests,
    "httpx": seq_httpx,
    "urllib3": seq_urllib3,
    "pycurl": seq_pycurl,
}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


#: The reference row of ``--raw-c`` (not a Python client; no target).
RAW_C = "libcurl from C (reference)"

#: results[section][mode][client] = [(req/s, CPU µs per request) per round]
Samples = Dict[str, List[Tuple[float, float]]]
Results = Dict[str, Dict[str, Samples]]


def run_sequential_round(url: str, n: int, slice_size: int, raw_c: Optional[str], cpu: Optional[int],
                         modes: Tuple[str, ...]) -> Dict[Tuple[str, str], Tuple[float, float]]:
    """One round on CPU ``cpu`` (this thread and the reference's process; None: where
    the scheduler puts them). Returns (req/s, CPU µs/request) by (client, mode)."""
    if cpu is None:
        return _sequential_round(url, n, slice_size, raw_c, modes)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        return _sequential_round(url, n, slice_size, raw_c, modes)
    finally:
        os.sched_setaffinity(0, before)


#: One turn of a client: n requests -> (wall seconds, CPU seconds).
Turn = Callable[[int], Tuple[float, float]]


def _sequential_round(url: str, n: int, slice_size: int, raw_c: Optional[str],
                      modes: Tuple[str, ...]) -> Dict[Tuple[str, str], Tuple[float, float]]:
    """Every (client, mode) built and warmed up, then turns of ``slice_size`` requests
    each until every one has made ``n``."""
    clients: Dict[Tuple[str, str], Tuple[One, Callable[[], None]]] = {}
    pages: Dict[Tuple[str, str], List[int]] = {}
    try:
        turns: Dict[Tuple[str, str], Turn] = {}
        for name, factory in SEQUENTIAL.items():
            for mode in modes:
                key = (name, mode)
                one, close = factory(url, mode)
                clients[key] = (one, close)
                for i in range(WARMUP):
                    assert one(i) == EXPECTED, key
                pages[key] = [WARMUP]
                turns[key] = _python_turn(one, pages[key])
        if raw_c:
            for mode in modes:
                turns[(RAW_C, mode)] = _raw_c_turn(raw_c, url, mode)
        wall = {key: 0.0 for key in turns}
        cpu = {key: 0.0 for key in turns}
        # Each turn starts one pair later, so no pair always follows the same one
        # (the reference's process start and exit disturb the caches of whoever is next).
        order = list(turns)
        done = 0
        while done < n:
            size = min(slice_size, n - done)
            for key in order:
                seconds, cpu_seconds_used = turns[key](size)
                wall[key] += seconds
                cpu[key] += cpu_seconds_used
            order.append(order.pop(0))
            done += size
        for key, (one, _) in clients.items():
            assert one(pages[key][0]) == EXPECTED, key
    finally:
        for _, close in clients.values():
            close()
    return {key: (n / wall[key], cpu[key] / n * 1e6) for key in wall}


def _python_turn(one: One, page: List[int]) -> Turn:
    """A Python client's turn, timed by this process's clocks; ``page[0]`` is the next
    page number, carried from turn to turn."""
    def turn(n: int) -> Tuple[float, float]:
        first = page[0]
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        for i in range(first, first + n):
            one(i)
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        page[0] = first + n
        return wall, cpu
    return turn


def _raw_c_turn(program: str, url: str, mode: str) -> Turn:
    """seq_raw for n requests (after 50 to open and warm its connection), timed by its
    own clocks: process start-up is outside them."""
    def turn(n: int) -> Tuple[float, float]:
        out = subprocess.run([program, url, str(n), "50", mode], capture_output=True, text=True,
                             check=True).stdout
        fields = out.split()  # "raw N SECONDS REQ/S CPU_US"
        return float(fields[2]), float(fields[4]) * n / 1e6
    return turn


# ---- concurrent ----------------------------------------------------------------------

AsyncOne = Callable[[int], Awaitable[Any]]
Concurrent = Callable[[str, int, str], Tuple[float, float]]


async def _workers(first: int, n: int, one: AsyncOne) -> None:
    """CONCURRENCY tasks taking page numbers first .. first+n-1 from a shared counter:
    n requests, 256 in flight."""
    state = [first]
    end = first + n

    async def worker() -> None:
        while state[0] < end:
            i = state[0]
            state[0] = i + 1
            await one(i)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


def _timed_async(setup: Callable[[], Awaitable[Tuple[AsyncOne, Callable[[], Awaitable[None]]]]],
                 n: int) -> Tuple[float, float]:
    async def main() -> Tuple[float, float]:
        one, close = await setup()
        try:
            assert await one(0) == EXPECTED
            await _workers(1, WARMUP * 4, one)
            cpu0, t0 = cpu_seconds(), time.perf_counter()
            await _workers(1 + WARMUP * 4, n, one)
            wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        finally:
            await close()
        return n / wall, cpu / n * 1e6

    return asyncio.run(main())


def conc_netlayer_asyncio(url: str, n: int, mode: str) -> Tuple[float, float]:
    async def setup() -> Tuple[AsyncOne, Callable[[], Awaitable[None]]]:
        base, path = _split(url)
        client = netlayer.Client({"baseURL": base, "maxConcurrent": CONCURRENCY})
        endpoint = {"path": path}

        async def repeated(i: int) -> Any:
            return (await client.arequest(endpoint)).value

        async def distinct(i: int) -> Any:
            return (await client.arequest({"path": path, "query": {"page": i}})).value

        async def close() -> None:
            client.close()

        return (distinct if mode == "distinct" else repeated), close

    return _timed_async(setup, n)


def conc_aiohttp(url: str, n: int, mode: str) -> Tuple[float, float]:
    async def setup() -> Tuple[AsyncOne, Callable[[], Awaitable[None]]]:
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY))

        async def repeated(i: int) -> Any:
            async with session.get(url) as response:
                return await response.json()

        async def distinct(i: int) -> Any:
            async with session.get(url, params={"page": i}) as response:
                return await response.json()

        return (distinct if mode == "distinct" else repeated), session.close

    return _timed_async(setup, n)


def conc_httpx(url: str, n: int, mode: str) -> Tuple[float, float]:
    async def setup() -> Tuple[AsyncOne, Callable[[], Awaitable[None]]]:
        limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
        client = httpx.AsyncClient(limits=limits)

        async def repeated(i: int) -> Any:
            return (await client.get(url)).json()

        async def distinct(i: int) -> Any:
            return (await client.get(url, params={"page": i})).json()

        return (distinct if mode == "distinct" else repeated), client.aclose

    return _timed_async(setup, n)


def conc_netlayer_batch(url: str, n: int, mode: str) -> Tuple[float, float]:
    base, path = _split(url)
    client = netlayer.Client({"baseURL": base, "maxConcurrent": CONCURRENCY})
    fixed = [{"path": path}] * CONCURRENCY
    page = [0]

    def chunk(size: int) -> List[Dict[str, Any]]:
        if mode != "distinct":
            return fixed[:size]
        first = page[0]
        page[0] = first + size
        return [{"path": path, "query": {"page": i}} for i in range(first, first + size)]

    try:
        for _ in range(4):
            results = client.batch(chunk(CONCURRENCY))
            assert all(isinstance(r, netlayer.Response) and r.value == EXPECTED for r in results)
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        done = 0
        while done < n:
            size = min(CONCURRENCY, n - done)
            for result in client.batch(chunk(size)):
                if isinstance(result, netlayer.Error):
                    raise result
            done += size
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    finally:
        client.close()
    return n / wall, cpu / n * 1e6


#: Clients too slow at 256 in flight for N requests in the time budget: they run N / 4.
SLOW = {"httpx async"}
SLOW_DIVISOR = 4

CONCURRENT: Dict[str, Concurrent] = {
    "netlayer asyncio": conc_netlayer_asyncio,
    "netlayer batch": conc_netlayer_batch,
    "aiohttp": conc_aiohttp,
    "httpx async": conc_httpx,
}

# ---- report --------------------------------------------------------------------------

SEQ = "sequential"
CONC = f"{CONCURRENCY} in flight"

#: (section, netlayer entry, peer, target ratio of req/s on distinct documents)
TARGETS = [
    (SEQ, "netlayer", "pycurl", 1.0),
    (SEQ, "netlayer", "requests", 6.0),
    (SEQ, "netlayer", "httpx", 4.0),
    (SEQ, "netlayer", "urllib3", None),
    (SEQ, "netlayer", RAW_C, None),
    (SEQ, RAW_C, "httpx", None),
    (CONC, "netlayer asyncio", "aiohttp", 2.0),
    (CONC, "netlayer asyncio", "httpx async", None),
    (CONC, "netlayer batch", "aiohttp", None),
]


def ratio_median(samples: Samples, mine: str, peer: str) -> Optional[float]:
    if not samples.get(mine) or not samples.get(peer):
        return None
    return statistics.median(a[0] / b[0] for a, b in zip(samples[mine], samples[peer]))


def _pycurl_libcurl() -> str:
    """Which libcurl.so the pycurl extension module loads (ldd)."""
    import glob
    module = getattr(pycurl, "_pycurl", None)  # pycurl >= 7.46 is a package around _pycurl
    path = getattr(module, "__file__", None) or pycurl.__file__
    candidates = [path] if path.endswith(".so") else glob.glob(os.path.join(os.path.dirname(path), "*.so"))
    return _libcurl_of(candidates[0]) if candidates else "an unknown libcurl"


def _netlayer_libcurl() -> str:
    return _libcurl_of(netlayer.library_path)


def _libcurl_of(path: str) -> str:
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    except OSError:
        return "an unknown libcurl"
    for line in out.splitlines():
        if "libcurl" in line:
            return f"`{line.split('=>')[-1].split('(')[0].strip()}`"
    return "a libcurl linked into the module itself"


def _fmt(value: Optional[float], spec: str) -> str:
    return "–" if value is None else format(value, spec)


def target_rows(results: Results) -> List[Tuple[str, str, Optional[float], Optional[float], str, str]]:
    """(section, "mine / peer", repeated, distinct, target, result) for every ratio."""
    rows = []
    for section, mine, peer, target in TARGETS:
        by_mode = results.get(section, {})
        rep = ratio_median(by_mode.get("repeated", {}), mine, peer)
        dis = ratio_median(by_mode.get("distinct", {}), mine, peer)
        if rep is None and dis is None:
            continue
        goal = f"≥ {target:.2f}" if target else "—"
        result = ""
        if target:
            result = "missed (no run)" if dis is None else ("met" if dis >= target else "missed")
        rows.append((section, f"{mine} / {peer}", rep, dis, goal, result))
    return rows


def report(results: Results, args: argparse.Namespace, elapsed: float) -> str:
    versions = {
        "netlayer": f"{netlayer.__version__} (library {netlayer.version()}, JSON {netlayer._json.BACKEND})",
        "requests": requests.__version__, "httpx": httpx.__version__, "urllib3": urllib3.__version__,
        "pycurl": pycurl.version, "aiohttp": aiohttp.__version__,
    }
    lines = [
        "## Python HTTP clients: netlayer vs requests, httpx, urllib3, pycurl, aiohttp",
        "",
        f"Generated by `bindings/python/benchmarks/run_bench.sh` ({time.strftime('%Y-%m-%d %H:%M')}, "
        f"{elapsed:.0f} s). Server: nginx (1 worker) on loopback, `GET /small.json` "
        f"({len(json.dumps(EXPECTED))} bytes of JSON, decoded by every client). *repeated*: the same "
        f"request every time; *distinct*: a new query every request (`?page=i`: netlayer "
        f"`query={{\"page\": i}}`, requests/httpx/aiohttp `params=`, urllib3 `fields=`, pycurl the URL "
        f"formatted). {args.rounds} rounds, both kinds of document in every round (sequential: every "
        f"client and kind built and warmed up, then turns of {args.slice} requests each; concurrent: "
        f"each client's two kinds one after the other); medians over the rounds.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()}, "
        f"Python {platform.python_version()}. The client and nginx share the machine.",
        "",
        "Versions: " + "; ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        f"libcurl: pycurl was built from source against {_pycurl_libcurl()} (it reports "
        f"`{pycurl.version.split()[1]}`); libnetlayer.so uses {_netlayer_libcurl()}.",
        "",
        "CPU µs/request is the client process's user + system time (all its threads) per request.",
        "",
    ]
    if args.client_cpu is not None:
        lines += [f"Sequential rounds ran on CPU {args.client_cpu}, nginx's worker on another "
                  "(benchmarks/nginx.sh `NGINX_CPU`): always across cores. The concurrent runs are "
                  "unpinned.", ""]
    if args.raw_c:
        lines += [f"`{RAW_C}` is benchmarks/seq_raw.c taking its turns like the others: one reused "
                  "libcurl handle, the body discarded, not parsed, its own clock and CPU time (process "
                  "start-up excluded). No Python client can be faster; it shows what the targets ask "
                  "of one on this machine in these moments.", ""]

    lines += ["### Ratios against the targets", "",
              "Medians of the per-round req/s ratios. The targets are checked on distinct documents.", "",
              "| section | ratio | repeated | distinct | target (distinct) | result |",
              "|---|---|---:|---:|---:|---|"]
    for section, ratio, rep, dis, goal, result in target_rows(results):
        shown = f"**{result}**" if result.startswith("missed") else result
        lines.append(f"| {section} | {ratio} | {_fmt(rep, '.2f')} | {_fmt(dis, '.2f')} | {goal} | {shown} |")
    lines.append("")

    titles = {SEQ: f"### Sequential, one keep-alive connection (N = {args.seq} per run)",
              CONC: f"### {CONCURRENCY} in flight (N = {args.conc} per run"
                    + (f"; {args.conc // SLOW_DIVISOR} for {', '.join(sorted(SLOW))})" if args.httpx_async
                       else ")")}
    for section, by_mode in results.items():
        names = list(dict.fromkeys(name for mode in by_mode.values() for name in mode))
        if not names:
            continue
        lines += [titles[section], "",
                  "| client | repeated req/s | repeated CPU µs/req | distinct req/s | distinct CPU µs/req "
                  "| distinct ÷ repeated req/s | distinct req/s per round |",
                  "|---|---:|---:|---:|---:|---:|---|"]
        for name in names:
            rep, dis = by_mode.get("repeated", {}).get(name, []), by_mode.get("distinct", {}).get(name, [])
            med = lambda runs, i: statistics.median(r[i] for r in runs) if runs else None
            own = statistics.median(d[0] / r[0] for d, r in zip(dis, rep)) if rep and dis else None
            rates = ", ".join(f"{r:,.0f}" for r, _ in dis)
            lines.append(f"| {name} | {_fmt(med(rep, 0), ',.0f')} | {_fmt(med(rep, 1), '.1f')} | "
                         f"{_fmt(med(dis, 0), ',.0f')} | {_fmt(med(dis, 1), '.1f')} | {_fmt(own, '.2f')} | "
                         f"{rates} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="http://127.0.0.1:PORT/small.json (benchmarks/nginx.sh start DIR)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seq", type=int, default=5000, help="requests per sequential run")
    parser.add_argument("--slice", type=int, default=500, help="requests per turn of a sequential round")
    parser.add_argument("--raw-c", help="benchmarks/seq_raw.c built: add it as the sequential reference")
    parser.add_argument("--client-cpu", type=int, help="run the sequential rounds on this CPU "
                        "(the server pinned to another one: NGINX_CPU in benchmarks/nginx.sh)")
    parser.add_argument("--conc", type=int, default=20000, help="requests per concurrent run")
    parser.add_argument("--modes", default=",".join(MODES), help="kinds of document (repeated,distinct)")
    parser.add_argument("--httpx-async", action="store_true",
                        help=f"also run httpx.AsyncClient at {CONCURRENCY} in flight (about 20 s a run)")
    parser.add_argument("--out", help="write the Markdown report here")
    parser.add_argument("--targets-out", help="append one tab-separated line per target here")
    parser.add_argument("--only", help="comma-separated client names to run (default: all)")
    args = parser.parse_args()
    modes = tuple(m for m in MODES if m in args.modes.split(","))
    if not modes:
        parser.error("--modes: repeated, distinct or both")
    if not args.httpx_async:
        del CONCURRENT["httpx async"]
    if args.only:
        keep = set(args.only.split(","))
        for table in (SEQUENTIAL, CONCURRENT):
            for name in [n for n in table if n not in keep]:
                del table[name]

    started = time.monotonic()
    results: Results = {SEQ: {m: {} for m in modes}, CONC: {m: {} for m in modes}}
    for round_number in range(1, args.rounds + 1):
        order = modes if round_number % 2 else tuple(reversed(modes))
        if SEQUENTIAL:
            measured = run_sequential_round(args.url, args.seq, args.slice, args.raw_c, args.client_cpu, order)
            for (name, mode), (rate, cpu) in measured.items():
                results[SEQ][mode].setdefault(name, []).append((rate, cpu))
            for mode in order:
                for (name, m), (rate, cpu) in measured.items():
                    if m == mode:
                        print(f"round {round_number} {SEQ} {mode:8} {name:26} {rate:9,.0f} req/s "
                              f"{cpu:7.1f} µs CPU/req", flush=True)
        for name, function in CONCURRENT.items():
            n = args.conc // SLOW_DIVISOR if name in SLOW else args.conc
            for mode in order:
                rate, cpu = function(args.url, n, mode)
                results[CONC][mode].setdefault(name, []).append((rate, cpu))
                print(f"round {round_number} {CONC} {mode:8} {name:26} {rate:9,.0f} req/s "
                      f"{cpu:7.1f} µs CPU/req", flush=True)

    text = report(results, args, time.monotonic() - started)
    print()
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)
        print(f"written to {args.out}")
    if args.targets_out:
        with open(args.targets_out, "a", encoding="utf-8") as out:
            for section, ratio, rep, dis, goal, result in target_rows(results):
                if result:
                    out.write("\t".join(["python", section, ratio, "req/s", _fmt(rep, ".2f"),
                                         _fmt(dis, ".2f"), goal, result]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
