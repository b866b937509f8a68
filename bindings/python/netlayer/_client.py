"""Client and Response: the typed surface over the C ABI."""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from . import _json, _lib
from ._errors import Error, InvalidRequestError, error_from_result
from ._hooks import (
    HOOK_ADAPT, HOOK_LOG, HOOK_PROGRESS, HOOK_RESOLVE_ERROR, HOOK_RETRY, HOOK_STREAM, Deliver, HookTable,
)
from ._lib import (
    NL_CALLBACK, NL_HOOK_FN, NO_HOOK, QUEUE_PUSH, OwnedString, borrowed_string, call_document, lib, request_document,
    take_string,
)
from ._result import (
    Response, document_or_raise as _document_or_raise, outcome as _outcome, response_or_raise as _response_or_raise,
)
from ._stream import AsyncStream, Stream, register_table, result_callback, unregister_table

__all__ = ["Client", "Response"]

JSON = Any
Endpoint = Mapping[str, Any]

#: A hook: ``fn(event: dict) -> dict | None`` (see Client.on_adapt), or None to remove it.
_F = TypeVar("_F", bound=Optional[Callable[[Dict[str, Any]], Any]])

# snake_case spellings accepted for keyword arguments (documents keep the contract's keys)
_CONFIG_ALIASES = {
    "base_url": "baseURL",
    "connect_timeout": "connectTimeout",
    "acceptable_status": "acceptableStatus",
    "follow_redirects": "followRedirects",
    "max_redirects": "maxRedirects",
    "max_response_bytes": "maxResponseBytes",
    "max_concurrent": "maxConcurrent",
    "user_agent": "userAgent",
}
_ENDPOINT_ALIASES = {
    "is_full_path": "isFullPath",
    "body_encoding": "bodyEncoding",
    "acceptable_status": "acceptableStatus",
}


