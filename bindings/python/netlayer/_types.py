"""The keyword arguments of Client and its request methods, as TypedDicts.

The methods take ``**keys: Unpack[...]`` of these, so a type checker (``mypy --strict``)
refuses a misspelt key (``queyr=``) or a value of the wrong type (``timeout="5"``) at
the call. Each key of docs/documents.md is listed in its contract spelling and in
snake_case, beside the names requests and httpx users type (``params``, ``json``,
``data``, ``files``, ``cookies``, ``auth=(user, password)``); ``_documents`` maps
them. Nested documents (``retry``, ``response``, ``tls``, ...) are typed as mappings:
their keys are checked by the library, whose error names the key.
"""

from __future__ import annotations

import os
from typing import IO, Any, Callable, Dict, Iterable, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union

__all__ = ["ConfigKeys", "EndpointOptions", "MethodKeys", "RequestKeys", "WebSocketKeys", "AuthValue",
           "ProgressFunction"]

#: ``auth=``: ``(user, password)`` for basic (str, or bytes of UTF-8 as requests takes
#: them), or an auth document ({"bearer": token}, ...)
AuthValue = Union[Tuple[str, str], Tuple[bytes, bytes], Mapping[str, Any], None]
#: ``acceptableStatus``: codes and [low, high] ranges
StatusList = Sequence[Union[int, Sequence[int]]]
#: A per-request progress callback: the event in, a reply ({"cancel": True}) or None out.
ProgressFunction = Callable[[Dict[str, Any]], Optional[Mapping[str, Any]]]
BodyEncoding = Literal["json", "form", "text", "base64", "xml", "multipart"]
StreamKind = Literal["sse", "lines", "chunks"]
#: ``data=``: form fields, text or bytes, a file opened in binary mode or an iterator of bytes
FormData = Union[Mapping[str, Any], Sequence[Tuple[str, Any]], str, bytes, bytearray, memoryview, IO[bytes],
                 Iterable[bytes]]
#: A header value: text, or bytes that are UTF-8 (taken as their text, as requests takes them)
HeaderValue = Union[str, bytes]
#: A path the library opens: text or a path object (``pathlib.Path``)
PathValue = Union[str, "os.PathLike[str]"]
#: A cookie value; None leaves the cookie out
CookieValue = Union[str, bytes, int, float, None]
FilesArgument = Union[Mapping[str, Any], Sequence[Tuple[str, Any]]]
QueryArgument = Union[Mapping[str, Any], Sequence[Tuple[str, Any]]]


class _EndpointKeys(TypedDict, total=False):
    """The keys every request keyword set shares, a stream's too."""

    headers: Mapping[str, HeaderValue]
    query: Mapping[str, Any]
    encodedQuery: str
    encoded_query: str
    body: Any
    bodyEncoding: BodyEncoding
    body_encoding: BodyEncoding
    xmlRoot: str
    xml_root: str
    multipart: Sequence[Mapping[str, Any]]
    uploadFrom: PathValue
    upload_from: PathValue
    downloadTo: PathValue
    download_to: PathValue
    progress: bool
    stream: StreamKind
    useCache: bool
    use_cache: bool
    auth: AuthValue
    response: Mapping[str, Any]
    timeout: float
    maxStreamItemBytes: int
    max_stream_item_bytes: int
    acceptableStatus: StatusList
    acceptable_status: StatusList
    retry: Mapping[str, Any]
    deadline: float
    maxResponseBytes: int
    max_response_bytes: int
    maxDownloadBytes: int
    max_download_bytes: int
    isFullPath: bool
    is_full_path: bool
    # requests / httpx
    json: Any
    data: FormData
    files: FilesArgument
    cookies: Mapping[str, CookieValue]


class EndpointOptions(_EndpointKeys, total=False):
    """The keys every request keyword set shares (a ``call`` overlay takes these)."""

    # the package's own
    on_progress: ProgressFunction


