"""Result documents as a Response, or as the Error subclass of their failure."""

from __future__ import annotations

import base64
import http
import json as _stdlib_json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import _charsets, _json
from ._errors import Error, Headers, StatusError, error_from_result
from ._hooks import attach_cause

__all__ = ["Response", "Redirect", "Headers", "outcome", "response_or_raise", "document_or_raise"]

JSON = Any
_loads_result = _json.loads_result


@dataclass(frozen=True)
class Redirect:
    """One redirect a request followed (an item of ``Response.history``): its status
    and the URL that answered with it, secrets redacted as in logs."""

    status: int
    url: str

    def __post_init__(self) -> None:
        # Built by a caller (a test's mock): headers read in any case, as the library's.
        headers = self.__dict__.get("headers")
        if not isinstance(headers, Headers):
            _set(self, "headers", Headers(headers or {}))

    @property
    def status_code(self) -> int:
        """``status``, under the name requests and httpx use."""
        return self.status

    def __bool__(self) -> bool:
        """``ok``, as requests' ``Response.__bool__``: ``if response:`` is False for a
        4xx or 5xx that ``acceptable_status`` let through."""
        return self.status < 400


@dataclass(frozen=True, repr=False)
class Response:
    """A successful result document.

    ``value`` is the decoded body (JSON value, text, base64 text or None, per the
    endpoint's ``response.decoder``, narrowed by ``keyPath``); ``decoder`` is what the
    default decoder, ``auto``, chose from the response's Content-Type (``json``,
    ``text``, ``base64`` or ``none``), None when the endpoint named one; ``headers`` has
    lower-case names and is read in any case (``r.headers["Content-Type"]``);
    ``timing`` holds ``totalMs`` and friends; ``events`` is the number of body events of
    a streamed request (None otherwise); ``http_version`` is ``"1.1"``, ``"2"``, ...;
    ``url`` is the URL that answered, after redirects, and ``history`` the redirects
    followed to it (``Redirect``: status and URL), both with the values of secret query
    parameters and URL user-info replaced by ``<redacted>``, as in logs; ``charset``
    is the encoding (its Encoding Standard name: ``"windows-1252"``, ``"GBK"``, ...) a
    textual body's ``Content-Type`` named, which ``text`` is decoded from.

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
    url: str = ""
    history: Tuple[Redirect, ...] = ()
    charset: Optional[str] = None

    def __post_init__(self) -> None:
        # Built by a caller (a test's mock): headers read in any case, as the library's.
        headers = self.__dict__.get("headers")
        if not isinstance(headers, Headers):
            _set(self, "headers", Headers(headers or {}))

    @property
    def status_code(self) -> int:
        """``status``, under the name requests and httpx use."""
        return self.status

    def __bool__(self) -> bool:
        """``ok``, as requests' ``Response.__bool__``: ``if response:`` is False for a
        4xx or 5xx that ``acceptable_status`` let through."""
        return self.status < 400

    def __repr__(self) -> str:
        # As requests': the headers (Set-Cookie) and the body may hold secrets, and a
        # repr ends up in logs and tracebacks.
        return f"<Response [{self.status}]>"

    def __hash__(self) -> int:
        # A frozen dataclass hashes every field, and the headers and a JSON value are
        # not hashable: requests' Response is, so one may go in a set or a dict key.
        # Equal responses have equal fields, so equal hashes.
        return hash((self.status, self.url, self.attempts, self.http_version, self.events))

    @property
    def ok(self) -> bool:
        """False for a 4xx or 5xx status, as requests' ``Response.ok``: a status that
        ``acceptableStatus`` let through is a Response, and may still be an error to
        HTTP. (Every Response is a success document; a failure is an ``Error``.)"""
        return self.status < 400

    @property
    def text(self) -> str:
        """The body as text: the text a ``text`` decoder returned (decoded from the
        ``charset`` the ``Content-Type`` named, else UTF-8); the bytes of a ``base64``
        one in that charset or UTF-8, what does not decode replaced by U+FFFD; a JSON
        value encoded again as JSON (the same value, not necessarily the same bytes: ask
        for ``response={"decoder": "text"}`` to get the body exactly); "" without a body."""
        value = self.value
        decoder = self.decoder
        if decoder == "base64" and isinstance(value, str):
            return _charsets.decode(base64.b64decode(value), self.charset or "UTF-8")
        if value is None or decoder == "none":
            return ""
        if isinstance(value, str) and decoder != "json":
            return value
        return _stdlib_json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    @property
    def content(self) -> bytes:
        """The body as bytes: exactly the bytes received for a ``base64`` decoder (what
        ``auto`` chooses for binary types), else ``text`` encoded in its ``charset``
        (the bytes received, for text in any charset that writes a character one way)
        or UTF-8."""
        if self.decoder == "base64" and isinstance(self.value, str):
            return base64.b64decode(self.value)
        charset = self.charset
        if charset and self.decoder == "text":
            return _charsets.encode(self.text, charset)
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
                              body=self.text, headers=self.headers, attempts=self.attempts, timing=self.timing)
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
            charset=doc.get("charset"),
            url=doc.get("url") or "",
            history=_history(doc.get("redirects") or ()),
        )


_new = object.__new__
_set = object.__setattr__
_MISSING = object()
#: The fields of a success document without ``headers`` (read only: each Response
#: gets a Headers of its own from it)
_NO_FIELDS: Mapping[str, str] = MappingProxyType({})


class _FromDocument:
    """A Response field that a success document holds under another key or in another
    form (``fromCache``, ``httpVersion``, a plain dict of headers, lists for tuples):
    converted on the first read and kept in the instance, so a request whose caller
    reads only ``value`` or ``status`` pays for none of it. A Response built by its
    constructor has the field in its ``__dict__`` already and never reaches here (a
    non-data descriptor: the instance's own value comes first)."""

    __slots__ = ("name", "key", "convert", "default")

    def __init__(self, key: str, convert: Any, default: Any) -> None:
        self.key = key
        self.convert = convert
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, response: Any, owner: Any = None) -> Any:
        if response is None:
            return self.default
        fields = response.__dict__
        raw = fields.get(self.key, _MISSING)
        value = self.default if raw is _MISSING else self.convert(raw)
        fields[self.name] = value
        return value


