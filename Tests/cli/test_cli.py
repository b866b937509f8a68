#!/usr/bin/env python3
"""Tests of the `netlayer` command-line client: output, --pretty, and exit statuses.

Usage (ctest runs it through with_server.py): test_cli.py PATH_TO_netlayer
"""
import json
import os
import subprocess
import sys
import tempfile

CLI = sys.argv[1]
BASE = os.environ["NETLAYER_TEST_URL"]
work = tempfile.mkdtemp(prefix="netlayer-cli-")
results = {"passed": 0, "failed": 0}


def write(name, document):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(document if isinstance(document, str) else json.dumps(document))
    return path


def run(*args, stdin=None):
    p = subprocess.run([CLI, *args], input=stdin, capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout, p.stderr


def test(name):
    def decorate(fn):
        try:
            fn()
            results["passed"] += 1
            print("ok  ", name)
        except AssertionError as e:
            results["failed"] += 1
            print("FAIL", name, e)
        return fn
    return decorate


CONFIG = write("config.json", {"baseURL": BASE, "endpoints": {
    "movie": {"path": "movies/{id}", "response": {"keyPath": "data"}},
}})


@test("request prints the result and exits 0 when ok")
def _():
    code, out, _ = run("request", write("e1.json", {"path": "json", "response": {"keyPath": "title"}}), "--config", CONFIG)
    assert code == 0, (code, out)
    doc = json.loads(out)
    assert doc["ok"] is True and doc["value"] == "Dune", out


@test("request reads the endpoint from stdin with -")
def _():
    code, out, _ = run("request", "-", "--config", CONFIG, stdin='{"path": "movies"}')
    assert code == 0 and json.loads(out)["value"]["page"] == 1, (code, out)


@test("an HTTP error exits 1 and prints the error document")
def _():
    code, out, _ = run("request", write("e2.json", {"path": "status/404"}), "--config", CONFIG)
    assert code == 1, (code, out)
    assert json.loads(out)["error"]["kind"] == "status"


@test("a transport error exits 1")
def _():
    cfg = write("refused.json", {"baseURL": "http://127.0.0.1:1/"})
    code, out, _ = run("request", write("e3.json", {"path": "x"}), "--config", cfg)
    assert code == 1 and json.loads(out)["error"]["kind"] == "not_connected", (code, out)


@test("call fills path placeholders from key=value arguments")
def _():
    code, out, _ = run("call", "movie", "id=2", "--config", CONFIG)
    assert code == 0, (code, out)
    assert json.loads(out)["value"] == {"id": 2, "title": "Arrival"}, out


@test("call of an unknown name exits 2")
def _():
    code, out, _ = run("call", "nope", "--config", CONFIG)
    assert code == 2 and json.loads(out)["error"]["kind"] == "invalid_request", (code, out)


@test("a malformed endpoint exits 2")
def _():
    code, out, _ = run("request", write("bad.json", '{"pathh": "x"}'), "--config", CONFIG)
    assert code == 2 and "pathh" in out, (code, out)


@test("a malformed config exits 2 with the error document")
def _():
    code, out, _ = run("request", write("e4.json", {"path": "json"}), "--config", write("badcfg.json", '{"baseUrl": 1}'))
    assert code == 2 and "baseUrl" in out, (code, out)


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


@test("--pretty indents the same document")
def _():
    code, out, _ = run("request", write("e5.json", {"path": "movies/1"}), "--config", CONFIG, "--pretty")
    assert code == 0 and out.count("\n") > 5 and '\n  "ok": true' in out, out
    assert json.loads(out)["value"]["data"]["title"] == "Dune"


@test("--version names the library version")
def _():
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("netlayer 0."), out


print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
