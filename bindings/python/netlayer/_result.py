"""Result documents as a Response, or as the Error subclass of their failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import _json
from ._errors import Error, error_from_result
from ._hooks import attach_cause

__all__ = ["Response", "outcome", "response_or_raise", "document_or_raise"]

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
    lower-case names; ``timing`` holds ``totalMs`` and friends; ``events`` is the
    number of body events of a streamed request (None otherwise).
    """

    status: int
    headers: Dict[str, str] = field(default_factory=dict)
    value: JSON = None
    from_cache: bool = False
    attempts: int = 1
    timing: Dict[str, float] = field(default_factory=dict)
    events: Optional[int] = None
    latin1_headers: Tuple[str, ...] = ()
    decoder: Optional[str] = None
    set_cookies: Tuple[str, ...] = ()

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
            headers=dict(doc.get("headers") or {}),
            value=doc.get("value"),
            from_cache=bool(doc.get("fromCache", False)),
            attempts=int(doc.get("attempts") or 1),
            timing=dict(doc.get("timing") or {}),
            events=doc.get("events"),
            latin1_headers=tuple(doc.get("latin1Headers") or ()),
            decoder=doc.get("decoder"),
            set_cookies=tuple(doc.get("setCookies") or ()),
        )


_new = object.__new__
_set = object.__setattr__


def _response(doc: Dict[str, Any]) -> Response:
    """Response.from_result for a success document the library produced, freshly parsed
    and used by nothing else: the document itself becomes the Response's ``__dict__``.
    Its keys are the fields' names already but for ``fromCache``, renamed here, and
    ``ok`` and ``httpVersion``, dropped; ``events`` is absent unless streamed, so the
    field's default (a class attribute) answers. No second dict is built and none freed,
    and the frozen dataclass's per-field ``__setattr__`` is skipped (the sequential path
    builds one Response per request)."""
    del doc["ok"]
    doc["from_cache"] = doc.pop("fromCache", False) is True
    if "httpVersion" in doc:
        del doc["httpVersion"]
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