def _history(hops: Any) -> Tuple[Redirect, ...]:
    return tuple(Redirect(int(hop["status"]), str(hop["url"])) for hop in hops)


def _headers(fields: Mapping[str, str]) -> Headers:
    headers = Headers.__new__(Headers)  # names are lower case already: no need to lower them again
    dict.update(headers, fields)
    return headers


def _install(name: str, field: _FromDocument) -> None:
    # Set on the class after it is made, so Python does not call __set_name__: without
    # it the converted value would be kept under "" and made again on every read (and
    # a change to `headers` lost, which requests and httpx keep).
    setattr(Response, name, field)
    field.__set_name__(Response, name)


_install("headers", _FromDocument("_headers", _headers, None))
_install("from_cache", _FromDocument("fromCache", lambda raw: raw is True, False))
_install("http_version", _FromDocument("httpVersion", str, None))
_install("latin1_headers", _FromDocument("latin1Headers", tuple, ()))
_install("set_cookies", _FromDocument("setCookies", tuple, ()))
_install("history", _FromDocument("redirects", _history, ()))


def _response(doc: Dict[str, Any]) -> Response:
    """Response.from_result for a success document the library produced, freshly parsed
    and used by nothing else: the document itself becomes the Response's ``__dict__``.
    ``status``, ``value``, ``attempts``, ``timing``, ``decoder`` and ``events`` are
    read from it as they are; the fields it holds under other names or in other forms
    are converted when first read (``_FromDocument``), its ``headers`` moved aside for
    that (a document without them gets an empty Headers of its own). No second dict is
    built, and the frozen dataclass's per-field ``__setattr__`` is skipped (the
    sequential path builds one Response per request)."""
    doc["_headers"] = doc.pop("headers", _NO_FIELDS)
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
    doc = _loads_result(raw)
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
