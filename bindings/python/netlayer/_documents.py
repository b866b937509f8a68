"""Endpoint and config documents from Python arguments: the one place where the names
Python users type become the contract's keys (docs/documents.md).

Two kinds of spelling are accepted:

* every contract key in snake_case, at every level of a document where the keys are
  the contract's (``base_url``, ``upload_from``, ``retry={"max_attempts": 3}``,
  ``response={"key_path": ...}``, named endpoints of a config, multipart parts, ...),
  in keyword arguments and in the dicts passed as documents alike; levels that hold
  the caller's data (``headers``, ``query``, ``body``, ``params``, ...) are left as
  they are;
* in keyword arguments only, the names of requests and httpx: ``params`` (the query;
  in ``call`` it stays the path parameters), ``json``, ``data``, ``files``,
  ``cookies`` (per request: sent in a ``Cookie`` header), ``auth=(user, password)``.

Two spellings of one key (``query`` and ``params``, ``base_url`` and ``baseURL``, ``json``
and ``body``) are a TypeError naming both. Unknown keys are left for the library,
whose error names them.
"""

from __future__ import annotations

import base64
import io
import os
import re
import stat
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from ._errors import InvalidRequestError

__all__ = ["Endpoint", "config", "endpoint", "stream_endpoint", "method", "overlay", "normalise_endpoint", "endpoint_name",
           "websocket"]

Endpoint = Mapping[str, Any]

_BINARY = (bytes, bytearray, memoryview)


class _Object:
    """A level whose keys are the contract's: each key maps to the schema of its value
    (None: the value is the caller's data, left as it is)."""

    __slots__ = ("keys", "snake")

    def __init__(self, keys: Mapping[str, Any]) -> None:
        self.keys: Dict[str, Any] = dict(keys)
        self.snake: Dict[str, str] = {_snake(k): k for k in keys if _snake(k) != k}


class _ListOf:
    """A list whose items follow ``item``."""

    __slots__ = ("item",)

    def __init__(self, item: _Object) -> None:
        self.item = item


class _MapOf:
    """An object of caller-chosen names whose values follow ``item`` (named endpoints)."""

    __slots__ = ("item",)

    def __init__(self, item: _Object) -> None:
        self.item = item


def _snake(camel: str) -> str:
    """``baseURL`` -> ``base_url``, ``maxAttempts`` -> ``max_attempts``."""
    return re.sub(r"[A-Z]+", lambda m: "_" + m.group().lower(), camel)


def _plain(*names: str) -> Dict[str, None]:
    return dict.fromkeys(names)


_RETRY = _Object(_plain("maxAttempts", "backoff", "maxBackoff", "onStatus", "methods"))
_AUTH = None  # basic/bearer/digest/netrc and user/password: nothing to convert

ENDPOINT = _Object({
    **_plain("path", "isFullPath", "method", "headers", "query", "body", "bodyEncoding", "xmlRoot",
             "uploadFrom", "downloadTo", "progress", "stream", "useCache", "timeout",
             "maxStreamItemBytes", "acceptableStatus", "deadline", "maxResponseBytes",
             "maxDownloadBytes", "params", "encodedQuery"),
    "auth": _AUTH,
    "multipart": _ListOf(_Object(_plain("name", "text", "file", "base64", "filename", "contentType"))),
    "response": _Object(_plain("decoder", "keyPath")),
    "retry": _RETRY,
})

