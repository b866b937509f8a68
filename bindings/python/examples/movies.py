#!/usr/bin/env python3
"""The demo movies API through the netlayer package: sync, batch, named endpoints, asyncio.

    python3 Tests/server/server.py --port 8080 &
    python3 bindings/python/examples/movies.py http://127.0.0.1:8080/

The base URL comes from argv[1], else from NETLAYER_TEST_URL.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import List

import netlayer


def main() -> int:
    base_url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("NETLAYER_TEST_URL")
    if not base_url:
        print("usage: movies.py BASE_URL (or set NETLAYER_TEST_URL)", file=sys.stderr)
        return 2
    config = {
        "baseURL": base_url,
        "headers": {"Accept": "application/json"},
        "endpoints": {"movie": {"path": "movies/{id}", "response": {"keyPath": "data"}}},
    }
    with netlayer.Client(config, timeout=5) as client:
        movies = client.get("movies", query={"page": 1}, response={"keyPath": "results"})
        print(f"{movies.status}: {[movie['title'] for movie in movies.value]}")

        created = client.post("movies", body={"title": "Solaris"}, response={"keyPath": "data"})
        print(f"created {created.value} ({created.status}, {created.timing['totalMs']:.1f} ms)")

        print("movie 2:", client.call("movie", {"id": 2}).value["title"])

        try:
            client.call("movie", {"id": 99})
        except netlayer.StatusError as error:
            print(f"movie 99: {error.kind} {error.status} {error.body}")

        for result in client.batch([{"path": f"movies/{i}"} for i in (1, 3, 42)]):
            if isinstance(result, netlayer.Error):
                print("  batch: error", result.status)
            else:
                print("  batch:", result.value["data"]["title"])

        async def concurrently() -> List[netlayer.Response]:
            return await asyncio.gather(*(client.acall("movie", {"id": i}) for i in (1, 2, 3)))

        print("async:", [response.value["title"] for response in asyncio.run(concurrently())])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
