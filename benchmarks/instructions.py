#!/usr/bin/env python3
"""Instructions per request, counted with callgrind: Netlayer against the loops a user
writes with libcurl (C) and pycurl (Python), against nginx on loopback.

    benchmarks/instructions.py [--lib build/lib] [--out FILE] [--check]

Each client runs its loop twice under `valgrind --tool=callgrind` (user space, every
thread of the process), once with N1 and once with N2 requests; the difference of the
two totals divided by N2 - N1 is its cost per request, start-up and teardown cancelled.
Instruction counts do not move with the machine's load or speed (the same binary, input
and environment give the same count), so the ratios can be a CI budget; they are not
time (instructions per cycle differ between an interpreter and memcpy), which is why
benchmarks/README.md keeps the wall-clock runs too.

Documents are distinct by default (a new `?page=i` per request, what a client fetching
pages or ids sends); `--mode repeated` sends the same document every time.

Clients:
  C      raw libcurl (benchmarks/seq_raw.c: one reused easy handle, CURLOPT_URL per
         request, body discarded, status checked), with and without compression offered;
         Netlayer nl_request (benchmarks/seq_netlayer.c).
  Python pycurl + json.loads and Netlayer `client.get(path, params=...).json()`
         (benchmarks/py_loop.py), Netlayer installed as the README installs it
         (`pip install ./bindings/python`, which brings orjson, in a clean virtualenv),
         with the `fast` extra, and without dependencies (`--no-deps`: the json module).

Where the server runs decides which path a request takes through the client: when the
response is already there as the client first reads, one pass of its event loop ends the
request; when it comes later, as over any network, the client waits and reads it on a
second pass. Left to the scheduler, loopback mixes the two at random and each loop's
count moves by a percent or so between runs. So nginx runs on the clients' CPU at idle
priority (SCHED_IDLE): it answers only once the client waits, every request takes the
network's path, and each count is the same to a few instructions run after run
(`--unpinned` measures the scheduler's mix instead).

The environment is fixed too (`MEASURED_ENV`, two variables): libcurl reads the proxy
variables on every transfer, walking the whole environment each time, so the libcurl
loops cost more in a larger one (about 1.2k instructions per request more with the 39
variables of an interactive shell), while Netlayer reads them once.

--check fails (exit 1) when a ratio passes its budget: C nl_request at most 1.25 times
the libcurl loop (compression offered by both, as Netlayer does by default), the
default Python install at most 1.3 times pycurl + json.loads. With --budgets-only (CI's
ctest) only those two loops and their references run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUDGETS = {"C": 1.25, "Python": 1.3}


def run(cmd: List[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kwargs)


class Placement:
    """Where the server and the measured clients run: all on one CPU, the server at idle
    priority (see the module's docstring), or wherever the scheduler puts them."""
    cpu: Optional[int] = None

    @classmethod
    def client(cls) -> None:
        if cls.cpu is not None:
            os.sched_setaffinity(0, {cls.cpu})

    @classmethod
    def server(cls) -> None:
        if cls.cpu is not None:
            os.sched_setaffinity(0, {cls.cpu})
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


# The measured programs' whole environment. libcurl looks for proxy variables on every
# transfer (getenv walks the environment each time), so the libcurl loops' counts grow
# with the size of the environment they run in; a fixed, minimal one makes the counts
# the same for everyone, and is the case least favourable to Netlayer, which looks once.
MEASURED_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def callgrind_total(cmd: List[str], work: str, env: Optional[Dict[str, str]] = None) -> int:
    """Instructions the command executes, every thread of its process, in `env` (by
    default `MEASURED_ENV`)."""
    out = tempfile.mktemp(prefix="callgrind.", dir=work)
    result = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or MEASURED_ENV, text=True,
                            preexec_fn=Placement.client)
    if result.returncode != 0:
        sys.exit(f"instructions: {' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}{result.stderr[-3000:]}")
    with open(out) as f:
        for line in f:
            m = re.match(r"(?:summary|totals): (\d+)", line)
            if m:
                return int(m.group(1))
    sys.exit(f"instructions: no total in {out}")


def per_request(cmd_for_n, n1: int, n2: int, work: str, env: Optional[Dict[str, str]] = None,
                repeat: int = 1) -> float:
    """The smallest of `repeat` measurements (they agree to a few instructions unless
    `--unpinned`, where the smallest is the one with the fewest second passes)."""
    counts = []
    for _ in range(repeat):
        low = callgrind_total(cmd_for_n(n1), work, env)
        high = callgrind_total(cmd_for_n(n2), work, env)
        counts.append((high - low) / (n2 - n1))
    return min(counts)


