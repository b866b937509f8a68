"""JSON encoding for the documents crossing the C ABI: orjson when importable, else json.

Measured on a 200-byte result document (see README.md, "Performance"); orjson is an
optional extra (``pip install "netlayer[fast]"``).
"""

from __future__ import annotations

from typing import Any, Callable, Union

__all__ = ["dumps", "loads", "BACKEND"]

dumps: Callable[[Any], bytes]
loads: Callable[[Union[bytes, str]], Any]

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    import json as _json

    BACKEND = "json"
    _encoder = _json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    def dumps(obj: Any) -> bytes:
        """Encodes a document as compact UTF-8 JSON."""
        return _encoder.encode(obj).encode("utf-8")

    loads = _json.loads
else:
    import json as _json

    BACKEND = "orjson"
    _encoder = _json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    _orjson_dumps = _orjson.dumps
    _orjson_loads = _orjson.loads
    _exact_loads = _json.loads
    # orjson stops at 64-bit integers: it refuses larger ones when writing and rounds
    # them to floats when reading. The library marks a document that holds one
    # ("bigIntegers": true; the bytes cannot occur inside a JSON string), and such
    # documents, like such arguments, go through the standard module, which is exact.
    _MARK = b'"bigIntegers":true'

    def dumps(obj: Any) -> bytes:
        """Encodes a document as compact UTF-8 JSON."""
        try:
            return _orjson_dumps(obj)
        except TypeError as error:
            if "64-bit" not in str(error):
                raise
            return _encoder.encode(obj).encode("utf-8")

    def loads(raw: Union[bytes, str]) -> Any:
        """Decodes a document; integers beyond 64 bits stay exact."""
        if isinstance(raw, bytes) and _MARK in raw:
            return _exact_loads(raw)
        return _orjson_loads(raw)
