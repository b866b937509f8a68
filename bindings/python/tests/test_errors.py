"""Failures become the Error subclass of their kind, with status, body and message."""

from __future__ import annotations

import base64
import pickle

import pytest

import netlayer

KINDS = {
    "invalid_request": netlayer.InvalidRequestError,
    "url_generation": netlayer.URLGenerationError,
    "not_connected": netlayer.NotConnectedError,
    "timeout": netlayer.TimeoutError,
    "tls": netlayer.TLSError,
    "cancelled": netlayer.CancelledError,
    "status": netlayer.StatusError,
    "no_response": netlayer.NoResponseError,
    "parsing": netlayer.ParsingError,
    "resolved": netlayer.ResolvedError,
    "too_large": netlayer.TooLargeError,
    "io": netlayer.IOError,
    "protocol": netlayer.ProtocolError,
    "generic": netlayer.GenericError,
}


def test_every_kind_has_its_subclass_of_error() -> None:
    for kind, cls in KINDS.items():
        assert issubclass(cls, netlayer.Error)
        assert cls.kind == kind
    assert not issubclass(netlayer.TimeoutError, TimeoutError)  # not the builtins
    assert not issubclass(netlayer.IOError, OSError)
    assert netlayer.TimeoutError.__name__ == "TimeoutError"


def test_404_is_status_error_with_status_and_body_and_client_still_works(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.StatusError) as caught:
        client.get("movies/99")
    error = caught.value
    assert error.kind == "status"
    assert error.status == 404
    assert netlayer._json.loads(error.body or "") == {"error": {"message": "movie 99 not found"}}
    assert "404" in error.message and str(error) == error.message
    assert error.headers["content-type"] == "application/json"
    assert client.get("json").status == 200


def test_acceptable_status_widens_success(client: netlayer.Client) -> None:
    assert client.get("status/404", acceptable_status=[[200, 299], 404]).status == 404


def test_unknown_endpoint_key_is_invalid_request_naming_the_key(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.InvalidRequestError, match="bogusKey"):
        client.request({"path": "json", "bogusKey": 1})
    with pytest.raises(netlayer.InvalidRequestError, match="method"):
        client.request({"path": "json", "method": "FE TCH"})
    assert client.get("json").status == 200


def test_host_and_framing_headers_are_refused_naming_them(base_url: str, client: netlayer.Client) -> None:
    for name, value in (("Host", "evil.example"), ("content-length", "0"), ("Transfer-Encoding", "chunked")):
        with pytest.raises(netlayer.InvalidRequestError, match=f"key 'headers': header '{name}'"):
            client.post("echo", body="GET /smuggled HTTP/1.1\r\n\r\n", body_encoding="text", headers={name: value})
        with pytest.raises(netlayer.InvalidRequestError, match=f"config key 'headers': header '{name}'"):
            netlayer.Client({"baseURL": base_url, "headers": {name: value}})
    with pytest.raises(netlayer.InvalidRequestError, match="'resolve'"):
        client.get("echo", headers={"Host": "evil.example"})
    assert client.get("json").status == 200


def test_bad_config_raises_invalid_request_naming_the_key(base_url: str) -> None:
    with pytest.raises(netlayer.InvalidRequestError, match="baseURL"):
        netlayer.Client({"baseURL": 3})
    with pytest.raises(netlayer.InvalidRequestError, match="colour"):
        netlayer.Client({"baseURL": base_url}, colour="blue")


@pytest.mark.parametrize("base, reason", [
    # WHATWG parsers (browsers, Node) read the backslash as "/" and connect to 127.0.0.1;
    # libcurl would connect to evil.invalid: an allow-list could approve one and send to the other
    ("http://127.0.0.1:80\\@evil.invalid/", "contains a backslash"),
    ("http://127.0.0.1:0/", "port 0"),
    ("http://bücher.example/", "not ASCII: write it as IDNA gives it"),
])
def test_a_base_url_parsers_read_differently_or_no_request_can_use_is_refused_when_the_client_is_made(
        base: str, reason: str) -> None:
    with pytest.raises(netlayer.URLGenerationError, match=f"baseURL .*{reason}"):
        netlayer.Client(base)
    with netlayer.Client({}) as client, pytest.raises(netlayer.URLGenerationError, match=reason):
        client.request({"path": base, "is_full_path": True})


def test_resolve_entries_are_bounded_and_cannot_remove_entries() -> None:
    entries = [f"h{i}.test:80:127.0.0.1" for i in range(1001)]
    with pytest.raises(netlayer.InvalidRequestError, match="'resolve' holds 1001 entries; at most 1000"):
        netlayer.Client({"resolve": entries})
    netlayer.Client({"resolve": entries[:1000]}).close()
    with pytest.raises(netlayer.InvalidRequestError, match="starts with '-'"):
        netlayer.Client({"resolve": ["-api.test:80:127.0.0.1"]})


