"""asyncio: arequest over nl_request_async, concurrency and cancellation."""

from __future__ import annotations

import asyncio
import time
from typing import List

import pytest

import netlayer


def test_arequest_returns_a_response(client: netlayer.Client) -> None:
    async def run() -> netlayer.Response:
        return await client.arequest({"path": "json", "response": {"keyPath": "title"}})

    assert asyncio.run(run()).value == "Dune"


def test_arequest_raises_the_error_subclass(client: netlayer.Client) -> None:
    async def run() -> None:
        with pytest.raises(netlayer.StatusError) as caught:
            await client.arequest(path="status/418")
        assert caught.value.status == 418
        with pytest.raises(netlayer.InvalidRequestError, match="bogus"):
            await client.arequest({"bogus": 1})

    asyncio.run(run())


def test_twenty_delayed_requests_run_concurrently(client: netlayer.Client) -> None:
    async def run() -> List[netlayer.Response]:
        return await asyncio.gather(*(client.arequest({"path": "delay/300"}) for _ in range(20)))

    started = time.monotonic()
    responses = asyncio.run(run())
    elapsed = time.monotonic() - started
    assert [r.value for r in responses] == [{"delayed": 300}] * 20
    assert elapsed < 2.0, f"20 x 300 ms took {elapsed:.2f} s"


def test_cancelling_the_task_cancels_the_request(client: netlayer.Client,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    cancels: List[bool] = []
    original = netlayer.Client._cancel

    def spy(self: netlayer.Client, request_id: int) -> bool:
        result = original(self, request_id)
        cancels.append(result)
        return result

    monkeypatch.setattr(netlayer.Client, "_cancel", spy)

    async def run() -> float:
        task = asyncio.ensure_future(client.arequest({"path": "delay/5000"}))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        elapsed = time.monotonic() - started
        deadline = time.monotonic() + 1.0  # the library's "cancelled" result arrives soon
        while client._pending_async() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert client._pending_async() == 0  # and its queue entry is gone
        return elapsed

    assert asyncio.run(run()) < 1.0
    assert cancels == [True]  # nl_cancel found the request in flight
    assert client.get("json").status == 200


def test_wait_for_timeout_cancels_the_request(client: netlayer.Client) -> None:
    async def run() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.arequest(path="delay/5000"), 0.2)
        assert (await client.arequest(path="json")).status == 200

    started = time.monotonic()
    asyncio.run(run())
    assert time.monotonic() - started < 1.5


def test_closing_the_client_completes_pending_requests_as_cancelled(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url})

    async def run() -> None:
        task = asyncio.ensure_future(c.arequest({"path": "delay/5000"}))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        c.close()
        with pytest.raises(netlayer.CancelledError):
            await task
        assert time.monotonic() - started < 1.0

    asyncio.run(run())


def test_arequest_after_close_raises(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url})
    c.close()

    async def run() -> None:
        with pytest.raises(netlayer.InvalidRequestError, match="client is closed"):
            await c.arequest(path="json")

    asyncio.run(run())
    assert c._pending_async() == 0 and not c._queues  # nothing left registered


def test_one_client_serves_several_event_loops(client: netlayer.Client) -> None:
    async def run() -> int:
        return (await client.arequest(path="json")).status

    assert [asyncio.run(run()) for _ in range(3)] == [200, 200, 200]
