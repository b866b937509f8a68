"""Hooks (nl_client_set_hook) as Python callables, and what a raising one leaves behind.

Each client owns one ``HookTable`` and one ``NL_HOOK_FN`` object wrapping its
``dispatch`` method; the kind travels as ``user_data``. The ctypes object is kept by
the client for its whole lifetime (close() included), and the table holds no
reference to the client, so no cycle keeps a forgotten client alive.

A hook (or a per-request callback) that raises fails only the request concerned:
``answer`` replies ``nl_reply_fail(reply, "invalid_request", message)`` with the
message ``"on_adapt hook raised ValueError: boom"``, which the library puts in the
result document as it is, and records the exception under that exact message (and
the request id of the event, when the event has one). ``attach_cause`` takes it back
by the same message, preferring the request id when the caller knows it, and sets it
as the error's ``__cause__``.
"""

from __future__ import annotations

import base64

import collections
import sys
import threading
import traceback
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from . import _callbacks, _json
from ._errors import Error
from ._lib import lib, reply_fail

__all__ = [
    "HOOK_ADAPT", "HOOK_RETRY", "HOOK_RESOLVE_ERROR", "HOOK_LOG", "HOOK_PROGRESS",
    "HOOK_NAMES", "HookTable", "answer", "attach_cause", "after_fork_in_child",
]

# enum { NL_HOOK_ADAPT = 1, NL_HOOK_RETRY = 2, NL_HOOK_RESOLVE_ERROR = 3, NL_HOOK_LOG = 4,
#        NL_HOOK_PROGRESS = 5, NL_HOOK_STREAM = 6 };
HOOK_ADAPT = 1
HOOK_RETRY = 2
HOOK_RESOLVE_ERROR = 3
HOOK_LOG = 4
HOOK_PROGRESS = 5

#: kind -> the Client method that sets it (used in messages)
HOOK_NAMES = {
    HOOK_ADAPT: "on_adapt",
    HOOK_RETRY: "on_retry",
    HOOK_RESOLVE_ERROR: "on_resolve_error",
    HOOK_LOG: "on_log",
    HOOK_PROGRESS: "on_progress",
}

HookFunction = Callable[[Dict[str, Any]], Any]

# ---- exceptions raised by hooks --------------------------------------------------------

_MAX_REMEMBERED = 1024  # failures whose result nobody reads must not pile up


class _Failures:
    """Exceptions of hooks that failed their request, by the exact failure message."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        #: message -> [(request id or None, exception)], oldest message first
        self.entries: "collections.OrderedDict[str, List[Tuple[Optional[int], BaseException]]]" = \
            collections.OrderedDict()

    def remember(self, message: str, request_id: Optional[int], exception: BaseException) -> None:
        with self.lock:
            self.entries.setdefault(message, []).append((request_id, exception))
            self.count += 1
            while self.count > _MAX_REMEMBERED:
                _, dropped = self.entries.popitem(last=False)
                self.count -= len(dropped)

    def take(self, message: str, request_id: Optional[int]) -> Optional[BaseException]:
        if message not in self.entries:  # the common case: no lock
            return None
        with self.lock:
            entries = self.entries.get(message)
            if not entries:
                return None
            index = 0
            if request_id is not None:
                index = next((i for i, (rid, _) in enumerate(entries) if rid == request_id), 0)
            _, exception = entries.pop(index)
            self.count -= 1
            if not entries:
                del self.entries[message]
            return exception


_failures = _Failures()


def attach_cause(error: Error, request_id: Optional[int] = None) -> Error:
    """Sets the exception of the hook that failed this request as ``__cause__``."""
    if error.kind == "invalid_request":
        cause = _failures.take(error.message, request_id)
        if cause is not None:
            error.__cause__ = cause
    return error


def answer(function: HookFunction, event: Any, reply: Optional[int], who: str
           ) -> Optional[Tuple[str, BaseException]]:
    """Calls a hook or callback with its event and answers the library: its dict with
    nl_reply_set, nothing for None, nl_reply_fail when it raises or returns something
    else. Returns (message, exception) when it failed the request."""
    try:
        result = function(event)
        if result is None:
            return None
        if not isinstance(result, Mapping):
            raise TypeError(f"returned {type(result).__name__}; expected a dict or None")
        document = dict(result)
        if isinstance(document.get("body"), (bytes, bytearray, memoryview)):  # an ADAPT reply's new body
            document["body"] = base64.b64encode(document["body"]).decode("ascii")
        payload = _json.dumps(document)
    except BaseException as exception:  # noqa: B902 - one request fails, not the loop
        message = f"{who} raised {type(exception).__name__}: {exception}"
        reply_fail(reply, message)
        return message, exception
    lib.nl_reply_set(reply, payload)
    return None


def _report_log_hook_error(exception: BaseException) -> None:
    """on_log has no reply to fail a request with: the exception goes to stderr."""
    try:
        print("netlayer: exception in the on_log hook (ignored):", file=sys.stderr)
        traceback.print_exception(type(exception), exception, exception.__traceback__, file=sys.stderr)
    except BaseException:
        pass


class HookTable:
    """The Python side of one client's hooks; ``dispatch`` is what the library calls.
    It is also the client's identity for ``_callbacks.inside``."""

    def __init__(self) -> None:
        self.functions: Dict[int, HookFunction] = {}

    def dispatch(self, event_json: Optional[int], reply: Optional[int], user_data: Optional[int]) -> None:
        """nl_hook_fn; runs on a library thread and never lets an exception unwind into C."""
        try:
            kind = user_data or 0
            function = self.functions.get(kind)
            if function is None:
                return
            _callbacks.enter(self)
            try:
                self._run(kind, function, _callbacks.loads_event(event_json), reply)
            finally:
                _callbacks.leave()
        except BaseException:
            pass

    @staticmethod
    def _run(kind: int, function: HookFunction, event: Any, reply: Optional[int]) -> None:
        if kind == HOOK_LOG:
            try:
                function(event)
            except BaseException as exception:  # noqa: B902
                _report_log_hook_error(exception)
            return
        failed = answer(function, event, reply, f"{HOOK_NAMES.get(kind, 'netlayer')} hook")
        if failed is not None:
            request_id = event.get("id") if isinstance(event, dict) else None
            _failures.remember(failed[0], request_id if isinstance(request_id, int) else None, failed[1])


def after_fork_in_child() -> None:
    """In a child of fork(): a new lock (the parent's may have been held at the fork)."""
    _failures.lock = threading.Lock()
