#!/usr/bin/env python3
"""One Python client's sequential loop, for counting instructions (instructions.py).

    py_loop.py pycurl|netlayer URL N [distinct|repeated]

Makes N GETs of URL (distinct: URL?page=i, a new query per request), each the way
its users write it, the JSON body decoded every time, and checks every answer:

* pycurl: one reused handle, URL set per request, the body into a BytesIO, the
  status checked, json.loads (as in pycurl's own examples);
* netlayer: client.get(path, params={"page": i}).json() on one Client.

Exits non-zero on the first failure. Prints nothing on success.
"""

from __future__ import annotations

import io
import json
import sys


def pycurl_loop(url: str, n: int, distinct: bool) -> None:
    import pycurl

    handle = pycurl.Curl()
    for i in range(n):
        buffer = io.BytesIO()
        handle.setopt(pycurl.URL, f"{url}?page={i}" if distinct else url)
        handle.setopt(pycurl.WRITEDATA, buffer)
        handle.perform()
        if handle.getinfo(pycurl.RESPONSE_CODE) != 200:
            sys.exit(f"pycurl: request {i}: status {handle.getinfo(pycurl.RESPONSE_CODE)}")
        if json.loads(buffer.getvalue())["id"] != 1:
            sys.exit(f"pycurl: request {i}: unexpected body")
    handle.close()


def netlayer_loop(url: str, n: int, distinct: bool) -> None:
    import netlayer

    base, _, path = url.rpartition("/")
    with netlayer.Client(base + "/") as client:
        for i in range(n):
            value = client.get(path, params={"page": i}).json() if distinct else client.get(path).json()
            if value["id"] != 1:
                sys.exit(f"netlayer: request {i}: unexpected body")


def main() -> None:
    client, url, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    distinct = (sys.argv[4] if len(sys.argv) > 4 else "distinct") == "distinct"
    {"pycurl": pycurl_loop, "netlayer": netlayer_loop}[client](url, n, distinct)


if __name__ == "__main__":
    main()
