"""Result documents as a Response, or as the Error subclass of their failure."""

from __future__ import annotations

import base64
import http
import json as _stdlib_json
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import _json
from ._errors import Error, Headers, StatusError, error_from_result
from ._hooks import attach_cause

__all__ = ["Response", "Headers", "outcome", "response_or_raise", "document_or_raise"]

JSON = Any
_loads = _json.loads
_loads_fast = _json.loads_fast
_BIG = _json.BIG_INTEGERS_MARK


@dataclass(frozen=True)
class Response:
    """A successful result document.

    ``value`` is the decoded body (JSON value, text, base64 text or None, per the
    endpoint's ``response.decoder``, narrowed by ``keyPath``); ``decoder`` is what the
    default decoder, ``auto``, chose from the response's Content-Type (``json``,
    ``text``, ``base64`` or ``none``), None when the endpoint named one; ``headers`` has
    lower-case names and is read in any case (``r.headers["Content-Type"]``);
    ``timing`` holds ``totalMs`` and friends; ``events`` is the number of body events of
    a streamed request (None otherwise); ``http_version`` is ``"1.1"``, ``"2"``, ...

    For requests and httpx habits: ``status_code``, ``text``, ``content`` (bytes),
    ``json()`` and ``raise_for_status()``.
    """

    status: int
    headers: Dict[str, str] = field(default_factory=Headers)
    value: JSON = None
    from_cache: bool = False
    attempts: int = 1
    timing: Dict[str, float] = field(default_factory=dict)
    events: Optional[int] = None
    latin1_headers: Tuple[str, ...] = ()
    decoder: Optional[str] = None
    set_cookies: Tuple[str, ...] = ()
    http_version: Optional[str] = None

    @property
    def status_code(self) -> int:
        """``status``, under the name requests and httpx use."""
        return self.status

    @property
    def text(self) -> str:
        """The body as text: the text a ``text`` decoder returned; the bytes of a
        ``base64`` one as UTF-8 (undecodable bytes replaced); a JSON value encoded again
        as JSON (the same value, not necessarily the same bytes: ask for
        ``response={"decoder": "text"}`` to get the body exactly); "" without a body."""
        value = self.value
        decoder = self.decoder
        if decoder == "base64" and isinstance(value, str):
            return base64.b64decode(value).decode("utf-8", "replace")
        if value is None or decoder == "none":
            return ""
        if isinstance(value, str) and decoder != "json":
            return value
        return _stdlib_json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    @property
    def content(self) -> bytes:
        """The body as bytes: exactly the bytes received for a ``base64`` decoder (what
        ``auto`` chooses for binary types), else ``text`` in UTF-8."""
        if self.decoder == "base64" and isinstance(self.value, str):
            return base64.b64decode(self.value)
        return self.text.encode("utf-8")

    def json(self) -> Any:
        """The body as a JSON value: ``value`` when the body was decoded as JSON (narrowed
        by ``response.keyPath``); text and base64 bodies are parsed here (ValueError
        when they are not JSON)."""
        decoder = self.decoder
        if decoder == "text":
            return _stdlib_json.loads(self.value)
        if decoder == "base64":
            return _stdlib_json.loads(self.content)
        if decoder == "none":
            raise ValueError("netlayer: the response has no body to parse as JSON (decoder none)")
        return self.value

    def raise_for_status(self) -> "Response":
        """Raises ``StatusError`` for a 4xx or 5xx status (one that ``acceptableStatus``
        let through: any other already raised), else returns the response. Failures
        raise by themselves, so this is only needed with a wider ``acceptableStatus``."""
        if 400 <= self.status < 600:
            try:
                reason = " " + http.HTTPStatus(self.status).phrase
            except ValueError:
                reason = ""
            raise StatusError(f"HTTP {self.status}{reason}", kind="status", status=self.status,
                              body=self.text, headers=self.headers)
        return self

    def header_bytes(self, name: str) -> Optional[bytes]:
        """The exact bytes of header ``name`` (any case) as the server sent them, or None.

        ``headers`` holds text: UTF-8 values as they are, and values that are not UTF-8
        as ISO-8859-1 (one code point per byte, as http.client reads them); the names of
        those are in ``latin1_headers``.
        """
        key = name.lower()
        value = self.headers.get(key)
        if value is None:
            return None
        return value.encode("latin-1" if key in self.latin1_headers else "utf-8")

    @classmethod
    def from_result(cls, doc: Mapping[str, Any]) -> "Response":
        """Builds a Response from a success document ({"ok": true, ...})."""
        return cls(
            status=int(doc.get("status") or 0),
            headers=Headers(doc.get("headers") or {}),
            value=doc.get("value"),
            from_cache=bool(doc.get("fromCache", False)),
            attempts=int(doc.get("attempts") or 1),
            timing=dict(doc.get("timing") or {}),
            events=doc.get("events"),
            latin1_headers=tuple(doc.get("latin1Headers") or ()),
            decoder=doc.get("decoder"),
            set_cookies=tuple(doc.get("setCookies") or ()),
            http_version=doc.get("httpVersion"),
        )