class MethodKeys(EndpointOptions, total=False):
    """Keywords of ``get``/``post``/... and ``aget``/``apost``/...: ``params`` is the query."""

    params: QueryArgument


class RequestKeys(MethodKeys, total=False):
    """Keywords of ``request`` and ``arequest``."""

    path: str
    method: str


class StreamKeys(_EndpointKeys, total=False):
    """Keywords of ``stream`` and ``astream``: a request's, but ``on_progress`` (a
    stream reports its body events, not progress)."""

    params: QueryArgument
    path: str
    method: str
    #: The queue's bounds: past them reading pauses until the reader catches up.
    max_queue: int
    max_queue_bytes: int


class WebSocketKeys(TypedDict, total=False):
    """Keywords of ``websocket`` and ``awebsocket``: the websocket document's keys
    (docs/documents.md, "WebSockets"), and the receive queue's bounds."""

    protocols: Sequence[str]
    headers: Mapping[str, HeaderValue]
    query: Mapping[str, Any]
    params: Mapping[str, Any]
    cookies: Mapping[str, CookieValue]
    auth: AuthValue
    timeout: float
    isFullPath: bool
    is_full_path: bool
    maxMessageBytes: int
    max_message_bytes: int
    maxQueuedBytes: int
    max_queued_bytes: int
    idleTimeout: float
    idle_timeout: float
    pingInterval: float
    ping_interval: float
    closeTimeout: float
    close_timeout: float
    compression: bool
    fragmentBytes: int
    fragment_bytes: int
    # the package's own: the receive queue
    max_queue: int
    max_queue_bytes: int


class CassetteDocument(TypedDict):
    """The config's ``cassette``: record every exchange to ``file``, or answer from it."""

    file: str
    mode: Literal["record", "replay"]


class OpenAPIConfig(TypedDict, total=False):
    """The config's ``openapi`` in its object form: the document (``file`` or
    ``document``), credentials per security scheme, and response checking."""

    file: str
    document: Union[str, Mapping[str, Any]]
    credentials: Mapping[str, Union[str, Mapping[str, str]]]
    validateResponses: bool
    validate_responses: bool


class ConfigKeys(TypedDict, total=False):
    """Keywords of ``Client(...)``: the config document's keys."""

    baseURL: str
    base_url: str
    headers: Mapping[str, HeaderValue]
    query: Mapping[str, Any]
    params: Mapping[str, Any]
    timeout: float
    connectTimeout: float
    connect_timeout: float
    acceptableStatus: StatusList
    acceptable_status: StatusList
    followRedirects: bool
    follow_redirects: bool
    maxRedirects: int
    max_redirects: int
    maxResponseBytes: int
    max_response_bytes: int
    maxDownloadBytes: int
    max_download_bytes: int
    maxStreamItemBytes: int
    max_stream_item_bytes: int
    maxConcurrent: int
    max_concurrent: int
    compression: bool
    userAgent: str
    user_agent: str
    proxy: str
    tls: Mapping[str, Any]
    auth: AuthValue
    cookies: Union[bool, Mapping[str, Any]]
    httpVersion: Literal["1.1", "2", "2-prior-knowledge", "3"]
    http_version: Literal["1.1", "2", "2-prior-knowledge", "3"]
    unixSocket: str
    unix_socket: str
    resolve: Sequence[str]
    interface: str
    adaptMayChangeOrigin: bool
    adapt_may_change_origin: bool
    stub: Sequence[Mapping[str, Any]]
    cassette: CassetteDocument
    openapi: Union[str, OpenAPIConfig]
    endpoints: Mapping[str, Mapping[str, Any]]
    retry: Mapping[str, Any]
    deadline: float
    errorResolver: Sequence[Mapping[str, Any]]
    error_resolver: Sequence[Mapping[str, Any]]
    cache: Mapping[str, Any]
    log: Mapping[str, Any]
