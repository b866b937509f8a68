"""One WebSocket connection as the C library and the Python side share it: the state
behind ``WebSocket`` and ``AsyncWebSocket`` (``_websocket``), and the C callbacks.

One connection is one nl_websocket handle (include/netlayer.h) and the state its C
callbacks share with the Python side, under one lock:

Callbacks
    The four callbacks are module-level ctypes functions (they outlive every client
    and connection); their user_data is an integer key into ``_sockets``, which holds
    a weak reference to the connection, so a connection nobody holds any more is
    collected (and its handle freed) while the library still knows its key. They run
    on a library thread and only copy what they receive into the state, under the
    lock, and wake the reader: no user code, no waiting on anything but that lock.
    Under the lock, Python calls only the library functions that never wait for a
    callback (nl_websocket_pause, nl_websocket_close); nl_websocket_free, which waits
    for a callback that is running, is called without it. Exceptions never reach C.

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
import weakref
from collections import deque
from typing import Any, Deque, Dict, List, Mapping, Optional, Tuple, Union

from . import _callbacks, _json
from ._errors import Error, Headers, InvalidRequestError, NotConnectedError, error_from_result
from ._lib import (NL_WS_CLOSE_FN, NL_WS_MESSAGE_FN, NL_WS_TEXT_FN, WEBSOCKET_CALLBACKS_VERSION, WS_BINARY,
                   WS_TEXT, OwnedString, WebSocketCallbacks, borrowed_string, lib, take_string)
from ._lifecycle import HOLDING_CODES, ClientBase
from ._uncopyable import Uncopyable

__all__ = ["Socket", "Message", "client_sockets", "alive", "open_count", "recv_wait"]

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


def recv_wait(timeout: Optional[float]) -> Optional[float]:
    """How long ``recv(timeout=...)`` waits: None for no limit (also for ``inf`` and
    for values past what a wait can take), else the seconds, checked."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout != timeout or timeout < 0:
        raise InvalidRequestError(f"netlayer: recv timeout must be a number of seconds of at least 0 or None, "
                                  f"not {timeout!r}", kind="invalid_request")
    return None if timeout >= threading.TIMEOUT_MAX else float(timeout)


class Socket(Uncopyable):
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
                    client_sockets(client)[self._key] = weakref.ref(self)
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
        client_sockets(self._client).pop(self._key, None)

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


def _settle(future: "asyncio.Future[None]") -> None:
    if not future.done():
        future.set_result(None)


# ---- the C callbacks ----------------------------------------------------------------------

#: user_data key -> the connection (weakly: a connection nobody holds is collected)
_sockets: Dict[int, "weakref.ref[Socket]"] = {}
_next_key = itertools.count(1)  # never 0: user_data NULL arrives as None


def _lookup(user_data: Optional[int]) -> Optional[Socket]:
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

SocketRefs = Dict[int, "weakref.ref[Socket]"]


def client_sockets(client: ClientBase) -> SocketRefs:
    """The client's connections not freed yet, by key (weakly). A plain dict, whose
    item assignment and pop are atomic: ``_release`` may run in a finalizer, on any
    thread, so it takes no lock."""
    sockets: SocketRefs = client.__dict__.setdefault("_websockets", {})
    return sockets


def alive(refs: SocketRefs) -> List[Socket]:
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
    return len(alive(_sockets))


HOLDING_CODES.add(Socket._open.__code__)
