"""The response cache where it meets other features: redirects that sign in, downloads
and streams, hooks that add credentials, per-request limits, and its own bound in bytes.

Each test scripts a small server of its own (one route per function) so that what the
server saw can be counted exactly.
"""

from __future__ import annotations

import http.server
import socketserver
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

import pytest

import netlayer

Answer = Tuple[int, List[Tuple[str, str]], bytes]
Route = Callable[[http.server.BaseHTTPRequestHandler], Answer]


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    routes: Dict[str, Route]
    seen: List[Tuple[str, Dict[str, str]]]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.server.seen.append((path, {k.lower(): v for k, v in self.headers.items()}))
        status, headers, body = self.server.routes[path](self)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status not in (204, 304):
            self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server(("127.0.0.1", 0), _Handler)
    s.routes, s.seen = {}, []
    thread = threading.Thread(target=s.serve_forever, daemon=True)
    thread.start()
    yield s
    s.shutdown()
    s.server_close()


def _client(s: _Server, **cache: object) -> netlayer.Client:
    return netlayer.Client({"baseURL": "http://127.0.0.1:%d/" % s.server_address[1], "timeout": 5,
                            "cache": {"enabled": True, **cache}, "cookies": True})


def _paths(s: _Server) -> List[str]:
    return [path for path, _ in s.seen]


def test_a_page_reached_through_a_sign_in_redirect_is_not_served_after_sign_out(server: _Server) -> None:
    def dashboard(h: http.server.BaseHTTPRequestHandler) -> Answer:
        cookie = h.headers.get("Cookie") or ""
        if "sid=" not in cookie:
            return 302, [("Location", "/sso")], b""
        return 200, [("Cache-Control", "private, max-age=600")], ("dashboard of " + cookie).encode()

    server.routes["/dashboard"] = dashboard
    server.routes["/sso"] = lambda h: (302, [("Set-Cookie", "sid=alice-session; Path=/"), ("Location", "/dashboard")], b"")
    server.routes["/logout"] = lambda h: (200, [("Set-Cookie", "sid=; Max-Age=0; Path=/")], b"bye")
    with _client(server) as c:
        first = c.get("dashboard", use_cache=True)
        assert first.text == "dashboard of sid=alice-session" and len(first.history) == 2
        c.get("logout")
        server.seen.clear()
        # The jar is empty again: the anonymous request goes to the server, which signs in anew.
        again = c.get("dashboard", use_cache=True)
        assert not again.from_cache and _paths(server) == ["/dashboard", "/sso", "/dashboard"], _paths(server)


def test_downloads_and_streams_are_never_answered_from_the_cache(server: _Server, tmp_path: Path) -> None:
    server.routes["/data"] = lambda h: (200, [("Cache-Control", "max-age=600"), ("Content-Type", "text/plain")],
                                        b"line1\nline2\n")
    with _client(server) as c:
        assert c.get("data", use_cache=True).text == "line1\nline2\n"
        assert c.get("data", use_cache=True).from_cache
        target = tmp_path / "out.txt"
        downloaded = c.get("data", use_cache=True, download_to=target)
        assert not downloaded.from_cache and target.read_bytes() == b"line1\nline2\n"
        with c.stream({"path": "data", "stream": "lines", "useCache": True}) as events:
            assert [e["line"] for e in events] == ["line1", "line2"]
        assert _paths(server) == ["/data"] * 3


def test_a_stale_entrys_validators_do_not_follow_a_redirect_and_no_304_reaches_the_caller(server: _Server) -> None:
    etag = '"5f3a1c-1a"'  # nginx's mtime-size tag: a renamed file keeps it
    moved = [False]

    def old(h: http.server.BaseHTTPRequestHandler) -> Answer:
        if moved[0]:
            return 301, [("Location", "/new")], b""
        return 200, [("ETag", etag), ("Cache-Control", "max-age=1")], b"content"

    def new(h: http.server.BaseHTTPRequestHandler) -> Answer:
        if h.headers.get("If-None-Match") == etag:
            return 304, [("ETag", etag)], b""
        return 200, [("ETag", etag), ("Cache-Control", "max-age=1")], b"content"

    server.routes["/old"], server.routes["/new"] = old, new
    with _client(server) as c:
        assert c.get("old", use_cache=True).text == "content"
        moved[0] = True
        time.sleep(1.5)
        r = c.get("old", use_cache=True)
        assert (r.status_code, r.text, r.from_cache) == (200, "content", False)
        assert [(p, h.get("if-none-match")) for p, h in server.seen[1:]] == [("/old", etag), ("/new", None)]


def test_a_token_an_adapt_hook_adds_keys_the_cache(server: _Server) -> None:
    server.routes["/me"] = lambda h: (200, [("Cache-Control", "private, max-age=600")],
                                      str(h.headers.get("Authorization")).encode())
    token = ["alice"]
    with _client(server) as c:
        @c.on_adapt
        def sign(event: object) -> object:
            return {"headers": {"Authorization": "Bearer " + token[0]}}

        answers = []
        for who in ("alice", "alice", "bob", "alice", "bob"):
            token[0] = who
            r = c.get("me", use_cache=True)
            answers.append((r.text, r.from_cache))
        assert answers == [("Bearer alice", False), ("Bearer alice", True), ("Bearer bob", False),
                           ("Bearer alice", True), ("Bearer bob", True)]
        assert len(server.seen) == 2


