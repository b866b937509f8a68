"""Where the package behaves as requests does, checked side by side with requests
against the same test server: no Content-Type without a body, ``Response.ok``,
``url`` and ``history`` after redirects, ``text`` decoded by the declared charset;
and where it differs on purpose (docs: bindings/python/README.md, "Differences from
requests"): the caller's cookies replace the jar's of the same name, a charset is
read as the Encoding Standard reads it, Content-Type as the Fetch standard extracts it."""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any, Dict, List, Optional, Sequence

import pytest
import requests

import netlayer


def header_lines(echo: Dict[str, Any], name: str) -> List[str]:
    return [value for key, value in echo["headerLines"] if key.lower() == name]


# -- no body, no Content-Type ---------------------------------------------------------


def test_post_without_a_body_sends_no_content_type_as_requests_does(client: netlayer.Client,
                                                                     base_url: str) -> None:
    theirs = requests.post(base_url + "echo", timeout=10).json()
    ours = client.post("echo").value
    assert header_lines(theirs, "content-type") == header_lines(ours, "content-type") == []
    assert header_lines(ours, "content-length") == ["0"] and ours["method"] == "POST"
    # a 307 repeats the POST as it was: still without a body, still without a type
    again = client.post("redirect-to", params={"url": "/echo", "status": 307}).value
    assert again["method"] == "POST" and header_lines(again, "content-type") == []
    # a type the caller gives is sent, body or not
    typed = client.post("echo", headers={"Content-Type": "text/plain"}).value
    assert header_lines(typed, "content-type") == ["text/plain"]
    assert header_lines(client.post("echo", json={"a": 1}).value, "content-type") == ["application/json"]


# -- cookies --------------------------------------------------------------------------


def cookie_pairs(echo: Dict[str, Any]) -> List[str]:
    lines = header_lines(echo, "cookie")
    assert len(lines) <= 1, lines
    return [pair.strip() for pair in lines[0].split(";")] if lines else []


def test_request_cookies_replace_the_jars_cookies_of_the_same_name(base_url: str) -> None:
    with netlayer.Client(base_url, timeout=10) as client:
        client.get("set-cookie", params={"c": ["jar=1; Path=/", "keep=k; Path=/", "gone=g; Path=/"]})
        sent = cookie_pairs(client.get("echo", cookies={"jar": "override", "extra": "x"}).value)
        assert sorted(sent) == ["extra=x", "gone=g", "jar=override", "keep=k"], sent
        # the jar is not changed by a request's own cookies
        assert sorted(cookie_pairs(client.get("echo").value)) == ["gone=g", "jar=1", "keep=k"]
        # what the response of such a request sets and deletes reaches the jar
        client.get("echo", cookies={"jar": "override"},
                   params={"_set_cookie": ["new=n; Path=/", "gone=; Path=/; Max-Age=0", "keep=k2; Path=/"]})
        assert sorted(cookie_pairs(client.get("echo").value)) == ["jar=1", "keep=k2", "new=n"]
        # the Cookie header of `headers` is the caller's too
        sent = cookie_pairs(client.get("echo", headers={"Cookie": "keep=mine"}).value)
        assert sorted(sent) == ["jar=1", "keep=mine", "new=n"], sent


def test_requests_sends_both_values_where_netlayer_sends_the_callers(base_url: str) -> None:
    """The difference, shown: requests sends the session's cookie and the request's
    under one name, so what the server reads depends on its parser."""
    session = requests.Session()
    session.get(base_url + "set-cookie", params={"c": "jar=1; Path=/"}, timeout=10)
    theirs = session.get(base_url + "echo", cookies={"jar": "override"}, timeout=10).json()
    assert cookie_pairs(theirs) == ["jar=1", "jar=override"]
    with netlayer.Client(base_url, timeout=10) as client:
        client.get("set-cookie", params={"c": "jar=1; Path=/"})
        assert cookie_pairs(client.get("echo", cookies={"jar": "override"}).value) == ["jar=override"]


# -- Response.ok ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["json", "status/201", "redirect/0", "status/404", "status/418", "status/500"])
def test_ok_is_requests_ok(base_url: str, path: str) -> None:
    with netlayer.Client(base_url, timeout=10, follow_redirects=False, acceptable_status=[[200, 599]]) as client:
        ours = client.get(path)
    theirs = requests.get(base_url + path, timeout=10, allow_redirects=False)
    assert ours.status == theirs.status_code
    assert ours.ok is theirs.ok is (ours.status < 400)


