"""Text in the encodings of the WHATWG Encoding Standard, by the names a result
document's ``charset`` holds (the library reads the ``Content-Type`` labels: ``latin1``
arrives here as ``windows-1252``), through Python's codecs."""

from __future__ import annotations

from typing import Dict

__all__ = ["decode", "encode"]

#: The Python codec of each encoding, where the Encoding Standard and the codec agree
#: (GBK is read by the gb18030 decoder, Big5 with HKSCS, Shift_JIS as Windows-31J,
#: EUC-KR as Windows-949, as the standard and browsers read them).
CODECS: Dict[str, str] = {
    "UTF-8": "utf-8", "IBM866": "cp866", "ISO-8859-2": "iso8859_2", "ISO-8859-3": "iso8859_3",
    "ISO-8859-4": "iso8859_4", "ISO-8859-5": "iso8859_5", "ISO-8859-6": "iso8859_6",
    "ISO-8859-7": "iso8859_7", "ISO-8859-8": "iso8859_8", "ISO-8859-8-I": "iso8859_8",
    "ISO-8859-10": "iso8859_10", "ISO-8859-13": "iso8859_13", "ISO-8859-14": "iso8859_14",
    "ISO-8859-15": "iso8859_15", "ISO-8859-16": "iso8859_16", "KOI8-R": "koi8_r", "KOI8-U": "koi8_u",
    "macintosh": "mac_roman", "windows-874": "cp874", "windows-1250": "cp1250", "windows-1251": "cp1251",
    "windows-1253": "cp1253", "windows-1254": "cp1254", "windows-1255": "cp1255", "windows-1256": "cp1256",
    "windows-1257": "cp1257", "windows-1258": "cp1258", "x-mac-cyrillic": "mac_cyrillic", "GBK": "gb18030",
    "gb18030": "gb18030", "Big5": "big5hkscs", "EUC-JP": "euc_jp", "ISO-2022-JP": "iso2022_jp",
    "Shift_JIS": "cp932", "EUC-KR": "cp949", "UTF-16BE": "utf-16-be", "UTF-16LE": "utf-16-le",
}

# windows-1252 is ISO-8859-1 but for 0x80-0x9F, where Python's cp1252 leaves five bytes
# undefined that the Encoding Standard reads as the C1 controls of the same number.
_CP1252_HIGH = {byte: bytes([byte]).decode("cp1252", "ignore") or chr(byte) for byte in range(0x80, 0xA0)}
_FROM_1252 = {byte: char for byte, char in _CP1252_HIGH.items() if char != chr(byte)}
_TO_1252 = {ord(char): byte for byte, char in _FROM_1252.items()}
_USER_DEFINED_HIGH = {byte: chr(0xF780 + byte - 0x80) for byte in range(0x80, 0x100)}
_FROM_USER_DEFINED = {ord(char): byte for byte, char in _USER_DEFINED_HIGH.items()}


def decode(data: bytes, charset: str) -> str:
    """``data`` as text in ``charset``, what does not decode replaced by U+FFFD (as
    requests' ``.text`` does); UTF-8 for a name without a codec."""
    if charset == "windows-1252":
        return data.decode("latin-1").translate(_FROM_1252)
    if charset == "x-user-defined":
        return "".join(_USER_DEFINED_HIGH.get(byte, chr(byte)) for byte in data)
    if charset == "replacement":
        return "\ufffd" if data else ""
    return data.decode(CODECS.get(charset, "utf-8"), "replace")


def encode(text: str, charset: str) -> bytes:
    """``text`` back in ``charset``: the bytes a body decoded from it came as."""
    if charset == "windows-1252":
        return text.translate(_TO_1252).encode("latin-1")
    if charset == "x-user-defined":
        return text.translate(_FROM_USER_DEFINED).encode("latin-1")
    return text.encode(CODECS.get(charset, "utf-8"))
