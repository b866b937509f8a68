"""WebSockets: ``Client.websocket`` (blocking) and ``Client.awebsocket`` (asyncio).

One connection is one nl_websocket handle (include/netlayer.h) and the state its C
callbacks share with the Python side, under one lock:

Callbacks
    The four callbacks are module-level ctypes functions (they outlive every client
    and connection); their user_data is an integer key into ``_sockets``, which holds
    a weak reference to the connection, so a connection nobody holds any more is
    collected (and its handle freed) while the library still knows its key. They run
    on a library thread and only copy what they receive into the state, under the
    lock, and wake the reader: no user code, no waiting on anything but that lock
    (which no thread holds while it waits for the library). Exceptions never reach C.

The receive queue and backpressure
    Messages wait in a deque bounded by ``max_queue`` messages and ``max_queue_bytes``
    bytes. When a message fills it, on_message pauses reading (nl_websocket_pause):
    the socket is not read, so the server's writes wait in TCP's buffers and then in
    the server. At most the rest of the library's current read (4 KiB) arrives after
    that. Reading resumes when the reader has taken the queue down to half of both
    bounds. Pausing and resuming happen under the lock, so the library's state
    follows the order in which Python decided.

The handle's lifetime
    The handle is freed once (``_release``): after the closing handshake, on context
    exit, when the connection is garbage-collected, or when its client is closed
    (which ends its open connections first, as the client going away: close code
    1001, and the reader gets ``netlayer.CancelledError``). Sends run without the lock
    (they copy the message): ``_release`` waits for those in flight before it frees.
"""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import sys
import threading
import time
import weakref
from collections import deque
from typing import (TYPE_CHECKING, Any, Deque, Dict, Generator, List, Mapping, Optional, Tuple, Union)

from . import _callbacks, _json
from ._documents import websocket as _websocket_document
from ._errors import (Error, Headers, InvalidRequestError, NetlayerCancelledError, NetlayerTimeoutError,
                      NotConnectedError, error_from_result)
from ._lib import (NL_WS_CLOSE_FN, NL_WS_MESSAGE_FN, NL_WS_TEXT_FN, WEBSOCKET_CALLBACKS_VERSION, WS_BINARY,
                   WS_TEXT, OwnedString, WebSocketCallbacks, borrowed_string, lib, take_string)
from ._lifecycle import HOLDING_CODES, ClientBase
from ._types import WebSocketKeys

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["WebSocket", "AsyncWebSocket", "WebSocketMixin", "Message"]

#: A message: ``str`` for a text message, ``bytes`` for a binary one.
Message = Union[str, bytes]

#: The receive queue's default bounds (``max_queue`` is the websockets package's name).
DEFAULT_MAX_QUEUE = 16
DEFAULT_MAX_QUEUE_BYTES = 4 << 20
#: docs/documents.md: closeTimeout's default; close() waits that long, and a margin.
_DEFAULT_CLOSE_TIMEOUT = 5.0
_CLOSE_MARGIN = 5.0


def _taken_error(raw: OwnedString, what: str) -> Optional[Error]:
    """The Error of the error document the library wrote to ``raw`` (which is freed
    here), or None when it wrote none. Called in a ``finally`` after every call that
    takes an ``error_json`` out-parameter, so the string is freed whatever happens."""
    if not raw:
        return None
    try:
        return error_from_result(_json.loads(take_string(raw)))
    except Exception as e:  # an unreadable document (out of memory, ...): still an Error
        return Error(f"netlayer: {what} failed ({e})")


def _failed(failure: Optional[Error], what: str) -> Error:
    return failure or Error(f"netlayer: {what} failed without an error document")


