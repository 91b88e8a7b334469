"""Signals while a command writes: SIGTERM raised as an exception, signals deferred across a commit, and worker processes kept quiet."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

__all__ = ["Terminated", "deferred_signals", "quiet_workers", "terminate_raises"]


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM (see :func:`terminate_raises`), so that
    ``finally`` blocks and context managers clean up as on Ctrl-C.

    Attributes
    ----------
    args : tuple
        The message, ``("terminated by SIGTERM",)``.
    """


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def terminate_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` instead of killing the process.

    Only where SIGTERM has its default action and only in the main thread (elsewhere the
    block changes nothing): a handler the program installed is respected.

    Yields
    ------
    None

    Examples
    --------
    >>> from slr_theory.output import terminate_raises
    >>> with terminate_raises():
    ...     pass
    """
    if not _main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        raise Terminated("terminated by SIGTERM")

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def quiet_workers() -> Iterator[None]:
    """Start worker processes inside this block: they are born with SIGINT blocked.

    A Ctrl-C goes to the whole process group. A worker still importing when it arrives
    would print a traceback; one born with SIGINT blocked never sees it, and this
    process, which does, ends its workers itself. A Ctrl-C that reaches this process
    while the block runs is delivered when it ends. Outside the main thread, or where
    signal masks do not exist, the block changes nothing.

    Yields
    ------
    None

    Examples
    --------
    >>> import signal
    >>> from slr_theory.output import quiet_workers
    >>> with quiet_workers():
    ...     blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    >>> blocked, signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    (True, False)
    """
    if not _main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then act on them.

    What must not be cut in two (the commit of a result) runs inside. A signal that
    arrives meanwhile is delivered to its previous handler when the block exits. Outside
    the main thread, where Python cannot install handlers, the block changes nothing.

    Yields
    ------
    None

    Examples
    --------
    >>> from slr_theory.output import deferred_signals
    >>> with deferred_signals():
    ...     x = 1 + 1
    """
    if not _main_thread():
        yield
        return
    caught: list[int] = []
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def hold(signum, frame):
        caught.append(signum)

    for s in previous:
        signal.signal(s, hold)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        for s in dict.fromkeys(caught):
            h = previous[s]
            if callable(h):
                h(s, None)
            elif h == signal.SIG_DFL:
                if s == signal.SIGINT:
                    raise KeyboardInterrupt
                os.kill(os.getpid(), s)
