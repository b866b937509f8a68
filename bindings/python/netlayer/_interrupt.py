"""Ctrl-C during a blocking call: the library's interrupt descriptor fed by Python's
signal wakeup fd.

Python's C-level signal handler only sets a flag; the interpreter runs the Python
handler (raising KeyboardInterrupt) when control comes back to it, which for a thread
inside a blocking foreign call would be when the request ends. So, on the main thread
(the only one Python delivers signals to), the package makes one non-blocking pipe per
process, installs its write end with ``signal.set_wakeup_fd`` (the C handler writes a
byte there on every signal) and gives the read end to the library with
``nl_thread_set_interrupt_fd``: a signal then cancels the main thread's blocking call
within a fraction of a second. The call returns a result of kind "cancelled"; the
interpreter raises the pending KeyboardInterrupt right after it; when the signal's
handler does not raise, the cancelled result raises ``netlayer.CancelledError``.

A program that set a wakeup fd of its own keeps it: the package then arms nothing.
Arming is lazy and happens once per process: the blocking calls check the module
flag ``armed`` and call ``arm()`` only while it is False. A child of fork() gets a
pipe of its own (``after_fork_in_child``), or parent and child would drain each
other's signals.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Optional, Tuple

from ._lib import lib

__all__ = ["armed", "arm", "after_fork_in_child"]

#: True once this process's main thread was armed (or arming was found impossible):
#: the blocking calls' one check per call.
armed = False

#: (read end, write end) of this process's pipe, when installed
_pipe: Optional[Tuple[int, int]] = None


def arm() -> None:
    """Installs the interrupt pipe when called on the main thread (else does nothing)."""
    global armed, _pipe
    if armed or threading.current_thread() is not threading.main_thread():
        return
    armed = True
    read_end, write_end = os.pipe()  # close-on-exec (not inheritable) already
    try:
        os.set_blocking(read_end, False)
        os.set_blocking(write_end, False)
        previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (OSError, ValueError):  # not the main interpreter's main thread, ...
        os.close(read_end)
        os.close(write_end)
        return
    if previous != -1:  # the program has its own: leave it alone
        signal.set_wakeup_fd(previous)
        os.close(read_end)
        os.close(write_end)
        return
    _pipe = (read_end, write_end)
    lib.nl_thread_set_interrupt_fd(read_end)


def after_fork_in_child() -> None:
    """In a child of fork() (on its main thread, the one that forked): drops the pipe it
    shares with the parent and arms a new one when the parent had one."""
    global armed, _pipe
    inherited, _pipe = _pipe, None
    armed = False
    if inherited is None:
        return
    read_end, write_end = inherited
    try:
        current = signal.set_wakeup_fd(-1)
        if current != write_end:  # someone else's since: give it back
            signal.set_wakeup_fd(current)
    except (OSError, ValueError):
        pass
    lib.nl_thread_set_interrupt_fd(-1)  # the forking thread's setting is inherited
    for fd in (read_end, write_end):
        try:
            os.close(fd)  # the child's copies: the parent's pipe stays open
        except OSError:
            pass
    arm()


def pipe() -> Optional[Tuple[int, int]]:
    """This process's (read end, write end), if armed (tests)."""
    return _pipe