class _Socket:
    """What WebSocket and AsyncWebSocket share: the handle, the state the callbacks
    fill, sending, closing and freeing."""

    def __init__(self, client: ClientBase, document: Dict[str, Any]) -> None:
        max_queue = document.pop("max_queue", DEFAULT_MAX_QUEUE)
        max_bytes = document.pop("max_queue_bytes", DEFAULT_MAX_QUEUE_BYTES)
        for name, value in (("max_queue", max_queue), ("max_queue_bytes", max_bytes)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidRequestError(f"netlayer: websocket key {name!r} must be an integer of at least 1, "
                                          f"not {value!r}", kind="invalid_request")
        close_timeout = document.get("closeTimeout", _DEFAULT_CLOSE_TIMEOUT)
        self._client = client
        self._owner = client._hooks  # what _callbacks.inside compares with
        self._max_queue: int = max_queue
        self._max_bytes: int = max_bytes
        self._close_wait = (close_timeout if isinstance(close_timeout, (int, float)) else 0) + _CLOSE_MARGIN
        # A re-entrant lock: the library may call back on this thread from inside a
        # call made under it (when its event loop is gone, it runs work in place).
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._messages: Deque[Tuple[Message, int]] = deque()
        self._queued_bytes = 0
        self._paused = False
        self._opening: Optional[Dict[str, Any]] = None
        self._failure: Optional[Error] = None
        self._ended: Optional[Tuple[int, str]] = None
        self._handle: Optional[int] = None
        self._released = False
        self._closing = False  # close() was called: what arrives beyond the bounds is dropped
        self._sends = 0  # nl_websocket_send calls in flight (without the lock)
        self._waiters: List[Tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]] = []
        self._key = next(_next_key)
        self._payload = _json.dumps(document)

    # ---- what the connection reports (read after the handshake) -------------------------

    @property
    def subprotocol(self) -> Optional[str]:
        """The subprotocol the server chose among ``protocols``, or None."""
        opening = self._opening or {}
        protocol = opening.get("protocol")
        return protocol if isinstance(protocol, str) else None

    @property
    def response_headers(self) -> Headers:
        """The header fields of the server's ``101 Switching Protocols`` answer."""
        opening = self._opening or {}
        headers = opening.get("headers")
        return Headers(headers if isinstance(headers, Mapping) else {})

    @property
    def close_code(self) -> Optional[int]:
        """The server's close code once the connection ended (1005: its close frame had
        none; 1006: it ended without one, as after a failure); None while open."""
        ended = self._ended
        return ended[0] if ended else None

    @property
    def close_reason(self) -> Optional[str]:
        """The reason of the server's close frame once the connection ended ("" when
        none); None while open."""
        ended = self._ended
        return ended[1] if ended else None

    @property
    def closed(self) -> bool:
        """True once the connection has ended (closed or failed)."""
        return self._ended is not None

    def __repr__(self) -> str:
        state = "open" if self._ended is None else f"closed {self._ended[0]}"
        return f"<netlayer.{type(self).__name__} {state}>"

    # ---- opening --------------------------------------------------------------------------

    def _open(self) -> None:
        """nl_websocket_open; the handshake's outcome arrives through the callbacks."""
        callbacks = WebSocketCallbacks()
        callbacks.version = WEBSOCKET_CALLBACKS_VERSION
        callbacks.on_open = _ON_OPEN
        callbacks.on_message = _ON_MESSAGE
        callbacks.on_error = _ON_ERROR
        callbacks.on_close = _ON_CLOSE
        callbacks.user_data = self._key
        _sockets[self._key] = weakref.ref(self)  # before the call: callbacks may come first
        client = self._client  # (named so: see _lifecycle.HOLDING_CODES)
        error = OwnedString()
        handle = None
        failure: Optional[Error] = None
        try:
            with client._using() as client_handle:
                try:
                    handle = lib.nl_websocket_open(client_handle, self._payload, ctypes.byref(callbacks),
                                                   ctypes.byref(error))
                finally:
                    failure = _taken_error(error, "nl_websocket_open")
                if handle:
                    with self._lock:
                        self._handle = handle
                    # Registered while the client's handle is in use: a close() of the
                    # client waits for this call, then finds the connection.
                    _client_sockets(client)[self._key] = weakref.ref(self)
        finally:
            if not handle:
                self._released = True
                _sockets.pop(self._key, None)
        if not handle:
            raise _failed(failure, "nl_websocket_open")

    def _opened_or_raise(self) -> None:
        """After the handshake: nothing when it succeeded, else frees the handle and
        raises why it failed."""
        with self._lock:
            if self._opening is not None:
                return
            failure = self._failure or NotConnectedError(
                f"the server closed the WebSocket ({self.close_code}) before it opened", kind="not_connected")
        self._release()
        raise failure

    # ---- callbacks (a library thread; the lock held) ---------------------------------------

    def _wake(self) -> None:
        """Wakes blocked readers and awaiting tasks (with the lock held)."""
        self._changed.notify_all()
        if self._waiters:
            waiters, self._waiters = self._waiters, []
            for loop, future in waiters:
                try:
                    loop.call_soon_threadsafe(_settle, future)
                except RuntimeError:  # its loop is closed: nobody waits there any more
                    pass

    def _on_open(self, document: Dict[str, Any]) -> None:
        with self._lock:
            if not self._released:
                self._opening = document
                self._wake()

    def _on_message(self, ws: Optional[int], message: Message, length: int) -> None:
        with self._lock:
            if self._released or self._ended is not None:
                return
            full = len(self._messages) >= self._max_queue or self._queued_bytes >= self._max_bytes
            if full and self._closing:
                return  # closing: the closing handshake reads on, the reader said it is done
            self._messages.append((message, length))
            self._queued_bytes += length
            if not self._paused and not self._closing and (
                    len(self._messages) >= self._max_queue or self._queued_bytes >= self._max_bytes):
                self._paused = True
                lib.nl_websocket_pause(ws, 1)  # the pointer of this call: valid during it
            self._wake()

    def _on_error(self, error: Error) -> None:
        with self._lock:
            if self._failure is None and not self._released:
                self._failure = error
                self._wake()

    def _on_close(self, code: int, reason: str) -> None:
        with self._lock:
            if self._ended is None:
                self._ended = (code, reason)
            self._wake()

    # ---- reading (the lock held) -----------------------------------------------------------

    def _take(self) -> Optional[Message]:
        """The next queued message (resuming reads once the queue is down to half), or
        None when the queue is empty."""
        if not self._messages:
            return None
        message, length = self._messages.popleft()
        self._queued_bytes -= length
        if (self._paused and len(self._messages) <= self._max_queue // 2
                and self._queued_bytes <= self._max_bytes // 2):
            self._paused = False
            if self._handle is not None:
                lib.nl_websocket_pause(self._handle, 0)
        return message

    def _end_error(self) -> Error:
        """Why no message will come any more: the connection's failure, or that it closed."""
        if self._failure is not None:
            return self._failure
        code, reason = self._ended or (1006, "")
        said = f", reason {reason!r}" if reason else ""
        return NotConnectedError(f"the WebSocket is closed (code {code}{said})", kind="not_connected")

    def _would_deadlock(self) -> bool:
        """Waiting on a library thread of the same client stops its event loop, which
        is what would bring the message."""
        return _callbacks.inside(self._owner)

    # ---- sending and closing ---------------------------------------------------------------

    def _send(self, message: Union[str, bytes, bytearray, memoryview]) -> None:
        if isinstance(message, str):
            try:
                data = message.encode("utf-8")
            except UnicodeEncodeError as e:
                raise InvalidRequestError(f"netlayer: a text message must be encodable as UTF-8 ({e.reason} at "
                                          f"{e.start}); send bytes for a binary message",
                                          kind="invalid_request") from e
            kind = WS_TEXT
        elif isinstance(message, (bytes, bytearray, memoryview)):
            data = bytes(message)
            kind = WS_BINARY
        else:
            raise TypeError("netlayer: send() takes str (a text message) or bytes (a binary message), "
                            f"not {type(message).__name__}")
        with self._lock:
            handle = self._handle
            if handle is None or self._released:
                why = f" ({self._failure.message})" if self._failure is not None else ""
                raise NotConnectedError(f"the WebSocket is closed{why}", kind="not_connected")
            self._sends += 1
        error = OwnedString()
        rc = -1
        try:
            rc = lib.nl_websocket_send(handle, kind, data, len(data), ctypes.byref(error))
        finally:
            failure = _taken_error(error, "nl_websocket_send")
            with self._lock:
                self._sends -= 1
                if not self._sends:
                    self._changed.notify_all()
        if rc != 0:
            raise _failed(failure, "nl_websocket_send")

    def _start_close(self, code: int, reason: str) -> bool:
        """nl_websocket_close; False when there is nothing to close any more."""
        if not isinstance(code, int) or isinstance(code, bool):
            raise TypeError(f"netlayer: close() takes an int code, not {type(code).__name__}")
        if not isinstance(reason, str):
            raise TypeError(f"netlayer: close() takes a str reason, not {type(reason).__name__}")
        encoded = reason.encode("utf-8", "surrogatepass")  # a lone surrogate: the library names it
        with self._lock:
            if self._handle is None or self._ended is not None:
                return False
            error = OwnedString()
            rc = -1
            try:
                rc = lib.nl_websocket_close(self._handle, code, encoded, ctypes.byref(error))
            finally:
                failure = _taken_error(error, "nl_websocket_close")
            if rc == 0:
                self._closing = True
                return True
        raise _failed(failure, "nl_websocket_close")

    def _release(self, failure: Optional[Error] = None) -> None:
        """Frees the handle (once). A connection still open ends at once, with close
        code 1001; ``failure`` is then what its reader gets."""
        with self._lock:
            if self._released:
                return
            self._released = True
            handle, self._handle = self._handle, None
            if self._ended is None:
                self._ended = (1006, "")
                if self._failure is None:
                    self._failure = failure or NotConnectedError("the WebSocket was closed", kind="not_connected")
            while self._sends:
                self._changed.wait()
            self._wake()
        # Without the lock: nl_websocket_free waits for a callback that may be waiting for it.
        if handle is not None:
            lib.nl_websocket_free(handle)
        _sockets.pop(self._key, None)
        _client_sockets(self._client).pop(self._key, None)

    def _after_fork(self) -> None:
        """In a child of fork(): the connection is the parent's; it is over here."""
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._waiters = []
        self._sends = 0
        self._handle = None
        self._released = True
        if self._ended is None:
            self._ended = (1006, "")
            self._failure = self._failure or NotConnectedError(
                "the WebSocket belongs to the parent process (fork)", kind="not_connected")

    def __del__(self) -> None:
        if not getattr(self, "_released", True) and not sys.is_finalizing():
            try:
                self._release()
            except Exception:
                pass


class WebSocket(_Socket):
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
        deadline = None if timeout is None else time.monotonic() + timeout
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
        if self._start_close(code, reason):
            with self._changed:
                deadline = time.monotonic() + self._close_wait
                while self._ended is None and not self._would_deadlock():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._changed.wait(remaining)
        self._release()

    def __enter__(self) -> "WebSocket":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncWebSocket(_Socket):
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
        deadline = None if timeout is None else loop.time() + timeout
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


def _settle(future: "asyncio.Future[None]") -> None:
    if not future.done():
        future.set_result(None)


# ---- the C callbacks ----------------------------------------------------------------------

#: user_data key -> the connection (weakly: a connection nobody holds is collected)
_sockets: Dict[int, "weakref.ref[_Socket]"] = {}
_next_key = itertools.count(1)  # never 0: user_data NULL arrives as None


def _lookup(user_data: Optional[int]) -> Optional[_Socket]:
    ref = _sockets.get(user_data or 0)
    return ref() if ref is not None else None


def _on_open(ws: Optional[int], open_json: Optional[int], user_data: Optional[int]) -> None:
    try:
        socket = _lookup(user_data)
        if socket is None:
            return
        document = _json.loads(borrowed_string(open_json))
        _callbacks.enter(socket._owner)
        try:
            socket._on_open(document if isinstance(document, dict) else {})
        finally:
            _callbacks.leave()
    except BaseException:  # never let an exception unwind into C
        pass


def _on_message(ws: Optional[int], kind: int, data: Optional[int], length: int, user_data: Optional[int]) -> None:
    try:
        socket = _lookup(user_data)
        if socket is None:
            return
        payload = ctypes.string_at(data, length) if data and length else b""
        # Text is valid UTF-8 (the library checked it).
        message: Message = payload.decode("utf-8", "replace") if kind == WS_TEXT else payload
        _callbacks.enter(socket._owner)
        try:
            socket._on_message(ws, message, length)
        finally:
            _callbacks.leave()
    except BaseException:
        pass


def _on_error(ws: Optional[int], error_json: Optional[int], user_data: Optional[int]) -> None:
    try:
        socket = _lookup(user_data)
        if socket is None:
            return
        document = _json.loads(borrowed_string(error_json))
        error = error_from_result(document if isinstance(document, Mapping) else {})
        _callbacks.enter(socket._owner)
        try:
            socket._on_error(error)
        finally:
            _callbacks.leave()
    except BaseException:
        pass


def _on_close(ws: Optional[int], code: int, reason: Optional[int], user_data: Optional[int]) -> None:
    try:
        socket = _lookup(user_data)
        if socket is None:
            return
        text = borrowed_string(reason).decode("utf-8", "replace")
        _callbacks.enter(socket._owner)
        try:
            socket._on_close(int(code), text)
        finally:
            _callbacks.leave()
    except BaseException:
        pass


_ON_OPEN = NL_WS_TEXT_FN(_on_open)
_ON_MESSAGE = NL_WS_MESSAGE_FN(_on_message)
_ON_ERROR = NL_WS_TEXT_FN(_on_error)
_ON_CLOSE = NL_WS_CLOSE_FN(_on_close)


# ---- the client's side ----------------------------------------------------------------------

SocketRefs = Dict[int, "weakref.ref[_Socket]"]


def _client_sockets(client: ClientBase) -> SocketRefs:
    """The client's connections not freed yet, by key (weakly). A plain dict, whose
    item assignment and pop are atomic: ``_release`` may run in a finalizer, on any
    thread, so it takes no lock."""
    sockets: SocketRefs = client.__dict__.setdefault("_websockets", {})
    return sockets


def _alive(refs: SocketRefs) -> List[_Socket]:
    """The connections ``refs`` still names (copied: a finalizer may change it meanwhile)."""
    while True:
        try:
            items = list(refs.values())
            break
        except RuntimeError:  # changed size during the copy: copy again
            continue
    return [socket for socket in (ref() for ref in items) if socket is not None]


def open_count() -> int:
    """How many connections have not been freed (tests)."""
    return len(_alive(_sockets))


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
        ``close_timeout``, ``compression``, ``fragment_bytes``), and the receive queue's
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
        for socket in _alive(_client_sockets(self)):
            socket._release(NetlayerCancelledError("the client was closed", kind="cancelled"))
        super()._before_free()

    def _reset_after_fork(self) -> None:
        super()._reset_after_fork()
        sockets = _client_sockets(self)
        for socket in _alive(sockets):
            socket._after_fork()
        sockets.clear()


HOLDING_CODES.add(_Socket._open.__code__)
