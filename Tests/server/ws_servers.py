#!/usr/bin/env python3
"""Loopback servers for the WebSocket tests (Tests/c/test_websocket.c, the Swift tests).

    ws_servers.py KIND [--port 0] [--host 127.0.0.1] [--port-file PATH] [--exit-on-stdin-eof] ...

KIND is one of:

  echo       the `websockets` package's server (a server no one here wrote). Paths:
             /echo (each message back, same kind), /protocol (sends the chosen
             subprotocol, then echoes), /close?code=C&reason=R (closes at once with that
             code), /fragments (sends a text and a binary message in fragments, then
             echoes), /ping (pings the client; says "pong" when the answer came),
             /headers (sends the handshake's request headers as JSON), /large?bytes=N
             (sends one binary message of N bytes), /silent (says nothing),
             /burst?count=N&bytes=B (sends N binary messages of B >= 4 random
             bytes at once, each starting with its index as a 4-byte big-endian number, then
             the text "sent N", then echoes).
             Offers the subprotocols "chat" and "superchat". With --unix PATH it
             listens on that Unix socket (and writes 1 as its port).
  hostile    a raw-socket server that breaks the protocol on purpose, by path:
             /bad-accept, /unoffered-protocol, /status-403, /masked, /huge-length (a
             64-bit length with its most significant bit set), /over-max (a frame header
             announcing 2^40 bytes), /bad-utf8, /no-close-reply (never answers a close),
             /no-read (stops reading after the handshake), /ping-flood (after the
             handshake, sends pings of 125 bytes as fast as the client reads them and
             never reads, with small socket buffers), /eof (hangs up after the
             handshake without a close frame), /no-answer (never answers the
             handshake), /frames (reports the frames of each message the client sends),
             /fragmented?bytes=N&count=K (one binary message of N bytes in K frames),
             /long-ping (a ping of 126 bytes), /short-close (a close frame whose body
             is 1 byte), /trickle-close?code=C (a binary message of 300 bytes, then a
             close frame with code C and reason "bye", sent a byte at a time);
             with permessage-deflate agreed: /deflate-bomb (20 MiB of zeros in one
             small frame), /deflate-bad-utf8, /deflate-report (says whether each message
             came deflated, and what it says).
             Every other connection (the paths above that read what the client sends
             after their frame, and any path not named here, which only reads) records
             the first close frame the client sends: {"close": true, "code": C or null,
             "reason": R, "masked": M}, or {"close": false} when the client hung up
             without one. It is kept under the query's `tag` if it has one, else under
             the path (the last one per key). /last-close?key=K (a tag or a path like
             /bad-utf8; &wait=S, 2 s by default) waits up to S seconds for a record
             under K, takes it (a later /last-close?key=K waits for a new one), and sends
             it as one text message (or the text "none"), then closes with 1000.
  nginx      nginx as a TLS (wss) reverse proxy in front of --upstream PORT, with
             --cert and --key; with --client-ca PATH it asks for a client certificate
             that CA signed (`ssl_verify_client on`: nginx answers 400 without one) and
             passes its subject to the upstream as X-Client-DN.
  tinyproxy  tinyproxy, an HTTP proxy that tunnels with CONNECT to any port.

The port goes to --port-file once the server accepts connections. Loopback only.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def write_port(path, port):
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(port))
        os.rename(tmp, path)


def exit_on_stdin_eof(cleanup=None):
    def watch():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except Exception:
            pass
        if cleanup:
            cleanup()
        os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


# ---- echo: the websockets package --------------------------------------------------------

async def echo_handler(ws):
    from websockets.exceptions import ConnectionClosed
    url = urllib.parse.urlsplit(ws.request.path)
    query = dict(urllib.parse.parse_qsl(url.query))
    path = url.path
    try:
        if path == "/close":
            await ws.close(int(query.get("code", "1000")), query.get("reason", ""))
            return
        if path == "/protocol":
            await ws.send(ws.subprotocol or "(none)")
        elif path == "/fragments":
            await ws.send(["hel", "lo ", "wor", "ld"])
            await ws.send([b"\x00\x01", b"\x02", b"\x03\x04"])
        elif path == "/ping":
            waiter = await ws.ping(b"are you there")
            await asyncio.wait_for(waiter, 5)
            await ws.send("pong")
        elif path == "/headers":
            await ws.send(json.dumps({k.lower(): v for k, v in ws.request.headers.raw_items()}))
        elif path == "/large":
            await ws.send(bytes(i % 251 for i in range(int(query["bytes"]))))
        elif path == "/burst":
            count, size = int(query["count"]), max(4, int(query["bytes"]))
            for index in range(count):  # random: compression cannot shrink them
                await ws.send(struct.pack("!I", index) + os.urandom(size - 4))
            await ws.send("sent %d" % count)
        elif path == "/silent":
            await ws.wait_closed()
            return
        async for message in ws:
            await ws.send(message)
    except ConnectionClosed:
        pass


def run_echo(args):
    from websockets.asyncio.server import serve, unix_serve

    async def main():
        def choose(connection, offered):
            # The first offered of ours, or none (the package's default refuses a
            # client that offers no subprotocol when the server has some).
            return next((name for name in offered if name in ("chat", "superchat")), None)

        # compression="deflate" (the package's default): permessage-deflate when offered.
        options = dict(select_subprotocol=choose, max_size=64 * 1024 * 1024, ping_interval=None)
        if args.unix:
            async with unix_serve(echo_handler, args.unix, **options):
                write_port(args.port_file, 1)  # listening (on the socket, not a port)
                await asyncio.Future()
        async with serve(echo_handler, args.host, args.port, **options) as server:
            write_port(args.port_file, server.sockets[0].getsockname()[1])
            await asyncio.Future()

    asyncio.run(main())


# ---- hostile: raw sockets --------------------------------------------------------------

def frame(opcode, payload, fin=True, masked=False, rsv=0):
    head = bytes([(0x80 if fin else 0) | rsv | opcode])
    n = len(payload)
    mask_bit = 0x80 if masked else 0
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([mask_bit | 127]) + struct.pack("!Q", n)
    if masked:
        key = os.urandom(4)
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        head += key
    return head + payload


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None, {}
        data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    target = head[0].split(" ")[1]
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return target, headers


def accept_for(key):
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


def switching(accept, extra=""):
    return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: %s\r\n%s\r\n" % (accept, extra)).encode()


# The close frames clients sent: key (a query's tag, else the path) -> record.
CLOSES = {}
CLOSES_CHANGED = threading.Condition()


def record_close(key, record):
    with CLOSES_CHANGED:
        CLOSES[key] = record
        CLOSES_CHANGED.notify_all()


def take_close(key, seconds):
    """The record under key (removed), waiting up to `seconds` for one; None if none came."""
    deadline = time.monotonic() + seconds
    with CLOSES_CHANGED:
        while key not in CLOSES:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            CLOSES_CHANGED.wait(left)
        return CLOSES.pop(key)


def drain_recording_close(conn, key):
    """Reads the client's frames until it hangs up, answering nothing; records the
    first close frame (code, reason, whether masked) under key as soon as it comes, or
    that the client hung up without one."""
    recorded = False
    try:
        while True:
            b0, payload, masked = read_frame(conn, with_mask=True)
            if b0 & 0x0F == 0x8 and not recorded:
                recorded = True
                record_close(key, {
                    "close": True,
                    "code": struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None,
                    "reason": payload[2:].decode("utf-8", "replace"),
                    "masked": masked,
                })
    except (OSError, ValueError):
        pass
    if not recorded:
        record_close(key, {"close": False})


def last_close(conn, query):
    """Sends the record of /last-close?key=K as one text message, then closes."""
    record = take_close(query.get("key", ""), float(query.get("wait", "2")))
    conn.sendall(frame(0x1, json.dumps(record).encode() if record is not None else b"none"))
    conn.sendall(frame(0x8, struct.pack("!H", 1000)))
    try:
        while read_frame(conn)[0] & 0x0F != 0x8:  # until the client's answer
            pass
    except OSError:
        pass


def hostile_connection(conn):
    conn.settimeout(30)
    target, headers = read_request(conn)
    if target is None:
        return
    accept = accept_for(headers.get("sec-websocket-key", ""))
    url = urllib.parse.urlsplit(target)
    path = url.path
    query = dict(urllib.parse.parse_qsl(url.query))
    key = query.get("tag") or path
    if path == "/last-close":
        conn.sendall(switching(accept))
        last_close(conn, query)
        return
    if path == "/no-answer":
        time.sleep(30)
        return
    if path == "/status-403":
        conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 7\r\nContent-Type: text/plain\r\n\r\nno way!")
        return
    if path.startswith("/deflate-"):
        conn.sendall(switching(accept, "Sec-WebSocket-Extensions: permessage-deflate\r\n"))
        if path == "/deflate-bomb":  # 20 MiB of zeros in a frame of about 20 KB
            conn.sendall(frame(0x2, deflated(b"\0" * (20 << 20)), rsv=0x40))
        elif path == "/deflate-bad-utf8":
            conn.sendall(frame(0x1, deflated(b"ok \xff\xfe not utf-8"), rsv=0x40))
        elif path == "/deflate-report":
            report_deflated(conn)
            return
        drain_recording_close(conn, key)
        return
    if path == "/bad-accept":
        conn.sendall(switching(base64.b64encode(b"x" * 20).decode()))
    elif path == "/unoffered-protocol":
        conn.sendall(switching(accept, "Sec-WebSocket-Protocol: evil\r\n"))
    else:
        conn.sendall(switching(accept))
    if path == "/masked":
        conn.sendall(frame(0x1, b"masked!", masked=True))
    elif path == "/huge-length":
        conn.sendall(bytes([0x82, 127]) + struct.pack("!Q", 1 << 63))
    elif path == "/over-max":
        conn.sendall(bytes([0x82, 127]) + struct.pack("!Q", 1 << 40) + b"\0" * 1000)
    elif path == "/bad-utf8":
        conn.sendall(frame(0x1, b"ok \xff\xfe not utf-8"))
    elif path == "/long-ping":  # a control frame over 125 bytes
        conn.sendall(frame(0x9, b"p" * 126))
    elif path == "/short-close":  # a close frame of 1 byte: too short for a status code
        conn.sendall(frame(0x8, b"\x03"))
    elif path == "/fragmented":  # one binary message of `bytes` in `count` frames
        size, count = int(query.get("bytes", "5000")), max(1, int(query.get("count", "2")))
        data = bytes(i % 251 for i in range(size))
        step = -(-size // count)
        for index in range(count):
            conn.sendall(frame(0x2 if index == 0 else 0x0, data[index * step:(index + 1) * step],
                               fin=index == count - 1))
    elif path == "/eof":
        conn.sendall(frame(0x1, b"bye"))
        return
    elif path == "/no-read":
        time.sleep(30)
        return
    elif path == "/ping-flood":  # pings of 125 bytes as fast as the client takes them; never reads
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        pings = frame(0x9, b"p" * 125) * 64
        while True:  # until the client hangs up (or stops reading for 30 s)
            conn.sendall(pings)
    elif path == "/frames":
        report_frames(conn)
        return
    elif path == "/trickle-close":  # a message of 300 bytes, then a close with `code`, a byte at a time
        data = frame(0x2, bytes(i % 251 for i in range(300))) + frame(0x8, struct.pack("!H", int(query.get("code", "1000"))) + b"bye")
        for byte in data:
            conn.sendall(bytes([byte]))
            time.sleep(0.002)
    # Read (and for /no-close-reply, ignore) what the client sends until it hangs up,
    # recording its close frame.
    drain_recording_close(conn, key)


def recv_exactly(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


def deflated(data):
    """One message as permessage-deflate puts it on the wire."""
    compressor = zlib.compressobj(wbits=-15)
    out = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b"\x00\x00\xff\xff")
    return out[:-4]


def read_frame(conn, with_mask=False):
    b0, b1 = recv_exactly(conn, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", recv_exactly(conn, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", recv_exactly(conn, 8))[0]
    if n > 64 * 1024 * 1024:
        raise ValueError("a frame of %d bytes" % n)
    key = recv_exactly(conn, 4) if b1 & 0x80 else b"\0\0\0\0"
    payload = bytes(b ^ key[i % 4] for i, b in enumerate(recv_exactly(conn, n)))
    return (b0, payload, bool(b1 & 0x80)) if with_mask else (b0, payload)


def report_deflated(conn):
    """For each message the client sends: {"rsv1": whether it came deflated, "text": it,
    inflated}, as text; answers a close."""
    inflater = zlib.decompressobj(wbits=-15)
    while True:
        b0, payload = read_frame(conn)
        parts, rsv1 = [payload], bool(b0 & 0x40)
        if b0 & 0x0F == 0x8:
            conn.sendall(frame(0x8, payload[:2]))
            return
        while not b0 & 0x80:
            b0, payload = read_frame(conn)
            parts.append(payload)
        data = b"".join(parts)
        if rsv1:
            data = inflater.decompress(data + b"\x00\x00\xff\xff")
        conn.sendall(frame(0x1, json.dumps({"rsv1": rsv1, "text": data.decode()}).encode()))


def report_frames(conn):
    """Reads the client's frames; after each whole message, sends a text message
    listing its frames as JSON [[fin, opcode, masked, length], ...]; answers a close."""
    frames = []
    while True:
        b0, b1 = recv_exactly(conn, 2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", recv_exactly(conn, 2))[0]
        elif n == 127:
            n = struct.unpack("!Q", recv_exactly(conn, 8))[0]
        key = recv_exactly(conn, 4) if b1 & 0x80 else b"\0\0\0\0"
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(recv_exactly(conn, n)))
        opcode = b0 & 0x0F
        if opcode == 0x8:
            conn.sendall(frame(0x8, payload[:2]))
            return
        frames.append([b0 >> 7, opcode, b1 >> 7, n])
        if b0 & 0x80:
            conn.sendall(frame(0x1, json.dumps(frames).encode()))
            frames = []


def run_hostile(args):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # A small receive buffer: a connection that stops reading (/no-read) fills up soon.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    listener.bind((args.host, args.port))
    listener.listen(64)
    write_port(args.port_file, listener.getsockname()[1])

    def serve(conn):
        try:
            hostile_connection(conn)
        except OSError:
            pass
        finally:
            conn.close()

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


# ---- nginx and tinyproxy ----------------------------------------------------------------

def free_port(host):
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for_port(host, port, proc, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the server exited with status %s" % proc.returncode)
        try:
            socket.create_connection((host, port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the server did not listen on %d" % port)


def run_daemon(args, make):
    work = tempfile.mkdtemp(prefix="netlayer-ws-")
    port = free_port(args.host)
    command = make(work, port)
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(work, "stderr"), "w"))

    def cleanup(*_):
        # SIGKILL, and no wait: tinyproxy takes seconds to end on SIGTERM, and this runs
        # in a signal handler that may interrupt proc.wait() (whose lock it would need).
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        shutil.rmtree(work, ignore_errors=True)

    signal.signal(signal.SIGTERM, lambda *_: (cleanup(), os._exit(0)))
    if args.exit_on_stdin_eof:
        exit_on_stdin_eof(cleanup)
    try:
        wait_for_port(args.host, port, proc)
    except RuntimeError:
        with open(os.path.join(work, "stderr")) as f:
            sys.stderr.write(f.read())
        cleanup()
        raise
    write_port(args.port_file, port)
    proc.wait()
    cleanup()


def nginx_command(args):
    def make(work, port):
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(work, sub))
        user = "user root root;" if os.getuid() == 0 else ""
        mutual = ("ssl_verify_client on;\n        ssl_client_certificate %s;\n        ssl_verify_depth 2;"
                  % args.client_ca) if args.client_ca else ""
        client_dn = "proxy_set_header X-Client-DN $ssl_client_s_dn;" if args.client_ca else ""
        with open(os.path.join(work, "nginx.conf"), "w") as f:
            f.write("""%s
