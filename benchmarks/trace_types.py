#!/usr/bin/env python3
"""Which Netlayer types run code for one request: the shape of the request path,
counted the same way by anyone.

    benchmarks/trace_types.py [--lib build-debug/lib] [--work DIR] [--functions TYPE] [--max-types N]

A debug build of libnetlayer (nothing inlined: every accessor, initializer and method
is its own function) runs benchmarks/seq_netlayer.c under callgrind twice, once with
two and once with three distinct GET requests (`?page=i`, a JSON response, no hooks)
against nginx on loopback. A function of libnetlayer whose instruction count rose
between the two runs ran for the third request; each is demangled and attributed to
the type that declares it (operators and private types included; a protocol witness
to the conforming type, a value witness to the type it copies or destroys, a closure to
the type of its enclosing function). Code no type declares is left out: free
functions, outlined copies, metadata accessors and thunks the compiler writes.

A type nested in another counts with it; the count with nested types on their own is
printed beside it. Two counts are printed: every type with code that ran, and the
types that ran code written in them, which leaves out what the compiler synthesizes
(`==` and `hash` of a derived conformance, value witnesses, raw values,
default-argument generators) and addressors of stored statics.

Without `--lib`, the debug library is built first in `WORK/debug` (CMake with
`-DNETLAYER_SWIFT_CONFIGURATION=debug`).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from instructions import MEASURED_ENV, Placement, run  # noqa: E402

NOT_A_TYPE = ("outlined ", "type metadata", "lazy protocol witness table", "reabstraction thunk",
              "protocol conformance descriptor", "nominal type descriptor", "associated type", "base conformance",
              "__swift")
SYNTHESIZED = re.compile(r"unsafeMutableAddressor|default argument|__derived_|rawValue\.getter|init\(rawValue:|"
                         r"value witness for |"
                         r"in conformance .*: Swift\.(Equatable|Hashable|RawRepresentable|OptionSet|SetAlgebra)")
# One component of a type's path: `Name`, `Name<...>`, or a private type `(Name in _HASH)`.
COMPONENT = r"(?:\([A-Z]\w* in _[0-9A-F]+\)|[A-Z]\w*)(?:<[^>]*>)?"
# What follows the path of the declaring type: a member, a private member, an
# initializer, a subscript, an operator.
MEMBER = r"(?:\(|\([a-z_]\w* in _|[a-z_]|init|subscript|deinit|[=!<>+\-*/%&|^~]+ (?:infix|prefix|postfix))"
MEMBER_OF = re.compile(rf"\b(Netlayer\w*)((?:\.{COMPONENT})+)\.{MEMBER}")
CONFORMING = re.compile(rf"in conformance (Netlayer\w*)((?:\.{COMPONENT})+) :")
WITNESSED = re.compile(rf"value witness for (Netlayer\w*)((?:\.{COMPONENT})+)")


def function_costs(profile: str) -> Dict[str, int]:
    """Self cost of each libnetlayer function in a callgrind profile, by mangled name."""
    out = run(["callgrind_annotate", "--threshold=100", "--inclusive=no", profile],
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    costs: Dict[str, int] = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?)\s*\[(.*)\]\s*$", line)
        if m and "libnetlayer" in m.group(3):
            name = m.group(2)
            if ":$s" in name:
                name = name[name.index(":$s") + 1:]
            costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


def declaring_type(demangled: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """(module, path) of the type declaring a demangled function, the path from the
    outermost type to the nested one (private types by their name), or None for code
    no type declares."""
    if demangled.startswith(NOT_A_TYPE):
        return None
    m = None
    if demangled.startswith("protocol witness"):
        m = CONFORMING.search(demangled)
    if not m and " value witness for " in demangled:
        m = WITNESSED.search(demangled)
    if not m:
        m = MEMBER_OF.search(demangled)
    if not m:
        return None
    path = tuple(re.sub(r"^\((\w+) in _[0-9A-F]+\)$", r"\1", re.sub(r"<[^>]*>$", "", c))
                 for c in re.findall(COMPONENT, m.group(2)))
    return m.group(1), path


def trace(lib: str, work: str) -> Dict[Tuple[str, Tuple[str, ...]], List[str]]:
    program = os.path.join(work, "seq_netlayer_debug")
    run(["cc", "-O2", f"-I{os.path.join(ROOT, 'include')}", "-o", program, os.path.join(HERE, "seq_netlayer.c"),
         f"-L{lib}", "-lnetlayer", f"-Wl,-rpath,{lib}"])
    nginx_dir = os.path.join(work, "nginx")
    url = run([os.path.join(HERE, "nginx.sh"), "start", nginx_dir], stdout=subprocess.PIPE, text=True,
              preexec_fn=Placement.server).stdout.strip()
    try:
        profiles = []
        for n in (2, 3):
            profile = os.path.join(work, f"callgrind.trace.{n}")
            run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", program, url, str(n), "0",
                 "distinct"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=MEASURED_ENV,
                preexec_fn=Placement.client)
            profiles.append(function_costs(profile))
    finally:
        subprocess.run([os.path.join(HERE, "nginx.sh"), "stop", nginx_dir], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    two, three = profiles
    ran = sorted(f for f in three if f.startswith("$s") and three[f] > two.get(f, 0))
    demangled = run(["swift", "demangle"], input="\n".join(ran), stdout=subprocess.PIPE, text=True).stdout
    types: Dict[Tuple[str, Tuple[str, ...]], List[str]] = defaultdict(list)
    for name in demangled.splitlines():
        owner = declaring_type(name)
        if owner:
            types[owner].append(name)
    return types


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", help="folder of a debug build's libnetlayer.so (built in WORK/debug without it)")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "trace"), help="folder for builds and profiles")
    parser.add_argument("--functions", metavar="TYPE", help="also list the functions of TYPE that ran")
    parser.add_argument("--max-types", type=int, metavar="N",
                        help="exit 1 when code of more than N types ran (nested types counted with their owner)")
    args = parser.parse_args()
    Placement.cpu = min(os.sched_getaffinity(0))
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    lib = args.lib
    if lib is None:
        build = os.path.join(work, "debug")
        run(["cmake", "-S", ROOT, "-B", build, "-DNETLAYER_SWIFT_CONFIGURATION=debug"], stdout=subprocess.DEVNULL)
        run(["cmake", "--build", build, "--target", "netlayer_swiftpm"], stdout=subprocess.DEVNULL)
        lib = os.path.join(build, "lib")
    types = trace(os.path.abspath(lib), work)

    written = {t: [f for f in fs if not SYNTHESIZED.search(f)] for t, fs in types.items()}
    written = {t: fs for t, fs in written.items() if fs}

    def outermost(of: Dict[Tuple[str, Tuple[str, ...]], List[str]]) -> Dict[Tuple[str, str], List[str]]:
        merged: Dict[Tuple[str, str], List[str]] = defaultdict(list)
        for (module, path), functions in of.items():
            merged[(module, path[0])].extend(functions)
        return merged

    top, top_written = outermost(types), outermost(written)
    print(f"One distinct GET (callgrind, 3 requests - 2): code of {len(top)} Netlayer types ran "
          f"({len(types)} with the types nested in them counted on their own), "
          f"{sum(map(len, types.values()))} functions; code written in {len(top_written)} types "
          f"({len(written)} with nested types), {sum(map(len, written.values()))} functions.")
    print("Types whose only code that ran is synthesized or a static's addressor: "
          + (", ".join(sorted(n for _, n in set(top) - set(top_written))) or "none"))
    by_module: Dict[str, Counter[str]] = defaultdict(Counter)
    nested: Dict[Tuple[str, str], List[str]] = defaultdict(list)
    for (module, path), functions in written.items():
        by_module[module][path[0]] += len(functions)
        if len(path) > 1:
            nested[(module, path[0])].append(".".join(path[1:]))
    for module in sorted(by_module):
        names = by_module[module]
        print(f"  {module} ({len(names)}): " + ", ".join(
            f"{n} {c}" + (f" [{', '.join(sorted(nested[(module, n)]))}]" if nested[(module, n)] else "")
            for n, c in sorted(names.items())))
    if args.functions:
        for (module, path), functions in sorted(types.items()):
            if path[0] == args.functions:
                print("\n".join(f"    {module}: {f}" for f in functions))
    if args.max_types is not None and len(top) > args.max_types:
        print(f"more than {args.max_types} types: {len(top)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
