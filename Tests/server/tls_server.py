#!/usr/bin/env python3
"""Loopback HTTPS test server for Netlayer (Python 3 standard library only).

Usage: python3 tls_server.py --cert PEM --key PEM [--port 0] [--host 127.0.0.1]
                             [--port-file PATH] [--exit-on-stdin-eof]
                             [--client-ca PEM]

With --client-ca, a TLS client must present a certificate that CA signed (mutual
TLS); the handshake fails otherwise.

Serves HTTPS with the given certificate and key. The same port also answers plain
HTTP: a connection whose first byte is not a TLS handshake record (0x16) is served
without TLS, so http://host:P and https://host:P differ only in their scheme
(used to test redirects that change the scheme alone).

Endpoints (any method):
  /json                      {"tls": true|false, "hello": "world", "clientCN": CN
                              of the client's certificate or null}
  /echo[/...]                {"method", "path", "query", "headers", "body",
                              "bodyLength", "tls"}
  /redirect-to?url=U&status=302
  /stats                     {"requests": n, "tlsRequests": n, "handshakeFailures": n}
Prints "PORT <n>" on stdout and writes the port to --port-file.
"""

import argparse
import json
import os
import signal
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

LOCK = threading.Lock()
STATS = {"requests": 0, "tlsRequests": 0, "handshakeFailures": 0}


def bump(key):
    with LOCK:
        STATS[key] += 1


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "NetlayerTLSTestServer/1.0"

    def log_message(self, format, *args):  # noqa: A002 - quiet
        pass

    def _dispatch(self):
        is_tls = isinstance(self.connection, ssl.SSLSocket)
        bump("requests")
        if is_tls:
            bump("tlsRequests")
        n = int(self.headers.get("Content-Length") or "0")
        body = self.rfile.read(n) if n > 0 else b""
        parts = urlsplit(self.path)
        path = parts.path
        args = parse_qs(parts.query, keep_blank_values=True)
        if path == "/json":
            peer = self.connection.getpeercert() if is_tls else None
            subject = dict(item for rdn in (peer or {}).get("subject", ()) for item in rdn)
            return self._send_json(200, {"tls": is_tls, "hello": "world", "clientCN": subject.get("commonName")})
        if path == "/echo" or path.startswith("/echo/"):
            headers = {}
            for name, value in self.headers.items():
                key = name.lower()
                headers[key] = headers[key] + ", " + value if key in headers else value
            return self._send_json(200, {
                "method": self.command, "path": path, "query": parts.query,
                "headers": headers, "body": body.decode("utf-8", errors="replace"),
                "bodyLength": len(body), "tls": is_tls})
        if path == "/redirect-to":
            url = (args.get("url") or [""])[0]
            try:
                code = int((args.get("status") or ["302"])[0])
            except ValueError:
                code = 302
            return self._send_json(code, {"redirect": url}, [("Location", url)])
        if path == "/stats":
            with LOCK:
                snap = dict(STATS)
            return self._send_json(200, snap)
        return self._send_json(404, {"error": {"message": "no route for %s" % path}})

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _dispatch

    def _send_json(self, status, obj, headers=()):
        body = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 64
    context = None

    def finish_request(self, request, client_address):
        # Runs on the connection's own thread: sniff, then (maybe) handshake here so
        # a slow or failing handshake never blocks the accept loop.
        try:
            request.settimeout(30)
            first = request.recv(1, socket.MSG_PEEK)
            if first == b"\x16":
                try:
                    request = self.context.wrap_socket(request, server_side=True)
                except (ssl.SSLError, OSError):
                    bump("handshakeFailures")
                    return
            request.settimeout(None)
            self.RequestHandlerClass(request, client_address, self)
        except (ssl.SSLError, OSError):
            pass

    def shutdown_request(self, request):
        try:
            request.close()
        except OSError:
            pass

    def handle_error(self, request, client_address):
        pass


def main(argv=None):
    ap = argparse.ArgumentParser(description="Netlayer loopback HTTPS test server")
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port-file", default=None)
    ap.add_argument("--exit-on-stdin-eof", action="store_true")
    ap.add_argument("--client-ca", default=None)
    args = ap.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write("tls_server.py: loopback only\n")
        return 2

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    if args.client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(args.client_ca)
    httpd = Server((args.host, args.port), Handler)
    httpd.context = context
    port = httpd.server_address[1]

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda s, f: stop.set())
    signal.signal(signal.SIGINT, lambda s, f: stop.set())
    if args.exit_on_stdin_eof:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            stop.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
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
