"""The destination of a command's outputs: locked, built beside, committed by rename, never deleting what the toolkit did not write."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from collections.abc import Iterable
from pathlib import Path

from .records import (
    JOURNAL_NAME,
    LOCK_NAME,
    MARKER_NAME,
    STAGING_PREFIX,
    DestinationBusy,
    MissingParent,
    NotADirectory,
    NotWritable,
    OutputConflict,
    file_digest,
    is_ours,
    journal_line,
    open_journal,
    ours_or_reserved,
    read_journal,
    read_marker,
    refusal,
    version,
    written_files,
)
from .signals import deferred_signals, terminate_raises

__all__ = ["Destination"]


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
        from ..validate import boolean

        if not isinstance(path, (str, os.PathLike)) or not str(os.fspath(path)).strip():
            raise refusal(NotADirectory, argument, f"must name a directory, got {path!r}")
        if "\x00" in str(os.fspath(path)):  # no file system takes it: refused, not an os error
            raise refusal(
                NotADirectory,
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
        if ours_or_reserved(name):
            raise ValueError(
                f"output file name {name!r} is reserved for slr-theory's bookkeeping."
            )
        return name

    def _check_path(self) -> None:
        d = self.directory
        if d.is_symlink() and not d.exists():
            raise self._refuse(NotADirectory, f"{d} is a symlink to a missing {os.readlink(d)}")
        if d.exists() and not d.is_dir():
            raise self._refuse(NotADirectory, f"must be a directory, got the file {d}")
        if not d.exists():
            parent = d.absolute().parent
            if parent.exists() and not parent.is_dir():
                raise self._refuse(NotADirectory, f"its parent {parent} is not a directory")
            if not parent.exists():
                raise self._refuse(MissingParent, f"its parent {parent} does not exist")

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
            raise self._refuse(NotWritable, f"cannot create {d} ({exc.strerror})") from None
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
                    NotWritable, f"cannot write in {self.directory} ({exc.strerror})"
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
            others = sorted(e.name for e in d.iterdir() if not ours_or_reserved(e.name))
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
            if not is_ours(d, name, marker):
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
            marker, journal = read_marker(d), read_journal(d)
            recorded = {**marker, **journal}
            # The journal keeps the files committed one at a time, and the marker the rest:
            # only the marker's are checked here (a 1e5-cell atlas is not hashed again). An
            # exclusive result lists everything in the marker, so the journal goes.
            among = (
                recorded if self.exclusive else {n: marker[n] for n in marker if n not in journal}
            )
            ours = [n for n in among if n not in new and is_ours(d, n, recorded)]
            kept = {n: recorded[n] for n in ours}
            stale = ours if self.exclusive else []
            if self.exclusive:
                kept = {}
            record = {
                "written_by": "slr-theory",
                "version": version(),
                "files": kept | {n: file_digest(self.staging / n) for n in new},
            }
            (self.staging / MARKER_NAME).write_text(json.dumps(record, indent=1, sort_keys=True))
            bookkeeping = [MARKER_NAME]
            retire_journal = (d / JOURNAL_NAME).exists() and (
                self.exclusive or any(n in journal for n in new)
            )
            if retire_journal and not self.exclusive:  # the journal without the names now whole
                lines = [journal_line(n, h) for n, h in journal.items() if n not in new]
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
                if not is_ours(self.directory, name, recorded):
                    raise self._refuse(
                        OutputConflict,
                        f"{dst} was not written by slr-theory (or was changed since); it "
                        "is never replaced: move it away or choose another destination",
                    )
            digest = file_digest(src)
            if self._journal_fd is None:
                self._journal_fd = open_journal(self.directory / JOURNAL_NAME)
            os.write(self._journal_fd, journal_line(name, digest))
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


def _rename(src: Path, dst: Path) -> None:
    """``os.replace``, one name for the commit's every move (tests inject faults here)."""
    os.replace(src, dst)
