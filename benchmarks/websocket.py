#!/usr/bin/env python3
"""WebSockets: Netlayer's Python package against the `websockets` package's own client,
on the same local echo server (Tests/server/ws_servers.py echo, the `websockets` server
the tests use). See benchmarks/README.md, "WebSockets".

    python3 benchmarks/websocket.py                 # 5 rounds, 20000 messages each, 1000 idle
    python3 benchmarks/websocket.py --smoke         # a few seconds: does everything run?

Two measures:

* echo: each client sends COUNT text messages of SIZE bytes to /echo, at most WINDOW
  unanswered at a time, and reads every echo; messages per second (wall clock) and the
  client process's CPU time (user + system, every thread: resource.getrusage) per
  message, and the server's CPU per message over the same run. Each run is a process
  of its own; the clients take turns within a round, each round starting one later.
  `netlayer-c` is the C ABI itself (benchmarks/ws_echo.c, built here with cc).
* idle: a process opens IDLE connections to /silent (a handler that only waits) and
  keeps them open; resident memory (VmRSS) after, less before (after one connection
  was opened and closed, so that libraries and threads are loaded), divided by IDLE.
  `netlayer-c` is the library alone (ws_echo.c), `netlayer` the Python package.

Clients: Netlayer's package (`Client.websocket`, `Client.awebsocket`) and websockets'
(`websockets.sync.client.connect`, `websockets.asyncio.client.connect`). The package
is imported from bindings/python; the library is NETLAYER_LIB_DIR's (build/lib by
default), for the C client and the package alike.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(os.path.abspath(__file__)).parents[1]  # not resolved: a checkout of symbolic links stays one
SERVER = ROOT / "Tests" / "server" / "ws_servers.py"
ECHO_CLIENTS = ["netlayer-c", "netlayer-sync", "websockets-sync", "netlayer-asyncio", "websockets-asyncio"]
LIB_DIR = Path(os.environ.get("NETLAYER_LIB_DIR", ROOT / "build" / "lib"))
IDLE_CLIENTS = ["netlayer-c", "netlayer", "websockets-asyncio", "websockets-sync"]


# ---- in a client process ----------------------------------------------------------------

def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def netlayer_client(base: str) -> Any:
    sys.path.insert(0, str(ROOT / "bindings" / "python"))
    import netlayer
    return netlayer.Client(base, timeout=30)


def echo_run(name: str, base: str, count: int, size: int, window: int, compression: bool) -> Dict[str, float]:
    """One client's run; the figures of the measured part (after 200 warm-up messages)."""
    payload = "x" * size
    ws_url = base.replace("http://", "ws://") + "echo"
    result: Dict[str, float] = {}

    def measure(send: Any, recv: Any) -> None:
        for _ in range(200):
            send(payload)
            recv()
        cpu, wall = cpu_seconds(), time.perf_counter()
        sent = received = 0
        while received < count:
            while sent < count and sent - received < window:
                send(payload)
                sent += 1
            if recv() != payload:
                raise RuntimeError("an echo that is not the message sent")
            received += 1
        result["seconds"] = time.perf_counter() - wall
        result["cpu"] = cpu_seconds() - cpu

    async def ameasure(send: Any, recv: Any) -> None:
        for _ in range(200):
            await send(payload)
            await recv()
        cpu, wall = cpu_seconds(), time.perf_counter()
        sent = received = 0
        while received < count:
            while sent < count and sent - received < window:
                await send(payload)
                sent += 1
            if await recv() != payload:
                raise RuntimeError("an echo that is not the message sent")
            received += 1
        result["seconds"] = time.perf_counter() - wall
        result["cpu"] = cpu_seconds() - cpu

    if name == "netlayer-c":
        proc = subprocess.run([os.environ["NETLAYER_WS_ECHO"], base, str(count), str(size), str(window),
                               "1" if compression else "0"], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"ws_echo failed: {proc.stderr}")
        figures: Dict[str, float] = json.loads(proc.stdout)
        return figures
    if name == "netlayer-sync":
        client = netlayer_client(base)
        # A receive queue larger than the window: the run never pauses reading.
        with client.websocket("echo", compression=compression, max_queue=4 * window) as ws:
            measure(ws.send, ws.recv)
        client.close()
    elif name == "websockets-sync":
        from websockets.sync.client import connect
        with connect(ws_url, compression="deflate" if compression else None, max_size=None) as ws:
            measure(ws.send, ws.recv)
    elif name == "netlayer-asyncio":
        client = netlayer_client(base)

        async def main() -> None:
            async with client.awebsocket("echo", compression=compression, max_queue=4 * window) as ws:
                await ameasure(ws.send, ws.recv)
        asyncio.run(main())
        client.close()
    elif name == "websockets-asyncio":
        from websockets.asyncio.client import connect as aconnect

        async def amain() -> None:
            async with aconnect(ws_url, compression="deflate" if compression else None, max_size=None) as ws:
                await ameasure(ws.send, ws.recv)
        asyncio.run(amain())
    else:
        raise SystemExit(f"unknown client {name}")
    return result


