"""Netlayer: an HTTP API client (Swift core over libcurl) through its C ABI.

    import netlayer

    with netlayer.Client("https://api.example.com/v3/", timeout=5) as client:
        movies = client.get("movies", params={"page": 1})
        print(movies.status_code, movies.json())

See README.md for asyncio, batches, named endpoints, hooks, streaming, WebSockets, errors
and how the library is found.
"""

from __future__ import annotations

from ._client import Client, Redirect, Response
from ._errors import (
    Error,
    GenericError,
    InvalidRequestError,
    NetlayerCancelledError as CancelledError,
    NetlayerIOError as IOError,  # noqa: A001 - the contract's kind "io"
    NetlayerTimeoutError as TimeoutError,  # noqa: A001 - the contract's kind "timeout"
    NoResponseError,
    NotConnectedError,
    ParsingError,
    ProtocolError,
    ResolvedError,
    StatusError,
    TLSError,
    TooLargeError,
    URLGenerationError,
)
from ._lib import abi_version, library_path, version
from ._stream import AsyncStream, Stream
from ._websocket import AsyncWebSocket, WebSocket

__version__ = "0.1.0"

__all__ = [
    "Client",
    "Response",
    "Redirect",
    "Stream",
    "AsyncStream",
    "WebSocket",
    "AsyncWebSocket",
    "Error",
    "InvalidRequestError",
    "URLGenerationError",
    "NotConnectedError",
    "TimeoutError",
    "TLSError",
    "CancelledError",
    "StatusError",
    "NoResponseError",
    "ParsingError",
    "ResolvedError",
    "TooLargeError",
    "IOError",
    "ProtocolError",
    "GenericError",
    "version",
    "abi_version",
    "library_path",
    "__version__",
]
