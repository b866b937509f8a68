#!/usr/bin/env python3
"""Loopback HTTP test server for Netlayer (Python 3.11 standard library only).

Usage: python3 server.py [--port 0] [--host 127.0.0.1] [--port-file PATH]

Binds (port 0 picks a free port), prints "PORT <n>" on stdout, writes the
port to --port-file when given, and serves until SIGTERM or SIGINT.
HTTP/1.1 with keep-alive; every response carries Content-Length (except the
ones HTTP forbids it on: 204 and 304).

Endpoints (any method unless noted):
  GET  /json                 fixed JSON document
       /echo[/<anything>]    JSON description of the request (method, path,
                             query, args, headers, body, bodyLength, connection)
       /status/<code>        that status, {"detail":"status <code>"}
       /delay/<ms>           sleeps, then {"delayed": ms}
       /redirect/<n>         302 chain down to /redirect/0 -> /json
       /redirect-to?url=U&status=302
       /text /control-bytes /notjson /empty /bytes/<n> /invalid-utf8 /headers-multi
       /basic-auth/<user>/<password>, /digest-auth/<user>/<password>
                             200 {"user": user} for those credentials (Basic; Digest
                             MD5 with qop=auth), else 401 with the challenge
       /set-cookie?c=V[&c=V...]  one Set-Cookie: V header per c, {"set": n}
       /typed?type=T&body=B  B (UTF-8) with Content-Type T (none when T is absent; one
                             line per T when repeated); body64=B64 sends those bytes
       /header-bytes         header values that are not UTF-8 (X-Latin1: caf\xe9 \xff;
                             X-Mixed twice: a, \xe9; X-Ctl-Latin1: \x04\x88, a byte to
                             escape first) beside a UTF-8 one (X-Utf8: café);
                             ?max_age=N adds Cache-Control: max-age=N
       /stats /stats/reset   accepted TCP connections and requests
       /stream-bytes/<n>?chunk=C&delay_ms=D&wait_ms=W
                             n bytes in pieces of C (65536), D ms apart; the
                             headers after W ms (a client can act before them)
       /movies /movies/<id>  small demo API (GET list, GET one, POST create)
       /flaky/<key>?fails=N&status=503&retry_after=X
                             `status` (default 503, with Retry-After: X when
                             given) for the first N requests with that key,
                             then 200 {"key": key, "hits": n}
       /hits/<key>           {"hits": n}: requests seen for that key by /flaky
                             and /auth (not counting this one)
       /auth/<key>           401 {"error":{"message":"token expired"}} unless
                             Authorization is "Bearer <current token>", then
                             200 {"ok": true, "token": current}
       /token/rotate         makes a new current token (initially "t1") and
                             returns {"token": new}
       /error-json/<status>?message=M
                             that status with {"error":{"message":M}}
       POST /scenario-setup/<id>  {"<sub>": [response, ...], ...}: what /scenario/<id>[/<sub>]
                             answers, one response per request in order, the last one
                             repeated ("" is /scenario/<id> itself); a response is
                             {"status", "headers": [[name, value]], "body", "delayMs",
                             "disconnect", "noDate"}; header values may hold {date},
                             {date+N}, {date-N} (an HTTP date N seconds from now) and
                             {scenario} (the path /scenario/<id>). Forgets the log.
       /scenario/<id>[/<sub>]  the next scripted response (any method); without a body
                             given, {"path": sub, "n": the request's number on that path}
       GET /scenario-log/<id>  {"requests": [{"path", "method", "headers"}]}: what the
                             scenario's paths saw, in order (header names lower case)
       /petstore/...         the Swagger Petstore's answers for the OpenAPI tests:
                             GET /petstore/pet/<id> a Pet (id 666: one that breaks
                             the Pet schema), GET /petstore/pet/findByStatus a list
                             of Pets; any other request the /echo description
"""

import argparse
import base64
import calendar
import gzip
import hashlib
import json
import zlib
import os
import re
import signal
import socket
import sys
import threading
import time
import traceback
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

JSON_DOC = {
    "id": 1,
    "title": "Dune",
    "results": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
    "data": {"nested": {"value": 42}},
}

MOVIES = [
    {"id": 1, "title": "Dune"},
    {"id": 2, "title": "Arrival"},
    {"id": 3, "title": "Heat"},
]

MAX_BODY = 256 * 1024 * 1024  # refuse absurd request bodies
MAX_DELAY_MS = 120_000
MAX_BYTES = 256 * 1024 * 1024


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.connections = 0  # since start or last reset
        self.requests = 0  # since start or last reset
        self.next_conn_id = 0  # monotonic, never reset

    def new_connection(self):
        with self.lock:
            self.connections += 1
            self.next_conn_id += 1
            return self.next_conn_id

    def new_request(self):
        with self.lock:
            self.requests += 1

    def snapshot(self):
        with self.lock:
            return {"connections": self.connections, "requests": self.requests}

    def reset(self):
        with self.lock:
            self.connections = 0
            self.requests = 0


