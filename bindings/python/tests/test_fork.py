"""A client used on both sides of os.fork(), and under multiprocessing's fork start.

Each scenario runs in its own process (``script_result``); it forks there. The test
server's /echo reports which TCP connection carried the request (``connection``), so
the child can tell that it opened connections of its own.
"""

from __future__ import annotations

from typing import Any, Callable

ScriptResult = Callable[..., Any]  #: the conftest fixture

PRELUDE = """
import asyncio, json, os, sys, threading, time, traceback
import netlayer
from netlayer import _interrupt
URL = os.environ["NETLAYER_TEST_URL"]

def pipe_inode():
    pipe = _interrupt.pipe()
    return None if pipe is None else os.fstat(pipe[0]).st_ino
"""



def test_child_of_fork_uses_the_client_blocking_asyncio_and_hooks(script_result: ScriptResult) -> None:
    out = script_result(PRELUDE + """
c = netlayer.Client({"baseURL": URL}, timeout=10)
hooked = []

@c.on_adapt
def adapt(event):
    hooked.append(os.getpid())
    return {"headers": {"X-Pid": str(os.getpid())}}

async def echo():
    return (await c.arequest(path="echo")).value

parent_connection = c.get("echo").value["connection"]
asyncio.run(echo())                          # the parent has a completion queue too
parent_pipe = pipe_inode()
read_end, write_end = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        blocking = c.get("echo").value
        streamed = [e["line"] for e in c.stream({"path": "lines", "stream": "lines"})]
        asynchronous = asyncio.run(echo())
        report = {
            "blocking_new_connection": blocking["connection"] != parent_connection,
            "async_new_connection": asynchronous["connection"] != parent_connection,
            "hook_in_child": blocking["headers"].get("x-pid") == str(os.getpid()),
            "hook_async": asynchronous["headers"].get("x-pid") == str(os.getpid()),
            "lines": len(streamed),
            "own_pipe": pipe_inode() is not None and pipe_inode() != parent_pipe,
        }
        c.close()
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)
    except BaseException:
        traceback.print_exc()
        os._exit(1)
os.close(write_end)
_, status = os.waitpid(pid, 0)
child = json.loads(os.read(read_end, 65536) or b"{}")
after = c.get("echo").value                  # the parent goes on
parent_async = asyncio.run(echo())
print(json.dumps({"child_status": status, "child": child,
                  "parent_same_connection": after["connection"] == parent_connection,
                  "parent_hook": after["headers"].get("x-pid") == str(os.getpid()),
                  "parent_async": parent_async["path"], "parent_pipe_kept": pipe_inode() == parent_pipe}))
""", timeout=60)
    assert out["child_status"] == 0
    assert out["child"] == {"blocking_new_connection": True, "async_new_connection": True,
                            "hook_in_child": True, "hook_async": True, "lines": 5, "own_pipe": True}
    assert out["parent_same_connection"] is True and out["parent_hook"] is True
    assert out["parent_async"] == "/echo" and out["parent_pipe_kept"] is True


def test_fork_with_a_lock_held_and_requests_in_flight(script_result: ScriptResult) -> None:
    # At the fork another thread holds the client's lock and asyncio requests are in
    # flight: the child gets fresh locks and no pending futures, and its requests work;
    # the parent's requests complete as if nothing happened.
    out = script_result(PRELUDE + """
c = netlayer.Client({"baseURL": URL}, timeout=10)
in_flight = threading.Event()
parent_results = []

def loop_thread():
    async def main():
        tasks = [asyncio.ensure_future(c.arequest(path="delay/500")) for _ in range(5)]
        await asyncio.sleep(0.1)
        in_flight.set()
        parent_results.extend(r.status for r in await asyncio.gather(*tasks))
    asyncio.run(main())

worker = threading.Thread(target=loop_thread)
worker.start()
in_flight.wait(5)
c._lock.acquire()                              # as if a thread were inside close() or a start
pid = os.fork()
if pid == 0:
    try:
        ok = (c._pending_async() == 0 and not c._queues and c._active == 0
              and c.get("json").status == 200
              and asyncio.run(c.arequest(path="json")).status == 200)
        c.close()
        os._exit(0 if ok else 3)
    except BaseException:
        traceback.print_exc()
        os._exit(1)
c._lock.release()
_, status = os.waitpid(pid, 0)
worker.join(10)
print(json.dumps({"child_status": status, "parent": parent_results, "json": c.get("json").status}))
""", timeout=60)
    assert out == {"child_status": 0, "parent": [200] * 5, "json": 200}


