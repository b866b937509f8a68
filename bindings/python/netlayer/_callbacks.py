"""Python code the library runs on its threads: who is inside a callback, and requests
started with callbacks of their own (nl_request_start / nl_call_start).

Inside a callback
    Every ctypes callback of the package (hooks, and the callbacks below) marks the
    library thread it runs on with ``enter(owner)`` ... ``leave()``, where ``owner`` is
    the client's hook table. ``inside(owner)`` then tells ``Client.close()`` and the
    blocking calls that they run on a library thread, where nl_client_free does
    nothing and waiting for a result would deadlock.

A library thread's Python thread state
    ctypes gives a thread Python did not start a new Python thread state for each
    callback and deletes it after. That costs about as much as the rest of a WebSocket
    message's delivery, and both steps take CPython's runtime lock: on releases without
    the fix of gh-112275 (3.11.7 among them), a fork() while a library thread holds it
    leaves the child stuck in PyOS_AfterFork_Child. So a library thread's first callback
    of a client keeps its state (``enter`` calls ``hold_thread_state``, one more
    reference with PyGILState_Ensure) until the client is freed
    (``release_states_kept_for``): the thread's later callbacks create and delete no
    state, and its ``threading.local`` data lasts. Given back from the freeing thread,
    a state stays until the thread holds it again, or, once the thread has ended (as a
    freed client's threads have), until ``forget_ended_threads`` deletes it. Only
    before Python 3.12: from 3.12 on, PyThreadState_Delete of another thread's state
    also clears the calling thread's own PyGILState binding, so an ended thread's state
    could not be given back, and no state is kept (``KEEPS_STATES``; 3.12 has the fork
    fix).

Per-request callbacks
    A request started through ``start`` carries an integer key as user_data; the key
    leads to its ``Request`` in ``_requests``, so its progress and stream events reach
    the code that started it whether they arrive before or after nl_request_start has
    returned the id. ``on_complete`` takes the entry out: it runs exactly once, after
    every event. The three C callback objects live at module level, so they outlive
    every client and every request.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import sys
import threading
from typing import Any, Dict, List, Optional

from . import _json
from ._documents import endpoint_name
from ._errors import Error
from ._lib import NL_CALLBACK, NL_EVENT_FN, REQUEST_CALLBACKS_VERSION, RequestCallbacks, borrowed_string, lib

__all__ = ["enter", "leave", "inside", "hold_thread_state", "release_thread_state", "release_states_kept_for",
           "forget_ended_threads", "held_thread_states",
           "Request", "start", "pending", "after_fork_in_child"]

_local = threading.local()


def enter(owner: object) -> None:
    """Marks this thread as running a callback of ``owner`` (until ``leave``). The
    first callback on a thread state keeps that state for ``owner``, the client's hook
    table (see above): a library thread's later callbacks find ``_local`` as it was."""
    stack: Optional[List[object]] = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
        if KEEPS_STATES:
            _keep_state_for(owner)
    stack.append(owner)


def leave() -> None:
    """Ends the innermost ``enter`` of this thread."""
    _local.stack.pop()


def inside(owner: Optional[object] = None) -> bool:
    """Whether this thread runs a callback of ``owner`` (of any client when None)."""
    stack: Optional[List[object]] = getattr(_local, "stack", None)
    if not stack:
        return False
    return owner is None or any(item is owner for item in stack)


_gil_ensure = ctypes.pythonapi.PyGILState_Ensure
_gil_ensure.argtypes = []
_gil_ensure.restype = ctypes.c_int
_gil_release = ctypes.pythonapi.PyGILState_Release
_gil_release.argtypes = [ctypes.c_int]
_gil_release.restype = None
_this_thread_state = ctypes.pythonapi.PyGILState_GetThisThreadState
_this_thread_state.argtypes = []
_this_thread_state.restype = ctypes.c_void_p
_clear_thread_state = ctypes.pythonapi.PyThreadState_Clear
_clear_thread_state.argtypes = [ctypes.c_void_p]
_clear_thread_state.restype = None
_delete_thread_state = ctypes.pythonapi.PyThreadState_Delete
_delete_thread_state.argtypes = [ctypes.c_void_p]
_delete_thread_state.restype = None


