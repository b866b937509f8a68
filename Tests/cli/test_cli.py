#!/usr/bin/env python3
"""Tests of the `netlayer` command-line client: request items, output, downloads,
exit statuses, help, hostile input, and every ```sh block of docs/cli.md (run in one
temporary folder, in order, with the test server's URL for the page's demo URL).

Usage (ctest runs it through with_server.py): test_cli.py PATH_TO_netlayer
"""
import base64
import http.server
import json
import os
import pty
import re
import resource
import select
import termios
import threading
import tty
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from urllib.parse import parse_qsl, quote

import httpie_cases

CLI = os.path.abspath(sys.argv[1])
BASE = os.environ["NETLAYER_TEST_URL"]
# httpie's `http` program, to check the recorded values of httpie_cases.py against (optional)
HTTPIE = os.environ.get("NETLAYER_TEST_HTTPIE")
work = tempfile.mkdtemp(prefix="netlayer-cli-")
results = {"passed": 0, "failed": 0}


def write(name, document):
    path = os.path.join(work, name)
    if isinstance(document, bytes):
        with open(path, "wb") as f:
            f.write(document)
        return path
    with open(path, "w") as f:
        f.write(document if isinstance(document, str) else json.dumps(document))
    return path


def limit_memory():
    """At most 4 GiB of address space: a CLI that reads without bound fails fast instead
    of taking the machine's memory."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run(*args, stdin=None, env=None, umask=None, binary=False, timeout=60):
    """Runs the CLI; standard input is empty unless given (never the caller's)."""
    def prepare():
        limit_memory()
        if umask is not None:
            os.umask(umask)
    p = subprocess.run([CLI, *args], input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                       capture_output=True, text=not binary, timeout=timeout, env=env, cwd=work, preexec_fn=prepare)
    return p.returncode, p.stdout, p.stderr


def run_on_terminal(*args, stream="stdout"):
    """Runs the CLI with standard output (or standard error) on a pseudo-terminal in raw
    mode (so LF is not turned into CR LF); returns the status, what the terminal got and
    the other stream's bytes."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    p = subprocess.run([CLI, *args], stdin=subprocess.DEVNULL, cwd=work, timeout=60, preexec_fn=limit_memory,
                       stdout=slave if stream == "stdout" else subprocess.PIPE,
                       stderr=slave if stream == "stderr" else subprocess.PIPE)
    os.close(slave)
    shown = b""
    try:
        while True:
            chunk = os.read(master, 4096)
            if not chunk:
                break
            shown += chunk
    except OSError:  # EIO once the terminal has no writer left
        pass
    os.close(master)
    return p.returncode, shown, p.stderr if stream == "stdout" else p.stdout


def echo(*args, stdin=None):
    """Runs the CLI against /echo and returns the server's description of the request."""
    code, out, err = run(*args, stdin=stdin)
    assert code == 0, (code, out, err)
    return json.loads(out)


def test(name):
    def decorate(fn):
        try:
            fn()
            results["passed"] += 1
            print("ok  ", name)
        except Exception as e:  # an assertion, or a hang (TimeoutExpired) or any surprise
            results["failed"] += 1
            print("FAIL", name, repr(e))
        return fn
    return decorate


CONFIG = write("config.json", {"baseURL": BASE, "endpoints": {
    "movie": {"path": "movies/{id}", "response": {"keyPath": "data"}},
}})


@test("request prints the body, --result the result document, and exits 0 when ok")
def _():
    endpoint = write("e1.json", {"path": "json", "response": {"keyPath": "title"}})
    code, out, _ = run("request", endpoint, "--config", CONFIG)
    assert code == 0 and json.loads(out) == "Dune", (code, out)
    code, out, _ = run("request", endpoint, "--config", CONFIG, "--result")
    assert code == 0, (code, out)
    doc = json.loads(out)
    assert doc["ok"] is True and doc["value"] == "Dune", out


@test("request reads the endpoint from stdin with -")
def _():
    code, out, _ = run("request", "-", "--config", CONFIG, stdin='{"path": "movies"}')
    assert code == 0 and json.loads(out)["page"] == 1, (code, out)


@test("an HTTP error prints the body and exits 0, or 4 with --check-status; --result shows the error")
def _():
    endpoint = write("e2.json", {"path": "status/404"})
    code, out, _ = run("request", endpoint, "--config", CONFIG)
    assert code == 0 and json.loads(out) == {"detail": "status 404"}, (code, out)
    code, out, err = run("request", endpoint, "--config", CONFIG, "--check-status")
    assert code == 4 and json.loads(out) == {"detail": "status 404"} and "404" in err, (code, out, err)
    code, out, _ = run("request", endpoint, "--config", CONFIG, "--result", "--check-status")
    assert code == 4 and json.loads(out)["error"]["kind"] == "status", (code, out)


@test("a refused connection exits 7 and names the failure on stderr")
def _():
    cfg = write("refused.json", {"baseURL": "http://127.0.0.1:1/"})
    code, out, err = run("request", write("e3.json", {"path": "x"}), "--config", cfg)
    assert code == 7 and out == "" and "not_connected" in err, (code, out, err)
    code, out, _ = run("request", write("e3.json", {"path": "x"}), "--config", cfg, "--result")
    assert code == 7 and json.loads(out)["error"]["kind"] == "not_connected", (code, out)


@test("call fills path placeholders from key=value arguments")
def _():
    code, out, _ = run("call", "movie", "id=2", "--config", CONFIG)
    assert code == 0, (code, out)
    assert json.loads(out) == {"id": 2, "title": "Arrival"}, out


@test("call of an unknown name exits 2")
def _():
    code, out, err = run("call", "nope", "--config", CONFIG, "--result")
    assert code == 2 and json.loads(out)["error"]["kind"] == "invalid_request" and "nope" in err, (code, out, err)


@test("a malformed endpoint exits 2 naming the key and the closest known one")
def _():
    code, out, err = run("request", write("bad.json", '{"pathh": "x"}'), "--config", CONFIG)
    assert code == 2 and out == "" and "'pathh'" in err and "did you mean 'path'?" in err, (code, out, err)


@test("a malformed config exits 2 with its error on stderr, the document with --result")
def _():
    cfg = write("badcfg.json", '{"baseUrl": 1}')
    code, out, err = run("request", write("e4.json", {"path": "json"}), "--config", cfg)
    assert code == 2 and "baseUrl" in err and "did you mean 'baseURL'?" in err, (code, err)
    code, out, err = run("request", write("e4.json", {"path": "json"}), "--config", cfg, "--result")
    assert code == 2 and json.loads(out)["error"]["kind"] == "invalid_request", (code, out)


@test("a missing file exits 2")
def _():
    code, _, err = run("request", os.path.join(work, "missing.json"))
    assert code == 2 and "cannot open" in err, (code, err)


@test("usage errors exit 2")
def _():
    assert run()[0] == 2
    assert run("fetch", "x")[0] == 2
    assert run("call", "movie")[0] == 2  # no --config
    assert run("request", "x.json", "--bogus")[0] == 2


@test("--pretty indents the same document, --no-pretty keeps it on one line")
def _():
    code, out, _ = run("request", write("e5.json", {"path": "movies/1"}), "--config", CONFIG, "--pretty", "--result")
    assert code == 0 and out.count("\n") > 5 and '\n  "ok": true' in out, out
    assert json.loads(out)["value"]["data"]["title"] == "Dune"
    code, out, _ = run("get", BASE + "movies/1", "--pretty")
    assert code == 0 and out == '{\n  "data": {\n    "id": 1,\n    "title": "Dune"\n  }\n}\n', repr(out)
    code, out, _ = run("get", BASE + "movies/1", "--no-pretty")
    assert code == 0 and out == '{"data":{"id":1,"title":"Dune"}}\n', repr(out)


@test("--version names the library version")
def _():
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("netlayer 0."), out


@test("-H 'Name: value' is curl's spelling of a header item; a name that is not a token exits 2 naming it")
def _():
    doc = echo("get", BASE + "echo", "-H", "X-Trace:   1", "--header", "X-Empty;", "-H", "Accept: text/plain")
    assert doc["headers"]["x-trace"] == "1" and doc["headers"]["x-empty"] == "", doc["headers"]
    assert doc["headers"]["accept"] == "text/plain", doc["headers"]
    for bad in ("a=b: c", "nocolon", ": value", "X Y: z"):
        code, out, err = run("get", BASE + "echo", "-H", bad)
        assert code == 2 and "-H" in err and not out, (bad, code, out, err)


@test("--header=, --body= and flags together (-vi, -iv) read as their spelt-out forms; other letters are unknown")
def _():
    doc = echo("get", BASE + "echo", "--header=X-Trace:   2", "--header=X-Empty;")
    assert doc["headers"]["x-trace"] == "2" and doc["headers"]["x-empty"] == "", doc["headers"]
    code, out, err = run("get", BASE + "echo", "--header=nocolon")
    assert code == 2 and "-H" in err and not out, (code, out, err)
    cfg = write("body-eq-config.json", {"baseURL": BASE, "endpoints": {"send": {"path": "echo", "method": "POST"}}})
    code, out, err = run("call", "send", "--config", cfg, '--body={"a": [1, 2.50]}')
    assert code == 0 and json.loads(json.loads(out)["body"]) == {"a": [1, 2.5]}, (code, out, err)
    for flags in ("-vi", "-iv"):
        code, out, err = run("get", BASE + "json", flags)
        assert code == 0 and out.startswith("HTTP/") and json.loads(out.split("\n\n", 1)[1])["title"] == "Dune", out
        assert "* GET " + BASE + "json" in err and "> GET /json HTTP/1.1" in err and "< HTTP 200" in err, err
    code, out, err = run("post", BASE + "echo", "-vf", "a=1")
    assert code == 0 and json.loads(out)["body"] == "a=1" and "> POST " in err, (code, out, err)
    for bad in ("-vx", "-vH", "-va"):
        code, out, err = run("get", BASE + "echo", bad)
        assert code == 2 and "unknown option " + bad in err and not out, (bad, code, out, err)


@test("-H takes its value as curl does: '@file', '=1' and escapes are text, never a file or a body field")
def _():
    secret = write("h-secret.txt", "s3cr3t-token")
    doc = echo("post", BASE + "echo", "-H", "X-User: @" + secret, "-H", "X-Eq: =1", "-H", "X-Mention: @alice",
               "-H", "X-Esc: a\\=b\\:c", "n=1")
    headers = doc["headers"]
    assert headers["x-user"] == "@" + secret and headers["x-eq"] == "=1", headers
    assert headers["x-mention"] == "@alice" and headers["x-esc"] == "a\\=b\\:c", headers
    assert json.loads(doc["body"]) == {"n": "1"}, doc["body"]
    # The same text as an item is httpie's: a header from the file.
    assert echo("get", BASE + "echo", "X-User:@" + secret)["headers"]["x-user"] == "s3cr3t-token"


@test("an option before the command is no method, and a method is never cut short")
def _():
    for args in (("-X", "POST", BASE + "echo"), ("-A", "bearer", "-a", "t", BASE + "echo"), ("--", BASE + "echo")):
        code, out, err = run(*args)
        assert code == 2 and not out and "unknown command '%s'" % args[0] in err, (args, code, out, err)
    long_method = "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ"
    code, out, err = run(long_method, BASE + "echo")
    assert code == 2 and not out and long_method in err, (code, out, err)
    assert echo("PROPFIND", BASE + "echo")["method"] == "PROPFIND"


@test("a body of 255 levels, path and := value together, is sent; 256 exits 2 naming the item")
def _():
    path = "a" + "[b]" * 254
    doc = echo("post", BASE + "echo", path + "=x")
    body = json.loads(doc["body"])
    depth = 0
    while isinstance(body, dict):
        body, depth = body.get("a", body.get("b")), depth + 1
    assert depth == 255 and body == "x", depth
    for item in ("a" + "[b]" * 255 + "=x", "a:=" + "[" * 255 + "]" * 255):
        code, out, err = run("post", BASE + "echo", item)
        assert code == 2 and not out and "more than 255 levels" in err, (code, out, err[:300])


@test("get sends query items (repeated: a list) and header items; Header; is empty, Header: left out")
def _():
    doc = echo("get", BASE + "echo", "page==2", "page==3", "q==a b", "X-Trace:1", "X-Empty;", "X-Gone:")
    assert doc["method"] == "GET" and doc["args"] == {"page": ["2", "3"], "q": ["a b"]}, doc
    assert doc["headers"]["x-trace"] == "1" and doc["headers"]["x-empty"] == "", doc["headers"]
    assert "x-gone" not in doc["headers"], doc["headers"]


@test("post sends = as JSON strings and := as raw JSON with exact numbers")
def _():
    doc = echo("post", BASE + "echo", "name=Dune", "year:=2021", "big:=18446744073709551616",
               "tags:=[\"a\",1]", "meta:={\"ok\":true}", "a\\=b=c")
    assert doc["method"] == "POST" and doc["headers"]["content-type"] == "application/json", doc
    assert '"big":18446744073709551616' in doc["body"], doc["body"]
    assert json.loads(doc["body"]) == {"name": "Dune", "year": 2021, "big": 18446744073709551616,
                                       "tags": ["a", 1], "meta": {"ok": True}, "a=b": "c"}, doc["body"]
    doc = echo("post", BASE + "echo", "price:=1.50", "zero:=-0.0", "n:=2e0", "r:=[1.0, 0.25]", "o[p]:=10.10")
    assert doc["body"] == '{"price":1.50,"zero":-0.0,"n":2e0,"r":[1.0,0.25],"o":{"p":10.10}}', doc["body"]


@test("every method command, METHOD in capitals, and a bare URL (GET, or POST with fields)")
def _():
    for command in ("get", "post", "put", "patch", "delete", "options"):
        assert echo(command, BASE + "echo")["method"] == command.upper()
    assert echo("PROPFIND", BASE + "echo")["method"] == "PROPFIND"
    assert echo(BASE + "echo")["method"] == "GET"
    assert echo(BASE + "echo", "a=1")["method"] == "POST"
    code, out, _ = run("head", BASE + "json")
    assert code == 0 and out.startswith("HTTP/1.1 200\n") and "content-type: application/json" in out, out


@test("a post without a body sends no Content-Type, as httpie and requests do")
def _():
    for args in (("post", BASE + "echo", "a==1"), ("post", BASE + "echo", "--ignore-stdin")):
        doc = echo(*args)
        types = [value for name, value in doc["headerLines"] if name.lower() == "content-type"]
        assert doc["method"] == "POST" and doc["bodyLength"] == 0 and types == [], (args, doc["headerLines"])
    doc = echo("post", BASE + "echo", "a==1", "Content-Type:text/plain")
    assert doc["headers"]["content-type"] == "text/plain", doc["headers"]


@test("field=@file and field:=@file read values from files; --form sends a form")
def _():
    bio, cfg = write("bio.txt", "line one\nline two"), write("cfg.json", '{"depth": 2.50}')
    doc = echo("post", BASE + "echo", "bio=@" + bio, "cfg:=@" + cfg)
    assert json.loads(doc["body"]) == {"bio": "line one\nline two", "cfg": {"depth": 2.5}}, doc["body"]
    doc = echo("post", BASE + "echo", "-f", "a=1", "b=x y")
    assert doc["headers"]["content-type"] == "application/x-www-form-urlencoded" and doc["body"] == "a=1&b=x%20y", doc


@test("field@file makes a multipart body with text and file parts")
def _():
    doc = echo("post", BASE + "echo", "caption=poster", "image@" + write("poster.txt", "PIXELS"))
    assert doc["headers"]["content-type"].startswith("multipart/form-data"), doc["headers"]
    assert 'name="caption"' in doc["body"] and "poster" in doc["body"], doc["body"]
    assert 'name="image"; filename="poster.txt"' in doc["body"] and "PIXELS" in doc["body"], doc["body"]


@test("@file streams the file as the body, typed by its extension unless a header says otherwise")
def _():
    doc = echo("put", BASE + "echo", "@" + write("movie.json", '{"title": "Dune"}'))
    assert doc["method"] == "PUT" and doc["body"] == '{"title": "Dune"}', doc
    assert doc["headers"]["content-type"] == "application/json", doc["headers"]
    doc = echo("put", BASE + "echo", "@" + write("blob.bin", "\x01\x02"), "Content-Type:application/x-thing")
    assert doc["headers"]["content-type"] == "application/x-thing" and doc["bodyLength"] == 2, doc


@test("standard input is the body of post/put/patch without fields, and of @- with any method")
def _():
    doc = echo("post", BASE + "echo", stdin='{"x": [1, 2]}')
    assert doc["body"] == '{"x": [1, 2]}' and doc["headers"]["content-type"] == "application/json", doc
    doc = echo("patch", BASE + "echo", stdin="raw text")
    assert doc["body"] == "raw text" and doc["headers"]["content-type"] == "application/octet-stream", doc
    doc = echo("delete", BASE + "echo", "@-", "Content-Type:text/plain", stdin="gone")
    assert doc["method"] == "DELETE" and doc["body"] == "gone" and doc["headers"]["content-type"] == "text/plain", doc
    doc = echo("post", BASE + "echo", "--ignore-stdin", stdin="ignored")
    assert doc["bodyLength"] == 0, doc
    code, out, err = run("post", BASE + "echo", "@-", "--ignore-stdin", stdin="hi")
    assert code == 2 and "item '@-': reads standard input, which --ignore-stdin forbids" in err, (code, out, err)
    doc = echo("get", BASE + "echo", stdin="not read for GET")
    assert doc["bodyLength"] == 0, doc


@test("the body is printed as it came: JSON, text, bytes")
def _():
    code, out, _ = run("get", BASE + "text")
    assert code == 0 and out == "hello, world", repr(out)
    code, out, _ = run("get", BASE + "bytes/300", binary=True)
    assert code == 0 and out == bytes(i % 256 for i in range(300)), out[:20]
    code, out, _ = run("get", BASE + "status/204")
    assert code == 0 and out == "", repr(out)


@test("text in another charset is printed in UTF-8; --download keeps its bytes")
def _():
    url = BASE + "typed?type=text/plain;%20charset=latin1&body64=Y2Fm6SCA"  # b"caf\xe9 \x80"
    code, out, _ = run("get", url, binary=True)
    assert code == 0 and out == "caf\u00e9 \u20ac".encode(), out
    code, _, err = run("get", url, "--download", "latin1.txt")
    with open(os.path.join(work, "latin1.txt"), "rb") as f:
        assert code == 0 and f.read() == b"caf\xe9 \x80", err


@test("-i prints the status line and headers before the body")
def _():
    code, out, _ = run("get", BASE + "json", "-i")
    head, body = out.split("\n\n", 1)
    assert code == 0 and head.startswith("HTTP/1.1 200") and "content-length: " in head, out
    assert json.loads(body)["title"] == "Dune"


@test("-v prints the lines sent (libcurl's own too) and received on stderr, secrets redacted")
def _():
    code, out, err = run("get", BASE + "json?token=t0ken", "-v", "Authorization:Bearer s3cret", "X-Trace:7")
    assert code == 0 and json.loads(out)["title"] == "Dune", (code, out)
    host = BASE.split("/")[2]
    lines = err.splitlines()
    assert "* GET " + BASE + "json?token=<redacted>" in lines, err
    # as curl -v shows them: the request line and every header line that went out
    sent = [line[2:] for line in lines if line.startswith("> ")]
    assert sent[0] == "GET /json?token=<redacted> HTTP/1.1", err
    assert "Host: " + host in sent and "X-Trace: 7" in sent and "Authorization: <redacted>" in sent, err
    assert any(line.startswith("Accept-Encoding: ") for line in sent), err
    assert any(line.startswith("User-Agent: netlayer/") for line in sent), err
    assert lines.index("< HTTP 200") > lines.index(">"), err
    assert "< content-type: application/json" in err, err
    assert "s3cret" not in err and "t0ken" not in err, err
    code, out, err = run("call", "movie", "id=1", "--config", CONFIG, "-v")
    assert code == 0 and "* GET " + BASE + "movies/1" in err and "> GET /movies/1 HTTP/1.1" in err, (code, err)
    # nothing sent (refused): the request as the library built it
    code, out, err = run("get", "http://127.0.0.1:1/x", "-v", "X-Trace:8")
    assert code == 7 and "> GET http://127.0.0.1:1/x" in err and "> X-Trace: 8" in err, (code, err)


@test("-o - and --download - write the body to standard output, as curl's -o -; --download=FILE saves")
def _():
    for args in (("-o", "-"), ("--download", "-"), ("--download=-",)):
        code, out, err = run("get", BASE + "json", *args)
        assert code == 0 and json.loads(out)["id"] == 1 and not os.path.exists(os.path.join(work, "-")), (args, code, out, err)
    target = os.path.join(work, "eq.json")
    code, out, err = run("get", BASE + "json", "--download=" + target)
    assert code == 0 and out == "" and json.load(open(target))["id"] == 1, (code, out, err)


@test("an argument in an error message cannot send escape sequences to the terminal")
def _():
    for args in (("get", BASE + "echo", "f=@\x1b[2Jnofile"), ("get", BASE + "echo", "\x1b]0;pwned\x07"),
                 ("\x1b[2Jcmd",)):
        code, shown, _ = run_on_terminal(*args, stream="stderr")
        assert code == 2 and b"\x1b" not in shown and b"\\x1b" in shown, (args, code, shown)


@test("a path with --config is joined to its baseURL; :PORT/path means localhost")
def _():
    code, out, _ = run("get", "movies/3", "--config", CONFIG)
    assert code == 0 and json.loads(out) == {"data": {"id": 3, "title": "Heat"}}, (code, out)
    port = os.environ["NETLAYER_TEST_PORT"]
    code, out, err = run("get", ":%s/json" % port)
    # localhost may resolve to ::1 first, where the test server does not listen
    assert code in (0, 7) and (code == 7 or json.loads(out)["id"] == 1), (code, out, err)
    # Without a method and without a scheme, a URL is still one (httpie's `http host:port/x`).
    code, out, err = run("127.0.0.1:%s/json" % port)
    assert code == 0 and json.loads(out)["id"] == 1, (code, out, err)


@test("--download saves the body with mode 0666 & ~umask and prints nothing on stdout")
def _():
    for umask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        target = os.path.join(work, "dl-%o.bin" % umask)
        code, out, err = run("get", BASE + "bytes/70000", "--download", target, umask=umask)
        assert code == 0 and out == "", (code, out, err)
        assert os.path.getsize(target) == 70000 and os.stat(target).st_mode & 0o777 == mode, oct(os.stat(target).st_mode)
    code, out, err = run("get", BASE + "status/404", "-o", os.path.join(work, "dl-404.bin"))
    assert code == 4 and not os.path.exists(os.path.join(work, "dl-404.bin")) and "404" in err, (code, err)
    assert json.loads(out) == {"detail": "status 404"}, out  # the error body is printed, as without --download
    code, out, err = run("get", BASE + "status/503", "--download", os.path.join(work, "dl-503.bin"), "-i")
    assert code == 5 and out.startswith("HTTP/1.1 503\n") and json.loads(out.split("\n\n", 1)[1]) == {"detail": "status 503"}, out
    assert not os.path.exists(os.path.join(work, "dl-503.bin")), os.listdir(work)
    code, out, err = run("get", BASE + "json", "--download", os.path.join(work, "no-such-dir", "x"))
    assert code == 23 and "io" in err, (code, err)


@test("--download of a response cut inside its header section exits 8 and leaves no file")
def _():
    server = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "..", "server", "faulty.py"),
                               "--exit-on-stdin-eof"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    folder = tempfile.mkdtemp(prefix="netlayer-cli-cut-")
    try:
        line = server.stdout.readline()
        assert line.startswith("PORT "), line
        target = os.path.join(folder, "cut.txt")
        code, out, err = run("get", "http://127.0.0.1:%s/unterminated-headers" % line.split()[1], "--download", target)
        assert code == 8 and "protocol" in err and "header" in err, (code, out, err)
        assert os.listdir(folder) == [], os.listdir(folder)
    finally:
        server.stdin.close()
        server.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


