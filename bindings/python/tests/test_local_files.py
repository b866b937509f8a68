"""Files the client keeps (the cookie file, a cassette) and downloads: a relative path
stays the file it named when the client was made, names up to 255 bytes work, and a
download does not carry set-user-ID bits over to new content."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

import netlayer


def _cookie_names(path: Path) -> list[str]:
    return [line.split("\t")[5] for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("# ")]


def test_a_relative_cookie_file_stays_the_one_named_when_the_client_was_made(
        base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "A", tmp_path / "B"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    c1 = netlayer.Client({"baseURL": base_url, "cookies": {"file": "cookies.txt"}})
    c1.get("set-cookie", params={"c": "first=1; Max-Age=3600"})
    monkeypatch.chdir(second)
    c2 = netlayer.Client({"baseURL": base_url, "cookies": {"file": "cookies.txt"}})
    c2.get("set-cookie", params={"c": "second=2; Max-Age=3600"})
    monkeypatch.chdir(first)
    with pytest.raises(netlayer.InvalidRequestError, match="in use"):
        netlayer.Client({"baseURL": base_url, "cookies": {"file": "cookies.txt"}})
    monkeypatch.chdir(second)
    c1.close()
    c2.close()
    assert _cookie_names(first / "cookies.txt") == ["first"]
    assert _cookie_names(second / "cookies.txt") == ["second"]


def test_a_relative_cassette_is_written_where_it_was_named(
        base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "A").mkdir()
    (tmp_path / "B").mkdir()
    monkeypatch.chdir(tmp_path / "A")
    client = netlayer.Client({"baseURL": base_url, "cassette": {"file": "tape.json", "mode": "record"}})
    client.get("json")
    monkeypatch.chdir(tmp_path / "B")
    client.close()
    assert json.loads((tmp_path / "A" / "tape.json").read_text())["exchanges"]
    assert not (tmp_path / "B" / "tape.json").exists()


def test_names_of_250_bytes_work_for_downloads_cookie_files_and_cassettes(base_url: str, tmp_path: Path) -> None:
    download, cookies, tape = (tmp_path / (letter * 250) for letter in "dck")
    with netlayer.Client({"baseURL": base_url, "cookies": {"file": str(cookies)},
                          "cassette": {"file": str(tape), "mode": "record"}}) as client:
        assert client.get("json", download_to=download).value["bytes"] > 0
        client.get("set-cookie", params={"c": "a=1; Max-Age=3600"})
    assert download.stat().st_size > 0 and _cookie_names(cookies) == ["a"]
    assert json.loads(tape.read_text())["exchanges"]


def test_a_download_over_a_set_user_id_file_keeps_its_permission_bits_only(
        client: netlayer.Client, tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.write_bytes(b"#!/bin/sh\n")
    os.chmod(tool, 0o4755)
    client.get("json", download_to=tool)
    assert stat.S_IMODE(tool.stat().st_mode) == 0o755 and tool.read_bytes().startswith(b"{")


@pytest.mark.parametrize("keys, key", [
    ({"download_to": "{dir}/saved.txt\x00.safe"}, "downloadTo"),
    ({"method": "PUT", "upload_from": "{dir}/up.txt\x00.png"}, "uploadFrom"),
    ({"method": "POST", "multipart": [{"name": "f", "file": "{dir}/up.txt\x00.png"}]}, "'file'"),
])
def test_a_nul_in_a_file_path_is_refused_naming_the_key(client: netlayer.Client, tmp_path: Path,
                                                       keys: dict, key: str) -> None:
    # The system would read the path only up to the NUL: another file than the one named
    # (an extension check of "x.txt\0.png" sees .png, the file read is x.txt).
    (tmp_path / "up.txt").write_text("secret")
    document = json.loads(json.dumps(keys).replace("{dir}", str(tmp_path)))
    with pytest.raises(netlayer.InvalidRequestError, match=f"{key}.*NUL"):
        client.request({"path": "echo", **document})
    assert not (tmp_path / "saved.txt").exists()


def test_a_nul_in_a_config_file_path_is_refused_naming_the_key(base_url: str, tmp_path: Path) -> None:
    for config, key in (({"tls": {"caFile": "/etc/hostname\x00.pem"}}, "caFile"),
                        ({"cookies": {"file": str(tmp_path / "jar.txt\x00x")}}, "file"),
                        ({"unixSocket": "/tmp/s\x00ock"}, "unixSocket")):
        with pytest.raises(netlayer.InvalidRequestError, match=f"{key}.*NUL"):
            netlayer.Client({"baseURL": base_url, **config})


def test_a_file_parts_own_name_cannot_add_header_lines(client: netlayer.Client, tmp_path: Path) -> None:
    # The name a file part goes by when it gives no filename is its file's: one with CR LF
    # would write header lines and a part of its own into the body (RFC 7578 allows none).
    folder = tmp_path / "uploads"
    folder.mkdir()
    hostile = folder / 'r\r\nX-Injected: yes\r\n\r\nINJECTED\r\n--x.txt'
    hostile.write_text("real")
    with pytest.raises(netlayer.InvalidRequestError, match="multipart part 0 key 'file' names a file whose name has"):
        client.request({"method": "POST", "path": "echo", "multipart": [{"name": "upload", "file": str(hostile)}]})
    # a filename of the caller's own is sent instead
    sent = client.request({"method": "POST", "path": "echo",
                           "multipart": [{"name": "upload", "file": str(hostile), "filename": "report.txt"}]})
    assert 'filename="report.txt"' in sent.value["body"] and "X-Injected" not in sent.value["body"]
