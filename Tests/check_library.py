#!/usr/bin/env python3
"""Checks libnetlayer.so as users get it: self-contained, nl_-only exports, soname."""
import ctypes
import os
import re
import subprocess
import sys

path = os.path.realpath(sys.argv[1])
env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
failures = 0
passed = 0


def check(ok: bool, what: str) -> None:
    global failures, passed
    print(("ok   " if ok else "FAIL ") + what)
    failures += 0 if ok else 1
    passed += 1 if ok else 0


ldd = subprocess.run(["ldd", path], capture_output=True, text=True, env=env).stdout
check("not found" not in ldd, "ldd resolves every dependency")
check(not any(s in ldd for s in ("swift", "Foundation", "libdispatch", "BlocksRuntime")),
      "no Swift toolchain library is needed at run time")
nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout
exported = [line.split()[-1].split("@")[0] for line in nm.splitlines() if line.split()[1:2] and line.split()[1] in "TWDBR"]
others = [s for s in exported if not s.startswith("nl_")]
check(not others, f"only nl_ symbols are exported (others: {others[:5]})")
check("nl_request" in exported and "nl_free" in exported, "the contract's functions are exported")
readelf = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
check("[libnetlayer.so.1]" in readelf, "soname is libnetlayer.so.1")
# The libraries the README's "At run time libnetlayer.so needs ..." names, and no other:
# libcurl, libyaml (YAML documents), RE2 (schema patterns), wslay (WebSocket frames), libcrypto and zlib
# (the WebSocket handshake's SHA-1, permessage-deflate; libcurl needs both too), libstdc++ and libgcc_s (the
# static Swift runtime and RE2), glibc's.
ALLOWED_NEEDED = ("libcurl.so.", "libyaml-0.so.", "libre2.so.", "libwslay.so.", "libcrypto.so.", "libz.so.", "libstdc++.so.", "libgcc_s.so.",
                  "libc.so.", "libm.so.", "ld-linux-")
needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf)
check(bool(needed) and all(n.startswith(ALLOWED_NEEDED) for n in needed),
      f"needs only the documented system libraries ({', '.join(needed)})")
code = "import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.nl_version.restype=ctypes.c_char_p; print(l.nl_version().decode())"
loaded = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, env=env)
check(loaded.returncode == 0 and loaded.stdout.strip().count(".") == 2,
      f"loads with ctypes and no LD_LIBRARY_PATH ({loaded.stdout.strip() or loaded.stderr.strip()})")
print(f"{passed} passed, {failures} failed")
sys.exit(1 if failures else 0)
