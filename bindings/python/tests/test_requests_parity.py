"""Where the package behaves as requests does, checked side by side with requests
against the same test server: no Content-Type without a body, ``Response.ok``,
``url`` and ``history`` after redirects, ``text`` decoded by the declared charset;
and where it differs on purpose (docs: bindings/python/README.md, "Differences from
requests"): the caller's cookies replace the jar's of the same name, a charset is
read as the Encoding Standard reads it, Content-Type as the Fetch standard extracts it."""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Optional, Sequence

import pytest
import requests

import netlayer


def header_lines(echo: Dict[str, Any], name: str) -> List[str]:
    return [value for key, value in echo["headerLines"] if key.lower() == name]


# -- no body, no Content-Type ---------------------------------------------------------


def test_post_without_a_body_sends_no_content_type_as_requests_does(client: netlayer.Client,
                                                                     base_url: str) -> None:
    theirs = requests.post(base_url + "echo", timeout=10).json()
    ours = client.post("echo").value
    assert header_lines(theirs, "content-type") == header_lines(ours, "content-type") == []
    assert header_lines(ours, "content-length") == ["0"] and ours["method"] == "POST"
    # a 307 repeats the POST as it was: still without a body, still without a type
    again = client.post("redirect-to", params={"url": "/echo", "status": 307}).value
    assert again["method"] == "POST" and header_lines(again, "content-type") == []
    # a type the caller gives is sent, body or not
    typed = client.post("echo", headers={"Content-Type": "text/plain"}).value
    assert header_lines(typed, "content-type") == ["text/plain"]
    assert header_lines(client.post("echo", json={"a": 1}).value, "content-type") == ["application/json"]


# -- Response.ok ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["json", "status/201", "redirect/0", "status/404", "status/418", "status/500"])
def test_ok_is_requests_ok(base_url: str, path: str) -> None:
    with netlayer.Client(base_url, timeout=10, follow_redirects=False, acceptable_status=[[200, 599]]) as client:
        ours = client.get(path)
    theirs = requests.get(base_url + path, timeout=10, allow_redirects=False)
    assert ours.status == theirs.status_code
    assert ours.ok is theirs.ok is (ours.status < 400)
