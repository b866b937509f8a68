"""Values arrive as given, checked by a server parser nobody on this project wrote.

Hypothesis generates query items (repeated keys), form bodies, JSON and XML bodies,
multipart names, filenames and values, header values and path parameters from hostile
tokens, non-ASCII text and very long values. Each document is sent to httpbin under
gunicorn (werkzeug parses the request; ``roundtrip_app.py`` adds one view for what
httpbin does not echo: filenames, repeated file parts and the decoded path), and what
the server decoded must be exactly what was sent, or the library must refuse the value
with ``invalid_request`` naming the document key, and only where HTTP itself forbids
it (a control character other than HTAB in a header or multipart header parameter).
"""

from __future__ import annotations

import base64
import socket
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import gunicorn.config
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import netlayer

#: Bytes HTTP forbids in a field value (RFC 9110 section 5.5): controls but HTAB.
FORBIDDEN_IN_FIELDS = {chr(b) for b in range(0x20) if b != 0x09} | {"\x7f"}

HOSTILE = [
    "\r\n", "\r", "\n", "\x00", "\t", " ", "  ", "\x01", "\x1f", "\x7f", "\x85", "\u2028", "\ufeff",
    "\ufffe", "\uffff", "%", "%0A", "%00", "%25", "%2e%2e", "&", "=", "+", "#", "?", ";", ",", ":", "\\",
    "\\\\", '"', '\\"', "'", "/", "..", ".", "{x}", "[]", "<", ">", "&amp;", "]]>", "é", "ß", "日本",
    "😀", "e\u0301", "--", "\r\n\r\n", "Content-Disposition: form-data; name=\"x\"", "=?utf-8?q?x?=",
]