CONFIG = _Object({
    **_plain("baseURL", "headers", "query", "timeout", "connectTimeout", "acceptableStatus",
             "followRedirects", "maxRedirects", "maxResponseBytes", "maxDownloadBytes",
             "maxStreamItemBytes", "maxConcurrent", "compression", "userAgent", "proxy",
             "httpVersion", "unixSocket", "resolve", "interface", "adaptMayChangeOrigin", "deadline"),
    "auth": _AUTH,
    "tls": _Object(_plain("verify", "caFile", "pinnedPublicKey", "certFile", "keyFile", "keyPassword")),
    "cookies": _Object(_plain("enabled", "file", "save", "keepSessionCookies")),
    "cassette": _Object(_plain("file", "mode")),
    "openapi": _Object(_plain("file", "document", "credentials", "validateResponses")),
    "stub": _ListOf(_Object(_plain("path", "method", "status", "headers", "body", "bodyBase64",
                                   "delay", "error"))),
    "endpoints": _MapOf(ENDPOINT),
    "retry": _RETRY,
    "errorResolver": _ListOf(_Object(_plain("status", "code", "message", "messageKeyPath"))),
    "cache": _Object(_plain("enabled", "maxEntries", "maxBytes")),
    "log": _Object(_plain("level", "redact", "redactQuery")),
})


#: A websocket document (docs/documents.md, "WebSockets"): the opening request's keys
#: and the connection's own.
WEBSOCKET = _Object(_plain("path", "isFullPath", "query", "encodedQuery", "headers", "auth", "timeout", "protocols",
                           "maxMessageBytes", "maxQueuedBytes", "idleTimeout", "closeTimeout", "compression",
                           "fragmentBytes", "pingInterval", "params", "cookies"))


def _convert(value: Any, schema: Any, where: str) -> Any:
    """``value`` with the snake_case keys of the contract's levels renamed; the value
    itself when nothing changes (documents are sent as they are, without a copy)."""
    if isinstance(schema, _Object):
        return _convert_object(value, schema, where) if isinstance(value, Mapping) else value
    if isinstance(schema, _ListOf) and isinstance(value, (list, tuple)):
        items = [_convert(item, schema.item, f"{where}[{i}]") for i, item in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value)) else items
    if isinstance(schema, _MapOf) and isinstance(value, Mapping):
        out = {name: _convert(item, schema.item, f"{where}.{name}") for name, item in value.items()}
        return value if all(out[name] is value[name] for name in out) else out
    return value


def _convert_object(document: Mapping[str, Any], schema: _Object, where: str) -> Mapping[str, Any]:
    out: Optional[Dict[str, Any]] = None
    keys = schema.keys
    for name, value in document.items():
        key = schema.snake.get(name, name) if "_" in name else name
        sub = keys.get(key)
        new = value if sub is None else _convert(value, sub, f"{where}.{key}" if where else key)
        if key is name and new is value and out is None:
            continue
        if out is None:  # the first change: copy what came before
            out = {}
            for earlier, earlier_value in document.items():
                if earlier == name:
                    break
                out[earlier] = earlier_value
        if key in out or (key is not name and key in document):
            raise TypeError(f"netlayer: {_at(where, key)} given twice (as {name!r} too)")
        out[key] = new
    return document if out is None else out


def _at(where: str, key: str) -> str:
    return repr(f"{where}.{key}" if where else key)


def normalise_endpoint(document: Endpoint) -> Endpoint:
    """An endpoint document with its snake_case keys renamed (itself when none is)."""
    if not isinstance(document, Mapping):
        raise TypeError(f"netlayer: an endpoint document is a mapping (a dict), not {type(document).__name__}; "
                        "for a path, use get(path) and its siblings or request(path=...)")
    return _convert_object(document, ENDPOINT, "")


def endpoint_name(name: Any) -> bytes:
    """The name ``call`` passes to the library: text without NUL (a C string would end
    at it and call another endpoint)."""
    if not isinstance(name, str):
        raise TypeError(f"netlayer: an endpoint name is a str, not {type(name).__name__}")
    if "\x00" in name:
        raise InvalidRequestError(f"netlayer: endpoint name {name!r} holds a NUL", kind="invalid_request")
    return name.encode("utf-8")


# ---- the names of requests and httpx (keyword arguments) ---------------------------------

def _both(a: str, b: str, what: str) -> TypeError:
    return TypeError(f"netlayer: {a!r} and {b!r} both given; {what}")


