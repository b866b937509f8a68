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


# -- url and history ------------------------------------------------------------------


def test_url_and_history_after_redirects_as_requests_has_them(client: netlayer.Client, base_url: str) -> None:
    theirs = requests.get(base_url + "redirect/2", timeout=10)
    ours = client.get("redirect/2")
    assert ours.url == theirs.url == base_url + "json"
    assert [(hop.status_code, hop.url) for hop in ours.history] == \
        [(hop.status_code, hop.url) for hop in theirs.history] == \
        [(302, base_url + "redirect/2"), (302, base_url + "redirect/1"), (302, base_url + "redirect/0")]
    plain = client.get("json", params={"page": 2})
    assert plain.url == base_url + "json?page=2" and plain.history == ()


def test_url_and_history_keep_secrets_out_as_logs_do(base_url: str) -> None:
    with netlayer.Client(base_url, timeout=10, log={"redact_query": ["sig_v2"]}) as client:
        r = client.get("redirect-to", params={"url": "/echo?token=t0p&page=1&sig_v2=abc", "status": 301,
                                              "api_key": "k3y"})
        assert r.status == 200 and r.value["args"]["token"] == ["t0p"]
        assert r.url == base_url + "echo?token=<redacted>&page=1&sig_v2=<redacted>"
        assert [hop.status for hop in r.history] == [301]
        assert r.history[0].url.startswith(base_url + "redirect-to?url=")
        assert r.history[0].url.endswith("&status=301&api_key=<redacted>")
        assert "k3y" not in repr(r.history) and "t0p" not in r.url


def test_a_cached_answer_keeps_its_url_and_history(base_url: str) -> None:
    with netlayer.Client(base_url, timeout=10, cache={"enabled": True}) as client:
        target = "/echo?_max_age=60&parity=history"
        first = client.get("redirect-to", params={"url": target}, use_cache=True)
        again = client.get("redirect-to", params={"url": target}, use_cache=True)
        assert again.from_cache and not first.from_cache
        assert again.url == first.url == base_url + target[1:]
        assert again.history == first.history and [hop.status for hop in again.history] == [302]