_new = object.__new__
_new_headers = dict.__new__
_update = dict.update
_set = object.__setattr__


def _response(doc: Dict[str, Any]) -> Response:
    """Response.from_result for a success document the library produced, freshly parsed
    and used by nothing else: the document itself becomes the Response's ``__dict__``.
    Its keys are the fields' names already but for ``fromCache`` and ``httpVersion``,
    renamed here, and ``ok``, dropped; ``headers`` becomes a ``Headers``; ``events`` is absent unless streamed, so the
    field's default (a class attribute) answers. No second dict is built and none freed,
    and the frozen dataclass's per-field ``__setattr__`` is skipped (the sequential path
    builds one Response per request)."""
    del doc["ok"]
    doc["from_cache"] = doc.pop("fromCache", False) is True
    if "httpVersion" in doc:
        doc["http_version"] = doc.pop("httpVersion")
    if "headers" in doc:  # names are lower case already: no need to lower them again
        headers = _new_headers(Headers)
        _update(headers, doc["headers"])
        doc["headers"] = headers
    if "latin1Headers" in doc:
        doc["latin1_headers"] = tuple(doc.pop("latin1Headers"))
    if "bigIntegers" in doc:
        del doc["bigIntegers"]
    if "setCookies" in doc:
        doc["set_cookies"] = tuple(doc.pop("setCookies"))
    response = _new(Response)
    _set(response, "__dict__", doc)
    return response


def outcome(doc: Any, request_id: Optional[int] = None) -> Union[Response, Error]:
    """A result document as a Response or (not raised) an Error; the Error of a request
    a hook's exception failed has that exception as ``__cause__`` (found by the exact
    message, and by ``request_id`` when the caller knows it)."""
    if type(doc) is dict:
        if doc.get("ok") is True:
            return _response(doc)
    elif not isinstance(doc, Mapping):
        return Error(f"netlayer: unexpected result document {doc!r}", kind="generic")
    elif doc.get("ok") is True:
        return Response.from_result(doc)
    return attach_cause(error_from_result(doc), request_id)


def response_or_raise(raw: bytes) -> Response:
    """The Response of a result document, or raises the Error subclass of its failure."""
    doc = _loads_fast(raw) if _BIG not in raw else _loads(raw)
    if type(doc) is dict and doc.get("ok") is True:
        return _response(doc)
    return document_or_raise(doc)


def document_or_raise(doc: Any, request_id: Optional[int] = None) -> Response:
    """The Response of a parsed result document, or raises the Error subclass of its failure."""
    if type(doc) is dict and doc.get("ok") is True:
        return _response(doc)
    result = outcome(doc, request_id)
    if isinstance(result, Error):
        raise result
    return result
