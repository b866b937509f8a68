"""Ctrl-C during a blocking call: KeyboardInterrupt at once, and the transfer cancelled.

The child process makes the blocking call; the test sends it SIGINT. A small server
in this process (a plain socket: it reads the request, never answers, and notes when
the client closes the connection) shows that the transfer was really stopped.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import pytest

CHILD = """
import json, os, signal, sys, time
import netlayer
URL = os.environ["NETLAYER_TEST_URL"]
MODE = sys.argv[1]
# Ctrl-C raises KeyboardInterrupt, as in a terminal, also when the suite was started in
# the background by a shell without job control, whose children inherit SIGINT ignored
# (and Python then installs no handler for it).
signal.signal(signal.SIGINT, signal.default_int_handler)
if MODE.startswith("asyncio"):
    # An asyncio loop that handles a signal installs its wakeup fd while it does, and
    # drops every wakeup fd when it stops: the package's pipe must come back.
    import asyncio
    async def handling_signals():
        global c
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, lambda: None)
        if MODE == "asyncio_first":   # the package's first client, made inside the loop
            c = netlayer.Client({"baseURL": URL}, timeout=30)
        await c.aget("json")
        loop.remove_signal_handler(signal.SIGTERM)
    if MODE == "asyncio_after":
        c = netlayer.Client({"baseURL": URL}, timeout=30)
        c.get("json")
    asyncio.run(handling_signals())
else:
    c = netlayer.Client({"baseURL": URL}, timeout=30)
if MODE == "usr1":
    signal.signal(signal.SIGUSR1, lambda signum, frame: None)   # a handler that does not raise
if MODE == "close":
    signal.signal(signal.SIGUSR1, lambda signum, frame: c.close())
print("ready", flush=True)
started = time.monotonic()
outcome = {}
try:
    if MODE == "progress":
        c.get("hold", on_progress=lambda event: None)
    else:
        c.get("hold")
    outcome["result"] = "returned"
except KeyboardInterrupt:
    outcome["result"] = "KeyboardInterrupt"
except netlayer.CancelledError as error:
    outcome["result"] = "CancelledError"
    outcome["message"] = error.message
returned = time.monotonic()
sent = float(sys.stdin.readline())             # when the test sent the signal (CLOCK_MONOTONIC)
outcome["after_signal"] = returned - sent
if MODE == "close":
    outcome["freed"] = c._freed
elif MODE != "progress":
    outcome["json"] = c.get("json").status   # still usable
print(json.dumps(outcome), flush=True)
"""


class HoldingServer:
    """Accepts connections, reads a request head, never answers; records closes."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/"
        self.closed_at: List[float] = []
        self.requests = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            ready, _, _ = select.select([self.listener], [], [], 0.05)
            if ready:
                connection, _ = self.listener.accept()
                threading.Thread(target=self._hold, args=(connection,), daemon=True).start()

    def _hold(self, connection: socket.socket) -> None:
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = connection.recv(4096)
                if not chunk:
                    return
                data += chunk
            self.requests += 1
            if data.startswith(b"GET /json"):
                body = b'{"id":1}'
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                   + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
                return
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # until the client hangs up
                ready, _, _ = select.select([connection], [], [], 0.05)
                if ready and not connection.recv(4096):
                    self.closed_at.append(time.monotonic())
                    return

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self.listener.close()


@pytest.fixture
def holding_server() -> Iterator[HoldingServer]:
    server = HoldingServer()
    try:
        yield server
    finally:
        server.close()


def _interrupt(server: HoldingServer, mode: str, signum: int) -> Dict[str, object]:
    env = dict(os.environ, NETLAYER_TEST_URL=server.url)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD), mode], env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=str(Path(__file__).parent))
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 10
        while server.requests == 0 and time.monotonic() < deadline:  # the request is in flight
            time.sleep(0.01)
        time.sleep(0.5)
        sent = time.monotonic()
        child.send_signal(signum)
        child.stdin.write(f"{sent}\n")
        child.stdin.flush()
        out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    outcome: Dict[str, object] = json.loads(out.strip().splitlines()[-1])
    closed: Optional[float] = server.closed_at[0] if server.closed_at else None
    outcome["closed_after_signal"] = None if closed is None else closed - sent
    return outcome


def test_ctrl_c_interrupts_a_blocking_request_within_half_a_second(holding_server: HoldingServer) -> None:
    outcome = _interrupt(holding_server, "plain", signal.SIGINT)
    assert outcome["result"] == "KeyboardInterrupt", outcome
    assert outcome["after_signal"] < 0.5, outcome          # not the 30 s timeout
    closed = outcome["closed_after_signal"]
    assert closed is not None and closed < 1.0, outcome    # the transfer was cancelled
    assert outcome["json"] == 200                          # and the client goes on working


def test_ctrl_c_interrupts_a_blocking_request_with_a_progress_callback(holding_server: HoldingServer) -> None:
    outcome = _interrupt(holding_server, "progress", signal.SIGINT)
    assert outcome["result"] == "KeyboardInterrupt", outcome
    assert outcome["after_signal"] < 0.5, outcome
    closed = outcome["closed_after_signal"]
    assert closed is not None and closed < 1.0, outcome


@pytest.mark.parametrize("mode", ["asyncio_after", "asyncio_first"])
def test_ctrl_c_still_interrupts_after_an_asyncio_loop_handled_signals(holding_server: HoldingServer,
                                                                      mode: str) -> None:
    outcome = _interrupt(holding_server, mode, signal.SIGINT)
    assert outcome["result"] == "KeyboardInterrupt", outcome
    assert outcome["after_signal"] < 0.5, outcome


def test_a_signal_whose_handler_does_not_raise_ends_the_call_as_cancelled(holding_server: HoldingServer) -> None:
    outcome = _interrupt(holding_server, "usr1", signal.SIGUSR1)
    assert outcome["result"] == "CancelledError", outcome
    assert outcome["after_signal"] < 0.5, outcome
    assert outcome["json"] == 200


def test_a_wakeup_fd_of_the_program_is_left_alone(
        run_script: Callable[..., "subprocess.CompletedProcess[str]"]) -> None:
    process = run_script("""
import os, signal, socket
import netlayer
from netlayer import _interrupt
mine, other = socket.socketpair()
mine.setblocking(False)
signal.set_wakeup_fd(mine.fileno())
c = netlayer.Client({"baseURL": os.environ["NETLAYER_TEST_URL"]})
assert c.get("json").status == 200
assert signal.set_wakeup_fd(-1) == mine.fileno()   # still the program's
assert _interrupt.pipe() is None and _interrupt.armed
print("ok")
""")
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == "ok"


def test_a_signal_handler_that_closes_the_client_during_a_blocking_call(holding_server: HoldingServer) -> None:
    # The handler runs as the interrupted call returns, before it has left the client:
    # close() must not wait for that call (it would wait forever) but let it free the
    # client on its way out.
    outcome = _interrupt(holding_server, "close", signal.SIGUSR1)
    assert outcome["result"] == "CancelledError", outcome
    assert outcome["after_signal"] < 0.5, outcome
    assert outcome["freed"] is True