def _auth(value: Any) -> Any:
    """``auth=(user, password)`` is basic authentication; a dict is the contract's."""
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, (str, bytes)) for v in value):
        # As requests takes them: bytes too, here as the UTF-8 text the document carries.
        try:
            user, password = (v.decode("utf-8") if isinstance(v, bytes) else v for v in value)
        except UnicodeDecodeError:
            raise ValueError("netlayer: auth= (user, password) given as bytes must be UTF-8") from None
        return {"basic": {"user": user, "password": password}}
    if value is None or isinstance(value, Mapping):
        return value
    raise TypeError("netlayer: auth= takes (user, password) or an auth document such as "
                    f"{{'bearer': token}}, not {type(value).__name__}")


def _form(data: Any) -> Dict[str, Any]:
    """``data=`` as a form object: a mapping, or (name, value) pairs (repeated names
    become a list, sent as repeated fields). As in requests, a None value (also in a
    list) is left out, and bytes are the field's bytes (UTF-8 text in a form)."""
    out: Dict[str, Any] = {}
    for name, value in _field_pairs(data):
        values = [_form_value(name, v) for v in (value if isinstance(value, list) else [value]) if v is not None]
        if not values:
            continue
        if name in out:
            out[name] = _joined(out[name], values)
        else:
            out[name] = values if isinstance(value, list) or len(values) > 1 else values[0]
    return out


def _joined(known: Any, value: Any) -> Any:
    """The value of a query or form name seen again: ``known`` (None: not seen) and
    ``value``, each one value or a list of them, as one list (repeated fields)."""
    if known is None:
        return value
    return (known if isinstance(known, list) else [known]) + (value if isinstance(value, list) else [value])


def _field_pairs(data: Any, what: str = "data") -> Iterable[Tuple[Any, Any]]:
    """The (name, value) pairs of ``data=`` (or ``files=``, ``cookies=``: ``what``): a
    mapping's items, or pairs; anything else is a TypeError naming the argument."""
    if isinstance(data, Mapping):
        return data.items()
    takes = ("a mapping or (name, value) pairs for a form, or str, bytes, a file or an iterable of bytes for "
             "the body" if what == "data" else "a mapping or (name, value) pairs")
    if isinstance(data, (str, *_BINARY)) or not isinstance(data, Iterable):
        raise TypeError(f"netlayer: {what}= takes {takes}, not {type(data).__name__}")
    pairs: List[Tuple[Any, Any]] = []
    for item in data:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"netlayer: {what}= takes {takes}; {item!r:.40} is not a (name, value) pair")
        pairs.append((item[0], item[1]))
    return pairs


def _form_value(name: Any, value: Any) -> Any:
    return _text(value, name, "data", " (a form field is text; send other bytes in a multipart part, files=)")


def _text(value: Any, name: Any, what: str, hint: str = "") -> Any:
    """A header, query or form name or value as the document's text: bytes as their
    UTF-8 text (requests takes bytes there); bytes that are not UTF-8, and a str with
    a lone surrogate, which no document can carry, are refused naming the field."""
    if isinstance(value, str):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate (from surrogateescape, say)
                raise InvalidRequestError(f"netlayer: {what}[{name!r}]: {value!r:.60} is not text UTF-8 can "
                                          "carry (a lone surrogate)", kind="invalid_request") from None
        return value
    if not isinstance(value, _BINARY):
        return value
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidRequestError(f"netlayer: {what}[{name!r}]: bytes that are not UTF-8{hint}",
                                  kind="invalid_request") from None


