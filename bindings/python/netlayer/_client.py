"""Client: the typed surface over the C ABI, assembled from one module per concern.

``_lifecycle`` (the handle, close(), fork()), ``_sync`` (blocking calls), ``_asyncio``
(arequest/acall over completion queues), ``_stream`` (stream/astream), ``_websocket``
(websocket/awebsocket); the hooks' setters are here, their machinery in ``_hooks``.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, TypeVar

from . import _logging
from ._asyncio import AsyncMixin
from ._hooks import HOOK_ADAPT, HOOK_LOG, HOOK_PROGRESS, HOOK_RESOLVE_ERROR, HOOK_RETRY
from ._lib import NO_HOOK, lib
from ._lifecycle import HOLDING_CODES
from ._result import Redirect, Response
from ._stream import StreamMixin
from ._sync import SyncMixin
from ._websocket import WebSocketMixin

__all__ = ["Client", "Redirect", "Response"]

#: A hook: ``fn(event: dict) -> dict | None`` (see Client.on_adapt), or None to remove it.
_F = TypeVar("_F", bound=Optional[Callable[[Dict[str, Any]], Any]])


class Client(SyncMixin, AsyncMixin, StreamMixin, WebSocketMixin):
    """An HTTP client: one connection pool and one event-loop thread in the library.

    ``Client(config, **config_keys)`` takes a base URL string or a config document
    (docs/documents.md, "Config"); keyword arguments are merged over it
    (``Client("https://api.example.com/", timeout=5)``). Every key is also accepted in
    snake_case, and requests' names (``params``, ``auth=(user, password)``) are mapped
    (see ``_documents``). A config the library refuses raises ``InvalidRequestError``
    naming the key.

    Threads: one Client may be used from any number of threads and event loops at once.
    ``close()`` may be called from anywhere, hooks and callbacks included: it waits for
    blocking calls in flight on other threads to return (from a hook or callback it
    returns at once and the client is freed when they have), ends its open WebSockets
    (close code 1001; their readers get ``netlayer.CancelledError``), cancels
    asynchronous requests (they raise ``netlayer.CancelledError``), and calls made
    after it raise ``InvalidRequestError("client is closed")``.

    Ctrl-C during a blocking call on the main thread raises KeyboardInterrupt at once
    and cancels the transfer. After ``os.fork()`` the child may go on using the client
    (new connections of its own); requests in flight at the fork stay the parent's.
    """

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
        """Sets the LOG hook, called with every log event (config ``log.level``, or the
        ``NETLAYER_LOG`` environment variable), secrets redacted. Its return value is
        ignored; an exception is printed to stderr and the request goes on. None removes
        it: events then go to ``logging.getLogger("netlayer")``, as without a hook."""
        if fn is None and self._logs_to_logging:
            self._set_hook(HOOK_LOG, _logging.emit)
            return fn
        return self._set_hook(HOOK_LOG, fn)

    def on_progress(self, fn: _F) -> _F:
        """Sets the PROGRESS hook, called for requests with ``"progress": True`` with
        ``{"id", "direction", "done", "total"}`` (at most every 50 ms and at completion);
        ``{"cancel": True}`` stops the transfer. None removes it. A request given its
        own ``on_progress=`` keyword reports to that function instead."""
        return self._set_hook(HOOK_PROGRESS, fn)

    def _set_hook(self, kind: int, fn: _F) -> _F:
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


HOLDING_CODES.add(Client._set_hook.__code__)
