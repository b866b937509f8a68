"""Hooks as Python callables: on_adapt, on_retry, on_resolve_error, on_log, on_progress."""

from __future__ import annotations

import asyncio
import base64
import gc
import sys
import threading
import time
import uuid
from typing import Any, Dict, List, Optional

import pytest

import netlayer

Event = Dict[str, Any]


def test_adapt_adds_a_header_the_server_sees(client: netlayer.Client) -> None:
    seen: List[Event] = []

    @client.on_adapt
    def adapt(event: Event) -> Dict[str, Any]:
        seen.append(event)
        return {"headers": {"X-Hooked": "yes"}}

    assert callable(adapt)  # the decorator hands the function back
    echo = client.get("echo/adapt").value
    assert echo["headers"]["x-hooked"] == "yes"
    assert seen[0]["attempt"] == 1 and seen[0]["method"] == "GET"
    assert seen[0]["url"].endswith("/echo/adapt")


def test_adapt_cancel_raises_cancelled(client: netlayer.Client) -> None:
    client.on_adapt(lambda event: {"cancel": True})
    with pytest.raises(netlayer.CancelledError):
        client.get("json")


def test_removing_a_hook_restores_the_default(client: netlayer.Client) -> None:
    client.on_adapt(lambda event: {"cancel": True})
    assert client.on_adapt(None) is None
    assert client.get("json").status == 200


def test_retry_hook_asks_for_a_retry(base_url: str) -> None:
    events: List[Event] = []
    with netlayer.Client({"baseURL": base_url, "retry": {"maxAttempts": 3}}) as c:
        @c.on_retry
        def retry(event: Event) -> Dict[str, Any]:
            events.append(event)
            return {"retry": True}

        r = c.get(f"flaky/{uuid.uuid4().hex}", query={"fails": 1, "status": 503})
    assert r.status == 200 and r.attempts == 2
    assert len(events) == 1
    assert events[0]["attempt"] == 1 and events[0]["error"]["status"] == 503


def test_resolve_error_hook_names_the_failure(client: netlayer.Client) -> None:
    @client.on_resolve_error
    def resolve(error: Event) -> Optional[Dict[str, Any]]:
        if error.get("status") == 418:
            return {"code": "TEAPOT", "message": "no coffee here"}
        return None

    with pytest.raises(netlayer.ResolvedError) as caught:
        client.get("error-json/418", query={"message": "short and stout"})
    assert caught.value.code == "TEAPOT"
    assert caught.value.message == "no coffee here"
    assert caught.value.status == 418
    with pytest.raises(netlayer.StatusError):  # None: not resolved
        client.get("status/404")


def test_log_hook_receives_events(base_url: str) -> None:
    events: List[Event] = []
    with netlayer.Client({"baseURL": base_url, "log": {"level": "info"}}) as c:
        c.on_log(events.append)
        assert c.get("json").status == 200
    kinds = [e["event"] for e in events]
    assert "request" in kinds and "response" in kinds
    response = next(e for e in events if e["event"] == "response")
    assert response["status"] == 200 and response["level"] == "info"


def test_progress_hook_receives_download_progress(client: netlayer.Client) -> None:
    events: List[Event] = []
    client.on_progress(events.append)
    r = client.get("stream-bytes/200000", query={"chunk": 16384, "delay_ms": 20},
                   progress=True, response={"decoder": "none"})
    assert r.status == 200
    downloads = [e for e in events if e["direction"] == "download"]
    assert len(downloads) >= 2
    assert downloads[-1]["done"] == 200000
    assert all(isinstance(e["id"], int) for e in downloads)


def test_progress_hook_can_cancel(client: netlayer.Client) -> None:
    client.on_progress(lambda event: {"cancel": True} if event["done"] > 0 else None)
    with pytest.raises(netlayer.CancelledError):
        client.get("stream-bytes/200000", query={"chunk": 16384, "delay_ms": 20},
                   progress=True, response={"decoder": "none"})


def test_exception_in_adapt_fails_only_that_request(client: netlayer.Client) -> None:
    calls: List[int] = []

    @client.on_adapt
    def adapt(event: Event) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("boom")

    with pytest.raises(netlayer.InvalidRequestError) as caught:
        client.get("json")
    assert str(caught.value) == "on_adapt hook raised ValueError: boom"
    assert isinstance(caught.value.__cause__, ValueError)
    assert client.get("json").status == 200  # the next request is unaffected


def test_exception_in_a_hook_with_asyncio_and_batch(client: netlayer.Client) -> None:
    def adapt(event: Event) -> Dict[str, Any]:
        if event["url"].endswith("/bad"):
            raise KeyError("nope")
        return {}

    client.on_adapt(adapt)

    async def run() -> None:
        with pytest.raises(netlayer.InvalidRequestError, match="on_adapt hook raised KeyError"):
            await client.arequest(path="echo/bad")
        assert (await client.arequest(path="json")).status == 200

    asyncio.run(run())
    results = client.batch([{"path": "json"}, {"path": "echo/bad"}])
    assert isinstance(results[0], netlayer.Response)
    assert isinstance(results[1], netlayer.InvalidRequestError)
    assert "on_adapt hook raised KeyError" in results[1].message


def test_exception_in_retry_hook_names_the_hook(base_url: str) -> None:
    with netlayer.Client({"baseURL": base_url, "retry": {"maxAttempts": 3}}) as c:
        c.on_retry(lambda event: 1 / 0)
        with pytest.raises(netlayer.InvalidRequestError, match="on_retry hook raised ZeroDivisionError"):
            c.get(f"flaky/{uuid.uuid4().hex}", query={"fails": 1, "status": 503})