def _with_aliases(keys: Mapping[str, Any], aliases: Mapping[str, str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, value in keys.items():
        key = aliases.get(name, name)
        if key in out:
            raise TypeError(f"netlayer: {key!r} given twice (as {name!r} too)")
        out[key] = value
    return out


# ---- asynchronous completion through completion queues ---------------------------------
#
# Each client keeps one completion queue (nl_queue) per event loop that awaits its
# requests. Requests are started with the library's own nl_queue_push as the callback
# and the queue as user_data, so a library thread completes a request by appending the
# result under a mutex: it never takes the GIL and never runs Python. The loop watches
# the queue's descriptor (loop.add_reader); one wake-up takes every result that arrived
# (nl_queue_take: one JSON array, one parse) and settles the futures by request id.
#
# A queue is touched only on its loop's thread (add_reader, take, remove_reader, free),
# except when its loop is not running (closed, or stopped between run_until_complete
# calls): then nobody else touches it. It is freed when no
# request can push to it any more: at Client.close() (nl_client_free has delivered every
# result), or when its loop is closed and every request it awaited has come back.


class _Queue:
    """The completion queue of one client for one event loop."""

    __slots__ = ("loop", "pointer", "fd", "futures")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        pointer = lib.nl_queue_new()
        if not pointer:
            raise MemoryError("netlayer: nl_queue_new failed (out of memory or file descriptors)")
        self.loop = loop
        self.pointer: Optional[int] = pointer
        self.fd: int = lib.nl_queue_fd(pointer)
        #: request id -> the future awaiting its result document (parsed)
        self.futures: Dict[int, "asyncio.Future[Any]"] = {}
        try:
            loop.add_reader(self.fd, self.drain)
        except BaseException:
            lib.nl_queue_free(pointer)
            self.pointer = None
            raise

    def drain(self) -> None:
        """Settles the future of every result waiting in the queue (on the loop's thread)."""
        pointer = self.pointer
        if pointer is None:
            return
        raw = _queue_take(pointer)
        if raw == b"[]":
            return
        futures = self.futures
        for item in _loads(raw):
            future = futures.pop(item["id"], None)
            if future is not None and not future.done():  # the awaiting task may be cancelled
                future.set_result(item["result"])

    def close(self) -> None:
        """Settles what is left and frees the queue. On the loop's thread, or when the
        loop is closed; only once nothing can push any more."""
        if self.pointer is None:
            return
        closed = self.loop.is_closed()
        if not closed:
            self.drain()
            self.loop.remove_reader(self.fd)
        pointer, self.pointer = self.pointer, None
        lib.nl_queue_free(pointer)
        if not closed:
            for future in self.futures.values():
                if not future.done():
                    future.set_result(_LOST)
        self.futures.clear()

    def idle_after_loop_closed(self) -> bool:
        """For a queue whose loop is closed: takes what arrived and says whether no
        request awaits any more (then the queue may be freed)."""
        pointer = self.pointer
        if pointer is None:
            return True
        for item in _loads(_queue_take(pointer)):
            self.futures.pop(item["id"], None)
        return not self.futures


def _queue_take(pointer: int) -> bytes:
    """nl_queue_take: copies and frees the array of waiting results."""
    return take_string(lib.nl_queue_take(pointer))


_loads = _json.loads
_dumps = _json.dumps
#: Encoded ``{"path": p, "method": "GET"}`` documents of ``Client.get(p)``, by path:
#: the same few paths are fetched over and over (bounded; any client may use them).
_GET_DOCUMENTS: Dict[str, bytes] = {}
_nl_request_async = lib.nl_request_async
_get_running_loop = asyncio.get_running_loop
_AsyncCancelled = asyncio.CancelledError

#: The result of a request whose queue was freed before it came back (cannot happen
#: while the library keeps its contract; better an error than a task waiting forever).
_LOST = {"ok": False, "error": {"kind": "cancelled", "message": "netlayer: the request's result was lost"}}


# ---- asynchronous completion through a Python callback (libraries without queues) ----
#
# One C callback object serves every asynchronous request of every client. It lives at
# module level, so it outlives any client and any request (the library may call it
# until nl_client_free returns). user_data carries an integer key into _pending, which
# maps to the event loop's inbox and the future waiting for the result.
#
# Results reach a loop through its _Inbox: the callback appends (future, result) and
# wakes the loop (call_soon_threadsafe, one write to its self-pipe) only when the inbox
# was empty; the loop then settles every result that arrived meanwhile in one go. With
# hundreds of requests in flight this saves most wake-ups and loop iterations.


class _Inbox:
    """Results waiting for one event loop."""

    __slots__ = ("loop", "lock", "items", "scheduled", "__weakref__")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.items: List[Tuple["asyncio.Future[bytes]", bytes]] = []
        self.scheduled = False

    def put(self, future: "asyncio.Future[bytes]", raw: bytes) -> None:
        """On a library thread."""
        with self.lock:
            self.items.append((future, raw))
            if self.scheduled:
                return
            self.scheduled = True
        try:
            self.loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # the loop is closed; nobody is waiting any more
            pass

    def drain(self) -> None:
        """On the loop: settles every result that arrived."""
        with self.lock:
            items, self.items = self.items, []
            self.scheduled = False
        for future, raw in items:
            if not future.done():  # the awaiting task may have been cancelled meanwhile
                future.set_result(raw)


_inboxes: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Inbox]" = weakref.WeakKeyDictionary()
_pending: Dict[int, Tuple[_Inbox, "asyncio.Future[bytes]"]] = {}
_pending_lock = threading.Lock()
_next_key = itertools.count(1)  # never 0: user_data NULL would arrive as None


def _on_result(request_id: int, result_json: Optional[int], user_data: Optional[int]) -> None:
    """Runs on a library thread: copies the borrowed result and hands it to the loop."""
    try:
        raw = borrowed_string(result_json)  # borrowed: copy now, never nl_free it
        with _pending_lock:
            entry = _pending.pop(user_data or 0, None)
        if entry is not None:
            entry[0].put(entry[1], raw)
    except BaseException:  # never let an exception unwind into C
        pass


_callback = NL_CALLBACK(_on_result)


def _register(loop: asyncio.AbstractEventLoop, future: "asyncio.Future[bytes]") -> int:
    inbox = _inboxes.get(loop)
    if inbox is None:
        inbox = _inboxes.setdefault(loop, _Inbox(loop))
    key = next(_next_key)
    with _pending_lock:
        _pending[key] = (inbox, future)
    return key


def _unregister(key: int) -> None:
    with _pending_lock:
        _pending.pop(key, None)


# ---- the client ----------------------------------------------------------------------


class Client:
    """An HTTP client: one connection pool and one event-loop thread in the library.

    ``Client(config, **config_keys)`` takes a config document (docs/documents.md,
    "Config"); keyword arguments are merged over it (``Client({"baseURL": u}, timeout=5)``;
    a few snake_case spellings such as ``base_url`` are accepted for keywords). A config
    the library refuses raises ``InvalidRequestError`` naming the key.

    Threads: one Client may be used from any number of threads and event loops at once.
    ``close()`` waits for blocking calls in flight on other threads to return and
    cancels asynchronous ones (they raise ``netlayer.CancelledError``); calls made after
    it raise ``InvalidRequestError("client is closed")``. Even so, do not call close()
    while other threads still use the client: their next call fails.
    """

    def __init__(self, config: Optional[Mapping[str, Any]] = None, /, **config_keys: Any) -> None:
        document: Dict[str, Any] = dict(config or {})
        document.update(_with_aliases(config_keys, _CONFIG_ALIASES))
        self._lock = threading.Lock()
        self._state = threading.Condition(self._lock)  # waits on _lock for calls in flight
        self._active = 0  # calls into the library in progress on this client (under _lock)
        # One entry per blocking request/call inside the library, without the lock:
        # list.append and list.pop are atomic, and a call appends before it reads
        # _closing while close() sets _closing before it reads the list, so either the
        # call sees _closing or close() sees the call (see _perform).
        self._calls: List[None] = []
        self._closing = False
        self._handle: Optional[int] = None
        self._queues: Dict[asyncio.AbstractEventLoop, _Queue] = {}  # see _Queue
        # Hooks: one NL_HOOK_FN per client (the kind travels as user_data), kept for the
        # client's whole lifetime, close() included; the table holds no reference back.
        self._hooks = HookTable()
        self._hook_fn = NL_HOOK_FN(self._hooks.dispatch)
        error = OwnedString()
        handle = lib.nl_client_new(_json.dumps(document), ctypes.byref(error))
        if not handle:
            if error:
                raise error_from_result(_json.loads(take_string(error)))
            raise Error("netlayer: nl_client_new failed without an error document")
        self._handle = handle

    # ---- lifetime ----------------------------------------------------------------

    def close(self) -> None:
        """Frees the client (nl_client_free). Idempotent.

        Waits until blocking calls of other threads have returned; asynchronous
        requests still in flight complete with ``netlayer.CancelledError``.
        """
        with self._state:
            if self._handle is None or self._closing:
                return
            self._closing = True
            while self._active or self._calls:
                self._state.wait()
            handle, self._handle = self._handle, None
        lib.nl_client_free(handle)  # no hook or callback of this client runs after it
        self._close_queues()

    def _close_queues(self) -> None:
        """After nl_client_free: every result is in its queue. Each queue is drained and
        freed on its loop's thread; now, when that is this thread or the loop is not
        running (closed, or stopped between run_until_complete calls)."""
        with self._state:
            queues, self._queues = self._queues, {}
        try:
            running: Optional[asyncio.AbstractEventLoop] = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        for loop, queue in queues.items():
            if loop is running or not loop.is_running():
                queue.close()
                continue
            try:
                loop.call_soon_threadsafe(queue.close)
            except RuntimeError:  # the loop closed meanwhile
                queue.close()

    @property
    def closed(self) -> bool:
        """True once close() has started."""
        return self._handle is None or self._closing

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A forgotten client is freed when collected, but not while the interpreter
        # shuts down, when library threads may no longer enter Python safely.
        if getattr(self, "_handle", None) is not None and not sys.is_finalizing():
            try:
                self.close()
            except Exception:
                pass

    def __repr__(self) -> str:
        return f"<netlayer.Client {'closed' if self.closed else 'open'}>"

    def _enter(self) -> int:
        with self._lock:
            if self._handle is None or self._closing:
                raise InvalidRequestError("client is closed", kind="invalid_request")
            self._active += 1
            return self._handle

    def _leave(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0 and self._closing:
                self._state.notify_all()

    def _wake_closer(self) -> None:
        """After a blocking call left the library while close() may wait for it."""
        with self._lock:
            if not self._calls:
                self._state.notify_all()

    def _using(self) -> "_Using":
        return _Using(self)

    # ---- blocking calls ------------------------------------------------------------

    def request(self, endpoint: Optional[Endpoint] = None, /, **endpoint_keys: Any) -> Response:
        """Performs one endpoint document (nl_request); raises the Error subclass of a failure."""
        return self._perform(_dumps(_endpoint(endpoint, endpoint_keys)))

    def _perform(self, payload: bytes) -> Response:
        """nl_request on an encoded endpoint document: the blocking calls' hot path, kept
        to a few C-level operations around the library call (no lock: see _calls)."""
        calls = self._calls
        calls.append(None)
        try:
            handle = self._handle
            if handle is None or self._closing:
                raise InvalidRequestError("client is closed", kind="invalid_request")
            raw = request_document(handle, payload)
        finally:
            calls.pop()
            if self._closing:
                self._wake_closer()
        if raw is None:
            raise MemoryError("netlayer: the library returned NULL (out of memory)")
        return _response_or_raise(raw)

    def get(self, path: str, **endpoint_keys: Any) -> Response:
        """GET ``path`` (joined to baseURL); other endpoint keys as keywords."""
        if not endpoint_keys and type(path) is str:
            payload = _GET_DOCUMENTS.get(path)
            if payload is None:
                payload = _dumps({"path": path, "method": "GET"})
                if len(_GET_DOCUMENTS) >= 1024:
                    _GET_DOCUMENTS.clear()
                _GET_DOCUMENTS[path] = payload
            return self._perform(payload)
        return self.request(_method("GET", path, endpoint_keys))

    def post(self, path: str, **endpoint_keys: Any) -> Response:
        """POST ``path``; e.g. ``client.post("movies", body={"title": "Dune"})``."""
        return self.request(_method("POST", path, endpoint_keys))

    def put(self, path: str, **endpoint_keys: Any) -> Response:
        """PUT ``path``."""
        return self.request(_method("PUT", path, endpoint_keys))

    def patch(self, path: str, **endpoint_keys: Any) -> Response:
        """PATCH ``path``."""
        return self.request(_method("PATCH", path, endpoint_keys))

    def delete(self, path: str, **endpoint_keys: Any) -> Response:
        """DELETE ``path``."""
        return self.request(_method("DELETE", path, endpoint_keys))

    def head(self, path: str, **endpoint_keys: Any) -> Response:
        """HEAD ``path``."""
        return self.request(_method("HEAD", path, endpoint_keys))

    def call(self, name: str, params: Optional[Mapping[str, Any]] = None, **overlay: Any) -> Response:
        """Performs the config's endpoint ``name`` (nl_call), ``overlay`` merged over it and
        ``params`` filling the ``{placeholders}`` of its path."""
        document = _with_aliases(overlay, _ENDPOINT_ALIASES)
        if params is not None:
            document["params"] = dict(params)
        payload = _json.dumps(document)
        with self._using() as handle:
            raw = call_document(handle, name.encode("utf-8"), payload)
        if raw is None:
            raise MemoryError("netlayer: the library returned NULL (out of memory)")
        return _response_or_raise(raw)

    def batch(self, endpoints: Sequence[Endpoint]) -> List[Union[Response, Error]]:
        """Runs endpoint documents concurrently (nl_request_batch); returns, in input
        order, a Response or an Error (returned, not raised) for each."""
        payload = _json.dumps([dict(endpoint) for endpoint in endpoints])
        with self._using() as handle:
            raw = take_string(lib.nl_request_batch(handle, payload))
        results = _json.loads(raw)
        if not isinstance(results, list):  # the library refused the whole batch
            outcome = _outcome(results)
            raise outcome if isinstance(outcome, Error) else Error("netlayer: bad batch result")
        return [_outcome(doc) for doc in results]

    # ---- asyncio ---------------------------------------------------------------------

    async def arequest(self, endpoint: Optional[Endpoint] = None, /, **endpoint_keys: Any) -> Response:
        """Performs one endpoint document without blocking the event loop
        (nl_request_async). Cancelling the awaiting task cancels the request (nl_cancel)."""
        if not endpoint_keys and type(endpoint) is dict:
            payload = _dumps(endpoint)
        else:
            payload = _dumps(_endpoint(endpoint, endpoint_keys))
        return await self._run_async(payload, None)

    async def acall(self, name: str, params: Optional[Mapping[str, Any]] = None, **overlay: Any) -> Response:
        """The asynchronous ``call`` (nl_call_async). Cancelling the awaiting task
        cancels the request."""
        document = _with_aliases(overlay, _ENDPOINT_ALIASES)
        if params is not None:
            document["params"] = dict(params)
        payload = _dumps(document)
        return await self._run_async(payload, name)

    async def _run_async(self, payload: bytes, name: Optional[str]) -> Response:
        """Sends `payload` (an endpoint document, or the overlay of the endpoint
        `name`) through this loop's completion queue and awaits its result."""
        loop = _get_running_loop()
        if QUEUE_PUSH is None:
            return await self._start_with_callback(loop, payload, name)
        request_id, future = self._submit(loop, payload, name)
        try:
            document = await future
        except _AsyncCancelled:
            self._cancel(request_id)
            raise
        return _document_or_raise(document)

    def _submit(self, loop: asyncio.AbstractEventLoop, payload: bytes,
                name: Optional[str]) -> Tuple[int, "asyncio.Future[Any]"]:
        """Starts a request whose result goes to this client's queue for ``loop`` (on the
        loop's thread); returns its id and the future its parsed result document settles."""
        future: "asyncio.Future[Any]" = loop.create_future()
        with self._lock:
            handle = self._handle
            if handle is None or self._closing:
                raise InvalidRequestError("client is closed", kind="invalid_request")
            self._active += 1
            queue = self._queues.get(loop)
            if queue is None:
                queue = self._new_queue(loop)
        try:
            if name is None:
                request_id = _nl_request_async(handle, payload, QUEUE_PUSH, queue.pointer)
            else:
                request_id = lib.nl_call_async(handle, name.encode("utf-8"), payload, QUEUE_PUSH, queue.pointer)
            if request_id:
                queue.futures[request_id] = future  # settled by queue.drain, on this thread
        finally:
            with self._lock:
                self._active -= 1
                if self._closing and not self._active:
                    self._state.notify_all()
        if request_id == 0:  # only for a NULL client or callback; cannot happen here
            raise Error("netlayer: nl_request_async refused the request", kind="generic")
        return request_id, future

    def _new_queue(self, loop: asyncio.AbstractEventLoop) -> _Queue:
        """A queue for ``loop`` (with self._state held, on the loop's thread). Frees the
        queues of closed loops that no request awaits any more, so a client used by many
        ``asyncio.run`` calls in turn keeps no descriptors of the finished ones."""
        for old_loop in [l for l in self._queues if l.is_closed()]:
            old = self._queues[old_loop]
            if old.idle_after_loop_closed():
                del self._queues[old_loop]
                old.close()
        queue = self._queues[loop] = _Queue(loop)
        return queue

    def _pending_async(self) -> int:
        """How many asynchronous requests await a result in this client's queues (tests)."""
        with self._state:
            return sum(len(q.futures) for q in self._queues.values())

    async def _start_with_callback(self, loop: asyncio.AbstractEventLoop, payload: bytes,
                                   name: Optional[str]) -> Response:
        """arequest/acall for a library without completion queues: results come through a
        Python callback on a library thread (see _Inbox)."""
        future: "asyncio.Future[bytes]" = loop.create_future()
        key = _register(loop, future)
        try:
            with self._using() as handle:
                if name is None:
                    request_id = lib.nl_request_async(handle, payload, _callback, key)
                else:
                    request_id = lib.nl_call_async(handle, name.encode("utf-8"), payload, _callback, key)
        except BaseException:
            _unregister(key)
            raise
        if request_id == 0:  # only for a NULL client or callback; cannot happen here
            _unregister(key)
            raise Error("netlayer: nl_request_async refused the request", kind="generic")
        try:
            raw = await future
        except asyncio.CancelledError:
            self._cancel(request_id)
            raise
        return _response_or_raise(raw)

    # ---- hooks -----------------------------------------------------------------------

    def on_adapt(self, fn: _F) -> _F:
        """Sets the ADAPT hook, called before every attempt with ``{"id", "attempt",
        "method", "url", "headers"}``; it may return ``{"headers": {...}}`` (merged over
        the request's) or ``{"cancel": True}``. None removes it. Usable as a decorator.

        Every hook runs on a library thread, returns a dict (sent as the reply) or None
        (the default). If it raises, only that request fails, with InvalidRequestError
        "on_adapt hook raised ValueError: ..." (the exception is its ``__cause__``).
        Blocking calls on the same client from inside a hook fail; use the async API.
        """
        return self._set_hook(HOOK_ADAPT, fn)

    def on_retry(self, fn: _F) -> _F:
        """Sets the RETRY hook, called after a failed attempt while attempts remain with
        ``{"id", "attempt", "method", "url", "error"}``; it may return
        ``{"retry": True, "delay": 0.5}`` or ``{"retry": False}``; None lets the retry
        policy decide. Calls are serialised per client. None removes it."""
        return self._set_hook(HOOK_RETRY, fn)

    def on_resolve_error(self, fn: _F) -> _F:
        """Sets the RESOLVE_ERROR hook, called with the error object of a ``status``
        failure (``status``, ``body``, ``headers``, ...); returning ``{"code", "message"}``
        turns it into ResolvedError. None removes it."""
        return self._set_hook(HOOK_RESOLVE_ERROR, fn)

    def on_log(self, fn: _F) -> _F:
        """Sets the LOG hook, called with every log event (config ``log.level``), secrets
        redacted. Its return value is ignored; an exception is printed to stderr and the
        request goes on. None removes it (events then go to stderr)."""
        return self._set_hook(HOOK_LOG, fn)

    def on_progress(self, fn: _F) -> _F:
        """Sets the PROGRESS hook, called for requests with ``"progress": True`` with
        ``{"id", "direction", "done", "total"}`` (at most every 50 ms and at completion);
        ``{"cancel": True}`` stops the transfer. None removes it."""
        return self._set_hook(HOOK_PROGRESS, fn)

    def _set_hook(self, kind: int, fn: _F) -> _F:
        if not _lib.has_hooks:
            raise Error("netlayer: the loaded library has no hooks (nl_client_set_hook)", kind="generic")
        if fn is None:
            with self._state:
                if self._handle is None or self._closing:
                    self._hooks.functions.pop(kind, None)
                    return fn
            with self._using() as handle:
                lib.nl_client_set_hook(handle, kind, NO_HOOK, None)
            self._hooks.functions.pop(kind, None)
            return fn
        if not callable(fn):
            raise TypeError(f"netlayer: a hook must be callable or None, not {type(fn).__name__}")
        with self._using() as handle:
            self._hooks.functions[kind] = fn
            lib.nl_client_set_hook(handle, kind, self._hook_fn, kind)
        return fn

    # ---- streams -----------------------------------------------------------------------

    def stream(self, endpoint: Union[Endpoint, str, None] = None, /, **endpoint_keys: Any) -> Stream:
        """``for event in client.stream({"path": "events"})`` (or ``stream("events")``): the
        body events of one request as dicts, as they arrive. ``stream`` is ``"sse"`` unless the endpoint says
        ``"lines"`` or ``"chunks"`` (then ``event["chunk"]`` is bytes). The request starts
        at the first ``next()``; the iteration ends with the result (``.response``) or
        raises its Error subclass; ``break``/``close()`` cancels the transfer."""
        return Stream(self, _stream_endpoint(endpoint, endpoint_keys))

    def astream(self, endpoint: Union[Endpoint, str, None] = None, /, **endpoint_keys: Any) -> AsyncStream:
        """``async for event in client.astream(...)``: ``stream`` for asyncio, without
        blocking the loop. Cancelling the awaiting task or ``break`` cancels the transfer."""
        return AsyncStream(self, _stream_endpoint(endpoint, endpoint_keys))

    def _stream_start(self, payload: bytes, deliver: Deliver) -> int:
        """Starts a streamed request whose events and result go to ``deliver``; returns its id."""
        hooks = self._hooks
        key = register_table(hooks)
        try:
            with self._using() as handle:
                with hooks.lock:
                    if hooks.stream_users == 0:
                        lib.nl_client_set_hook(handle, HOOK_STREAM, self._hook_fn, HOOK_STREAM)
                    hooks.stream_users += 1
                    hooks.starting += 1
                request_id = 0
                try:
                    request_id = lib.nl_request_async(handle, payload, result_callback, key)
                finally:
                    with hooks.lock:
                        hooks.starting -= 1
                        if request_id:
                            hooks.streams[request_id] = deliver
                            for item in hooks.orphans.pop(request_id, ()):
                                deliver(item)
                        else:
                            hooks.stream_users -= 1
                            if hooks.stream_users == 0:
                                lib.nl_client_set_hook(handle, HOOK_STREAM, NO_HOOK, None)
                        if not hooks.starting:
                            hooks.orphans.clear()
        except BaseException:
            unregister_table(key)
            raise
        if request_id == 0:  # only for a NULL client or callback; cannot happen here
            unregister_table(key)
            raise Error("netlayer: nl_request_async refused the request", kind="generic")
        return int(request_id)

    def _stream_end(self, request_id: int) -> None:
        """A stream is over (result read, or closed): forgets it; removes the STREAM hook
        with the last one, so plain blocking calls keep the library's fast path."""
        hooks = self._hooks
        with hooks.lock:
            if hooks.streams.pop(request_id, None) is None:
                return
            hooks.stream_users -= 1
            if hooks.stream_users:
                return
        with self._state:
            if self._handle is None or self._closing:
                return
            self._active += 1
            handle = self._handle
        try:
            with hooks.lock:
                if hooks.stream_users == 0:
                    lib.nl_client_set_hook(handle, HOOK_STREAM, NO_HOOK, None)
        finally:
            self._leave()

    def _cancel(self, request_id: int) -> bool:
        """nl_cancel; True when the request was still in flight."""
        with self._state:
            if self._handle is None or self._closing:
                return False  # close() cancels everything itself
            self._active += 1
            handle = self._handle
        try:
            return bool(lib.nl_cancel(handle, request_id))
        finally:
            self._leave()


class _Using:
    """``with client._using() as handle``: the handle, kept valid against close()."""

    __slots__ = ("_client",)

    def __init__(self, client: Client) -> None:
        self._client = client

    def __enter__(self) -> int:
        return self._client._enter()

    def __exit__(self, *exc_info: object) -> None:
        self._client._leave()


def _endpoint(endpoint: Optional[Endpoint], keys: Mapping[str, Any]) -> Dict[str, Any]:
    document = dict(endpoint or {})
    document.update(_with_aliases(keys, _ENDPOINT_ALIASES))
    return document


def _stream_endpoint(endpoint: Union[Endpoint, str, None], keys: Mapping[str, Any]) -> Dict[str, Any]:
    document = _endpoint({"path": endpoint} if isinstance(endpoint, str) else endpoint, keys)
    if document.get("stream") is None:
        document["stream"] = "sse"
    return document


def _method(method: str, path: str, keys: Mapping[str, Any]) -> Dict[str, Any]:
    if "method" in keys:
        raise TypeError(f"netlayer: {method.lower()}() sets the method; use request() for another")
    document = _with_aliases(keys, _ENDPOINT_ALIASES)
    document["path"] = path
    document["method"] = method
    return document
