"""Streamed bodies: ``Client.stream`` (iterator) and ``Client.astream`` (async iterator).

A stream starts its endpoint (with ``"stream"``: sse, lines or chunks) with
nl_request_start and an on_stream callback of its own (``_callbacks``): every body
event of that request, then its result, reach the stream's queue on a library thread,
whether they arrive before or after the request id is known. The queue is a
``queue.SimpleQueue`` for ``Stream``, an ``asyncio.Queue`` fed through
``loop.call_soon_threadsafe`` for ``AsyncStream``. The library runs on_complete after
the last event, so the result always comes last. Closing a stream early (``break``,
``close()``/``aclose()``, leaving the ``with`` block, garbage collection, or
cancelling the task awaiting the next event) calls nl_cancel.

The queue is bounded (``_Backlog``): once it holds ``max_queue`` events (1024) or
``max_queue_bytes`` bytes of event documents (4 MiB) that the reader has not taken, the library
stops reading the response (nl_pause from inside the event callback, so at most the
rest of one read follows) and the server waits; reading resumes when the reader has
taken the queue down to a quarter. A reader that falls behind costs memory of its
own choosing, never what a fast server sends.
"""

from __future__ import annotations

import asyncio
import base64
import queue
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple, Union

from . import _callbacks, _json
from ._lib import borrowed_string
from ._documents import Endpoint, stream_endpoint
from ._errors import Error, InvalidRequestError
from ._lifecycle import HOLDING_CODES, ClientBase
from ._result import Response, outcome
from ._types import StreamKeys
from ._uncopyable import Uncopyable

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Stream", "AsyncStream", "StreamMixin"]

#: What a stream's queue receives: ("event", (dict, size)) per body event, ("result", bytes) last.
StreamItem = Tuple[str, Any]
Deliver = Callable[[StreamItem], None]


class _Backlog:
    """What a stream's queue holds that its reader has not taken, and whether reading
    the response is paused for it. ``added`` runs on a library thread (inside the event
    callback), ``taken`` on the reader's; nl_pause is called under the lock, so that the
    library sees pauses and resumes in the order they were decided."""

    #: Pause reading at this many events waiting, or this many bytes of their documents
    #: (``max_queue`` and ``max_queue_bytes``, as for WebSockets).
    MAX_EVENTS = 1024
    MAX_BYTES = 4 << 20

    __slots__ = ("client", "lock", "events", "bytes", "paused", "max_events", "max_bytes")

    def __init__(self, client: ClientBase, max_events: int = MAX_EVENTS, max_bytes: int = MAX_BYTES) -> None:
        self.client = client
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.lock = threading.Lock()
        self.events = 0
        self.bytes = 0
        self.paused = False

    def added(self, request_id: int, size: int) -> None:
        with self.lock:
            self.events += 1
            self.bytes += size
            if not self.paused and (self.events >= self.max_events or self.bytes >= self.max_bytes):
                self.paused = self.client._pause(request_id, True)

    def taken(self, request_id: int, size: int) -> None:
        with self.lock:
            self.events -= 1
            self.bytes -= size
            if self.paused and self.events <= self.max_events // 4 and self.bytes <= self.max_bytes // 4:
                self.paused = False
                self.client._pause(request_id, False)


class _StreamRequest(_callbacks.Request):
    """The callbacks of one streamed request: everything goes to ``deliver``."""

    __slots__ = ("deliver", "backlog")

    def __init__(self, owner: object, deliver: Deliver, backlog: _Backlog) -> None:
        super().__init__(owner)
        self.deliver = deliver
        self.backlog = backlog

    def stream(self, request_id: int, event_json: Optional[int], reply: Optional[int]) -> None:
        raw = borrowed_string(event_json)  # borrowed: copied now
        event = _json.loads(raw)
        if isinstance(event, dict):
            chunk = event.get("chunk")
            if isinstance(chunk, str):
                event["chunk"] = base64.b64decode(chunk)
            self.deliver(("event", (event, len(raw))))
            self.backlog.added(request_id, len(raw))

    def complete(self, request_id: int, raw: bytes) -> None:
        self.deliver(("result", raw))