STATS = Stats()


class Counters:
    """Per-key hit counters (/flaky, /auth) and the current token (/auth)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.hits = {}
        self.token_serial = 1
        self.token = "t1"

    def hit(self, key):
        with self.lock:
            n = self.hits.get(key, 0) + 1
            self.hits[key] = n
            return n

    def get(self, key):
        with self.lock:
            return self.hits.get(key, 0)

    def current_token(self):
        with self.lock:
            return self.token

    def rotate(self):
        with self.lock:
            self.token_serial += 1
            self.token = "t%d" % self.token_serial
            return self.token


COUNTERS = Counters()


class Scenarios:
    """Scripted responses for the response cache tests (/scenario-setup, /scenario)."""

    MAX = 4096  # scenarios kept; the oldest are forgotten

    def __init__(self):
        self.lock = threading.Lock()
        self.scripts = {}  # id -> {sub: [response, ...]}
        self.hits = {}  # (id, sub) -> requests seen
        self.logs = {}  # id -> [{"path", "method", "headers"}]

    def setup(self, scenario, script):
        with self.lock:
            if len(self.scripts) >= self.MAX:
                oldest = next(iter(self.scripts))
                self.scripts.pop(oldest)
                self.logs.pop(oldest, None)
            self.scripts[scenario] = script
            self.logs[scenario] = []
            for key in [k for k in self.hits if k[0] == scenario]:
                del self.hits[key]

    def next(self, scenario, sub, method, headers):
        """The response for this request and its number on the path, or None."""
        with self.lock:
            responses = self.scripts.get(scenario, {}).get(sub)
            if not responses:
                return None, 0
            n = self.hits.get((scenario, sub), 0) + 1
            self.hits[(scenario, sub)] = n
            self.logs[scenario].append({"path": sub, "method": method, "headers": headers})
            return responses[min(n, len(responses)) - 1], n

    def log(self, scenario):
        with self.lock:
            return list(self.logs.get(scenario, []))


SCENARIOS = Scenarios()


class BadRequest(Exception):
    pass


COMPRESSIBLE = json.dumps({"compressed": True, "data": "netlayer " * 200}).encode()

CONTROL_BODY = b"red \x1b[31mtext\x1b[0m bell\x07 del\x7f csi\xc2\x9b2J tab\tcr\r\ncaf\xc3\xa9\n"

SSE_BODY = (b": a comment\n"
            b"retry: 1500\n\n"
            b"id: 1\nevent: tick\ndata: first\n\n"
            b"data: two\ndata: lines\n\n"
            b"id: 3\r\ndata: crlf\r\n\r\n"
            b"data: unterminated at the end")


def _brotli_stored(data):
    """A brotli stream holding `data` in one uncompressed meta-block (RFC 7932 9.2)."""
    assert 0 < len(data) <= 65536
    bits = []

    def put(value, n):
        bits.extend((value >> i) & 1 for i in range(n))
    put(0, 1)                # WBITS = 16
    put(0, 1)                # ISLAST = 0
    put(0, 2)                # MNIBBLES = 4
    put(len(data) - 1, 16)   # MLEN - 1
    put(1, 1)                # ISUNCOMPRESSED
    while len(bits) % 8:
        bits.append(0)
    head = bytes(sum(bit << i for i, bit in enumerate(bits[k:k + 8])) for k in range(0, len(bits), 8))
    return head + data + b"\x03"  # ISLAST = 1, ISLASTEMPTY = 1


def _zstd_raw(data):
    """A zstd frame holding `data` in one raw block (RFC 8878 3.1)."""
    assert 256 <= len(data) <= 65791
    header = b"\x28\xb5\x2f\xfd" + bytes([0x60]) + (len(data) - 256).to_bytes(2, "little")
    block = (1 | (len(data) << 3)).to_bytes(3, "little")  # last block, raw
    return header + block + data


def compress(encoding, data):
    if encoding == "gzip":
        return gzip.compress(data)
    if encoding == "deflate":
        return zlib.compress(data)
    if encoding == "br":
        return _brotli_stored(data)
    if encoding == "zstd":
        return _zstd_raw(data)
    return None


def _gzip_bomb(size=1 << 30):
    """About 1 MB of gzip that expands to `size` zero bytes inside a JSON string."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [z.compress(b'{"bomb":"')]
    zeros = b"0" * (1 << 20)
    for _ in range(size // len(zeros)):
        out.append(z.compress(zeros))
    out.append(z.compress(b'"}'))
    out.append(z.flush())
    return b"".join(out)


GZIP_BOMB = b""


def _is_disconnect(exc):
    return isinstance(exc, (BrokenPipeError, ConnectionResetError,
                            ConnectionAbortedError, TimeoutError,
                            socket.timeout))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "NetlayerTestServer/1.0"
    disable_nagle_algorithm = True
    timeout = None

    # ---- connection bookkeeping -------------------------------------------------

    def setup(self):
        super().setup()
        self.conn_id = STATS.new_connection()

    def log_message(self, format, *args):  # noqa: A002 - quiet
        pass

    # ---- dispatch -----------------------------------------------------------------

    def _dispatch(self):
        STATS.new_request()
        self._response_started = False
        try:
            # /sink streams the body itself, without keeping it.
            body = b"" if self.path.split("?")[0] == "/sink" else self._read_body()
        except BadRequest as e:
            self.close_connection = True
            self._send_json(400, {"error": {"message": str(e)}})
            return
        try:
            self._route(body)
        except Exception as e:  # never let a handler bug kill the connection silently
            if _is_disconnect(e):
                self.close_connection = True
                return
            traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            if not self._response_started:
                try:
                    self._send_json(500, {"error": {"message": "server error: %s" % e}})
                except Exception:
                    pass

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _dispatch
    do_TRACE = do_CONNECT = do_PROPFIND = do_QUERY = _dispatch

    def __getattr__(self, name):
        # Any other method token (PURGE, REPORT, M-SEARCH, lower-case ones) is served too.
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    # ---- request body -------------------------------------------------------------

    def _read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            return self._read_chunked()
        cl = self.headers.get("Content-Length")
        if cl is None:
            return b""
        try:
            n = int(cl.strip())
        except ValueError:
            raise BadRequest("bad Content-Length")
        if n < 0 or n > MAX_BODY:
            raise BadRequest("bad Content-Length")
        data = self.rfile.read(n) if n else b""
        if len(data) != n:
            self.close_connection = True
            raise BadRequest("truncated body")
        return data

    def _read_chunked(self):
        parts = []
        total = 0
        while True:
            line = self.rfile.readline(65537)
            if not line:
                raise BadRequest("truncated chunked body")
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise BadRequest("bad chunk size")
            if size < 0:
                raise BadRequest("bad chunk size")
            if size == 0:
                # trailers until an empty line
                while True:
                    t = self.rfile.readline(65537)
                    if not t or t in (b"\r\n", b"\n"):
                        break
                break
            total += size
            if total > MAX_BODY:
                raise BadRequest("body too large")
            chunk = self.rfile.read(size)
            if len(chunk) != size:
                raise BadRequest("truncated chunk")
            parts.append(chunk)
            crlf = self.rfile.readline(65537)
            if crlf not in (b"\r\n", b"\n"):
                raise BadRequest("missing CRLF after chunk")
        return b"".join(parts)

    # ---- responses ----------------------------------------------------------------

    def _send(self, status, body=b"", content_type=None, headers=()):
        """Sends a whole response. Headers and body go out in one write."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        self._response_started = True
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        no_body_status = status in (204, 304) or 100 <= status < 200
        if status == 205:
            body = b""
        if not no_body_status:
            self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        send_body = not no_body_status and self.command != "HEAD" and body
        # end_headers() would flush the headers alone; append the body first so
        # the whole response is one write.
        self._headers_buffer.append(b"\r\n")
        if send_body:
            self._headers_buffer.append(body)
        self.flush_headers()

    def _send_json(self, status, obj, headers=()):
        body = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        self._send(status, body, "application/json", headers)

    # ---- routes -------------------------------------------------------------------

    def _route(self, body):
        parts = urlsplit(self.path)
        path = parts.path
        query = parts.query
        segs = [s for s in path.split("/") if s != ""]
        method = self.command

        if path == "/json":
            return self._send_json(200, JSON_DOC)

        if segs and segs[0] == "echo":
            return self._echo(parts, body)

        if segs and segs[0] == "petstore":
            return self._petstore(segs[1:], parts, body)

        if len(segs) == 2 and segs[0] == "status":
            try:
                code = int(segs[1])
            except ValueError:
                return self._send_json(400, {"error": {"message": "bad status code"}})
            if code < 200 or code > 599:
                return self._send_json(400, {"error": {"message": "status must be 200..599"}})
            if code in (204, 205, 304):
                return self._send(code, b"")
            return self._send_json(code, {"detail": "status %d" % code})

        if len(segs) == 2 and segs[0] == "delay":
            try:
                ms = int(float(segs[1]))
            except ValueError:
                return self._send_json(400, {"error": {"message": "bad delay"}})
            ms = max(0, min(ms, MAX_DELAY_MS))
            time.sleep(ms / 1000.0)
            return self._send_json(200, {"delayed": ms})

        if len(segs) == 2 and segs[0] == "redirect":
            try:
                n = int(segs[1])
            except ValueError:
                return self._send_json(400, {"error": {"message": "bad redirect count"}})
            location = "/json" if n <= 0 else "/redirect/%d" % (n - 1)
            return self._send_json(302, {"redirect": location},
                                   headers=[("Location", location)])

        if path == "/redirect-to":
            args = parse_qs(query, keep_blank_values=True)
            url = (args.get("url") or [""])[0]
            try:
                code = int((args.get("status") or ["302"])[0])
            except ValueError:
                code = 302
            if code < 300 or code > 399:
                code = 302
            return self._send_json(code, {"redirect": url}, headers=[("Location", url)])

        if path == "/header-bytes":
            # send_header writes a str as ISO-8859-1: each code point below 256 is one byte.
            # ?max_age=N adds Cache-Control: max-age=N.
            max_age = parse_qs(parts.query).get("max_age")
            return self._send(200, b"{}", "application/json", headers=[
                ("X-Latin1", "caf\xe9 \xff"), ("X-Utf8", "café".encode().decode("latin-1")),
                ("X-Mixed", "a"), ("X-Mixed", "\xe9"), ("X-Ctl-Latin1", "\x04\x88")]
                + ([("Cache-Control", "max-age=" + max_age[0])] if max_age else []))

        if path == "/reflect":
            # The request body, verbatim, as a JSON response: lets a test choose the
            # exact bytes a client has to decode.
            return self._send(200, body, "application/json")

        if path == "/text":
            return self._send(200, b"hello, world", "text/plain")

        if path == "/control-bytes":
            # Terminal control characters in a text body and a header: ESC sequences
            # (colour, window title), BEL, DEL, a C1 CSI (U+009B; in the header also
            # as a lone byte 0x9B, not UTF-8), beside TAB, CR, LF.
            return self._send(200, CONTROL_BODY, "text/plain; charset=utf-8", headers=[
                ("X-Control", "\x1b]0;title\x07 \xc2\x9b2J \x9b end")])

        if path == "/notjson":
            return self._send(200, b"this is not json", "application/json")

        if len(segs) == 3 and segs[0] in ("basic-auth", "digest-auth"):
            return self._auth(segs[0], segs[1], segs[2], parts, body)

        if path == "/login":
            # A session cookie whose value the request does not hold: sess- and 16 hex
            # digits derived from ?seed=.
            seed = (parse_qs(query).get("seed") or [""])[0]
            sid = "sess-" + hashlib.sha256(seed.encode()).hexdigest()[:16]
            return self._send_json(200, {"user": seed}, headers=[("Set-Cookie", "sid=%s; Path=/" % sid)])

        if path == "/basic-echo":
            # The decoded basic credentials, as some servers echo them back.
            given = self.headers.get("Authorization") or ""
            name, _, secret = base64.b64decode(given[6:] or "").decode("utf-8", "replace").partition(":")
            return self._send_json(200, {"user": name, "password": secret})

        if path == "/oauth/token":
            # An OAuth 2.0 token endpoint (RFC 6749 section 4.3): a form in, tokens out;
            # the form is echoed back, password and client_secret included.
            form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
            tag = hashlib.sha256(body).hexdigest()[:16]
            return self._send_json(200, {"access_token": "at-" + tag, "refresh_token": "rt-" + tag,
                                         "id_token": "it-" + tag, "token_type": "Bearer", "expires_in": 3600,
                                         "form": form})

        if path == "/set-cookie":
            values = parse_qs(parts.query, keep_blank_values=True).get("c", [])
            return self._send_json(200, {"set": len(values)}, headers=[("Set-Cookie", v) for v in values])

        if path == "/typed":
            # One Content-Type line per `type` (an empty one too); the body is `body64`'s
            # bytes when given (to send text that is not UTF-8), else `body` in UTF-8,
            # `repeat` times; the status is `status` (200).
            args = parse_qs(parts.query, keep_blank_values=True)
            lines = [("Content-Type", value) for value in args.get("type", [])]
            if "body64" in args:
                data = base64.b64decode(args["body64"][0])
            else:
                data = args.get("body", [""])[0].encode()
            data *= int(args.get("repeat", ["1"])[0])
            return self._send(int(args.get("status", ["200"])[0]), data, None, headers=lines)

        if path == "/empty":
            return self._send(200, b"")

        if len(segs) == 2 and segs[0] == "bytes":
            try:
                n = int(segs[1])
            except ValueError:
                return self._send_json(400, {"error": {"message": "bad byte count"}})
            n = max(0, min(n, MAX_BYTES))
            data = bytes(i % 256 for i in range(min(n, 256))) * (n // 256 + 1)
            return self._send(200, data[:n], "application/octet-stream")

        if path == "/invalid-utf8":
            return self._send(200, b"ab\xff\xfecd", "text/plain")

        if path == "/headers-multi":
            return self._send_json(200, {}, headers=[("X-Multi", "a"), ("X-Multi", "b")])

        if path == "/stats":
            return self._send_json(200, STATS.snapshot())

        if path == "/stats/reset":
            STATS.reset()
            return self._send_json(200, STATS.snapshot())

        if segs and segs[0] == "movies":
            return self._movies(segs, method, body)

        if len(segs) == 2 and segs[0] == "flaky":
            return self._flaky(segs[1], query)

        if len(segs) == 2 and segs[0] == "hits":
            return self._send_json(200, {"hits": COUNTERS.get(segs[1])})

        if len(segs) == 2 and segs[0] == "auth":
            COUNTERS.hit(segs[1])
            token = COUNTERS.current_token()
            if (self.headers.get("Authorization") or "") == "Bearer " + token:
                return self._send_json(200, {"ok": True, "token": token})
            return self._send_json(401, {"error": {"message": "token expired"}},
                                   headers=[("WWW-Authenticate", "Bearer")])

        if path == "/token/current":
            return self._send_json(200, {"token": COUNTERS.current_token()})

        if len(segs) == 2 and segs[0] == "scenario-setup" and method == "POST":
            try:
                script = json.loads(body.decode("utf-8"))
                assert isinstance(script, dict) and all(isinstance(v, list) for v in script.values())
            except (ValueError, AssertionError):
                return self._send_json(400, {"error": {"message": "body must be {sub: [response, ...]}"}})
            SCENARIOS.setup(segs[1], script)
            return self._send_json(200, {"paths": len(script)})

        if len(segs) == 2 and segs[0] == "scenario-log":
            return self._send_json(200, {"requests": SCENARIOS.log(segs[1])})

        if len(segs) >= 2 and segs[0] == "scenario":
            return self._scenario(segs[1], "/".join(segs[2:]))

        if len(segs) == 2 and segs[0] == "cache":
            return self._cache(segs[1], parse_qs(query, keep_blank_values=True))

        if path == "/sse":
            return self._send(200, SSE_BODY, "text/event-stream")

        if path == "/lines":
            return self._send(200, b"first line\nsecond line\r\nthird\n\nlast without newline", "text/plain")

        if len(segs) == 2 and segs[0] == "compressed":
            encoded = compress(segs[1], COMPRESSIBLE)
            if encoded is None:
                return self._send_json(404, {"error": {"message": "unknown encoding"}})
            return self._send(200, encoded, "application/json", headers=[("Content-Encoding", segs[1])])

        if path == "/gzip-bomb":
            global GZIP_BOMB
            if not GZIP_BOMB:
                GZIP_BOMB = _gzip_bomb()
            return self._send(200, GZIP_BOMB, "application/json", headers=[("Content-Encoding", "gzip")])

        if len(segs) == 2 and segs[0] == "stream-bytes":
            return self._stream_bytes(segs[1], parse_qs(query, keep_blank_values=True))

        if path == "/sink":
            return self._sink()

        if path == "/token/rotate":
            return self._send_json(200, {"token": COUNTERS.rotate()})

        if len(segs) == 2 and segs[0] == "error-json":
            try:
                code = int(segs[1])
            except ValueError:
                code = 0
            if code < 400 or code > 599:
                return self._send_json(400, {"error": {"message": "status must be 400..599"}})
            args = parse_qs(query, keep_blank_values=True)
            message = (args.get("message") or ["error %d" % code])[0]
            return self._send_json(code, {"error": {"message": message}})

        if path in ("/long-line", "/sse-slow"):
            return self._slow_stream(path, parse_qs(query, keep_blank_values=True))

        return self._send_json(404, {"error": {"message": "no route for %s" % path}})

    def _slow_stream(self, path, args):
        """/long-line?bytes=N: one line of N bytes, written 64 KiB at a time.
        /sse-slow?count=C&interval_ms=I: C events, the first at once, then one every I ms."""
        try:
            n = min(int((args.get("bytes") or ["0"])[0]), MAX_BYTES)
            count = int((args.get("count") or ["1"])[0])
            interval = max(0.0, min(float((args.get("interval_ms") or ["0"])[0]), MAX_DELAY_MS)) / 1000.0
        except ValueError:
            return self._send_json(400, {"error": {"message": "bad bytes, count or interval_ms"}})
        if path == "/long-line":  # one block, written again and again
            block = b"x" * 65536
            pieces = [block] * (n // 65536) + [block[:n % 65536], b"\n"]
            kind, pause = "text/plain", 0.0
        else:
            pieces = [b"data: tick %d\n\n" % i for i in range(count)]
            kind, pause = "text/event-stream", interval
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(sum(len(p) for p in pieces)))
        self.end_headers()
        try:
            for i, piece in enumerate(pieces):
                if i and pause:
                    time.sleep(pause)
                self.wfile.write(piece)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _flaky(self, key, query):
        args = parse_qs(query, keep_blank_values=True)
        try:
            fails = int((args.get("fails") or ["0"])[0])
            code = int((args.get("status") or ["503"])[0])
        except ValueError:
            return self._send_json(400, {"error": {"message": "bad fails or status"}})
        if code < 400 or code > 599:
            return self._send_json(400, {"error": {"message": "status must be 400..599"}})
        retry_after = (args.get("retry_after") or [None])[0]
        n = COUNTERS.hit(key)
        if n <= fails:
            headers = [("Retry-After", retry_after)] if retry_after else []
            return self._send_json(code, {"error": {"message": "flaky %s: failure %d of %d"
                                                    % (key, n, fails)}}, headers=headers)
        return self._send_json(200, {"key": key, "hits": n})

    def _cache(self, key, args):
        """A cacheable resource: Cache-Control from max_age/no_store/no_cache, an ETag
        and Last-Modified when asked, Vary from vary; 304 when the validators match."""
        hits = COUNTERS.hit("cache:" + key)
        first = lambda name: (args.get(name) or [None])[0]  # noqa: E731
        control = []
        if first("max_age") is not None:
            control.append("max-age=%s" % first("max_age"))
        if first("no_store"):
            control.append("no-store")
        if first("no_cache"):
            control.append("no-cache")
        headers = []
        if control:
            headers.append(("Cache-Control", ", ".join(control)))
        etag = '"%s"' % first("etag") if first("etag") else None
        if etag:
            headers.append(("ETag", etag))
        modified = "Sun, 06 Nov 1994 08:49:37 GMT" if first("last_modified") else None
        if modified:
            headers.append(("Last-Modified", modified))
        if first("vary"):
            headers.append(("Vary", first("vary")))
        if (etag and self.headers.get("If-None-Match") == etag) or \
                (modified and not etag and self.headers.get("If-Modified-Since") == modified):
            return self._send(304, b"", headers=headers)
        vary_value = self.headers.get(first("vary")) if first("vary") else None
        return self._send_json(200, {"key": key, "hits": hits, "vary": vary_value}, headers=headers)

    def _scenario(self, scenario, sub):
        """The next scripted response of /scenario/<scenario>/<sub> (see /scenario-setup)."""
        headers = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = headers[key] + ", " + value if key in headers else value
        spec, n = SCENARIOS.next(scenario, sub, self.command, headers)
        if spec is None:
            return self._send_json(404, {"error": {"message": "no scenario %s/%s" % (scenario, sub)}})
        time.sleep(min(float(spec.get("delayMs", 0)), MAX_DELAY_MS) / 1000.0)
        if spec.get("disconnect"):
            self.close_connection = True  # no response at all: the client sees an empty reply
            return None
        status = int(spec.get("status", 200))
        body = spec.get("body")
        if body is None:
            body = json.dumps({"path": sub, "n": n}, separators=(",", ":"))
        body = body.encode("utf-8")

        def expand(value):
            def date(match):
                when = time.gmtime(time.time() + int(match.group(2) or 0))
                if match.group(1) == "rfc850":  # Sunday, 06-Nov-94 08:49:37 GMT
                    return time.strftime("%A, %d-%b-%y %H:%M:%S GMT", when)
                if match.group(1) == "asctime":  # Sun Nov  6 08:49:37 1994
                    return time.strftime("%a %b ", when) + ("%2d" % when.tm_mday) + time.strftime(" %H:%M:%S %Y", when)
                return formatdate(calendar.timegm(when), usegmt=True)
            value = re.sub(r"\{(date|rfc850|asctime)([+-][0-9]+)?\}", date, str(value))
            other = "http://localhost:%d" % self.server.server_address[1]
            return value.replace("{scenario}", "/scenario/" + scenario).replace("{other-origin}", other)

        lines = [(name, expand(value)) for name, value in spec.get("headers", [])]
        names = {name.lower() for name, _ in lines}
        if "content-type" not in names and body:
            lines.append(("Content-Type", "application/json"))
        if "date" not in names and not spec.get("noDate"):
            lines.append(("Date", formatdate(time.time(), usegmt=True)))
        self._response_started = True
        self.send_response_only(status)  # no automatic Date: the script decides
        for name, value in lines:
            self.send_header(name, value)
        no_body = status in (204, 304) or self.command == "HEAD"
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self._headers_buffer.append(b"\r\n")
        if not no_body:
            self._headers_buffer.append(body)
        self.flush_headers()
        return None

    def _stream_bytes(self, size, args):
        """n bytes written in chunks (never held in memory), optionally slowly."""
        try:
            n = int(size)
            chunk = int((args.get("chunk") or ["65536"])[0])
            delay = float((args.get("delay_ms") or ["0"])[0]) / 1000.0
            wait = float((args.get("wait_ms") or ["0"])[0]) / 1000.0
        except ValueError:
            return self._send_json(400, {"error": {"message": "bad size"}})
        time.sleep(min(wait, MAX_DELAY_MS / 1000.0))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        block = bytes(i % 256 for i in range(max(1, chunk)))
        sent = 0
        try:
            while sent < n:
                piece = block[:min(len(block), n - sent)]
                self.wfile.write(piece)
                sent += len(piece)
                if delay:
                    self.wfile.flush()
                    time.sleep(delay)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _sink(self):
        """Reads the body without keeping it: {"bytes", "sha256", "contentType"}."""
        digest = hashlib.sha256()
        total = 0
        length = self.headers.get("Content-Length")
        if length is not None:
            remaining = int(length)
            while remaining > 0:
                data = self.rfile.read(min(remaining, 1 << 20))
                if not data:
                    break
                digest.update(data)
                total += len(data)
                remaining -= len(data)
        elif "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            total = self._discard_chunked(digest)
        return self._send_json(200, {"bytes": total, "sha256": digest.hexdigest(),
                                     "contentType": self.headers.get("Content-Type")})

    def _auth(self, scheme, user, password, parts, body):
        # The password segment may be "sha256:HEX" (basic) or "ha1:HEX" (digest, the MD5
        # of user:netlayer:password), so that a test's URL does not hold the secret.
        given = self.headers.get("Authorization") or ""
        if scheme == "basic-auth":
            if given.startswith("Basic "):
                name, _, secret = base64.b64decode(given[6:]).decode("utf-8", "replace").partition(":")
                if password.startswith("sha256:"):
                    good = hashlib.sha256(secret.encode()).hexdigest() == password[7:]
                else:
                    good = secret == password
                if name == user and good:
                    return self._send_json(200, {"user": user})
            return self._send_json(401, {"error": {"message": "bad credentials"}},
                                   headers=[("WWW-Authenticate", 'Basic realm="netlayer"')])
        nonce = "n0nce"
        if given.startswith("Digest "):
            fields = {}
            for part in given[7:].split(","):
                name, _, value = part.strip().partition("=")
                fields[name] = value.strip('"')
            md5 = lambda text: hashlib.md5(text.encode()).hexdigest()
            ha1 = password[4:] if password.startswith("ha1:") else md5(f"{user}:netlayer:{password}")
            ha2 = md5(f"{self.command}:{fields.get('uri', '')}")
            expected = md5(f"{ha1}:{nonce}:{fields.get('nc')}:{fields.get('cnonce')}:auth:{ha2}")
            if fields.get("username") == user and fields.get("response") == expected:
                if "echo=1" in parts.query.split("&"):
                    return self._echo(parts, body)  # the digest answer the client sent, echoed
                return self._send_json(200, {"user": user})
        return self._send_json(401, {"error": {"message": "bad credentials"}}, headers=[
            ("WWW-Authenticate", f'Digest realm="netlayer", nonce="{nonce}", qop="auth", algorithm=MD5')])
    def _discard_chunked(self, digest):
        """Reads a chunked body of any length, keeping only its digest; returns its size."""
        total = 0
        while True:
            line = self.rfile.readline(65537)
            if not line:
                return total
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(65537) not in (b"", b"\r\n", b"\n"):
                    pass
                return total
            while size > 0:
                data = self.rfile.read(min(size, 1 << 20))
                if not data:
                    return total
                digest.update(data)
                total += len(data)
                size -= len(data)
            self.rfile.readline(65537)

    def _echo(self, parts, body):
        headers = {}
        for name, value in self.headers.items():
            key = name.lower()
            if key in headers:
                headers[key] = headers[key] + ", " + value
            else:
                headers[key] = value
        args = parse_qs(parts.query, keep_blank_values=True)
        doc = {
            "method": self.command,
            "path": parts.path,
            "query": parts.query,
            "args": args,
            "headers": headers,
            # Each header line as it came: tells one Cookie line from two.
            "headerLines": [[name, value] for name, value in self.headers.items()],
            "body": body.decode("utf-8", errors="replace"),
            "bodyLength": len(body),
            "connection": self.conn_id,
        }
        # Response headers a test asks for: ?_max_age=N (Cache-Control), ?_vary=NAME,
        # ?_set_cookie=VALUE (repeatable).
        extra = []
        if args.get("_max_age"):
            extra.append(("Cache-Control", "max-age=%s" % args["_max_age"][0]))
        if args.get("_vary"):
            extra.append(("Vary", args["_vary"][0]))
        for value in args.get("_set_cookie", []):
            extra.append(("Set-Cookie", value))
        return self._send_json(200, doc, headers=extra)

    def _petstore(self, segs, parts, body):
        if self.command == "GET" and segs == ["pet", "findByStatus"]:
            status = (parse_qs(parts.query).get("status") or ["available"])[0]
            return self._send_json(200, [{"id": 1, "name": "doggie", "photoUrls": [], "status": status}])
        if self.command == "GET" and len(segs) == 2 and segs[0] == "pet" and segs[1].isdigit():
            if segs[1] == "666":
                return self._send_json(200, {"id": "six", "name": "imp", "photoUrls": []})
            return self._send_json(200, {"id": int(segs[1]), "name": "doggie", "category": {"id": 1, "name": "Dogs"},
                                         "photoUrls": ["https://example.com/d.png"], "tags": [], "status": "available"})
        return self._echo(parts, body)

    def _movies(self, segs, method, body):
        if len(segs) == 1:
            if method in ("GET", "HEAD"):
                return self._send_json(200, {"page": 1, "results": MOVIES})
            if method == "POST":
                try:
                    doc = json.loads(body.decode("utf-8")) if body else None
                except (UnicodeDecodeError, ValueError):
                    doc = None
                if not isinstance(doc, dict) or not isinstance(doc.get("title"), str):
                    return self._send_json(
                        400, {"error": {"message": "body must be {\"title\": string}"}})
                return self._send_json(201, {"data": {"id": 4, "title": doc["title"]}})
            return self._send_json(405, {"error": {"message": "method %s not allowed" % method}},
                                   headers=[("Allow", "GET, HEAD, POST")])
        if len(segs) == 2:
            if method not in ("GET", "HEAD"):
                return self._send_json(405, {"error": {"message": "method %s not allowed" % method}},
                                       headers=[("Allow", "GET, HEAD")])
            for m in MOVIES:
                if str(m["id"]) == segs[1]:
                    return self._send_json(200, {"data": m})
            return self._send_json(404, {"error": {"message": "movie %s not found" % segs[1]}})
        return self._send_json(404, {"error": {"message": "no route"}})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if exc is not None and _is_disconnect(exc):
            return
        sys.stderr.write("server.py: error while handling a request:\n")
        traceback.print_exc(file=sys.stderr)


class UnixServer(Server):
    """The same server on a Unix domain socket (--unix): for unixSocket tests."""
    address_family = socket.AF_UNIX

    def server_bind(self):
        self.socket.bind(self.server_address)
        self.server_name, self.server_port = "localhost", 0

    def get_request(self):
        request, _ = self.socket.accept()
        return request, ("unix", 0)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Netlayer loopback test server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port-file", default=None)
    ap.add_argument("--unix", default=None, help="serve on this Unix domain socket path instead (port file: 1)")
    ap.add_argument("--exit-on-stdin-eof", action="store_true",
                    help="stop when stdin closes (the parent test process ended)")
    args = ap.parse_args(argv)

    if args.unix:
        httpd = UnixServer(args.unix, type("UnixHandler", (Handler,), {"disable_nagle_algorithm": False}))
        port = 1  # no port: the port file only says the socket is ready
    else:
        httpd = Server((args.host, args.port), Handler)
        port = httpd.server_address[1]

    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    if args.exit_on_stdin_eof:
        def watch_stdin():
            while sys.stdin.buffer.read(4096):
                pass
            stop.set()
        threading.Thread(target=watch_stdin, name="stdin_watch", daemon=True).start()

    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                              name="serve_forever", daemon=True)
    thread.start()

    if args.port_file:
        tmp = args.port_file + ".tmp%d" % os.getpid()
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    sys.stdout.write("PORT %d\n" % port)
    sys.stdout.flush()

    try:
        while not stop.wait(0.5):
            if not thread.is_alive():
                break
    finally:
        httpd.shutdown()
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