def idle_run(name: str, base: str, count: int) -> Dict[str, float]:
    """Opens `count` idle connections (each client's defaults) and reports the RSS they add."""
    ws_url = base.replace("http://", "ws://") + "silent"
    held: List[Any] = []
    if name == "netlayer-c":
        proc = subprocess.run([os.environ["NETLAYER_WS_ECHO"], base, "idle", str(count)], capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"ws_echo idle failed: {proc.stderr}")
        c_figures: Dict[str, float] = json.loads(proc.stdout)
        return c_figures
    if name == "netlayer":
        client = netlayer_client(base)
        client.websocket("silent").close()
        gc.collect()
        before = rss_bytes()
        for _ in range(count):
            held.append(client.websocket("silent"))
        time.sleep(0.5)
        gc.collect()
        after = rss_bytes()
    elif name == "websockets-sync":
        from websockets.sync.client import connect
        connect(ws_url).close()
        gc.collect()
        before = rss_bytes()
        for _ in range(count):
            held.append(connect(ws_url))
        time.sleep(0.5)
        gc.collect()
        after = rss_bytes()
    elif name == "websockets-asyncio":
        from websockets.asyncio.client import connect as aconnect

        async def main() -> Dict[str, int]:
            await (await aconnect(ws_url)).close()
            gc.collect()
            start = rss_bytes()
            for _ in range(count):
                held.append(await aconnect(ws_url))
            await asyncio.sleep(0.5)
            gc.collect()
            return {"before": start, "after": rss_bytes()}
        figures = _run_keeping(main)
        before, after = figures["before"], figures["after"]
    else:
        raise SystemExit(f"unknown client {name}")
    return {"before": before, "after": after, "open": len(held)}


def _run_keeping(main: Any) -> Dict[str, int]:
    """Runs the coroutine on a loop that is left open: closing it would close the
    connections before the process reports (and ends)."""
    loop = asyncio.new_event_loop()
    return loop.run_until_complete(main())


# ---- the driver -----------------------------------------------------------------------------

