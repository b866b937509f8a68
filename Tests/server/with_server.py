#!/usr/bin/env python3
"""Runs a command against a fresh Netlayer test server.

Usage: python3 with_server.py -- CMD ARGS...

Starts server.py (next to this file) on a free loopback port, runs CMD with
NETLAYER_TEST_URL=http://127.0.0.1:<port>/ and NETLAYER_TEST_PORT=<port> in its
environment, stops the server and exits with CMD's exit status (128+N when CMD
died of signal N). The server is always stopped, also on Ctrl-C or SIGTERM.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "server.py")
START_TIMEOUT = 10.0


class Terminated(BaseException):
    pass


def _on_sigterm(signum, frame):
    raise Terminated()


def _wait_for_port(proc, port_file, deadline):
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("test server exited early with status %s" % proc.returncode)
        try:
            with open(port_file) as f:
                text = f.read().strip()
            if text:
                return int(text)
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(0.02)
    raise RuntimeError("test server did not report its port within %.0f s" % START_TIMEOUT)


def _stop(proc):
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except ProcessLookupError:
        pass


def main(argv):
    if "--" in argv:
        cmd = argv[argv.index("--") + 1:]
    else:
        cmd = argv
    if not cmd:
        sys.stderr.write("usage: with_server.py -- CMD ARGS...\n")
        return 2

    signal.signal(signal.SIGTERM, _on_sigterm)
    # even when started with SIGINT ignored (e.g. as a background job)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    server = None
    child = None
    with tempfile.TemporaryDirectory(prefix="netlayer-server-") as tmp:
        port_file = os.path.join(tmp, "port")
        try:
            server = subprocess.Popen(
                [sys.executable, SERVER, "--port", "0", "--host", "127.0.0.1",
                 "--port-file", port_file],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            port = _wait_for_port(server, port_file, time.monotonic() + START_TIMEOUT)
            env = dict(os.environ)
            env["NETLAYER_TEST_URL"] = "http://127.0.0.1:%d/" % port
            env["NETLAYER_TEST_PORT"] = str(port)
            try:
                child = subprocess.Popen(cmd, env=env)
            except OSError as e:
                sys.stderr.write("with_server.py: cannot run %s: %s\n" % (cmd[0], e))
                return 127
            rc = child.wait()
            child = None
            if rc < 0:
                return 128 - rc
            return rc
        except RuntimeError as e:
            sys.stderr.write("with_server.py: %s\n" % e)
            return 1
        except (KeyboardInterrupt, Terminated):
            if child is not None and child.poll() is None:
                try:
                    child.terminate()
                    child.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
            return 130
        finally:
            _stop(server)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
