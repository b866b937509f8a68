"""Successful requests: documents in, Responses out, and what the server received."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

import netlayer


def test_get_json_returns_decoded_value_and_metadata(client: netlayer.Client) -> None:
    response = client.get("json")
    assert isinstance(response, netlayer.Response)
    assert response.status == 200
    assert response.value["title"] == "Dune"
    assert response.headers["content-type"] == "application/json"
    assert all(name == name.lower() for name in response.headers)
    assert response.from_cache is False
    assert response.attempts == 1
    assert response.timing["totalMs"] >= 0


def test_request_takes_a_document_or_keywords(client: netlayer.Client) -> None:
    assert client.request({"path": "json"}).value["id"] == 1
    assert client.request(path="json", response={"keyPath": "id"}).value == 1
    assert client.request({"path": "json"}, response={"keyPath": "title"}).value == "Dune"


def test_key_path_selects_nested_values_and_array_elements(client: netlayer.Client) -> None:
    assert client.get("json", response={"keyPath": "data.nested.value"}).value == 42
    assert client.get("json", response={"keyPath": "results.1.name"}).value == "b"
    movies = client.get("movies", query={"page": 1}, response={"keyPath": "results"}).value
    assert [m["title"] for m in movies] == ["Dune", "Arrival", "Heat"]


def test_get_sends_query_and_headers(client: netlayer.Client) -> None:
    echo = client.get("echo/q", query={"language": "en", "ids": [1, 2], "adult": False, "skip": None},
                      headers={"X-Trace": "abc"}).value
    assert echo["method"] == "GET"
    assert echo["path"] == "/echo/q"
    assert echo["args"] == {"language": ["en"], "ids": ["1", "2"], "adult": ["false"]}
    assert echo["headers"]["x-trace"] == "abc"
    assert echo["bodyLength"] == 0


def test_post_sends_json_body(client: netlayer.Client) -> None:
    echo = client.post("echo", body={"title": "Dune", "year": 2021}).value
    assert echo["method"] == "POST"
    assert echo["headers"]["content-type"] == "application/json"
    assert netlayer._json.loads(echo["body"]) == {"title": "Dune", "year": 2021}


def test_post_creates_a_movie_with_status_201(client: netlayer.Client) -> None:
    response = client.post("movies", body={"title": "Solaris"}, response={"keyPath": "data"})
    assert response.status == 201
    assert response.value == {"id": 4, "title": "Solaris"}


def test_put_patch_delete_head_send_their_method(client: netlayer.Client) -> None:
    assert client.put("echo", body=[1, 2]).value["method"] == "PUT"
    assert client.patch("echo", body={"a": None}).value["body"] == '{"a":null}'
    assert client.delete("echo").value["method"] == "DELETE"
    head = client.head("json")
    assert head.status == 200 and head.value is None


def test_form_and_text_encodings(client: netlayer.Client) -> None:
    form = client.post("echo", body={"a": "1 2", "b": "x&y"}, body_encoding="form").value
    assert form["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert form["body"] in ("a=1%202&b=x%26y", "b=x%26y&a=1%202")
    text = client.post("echo", body="héllo", bodyEncoding="text").value
    assert text["headers"]["content-type"].startswith("text/plain")
    assert text["body"] == "héllo"


def test_text_and_base64_decoders(client: netlayer.Client) -> None:
    assert client.get("text", response={"decoder": "text"}).value == "hello, world"
    assert client.get("bytes/3", response={"decoder": "base64"}).value == "AAEC"
    assert client.get("text", response={"decoder": "none"}).value is None


def test_config_headers_and_query_apply_to_every_request(base_url: str) -> None:
    with netlayer.Client({"baseURL": base_url, "headers": {"X-App": "t"}},
                         query={"api_key": "k"}, user_agent="netlayer-tests/1") as c:
        echo = c.get("echo", query={"page": 2}).value
    assert echo["headers"]["x-app"] == "t"
    assert echo["headers"]["user-agent"] == "netlayer-tests/1"
    assert echo["args"] == {"api_key": ["k"], "page": ["2"]}


def test_version_and_abi() -> None:
    assert netlayer.abi_version() == 1
    assert netlayer.version().count(".") == 2


_PROXY_PROBE = """
import json, sys, netlayer
with netlayer.Client({"baseURL": "http://127.0.0.1:1/"}, timeout=10) as client:
    out = []
    for _ in range(3):  # repeated: every request alike, the first and the later ones
        try:
            response = client.get("echo")
            out.append({"status": response.status, "host": response.value["headers"].get("host"),
                        "ua": response.value["headers"].get("user-agent")})
        except netlayer.Error as error:
            out.append({"kind": error.kind})
