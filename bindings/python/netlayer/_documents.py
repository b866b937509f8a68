"""Endpoint and config documents from Python arguments (keyword spellings, merging)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Union

__all__ = ["CONFIG_ALIASES", "ENDPOINT_ALIASES", "with_aliases", "endpoint", "stream_endpoint", "method"]

Endpoint = Mapping[str, Any]

# snake_case spellings accepted for keyword arguments (documents keep the contract's keys)
CONFIG_ALIASES = {
    "base_url": "baseURL",
    "connect_timeout": "connectTimeout",
    "acceptable_status": "acceptableStatus",
    "follow_redirects": "followRedirects",
    "max_redirects": "maxRedirects",
    "max_response_bytes": "maxResponseBytes",
    "max_stream_item_bytes": "maxStreamItemBytes",
    "max_download_bytes": "maxDownloadBytes",
    "max_concurrent": "maxConcurrent",
    "user_agent": "userAgent",
}
ENDPOINT_ALIASES = {
    "is_full_path": "isFullPath",
    "body_encoding": "bodyEncoding",
    "acceptable_status": "acceptableStatus",
    "max_stream_item_bytes": "maxStreamItemBytes",
    "max_response_bytes": "maxResponseBytes",
    "max_download_bytes": "maxDownloadBytes",
}


def with_aliases(keys: Mapping[str, Any], aliases: Mapping[str, str]) -> Dict[str, Any]:
    """``keys`` with snake_case spellings replaced by the contract's names."""
    out: Dict[str, Any] = {}
    for name, value in keys.items():
        key = aliases.get(name, name)
        if key in out:
            raise TypeError(f"netlayer: {key!r} given twice (as {name!r} too)")
        out[key] = value
    return out


def endpoint(document: Optional[Endpoint], keys: Mapping[str, Any]) -> Dict[str, Any]:
    """An endpoint document: ``document`` with the keyword arguments merged over it."""
    out = dict(document or {})
    out.update(with_aliases(keys, ENDPOINT_ALIASES))
    return out


def stream_endpoint(document: Union[Endpoint, str, None], keys: Mapping[str, Any]) -> Dict[str, Any]:
    """The endpoint of ``Client.stream``: a path or a document; ``"stream"`` defaults to sse."""
    out = endpoint({"path": document} if isinstance(document, str) else document, keys)
    if out.get("stream") is None:
        out["stream"] = "sse"
    return out


def method(name: str, path: str, keys: Mapping[str, Any]) -> Dict[str, Any]:
    """The endpoint of ``Client.get(path, ...)`` and its siblings."""
    if "method" in keys:
        raise TypeError(f"netlayer: {name.lower()}() sets the method; use request() for another")
    out = with_aliases(keys, ENDPOINT_ALIASES)
    out["path"] = path
    out["method"] = name
    return out