def raise_open_files(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard) if hard != resource.RLIM_INFINITY else needed,
                                                    hard))


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid` (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(work: Path, connections: int) -> "tuple[subprocess.Popen[bytes], str]":
    port_file = work / "port"
    server = subprocess.Popen([sys.executable, str(SERVER), "echo", "--port", "0", "--port-file", str(port_file),
                               "--exit-on-stdin-eof"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              preexec_fn=lambda: raise_open_files(connections + 200))
    deadline = time.monotonic() + 15
    while not port_file.exists():
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the echo server did not start")
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{int(port_file.read_text())}/"


def child(*args: str, connections: int = 0) -> Dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, timeout=900,
                          preexec_fn=(lambda: raise_open_files(connections + 200)) if connections else None)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stderr}")
    figures: Dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def build_c_client(work: Path) -> Path:
    """Compiles ws_echo.c against the library of LIB_DIR."""
    program = work / "ws_echo"
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-std=c99", "-D_POSIX_C_SOURCE=200809L",
                    f"-I{ROOT / 'include'}", str(ROOT / "benchmarks" / "ws_echo.c"), f"-L{LIB_DIR}", "-lnetlayer",
                    f"-Wl,-rpath,{LIB_DIR.resolve()}", "-lpthread", "-o", str(program)], check=True)
    return program


def drive(options: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="netlayer-wsbench-"))
    os.environ.setdefault("NETLAYER_LIBRARY", str(LIB_DIR / "libnetlayer.so.1"))  # the package's, in every run
    if not options.only or "netlayer-c" in options.only:
        os.environ["NETLAYER_WS_ECHO"] = str(build_c_client(work))
    server, base = start_server(work, options.idle)
    echo_clients = [c for c in ECHO_CLIENTS if not options.only or c in options.only]
    # An idle client runs with its echo counterparts (netlayer: the package's two forms).
    counterparts = {"netlayer": ("netlayer", "netlayer-sync", "netlayer-asyncio")}
    idle_clients = [c for c in IDLE_CLIENTS
                    if not options.only or any(o in counterparts.get(c, (c,)) for o in options.only)]
    runs: Dict[str, List[Dict[str, float]]] = {name: [] for name in echo_clients}
    try:
        for round_number in range(options.rounds):
            order = echo_clients[round_number % len(echo_clients):] + echo_clients[:round_number % len(echo_clients)]
            for name in order:
                server_cpu = process_cpu(server.pid)
                figures = child("--client", name, "--base", base, "--count", str(options.count), "--size",
                                str(options.size), "--window", str(options.window),
                                *(["--compression"] if options.compression else []))
                figures["server_cpu"] = process_cpu(server.pid) - server_cpu
                runs[name].append(figures)
                print(f"round {round_number + 1} {name}: {options.count / figures['seconds']:.0f} msg/s, "
                      f"{1e6 * figures['cpu'] / options.count:.1f} us CPU/msg", file=sys.stderr)
        idle: Dict[str, Dict[str, Any]] = {}
        for name in idle_clients if options.idle else []:
            idle[name] = child("--idle-client", name, "--base", base, "--idle", str(options.idle),
                               connections=options.idle)
            print(f"idle {name}: {idle[name]}", file=sys.stderr)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    report(options, runs, idle)


def provenance(options: argparse.Namespace) -> str:
    """When, from which source and on what the run was made (for the results file)."""
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        commit, dirty = "", ""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    import websockets
    arguments = " ".join(sys.argv[1:])
    return (f"`benchmarks/websocket.py{' ' + arguments if arguments else ''}`; "
            f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; source `{commit or '?'}`"
            f"{' (with local changes)' if dirty else ''}; {os.cpu_count()} CPUs ({model or 'unknown'}); "
            f"Python {sys.version.split()[0]}, websockets {websockets.__version__}.")


def report(options: argparse.Namespace, runs: Dict[str, List[Dict[str, float]]], idle: Dict[str, Dict[str, Any]]) -> None:
    """Prints the tables (Markdown); with --results, writes them to that file too."""
    lines: List[str] = []

    def emit(text: str = "") -> None:
        lines.append(text)
        print(text)

    if options.results:
        emit("## WebSockets\n")
        emit(provenance(options))
    n = options.count
    emit(f"\nEcho: {n} text messages of {options.size} bytes, at most {options.window} unanswered, "
         f"compression {'on' if options.compression else 'off'}; median of {options.rounds} rounds.\n")
    emit("| client | messages/s | client CPU per message | server CPU per message |")
    emit("|---|---:|---:|---:|")
    for name, figures in runs.items():
        if not figures:
            continue
        rate = statistics.median(n / f["seconds"] for f in figures)
        cpu = statistics.median(1e6 * f["cpu"] / n for f in figures)
        server = statistics.median(1e6 * f["server_cpu"] / n for f in figures)
        emit(f"| {name} | {rate:,.0f} | {cpu:.1f} µs | {server:.1f} µs |")
    if idle:
        emit(f"\nIdle: {options.idle} open connections to /silent, each client's defaults (compression offered).\n")
        emit("| client | connections | RSS added | per connection |")
        emit("|---|---:|---:|---:|")
        for name, f in idle.items():
            added = f["after"] - f["before"]
            emit(f"| {name} | {f['open']} | {added / 1048576:.1f} MiB | {added / max(1, f['open']) / 1024:.1f} KiB |")
    if options.results:
        Path(options.results).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20000, help="messages per echo run (20000)")
    parser.add_argument("--size", type=int, default=64, help="bytes per message (64)")
    parser.add_argument("--window", type=int, default=32, help="unanswered messages at most (32)")
    parser.add_argument("--rounds", type=int, default=5, help="echo rounds (5)")
    parser.add_argument("--idle", type=int, default=1000, help="idle connections per client (1000; 0: none)")
    parser.add_argument("--compression", action="store_true", help="offer permessage-deflate in the echo runs")
    parser.add_argument("--only", nargs="*", help="clients to run (names as in the tables)")
    parser.add_argument("--smoke", action="store_true", help="tiny counts: checks that everything runs")
    parser.add_argument("--results", help="also write the tables, with when and from what, to this file")
    # a client process (run by the driver)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--idle-client", help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.client:
        print(json.dumps(echo_run(options.client, options.base, options.count, options.size, options.window,
                                  options.compression)))
        return
    if options.idle_client:
        figures = idle_run(options.idle_client, options.base, options.idle)
        print(json.dumps(figures), flush=True)
        os._exit(0)  # the connections go with the process; closing 1000 of them is not measured
    if options.smoke:
        options.count, options.rounds, options.idle = 300, 1, 20
    drive(options)


if __name__ == "__main__":
    main()
