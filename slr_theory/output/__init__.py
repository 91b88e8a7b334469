"""The one output discipline: everything slr-theory writes to disk goes through here.

A run writes into a destination directory (``report --out DIR``, ``reproduce --out DIR``,
the folder of ``portrait --out FILE``) with a :class:`Destination`:

- **A lock for the whole run.** ``DIR/.slr-theory.lock`` is held with ``flock`` from the
  moment the destination is opened; a second run into the same directory is refused
  (:class:`DestinationBusy`) instead of silently replacing the first one's files. The
  lock dies with its process, so a killed run never blocks the next one.
- **Built beside, committed by rename.** Files are written into a hidden staging folder
  inside the destination (same file system, so renames are atomic) and renamed into
  place only when the whole result is complete.
- **A marker says what slr-theory wrote.** ``DIR/.slr-theory.json`` lists every file a
  run committed with its SHA-256 digest, and the append-only journal
  ``DIR/.slr-theory.journal`` every file committed one at a time
  (:meth:`Destination.commit_file`: the atlas's cells, each at a cost that does not grow
  with the files already there). ``force`` replaces only files listed there and
  unchanged since; a file the user made, changed or added meanwhile is never replaced
  or deleted: the commit is refused and says so (:class:`OutputConflict`).
  :func:`written_files` reads the record, so a result read back can be checked against
  it.
- **The user's umask decides permissions**, as for any file they create; a symlinked
  destination stays a symlink (files go through it).
- **Old state or new state, never a mix.** SIGINT and SIGTERM that arrive during the
  commit are held until it ends; an error during the commit puts the old files back.
  An interrupted or failed run removes its staging folder, its lock, and the
  destination folder if it created it; what it did not write it never touches.

Only ``SIGKILL`` or a power cut can stop a commit half-way; the next run into the
directory takes over the abandoned lock and removes the abandoned staging folder.
POSIX only (``fcntl``).
"""

from __future__ import annotations

from .destination import Destination
from .records import (
    JOURNAL_NAME,
    LOCK_NAME,
    MARKER_NAME,
    STAGING_PREFIX,
    DestinationBusy,
    OutputConflict,
    Refusal,
    file_digest,
    is_io_error,
    refusal,
    written_files,
)
from .signals import Terminated, deferred_signals, quiet_workers, terminate_raises

__all__ = [
    "JOURNAL_NAME",
    "LOCK_NAME",
    "MARKER_NAME",
    "STAGING_PREFIX",
    "Destination",
    "DestinationBusy",
    "OutputConflict",
    "Refusal",
    "Terminated",
    "deferred_signals",
    "file_digest",
    "is_io_error",
    "quiet_workers",
    "refusal",
    "terminate_raises",
    "written_files",
]

# An exception is shown (in a traceback, a doctest) by the path users import it from.
for _exception in (
    Refusal,
    OutputConflict,
    DestinationBusy,
    Terminated,
):
    _exception.__module__ = __name__
del _exception