@test("a Host, Content-Length or Transfer-Encoding header item exits 2 naming it, and nothing is sent")
def _():
    def requests_seen():
        code, out, _ = run("get", BASE + "stats")
        assert code == 0, (code, out)
        return json.loads(out)["requests"]
    before = requests_seen()
    for item in ("Host:evil.example", "content-length:0", "Transfer-Encoding:chunked"):
        code, out, err = run("post", BASE + "echo", item, "note=GET /smuggled HTTP/1.1")
        assert code == 2 and "'%s'" % item.split(":")[0] in err and "headers" in err, (item, code, out, err)
    assert requests_seen() == before + 1, "a request with a caller's framing or Host header was sent"


@test("--download draws a progress bar when stderr is a terminal")
def _():
    master, slave = pty.openpty()
    target = os.path.join(work, "progress.bin")
    p = subprocess.run([CLI, "get", BASE + "bytes/200000", "--download", target], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=slave, timeout=60)
    os.close(slave)
    shown = b""
    try:
        while True:
            chunk = os.read(master, 4096)
            if not chunk:
                break
            shown += chunk
    except OSError:
        pass
    os.close(master)
    assert p.returncode == 0 and os.path.getsize(target) == 200000, p.returncode
    assert b"100% [" in shown and b"200.0 kB / 200.0 kB" in shown and b"saved " in shown, shown


