"""Batches (results in order, errors in place) and named endpoints (call)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Iterator, Tuple

import pytest

import netlayer


@pytest.fixture
def movies_client(base_url: str) -> Iterator[netlayer.Client]:
    config = {
        "baseURL": base_url,
        "endpoints": {
            "movie": {"path": "movies/{id}", "response": {"keyPath": "data"}},
            "echo": {"path": "echo/{a}/{b}", "headers": {"X-Named": "1"}, "query": {"n": 1}},
            "list": {"path": "movies", "response": {"keyPath": "results"}},
        },
    }
    with netlayer.Client(config, timeout=10) as c:
        yield c


def test_batch_returns_results_in_order_with_errors_in_place(client: netlayer.Client) -> None:
    results = client.batch([
        {"path": "delay/200"},
        {"path": "movies/99"},
        {"path": "json", "response": {"keyPath": "title"}},
        {"path": "json", "nope": True},
    ])
    assert len(results) == 4
    first, missing, title, malformed = results
    assert isinstance(first, netlayer.Response) and first.value == {"delayed": 200}
    assert isinstance(missing, netlayer.StatusError) and missing.status == 404
    assert isinstance(title, netlayer.Response) and title.value == "Dune"
    assert isinstance(malformed, netlayer.InvalidRequestError) and "nope" in malformed.message


def test_batch_runs_concurrently(client: netlayer.Client) -> None:
    started = time.monotonic()
    results = client.batch([{"path": "delay/300"}] * 10)
    assert all(isinstance(r, netlayer.Response) for r in results)
    assert time.monotonic() - started < 2.0


def test_empty_batch(client: netlayer.Client) -> None:
    assert client.batch([]) == []


def test_call_fills_params_and_applies_the_named_endpoint(movies_client: netlayer.Client) -> None:
    assert movies_client.call("movie", {"id": 2}).value == {"id": 2, "title": "Arrival"}
    assert [m["id"] for m in movies_client.call("list").value] == [1, 2, 3]


def test_call_merges_overlay_and_encodes_params(movies_client: netlayer.Client) -> None:
    echo = movies_client.call("echo", {"a": "x y/z", "b": True}, query={"m": 2},
                              headers={"X-Extra": "e"}).value
    assert echo["path"] == "/echo/x%20y%2Fz/true"
    assert echo["args"] == {"n": ["1"], "m": ["2"]}
    assert echo["headers"]["x-named"] == "1" and echo["headers"]["x-extra"] == "e"


def test_call_errors(movies_client: netlayer.Client) -> None:
    with pytest.raises(netlayer.StatusError):
        movies_client.call("movie", {"id": 99})
    with pytest.raises(netlayer.InvalidRequestError, match="nosuch"):
        movies_client.call("nosuch")
    with pytest.raises(netlayer.InvalidRequestError, match="id"):
        movies_client.call("movie")


def test_acall_resolves_like_call(movies_client: netlayer.Client) -> None:
    async def both() -> Tuple[Any, Any]:
        overlay = {"query": {"m": 2}, "headers": {"x-named": "2"}}
        params = {"a": "é&?", "b": 1.0}
        synchronous = movies_client.call("echo", params, **overlay).value
        asynchronous = (await movies_client.acall("echo", params, **overlay)).value
        return synchronous, asynchronous

    synchronous, asynchronous = asyncio.run(both())
    for key in ("path", "args", "method"):
        assert synchronous[key] == asynchronous[key]
    assert synchronous["headers"]["x-named"] == asynchronous["headers"]["x-named"] == "2"


def test_acall_errors_match_call(movies_client: netlayer.Client) -> None:
    async def run() -> None:
        assert (await movies_client.acall("movie", {"id": 3})).value["title"] == "Heat"
        with pytest.raises(netlayer.StatusError):
            await movies_client.acall("movie", {"id": 99})
        with pytest.raises(netlayer.InvalidRequestError, match="nosuch"):
            await movies_client.acall("nosuch")
        with pytest.raises(netlayer.InvalidRequestError, match="extra"):
            await movies_client.acall("movie", {"id": 1, "extra": 2})

    asyncio.run(run())