daemon off;
master_process off;
worker_processes 1;
pid %s/nginx.pid;
error_log %s/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path %s/client_body;
    proxy_temp_path %s/proxy;
    fastcgi_temp_path %s/fastcgi;
    uwsgi_temp_path %s/uwsgi;
    scgi_temp_path %s/scgi;
    server {
        listen %s:%d ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        %s
        location / {
            proxy_pass http://127.0.0.1:%d;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            %s
            proxy_read_timeout 60s;
        }
    }
}
""" % (user, work, work, work, work, work, work, work, args.host, port, args.cert, args.key, mutual,
       args.upstream, client_dn))
        return ["nginx", "-p", work, "-c", os.path.join(work, "nginx.conf")]
    return make


def tinyproxy_command(args):
    def make(work, port):
        with open(os.path.join(work, "tinyproxy.conf"), "w") as f:
            # No ConnectPort line: CONNECT may reach any port (the test servers' are random).
            f.write("Port %d\nListen %s\nTimeout 60\nMaxClients 50\nAllow 127.0.0.1\nLogLevel Error\n"
                    "LogFile \"%s/tinyproxy.log\"\nPidFile \"%s/tinyproxy.pid\"\n" % (port, args.host, work, work))
            if os.getuid() == 0:
                f.write("User root\nGroup root\n")
        return ["tinyproxy", "-d", "-c", os.path.join(work, "tinyproxy.conf")]
    return make


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["echo", "hostile", "nginx", "tinyproxy"])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", default=None)
    ap.add_argument("--exit-on-stdin-eof", action="store_true")
    ap.add_argument("--upstream", type=int, default=0)
    ap.add_argument("--cert", default=None)
    ap.add_argument("--key", default=None)
    ap.add_argument("--client-ca", default=None, help="nginx: ask for a client certificate this CA signed")
    ap.add_argument("--unix", default=None, help="echo: listen on this Unix socket instead")
    args = ap.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write("ws_servers.py: loopback only\n")
        return 2
    if args.kind == "nginx":
        run_daemon(args, nginx_command(args))
    elif args.kind == "tinyproxy":
        run_daemon(args, tinyproxy_command(args))
    else:
        if args.exit_on_stdin_eof:
            exit_on_stdin_eof()
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
        run_echo(args) if args.kind == "echo" else run_hostile(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