def test_fork_while_a_stream_is_held_open_leaves_the_child_a_working_client(script_result: ScriptResult) -> None:
    # A stream kept open (not cancelled) keeps the loop thread at work at the fork. The
    # child once rebuilt its transport with a cast to a protocol, which takes a lock of
    # the Swift runtime that the loop thread could hold at that moment: about one child
    # in ten then hung for ever, whatever its timeout.
    out = script_result(PRELUDE + """
c = netlayer.Client({"baseURL": URL}, timeout=5)
hung = 0
for attempt in range(40):
    stream = c.stream("echo", stream="lines")
    for event in stream:
        break
    pid = os.fork()
    if pid == 0:
        os._exit(0 if c.get("echo").status == 200 else 3)
    for _ in range(100):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        hung += 1
        status = -1
    stream.close()
    if status != 0:
        break
print(json.dumps({"hung": hung, "last_status": status}))
""", timeout=240)
    assert out == {"hung": 0, "last_status": 0}


def test_a_fork_during_a_process_s_first_requests_leaves_the_child_a_working_client(
        script_result: ScriptResult) -> None:
    # The fork comes while the loop thread starts the process's first transfers. A
    # library thread's first use of a lazy static, of generic metadata or of a
    # conformance holds a lock of the Swift runtime; a child forked then had that lock
    # held for ever, and its first request never completed (most runs of this script).
    # The library's threads now reach a safe point before the fork goes ahead.
    script = PRELUDE + """
c = netlayer.Client({"baseURL": URL}, timeout=10)
loop = asyncio.new_event_loop()
tasks = [loop.create_task(c.arequest(path="delay/200")) for _ in range(4)]
loop.run_until_complete(asyncio.sleep(0))    # the requests are started: fork at once
pid = os.fork()
if pid == 0:
    async def child():
        return await asyncio.wait_for(c.arequest(path="json"), 5)
    try:
        os._exit(0 if asyncio.run(child()).status == 200 else 3)
    except BaseException:
        os._exit(1)
_, status = os.waitpid(pid, 0)
parent = [r.status for r in loop.run_until_complete(asyncio.gather(*tasks))]
print(json.dumps({"child_status": status, "parent": parent}))
"""
    results = [script_result(script, timeout=60) for _ in range(6)]
    assert results == [{"child_status": 0, "parent": [200] * 4}] * 6


def test_a_fork_beside_a_log_hook_and_requests_in_flight_is_not_held_up(script_result: ScriptResult) -> None:
    # Before a fork the library's threads get to a safe point, but a thread inside a
    # hook (here waiting for the GIL the forking thread holds), or waiting for such a
    # thread, is at one already: no fork waits the 100 ms a stuck thread would cost.
    out = script_result(PRELUDE + """
c = netlayer.Client({"baseURL": URL, "log": {"level": "info"}}, timeout=10)
logged = []
c.on_log(lambda event: logged.append(event))
durations, children, statuses = [], [], []

async def main():
    for round in range(20):
        tasks = [asyncio.ensure_future(c.arequest(path="json", query={"r": round, "i": i})) for i in range(32)]
        await asyncio.sleep(0.002)
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        durations.append(time.perf_counter() - started)
        children.append(os.waitpid(pid, 0)[1])
        statuses.extend(r.status for r in await asyncio.gather(*tasks))

asyncio.run(main())
print(json.dumps({"slowest": max(durations), "children": children, "statuses": sorted(set(statuses)),
                  "logged": len(logged) > 0}))
""", timeout=60)
    assert out["children"] == [0] * 20 and out["statuses"] == [200] and out["logged"]
    assert out["slowest"] < 0.08, out["slowest"]


def test_multiprocessing_fork_workers_use_the_parents_client(script_result: ScriptResult) -> None:
    out = script_result(PRELUDE + """
import multiprocessing

client = netlayer.Client({"baseURL": URL}, timeout=10)
parent_connection = client.get("echo").value["connection"]

def work(n):
    echo = client.get("echo", query={"n": n}).value
    streamed = asyncio.run(client.arequest(path="echo", query={"n": n})).value
    return [echo["args"]["n"][0], streamed["args"]["n"][0], echo["connection"] != parent_connection]

if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map(work, range(4))
    print(json.dumps({"results": results, "parent": client.get("json").status}))
""", timeout=90)
    assert out["results"] == [[str(n), str(n), True] for n in range(4)]
    assert out["parent"] == 200
