"""The names requests and httpx users type: a base-URL string, ``params``/``json``/
``data``/``files``/``cookies``/``auth=(u, p)``, snake_case document keys at every level,
Response's ``text``/``content``/``json()``/``raise_for_status()``/``http_version``,
case-insensitive headers, and ``aget``/``apost``/... (netlayer/_documents.py maps
them, in one place)."""

from __future__ import annotations

import asyncio
import base64
import decimal
import io
import pathlib
from typing import Any, List

import json

import pytest

import netlayer


def test_client_takes_a_base_url_string(base_url: str) -> None:
    with netlayer.Client(base_url) as client:
        assert client.get("json").value["id"] == 1
    with netlayer.Client(base_url, timeout=5, follow_redirects=False) as client:
        with pytest.raises(netlayer.StatusError) as raised:
            client.get("redirect/1")
        assert raised.value.status == 302


def test_client_takes_keyword_config_only(base_url: str) -> None:
    with netlayer.Client(base_url=base_url, max_redirects=0, connect_timeout=5) as client:
        assert client.get("json").status == 200


def test_base_url_given_twice_is_a_clear_error(base_url: str) -> None:
    with pytest.raises(TypeError, match="base URL is given twice"):
        netlayer.Client(base_url, base_url=base_url)
    with pytest.raises(TypeError, match="'baseURL' given twice"):
        netlayer.Client({"baseURL": base_url, "base_url": base_url})
    with pytest.raises(TypeError, match="base URL string or a config document"):
        netlayer.Client(42)  # type: ignore[arg-type]


def test_params_is_the_query(client: netlayer.Client) -> None:
    echo = client.get("echo", params={"page": 2, "q": "a b"}).value
    assert echo["args"] == {"page": ["2"], "q": ["a b"]}
    assert client.get("echo", query={"page": 3}).value["args"] == {"page": ["3"]}
    big = 2**64 + 1  # beyond orjson: the exact encoder sends it
    assert client.get("echo", params={"n": big}).value["args"] == {"n": [str(big)]}
    assert client.get("echo", params=[("a", 1)]).value["args"] == {"a": ["1"]}  # pairs, as requests takes
    with pytest.raises(TypeError, match="'params' and 'query' both given"):
        client.get("echo", params={"a": 1}, query={"b": 2})


def test_params_on_the_client_is_its_query(base_url: str) -> None:
    with netlayer.Client(base_url, params={"key": "k1"}) as client:
        assert client.get("echo").value["args"] == {"key": ["k1"]}


