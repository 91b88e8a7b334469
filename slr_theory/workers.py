"""Local worker processes that leave nothing behind and need no ``__main__`` guard.

A pool of :func:`process_pool` differs from a plain spawn ``ProcessPoolExecutor`` in
three ways, each a failure seen without it:

- **No re-import of ``__main__``.** A spawned worker normally runs the parent's script
  again (as ``__mp_main__``) before it takes work, so a script that calls
  :func:`slr_theory.atlas` at its top level, without ``if __name__ == "__main__":``,
  makes every worker start a pool of its own, and the run ends in
  ``BrokenProcessPool``. Work sent to these workers is the toolkit's own functions,
  importable by name, so the workers are started as if the parent had no script.
- **Born with SIGINT blocked** (:func:`slr_theory.output.quiet_workers`): a terminal's
  Ctrl-C reaches the whole process group; the parent, which sees it, ends its workers.
- **A worker exits when its parent dies**, even by ``kill -9``, instead of finishing a
  cell nobody will read and keeping the resource tracker alive (:func:`exit_with_parent`).

POSIX only, like the output discipline.
"""

from __future__ import annotations

import contextlib
import multiprocessing.context as mpc
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

__all__ = [
    "MANAGER_WAIT",
    "PARENT_POLL",
    "end_pool",
    "exit_with_parent",
    "in_worker_bootstrap",
    "process_pool",
    "without_main_script",
]

#: Seconds between a worker's checks that its parent is alive.
PARENT_POLL = 0.25

#: Seconds :func:`end_pool` waits at most for the pool's manager thread to finish.
MANAGER_WAIT = 10.0


@contextlib.contextmanager
def without_main_script() -> Iterator[None]:
    """Within the block, ``__main__`` is a module with no file and no spec.

    A process spawned meanwhile is told of no script to run again before its work, as
    under an interactive session. For starting workers whose work is importable by name
    (the atlas's cells): not for a block that pickles objects defined in the script.

    Yields
    ------
    None

    Examples
    --------
    >>> import sys
    >>> from slr_theory.workers import without_main_script
    >>> with without_main_script():
    ...     hidden = getattr(sys.modules["__main__"], "__file__", None)
    >>> hidden is None
    True
    """
    main = sys.modules.get("__main__")
    if main is None or (
        getattr(main, "__file__", None) is None and getattr(main, "__spec__", None) is None
    ):
        yield  # an interactive session or a notebook: nothing would be re-run anyway
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


class _Process(mpc.SpawnProcess):
    @staticmethod
    def _Popen(process_obj):
        with without_main_script():
            return mpc.SpawnProcess._Popen(process_obj)


class _Context(mpc.SpawnContext):
    Process = _Process


def in_worker_bootstrap() -> bool:
    """Whether this process is a spawned worker running its parent's script again.

    Then ``__main__`` is named ``__mp_main__``: whatever the script does at its top level,
    unguarded, runs once more in the worker, and starting workers there would recurse.

    Returns
    -------
    bool
    """
    main = sys.modules.get("__main__")
    return getattr(main, "__name__", "__main__") == "__mp_main__"


def exit_with_parent(parent: int) -> None:
    """In a worker: end this process as soon as the process `parent` is gone.

    A daemon thread compares ``os.getppid()`` with `parent` every :data:`PARENT_POLL`
    seconds (a dead parent's children are adopted by another process) and calls
    ``os._exit(1)``: a killed run leaves no worker computing for nobody.

    Parameters
    ----------
    parent : int
        The process id of the parent that started this worker.

    Returns
    -------
    None
    """
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="slr-theory parent watch", daemon=True).start()


def process_pool(
    workers: int, initializer: Callable[..., object] | None = None, initargs: tuple = ()
) -> ProcessPoolExecutor:
    """A pool of `workers` spawned processes: no ``__main__`` re-run, quiet on Ctrl-C,
    gone with their parent.

    Submit work inside :func:`slr_theory.output.quiet_workers` (workers start when work
    is submitted) and end the pool with :func:`end_pool` on any exception.

    Parameters
    ----------
    workers : int
        ``>= 1``.
    initializer : callable, optional
        Run in each worker with `initargs` once it watches its parent (as
        ``ProcessPoolExecutor``'s own): a function importable by name.
    initargs : tuple, optional

    Returns
    -------
    concurrent.futures.ProcessPoolExecutor

    Examples
    --------
    >>> from slr_theory.output import quiet_workers
    >>> from slr_theory.workers import end_pool, process_pool
    >>> pool = process_pool(1)
    >>> with quiet_workers():
    ...     f = pool.submit(abs, -3)
    >>> f.result()
    3
    >>> end_pool(pool)
    """
    from .validate import positive_int

    workers = positive_int(workers, "workers", upper=4096)
    if initializer is not None and not callable(initializer):
        raise ValueError(f"`initializer` must be callable or None, got {initializer!r}.")
    return ProcessPoolExecutor(
        workers,
        mp_context=_Context(),
        initializer=_start,
        initargs=(os.getpid(), initializer, tuple(initargs)),
    )


def _start(parent: int, initializer, initargs: tuple) -> None:
    """A worker's first act: watch `parent`, then the caller's own initializer.

    tqdm's bars share a lock; by default a process-shared one, a named semaphore that a
    worker ended by :func:`end_pool` never unlinks (the resource tracker then warns of a
    leak as the run ends). A worker's bars are its own: a thread lock serves them.
    """
    exit_with_parent(parent)
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())
    if initializer is not None:
        initializer(*initargs)


def end_pool(pool: ProcessPoolExecutor) -> None:
    """End `pool` now: terminate its workers and cancel what they have not started.

    Returns once the pool's manager thread has finished (at most :data:`MANAGER_WAIT`
    seconds): a process that exits right after sees no error from the pool's pipes.

    Parameters
    ----------
    pool : concurrent.futures.ProcessPoolExecutor

    Returns
    -------
    None
    """
    # The pool's manager thread, seeing its workers gone, closes its wake-up pipe; if the
    # interpreter exits meanwhile, CPython 3.11's exit hook writes to that pipe as it
    # closes and prints an ignored ``OSError: [Errno 9]`` traceback (once in ~60 Ctrl-Cs).
    # Waiting for the thread here (it ends soon after the terminate) closes that window;
    # ``shutdown`` forgets the thread, so it is taken first.
    manager = getattr(pool, "_executor_manager_thread", None)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):
            proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is not None and manager is not threading.current_thread():
        manager.join(MANAGER_WAIT)
