#!/usr/bin/env python3
"""Runs the ```sh and ```json blocks of the READMEs and docs/ (fences.scope()).

Usage: run_blocks.py sh|json LIB_DIR   (under Tests/server/with_server.py)

sh: each block runs with bash in a directory that looks like a checkout with a
build (every top-level entry of the source tree linked, ``build/lib`` linked to
LIB_DIR), TMPDIR pointing into the test's own temporary directory. The block runs
statement by statement, as a user pasting it would, and fails when any statement
exits non-zero (a failed ``cc ... && prog`` included, which ``set -e`` would let
pass); the statements after a failure still run, so a block's own clean-up (stopping
the server it started) happens. An nginx a block left running in the temporary
directory is stopped. ``http://127.0.0.1:8080/`` is replaced by the test server's URL.

json: each block must parse, and is then checked for what it shows:

* an object with ``baseURL``: a config; ``nl_client_new`` must accept it;
* an object with ``ok``: a result document; its keys, and those of ``error`` and
  ``timing``, must be ones a real result of the test server has (with the same JSON
  types) or ones the prose of docs/documents.md names; ``error.kind`` must be in the
  table of kinds;
* an array of ``{"id", "result"}``: what ``nl_queue_take`` returns, with the keys a
  real ``nl_queue_take`` gives, each ``result`` checked as above;
* an object with ``netlayerCassette``: a cassette file; a replay client must load it
  and answer each exchange's request with its recorded status or error kind;
* an object with ``protocols``: a websocket document; ``nl_websocket_open`` must
  accept it;
* any other object: an endpoint; ``nl_request`` of it against the test server must
  not fail with ``invalid_request``.

``"...": "..."`` in an object stands for keys left out and is ignored.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fences import NOT_RUN_MARKER, ROOT, SNIPPET_BASE_URL, Block, blocks, scope  # noqa: E402

SH_TIMEOUT = 300
DOCUMENTS_MD = ROOT / "docs" / "documents.md"
ELISION = "..."


class Failure(Exception):
    pass


# --------------------------------------------------------------------------- sh


def statements(code: str) -> List[Tuple[int, str]]:
    """Splits a shell block into complete statements (1-based first line, text)."""
    out: List[Tuple[int, str]] = []
    lines = code.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].strip() or lines[i].lstrip().startswith("#"):
            i += 1
            continue
        start, text = i, lines[i]
        i += 1
        # Join continuation lines, unfinished compound commands and here-documents
        # until bash parses the statement on its own.
        while text.endswith("\\") or not complete(text):
            if i >= len(lines):
                raise Failure(f"line {start + 1}: the statement never becomes complete:\n{text}")
            text += "\n" + lines[i]
            i += 1
        out.append((start + 1, text))
    return out


def complete(text: str) -> bool:
    check = subprocess.run(["bash", "-n", "-c", text], capture_output=True, text=True)
    return check.returncode == 0 and "here-document" not in check.stderr


def instrumented(code: str) -> str:
    parts = ["__nl_failed=0"]
    for line, text in statements(code):
        first = text.split("\n", 1)[0]
        parts.append(text)
        parts.append(f"__nl_rc=$?; if [ $__nl_rc -ne 0 ]; then echo {json.dumps(f'block line {line} exited with')} "
                     f"$__nl_rc: {sh_quote(first)} >&2; __nl_failed=1; fi")
    parts.append("exit $__nl_failed")
    return "\n".join(parts) + "\n"


def sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def checkout_view(work: Path, lib_dir: Path) -> Path:
    view = work / "checkout"
    view.mkdir()
    for entry in ROOT.iterdir():
        if entry.name.startswith(("build", ".build")):
            continue
        (view / entry.name).symlink_to(entry)
    (view / "build").mkdir()
    (view / "build" / "lib").symlink_to(lib_dir.resolve())
    return view


def stop_left_nginx(tmp: Path) -> None:
    """Stops an nginx a failed block started from a folder under ``tmp``."""
    for pidfile in tmp.rglob("nginx.pid"):
        try:
            pid = int(pidfile.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        if str(tmp) in cmdline:  # ours: started with a prefix inside our folder
            os.kill(pid, signal.SIGTERM)
            print(f"  stopped an nginx the block left running (pid {pid})")


def run_sh(block: Block, lib_dir: Path, base_url: str) -> None:
    code = block.code.replace(SNIPPET_BASE_URL, base_url)
    if "127.0.0.1:8080" in code:
        raise Failure(f"use exactly {SNIPPET_BASE_URL!r} for the demo server, so the test can point it at its own")
    with tempfile.TemporaryDirectory(prefix="netlayer-docs-") as work_name:
        work = Path(work_name)
        view = checkout_view(work, lib_dir)
        tmp = work / "tmp"
        tmp.mkdir()
        script = work / "block.sh"
        script.write_text(instrumented(code), encoding="utf-8")
        env = dict(os.environ, TMPDIR=str(tmp))
        proc = subprocess.Popen(["bash", str(script)], cwd=view, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=SH_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the block's own process group
            output, _ = proc.communicate()
            stop_left_nginx(tmp)
            raise Failure(f"did not finish within {SH_TIMEOUT} s\n{output}")
        stop_left_nginx(tmp)
        if proc.returncode != 0:
            raise Failure(f"exited with {proc.returncode}\n--- output\n{output}--- block\n{block.code}")
        print("  " + "\n  ".join(output.strip().splitlines()[-6:]))


# ------------------------------------------------------------------------- json


class Library:
    def __init__(self, lib_dir: Path) -> None:
        lib = ctypes.CDLL(str(lib_dir / "libnetlayer.so"))
        vp, cp = ctypes.c_void_p, ctypes.c_char_p
        self.callback_type = ctypes.CFUNCTYPE(None, ctypes.c_uint64, cp, vp)
        lib.nl_client_new.argtypes = [cp, ctypes.POINTER(vp)]
        lib.nl_client_new.restype = vp
        lib.nl_client_free.argtypes = [vp]
        lib.nl_client_free.restype = None
        lib.nl_request.argtypes = [vp, cp]
        lib.nl_request.restype = vp
        lib.nl_request_async.argtypes = [vp, cp, vp, vp]
        lib.nl_request_async.restype = ctypes.c_uint64
        lib.nl_free.argtypes = [vp]
        lib.nl_free.restype = None
        lib.nl_queue_new.argtypes = []
        lib.nl_queue_new.restype = vp
        lib.nl_queue_fd.argtypes = [vp]
        lib.nl_queue_fd.restype = ctypes.c_int
        lib.nl_queue_take.argtypes = [vp]
        lib.nl_queue_take.restype = vp
        lib.nl_queue_free.argtypes = [vp]
        lib.nl_queue_free.restype = None
        lib.nl_websocket_open.argtypes = [vp, cp, vp, ctypes.POINTER(vp)]
        lib.nl_websocket_open.restype = vp
        lib.nl_websocket_free.argtypes = [vp]
        lib.nl_websocket_free.restype = None
        self.lib = lib

    def _string(self, pointer: Optional[int]) -> Any:
        assert pointer, "the library returned NULL"
        try:
            return json.loads(ctypes.string_at(pointer).decode("utf-8"))
        finally:
            self.lib.nl_free(pointer)

    def client_new(self, config: str) -> Tuple[Optional[int], Any]:
        error = ctypes.c_void_p()
        client = self.lib.nl_client_new(config.encode("utf-8"), ctypes.byref(error))
        return client, (self._string(error.value) if error.value else None)

    def with_client(self, base_url: str, use: Callable[[int], Any]) -> Any:
        client, error = self.client_new(json.dumps({"baseURL": base_url}))
        assert client, f"a client for the test server: {error}"
        try:
            return use(client)
        finally:
            self.lib.nl_client_free(client)

    def request(self, client: int, endpoint: str) -> Any:
        return self._string(self.lib.nl_request(client, endpoint.encode("utf-8")))

    def websocket_open(self, client: int, document: str) -> None:
        """nl_websocket_open of the document (no callbacks), freed at once."""
        callbacks = (ctypes.c_void_p * 6)(1)  # nl_websocket_callbacks: version 1, the rest NULL
        error = ctypes.c_void_p()
        ws = self.lib.nl_websocket_open(client, document.encode("utf-8"), ctypes.cast(callbacks, ctypes.c_void_p),
                                        ctypes.byref(error))
        if not ws:
            raise Failure(f"nl_websocket_open refused the document: {self._string(error.value)}")
        self.lib.nl_websocket_free(ws)

    def queue_take(self, client: int, endpoints: List[str]) -> Any:
        """nl_queue_take after nl_request_async of each endpoint with nl_queue_push."""
        queue = self.lib.nl_queue_new()
        push = ctypes.cast(self.lib.nl_queue_push, ctypes.c_void_p)
        try:
            for endpoint in endpoints:
                assert self.lib.nl_request_async(client, endpoint.encode("utf-8"), push, queue)
            taken: List[Any] = []
            deadline = time.monotonic() + 30
            while len(taken) < len(endpoints) and time.monotonic() < deadline:
                select.select([self.lib.nl_queue_fd(queue)], [], [], 1.0)
                taken += self._string(self.lib.nl_queue_take(queue))
            assert len(taken) == len(endpoints), f"the queue gave {len(taken)} of {len(endpoints)} results"
            return taken
        finally:
            self.lib.nl_client_free(client)  # every request has called back before the queue goes
            self.lib.nl_queue_free(queue)


def json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null",
            int: "number", float: "number"}[type(value)]


def documented_names() -> set:
    """Names in code spans or quotes of docs/documents.md's prose (its examples left out)."""
    text = re.sub(r"^```.*?^```", "", DOCUMENTS_MD.read_text(encoding="utf-8"), flags=re.S | re.M)
    return set(re.findall(r"`\"?([A-Za-z_][A-Za-z0-9_]*)\"?`", text)) | set(re.findall(r'"([A-Za-z_]\w*)"', text))


