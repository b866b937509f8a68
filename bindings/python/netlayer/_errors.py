"""The exception tree: `Error` and one subclass per contract error kind.

Three public names collide with builtins or asyncio (``TimeoutError``, ``IOError``,
``CancelledError``); inside the package they are defined as ``NetlayerTimeoutError``,
``NetlayerIOError`` and ``NetlayerCancelledError`` and exported under the public
names by ``netlayer/__init__.py``, so no module of the package shadows a builtin.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Type, Union


class Headers(Dict[str, str]):
    """Response header fields: a dict with the lower-case names the library gives, read,
    set and removed in any case (``headers["Content-Type"]``, ``.get``, ``in``,
    ``del``, ``.pop``, ``.setdefault``, ``.update``), as in requests and httpx; a copy is
    a ``Headers`` too."""

    __slots__ = ()

    def __init__(self, fields: Union[Mapping[str, str], Iterable[Tuple[str, str]]] = ()) -> None:
        # a mapping or (name, value) pairs, as dict() takes (dataclasses.asdict passes pairs)
        pairs = fields.items() if isinstance(fields, Mapping) else fields
        super().__init__((name.lower(), value) for name, value in pairs)

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __setitem__(self, name: str, value: str) -> None:
        super().__setitem__(name.lower(), value)

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return super().__contains__(name.lower() if isinstance(name, str) else name)

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)

    def pop(self, name: str, *default: Any) -> Any:
        return super().pop(name.lower(), *default)

    def setdefault(self, name: str, default: str = "") -> str:
        return super().setdefault(name.lower(), default)

    def update(self, *fields: Any, **named: str) -> None:
        for name, value in dict(*fields, **named).items():
            self[name] = value

    def copy(self) -> "Headers":
        return Headers(self)

    def __or__(self, other: Any) -> "Headers":  # type: ignore[override]
        merged = self.copy()
        merged.update(other)
        return merged

    def __ior__(self, other: Any) -> "Headers":  # type: ignore[override]
        self.update(other)
        return self


class Error(Exception):
    """A failed request, or a config the library refused.

    Attributes mirror the result document's ``error`` object: ``kind`` (one of the
    contract's kinds), ``message``, ``status`` (HTTP status, or None when no response
    arrived), ``body`` (response body as text for kinds status, parsing, no_response),
    ``code`` (the error resolver's code), plus the result's ``headers``, ``attempts``,
    ``timing`` and ``curl_code`` (libcurl's code for kinds protocol and generic).
    ``body`` holds at most 64 KiB of the response body: ``body_truncated`` says it
    was cut and ``body_bytes`` how large the body was (None when it came whole).
    """

    kind: str = "generic"

    def __init__(
        self,
        message: str = "",
        *,
        kind: Optional[str] = None,
        status: Optional[int] = None,
        body: Optional[str] = None,
        code: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        attempts: int = 0,
        timing: Optional[Mapping[str, float]] = None,
        curl_code: Optional[int] = None,
        body_truncated: bool = False,
        body_bytes: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.message = message
        self.status = status
        self.body = body
        self.code = code
        self.headers: Dict[str, str] = Headers(headers or {})
        self.attempts = attempts
        self.timing: Dict[str, float] = dict(timing or {})
        self.curl_code = curl_code
        self.body_truncated = body_truncated
        self.body_bytes = body_bytes

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"


class InvalidRequestError(Error):
    """A config, endpoint, overlay or argument is malformed (or the client is closed)."""

    kind = "invalid_request"


class URLGenerationError(Error):
    """No URL can be built from baseURL + path + query."""

    kind = "url_generation"


class NotConnectedError(Error):
    """DNS failure, connection refused, network unreachable."""

    kind = "not_connected"


class NetlayerTimeoutError(Error):
    """Connect or total timeout (public name: ``netlayer.TimeoutError``)."""

    kind = "timeout"


class TLSError(Error):
    """Certificate or handshake failure, pin mismatch."""

    kind = "tls"


class NetlayerCancelledError(Error):
    """nl_cancel, or the client was closed (public name: ``netlayer.CancelledError``).

    Not a subclass of ``asyncio.CancelledError``: a cancelled *asyncio task* raises
    asyncio's own exception; this one reports a request the library cancelled.
    """

    kind = "cancelled"


class StatusError(Error):
    """HTTP status outside acceptableStatus; ``status`` and ``body`` tell which."""

    kind = "status"


class NoResponseError(Error):
    """An empty body where the decoder needs one."""

    kind = "no_response"


class ParsingError(Error):
    """The body does not decode, or the keyPath is missing."""

    kind = "parsing"


class ResolvedError(Error):
    """The error resolver replaced the error; ``code`` and ``message`` are its."""

    kind = "resolved"


class TooLargeError(Error):
    """The body passed maxResponseBytes (or, written to a file, maxDownloadBytes), or a streamed
    line or event maxStreamItemBytes."""

    kind = "too_large"


class NetlayerIOError(Error):
    """A local file could not be read or written (public name: ``netlayer.IOError``)."""

    kind = "io"


class ProtocolError(Error):
    """The server broke HTTP, or a redirect went to a scheme other than http/https."""

    kind = "protocol"


class GenericError(Error):
    """Anything else; ``curl_code`` holds libcurl's code."""

    kind = "generic"


_PUBLIC_NAMES = {
    NetlayerTimeoutError: "TimeoutError",
    NetlayerCancelledError: "CancelledError",
    NetlayerIOError: "IOError",
}

#: error kind -> exception class
KINDS: Dict[str, Type[Error]] = {
    cls.kind: cls
    for cls in (
        InvalidRequestError, URLGenerationError, NotConnectedError, NetlayerTimeoutError,
        TLSError, NetlayerCancelledError, StatusError, NoResponseError, ParsingError,
        ResolvedError, TooLargeError, NetlayerIOError, ProtocolError, GenericError,
    )
}

# Tracebacks and reprs show the public names (netlayer.TimeoutError, ...), and
# pickling finds the classes in the `netlayer` namespace.
_ALL: List[Type[Error]] = [Error, *KINDS.values()]
for _cls in _ALL:
    _name = _PUBLIC_NAMES.get(_cls, _cls.__name__)
    _cls.__name__ = _cls.__qualname__ = _name
    _cls.__module__ = "netlayer"


def _optional_int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _optional_str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def error_from_result(doc: Mapping[str, Any]) -> Error:
    """Builds the exception for a failure result document ({"ok": false, ...})."""
    raw = doc.get("error")
    err: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    kind = err.get("kind")
    kind = kind if isinstance(kind, str) else "generic"
    cls = KINDS.get(kind, Error)  # a kind newer than these bindings: the base class
    status = _optional_int(err.get("status"))
    if status is None:
        status = _optional_int(doc.get("status"))
    headers = doc.get("headers")
    timing = doc.get("timing")
    attempts = _optional_int(doc.get("attempts"))
    return cls(
        _optional_str(err.get("message")) or kind,
        kind=kind,
        status=status,
        body=_optional_str(err.get("body")),
        code=_optional_str(err.get("code")),
        headers=headers if isinstance(headers, Mapping) else None,
        attempts=attempts or 0,
        timing=timing if isinstance(timing, Mapping) else None,
        curl_code=_optional_int(err.get("curlCode")),
        body_truncated=err.get("bodyTruncated") is True,
        body_bytes=_optional_int(err.get("bodyBytes")),
    )