# -- url and history ------------------------------------------------------------------


def test_url_and_history_after_redirects_as_requests_has_them(client: netlayer.Client, base_url: str) -> None:
    theirs = requests.get(base_url + "redirect/2", timeout=10)
    ours = client.get("redirect/2")
    assert ours.url == theirs.url == base_url + "json"
    assert [(hop.status_code, hop.url) for hop in ours.history] == \
        [(hop.status_code, hop.url) for hop in theirs.history] == \
        [(302, base_url + "redirect/2"), (302, base_url + "redirect/1"), (302, base_url + "redirect/0")]
    plain = client.get("json", params={"page": 2})
    assert plain.url == base_url + "json?page=2" and plain.history == ()


def test_a_query_written_in_the_path_is_sent_as_requests_sends_it(client: netlayer.Client, base_url: str) -> None:
    # requests keeps a URL's query as written (its commas, its %XX escapes), escapes
    # only what may not stand in a URL, then appends params; so do we.
    for path, params in (("echo?color=blue,black%2Cgrey&t=a b", {"page": "1,2"}),
                         ("echo?x=%zz&e=&sig=a/b:c@d?e", None),
                         ("echo?caf\u00e9=\u00fc#fragment", {"x": ["1", "2"]})):
        theirs = requests.get(base_url + path, params=params, timeout=10).json()
        ours = client.get(path, params=params).value
        assert ours["query"] == theirs["query"], path
        assert ours["path"] == theirs["path"] == "/echo"
    assert client.get("echo?color=blue,black").value["query"] == "color=blue,black"
    # a written query and encoded_query= both go, the path's first
    both = client.get("echo?a=1", encoded_query="b=2,3", params={"c": 4}).value["query"]
    assert both == "a=1&b=2,3&c=4"
    with pytest.raises(netlayer.InvalidRequestError, match="encodedQuery"):
        client.get("echo", encoded_query=5)


def test_url_and_history_keep_secrets_out_as_logs_do(base_url: str) -> None:
    with netlayer.Client(base_url, timeout=10, log={"redact_query": ["sig_v2"]}) as client:
        r = client.get("redirect-to", params={"url": "/echo?token=t0p&page=1&sig_v2=abc", "status": 301,
                                              "api_key": "k3y"})
        assert r.status == 200 and r.value["args"]["token"] == ["t0p"]
        assert r.url == base_url + "echo?token=<redacted>&page=1&sig_v2=<redacted>"
        assert [hop.status for hop in r.history] == [301]
        assert r.history[0].url.startswith(base_url + "redirect-to?url=")
        assert r.history[0].url.endswith("&status=301&api_key=<redacted>")
        assert "k3y" not in repr(r.history) and "t0p" not in r.url


def test_a_token_in_a_fragment_is_kept_out_of_url_and_logs(base_url: str) -> None:
    # OAuth's implicit flow answers with #access_token=...: the URL that answered keeps
    # its fragment, and a fragment's secret parameters go as the query's do.
    events: list = []
    with netlayer.Client(base_url, timeout=10, log={"level": "info"}) as client:
        client.on_log(events.append)
        r = client.get("redirect-to", params={"url": "/echo#access_token=FRAGSECRET123&state=s1", "status": 302})
    assert r.status == 200
    assert r.url == base_url + "echo#access_token=<redacted>&state=s1"
    # (The first hop's own URL carries the fragment percent-encoded in its `url`
    # parameter, which is not a secret one.)
    second = [json.dumps(event) for event in events if event.get("url", "").startswith(base_url + "echo")]
    assert second and not any("FRAGSECRET123" in line for line in second)