print(json.dumps(out))
"""


def _probe(env_extra: dict) -> list:
    """Requests http://127.0.0.1:1/echo (nothing listens on port 1) from a fresh process
    whose environment has `env_extra`, which the library reads once when it starts."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(env_extra)
    result = subprocess.run([sys.executable, "-c", _PROXY_PROBE], env=env, capture_output=True, text=True,
                            timeout=60, cwd="/")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_proxy_from_the_environment_is_used(base_url: str) -> None:
    """The test server answers a proxy's absolute-form requests: through it, port 1 answers."""
    proxied = _probe({"http_proxy": base_url})
    assert [r.get("status") for r in proxied] == [200, 200, 200], proxied
    assert all(r["host"] == "127.0.0.1:1" for r in proxied)
    assert all(r["ua"] and r["ua"].startswith("netlayer/") for r in proxied)
    # no_proxy exempts the host again
    direct = _probe({"http_proxy": base_url, "no_proxy": "127.0.0.1"})
    assert [r.get("kind") for r in direct] == ["not_connected"] * 3, direct
    # and without any proxy variable nothing is proxied
    assert [r.get("kind") for r in _probe({})] == ["not_connected"] * 3


def test_blocking_calls_take_lent_documents(base_url: str) -> None:
    from netlayer import _lib, _sync

    # the library lends its results: no nl_free call per request
    assert _sync.request_document is _lib.lib.nl_request_borrowed
    assert _sync.call_document is _lib.lib.nl_call_borrowed
    config = {"baseURL": base_url, "endpoints": {"movie": {"path": "movies/{id}", "response": {"keyPath": "data"}}}}
    with netlayer.Client(config) as c:
        echo = c.get("echo/x", query={"a": 1}).value
        assert echo["path"] == "/echo/x" and echo["args"] == {"a": ["1"]}
        assert c.call("movie", {"id": 2}).value["title"] == "Arrival"
        with pytest.raises(netlayer.StatusError):
            c.call("movie", {"id": 9})


def test_a_success_document_becomes_a_response_with_exactly_its_fields() -> None:
    import copy
    import dataclasses
    import json
    import pickle

    from netlayer._errors import Headers
    from netlayer._result import response_or_raise

    names = [f.name for f in dataclasses.fields(netlayer.Response)]
    document = {"ok": True, "status": 200, "headers": {"etag": "x"}, "httpVersion": "2", "value": [1],
                "fromCache": True, "attempts": 2, "timing": {"totalMs": 1.5}}
    extras = ({}, {"events": 3}, {"latin1Headers": ["etag"], "setCookies": ["a=1", "b=2"]})
    for extra in extras:
        raw = json.dumps({**document, **extra}).encode()
        response = response_or_raise(raw)
        expected = netlayer.Response.from_result(json.loads(raw))
        # every field, read in any order, is what the constructor path makes of the document
        for name in reversed(names):
            assert getattr(response, name) == getattr(expected, name), name
        assert response == expected and repr(response) == repr(expected)
        assert dataclasses.asdict(response) == dataclasses.asdict(expected)
        assert dataclasses.replace(response, status=201).status == 201
        for twin in (copy.copy(response), copy.deepcopy(response), pickle.loads(pickle.dumps(response))):
            assert twin == expected
        assert type(response.headers) is Headers and response.headers["ETag"] == "x"
        assert response.from_cache is True and response.attempts == 2 and response.http_version == "2"
        assert response.events == extra.get("events")
        assert response.latin1_headers == tuple(extra.get("latin1Headers", ()))
        assert response.set_cookies == tuple(extra.get("setCookies", ()))
        with pytest.raises(dataclasses.FrozenInstanceError):
            response.status = 201  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            response.headers = {}  # type: ignore[misc]
    bare = response_or_raise(b'{"ok":true,"status":204,"value":null,"attempts":1,"timing":{}}')
    assert bare.headers == {} and bare.from_cache is False and bare.http_version is None
    assert bare.latin1_headers == () and bare.set_cookies == ()
    bare.headers["x-mine"] = "1"  # each Response has headers of its own
    assert response_or_raise(b'{"ok":true,"status":204,"value":null,"attempts":1,"timing":{}}').headers == {}
    built = netlayer.Response(status=200, headers=Headers({"A": "1"}), from_cache=True)
    assert built.headers["a"] == "1" and built.from_cache is True and built.http_version is None


