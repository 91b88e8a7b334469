"""Ctrl-C held over a stretch that must not be cut in the middle: importing the command.

An import interrupted half-way can surface as anything (NumPy turns a ``KeyboardInterrupt``
inside its C extension's import into an ``ImportError`` of twenty lines) and leaves
modules half-built. The command imports what it needs inside :func:`interrupts_held`,
then answers a Ctrl-C received meanwhile with its one line and exit 130.

Standard library only: this module is imported before NumPy is.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["STARTING_INTERRUPTED", "interrupts_held"]

#: What the command prints when a Ctrl-C came before it started its work.
STARTING_INTERRUPTED = "slr-theory: interrupted (Ctrl-C) while starting; nothing was written"


@contextlib.contextmanager
def interrupts_held() -> Iterator[list[int]]:
    """Within the block a SIGINT is noted in the list yielded, not raised.

    On leaving, the previous handler is back. Where signals are not this thread's to take
    (not the main thread) or SIGINT is ignored (a background job), nothing changes and
    the list stays empty.

    Yields
    ------
    list of int
        The signals received within the block (``signal.SIGINT``, once per Ctrl-C).

    Examples
    --------
    >>> import os, signal
    >>> from slr_theory.interrupts import interrupts_held
    >>> with interrupts_held() as noted:
    ...     os.kill(os.getpid(), signal.SIGINT)
    >>> noted == [signal.SIGINT]
    True
    """
    noted: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        yield noted
        return
    signal.signal(signal.SIGINT, lambda signum, _frame: noted.append(signum))
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, previous)
