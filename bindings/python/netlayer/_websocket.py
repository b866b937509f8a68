"""WebSockets: ``Client.websocket`` (blocking) and ``Client.awebsocket`` (asyncio), over
the connection state of ``_wsconnection`` (callbacks, receive queue, lifetime)."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TYPE_CHECKING, Any, Generator, Mapping, Optional, Union

from . import _callbacks
from ._documents import websocket as _websocket_document
from ._errors import InvalidRequestError, NetlayerCancelledError, NetlayerTimeoutError
from ._lifecycle import ClientBase
from ._types import WebSocketKeys
from ._wsconnection import Message, Socket, alive, client_sockets, open_count, recv_wait

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["WebSocket", "AsyncWebSocket", "AsyncOpening", "WebSocketMixin", "Message", "open_count"]


class WebSocket(Socket):
    """A WebSocket connection made with a client's settings (``Client.websocket``):

        with client.websocket("chat", protocols=["chat.v2"]) as ws:
            ws.send("hello")             # str: a text message; bytes: a binary one
            reply = ws.recv(timeout=5)   # str or bytes
            for message in ws:           # until the server closes
                ...

    ``recv`` returns the next message, waiting for it (at most ``timeout`` seconds, then
    ``netlayer.TimeoutError``; the connection stays open). Messages received before the
    connection ended are still returned; then ``recv`` raises the connection's failure
    (``ProtocolError``, ``TooLargeError``, ``netlayer.TimeoutError``, ...) or, after a
    clean close, ``NotConnectedError``, and iteration ends (or raises the failure).
    ``close()`` and leaving the ``with`` block close with 1000 and wait for the
    server's answer (at most ``close_timeout``); ``close_code``/``close_reason`` then
    tell how it ended.
    """

    def recv(self, timeout: Optional[float] = None) -> Message:
        """The next message: ``str`` (text) or ``bytes`` (binary)."""
        message = self._next(timeout)
        if message is None:
            with self._lock:
                raise self._end_error()
        return message

    def _next(self, timeout: Optional[float]) -> Optional[Message]:
        """The next message, or None once the connection ended cleanly (a failure raises)."""
        wait = recv_wait(timeout)
        deadline = None if wait is None else time.monotonic() + wait
        with self._changed:
            while True:
                message = self._take()
                if message is not None:
                    return message
                if self._ended is not None:
                    if self._failure is not None:
                        raise self._failure
                    return None
                if self._would_deadlock():
                    raise InvalidRequestError("a WebSocket cannot be read by blocking inside a hook or callback of "
                                              "the same client; use awebsocket", kind="invalid_request")
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise NetlayerTimeoutError(f"no WebSocket message arrived within {timeout} s (recv timeout)",
                                               kind="timeout")
                self._changed.wait(remaining)

    def __iter__(self) -> "WebSocket":
        return self

    def __next__(self) -> Message:
        message = self._next(None)
        if message is None:
            raise StopIteration
        return message

    def send(self, message: Union[str, bytes, bytearray, memoryview]) -> None:
        """Queues a message (``str``: text, ``bytes``-like: binary) and returns. Raises
        ``NotConnectedError`` once the connection is closing or closed, and
        ``TooLargeError`` when the server has not taken ``max_queued_bytes`` sent
        already."""
        self._send(message)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Closes with ``code`` (1000, or 3000-4999) and ``reason`` (at most 123 bytes
        of UTF-8), waits for the server's answer (at most ``close_timeout``), and frees
        the connection. Idempotent; a connection that ended already is only freed."""
        if not self._start_close(code, reason):
            self._release()
            return
        try:
            with self._changed:
                deadline = time.monotonic() + self._close_wait
                while self._ended is None and not self._would_deadlock():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._changed.wait(remaining)
        finally:  # also when Ctrl-C interrupts the wait
            self._release()

    def __enter__(self) -> "WebSocket":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncWebSocket(Socket):
    """A WebSocket for asyncio (``Client.awebsocket``):

        async with client.awebsocket("chat") as ws:
            await ws.send("hello")
            async for message in ws:
                ...

    The same connection as ``WebSocket``, awaited instead of blocking: ``recv``
    (with ``timeout``), ``async for``, ``send``, ``close``. The library's callbacks
    wake the awaiting task through ``loop.call_soon_threadsafe``.
    """

    async def recv(self, timeout: Optional[float] = None) -> Message:
        """The next message: ``str`` (text) or ``bytes`` (binary)."""
        message = await self._next(timeout)
        if message is None:
            with self._lock:
                raise self._end_error()
        return message

    async def _next(self, timeout: Optional[float]) -> Optional[Message]:
        loop = asyncio.get_running_loop()
        wait = recv_wait(timeout)
        deadline = None if wait is None else loop.time() + wait
        while True:
            with self._lock:
                message = self._take()
                if message is not None:
                    return message
                if self._ended is not None:
                    if self._failure is not None:
                        raise self._failure
                    return None
                future: "asyncio.Future[None]" = loop.create_future()
                self._waiters.append((loop, future))
            remaining = None if deadline is None else deadline - loop.time()
            try:
                if remaining is not None and remaining <= 0:
                    raise asyncio.TimeoutError
                await asyncio.wait_for(future, remaining)
            except asyncio.TimeoutError:
                self._forget(future)
                raise NetlayerTimeoutError(f"no WebSocket message arrived within {timeout} s (recv timeout)",
                                           kind="timeout") from None
            except BaseException:
                self._forget(future)
                raise

    def _forget(self, future: "asyncio.Future[None]") -> None:
        with self._lock:
            self._waiters = [(loop, f) for loop, f in self._waiters if f is not future]

    def __aiter__(self) -> "AsyncWebSocket":
        return self

    async def __anext__(self) -> Message:
        message = await self._next(None)
        if message is None:
            raise StopAsyncIteration
        return message

    async def send(self, message: Union[str, bytes, bytearray, memoryview]) -> None:
        """Queues a message (see ``WebSocket.send``); it never waits."""
        self._send(message)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Closes with ``code`` and ``reason`` and awaits the server's answer (at most
        ``close_timeout``), then frees the connection (see ``WebSocket.close``)."""
        if self._start_close(code, reason):
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self._close_wait
            while True:
                with self._lock:
                    if self._ended is not None:
                        break
                    future: "asyncio.Future[None]" = loop.create_future()
                    self._waiters.append((loop, future))
                remaining = deadline - loop.time()
                try:
                    await asyncio.wait_for(future, max(0.0, remaining))
                except asyncio.TimeoutError:
                    self._forget(future)
                    break
                except BaseException:
                    self._forget(future)
                    self._release()
                    raise
        self._release()

    async def _handshake(self) -> None:
        """Awaits the handshake (after _open)."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                with self._lock:
                    if self._opening is not None or self._ended is not None:
                        break
                    future: "asyncio.Future[None]" = loop.create_future()
                    self._waiters.append((loop, future))
                await future
        except BaseException:  # cancelled while the handshake runs: abandon it
            self._release()
            raise
        self._opened_or_raise()

    async def __aenter__(self) -> "AsyncWebSocket":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class AsyncOpening:
    """What ``awebsocket`` returns: ``await`` it for the AsyncWebSocket, or use it in
    ``async with`` (the connection is closed on exit)."""

    def __init__(self, socket: AsyncWebSocket) -> None:
        self._socket = socket
        self._opened = False

    async def _open(self) -> AsyncWebSocket:
        if self._opened:
            raise InvalidRequestError("netlayer: this awebsocket() was awaited already", kind="invalid_request")
        self._opened = True
        self._socket._open()
        await self._socket._handshake()
        return self._socket

    def __await__(self) -> Generator[Any, None, AsyncWebSocket]:
        return self._open().__await__()

    async def __aenter__(self) -> AsyncWebSocket:
        return await self._open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self._socket.close()