def requests_sent():
    """The test server's count of requests, read through the CLI (that one counts too)."""
    code, out, _ = run("get", BASE + "stats")
    assert code == 0, (code, out)
    return json.loads(out)["requests"]


@test("call --body must be exactly one JSON value: text after it exits 2 naming --body, and nothing is sent")
def _():
    cfg = write("body-config.json", {"baseURL": BASE, "auth": {"bearer": "body-secret"},
                                     "endpoints": {"send": {"path": "echo", "method": "POST"}}})
    injected = os.path.join(work, "body-injected.bin")
    bodies = ('{"a":1},"path":"http://127.0.0.1:1/x","isFullPath":true',
              '{"a":1},"downloadTo":%s' % json.dumps(injected), '{"a":1} {"b":2}', '', '{"a":1')
    before = requests_sent()
    for body in bodies:
        for given in (body, "@" + write("body-injection.json", body)):
            code, out, err = run("call", "send", "--config", cfg, "--body", given)
            assert code == 2 and out == "" and "--body" in err and "one JSON value" in err, (given, code, out, err)
    assert requests_sent() == before + 1 and not os.path.exists(injected), "an invalid --body was sent"
    for given in ('{"a": [1, 2.50]}', "@" + write("body-valid.json", '\n{"a": [1, 2.50]}\n')):
        code, out, err = run("call", "send", "--config", cfg, "--body", given)
        assert code == 0 and json.loads(json.loads(out)["body"]) == {"a": [1, 2.5]}, (given, code, out, err)


@test("--download over an existing 0600 file keeps the data from others while it arrives, not only after")
def _():
    target = write("dl-private.bin", b"old")
    os.chmod(target, 0o600)
    p = subprocess.Popen([CLI, "get", BASE + "stream-bytes/300000?chunk=3000&delay_ms=10", "-o", target],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work,
                         preexec_fn=lambda: os.umask(0o022))
    modes, deadline = set(), time.time() + 30
    while p.poll() is None and time.time() < deadline:
        for name in os.listdir(work):
            if name.startswith(".dl-private.bin.part-"):
                try:
                    modes.add(os.stat(os.path.join(work, name)).st_mode & 0o777)
                except FileNotFoundError:  # renamed meanwhile
                    pass
        time.sleep(0.01)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0 and out == b"", (p.returncode, out, err)
    assert modes == {0o600}, [oct(m) for m in modes]  # seen while it ran, and never wider
    assert os.path.getsize(target) == 300000 and os.stat(target).st_mode & 0o777 == 0o600, oct(os.stat(target).st_mode)


