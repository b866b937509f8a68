#!/usr/bin/env python3
"""Calling libnetlayer.so with nothing but ctypes.

    NETLAYER_LIBRARY=build/lib/libnetlayer.so NETLAYER_TEST_URL=http://127.0.0.1:8080/ \
        python3 bindings/python/examples/ctypes_example.py
"""
import ctypes
import json
import os

lib = ctypes.CDLL(os.environ.get("NETLAYER_LIBRARY", "libnetlayer.so.1"))

# nl_client *nl_client_new(const char *config_json, char **error_json);
lib.nl_client_new.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
lib.nl_client_new.restype = ctypes.c_void_p
# char *nl_request(nl_client *client, const char *endpoint_json);
lib.nl_request.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.nl_request.restype = ctypes.c_void_p  # a pointer, not c_char_p: we must free it
# void nl_free(void *p);
lib.nl_free.argtypes = [ctypes.c_void_p]
lib.nl_free.restype = None
# void nl_client_free(nl_client *client);
lib.nl_client_free.argtypes = [ctypes.c_void_p]
lib.nl_client_free.restype = None


def take_string(pointer: int) -> str:
    """Copies a library-owned string and frees it."""
    try:
        return ctypes.string_at(pointer).decode()
    finally:
        lib.nl_free(pointer)


def main() -> int:
    base = os.environ.get("NETLAYER_TEST_URL", "http://127.0.0.1:8080/")
    error = ctypes.c_void_p()
    client = lib.nl_client_new(json.dumps({"baseURL": base, "timeout": 5}).encode(), ctypes.byref(error))
    if not client:
        print("nl_client_new failed:", take_string(error.value))
        return 1
    try:
        endpoint = {"path": "movies", "response": {"keyPath": "results.0.title"}}
        result = json.loads(take_string(lib.nl_request(client, json.dumps(endpoint).encode())))
        print("first movie:", result["value"])
        missing = json.loads(take_string(lib.nl_request(client, b'{"path": "movies/99"}')))
        print("missing movie:", missing["error"]["kind"], missing["status"])
        return 0 if result["ok"] and missing["error"]["kind"] == "status" else 1
    finally:
        lib.nl_client_free(client)


if __name__ == "__main__":
    raise SystemExit(main())