def test_integers_beyond_64_bits_stay_exact_both_ways(client: netlayer.Client) -> None:
    big = {"a": 2**64, "b": -(10**30), "c": [2**63, 2**200], "d": 1.5}
    assert client.post("reflect", body=big).value == big
    assert client.post("reflect", body=big, response={"keyPath": "c.1"}).value == 2**200
    # beyond a double too (orjson refuses those): whole documents and a value alone
    huge = {"e": 10**400, "f": [-(10**400), 1]}
    assert client.post("reflect", body=huge).value == huge
    assert client.post("reflect", body=huge, response={"keyPath": "e"}).value == 10**400
    echo = client.get("echo", query={"q": 10**25}).value
    assert echo["args"] == {"q": [str(10**25)]}


def test_header_values_that_are_not_utf8_keep_their_bytes(client: netlayer.Client) -> None:
    response = client.get("header-bytes")
    assert response.headers["x-latin1"] == "caf\xe9 \xff"
    assert response.header_bytes("X-Latin1") == b"caf\xe9 \xff"
    assert response.header_bytes("x-utf8") == "café".encode()
    assert response.header_bytes("x-mixed") == b"a, \xe9"
    assert response.header_bytes("x-ctl-latin1") == b"\x04\x88"  # escaped, then a byte that is not UTF-8
    assert response.latin1_headers == ("x-latin1", "x-mixed", "x-ctl-latin1")
    assert client.get("json").latin1_headers == ()
    assert client.get("json").header_bytes("missing") is None


def assert_header_bytes_kept(response: netlayer.Response) -> None:
    assert response.header_bytes("X-Latin1") == b"caf\xe9 \xff"
    assert response.header_bytes("x-utf8") == "café".encode()
    assert response.header_bytes("x-mixed") == b"a, \xe9"
    assert response.header_bytes("x-ctl-latin1") == b"\x04\x88"
    assert set(response.latin1_headers) == {"x-latin1", "x-mixed", "x-ctl-latin1"}


