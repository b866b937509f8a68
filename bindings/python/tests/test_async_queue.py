"""asyncio over completion queues (nl_queue_*): one queue per client and event loop."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import List

import pytest

import netlayer


def test_many_concurrent_arequests_each_get_their_own_result(client: netlayer.Client) -> None:
    async def run() -> List[netlayer.Response]:
        return await asyncio.gather(*(client.arequest(path="echo", query={"n": i}) for i in range(600)))

    responses = asyncio.run(run())
    assert [r.value["args"]["n"] for r in responses] == [[str(i)] for i in range(600)]
    assert client._pending_async() == 0


def test_acall_goes_through_the_queue(base_url: str) -> None:
    config = {"baseURL": base_url, "endpoints": {"echo": {"path": "echo", "query": {"from": "config"}}}}
    with netlayer.Client(config) as c:
        async def run() -> None:
            response = await c.acall("echo", query={"n": 1})
            assert response.value["args"]["n"] == ["1"]
            with pytest.raises(netlayer.InvalidRequestError, match="no endpoint named"):
                await c.acall("missing")
            assert len(c._queues) == 1

        asyncio.run(run())


def test_results_arrive_while_the_loop_is_busy_and_settle_in_one_wakeup(client: netlayer.Client) -> None:
    async def run() -> int:
        tasks = [asyncio.ensure_future(client.arequest(path="json")) for _ in range(50)]
        await asyncio.sleep(0)  # every request started
        time.sleep(0.5)  # hold the loop: the results pile up in the queue meanwhile
        done, _ = await asyncio.wait(tasks, timeout=0.05)  # one reader wake-up settles them
        return len(done)

    assert asyncio.run(run()) == 50


def test_cancelled_arequests_leave_nothing_behind(client: netlayer.Client) -> None:
    async def run() -> None:
        tasks = [asyncio.ensure_future(client.arequest(path="delay/5000")) for _ in range(20)]
        await asyncio.sleep(0.2)
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) for r in results)
        deadline = time.monotonic() + 2.0
        while client._pending_async() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert client._pending_async() == 0
        assert (await client.arequest(path="json")).status == 200

    asyncio.run(run())


def test_closing_from_another_thread_with_requests_in_flight(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url})

    async def run() -> List[object]:
        tasks = [asyncio.ensure_future(c.arequest(path="delay/5000")) for _ in range(30)]
        await asyncio.sleep(0.2)
        closer = threading.Thread(target=c.close)
        closer.start()
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 3.0)
        closer.join()
        return results

    results = asyncio.run(run())
    assert all(isinstance(r, netlayer.CancelledError) for r in results), results
    assert not c._queues


def test_closing_inside_the_loop_frees_the_queue_at_once(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url})

    async def run() -> None:
        task = asyncio.ensure_future(c.arequest(path="delay/5000"))
        await asyncio.sleep(0.1)
        fd = c._queues[asyncio.get_running_loop()].fd
        c.close()  # settles the task's future itself: no further wake-up of the queue needed
        with pytest.raises(netlayer.CancelledError):
            await asyncio.wait_for(task, 0.5)
        with pytest.raises(OSError):
            os.fstat(fd)  # the queue's descriptor is closed

    asyncio.run(run())


def test_two_event_loops_in_two_threads_share_one_client(client: netlayer.Client) -> None:
    errors: List[BaseException] = []
    counts: List[int] = []

    def worker(tag: int) -> None:
        async def run() -> int:
            responses = await asyncio.gather(
                *(client.arequest(path="echo", query={"t": tag, "i": i}) for i in range(200)))
            for i, r in enumerate(responses):
                assert r.value["args"] == {"t": [str(tag)], "i": [str(i)]}
            return len(responses)

        try:
            counts.append(asyncio.run(run()))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert counts == [200, 200]


def test_queues_of_finished_event_loops_are_freed(client: netlayer.Client) -> None:
    async def run() -> int:
        return (await client.arequest(path="json")).status

    for _ in range(30):
        assert asyncio.run(run()) == 200
    assert len(client._queues) <= 2  # the current loop's and at most one not yet pruned


def test_closing_between_run_until_complete_calls_frees_the_queue(base_url: str) -> None:
    c = netlayer.Client({"baseURL": base_url})
    loop = asyncio.new_event_loop()
    try:
        async def one() -> int:
            return (await c.arequest(path="json")).status

        assert loop.run_until_complete(one()) == 200
        fd = c._queues[loop].fd
        c.close()  # the loop is stopped, not closed: the queue is freed at once
        assert not c._queues
        with pytest.raises(OSError):
            os.fstat(fd)
    finally:
        loop.close()
