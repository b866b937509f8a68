#!/usr/bin/env python3
"""slow_server.py PORT_FILE [HOLD_S=5] — a slow HTTP/1.1 server for conc_memory.

Standard library only (asyncio). Listens on 127.0.0.1, on a free port that it
writes to PORT_FILE once it accepts connections. Keep-alive; per request path:

  /slow    reads the request, sends nothing for HOLD_S seconds, then answers
           200 {"slow":true}
  /fast    answers 200 {"fast":true} at once (warm-up)
  /stats   answers 200 with the number of /slow requests being held right now,
           as a bare integer (conc_memory polls it to know when all are in flight)
  other    404

It copes with thousands of concurrent connections (backlog 4096; the caller
raises `ulimit -n`). Stops on SIGTERM/SIGINT.
"""
import asyncio
import signal
import sys

PORT_FILE = sys.argv[1]
HOLD = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
held = 0


def response(status, body):
    reason = {200: "OK", 404: "Not Found"}[status]
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def handle(reader, writer):
    global held
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                break
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = request_line.split(" ")
            path = parts[1] if len(parts) > 1 else ""
            path = path.split("?", 1)[0]
            if path == "/slow":
                held += 1
                try:
                    await asyncio.sleep(HOLD)
                finally:
                    held -= 1
                writer.write(response(200, b'{"slow":true}'))
            elif path == "/fast":
                writer.write(response(200, b'{"fast":true}'))
            elif path == "/stats":
                writer.write(response(200, str(held).encode()))
            else:
                writer.write(response(404, b'{"error":"not found"}'))
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(f"{port}\n")
    import os
    os.replace(PORT_FILE + ".tmp", PORT_FILE)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