def venv_with(path: str, packages: List[str], pip_env: Dict[str, str]) -> str:
    """A clean virtualenv (no system site-packages) with `packages` installed; reused
    when it already imports them."""
    python = os.path.join(path, "bin", "python")
    if not os.path.exists(python):
        run([sys.executable, "-m", "venv", path])
    run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], stdout=subprocess.DEVNULL)
    for package in packages:
        run([python, "-m", "pip", "install", "-q", *package.split()], env=pip_env, stdout=subprocess.DEVNULL)
    return python


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", default=os.path.join(ROOT, "build", "lib"), help="folder of libnetlayer.so")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "instructions"),
                        help="folder for the programs, virtualenvs and nginx (kept between runs)")
    parser.add_argument("--n1", type=int, default=200)
    parser.add_argument("--n2", type=int, default=1200)
    parser.add_argument("--mode", choices=["distinct", "repeated"], default="distinct")
    parser.add_argument("--python", choices=["yes", "no"], default="yes", help="count the Python loops too")
    parser.add_argument("--out", help="a Markdown file the table is written to")
    parser.add_argument("--check", action="store_true", help="fail when a ratio passes its budget")
    parser.add_argument("--budgets-only", action="store_true",
                        help="count only the budgeted loops and their references (what --check needs; "
                             "CI's ctest runs this)")
    parser.add_argument("--repeat", type=int, default=1, help="measure each C loop this many times, keep the smallest")
    parser.add_argument("--unpinned", action="store_true",
                        help="let the scheduler place nginx and the clients (counts then move between runs)")
    args = parser.parse_args()
    if not args.unpinned:
        Placement.cpu = min(os.sched_getaffinity(0))

    lib = os.path.abspath(args.lib)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    include = os.path.join(ROOT, "include")
    for program, libs in (("seq_raw", ["-lcurl"]),
                          ("seq_netlayer", [f"-L{lib}", "-lnetlayer", f"-Wl,-rpath,{lib}"])):
        run(["cc", "-O2", f"-I{include}", "-o", os.path.join(work, program),
             os.path.join(HERE, f"{program}.c"), *libs])

    nginx_dir = os.path.join(work, "nginx")
    url = run([os.path.join(HERE, "nginx.sh"), "start", nginx_dir], stdout=subprocess.PIPE,
              text=True, preexec_fn=Placement.server).stdout.strip()
    rows: List[Tuple[str, str, float]] = []
    try:
        raw = os.path.join(work, "seq_raw")
        netlayer = os.path.join(work, "seq_netlayer")
        warmup = "20"
        rows.append(("C", "libcurl loop, compression offered",
                     per_request(lambda n: [raw, url, str(n), warmup, args.mode], args.n1, args.n2, work, repeat=args.repeat)))
        if not args.budgets_only:
            rows.append(("C", "libcurl loop, no compression",
                         per_request(lambda n: [raw, url, str(n), warmup, args.mode, "plain"], args.n1, args.n2, work,
                                     repeat=args.repeat)))
        rows.append(("C", "Netlayer nl_request",
                     per_request(lambda n: [netlayer, url, str(n), warmup, args.mode], args.n1, args.n2, work, repeat=args.repeat)))
        if args.python == "yes":
            pip_env = dict(os.environ, PYCURL_SSL_LIBRARY="openssl")
            package = os.path.join(ROOT, "bindings", "python")
            # A fixed hash seed: with a random one, dict and set layouts, and so the
            # interpreter's counts, differ a little from run to run.
            env = dict(MEASURED_ENV, NETLAYER_LIBRARY=os.path.join(lib, "libnetlayer.so.1"), PYTHONHASHSEED="0")
            # As the README installs it (with its dependency, orjson), with the `fast`
            # extra, and without any dependency (the json module: what orjson buys).
            default = venv_with(os.path.join(work, "venv-default"),
                                ["--no-binary pycurl pycurl", f"--force-reinstall {package}"], pip_env)
            loop = os.path.join(HERE, "py_loop.py")

            def python_row(name: str, python: str, client: str) -> Tuple[str, str, float]:
                """`client`'s loop (py_loop.py) run by the virtualenv's `python`."""
                return ("Python", name, per_request(lambda n: [python, loop, client, url, str(n), args.mode],
                                                    args.n1, args.n2, work, env))

            rows.append(python_row("pycurl + json.loads", default, "pycurl"))
            rows.append(python_row("Netlayer, default install", default, "netlayer"))
            if not args.budgets_only:
                fast = venv_with(os.path.join(work, "venv-fast"), [f"--force-reinstall {package}[fast]"], pip_env)
                bare = venv_with(os.path.join(work, "venv-bare"), [f"--force-reinstall --no-deps {package}"], pip_env)
                rows.append(python_row("Netlayer, fast extra", fast, "netlayer"))
                rows.append(python_row("Netlayer without orjson (--no-deps)", bare, "netlayer"))
    finally:
        subprocess.run([os.path.join(HERE, "nginx.sh"), "stop", nginx_dir], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

    reference = {"C": rows[0][2], "Python": next((r[2] for r in rows if r[1].startswith("pycurl")), None)}
    where = ("nginx and the clients wherever the scheduler puts them" if args.unpinned
             else "nginx at idle priority on the clients' CPU: every response arrives while the client waits")
    lines = [f"Instructions per request ({args.mode} documents, callgrind, ({args.n2} - {args.n1} requests) / "
             f"{args.n2 - args.n1}), nginx on loopback, {where}:", "",
             "| language | loop | instructions per request | ratio |", "|---|---|---:|---:|"]
    failures = []
    for language, name, count in rows:
        base = reference[language]
        ratio = count / base if base else float("nan")
        lines.append(f"| {language} | {name} | {count / 1000:.1f}k | {ratio:.2f} |")
        is_budgeted = name in ("Netlayer nl_request", "Netlayer, default install")
        if is_budgeted and ratio > BUDGETS[language]:
            failures.append(f"{language} {name}: {ratio:.2f} times the reference, budget {BUDGETS[language]}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.check and failures:
        print("over budget: " + "; ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
