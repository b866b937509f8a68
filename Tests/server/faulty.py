#!/usr/bin/env python3
"""A loopback HTTP server that misbehaves on purpose (Python 3 standard library only).

Usage: python3 faulty.py [--port 0] [--host 127.0.0.1] [--port-file PATH]
                         [--exit-on-stdin-eof]

Binds one port (0 picks a free one), prints "PORT <n>" on stdout, writes the port
to --port-file when given and serves until SIGTERM, SIGINT or (with
--exit-on-stdin-eof) the end of stdin. Every connection is handled by raw socket
code in its own thread, so each mode can send exactly the bytes it wants.

The mode is the request path (the query is ignored unless noted):
  /never-answer        reads the request, never answers (until the client leaves)
  /slowloris           valid headers (Content-Length 1000), then the body at 1 byte/s
  /close-mid-body      Content-Length 1000, sends 100 bytes, closes
  /short-length        Content-Length 100, sends 50 bytes, closes
  /long-length         Content-Length 10 ({"a":1234}), then 40 more bytes, keeps the
                       connection open (reusing it would read the excess as a response)
  /chunked-no-final    chunked, a few chunks, never the last (0) chunk, closes
  /bad-chunk-size      chunked with the chunk size "zz"
  /bad-status-line     "HTTP/1.1 OOPS Not A Status" as the status line
  /bare-lf             a complete response whose lines end in LF only
  /conflicting-length  two different Content-Length headers
  /bad-field-name      a header field name with a space before its colon
  /folded              a header value continued on two folded lines (obs-fold)
  /endless-headers     header lines forever (until the client leaves)
  /trailer-fields      chunked text/plain body {"a":1}, then the trailer fields
                       Content-Type: application/json, Content-Encoding: gzip,
                       Set-Cookie: tr=1 and X-Checksum: abc (?bad=1: and a line
                       without a colon among them)
  /endless-trailers    chunked body "ok", then trailer lines forever
  /unterminated-headers
                       "HTTP/1.1 200 OK" and a Content-Type line, then closes before
                       the blank line that ends the header section
                       (?cut=status: after the status line alone)
  /huge-header         one header line of 1 MB
  /endless-body        no Content-Length, close-delimited body, forever
  /huge-length         Content-Length 10^12, then a trickle of bytes
  /keepalive-close     a valid keep-alive JSON response, then closes the connection
                       at once (no "Connection: close")
  /keepalive-close?late=1
                       a valid keep-alive JSON response; the next request that
                       arrives on the same connection is read and the connection is
                       closed without an answer (the race of a server closing an
                       idle connection as the client reuses it)
  /retry-after?k=KEY   503 with Retry-After: 1 for the first request with KEY, then 200
  /redirect-loop       302 to itself
  /redirect-file       302 to file:///etc/passwd
  /plain               a normal 200 JSON response (keep-alive)
  /listed-length       Content-Length: 3, 5 (one field listing two lengths), body "abcde"
  /empty-field-name    a header line ": injected" (a field with an empty name)
  /cr-in-value         X-C: a<CR>b (a bare CR inside a value)
  /many-fields?n=N     N header fields (default 25,000, 200 KB of libcurl's 300 KiB
                       section), every name distinct but the last, which repeats the first
  /stalled-lines       chunked text/plain "line-1\n", "line-2\n", then silence until
                       the client leaves
  /gzip-incompressible 1,000 bytes that do not compress, gzipped (1,023 bytes with
                       Content-Encoding: gzip and that Content-Length)
  /gzip-trailing-bytes a gzip body followed by bytes that are no gzip member ("junk"),
                       all within its Content-Length
  /slow-redirect?n=N   after 0.7 s, 302 to /slow-redirect?n=N-1; n=0 is /plain at once
  /see-other           303 to /unavailable
  /unavailable         503 Service Unavailable, always
  /stats               {"requests": {path: n}, "connections": n, "tlsHellos": n}
  /stats/reset         resets the counters
A connection whose first byte is 0x16 (a TLS ClientHello) gets a plain HTTP
response and is closed, like any plaintext server reached with https://.
Unknown paths: 404 JSON.
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

MAX_REQUEST_HEAD = 64 * 1024
LOCK = threading.Lock()
STATS = {"requests": {}, "connections": 0, "tlsHellos": 0}
RETRY_KEYS = {}
STOP = threading.Event()


class Disconnected(Exception):
    pass


def count_request(path):
    with LOCK:
        STATS["requests"][path] = STATS["requests"].get(path, 0) + 1


def stats_snapshot():
    with LOCK:
        return {"requests": dict(STATS["requests"]), "connections": STATS["connections"],
                "tlsHellos": STATS["tlsHellos"]}


def stats_reset():
    with LOCK:
        STATS["requests"] = {}
        STATS["connections"] = 0
        STATS["tlsHellos"] = 0


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def recv_some(self):
        try:
            data = self.sock.recv(65536)
        except OSError:
            raise Disconnected()
        if not data:
            raise Disconnected()
        return data

    def peek_first_byte(self):
        if not self.buf:
            self.buf += self.recv_some()
        return self.buf[:1]

    def read_request(self):
        """Returns (method, target, headers dict lower-case) or raises Disconnected."""
        while b"\r\n\r\n" not in self.buf and b"\n\n" not in self.buf:
            if len(self.buf) > MAX_REQUEST_HEAD:
                raise Disconnected()
            self.buf += self.recv_some()
        end = self.buf.find(b"\r\n\r\n")
        sep = 4
        lf = self.buf.find(b"\n\n")
        if end < 0 or (0 <= lf < end):
            end, sep = lf, 2
        head, self.buf = self.buf[:end], self.buf[end + sep:]
        lines = head.decode("latin-1").replace("\r\n", "\n").split("\n")
        parts = lines[0].split(" ")
        if len(parts) < 2:
            raise Disconnected()
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        # skip a request body, if any (only Content-Length bodies are used here)
        try:
            n = int(headers.get("content-length", "0"))
        except ValueError:
            n = 0
        while len(self.buf) < n:
            self.buf += self.recv_some()
        self.buf = self.buf[n:]
        return parts[0], parts[1], headers

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            raise Disconnected()

    def wait_for_close(self, limit=300.0):
        """Blocks until the peer closes the connection (or `limit` seconds pass)."""
        deadline = time.monotonic() + limit
        self.sock.settimeout(0.5)
        while time.monotonic() < deadline and not STOP.is_set():
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return


def response(status, reason, body, headers=(), keep_alive=True):
    lines = ["HTTP/1.1 %d %s" % (status, reason), "Content-Type: application/json",
             "Content-Length: %d" % len(body)]
    lines.extend(headers)
    if not keep_alive:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def json_body(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def sleep_or_stop(seconds):
    return STOP.wait(seconds)


# Each handler returns True to keep the connection for another request.

def h_never_answer(c, q):
    c.wait_for_close()
    return False


def h_slowloris(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    for _ in range(1000):
        if sleep_or_stop(1.0):
            break
        c.send(b" ")
    return False


def h_close_mid_body(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n" +
           b"[" + b"1," * 49 + b"1")
    return False


def h_short_length(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" +
           b"[" + b"1," * 24 + b"1")
    return False


def h_long_length(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n" +
           b'{"a":1234}' + b"HTTP/1.1 200 OK\r\nX-Smuggled: yes\r\n\r\n!!!")
    return True


def h_chunked_no_final(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5\r\n[1,2,\r\n4\r\n3,4,\r\n")
    time.sleep(0.05)
    return False


def h_bad_chunk_size(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"zz\r\n[1,2]\r\n0\r\n\r\n")
    return False


def h_bad_status_line(c, q):
    c.send(b"HTTP/1.1 OOPS Not A Status\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    return False


def h_bare_lf(c, q):
    c.send(b"HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: 11\n\n{\"lf\":true}")
    return False


def h_conflicting_length(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
           b"Content-Length: 12\r\n\r\n{\"a\":123456}")
    return False


def h_bad_field_name(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Bad : 1\r\n"
           b"Content-Length: 2\r\n\r\n{}")
    return False


def h_folded(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Folded: a\r\n  b\r\n\tc\r\n"
           b"Content-Length: 2\r\n\r\n{}")
    return False


def h_trailer_fields(c, q):
    bad = b"NoColonHere\r\n" if (q.get("bad") or ["0"])[0] == "1" else b""
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
           b"Trailer: Content-Type, Content-Encoding, Set-Cookie, X-Checksum\r\n\r\n"
           b"7\r\n{\"a\":1}\r\n0\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
           b"Set-Cookie: tr=1; Path=/\r\n" + bad + b"X-Checksum: abc\r\n\r\n")
    return not bad


def h_endless_trailers(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n")
    line = b"X-T: " + b"t" * 100 + b"\r\n"
    sent = 0
    while not STOP.is_set() and sent < 50_000_000:
        c.send(line * 256)
        sent += 256
    return False


def h_endless_headers(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    i = 0
    block = []
    while not STOP.is_set():
        block.append(b"X-Endless-%d: %s\r\n" % (i, b"v" * 40))
        i += 1
        if len(block) == 256:
            c.send(b"".join(block))
            block = []
        if i > 50_000_000:
            break
    return False


def h_unterminated_headers(c, q):
    if (q.get("cut") or [""])[0] == "status":
        c.send(b"HTTP/1.1 200 OK\r\n")
    else:
        c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
    return False


def h_huge_header(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Huge: " + b"h" * (1 << 20) +
           b"\r\nContent-Length: 2\r\n\r\n{}")
    c.wait_for_close(30)
    return False


def h_endless_body(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n")
    block = b"x" * 65536
    sent = 0
    while not STOP.is_set() and sent < (64 << 30):
        c.send(block)
        sent += len(block)
    return False


def h_huge_length(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
           b"Content-Length: 1000000000000\r\n\r\n")
    block = b"y" * 16384
    for _ in range(100000):
        c.send(block)
        if sleep_or_stop(0.005):
            break
    return False


def h_keepalive_close(c, q):
    c.send(response(200, "OK", json_body({"keepalive": True})))
    if (q.get("late") or ["0"])[0] == "1":
        c.read_request()  # the reused connection's next request: read it, never answer
        count_request("/keepalive-close(late reuse)")
        return False
    try:
        c.sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    return False


def h_retry_after(c, q):
    key = (q.get("k") or [""])[0]
    with LOCK:
        n = RETRY_KEYS.get(key, 0) + 1
        RETRY_KEYS[key] = n
    if n == 1:
        c.send(response(503, "Service Unavailable", json_body({"error": "try later", "hit": n}),
                        headers=["Retry-After: 1"]))
    else:
        c.send(response(200, "OK", json_body({"key": key, "hit": n})))
    return True


def h_redirect_loop(c, q):
    c.send(response(302, "Found", b"{}", headers=["Location: /redirect-loop"]))
    return True


def h_redirect_file(c, q):
    c.send(response(302, "Found", b"{}", headers=["Location: file:///etc/passwd"]))
    return True


def h_plain(c, q):
    c.send(response(200, "OK", json_body({"plain": True})))
    return True


def h_listed_length(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3, 5\r\n\r\nabcde")
    return False


def h_empty_field_name(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n: injected\r\n"
           b"Content-Length: 2\r\n\r\n{}")
    return True


def h_cr_in_value(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-C: a\rb\r\n"
           b"Content-Length: 2\r\n\r\n{}")
    return True


def h_many_fields(c, q):
    n = int((q.get("n") or ["25000"])[0])
    lines = [b"X%d:v" % i for i in range(n - 1)] + [b"X0:again"]
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n" +
           b"\r\n".join(lines) + b"\r\n\r\n{}")
    return True


def h_stalled_lines(c, q):
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"7\r\nline-1\n\r\n7\r\nline-2\n\r\n")
    c.wait_for_close(30)
    return False


def h_gzip_incompressible(c, q):
    import gzip
    import random
    body = gzip.compress(random.Random(1).randbytes(1000), compresslevel=9, mtime=0)
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Encoding: gzip\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body) + body)
    return True


def h_gzip_trailing_bytes(c, q):
    import gzip
    body = gzip.compress(b'{"a":1}', mtime=0) + b"junk"
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body) + body)
    return True


def h_slow_redirect(c, q):
    n = int((q.get("n") or ["0"])[0])
    if n <= 0:
        return h_plain(c, q)
    if sleep_or_stop(0.7):
        return False
    c.send(response(302, "Found", b"{}", headers=["Location: /slow-redirect?n=%d" % (n - 1)]))
    return True


def h_see_other(c, q):
    c.send(response(303, "See Other", b"{}", headers=["Location: /unavailable"]))
    return True


def h_unavailable(c, q):
    c.send(response(503, "Service Unavailable", json_body({"error": "down"})))
    return True


def h_stats(c, q):
    c.send(response(200, "OK", json_body(stats_snapshot())))
    return True


def h_stats_reset(c, q):
    stats_reset()
    c.send(response(200, "OK", json_body(stats_snapshot())))
    return True


ROUTES = {
    "/never-answer": h_never_answer,
    "/slowloris": h_slowloris,
    "/close-mid-body": h_close_mid_body,
    "/short-length": h_short_length,
    "/long-length": h_long_length,
    "/chunked-no-final": h_chunked_no_final,
    "/bad-chunk-size": h_bad_chunk_size,
    "/bad-status-line": h_bad_status_line,
    "/bare-lf": h_bare_lf,
    "/conflicting-length": h_conflicting_length,
    "/bad-field-name": h_bad_field_name,
    "/folded": h_folded,
    "/endless-headers": h_endless_headers,
    "/trailer-fields": h_trailer_fields,
    "/endless-trailers": h_endless_trailers,
    "/unterminated-headers": h_unterminated_headers,
    "/huge-header": h_huge_header,
    "/endless-body": h_endless_body,
    "/huge-length": h_huge_length,
    "/keepalive-close": h_keepalive_close,
    "/retry-after": h_retry_after,
    "/redirect-loop": h_redirect_loop,
    "/redirect-file": h_redirect_file,
    "/plain": h_plain,
    "/listed-length": h_listed_length,
    "/empty-field-name": h_empty_field_name,
    "/cr-in-value": h_cr_in_value,
    "/many-fields": h_many_fields,
    "/stalled-lines": h_stalled_lines,
    "/gzip-incompressible": h_gzip_incompressible,
    "/gzip-trailing-bytes": h_gzip_trailing_bytes,
    "/slow-redirect": h_slow_redirect,
    "/see-other": h_see_other,
    "/unavailable": h_unavailable,
    "/stats": h_stats,
    "/stats/reset": h_stats_reset,
}


def handle(sock):
    with LOCK:
        STATS["connections"] += 1
    c = Conn(sock)
    try:
        if c.peek_first_byte() == b"\x16":
            with LOCK:
                STATS["tlsHellos"] += 1
            c.send(response(200, "OK", json_body({"plain": True}), keep_alive=False))
            time.sleep(0.1)
            return
        while not STOP.is_set():
            method, target, headers = c.read_request()
            parts = urlsplit(target)
            path = parts.path
            count_request(path)
            fn = ROUTES.get(path)
            if fn is None:
                c.send(response(404, "Not Found", json_body({"error": "no mode %s" % path})))
                continue
            if not fn(c, parse_qs(parts.query, keep_blank_values=True)):
                break
    except Disconnected:
        pass
    except Exception as e:  # keep serving other connections
        sys.stderr.write("faulty.py: handler error: %r\n" % (e,))
    finally:
        try:
            sock.close()
        except OSError:
            pass


def main(argv=None):
    ap = argparse.ArgumentParser(description="Netlayer misbehaving loopback server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port-file", default=None)
    ap.add_argument("--exit-on-stdin-eof", action="store_true")
    args = ap.parse_args(argv)

    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write("faulty.py: loopback only\n")
        return 2
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.host, args.port))
    listener.listen(128)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]

    def on_signal(signum, frame):
        STOP.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)

    if args.exit_on_stdin_eof:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            STOP.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    if args.port_file:
        tmp = args.port_file + ".tmp%d" % os.getpid()
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    sys.stdout.write("PORT %d\n" % port)
    sys.stdout.flush()

    while not STOP.is_set():
        try:
            sock, _ = listener.accept()
        except socket.timeout:
            continue
        except OSError:
            if STOP.is_set():
                break
            continue
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle, args=(sock,), daemon=True).start()
    listener.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
