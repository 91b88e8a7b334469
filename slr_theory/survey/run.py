"""Computing an atlas: the grid, local worker processes or a Dask cluster, resumable cell by cell."""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Callable
from pathlib import Path

from ..params import Params, check_params
from ..validate import boolean, positive_int, positive_real
from .cells import atlas_cell
from .columns import (
    AXES,
    CELL,
    CERTIFY_BOXES,
    COLUMNS,
    CSV,
    MAX_CELLS,
    MIN_D,
    PARQUET,
    SPEC,
    TEXT_AXES,
    AtlasIncomplete,
    has_pyarrow,
)
from .table import (
    Atlas,
    another_atlas,
    atlas_spec,
    bytes_recorded,
    read_cells,
    spec_digest,
    stored_spec,
    untrusted,
    upgraded,
    write_table,
)

__all__ = ["atlas", "dask_setup"]


def _axis(name: str, values, base: Params) -> list:
    """The values of one axis, each checked as Params checks it, as the table records it."""
    if values is None:
        values = [getattr(base, name)]
    elif isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        values = [values]
    values = list(values)
    if not values:
        raise ValueError(f"`{name}` must hold at least one value, got {values!r}.")
    out = []
    for v in values:
        if name in TEXT_AXES and not isinstance(v, str):
            path = getattr(v, "origin", None)  # a user's nonlinearity found by its path
            if path is None:
                label = getattr(v, "name", v)
                raise ValueError(
                    f"`{name}` must be names of built-in models, or paths "
                    f"'package.module:attr', in an atlas, got {label!r}: the atlas records "
                    "each cell's model by its name and runs cells in other processes, "
                    "where a user's object is defined only if imported by its path"
                )
            v = path
        checked = base.replace(**{name: v})  # each checked where Params checks it
        value = getattr(checked, name)
        out.append(
            v  # a built-in's name, or the path each process imports
            if name in TEXT_AXES
            else float(value)
            if name in ("lam", "gamma")
            else int(value)
        )
    if name == "d" and min(out) < MIN_D:
        raise ValueError(
            f"`d` must be at least {MIN_D} in an atlas (the full-space search needs "
            f"span{{k*, v*}} and two directions beside it), got {min(out)}."
        )
    seen: dict = {}
    for raw, value in zip(values, out, strict=True):
        if value in seen:  # as numbers: 1 and 1.0 are one temperature
            raise ValueError(
                f"`{name}` must not repeat a value, got {values!r} "
                f"({seen[value]!r} and {raw!r} are the same value)."
            )
        seen[value] = raw
    return out


def _workers(jobs, client) -> int | None:
    """The local workers the atlas starts: at most the cores it may run on."""
    from ..work import worker_count

    if client is not None:
        if jobs is not None:
            raise ValueError(
                "`jobs` is for the workers the atlas starts; with a `client` the cells run "
                f"on that cluster's workers, got jobs={jobs!r}."
            )
        return None
    return worker_count(jobs)


def _out_directory(out) -> Path | None:
    if out is None:
        return None
    if not isinstance(out, (str, os.PathLike)) or not str(os.fspath(out)).strip():
        raise ValueError(f"`out` must name a directory, got {out!r}.")
    return Path(out)