class _StreamBase(Uncopyable):
    """What Stream and AsyncStream share: starting, finishing, cancelling."""

    def __init__(self, client: ClientBase, endpoint: Dict[str, Any]) -> None:
        bounds = []
        for name, default in (("max_queue", _Backlog.MAX_EVENTS), ("max_queue_bytes", _Backlog.MAX_BYTES)):
            value = endpoint.pop(name, default)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidRequestError(f"netlayer: stream key {name!r} must be an integer of at least 1, "
                                          f"not {value!r}", kind="invalid_request")
            bounds.append(value)
        self._client = client
        self._payload = _json.dumps(endpoint)
        self._id = 0  # the nl_request_start id, once started
        self._started = False
        self._finished = False
        self._cancelled = False  # we called nl_cancel: the "cancelled" result is ours
        self._backlog = _Backlog(client, bounds[0], bounds[1])
        #: The Response of a stream that ended normally (``events`` holds the count).
        self.response: Optional[Response] = None

    @property
    def request_id(self) -> int:
        """The id nl_request_start returned (0 before the first event is asked for)."""
        return self._id

    def _start(self, deliver: Deliver) -> None:
        self._started = True
        client = self._client
        try:
            with client._using() as handle:
                self._id = _callbacks.start(handle, self._payload, None,
                                            _StreamRequest(client._hooks, deliver, self._backlog), stream=True)
        except BaseException:
            self._finished = True
            raise

    def _event(self, value: Tuple[Dict[str, Any], int]) -> Dict[str, Any]:
        """An event the reader takes from the queue: reading may resume."""
        event, size = value
        self._backlog.taken(self._id, size)
        return event

    def _finish(self, raw: bytes) -> None:
        """The result arrived: ends the iteration normally or raises the failure."""
        self._finished = True
        result = outcome(_json.loads(raw), self._id)
        if isinstance(result, Error):
            if not (self._cancelled and result.kind == "cancelled"):
                raise result
        else:
            self.response = result

    def close(self) -> None:
        """Stops the stream: cancels the transfer (nl_cancel) if it is still running.
        Idempotent; the iteration then ends."""
        if self._finished:
            return
        self._finished = True
        if self._started and self._id:
            self._cancelled = True
            self._client._cancel(self._id)

    def __del__(self) -> None:
        if not getattr(self, "_finished", True) and not sys.is_finalizing():
            try:
                self.close()
            except Exception:
                pass


HOLDING_CODES.add(_StreamBase._start.__code__)


class Stream(_StreamBase):
    """``for event in client.stream(endpoint)``: the body events of one request, as dicts.

    sse: ``{"id", "event", "data", "lastEventId", "retry"}``; lines: ``{"id", "line"}``;
    chunks: ``{"id", "chunk"}`` with ``chunk`` as bytes. The iteration ends with the
    result (``response`` is then set) or raises its Error subclass. ``break`` (or
    ``close()``, or leaving a ``with`` block) cancels the transfer.
    """

    def __init__(self, client: ClientBase, endpoint: Dict[str, Any]) -> None:
        super().__init__(client, endpoint)
        self._queue: "queue.SimpleQueue[StreamItem]" = queue.SimpleQueue()

    def __iter__(self) -> "Stream":
        return self

    def __next__(self) -> Dict[str, Any]:
        if not self._started and not self._finished:
            if _callbacks.inside(self._client._hooks):  # its events would wait for us
                self._finished = True
                raise InvalidRequestError("a blocking stream cannot be read inside a hook or callback of "
                                          "the same client; use astream", kind="invalid_request")
            self._start(self._queue.put)
        if self._finished:
            raise StopIteration
        try:
            kind, value = self._queue.get()
        except BaseException:  # KeyboardInterrupt while waiting: stop the transfer
            self.close()
            raise
        if kind == "event":
            return self._event(value)
        self._finish(value)
        raise StopIteration

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncStream(_StreamBase):
    """``async for event in client.astream(endpoint)``: as ``Stream``, without blocking
    the event loop. Cancelling the task that awaits the next event cancels the transfer;
    ``break`` cancels it too (at once, not when the generator is collected)."""

    def __init__(self, client: ClientBase, endpoint: Dict[str, Any]) -> None:
        super().__init__(client, endpoint)
        self._queue: "Optional[asyncio.Queue[StreamItem]]" = None

    def __aiter__(self) -> "AsyncStream":
        return self

    async def __anext__(self) -> Dict[str, Any]:
        if not self._started and not self._finished:
            loop = asyncio.get_running_loop()
            items: "asyncio.Queue[StreamItem]" = asyncio.Queue()
            self._queue = items

            def deliver(item: StreamItem) -> None:  # on a library thread
                try:
                    loop.call_soon_threadsafe(items.put_nowait, item)
                except RuntimeError:  # the loop is closed; nobody is waiting any more
                    pass

            self._start(deliver)
        if self._finished or self._queue is None:
            raise StopAsyncIteration
        try:
            kind, value = await self._queue.get()
        except asyncio.CancelledError:
            self.close()
            raise
        if kind == "event":
            return self._event(value)
        self._finish(value)
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stops the stream (see close())."""
        self.close()

    async def __aenter__(self) -> "AsyncStream":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()


class StreamMixin(ClientBase):
    """The streaming methods of Client."""

    def stream(self, endpoint: Union[Endpoint, str, None] = None, /, **endpoint_keys: Unpack[StreamKeys]) -> Stream:
        """``for event in client.stream({"path": "events"})`` (or ``stream("events")``): the
        body events of one request as dicts, as they arrive. ``stream`` is ``"sse"`` unless
        the endpoint says ``"lines"`` or ``"chunks"`` (then ``event["chunk"]`` is bytes).
        The request starts at the first ``next()``; the iteration ends with the result
        (``.response``) or raises its Error subclass; ``break``/``close()`` cancels the
        transfer."""
        return Stream(self, stream_endpoint(endpoint, endpoint_keys))

    def astream(self, endpoint: Union[Endpoint, str, None] = None, /, **endpoint_keys: Unpack[StreamKeys]) -> AsyncStream:
        """``async for event in client.astream(...)``: ``stream`` for asyncio, without
        blocking the loop. Cancelling the awaiting task or ``break`` cancels the transfer."""
        return AsyncStream(self, stream_endpoint(endpoint, endpoint_keys))
