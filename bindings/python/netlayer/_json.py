"""JSON encoding for the documents crossing the C ABI: orjson when importable, else json.

orjson is the package's dependency (README.md, "Performance: orjson or json", says why);
an install without it (``pip install --no-deps``) falls back to the json module.
"""

from __future__ import annotations

import base64
import dataclasses as _dataclasses
import sys as _sys
from typing import Any, Callable, Iterator, Tuple, Union

from ._errors import InvalidRequestError

__all__ = ["dumps", "loads", "loads_result", "dumps_fast", "loads_fast", "BIG_INTEGERS_MARK", "BACKEND"]

#: In a result document that holds an integer beyond 64 bits (the library writes it
#: after ``value``); the bytes cannot occur inside a JSON string.
BIG_INTEGERS_MARK = b'"bigIntegers":true'

dumps_fast: Callable[[Any], bytes]
loads_fast: Callable[[Union[bytes, str]], Any]

import json as _json

def _dataclass_fields(value: Any) -> Any:
    """A dataclass instance as the object of its fields, as orjson writes it: the same
    ``json=`` works with and without orjson."""
    if _dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in _dataclasses.fields(value)}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_encoder = _json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                             default=_dataclass_fields)
_exact_loads = _json.loads


def _encode_exactly(obj: Any) -> bytes:
    return _encoder.encode(obj).encode("utf-8")


try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    BACKEND = "json"
    dumps_fast = _encode_exactly
    loads_fast = _exact_loads
else:
    BACKEND = "orjson"
    # Bound directly: no extra frame on the hot paths, which fall back to dumps/loads.
    # orjson stops at 64-bit integers: it refuses larger ones when writing and rounds
    # them to floats when reading, so those documents go through the json module.
    dumps_fast = _orjson.dumps
    loads_fast = _orjson.loads


def dumps(obj: Any) -> bytes:
    """Encodes a document (or a list of them) as compact UTF-8 JSON. A ``bytes`` body
    is sent as it is (``bodyEncoding`` ``base64``); integers beyond 64 bits stay exact.
    A NaN or an infinity anywhere raises ``InvalidRequestError`` naming where: JSON
    cannot hold them (requests refuses them in ``json=`` too), and orjson would write
    ``null``, which a document reads as "the default" (a ``timeout`` of NaN would be
    30 s)."""
    try:
        out = dumps_fast(obj)
    except (TypeError, ValueError):
        out = _dumps_slowly(obj)
    # orjson writes a NaN as null: only a document with a null can hold one.
    if _find(out, b"null") >= 0:
        _refuse_non_finite(obj, "")
    return out


_find = bytes.find


def _dumps_slowly(obj: Any) -> bytes:
    """``dumps`` for a document orjson refuses: bytes bodies, big integers, and (with
    the json module) a NaN, refused here naming where it is."""
    try:
        obj = _binary_bodies(obj)
        try:
            return dumps_fast(obj)
        except TypeError:
            pass
        try:
            return _encode_exactly(obj)  # big integers; anything else raises here
        except TypeError:
            _refuse_unencodable(obj, "")
            raise
    except ValueError:  # UnicodeEncodeError and the digit limit's error among them
        _refuse_non_finite(obj, "")
        _refuse_unwritable(obj, "")
        raise