def test_an_integer_beyond_64_bits_is_named_out_of_range_not_a_non_integer(base_url: str) -> None:
    with pytest.raises(netlayer.InvalidRequestError,
                       match="'maxResponseBytes' must be between 0 and 9223372036854775807, not 9223372036854775808"):
        netlayer.Client({"baseURL": base_url, "maxResponseBytes": 2**63})
    with pytest.raises(netlayer.InvalidRequestError, match="'maxResponseBytes' must be an integer, not a number"):
        netlayer.Client({"baseURL": base_url, "maxResponseBytes": 1.5})


def test_text_utf8_cannot_carry_and_integers_python_will_not_write_are_named(client: netlayer.Client) -> None:
    # not a bare UnicodeEncodeError or the digit limit's ValueError
    cases = [(lambda: client.post("echo", json={"a": "\ud800"}), "body.a holds '\\\\ud800'"),
             (lambda: client.get("x\ud800"), "path holds"),
             (lambda: netlayer.Client("http://h/\ud800"), "baseURL holds"),
             (lambda: client.post("echo", json={"n": [10**5000]}), r"body.n\[0\] is an integer of more than"),
             (lambda: client.get("echo", params={"n": 10**5000}), "query.n is an integer of more than")]
    for call, message in cases:
        with pytest.raises(netlayer.InvalidRequestError, match=message):
            call()


@pytest.mark.parametrize("config, message", [
    ({"retry": {"onStatus": "500"}}, "config key 'retry' key 'onStatus' must be an array"),
    ({"userAgent": "a\r\nb"}, "config key 'userAgent': header 'User-Agent'"),
    ({"acceptableStatus": []}, "'acceptableStatus' must list at least one code"),
    ({"log": {"redact": ["X A"]}}, "redact entry 'X A' is not a header name"),
])
def test_a_config_mistake_names_its_own_key(base_url: str, config: dict, message: str) -> None:
    with pytest.raises(netlayer.InvalidRequestError, match=message):
        netlayer.Client({"baseURL": base_url, **config})


def test_connection_refused_is_not_connected() -> None:
    with netlayer.Client({"baseURL": "http://127.0.0.1:1/"}, timeout=5) as c:
        with pytest.raises(netlayer.NotConnectedError) as caught:
            c.get("json")
    assert caught.value.status is None


def test_slow_response_is_timeout(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.TimeoutError):
        client.get("delay/2000", timeout=0.2)
    assert client.get("json").status == 200


def test_path_changing_host_is_url_generation(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.URLGenerationError):
        client.get("//evil.example/x")


def test_body_that_is_not_json_is_parsing_error_with_body(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.ParsingError) as caught:
        client.get("notjson")
    assert caught.value.body == "this is not json"


def test_missing_key_path_is_parsing_error_naming_it(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.ParsingError, match="nothere"):
        client.get("json", response={"keyPath": "data.nothere"})


def test_empty_body_is_no_response_where_json_was_asked_for(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.NoResponseError):
        client.get("empty", response={"decoder": "json"})
    assert client.get("empty").value is None  # the default decoder: an empty body is null
    assert client.get("status/204").value is None


def test_body_over_the_limit_is_too_large(base_url: str) -> None:
    with netlayer.Client({"baseURL": base_url, "maxResponseBytes": 100}) as c:
        with pytest.raises(netlayer.TooLargeError):
            c.get("bytes/1000", response={"decoder": "base64"})


def test_a_request_head_over_libcurls_buffer_is_invalid_request_not_too_large_a_response(
        client: netlayer.Client) -> None:
    # libcurl builds the request line and header fields in 1 MiB and reports more as
    # memory running out, as it does response headers over its limit.
    for call in (lambda: client.get("json", headers={"X-Big": "a" * 1_100_000}),
                 lambda: client.get("json", params={"q": "a" * 1_100_000})):
        with pytest.raises(netlayer.InvalidRequestError, match="URL and header fields are 110.... bytes"):
            call()
    # Past 8 MB libcurl refuses the URL itself (a bad argument to an option), whichever
    # key made it long: named the same way, not as an option libcurl rejected.
    for call in (lambda: client.get("x" * 9_000_000),
                 lambda: client.get("json", params={"q": "a" * 9_000_000}),
                 lambda: client.get("json", encoded_query="a" * 9_000_000)):
        with pytest.raises(netlayer.InvalidRequestError, match="URL and header fields are 90..... bytes"):
            call()
    # A WebSocket's handshake, written by the library, is held to the same bound.
    for n in (1_100_000, 9_000_000):
        with pytest.raises(netlayer.InvalidRequestError, match="URL and header fields are"):
            client.websocket("json", params={"q": "a" * n})
    assert client.get("json", headers={"X-Small": "a" * 1000}).status_code == 200