def atlas(
    base: Params,
    *,
    lam=None,
    L=None,
    gamma=None,
    d=None,
    s=None,
    nonlinearity=None,
    attention=None,
    basin_runs: int = 1000,
    alpha: float | None = None,
    steps: int = 20_000,
    max_steps: int = 200_000,
    stability_grid: int = 61,
    starts: int = 512,
    grid: int = 9,
    backend: str = "processes",
    client=None,
    jobs: int | None = None,
    out: str | os.PathLike | None = None,
    rng: int = 0,
    progress: bool | Callable[[int, int], None] = False,
    certify: bool | int = False,
) -> Atlas:
    """The landscape over the Cartesian grid of the given axes around `base`.

    Every argument is checked before any cell is computed or anything is written.

    Parameters
    ----------
    base : Params
        Every axis not given keeps its value here.
    lam, L, gamma, d, s, nonlinearity, attention : value or sequence, optional
        The values of each axis (each checked as :class:`~slr_theory.Params` checks it,
        ``d >= 4``, no value twice as a number: ``1`` and ``1.0`` are one value). Models
        are given by name (a user's :class:`~slr_theory.Nonlinearity` is refused: cells
        run in other processes and the table records names). Cells are numbered in the
        order of :data:`AXES`, the last varying fastest.
    basin_runs, alpha, steps, max_steps, stability_grid, starts, grid :
        Of every cell (:func:`atlas_cell`).
    backend : {"processes", "dask"}
        Local processes (`jobs` of them; 1 computes here), or a ``dask.distributed``
        `client` (default: a ``LocalCluster`` of `jobs` single-threaded workers, closed
        at the end; ``pip install 'slr-theory[dask]'``).
    client : dask.distributed.Client, optional
        With ``backend="dask"``: the cells run on its cluster's workers (no `jobs`).
    jobs : int, optional
        Local workers, at most the cores this process may run on; default all of them.
    out : path, optional
        A directory where every finished cell is written at once (``cell-NNNNNN.json``)
        and, at the end, the table (``atlas.csv``, and ``atlas.parquet`` when pyarrow is
        installed). A run into a directory that holds the same atlas (``atlas.json``)
        computes only the cells it lacks, and those whose files fail their digest
        (:attr:`Atlas.rejected`); a directory holding another atlas, or files of these
        names that the atlas did not write, is refused
        (:class:`slr_theory.output.OutputConflict`).
    rng : int
        Cell ``i`` seeds from ``(rng, i)``: the rows do not depend on the backend.
    progress : bool or callable
        A progress bar (cells done, ETA) on stderr, or a callable given
        ``(done, total)`` after every cell.
    certify : bool or int
        Also run a census in every cell whose model has rigorous enclosures (columns
        ``census_complete``, ``census_points``, ``census_agrees``): True for
        :data:`CERTIFY_BOXES` boxes per part, or the budget itself.

    Returns
    -------
    Atlas

    Raises
    ------
    AtlasIncomplete
        A worker process, the Dask scheduler or the client was lost: the finished cells
        are kept in `out`, and the same call again resumes.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory import atlas
    >>> a = atlas(Params(d=8, L=4, lam=0.3, gamma=0.7), lam=[0.1, 0.3], basin_runs=20,
    ...           steps=500, max_steps=2000, stability_grid=11, jobs=1)
    >>> [(r["lam"], r["optimum_index"], r["optimum_is_global"]) for r in a.rows]
    [(0.1, 0, False), (0.3, 0, False)]
    """
    from ..workers import in_worker_bootstrap

    if in_worker_bootstrap():
        raise RuntimeError(
            "slr_theory.atlas was called while a worker process ran again the script that "
            'started it: put the call under `if __name__ == "__main__":`'
        )
    base = check_params(base)
    if backend not in ("processes", "dask"):
        raise ValueError(f"`backend` must be 'processes' or 'dask', got {backend!r}.")
    if client is not None and backend != "dask":
        raise ValueError("`client` is for backend='dask'.")
    jobs = _workers(jobs, client)
    if not callable(progress):
        progress = boolean(progress, "progress")
    directory = _out_directory(out)
    settings = {
        "basin_runs": positive_int(basin_runs, "basin_runs", upper=10**6),
        "alpha": None if alpha is None else positive_real(alpha, "alpha"),
        "steps": positive_int(steps, "steps", upper=10**12),
        "max_steps": positive_int(max_steps, "max_steps", upper=10**12),
        "stability_grid": positive_int(stability_grid, "stability_grid", upper=2000),
        "starts": positive_int(starts, "starts", allow_zero=True, upper=10**6),
        "grid": positive_int(grid, "grid", upper=1000),
        "certify": CERTIFY_BOXES
        if certify is True
        else 0
        if certify is False
        else positive_int(certify, "certify", allow_zero=True, upper=10**12),
        "rng": positive_int(rng, "rng", allow_zero=True),
    }
    given = {"lam": lam, "L": L, "gamma": gamma, "d": d, "s": s}
    given |= {"nonlinearity": nonlinearity, "attention": attention}
    axes = {name: _axis(name, given[name], base) for name in AXES}
    n_cells = math.prod(len(v) for v in axes.values())
    if n_cells > MAX_CELLS:
        raise ValueError(f"the grid must have at most {MAX_CELLS} cells, got {n_cells}.")
    cells = itertools.product(*axes.values())
    grid_params = [base.replace(**dict(zip(AXES, c, strict=True))) for c in cells]  # checked
    result = Atlas(base, axes, settings)
    spec = atlas_spec(result)
    cell_kw = {k: settings[k] for k in settings if k != "rng"}

    def task(i: int) -> tuple:
        return i, grid_params[i], {**cell_kw, "seed": (settings["rng"], i)}

    if directory is None:
        result.rows = _run(
            [task(i) for i in range(n_cells)], backend, client, jobs, progress, None, None
        )
        return result
    from ..output import Destination, written_files

    names = [CSV, *([PARQUET] if has_pyarrow() else [])]
    recorded = written_files(directory) if directory.is_dir() else {}
    earlier = stored_spec(directory, recorded) if directory.is_dir() else None
    if earlier is not None and upgraded(earlier) != upgraded(spec):
        raise another_atlas(directory)
    for name in names:  # at the door: the table is written only at the end
        path = directory / name
        if path.exists() or path.is_symlink():
            _data, why = bytes_recorded(path, recorded.get(name))
            if why is not None:
                raise untrusted(path, why)
    tag = spec_digest(earlier if earlier is not None else spec)  # cells of an older record stay
    with Destination(directory, force=True, argument="out") as dest:
        recorded = written_files(directory)
        if stored_spec(directory, recorded) != earlier:  # changed before the lock was ours
            raise another_atlas(directory)
        if earlier is None:  # the cells' digests in `recorded` are unchanged by it
            dest.file(SPEC).write_text(json.dumps(spec, indent=1, sort_keys=True))
            dest.commit()
        done, rejected = read_cells(directory, tag, n_cells, recorded)
        for name, why in rejected.items():
            moved = dest.set_aside(name)
            result.rejected[name] = f"{why}; kept as {moved.name}"

        def save(row: dict) -> None:
            name = CELL.format(row["cell"])
            dest.file(name).write_text(json.dumps({"spec": tag, "row": row}))
            dest.commit_file(name)

        todo = [task(i) for i in range(n_cells) if i not in done]
        new = _run(todo, backend, client, jobs, progress, save, directory, already=len(done))
        result.rows = sorted([*done.values(), *new], key=lambda r: r["cell"])
        for name in names:
            write_table(result, dest.file(name))
    return result


