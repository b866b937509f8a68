"""Fails when the C library's SwiftPM build would resolve any Swift package.

    check_no_swift_packages.py SWIFT PACKAGE_DIR WORK_DIR

The CMake build of libnetlayer.so must depend on no Swift package: a C-only user, a
distribution packager or an offline build machine fetches nothing. This resolves the
package graph as that build does (no package trait enabled) the way a fresh clone
meets it: the manifest and sources in a folder of their own without Package.resolved,
an empty SwiftPM scratch folder and an empty shared cache, so nothing an earlier
build fetched or pinned can hide a dependency.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

swift, package_dir, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3])
shutil.rmtree(work, ignore_errors=True)
clone = work / "netlayer"
clone.mkdir(parents=True)
shutil.copy(package_dir / "Package.swift", clone / "Package.swift")
for folder in ("Sources", "Tests"):
    (clone / folder).symlink_to(package_dir / folder)
out = subprocess.run(
    [swift, "package", "--package-path", str(clone), "--scratch-path", str(work / "scratch"),
     "--cache-path", str(work / "cache"), "show-dependencies", "--format", "json"],
    capture_output=True, text=True, check=True)
graph = json.loads(out.stdout[out.stdout.index("{"):])
resolved = [dep["url"] for dep in graph["dependencies"]]
resolved += sorted(p.name for p in (work / "scratch" / "checkouts").glob("*"))
shutil.rmtree(work, ignore_errors=True)
if resolved:
    print(f"FAIL: the C library's build resolves Swift packages: {resolved}")
    sys.exit(1)
print("ok: the C library's build resolves no Swift package")
