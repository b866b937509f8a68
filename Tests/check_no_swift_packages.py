"""Fails when the C library's SwiftPM build would resolve any Swift package.

    check_no_swift_packages.py SWIFT PACKAGE_DIR WORK_DIR

The CMake build of libnetlayer.so must depend on no Swift package: a C-only user, a
distribution packager or an offline build machine fetches nothing. This resolves the
package graph as CMakeLists.txt's build does (NETLAYER_C_LIBRARY_ONLY set), and as a
Swift user who enables no trait does, each with an empty SwiftPM scratch folder and
an empty shared cache, so nothing an earlier build fetched can hide a dependency.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

swift, package_dir, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
failures = 0
for label, extra_env in (("the CMake build", {"NETLAYER_C_LIBRARY_ONLY": "1"}), ("a Swift user, no trait", {})):
    shutil.rmtree(work, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "NETLAYER_C_LIBRARY_ONLY"}
    env.update(extra_env)
    out = subprocess.run(
        [swift, "package", "--package-path", package_dir, "--scratch-path", str(work / "scratch"),
         "--cache-path", str(work / "cache"), "show-dependencies", "--format", "json"],
        env=env, capture_output=True, text=True, check=True)
    graph = json.loads(out.stdout[out.stdout.index("{"):])
    deps = [dep["url"] for dep in graph["dependencies"]]
    checkouts = sorted(p.name for p in (work / "scratch" / "checkouts").glob("*"))
    if deps or checkouts:
        failures += 1
        print(f"FAIL: {label} resolves {deps or checkouts}")
    else:
        print(f"ok: {label} resolves no Swift package")
shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
