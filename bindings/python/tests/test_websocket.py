"""WebSockets from Python (Client.websocket / Client.awebsocket) against the servers the
C tests use (Tests/server/ws_servers.py): the `websockets` package's echo server, and a
raw-socket server that misbehaves on purpose."""

from __future__ import annotations

import asyncio
import copy
import gc
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Union

import pytest

import netlayer
from netlayer import _websocket

WS_SERVERS = Path(__file__).resolve().parents[3] / "Tests" / "server" / "ws_servers.py"


def _start(kind: str, tmp: Path) -> Iterator[str]:
    port_file = tmp / "port"
    process = subprocess.Popen(
        [sys.executable, str(WS_SERVERS), kind, "--port", "0", "--port-file", str(port_file),
         "--exit-on-stdin-eof"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while not port_file.exists():
            if process.poll() is not None:
                pytest.fail(f"ws_servers.py {kind} exited with {process.returncode}")
            if time.monotonic() > deadline:
                pytest.fail(f"ws_servers.py {kind} did not write its port within 15 s")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{int(port_file.read_text())}/"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def echo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The `websockets` package's server (paths: echo, protocol, close, large, ...)."""
    yield from _start("echo", tmp_path_factory.mktemp("ws-echo"))


@pytest.fixture(scope="module")
def hostile_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The raw-socket server that breaks the protocol (eof, no-close-reply, status-403, ...)."""
    yield from _start("hostile", tmp_path_factory.mktemp("ws-hostile"))


@pytest.fixture
def echo(echo_url: str) -> Iterator[netlayer.Client]:
    with netlayer.Client(echo_url, timeout=10) as client:
        yield client
    assert _websocket.open_count() == 0  # every handle freed


@pytest.fixture
def hostile(hostile_url: str) -> Iterator[netlayer.Client]:
    with netlayer.Client(hostile_url, timeout=10) as client:
        yield client
    assert _websocket.open_count() == 0


def _states_deleted(states: Any) -> bool:
    """Whether these Python thread states are gone, once their threads' task entries are:
    the kernel removes a thread's entry just after pthread_join returns, so the one
    forget_ended_threads of close() may still have seen it."""
    from netlayer import _callbacks

    _callbacks.forget_ended_threads()
    return not set(states) & {held.state for held in _callbacks._held_states.values()}


def _wait_for(condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


# ---- the blocking form -------------------------------------------------------------------------

def test_echo_text_as_str_and_binary_as_bytes(echo: netlayer.Client) -> None:
    with echo.websocket("echo") as ws:
        assert ws.subprotocol is None
        assert ws.response_headers["Upgrade"].lower() == "websocket"
        ws.send("héllo ✓")
        ws.send(b"\x00\x01\xff")
        ws.send(bytearray(b"ba"))
        ws.send(memoryview(b"mv"))
        ws.send("")
        got = [ws.recv(timeout=5) for _ in range(5)]
    assert got == ["héllo ✓", b"\x00\x01\xff", b"ba", b"mv", ""]
    assert [type(m) for m in got] == [str, bytes, bytes, bytes, str]
    assert ws.close_code == 1000 and ws.close_reason == ""
    assert ws.closed
    with pytest.raises(netlayer.NotConnectedError, match="closed"):
        ws.send("late")


def test_subprotocol_offered_and_the_one_chosen_reported(echo: netlayer.Client) -> None:
    with echo.websocket("protocol", protocols=["nope", "superchat"]) as ws:
        assert ws.subprotocol == "superchat"
        assert ws.recv(timeout=5) == "superchat"  # what the server says it chose
    with echo.websocket("protocol") as ws:
        assert ws.subprotocol is None
        assert ws.recv(timeout=5) == "(none)"


def test_headers_params_cookies_and_auth_reach_the_handshake(echo: netlayer.Client) -> None:
    import json
    with echo.websocket("headers", headers={"X-Trace": "t1"}, cookies={"session": "s1"},
                        auth=("user", "pw")) as ws:
        seen = json.loads(ws.recv(timeout=5))
    assert seen["x-trace"] == "t1"
    assert "session=s1" in seen["cookie"]
    assert seen["authorization"].startswith("Basic ")
    with echo.websocket("close", params={"code": 4002, "reason": "from params"}) as ws:
        assert list(ws) == []
    assert (ws.close_code, ws.close_reason) == (4002, "from params")
    # a query written in the path goes as written (not as part of the path), params after it
    with echo.websocket("close?code=4004&reason=in,path#fragment", params={"x": 1}) as ws:
        assert list(ws) == []
    assert (ws.close_code, ws.close_reason) == (4004, "in,path")


def test_the_debug_log_shows_the_handshake_lines_sent_redacted(echo_url: str, hostile_url: str) -> None:
    # What went out, as for a request: the Upgrade request line and every header line the
    # handshake wrote itself, credentials and cookies redacted; a refused handshake too.
    import json
    seen: List[Dict[str, Any]] = []
    host = echo_url.split("://", 1)[1].strip("/")
    with netlayer.Client(echo_url, log={"level": "debug", "redact": ["X-Key"]}, timeout=10) as client:
        client.on_log(seen.append)
        with client.websocket("headers", params={"token": "TOKEN-SECRET-1", "page": 2}, headers={"X-Key": "KEY-SECRET-2"},
                              cookies={"session": "COOKIE-SECRET-3"}, auth=("user", "PW-SECRET-4"),
                              protocols=["chat"]) as ws:
            assert json.loads(ws.recv(timeout=5))["x-key"] == "KEY-SECRET-2"  # it was sent
    sent = next(event["sent"] for event in seen if event["event"] == "response")
    assert sent[0] == "GET /headers?token=<redacted>&page=2 HTTP/1.1", sent
    for line in (f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                 "Sec-WebSocket-Protocol: chat", "Authorization: <redacted>", "Cookie: <redacted>",
                 "X-Key: <redacted>"):
        assert line in sent, (line, sent)
    assert any(line.startswith("Sec-WebSocket-Key: ") for line in sent), sent
    text = json.dumps(seen)
    for secret in ("TOKEN-SECRET-1", "KEY-SECRET-2", "COOKIE-SECRET-3", "PW-SECRET-4", "dXNlcjpQVy1TRUNSRVQtNA=="):
        assert secret not in text, secret
    refused: List[Dict[str, Any]] = []
    with netlayer.Client(hostile_url, log={"level": "debug"}, timeout=10) as client:
        client.on_log(refused.append)
        with pytest.raises(netlayer.StatusError):
            client.websocket("status-403")
    assert [event["sent"][0] for event in refused if event["event"] == "response"] == ["GET /status-403 HTTP/1.1"]
    # below debug, nothing is kept
    info: List[Dict[str, Any]] = []
    with netlayer.Client(echo_url, log={"level": "info"}, timeout=10) as client:
        client.on_log(info.append)
        with client.websocket("headers") as ws:
            ws.recv(timeout=5)
    assert [event for event in info if event["event"] == "response" and "sent" in event] == []


def test_large_and_fragmented_messages(echo: netlayer.Client) -> None:
    n = 3_000_000
    with echo.websocket("large", params={"bytes": n}) as ws:
        big = ws.recv(timeout=20)
    assert isinstance(big, bytes) and len(big) == n
    assert big == bytes(i % 251 for i in range(n))
    with echo.websocket("fragments") as ws:  # sent by the server in fragments
        assert ws.recv(timeout=5) == "hello world"
        assert ws.recv(timeout=5) == b"\x00\x01\x02\x03\x04"
    text = "".join(chr(ord("a") + i % 26) for i in range(100_000))
    with echo.websocket("echo", fragment_bytes=1000) as ws:  # sent by us in fragments of 1000
        ws.send(text)
        assert ws.recv(timeout=10) == text


def test_close_code_and_reason_from_the_server_end_the_iteration(echo: netlayer.Client) -> None:
    ws = echo.websocket("close", params={"code": 4001, "reason": "see you"})
    try:
        assert list(ws) == []
        assert ws.close_code == 4001
        assert ws.close_reason == "see you"
        with pytest.raises(netlayer.NotConnectedError, match="4001.*see you"):
            ws.recv()
    finally:
        ws.close()


def test_iteration_ends_when_the_connection_closes(echo: netlayer.Client) -> None:
    ws = echo.websocket("echo")
    seen: List[Union[str, bytes]] = []
    ended = threading.Event()

    def read() -> None:
        for message in ws:
            seen.append(message)
        ended.set()

    reader = threading.Thread(target=read)
    reader.start()
    for text in ("a", "b", "c"):
        ws.send(text)
    _wait_for(lambda: len(seen) == 3)
    assert not ended.is_set()
    ws.close(4000, "enough")
    reader.join(10)
    assert ended.is_set() and seen == ["a", "b", "c"]
    assert ws.close_code == 4000 and ws.close_reason == "enough"  # the server echoes the close


def test_recv_timeout_raises_and_the_connection_stays_open(echo: netlayer.Client) -> None:
    with echo.websocket("echo") as ws:
        started = time.monotonic()
        with pytest.raises(netlayer.TimeoutError, match="0.2 s"):
            ws.recv(timeout=0.2)
        assert 0.15 < time.monotonic() - started < 3
        assert not ws.closed
        ws.send("still here")
        assert ws.recv(timeout=5) == "still here"


def test_recv_timeouts_that_are_not_a_wait_are_refused_naming_the_timeout(echo: netlayer.Client) -> None:
    with echo.websocket("echo") as ws:
        for bad in (float("nan"), -1, "5", True):
            with pytest.raises(netlayer.InvalidRequestError, match="recv timeout"):
                ws.recv(timeout=bad)  # type: ignore[arg-type]
        # Past what a wait can take, a timeout is no limit: the message still arrives.
        for endless in (float("inf"), 1e300):
            ws.send("here")
            assert ws.recv(timeout=endless) == "here"
        ws.send("zero")
        _wait_for(lambda: True)
        assert ws.recv(timeout=5) == "zero"

    async def main() -> None:
        async with echo.awebsocket("echo") as ws:
            with pytest.raises(netlayer.InvalidRequestError, match="recv timeout"):
                await ws.recv(timeout=float("nan"))
            await ws.send("there")
            assert await ws.recv(timeout=float("inf")) == "there"

    asyncio.run(main())


def test_a_websocket_cannot_be_copied_or_pickled(echo: netlayer.Client) -> None:
    with echo.websocket("echo") as ws:
        for attempt in (lambda: copy.copy(ws), lambda: copy.deepcopy(ws), lambda: pickle.dumps(ws)):
            with pytest.raises(TypeError, match="owns a native handle"):
                attempt()
        ws.send("still open")
        assert ws.recv(timeout=5) == "still open"


def test_pings_keep_a_quiet_connection_and_an_unanswered_one_fails(echo: netlayer.Client,
                                                                   hostile: netlayer.Client) -> None:
    # The websockets server answers pings on /silent: a 1 s idle_timeout never passes.
    with echo.websocket("silent", ping_interval=0.2, idle_timeout=1) as ws:
        with pytest.raises(netlayer.TimeoutError, match="2.5 s"):
            ws.recv(timeout=2.5)
        assert not ws.closed
    assert ws.close_code == 1000
    # /no-read never answers: after twice the interval the connection fails.
    ws = hostile.websocket("no-read", ping_interval=0.2)
    started = time.monotonic()
    with pytest.raises(netlayer.TimeoutError, match="pingInterval"):
        ws.recv(timeout=10)
    assert 0.3 < time.monotonic() - started < 5
    assert ws.close_code == 1006
    with pytest.raises(netlayer.InvalidRequestError, match="'pingInterval'"):
        echo.websocket("echo", ping_interval=0)


def test_server_that_hangs_up_without_a_close_frame(hostile: netlayer.Client) -> None:
    with hostile.websocket("eof") as ws:
        assert ws.recv(timeout=5) == "bye"  # what came before the hang-up is kept
        with pytest.raises(netlayer.ProtocolError, match="without a close frame"):
            ws.recv(timeout=5)
        assert ws.close_code == 1006


def test_server_that_never_answers_the_close(hostile: netlayer.Client) -> None:
    ws = hostile.websocket("no-close-reply", close_timeout=0.3)
    started = time.monotonic()
    ws.close()
    assert time.monotonic() - started < 5
    assert ws.close_code == 1006
    with pytest.raises(netlayer.TimeoutError, match="closeTimeout"):
        ws.recv()


def test_handshake_failures_raise_the_packages_errors(hostile: netlayer.Client) -> None:
    with pytest.raises(netlayer.StatusError) as status:
        hostile.websocket("status-403")
    assert status.value.status == 403
    with pytest.raises(netlayer.ProtocolError, match="Sec-WebSocket-Accept"):
        hostile.websocket("bad-accept")
    with pytest.raises(netlayer.TimeoutError):
        hostile.websocket("no-answer", timeout=0.3)


def test_a_full_receive_queue_stops_reading_until_the_reader_catches_up(echo: netlayer.Client) -> None:
    # 2000 messages of 1000 random bytes at once. With a queue of 10 messages, reading
    # stops when it fills: at most one read of the library (4 KiB: 4 messages) more.
    with echo.websocket("burst", params={"count": 2000, "bytes": 1000}, max_queue=10) as ws:
        time.sleep(0.5)  # without backpressure all 2000 would be queued by now
        assert 10 <= len(ws._messages) <= 15
        indexes = []
        for message in ws:
            if isinstance(message, str):
                assert message == "sent 2000"
                break
            indexes.append(struct.unpack("!I", message[:4])[0])
            assert len(ws._messages) <= 15
        assert indexes == list(range(2000))  # nothing lost, in order
    # Bounded in bytes too: 20 KB of 1 KB messages.
    with echo.websocket("burst", params={"count": 500, "bytes": 1000}, max_queue=1000,
                        max_queue_bytes=20_000) as ws:
        time.sleep(0.5)
        assert 20 <= len(ws._messages) <= 25
        assert ws._queued_bytes <= 25_000
        count = 0
        for message in ws:
            if isinstance(message, str):
                break
            count += 1
            assert ws._queued_bytes <= 25_000
        assert count == 500


def test_bad_input_names_what_is_wrong(echo: netlayer.Client) -> None:
    with pytest.raises(netlayer.InvalidRequestError, match="'protocols'"):
        echo.websocket("echo", protocols="chat")  # type: ignore[arg-type]
    with pytest.raises(netlayer.InvalidRequestError, match="'protocols'"):
        echo.websocket("echo", protocols=["has space"])
    with pytest.raises(TypeError, match="'path'"):
        echo.websocket(123)  # type: ignore[arg-type]
    with pytest.raises(netlayer.InvalidRequestError, match="'path'"):
        echo.websocket({"path": 123})
    with pytest.raises(netlayer.InvalidRequestError, match="'method'"):
        echo.websocket({"path": "echo", "method": "POST"})
    with pytest.raises(netlayer.InvalidRequestError, match="'max_queue'"):
        echo.websocket("echo", max_queue=0)
    with pytest.raises(netlayer.InvalidRequestError, match="'idleTimeout'"):
        echo.websocket("echo", idle_timeout=-1)
    with pytest.raises(TypeError, match="'params' and 'query'"):
        echo.websocket("echo", params={"a": 1}, query={"a": 2})
    with echo.websocket("echo") as ws:
        with pytest.raises(TypeError, match="str .* or bytes"):
            ws.send(123)  # type: ignore[arg-type]
        with pytest.raises(netlayer.InvalidRequestError, match="close code 1001"):
            ws.close(1001)
        with pytest.raises(netlayer.InvalidRequestError, match="123 bytes"):
            ws.close(1000, "x" * 200)
        with pytest.raises(netlayer.InvalidRequestError, match="UTF-8"):
            ws.send("\ud800")
        ws.send("the connection survived all that")
        assert ws.recv(timeout=5) == "the connection survived all that"
    assert _websocket.open_count() == 0  # the refused ones left no handle behind


def test_a_blocking_handshake_inside_a_hook_of_the_client_is_refused(echo: netlayer.Client) -> None:
    errors: List[BaseException] = []

    @echo.on_adapt
    def adapt(event: Any) -> None:
        try:
            echo.websocket("echo")
        except BaseException as e:
            errors.append(e)

    with echo.websocket("echo") as ws:  # its own handshake runs the hook
        ws.send("ok")
        assert ws.recv(timeout=5) == "ok"
    assert errors and isinstance(errors[0], netlayer.InvalidRequestError)
    assert "deadlock" in str(errors[0])


def test_client_close_ends_open_websockets_and_wakes_their_readers(echo_url: str) -> None:
    client = netlayer.Client(echo_url, timeout=10)
    quiet = client.websocket("silent")
    idle = client.websocket("echo")
    outcome: List[BaseException] = []

    def read() -> None:
        try:
            quiet.recv()
        except BaseException as e:
            outcome.append(e)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.2)
    started = time.monotonic()
    client.close()
    reader.join(10)
    assert time.monotonic() - started < 5
    assert outcome and isinstance(outcome[0], netlayer.CancelledError), outcome
    assert quiet.close_code == 1006 and idle.close_code == 1006
    with pytest.raises(netlayer.CancelledError, match="client was closed"):
        idle.recv()
    with pytest.raises(netlayer.NotConnectedError):
        idle.send("x")
    idle.close()  # nothing left to close: no error
    assert _websocket.open_count() == 0
    with pytest.raises(netlayer.InvalidRequestError, match="client is closed"):
        client.websocket("echo")


def test_a_forgotten_websocket_is_freed_when_collected(echo: netlayer.Client) -> None:
    for _ in range(20):
        ws = echo.websocket("echo")
        ws.send("hi")
        del ws
    gc.collect()
    assert _websocket.open_count() == 0


def test_many_connections_in_turn_leave_no_handle_and_no_descriptor(echo: netlayer.Client) -> None:
    def descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    with echo.websocket("echo") as ws:  # the client's loop and pools exist from here on
        ws.send("warm")
        ws.recv(timeout=5)
    before = descriptors()
    for i in range(100):
        with echo.websocket("echo") as ws:
            ws.send(str(i))
            assert ws.recv(timeout=5) == str(i)
    assert _websocket.open_count() == 0
    assert descriptors() <= before + 2


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="states are kept before Python 3.12 only")
def test_the_library_thread_keeps_its_python_state_while_its_client_is_open(echo_url: str) -> None:
    from netlayer import _callbacks

    client = netlayer.Client(echo_url, timeout=10)
    first = client.websocket("echo")
    second = client.websocket("echo")
    for ws in (first, second):
        ws.send("x")
        assert ws.recv(timeout=5) == "x"
    kept = _callbacks.states_kept_for(client._hooks)
    assert len(kept) == 1  # one event-loop thread for both
    first.close()
    second.close()
    dropped = client.websocket("echo")  # freed unclosed, when collected
    dropped.send("y")
    assert dropped.recv(timeout=5) == "y"
    del dropped
    gc.collect()
    _wait_for(lambda: _websocket.open_count() == 0)
    for i in range(30):  # the same state all along: no thread state made per callback
        with client.websocket("echo") as ws:
            ws.send(str(i))
            assert ws.recv(timeout=5) == str(i)
    assert _callbacks.states_kept_for(client._hooks) == kept
    assert all(_callbacks._held_states[ident].holders > 0 for ident in kept)
    client.close()
    assert _callbacks.states_kept_for(client._hooks) == {}
    _wait_for(lambda: _states_deleted(kept.values()))


def test_threads_python_started_keep_no_state_for_the_library() -> None:
    """A callback the library runs on its caller's thread (inside nl_client_free) must not
    hold that thread's state: Python deletes it when the thread ends."""
    from netlayer import _callbacks

    seen: List[Any] = []
    assert _callbacks.hold_thread_state() is None
    thread = threading.Thread(target=lambda: seen.append(_callbacks.hold_thread_state()))
    thread.start()
    thread.join()
    assert seen == [None]
    assert threading.get_ident() not in _callbacks._held_states


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="states are kept before Python 3.12 only")
def test_a_client_freed_with_open_connections_leaves_no_python_state_behind(echo_url: str) -> None:
    from netlayer import _callbacks

    for _ in range(3):
        client = netlayer.Client(echo_url, timeout=10)
        sockets = [client.websocket("echo") for _ in range(2)]
        for ws in sockets:
            ws.send("x")
            assert ws.recv(timeout=5) == "x"
        kept = _callbacks.states_kept_for(client._hooks)
        assert len(kept) == 1
        client.close()  # frees them unclosed: no on_close on the loop thread
        assert all(ws.closed for ws in sockets)
        _wait_for(lambda: _states_deleted(kept.values()))  # the loop thread ended: its state deleted
    assert _websocket.open_count() == 0


# ---- asyncio ---------------------------------------------------------------------------------

def test_asyncio_echo_iteration_and_close(echo: netlayer.Client) -> None:
    async def main() -> None:
        async with echo.awebsocket("echo", protocols=["chat"]) as ws:
            assert ws.subprotocol == "chat"
            await ws.send("hello")
            await ws.send(b"\x01\x02")
            assert await ws.recv(timeout=5) == "hello"
            assert await ws.recv(timeout=5) == b"\x01\x02"
            with pytest.raises(netlayer.TimeoutError):
                await ws.recv(timeout=0.1)
        assert ws.close_code == 1000
        ws = await echo.awebsocket("close", params={"code": 4003, "reason": "bye"})
        seen = [message async for message in ws]
        assert seen == [] and (ws.close_code, ws.close_reason) == (4003, "bye")
        await ws.close()
        async with echo.awebsocket("burst", params={"count": 300, "bytes": 100}, max_queue=4) as ws:
            got = []
            async for message in ws:
                if isinstance(message, str):
                    break
                got.append(struct.unpack("!I", message[:4])[0])
            assert got == list(range(300))

    asyncio.run(main())


def test_asyncio_readers_do_not_block_the_loop(echo: netlayer.Client) -> None:
    async def main() -> None:
        async with echo.awebsocket("echo") as a, echo.awebsocket("echo") as b:
            ticks = 0

            async def tick() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticker = asyncio.ensure_future(tick())
            waiting = asyncio.ensure_future(a.recv())
            await asyncio.sleep(0.3)
            assert ticks > 5  # the loop ran while `a` waited
            await b.send("to b")
            assert await b.recv(timeout=5) == "to b"
            await a.send("to a")
            assert await asyncio.wait_for(waiting, 5) == "to a"
            ticker.cancel()

    asyncio.run(main())


def test_asyncio_handshake_cancelled_and_failures(hostile: netlayer.Client) -> None:
    async def main() -> None:
        task = asyncio.ensure_future(hostile.awebsocket("no-answer", timeout=20))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert _websocket.open_count() == 0  # the abandoned handshake's handle is freed
        with pytest.raises(netlayer.StatusError):
            await hostile.awebsocket("status-403")
        async with hostile.awebsocket("eof") as ws:
            assert await ws.recv(timeout=5) == "bye"
            with pytest.raises(netlayer.ProtocolError):
                async for _ in ws:
                    pass

    asyncio.run(main())


def test_asyncio_client_close_wakes_the_awaiting_reader(echo_url: str) -> None:
    async def main() -> None:
        client = netlayer.Client(echo_url, timeout=10)
        ws = await client.awebsocket("silent")
        reader = asyncio.ensure_future(ws.recv())
        await asyncio.sleep(0.2)
        client.close()
        with pytest.raises(netlayer.CancelledError):
            await asyncio.wait_for(reader, 5)
        await ws.close()

    asyncio.run(main())
    assert _websocket.open_count() == 0

