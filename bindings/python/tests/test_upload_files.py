"""Files sent as a body (`uploadFrom`) or as multipart parts while they change on disk:
exactly the size announced goes out, a file that shrinks fails as `io`, and a part that
cannot be read yet (a FIFO no one writes) waits within the request's timeout."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

import netlayer

SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n" * 2000


def _once(action: Callable[[], None]) -> Callable[[Dict[str, Any]], None]:
    done: List[bool] = []

    def on_progress(event: Dict[str, Any]) -> None:
        if event["direction"] == "upload" and not done:
            done.append(True)
            action()
    return on_progress


def test_a_multipart_file_that_grows_while_it_is_sent_sends_the_size_announced(
        client: netlayer.Client, tmp_path: Path) -> None:
    part = tmp_path / "part.bin"
    part.write_bytes(b"a" * (8 << 20))

    def grow() -> None:
        with part.open("ab") as f:
            f.write(SMUGGLED)

    echoed = client.post("echo", multipart=[{"name": "f", "file": str(part)}], on_progress=_once(grow)).value
    # The body ends where its Content-Length says, with the closing boundary: no byte of
    # what the file gained is read as the next request on the connection.
    assert echoed["bodyLength"] == int(echoed["headers"]["content-length"])
    assert echoed["body"].endswith("--\r\n") and "smuggled" not in echoed["body"]
    assert client.get("json").status_code == 200


@pytest.mark.parametrize("how", ["multipart", "uploadFrom"])
def test_a_file_that_shrinks_while_it_is_sent_fails_as_io_naming_it(
        client: netlayer.Client, tmp_path: Path, how: str) -> None:
    path = tmp_path / "shrinking.bin"
    path.write_bytes(b"a" * (32 << 20))
    body: Dict[str, Any] = ({"multipart": [{"name": "f", "file": str(path)}]} if how == "multipart"
                            else {"uploadFrom": str(path)})
    started = time.monotonic()
    with pytest.raises(netlayer.IOError) as failure:
        client.request({"path": "sink", "method": "POST", "timeout": 20, **body},
                       on_progress=_once(lambda: os.truncate(path, 1024)))
    assert failure.value.kind == "io" and "shrank" in str(failure.value) and "shrinking.bin" in str(failure.value)
    assert time.monotonic() - started < 10


def test_a_multipart_part_that_is_a_fifo_no_one_writes_ends_with_the_timeout(
        client: netlayer.Client, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(netlayer.TimeoutError):
        client.post("sink", multipart=[{"name": "f", "file": str(fifo)}], timeout=1)
    assert time.monotonic() - started < 5
    assert client.get("json").status_code == 200
