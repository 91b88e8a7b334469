"""What the toolkit records of what it wrote: the marker and the journal beside the outputs, their names, and the refusals a destination may meet."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

__all__ = [
    "JOURNAL_NAME",
    "LOCK_NAME",
    "MARKER_NAME",
    "STAGING_PREFIX",
    "DestinationBusy",
    "OutputConflict",
    "Refusal",
    "file_digest",
    "is_io_error",
    "refusal",
    "written_files",
]


#: The marker listing what slr-theory wrote in a directory, with SHA-256 digests.
MARKER_NAME = ".slr-theory.json"


#: The lock held for the whole of a run that writes into a directory.
LOCK_NAME = ".slr-theory.lock"


#: The append-only journal of files committed one at a time, with SHA-256 digests.
JOURNAL_NAME = ".slr-theory.journal"


#: Prefix of the hidden staging folders in which results are built.
STAGING_PREFIX = ".slr-theory-staging-"


class Refusal:
    """Mixed into every error by which a destination is refused before anything is written.

    Attributes
    ----------
    argument : str
        The argument that named the destination (``"out"``).
    detail : str
        The reason, without the argument's name (the CLI prefixes its flag).
    """

    argument: str = "out"
    detail: str = ""


class OutputConflict(FileExistsError, Refusal):
    """A file would be overwritten that slr-theory did not write (or that exists, without force).

    Attributes
    ----------
    argument, detail : str
        As for :class:`Refusal`.
    """


class DestinationBusy(BlockingIOError, Refusal):
    """Another slr-theory run holds the destination's lock.

    Attributes
    ----------
    argument, detail : str
        As for :class:`Refusal`; `detail` names the holder's process id.
    """


class NotADirectory(ValueError, Refusal):
    pass


class MissingParent(FileNotFoundError, Refusal):
    pass


class NotWritable(PermissionError, Refusal):
    pass


def refusal(cls, argument: str, detail: str):
    """The error `cls` (a :class:`Refusal`) refusing the destination named by `argument`.

    Parameters
    ----------
    cls : type
        :class:`OutputConflict`, :class:`DestinationBusy` or another :class:`Refusal`.
    argument : str
        The argument that named the destination (``"out"``).
    detail : str
        The reason, without the argument's name.

    Returns
    -------
    Exception
        Its message ``"`argument`: detail"``; ``argument`` and ``detail`` as attributes.
    """
    exc = cls(f"`{argument}`: {detail}")
    exc.argument, exc.detail = argument, detail
    return exc


def file_digest(path: str | os.PathLike) -> str:
    """The SHA-256 hex digest of a file's bytes: what :func:`written_files` records.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    str
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_marker(directory: Path) -> dict[str, str]:
    """The files an earlier run committed whole, ``{name: sha256}``; empty without a marker."""
    path = directory / MARKER_NAME
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, ValueError):
        return {}  # unreadable or not ours: then nothing here counts as ours
    if not isinstance(data, dict) or data.get("written_by") != "slr-theory":
        return {}
    files = data.get("files")
    if not isinstance(files, dict):
        return {}
    return {str(k): str(v) for k, v in files.items() if "/" not in str(k)}


def read_journal(directory: Path) -> dict[str, str]:
    """The files committed one at a time, ``{name: sha256}``, the last entry of a name winning.

    A line that does not parse (torn by a kill during its write) records nothing.
    """
    try:
        raw = (directory / JOURNAL_NAME).read_bytes()
    except OSError:
        return {}
    files: dict[str, str] = {}
    for line in raw.splitlines():
        try:
            entry = json.loads(line)
            name, digest = entry["file"], entry["sha256"]
        except (ValueError, TypeError, KeyError):
            continue
        if isinstance(name, str) and isinstance(digest, str) and "/" not in name:
            files[name] = digest
    return files


def written_files(directory: str | os.PathLike) -> dict[str, str]:
    """What slr-theory committed in `directory`: ``{file name: SHA-256 hex digest}``.

    The marker's files and the journal's, a file committed one at a time after a whole
    commit (:meth:`Destination.commit_file`) taking its journal entry. A file whose bytes
    no longer have the digest recorded was changed since slr-theory wrote it.

    Parameters
    ----------
    directory : str or os.PathLike

    Returns
    -------
    dict of str to str
        Empty where slr-theory wrote nothing (or its record is not readable).

    Examples
    --------
    >>> import hashlib, tempfile, pathlib
    >>> from slr_theory.output import Destination, written_files
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "out"
    >>> with Destination(d) as dest:
    ...     _ = dest.file("a.txt").write_text("hello")
    ...     _ = dest.commit_file("a.txt")
    >>> written_files(d) == {"a.txt": hashlib.sha256(b"hello").hexdigest()}
    True
    """
    directory = Path(directory)
    return {**read_marker(directory), **read_journal(directory)}


def is_ours(directory: Path, name: str, marker: dict[str, str]) -> bool:
    path = directory / name
    if name not in marker or path.is_symlink() or not path.is_file():
        return False
    return file_digest(path) == marker[name]


def ours_or_reserved(name: str) -> bool:
    return name in (MARKER_NAME, LOCK_NAME, JOURNAL_NAME) or name.startswith(STAGING_PREFIX)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def open_journal(path: Path) -> int:
    """The journal, open for appending; a last line torn by a kill is ended first, so that
    the next entry starts a line of its own."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")
    return fd


def journal_line(name: str, digest: str) -> bytes:
    return (json.dumps({"file": name, "sha256": digest}, sort_keys=True) + "\n").encode()


def version() -> str:
    from .. import __version__

    return __version__


def is_io_error(exc: BaseException) -> bool:
    """Whether `exc` is a failure of the storage itself (disk full, I/O error, quota).

    Parameters
    ----------
    exc : BaseException

    Returns
    -------
    bool
    """
    return isinstance(exc, OSError) and exc.errno in (
        errno.ENOSPC,
        errno.EIO,
        errno.EDQUOT,
        errno.EROFS,
        errno.EFBIG,
    )
