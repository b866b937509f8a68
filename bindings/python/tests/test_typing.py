"""Typed keywords: ``mypy --strict`` refuses a misspelt key or a value of the wrong type
in a call of Client and its methods (netlayer/_types.py: TypedDicts used with
``Unpack``), accepts the correct forms, and finds nothing in the package itself.

mypy is installed into the test venv by scripts/test-python."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

pytest.importorskip("mypy")

WRONG = textwrap.dedent('''\
    import netlayer

    client = netlayer.Client("http://127.0.0.1:1/", timeout="5")  # E: timeout
    client.get("movies", queyr={"page": 1})  # E: queyr
    client.get("movies", timeout="5")  # E: timeout
    client.post("movies", json={"a": 1}, use_cache="yes")  # E: use_cache
    client.get("movies", method="POST")  # E: method
    client.call("movie", {"id": 1}, params={"id": 2})  # E: params
    client.request(path="x", bodyEncodign="json")  # E: bodyEncodign
    netlayer.Client(base_url=3)  # E: base_url
    netlayer.Client(folow_redirects=False)  # E: folow_redirects
    netlayer.Client(http_version="1.2")  # E: http_version
    client.websocket("chat", protocol=["chat"])  # E: protocol
    client.websocket("chat", max_queue="16")  # E: max_queue


    async def main() -> None:
        await client.aget("movies", parms={"page": 1})  # E: parms
        await client.apost("movies", auth=("user",))  # E: auth
    ''')

RIGHT = textwrap.dedent('''\
    import asyncio
    from typing import Any, Dict, Optional, Union

    import netlayer

    client = netlayer.Client("http://127.0.0.1:1/", timeout=5, follow_redirects=False,
                             retry={"max_attempts": 3}, auth=("user", "password"))
    other = netlayer.Client({"baseURL": "http://127.0.0.1:1/"}, base_url="http://127.0.0.1:2/",
                            max_concurrent=4, http_version="2")
    r = client.get("movies", params={"page": 1}, headers={"X-Trace": "1"}, timeout=2.5)
    status: int = r.status_code
    kind: str = r.headers["Content-Type"]
    text: str = r.text
    raw: bytes = r.content
    data: Any = r.json()
    version = r.http_version
    r.raise_for_status()
    client.post("movies", json={"title": "Dune"}, cookies={"session": "s"})
    client.post("form", data={"a": "1"}, files={"f": ("a.txt", b"x", "text/plain")})
    client.put("upload", upload_from="/tmp/f", use_cache=False, acceptable_status=[200, [300, 399]])
    client.get("big", download_to="/tmp/out", response={"key_path": "a"})
    # The forms the README documents and the package takes at run time.
    import io
    import pathlib
    client.post("raw", data=io.BytesIO(b"x"))
    client.post("raw", data=iter([b"a", b"b"]))
    client.get("h", headers={"A": b"x"}, cookies={"c": None, "d": b"e", "n": 1})
    client.get("big", download_to=pathlib.Path("/tmp/out"))
    client.put("upload", upload_from=pathlib.Path("/tmp/f"))
    client.call("movie", {"id": 1}, headers={"X": "y"})
    client.request({"path": "x"}, method="OPTIONS", body_encoding="text", body="t")
    for event in client.stream("sse", stream="sse"):
        event_data: Dict[str, Any] = event
    with client.websocket("chat", protocols=["chat"], params={"room": 1}, max_queue=4, idle_timeout=30) as ws:
        ws.send("hello")
        ws.send(b"\x00")
        reply: Union[str, bytes] = ws.recv(timeout=1.5)
        for message in ws:
            chosen: Optional[str] = ws.subprotocol
        ws.close(4000, "bye")
        code: Optional[int] = ws.close_code


    async def main() -> None:
        got = await client.aget("movies", params={"page": 1})
        await client.apost("movies", json=[1, 2], auth={"bearer": "t"})
        await client.aput("x", data="text")
        await client.apatch("x", json=None)
        await client.adelete("x")
        await client.ahead("x")
        await client.arequest(path="x", method="GET")
        await client.acall("movie", {"id": 1})
        print(got.status)
        async with client.awebsocket("chat", headers={"X": "y"}) as aws:
            await aws.send("hi")
            async for item in aws:
                text: Union[str, bytes] = item
        other_ws: netlayer.AsyncWebSocket = await client.awebsocket("wss://example.invalid/chat")
        await other_ws.close()

    asyncio.run(main())
    ''')


def _mypy(tmp_path: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    # Run outside the source tree, so that mypy reads the installed package (py.typed).
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--show-error-codes",
         "--cache-dir", str(tmp_path / "cache"), *args],
        cwd=str(tmp_path), capture_output=True, text=True, timeout=300)


def test_mypy_strict_refuses_wrong_keywords(tmp_path: Path) -> None:
    (tmp_path / "wrong.py").write_text(WRONG)
    result = _mypy(tmp_path, "wrong.py")
    errors: Dict[int, List[str]] = {}
    for line in result.stdout.splitlines():
        match = re.match(r"wrong\.py:(\d+): error: (.*)", line)
        if match:
            errors.setdefault(int(match.group(1)), []).append(match.group(2))
    expected = {number: re.search(r"# E: (\w+)", text).group(1)  # type: ignore[union-attr]
                for number, text in enumerate(WRONG.splitlines(), 1) if "# E:" in text}
    for number, key in expected.items():
        assert number in errors, f"line {number} ({key}) passed mypy --strict:\n{result.stdout}"
        assert any(key in message for message in errors[number]), (number, key, errors[number])
    assert set(errors) == set(expected), result.stdout


def test_mypy_strict_accepts_the_documented_forms_and_the_package(tmp_path: Path) -> None:
    (tmp_path / "right.py").write_text(RIGHT)
    result = _mypy(tmp_path, "right.py")
    assert result.returncode == 0, result.stdout + result.stderr
    result = _mypy(tmp_path, "-p", "netlayer")
    assert result.returncode == 0, result.stdout + result.stderr