class WebSocketMixin(ClientBase):
    """The WebSocket methods of Client."""

    def websocket(self, path: Union[str, Mapping[str, Any]], /, **keys: Unpack[WebSocketKeys]) -> WebSocket:
        """Opens a WebSocket to ``path`` (joined to the base URL, or a ``ws://``/``wss://``
        URL) with the client's settings, waits for the handshake, and returns the
        connection; raises the handshake's failure (``StatusError`` for an answer other
        than 101, ``ProtocolError``, ``netlayer.TimeoutError``, ``InvalidRequestError``
        naming a bad key, ...).

        Keywords: ``protocols`` (subprotocols offered; the chosen one is
        ``ws.subprotocol``), ``headers``, ``params`` (the query), ``cookies``, ``auth``,
        ``timeout`` (of the handshake), the websocket document's keys in snake_case
        (``max_message_bytes``, ``max_queued_bytes`` (the send queue), ``idle_timeout``,
        ``ping_interval`` (a ping after that much silence from the server; still nothing
        after as long again fails the connection), ``close_timeout``, ``compression``,
        ``fragment_bytes``), and the receive queue's
        bounds: ``max_queue`` messages (16) and ``max_queue_bytes`` (4 MiB). A full
        queue stops reading from the socket until the reader has taken half of it, so
        a fast server waits for a slow reader instead of filling memory.
        """
        socket = WebSocket(self, _websocket_document(path, keys))
        if _callbacks.inside(self._hooks):
            raise InvalidRequestError("a blocking WebSocket handshake inside a hook or callback of the same client "
                                      "would deadlock; use awebsocket", kind="invalid_request")
        socket._open()
        try:
            with socket._changed:
                while socket._opening is None and socket._ended is None:
                    socket._changed.wait()
        except BaseException:  # KeyboardInterrupt during the handshake: abandon it
            socket._release()
            raise
        socket._opened_or_raise()
        return socket

    def awebsocket(self, path: Union[str, Mapping[str, Any]], /, **keys: Unpack[WebSocketKeys]) -> AsyncOpening:
        """The asyncio ``websocket``: ``ws = await client.awebsocket(path)`` or
        ``async with client.awebsocket(path) as ws``. Cancelling the task that awaits
        the handshake abandons it."""
        return AsyncOpening(AsyncWebSocket(self, _websocket_document(path, keys)))

    def _before_free(self) -> None:
        """close(): the client's connections end first (close code 1001; their readers
        get ``netlayer.CancelledError``)."""
        for socket in alive(client_sockets(self)):
            socket._release(NetlayerCancelledError("the client was closed", kind="cancelled"))
        super()._before_free()

    def _reset_after_fork(self) -> None:
        super()._reset_after_fork()
        sockets = client_sockets(self)
        for socket in alive(sockets):
            socket._after_fork()
        sockets.clear()