def test_hook_returning_a_non_dict_fails_clearly(client: netlayer.Client) -> None:
    client.on_adapt(lambda event: ["headers"])
    with pytest.raises(netlayer.InvalidRequestError, match="on_adapt hook raised TypeError: returned list"):
        client.get("json")


def test_exception_in_log_hook_is_printed_and_ignored(base_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    with netlayer.Client({"baseURL": base_url, "log": {"level": "info"}}) as c:
        def log(event: Event) -> None:
            raise RuntimeError("log sink down")

        c.on_log(log)
        assert c.get("json").status == 200
    err = capfd.readouterr().err
    assert "on_log hook" in err and "RuntimeError: log sink down" in err


def test_hooks_survive_close(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url, "log": {"level": "info"}})
    seen = threading.Event()

    def adapt(event: Event) -> None:
        seen.set()

    c.on_adapt(adapt)
    c.on_log(lambda event: None)
    c.on_progress(lambda event: None)

    async def run() -> None:
        task = asyncio.ensure_future(c.arequest(path="delay/2000", progress=True))
        await asyncio.sleep(0.2)
        c.close()
        with pytest.raises(netlayer.CancelledError):
            await task

    asyncio.run(run())
    assert seen.is_set()
    with pytest.raises(netlayer.InvalidRequestError, match="client is closed"):
        c.on_adapt(adapt)
    c.on_adapt(None)  # removing after close is a no-op
    del c
    gc.collect()


def test_on_adapt_can_sign_the_query_and_the_body(client: netlayer.Client) -> None:
    import base64
    import hashlib

    seen = []

    @client.on_adapt
    def sign(event: dict) -> dict:
        body = base64.b64decode(event["body"]) if event["body"] else b""
        seen.append(body)
        return {"headers": {"X-Body-SHA256": hashlib.sha256(body).hexdigest()}, "query": {"signed": 1},
                "body": body + b"!"}

    echo = client.post("echo", body="data", body_encoding="text").value
    assert seen == [b"data"]
    assert echo["body"] == "data!" and echo["query"] == "signed=1"
    assert echo["headers"]["x-body-sha256"] == hashlib.sha256(b"data").hexdigest()


def test_an_adapt_hook_that_changes_the_host_sends_that_hosts_netrc_entry_or_none(base_url: str,
                                                                                  tmp_path: Any) -> None:
    # A .netrc password belongs to the host it was read for: alice's must not follow the
    # request to another host, which gets its own entry (bob's) or none.
    port = base_url.rstrip("/").rsplit(":", 1)[1]
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login alice password ALICEPW\nmachine api.other.test login bob password BOBPW\n")
    netrc.chmod(0o600)

    def sent_user(client: netlayer.Client, host: str, own: Any = None) -> Any:
        def move(event: Dict[str, Any]) -> Dict[str, Any]:
            reply: Dict[str, Any] = {"url": f"http://{host}:{port}/echo"}
            if own:
                reply["headers"] = {"Authorization": own}
            return reply
        client.on_adapt(move)
        lines = dict((k.lower(), v) for k, v in client.get("moved").value["headerLines"])
        auth = lines.get("authorization")
        return base64.b64decode(auth.split()[1]).decode() if auth and auth.startswith("Basic ") else auth

    with netlayer.Client({"baseURL": base_url, "auth": {"netrc": str(netrc)}, "adaptMayChangeOrigin": True,
                          "resolve": [f"api.other.test:{port}:127.0.0.1", f"unlisted.test:{port}:127.0.0.1"]}) as c:
        assert c.get("echo").value["method"] == "GET"
        assert sent_user(c, "api.other.test") == "bob:BOBPW"
        assert sent_user(c, "unlisted.test") is None
        assert sent_user(c, "unlisted.test", own="Bearer mine") == "Bearer mine"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="states are kept before Python 3.12 only")
def test_a_library_thread_keeps_one_python_state_for_its_hooks_until_the_client_closes(base_url: str) -> None:
    # One state per library thread, not one per callback: creating and deleting one
    # takes CPython's runtime lock, which a fork() must not find held (gh-112275).
    from netlayer import _callbacks

    local = threading.local()
    seen: List[Any] = []

    def on_log(event: Event) -> None:
        local.count = getattr(local, "count", 0) + 1  # lasts only while the thread's state does
        seen.append((threading.get_ident(), local.count))

    client = netlayer.Client({"baseURL": base_url, "log": {"level": "info"}}, timeout=10)
    client.on_log(on_log)

    async def main() -> None:
        for round in range(3):
            await asyncio.gather(*(client.arequest(path="json", query={"r": round, "i": i}) for i in range(10)))

    asyncio.run(main())
    counts: Dict[int, List[int]] = {}
    for ident, count in seen:
        if ident != threading.get_ident():
            counts.setdefault(ident, []).append(count)
    assert counts and sum(len(c) for c in counts.values()) >= 30, seen
    for thread_counts in counts.values():
        assert thread_counts == list(range(1, len(thread_counts) + 1))
    kept = _callbacks.states_kept_for(client._hooks)
    assert set(counts) <= set(kept)  # (a thread that ran only other callbacks too)
    assert all(_callbacks._held_states[ident].holders > 0 for ident in kept)
    client.close()
    # Its threads ended: their states deleted (once the kernel dropped their task entries,
    # just after nl_client_free joined them).
    deadline = time.monotonic() + 10
    while set(kept.values()) & {held.state for held in _callbacks._held_states.values()}:
        assert time.monotonic() < deadline
        time.sleep(0.01)
        _callbacks.forget_ended_threads()