def test_errors_pickle_with_their_fields(client: netlayer.Client) -> None:
    with pytest.raises(netlayer.StatusError) as caught:
        client.get("status/503")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert type(copy) is netlayer.StatusError
    assert (copy.kind, copy.status, copy.message) == ("status", 503, caught.value.message)


def test_unserialisable_document_raises_type_error(client: netlayer.Client) -> None:
    with pytest.raises(TypeError):
        client.post("echo", body={"when": object()})


def test_a_failure_carries_at_most_64_kib_of_a_large_body(client: netlayer.Client) -> None:
    body = "a" * 65535 + "é" + "b" * 40000  # "é" straddles byte 65536
    with pytest.raises(netlayer.StatusError) as caught:
        client.post("reflect", body=body, body_encoding="text", acceptable_status=[[201, 201]])
    error = caught.value
    assert error.body == "a" * 65535  # cut before the sequence that would not fit
    assert error.body_truncated is True
    assert error.body_bytes == len(body.encode("utf-8"))
    with pytest.raises(netlayer.StatusError) as small:
        client.get("status/404")
    assert small.value.body_truncated is False and small.value.body_bytes is None
    assert client.get("json").status == 200


def _status_body(client: netlayer.Client, content_type: str, data: bytes, repeat: int = 1) -> netlayer.StatusError:
    with pytest.raises(netlayer.StatusError) as caught:
        client.get("typed", params={"type": content_type, "body64": base64.b64encode(data).decode(),
                                    "status": "404", "repeat": str(repeat)})
    return caught.value


def test_an_error_body_is_read_in_its_charset_as_a_successful_one_is(client: netlayer.Client) -> None:
    # requests' response.text reads an error page in its charset too
    assert _status_body(client, "text/html; charset=ISO-8859-1", "café: non trouvé".encode("latin-1")).body \
        == "café: non trouvé"
    assert _status_body(client, "text/plain; charset=shift_jis", "見つかりません".encode("shift_jis")).body \
        == "見つかりません"
    # a byte order mark names the encoding over the label, and is not part of the text
    assert _status_body(client, "text/plain", b"\xff\xfe" + "héllo".encode("utf-16-le")).body == "héllo"
    # bytes that are not valid in their charset, or no charset: UTF-8, U+FFFD for the rest
    assert _status_body(client, "text/plain; charset=utf-8", b"caf\xe9").body == "caf\ufffd"
    assert _status_body(client, "application/octet-stream", b"caf\xe9").body == "caf\ufffd"
    # cut at 64 KiB on a character of the charset: 65,537 bytes of UTF-16BE "é" become 32,768
    error = _status_body(client, "text/plain; charset=utf-16be", "é".encode("utf-16-be"), repeat=32769)
    assert error.body == "é" * 32768 and error.body_truncated is True and error.body_bytes == 65538
    # 見 (two bytes) straddles byte 65,536: the text ends before it
    error = _status_body(client, "text/plain; charset=shift_jis", "見a".encode("shift_jis"), repeat=30000)
    assert error.body == "見a" * 21845 and error.body_truncated is True


def test_a_resolved_message_echoing_the_requests_secrets_keeps_them_out_of_errors_and_logs() -> None:
    # errorResolver's messageKeyPath reads the server's body, which may echo what the
    # request sent: the bearer token, a cookie, a basic password.
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Echoing(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            said = f"{self.headers.get('Authorization', '')} {self.headers.get('Cookie', '')}"
            body = json.dumps({"error": {"message": "rejected: " + said}}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echoing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    events: list = []
    try:
        with netlayer.Client({"baseURL": f"http://127.0.0.1:{server.server_port}/",
                              "auth": {"bearer": "sk-live-CANARY12345"}, "log": {"level": "error"},
                              "errorResolver": [{"status": [401], "code": "unauthorized",
                                                 "messageKeyPath": "error.message"}]}) as client:
            client.on_log(events.append)
            with pytest.raises(netlayer.ResolvedError) as raised:
                client.get("me", cookies={"session": "COOKIE-CANARY-777"})
    finally:
        server.shutdown()
    message = str(raised.value)
    assert "rejected:" in message and "<redacted>" in message
    for canary in ("sk-live-CANARY12345", "COOKIE-CANARY-777"):
        assert canary not in message and canary not in json.dumps(events)
