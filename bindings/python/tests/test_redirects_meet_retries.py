"""Where redirects, retries and streamed or file bodies meet: what a request repeats,
and what it must not, compared with what curl and urllib3 do."""

from __future__ import annotations

import os
import pathlib
import socket
import threading
import time
from typing import Callable, Dict, Iterator, List

import pytest

import netlayer

Handler = Callable[[socket.socket, str], None]


class RawServer:
    """Answers each request with the handler registered for its path (the bytes it
    writes are the test's to choose); records the request lines it saw."""

    def __init__(self, routes: Dict[str, Handler]) -> None:
        self.routes = routes
        self.seen: List[str] = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(10)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    data += chunk
            except OSError:
                return
            line = data.split(b"\r\n", 1)[0].decode("latin-1")
            self.seen.append(line)
            path = line.split(" ")[1].split("?")[0]
            self.routes[path](connection, line)

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest.fixture
def raw_server() -> Iterator[Callable[[Dict[str, Handler]], RawServer]]:
    made: List[RawServer] = []

    def make(routes: Dict[str, Handler]) -> RawServer:
        made.append(RawServer(routes))
        return made[-1]

    yield make
    for server in made:
        server.close()


def _wait_for_close(connection: socket.socket, seconds: float = 10) -> None:
    connection.settimeout(seconds)
    try:
        while connection.recv(4096):
            pass
    except OSError:
        pass


def test_a_stream_that_delivered_events_is_not_retried(raw_server: Callable[[Dict[str, Handler]], RawServer]) -> None:
    # Events cannot be taken back: a retry would hand the caller the same lines again
    # (curl does not retry once it has written output it cannot rewind).
    def stalled(connection: socket.socket, _: str) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                           b"7\r\nline-1\n\r\n7\r\nline-2\n\r\n")
        _wait_for_close(connection)

    server = raw_server({"/s": stalled})
    lines: List[str] = []
    with netlayer.Client(server.url + "/", retry={"max_attempts": 3, "backoff": 0.05}) as client:
        with pytest.raises(netlayer.TimeoutError) as caught:
            for event in client.stream("s", stream="lines", timeout=0.5):
                lines.append(event["line"])
    assert lines == ["line-1", "line-2"]
    assert caught.value.attempts == 1 and len(server.seen) == 1


def test_a_followed_redirect_hands_its_body_to_no_stream(raw_server: Callable[[Dict[str, Handler]], RawServer]) -> None:
    # With 3xx acceptable and redirects followed, the 302 is not the answer: its body
    # is not streamed before the final response's.
    def found(connection: socket.socket, _: str) -> None:
        body = b"data: FROM-THE-302\n\n"
        connection.sendall(b"HTTP/1.1 302 Found\r\nLocation: /final\r\nContent-Type: text/event-stream\r\n"
                           b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)

    def final(connection: socket.socket, _: str) -> None:
        body = b"data: final\n\n"
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                           b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)

    server = raw_server({"/r": found, "/final": final})
    with netlayer.Client(server.url + "/", acceptableStatus=[[200, 399]]) as client:
        for mode, key in (("lines", "line"), ("sse", "data")):
            events = [event[key] for event in client.stream("r", stream=mode) if key in event]
            assert events == (["data: final", ""] if mode == "lines" else ["final"]), (mode, events)


def test_a_307_that_must_repeat_a_fifo_body_fails_at_once(tmp_path: pathlib.Path,
                                                          raw_server: Callable[[Dict[str, Handler]], RawServer]) -> None:
    # A FIFO cannot be read again: curl -L -T fifo fails at once (exit 65) rather than
    # wait for a writer that may send other bytes.
    def temporary(connection: socket.socket, _: str) -> None:
        time.sleep(0.3)  # the 120 bytes are sent by then
        connection.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /again\r\nContent-Length: 0\r\n"
                           b"Connection: close\r\n\r\n")

    server = raw_server({"/up": temporary})
    fifo = tmp_path / "body.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as writer:
            writer.write(b"x" * 120)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    started = time.monotonic()
    with netlayer.Client(server.url + "/") as client:
        with pytest.raises(netlayer.IOError, match=r"307 redirect repeats the request, but its body comes from "
                                                    r".*body\.fifo', a FIFO, which cannot be read again"):
            client.post("up", upload_from=fifo, timeout=10)
    assert time.monotonic() - started < 5
    assert [line.split(" ")[1] for line in server.seen] == ["/up"]
    writer.join(5)


def test_a_location_that_is_only_a_fragment_keeps_the_path_and_query(
        raw_server: Callable[[Dict[str, Handler]], RawServer]) -> None:
    # RFC 3986 5.2.2: "#frag" resolves against the request's own path and query, as
    # requests resolves it (libcurl before 8.8 went to "/").
    def to_fragment(connection: socket.socket, _: str) -> None:
        connection.sendall(b"HTTP/1.1 302 Found\r\nLocation: #frag\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    server = raw_server({"/page": to_fragment, "/": to_fragment})
    with netlayer.Client(server.url + "/", maxRedirects=1) as client:
        with pytest.raises(netlayer.Error, match="too many redirects"):
            client.get("page", params={"q": "1"})
    assert [line.split(" ")[1] for line in server.seen] == ["/page?q=1", "/page?q=1"]


def test_repeated_location_fields_are_one_url_or_refused(raw_server: Callable[[Dict[str, Handler]], RawServer]) -> None:
    # RFC 9110 10.2.2: Location is one URI reference. Joined with ", " two fields made a
    # URL no server meant (/json,%20/echo); the same one twice is that one.
    def redirect(*targets: bytes) -> Handler:
        def answer(connection: socket.socket, _: str) -> None:
            fields = b"".join(b"Location: %s\r\n" % target for target in targets)
            connection.sendall(b"HTTP/1.1 302 Found\r\n" + fields + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        return answer

    def final(connection: socket.socket, _: str) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
                           b"Connection: close\r\n\r\nok")

    server = raw_server({"/same": redirect(b"/final", b"/final"), "/differ": redirect(b"/final", b"/other"),
                         "/final": final})
    with netlayer.Client(server.url + "/") as client:
        assert client.get("same").text == "ok"
        with pytest.raises(netlayer.ProtocolError, match="several differing Location fields"):
            client.get("differ")
