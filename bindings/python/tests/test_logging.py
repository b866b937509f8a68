"""Log events through the standard ``logging`` module (``logging.getLogger("netlayer")``)
when no ``on_log`` hook is set, and ``NETLAYER_LOG`` setting the level when the config
does not (netlayer/_logging.py)."""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, List

import pytest

import netlayer


def _records(caplog: pytest.LogCaptureFixture) -> List[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "netlayer"]


def test_events_become_logging_records(base_url: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="netlayer")
    with netlayer.Client(base_url, log={"level": "info"}) as client:
        client.get("json", params={"token": "secret-value"})
        with pytest.raises(netlayer.StatusError):
            client.get("status/500")
    records = _records(caplog)
    messages = [r.getMessage() for r in records]
    assert any(m.startswith("request GET " + base_url + "json?token=") for m in messages), messages
    assert not any("secret-value" in m for m in messages), messages  # redacted by the library
    assert any(m.startswith("response 200 in ") for m in messages), messages
    errors = [r for r in records if r.levelno == logging.ERROR]
    assert errors and "error status: HTTP 500" in errors[0].getMessage()
    event: Dict[str, Any] = errors[0].netlayer_event  # type: ignore[attr-defined]
    assert event["kind"] == "status" and event["status"] == 500


def test_netlayer_log_environment_variable(base_url: str, caplog: pytest.LogCaptureFixture,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG, logger="netlayer")
    monkeypatch.setenv("NETLAYER_LOG", "debug")
    with netlayer.Client(base_url) as client:
        client.get("json")
    messages = [r.getMessage() for r in _records(caplog)]
    assert any("curl '" + base_url + "json'" in m for m in messages), messages  # debug detail

    caplog.clear()
    with netlayer.Client(base_url, log={"level": "off"}) as client:  # the config wins
        client.get("json")
    assert _records(caplog) == []


def test_bad_netlayer_log_value_warns_and_is_ignored(base_url: str, caplog: pytest.LogCaptureFixture,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG, logger="netlayer")
    monkeypatch.setenv("NETLAYER_LOG", "verbose")
    with pytest.warns(RuntimeWarning, match="NETLAYER_LOG='verbose' ignored"):
        client = netlayer.Client(base_url)
    with client:
        client.get("json")
    assert _records(caplog) == []


def test_no_level_no_hook(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NETLAYER_LOG", raising=False)
    with netlayer.Client(base_url) as client:
        assert client._hooks.functions == {}  # blocking requests keep the hook-free path


def test_on_log_replaces_logging_and_none_restores_it(base_url: str,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="netlayer")
    seen: List[Dict[str, Any]] = []
    with netlayer.Client(base_url, log={"level": "info"}) as client:
        client.on_log(seen.append)
        client.get("json")
        assert seen and _records(caplog) == []
        client.on_log(None)
        client.get("json")
        assert any(r.getMessage().startswith("response 200") for r in _records(caplog))


def test_each_redirect_hop_logs_its_response_before_the_next_request(base_url: str) -> None:
    # As curl -v shows them: every exchange of the chain, not only the last one.
    seen: List[Dict[str, Any]] = []
    with netlayer.Client(base_url, log={"level": "info"}) as client:
        client.on_log(seen.append)
        client.get("redirect/2")
    assert [(e["event"], e.get("status") or e["url"].rsplit("/", 2)[-2:]) for e in seen] == [
        ("request", ["redirect", "2"]), ("response", 302),
        ("request", ["redirect", "1"]), ("response", 302),
        ("request", ["redirect", "0"]), ("response", 302),
        ("request", ["127.0.0.1:" + base_url.rsplit(":", 1)[1].strip("/"), "json"]), ("response", 200)]


def test_secrets_a_server_echoes_in_their_encoded_forms_stay_out_of_logs(base_url: str) -> None:
    # A secret query name that needs percent-encoding (creds[key] is sent creds%5Bkey%5D),
    # and URL user-info, which libcurl sends as Basic authentication a server may echo.
    seen: List[Dict[str, Any]] = []
    host = base_url.split("://", 1)[1]
    with netlayer.Client(f"http://ann:pw-123456@{host}", log={"level": "debug", "redactQuery": ["creds[key]"]}) as client:
        client.on_log(seen.append)
        echoed = client.get("echo", params={"creds[key]": "SECRET-VALUE-42"})
    assert echoed.value["headers"]["authorization"] == "Basic YW5uOnB3LTEyMzQ1Ng=="  # it was sent
    text = json.dumps(seen)
    for secret in ("SECRET-VALUE-42", "YW5uOnB3LTEyMzQ1Ng==", "pw-123456"):
        assert secret not in text, secret
    assert "SECRET-VALUE-42" not in echoed.url


def test_debug_response_events_show_the_lines_libcurl_sent_redacted(base_url: str) -> None:
    # As curl -v and httpie -v show a request: what went out, libcurl's own lines too.
    seen: List[Dict[str, Any]] = []
    host = base_url.split("://", 1)[1].strip("/")
    with netlayer.Client(base_url, log={"level": "debug", "redact": ["X-Key"]}, timeout=10) as client:
        client.get("set-cookie", params={"c": "jar=JAR-SECRET-7; Path=/"})
        client.on_log(seen.append)
        client.get("echo", params={"token": "TOKEN-SECRET-8", "page": 2}, auth={"bearer": "BEARER-SECRET-9"},
                   headers={"X-Key": "KEY-SECRET-6", "X-Plain": "p"})
        client.post("echo", json={"a": 1})
    responses = [event for event in seen if event["event"] == "response"]
    get, post = responses[0]["sent"], responses[1]["sent"]
    assert get[0] == "GET /echo?token=<redacted>&page=2 HTTP/1.1", get
    assert f"Host: {host}" in get and "X-Plain: p" in get, get
    for redacted in ("Authorization", "Cookie", "X-Key"):
        assert f"{redacted}: <redacted>" in get, get
    assert any(line.startswith("Accept-Encoding: ") for line in get), get
    assert post[0] == "POST /echo HTTP/1.1" and "Content-Length: 7" in post, post
    assert "Content-Type: application/json" in post, post
    text = json.dumps(seen)
    for secret in ("JAR-SECRET-7", "TOKEN-SECRET-8", "BEARER-SECRET-9", "KEY-SECRET-6"):
        assert secret not in text, secret
    # below debug, nothing is kept
    info: List[Dict[str, Any]] = []
    with netlayer.Client(base_url, log={"level": "info"}) as client:
        client.on_log(info.append)
        client.get("json")
    assert [event for event in info if "sent" in event] == []


def test_secrets_in_a_query_sent_as_written_are_redacted_as_any(base_url: str) -> None:
    # A query written in the path, or given as encoded_query, reaches the URL as written:
    # logs, the response's url and the lines sent redact its secret names all the same.
    seen: List[Dict[str, Any]] = []
    with netlayer.Client(base_url, log={"level": "debug"}, timeout=10) as client:
        client.on_log(seen.append)
        r = client.get("echo?api_key=PATH-SECRET-1&x=a,b", encoded_query="token=ENC-SECRET-2")
    assert r.value["query"] == "api_key=PATH-SECRET-1&x=a,b&token=ENC-SECRET-2"  # as sent
    assert r.url == base_url + "echo?api_key=<redacted>&x=a,b&token=<redacted>"
    text = json.dumps(seen)
    assert "PATH-SECRET-1" not in text and "ENC-SECRET-2" not in text
    assert any("api_key=<redacted>&x=a,b&token=<redacted>" in line
               for event in seen for line in event.get("sent", [])), seen
