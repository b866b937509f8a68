"""Record and replay: a recording client writes a cassette without secrets when it is
closed, and a replay client answers from it without the network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import netlayer

TOKEN = "canary-token-8d41f2"
API_KEY = "canary-key-03be7a"


def test_a_recording_replays_without_the_network(base_url: str, tmp_path: Path) -> None:
    cassette = tmp_path / "movies.json"
    config = {"baseURL": base_url, "auth": {"bearer": TOKEN},
              "cassette": {"file": str(cassette), "mode": "record"}}
    with netlayer.Client(config, timeout=10) as client:
        recorded = client.get("echo/search", query={"api_key": API_KEY, "q": "dune"})
        movie = client.get("movies/1").value
        with pytest.raises(netlayer.StatusError):
            client.get("status/500")
    assert cassette.exists()  # written when the client closed
    text = cassette.read_text()
    assert "canary" not in text and "REDACTED" in text
    exchanges = json.loads(text)["exchanges"]
    assert [e["request"]["url"].split("/", 3)[3] for e in exchanges] == [
        "echo/search?api_key=REDACTED&q=dune", "movies/1", "status/500"]

    # Every connection would go to a socket that does not exist: only the cassette answers.
    replay = {"baseURL": base_url, "unixSocket": str(tmp_path / "nobody.sock"),
              "cassette": {"file": str(cassette), "mode": "replay"}}
    with netlayer.Client(replay) as client:
        echo = client.get("echo/search", query={"api_key": "any other key", "q": "dune"})
        assert echo.status == recorded.status
        assert echo.value["headers"]["authorization"] == "REDACTED"
        assert echo.value["args"]["q"] == ["dune"]
        assert client.get("movies/1").value == movie
        with pytest.raises(netlayer.StatusError) as failure:
            client.get("status/500")
        assert failure.value.status == 500
        with pytest.raises(netlayer.NotConnectedError, match="GET .*/movies/2"):
            client.get("movies/2")


def test_bad_cassette_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(netlayer.InvalidRequestError, match="cassette"):
        netlayer.Client({"cassette": {"file": str(tmp_path / "missing.json"), "mode": "replay"}})
    broken = tmp_path / "broken.json"
    broken.write_text('{"netlayerCassette": 1, "exchanges": [{"request": {}}]}')
    with pytest.raises(netlayer.InvalidRequestError, match="exchange 0"):
        netlayer.Client({"cassette": {"file": str(broken), "mode": "replay"}})
    with pytest.raises(netlayer.InvalidRequestError, match="mode"):
        netlayer.Client({"cassette": {"file": str(broken), "mode": "rewind"}})


def test_multipart_passwords_and_urls_in_response_headers_stay_out_of_logs_and_cassettes(base_url: str,
                                                                                         tmp_path: Path) -> None:
    # A password sent as a multipart form field is scrubbed where the server echoes
    # it, as one sent in a url-encoded form; a Location or Content-Location holding
    # user-info or a secret query value is redacted in log events, as in cassettes.
    cassette = tmp_path / "multipart.json"
    events: list = []
    with netlayer.Client({"baseURL": base_url, "log": {"level": "debug"},
                          "cassette": {"file": str(cassette), "mode": "record"}}) as client:
        client.on_log(events.append)
        client.post("echo", data={"username": "ann", "password": "Hunter2-CANARY-MULTI"},
                    files={"avatar": ("a.png", b"\x89PNG")})
    recorded = cassette.read_text()
    assert "Hunter2-CANARY-MULTI" not in recorded
    assert "Hunter2-CANARY-MULTI" not in json.dumps(events)

    events.clear()
    with netlayer.Client({"baseURL": base_url, "followRedirects": False, "acceptableStatus": [[200, 399]],
                          "log": {"level": "info"}}) as client:
        client.on_log(events.append)
        client.get("redirect-to", params={"url": "https://ann:USERINFOPW99@app.example/cb?access_token=SRVTOKEN424242",
                                          "status": 302})
    logged = [event["headers"] for event in events if event["event"] == "response"]
    assert logged and "<redacted>" in logged[0]["location"]
    assert "SRVTOKEN424242" not in json.dumps(logged) and "USERINFOPW99" not in json.dumps(logged)


def test_a_secret_echoed_with_json_escapes_stays_out_of_the_cassette(base_url: str, tmp_path: Path) -> None:
    # The test server writes JSON as Python's json.dumps does: non-ASCII as \u00e4.
    cassette = tmp_path / "escaped.json"
    password = "pässwörd-CANARY/€"
    with netlayer.Client({"baseURL": base_url, "cassette": {"file": str(cassette), "mode": "record"}}) as client:
        echoed = client.post("echo", json={"username": "ann", "password": password}).value
        assert password in echoed["body"]  # the server did echo it, escaped in its JSON
    recorded = cassette.read_text()
    assert "CANARY" not in recorded, recorded[:2000]


def test_a_token_a_later_request_carries_is_scrubbed_from_the_earlier_exchange_that_handed_it_out(
        base_url: str, tmp_path: Path) -> None:
    # A sign-in answers with a token under a name no list knows; the next request sends
    # it as a bearer credential: the cassette, meant to be committed, holds it nowhere.
    cassette = tmp_path / "signin.json"
    token = "tok-7f3a9c1e5b2d4f60"
    with netlayer.Client({"baseURL": base_url, "cassette": {"file": str(cassette), "mode": "record"}}) as client:
        handed_out = client.post("echo", json={"user": "ann", "grant": token}).value
        assert token in handed_out["body"]
        assert client.get("echo", headers={"Authorization": "Bearer " + token}).status == 200
    recorded = cassette.read_text()
    assert token not in recorded, recorded[:3000]
    assert json.loads(recorded)["exchanges"][0]["response"]["status"] == 200


def test_replay_prefers_the_exchange_recorded_for_the_very_url_over_a_redacted_one(base_url: str,
                                                                                   tmp_path: Path) -> None:
    # The jar's cookie consent=accepted is a secret: "accepted" becomes REDACTED wherever it
    # stood, ?status=accepted too, which then matches any status. ?status=rejected has
    # an exchange of its own, which must answer it.
    cassette = tmp_path / "orders.json"
    config = {"baseURL": base_url, "cookies": True}
    with netlayer.Client({**config, "cassette": {"file": str(cassette), "mode": "record"}}) as client:
        client.get("set-cookie", params={"c": "consent=accepted"})
        client.get("echo", params={"status": "accepted"})
        client.get("echo", params={"status": "rejected"})
    with netlayer.Client({**config, "cassette": {"file": str(cassette), "mode": "replay"}}) as client:
        client.get("set-cookie", params={"c": "consent=accepted"})
        assert client.get("echo", params={"status": "rejected"}).value["args"] == {"status": ["rejected"]}
