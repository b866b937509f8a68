"""close(), use after close, and one client shared by threads."""

from __future__ import annotations

import copy
import gc
import os
import pickle
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import List

import pytest

import netlayer


def test_close_is_idempotent_and_context_manager_closes(base_url: str) -> None:
    with netlayer.Client({"baseURL": base_url}) as c:
        assert not c.closed
        assert c.get("json").status == 200
    assert c.closed
    c.close()
    c.close()


def test_calls_after_close_raise_invalid_request(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url, "endpoints": {"j": {"path": "json"}}})
    c.close()
    for attempt in (lambda: c.get("json"), lambda: c.request({"path": "json"}),
                    lambda: c.call("j"), lambda: c.batch([{"path": "json"}])):
        with pytest.raises(netlayer.InvalidRequestError, match="client is closed"):
            attempt()


def test_a_client_cannot_be_copied_or_pickled(base_url: str) -> None:
    # A copy would share the native handle, and closing or collecting it would free the
    # handle under the original (a crash on the original's next call).
    with netlayer.Client({"baseURL": base_url}) as c:
        for attempt in (lambda: copy.copy(c), lambda: copy.deepcopy(c), lambda: pickle.dumps(c)):
            with pytest.raises(TypeError, match="a Client owns a native handle and cannot be"):
                attempt()
        with c.stream("json", stream="chunks") as stream:
            with pytest.raises(TypeError, match="owns a native handle"):
                copy.copy(stream)
        assert c.get("json").status == 200


def test_close_waits_for_a_blocking_call_in_flight(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url})
    outcome: List[object] = []

    def slow() -> None:
        try:
            outcome.append(c.get("delay/400").value)
        except netlayer.Error as error:
            outcome.append(error)

    worker = threading.Thread(target=slow)
    worker.start()
    time.sleep(0.1)
    c.close()  # returns once the call above has finished with the handle
    worker.join(5)
    assert outcome == [{"delayed": 400}]
    with pytest.raises(netlayer.InvalidRequestError):
        c.get("json")


class _Interrupt(Exception):
    pass


def _raise_interrupt(signum: int, frame: object) -> None:
    raise _Interrupt()


@pytest.mark.parametrize("then", ["close", "collect"])
def test_a_close_interrupted_by_a_signal_is_finished_by_the_call_in_flight(base_url: str, then: str) -> None:
    c = netlayer.Client({"baseURL": base_url})
    outcome: List[object] = []
    worker = threading.Thread(target=lambda: outcome.append(c.get("delay/800").status_code))
    previous = signal.signal(signal.SIGUSR1, _raise_interrupt)
    try:
        worker.start()
        time.sleep(0.1)
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        with pytest.raises(_Interrupt):
            c.close()  # waits for the worker's call: a Ctrl-C ends the wait
    finally:
        signal.signal(signal.SIGUSR1, previous)
    worker.join(5)
    assert outcome == [200] and c.closed
    ended = threading.Event()

    def close_again() -> None:
        if then == "close":
            c.close()
        else:
            gc.collect()
        ended.set()

    if then == "collect":
        # What is left of the client is only the call's, which freed it on its way out.
        del c
    threading.Thread(target=close_again, daemon=True).start()
    assert ended.wait(5), "a close() after an interrupted one never returned"


def test_close_while_threads_keep_calling(base_url: str) -> None:
    # Every call either completes or raises "client is closed"; close() returns once
    # the calls inside the library are out, and nothing touches the freed handle.
    for _ in range(5):
        c = netlayer.Client({"baseURL": base_url})
        seen: List[str] = []

        def worker() -> None:
            while True:  # until the client is closed
                try:
                    assert c.get("json").value["title"] == "Dune"
                    seen.append("ok")
                except netlayer.InvalidRequestError as error:
                    assert "client is closed" in str(error)
                    seen.append("closed")
                    return

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.05)
        c.close()
        for t in threads:
            t.join(10)
            assert not t.is_alive()
        assert "ok" in seen and seen.count("closed") == 4


def test_four_threads_share_one_client(client: netlayer.Client) -> None:
    def worker(n: int) -> List[int]:
        seen = []
        for i in range(50):
            echo = client.get("echo", query={"t": n, "i": i}).value
            seen.append(int(echo["args"]["i"][0]))
            assert echo["args"]["t"] == [str(n)]
        return seen

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(worker, range(4)))
    assert results == [list(range(50))] * 4


def test_threads_and_asyncio_mix_on_one_client(client: netlayer.Client) -> None:
    import asyncio

    async def many() -> int:
        responses = await asyncio.gather(*(client.arequest(path="json") for _ in range(20)))
        return sum(r.status for r in responses)

    with ThreadPoolExecutor(max_workers=4) as pool:
        totals = list(pool.map(lambda _: asyncio.run(many()), range(4)))
    assert totals == [4000] * 4


def test_a_forgotten_client_is_freed_when_collected(base_url: str) -> None:
    import gc

    c = netlayer.Client({"baseURL": base_url})
    assert c.get("json").status == 200
    del c
    gc.collect()  # __del__ closes it; nothing to assert beyond "no crash"
