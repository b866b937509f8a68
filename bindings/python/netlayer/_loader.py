"""Finds and loads libnetlayer.so. No side effects on import: `_lib` calls `load()`.

Order (the first that applies wins):

1. ``NETLAYER_LIBRARY`` — a path to the library. When it is set, it is the only
   candidate: an explicit choice that does not load is an error, never a silent
   fall-back to another copy.
2. The copy bundled into the package at build time (``netlayer/libnetlayer.so.1``),
   unless ``NETLAYER_NO_BUNDLED`` is set to a non-empty value other than ``0``.
3. The source tree's build (``build/lib/libnetlayer.so.1``), when the package is
   imported from its sources (``pip install -e ./bindings/python``, or the folder on
   ``sys.path``), unless ``NETLAYER_NO_BUNDLED`` is set like for the bundled copy.
4. The system library path: ``ctypes.util.find_library("netlayer")``, then
   ``libnetlayer.so.1`` as the dynamic loader resolves it (``LD_LIBRARY_PATH``,
   the ``ldconfig`` cache, ...).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple

ENV_LIBRARY = "NETLAYER_LIBRARY"
ENV_NO_BUNDLED = "NETLAYER_NO_BUNDLED"
SONAME = "libnetlayer.so.1"
ABI_VERSION = 1  # NL_ABI_VERSION of the header these bindings were written for

BUNDLED_PATH = Path(__file__).resolve().parent / SONAME


def _source_tree_build() -> Optional[Path]:
    """``build/lib/libnetlayer.so.1`` of the source tree, when the package runs from its
    sources (bindings/python/netlayer, next to setup.py): an editable install."""
    package_root = BUNDLED_PATH.parent.parent
    if not ((package_root / "setup.py").is_file() and (package_root / "pyproject.toml").is_file()):
        return None
    return package_root.parent.parent / "build" / "lib" / SONAME


TREE_BUILD_PATH = _source_tree_build()

#: A candidate: (where it came from, what to pass to dlopen).
Candidate = Tuple[str, str]


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip() not in ("", "0")


def candidates(environ: Optional[Mapping[str, str]] = None) -> Tuple[List[Candidate], List[str]]:
    """The candidates to try, in order, and notes on the ones skipped."""
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_LIBRARY, "")
    if explicit:
        return [(ENV_LIBRARY, explicit)], [
            f"{ENV_LIBRARY} is set, so no other copy was tried (unset it to use the "
            "bundled copy or the system library path)"]
    found: List[Candidate] = []
    skipped: List[str] = []
    if _flag(env, ENV_NO_BUNDLED):
        skipped.append(f"bundled copy {BUNDLED_PATH}: skipped ({ENV_NO_BUNDLED} is set)")
    elif BUNDLED_PATH.exists():
        found.append(("bundled copy", str(BUNDLED_PATH)))
    else:
        skipped.append(f"bundled copy {BUNDLED_PATH}: not present (the package was built "
                       "without the library)")
    if TREE_BUILD_PATH is not None:
        if _flag(env, ENV_NO_BUNDLED):
            skipped.append(f"source tree build {TREE_BUILD_PATH}: skipped ({ENV_NO_BUNDLED} is set)")
        elif TREE_BUILD_PATH.exists():
            found.append(("source tree build", str(TREE_BUILD_PATH)))
        else:
            skipped.append(f"source tree build {TREE_BUILD_PATH}: not built yet")
    system = ctypes.util.find_library("netlayer")
    if system:
        found.append(("system library path (ctypes.util.find_library)", system))
    else:
        skipped.append("system library path: ctypes.util.find_library('netlayer') found nothing")
    if system != SONAME:
        found.append(("system library path (dynamic loader)", SONAME))
    return found, skipped


def _open(path: str) -> ctypes.CDLL:
    """dlopen()s one candidate and checks it is a Netlayer library of our ABI."""
    library = ctypes.CDLL(path)
    try:
        abi = library.nl_abi_version
    except AttributeError:
        raise OSError("not a Netlayer library (no nl_abi_version symbol)") from None
    abi.argtypes = []
    abi.restype = ctypes.c_int
    found = abi()
    if found != ABI_VERSION:
        raise OSError(f"ABI version {found}, these bindings need {ABI_VERSION}")
    return library


def load(tried: Sequence[Candidate], skipped: Sequence[str] = ()) -> Tuple[ctypes.CDLL, str]:
    """Loads the first candidate that opens; raises ImportError naming every attempt."""
    notes = list(skipped)
    for origin, path in tried:
        try:
            return _open(path), path
        except OSError as error:
            notes.append(f"{origin}: {path} ({error})")
    raise ImportError(_failure_message(notes))


def load_default(environ: Optional[Mapping[str, str]] = None) -> Tuple[ctypes.CDLL, str]:
    """Loads the library the way ``import netlayer`` does."""
    tried, skipped = candidates(environ)
    return load(tried, skipped)


def _failure_message(notes: Sequence[str]) -> str:
    lines = [f"netlayer: could not load the Netlayer C library ({SONAME}). Tried:"]
    lines += [f"  - {note}" for note in notes] or ["  - nothing"]
    lines += [
        "To fix it, either:",
        "  - build the library (cmake -S . -B build -G Ninja && cmake --build build, in the "
        "Netlayer source tree) and reinstall this package (pip install ./bindings/python), "
        "which bundles the library of build/lib into it; or",
        f"  - set {ENV_LIBRARY} to the full path of libnetlayer.so "
        "(for example build/lib/libnetlayer.so); or",
        "  - install the library (cmake --install build) where the dynamic loader finds it.",
    ]
    return "\n".join(lines)
