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

A program that set a wakeup fd of its own keeps it, and so does an asyncio loop that
handles signals (``add_signal_handler``) while it runs. Each blocking call on the main
thread checks that the package's pipe is the wakeup fd (``ensure``): it installs it
again when no fd is installed (asyncio drops its own, and with it any other, when its
loop stops handling signals or closes), and gives back another's it finds. The pipe is
made once per process, when the first blocking call or client needs it. A child of
fork() gets a pipe of its own (``after_fork_in_child``), or parent and child would
drain each other's signals.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Optional, Tuple

from ._lib import lib

__all__ = ["armed", "arm", "ensure", "after_fork_in_child"]

#: True once this process's main thread made its pipe (or found it cannot)
armed = False

#: (read end, write end) of this process's pipe, once made
_pipe: Optional[Tuple[int, int]] = None
#: whether the pipe was the wakeup fd when a blocking call last looked
_installed = False
#: the main thread, the only one Python runs signal handlers on (the forking thread in a child)
_main_ident = threading.main_thread().ident


def arm() -> None:
    """Makes this process's pipe and gives its read end to the library (on the main
    thread; else does nothing), then installs it as the wakeup fd unless one is."""
    global armed, _pipe
    if armed or threading.get_ident() != _main_ident:
        return
    armed = True
    read_end, write_end = os.pipe()  # close-on-exec (not inheritable) already
    try:
        os.set_blocking(read_end, False)
        os.set_blocking(write_end, False)
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return
    _pipe = (read_end, write_end)
    lib.nl_thread_set_interrupt_fd(read_end)
    ensure()


def ensure() -> None:
    """Before a blocking call: on the main thread, the pipe made if it is not yet, and
    installed as the signal wakeup fd unless another is (that one stays; a signal that
    arrives between the two ``set_wakeup_fd`` calls here wakes this call, not its owner)."""
    global _installed
    if threading.get_ident() != _main_ident:
        return
    if _pipe is None:
        if not armed:
            arm()
        return
    write_end = _pipe[1]
    try:
        previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (OSError, ValueError):  # not the main interpreter's main thread, ...
        _installed = False
        return
    if previous == -1 or previous == write_end:
        _installed = True
    else:  # the program's own, or a running asyncio loop's: leave it alone
        signal.set_wakeup_fd(previous)
        _installed = False


def after_fork_in_child() -> None:
    """In a child of fork() (on its main thread, the one that forked): drops the pipe it
    shares with the parent and arms a new one when the parent had one."""
    global armed, _pipe, _installed, _main_ident
    inherited, _pipe = _pipe, None
    armed = False
    _installed = False
    _main_ident = threading.get_ident()
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
    """This process's (read end, write end), if it was the wakeup fd when last looked (tests)."""
    return _pipe if _installed else None
