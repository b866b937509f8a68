#!/usr/bin/env python3
"""The Swift package's layers point one way, and the core names nothing of libcurl.

    check_layers.py SWIFT PACKAGE_DIR

Reads the package graph (`swift package dump-package`) and fails when a target depends
on anything outside what its layer may import, or when the targets of the layers are
missing; then checks that no source of the core (or of any layer libcurl is not allowed
in) imports a libcurl module. SwiftPM gives a module only the modules of its declared
dependencies, so the graph is what the compiler enforces: a file of NetlayerCore that
wrote `import CCurl` would not build.
"""

import json
import pathlib
import re
import subprocess
import sys

# What each target may depend on (its layer and the ones below it).
ALLOWED = {
    "NetlayerJSON": set(),
    "NetlayerCore": {"NetlayerJSON"},
    "NetlayerCurl": {"NetlayerCore", "NetlayerJSON", "CCurl", "CWslay"},
    "NetlayerFeatures": {"NetlayerCore", "NetlayerJSON"},
    "NetlayerDocuments": {"NetlayerCore", "NetlayerFeatures", "NetlayerJSON", "CYAML", "CRegex"},
    "Netlayer": {"NetlayerJSON", "NetlayerCore", "NetlayerCurl", "NetlayerFeatures", "NetlayerDocuments"},
    "NetlayerC": {"Netlayer"},
}
# Modules that are libcurl, or the transport over it.
CURL = {"CCurl", "CWslay", "NetlayerCurl"}


def problems(targets: dict, sources: dict) -> list:
    """What breaks the layering: `targets` maps a target to its dependencies, `sources`
    a target to the import lines of its files (path -> lines)."""
    failures = []
    for name, allowed in ALLOWED.items():
        if name not in targets:
            failures.append(f"target {name} is missing from Package.swift")
            continue
        extra = targets[name] - allowed
        if extra:
            failures.append(f"{name} depends on {sorted(extra)}, outside its layer (may: {sorted(allowed)})")
    for name in ("NetlayerJSON", "NetlayerCore", "NetlayerFeatures", "NetlayerDocuments"):
        for path, lines in sources.get(name, {}).items():
            for line in lines:
                m = re.match(r"\s*(?:@_exported\s+)?import\s+(\w+)", line)
                if m and m.group(1) in CURL:
                    failures.append(f"{path} imports {m.group(1)}")
    return failures


def self_test() -> None:
    """The check fails when the core reaches libcurl, by the graph or by an import."""
    good = {name: set(allowed) for name, allowed in ALLOWED.items()}
    assert not problems(good, {})
    bad = dict(good, NetlayerCore={"NetlayerJSON", "CCurl"})
    assert any("NetlayerCore depends on ['CCurl']" in p for p in problems(bad, {}))
    upward = dict(good, NetlayerFeatures={"NetlayerCore", "NetlayerDocuments"})
    assert problems(upward, {})
    imports = {"NetlayerCore": {"Sources/NetlayerCore/X.swift": ["import CCurl"]}}
    assert problems(good, imports) == ["Sources/NetlayerCore/X.swift imports CCurl"]


def main() -> int:
    self_test()
    swift, package = sys.argv[1], pathlib.Path(sys.argv[2])
    dump = subprocess.run([swift, "package", "dump-package", "--package-path", str(package)],
                          check=True, capture_output=True, text=True).stdout
    targets = {}
    for target in json.loads(dump)["targets"]:
        deps = set()
        for dependency in target.get("dependencies", []):
            (kind, value), = dependency.items()
            deps.add(value[0] if isinstance(value, list) else value)
        targets[target["name"]] = deps
    sources = {name: {str(p.relative_to(package)): p.read_text().splitlines()
                      for p in sorted((package / "Sources" / name).rglob("*.swift"))}
               for name in ALLOWED}
    failures = problems(targets, sources)
    for failure in failures:
        print("FAIL", failure)
    print(f"layers: {len(ALLOWED)} targets checked, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
