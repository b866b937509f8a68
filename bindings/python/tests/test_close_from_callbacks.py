"""close() from inside hooks and callbacks: never a crash, never a deadlock.

Each scenario runs in its own process (``script_result``), so a crash (the library
pushing into a freed completion queue, nl_client_free from a library thread) or a
hang fails the test instead of taking the run down.
"""

from __future__ import annotations

from typing import Any, Callable

ScriptResult = Callable[..., Any]  #: the conftest fixture

PRELUDE = """
import asyncio, json, os, sys, threading, time
import netlayer
URL = os.environ["NETLAYER_TEST_URL"]
"""



def test_close_from_an_adapt_hook_during_a_blocking_request(script_result: ScriptResult) -> None:
    out = script_result(PRELUDE + """
c = netlayer.Client({"baseURL": URL}, timeout=10)
closed_in_hook = []

@c.on_adapt
def adapt(event):
    c.close()                      # on the library's thread, while get() waits
    closed_in_hook.append(c.closed)

response = c.get("delay/200")      # the request in flight still completes
freed_on_return = c._freed          # freed by get() on its way out
try:
    c.get("json")
    after = "no error"
except netlayer.InvalidRequestError as error:
    after = str(error)
c.close()                          # idempotent
print(json.dumps({"status": response.status, "closed_in_hook": closed_in_hook,
                  "freed": freed_on_return, "after": after}))
""", timeout=30)
    assert out == {"status": 200, "closed_in_hook": [True], "freed": True, "after": "client is closed"}


def test_close_from_a_hook_during_call_and_batch(script_result: ScriptResult) -> None:
    out = script_result(PRELUDE + """
results = {}
for how in ("call", "batch"):
    c = netlayer.Client({"baseURL": URL, "endpoints": {"slow": {"path": "delay/100"}}}, timeout=10)
    c.on_adapt(lambda event: c.close())
    if how == "call":
        results[how] = c.call("slow").status
    else:
        results[how] = [r.status for r in c.batch([{"path": "delay/100"}, {"path": "json"}])]
    results[how + "_freed"] = c._freed
print(json.dumps(results))
""", timeout=30)
    assert out == {"call": 200, "call_freed": True, "batch": [200, 200], "batch_freed": True}


def test_close_from_a_hook_with_asyncio_requests_in_flight(script_result: ScriptResult) -> None:
    out = script_result(PRELUDE + """
import netlayer._asyncio as queues
taken = []                        # request ids of every result taken from the queue
original = queues._loads
def counting_loads(raw):
    doc = original(raw)
    if isinstance(doc, list):
        taken.extend(item["id"] for item in doc)
    return doc
queues._loads = counting_loads

c = netlayer.Client({"baseURL": URL}, timeout=10)

@c.on_adapt
def adapt(event):
    if event["url"].endswith("/echo/close"):
        c.close()                 # on the library's thread, 20 requests in flight

async def main():
    slow = [asyncio.ensure_future(c.arequest(path="delay/3000")) for _ in range(20)]
    await asyncio.sleep(0.3)
    trigger = asyncio.ensure_future(c.arequest(path="echo/close"))
    results = await asyncio.wait_for(asyncio.gather(*slow, trigger, return_exceptions=True), 5)
    return [type(r).__name__ for r in results]

started = time.monotonic()
kinds = asyncio.run(main())
elapsed = time.monotonic() - started
time.sleep(3)                     # the crash used to come about 2 s later
print(json.dumps({"kinds": sorted(set(kinds)), "count": len(kinds), "taken": len(taken),
                  "distinct": len(set(taken)), "pending": c._pending_async(), "freed": c._freed,
                  "fast": elapsed < 2.5}))
""", timeout=40)
    assert out["kinds"] == ["CancelledError"] and out["count"] == 21
    assert out["taken"] == out["distinct"] == 21  # every request completed exactly once
    assert out["pending"] == 0 and out["freed"] is True and out["fast"] is True


def test_close_from_a_progress_callback_during_a_blocking_request(script_result: ScriptResult) -> None:
    out = script_result(PRELUDE + """
c = netlayer.Client({"baseURL": URL}, timeout=10)
events = []

def progress(event):
    events.append(event["id"])
    c.close()

response = c.get("stream-bytes/100000", query={"chunk": 16384, "delay_ms": 10},
                 response={"decoder": "none"}, on_progress=progress)
print(json.dumps({"status": response.status, "freed": c._freed, "events": len(set(events))}))
""", timeout=30)
    assert out == {"status": 200, "freed": True, "events": 1}


def test_close_from_progress_callbacks_of_async_requests_and_streams(script_result: ScriptResult) -> None:
    out = script_result(PRELUDE + """
SLOW = {"path": "stream-bytes/1000000", "query": {"chunk": 1000, "delay_ms": 20}}
outcomes = {}

async def with_request():
    c = netlayer.Client({"baseURL": URL}, timeout=10)
    try:
        await c.arequest(SLOW, response={"decoder": "none"}, on_progress=lambda e: c.close())
        outcomes["arequest"] = "completed"
    except netlayer.CancelledError:
        outcomes["arequest"] = "cancelled"
    c.close()                                      # returns once the freeing thread is done
    outcomes["arequest_freed"] = c._freed

async def with_stream():
    c = netlayer.Client({"baseURL": URL}, timeout=10)
    c.on_progress(lambda event: c.close())         # the client-wide hook this time
    events = 0
    try:
        async for event in c.astream(dict(SLOW, stream="chunks", progress=True)):
            events += 1
        outcomes["astream"] = "ended"
    except netlayer.CancelledError:
        outcomes["astream"] = "cancelled"
    outcomes["astream_events"] = events < 1000

def blocking_stream():
    c = netlayer.Client({"baseURL": URL}, timeout=10)
    c.on_progress(lambda event: c.close())
    try:
        for _ in c.stream(dict(SLOW, stream="chunks", progress=True)):
            pass
        outcomes["stream"] = "ended"
    except netlayer.CancelledError:
        outcomes["stream"] = "cancelled"

async def main():
    await asyncio.wait_for(with_request(), 5)
    await asyncio.wait_for(with_stream(), 5)

asyncio.run(main())
blocking_stream()
time.sleep(1)
print(json.dumps(outcomes))
""", timeout=40)
    assert out == {"arequest": "cancelled", "arequest_freed": True, "astream": "cancelled",
                   "astream_events": True, "stream": "cancelled"}


def test_close_from_another_thread_while_a_hook_closes_too(script_result: ScriptResult) -> None:
    # Both close() calls return; the one on an ordinary thread returns once the
    # client is freed, whichever started first.
    out = script_result(PRELUDE + """
c = netlayer.Client({"baseURL": URL}, timeout=10)
in_hook = threading.Event()

@c.on_adapt
def adapt(event):
    in_hook.set()
    time.sleep(0.2)
    c.close()

worker = threading.Thread(target=lambda: c.get("delay/300"))
worker.start()
in_hook.wait(5)
c.close()                                 # waits for the worker's call, then the free
freed = c._freed
worker.join(10)
print(json.dumps({"freed": freed, "worker_done": not worker.is_alive()}))
""", timeout=30)
    assert out == {"freed": True, "worker_done": True}