@test("standard output that cannot be written exits 23 naming it (a full disk, a closed descriptor); a pipe closed early still ends the CLI by SIGPIPE")
def _():
    for args in (("get", BASE + "bytes/100000"), ("get", BASE + "json"), ("--version",)):
        with open("/dev/full", "w") as full:
            p = subprocess.run([CLI, *args], stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE,
                               cwd=work, timeout=60)
        assert p.returncode == 23 and b"standard output" in p.stderr, (args, p.returncode, p.stderr)
    p = subprocess.run([CLI, "get", BASE + "json"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, cwd=work, timeout=60, preexec_fn=lambda: os.close(1))
    assert p.returncode == 23 and b"standard output" in p.stderr, (p.returncode, p.stderr)
    p = subprocess.Popen([CLI, "get", BASE + "bytes/2000000"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=work)
    assert len(p.stdout.read(10)) == 10
    p.stdout.close()   # as `| head -c 10` does
    assert p.wait(timeout=60) == -signal.SIGPIPE, p.returncode


@test("a JSON body of null prints null; an empty body, a 204 and HEAD print nothing")
def _():
    code, out, err = run("get", BASE + "typed?type=application/json&body=null")
    assert code == 0 and out == "null\n", (code, out, err)
    for path in ("empty", "status/204", "typed?type=application/json&body="):
        code, out, err = run("get", BASE + path)
        assert code == 0 and out == "" and err == "", (path, code, out, err)
    # An empty body that says JSON (a DELETE's, a 201's): nothing to print, not a failure.
    code, out, err = run("get", BASE + "typed?type=application/json&body=", "-i")
    assert code == 0 and out.startswith("HTTP/1.1 200\n") and "content-length: 0\n" in out, (code, out, err)
    code, out, err = run("get", BASE + "typed?type=application/json&body=&status=404", "--check-status")
    assert code == 4 and out == "", (code, out, err)
    code, out, err = run("head", BASE + "json")
    assert code == 0 and out.startswith("HTTP/1.1 200\n") and out.endswith("\n\n"), (code, out, err)
    code, out, err = run("request", write("head.json", {"path": "json", "method": "HEAD"}), "--config", CONFIG)
    assert code == 0 and out == "", (code, out, err)


@test("a body that claims JSON but does not parse is printed as it came and exits 1 naming why; -i shows the head too")
def _():
    cases = (("notjson", "this is not json", "invalid"),
             ("typed?type=application/json&body=%7B%22a%22:1,%22a%22:2%7D", '{"a":1,"a":2}', "duplicate key"),
             ("typed?type=application/json&body=%7B%22n%22:1e400%7D", '{"n":1e400}', "out of range"))
    for path, body, why in cases:
        code, out, err = run("get", BASE + path)
        assert code == 1 and out == body and "parsing" in err and why in err, (path, code, out, err)
    code, out, err = run("get", BASE + "notjson", "-i")
    assert code == 1 and out.startswith("HTTP/1.1 200\n") and out.endswith("\n\nthis is not json"), (code, out, err)


@test("a member name holding NUL (\\u0000) stays whole: printed as received, sent as written by := items")
def _():
    text = '{"a\\u0000x":1,"a\\u0000y":2}'
    code, out, err = run("get", BASE + "typed?type=application/json&body=" + quote(text), "--no-pretty")
    assert code == 0 and out == text + "\n", (code, out, err)
    sent = echo("post", BASE + "echo", "o:=" + text, "o[a]=3")
    assert json.loads(sent["body"]) == {"o": {"a\0x": 1, "a\0y": 2, "a": "3"}}, sent["body"]


@test("request items take time in proportion to their number (50,000 query or form items); over 1000 header items exit 2 naming the item")
def _():
    queries = ["q%d==1" % i for i in range(50000)]
    start = time.time()
    code, out, err = run("get", BASE + "echo", *queries, "Host:")  # refused after the items are merged, never sent
    assert code == 2 and "'Host:'" in err and time.time() - start < 3, (code, err, time.time() - start)
    fields = ["f%d=1" % i for i in range(50000)]
    start = time.time()
    code, out, err = run("post", BASE + "sink", "-f", *fields)
    assert code == 0 and json.loads(out)["bytes"] == len("&".join(fields)), (code, out, err)
    assert time.time() - start < 3, time.time() - start
    before = requests_sent()
    headers = ["X-H%d:1" % i for i in range(1001)]
    code, out, err = run("get", BASE + "echo", *headers)
    assert code == 2 and "'X-H1000:1'" in err and "at most 1000" in err, (code, out, err)
    assert requests_sent() == before + 1, "a request with over 1000 header items was sent"


@test("exit statuses tell failures apart: DNS 6, refused 7, timeout 28, TLS 35, URL 3")
def _():
    code, _, err = run("get", "http://nonexistent.invalid/x", "--timeout", "20")
    assert code == 6 and "resolve" in err, (code, err)
    code, _, err = run("get", "http://127.0.0.1:1/x")
    assert code == 7, (code, err)
    code, _, err = run("get", BASE + "delay/3000", "--timeout", "0.3")
    assert code == 28 and "timeout" in err, (code, err)
    code, _, err = run("get", BASE.replace("http://", "https://") + "json")  # TLS to a plain HTTP server
    assert code == 35 and "tls" in err, (code, err)
    code, _, err = run("get", "http://exa mple.com/")
    assert code in (2, 3), (code, err)
    code, _, err = run("get", BASE + "status/503", "--check-status")
    assert code == 5 and "503" in err, (code, err)
    code, out, err = run("get", BASE + "redirect/30")
    assert code == 47, (code, out, err)  # libcurl's too-many-redirects code, as curl exits


@test("a certificate that does not verify exits 60; -k, --verify and --cert as curl and httpie take them")
def _():
    if not shutil.which("openssl"):
        raise AssertionError("openssl is needed to make the test certificate")
    certs = tempfile.mkdtemp(prefix="netlayer-cli-tls-")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", "self.key", "-out", "self.pem", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], cwd=certs, check=True, capture_output=True)
    pem, key = os.path.join(certs, "self.pem"), os.path.join(certs, "self.key")

    def serve(*extra):
        server = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "..", "server", "tls_server.py"),
                                   "--cert", pem, "--key", key, "--exit-on-stdin-eof", *extra],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = server.stdout.readline()
        assert line.startswith("PORT "), line
        return server, "https://127.0.0.1:%s/json" % line.split()[1]

    servers = []
    try:
        server, url = serve()
        servers.append(server)
        code, _, err = run("get", url)
        assert code == 60 and "certificate" in err, (code, err)
        for options in (["-k"], ["--insecure"], ["--verify=no"], ["--verify", "False"], ["-vk"], ["--verify", pem]):
            code, out, err = run("get", url, *options)
            assert code == 0 and json.loads(out)["hello"] == "world", (options, code, out, err)
        code, _, err = run("get", url, "-vk")
        assert "* warning: TLS certificate verification is off" in err, err  # -v says so
        # --verify=yes checks even when the config turned checking off; -k wins over the config too
        config = write("tls-off.json", {"tls": {"verify": False}})
        code, _, err = run("get", url, "--config", config, "--verify=yes")
        assert code == 60, (code, err)
        config = write("tls-ca.json", {"tls": {"caFile": "/nonexistent.pem"}})
        code, _, err = run("get", url, "--config", config, "--verify", pem)
        assert code == 0, (code, err)
        for options, named in ((["--verify", "/nonexistent.pem"], "caFile"), (["--verify", "/dev/zero"], "caFile"),
                               (["--verify="], "--verify needs yes, no or the path of a CA bundle"),
                               (["-k", "--cert", "/nonexistent.pem"], "certFile"),
                               (["-k", "--cert-key", key], "--cert-key " + key + " needs --cert")):
            code, _, err = run("get", url, *options)
            assert code == 2 and named in err, (options, code, err)
        # ws takes them too (a refused connection, not a usage error)
        for options in (["-k"], ["--verify=no"], ["--verify", pem, "--cert", pem, "--cert-key", key]):
            code, _, err = run("ws", "wss://127.0.0.1:1/echo", "--ignore-stdin", *options)
            assert code == 7, (options, code, err)
        # a server that asks for a client certificate gets the one --cert gives
        server, url = serve("--client-ca", pem)
        servers.append(server)
        code, out, err = run("get", url, "--verify", pem, "--cert", pem, "--cert-key=" + key)
        assert code == 0 and json.loads(out)["clientCN"] == "127.0.0.1", (code, out, err)
        code, _, err = run("get", url, "--verify", pem)
        assert code != 0, (code, err)
    finally:
        for server in servers:
            server.stdin.close()
            server.wait(timeout=10)
        shutil.rmtree(certs, ignore_errors=True)


