"""The response cache against RFC 9111 and RFC 5861, one test per row of
Tests/cache/rfc9111.json (its "about" says what a row holds).

Each row scripts the test server's answers (/scenario-setup), sends its requests
through a client with the cache enabled, and checks each answer and what the server saw
(/scenario-log). The server is reached directly with urllib for the script and the log,
never through the client under test.
"""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Dict, List

import pytest

import netlayer

TABLE = Path(__file__).resolve().parents[3] / "Tests" / "cache" / "rfc9111.json"
ROWS: List[Dict[str, Any]] = json.loads(TABLE.read_text(encoding="utf-8"))["scenarios"]

EXPECTATIONS = {"network", "cached", "validated", "refetched", "stale", "error"}
STEP_KEYS = {"method", "path", "headers", "useCache", "otherOrigin", "sleep", "background", "expect", "n", "status",
             "responseHeaders", "absentHeaders", "sent", "notSent", "acceptableStatus", "kind", "attempts"}


def _server(base_url: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base_url + path, data=data, method="GET" if data is None else "POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def _seen(base_url: str, scenario: str, path: str) -> List[Dict[str, Any]]:
    """The requests the server saw on `path` of the scenario, in order."""
    return [r for r in _server(base_url, "scenario-log/" + scenario)["requests"] if r["path"] == path]


def _check_value(where: str, name: str, actual: Any, expected: Any) -> None:
    if expected == "*":
        assert actual is not None, f"{where}: {name} missing"
    elif isinstance(expected, list):
        assert actual is not None and expected[0] <= int(actual) <= expected[1], \
            f"{where}: {name} is {actual!r}, expected {expected[0]}..{expected[1]}"
    else:
        assert actual == expected, f"{where}: {name} is {actual!r}, expected {expected!r}"


def test_every_row_is_well_formed() -> None:
    ids = [row["id"] for row in ROWS]
    assert len(ids) == len(set(ids)), "row ids repeat"
    assert len(ROWS) >= 40
    for row in ROWS:
        assert row["section"] and row["title"] and row["responses"] and row["steps"], row["id"]
        for step in row["steps"]:
            assert step["expect"] in EXPECTATIONS, (row["id"], step)
            assert set(step) <= STEP_KEYS, (row["id"], set(step) - STEP_KEYS)
            assert step.get("path", "") in row["responses"], (row["id"], step)


@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_rfc9111_scenario(row: Dict[str, Any], base_url: str) -> None:
    scenario = "%s-%s" % (row["id"], uuid.uuid4().hex[:8])
    _server(base_url, "scenario-setup/" + scenario, row["responses"])
    port = base_url.rstrip("/").rsplit(":", 1)[1]
    config = {"baseURL": base_url, "timeout": 10, "cache": {"enabled": True, "maxEntries": 64},
              **row.get("config", {})}
    with netlayer.Client(config) as client:
        for index, step in enumerate(row["steps"]):
            where = "%s (RFC %s), step %d" % (row["id"], row["section"], index + 1)
            if step.get("sleep"):
                time.sleep(step["sleep"])
            sub = step.get("path", "")
            path = "scenario/%s%s" % (scenario, "/" + sub if sub else "")
            endpoint: Dict[str, Any] = {"path": path, "method": step.get("method", "GET"),
                                        "useCache": step.get("useCache", True),
                                        "acceptableStatus": step.get("acceptableStatus", [[100, 599]])}
            if step.get("otherOrigin"):
                endpoint.update(path="http://localhost:%s/%s" % (port, path), isFullPath=True)
            if step.get("headers"):
                endpoint["headers"] = step["headers"]
            before = len(_seen(base_url, scenario, sub))
            expect = step["expect"]
            try:
                response = client.request(endpoint)
            except netlayer.Error as error:
                assert expect == "error", f"{where}: failed with {error.kind}: {error}"
                assert error.kind == step["kind"], f"{where}: kind {error.kind}, expected {step['kind']}"
                continue
            assert expect != "error", f"{where}: succeeded with status {response.status}"
            if step.get("background"):
                deadline = time.monotonic() + 10
                while len(_seen(base_url, scenario, sub)) == before and time.monotonic() < deadline:
                    time.sleep(0.02)
                time.sleep(0.2)  # its answer reaches the cache
            seen = _seen(base_url, scenario, sub)[before:]
            if expect == "network":
                assert len(seen) == 1 and not response.from_cache, \
                    f"{where}: expected an answer from the origin; it saw {len(seen)}, fromCache {response.from_cache}"
            elif expect == "cached":
                assert response.from_cache, f"{where}: expected an answer from the cache"
                assert len(seen) == (1 if step.get("background") else 0), \
                    f"{where}: the origin saw {len(seen)} requests"
            elif expect == "validated":
                assert response.from_cache and len(seen) == 1, \
                    f"{where}: expected a revalidation; the origin saw {len(seen)}, fromCache {response.from_cache}"
                sent = seen[0]["headers"]
                assert "if-none-match" in sent or "if-modified-since" in sent, f"{where}: not conditional: {sent}"
            elif expect == "refetched":
                assert len(seen) == 2 and not response.from_cache, \
                    f"{where}: expected a conditional request and one without validators; the origin saw {len(seen)}, " \
                    f"fromCache {response.from_cache}"
                validators = ("if-none-match", "if-modified-since")
                assert any(name in seen[0]["headers"] for name in validators), f"{where}: not conditional: {seen[0]}"
                assert not any(name in seen[1]["headers"] for name in validators), f"{where}: conditional again: {seen[1]}"
            elif expect == "stale":
                assert response.from_cache and len(seen) >= 1, \
                    f"{where}: expected a stale answer after the origin failed; it saw {len(seen)}, " \
                    f"fromCache {response.from_cache}"
            if "status" in step:
                assert response.status == step["status"], f"{where}: status {response.status}"
            if "attempts" in step:
                assert response.attempts == step["attempts"], f"{where}: {response.attempts} attempts"
            if "n" in step:
                assert isinstance(response.value, dict) and response.value.get("n") == step["n"], \
                    f"{where}: answered by {response.value!r}, expected origin response {step['n']}"
            for name, expected in step.get("responseHeaders", {}).items():
                _check_value(where, "response header " + name, response.headers.get(name), expected)
            for name in step.get("absentHeaders", []):
                assert name not in response.headers, f"{where}: response header {name} present"
            for name, expected in step.get("sent", {}).items():
                assert seen, f"{where}: the origin saw no request"
                _check_value(where, "request header " + name, seen[-1]["headers"].get(name), expected)
            for name in step.get("notSent", []):
                assert all(name not in r["headers"] for r in seen), f"{where}: {name} was sent"
