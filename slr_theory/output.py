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

import contextlib
import errno
import hashlib
import json
import os
import secrets
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

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


class _NotADirectory(ValueError, Refusal):
    pass


class _MissingParent(FileNotFoundError, Refusal):
    pass


class _NotWritable(PermissionError, Refusal):
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


def _read_marker(directory: Path) -> dict[str, str]:
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


def _read_journal(directory: Path) -> dict[str, str]:
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
    return {**_read_marker(directory), **_read_journal(directory)}


def _is_ours(directory: Path, name: str, marker: dict[str, str]) -> bool:
    path = directory / name
    if name not in marker or path.is_symlink() or not path.is_file():
        return False
    return file_digest(path) == marker[name]


def _ours_or_reserved(name: str) -> bool:
    return name in (MARKER_NAME, LOCK_NAME, JOURNAL_NAME) or name.startswith(STAGING_PREFIX)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Destination:
    """A directory written under the output discipline; use it as a context manager.

    Parameters
    ----------
    path : str or os.PathLike
        The destination directory; created if missing (its parent must exist). A
        symlink to a directory is followed and stays a symlink.
    force : bool
        Allow replacing files that an earlier slr-theory run wrote here (listed in the
        marker and unchanged since). Never allows replacing anything else.
    exclusive : bool
        The directory holds one result (a report): without `force`, a directory that
        holds anything is refused; with `force`, the earlier run's files that the new
        result does not contain are removed too (the user's files stay).
    expect : iterable of str
        Names the run will write, checked at the door so that a conflict is refused
        before any computing; the commit checks again (files may appear meanwhile).
    argument : str
        The argument that named `path`, for messages (``"out"``).

    Attributes
    ----------
    directory : Path
        The destination.
    staging : Path
        Where the run writes its files (valid inside the ``with`` block).
    committed : list of Path
        The files committed, after a successful block.

    Raises
    ------
    OutputConflict
        A name the run writes exists and `force` is not given, or exists and was not
        written by slr-theory (or was changed since): nothing is replaced.
    DestinationBusy
        Another run holds the directory.
    ValueError, FileNotFoundError, PermissionError
        `path` is not a directory, its parent is missing, or it cannot be written; each
        also a :class:`Refusal`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from slr_theory.output import Destination
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with Destination(root / "out", expect=["a.txt"]) as dest:
    ...     _ = dest.file("a.txt").write_text("hello")
    >>> sorted(p.name for p in (root / "out").iterdir())
    ['.slr-theory.json', 'a.txt']
    >>> with Destination(root / "out", expect=["a.txt"]) as dest:  # doctest: +ELLIPSIS
    ...     pass
    Traceback (most recent call last):
        ...
    slr_theory.output.OutputConflict: `out`: .../out/a.txt exists; pass --force to replace it
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        force: bool = False,
        exclusive: bool = False,
        expect: Iterable[str] = (),
        argument: str = "out",
    ) -> None:
        from .validate import boolean

        if not isinstance(path, (str, os.PathLike)) or not str(os.fspath(path)).strip():
            raise refusal(_NotADirectory, argument, f"must name a directory, got {path!r}")
        if "\x00" in str(os.fspath(path)):  # no file system takes it: refused, not an os error
            raise refusal(
                _NotADirectory,
                argument,
                f"must name a directory (no NUL byte), got {os.fspath(path)!r}",
            )
        self.directory = Path(path)
        self.force = boolean(force, "force")
        self.exclusive = boolean(exclusive, "exclusive")
        self.expect = [self._name(n) for n in expect]
        self.argument = argument
        self.committed: list[Path] = []
        self.staging = Path()
        self._lock_fd: int | None = None
        self._journal_fd: int | None = None
        self._journal_cache: dict[str, str] | None = None
        self._created = False
        self._terminate = contextlib.ExitStack()
        self._check_path()

    # -- the door ------------------------------------------------------------------------

    def _refuse(self, cls, detail: str):
        return refusal(cls, self.argument, detail)

    def _name(self, name: str) -> str:
        if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
            raise ValueError(f"output file names must be plain names, got {name!r}.")
        if _ours_or_reserved(name):
            raise ValueError(
                f"output file name {name!r} is reserved for slr-theory's bookkeeping."
            )
        return name

    def _check_path(self) -> None:
        d = self.directory
        if d.is_symlink() and not d.exists():
            raise self._refuse(_NotADirectory, f"{d} is a symlink to a missing {os.readlink(d)}")
        if d.exists() and not d.is_dir():
            raise self._refuse(_NotADirectory, f"must be a directory, got the file {d}")
        if not d.exists():
            parent = d.absolute().parent
            if parent.exists() and not parent.is_dir():
                raise self._refuse(_NotADirectory, f"its parent {parent} is not a directory")
            if not parent.exists():
                raise self._refuse(_MissingParent, f"its parent {parent} does not exist")

    def __enter__(self) -> Destination:
        self._terminate.enter_context(terminate_raises())
        try:
            self._open()
        except BaseException:
            self._close(committed=False)
            raise
        return self

    def _open(self) -> None:
        d = self.directory
        try:
            d.mkdir()
            self._created = True
        except FileExistsError:
            pass
        except OSError as exc:
            raise self._refuse(_NotWritable, f"cannot create {d} ({exc.strerror})") from None
        self._lock()
        for entry in d.iterdir():  # abandoned by a killed run: the lock says none is alive
            if entry.name.startswith(STAGING_PREFIX) and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
        self._check_conflicts(self.expect, at_door=True)
        self.staging = d / f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        self.staging.mkdir()

    def _lock(self) -> None:
        import fcntl

        path = self.directory / LOCK_NAME
        for _ in range(100):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as exc:
                raise self._refuse(
                    _NotWritable, f"cannot write in {self.directory} ({exc.strerror})"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.read(fd, 32).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise self._refuse(
                    DestinationBusy,
                    f"another slr-theory run (pid {owner}) is writing in {self.directory}; "
                    "wait for it or choose another destination",
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:  # not a lock file that its holder unlinked while we waited
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                self._lock_fd = fd
                return
            os.close(fd)
        raise self._refuse(DestinationBusy, f"could not lock {self.directory}")

    def _check_conflicts(self, names: Iterable[str], *, at_door: bool) -> None:
        d = self.directory
        marker = written_files(d)
        if self.exclusive and not self.force and at_door:
            others = sorted(e.name for e in d.iterdir() if not _ours_or_reserved(e.name))
            if others:
                raise self._refuse(
                    OutputConflict,
                    f"{d} is not empty ({', '.join(others[:3])}"
                    f"{', ...' if len(others) > 3 else ''}); "
                    "pass --force to replace what an earlier slr-theory run wrote there "
                    "(other files are never touched), or choose another directory",
                )
        for name in names:
            path = d / name
            if not (path.exists() or path.is_symlink()):
                continue
            if not self.force:
                raise self._refuse(
                    OutputConflict,
                    f"{path} exists; pass --force to replace it"
                    if at_door
                    else f"{path} appeared while the run was writing; nothing was replaced "
                    "(move it away and run again)",
                )
            if not _is_ours(d, name, marker):
                raise self._refuse(
                    OutputConflict,
                    f"{path} was not written by slr-theory (or was changed since); "
                    "slr-theory replaces only its own files: move it away or choose another "
                    "destination",
                )

    # -- writing -------------------------------------------------------------------------

    def file(self, name: str) -> Path:
        """Where to write the output file `name` during the run (inside the staging folder).

        Parameters
        ----------
        name : str
            A plain file name (no ``/``).

        Returns
        -------
        Path
        """
        if not self.staging.name:
            raise RuntimeError("Destination.file is for use inside the `with` block.")
        return self.staging / self._name(name)

    # -- the commit ----------------------------------------------------------------------

    def __exit__(self, kind, value, tb) -> None:
        committed = False
        try:
            if kind is None:
                self.committed.extend(self._commit())
                committed = True
        finally:
            self._close(committed)

    def commit(self) -> list[Path]:
        """Commit the files staged so far, now, and go on (the lock stays held).

        For results that are written as they end (the atlas's cells): each is then safe
        from an interruption of the rest of the run. Same rules as the commit at the end
        of the block; an exclusive destination commits only at the end.

        Returns
        -------
        list of Path
            The files committed by this call.
        """
        if not self.staging.name:
            raise RuntimeError("Destination.commit is for use inside the `with` block.")
        if self.exclusive:
            raise RuntimeError("an exclusive destination commits once, at the end.")
        done = self._commit()
        self.committed.extend(done)
        return done

    def _commit(self) -> list[Path]:
        d = self.directory
        new = sorted(p.name for p in self.staging.iterdir() if p.is_file())
        if not new and self.committed:  # everything was committed on the way
            return []
        with deferred_signals():
            self._check_conflicts(new, at_door=False)
            marker, journal = _read_marker(d), _read_journal(d)
            recorded = {**marker, **journal}
            # The journal keeps the files committed one at a time, and the marker the rest:
            # only the marker's are checked here (a 1e5-cell atlas is not hashed again). An
            # exclusive result lists everything in the marker, so the journal goes.
            among = (
                recorded if self.exclusive else {n: marker[n] for n in marker if n not in journal}
            )
            ours = [n for n in among if n not in new and _is_ours(d, n, recorded)]
            kept = {n: recorded[n] for n in ours}
            stale = ours if self.exclusive else []
            if self.exclusive:
                kept = {}
            record = {
                "written_by": "slr-theory",
                "version": _version(),
                "files": kept | {n: file_digest(self.staging / n) for n in new},
            }
            (self.staging / MARKER_NAME).write_text(json.dumps(record, indent=1, sort_keys=True))
            bookkeeping = [MARKER_NAME]
            retire_journal = (d / JOURNAL_NAME).exists() and (
                self.exclusive or any(n in journal for n in new)
            )
            if retire_journal and not self.exclusive:  # the journal without the names now whole
                lines = [_journal_line(n, h) for n, h in journal.items() if n not in new]
                (self.staging / JOURNAL_NAME).write_bytes(b"".join(lines))
                bookkeeping.append(JOURNAL_NAME)
                retire_journal = False
            backup = self.staging / f"{STAGING_PREFIX}old"  # a name no output can take
            backup.mkdir()
            moved: list[tuple[str, bool]] = []  # (name, whether an old file was backed up)
            try:
                for name in [*new, *bookkeeping]:
                    had = (d / name).exists()
                    if had:
                        _rename(d / name, backup / name)
                    moved.append((name, had))
                    _rename(self.staging / name, d / name)
                for name in [*stale, *[JOURNAL_NAME] * retire_journal]:
                    _rename(d / name, backup / name)
                    moved.append((name, True))
            except BaseException:
                for name, had in reversed(moved):  # put the old state back
                    with contextlib.suppress(OSError):
                        if had and (backup / name).exists():
                            _rename(backup / name, d / name)
                        elif not had:
                            (d / name).unlink()
                raise
            shutil.rmtree(backup, ignore_errors=True)  # the replaced files: the run may go on
            self._journal_cache = None
            return [d / n for n in new]

    def commit_file(self, name: str) -> Path:
        """Commit the one staged file `name` now, at a cost independent of what is committed.

        For results written one by one as they end (the atlas's cells). Where
        :meth:`commit` rewrites the marker, this appends the file's digest to the journal
        (:data:`JOURNAL_NAME`) and renames the file into place, in that order: a kill in
        between leaves a journal entry for a file that is not there, which records nothing
        of anyone's. The same rules as :meth:`commit`: a file of that name that slr-theory
        did not write, or that was changed since, is never replaced (:class:`OutputConflict`);
        one it wrote is replaced only with `force`.

        Parameters
        ----------
        name : str
            A file staged with :meth:`file`.

        Returns
        -------
        Path
            The committed file.
        """
        if not self.staging.name:
            raise RuntimeError("Destination.commit_file is for use inside the `with` block.")
        if self.exclusive:
            raise RuntimeError("an exclusive destination commits once, at the end.")
        src, dst = self.staging / self._name(name), self.directory / name
        if not src.is_file():
            raise ValueError(f"`name`: {name!r} was not staged (write Destination.file first).")
        if self._journal_cache is None:
            self._journal_cache = written_files(self.directory)
        recorded = self._journal_cache
        with deferred_signals():
            if dst.exists() or dst.is_symlink():
                if not self.force:
                    raise self._refuse(
                        OutputConflict,
                        f"{dst} appeared while the run was writing; nothing was replaced "
                        "(move it away and run again)",
                    )
                if not _is_ours(self.directory, name, recorded):
                    raise self._refuse(
                        OutputConflict,
                        f"{dst} was not written by slr-theory (or was changed since); it "
                        "is never replaced: move it away or choose another destination",
                    )
            digest = file_digest(src)
            if self._journal_fd is None:
                self._journal_fd = _open_journal(self.directory / JOURNAL_NAME)
            os.write(self._journal_fd, _journal_line(name, digest))
            _rename(src, dst)
            recorded[name] = digest
        self.committed.append(dst)
        return dst

    def set_aside(self, name: str) -> Path:
        """Move the file `name`, which slr-theory will not trust, out of the way; never delete it.

        For a result read back that fails its check (changed since slr-theory wrote it,
        truncated, not ours): it is renamed to ``name.rejected`` (``name.rejected-2``, ...
        where that is taken), so that the run can write the name again and the user keeps
        the bytes.

        Parameters
        ----------
        name : str
            A file in the destination.

        Returns
        -------
        Path
            Where the file now is.
        """
        if not self.staging.name:
            raise RuntimeError("Destination.set_aside is for use inside the `with` block.")
        src = self.directory / self._name(name)
        for k in range(1, 10_000):
            dst = self.directory / (f"{name}.rejected" + (f"-{k}" if k > 1 else ""))
            if not (dst.exists() or dst.is_symlink()):
                break
        else:  # pragma: no cover - ten thousand rejected copies of one name
            raise self._refuse(OutputConflict, f"cannot set {src} aside")
        with deferred_signals():
            os.rename(src, dst)  # not os.replace: a name that appeared meanwhile stays
        if self._journal_cache is not None:
            self._journal_cache.pop(name, None)
        return dst

    def _close(self, committed: bool) -> None:
        try:
            if self._journal_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._journal_fd)
                self._journal_fd = None
            if self.staging.name:
                shutil.rmtree(self.staging, ignore_errors=True)
            if self._lock_fd is not None:
                with contextlib.suppress(OSError):
                    (self.directory / LOCK_NAME).unlink()
                os.close(self._lock_fd)
                self._lock_fd = None
            if self._created and not committed:
                with contextlib.suppress(OSError):
                    self.directory.rmdir()  # only if empty: never what others put there
        finally:
            self._terminate.close()


def _open_journal(path: Path) -> int:
    """The journal, open for appending; a last line torn by a kill is ended first, so that
    the next entry starts a line of its own."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")
    return fd


def _journal_line(name: str, digest: str) -> bytes:
    return (json.dumps({"file": name, "sha256": digest}, sort_keys=True) + "\n").encode()


def _rename(src: Path, dst: Path) -> None:
    """``os.replace``, one name for the commit's every move (tests inject faults here)."""
    os.replace(src, dst)


def _version() -> str:
    from . import __version__

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
