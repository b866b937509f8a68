#!/usr/bin/env python3
"""HTTP clients compared on a small JSON document served by nginx on loopback.

    bindings/python/benchmarks/run_bench.sh          # venv + nginx + this script

or by hand, with requests, httpx, urllib3, pycurl, aiohttp and netlayer importable:

    python3 bench_http.py http://127.0.0.1:PORT/small.json [--rounds 5] [--seq 5000]
                          [--conc 20000] [--out results.md]

Sequential (one connection, keep-alive, one GET at a time, the JSON parsed every time):
netlayer ``Client.get``, ``requests.Session``, ``httpx.Client``, ``urllib3.PoolManager``,
``pycurl`` (one reused handle + ``json.loads``). Concurrent (256 requests in flight):
netlayer ``arequest`` (256 worker tasks), netlayer ``Client.batch`` (chunks of 256),
``aiohttp`` (TCPConnector limit 256), ``httpx.AsyncClient`` (limits 256). Clients run
interleaved, round after round, and measure wall time and the process's CPU time
(``resource.getrusage``: user + system, every thread, so the library's own threads
count for netlayer). Reported: medians over the rounds of req/s and CPU µs per
request, and medians of the per-round ratios.

Within a sequential round every client is built and warmed up first, then the clients
take turns in slices of ``--slice`` requests (each turn starting one client later)
until each has made ``--seq``: this VM's
speed drifts within seconds, and a client measured in one stretch (netlayer's 5000
requests take ~1 s, httpx's ~2.5 s, requests' ~5 s) met other conditions than the
client it is compared with. ``--raw-c`` adds benchmarks/seq_raw.c (libcurl from C, one
reused handle, no JSON parsing) to the turns as a reference: what any libcurl-based
client can reach on this machine in the same moments.
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

# ---- sequential ----------------------------------------------------------------------
# Each factory builds the client and returns (one request, close).

Sequential = Callable[[str], Tuple[Callable[[], Any], Callable[[], None]]]


def seq_netlayer(url: str) -> Tuple[Callable[[], Any], Callable[[], None]]:
    client = netlayer.Client({"baseURL": url.rsplit("/", 1)[0] + "/"})
    path = url.rsplit("/", 1)[1]
    return (lambda: client.get(path).value), client.close


def seq_requests(url: str) -> Tuple[Callable[[], Any], Callable[[], None]]:
    session = requests.Session()
    return (lambda: session.get(url).json()), session.close


def seq_httpx(url: str) -> Tuple[Callable[[], Any], Callable[[], None]]:
    client = httpx.Client()
    return (lambda: client.get(url).json()), client.close


def seq_urllib3(url: str) -> Tuple[Callable[[], Any], Callable[[], None]]:
    pool = urllib3.PoolManager()
    return (lambda: json.loads(pool.request("GET", url).data)), pool.clear


def seq_pycurl(url: str) -> Tuple[Callable[[], Any], Callable[[], None]]:
    handle = pycurl.Curl()
    handle.setopt(pycurl.URL, url)

    def one() -> Any:
        buffer = io.BytesIO()
        handle.setopt(pycurl.WRITEDATA, buffer)
        handle.perform()
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


def run_sequential_round(url: str, n: int, slice_size: int, raw_c: Optional[str],
                         cpu: Optional[int]) -> Dict[str, Tuple[float, float]]:
    """One round on CPU ``cpu`` (this thread and the reference's process; None: where
    the scheduler puts them). Returns (req/s, CPU µs/request) by client."""
    if cpu is None:
        return _sequential_round(url, n, slice_size, raw_c)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        return _sequential_round(url, n, slice_size, raw_c)
    finally:
        os.sched_setaffinity(0, before)


#: One turn of a client: n requests -> (wall seconds, CPU seconds).
Turn = Callable[[int], Tuple[float, float]]


def _sequential_round(url: str, n: int, slice_size: int, raw_c: Optional[str]) -> Dict[str, Tuple[float, float]]:
    """Every client built and warmed up, then turns of ``slice_size`` requests each
    until every client has made ``n``."""
    clients: Dict[str, Tuple[Callable[[], Any], Callable[[], None]]] = {}
    try:
        turns: Dict[str, Turn] = {}
        for name, factory in SEQUENTIAL.items():
            clients[name] = factory(url)
            for _ in range(WARMUP):
                assert clients[name][0]() == EXPECTED
            turns[name] = _python_turn(clients[name][0])
        if raw_c:
            turns[RAW_C] = _raw_c_turn(raw_c, url)
        wall = {name: 0.0 for name in turns}
        cpu = {name: 0.0 for name in turns}
        # Each turn starts one client later, so no client always follows the same one
        # (the reference's process start and exit disturb the caches of whoever is next).
        order = list(turns)
        done = 0
        while done < n:
            size = min(slice_size, n - done)
            for name in order:
                seconds, cpu_seconds_used = turns[name](size)
                wall[name] += seconds
                cpu[name] += cpu_seconds_used
            order.append(order.pop(0))
            done += size
        for one, _ in clients.values():
            assert one() == EXPECTED
    finally:
        for _, close in clients.values():
            close()
    return {name: (n / wall[name], cpu[name] / n * 1e6) for name in wall}


def _python_turn(one: Callable[[], Any]) -> Turn:
    """A Python client's turn, timed by this process's clocks."""
    def turn(n: int) -> Tuple[float, float]:
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        for _ in range(n):
            one()
        return time.perf_counter() - t0, cpu_seconds() - cpu0
    return turn


def _raw_c_turn(program: str, url: str) -> Turn:
    """seq_raw for n requests (after 50 to open and warm its connection), timed by its
    own clocks: process start-up is outside them."""
    def turn(n: int) -> Tuple[float, float]:
        out = subprocess.run([program, url, str(n), "50"], capture_output=True, text=True, check=True).stdout
        fields = out.split()  # "raw N SECONDS REQ/S CPU_US"
        return float(fields[2]), float(fields[4]) * n / 1e6
    return turn


# ---- concurrent ----------------------------------------------------------------------

Concurrent = Callable[[str, int], Tuple[float, float]]


async def _workers(n: int, one: Callable[[], Awaitable[Any]]) -> None:
    """CONCURRENCY tasks taking requests from a shared counter: n requests, 256 in flight."""
    left = [n]

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await one()

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


def _timed_async(setup: Callable[[], Awaitable[Tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[None]]]]],
                 n: int) -> Tuple[float, float]:
    async def main() -> Tuple[float, float]:
        one, close = await setup()
        try:
            assert await one() == EXPECTED
            await _workers(WARMUP * 4, one)
            cpu0, t0 = cpu_seconds(), time.perf_counter()
            await _workers(n, one)
            wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        finally:
            await close()
        return n / wall, cpu / n * 1e6

    return asyncio.run(main())


def conc_netlayer_asyncio(url: str, n: int) -> Tuple[float, float]:
    async def setup() -> Tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[None]]]:
        client = netlayer.Client({"baseURL": url.rsplit("/", 1)[0] + "/", "maxConcurrent": CONCURRENCY})
        endpoint = {"path": url.rsplit("/", 1)[1]}

        async def one() -> Any:
            return (await client.arequest(endpoint)).value

        async def close() -> None:
            client.close()

        return one, close

    return _timed_async(setup, n)


def conc_aiohttp(url: str, n: int) -> Tuple[float, float]:
    async def setup() -> Tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[None]]]:
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY))

        async def one() -> Any:
            async with session.get(url) as response:
                return await response.json()

        return one, session.close

    return _timed_async(setup, n)


def conc_httpx(url: str, n: int) -> Tuple[float, float]:
    async def setup() -> Tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[None]]]:
        limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
        client = httpx.AsyncClient(limits=limits)

        async def one() -> Any:
            return (await client.get(url)).json()

        return one, client.aclose

    return _timed_async(setup, n)


def conc_netlayer_batch(url: str, n: int) -> Tuple[float, float]:
    client = netlayer.Client({"baseURL": url.rsplit("/", 1)[0] + "/", "maxConcurrent": CONCURRENCY})
    chunk = [{"path": url.rsplit("/", 1)[1]}] * CONCURRENCY
    try:
        for _ in range(4):
            results = client.batch(chunk)
            assert all(isinstance(r, netlayer.Response) and r.value == EXPECTED for r in results)
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        done = 0
        while done < n:
            size = min(CONCURRENCY, n - done)
            for result in client.batch(chunk[:size]):
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

#: (mode, netlayer entry, peer, target ratio of req/s)
TARGETS = [
    ("sequential", "netlayer", "requests", 5.0),
    ("sequential", "netlayer", "httpx", 3.0),
    ("sequential", "netlayer", "urllib3", None),
    ("sequential", "netlayer", "pycurl", 0.9),
    ("sequential", "netlayer", RAW_C, None),
    ("sequential", RAW_C, "httpx", None),
    ("256 in flight", "netlayer asyncio", "aiohttp", 2.0),
    ("256 in flight", "netlayer asyncio", "httpx async", None),
    ("256 in flight", "netlayer batch", "aiohttp", None),
]

Samples = Dict[str, List[Tuple[float, float]]]


def ratio_median(samples: Samples, mine: str, peer: str) -> float:
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


def report(results: Dict[str, Samples], args: argparse.Namespace, elapsed: float) -> str:
    versions = {
        "netlayer": f"{netlayer.__version__} (library {netlayer.version()}, JSON {netlayer._json.BACKEND})",
        "requests": requests.__version__, "httpx": httpx.__version__, "urllib3": urllib3.__version__,
        "pycurl": pycurl.version, "aiohttp": aiohttp.__version__,
    }
    lines = [
        "# Python HTTP clients: netlayer vs requests, httpx, urllib3, pycurl, aiohttp",
        "",
        f"Generated by `bindings/python/benchmarks/run_bench.sh` ({time.strftime('%Y-%m-%d %H:%M')}, "
        f"{elapsed:.0f} s). Server: nginx (1 worker) on loopback, `GET /small.json` "
        f"({len(json.dumps(EXPECTED))} bytes of JSON, parsed by every client). "
        f"{args.rounds} rounds, clients interleaved within each round (sequential: built and warmed "
        f"up, then turns of {args.slice} requests each); medians over the rounds.",
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
                  "(benchmarks/nginx.sh `NGINX_CPU`): always across cores. Left to the scheduler, the "
                  "two sometimes share a CPU, where the libcurl clients run 2-3× faster and "
                  "the clients busy in Python hardly faster, and the ratios follow placement.", ""]
    if args.raw_c:
        lines += [f"`{RAW_C}` is benchmarks/seq_raw.c taking its turns like the others: one reused "
                  "libcurl handle, the body kept but not parsed, its own clock and CPU time (process "
                  "start-up excluded). No Python client can be faster; it shows what the targets ask "
                  "of one on this machine in these moments.", ""]
    titles = {"sequential": f"## Sequential, one keep-alive connection (N = {args.seq} per run)",
              "256 in flight": f"## {CONCURRENCY} in flight (N = {args.conc} per run; "
                               f"{args.conc // SLOW_DIVISOR} for {', '.join(sorted(SLOW))})"}
    for mode, samples in results.items():
        lines += [titles[mode], "", "| client | req/s (median) | CPU µs/request (median) | req/s per round |",
                  "|---|---:|---:|---|"]
        for name, runs in samples.items():
            rates = ", ".join(f"{r:,.0f}" for r, _ in runs)
            lines.append(f"| {name} | {statistics.median(r for r, _ in runs):,.0f} | "
                         f"{statistics.median(c for _, c in runs):.1f} | {rates} |")
        lines.append("")
    lines += ["## Ratios (median of per-round req/s ratios) against the targets", "",
              "| mode | ratio | median | target | met |", "|---|---|---:|---:|---|"]
    for mode, mine, peer, target in TARGETS:
        samples = results.get(mode, {})
        if mine not in samples or peer not in samples:
            continue
        value = ratio_median(samples, mine, peer)
        goal = f"≥ {target}×" if target else "—"
        met = ("yes" if value >= target else "**no**") if target else ""
        lines.append(f"| {mode} | {mine} / {peer} | {value:.2f}× | {goal} | {met} |")
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="http://127.0.0.1:PORT/small.json (benchmarks/nginx.sh start DIR)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seq", type=int, default=5000, help="requests per sequential run")
    parser.add_argument("--slice", type=int, default=500, help="requests per turn of a sequential round")
    parser.add_argument("--raw-c", help="benchmarks/seq_raw.c built: add it as the sequential reference")
    parser.add_argument("--client-cpu", type=int, help="run the sequential rounds on this CPU "
                        "(the server pinned to another one: NGINX_CPU in benchmarks/nginx.sh)")
    parser.add_argument("--conc", type=int, default=20000, help="requests per concurrent run")
    parser.add_argument("--out", help="write the Markdown report here")
    parser.add_argument("--only", help="comma-separated client names to run (default: all)")
    args = parser.parse_args()
    if args.only:
        keep = set(args.only.split(","))
        for table in (SEQUENTIAL, CONCURRENT):
            for name in [n for n in table if n not in keep]:
                del table[name]

    started = time.monotonic()
    results: Dict[str, Samples] = {"sequential": {k: [] for k in SEQUENTIAL},
                                   "256 in flight": {k: [] for k in CONCURRENT}}
    if args.raw_c:
        results["sequential"][RAW_C] = []
    for round_number in range(1, args.rounds + 1):
        if SEQUENTIAL:
            for name, (rate, cpu) in run_sequential_round(args.url, args.seq, args.slice, args.raw_c,
                                                          args.client_cpu).items():
                results["sequential"][name].append((rate, cpu))
                print(f"round {round_number} sequential {name:18} {rate:9,.0f} req/s {cpu:7.1f} µs CPU/req", flush=True)
        for name, function in CONCURRENT.items():
            n = args.conc // SLOW_DIVISOR if name in SLOW else args.conc
            rate, cpu = function(args.url, n)
            results["256 in flight"][name].append((rate, cpu))
            print(f"round {round_number} 256 in flight {name:18} {rate:9,.0f} req/s {cpu:7.1f} µs CPU/req", flush=True)

    text = report(results, args, time.monotonic() - started)
    print()
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
