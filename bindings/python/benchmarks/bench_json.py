#!/usr/bin/env python3
"""orjson vs json on a ~200-byte result document: the encode/decode the bindings do per call.

    python3 bindings/python/benchmarks/bench_json.py [BASE_URL]

With BASE_URL (a running Tests/server/server.py) it also times one full
client.get("json") round trip with each backend.
"""

from __future__ import annotations

import json
import sys
import timeit
from typing import Any, Callable

import orjson

RESULT = {"ok": True, "status": 200,
          "headers": {"content-type": "application/json", "content-length": "64"},
          "value": {"id": 1, "title": "Dune", "tags": ["sf", "novel"]},
          "fromCache": False, "attempts": 1, "timing": {"totalMs": 1.42}}
ENCODED = json.dumps(RESULT, separators=(",", ":")).encode()
ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def per_call_us(stmt: Callable[[], Any], number: int = 200_000) -> float:
    best = min(timeit.repeat(stmt, number=number, repeat=5))
    return best / number * 1e6


def main() -> None:
    print(f"document: {len(ENCODED)} bytes")
    rows = [
        ("dumps", lambda: ENCODER.encode(RESULT).encode(), lambda: orjson.dumps(RESULT)),
        ("loads", lambda: json.loads(ENCODED), lambda: orjson.loads(ENCODED)),
    ]
    for name, with_json, with_orjson in rows:
        a, b = per_call_us(with_json), per_call_us(with_orjson)
        print(f"{name}: json {a:.2f} us, orjson {b:.2f} us ({a / b:.1f}x)")
    if len(sys.argv) > 1:
        import netlayer
        from netlayer import _json

        with netlayer.Client({"baseURL": sys.argv[1]}) as client:
            for backend, dumps, loads in (
                ("orjson", orjson.dumps, orjson.loads),
                ("json", lambda o: ENCODER.encode(o).encode(), json.loads),
            ):
                _json.dumps, _json.loads = dumps, loads  # what the client calls
                client.get("json")
                us = per_call_us(lambda: client.get("json"), number=2000)
                print(f"client.get('json') round trip with {backend}: {us:.1f} us")


if __name__ == "__main__":
    main()
