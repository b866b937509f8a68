"""Streamed bodies: ``Client.stream`` (iterator) and ``Client.astream`` (async iterator).

A stream runs its endpoint (with ``"stream"``: sse, lines or chunks) through
nl_request_async. Body events reach the client's STREAM hook on a library thread; the
hook table (``_hooks.HookTable``) hands each one, by request id, to the stream's
queue: a ``queue.SimpleQueue`` for ``Stream``, an ``asyncio.Queue`` fed through
``loop.call_soon_threadsafe`` for ``AsyncStream``. The result callback goes through the
same table, so it always comes after the last event. Closing a stream early (``break``,
``close()``/``aclose()``, leaving the ``with`` block, garbage collection, or
cancelling the task awaiting the next event) calls nl_cancel.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import sys
import threading
from typing import TYPE_CHECKING, Any, Dict, Optional

from . import _json
from ._errors import Error
from ._hooks import Deliver, HookTable, StreamItem
from ._lib import NL_CALLBACK, borrowed_string
from ._result import Response, outcome

if TYPE_CHECKING:  # pragma: no cover
    from ._client import Client

__all__ = ["Stream", "AsyncStream", "result_callback", "register_table", "unregister_table"]

# ---- the result callback of streamed requests ------------------------------------------
#
# Like _client's callback for arequest: one module-level C callback object, user_data an
# integer key. Here the key leads to the client's hook table, which delivers the result
# to the stream registered under the request id (or holds it while that stream is still
# being registered).

_tables: Dict[int, HookTable] = {}
_tables_lock = threading.Lock()
_next_key = itertools.count(1)


def _on_result(request_id: int, result_json: Optional[int], user_data: Optional[int]) -> None:
    """Runs on a library thread: copies the borrowed result into its stream's queue."""
    try:
        raw = borrowed_string(result_json)
        with _tables_lock:
            table = _tables.pop(user_data or 0, None)
        if table is not None:
            table.deliver(request_id, ("result", raw))
    except BaseException:  # never let an exception unwind into C
        pass


result_callback = NL_CALLBACK(_on_result)


def register_table(table: HookTable) -> int:
    key = next(_next_key)
    with _tables_lock:
        _tables[key] = table
    return key


def unregister_table(key: int) -> None:
    with _tables_lock:
        _tables.pop(key, None)


# ---- the iterators ---------------------------------------------------------------------


class _StreamBase:
    """What Stream and AsyncStream share: starting, finishing, cancelling."""

    def __init__(self, client: "Client", endpoint: Dict[str, Any]) -> None:
        self._client = client
        self._payload = _json.dumps(endpoint)
        self._id = 0  # the nl_request_async id, once started
        self._started = False
        self._finished = False
        self._cancelled = False  # we called nl_cancel: the "cancelled" result is ours
        #: The Response of a stream that ended normally (``events`` holds the count).
        self.response: Optional[Response] = None

    @property
    def request_id(self) -> int:
        """The id nl_request_async returned (0 before the first event is asked for)."""
        return self._id

    def _start(self, deliver: Deliver) -> None:
        self._started = True
        try:
            self._id = self._client._stream_start(self._payload, deliver)
        except BaseException:
            self._finished = True
            raise

    def _finish(self, raw: bytes) -> None:
        """The result arrived: ends the iteration normally or raises the failure."""
        self._finished = True
        self._client._stream_end(self._id)
        result = outcome(_json.loads(raw))
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
            self._client._stream_end(self._id)

    def __del__(self) -> None:
        if not getattr(self, "_finished", True) and not sys.is_finalizing():
            try:
                self.close()
            except Exception:
                pass


class Stream(_StreamBase):
    """``for event in client.stream(endpoint)``: the body events of one request, as dicts.

    sse: ``{"id", "event", "data", "lastEventId", "retry"}``; lines: ``{"id", "line"}``;
    chunks: ``{"id", "chunk"}`` with ``chunk`` as bytes. The iteration ends with the
    result (``response`` is then set) or raises its Error subclass. ``break`` (or
    ``close()``, or leaving a ``with`` block) cancels the transfer.
    """

    def __init__(self, client: "Client", endpoint: Dict[str, Any]) -> None:
        super().__init__(client, endpoint)
        self._queue: "queue.SimpleQueue[StreamItem]" = queue.SimpleQueue()

    def __iter__(self) -> "Stream":
        return self

    def __next__(self) -> Dict[str, Any]:
        if not self._started and not self._finished:
            self._start(self._queue.put)
        if self._finished:
            raise StopIteration
        kind, value = self._queue.get()
        if kind == "event":
            event: Dict[str, Any] = value
            return event
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

    def __init__(self, client: "Client", endpoint: Dict[str, Any]) -> None:
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
            event: Dict[str, Any] = value
            return event
        self._finish(value)
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stops the stream (see close())."""
        self.close()

    async def __aenter__(self) -> "AsyncStream":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()