class _HeldState:
    """A library thread's Python state kept for its holders."""
    __slots__ = ("token", "holders", "state", "native_id")

    def __init__(self, token: int, state: int) -> None:
        self.token = token  # what PyGILState_Ensure returned, for PyGILState_Release
        self.holders = 1
        self.state = state  # the PyThreadState, to tell a later thread with the same ident
        self.native_id = threading.get_native_id()  # its /proc/self/task entry


#: thread ident -> the state kept for it
_held_states: Dict[int, _HeldState] = {}
_held_lock = threading.Lock()


#: Whether library threads keep their Python thread state while in use (see above).
KEEPS_STATES = sys.version_info < (3, 12)


def hold_thread_state() -> Optional[int]:
    """Called in a callback on a library thread: keeps that thread's Python thread state
    until as many ``release_thread_state`` calls; returns the thread's ident (None
    when states are not kept)."""
    if not KEEPS_STATES:
        return None
    ident = threading.get_ident()
    if _started_by_python(ident):
        return None  # its state is Python's own, deleted by Python when the thread ends
    state = _this_thread_state()
    ended = None
    with _held_lock:
        held = _held_states.get(ident)
        if held is not None and held.state == state:
            held.holders += 1
        else:
            if held is not None:  # a thread that had this ident has ended (idents of live threads differ)
                ended = held.state
            _held_states[ident] = _HeldState(_gil_ensure(), state)
    if ended is not None:
        _delete_ended(ended)
    return ident


#: owner (a client's hook table) -> the library threads whose state is kept for it
_kept_for: Dict[object, List[int]] = {}


def _keep_state_for(owner: object) -> None:
    """Keeps this thread's state until ``release_states_kept_for(owner)``."""
    ident = hold_thread_state()
    if ident is not None:
        with _held_lock:
            _kept_for.setdefault(owner, []).append(ident)


def release_states_kept_for(owner: object) -> None:
    """Gives back the states kept for ``owner``, whose client no longer calls back
    (after nl_client_free); ``forget_ended_threads`` then deletes those of threads that
    have ended."""
    with _held_lock:
        idents = _kept_for.pop(owner, [])
    for ident in idents:
        release_thread_state(ident)


def release_thread_state(ident: int) -> None:
    """Gives back a ``hold_thread_state`` of thread ``ident``; the last one, on that
    thread, lets ctypes delete the state when the callback returns. On another thread
    only the count goes down: a state is given back by the thread it belongs to."""
    with _held_lock:
        held = _held_states.get(ident)
        if held is None:
            return
        held.holders = max(0, held.holders - 1)
        if held.holders > 0 or ident != threading.get_ident() or held.state != _this_thread_state():
            return
        del _held_states[ident]
    _gil_release(held.token)


def forget_ended_threads() -> None:
    """Deletes the states kept for threads that have ended since their last holder gave
    theirs back from another thread (a client freed with connections open): a thread
    that no longer exists (no /proc/self/task entry) runs no Python code, so its state
    can be cleared and deleted here, with the GIL held, as the interpreter itself does
    for threads that are gone."""
    ended = []
    with _held_lock:
        for ident, held in list(_held_states.items()):
            if held.holders == 0 and not os.path.exists(f"/proc/self/task/{held.native_id}"):
                ended.append(_held_states.pop(ident).state)
    for state in ended:
        _delete_ended(state)


def _started_by_python(ident: int) -> bool:
    """Whether thread ``ident`` is one Python started (the main thread, a
    ``threading.Thread``), as when the library runs a callback on its caller's thread;
    threads Python merely saw (``_DummyThread``) are the library's."""
    return any(thread.ident == ident and not isinstance(thread, threading._DummyThread)
               for thread in threading.enumerate())


def _delete_ended(state: int) -> None:
    """Clears and deletes the Python state of a thread that has ended (the GIL held)."""
    _clear_thread_state(state)
    _delete_thread_state(state)


def states_kept_for(owner: object) -> Dict[int, int]:
    """The threads whose state is kept for ``owner``, with their states (tests)."""
    with _held_lock:
        return {ident: _held_states[ident].state for ident in _kept_for.get(owner, []) if ident in _held_states}


def held_thread_states() -> int:
    """How many library threads keep a Python thread state for someone (tests)."""
    return sum(1 for held in _held_states.values() if held.holders > 0)