def test_a_cached_answer_keeps_its_url_and_a_redirect_is_never_answered_from_the_cache(base_url: str) -> None:
    with netlayer.Client(base_url, timeout=10, cache={"enabled": True}) as client:
        target = "/echo?_max_age=60&parity=history"
        params = {"_max_age": 60, "parity": "history"}
        first = client.get("echo", params=params, use_cache=True)
        again = client.get("echo", params=params, use_cache=True)
        assert again.from_cache and not first.from_cache
        assert again.url == first.url == base_url + target[1:] and again.history == ()
        # RFC 9111: what a redirect led to answers its own URL, not the one redirected
        # from, and a request that follows redirects is not answered by a stored 3xx.
        hops = [client.get("redirect-to", params={"url": target}, use_cache=True) for _ in range(2)]
        assert not any(r.from_cache for r in hops)
        assert all(r.url == base_url + target[1:] and [hop.status for hop in r.history] == [302] for r in hops)


# -- text by the declared charset -----------------------------------------------------


def typed(client: netlayer.Client, types: Sequence[str], body: bytes, **keys: Any) -> netlayer.Response:
    return client.get("typed", params={"type": list(types), "body64": base64.b64encode(body).decode()}, **keys)


# (Content-Type, body, the text the Encoding Standard decodes, whether requests decodes alike)
CHARSET_CASES = [
    ("text/plain; charset=windows-1252", b"caf\xe9 \x80 \x81", "caf\xe9 \u20ac \x81", False),
    ("text/plain; charset=ISO-8859-1", b"caf\xe9 \x80", "caf\xe9 \u20ac", False),  # latin1 is windows-1252
    ("text/plain; charset=us-ascii", b"caf\xe9", "caf\xe9", False),
    ("text/html; charset=GBK", "\u4f60\u597d".encode("gbk"), "\u4f60\u597d", True),
    ("text/html; charset=gb2312", "\u4e2d\u6587".encode("gb2312"), "\u4e2d\u6587", True),
    ("text/plain; charset=Shift_JIS", "\u65e5\u672c\u8a9e".encode("shift_jis"), "\u65e5\u672c\u8a9e", True),
    ("text/plain; charset=euc-jp", "\u65e5\u672c".encode("euc_jp"), "\u65e5\u672c", True),
    ("text/plain; charset=iso-2022-jp", "\u65e5\u672c".encode("iso2022_jp"), "\u65e5\u672c", True),
    ("text/plain; charset=euc-kr", "\ud55c\uad6d\uc5b4".encode("euc_kr"), "\ud55c\uad6d\uc5b4", True),
    ("text/plain; charset=big5", "\u81fa\u7063".encode("big5"), "\u81fa\u7063", True),
    ("text/plain; charset=iso-8859-2", "\u0141\xf3d\u017a".encode("iso8859_2"), "\u0141\xf3d\u017a", True),
    ("text/plain; charset=ISO-8859-15", "\u20ac".encode("iso8859_15"), "\u20ac", True),
    ("text/plain; charset=koi8-r", "\u041f\u0440\u0438\u0432\u0435\u0442".encode("koi8_r"),
     "\u041f\u0440\u0438\u0432\u0435\u0442", True),
    ("text/plain; charset=windows-1251", "\u041c\u0438\u0440".encode("cp1251"), "\u041c\u0438\u0440", True),
    ("text/plain; charset=utf-16le", "h\xe9".encode("utf-16-le"), "h\xe9", True),
    ("application/xml; charset=\"windows-1250\"", "<a>\u0160</a>".encode("cp1250"), "<a>\u0160</a>", True),
    ("text/plain; charset=utf-8", "caf\xe9".encode(), "caf\xe9", True),
]


@pytest.mark.parametrize("content_type, body, text, like_requests", CHARSET_CASES)
def test_text_is_decoded_by_the_declared_charset(client: netlayer.Client, base_url: str, content_type: str,
                                                 body: bytes, text: str, like_requests: bool) -> None:
    r = typed(client, [content_type], body)
    assert r.decoder == "text" and r.text == text and r.value == text
    assert r.content == body  # the bytes as they came
    if like_requests:
        theirs = requests.get(base_url + "typed", timeout=10,
                              params={"type": content_type, "body64": base64.b64encode(body).decode()})
        assert theirs.text == r.text


def test_the_result_names_the_charset_it_decoded(client: netlayer.Client) -> None:
    assert typed(client, ["text/plain; charset=latin1"], b"\xe9").charset == "windows-1252"
    assert typed(client, ["text/html;charset=\"gbk\""], "\u4f60".encode("gbk")).charset == "GBK"
    assert typed(client, ["text/plain; charset=UTF8"], b"ok").charset == "UTF-8"
    assert typed(client, ["text/plain"], b"ok").charset is None
    assert client.get("json").charset is None  # JSON is UTF-8 whatever it declares


