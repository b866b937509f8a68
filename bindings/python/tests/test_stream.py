"""Streaming: Client.stream and Client.astream over per-request callbacks (nl_request_start)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Dict, List

import pytest

import netlayer
from netlayer import _callbacks

SSE = [  # Tests/server/server.py SSE_BODY; the block with only "retry" dispatches nothing,
    # and the last event, not ended by a blank line, is discarded (HTML standard)
    {"event": "tick", "data": "first", "lastEventId": "1"},
    {"event": "message", "data": "two\nlines", "lastEventId": "1"},
    {"event": "message", "data": "crlf", "lastEventId": "3"},
]
LINES = ["first line", "second line", "third", "", "last without newline"]
SLOW = {"path": "stream-bytes/1000000", "query": {"chunk": 1000, "delay_ms": 20}, "stream": "chunks"}


def _sse(events: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{k: e[k] for k in ("event", "data", "lastEventId")} for e in events]


def _settled() -> bool:
    """Every started request has completed (a cancelled one reports back soon)."""
    deadline = time.monotonic() + 2.0
    while _callbacks.pending() and time.monotonic() < deadline:
        time.sleep(0.01)
    return _callbacks.pending() == 0


def _body(n: int) -> bytes:
    return (bytes(range(256)) * (n // 256 + 1))[:n]


def test_sse_events(client: netlayer.Client) -> None:
    stream = client.stream("sse")
    events = list(stream)
    assert _sse(events) == SSE
    assert len({e["id"] for e in events}) == 1 and events[0]["id"] == stream.request_id
    assert stream.response is not None and stream.response.events == 3
    assert _settled()  # the request's callbacks are released with its result


def test_lines(client: netlayer.Client) -> None:
    assert [e["line"] for e in client.stream({"path": "lines", "stream": "lines"})] == LINES


def test_chunks_concatenate_to_the_body(client: netlayer.Client) -> None:
    chunks = [e["chunk"] for e in client.stream("bytes/70000", stream="chunks")]
    assert all(isinstance(c, bytes) for c in chunks)
    assert b"".join(chunks) == _body(70000)


def test_breaking_out_cancels_the_transfer(client: netlayer.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    cancels: List[bool] = []
    original = netlayer.Client._cancel

    def spy(self: netlayer.Client, request_id: int) -> bool:
        cancels.append(original(self, request_id))
        return cancels[-1]

    monkeypatch.setattr(netlayer.Client, "_cancel", spy)
    started = time.monotonic()
    for event in client.stream(SLOW):  # 1000 chunks, 20 ms apart: 20 s if not cancelled
        assert len(event["chunk"]) == 1000
        break
    assert cancels == [True]
    assert time.monotonic() - started < 1.0
    assert _settled()
    assert client.get("json").status == 200


def test_close_and_with_block_cancel(client: netlayer.Client) -> None:
    with client.stream(SLOW) as stream:
        next(stream)
    assert list(stream) == []  # closed: the iteration is over
    stream = client.stream(SLOW)
    next(stream)
    stream.close()
    stream.close()
    assert _settled()


def test_status_error_is_raised(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.StatusError) as caught:
        list(client.stream("status/404"))
    assert caught.value.status == 404


def test_invalid_stream_mode_is_invalid_request(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.InvalidRequestError, match="stream"):
        list(client.stream("sse", stream="frames"))


def test_astream_events_lines_and_chunks(client: netlayer.Client) -> None:
    async def run() -> None:
        assert _sse([e async for e in client.astream("sse")]) == SSE
        lines, chunks = await asyncio.gather(  # two streams at once: dispatched by id
            _collect(client.astream("lines", stream="lines"), "line"),
            _collect(client.astream("bytes/70000", stream="chunks"), "chunk"))
        assert lines == LINES
        assert b"".join(chunks) == _body(70000)

    asyncio.run(run())
    assert _settled()


async def _collect(stream: netlayer.AsyncStream, key: str) -> List[Any]:
    return [event[key] async for event in stream]


def test_astream_break_cancels(client: netlayer.Client) -> None:
    async def run() -> float:
        started = time.monotonic()
        async for event in client.astream(SLOW):
            assert event["chunk"]
            break
        return time.monotonic() - started

    assert asyncio.run(run()) < 1.0
    assert _settled()


def test_astream_task_cancel_and_status_error(client: netlayer.Client) -> None:
    async def run() -> None:
        async def consume() -> None:
            async for _ in client.astream(SLOW):
                pass

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(netlayer.StatusError) as caught:
            async for _ in client.astream("status/404"):
                pass
        assert caught.value.status == 404

    asyncio.run(run())
    assert _settled()


def test_closing_the_client_ends_a_stream_with_cancelled(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url})
    stream = c.stream(SLOW)
    next(stream)
    c.close()
    with pytest.raises(netlayer.CancelledError):
        for _ in stream:
            pass


def test_a_line_past_max_stream_item_bytes_raises_too_large(client: netlayer.Client) -> None:
    huge = {"path": "long-line", "query": {"bytes": 32 << 20}, "stream": "lines"}
    started = time.monotonic()
    with pytest.raises(netlayer.TooLargeError, match="maxStreamItemBytes"):  # 8 MiB by default
        list(client.stream(huge))
    assert time.monotonic() - started < 5.0
    with pytest.raises(netlayer.TooLargeError, match=r"maxStreamItemBytes \(10 bytes\)"):
        list(client.stream("lines", stream="lines", max_stream_item_bytes=10))  # "second line" has 11
    assert [e["line"] for e in client.stream("lines", stream="lines", max_stream_item_bytes=20)] == LINES
    assert client.get("json").status == 200


def test_a_stream_lives_past_its_timeout_while_it_talks_and_ends_when_silent(base_url: str) -> None:
    talking = {"path": "sse-slow", "query": {"count": 16, "interval_ms": 200}}  # 3 s
    silent = {"path": "sse-slow", "query": {"count": 2, "interval_ms": 3000}}
    with netlayer.Client({"baseURL": base_url}, timeout=1) as c:
        assert [e["data"] for e in c.stream(talking)] == [f"tick {i}" for i in range(16)]
        started = time.monotonic()
        seen: List[Dict[str, Any]] = []
        with pytest.raises(netlayer.TimeoutError, match="silence"):
            for event in c.stream(silent):
                seen.append(event)
        assert [e["data"] for e in seen] == ["tick 0"]
        assert 0.9 < time.monotonic() - started < 1.8
        with pytest.raises(netlayer.TimeoutError):
            list(c.stream(talking, deadline=1.5))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def _check_chunks(chunks: List[bytes], total: int) -> None:
    """Every byte of /stream-bytes/<total> (byte k is k % 256), in order."""
    offset = 0
    for chunk in chunks:
        assert chunk[:1] == bytes([offset % 256]) and chunk[-1:] == bytes([(offset + len(chunk) - 1) % 256])
        offset += len(chunk)
    assert offset == total


def test_a_reader_that_falls_behind_pauses_reading_and_loses_nothing(client: netlayer.Client) -> None:
    """A server that sends 64 MB as fast as it can, to a reader that stops for a second:
    the stream's queue stops growing at its bound (the library stops reading, the
    server waits), and once the reader goes on every byte arrives, in order."""
    total = 64_000_000
    stream = client.stream(f"stream-bytes/{total}", stream="chunks")
    chunks = [next(stream)["chunk"]]
    before = _rss_bytes()
    time.sleep(1.0)  # unbounded, the queue would hold the whole body by now
    backlog = stream._backlog
    assert backlog.paused
    assert backlog.events <= backlog.max_events + 64 and backlog.bytes <= backlog.max_bytes + (1 << 20)
    assert _rss_bytes() - before < 32_000_000
    chunks.extend(event["chunk"] for event in stream)
    _check_chunks(chunks, total)
    assert not backlog.paused and backlog.events == 0 and backlog.bytes == 0
    assert _settled()


def test_an_async_reader_that_falls_behind_pauses_reading_too(client: netlayer.Client) -> None:
    total = 16_000_000

    async def read() -> None:
        stream = client.astream(f"stream-bytes/{total}", stream="chunks")
        chunks = [(await stream.__anext__())["chunk"]]
        await asyncio.sleep(1.0)
        backlog = stream._backlog
        assert backlog.paused and backlog.bytes <= backlog.max_bytes + (1 << 20)
        async for event in stream:
            chunks.append(event["chunk"])
        _check_chunks(chunks, total)

    asyncio.run(read())
    assert _settled()


def test_the_queue_bounds_are_keywords(client: netlayer.Client) -> None:
    """max_queue and max_queue_bytes, as for WebSockets: a stream of many small SSE
    events pauses at the event count; every event still arrives."""
    stream = client.stream({"path": "sse-slow", "query": {"count": 3000, "interval_ms": 0}}, max_queue=16)
    events = [next(stream)]
    time.sleep(0.5)
    # A pause from the event callback lets the other events of the read at hand
    # follow (nl_pause): one read is at most 16 KiB, and an event here at least 14
    # bytes ("data: tick 0\n\n"). The 3,000 events are three such reads and more.
    assert stream._backlog.paused and stream._backlog.events <= 16 + 16384 // 14
    events.extend(stream)
    assert len(events) == 3000 and stream.response is not None and stream.response.events == 3000
    for bad in (0, -1, "8", True, 1.5):
        with pytest.raises(netlayer.InvalidRequestError, match="max_queue"):
            next(client.stream("sse", max_queue=bad))  # type: ignore[arg-type]
