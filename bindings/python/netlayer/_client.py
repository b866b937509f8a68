"""Client and Response: the typed surface over the C ABI."""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _json
from ._errors import Error, InvalidRequestError, error_from_result
from ._lib import NL_CALLBACK, borrowed_string, lib, take_string

__all__ = ["Client", "Response"]

JSON = Any
Endpoint = Mapping[str, Any]

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


@dataclass(frozen=True)
class Response:
    """A successful result document.

    ``value`` is the decoded body (JSON value, text, base64 text or None, per the
    endpoint's ``response.decoder``, narrowed by ``keyPath``); ``headers`` has
    lower-case names; ``timing`` holds ``totalMs`` and friends.
    """

    status: int
    headers: Dict[str, str] = field(default_factory=dict)
    value: JSON = None
    from_cache: bool = False
    attempts: int = 1
    timing: Dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_result(cls, doc: Mapping[str, Any]) -> "Response":
        """Builds a Response from a success document ({"ok": true, ...})."""
        return cls(
            status=int(doc.get("status") or 0),
            headers=dict(doc.get("headers") or {}),
            value=doc.get("value"),
            from_cache=bool(doc.get("fromCache", False)),
            attempts=int(doc.get("attempts") or 1),
            timing=dict(doc.get("timing") or {}),
        )


def _outcome(doc: Any) -> Union[Response, Error]:
    """A result document as a Response or (not raised) an Error."""
    if not isinstance(doc, Mapping):
        return Error(f"netlayer: unexpected result document {doc!r}", kind="generic")
    if doc.get("ok") is True:
        return Response.from_result(doc)
    return error_from_result(doc)


def _response_or_raise(raw: bytes) -> Response:
    result = _outcome(_json.loads(raw))
    if isinstance(result, Error):
        raise result
    return result


# ---- asynchronous completion ---------------------------------------------------------
#
# One C callback object serves every asynchronous request of every client. It lives at
# module level, so it outlives any client and any request (the library may call it
# until nl_client_free returns). user_data carries an integer key into _pending, which
# maps to the event loop and future waiting for the result.

_pending: Dict[int, Tuple[asyncio.AbstractEventLoop, "asyncio.Future[bytes]"]] = {}
_pending_lock = threading.Lock()
_next_key = itertools.count(1)  # never 0: user_data NULL would arrive as None


def _settle(future: "asyncio.Future[bytes]", raw: bytes) -> None:
    if not future.done():  # the awaiting task may have been cancelled meanwhile
        future.set_result(raw)


def _on_result(request_id: int, result_json: Optional[int], user_data: Optional[int]) -> None:
    """Runs on a library thread: copies the borrowed result and hands it to the loop."""
    try:
        raw = borrowed_string(result_json)  # borrowed: copy now, never nl_free it
        with _pending_lock:
            entry = _pending.pop(user_data or 0, None)
        if entry is None:
            return
        loop, future = entry
        try:
            loop.call_soon_threadsafe(_settle, future, raw)
        except RuntimeError:  # the loop is closed; nobody is waiting any more
            pass
    except BaseException:  # never let an exception unwind into C
        pass


_callback = NL_CALLBACK(_on_result)


def _register(loop: asyncio.AbstractEventLoop, future: "asyncio.Future[bytes]") -> int:
    key = next(_next_key)
    with _pending_lock:
        _pending[key] = (loop, future)
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
        self._state = threading.Condition(threading.Lock())
        self._active = 0  # calls into the library in progress on this client
        self._closing = False
        self._handle: Optional[int] = None
        # Hooks (nl_client_set_hook) will keep their NL_HOOK_FN objects here, alive
        # until close() has freed the client.
        self._keepalive: Dict[int, Any] = {}
        error = ctypes.c_void_p()
        handle = lib.nl_client_new(_json.dumps(document), ctypes.byref(error))
        if not handle:
            if error.value:
                raise error_from_result(_json.loads(take_string(error.value)))
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
            while self._active:
                self._state.wait()
            handle, self._handle = self._handle, None
        lib.nl_client_free(handle)
        self._keepalive.clear()

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
        with self._state:
            if self._handle is None or self._closing:
                raise InvalidRequestError("client is closed", kind="invalid_request")
            self._active += 1
            return self._handle

    def _leave(self) -> None:
        with self._state:
            self._active -= 1
            if self._active == 0 and self._closing:
                self._state.notify_all()

    def _using(self) -> "_Using":
        return _Using(self)

    # ---- blocking calls ------------------------------------------------------------

    def request(self, endpoint: Optional[Endpoint] = None, /, **endpoint_keys: Any) -> Response:
        """Performs one endpoint document (nl_request); raises the Error subclass of a failure."""
        payload = _json.dumps(_endpoint(endpoint, endpoint_keys))
        with self._using() as handle:
            raw = take_string(lib.nl_request(handle, payload))
        return _response_or_raise(raw)

    def get(self, path: str, **endpoint_keys: Any) -> Response:
        """GET ``path`` (joined to baseURL); other endpoint keys as keywords."""
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
            raw = take_string(lib.nl_call(handle, name.encode("utf-8"), payload))
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
        return await self._start(_endpoint(endpoint, endpoint_keys))

    async def acall(self, name: str, params: Optional[Mapping[str, Any]] = None, **overlay: Any) -> Response:
        """The asynchronous ``call`` (nl_call_async). Cancelling the awaiting task
        cancels the request."""
        document = _with_aliases(overlay, _ENDPOINT_ALIASES)
        if params is not None:
            document["params"] = dict(params)
        return await self._start(document, name=name)

    async def _start(self, endpoint: Dict[str, Any], name: Optional[str] = None) -> Response:
        payload = _json.dumps(endpoint)
        loop = asyncio.get_running_loop()
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


def _method(method: str, path: str, keys: Mapping[str, Any]) -> Dict[str, Any]:
    if "method" in keys:
        raise TypeError(f"netlayer: {method.lower()}() sets the method; use request() for another")
    document = _with_aliases(keys, _ENDPOINT_ALIASES)
    document["path"] = path
    document["method"] = method
    return document