def _file_part(name: str, value: Any) -> Dict[str, Any]:
    """One ``files=`` entry as a multipart part: a path (``os.PathLike``) or an open
    file are streamed from disk; bytes and str are the content; a tuple is
    ``(filename, content[, content_type])``, content being any of those."""
    part: Dict[str, Any] = {"name": name}
    filename: Optional[str] = name
    content_type: Optional[str] = None
    if isinstance(value, tuple):
        if len(value) not in (2, 3):
            raise TypeError(f"netlayer: files[{name!r}]: a tuple is (filename, content[, content_type])")
        filename, content_type = value[0], (value[2] if len(value) == 3 else None)
        value = value[1]
    path = _disk_file(value)
    if path is not None:
        part["file"] = path
        if filename == name:
            filename = os.path.basename(path)
    elif isinstance(value, _BINARY):
        part["base64"] = base64.b64encode(bytes(value)).decode("ascii")
    elif isinstance(value, str):
        part["text"] = value
    elif hasattr(value, "read"):  # a file-like object that is not a file on disk
        label = getattr(value, "name", None)
        if filename == name and isinstance(label, str) and label and not (label[0] == "<" and label[-1] == ">"):
            filename = os.path.basename(label)  # as requests names it
        content = value.read()
        if isinstance(content, str):
            part["text"] = content
        else:
            part["base64"] = base64.b64encode(content).decode("ascii")
    else:
        raise TypeError(f"netlayer: files[{name!r}]: expected a path, an open file, bytes, str or a "
                        f"(filename, content[, content_type]) tuple, not {type(value).__name__}")
    if filename is not None:
        part["filename"] = filename
    if content_type is not None:
        part["contentType"] = content_type
    return part


def _disk_file(value: Any) -> Optional[str]:
    """The path to stream from: an ``os.PathLike``, or a file opened in binary mode on a
    file on disk, read from its start, whose name still leads to that file. Anything
    else with ``read()`` (a gzip or text file, a file renamed or replaced since it was
    opened) is sent as what ``read()`` returns, as requests sends it."""
    if isinstance(value, os.PathLike):
        return os.fsdecode(value)
    if type(value) is io.BufferedReader:
        raw = value.raw
    elif type(value) is io.FileIO:
        raw = value
    else:
        return None
    name = getattr(value, "name", None)
    if not isinstance(raw, io.FileIO) or not isinstance(name, str):
        return None
    try:
        if value.tell() != 0:
            return None
        opened, named = os.fstat(value.fileno()), os.stat(name)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(named.st_mode) or (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino):
        return None
    return name


#: What a cookie name or value may not hold: a byte that ends a pair (``;``), that
#: servers split on (``,``), or a control character (RFC 6265 section 4.1.1).
_COOKIE_BREAKERS = re.compile(r"[;,\x00-\x1f\x7f]")
_COOKIE_NAME_BREAKERS = re.compile(r"[;,=\s\x00-\x1f\x7f]")


def _cookie_pair(name: Any, value: Any) -> str:
    """``name=value`` for a Cookie line; a name or value that would start another
    cookie (``{"a": "x; admin=1"}``) is refused rather than sent."""
    name = str(_text(name, name, "cookies"))
    if isinstance(value, bool) or not isinstance(value, (str, int, float, *_BINARY)):
        # str() would send the text "None" or "True", or an object's repr
        raise InvalidRequestError(f"netlayer: cookies[{name!r}]: {type(value).__name__} is not a cookie value "
                                  "(str, bytes or a number; leave the cookie out to send none)")
    value = str(_text(value, name, "cookies"))
    if not name or _COOKIE_NAME_BREAKERS.search(name):
        raise InvalidRequestError(f"netlayer: cookies key {name!r} is not a cookie name "
                                  "(no ';', ',', '=', white space or control characters)")
    if _COOKIE_BREAKERS.search(value):
        raise InvalidRequestError(f"netlayer: cookies[{name!r}]: the value holds ';', ',' or a control character, "
                                  "which would make another cookie of it; encode it first")
    return f"{name}={value}"


def _cookie_header(headers: Any, cookies: Any) -> Dict[str, Any]:
    """``cookies={name: value}`` of one request added to its ``Cookie`` header (which
    the library sends in one line with the jar's cookies)."""
    out = dict(headers or {})
    pairs = "; ".join(_cookie_pair(k, v) for k, v in _field_pairs(cookies, "cookies") if v is not None)
    existing = next((k for k in out if k.lower() == "cookie"), None)
    if existing is None:
        out["Cookie"] = pairs
    elif pairs:
        out[existing] = f"{out[existing]}; {pairs}"
    return out