def test_text_that_does_not_decode_in_its_charset_keeps_its_bytes(client: netlayer.Client,
                                                                   base_url: str) -> None:
    # Not UTF-8 though it says so: base64 (the exact bytes), and .text replaces as requests does.
    r = typed(client, ["text/plain; charset=utf-8"], b"ab\xff")
    assert r.decoder == "base64" and r.content == b"ab\xff" and r.charset == "UTF-8"
    theirs = requests.get(base_url + "typed", timeout=10, params={"type": "text/plain; charset=utf-8",
                                                                  "body64": base64.b64encode(b"ab\xff").decode()})
    assert r.text == theirs.text == "ab\ufffd"
    r = typed(client, ["text/plain; charset=shift_jis"], b"\x82")  # a lead byte without its trail byte
    assert r.decoder == "base64" and r.content == b"\x82" and r.text == "\ufffd"


def test_without_a_known_charset_text_is_utf8_not_guessed(client: netlayer.Client, base_url: str) -> None:
    # requests reads text/* without a charset as ISO-8859-1 (RFC 2616) and guesses for other
    # types; netlayer reads UTF-8, and keeps bytes that are not UTF-8 as base64.
    body = "caf\xe9".encode()
    assert typed(client, ["text/plain"], body).text == "caf\xe9"
    theirs = requests.get(base_url + "typed", timeout=10, params={"type": "text/plain",
                                                                  "body64": base64.b64encode(body).decode()})
    assert theirs.encoding == "ISO-8859-1" and theirs.text == "caf\xc3\xa9"
    unknown = typed(client, ["text/plain; charset=x-no-such-charset"], body)
    assert unknown.decoder == "text" and unknown.text == "caf\xe9" and unknown.charset is None
    latin = typed(client, ["text/plain"], b"caf\xe9")
    assert latin.decoder == "base64" and latin.text == "caf\ufffd" and latin.content == b"caf\xe9"


# -- Content-Type extracted as the Fetch standard does ---------------------------------

# web-platform-tests fetch/content-type/resources/content-types.json (3-Clause BSD
# License): the Content-Type lines of a response, and the encoding the Fetch
# standard's "extract a MIME type" leaves for it (None: none). Each body is the two
# bytes C4 E3: "\u4f60" in GBK, "\xc4\xe3" in windows-1252 and windows-1254, not UTF-8.
WPT_CONTENT_TYPES: List[Dict[str, Any]] = [
    {"input": ["", "text/plain"], "encoding": None, "mimeType": "text/plain"},
    {"input": ["text/plain", ""], "encoding": None, "mimeType": "text/plain"},
    {"input": ["text/html", "text/plain"], "encoding": None, "mimeType": "text/plain"},
    {"input": ["text/plain;charset=gbk", "text/html"], "encoding": None, "mimeType": "text/html"},
    {"input": ["text/plain;charset=gbk", "text/html;charset=windows-1254"], "encoding": "windows-1254",
     "mimeType": "text/html;charset=windows-1254"},
    {"input": ["text/plain;charset=gbk", "text/plain"], "encoding": "GBK", "mimeType": "text/plain;charset=gbk"},
    {"input": ["text/plain;charset=gbk", "text/plain;charset=windows-1252"], "encoding": "windows-1252",
     "mimeType": "text/plain;charset=windows-1252"},
    {"input": ["text/html;charset=gbk", "text/html;x=\",text/plain"], "encoding": "GBK",
     "mimeType": "text/html;x=\",text/plain\";charset=gbk"},
    {"input": ["text/html;charset=gbk", "text/plain", "text/html"], "encoding": None, "mimeType": "text/html"},
    {"input": ["text/plain", "*/*"], "encoding": None, "mimeType": "text/plain"},
    {"input": ["text/html", "*/*"], "encoding": None, "mimeType": "text/html"},
    {"input": ["*/*", "text/html"], "encoding": None, "mimeType": "text/html"},
    {"input": ["text/plain", "*/*;charset=gbk"], "encoding": None, "mimeType": "text/plain"},
    {"input": ["text/html", "*/*;charset=gbk"], "encoding": None, "mimeType": "text/html"},
    {"input": ["text/html;x=\"", "text/plain"], "encoding": None, "mimeType": "text/html;x=\", text/plain\""},
    {"input": ["text/html;\"", "text/plain"], "encoding": None, "mimeType": "text/html"},
]

