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
    BACKEND = "orjson"
    dumps = _orjson.dumps  # compact UTF-8 JSON already; bound directly: no extra frame
    loads = _orjson.loads