def dask_setup(worker) -> None:
    """The preload hook of a Dask worker (``--preload slr_theory.survey``): ignore SIGINT.

    A Ctrl-C reaches every process of the terminal's group; a worker that saw it would
    print a traceback. The atlas's own ``LocalCluster`` preloads this module, and the
    process that runs the atlas, which sees the Ctrl-C, ends its workers.

    Parameters
    ----------
    worker : distributed.Worker
        The worker being started (not used).

    Returns
    -------
    None
    """
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _cell_task(t: tuple) -> dict:
    i, params, kw = t
    return {"cell": i, **atlas_cell(params, **kw)}


def _run(
    tasks, backend, client, jobs, progress, save, out: Path | None, already: int = 0
) -> list[dict]:
    """Every task's row, each handed to `save` as it ends."""
    from tqdm.auto import tqdm

    total = len(tasks) + already
    bar = tqdm(
        total=total, initial=already, unit="cell", desc="atlas", disable=progress is not True
    )
    rows = []

    def finished(row: dict) -> None:
        row = {c: row[c] for c in COLUMNS}
        rows.append(row)
        if save is not None:
            save(row)
        bar.update(1)
        if callable(progress):
            progress(already + len(rows), total)

    try:
        if backend == "dask":
            _run_dask(tasks, client, jobs, finished)
        elif jobs == 1 or len(tasks) <= 1:
            for t in tasks:
                finished(_cell_task(t))
        else:
            _run_processes(tasks, jobs, finished)
    except _Lost as exc:
        raise AtlasIncomplete(str(exc), already + len(rows), total, out) from exc.__cause__
    finally:
        bar.close()
    return sorted(rows, key=lambda r: r["cell"])


class _Lost(Exception):
    """A backend lost what runs the cells (raised from the backend's own exception)."""


def _run_processes(tasks, jobs: int, finished) -> None:
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    from ..output import quiet_workers
    from ..workers import end_pool, process_pool

    pool = process_pool(min(jobs, len(tasks)))
    try:
        with quiet_workers():  # a Ctrl-C reaches this process, which ends the workers
            futures = [pool.submit(_cell_task, t) for t in tasks]
        for f in as_completed(futures):
            try:
                row = f.result()
            except BrokenProcessPool as exc:
                raise _Lost("a worker process died (killed, or out of memory)") from exc
            finished(row)
    except BaseException:  # Ctrl-C, SIGTERM or an error: leave no worker behind
        end_pool(pool)
        raise
    pool.shutdown()


def _run_dask(tasks, client, jobs: int | None, finished) -> None:
    import logging
    from concurrent.futures import CancelledError

    try:
        from dask.distributed import Client, LocalCluster, as_completed
        from distributed.comm.core import CommClosedError
        from distributed.scheduler import KilledWorker
    except ImportError as exc:  # the optional extra
        raise ValueError(
            "`backend` 'dask' needs dask.distributed: pip install 'slr-theory[dask]'."
        ) from exc
    own = client is None
    cluster = None
    if own:
        from ..workers import without_main_script

        with without_main_script():  # its workers do not run the script again
            cluster = LocalCluster(
                n_workers=jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # a worker ended at the close, or a heartbeat late under load, is not news:
                # what went wrong is raised here and said in the command's one line
                silence_logs=logging.CRITICAL,
                preload=[__name__],  # dask_setup: the workers leave a Ctrl-C to this process
            )
        client = Client(cluster)
    try:
        pending = as_completed(client.map(_cell_task, tasks, pure=False))
        try:
            for f in pending:
                finished(f.result())
                f.release()  # saved: the cluster need not keep it (nor compute it again)
        except KilledWorker as exc:
            raise _Lost(f"every worker that ran a cell died ({exc})") from exc
        except CancelledError as exc:
            raise _Lost("a cell was cancelled (the client or its scheduler went away)") from exc
        except (CommClosedError, OSError, TimeoutError) as exc:
            raise _Lost(f"the scheduler could not be reached ({type(exc).__name__})") from exc
    finally:
        if own:
            client.close()
            cluster.close()