@test("SIGHUP, SIGQUIT and SIGPIPE during --download cancel it: no partial file is left, status 128 + the signal")
def _():
    for sent in (signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE):
        folder = os.path.join(work, "dl-signal-%d" % sent)
        os.makedirs(folder, exist_ok=True)
        p = subprocess.Popen([CLI, "get", BASE + "delay/20000", "--download", os.path.join(folder, "x.bin")],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        p.send_signal(sent)
        out, err = p.communicate(timeout=10)
        assert p.returncode == 128 + sent and "cancelled" in err, (sent, p.returncode, err)
        assert os.listdir(folder) == [], (sent, os.listdir(folder))


@test("Ctrl-C cancels the request and exits 130; SIGTERM cancels it too and exits 143, as shells report it")
def _():
    for sent, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        p = subprocess.Popen([CLI, "get", BASE + "delay/20000"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        start = time.monotonic()
        p.send_signal(sent)
        out, err = p.communicate(timeout=10)
        assert p.returncode == status and "cancelled" in err and time.monotonic() - start < 5, (sent, p.returncode, err)


@test("hostile input exits 2 with a message naming the problem, and never crashes")
def _():
    cases = [
        (("post", BASE + "echo", "bio=@" + os.path.join(work, "missing.txt")), "missing.txt"),
        (("post", BASE + "echo", "@" + os.path.join(work, "missing.bin")), "missing.bin"),
        (("post", BASE + "echo", "year:=20x1"), "not valid JSON"),
        (("post", BASE + "echo", "doc:=@" + write("broken.json", "{\"a\":")), "not valid JSON"),
        (("get", BASE + "echo", "X-Evil:a\r\nInjected: yes"), "X-Evil"),
        (("get", BASE + "echo", "X-Evil:a\nb"), "X-Evil"),
        (("get", BASE + "echo", "--bogus"), "unknown option --bogus"),
        (("get", BASE + "echo", "justaword"), "not a request item"),
        (("get", BASE + "echo", ":value"), "header name before the separator is empty"),
        (("post", BASE + "echo", "bio=@" + write("latin1.txt", b"caf\xe9")), "the file is not UTF-8 text"),
        (("get", BASE + "echo", "X;value"), "'Header;' sends an empty header and takes no value"),
        (("get", BASE + "echo", "a=1"), "GET"),
        (("post", BASE + "echo", "a=1", "@" + write("x.bin", "x")), "cannot be mixed"),
        (("get", BASE + "echo", "--timeout", "soon"), "--timeout"),
        # Numbers strtod reads but a JSON document cannot hold, or not positive and finite.
        (("get", BASE + "echo", "--timeout", "inf"), "--timeout needs a positive number of seconds, not 'inf'"),
        (("get", BASE + "echo", "--timeout=0x10"), "--timeout needs a positive number of seconds, not '0x10'"),
        (("get", BASE + "echo", "--timeout", "1e999"), "--timeout needs a positive number of seconds"),
        (("get", BASE + "echo", "--timeout", ".5"), "--timeout needs a positive number of seconds"),
        (("get", BASE + "echo", "--timeout", "0"), "--timeout needs a positive number of seconds"),
        (("ws", "ws://127.0.0.1:1/", "--ping-interval", "nan"), "--ping-interval needs a positive number of seconds"),
        (("ws", "ws://127.0.0.1:1/", "--ping-interval=-1"), "--ping-interval needs a positive number of seconds"),
        (("get", BASE + "echo", "--ping-interval", "1"), "unknown option --ping-interval"),
        (("get", BASE + "echo", "--download"), "--download needs a value"),
        (("get",), "needs a URL"),
        (("fetch", BASE), "unknown command 'fetch'"),
        (("call", "movie", "id=1", "--config", os.path.join(work, "nope.json")), "nope.json"),
        (("call", "movie", "--config", CONFIG), "id"),
    ]
    for args, needle in cases:
        code, out, err = run(*args)
        assert code == 2 and needle in err, (args, code, out, err)
        assert "Traceback" not in err and code >= 0, (args, code)


@test("@file items read only regular files of a bounded size, and never block on a FIFO")
def _():
    folder = tempfile.mkdtemp(prefix="netlayer-cli-files-", dir=work)
    fifo = os.path.join(folder, "fifo")
    os.mkfifo(fifo)
    big = os.path.join(folder, "big.txt")
    with open(big, "wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)  # sparse: one byte over the limit
    cases = [
        ("f=@" + folder, "it is a directory"), ("f:=@" + folder, "it is a directory"),
        ("f=@/dev/zero", "it is a character device, not a regular file"),
        ("f:=@/dev/zero", "it is a character device, not a regular file"),
        ("f=@" + fifo, "it is a FIFO (named pipe), not a regular file"),
        ("f:=@" + fifo, "it is a FIFO (named pipe), not a regular file"),
        ("f@" + fifo, "it is a FIFO (named pipe), not a regular file"),
        ("f@" + folder, "it is a directory"), ("f@/dev/null", "it is a character device"),
        ("@" + folder, "it is a directory"),
        ("f=@" + big, "it has more than 16777216 bytes (16 MiB)"),
    ]
    for item, reason in cases:
        start = time.monotonic()
        code, out, err = run("post", BASE + "echo", item, timeout=20)
        assert code == 2 and out == "", (item, code, out, err)
        assert "item '%s'" % item in err and reason in err, (item, err)
        assert time.monotonic() - start < 10, (item, time.monotonic() - start)
    for args, reason in ((("request", "/dev/zero"), "character device"), (("request", folder), "it is a directory"),
                         (("get", BASE + "json", "--config", "/dev/zero"), "character device"),
                         (("get", BASE + "json", "--config", big), "more than 16777216 bytes")):
        code, out, err = run(*args, timeout=20)
        assert code == 2 and reason in err, (args, code, err)
    with open(big, "rb") as f:  # standard input is bounded too
        p = subprocess.run([CLI, "post", BASE + "echo"], stdin=f, capture_output=True, text=True, timeout=20,
                           preexec_fn=limit_memory)
    assert p.returncode == 2 and "cannot read standard input: it has more than 16777216 bytes" in p.stderr, (p.returncode, p.stderr)

    # A body file (@file) is streamed by the library: a FIFO goes out as its writer writes.
    writer = threading.Thread(target=lambda: open(fifo, "wb").write(b"from a fifo"), daemon=True)
    writer.start()
    doc = echo("put", BASE + "echo", "@" + fifo)
    writer.join(timeout=10)
    assert doc["body"] == "from a fifo", doc
    shutil.rmtree(folder, ignore_errors=True)


def raw_controls(shown):
    """The control characters in `shown` a terminal would act on: C0 but TAB, LF, CR; DEL;
    C1 (U+0080 to U+009F, or such a byte outside UTF-8)."""
    text = shown.decode("utf-8", errors="surrogateescape")
    return [c for c in text if (ord(c) < 0x20 and c not in "\t\n\r") or 0x7F <= ord(c) <= 0x9F
            or 0xDC80 <= ord(c) <= 0xDC9F]


@test("on a terminal, a server's control characters in text, headers and -v are shown escaped; piped, they pass")
def _():
    control_body = b"red \x1b[31mtext\x1b[0m bell\x07 del\x7f csi\xc2\x9b2J tab\tcr\r\ncaf\xc3\xa9\n"
    code, shown, _ = run_on_terminal("get", BASE + "control-bytes", "-i")
    assert code == 0, (code, shown)
    assert b"x-control: \\x1b]0;title\\x07 \\u009b2J \\x9b end\n" in shown, shown
    assert shown.endswith(b"\n\nred \\x1b[31mtext\\x1b[0m bell\\x07 del\\x7f csi\\u009b2J tab\tcr\r\ncaf\xc3\xa9\n"), shown
    assert raw_controls(shown) == [], shown

    code, shown, out = run_on_terminal("get", BASE + "control-bytes", "-v", stream="stderr")
    assert code == 0 and out == control_body, (code, out)
    # (the log event has the header's bytes as Latin-1: 0xC2 0x9B is "\u00c2\u009b" there)
    assert b"< x-control: \\x1b]0;title\\x07 " in shown and b"\\u009b2J \\u009b end\n" in shown, shown
    assert raw_controls(shown) == [], shown

    # JSON: every control character as a \u escape, on a terminal or not
    document = write("controls.json", '{"s": "\\u001b[2J\\u0007\\u007f\\u009b"}')
    code, shown, _ = run_on_terminal("post", BASE + "reflect", "@" + document)
    assert code == 0 and b'"\\u001b[2J\\u0007\\u007f\\u009b"' in shown and raw_controls(shown) == [], shown
    code, out, _ = run("post", BASE + "reflect", "@" + document)
    assert code == 0 and json.loads(out) == {"s": "\x1b[2J\x07\x7f\x9b"}, out
    code, shown, _ = run_on_terminal("get", BASE + "control-bytes", "--result", "--no-pretty")
    assert code == 0 and b'"value":"red \\u001b[31mtext' in shown and raw_controls(shown) == [], shown

    # to a pipe or a file, the bytes as they came
    code, out, _ = run("get", BASE + "control-bytes", binary=True)
    assert code == 0 and out == control_body, out
    code, out, err = run("get", BASE + "control-bytes", "-i", "-v", binary=True)
    assert code == 0 and b"x-control: \x1b]0;title\x07 \xc2\x9b2J \x9b end\n" in out and out.endswith(control_body), out
    assert b"< x-control: \x1b]0;title\x07 " in err and b"\xc2\x9b end\n" in err, err


@test("--help lists items, options, exit statuses and examples; COMMAND --help too")
def _():
    code, out, _ = run("--help")
    for needle in ("name==value", "field:=json", "--download", "--check-status", "--result", "-v, --verbose",
                   "28 timeout", "6 DNS failure", "Examples:", "netlayer post ", "NETLAYER_LOG"):
        assert needle in out, needle
    assert code == 0
    for command, needle in (("get", "netlayer get "), ("call", "netlayer call movie"), ("request", "netlayer request -")):
        code, out, _ = run(command, "--help")
        assert code == 0 and needle in out and "usage: " in out, (command, out)
    code, out, _ = run("help", "call")
    assert code == 0 and "netlayer call" in out


@test("NETLAYER_LOG=info sends the library's log events to stderr")
def _():
    env = dict(os.environ, NETLAYER_LOG="info")
    code, out, err = run("get", BASE + "json", env=env)
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert code == 0 and [e["event"] for e in events] == ["request", "response"], err
    env["NETLAYER_LOG"] = "off"
    code, out, err = run("get", BASE + "json", env=env)
    assert code == 0 and err == "", err


# ---- httpie's request-item grammar (Tests/cli/httpie_cases.py holds httpie's own results) ----

for _name, _text in httpie_cases.FILES.items():
    write(_name, _text)


def httpie(*args):
    """Runs httpie's `http --offline` (NETLAYER_TEST_HTTPIE) in the work folder."""
    return subprocess.run([HTTPIE, "--offline", "--ignore-stdin", *args], cwd=work, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


def in_order(value):
    """JSON text with members in their order: equal only when order is equal too."""
    return json.dumps(value)


def header_lines(doc, name):
    """The values of the request's header lines named `name` (any case), as /echo saw them."""
    return [v for n, v in doc["headerLines"] if n.lower() == name.lower()]


@test("nested JSON items make the body httpie makes (httpie's documentation and test table)")
def _():
    failures = []
    for items, expected in httpie_cases.JSON_CASES:
        code, out, err = run("post", BASE + "echo", *items)
        if code != 0:
            failures.append((items, code, err))
            continue
        doc = json.loads(out)
        if in_order(json.loads(doc["body"])) != in_order(expected):
            failures.append((items, doc["body"]))
        elif (header_lines(doc, "Content-Type"), header_lines(doc, "Accept")) != (
                ["application/json"], ["application/json, */*;q=0.5"]):
            failures.append((items, doc["headerLines"]))
        if HTTPIE:
            p = httpie("--print=B", "POST", "http://example.invalid/", *items)
            if p.returncode != 0 or in_order(json.loads(p.stdout)) != in_order(expected):
                failures.append(("httpie", items, p.returncode, p.stdout, p.stderr))
    assert not failures, failures


@test("nested JSON mistakes (syntax, type conflicts, negative indexes) exit 2 naming the item, as httpie refuses them")
def _():
    for case in httpie_cases.JSON_ERRORS:
        items, refused = case if isinstance(case, tuple) else (case, case[-1])
        code, out, err = run("post", BASE + "echo", *items)
        assert code == 2 and out == "" and "netlayer: item '%s': " % refused in err, (items, code, out, err)
        assert "Traceback" not in err, err
        if HTTPIE:
            assert httpie("--print=B", "POST", "http://example.invalid/", *items).returncode != 0, items
    code, _, err = run("post", BASE + "echo", "foo=1", "foo[key]:=2")
    assert "type conflict: 'foo' is a string, but [key] needs an object\n    foo[key]\n       ^^^^^" in err, err
    code, _, err = run("post", BASE + "echo", "A[text][:=1")
    assert "expected a text, a number or ']'\n    A[text][\n            ^" in err, err
    code, _, err = run("post", BASE + "echo", "[]:=2", "x=y")
    assert "type conflict: the top level is an array, but the key 'x' needs an object" in err, err


@test("nested JSON beyond httpie: a null becomes a container, indexes and depth are bounded")
def _():
    # httpie 3.2.4 sends {"b": "1"} for these, dropping every earlier item (a bug); an
    # element that is null already becomes the container in httpie too
    doc = echo("post", BASE + "echo", "z=1", "a:=null", "a[b]=1", "c[0]:=null", "c[0][]=2")
    assert json.loads(doc["body"]) == {"z": "1", "a": {"b": "1"}, "c": [["2"]]}, doc["body"]
    doc = echo("post", BASE + "echo", "big[65535]:=1")
    assert len(json.loads(doc["body"])["big"]) == 65536, doc["bodyLength"]
    for item, needle in (("big[65536]:=1", "an index is at most 65535"),
                         ("big[99999999999999999999999]:=1", "an index is at most 65535"),
                         ("a" + "[]" * 300 + ":=1", "more than 255 levels deep"),
                         ("a[]:=[1", "not valid JSON after ':='"),
                         # what the library refuses, named by the item instead of a byte
                         # of the endpoint document the CLI builds
                         ('a:={"k": 1, "x": {"k": 1}, "k": 2}', "item 'a:={\"k\": 1, \"x\""),
                         ('a:={"k": 1, "x": {"k": 1}, "k": 2}', 'duplicate key "k"'),
                         ("a:=1e999", "item 'a:=1e999': not valid JSON after ':=' (number out of range"),
                         ("a[]:=[1, -1E+400]", "number out of range")):
        code, out, err = run("post", BASE + "echo", item)
        assert code == 2 and out == "" and needle in err, (item[:40], code, err)
    with tempfile.TemporaryDirectory() as folder:  # many members: found by sorting, at once
        many = os.path.join(folder, "many.json")
        with open(many, "w") as f:
            f.write("{" + ",".join(f'"k{i}": {i}' for i in range(100_000)) + ', "k7": 0}')
        code, out, err = run("post", BASE + "echo", "a:=@" + many)
        assert code == 2 and 'duplicate key "k7"' in err, (code, err)
    doc = echo("post", BASE + "echo", 'a:={"k": 1, "K": 2, "k\\u0000": 3}', "b:=1e-999")
    assert json.loads(doc["body"]) == {"a": {"k": 1, "K": 2, "k\u0000": 3}, "b": 0.0}, doc["body"]


@test("-f sends every value of a repeated field (a=1&a=2), names as written, as httpie does")
def _():
    for items, expected in httpie_cases.FORM_CASES:
        doc = echo("post", BASE + "echo", "-f", *items)
        assert parse_qsl(doc["body"], keep_blank_values=True) == expected, (items, doc["body"])
        assert header_lines(doc, "Content-Type") == ["application/x-www-form-urlencoded"], doc["headerLines"]
        if HTTPIE:
            p = httpie("--print=B", "-f", "POST", "http://example.invalid/", *items)
            assert parse_qsl(p.stdout, keep_blank_values=True) == expected, (items, p.stdout)
    for items in httpie_cases.FORM_ERRORS:
        code, out, err = run("post", BASE + "echo", "-f", *items)
        assert code == 2 and "a form field is text" in err, (items, code, err)
        if HTTPIE:
            assert httpie("--print=B", "-f", "POST", "http://example.invalid/", *items).returncode != 0, items
    # := numbers and booleans go as their JSON text (httpie writes Python's: True, 1.1)
    doc = echo("post", BASE + "echo", "-f", "b:=true", "n:=1.10")
    assert doc["body"] == "b=true&n=1.10", doc["body"]


@test("header items: Header; empty, Header: left out, repeats joined, :@file; as httpie sends them")
def _():
    for items, expected in httpie_cases.HEADER_CASES:
        doc = echo("get", BASE + "echo", *items)
        for name, value in expected.items():
            lines = header_lines(doc, name)
            assert lines == ([] if value is None else [value]), (items, name, doc["headerLines"])
        if HTTPIE:
            p = httpie("--print=H", "GET", "http://example.invalid/", *items)
            sent = {}
            for line in p.stdout.splitlines()[1:]:
                name, _, value = line.partition(":")
                sent.setdefault(name.lower(), []).append(value.strip())
            for name, value in expected.items():
                joined = None if name not in sent else ("; " if name == "cookie" else ", ").join(v for v in sent[name] if v)
                assert joined == value, ("httpie", items, p.stdout)


@test("query items: repeated names, an empty name, escapes and ==@file, as httpie sends them")
def _():
    for items, expected in httpie_cases.QUERY_CASES:
        doc = echo("get", BASE + "echo", *items)
        assert parse_qsl(doc["query"], keep_blank_values=True) == expected, (items, doc["query"])
        if HTTPIE:
            p = httpie("--print=H", "GET", "http://example.invalid/", *items)
            target = p.stdout.split(" ")[1]
            assert parse_qsl(target.partition("?")[2], keep_blank_values=True) == expected, ("httpie", items, target)


@test("Header: refuses what netlayer cannot leave out, naming the item; Authorization: drops the config's auth")
def _():
    with_headers = write("with-headers.json", {"baseURL": BASE, "headers": {"X-Team": "core", "Accept": "text/plain"},
                                               "auth": {"bearer": "config-token"}})
    for args, item, needle in ((("get", BASE + "echo", "Accept:"), "Accept:", "'Accept;' sends it empty"),
                               (("post", BASE + "echo", "a=1", "Content-Type:"), "Content-Type:",
                                "a body always goes with a Content-Type"),
                               (("get", BASE + "echo", "Host:"), "Host:", "cannot leave out Host"),
                               (("get", "echo", "X-Team:", "--config", with_headers), "X-Team:",
                                "the config sends X-Team")):
        code, out, err = run(*args)
        assert code == 2 and out == "" and "item '%s'" % item in err and needle in err, (args, code, err)
    doc = echo("get", "echo", "Authorization:", "--config", with_headers)
    assert header_lines(doc, "Authorization") == [] and header_lines(doc, "X-Team") == ["core"], doc["headerLines"]
    doc = echo("get", "echo", "X-Team;", "--config", with_headers)
    assert header_lines(doc, "X-Team") == [""] and header_lines(doc, "Authorization") == ["Bearer config-token"], doc
    doc = echo("post", "echo", "a=1", "--config", with_headers)   # the config's Accept stays
    assert header_lines(doc, "Accept") == ["text/plain"], doc["headerLines"]
    doc = echo("get", BASE + "echo", "Content-Type:")              # no body: nothing to leave out
    assert header_lines(doc, "Content-Type") == [], doc["headerLines"]


@test("multipart: name@file;type=MIME sets the part's type, := numbers are text parts")
def _():
    doc = echo("post", BASE + "echo", "n:=7", "cv@" + os.path.join(work, "text.txt") + ";type=text/markdown")
    assert doc["headers"]["content-type"].startswith("multipart/form-data"), doc["headers"]
    assert 'name="cv"; filename="text.txt"\r\nContent-Type: text/markdown' in doc["body"], doc["body"]
    assert 'name="n"\r\n\r\n7\r\n' in doc["body"], doc["body"]


@test("-a user:password sends basic auth through the endpoint's auth key; --auth-type digest and bearer")
def _():
    for args, expected in (
            (("-a", "ann:pw"), "Basic " + base64.b64encode(b"ann:pw").decode()),
            (("--auth=ann:p:w",), "Basic " + base64.b64encode(b"ann:p:w").decode()),
            (("-a", "ann:"), "Basic " + base64.b64encode(b"ann:").decode()),
            (("-A", "bearer", "-a", "tok.en-1"), "Bearer tok.en-1"),
            (("--auth-type=bearer", "--auth", "a:b"), "Bearer a:b"),
            (("Authorization:Bearer other", "-a", "ann:pw"), "Basic " + base64.b64encode(b"ann:pw").decode())):
        doc = echo("get", BASE + "echo", *args)
        assert header_lines(doc, "Authorization") == [expected], (args, doc["headerLines"])
        if HTTPIE:
            p = httpie("--print=H", "GET", "http://example.invalid/", *args)
            assert "Authorization: %s\n" % expected in p.stdout, ("httpie", args, p.stdout)
    code, out, _ = run("get", BASE + "digest-auth/ann/pw", "-a", "ann:pw", "--auth-type", "digest")
    assert code == 0 and json.loads(out) == {"user": "ann"}, (code, out)
    code, out, _ = run("get", BASE + "digest-auth/ann/pw", "-a", "ann:wrong", "-A", "digest", "--check-status")
    assert code == 4, (code, out)
    # call and request: -a replaces the config's auth
    cfg = write("auth-config.json", {"baseURL": BASE, "auth": {"bearer": "config-token"},
                                     "endpoints": {"echo": {"path": "echo"}}})
    for args in (("call", "echo", "--config", cfg), ("request", write("echo.json", {"path": "echo"}), "--config", cfg)):
        doc = echo(*args)
        assert header_lines(doc, "Authorization") == ["Bearer config-token"], (args, doc["headerLines"])
        doc = echo(*args, "-a", "ann:pw")
        assert header_lines(doc, "Authorization") == ["Basic " + base64.b64encode(b"ann:pw").decode()], (args, doc)
    # the library's rules: the password is redacted in -v, refused where HTTP cannot carry it
    code, out, err = run("get", BASE + "json", "-v", "-a", "ann:s3cretpw")
    assert code == 0 and "s3cretpw" not in err and base64.b64encode(b"ann:s3cretpw").decode() not in err, err
    for args, needle in ((("-a", "a\\:nn:pw"), "auth"), (("-A", "ntlm", "-a", "a:b"), "basic, digest or bearer"),
                         (("-A", "bearer",), "needs -a/--auth"), (("-a",), "-a needs a value"),
                         (("-A", "bearer", "-a", "two words"), "auth")):
        code, out, err = run("get", BASE + "echo", *args)
        assert code == 2 and needle in err, (args, code, err)


@test("-a credentials do not follow a redirect to another origin; to the same origin they do")
def _():
    seen = []

    class Landing(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Landing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        landing = "http://127.0.0.1:%d/landing" % server.server_port
        code, out, err = run("get", BASE + "redirect-to", "url==" + landing, "-a", "ann:pw")
        assert code == 0 and json.loads(out) == {} and seen == [None], (code, out, err, seen)
    finally:
        server.shutdown()
        server.server_close()
    code, out, _ = run("get", BASE + "redirect-to", "url==/basic-echo", "-a", "ann:pw")
    assert code == 0 and json.loads(out) == {"user": "ann", "password": "pw"}, (code, out)


@test("a large JSON response is held about once as text, not as a tree of nodes per value")
def _():
    # 40 MB of small numbers: as a tree, dozens of bytes per byte of the body.
    body = b"[" + b",".join([b"1"] * 20_000_000) + b"]"

    class Large(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Large)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def small_memory():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB: 25 bytes per byte of the body

    try:
        url = "http://127.0.0.1:%d/large" % server.server_port
        for extra in ((), ("--pretty",)):
            p = subprocess.run([CLI, "get", url] + list(extra), stdin=subprocess.DEVNULL, capture_output=True,
                               preexec_fn=small_memory, timeout=120)
            assert p.returncode == 0, (extra, p.returncode, p.stderr[-400:])
            printed = p.stdout.replace(b"\n", b"").replace(b" ", b"")
            assert printed == body, (extra, len(p.stdout))
    finally:
        server.shutdown()
        server.server_close()


def run_with_prompt(args, answer):
    """Runs the CLI with a pseudo-terminal as its controlling terminal and standard input;
    once the prompt shows, types `answer` (bytes). Returns the status, what the terminal
    showed, standard output, and whether the terminal echoes again afterwards."""
    master, slave = pty.openpty()
    slave_name = os.ttyname(slave)

    def own_terminal():
        limit_memory()
        os.setsid()
        os.close(os.open(slave_name, os.O_RDWR))   # a session leader opening a terminal makes it its own

    p = subprocess.Popen([CLI, *args], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work,
                         preexec_fn=own_terminal)
    shown, deadline = b"", time.monotonic() + 20
    while b"password for" not in shown and p.poll() is None and time.monotonic() < deadline:
        if select.select([master], [], [], 0.2)[0]:
            shown += os.read(master, 4096)
    time.sleep(0.1)
    os.write(master, answer)
    try:
        out, _ = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    echoes = bool(termios.tcgetattr(slave)[3] & termios.ECHO)
    os.close(slave)
    try:
        while True:
            chunk = os.read(master, 4096)
            if not chunk:
                break
            shown += chunk
    except OSError:   # EIO once the terminal has no writer left
        pass
    os.close(master)
    return p.returncode, shown, out, echoes


@test("-a user asks for the password on the terminal without echo; without a terminal it is refused, never waits")
def _():
    code, shown, out, echoes = run_with_prompt(("get", BASE + "basic-echo", "-a", "ann"), b"typed-secret\n")
    assert code == 0 and json.loads(out) == {"user": "ann", "password": "typed-secret"}, (code, out, shown)
    port = os.environ["NETLAYER_TEST_PORT"]
    assert b"netlayer: password for ann@127.0.0.1:%s: " % port.encode() in shown, shown
    assert b"typed-secret" not in shown and echoes, (shown, echoes)
    code, shown, out, echoes = run_with_prompt(("get", BASE + "basic-echo", "-a", "ann"), b"\x03")
    assert code == 130 and out == b"" and echoes, (code, out, shown, echoes)
    start = time.monotonic()
    code, out, err = run("get", BASE + "basic-echo", "-a", "ann", timeout=20)
    assert code == 2 and "standard input is not a terminal" in err and time.monotonic() - start < 10, (code, err)
    code, out, err = run("get", BASE + "basic-echo", "-a", "ann", "--ignore-stdin")
    assert code == 2 and "--ignore-stdin" in err, (code, err)


# ---- netlayer ws: against the websockets package's echo server and a raw-socket one ----------

WS_SERVERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server", "ws_servers.py")


def start_ws_server(kind):
    """Starts ws_servers.py KIND on a free port; its base URL ("ws://127.0.0.1:PORT/").
    It stops when this process ends (its standard input closes)."""
    port_file = os.path.join(work, "ws-%s.port" % kind)
    server = subprocess.Popen([sys.executable, WS_SERVERS, kind, "--port", "0", "--port-file", port_file,
                               "--exit-on-stdin-eof"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while not os.path.exists(port_file):
        assert server.poll() is None and time.monotonic() < deadline, "ws_servers.py %s did not start" % kind
        time.sleep(0.02)
    ws_servers.append(server)
    return "ws://127.0.0.1:%d/" % int(open(port_file).read())


ws_servers = []
WS = start_ws_server("echo")
WS_HOSTILE = start_ws_server("hostile")


class Session:
    """`netlayer ws ARGS...` with standard input and output as pipes, read line by line."""

    def __init__(self, *args):
        # Unbuffered: select() then sees every line that is not read yet.
        self.p = subprocess.Popen([CLI, "ws", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd=work, preexec_fn=limit_memory, bufsize=0)

    def send(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def line(self, seconds=10):
        ready, _, _ = select.select([self.p.stdout], [], [], seconds)
        assert ready, "no line within %s s" % seconds
        return self.p.stdout.readline().decode("utf-8")

    def end(self, seconds=15):
        """Closes standard input; the status, the rest of standard output, standard error."""
        out, err = self.p.communicate(timeout=seconds)
        return self.p.returncode, out.decode("utf-8"), err.decode("utf-8")


@test("ws relays each line of standard input as a text message and prints each message on a line")
def _():
    s = Session(WS + "echo")
    s.send(b"hello\n")
    assert s.line() == "hello\n"
    s.send("w\u00f6rld \u2713\r\n".encode())   # a CRLF line: the CR is not part of the message
    assert s.line() == "w\u00f6rld \u2713\n"
    s.send(b"\n")                                # an empty line: an empty message
    assert s.line() == "\n"
    start = time.monotonic()
    code, out, err = s.end()
    assert code == 0 and out == "" and err == "", (code, out, err)
    assert time.monotonic() - start < 5   # closed with 1000, answered at once


@test("ws prints a binary message as a base64 note, text sent in fragments whole")
def _():
    s = Session(WS + "fragments")
    assert s.line() == "hello world\n"
    assert s.line() == "[binary, 5 bytes, base64] AAECAwQ=\n"
    code, out, err = s.end()
    assert code == 0, (code, out, err)
    s = Session(WS + "large", "bytes==70000")
    line = s.line()
    head, data = line.rstrip("\n").split("] ", 1)
    assert head == "[binary, 70000 bytes, base64", head
    assert base64.b64decode(data) == bytes(i % 251 for i in range(70000))
    assert s.end()[0] == 0


@test("ws: items give the handshake's query and headers, -a its credentials; -v shows the lines sent, redacted")
def _():
    s = Session(WS + "headers", "X-Trace:t1", "Cookie:c=1", "-H", "X-Curl-Style:  h1", "-a", "ann:s3cret-pw", "-v")
    seen = json.loads(s.line())
    code, out, err = s.end()
    assert code == 0, (code, out, err)
    assert seen["x-trace"] == "t1" and seen["cookie"] == "c=1" and seen["x-curl-style"] == "h1", seen
    assert seen["authorization"] == "Basic " + base64.b64encode(b"ann:s3cret-pw").decode(), seen
    # the handshake as it went out, as for any request's -v
    assert "* GET http://127.0.0.1:" in err and "\n> GET /headers HTTP/1.1\n" in err, err
    for line in ("> Upgrade: websocket", "> Sec-WebSocket-Version: 13", "> X-Trace: t1", "> X-Curl-Style: h1",
                 "> Authorization: <redacted>", "> Cookie: <redacted>"):
        assert "\n" + line + "\n" in err, (line, err)
    assert "s3cret" not in err and "c=1" not in err, err
    assert "< HTTP 101" in err and "< sec-websocket-accept: " in err, err
    code, out, err = run("ws", WS + "close", "code==4001", "reason==see you")
    assert code == 1 and out == "", (code, out, err)
    assert "the server closed the WebSocket with 4001: see you" in err, err
    code, out, err = run("ws", WS + "close", "code==1000")
    assert (code, out, err) == (0, "", ""), (code, out, err)
    s = Session(WS + "protocol", "--protocol", "nope", "--protocol=superchat")
    assert s.line() == "superchat\n"
    assert s.end()[0] == 0


@test("ws without a scheme is ws://, and a path is under --config's baseURL")
def _():
    config = write("ws-config.json", {"baseURL": WS.replace("ws://", "http://")})
    s = Session("echo", "--config", config)
    s.send(b"via config\n")
    assert s.line() == "via config\n"
    assert s.end()[0] == 0
    s = Session(WS[len("ws://"):] + "echo")
    s.send(b"no scheme\n")
    assert s.line() == "no scheme\n"
    assert s.end()[0] == 0


@test("ws --ping-interval pings a quiet server, and a server that never answers ends it with 28")
def _():
    # The raw server reports each message the client sends, a ping being one.
    s = Session(WS_HOSTILE + "frames", "--ping-interval", "0.2")
    assert s.line() == "[[1, 9, 1, 0]]\n"
    code, out, err = s.end()
    assert code == 0, (code, out, err)
    start = time.monotonic()
    code, out, err = run("ws", WS_HOSTILE + "no-read", "--ping-interval=0.2", "--ignore-stdin", timeout=10)
    assert code == 28 and "pingInterval" in err, (code, out, err)
    assert time.monotonic() - start < 5


@test("ws --ignore-stdin listens until the server closes; SIGTERM ends it with 143 (Ctrl-C: 130)")
def _():
    p = subprocess.Popen([CLI, "ws", WS + "silent", "--ignore-stdin"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work, preexec_fn=limit_memory)
    time.sleep(0.5)   # standard input at its end, ignored: still listening
    assert p.poll() is None
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=10)
    assert p.returncode == 143, (p.returncode, out, err)
    code, out, err = run("ws", WS + "close", "code==1001", "--ignore-stdin", timeout=10)
    assert (code, out, err) == (0, "", ""), (code, out, err)


def socket_port_closed():
    """A loopback port nothing listens on."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@test("ws failures exit with the request statuses: 4/5 for a refused handshake, 7, 8, 28")
def _():
    code, out, err = run("ws", WS_HOSTILE + "status-403")
    assert code == 4 and "403" in err, (code, err)
    code, out, err = run("ws", WS_HOSTILE + "bad-accept")
    assert code == 8 and "Sec-WebSocket-Accept" in err, (code, err)
    s = Session(WS_HOSTILE + "eof")   # a message, then the server hangs up without a close frame
    assert s.line() == "bye\n"
    code, out, err = s.end()
    assert code == 8 and "without a close frame" in err, (code, err)
    start = time.monotonic()
    code, out, err = run("ws", WS_HOSTILE + "no-answer", "--timeout", "0.5")
    assert code == 28 and time.monotonic() - start < 10, (code, err)
    closed = socket_port_closed()
    code, out, err = run("ws", "ws://127.0.0.1:%d/" % closed)
    assert code == 7, (code, err)
    start = time.monotonic()   # the server never answers the close: the library's closeTimeout (5 s) ends it
    code, out, err = run("ws", WS_HOSTILE + "no-close-reply", stdin="bye\n", timeout=30)
    assert code == 28 and "closeTimeout" in err and time.monotonic() - start < 15, (code, err)


@test("ws refuses what does not apply, bad items and bad lines with status 2, naming them")
def _():
    for args, words in [(("ws",), "needs a URL"),
                        (("ws", WS + "echo", "title=Dune"), "make a body"),
                        (("ws", WS + "echo", "@movie.json"), "would be a body"),
                        (("ws", WS + "echo", "--download", "x"), "--download is for requests"),
                        (("ws", WS + "echo", "--result"), "--result is for requests"),
                        (("ws", WS + "echo", "--protocol", "has space"), "protocols"),
                        (("ws", WS + "echo", "Sec-WebSocket-Key:x"), "Sec-WebSocket-Key"),
                        (("ws", WS + "echo", "-A", "digest", "-a", "u:p"), "digest"),
                        (("ws", WS + "echo", "--timeout", "-1"), "--timeout")]:
        code, out, err = run(*args)
        assert code == 2 and words in err, (args, code, err)
    code, out, err = run("ws", WS + "echo", stdin=b"fine\nnot \xff utf-8\nnever sent\n", binary=True)
    assert code == 2 and b"line 2 of standard input" in err and b"never sent" not in out, (code, out, err)
    p = subprocess.run([CLI, "ws", WS + "echo"], input=b"x" * (17 << 20), capture_output=True, cwd=work,
                       timeout=60, preexec_fn=limit_memory)
    assert p.returncode == 2 and b"longer than" in p.stderr, (p.returncode, p.stderr[-300:])
    code, out, err = run("ws", "--help")
    assert code == 0 and "base64" in out, (code, out)


@test("every sh block of docs/cli.md runs against the test server; a text block after one is what it printed")
def _():
    page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "cli.md")
    fenced = re.findall(r"^```(\w*)\n(.*?)^```", open(page, encoding="utf-8").read(), flags=re.S | re.M)
    blocks = [code for lang, code in fenced if lang == "sh"]
    assert len(blocks) >= 8 and sum(b.lstrip().startswith("netlayer") for b in blocks) >= 6, len(blocks)
    assert {lang for lang, _ in fenced} <= {"sh", "text"}, fenced
    folder = tempfile.mkdtemp(prefix="netlayer-cli-doc-")
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(CLI)) + os.pathsep + os.environ["PATH"])
    printed = None
    for lang, block in fenced:
        if lang == "text":   # the output the page shows for the sh block before it
            assert printed is not None and block.rstrip("\n") in printed, (block, printed)
            continue
        script = block.replace("http://127.0.0.1:8080/", BASE).replace("ws://127.0.0.1:8081/", WS)
        assert "127.0.0.1:8080" not in script and "127.0.0.1:8081" not in script, script
        p = subprocess.run(["sh", "-e", "-c", script], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, (block, p.returncode, p.stdout, p.stderr)
        assert p.stdout or p.stderr or "--download" in block, block
        printed = p.stdout + p.stderr
    shutil.rmtree(folder, ignore_errors=True)

for server in ws_servers:
    server.stdin.close()   # --exit-on-stdin-eof
print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
