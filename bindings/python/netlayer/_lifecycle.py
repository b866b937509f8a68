"""A client's lifetime: creating the handle, keeping it valid while calls use it,
freeing it from wherever ``close()`` is called, and starting over after fork().

Calls in flight are counted two ways: blocking requests append to ``_calls`` without
a lock (``list.append``/``pop`` are atomic; a call appends before it reads
``_closing``, and close() sets ``_closing`` before it reads the list, so either the
call sees close() or close() sees the call); everything else counts ``_active`` under
``_lock``.

``close()`` on an ordinary thread waits for those calls to leave, then frees the
handle (nl_client_free). On a library thread (inside a hook or callback of the
package, see ``_callbacks.inside``) nl_client_free would do nothing and waiting would
deadlock, so close() only marks the client closing: the last call to leave frees it
on its way out, or, when no call is in flight, a short-lived thread does. Either way
nl_client_free delivers every pending callback before the completion queues are
drained and freed (``_close_queues``), so every request completes exactly once.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import sys
import threading
import weakref
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Set, TypeVar, Union

from . import _callbacks, _hooks, _interrupt, _json, _logging
from ._documents import config as _config
from ._errors import Error, InvalidRequestError, error_from_result
from ._lib import NL_HOOK_FN, OwnedString, lib, take_string
from ._types import ConfigKeys
from ._uncopyable import Uncopyable

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["ClientBase", "closed_error", "HOLDING_CODES"]

_Self = TypeVar("_Self", bound="ClientBase")

#: The code of the methods that hold the handle while they call the library (each
#: module registers its own): a close() that finds one of them, of the same client,
#: below it on its own stack runs in a signal handler that interrupted that call, and
#: must not wait for it.
HOLDING_CODES: Set[CodeType] = set()


def closed_error() -> InvalidRequestError:
    return InvalidRequestError("client is closed", kind="invalid_request")


class ClientBase(Uncopyable):
    """The handle and its lifetime; the public methods live in the mixins of Client."""

    _queues: Dict[asyncio.AbstractEventLoop, Any]

    def __init__(self, config: Union[Mapping[str, Any], str, None] = None, /, **config_keys: Unpack[ConfigKeys]) -> None:
        document: Dict[str, Any] = _config(config, config_keys)
        _logging.apply_environment(document)
        #: log events go to the ``logging`` module while no on_log hook is set
        self._logs_to_logging = _logging.logs(document)
        self._init_sync_state()
        self._closing = False
        self._handle: Optional[int] = None
        self._queues = {}  # asyncio: one completion queue per event loop (see _asyncio)
        # Hooks: one NL_HOOK_FN per client (the kind travels as user_data), kept for the
        # client's whole lifetime, close() included; the table holds no reference back.
        self._hooks = _hooks.HookTable()
        self._hook_fn = NL_HOOK_FN(self._hooks.dispatch)
        error = OwnedString()
        handle = lib.nl_client_new(_json.dumps(document), ctypes.byref(error))
        if not handle:
            if error:
                raise error_from_result(_json.loads(take_string(error)))
            raise Error("netlayer: nl_client_new failed without an error document")
        self._handle = handle
        _live.add(self)
        if self._logs_to_logging:
            self._hooks.functions[_hooks.HOOK_LOG] = _logging.emit
            lib.nl_client_set_hook(handle, _hooks.HOOK_LOG, self._hook_fn, _hooks.HOOK_LOG)
        _interrupt.ensure()

    def _init_sync_state(self) -> None:
        self._lock = threading.Lock()
        self._state = threading.Condition(self._lock)  # close() waits on it
        self._active = 0  # non-blocking calls using the handle (under _lock)
        self._calls: List[None] = []  # blocking requests inside the library (no lock)
        self._free_deferred = False  # close() ran on a library thread: the last call out frees
        self._freed = False

    # ---- closing ---------------------------------------------------------------------

    def close(self) -> None:
        """Frees the client (nl_client_free). Idempotent; safe from any thread, hook or
        callback.

        Waits until blocking calls of other threads have returned; asynchronous
        requests and streams still in flight complete with ``netlayer.CancelledError``.
        From inside a hook or callback (or a signal handler that interrupted a blocking
        call of this client) it returns at once: the client is closed for new calls, and
        it is freed as soon as the calls in flight have returned.
        """
        deferred = _callbacks.inside() or self._inside_own_call()
        with self._state:
            if self._closing:
                while not deferred and not self._freed:
                    self._state.wait()  # a close() elsewhere is freeing it
                return
            if self._handle is None:
                return
            self._closing = True
            if deferred:
                if self._calls or self._active:
                    self._free_deferred = True
                    return
            else:
                try:
                    while self._calls or self._active:
                        self._state.wait()
                except BaseException:
                    # Interrupted (Ctrl-C) while calls are in flight: the last of them
                    # frees the client on its way out, as after a close() from a hook.
                    if self._calls or self._active:
                        self._free_deferred = True
                        raise
                    handle, self._handle = self._handle, None
                    self._free(handle)
                    raise
            handle, self._handle = self._handle, None
        if deferred:
            self._free_in_thread(handle)
        else:
            self._free(handle)

    def _inside_own_call(self) -> bool:
        """Whether this thread is inside a call of this client (close() from a signal
        handler run as a blocking call returned): that call frees the client on its way
        out. Walks the stack, so it costs the requests nothing."""
        frame: Optional[FrameType] = sys._getframe(2)
        while frame is not None:
            if frame.f_code in HOLDING_CODES:
                names = frame.f_locals
                if names.get("self") is self or names.get("client") is self:
                    return True
            frame = frame.f_back
        return False

    def _free(self, handle: int) -> None:
        """nl_client_free, then the completion queues (nothing can push to them now)."""
        try:
            self._before_free()
            lib.nl_client_free(handle)  # no hook or callback of this client runs after it
            _callbacks.release_states_kept_for(self._hooks)  # its threads' Python states
            _callbacks.forget_ended_threads()
            self._close_queues()
        finally:
            with self._state:
                self._freed = True
                self._state.notify_all()

    def _free_in_thread(self, handle: int) -> None:
        try:
            threading.Thread(target=self._free, args=(handle,), name="netlayer-close").start()
        except RuntimeError:  # interpreter shutdown: leave it to the process's end
            with self._state:
                self._freed = True
                self._state.notify_all()

    def _close_queues(self) -> None:
        """Drains and frees the completion queues (see _asyncio.AsyncMixin)."""

    def _before_free(self) -> None:
        """Ends what must end before nl_client_free (see _websocket.WebSocketMixin)."""

    def _after_last_call_locked(self) -> Optional[int]:
        """With _lock held, while closing: wakes close() once no call is in flight, or
        returns the handle this thread must free (close() ran on a library thread)."""
        if self._active or self._calls:
            return None
        if not self._free_deferred:
            self._state.notify_all()
            return None
        self._free_deferred = False
        handle, self._handle = self._handle, None
        return handle

    def _free_here(self, handle: Optional[int]) -> None:
        if handle is not None:
            if _callbacks.inside():
                self._free_in_thread(handle)
            else:
                self._free(handle)

    def _left_call(self) -> None:
        """After a blocking call left the library while the client is closing."""
        with self._lock:
            handle = self._after_last_call_locked()
        self._free_here(handle)

    # ---- using the handle ------------------------------------------------------------

    def _enter(self) -> int:
        with self._lock:
            if self._handle is None or self._closing:
                raise closed_error()
            self._active += 1
            return self._handle

    def _leave(self) -> None:
        with self._lock:
            self._active -= 1
            if not self._closing:
                return
            handle = self._after_last_call_locked()
        self._free_here(handle)

    def _cancel(self, request_id: int) -> bool:
        """nl_cancel; True when the request was still in flight."""
        return self._on_request(lambda handle: lib.nl_cancel(handle, request_id))

    def _pause(self, request_id: int, paused: bool) -> bool:
        """nl_pause; True when the request was still in flight."""
        return self._on_request(lambda handle: lib.nl_pause(handle, request_id, 1 if paused else 0))

    def _on_request(self, call: Callable[[int], int]) -> bool:
        """``call(handle)`` for a request in flight, unless the client is closing
        (close() cancels everything itself); True when it returned non-zero."""
        with self._lock:
            if self._handle is None or self._closing:
                return False
            self._active += 1
            handle = self._handle
        try:
            return bool(call(handle))
        finally:
            self._leave()

    def _using(self) -> "_Using":
        return _Using(self)

    @property
    def closed(self) -> bool:
        """True once close() has started."""
        return self._handle is None or self._closing

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self: _Self) -> _Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A forgotten client is freed when collected, but not while the interpreter
        # shuts down, when library threads may no longer enter Python safely.
        if getattr(self, "_handle", None) is not None and not sys.is_finalizing():
            try:
                self.close()
            except Exception:
                pass

    def __repr__(self) -> str:
        return f"<netlayer.Client {'closed' if self.closed else 'open'}>"

    # ---- fork() ------------------------------------------------------------------------

    def _reset_after_fork(self) -> None:
        """In a child of fork(): the library restarts the client on its first use there;
        the package drops what belongs to the parent's threads and event loops."""
        closing_elsewhere = self._closing and not self._freed
        self._init_sync_state()
        self._queues = {}  # the parent's loops and queues: never touched here again
        if closing_elsewhere:
            self._freed = True  # the parent's thread that was freeing it is not here


HOLDING_CODES.add(ClientBase._cancel.__code__)


class _Using:
    """``with client._using() as handle``: the handle, kept valid against close()."""

    __slots__ = ("_client",)

    def __init__(self, client: ClientBase) -> None:
        self._client = client

    def __enter__(self) -> int:
        return self._client._enter()

    def __exit__(self, *exc_info: object) -> None:
        self._client._leave()


_live: "weakref.WeakSet[ClientBase]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for reset in (_callbacks.after_fork_in_child, _hooks.after_fork_in_child):
        reset()
    for client in list(_live):
        client._reset_after_fork()
    _interrupt.after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
