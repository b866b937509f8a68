"""The C library, loaded once, with a prototype declared for every function.

Each declaration quotes the C prototype from include/netlayer.h above it. The loader
(``_loader``) accepts only a library of ABI 1, so every function of ABI 1 is declared
unconditionally. Strings the library returns for the caller to free are declared
``OwnedString``, a subclass of ``c_char_p``: ctypes returns subclasses of its simple
types unconverted, so the pointer survives to be handed back to ``nl_free``;
``take_string`` copies and frees. The blocking request and call use the ``_borrowed``
variants, whose results the library keeps: ``c_char_p`` copies them into bytes, and no
``nl_free`` follows.
"""

from __future__ import annotations

import ctypes
from typing import Optional

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

# typedef void (*nl_event_fn)(uint64_t id, const char *event_json, nl_reply *reply, void *user_data);
NL_EVENT_FN = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

# #define NL_REQUEST_CALLBACKS_VERSION 1
REQUEST_CALLBACKS_VERSION = 1


class RequestCallbacks(ctypes.Structure):
    """``nl_request_callbacks``; unset function fields are NULL.

    typedef struct nl_request_callbacks {
        int version; nl_callback on_complete; nl_event_fn on_progress;
        nl_event_fn on_stream; void *user_data;
    } nl_request_callbacks;
    """

    _fields_ = [
        ("version", ctypes.c_int),
        ("on_complete", NL_CALLBACK),
        ("on_progress", NL_EVENT_FN),
        ("on_stream", NL_EVENT_FN),
        ("user_data", ctypes.c_void_p),
    ]


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

# const char *nl_request_borrowed(nl_client *client, const char *endpoint_json);
# (the library's per-thread buffer: ctypes copies it into bytes as the call returns,
# on the calling thread, before anything else can reuse it)
lib.nl_request_borrowed.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.nl_request_borrowed.restype = ctypes.c_char_p

# const char *nl_call_borrowed(nl_client *client, const char *name, const char *overlay_json);
lib.nl_call_borrowed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
lib.nl_call_borrowed.restype = ctypes.c_char_p

# char *nl_client_operations(nl_client *client);
lib.nl_client_operations.argtypes = [ctypes.c_void_p]
lib.nl_client_operations.restype = OwnedString

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

# uint64_t nl_request_start(nl_client *client, const char *endpoint_json,
#                           const nl_request_callbacks *callbacks);
lib.nl_request_start.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(RequestCallbacks)]
lib.nl_request_start.restype = ctypes.c_uint64

# uint64_t nl_call_start(nl_client *client, const char *name, const char *overlay_json,
#                        const nl_request_callbacks *callbacks);
lib.nl_call_start.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                              ctypes.POINTER(RequestCallbacks)]
lib.nl_call_start.restype = ctypes.c_uint64

# int nl_cancel(nl_client *client, uint64_t id);
lib.nl_cancel.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
lib.nl_cancel.restype = ctypes.c_int
# int nl_pause(nl_client *client, uint64_t id, int paused);
lib.nl_pause.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int]
lib.nl_pause.restype = ctypes.c_int

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

# int nl_client_set_hook(nl_client *client, int kind, nl_hook_fn fn, void *user_data);
lib.nl_client_set_hook.argtypes = [ctypes.c_void_p, ctypes.c_int, NL_HOOK_FN, ctypes.c_void_p]
lib.nl_client_set_hook.restype = ctypes.c_int

# void nl_reply_set(nl_reply *reply, const char *json);
lib.nl_reply_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.nl_reply_set.restype = None

# void nl_reply_fail(nl_reply *reply, const char *kind, const char *message);
lib.nl_reply_fail.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
lib.nl_reply_fail.restype = None

# int nl_thread_set_interrupt_fd(int fd);
lib.nl_thread_set_interrupt_fd.argtypes = [ctypes.c_int]
lib.nl_thread_set_interrupt_fd.restype = ctypes.c_int

# ---- WebSockets -------------------------------------------------------------------------

