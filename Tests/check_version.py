"""Fails when any copy of the version differs from the top-level VERSION file.

    check_version.py REPO [--cmake-version V] [--library PATH]

The copies: NL_VERSION_MAJOR/MINOR/PATCH/STRING in include/netlayer.h, Netlayer.version
in Sources/NetlayerCore/Netlayer.swift, __version__ in bindings/python/netlayer/__init__.py,
and every "netlayer/X.Y.Z" or "netlayer X.Y.Z" in the README files and docs/. The Python
package's metadata must take its version from VERSION (dynamic), CMake's project
version (given by ctest) is read from it, and so is nl_version() of a built library.
scripts/set-version X.Y.Z rewrites every copy.
"""

import argparse
import ctypes
import re
import sys
from pathlib import Path

# (file, pattern whose group 1 is a copy); shared with scripts/set-version.
COPIES = [
    ("include/netlayer.h", r"#define NL_VERSION_STRING \"([^\"]*)\""),
    ("Sources/NetlayerCore/Netlayer.swift", r"public static let version = \"([^\"]*)\""),
    ("bindings/python/netlayer/__init__.py", r"__version__ = \"([^\"]*)\""),
]
HEADER_PARTS = ("MAJOR", "MINOR", "PATCH")
DOC_GLOBS = ("README.md", "docs/*.md", "bindings/python/README.md", "benchmarks/README.md")
DOC_PATTERN = r"netlayer[/ ](\d+\.\d+\.\d+)\b"


def problems(repo: Path, cmake_version: str = "", library: str = "") -> list:
    found = []
    version = (repo / "VERSION").read_text().strip()
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        return [f"VERSION holds '{version}', not MAJOR.MINOR.PATCH"]
    for name, pattern in COPIES:
        copies = re.findall(pattern, (repo / name).read_text())
        if copies != [version]:
            found.append(f"{name}: {copies or 'no version'} where VERSION is {version}")
    header = (repo / "include/netlayer.h").read_text()
    for part, expected in zip(HEADER_PARTS, version.split(".")):
        match = re.search(rf"#define NL_VERSION_{part} (\d+)", header)
        if not match or match.group(1) != expected:
            found.append(f"include/netlayer.h: NL_VERSION_{part} is not {expected}")
    pyproject = (repo / "bindings/python/pyproject.toml").read_text()
    if re.search(r"(?m)^version\s*=", pyproject) or not re.search(r"(?m)^dynamic = \[.*\"version\"", pyproject):
        found.append("bindings/python/pyproject.toml: the version must be dynamic (setup.py reads VERSION)")
    for pattern in DOC_GLOBS:
        for doc in sorted(repo.glob(pattern)):
            for copy in re.findall(DOC_PATTERN, doc.read_text()):
                if copy != version:
                    found.append(f"{doc.relative_to(repo)}: mentions netlayer {copy} where VERSION is {version}")
    if cmake_version and cmake_version != version:
        found.append(f"CMake's PROJECT_VERSION is {cmake_version} where VERSION is {version}")
    if library:
        lib = ctypes.CDLL(library)
        lib.nl_version.argtypes = []
        lib.nl_version.restype = ctypes.c_char_p
        built = lib.nl_version().decode()
        if built != version:
            found.append(f"{library}: nl_version() is {built} where VERSION is {version}")
    return found


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--cmake-version", default="")
    parser.add_argument("--library", default="")
    args = parser.parse_args()
    found = problems(args.repo, args.cmake_version, args.library)
    for problem in found:
        print(f"FAIL: {problem}")
    if found:
        print("scripts/set-version X.Y.Z writes every copy")
        sys.exit(1)
    print(f"ok: every copy of the version is {(args.repo / 'VERSION').read_text().strip()}")
