"""The C library, loaded once, with a prototype declared for every function.

Each declaration quotes the C prototype from include/netlayer.h above it. Strings
the library returns for the caller to free are declared ``OwnedString``, a subclass of
``c_char_p``: ctypes returns subclasses of its simple types unconverted, so the
pointer survives to be handed back to ``nl_free``; ``take_string`` copies and frees.
The blocking request and call use the ``_borrowed`` variants instead, whose results
the library keeps: ``c_char_p`` copies them into bytes, and no ``nl_free`` follows.
"""

from __future__ import annotations

import ctypes
from typing import Callable, Optional

from . import _loader

lib, library_path = _loader.load_default()


class OwnedString(ctypes.c_char_p):
    """A ``char *`` the library returned for the caller to free with ``nl_free``.

    ``.value`` copies the text without a second foreign call (``ctypes.string_at``
    is one), and the instance itself is what ``nl_free`` takes back.
    """


# typedef void (*nl_callback)(uint64_t id, const char *result_json, void *user_data);
# (result_json is borrowed and valid only during the call: copy it, never free it)
NL_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p)

# typedef void (*nl_hook_fn)(const char *event_json, nl_reply *reply, void *user_data);
NL_HOOK_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
NO_HOOK = NL_HOOK_FN()  # a NULL nl_hook_fn: nl_client_set_hook(client, kind, NULL, NULL) removes

# const char *nl_version(void);   (static storage: never freed)
lib.nl_version.argtypes = []
lib.nl_version.restype = ctypes.c_char_p

# int nl_abi_version(void);
lib.nl_abi_version.argtypes = []
lib.nl_abi_version.restype = ctypes.c_int

# nl_client *nl_client_new(const char *config_json, char **error_json);
lib.nl_client_new.argtypes = [ctypes.c_char_p, ctypes.POINTER(OwnedString)]
lib.nl_client_new.restype = ctypes.c_void_p

# void nl_client_free(nl_client *client);
lib.nl_client_free.argtypes = [ctypes.c_void_p]
lib.nl_client_free.restype = None

# char *nl_request(nl_client *client, const char *endpoint_json);
lib.nl_request.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.nl_request.restype = OwnedString

# char *nl_call(nl_client *client, const char *name, const char *overlay_json);
lib.nl_call.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
lib.nl_call.restype = OwnedString

# char *nl_request_batch(nl_client *client, const char *endpoints_json_array);
lib.nl_request_batch.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.nl_request_batch.restype = OwnedString

# uint64_t nl_request_async(nl_client *client, const char *endpoint_json,
#                           nl_callback callback, void *user_data);
lib.nl_request_async.argtypes = [ctypes.c_void_p, ctypes.c_char_p, NL_CALLBACK, ctypes.c_void_p]
lib.nl_request_async.restype = ctypes.c_uint64

# uint64_t nl_call_async(nl_client *client, const char *name, const char *overlay_json,
#                        nl_callback callback, void *user_data);
lib.nl_call_async.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, NL_CALLBACK, ctypes.c_void_p]
lib.nl_call_async.restype = ctypes.c_uint64

# int nl_cancel(nl_client *client, uint64_t id);
lib.nl_cancel.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
lib.nl_cancel.restype = ctypes.c_int

# void nl_free(void *p);
lib.nl_free.argtypes = [ctypes.c_void_p]
lib.nl_free.restype = None

# Lent results: declared when the library exports them (the blocking calls use them;
# without them, they take an owned string and free it).
has_borrowed = hasattr(lib, "nl_request_borrowed") and hasattr(lib, "nl_call_borrowed")
if has_borrowed:
    # const char *nl_request_borrowed(nl_client *client, const char *endpoint_json);
    # (the library's per-thread buffer: ctypes copies it into bytes as the call
    # returns, on the calling thread, before anything else can reuse it)
    lib.nl_request_borrowed.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nl_request_borrowed.restype = ctypes.c_char_p

    # const char *nl_call_borrowed(nl_client *client, const char *name, const char *overlay_json);
    lib.nl_call_borrowed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.nl_call_borrowed.restype = ctypes.c_char_p

