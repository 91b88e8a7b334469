"""The atlas: the landscape over a grid of parameters, cell by cell, resumable.

Each *cell* is one :class:`~slr_theory.Params`: the critical points of the full space
(:func:`slr_theory.critical_points`), whether ``(k*, v*)`` is the global minimum, an
ensemble of PGD runs from uniform starts run to convergence
(:func:`slr_theory.landscape.basins`), and where M attracts transversally
(:func:`slr_theory.landscape.stability_map`). :func:`atlas` computes the Cartesian grid
of the axes it is given around a base ``Params``, in local processes or on a Dask
cluster, and writes every finished cell at once, so a killed run resumes where it
stopped. Every cell seeds from ``(rng, cell)``: the rows are the same, bit for bit,
whatever the backend, the number of workers and the order the cells finish in.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .critical import canonical, critical_points, same_point, symmetries
from .landscape import basins, stability_map
from .params import Params, check_params
from .validate import boolean, positive_int, positive_real

__all__ = [
    "AXES",
    "COLUMNS",
    "MAX_CELLS",
    "STEP_SHARE",
    "Atlas",
    "atlas",
    "atlas_cell",
    "read_atlas",
]

#: The axes a grid may span, in the order the cells are numbered (the last varies fastest).
AXES = ("lam", "L", "gamma", "d", "s", "nonlinearity", "attention")
#: The axes whose values are names.
_TEXT_AXES = ("nonlinearity", "attention")
#: The columns of :attr:`Atlas.rows`, in the order of the table.
COLUMNS = (
    "cell",
    *AXES,
    "eps",
    "n_critical",
    "optimum_index",
    "optimum_is_global",
    "global_min_overlaps",
    "global_min_risk",
    "optimum_risk",
    "m_attracting_fraction",
    "optimum_basin_fraction",
    "optimum_basin_se",
    "basin_unconverged_fraction",
    "basin_runs",
    "alpha",
    "seconds",
)
_OPTIMUM = (1.0, 1.0, 0.0, 0.0, 0.0)
_SPEC = "atlas.json"
_CSV = "atlas.csv"
_PARQUET = "atlas.parquet"
_CELL = "cell-{:06d}.json"
#: The default step of a cell, as a share of the largest step at which every minimum is
#: stable for the PGD map (``2 / h_max``).
STEP_SHARE = 0.95
#: Most cells of one atlas (a typo in a range must not start days of work).
MAX_CELLS = 10**6


def atlas_cell(
    params: Params,
    *,
    basin_runs: int = 1000,
    alpha: float | None = None,
    steps: int = 20_000,
    max_steps: int = 200_000,
    stability_grid: int = 61,
    seed: Sequence[int] = (0,),
) -> dict:
    """One cell of the atlas: the landscape at `params`, as a row.

    Parameters
    ----------
    params : Params
        ``d >= 4``.
    basin_runs : int
        PGD runs from uniform starts (:func:`slr_theory.landscape.basins`).
    alpha : float, optional
        The PGD step; default ``1.9 / h_max``, 95 % of the largest step at which every
        minimum found is stable for the PGD map (``h_max``: the largest Hessian eigenvalue
        at the minima). At the paper's ``d = 400, lambda = 0.1`` this is about its
        ``4e-3``; a smaller step leaves more runs unconverged within `max_steps`.
    steps, max_steps : int
        Steps per round and the most a run may take.
    stability_grid : int
        Points per side of the grid on M where the transverse stability is read.
    seed : sequence of int
        The cell's seed (:func:`atlas` passes ``(rng, cell)``).

    Returns
    -------
    dict
        The :data:`COLUMNS` but ``cell``: ``n_critical`` (up to symmetry),
        ``optimum_index`` (-1 when the search did not find ``(k*, v*)``),
        ``optimum_is_global``, ``global_min_overlaps`` (a list of five),
        ``global_min_risk``, ``optimum_risk``, ``m_attracting_fraction`` (share of M
        where M attracts transversally), ``optimum_basin_fraction`` and its standard
        error ``optimum_basin_se``, ``basin_unconverged_fraction``, ``basin_runs``,
        ``alpha`` and the ``seconds`` the cell took.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.survey import atlas_cell
    >>> row = atlas_cell(Params(d=8, L=4, lam=0.3, gamma=0.7), basin_runs=20,
    ...                  steps=500, max_steps=2000, stability_grid=11)
    >>> row["optimum_index"], row["optimum_is_global"], row["global_min_overlaps"]
    (0, False, [0.0, 0.0, 1.0, 1.0, 0.0])
    """
    t0 = time.perf_counter()
    params = check_params(params)
    basin_runs = positive_int(basin_runs, "basin_runs", upper=10**6)
    stability_grid = positive_int(stability_grid, "stability_grid", upper=2000)
    if isinstance(seed, (str, bytes)) or not isinstance(seed, Sequence) or not seed:
        raise ValueError(f"`seed` must be a non-empty sequence of integers, got {seed!r}.")
    seed = [positive_int(x, "seed", allow_zero=True) for x in seed]
    ss = np.random.SeedSequence(seed)
    search_seed, basin_seed = (int(x) for x in ss.generate_state(2))
    found = critical_points(params, rng=search_seed)
    minima = [q for q in found if q.index == 0]
    group = symmetries(params)
    optimum = next((q for q in found if same_point(q.overlaps, _OPTIMUM, group=group)), None)
    if alpha is None:
        top = max(float(np.max(q.hessian_eigenvalues)) for q in minima)
        alpha = STEP_SHARE * 2.0 / top
    alpha = positive_real(alpha, "alpha")
    glob = min(minima, key=lambda q: q.risk)
    b = basins(
        params,
        basin_runs,
        alpha=alpha,
        steps=steps,
        max_steps=max_steps,
        rng=basin_seed,
        points=found,
    )
    at_opt = [i for i, m in enumerate(b.minima) if same_point(m, _OPTIMUM, group=group)]
    share = stability_map(params, stability_grid).attracting_share
    return {
        "lam": float(params.lam),
        "L": int(params.L),
        "gamma": float(params.gamma),
        "d": int(params.d),
        "s": int(params.s),
        "nonlinearity": params.sigma_name,
        "attention": params.attention,
        "eps": float(params.eps),
        "n_critical": len(found),
        "optimum_index": int(optimum.index) if optimum is not None else -1,
        "optimum_is_global": bool(
            optimum is not None
            and optimum.index == 0
            and optimum.risk <= glob.risk + 1e-12 * abs(glob.risk)
        ),
        "global_min_overlaps": [float(x) for x in canonical(glob.overlaps, group)],
        "global_min_risk": float(glob.risk),
        "optimum_risk": float(optimum.risk) if optimum is not None else float("nan"),
        "m_attracting_fraction": float(share),
        "optimum_basin_fraction": float(b.fractions[at_opt[0]]) if at_opt else 0.0,
        "optimum_basin_se": float(b.stderr[at_opt[0]]) if at_opt else 0.0,
        "basin_unconverged_fraction": b.unconverged / b.n,
        "basin_runs": basin_runs,
        "alpha": float(alpha),
        "seconds": time.perf_counter() - t0,
    }


@dataclass
class Atlas:
    """The rows of an atlas, one per finished cell, in cell order.

    Attributes
    ----------
    base : Params
        The parameters every axis not spanned keeps.
    axes : dict of str to list
        The values of each axis of the grid (:data:`AXES`; an axis not given has the
        base's value alone).
    settings : dict
        ``basin_runs``, ``alpha``, ``steps``, ``max_steps``, ``stability_grid``, ``rng``.
    rows : list of dict
        One per finished cell (:data:`COLUMNS`).
    """

    base: Params
    axes: dict
    settings: dict
    rows: list = field(default_factory=list)

    @property
    def cells(self) -> int:
        """Cells of the grid (finished or not)."""
        return int(np.prod([len(v) for v in self.axes.values()]))

    @property
    def missing(self) -> list[int]:
        """The cells without a row (a run that was interrupted)."""
        have = {r["cell"] for r in self.rows}
        return [i for i in range(self.cells) if i not in have]

    def column(self, name: str) -> np.ndarray:
        """One column of the rows as an array (``global_min_overlaps``: shape ``(n, 5)``).

        Parameters
        ----------
        name : str
            One of :data:`COLUMNS`.

        Returns
        -------
        ndarray
        """
        if name not in COLUMNS:
            raise ValueError(f"`name` must be one of {', '.join(COLUMNS)}, got {name!r}.")
        return np.array([r[name] for r in self.rows])

    def write(self, path: str | os.PathLike, *, force: bool = False) -> Path:
        """Write the rows as a tidy table: CSV, or Parquet for a ``.parquet`` path.

        Under the output discipline (:class:`slr_theory.output.Destination`): a file that
        exists is replaced only with `force`, and only if slr-theory wrote it.

        Parameters
        ----------
        path : str or os.PathLike
        force : bool

        Returns
        -------
        Path
        """
        from .output import Destination

        path = Path(path)
        if path.suffix == ".parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise ValueError(
                    f"`path` {str(path)!r}: Parquet needs pyarrow "
                    "(pip install 'slr-theory[parquet]'); a .csv path needs nothing."
                ) from None
        with Destination(path.parent, force=force, expect=[path.name], argument="path") as dest:
            _write_table(self, dest.file(path.name))
        return path


def _row_for_table(row: dict) -> dict:
    out = dict(row)
    out["global_min_overlaps"] = " ".join(repr(float(x)) for x in row["global_min_overlaps"])
    return out


def _row_from_table(raw: dict) -> dict:
    ints = ("cell", "L", "d", "s", "n_critical", "optimum_index", "basin_runs")
    row = {}
    for name in COLUMNS:
        # a table written before the attention axis: the paper's pointwise attention
        value = raw.get(name, "pointwise") if name == "attention" else raw[name]
        if name in _TEXT_AXES:
            row[name] = str(value)
        elif name == "global_min_overlaps":
            row[name] = [float(x) for x in str(value).split()]
        elif name == "optimum_is_global":
            row[name] = value if isinstance(value, bool) else str(value) == "True"
        elif name in ints:
            row[name] = int(value)
        else:
            row[name] = float(value)
    return row


def _write_table(a: Atlas, path: Path) -> None:
    rows = [_row_for_table(r) for r in a.rows]
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(rows, schema=_arrow_schema(pa))
        table = table.replace_schema_metadata({"slr_theory": json.dumps(_spec(a))})
        pq.write_table(table, path)
        return
    with open(path, "w", newline="") as f:
        f.write(f"# slr-theory atlas {json.dumps(_spec(a), sort_keys=True)}\n")
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: repr(v) if isinstance(v, float) else v for k, v in r.items()})


def _arrow_schema(pa):
    kinds = {
        "nonlinearity": pa.string(),
        "attention": pa.string(),
        "global_min_overlaps": pa.string(),
        "optimum_is_global": pa.bool_(),
    }
    ints = ("cell", "L", "d", "s", "n_critical", "optimum_index", "basin_runs")
    return pa.schema(
        [(c, kinds.get(c, pa.int64() if c in ints else pa.float64())) for c in COLUMNS]
    )


def read_atlas(path: str | os.PathLike) -> Atlas:
    """An :class:`Atlas` from what :func:`atlas` or :meth:`Atlas.write` wrote.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV or Parquet table, or the directory `out` of :func:`atlas` (its finished
        cells, even if the run was interrupted).

    Returns
    -------
    Atlas
    """
    path = Path(path)
    if path.is_dir():
        spec_path = path / _SPEC
        if not spec_path.is_file():
            raise ValueError(f"`path`: {path} holds no atlas ({_SPEC} is missing).")
        spec = json.loads(spec_path.read_text())
        return _from_spec(spec, _read_cells(path, spec))
    if not path.is_file():
        raise ValueError(f"`path` must be an atlas table or directory, got {str(path)!r}.")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        spec = json.loads(table.schema.metadata[b"slr_theory"])
        return _from_spec(spec, [_row_from_table(r) for r in table.to_pylist()])
    with open(path, newline="") as f:
        first = f.readline()
        prefix = "# slr-theory atlas "
        if not first.startswith(prefix):
            raise ValueError(f"`path`: {path} is not an atlas table (no slr-theory header).")
        spec = json.loads(first[len(prefix) :])
        return _from_spec(spec, [_row_from_table(r) for r in csv.DictReader(f)])


def _params_dict(p: Params) -> dict:
    return {
        "d": p.d,
        "L": p.L,
        "lam": p.lam,
        "gamma": p.gamma,
        "eps": p.eps,
        "s": p.s,
        "nonlinearity": p.sigma_name,
        "attention": p.attention,
    }


def _spec(a: Atlas) -> dict:
    return {
        "base": _params_dict(a.base),
        "axes": {k: list(v) for k, v in a.axes.items()},
        "settings": dict(a.settings),
    }


def _from_spec(spec: dict, rows: list[dict]) -> Atlas:
    # a table written before the attention axis: the paper's pointwise attention
    axes = {"attention": ["pointwise"], **spec["axes"]}
    return Atlas(
        base=Params(**spec["base"]),
        axes={k: list(axes[k]) for k in AXES},  # in cell order (JSON sorts keys)
        settings=dict(spec["settings"]),
        rows=sorted(rows, key=lambda r: r["cell"]),
    )


def _digest(spec: dict) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def _read_cells(directory: Path, spec: dict) -> list[dict]:
    tag = _digest(spec)
    rows = []
    for p in sorted(directory.glob("cell-*.json")):
        try:
            got = json.loads(p.read_text())
        except (OSError, ValueError):
            continue  # not ours, or unreadable: computed again
        if isinstance(got, dict) and got.get("spec") == tag and isinstance(got.get("row"), dict):
            rows.append(got["row"])
    return rows


def _axis(name: str, values, base: Params) -> list:
    if values is None:
        return [getattr(base, name) if name != "nonlinearity" else base.sigma_name]
    if isinstance(values, (str, int, float)):
        values = [values]
    values = list(values)
    if not values:
        raise ValueError(f"`{name}` must hold at least one value, got {values!r}.")
    for v in values:  # each checked where Params checks it
        base.replace(**{name: v})
    if len(set(map(str, values))) < len(values):
        raise ValueError(f"`{name}` must not repeat a value, got {values!r}.")
    return [
        v if name in _TEXT_AXES else float(v) if name in ("lam", "gamma") else int(v)
        for v in values
    ]


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
    backend: str = "processes",
    client=None,
    jobs: int | None = None,
    out: str | os.PathLike | None = None,
    rng: int = 0,
    progress: bool | Callable[[int, int], None] = False,
) -> Atlas:
    """The landscape over the Cartesian grid of the given axes around `base`.

    Parameters
    ----------
    base : Params
        Every axis not given keeps its value here.
    lam, L, gamma, d, s, nonlinearity, attention : value or sequence, optional
        The values of each axis (each checked as :class:`~slr_theory.Params` checks it).
        Cells are numbered in the order of :data:`AXES`, the last varying fastest.
    basin_runs, alpha, steps, max_steps, stability_grid :
        Of every cell (:func:`atlas_cell`).
    backend : {"processes", "dask"}
        Local processes (`jobs` of them; 1 computes here), or a ``dask.distributed``
        `client` (default: a ``LocalCluster`` of `jobs` single-threaded workers, closed
        at the end; ``pip install 'slr-theory[dask]'``).
    client : dask.distributed.Client, optional
        With ``backend="dask"``.
    jobs : int, optional
        Workers; default every core.
    out : path, optional
        A directory where every finished cell is written at once (``cell-NNNNNN.json``)
        and, at the end, the table (``atlas.csv``, and ``atlas.parquet`` when pyarrow is
        installed). A run into a directory that holds the same atlas (``atlas.json``)
        computes only the cells it lacks; a directory holding another atlas is refused
        (:class:`slr_theory.output.OutputConflict`).
    rng : int
        Cell ``i`` seeds from ``(rng, i)``: the rows do not depend on the backend.
    progress : bool or callable
        A progress bar (cells done, ETA) on stderr, or a callable given
        ``(done, total)`` after every cell.

    Returns
    -------
    Atlas

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory import atlas
    >>> a = atlas(Params(d=8, L=4, lam=0.3, gamma=0.7), lam=[0.1, 0.3], basin_runs=20,
    ...           steps=500, max_steps=2000, stability_grid=11, jobs=1)
    >>> [(r["lam"], r["optimum_index"], r["optimum_is_global"]) for r in a.rows]
    [(0.1, 0, False), (0.3, 0, False)]
    """
    base = check_params(base)
    given = {"lam": lam, "L": L, "gamma": gamma, "d": d, "s": s}
    given |= {"nonlinearity": nonlinearity, "attention": attention}
    axes = {name: _axis(name, given[name], base) for name in AXES}
    cells = list(itertools.product(*axes.values()))
    if len(cells) > MAX_CELLS:
        raise ValueError(f"the grid must have at most {MAX_CELLS} cells, got {len(cells)}.")
    grid = [base.replace(**dict(zip(AXES, c, strict=True))) for c in cells]  # each checked
    settings = {
        "basin_runs": positive_int(basin_runs, "basin_runs", upper=10**6),
        "alpha": None if alpha is None else positive_real(alpha, "alpha"),
        "steps": positive_int(steps, "steps", upper=10**12),
        "max_steps": positive_int(max_steps, "max_steps", upper=10**12),
        "stability_grid": positive_int(stability_grid, "stability_grid", upper=2000),
        "rng": positive_int(rng, "rng", allow_zero=True),
    }
    if backend not in ("processes", "dask"):
        raise ValueError(f"`backend` must be 'processes' or 'dask', got {backend!r}.")
    if client is not None and backend != "dask":
        raise ValueError("`client` is for backend='dask'.")
    jobs = positive_int(jobs, "jobs", upper=4096) if jobs is not None else (os.cpu_count() or 1)
    if not callable(progress):
        progress = boolean(progress, "progress")
    result = Atlas(base, axes, settings)
    spec = _spec(result)
    tag = _digest(spec)
    cell_kw = {k: settings[k] for k in ("basin_runs", "alpha", "steps", "max_steps")}
    cell_kw["stability_grid"] = settings["stability_grid"]

    def task(i: int) -> tuple:
        return i, grid[i], {**cell_kw, "seed": (settings["rng"], i)}

    if out is None:
        result.rows = _run(
            [task(i) for i in range(len(grid))], backend, client, jobs, progress, None
        )
        return result
    from .output import Destination

    directory = Path(out)
    earlier = _earlier_spec(directory)
    if earlier is not None and earlier != spec:
        raise _another_atlas(directory)
    with Destination(directory, force=earlier is not None, argument="out") as dest:
        if _earlier_spec(directory) not in (None, spec):  # changed before the lock was ours
            raise _another_atlas(directory)
        if earlier is None:
            dest.file(_SPEC).write_text(json.dumps(spec, indent=1, sort_keys=True))
            dest.commit()
        done = {r["cell"]: r for r in _read_cells(directory, spec)}

        def save(row: dict) -> None:
            name = _CELL.format(row["cell"])
            dest.file(name).write_text(json.dumps({"spec": tag, "row": row}))
            dest.commit()

        todo = [task(i) for i in range(len(grid)) if i not in done]
        new = _run(todo, backend, client, jobs, progress, save, already=len(done))
        result.rows = sorted([*done.values(), *new], key=lambda r: r["cell"])
        _write_table(result, dest.file(_CSV))
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            pass
        else:
            _write_table(result, dest.file(_PARQUET))
    return result


def _another_atlas(directory: Path):
    from .output import OutputConflict, refusal

    return refusal(
        OutputConflict,
        "out",
        f"{directory} holds another atlas (its {_SPEC} differs); choose another directory "
        "to keep both",
    )


def _earlier_spec(directory: Path):
    try:
        return json.loads((directory / _SPEC).read_text())
    except (OSError, ValueError):
        return None


def _cell_task(t: tuple) -> dict:
    i, params, kw = t
    return {"cell": i, **atlas_cell(params, **kw)}


def _run(tasks, backend, client, jobs, progress, save, already: int = 0) -> list[dict]:
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
    finally:
        bar.close()
    return sorted(rows, key=lambda r: r["cell"])


def _run_processes(tasks, jobs: int, finished) -> None:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from .output import quiet_workers

    pool = ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=mp.get_context("spawn"))
    try:
        with quiet_workers():  # a Ctrl-C reaches this process, which ends the workers
            futures = [pool.submit(_cell_task, t) for t in tasks]
        for f in as_completed(futures):
            finished(f.result())
    except BaseException:  # Ctrl-C, SIGTERM or an error: leave no worker behind
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _run_dask(tasks, client, jobs: int, finished) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:  # the optional extra
        raise ValueError(
            "`backend` 'dask' needs dask.distributed: pip install 'slr-theory[dask]'."
        ) from exc
    own = client is None
    cluster = None
    if own:
        cluster = LocalCluster(
            n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        futures = client.map(_cell_task, tasks, pure=False)
        for f in as_completed(futures):
            finished(f.result())
    finally:
        if own:
            client.close()
            cluster.close()
