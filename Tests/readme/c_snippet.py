#!/usr/bin/env python3
"""Runs the C block of README.md: compiles it against include/ and the library this
build made, and runs it in a temporary directory against the test server
(with_server.py's NETLAYER_TEST_URL replaces the README's http://127.0.0.1:8080/). Fails when the block does not compile,
exits non-zero, does not print two successful result documents (the server's and
the stubbed client's), or does not leave its cookie file.

Usage: c_snippet.py README.md INCLUDE_DIR LIB_DIR
"""

import json
import os
import re
import subprocess
import sys
import tempfile


def main() -> int:
    readme, include_dir, lib_dir = sys.argv[1:4]
    text = open(readme, encoding="utf-8").read()
    blocks = re.findall(r"^```c\n(.*?)^```", text, flags=re.S | re.M)
    if len(blocks) != 1:
        print(f"c_snippet: expected one ```c block in {readme}, found {len(blocks)}")
        return 1
    source = blocks[0].replace("http://127.0.0.1:8080/", os.environ["NETLAYER_TEST_URL"])
    if "127.0.0.1:8080" in source:
        print("c_snippet: a URL of the README's demo server is left")
        return 1
    with tempfile.TemporaryDirectory() as work:
        c_file, binary = os.path.join(work, "readme.c"), os.path.join(work, "readme")
        with open(c_file, "w", encoding="utf-8") as f:
            f.write(source)
        cc = os.environ.get("CC", "cc")
        build = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", include_dir, c_file,
                                "-L", lib_dir, "-lnetlayer", "-Wl,-rpath," + lib_dir, "-o", binary],
                               capture_output=True, text=True)
        if build.returncode != 0:
            print("c_snippet: the README's C block does not compile:\n" + build.stderr)
            return 1
        run = subprocess.run([binary], capture_output=True, text=True, timeout=60, cwd=work)
        saved_cookies = os.path.exists(os.path.join(work, "cookies.txt"))
    if run.returncode != 0:
        print(f"c_snippet: exit {run.returncode}\n{run.stdout}{run.stderr}")
        return 1
    results = [json.loads(line) for line in run.stdout.splitlines()]
    if len(results) != 2 or any(r.get("ok") is not True or not isinstance(r.get("value"), list) for r in results):
        print("c_snippet: not two successful results with list values (server, stub):\n" + run.stdout)
        return 1
    if results[1]["value"] != [{"id": 1}]:
        print("c_snippet: the stubbed client did not answer from its rule:\n" + run.stdout)
        return 1
    if not saved_cookies:
        print("c_snippet: the client did not save its cookie file")
        return 1
    print("c_snippet: README.md's C block ran:", run.stdout.strip()[:120])
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
