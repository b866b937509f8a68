"""asyncio: arequest and acall over completion queues.

Each client keeps one completion queue (nl_queue) per event loop that awaits its
requests. Requests are started with the library's own nl_queue_push as the callback
and the queue as user_data, so a library thread completes a request by appending the
result under a mutex: it never takes the GIL and never runs Python. The loop watches
the queue's descriptor (loop.add_reader); one wake-up takes every result that arrived
(nl_queue_take: one JSON array, one parse) and settles the futures by request id.

A queue is touched only on its loop's thread (add_reader, take, remove_reader, free),
except when its loop is not running (closed, or stopped between run_until_complete
calls): then nobody else touches it. It is freed when no request can push to it any
more: after nl_client_free (``_close_queues``: every result has been delivered), or
when its loop is closed and every request it awaited has come back.

A request given ``on_progress=`` is started with nl_request_start instead (its
progress callback runs Python anyway); its result reaches the loop through
``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple

from . import _callbacks, _json
from ._documents import Endpoint, endpoint as _endpoint, endpoint_name, method as _method, normalise_endpoint, overlay as _overlay
from ._errors import Error
from ._lib import QUEUE_PUSH, lib, take_string
from ._lifecycle import HOLDING_CODES, ClientBase, closed_error
from ._progress import ProgressRequest, progress_payload
from ._result import Response, document_or_raise as _document_or_raise
from ._types import EndpointOptions, MethodKeys, RequestKeys

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AsyncMixin"]

_loads = _json.loads
_dumps = _json.dumps
_nl_request_async = lib.nl_request_async
_get_running_loop = asyncio.get_running_loop
_AsyncCancelled = asyncio.CancelledError

#: The result of a request whose queue was freed before it came back (cannot happen
#: while the library keeps its contract; better an error than a task waiting forever).
_LOST = {"ok": False, "error": {"kind": "cancelled", "message": "netlayer: the request's result was lost"}}
#: The result of a request still in flight when close() was called: close() cancels
#: those, and a response that arrives before the free (which runs later, on another
#: thread, when close() is called from a hook) does not change that.
_CLOSED = {"ok": False, "error": {"kind": "cancelled",
                                  "message": "netlayer: the client was closed while the request was in flight"}}
_CLOSED_RAW = _dumps(_CLOSED)


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
        raw = take_string(lib.nl_queue_take(pointer))
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
        for item in _loads(take_string(lib.nl_queue_take(pointer))):
            self.futures.pop(item["id"], None)
        return not self.futures


class AsyncMixin(ClientBase):
    """The asyncio methods of Client."""

    async def arequest(self, endpoint: Optional[Endpoint] = None, /, **endpoint_keys: Unpack[RequestKeys]) -> Response:
        """Performs one endpoint document without blocking the event loop
        (nl_request_async). Cancelling the awaiting task cancels the request (nl_cancel).
        ``on_progress=fn`` receives this request's progress events."""
        if not endpoint_keys and type(endpoint) is dict and "on_progress" not in endpoint:
            return await self._run_async(_dumps(normalise_endpoint(endpoint)), None)
        document = _endpoint(endpoint, endpoint_keys)
        if "on_progress" in document:
            return await self._run_started(document, None)
        return await self._run_async(_dumps(document), None)

    async def aget(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """The asynchronous ``get``: GET ``path``, other endpoint keys as keywords."""
        return await self._asend("GET", path, endpoint_keys)

    async def apost(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """The asynchronous ``post``."""
        return await self._asend("POST", path, endpoint_keys)

    async def aput(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """The asynchronous ``put``."""
        return await self._asend("PUT", path, endpoint_keys)

    async def apatch(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """The asynchronous ``patch``."""
        return await self._asend("PATCH", path, endpoint_keys)

    async def adelete(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """The asynchronous ``delete``."""
        return await self._asend("DELETE", path, endpoint_keys)

    async def ahead(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """The asynchronous ``head``."""
        return await self._asend("HEAD", path, endpoint_keys)

    async def _asend(self, method: str, path: str, endpoint_keys: Mapping[str, Any]) -> Response:
        document = _method(method, path, endpoint_keys)
        if "on_progress" in document:
            return await self._run_started(document, None)
        return await self._run_async(_dumps(document), None)

    async def acall(self, name: str, params: Optional[Mapping[str, Any]] = None, **overlay: Unpack[EndpointOptions]) -> Response:
        """The asynchronous ``call`` (nl_call_async). Cancelling the awaiting task
        cancels the request."""
        document = _overlay(params, overlay)
        if "on_progress" in document:
            return await self._run_started(document, name)
        return await self._run_async(_dumps(document), name)

    async def _run_async(self, payload: bytes, name: Optional[str]) -> Response:
        """Sends `payload` (an endpoint document, or the overlay of the endpoint
        `name`) through this loop's completion queue and awaits its result."""
        request_id, future = self._submit(_get_running_loop(), payload, name)
        try:
            document = await future
        except _AsyncCancelled:
            self._cancel(request_id)
            raise
        if self._closing:
            document = _CLOSED
        return _document_or_raise(document, request_id)

    def _submit(self, loop: asyncio.AbstractEventLoop, payload: bytes,
                name: Optional[str]) -> Tuple[int, "asyncio.Future[Any]"]:
        """Starts a request whose result goes to this client's queue for ``loop`` (on the
        loop's thread); returns its id and the future its parsed result document settles."""
        future: "asyncio.Future[Any]" = loop.create_future()
        with self._lock:
            handle = self._handle
            if handle is None or self._closing:
                raise closed_error()
            self._active += 1
            queue = self._queues.get(loop)
            if queue is None:
                queue = self._new_queue(loop)
        request_id = 0
        try:
            if name is None:
                request_id = _nl_request_async(handle, payload, QUEUE_PUSH, queue.pointer)
            else:
                request_id = lib.nl_call_async(handle, endpoint_name(name), payload, QUEUE_PUSH, queue.pointer)
            if request_id:
                queue.futures[request_id] = future  # settled by queue.drain, on this thread
        finally:
            self._leave()
        if request_id == 0:  # only for a NULL client or callback; cannot happen here
            raise Error("netlayer: nl_request_async refused the request", kind="generic")
        return request_id, future

    def _new_queue(self, loop: asyncio.AbstractEventLoop) -> _Queue:
        """A queue for ``loop`` (with _lock held, on the loop's thread). Frees the queues
        of closed loops that no request awaits any more, so a client used by many
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

    async def _run_started(self, document: Dict[str, Any], name: Optional[str]) -> Response:
        """arequest/acall with a progress callback of its own (nl_request_start)."""
        loop = _get_running_loop()
        payload, on_progress = progress_payload(document)
        future: "asyncio.Future[bytes]" = loop.create_future()

        def settle(raw: bytes) -> None:  # on a library thread
            try:
                loop.call_soon_threadsafe(_settle, future, raw)
            except RuntimeError:  # the loop is closed; nobody is waiting any more
                pass

        entry = ProgressRequest(self._hooks, on_progress, settle)
        with self._using() as handle:
            request_id = _callbacks.start(handle, payload, name, entry, progress=True)
        try:
            raw = await future
        except _AsyncCancelled:
            self._cancel(request_id)
            raise
        if self._closing:
            raw = _CLOSED_RAW
        return entry.response_or_raise(raw, request_id)


HOLDING_CODES.update(method.__code__ for method in (AsyncMixin._submit, AsyncMixin._run_started))


def _settle(future: "asyncio.Future[bytes]", raw: bytes) -> None:
    if not future.done():
        future.set_result(raw)