#: keyword -> what it names in the contract (for the message of a conflict)
_BODY_WORDS = {"body": "the body", "json": "a JSON body", "data": "a form or raw body",
               "files": "a multipart body", "multipart": "a multipart body",
               "uploadFrom": "a body read from a file"}


def _requests_names(document: Dict[str, Any], query_alias: bool = True) -> Dict[str, Any]:
    """``document`` (keyword arguments already converted) with requests' names read as
    Netlayer's: ``params`` as the query (unless ``query_alias`` is off), ``auth=(user,
    password)`` as basic authentication."""
    if query_alias and "params" in document:
        if "query" in document:
            raise _both("params", "query", "params= is the URL query, as in requests; give one")
        document["query"] = document.pop("params")
    if "auth" in document:
        document["auth"] = _auth(document["auth"])
    return document


def _endpoint_keywords(keys: Mapping[str, Any], query_alias: bool) -> Dict[str, Any]:
    """Keyword arguments of a request as endpoint keys: requests' and httpx's names
    mapped, snake_case renamed (``query_alias``: ``params`` is the query, as in
    get/post/request; in call() it is the path parameters). A keyword given as None is
    not given, as in requests (``json=None, data=...`` from a wrapper), but for
    ``path``, which a None would make the base URL."""
    if any(value is None for value in keys.values()):
        if keys.get("path", "") is None:
            _path(None)
        keys = {key: value for key, value in keys.items() if value is not None}
    document = _requests_names(dict(_convert_object(keys, ENDPOINT, "")), query_alias=query_alias)
    if "path" in document:
        _split_path(document)
    if "followRedirects" in document or "follow_redirects" in document:
        raise TypeError("netlayer: follow_redirects is a client setting: "
                        "netlayer.Client(base_url, follow_redirects=...)")
    for key in ("downloadTo", "uploadFrom"):
        if isinstance(document.get(key), os.PathLike):
            document[key] = os.fsdecode(document[key])
    query = document.get("query")
    if query is not None and not isinstance(query, Mapping):
        document["query"] = _query_pairs(query, "params" if query_alias else "query")
    for key, what in (("headers", "headers"), ("query", "params" if query_alias else "query")):
        if isinstance(document.get(key), Mapping):
            document[key] = _texts(document[key], what)
    if document.get("cookies", ()) is None:
        del document["cookies"]  # requests' default
    if "cookies" in document:
        document["headers"] = _cookie_header(document.get("headers"), document.pop("cookies"))
    if "json" in document or "data" in document or "files" in document:
        _body_keywords(document)
    return document


def _query_pairs(pairs: Any, what: str) -> Dict[str, Any]:
    """``params=[("a", 1), ("b", 2), ("a", 3)]`` as requests takes it: (name, value)
    pairs, a repeated name's values as a list (sent as repeated parameters)."""
    out: Dict[str, Any] = {}
    for name, value in _field_pairs(pairs, what):
        if value is None:
            continue  # left out, as requests does
        out[name] = _joined(out.get(name), value)
    return out


def _texts(fields: Mapping[Any, Any], what: str) -> Mapping[Any, Any]:
    """Header or query fields with their names and values as text (`_text`); the
    mapping itself when every one is plain ASCII text already (the usual case)."""
    def plain(value: Any) -> bool:
        return value.isascii() if isinstance(value, str) else not isinstance(value, _BINARY)

    if all(plain(name) and (all(map(plain, value)) if isinstance(value, list) else plain(value))
           for name, value in fields.items()):
        return fields
    return {_text(name, name, what): [_text(v, name, what) for v in value] if isinstance(value, list)
            else _text(value, name, what) for name, value in fields.items()}