# Hooks: declared when the library exports them (Client.on_adapt ..., Client.stream).
has_hooks = hasattr(lib, "nl_client_set_hook") and hasattr(lib, "nl_reply_set")
if has_hooks:
    # int nl_client_set_hook(nl_client *client, int kind, nl_hook_fn fn, void *user_data);
    lib.nl_client_set_hook.argtypes = [ctypes.c_void_p, ctypes.c_int, NL_HOOK_FN, ctypes.c_void_p]
    lib.nl_client_set_hook.restype = ctypes.c_int

    # void nl_reply_set(nl_reply *reply, const char *json);
    lib.nl_reply_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nl_reply_set.restype = None

# Completion queues: declared when the library exports them (Client.arequest/acall use
# them; without them, results come back through a Python callback instead).
has_queues = all(hasattr(lib, name) for name in
                 ("nl_queue_new", "nl_queue_fd", "nl_queue_push", "nl_queue_take", "nl_queue_free"))
QUEUE_PUSH: Optional["ctypes._CFuncPtr"] = None
if has_queues:
    # nl_queue *nl_queue_new(void);
    lib.nl_queue_new.argtypes = []
    lib.nl_queue_new.restype = ctypes.c_void_p

    # int nl_queue_fd(const nl_queue *queue);
    lib.nl_queue_fd.argtypes = [ctypes.c_void_p]
    lib.nl_queue_fd.restype = ctypes.c_int

    # void nl_queue_push(uint64_t id, const char *result_json, void *queue);
    # (an nl_callback: passed to nl_request_async as a C function pointer, so the
    # library's threads complete a request without entering Python)
    QUEUE_PUSH = NL_CALLBACK(("nl_queue_push", lib))

    # char *nl_queue_take(nl_queue *queue);
    lib.nl_queue_take.argtypes = [ctypes.c_void_p]
    lib.nl_queue_take.restype = OwnedString

    # void nl_queue_free(nl_queue *queue);
    lib.nl_queue_free.argtypes = [ctypes.c_void_p]
    lib.nl_queue_free.restype = None


def take_string(text: OwnedString) -> bytes:
    """Copies a string the library returned (caller-owned) and frees it with nl_free."""
    value = _owned_or_none(text)
    if value is None:
        raise MemoryError("netlayer: the library returned NULL (out of memory)")
    return value


def _request_owned(client: int, endpoint_json: bytes) -> Optional[bytes]:
    return _owned_or_none(lib.nl_request(client, endpoint_json))


def _call_owned(client: int, name: bytes, overlay_json: Optional[bytes]) -> Optional[bytes]:
    return _owned_or_none(lib.nl_call(client, name, overlay_json))


def _owned_or_none(text: OwnedString) -> Optional[bytes]:
    """The copied text of a caller-owned string, freed with nl_free (None for NULL)."""
    try:
        return text.value
    finally:
        lib.nl_free(text)  # nl_free(NULL) does nothing


#: ``request_document(client, endpoint_json)``: nl_request's result document, copied
#: (None when the library is out of memory); ``call_document(client, name, overlay)``
#: the same for nl_call. The lent variants when the library has them: no nl_free
#: call per request.
request_document: Callable[[int, bytes], Optional[bytes]] = (
    lib.nl_request_borrowed if has_borrowed else _request_owned)
call_document: Callable[[int, bytes, Optional[bytes]], Optional[bytes]] = (
    lib.nl_call_borrowed if has_borrowed else _call_owned)


def borrowed_string(pointer: Optional[int]) -> bytes:
    """Copies a string the library lends (valid only during a callback); never frees it."""
    if not pointer:
        return b""
    return ctypes.string_at(pointer)


def version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH" (nl_version)."""
    raw: bytes = lib.nl_version()
    return raw.decode("ascii")


def abi_version() -> int:
    """The loaded library's ABI version (nl_abi_version)."""
    return int(lib.nl_abi_version())