CODECS = {"GBK": "gbk", "windows-1254": "cp1254", "windows-1252": "cp1252"}


@pytest.mark.parametrize("case", WPT_CONTENT_TYPES, ids=lambda case: repr(case["input"]))
def test_content_type_lines_are_read_as_fetch_extracts_a_mime_type(client: netlayer.Client,
                                                                   case: Dict[str, Any]) -> None:
    r = typed(client, case["input"], b"\xc4\xe3")
    assert r.charset == case["encoding"]
    if case["encoding"] is None:
        assert r.decoder == "base64" and r.content == b"\xc4\xe3"  # text, but not UTF-8
    else:
        assert r.decoder == "text" and r.text == b"\xc4\xe3".decode(CODECS[case["encoding"]])


@pytest.mark.parametrize("lines, decoder", [
    (["", "application/json"], "json"),
    (["*/*", "application/json"], "json"),
    (["application/json", "text/plain"], "text"),
    (["text/plain", "application/json"], "json"),
    (["application/json", "bogus"], "json"),       # an invalid type is skipped
    (["application/json", "*/*"], "json"),
    (["image/png", "text/plain;charset=utf-8"], "text"),
    (["text/plain", "image/png"], "base64"),
    (["", ""], "base64"),                          # no valid type: bytes
    (["application/json;x=\"a,b\"", "text/plain"], "text"),
    (["application/json;x=\"a,text/plain"], "json"),  # the comma is inside a quoted string
])
def test_the_last_valid_content_type_chooses_the_decoder(client: netlayer.Client, lines: List[str],
                                                         decoder: str) -> None:
    assert typed(client, lines, b'{"a": 1}').decoder == decoder


def test_an_explicit_decoder_still_wins(client: netlayer.Client) -> None:
    r = typed(client, ["text/plain; charset=gbk"], "\u4f60".encode("gbk"), response={"decoder": "base64"})
    assert r.decoder == "base64" and r.charset is None and base64.b64decode(r.value) == "\u4f60".encode("gbk")


# -- form fields, files and bodies as requests sends them ------------------------------


def form_fields(echo: Dict[str, Any]) -> List[Any]:
    """The (name, filename, content) of each part of an echoed multipart body."""
    import email.parser
    import email.policy
    content_type = header_lines(echo, "content-type")[0]
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + echo["body"].encode("utf-8", "surrogateescape"))
    return [(part.get_param("name", header="content-disposition"), part.get_filename(),
             part.get_payload(decode=True)) for part in message.iter_parts()]


def test_form_fields_beside_files_leave_none_out_and_keep_bytes_as_requests_does(client: netlayer.Client,
                                                                                base_url: str) -> None:
    data = {"gone": None, "raw": b"raw", "n": 3, "listed": ["a", None, "b"]}
    theirs = requests.post(base_url + "echo", data=data, files={"f": b"F"}, timeout=10).json()
    ours = client.post("echo", data=data, files={"f": b"F"}).value
    assert form_fields(ours) == form_fields(theirs)
    assert [name for name, _, _ in form_fields(ours)] == ["raw", "n", "listed", "listed", "f"]


def test_a_form_leaves_none_out_and_reads_bytes_as_requests_does(client: netlayer.Client, base_url: str) -> None:
    data = {"gone": None, "raw": b"caf\xc3\xa9", "listed": ["a", None]}
    theirs = requests.post(base_url + "echo", data=data, timeout=10).json()
    ours = client.post("echo", data=data).value
    assert ours["body"] == theirs["body"] == "raw=caf%C3%A9&listed=a"
    with pytest.raises(netlayer.InvalidRequestError, match=r"data\['raw'\]: .*not UTF-8"):
        client.post("echo", data={"raw": b"\xff"})
    with pytest.raises(TypeError, match="is not a \\(name, value\\) pair"):
        client.post("echo", data=[("a", "1"), "b"])