def _body_keywords(document: Dict[str, Any]) -> None:
    """``json=``, ``data=`` and ``files=`` as body, bodyEncoding and multipart."""
    given = [k for k in ("json", "data", "files", "body", "multipart", "uploadFrom") if k in document]
    allowed = {("data", "files")}
    for i, a in enumerate(given):
        for b in given[i + 1:]:
            if (a, b) not in allowed:
                raise _both(a, b, f"{_BODY_WORDS[a]} and {_BODY_WORDS[b]} exclude each other")
    if "bodyEncoding" in document:
        word = next(k for k in ("json", "data", "files") if k in document)
        raise _both(word, "body_encoding", f"{word}= sets the encoding; use body= with body_encoding=")
    if "json" in document:
        value = document.pop("json")
        if isinstance(value, _BINARY):
            raise TypeError("netlayer: json= takes a JSON value; send bytes with data= or body=")
        document["body"] = value
        return
    files = document.pop("files", None)
    data = _read_body(document.pop("data", None))
    if files is not None:
        parts: List[Dict[str, Any]] = []
        for name, value in _field_pairs(data) if data is not None else ():
            for item in value if isinstance(value, list) else [value]:
                if item is None:
                    continue  # left out, as requests does
                if isinstance(item, _BINARY):
                    parts.append({"name": name, "base64": base64.b64encode(bytes(item)).decode("ascii")})
                elif isinstance(item, str):
                    parts.append({"name": name, "text": item})
                else:  # as a form takes it: a number or a bool as JSON writes it, nothing else
                    parts.append({"name": name, "text": _multipart_text(name, item)})
        parts.extend(_file_part(name, value) for name, value in _field_pairs(files, "files"))
        document["multipart"] = parts
        document["bodyEncoding"] = "multipart"
    elif isinstance(data, (str,) + _BINARY):
        document["body"] = data
        if isinstance(data, str):
            document["bodyEncoding"] = "text"
    elif data is not None:
        document["body"] = _form(data)
        document["bodyEncoding"] = "form"