def test_header_values_that_are_not_utf8_keep_their_bytes_from_the_cache_and_a_cassette(
        base_url: str, tmp_path: Path) -> None:
    cassette = tmp_path / "bytes.json"
    config = {"baseURL": base_url, "cache": {"enabled": True},
              "cassette": {"file": str(cassette), "mode": "record"}}
    with netlayer.Client(config, timeout=10) as client:
        first = client.get("header-bytes", query={"max_age": 60}, use_cache=True)
        assert_header_bytes_kept(first)
        cached = client.get("header-bytes", query={"max_age": 60}, use_cache=True)
        assert cached.from_cache and cached.headers["age"] is not None  # the cache changed a field
        assert_header_bytes_kept(cached)
    recorded = json.loads(cassette.read_text())["exchanges"][0]["response"]
    assert recorded["latin1Headers"] == ["x-latin1", "x-mixed", "x-ctl-latin1"]
    assert recorded["headers"]["x-latin1"] == "caf\xe9 \xff"
    replay = {"baseURL": base_url, "unixSocket": str(tmp_path / "nobody.sock"),
              "cassette": {"file": str(cassette), "mode": "replay"}}
    with netlayer.Client(replay) as client:
        assert_header_bytes_kept(client.get("header-bytes", query={"max_age": 60}))

    # A listed field must be one of 'headers', and its code points bytes.
    recorded["latin1Headers"] = ["x-nothing"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"netlayerCassette": 1, "exchanges": [
        {"request": {"method": "GET", "url": base_url + "/x"}, "response": recorded}]}))
    with pytest.raises(netlayer.InvalidRequestError, match="latin1Headers"):
        netlayer.Client({"baseURL": base_url, "cassette": {"file": str(bad), "mode": "replay"}})
    recorded["latin1Headers"] = ["x-utf8"]
    recorded["headers"]["x-utf8"] = "caf\u20ac"
    bad.write_text(json.dumps({"netlayerCassette": 1, "exchanges": [
        {"request": {"method": "GET", "url": base_url + "/x"}, "response": recorded}]}))
    with pytest.raises(netlayer.InvalidRequestError, match="latin1Headers.*U\\+20AC"):
        netlayer.Client({"baseURL": base_url, "cassette": {"file": str(bad), "mode": "replay"}})


def test_any_method_token_is_sent_as_written(client: netlayer.Client) -> None:
    for method in ("PROPFIND", "PURGE", "REPORT", "M-SEARCH"):
        assert client.request(path="echo", method=method).value["method"] == method
    with pytest.raises(netlayer.InvalidRequestError, match="'method'"):
        client.request(path="echo", method="GET X")


def test_the_default_decoder_follows_the_content_type(client: netlayer.Client) -> None:
    text = client.get("text")
    assert (text.value, text.decoder) == ("hello, world", "text")
    raw = client.get("bytes/3")
    assert (raw.value, raw.decoder) == ("AAEC", "base64")
    assert client.get("json").decoder == "json"
    explicit = client.get("json", response={"decoder": "text"})
    assert isinstance(explicit.value, str) and explicit.decoder == "text"  # named, though asked for
    with pytest.raises(netlayer.ParsingError):
        client.get("text", response={"decoder": "json"})


def test_bytes_bodies_are_sent_as_they_are(client: netlayer.Client) -> None:
    payload = bytes(range(256))
    for body in (payload, bytearray(payload), memoryview(payload)):
        echoed = client.post("reflect", body=body, response={"decoder": "base64"}).value
        assert base64.b64decode(echoed) == payload
    echo = client.put("echo", body=b"\x08\x96\x01", headers={"Content-Type": "application/x-protobuf"}).value
    assert echo["headers"]["content-type"] == "application/x-protobuf" and echo["bodyLength"] == 3
    batch = client.batch([{"path": "reflect", "method": "POST", "body": b"\xff", "response": {"decoder": "base64"}}])
    assert batch[0].value == "/w=="
    with pytest.raises(TypeError, match="bytes body"):
        client.post("echo", body=b"x", body_encoding="json")


def test_auth_from_the_config_and_per_endpoint(base_url: str) -> None:
    basic = {"basic": {"user": "ann", "password": "pw"}}
    with netlayer.Client({"baseURL": base_url, "auth": basic}, timeout=10) as client:
        assert client.get("basic-auth/ann/pw").value == {"user": "ann"}
        assert "authorization" not in client.get("echo", auth={}).value["headers"]
        digest = {"digest": {"user": "dan", "password": "pw2"}}
        assert client.get("digest-auth/dan/pw2", auth=digest).value == {"user": "dan"}
        assert client.get("echo", auth={"bearer": "t0k"}).value["headers"]["authorization"] == "Bearer t0k"
        with pytest.raises(netlayer.InvalidRequestError, match="auth"):
            client.get("echo", auth={"bearer": "two words"})


