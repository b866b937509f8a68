"""Build hooks: bundle libnetlayer into the package and tag the wheel for the platform.

Metadata lives in pyproject.toml. At build time the library is looked up in, in order:
``$NETLAYER_BUILD_LIB`` (a directory holding libnetlayer.so.VERSION, or the file itself)
and ``../../build/lib`` relative to this file (the CMake build of the source tree). When
found it is copied into the package as ``netlayer/libnetlayer.so.1`` (its soname) and the
wheel is marked platform-specific; when not (an sdist built elsewhere), the build says so
on stderr, and the package is pure Python and finds the library at run time through
NETLAYER_LIBRARY or the system library path.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def read_version() -> str:
    """The top-level VERSION file in the source tree; an sdist's PKG-INFO otherwise."""
    source_tree = HERE.parent.parent / "VERSION"
    if source_tree.is_file():
        return source_tree.read_text().strip()
    for line in (HERE / "PKG-INFO").read_text().splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    raise RuntimeError("netlayer: no VERSION file and no PKG-INFO to read the version from")


VERSION = read_version()
LIBRARY_FILE = f"libnetlayer.so.{VERSION}"
BUNDLED_NAME = "libnetlayer.so.1"


def find_built_library() -> Optional[Path]:
    """The CMake-built library to bundle, or None."""
    places = []
    from_env = os.environ.get("NETLAYER_BUILD_LIB")
    if from_env:
        given = Path(from_env)
        places += [given] if given.is_file() else [given / LIBRARY_FILE, given / BUNDLED_NAME]
    places.append(HERE.parent.parent / "build" / "lib" / LIBRARY_FILE)
    for place in places:
        if place.is_file():
            return place.resolve()
    return None


LIBRARY = find_built_library()


class BuildPyWithLibrary(build_py):
    """build_py that copies the built library into the package (or drops a stale copy)."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "netlayer" / BUNDLED_NAME
        if LIBRARY is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(LIBRARY, target)
            os.chmod(target, 0o755)
            print(f"netlayer: bundling {LIBRARY} as {target}")
        else:
            if target.exists():
                target.unlink()
            warn_without_library()

    def get_outputs(self, include_bytecode: bool = True) -> List[str]:
        outputs = list(super().get_outputs(include_bytecode))
        if LIBRARY is not None:
            outputs.append(str(Path(self.build_lib) / "netlayer" / BUNDLED_NAME))
        return outputs


def warn_without_library() -> None:
    """Says, while installing, that the package will need a library from elsewhere: on
    stderr, and on the terminal, since pip shows a build's output only with -v."""
    message = (
        "\n"
        "netlayer: WARNING: no Netlayer library to bundle (looked at $NETLAYER_BUILD_LIB and\n"
        f"  {HERE.parent.parent / 'build' / 'lib' / LIBRARY_FILE}). This installs the Python\n"
        "  package without libnetlayer.so.1: `import netlayer` will need NETLAYER_LIBRARY set\n"
        "  to the library's path, or the library installed where the dynamic loader finds it.\n"
        "  To bundle one, build it (cmake -S . -B build -G Ninja && cmake --build build in the\n"
        "  Netlayer sources) and point NETLAYER_BUILD_LIB at build/lib while installing.\n")
    print(message, file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        return
    try:
        with open("/dev/tty", "w") as terminal:
            terminal.write(message)
    except OSError:
        pass  # no terminal (CI): stderr, which pip -v shows, is all there is


class BinaryDistribution(Distribution):
    """Carries a native library: installs to platlib and builds a platform wheel."""

    def has_ext_modules(self) -> bool:
        return True


cmdclass: Dict[str, Any] = {"build_py": BuildPyWithLibrary}

if LIBRARY is not None:
    bdist_wheel: Any = None
    # setuptools >= 70.1 ships bdist_wheel; older ones use the wheel package's
    for module in ("setuptools.command.bdist_wheel", "wheel.bdist_wheel"):
        try:
            bdist_wheel = importlib.import_module(module).bdist_wheel
            break
        except ImportError:
            continue

    if bdist_wheel is not None:

        class PlatformWheel(bdist_wheel):  # type: ignore[misc]
            """A wheel that carries a native library: any Python 3, this platform."""

            def finalize_options(self) -> None:
                super().finalize_options()
                self.root_is_pure = False

            def get_tag(self) -> Tuple[str, str, str]:
                _python, _abi, platform = super().get_tag()
                return "py3", "none", platform

        cmdclass["bdist_wheel"] = PlatformWheel

setup(version=VERSION, cmdclass=cmdclass, distclass=BinaryDistribution if LIBRARY is not None else Distribution)
