"""Blocking calls: request, get/post/..., call, batch.

The hot path (``get(path)``, ``request(...)``) is one foreign call, nl_request_borrowed,
plus one JSON parse: no lock (see ``_lifecycle`` for how ``_calls`` keeps the handle
valid against close()) and one module-flag check for the Ctrl-C pipe (``_interrupt``).
A request given ``on_progress=`` goes another way: started with nl_request_start and
its own progress callback (``_progress``), and waited for in Python.
"""

from __future__ import annotations

import queue
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _callbacks, _interrupt, _json
from ._documents import Endpoint, endpoint_name, normalise_endpoint, endpoint as _endpoint, method as _method, overlay as _overlay
from ._errors import Error, InvalidRequestError
from ._lib import call_document, lib, request_document, take_string
from ._lifecycle import HOLDING_CODES, ClientBase, closed_error
from ._progress import ProgressRequest, progress_payload
from ._result import Response, outcome as _outcome, response_or_raise as _response_or_raise
from ._types import EndpointOptions, MethodKeys, RequestKeys

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["SyncMixin"]

_dumps = _json.dumps
_dumps_fast = _json.dumps_fast


class SyncMixin(ClientBase):
    """The blocking methods of Client."""

    def request(self, endpoint: Optional[Endpoint] = None, /, **endpoint_keys: Unpack[RequestKeys]) -> Response:
        """Performs one endpoint document (nl_request); raises the Error subclass of a
        failure. ``on_progress=fn`` receives this request's progress events (see
        README.md, "Progress")."""
        document = _endpoint(endpoint, endpoint_keys)
        if "on_progress" in document:
            return self._perform_started(document, None)
        return self._perform(_dumps(document))

    def _perform(self, payload: bytes) -> Response:
        """nl_request on an encoded endpoint document: the blocking calls' hot path, kept
        to a few C-level operations around the library call (no lock: see _calls)."""
        _interrupt.ensure()
        calls = self._calls
        calls.append(None)
        try:
            handle = self._handle
            if handle is None or self._closing:
                raise closed_error()
            raw = request_document(handle, payload)
        finally:
            calls.pop()
            if self._closing:
                self._left_call()
        if raw is None:
            raise MemoryError("netlayer: the library returned NULL (out of memory)")
        return _response_or_raise(raw)

    def get(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """GET ``path`` (joined to baseURL); other endpoint keys as keywords."""
        if not endpoint_keys and type(path) is str and "?" not in path and "#" not in path:
            try:
                payload = _dumps_fast({"path": path, "method": "GET"})
            except (TypeError, ValueError):  # dumps names what it cannot write (a lone surrogate)
                payload = _dumps({"path": path, "method": "GET"})
            return self._perform(payload)
        if (len(endpoint_keys) == 1 and ("query" in endpoint_keys or "params" in endpoint_keys)
                and type(path) is str and "?" not in path and "#" not in path
                and isinstance(endpoint_keys.get("query", endpoint_keys.get("params")), dict)):
            # get(path, params=...): the keywords are a fresh dict and a query needs no
            # renaming, so it becomes the document as it is (what _method would build).
            document: Dict[str, Any] = endpoint_keys  # type: ignore[assignment]
            if "params" in document:
                document["query"] = document.pop("params")
            document["path"] = path
            document["method"] = "GET"
            try:
                payload = _dumps(document)
            except (TypeError, ValueError):  # bytes to read as text, or a value to refuse naming it
                del document["path"], document["method"]
                return self._send("GET", path, document)
            return self._perform(payload)
        return self._send("GET", path, endpoint_keys)

    def post(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """POST ``path``; e.g. ``client.post("movies", body={"title": "Dune"})``."""
        return self._send("POST", path, endpoint_keys)

    def put(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """PUT ``path``."""
        return self._send("PUT", path, endpoint_keys)

    def patch(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """PATCH ``path``."""
        return self._send("PATCH", path, endpoint_keys)

    def delete(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """DELETE ``path``."""
        return self._send("DELETE", path, endpoint_keys)

    def head(self, path: str, **endpoint_keys: Unpack[MethodKeys]) -> Response:
        """HEAD ``path``."""
        return self._send("HEAD", path, endpoint_keys)

    def _send(self, method: str, path: str, endpoint_keys: Mapping[str, Any]) -> Response:
        """``get(path, **keys)`` and siblings: the document is built once, here (the
        keywords are a fresh dict already), not copied again through ``request``."""
        document = _method(method, path, endpoint_keys)
        if "on_progress" in document:
            return self._perform_started(document, None)
        return self._perform(_dumps(document))

    def call(self, name: str, params: Optional[Mapping[str, Any]] = None, **overlay: Unpack[EndpointOptions]) -> Response:
        """Performs the config's endpoint ``name`` (nl_call), ``overlay`` merged over it and
        ``params`` filling the ``{placeholders}`` of its path; for an operation of the
        config's ``openapi`` document, ``params`` are its parameters and ``json=`` (or
        ``body=``) its request body, checked against the document before sending."""
        document = _overlay(params, overlay)
        if "on_progress" in document:
            return self._perform_started(document, name)
        payload = _dumps(document)
        _interrupt.ensure()
        with self._using() as handle:
            raw = call_document(handle, endpoint_name(name), payload)
        if raw is None:
            raise MemoryError("netlayer: the library returned NULL (out of memory)")
        return _response_or_raise(raw)

    def operations(self) -> List[Dict[str, Any]]:
        """What ``call`` can call (nl_client_operations): the config's named endpoints,
        then the operations of its ``openapi`` document, each a dict with ``name``,
        ``method``, ``path``, ``source`` (``"endpoints"`` or ``"openapi"``), ``params``
        (each ``name``, ``in``, ``required``, ``schema``) and ``body``."""
        with self._using() as handle:
            raw = take_string(lib.nl_client_operations(handle))
        return list(_json.loads(raw)["operations"])

    def batch(self, endpoints: Sequence[Endpoint]) -> List[Union[Response, Error]]:
        """Runs endpoint documents concurrently (nl_request_batch); returns, in input
        order, a Response or an Error (returned, not raised) for each."""
        payload = _dumps([dict(normalise_endpoint(endpoint)) for endpoint in endpoints])
        _interrupt.ensure()
        with self._using() as handle:
            raw = take_string(lib.nl_request_batch(handle, payload))
        results = _json.loads(raw)
        if not isinstance(results, list):  # the library refused the whole batch
            outcome = _outcome(results)
            raise outcome if isinstance(outcome, Error) else Error("netlayer: bad batch result")
        return [_outcome(doc) for doc in results]

    def _perform_started(self, document: Dict[str, Any], name: Optional[str]) -> Response:
        """A blocking request with a progress callback of its own: nl_request_start, then
        a wait in Python (interruptible: Ctrl-C cancels the request)."""
        if _callbacks.inside(self._hooks):
            raise InvalidRequestError(
                "a blocking call from inside a hook or callback of the same client would deadlock; "
                "use the asyncio API", kind="invalid_request")
        payload, on_progress = progress_payload(document)
        results: "queue.SimpleQueue[bytes]" = queue.SimpleQueue()
        entry = ProgressRequest(self._hooks, on_progress, results.put)
        calls = self._calls
        calls.append(None)  # the handle stays valid until the result is in
        try:
            handle = self._handle
            if handle is None or self._closing:
                raise closed_error()
            request_id = 0
            try:
                request_id = _callbacks.start(handle, payload, name, entry, progress=True)
                raw = results.get()
            except BaseException:  # KeyboardInterrupt: stop the transfer, then re-raise
                if request_id:
                    lib.nl_cancel(handle, request_id)
                raise
        finally:
            calls.pop()
            if self._closing:
                self._left_call()
        return entry.response_or_raise(raw, request_id)


HOLDING_CODES.update(method.__code__ for method in (
    SyncMixin._perform, SyncMixin._perform_started, SyncMixin.call, SyncMixin.batch, SyncMixin.operations))
