"""Hooks (nl_client_set_hook) as Python callables, and the STREAM hook's dispatch.

Each client owns one ``HookTable`` and one ``NL_HOOK_FN`` object wrapping its
``dispatch`` method; the kind travels as ``user_data``. The ctypes object is kept by
the client for its whole lifetime (close() included), and the table holds no
reference to the client, so no cycle keeps a forgotten client alive.

An exception inside a hook must fail only the request concerned, with a clear
message. The library fails a request whose hook reply is malformed with kind
``invalid_request`` and a message naming the offending reply key, so a hook that
raises answers ``{"__netlayer_python_hook_error_<n>__": true}``: the token <n> comes
back inside the result's message whatever path the request took (blocking call,
asyncio, batch, stream), and ``translate`` swaps that error for one that names the
hook and the exception (kept as ``__cause__``). Events of RESOLVE_ERROR carry no
request id, so the token, not the id, is what ties the exception to its request.
"""

from __future__ import annotations

import base64
import collections
import itertools
import re
import sys
import threading
import traceback
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from . import _json
from ._errors import Error, InvalidRequestError
from ._lib import borrowed_string, lib

__all__ = [
    "HOOK_ADAPT", "HOOK_RETRY", "HOOK_RESOLVE_ERROR", "HOOK_LOG", "HOOK_PROGRESS", "HOOK_STREAM",
    "HOOK_NAMES", "HookTable", "translate",
]

# enum { NL_HOOK_ADAPT = 1, NL_HOOK_RETRY = 2, NL_HOOK_RESOLVE_ERROR = 3, NL_HOOK_LOG = 4,
#        NL_HOOK_PROGRESS = 5, NL_HOOK_STREAM = 6 };
HOOK_ADAPT = 1
HOOK_RETRY = 2
HOOK_RESOLVE_ERROR = 3
HOOK_LOG = 4
HOOK_PROGRESS = 5
HOOK_STREAM = 6

#: kind -> the Client method that sets it (used in messages)
HOOK_NAMES = {
    HOOK_ADAPT: "on_adapt",
    HOOK_RETRY: "on_retry",
    HOOK_RESOLVE_ERROR: "on_resolve_error",
    HOOK_LOG: "on_log",
    HOOK_PROGRESS: "on_progress",
}

HookFunction = Callable[[Dict[str, Any]], Any]
#: What a stream receives: ("event", dict) for each body event, ("result", bytes) at the end.
StreamItem = Tuple[str, Any]
Deliver = Callable[[StreamItem], None]

# ---- exceptions raised by hooks --------------------------------------------------------

_TOKEN_PREFIX = "__netlayer_python_hook_error_"
_TOKEN = re.compile(re.escape(_TOKEN_PREFIX) + r"(\d+)__")
_MAX_REMEMBERED = 1024  # failures whose result nobody reads must not pile up

_errors: "collections.OrderedDict[int, Tuple[str, BaseException]]" = collections.OrderedDict()
_errors_lock = threading.Lock()
_next_token = itertools.count(1)


def _remember(hook: str, exception: BaseException) -> bytes:
    """Stores the exception; returns the reply that makes the library fail the request."""
    token = next(_next_token)
    with _errors_lock:
        _errors[token] = (hook, exception)
        while len(_errors) > _MAX_REMEMBERED:
            _errors.popitem(last=False)
    return _json.dumps({f"{_TOKEN_PREFIX}{token}__": True})


def translate(error: Error) -> Error:
    """The error of a request failed by a hook's exception, named after the hook."""
    if error.kind != "invalid_request" or _TOKEN_PREFIX not in error.message:
        return error
    match = _TOKEN.search(error.message)
    entry = None
    if match is not None:
        with _errors_lock:
            entry = _errors.pop(int(match.group(1)), None)
    if entry is None:
        message = "a netlayer hook raised an exception (no longer on record)"
        cause: Optional[BaseException] = None
    else:
        hook, cause = entry
        message = f"{hook} hook raised {type(cause).__name__}: {cause}"
    replaced = InvalidRequestError(
        message, kind="invalid_request", status=error.status, body=error.body, code=error.code,
        headers=error.headers, attempts=error.attempts, timing=error.timing, curl_code=error.curl_code)
    replaced.__cause__ = cause
    return replaced


def _report_log_hook_error(exception: BaseException) -> None:
    """on_log has no reply to fail a request with: the exception goes to stderr."""
    try:
        print("netlayer: exception in the on_log hook (ignored):", file=sys.stderr)
        traceback.print_exception(type(exception), exception, exception.__traceback__, file=sys.stderr)
    except BaseException:
        pass


# ---- the table -------------------------------------------------------------------------


class HookTable:
    """The Python side of one client's hooks; ``dispatch`` is what the library calls."""

    def __init__(self) -> None:
        self.functions: Dict[int, HookFunction] = {}
        # Streams: request id -> where its events go. While a stream is being started
        # (``starting`` > 0), events of ids not registered yet are held in ``orphans``:
        # the library may deliver the first event before nl_request_async has returned.
        self.lock = threading.Lock()
        self.streams: Dict[int, Deliver] = {}
        self.starting = 0
        self.stream_users = 0  # streams started and not ended: the STREAM hook is set
        self.orphans: Dict[int, List[StreamItem]] = {}

    def dispatch(self, event_json: Optional[int], reply: Optional[int], user_data: Optional[int]) -> None:
        """nl_hook_fn; runs on a library thread and never lets an exception unwind into C."""
        try:
            kind = user_data or 0
            if kind == HOOK_STREAM:
                self._stream_event(event_json)
                return
            function = self.functions.get(kind)
            if function is None:
                return
            event = _json.loads(borrowed_string(event_json))
            hook = HOOK_NAMES.get(kind, "hook")
            try:
                answer = function(event)
                if kind == HOOK_LOG or answer is None:
                    return
                if not isinstance(answer, Mapping):
                    raise TypeError(f"returned {type(answer).__name__}; a hook returns a dict or None")
                payload = _json.dumps(dict(answer))
            except BaseException as exception:  # noqa: B902 - one request fails, not the loop
                if kind == HOOK_LOG:
                    _report_log_hook_error(exception)
                    return
                payload = _remember(hook, exception)
            lib.nl_reply_set(reply, payload)
        except BaseException:
            pass

    # ---- streams ---------------------------------------------------------------------

    def _stream_event(self, event_json: Optional[int]) -> None:
        event = _json.loads(borrowed_string(event_json))
        if not isinstance(event, dict):
            return
        chunk = event.get("chunk")
        if isinstance(chunk, str):
            event["chunk"] = base64.b64decode(chunk)
        request_id = event.get("id")
        if isinstance(request_id, int):
            self.deliver(request_id, ("event", event))

    def deliver(self, request_id: int, item: StreamItem) -> None:
        """Hands an event or the result to the stream of ``request_id``; holds it while
        a stream is being started (its id may not be registered yet)."""
        with self.lock:
            deliver = self.streams.get(request_id)
            if deliver is not None:
                deliver(item)
            elif self.starting:
                self.orphans.setdefault(request_id, []).append(item)
            # else: a stream nobody reads any more (closed, or a plain request with "stream")
