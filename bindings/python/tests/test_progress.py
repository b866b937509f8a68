"""Per-request progress (``on_progress=``) and the exceptions of hooks and callbacks."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Dict, List

import pytest

import netlayer
from netlayer import _callbacks

Event = Dict[str, Any]
BYTES = {"query": {"chunk": 16384, "delay_ms": 10}, "response": {"decoder": "none"}}


def _settled() -> bool:
    deadline = time.monotonic() + 2.0
    while _callbacks.pending() and time.monotonic() < deadline:
        time.sleep(0.01)
    return _callbacks.pending() == 0


def test_a_blocking_request_reports_its_own_progress(client: netlayer.Client) -> None:
    hook_events: List[Event] = []
    client.on_progress(hook_events.append)  # the client-wide hook sees none of them
    events: List[Event] = []
    response = client.get("stream-bytes/100000", on_progress=events.append, **BYTES)
    assert response.status == 200
    downloads = [e for e in events if e["direction"] == "download"]
    assert downloads and downloads[-1]["done"] == 100000
    assert len({e["id"] for e in events}) == 1
    assert hook_events == []
    assert _settled()


def test_concurrent_async_requests_each_see_only_their_progress(client: netlayer.Client) -> None:
    seen: Dict[int, List[Event]] = {n: [] for n in range(4)}

    async def run() -> List[netlayer.Response]:
        return await asyncio.gather(*(
            client.arequest(path=f"stream-bytes/{50000 * (n + 1)}", on_progress=seen[n].append, **BYTES)
            for n in range(4)))

    responses = asyncio.run(run())
    assert [r.status for r in responses] == [200] * 4
    ids = set()
    for n, events in seen.items():
        downloads = [e for e in events if e["direction"] == "download"]
        assert downloads[-1]["done"] == 50000 * (n + 1)
        assert len({e["id"] for e in events}) == 1
        ids.add(events[0]["id"])
    assert len(ids) == 4
    assert _settled()


def test_a_progress_callback_can_cancel(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.CancelledError):
        client.get("stream-bytes/1000000", on_progress=lambda e: {"cancel": True} if e["done"] else None,
                   **BYTES)
    assert client.get("json").status == 200


def test_an_exception_in_a_progress_callback_is_the_cause(client: netlayer.Client) -> None:
    failure = ValueError("no more")

    def progress(event: Event) -> None:
        raise failure

    with pytest.raises(netlayer.InvalidRequestError) as caught:
        client.get("stream-bytes/100000", on_progress=progress, **BYTES)
    assert str(caught.value) == "on_progress callback raised ValueError: no more"
    assert caught.value.__cause__ is failure

    async def run() -> None:
        with pytest.raises(netlayer.InvalidRequestError) as caught:
            await client.arequest(path="stream-bytes/100000", on_progress=progress, **BYTES)
        assert caught.value.__cause__ is failure

    asyncio.run(run())
    assert client.get("json").status == 200


def test_call_and_acall_take_on_progress(base_url: str) -> None:
    config = {"baseURL": base_url, "endpoints": {"blob": {"path": "stream-bytes/{n}", **BYTES}}}
    with netlayer.Client(config) as c:
        events: List[Event] = []
        assert c.call("blob", {"n": 60000}, on_progress=events.append).status == 200
        assert events[-1]["done"] == 60000

        async def run() -> int:
            return (await c.acall("blob", {"n": 30000}, on_progress=events.append)).status

        assert asyncio.run(run()) == 200
        assert events[-1]["done"] == 30000


def test_a_blocking_progress_request_inside_a_hook_fails_clearly(client: netlayer.Client) -> None:
    caught: List[BaseException] = []

    @client.on_adapt
    def adapt(event: Event) -> None:
        if event["url"].endswith("/json"):
            try:
                client.get("text", on_progress=lambda e: None)
            except netlayer.InvalidRequestError as error:
                caught.append(error)

    assert client.get("json").status == 200
    assert len(caught) == 1 and "deadlock" in str(caught[0])


def test_each_async_request_gets_the_exception_its_own_hook_call_raised(client: netlayer.Client) -> None:
    raised: Dict[str, BaseException] = {}

    @client.on_adapt
    def adapt(event: Event) -> None:
        raised[event["url"]] = error = ValueError("same text for all")
        raise error

    async def run() -> List[BaseException]:
        return await asyncio.gather(*(client.arequest(path=f"echo/{n}") for n in range(20)),
                                    return_exceptions=True)

    results = asyncio.run(run())
    for n, result in enumerate(results):
        assert isinstance(result, netlayer.InvalidRequestError)
        assert str(result) == "on_adapt hook raised ValueError: same text for all"
        url = next(u for u in raised if u.endswith(f"/echo/{n}"))
        assert result.__cause__ is raised[url]  # found by request id, not just by text