SETTINGS = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def texts(max_pieces: int = 6, long_bytes: int = 20_000) -> st.SearchStrategy[str]:
    """Hostile tokens and arbitrary non-surrogate text run together, or a very long value
    (up to ``long_bytes`` of UTF-8)."""
    piece = st.one_of(st.sampled_from(HOSTILE), st.text(st.characters(codec="utf-8"), max_size=10))
    long = st.tuples(st.sampled_from(["x", "é", "%", "\\", " a"]), st.integers(1_000, long_bytes)).map(
        lambda t: t[0] * (t[1] // len(t[0].encode())))
    return st.one_of(st.lists(piece, max_size=max_pieces).map("".join), long)


#: Query and form items repeat their key per value and percent-encoding triples a byte:
#: kept under werkzeug's 500 kB form limit and gunicorn's 1 MB request line.
short_texts = texts(long_bytes=6_000)


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(short_texts, st.integers(-(2**63), 2**63 - 1), st.booleans())


def as_text(value: Any) -> str:
    """A query or form value as the library writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def forbidden_in_field(text: str) -> bool:
    return any(c in FORBIDDEN_IN_FIELDS for c in text)


# ---- the server --------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def httpbin_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """httpbin (plus roundtrip_app's view) under gunicorn on a free loopback port."""
    log = tmp_path_factory.mktemp("gunicorn") / "log"
    port = _free_port()
    command = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "1",
               "--limit-request-line", "0", "--limit-request-field_size", "200000",
               "--pythonpath", str(Path(__file__).resolve().parent), "roundtrip_app:app"]
    if hasattr(gunicorn.config, "ControlSocketDisable"):
        command.insert(-1, "--no-control-socket")  # else it makes a socket under $HOME
    with open(log, "wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                pytest.fail(f"gunicorn exited with {process.returncode}: {log.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(url + "get", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"gunicorn did not answer within 30 s: {log.read_text(errors='replace')}")
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def bin_client(httpbin_url: str) -> Iterator[netlayer.Client]:
    config = {"baseURL": httpbin_url,
              "endpoints": {"pathParam": {"path": "werkzeug/path/{value}"}}}
    with netlayer.Client(config, timeout=30) as c:
        yield c


def refused(call: Any, key: str) -> str:
    """Runs ``call``, which must fail with invalid_request; returns the message."""
    with pytest.raises(netlayer.InvalidRequestError) as caught:
        call()
    message = caught.value.message
    assert key in message, f"the refusal does not name {key!r}: {message}"
    return message


def multi(echo: Mapping[str, Any]) -> Dict[str, List[str]]:
    """httpbin's args/form echo (a string, or a list for a repeated key) as lists."""
    return {k: v if isinstance(v, list) else [v] for k, v in echo.items()}


def expected_pairs(items: Mapping[str, Any]) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for key, value in items.items():
        values = value if isinstance(value, list) else [value]
        if values:
            out[key] = [as_text(v) for v in values]
    return out


# ---- query and form ----------------------------------------------------------------------

pair_values = st.one_of(scalars(), st.lists(scalars(), min_size=0, max_size=3))


@SETTINGS
@given(query=st.dictionaries(short_texts, pair_values, max_size=4))
@example(query={"q": "line one\nline two\r\n", "k": ["a", "a", "\x00"]})
def test_query_items_arrive_as_given(bin_client: netlayer.Client, query: Dict[str, Any]) -> None:
    echo = bin_client.get("anything", query=query).value
    assert multi(echo["args"]) == expected_pairs(query)


@SETTINGS
@given(form=st.dictionaries(short_texts, pair_values, max_size=4))
@example(form={"comment": "first line\nsecond line", "crlf": "a\r\nb", "nul": "a\x00b"})
def test_form_values_arrive_as_given(bin_client: netlayer.Client, form: Dict[str, Any]) -> None:
    echo = bin_client.post("anything", body=form, body_encoding="form").value
    assert multi(echo["form"]) == expected_pairs(form)


# ---- JSON and XML bodies -----------------------------------------------------------------

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
              st.floats(allow_nan=False, allow_infinity=False), texts()),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(texts(), children, max_size=4)),
    max_leaves=12)


@SETTINGS
@given(value=json_values)
def test_json_bodies_arrive_as_given(bin_client: netlayer.Client, value: Any) -> None:
    body = {"value": value}
    echo = bin_client.post("anything", body=body).value
    assert echo["json"] == body


#: What XML 1.0 cannot carry, even escaped (its Char production).
def xml_cannot_carry(text: str) -> bool:
    return any((ord(c) < 0x20 and c not in "\t\n\r") or c in "\ufffe\uffff" for c in text)


@SETTINGS
@given(fields=st.dictionaries(st.sampled_from(["a", "b", "name", "note"]), texts(), min_size=1))
@example(fields={"a": "before\x00after"})
@example(fields={"a": "cr\r, crlf\r\n, lf\n, tab\t,  spaces  "})
def test_xml_bodies_arrive_as_given_or_are_refused(bin_client: netlayer.Client, fields: Dict[str, str]) -> None:
    def send() -> Any:
        return bin_client.post("anything", body=fields, body_encoding="xml").value

    if any(xml_cannot_carry(v) for v in fields.values()):
        event("refused")  # --hypothesis-show-statistics counts them
        refused(send, "body")
        return
    root = ElementTree.fromstring(send()["data"].encode("utf-8"))
    assert root.tag == "request"
    assert {child.tag: child.text or "" for child in root} == fields


# ---- multipart ---------------------------------------------------------------------------

part_names = texts(4)
parts = st.one_of(
    st.fixed_dictionaries({"name": part_names, "text": texts()}),
    st.fixed_dictionaries({"name": part_names, "text": texts(), "filename": part_names}),
    st.fixed_dictionaries({"name": part_names, "filename": part_names,
                           "base64": st.binary(max_size=3000).map(lambda b: base64.b64encode(b).decode())}),
)


def werkzeug_param(text: str) -> str:
    """A name or filename as werkzeug reads it: it also takes "%22", the HTML standard's
    escape of '"', for a quote, so a literal "%22" cannot reach it whatever the client does."""
    return text.replace("%22", '"')


def echoed_parts(echo: Mapping[str, Any]) -> Dict[Tuple[str, Optional[str]], List[bytes]]:
    out: Dict[Tuple[str, Optional[str]], List[bytes]] = {}
    for part in echo["parts"]:
        if "text" in part:
            out.setdefault((part["name"], None), []).append(part["text"].encode("utf-8"))
        else:
            out.setdefault((part["name"], part["filename"]), []).append(base64.b64decode(part["base64"]))
    return out


def sent_parts(multipart: List[Dict[str, str]]) -> Dict[Tuple[str, Optional[str]], List[bytes]]:
    out: Dict[Tuple[str, Optional[str]], List[bytes]] = {}
    for part in multipart:
        name = werkzeug_param(part["name"])
        filename = werkzeug_param(part["filename"]) if "filename" in part else None
        content = part["text"].encode("utf-8") if "text" in part else base64.b64decode(part["base64"])
        out.setdefault((name, filename), []).append(content)
    return out


@SETTINGS
@given(multipart=st.lists(parts, min_size=1, max_size=4))
@example(multipart=[{"name": "a\\", "text": "x"}, {"name": "b\\\"c", "text": "y"}])
@example(multipart=[{"name": "nul", "text": "before\x00after"}, {"name": "nul", "text": "\x00"}])
@example(multipart=[{"name": "f", "filename": 'C:\\dir\\"q".txt', "text": "z"}])
def test_multipart_names_filenames_and_values_arrive_as_given(bin_client: netlayer.Client,
                                                             multipart: List[Dict[str, str]]) -> None:
    def send() -> Any:
        return bin_client.post("werkzeug/multipart", multipart=multipart).value

    if any(forbidden_in_field(p["name"]) or forbidden_in_field(p.get("filename", "")) for p in multipart):
        event("refused")
        message = refused(send, "multipart")
        assert "header 'Content-" not in message  # the document key, not the wire header
        return
    assert echoed_parts(send()) == sent_parts(multipart)


def test_multipart_content_type_with_a_control_character_is_refused_naming_multipart(
        bin_client: netlayer.Client) -> None:
    message = refused(lambda: bin_client.post("werkzeug/multipart", multipart=[
        {"name": "a", "text": "x", "contentType": "text/plain\x01"}]), "multipart")
    assert "contentType" in message


# ---- headers and path parameters ---------------------------------------------------------

header_names = st.from_regex(r"X-Rt-[a-z0-9]{1,8}", fullmatch=True)


def received_header(echo: Mapping[str, Any], name: str) -> Optional[str]:
    for key, value in echo["headers"].items():
        if key.lower() == name.lower():
            return str(value)
    return None


@SETTINGS
@given(headers=st.dictionaries(header_names, texts(), min_size=1, max_size=4))
@example(headers={"X-Rt-spaces": "   ", "X-Rt-tabs": "\t \t", "X-Rt-empty": ""})
@example(headers={"X-Rt-ctl": "a\x01b"})
@example(headers={"X-Rt-del": "a\x7f"})
def test_header_values_arrive_as_given_or_are_refused(bin_client: netlayer.Client,
                                                     headers: Dict[str, str]) -> None:
    def send() -> Any:
        return bin_client.get("anything", headers=headers).value

    bad = [name for name, value in headers.items() if forbidden_in_field(value)]
    if bad:
        event("refused")
        message = refused(send, "headers")
        assert any(name in message for name in bad), message
        return
    echo = send()
    for name, value in headers.items():
        # A field value excludes leading and trailing SP and HTAB (RFC 9110 section 5.5);
        # the server sees the bytes of the UTF-8 text, and WSGI hands them on as latin-1.
        want = value.strip(" \t").encode("utf-8").decode("latin-1")
        assert received_header(echo, name) == want, name


@SETTINGS
@given(value=st.one_of(texts(), st.integers(-(2**63), 2**63 - 1), st.booleans()))
@example(value="a/b?c#d%2F..")
@example(value="line\nbreak\r\x00")
def test_path_parameters_arrive_as_given(bin_client: netlayer.Client, value: Any) -> None:
    text = as_text(value)
    if text in ("", ".", ".."):
        event("refused")
        refused(lambda: bin_client.call("pathParam", params={"value": value}), "params")
        return
    echo = bin_client.call("pathParam", params={"value": value}).value
    assert echo["path"] == "/werkzeug/path/" + text