def _multipart_text(name: Any, value: Any) -> str:
    """A ``data=`` value that is not text, in a multipart body: what the same value is
    in a form body (``true``, ``3``, ``2.5``); anything else is refused, as there."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) or (isinstance(value, float) and value == value and abs(value) != float("inf")):
        return repr(value)
    raise InvalidRequestError(f"netlayer: data[{name!r}] must be a string, a number, a boolean or bytes, "
                              f"not {type(value).__name__}", kind="invalid_request")


def _read_body(data: Any) -> Any:
    """``data=`` as requests takes it: a file (what ``read()`` returns) or an iterator
    of bytes or str (joined) is the body; anything else as it is."""
    if hasattr(data, "read"):
        return data.read()
    if isinstance(data, Iterator) or (isinstance(data, (list, tuple)) and data
                                      and all(isinstance(item, _BINARY) for item in data)):
        items = list(data)
        if items and all(isinstance(item, _BINARY) for item in items):
            return b"".join(bytes(item) for item in items)
        if items and all(isinstance(item, str) for item in items):
            return "".join(items)
        return items
    return data


def endpoint(document: Optional[Endpoint], keys: Mapping[str, Any]) -> Dict[str, Any]:
    """An endpoint document: ``document`` with the keyword arguments merged over it."""
    out = dict(normalise_endpoint(document)) if document else {}
    if keys:
        out.update(_endpoint_keywords(keys, query_alias=True))
    if "path" in out:
        out["path"] = _path(out["path"])
    return out


def stream_endpoint(document: Union[Endpoint, str, None], keys: Mapping[str, Any]) -> Dict[str, Any]:
    """The endpoint of ``Client.stream``: a path or a document; ``"stream"`` defaults to sse."""
    out = endpoint({"path": document} if isinstance(document, str) else document, keys)
    if isinstance(document, str):
        _split_path(out)
    if "on_progress" in out:
        raise TypeError("netlayer: a stream reports its body events, not progress: on_progress= is for "
                        "get(), request() and their siblings")
    if out.get("stream") is None:
        out["stream"] = "sse"
    return out


def method(name: str, path: str, keys: Mapping[str, Any]) -> Dict[str, Any]:
    """The endpoint of ``Client.get(path, ...)`` and its siblings."""
    if "method" in keys:
        raise TypeError(f"netlayer: {name.lower()}() sets the method; use request() for another")
    out = _endpoint_keywords(keys, query_alias=True)
    out["path"] = _path(path)
    out["method"] = name
    _split_path(out)
    return out


def _path(value: Any) -> str:
    """A request's path, which must be text: None or a number would otherwise be read
    as no path, and the request would go to the base URL itself."""
    if isinstance(value, str):
        return value
    hint = " (the base URL itself is the path \"\")" if value is None else ""
    raise TypeError(f"netlayer: the path is a str, not {type(value).__name__}{hint}")


def _split_path(document: Dict[str, Any]) -> None:
    """A ``?query`` written in a relative path is sent as written (``encodedQuery``),
    before ``params``' pairs, and a ``#fragment`` is dropped, as requests does with
    ``get("items?color=a,b", params=...)``; an absolute URL (``is_full_path``) keeps its own."""
    path = document["path"]
    if not isinstance(path, str) or ("?" not in path and "#" not in path) or document.get("isFullPath"):
        return
    path, sep, text = path.partition("#")[0].partition("?")
    document["path"] = path
    if not sep or not text:
        return
    given = document.get("encodedQuery")
    if not given:
        document["encodedQuery"] = text
    elif isinstance(given, str):
        document["encodedQuery"] = text + "&" + given
    # else the library refuses the key, naming it


def overlay(params: Optional[Mapping[str, Any]], keys: Mapping[str, Any]) -> Dict[str, Any]:
    """The overlay of ``Client.call(name, params, ...)``: ``params`` fill the path."""
    out = _endpoint_keywords(keys, query_alias=False)
    if params is not None:
        out["params"] = dict(params)
    return out


def config(document: Union[Mapping[str, Any], str, None], keys: Mapping[str, Any]) -> Dict[str, Any]:
    """The config document of ``Client(config, **keys)``: a base URL string or a
    document, the keyword arguments merged over it."""
    from_string = isinstance(document, str)
    if isinstance(document, str):
        document = {"baseURL": document}
    elif document is not None and not isinstance(document, Mapping):
        raise TypeError("netlayer: Client() takes a base URL string or a config document (a dict), "
                        f"not {type(document).__name__}")
    out = dict(_convert_object(document or {}, CONFIG, ""))
    if keys:
        given = _requests_names(dict(_convert_object(keys, CONFIG, "")))
        if from_string and "baseURL" in given:
            raise TypeError("netlayer: the base URL is given twice: as Client()'s first argument "
                            "and as a keyword; give it once")
        out.update(given)
    for key, what in (("headers", "headers"), ("query", "query")):
        if isinstance(out.get(key), Mapping):  # bytes as their UTF-8 text, as a request's
            out[key] = _texts(out[key], what)
    return out


def websocket(document: Union[Mapping[str, Any], str], keys: Mapping[str, Any]) -> Dict[str, Any]:
    """The websocket document of ``Client.websocket(path, **keys)``: a path (or a
    ``ws://``/``wss://`` URL, then ``isFullPath`` is set) or a document, the keyword
    arguments merged over it (``params`` is the query, ``auth=(user, password)`` basic
    authentication, ``cookies`` added to the ``Cookie`` header, as for requests)."""
    if isinstance(document, str):
        full = document[:6].lower().startswith(("ws://", "wss://"))
        document = {"path": document, "isFullPath": True} if full else {"path": document}
    elif not isinstance(document, Mapping):
        raise TypeError("netlayer: websocket() takes a path (str) or a websocket document (a dict) as its "
                        f"first argument ('path'), not {type(document).__name__}")
    out = dict(_convert_object(document, WEBSOCKET, ""))
    if keys:
        given = _requests_names(dict(_convert_object(keys, WEBSOCKET, "")))
        out.update(given)
    if "cookies" in out:
        out["headers"] = _cookie_header(out.get("headers"), out.pop("cookies"))
    if isinstance(out.get("path"), str):
        _split_path(out)  # a query written in a relative path goes as written, as for requests
    return out