class Request:
    """A request started with callbacks of its own; subclasses say what its events and
    its result do. Methods run on a library thread; exceptions never reach C."""

    __slots__ = ("owner",)

    def __init__(self, owner: object) -> None:
        self.owner = owner  # the client's hook table: what ``inside`` compares with

    def progress(self, request_id: int, event_json: Optional[int], reply: Optional[int]) -> None:
        """One progress event (only when started with ``progress=True``)."""

    def stream(self, request_id: int, event_json: Optional[int], reply: Optional[int]) -> None:
        """One stream event (only when started with ``stream=True``)."""

    def complete(self, request_id: int, raw: bytes) -> None:
        """The result document (copied), exactly once, after every event."""
        raise NotImplementedError


#: user_data key -> the request it stands for, from start until on_complete
_requests: Dict[int, Request] = {}
_next_key = itertools.count(1)  # never 0: user_data NULL arrives as None


def _on_complete(request_id: int, result_json: Optional[int], user_data: Optional[int]) -> None:
    try:
        entry = _requests.pop(user_data or 0, None)
        if entry is None:
            return
        raw = borrowed_string(result_json)  # borrowed: copy now, never nl_free it
        enter(entry.owner)
        try:
            entry.complete(request_id, raw)
        finally:
            leave()
    except BaseException:  # never let an exception unwind into C
        pass


def _deliver_event(kind: str, request_id: int, event_json: Optional[int], reply: Optional[int],
                   user_data: Optional[int]) -> None:
    """Runs on a library thread: hands one event to the ``progress`` or ``stream``
    handler of the request ``user_data`` names."""
    try:
        entry = _requests.get(user_data or 0)
        if entry is None:
            return
        enter(entry.owner)
        try:
            getattr(entry, kind)(request_id, event_json, reply)
        finally:
            leave()
    except BaseException:  # never let an exception unwind into C
        pass


def _on_progress(request_id: int, event_json: Optional[int], reply: Optional[int],
                 user_data: Optional[int]) -> None:
    _deliver_event("progress", request_id, event_json, reply, user_data)


def _on_stream(request_id: int, event_json: Optional[int], reply: Optional[int],
               user_data: Optional[int]) -> None:
    _deliver_event("stream", request_id, event_json, reply, user_data)


ON_COMPLETE = NL_CALLBACK(_on_complete)
ON_PROGRESS = NL_EVENT_FN(_on_progress)
ON_STREAM = NL_EVENT_FN(_on_stream)


def start(handle: int, payload: bytes, name: Optional[str], entry: Request, *,
          progress: bool = False, stream: bool = False) -> int:
    """nl_request_start (or nl_call_start for the endpoint ``name``, ``payload`` then
    being its overlay) with ``entry``'s callbacks; returns the request id. The caller
    keeps ``handle`` valid during the call."""
    key = next(_next_key)
    callbacks = RequestCallbacks()
    callbacks.version = REQUEST_CALLBACKS_VERSION
    callbacks.on_complete = ON_COMPLETE
    if progress:
        callbacks.on_progress = ON_PROGRESS
    if stream:
        callbacks.on_stream = ON_STREAM
    callbacks.user_data = key
    _requests[key] = entry  # before the start: the first event may come before the id
    request_id = 0
    try:
        if name is None:
            request_id = lib.nl_request_start(handle, payload, ctypes.byref(callbacks))
        else:
            request_id = lib.nl_call_start(handle, endpoint_name(name), payload, ctypes.byref(callbacks))
    finally:
        if not request_id:
            _requests.pop(key, None)
    if not request_id:  # only for a NULL client or an unknown struct version
        raise Error("netlayer: nl_request_start refused the request", kind="generic")
    return int(request_id)


def pending() -> int:
    """How many started requests have not completed yet (tests)."""
    return len(_requests)


def after_fork_in_child() -> None:
    """In a child of fork(): the parent's requests never complete here; forget them."""
    global _local, _held_lock
    _requests.clear()
    _local = threading.local()
    _held_states.clear()  # the parent's threads: not in this process
    _kept_for.clear()
    _held_lock = threading.Lock()


def loads_event(event_json: Optional[int]) -> Any:
    """The event document of a callback, parsed (borrowed: copied first)."""
    return _json.loads(borrowed_string(event_json))