def test_a_file_or_an_iterator_of_bytes_as_data_is_the_body(client: netlayer.Client, base_url: str,
                                                          tmp_path: Any) -> None:
    path = tmp_path / "body.bin"
    path.write_bytes(b"from a file")
    with open(path, "rb") as theirs_file, open(path, "rb") as ours_file:
        theirs = requests.post(base_url + "echo", data=theirs_file, timeout=10).json()
        ours = client.post("echo", data=ours_file).value
    assert ours["body"] == theirs["body"] == "from a file"
    ours = client.post("echo", data=(chunk for chunk in [b"one ", b"two"])).value
    assert ours["body"] == "one two"


def test_a_file_object_sends_what_it_reads_as_requests_does(client: netlayer.Client, base_url: str,
                                                           tmp_path: Any) -> None:
    import gzip
    packed = tmp_path / "data.txt.gz"
    with gzip.open(packed, "wb") as writer:
        writer.write(b"hello plain text\n")
    with gzip.open(packed, "rb") as theirs_file, gzip.open(packed, "rb") as ours_file:
        theirs = requests.post(base_url + "echo", files={"f": theirs_file}, timeout=10).json()
        ours = client.post("echo", files={"f": ours_file}).value
    assert form_fields(ours) == form_fields(theirs) == [("f", "data.txt.gz", b"hello plain text\n")]
    # A file replaced on disk since it was opened: what the open file reads, not the new file.
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"opened")
    with open(plain, "rb") as opened:
        plain.unlink()
        plain.write_bytes(b"replaced")
        ours = client.post("echo", files={"f": opened}).value
    assert [(name, filename, content) for name, filename, content in form_fields(ours)] == [("f", "plain.txt", b"opened")]


def test_repr_of_a_response_shows_its_status_and_nothing_it_may_hide(client: netlayer.Client) -> None:
    response = client.get("set-cookie", params={"c": "session=S3CR3T"})
    assert repr(response) == "<Response [200]>" == repr(requests.Response()).replace("None", "200")
    assert "S3CR3T" not in repr(response) and "S3CR3T" not in str(response)


def test_a_response_is_hashable_as_requests_response_is(client: netlayer.Client) -> None:
    first, second = client.get("json"), client.get("status/201")
    hash(requests.Response())
    copy = dataclasses.replace(first)
    assert copy == first and hash(copy) == hash(first)
    assert len({first, copy, second}) == 2
    assert {first: "seen"}[copy] == "seen"


def test_response_headers_are_case_insensitive_for_every_use_as_requests_headers_are(
        client: netlayer.Client) -> None:
    headers = client.get("json").headers
    copied = headers.copy()
    assert type(copied) is type(headers) and copied["Content-Type"] == headers["content-type"]
    copied["X-New"] = "1"
    assert copied["x-new"] == copied["X-NEW"] == "1" and "X-New" not in headers
    assert copied.setdefault("Content-Type", "other") == headers["content-type"]
    assert copied.pop("CONTENT-TYPE") == headers["content-type"] and "content-type" not in copied
    del copied["X-new"]
    assert "x-new" not in copied
    copied.update({"A-B": "1"}, C_D="2")
    merged = copied | {"E-F": "3"}
    assert merged["a-b"] == "1" and merged["c_d"] == "2" and merged["e-f"] == "3"
    assert copied.pop("missing", None) is None


# -- a query written in a full URL -----------------------------------------------------


def test_a_full_urls_query_is_percent_encoded_as_requests_encodes_it(client: netlayer.Client,
                                                                      base_url: str) -> None:
    """Bytes past ASCII and `"`, `<`, `>` in a URL's query are sent percent-encoded
    (RFC 3986 has no room for them raw; browsers encode them too), escapes already
    written stay as they are."""
    url = base_url + 'echo?q=café&x=a<b>&y="z"&keep=a/b?c'
    theirs = requests.get(url, timeout=10).json()
    ours = client.get(url, is_full_path=True).value
    assert ours["query"] == theirs["query"] == "q=caf%C3%A9&x=a%3Cb%3E&y=%22z%22&keep=a/b?c"
    # An escape stays as written (requests decodes %41 to A; browsers keep it, as here).
    assert client.get(base_url + "echo?done=%41", is_full_path=True).value["query"] == "done=%41"