def test_the_fields_vary_selects_and_the_cache_directives_are_those_an_adapt_hook_sent(server: _Server) -> None:
    # RFC 9111 section 4.1: a stored response answers only a request whose selecting
    # fields match; a tenant header a hook adds must keep tenants apart.
    server.routes["/greet"] = lambda h: (200, [("Cache-Control", "max-age=600"), ("Vary", "X-Tenant")],
                                         str(h.headers.get("X-Tenant")).encode())
    tenant = ["fr"]
    extra: Dict[str, str] = {}
    with _client(server) as c:
        @c.on_adapt
        def tag(event: object) -> object:
            return {"headers": {"X-Tenant": tenant[0], **extra}}

        answers = []
        for who in ("fr", "de", "fr", "de"):
            tenant[0] = who
            r = c.get("greet", use_cache=True)
            answers.append((r.text, r.from_cache))
        assert answers == [("fr", False), ("de", False), ("fr", True), ("de", True)]
        extra["Cache-Control"] = "no-cache"  # a directive the hook sends is heeded too
        assert c.get("greet", use_cache=True).from_cache is False
        assert len(server.seen) == 3


def test_a_retry_that_succeeds_leaves_no_stored_failure_to_answer_later(server: _Server) -> None:
    # The failed attempt's 503 came with max-age; the retry's 200 says nothing of caching.
    # The newer answer supersedes the stored one, which must not answer the next request.
    hits = []

    def flaky(h: http.server.BaseHTTPRequestHandler) -> Answer:
        hits.append(1)
        if len(hits) == 1:
            return 503, [("Cache-Control", "max-age=600")], b"down"
        return 200, [], b"up"

    server.routes["/flaky"] = flaky
    with netlayer.Client({"baseURL": "http://127.0.0.1:%d/" % server.server_address[1], "timeout": 5,
                          "cache": {"enabled": True}, "retry": {"maxAttempts": 3, "backoff": 0.05}}) as c:
        first = c.get("flaky", use_cache=True)
        assert (first.status, first.text, first.attempts) == (200, "up", 2)
        second = c.get("flaky", use_cache=True)
        assert (second.status, second.text, second.from_cache) == (200, "up", False)
    assert len(hits) == 3


def test_a_cached_answer_does_not_hand_out_the_cookies_of_its_first_answer_again(server: _Server) -> None:
    # The jar took them when they came; after a sign-out a cache hit must not show them.
    server.routes["/page"] = lambda h: (200, [("Cache-Control", "max-age=600"),
                                             ("Set-Cookie", "sid=NEWSESSION1; Path=/")], b"page")
    with _client(server) as c:
        first = c.get("page", use_cache=True)
        assert first.set_cookies == ("sid=NEWSESSION1; Path=/",) and not first.from_cache
        c.get("page", use_cache=True)  # the jar's new cookie keys the cache: fetched and stored under it
        again = c.get("page", use_cache=True)
        assert again.from_cache and again.set_cookies == () and "set-cookie" not in again.headers


def test_a_stored_body_over_a_requests_limit_is_refused_as_from_the_network(server: _Server) -> None:
    server.routes["/big"] = lambda h: (200, [("Cache-Control", "max-age=600")], b"x" * 5000)
    with _client(server) as c:
        assert len(c.get("big", use_cache=True).content) == 5000
        with pytest.raises(netlayer.TooLargeError, match="maxResponseBytes"):
            c.request({"path": "big", "useCache": True, "maxResponseBytes": 100})
        assert len(server.seen) == 2


def test_the_cache_holds_at_most_max_bytes_evicting_the_least_recently_used(server: _Server) -> None:
    for name in ("a", "b", "c"):
        server.routes["/" + name] = lambda h: (200, [("Cache-Control", "max-age=600")], b"x" * 3000)
    server.routes["/huge"] = lambda h: (200, [("Cache-Control", "max-age=600")], b"x" * 20_000)
    with _client(server, maxBytes=10_000) as c:
        for name in ("a", "b", "a", "c", "a", "b", "huge", "huge"):
            c.get(name, use_cache=True)
        # a, b, c fit (3 x ~3.1 KB); a is used again, so adding c then b evicts nothing
        # beyond the bound; huge is larger than the whole cache and is never stored.
        assert _paths(server) == ["/a", "/b", "/c", "/huge", "/huge"], _paths(server)
    with _client(server, maxBytes=7_000) as c:
        server.seen.clear()
        for name in ("a", "b", "c", "a", "c"):
            c.get(name, use_cache=True)
        # Two fit: c evicts a (least recently used), which then comes from the network
        # and evicts b; c stays.
        assert _paths(server) == ["/a", "/b", "/c", "/a"], _paths(server)


@pytest.mark.parametrize("value", [0, -1, "64", 1.5, 2 ** 41])
def test_a_max_bytes_that_is_not_a_positive_size_is_refused_naming_it(value: object) -> None:
    with pytest.raises(netlayer.InvalidRequestError, match="maxBytes"):
        netlayer.Client({"baseURL": "http://127.0.0.1:9/", "cache": {"enabled": True, "maxBytes": value}})