def test_json_data_and_files(client: netlayer.Client, tmp_path: pathlib.Path) -> None:
    echo = client.post("echo", json={"title": "Dune"}).value
    assert echo["headers"]["content-type"] == "application/json"
    assert echo["body"] == '{"title":"Dune"}'

    echo = client.post("echo", data={"name": "Dune", "year": 2021}).value
    assert echo["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert echo["body"] == "name=Dune&year=2021"
    echo = client.post("echo", data=[("tag", "a"), ("tag", "b")]).value
    assert echo["body"] == "tag=a&tag=b"
    assert client.put("echo", data="plain").value["body"] == "plain"
    assert client.put("echo", data=b"\x00\x01").value["bodyLength"] == 2

    report = tmp_path / "report.csv"
    report.write_text("a,b\n1,2\n")
    with open(report, "rb") as opened:
        echo = client.post("echo", data={"kind": "csv"}, files={
            "path": report, "opened": opened, "raw": b"\xffbytes",
            "named": ("notes.txt", "some text", "text/plain"),
            "memory": io.BytesIO(b"in memory")}).value
    assert echo["headers"]["content-type"].startswith("multipart/form-data; boundary=")
    body = echo["body"]
    assert 'name="kind"\r\n\r\ncsv' in body
    assert 'name="path"; filename="report.csv"' in body and "a,b\n1,2\n" in body
    assert 'name="opened"; filename="report.csv"' in body
    assert 'name="named"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\nsome text' in body
    assert 'name="memory"; filename="memory"' in body and "in memory" in body


@pytest.mark.parametrize("keys, message", [
    ({"json": 1, "body": 2}, "'json' and 'body' both given"),
    ({"json": 1, "data": {}}, "'json' and 'data' both given"),
    ({"files": {"f": b""}, "multipart": []}, "'files' and 'multipart' both given"),
    ({"json": 1, "body_encoding": "xml"}, "'json' and 'body_encoding' both given"),
    ({"json": b"raw"}, "json= takes a JSON value"),
    ({"files": {"f": 3}}, r"files\['f'\]: expected a path"),
    ({"auth": "user:password"}, r"auth= takes \(user, password\)"),
    ({"follow_redirects": False}, "follow_redirects is a client setting"),
    ({"upload_from": "a", "uploadFrom": "b"}, "'uploadFrom' given twice"),
    ({"retry": {"max_attempts": 2, "maxAttempts": 3}}, "'retry.maxAttempts' given twice"),
    # what cannot be a form, parts, cookies or JSON is named, not a bare TypeError of
    # iteration or of the json module
    ({"data": 5}, "data= takes a mapping or \\(name, value\\) pairs for a form, or str, bytes, .* not int"),
    ({"files": 5}, "files= takes a mapping or \\(name, value\\) pairs, not int"),
    ({"files": [b"x"]}, "files= takes .*; b'x' is not a \\(name, value\\) pair"),
    ({"cookies": 5}, "cookies= takes a mapping or \\(name, value\\) pairs, not int"),
    ({"files": {"f": b"x"}, "data": "text"}, "data= takes .* not str"),
    ({"params": {"page": decimal.Decimal("1.5")}}, "query.page is Decimal Decimal\\('1.5'\\), which JSON cannot carry"),
    ({"json": {"a": [1, {"b": object()}]}}, "body.a\\[1\\].b is object .*, which JSON cannot carry"),
    ({"json": {1j: 2}}, "body has the key 1j \\(complex\\); a JSON object's keys are text"),
    ({"data": {"f": object()}}, "body.f is object"),
])
def test_conflicting_or_wrong_keywords_are_clear_errors(client: netlayer.Client, keys: Any,
                                                        message: str) -> None:
    with pytest.raises(TypeError, match=message):
        client.post("echo", **keys)


def test_auth_tuple_bearer_and_cookies(client: netlayer.Client, base_url: str) -> None:
    assert client.get("basic-auth/ann/pw", auth=("ann", "pw")).value == {"user": "ann"}
    # bytes as requests takes them (UTF-8 here; other bytes are refused, naming auth=)
    assert client.get("basic-auth/ann/pw", auth=(b"ann", b"pw")).value == {"user": "ann"}
    with pytest.raises(ValueError, match="auth="):
        client.get("basic-auth/ann/pw", auth=(b"ann", b"\xff"))
    with netlayer.Client(base_url, auth=("ann", "pw")) as basic:
        assert basic.get("basic-auth/ann/pw").value == {"user": "ann"}
    echo = client.get("echo", auth={"bearer": "t1"}).value
    assert echo["headers"]["authorization"] == "Bearer t1"
    echo = client.get("echo", cookies={"session": "s1", "theme": "dark"}).value
    assert echo["headers"]["cookie"] == "session=s1; theme=dark"
    echo = client.get("echo", headers={"Cookie": "a=1"}, cookies={"b": "2"}).value
    assert echo["headers"]["cookie"] == "a=1; b=2"


def test_request_cookies_join_the_jars_in_one_line_and_cannot_inject_another(base_url: str) -> None:
    with netlayer.Client(base_url) as client:
        client.get("set-cookie", params={"c": "jar=1; Path=/"})
        lines = client.get("echo", cookies={"extra": "x"}).value["headerLines"]
        cookies = [value for name, value in lines if name.lower() == "cookie"]
        assert len(cookies) == 1 and "jar=1" in cookies[0] and "extra=x" in cookies[0], cookies
        for bad in ({"a": "x; admin=1"}, {"a": "x, admin=1"}, {"a; admin": "1"}, {"a": "x\r\nX-Evil: 1"}):
            with pytest.raises(netlayer.InvalidRequestError, match="cookies"):
                client.get("echo", cookies=bad)
        assert client.get("echo").ok  # and the client goes on


def test_snake_case_keys_at_every_level(base_url: str, tmp_path: pathlib.Path) -> None:
    source = tmp_path / "up.bin"
    source.write_bytes(b"x" * 10)
    target = tmp_path / "down.json"
    config = {"base_url": base_url, "max_concurrent": 4, "cache": {"enabled": True, "max_entries": 8},
              "retry": {"max_attempts": 3, "backoff": 0},
              "log": {"level": "off", "redact_query": ["sig"]},
              "endpoints": {"movie": {"path": "movies/{id}", "response": {"key_path": "data.title"}},
                            # query keys are the caller's data: max_age stays as written
                            "cached": {"path": "cache/{key}", "query": {"max_age": 60}, "use_cache": True}}}
    with netlayer.Client(config, user_agent="habits/1") as client:
        assert client.call("movie", {"id": 1}).value == "Dune"
        assert not client.call("cached", {"key": "habits"}).from_cache
        assert client.call("cached", {"key": "habits"}).from_cache
        assert client.put("echo", upload_from=str(source)).value["bodyLength"] == 10
        assert client.get("json", download_to=str(target)).value["path"] == str(target)
        assert target.read_bytes().startswith(b"{")
        flaky = client.get("flaky/habits", params={"fails": 2}, retry={"max_attempts": 3, "backoff": 0})
        assert flaky.attempts == 3
        assert client.get("echo").value["headers"]["user-agent"] == "habits/1"
        assert client.request({"path": "json", "response": {"key_path": "data.nested.value"}}).value == 42
        assert client.request(path="movies/2", use_cache=True).value["data"]["title"] == "Arrival"
        assert client.batch([{"path": "json", "response": {"key_path": "id"}}])[0].value == 1  # type: ignore[union-attr]
        parts = client.post("echo", multipart=[{"name": "n", "text": "t", "content_type": "text/x"}])
        assert "Content-Type: text/x" in parts.value["body"]


def test_documents_without_snake_case_are_sent_as_they_are(client: netlayer.Client) -> None:
    from netlayer._documents import normalise_endpoint
    document = {"path": "json", "response": {"keyPath": "id"}, "retry": {"maxAttempts": 1}}
    assert normalise_endpoint(document) is document


def test_response_requests_habits(client: netlayer.Client) -> None:
    r = client.get("json")
    assert r.status_code == r.status == 200
    assert r.headers["Content-Type"] == r.headers["content-type"] == "application/json"
    assert "CONTENT-TYPE" in r.headers and r.headers.get("Content-Length") is not None
    assert r.json() == r.value and r.json()["title"] == "Dune"
    assert r.raise_for_status() is r
    assert r.http_version == "1.1"
    assert r.text.startswith('{"id":1') and r.content == r.text.encode()

    text = client.get("text")
    assert text.decoder == "text" and text.content == text.text.encode("utf-8")
    typed = client.get("typed", params={"type": "text/plain", "body": '{"a": 1}'})
    assert typed.json() == {"a": 1}
    raw = client.get("bytes/16")
    assert raw.decoder == "base64" and raw.content == base64.b64decode(raw.value) and len(raw.content) == 16
    assert client.get("empty").text == ""


def test_raise_for_status_with_a_wider_acceptable_status(client: netlayer.Client) -> None:
    r = client.get("status/404", acceptable_status=[[200, 599]])
    assert r.status_code == 404
    with pytest.raises(netlayer.StatusError) as raised:
        r.raise_for_status()
    assert raised.value.status == 404 and "404 Not Found" in raised.value.message
    assert "status 404" in (raised.value.body or "")
    # what the response knows of its exchange, as a failure's error carries it
    assert raised.value.attempts == r.attempts == 1 and raised.value.timing == r.timing


def test_error_headers_are_case_insensitive(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.StatusError) as raised:
        client.get("status/404")
    assert raised.value.headers["Content-Type"] == "application/json"


def test_async_verbs(base_url: str) -> None:
    async def main() -> Any:
        async with netlayer.Client(base_url) as client:
            return await asyncio.gather(
                client.aget("echo", params={"a": 1}), client.apost("echo", json={"b": 2}),
                client.aput("echo", data="c"), client.apatch("echo", json=[3]),
                client.adelete("echo"), client.ahead("json"))

    got, posted, put, patched, deleted, head = asyncio.run(main())
    assert got.value["method"] == "GET" and got.value["args"] == {"a": ["1"]}
    assert posted.value["method"] == "POST" and posted.value["body"] == '{"b":2}'
    assert put.value["method"] == "PUT" and put.value["body"] == "c"
    assert patched.value["method"] == "PATCH" and patched.value["body"] == "[3]"
    assert deleted.value["method"] == "DELETE"
    assert head.status == 200 and head.value is None


def test_every_documented_key_is_known_to_the_mapping() -> None:
    """The snake_case spellings come from _documents' tables: each key of the Config and
    Endpoint tables of docs/documents.md must be in them (and in the TypedDicts)."""
    import re
    import typing
    from netlayer import _documents, _types

    docs = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "documents.md").read_text()

    def table_keys(heading: str) -> List[str]:
        section = docs.split(heading, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
        return re.findall(r"^\| `(\w+)` \|", section, flags=re.M)

    config_keys = table_keys("## Config (`nl_client_new`)")
    endpoint_keys = table_keys("## Endpoint (`nl_request`")
    assert len(config_keys) > 25 and len(endpoint_keys) > 20
    typed_config = typing.get_type_hints(_types.ConfigKeys)
    typed_endpoint = typing.get_type_hints(_types.RequestKeys)
    for key in config_keys:
        assert key in _documents.CONFIG.keys and key in typed_config, key
    for key in endpoint_keys:
        assert key in _documents.ENDPOINT.keys and key in typed_endpoint, key
    for snake in _documents.CONFIG.snake:
        assert snake in typed_config, snake
    for snake in _documents.ENDPOINT.snake:
        assert snake in typed_endpoint, snake


@pytest.mark.parametrize("backend", ["orjson", "json"])
def test_nan_and_infinities_are_refused_naming_where_they_are(base_url: str, backend: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # orjson writes NaN as null, which a document reads as "the default": a timeout of
    # NaN would silently be 30 s and a JSON body's NaN would arrive as null. requests
    # refuses them in json= too.
    from netlayer import _json
    if backend == "json":
        monkeypatch.setattr(_json, "dumps_fast", _json._encode_exactly)
    with netlayer.Client(base_url) as client:
        cases = [({"timeout": float("nan")}, "timeout is nan"),
                 ({"params": {"page": float("inf")}}, "query.page is inf"),
                 ({"json": {"a": [1, float("-inf")]}}, "body.a[1] is -inf")]
        for keywords, words in cases:
            with pytest.raises(netlayer.InvalidRequestError, match=words.replace("[", r"\[").replace("]", r"\]")):
                client.post("echo", **keywords)
        # None is still "the default", and JSON's null in a body.
        echoed = client.post("echo", json={"a": None}, timeout=None).json()
        assert echoed["body"] == "{\"a\":null}", echoed


def test_json_after_a_utf8_byte_order_mark_is_read(base_url: str) -> None:
    # RFC 8259 section 8.1 lets a parser ignore the mark, and the Fetch standard's
    # json() does; servers on Windows send it.
    import json
    import urllib.request
    import uuid
    scenario = "bom-" + uuid.uuid4().hex[:8]
    setup = json.dumps({"": [{"body": "\ufeff{\"a\": [1, \"x\"]}"}]}).encode()
    urllib.request.urlopen(urllib.request.Request(base_url + "scenario-setup/" + scenario, data=setup,
                                                  method="POST"), timeout=10).read()
    with netlayer.Client(base_url) as client:
        response = client.get("scenario/" + scenario)
        assert response.value == {"a": [1, "x"]} and response.json() == {"a": [1, "x"]}


def test_only_one_byte_order_mark_is_skipped_however_many_a_server_sends(base_url: str) -> None:
    # A second mark is U+FEFF, which JSON does not allow; a body of 100,000 of them
    # (300 KB) once cost a stack frame and a copy of the rest each, and crashed.
    import json
    import time
    import urllib.request
    import uuid
    for marks in (2, 100_000):
        scenario = "boms-" + uuid.uuid4().hex[:8]
        setup = json.dumps({"": [{"body": "\ufeff" * marks + "[1]"}]}).encode()
        urllib.request.urlopen(urllib.request.Request(base_url + "scenario-setup/" + scenario, data=setup,
                                                      method="POST"), timeout=10).read()
        started = time.monotonic()
        with netlayer.Client(base_url) as client:
            with pytest.raises(netlayer.ParsingError) as caught:
                client.get("scenario/" + scenario)
            assert caught.value.status == 200
        assert time.monotonic() - started < 5


def test_an_integer_past_pythons_digit_limit_is_a_parsing_error_with_the_response(base_url: str) -> None:
    # The json module refuses to make an int of more than 4,300 digits (a guard against
    # quadratic conversions); the caller gets a netlayer error with the status and
    # headers, as requests' .json() would fail, not a bare ValueError.
    import json
    import sys
    import urllib.request
    import uuid
    scenario = "digits-" + uuid.uuid4().hex[:8]
    digits = sys.get_int_max_str_digits() + 1 if hasattr(sys, "get_int_max_str_digits") else 4301
    setup = json.dumps({"": [{"headers": [["Content-Type", "application/json"], ["X-Kept", "yes"]],
                              "body": "[" + "7" * digits + "]"}]}).encode()
    urllib.request.urlopen(urllib.request.Request(base_url + "scenario-setup/" + scenario, data=setup,
                                                  method="POST"), timeout=10).read()
    with netlayer.Client(base_url) as client:
        with pytest.raises(netlayer.ParsingError, match="integer of more than") as caught:
            client.get("scenario/" + scenario)
    assert caught.value.status == 200 and caught.value.headers is not None
    assert caught.value.headers.get("x-kept") == "yes"
    # In a batch, only that result is the error; asynchronously, the same error.
    with netlayer.Client(base_url) as client:
        failed, fine = client.batch([{"path": "scenario/" + scenario}, {"path": "json"}])
        assert isinstance(failed, netlayer.ParsingError) and failed.status == 200, failed
        assert isinstance(fine, netlayer.Response) and fine.status == 200

        async def fetch() -> None:
            with pytest.raises(netlayer.ParsingError, match="integer of more than"):
                await client.aget("scenario/" + scenario)

        import asyncio
        asyncio.run(fetch())


def test_an_endpoint_that_names_its_decoder_reads_as_one_that_chose_it(client: netlayer.Client) -> None:
    # .content, .text and .json() once looked only at what the auto decoder chose:
    # base64 text came back as .content, and .json() of a text body was that text.
    body = client.get("typed", params={"type": "application/json", "body": '{"a": 1}'},
                      response={"decoder": "text"})
    assert body.decoder == "text" and body.text == '{"a": 1}' and body.json() == {"a": 1}
    assert body.content == b'{"a": 1}'
    raw = client.get("bytes/4", response={"decoder": "base64"})
    assert raw.decoder == "base64" and len(raw.content) == 4 and isinstance(raw.content, bytes)
    empty = client.get("json", response={"decoder": "none"})
    assert empty.decoder == "none" and empty.content == b"" and empty.text == ""


def test_text_after_a_byte_order_mark_is_read_in_the_encoding_the_mark_names(client: netlayer.Client) -> None:
    # The Encoding Standard's decode (browsers, requests for UTF-16): the mark wins over
    # the label and is not part of the text.
    import base64
    for mark, encoded, label in ((b"\xfe\xff", "hi".encode("utf-16-be"), "utf-16"),
                                 (b"\xff\xfe", "hi".encode("utf-16-le"), "utf-16be"),
                                 (b"\xef\xbb\xbf", "hé".encode(), "latin1")):
        body = base64.b64encode(mark + encoded).decode()
        response = client.get("typed", params={"type": f"text/plain; charset={label}", "body64": body})
        assert response.text == ("hi" if mark != b"\xef\xbb\xbf" else "hé"), (label, response.text)


def test_response_headers_are_converted_once_and_keep_changes(client: netlayer.Client) -> None:
    response = client.get("json")
    assert response.headers is response.headers and response.history is response.history
    response.headers["X-Added"] = "1"
    assert response.headers["x-added"] == "1"


def test_a_nan_in_a_dataclass_is_refused_like_one_in_a_dict(client: netlayer.Client) -> None:
    import dataclasses
    import math

    @dataclasses.dataclass
    class Reading:
        value: float

    with pytest.raises(netlayer.InvalidRequestError, match=r"body\.value is nan"):
        client.post("echo", json=Reading(math.nan))
    assert json.loads(client.post("echo", json=Reading(1.5)).value["body"]) == {"value": 1.5}


def test_cookie_values_are_text_none_leaves_one_out_and_a_bool_is_refused(client: netlayer.Client) -> None:
    sent = client.get("echo", cookies={"a": None, "b": b"x", "c": 1}).value["headers"]["cookie"]
    assert sent == "b=x; c=1", sent
    with pytest.raises(netlayer.InvalidRequestError, match=r"cookies\['a'\]: bool"):
        client.get("echo", cookies={"a": True})


def test_bytes_in_headers_and_params_are_their_text_as_requests_takes_them(client: netlayer.Client) -> None:
    echoed = client.get("echo", headers={b"X-A": b"caf\xc3\xa9", "X-B": "2"}, params={b"q": b"1", "r": [b"2", "3"]}).value
    sent = {name.lower(): value for name, value in echoed["headerLines"]}
    assert sent["x-a"] == "café".encode().decode("latin-1") and sent["x-b"] == "2"  # the server reads ISO-8859-1
    assert echoed["query"] == "q=1&r=2&r=3"
    with pytest.raises(netlayer.InvalidRequestError, match=r"headers\['X-A'\]: bytes that are not UTF-8"):
        client.get("echo", headers={"X-A": b"\xff"})
    with pytest.raises(netlayer.InvalidRequestError, match=r"params\['q'\]"):
        client.get("echo", params={"q": b"\xff"})
    with pytest.raises(netlayer.InvalidRequestError, match=r"headers\['X'\]: .*lone surrogate"):
        client.get("echo", headers={"X": "\udc80"})
    with pytest.raises(netlayer.InvalidRequestError, match=r"params\['\\udc80'\]|lone surrogate"):
        client.get("echo", params={"q": "a\udc80"})


def test_paths_and_a_none_cookies_are_taken_as_requests_and_pathlib_users_expect(client: netlayer.Client,
                                                                                tmp_path: pathlib.Path) -> None:
    target = tmp_path / "got.json"
    response = client.get("json", download_to=target, cookies=None)
    assert response.status == 200 and target.read_bytes()
    source = tmp_path / "up.bin"
    source.write_bytes(b"uploaded")
    assert client.put("echo", upload_from=source).value["body"] == "uploaded"


def test_what_is_not_an_endpoint_or_a_name_is_named_as_such(client: netlayer.Client) -> None:
    with pytest.raises(TypeError, match="an endpoint document is a mapping"):
        client.request("json")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an endpoint document is a mapping"):
        client.batch(["json"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="an endpoint name is a str"):
        client.call(None)  # type: ignore[arg-type]
    # A NUL would end the C string: "e\0junk" would call the endpoint "e".
    with pytest.raises(netlayer.InvalidRequestError, match="holds a NUL"):
        client.call("e\x00junk")


def test_a_keyword_given_as_none_is_not_given_as_in_requests(client: netlayer.Client) -> None:
    # A wrapper's defaults pass json=None, data=None, params=None through.
    def api(method: str, path: str, json: Any = None, data: Any = None, params: Any = None) -> netlayer.Response:
        return client.request(method=method, path=path, json=json, data=data, params=params)

    assert api("GET", "echo").value["args"] == {}
    assert api("POST", "echo", json={"a": 1}).value["body"] == '{"a":1}'
    assert client.get("echo", params=None, query={"a": 1}).value["args"] == {"a": ["1"]}
    assert client.get("echo", on_progress=None, timeout=None).status == 200


@pytest.mark.parametrize("path", [None, 5, b"echo"])
def test_a_path_that_is_not_text_is_a_type_error_not_the_base_url(client: netlayer.Client, path: Any) -> None:
    with pytest.raises(TypeError, match="the path is a str"):
        client.get(path)
    with pytest.raises(TypeError, match="the path is a str"):
        client.request(path=path, method="DELETE")


def test_a_query_written_in_the_path_joins_params_as_in_requests(client: netlayer.Client) -> None:
    r = client.get("echo?x=1&e=#fragment", params={"y": 2, "x": 3})
    assert r.value["path"] == "/echo" and r.value["args"] == {"x": ["1", "3"], "e": [""], "y": ["2"]}
    assert client.request(path="echo?z=1", method="GET").value["args"] == {"z": ["1"]}
    assert client.get("echo#only-a-fragment").value["path"] == "/echo"


def test_params_as_pairs_and_data_as_a_list_of_bytes_as_in_requests(client: netlayer.Client) -> None:
    assert client.get("echo", params=[("a", 1), ("b", 2), ("a", 3)]).value["args"] == {"a": ["1", "3"], "b": ["2"]}
    with pytest.raises(TypeError, match="params= takes a mapping or"):
        client.get("echo", params="a=1")
    assert client.post("echo", data=[b"ab", b"cd"]).value["body"] == "abcd"
    assert client.post("echo", data=(b"ab", bytearray(b"cd"))).value["body"] == "abcd"


def test_multipart_fields_are_checked_as_form_fields_are(client: netlayer.Client) -> None:
    body = client.post("echo", data={"t": True, "n": 2}, files={"f": b"x"}).value["body"]
    assert 'name="t"\r\n\r\ntrue\r\n' in body and 'name="n"\r\n\r\n2\r\n' in body
    for value in ({"x": 1}, object(), float("nan")):
        with pytest.raises(netlayer.InvalidRequestError, match=r"data\['d'\] must be a string, a number"):
            client.post("echo", data={"d": value}, files={"f": b"x"})


def test_a_stream_refuses_on_progress_clearly(client: netlayer.Client) -> None:
    with pytest.raises(TypeError, match="a stream reports its body events, not progress"):
        client.stream("events", on_progress=print)  # type: ignore[call-arg]


def test_a_response_built_by_hand_reads_as_one_the_library_made() -> None:
    built = netlayer.Response(201, headers={"Content-Type": "application/json"})
    assert built.headers["content-type"] == "application/json" and bool(built)
    assert not netlayer.Response(404) and not netlayer.Response(503)


def test_a_lines_stream_is_decoded_from_the_charset_its_content_type_names(client: netlayer.Client) -> None:
    body = "café\nnaïve\n".encode("latin-1")
    params = {"type": "text/plain; charset=iso-8859-1", "body64": base64.b64encode(body).decode()}
    lines = [event["line"] for event in client.stream("typed", stream="lines", params=params)]
    assert lines == ["café", "naïve"]
    utf8 = {"type": "text/plain", "body64": base64.b64encode("café\n".encode()).decode()}
    assert [event["line"] for event in client.stream("typed", stream="lines", params=utf8)] == ["café"]