def _parts(value: Any, where: str) -> Iterator[Tuple[str, Any, bool]]:
    """Each value of a document as the json module writes it, with where it stands:
    ``(where, value, False)`` for a leaf, and ``(where of the object, key, True)`` for
    each key of an object, before its value. A dataclass is the object of its fields,
    as orjson writes it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield where, key, True
            yield from _parts(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _parts(item, f"{where}[{index}]")
    elif _dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in _dataclasses.fields(value):
            yield from _parts(getattr(value, field.name), f"{where}.{field.name}" if where else field.name)
    else:
        yield where, value, False


def _refuse_unwritable(value: Any, where: str) -> None:
    """An InvalidRequestError naming the first text UTF-8 cannot carry (a lone
    surrogate) or integer Python will not write (past ``sys.get_int_max_str_digits()``)."""
    limit = getattr(_sys, "get_int_max_str_digits", lambda: 0)()
    for place, part, is_key in _parts(value, where):
        if is_key:
            place = f"{place} key" if place else "a key"
        if isinstance(part, str):
            try:
                part.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidRequestError(f"netlayer: {place or 'the document'} holds {part!r:.60}, which is not text "
                                          "UTF-8 can carry (a lone surrogate)", kind="invalid_request") from None
        elif isinstance(part, int) and not isinstance(part, bool):
            if limit and part.bit_length() > limit * 3:  # over about 0.9 x limit digits: try the conversion
                try:
                    str(part)
                except ValueError:
                    raise InvalidRequestError(f"netlayer: {place or 'the document'} is an integer of more than {limit} "
                                              "digits, past Python's limit for writing one "
                                              "(sys.set_int_max_str_digits raises it)", kind="invalid_request") from None


def _refuse_unencodable(value: Any, where: str) -> None:
    """A TypeError naming the first value in `value` that JSON cannot carry (a Decimal
    in ``params=``, an object in ``json=``), where the json module names only its type."""
    for place, part, is_key in _parts(value, where):
        if part is None or isinstance(part, (str, int, float)):
            continue
        if is_key:
            raise TypeError(f"netlayer: {place or 'the document'} has the key {part!r:.40} "
                            f"({type(part).__name__}); a JSON object's keys are text")
        raise TypeError(f"netlayer: {place or 'the document'} is {type(part).__name__} {part!r:.40}, which JSON "
                        "cannot carry (str, int, float, bool, None, lists and dicts; convert it first, e.g. with str())")


def _refuse_non_finite(value: Any, where: str) -> None:
    # orjson writes a dataclass's fields itself, a NaN among them as null
    for place, part, is_key in _parts(value, where):
        if not is_key and isinstance(part, float) and (part != part or part in (_INFINITY, -_INFINITY)):  # numpy's float64 too
            raise InvalidRequestError(f"netlayer: {place or 'the document'} is {part!r}, which JSON cannot hold "
                                      "(NaN and infinities are not numbers a document or a JSON body may carry)",
                                      kind="invalid_request")


_INFINITY = float("inf")


def loads(raw: Union[bytes, str]) -> Any:
    """Decodes a document; integers beyond 64 bits stay exact."""
    # find, not `in`: `mark in raw` first tries the mark as an integer, which raises
    # and clears a TypeError inside CPython on every call
    if isinstance(raw, bytes) and raw.find(BIG_INTEGERS_MARK) >= 0:
        return _exact_result(raw)
    return loads_fast(raw)


def loads_result(raw: bytes) -> Any:
    """Decodes a result document of nl_request or nl_call, as ``loads`` does, without
    searching its bytes: a success document that holds an integer beyond 64 bits says
    so in its top-level ``bigIntegers`` key, read after the fast parse (which made
    floats of them); a number beyond a double, which orjson refuses, fails that parse."""
    try:
        doc = loads_fast(raw)
    except ValueError:
        return _exact_result(raw)
    if type(doc) is dict and "bigIntegers" in doc:
        return _exact_result(raw)
    return doc


def _exact_result(raw: Union[bytes, str]) -> Any:
    """A document with exact integers. A result in it (a success document, alone or in
    a batch's or a queue's list) whose value holds an integer of more digits than
    Python converts (``sys.get_int_max_str_digits()``, a guard against quadratic
    conversions) becomes a failure of kind ``parsing`` that keeps the status and
    headers: requests' ``.json()`` would fail the same way, not the whole call."""
    try:
        return _exact_loads(raw)
    except ValueError as error:
        limit = getattr(_sys, "get_int_max_str_digits", lambda: 0)()
        if not limit:
            raise
        try:
            doc = _exact_loads(raw, parse_int=lambda text: int(text) if len(text) <= limit else _TooLong())
        except ValueError:
            raise error from None
    return _refuse_too_long(doc, limit)


class _TooLong:
    """An integer literal past Python's digit limit, while a document is read."""


def _holds_too_long(value: Any) -> bool:
    if isinstance(value, _TooLong):
        return True
    if isinstance(value, dict):
        return any(_holds_too_long(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_too_long(v) for v in value)
    return False


def _refuse_too_long(doc: Any, limit: int) -> Any:
    """`doc` with each result document (one with "ok") that holds a `_TooLong` made a
    failure; lists and wrappers around results (a queue's {"id", "result"}) are walked."""
    if isinstance(doc, list):
        return [_refuse_too_long(item, limit) for item in doc]
    if not isinstance(doc, dict) or not _holds_too_long(doc):
        return doc
    if "ok" not in doc:
        return {key: _refuse_too_long(value, limit) for key, value in doc.items()}
    return {"ok": False, "status": doc.get("status"), "headers": doc.get("headers", {}), "url": doc.get("url"),
            "attempts": doc.get("attempts", 1), "id": doc.get("id"),
            "error": {"kind": "parsing",
                      "message": f"the response holds an integer of more than {limit} digits, past Python's limit "
                                 "for reading one (sys.set_int_max_str_digits raises it)"}}


_BINARY = (bytes, bytearray, memoryview)


def _binary_bodies(obj: Any) -> Any:
    """``obj`` with each endpoint document's bytes ``body`` as base64 text."""
    if isinstance(obj, list):
        return [_binary_bodies(item) for item in obj]
    if isinstance(obj, dict) and isinstance(obj.get("body"), _BINARY):
        encoding = obj.get("bodyEncoding")
        if encoding not in (None, "base64"):
            raise TypeError(f"netlayer: a bytes body is sent as it is; bodyEncoding {encoding!r} does not apply")
        obj = dict(obj)
        obj["body"] = base64.b64encode(obj["body"]).decode("ascii")
        obj["bodyEncoding"] = "base64"
    return obj