def documented_kinds() -> set:
    text = DOCUMENTS_MD.read_text(encoding="utf-8")
    table = text.split("| kind | when |", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M))


def check_like(example: Dict[str, Any], real: Dict[str, Any], where: str, names: set) -> None:
    """Every key of ``example`` is one the library gives (``real``) or the prose of
    docs/documents.md names, and where ``real`` has it, of the same type."""
    for key, value in example.items():
        if key == ELISION:
            continue
        if key not in real and key not in names:
            raise Failure(f"{where}key {key!r} is neither in a result the library gives "
                          f"nor named in docs/documents.md")
        if key in real and value is not None and real[key] is not None \
                and json_type(value) != json_type(real[key]):
            raise Failure(f"{where}key {key!r} is a {json_type(value)}; the library gives a {json_type(real[key])}")


class JsonChecker:
    def __init__(self, library: Library, base_url: str) -> None:
        self.library, self.base_url = library, base_url
        self.names, self.kinds = documented_names(), documented_kinds()
        ok_doc, fail_doc = library.with_client(base_url, lambda c: (
            library.request(c, '{"path": "movies/1"}'), library.request(c, '{"path": "status/404"}')))
        assert ok_doc["ok"] is True and fail_doc["ok"] is False, (ok_doc, fail_doc)
        self.real = {True: ok_doc, False: fail_doc}
        client, error = library.client_new(json.dumps({"baseURL": base_url}))
        assert client, error
        self.real_queue = library.queue_take(client, ['{"path": "movies/1"}'])

    def check_result(self, doc: Any, where: str = "") -> None:
        if not isinstance(doc, dict) or not isinstance(doc.get("ok"), bool):
            raise Failure(f"{where}a result document is an object with a boolean 'ok'")
        real = self.real[doc["ok"]]
        check_like(doc, real, where, self.names)
        for nested in ("error", "timing"):
            if isinstance(doc.get(nested), dict):
                check_like(doc[nested], real.get(nested) or {}, f"{where}{nested}: ", self.names)
        if doc["ok"] is False:
            kind = (doc.get("error") or {}).get("kind")
            if kind not in self.kinds:
                raise Failure(f"{where}error kind {kind!r} is not in the table of kinds")
        elif "error" in doc:
            raise Failure(f"{where}a success document has no 'error'")

    def check_cassette(self, doc: Dict[str, Any], text: str) -> None:
        """Replays the cassette: each exchange's request gets its recorded answer."""
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "cassette.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            config = json.dumps({"cassette": {"file": path, "mode": "replay"}})
            client, error = self.library.client_new(config)
            if not client:
                raise Failure(f"a replay client refused the cassette: {error}")
            try:
                for n, exchange in enumerate(doc.get("exchanges", [])):
                    request = exchange["request"]
                    endpoint = json.dumps({"path": request["url"], "isFullPath": True, "method": request["method"]})
                    result = self.library.request(client, endpoint)
                    if "response" in exchange:
                        if result.get("status") != exchange["response"]["status"]:
                            raise Failure(f"exchange {n}: replayed {result}, not status {exchange['response']['status']}")
                    elif result.get("ok") or result["error"]["kind"] != exchange["error"]["kind"]:
                        raise Failure(f"exchange {n}: replayed {result}, not error kind {exchange['error']['kind']}")
            finally:
                self.library.lib.nl_client_free(client)

    def check(self, block: Block) -> str:
        text = block.code.replace(SNIPPET_BASE_URL, self.base_url)
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise Failure(f"not valid JSON: {e}")
        if isinstance(doc, list):
            real_keys = set(self.real_queue[0])
            for n, element in enumerate(doc):
                if not isinstance(element, dict) or set(element) != real_keys:
                    raise Failure(f"element {n}: nl_queue_take gives objects with keys {sorted(real_keys)}")
                if not isinstance(element["id"], int):
                    raise Failure(f"element {n}: 'id' is a number")
                self.check_result(element["result"], f"element {n} result: ")
            return "queue"
        if not isinstance(doc, dict):
            raise Failure("expected an object or an array")
        if "ok" in doc:
            self.check_result(doc)
            return "result"
        if "netlayerCassette" in doc:
            self.check_cassette(doc, text)
            return "cassette"
        if "protocols" in doc:
            self.library.with_client(self.base_url, lambda c: self.library.websocket_open(c, text))
            return "websocket"
        if "baseURL" in doc:
            client, error = self.library.client_new(text)
            if not client:
                raise Failure(f"nl_client_new refused the config: {error}")
            self.library.lib.nl_client_free(client)
            return "config"
        result = self.library.with_client(self.base_url, lambda c: self.library.request(c, text))
        if not result["ok"] and result["error"]["kind"] == "invalid_request":
            raise Failure(f"nl_request refused the endpoint: {result['error']['message']}")
        return "endpoint"


# ------------------------------------------------------------------------- main


def main(argv: List[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("sh", "json"):
        print(__doc__.split("\n\n")[1])
        return 2
    lang, lib_dir = argv[1], Path(argv[2])
    base_url = os.environ["NETLAYER_TEST_URL"]
    checker = JsonChecker(Library(lib_dir), base_url) if lang == "json" else None
    passed = skipped = failed = 0
    for path in scope():
        for block in blocks(path, lang):
            reason = block.not_run_reason()
            if reason is not None and lang == "sh":
                if not reason:
                    print(f"FAIL {block.id}: '{NOT_RUN_MARKER}' needs a reason")
                    failed += 1
                else:
                    print(f"skip {block.id}: not run: {reason}")
                    skipped += 1
                continue
            try:
                if checker is not None:
                    what = checker.check(block)
                    print(f"ok   {block.id} ({what})")
                else:
                    print(f"run  {block.id}")
                    run_sh(block, lib_dir, base_url)
                    print(f"ok   {block.id}")
                passed += 1
            except Failure as e:
                print(f"FAIL {block.id}: {e}")
                failed += 1
    print(f"{passed} passed, {skipped} not run, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
