"""Successful requests: documents in, Responses out, and what the server received."""

from __future__ import annotations

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