def test_cookies_are_kept_by_the_client_unless_turned_off(base_url: str) -> None:
    expires = "k=v; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT"
    with netlayer.Client({"baseURL": base_url}, timeout=10) as client:
        response = client.get("set-cookie", query={"c": ["a=1; Path=/", expires]})
        assert response.set_cookies == ("a=1; Path=/", expires)
        assert sorted(client.get("echo").value["headers"]["cookie"].split("; ")) == ["a=1", "k=v"]
    with netlayer.Client({"baseURL": base_url, "cookies": False}, timeout=10) as client:
        client.get("set-cookie", query={"c": "a=1; Path=/"})
        assert "cookie" not in client.get("echo").value["headers"]


def test_the_cookie_file_is_private_and_keeps_session_cookies_only_when_asked(base_url: str, tmp_path: Path) -> None:
    for keep in (False, True):
        jar = tmp_path / f"jar-{keep}.txt"
        with netlayer.Client({"baseURL": base_url, "cookies": {"file": str(jar), "keep_session_cookies": keep}},
                             timeout=10) as client:
            client.get("set-cookie", query={"c": ["s=1; Path=/", "p=1; Path=/; Max-Age=3600"]})
            assert sorted(client.get("echo").value["headers"]["cookie"].split("; ")) == ["p=1", "s=1"]
            with pytest.raises(netlayer.InvalidRequestError, match="in use"):
                netlayer.Client({"baseURL": base_url, "cookies": {"file": str(jar)}})
        text = jar.read_text()
        assert "\tp\t1" in text and ("\ts\t1" in text) == keep
        assert jar.stat().st_mode & 0o777 == 0o600


def test_download_limit_is_its_own_and_endpoints_set_either(base_url: str, tmp_path: Path) -> None:
    target = str(tmp_path / "body.bin")
    with netlayer.Client({"baseURL": base_url}, max_response_bytes=1000) as small_memory:
        # a body written to a file is not bounded by the memory limit
        assert small_memory.get("bytes/300000", downloadTo=target).value["bytes"] == 300000
        with pytest.raises(netlayer.TooLargeError, match="maxResponseBytes"):
            small_memory.get("bytes/300000", response={"decoder": "none"})
        assert small_memory.get("bytes/300000", max_response_bytes=300000, response={"decoder": "none"}).status == 200
    with netlayer.Client({"baseURL": base_url}, max_download_bytes=1000) as small_download:
        with pytest.raises(netlayer.TooLargeError, match="maxDownloadBytes"):
            small_download.get("bytes/300000", downloadTo=target)
        assert small_download.get("bytes/300000", downloadTo=target, max_download_bytes=300000).value["bytes"] == 300000


def test_timing_breaks_the_total_down(client: netlayer.Client) -> None:
    timing = client.get("delay/20").timing
    assert set(timing) == {"totalMs", "dnsMs", "connectMs", "tlsMs", "firstByteMs", "redirectMs"}
    assert timing["firstByteMs"] >= 20 and timing["totalMs"] >= timing["firstByteMs"]
    assert client.get("redirect/1").timing["redirectMs"] > 0


def test_transport_choices_from_the_config(base_url: str) -> None:
    port = int(base_url.rstrip("/").rsplit(":", 1)[1])
    config = {"baseURL": f"http://api.example.test:{port}/", "resolve": [f"api.example.test:{port}:127.0.0.1"],
              "httpVersion": "1.1"}
    with netlayer.Client(config, timeout=10) as client:
        response = client.get("echo")
        assert response.value["headers"]["host"] == f"api.example.test:{port}"
    with pytest.raises(netlayer.InvalidRequestError, match="httpVersion"):
        netlayer.Client({"baseURL": base_url, "httpVersion": "2.0"})


def test_a_stubbed_client_answers_from_its_rules() -> None:
    rules = [{"method": "GET", "path": "movies/*", "body": {"id": 7}},
             {"path": "down", "error": {"kind": "timeout", "message": "stubbed"}}]
    with netlayer.Client({"baseURL": "http://203.0.113.9:9/", "stub": rules}) as client:
        assert client.get("movies/7").value == {"id": 7}
        with pytest.raises(netlayer.TimeoutError, match="stubbed"):
            client.get("down")
        with pytest.raises(netlayer.NotConnectedError, match="DELETE"):
            client.delete("movies/7")