# #define NL_WS_TEXT 1 / #define NL_WS_BINARY 2
WS_TEXT = 1
WS_BINARY = 2

# #define NL_WEBSOCKET_CALLBACKS_VERSION 1
WEBSOCKET_CALLBACKS_VERSION = 1

# void (*on_open)(nl_websocket *ws, const char *open_json, void *user_data);
# void (*on_error)(nl_websocket *ws, const char *error_json, void *user_data);
# (the strings are borrowed, valid only during the call: copied, never freed)
NL_WS_TEXT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

# void (*on_message)(nl_websocket *ws, int kind, const char *data, size_t length, void *user_data);
# (data is not NUL-terminated: a void pointer, read with string_at(data, length))
NL_WS_MESSAGE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                                    ctypes.c_void_p)

# void (*on_close)(nl_websocket *ws, int code, const char *reason, void *user_data);
NL_WS_CLOSE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class WebSocketCallbacks(ctypes.Structure):
    """``nl_websocket_callbacks``; unset function fields are NULL.

    typedef struct nl_websocket_callbacks {
        int version; on_open; on_message; on_error; on_close; void *user_data;
    } nl_websocket_callbacks;
    """

    _fields_ = [
        ("version", ctypes.c_int),
        ("on_open", NL_WS_TEXT_FN),
        ("on_message", NL_WS_MESSAGE_FN),
        ("on_error", NL_WS_TEXT_FN),
        ("on_close", NL_WS_CLOSE_FN),
        ("user_data", ctypes.c_void_p),
    ]


# nl_websocket *nl_websocket_open(nl_client *client, const char *websocket_json,
#                                 const nl_websocket_callbacks *callbacks, char **error_json);
lib.nl_websocket_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(WebSocketCallbacks),
                                  ctypes.POINTER(OwnedString)]
lib.nl_websocket_open.restype = ctypes.c_void_p

# int nl_websocket_send(nl_websocket *ws, int kind, const void *data, size_t length, char **error_json);
lib.nl_websocket_send.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.POINTER(OwnedString)]
lib.nl_websocket_send.restype = ctypes.c_int

# int nl_websocket_close(nl_websocket *ws, int code, const char *reason, char **error_json);
lib.nl_websocket_close.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(OwnedString)]
lib.nl_websocket_close.restype = ctypes.c_int

# int nl_websocket_pause(nl_websocket *ws, int paused);
lib.nl_websocket_pause.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.nl_websocket_pause.restype = ctypes.c_int

# void nl_websocket_free(nl_websocket *ws);
lib.nl_websocket_free.argtypes = [ctypes.c_void_p]
lib.nl_websocket_free.restype = None

# void nl_free(void *p);
lib.nl_free.argtypes = [ctypes.c_void_p]
lib.nl_free.restype = None

#: ``request_document(client, endpoint_json)``: nl_request's result document, copied
#: (None when the library is out of memory); ``call_document(client, name, overlay)``
#: the same for nl_call. The lent variants: no nl_free call per request.
request_document = lib.nl_request_borrowed
call_document = lib.nl_call_borrowed


def take_string(text: OwnedString) -> bytes:
    """Copies a string the library returned (caller-owned) and frees it with nl_free."""
    try:
        value = text.value
    finally:
        lib.nl_free(text)  # nl_free(NULL) does nothing
    if value is None:
        raise MemoryError("netlayer: the library returned NULL (out of memory)")
    return value


def borrowed_string(pointer: Optional[int]) -> bytes:
    """Copies a string the library lends (valid only during a callback); never frees it."""
    if not pointer:
        return b""
    return ctypes.string_at(pointer)


def reply_fail(reply: Optional[int], message: str) -> None:
    """Fails the request a hook or event callback decides on, with kind invalid_request."""
    lib.nl_reply_fail(reply, b"invalid_request", message.encode("utf-8", "replace"))


def version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH" (nl_version)."""
    raw: bytes = lib.nl_version()
    return raw.decode("ascii")


def abi_version() -> int:
    """The loaded library's ABI version (nl_abi_version)."""
    return int(lib.nl_abi_version())
