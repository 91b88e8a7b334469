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

Nothing is read back that the atlas did not write: a cell file is trusted only if its
bytes have the SHA-256 digest recorded when it was committed
(:func:`slr_theory.output.written_files`); one that fails (edited, truncated, not ours)
is named in :attr:`Atlas.rejected`, set aside under a new name (never deleted), and
computed again. Each cell is committed at a cost that does not grow with the cells
already there (:meth:`slr_theory.output.Destination.commit_file`). A run that loses a
worker process, its Dask scheduler or its client raises :class:`AtlasIncomplete`,
with every finished cell kept.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import math
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .critical import canonical, critical_points, same_point, symmetries
from .landscape import basins, stability_map
from .longrun import UNLISTED, Fates
from .params import Params, check_params, params_record
from .results import html_table
from .validate import boolean, positive_int, positive_real

__all__ = [
    "AXES",
    "COLUMNS",
    "MAX_CELLS",
    "MIN_D",
    "STEP_SHARE",
    "WITHIN",
    "Atlas",
    "AtlasIncomplete",
    "atlas",
    "atlas_cell",
    "atlas_step",
    "dask_setup",
    "fate_columns",
    "found_text",
    "read_atlas",
]

#: The axes a grid may span, in the order the cells are numbered (the last varies fastest).
AXES = ("lam", "L", "gamma", "d", "s", "nonlinearity", "attention")
#: The axes whose values are names.
_TEXT_AXES = ("nonlinearity", "attention")
#: The columns from the fates of a cell's runs (:func:`fate_columns`); a table written
#: before them reads them as NaN.
_FATE_COLUMNS = (
    "fate_optimum_fraction",
    "fate_optimum_se",
    "fate_saddle_fraction",
    "fate_undecided_fraction",
    "optimum_log10_steps",
    "within_1e4",
    "within_1e6",
    "within_1e8",
)
#: The evidence of the full-space search (``n_critical`` is what it found, not a proof):
#: its starts and the start at which the last new point appeared (``-1`` in a table
#: written before they were kept).
_SEARCH_COLUMNS = ("search_starts", "search_last_new")
#: What a cell's census proved (:func:`slr_theory.certify_critical_points`, ``certify``):
#: 1 or 0, and its number of points; ``-1`` where no census ran (not asked, a model
#: without rigorous enclosures, or a table written before the column).
_CENSUS_COLUMNS = ("census_complete", "census_points", "census_agrees")
#: A cell's census budget (boxes per part) when ``certify=True``.
CERTIFY_BOXES = 10**7
#: The integer columns of the table.
_INTS = (
    "cell",
    "L",
    "d",
    "s",
    "n_critical",
    *_SEARCH_COLUMNS,
    *_CENSUS_COLUMNS,
    "optimum_index",
    "basin_runs",
)
#: The columns of :attr:`Atlas.rows`, in the order of the table.
COLUMNS = (
    "cell",
    *AXES,
    "eps",
    "n_critical",
    *_SEARCH_COLUMNS,
    *_CENSUS_COLUMNS,
    "optimum_index",
    "optimum_is_global",
    "global_min_overlaps",
    "global_min_risk",
    "optimum_risk",
    "m_attracting_fraction",
    "optimum_basin_fraction",
    "optimum_basin_se",
    "basin_unconverged_fraction",
    *_FATE_COLUMNS,
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
#: The smallest dimension of a cell: the full-space search needs ``span{k*, v*}`` and
#: two directions beside it.
MIN_D = 4
#: The search's settings of a cell, and their values in an atlas recorded before them.
_SEARCH_DEFAULTS = {"starts": 512, "grid": 9, "certify": 0}


class AtlasIncomplete(RuntimeError):
    """The atlas stopped before its last cell: a worker, the scheduler or the client was lost.

    Every cell that finished is kept in `out` (when there is one): the same call again
    computes only the cells that are missing.

    Attributes
    ----------
    reason : str
        What was lost, in one clause.
    done, total : int
        Cells with a row, and cells of the grid.
    out : Path or None
        Where the finished cells are.
    """

    def __init__(self, reason: str, done: int, total: int, out: Path | None) -> None:
        self.reason, self.done, self.total, self.out = reason, done, total, out
        keep = (
            f"the {done} finished cells are kept in {out}: run the same call again to resume"
            if out is not None
            else "give `out` to keep finished cells across runs"
        )
        super().__init__(f"the atlas stopped after {done} of {total} cells: {reason}; {keep}")


def atlas_step(points) -> float:
    """A cell's default PGD step: :data:`STEP_SHARE` of the largest step at which every
    minimum among `points` is stable for the PGD map, ``2 / h_max`` with ``h_max`` the
    largest Hessian eigenvalue over the minima.

    Parameters
    ----------
    points : sequence of CriticalPoint
        Critical points (:func:`slr_theory.critical_points`), at least one a minimum.

    Returns
    -------
    float

    Examples
    --------
    >>> from slr_theory import Params, critical_points
    >>> from slr_theory.survey import atlas_step
    >>> print(f"{atlas_step(critical_points(Params.paper(lam=0.9))):.4g}")
    0.003023
    """
    tops = [float(np.max(q.hessian_eigenvalues)) for q in points if q.index == 0]
    if not tops:
        raise ValueError("`points` must include a minimum (index 0) to set a stable step.")
    return STEP_SHARE * 2.0 / max(tops)


def atlas_cell(
    params: Params,
    *,
    basin_runs: int = 1000,
    alpha: float | None = None,
    steps: int = 20_000,
    max_steps: int = 200_000,
    stability_grid: int = 61,
    starts: int = 512,
    grid: int = 9,
    seed: Sequence[int] = (0,),
    certify: int = 0,
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
    starts, grid : int
        The full-space search's random starts and structured grid
        (:func:`slr_theory.critical_points`).
    seed : sequence of int
        The cell's seed (:func:`atlas` passes ``(rng, cell)``).
    certify : int
        Boxes per part of a census (:func:`slr_theory.certify_critical_points`, seeded
        by the cell's search) where the model has rigorous enclosures; 0: none.

    Returns
    -------
    dict
        The :data:`COLUMNS` but ``cell``: ``n_critical`` (found by search, up to
        symmetry), ``search_starts`` and ``search_last_new`` (its starts, and the start
        at which the last new point appeared), ``optimum_index`` (-1 when the search did not find ``(k*, v*)``),
        ``optimum_is_global``, ``global_min_overlaps`` (a list of five),
        ``global_min_risk``, ``optimum_risk``, ``m_attracting_fraction`` (share of M
        where M attracts transversally), ``optimum_basin_fraction`` and its standard
        error ``optimum_basin_se``, ``basin_unconverged_fraction`` (at no minimum after
        `max_steps` steps), the fates of the same runs (:func:`fate_columns`: where each
        ends and when, at any budget), ``basin_runs``, ``alpha`` and the ``seconds`` the
        cell took; ``census_complete`` (1: the census closed every box), ``census_points``
        and ``census_agrees`` (1: its points are the search's, with the same indices),
        ``-1`` where no census ran.

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
    if params.d < MIN_D:
        raise ValueError(f"`d` must be at least {MIN_D} in an atlas cell, got {params.d}.")
    basin_runs = positive_int(basin_runs, "basin_runs", upper=10**6)
    stability_grid = positive_int(stability_grid, "stability_grid", upper=2000)
    if isinstance(seed, (str, bytes)) or not isinstance(seed, Sequence) or not seed:
        raise ValueError(f"`seed` must be a non-empty sequence of integers, got {seed!r}.")
    seed = [positive_int(x, "seed", allow_zero=True) for x in seed]
    certify = (
        0 if certify is False else positive_int(certify, "certify", allow_zero=True, upper=10**12)
    )
    ss = np.random.SeedSequence(seed)
    search_seed, basin_seed = (int(x) for x in ss.generate_state(2))
    found = critical_points(params, starts=starts, grid=grid, rng=search_seed)
    minima = [q for q in found if q.index == 0]
    group = symmetries(params)
    optimum = next((q for q in found if same_point(q.overlaps, _OPTIMUM, group=group)), None)
    alpha = positive_real(atlas_step(found) if alpha is None else alpha, "alpha")
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
    census = {c: -1 for c in _CENSUS_COLUMNS}
    if certify and params.model.rigorous_table(params) is not None:
        from .certify import certify_critical_points

        proof = certify_critical_points(params, max_boxes=certify, points=found)
        agree = proof.agreement(found)
        census = {
            "census_complete": int(proof.complete),
            "census_points": len(proof.points),
            "census_agrees": int(agree["same"]),
        }
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
        "search_starts": len(found.search.starts),
        "search_last_new": found.search.last_new,
        **census,
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
        **fate_columns(b.fates, group),
        "basin_runs": basin_runs,
        "alpha": float(alpha),
        "seconds": time.perf_counter() - t0,
    }


#: The budgets (steps) of the columns ``within_1e4``, ``within_1e6``, ``within_1e8``.
WITHIN = (10**4, 10**6, 10**8)


def fate_columns(f: Fates, group: np.ndarray) -> dict:
    """A cell's columns from the fates of its runs: where they end, and when.

    Parameters
    ----------
    f : Fates
    group : ndarray
        The model's symmetries (:func:`slr_theory.critical.symmetries`): the optimum is
        ``(k*, v*)`` or an image.

    Returns
    -------
    dict
        ``fate_optimum_fraction`` and its ``fate_optimum_se``, ``fate_saddle_fraction``
        (runs that end at a saddle, on its stable manifold), ``fate_undecided_fraction``
        (label ``-1``), ``optimum_log10_steps`` (the median ``log10`` steps of the runs
        that reach the optimum, ``inf`` if none does) and ``within_1e4``, ... (the share of
        the runs at a minimum after that many steps).
    """
    at_opt = [
        j for j, p in enumerate(f.points) if f.minimum[j] and same_point(p, _OPTIMUM, group=group)
    ]
    share = f.fractions
    saddle = [j for j in range(len(f.kinds)) if not f.minimum[j] and f.kinds[j] != UNLISTED]
    out = {
        "fate_optimum_fraction": float(share[at_opt[0]]) if at_opt else 0.0,
        "fate_optimum_se": float(f.stderr[at_opt[0]]) if at_opt else 0.0,
        "fate_saddle_fraction": float(share[saddle].sum()) if saddle else 0.0,
        "fate_undecided_fraction": f.undecided,
        "optimum_log10_steps": math.inf,
    }
    if at_opt and np.any(f.label == at_opt[0]):
        out["optimum_log10_steps"] = float(f.quantiles(0.5, at_opt[0]))
    for n, name in zip(WITHIN, ("within_1e4", "within_1e6", "within_1e8"), strict=True):
        out[name] = float(f.within(n)[f.minimum].sum())
    return out


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
    rejected : dict of str to str
        Cell files found that the atlas did not trust, each with why (and, after a run,
        where it was set aside); their cells were computed again (or, read back with
        :func:`read_atlas`, are :attr:`missing`).
    """

    base: Params
    axes: dict
    settings: dict
    rows: list = field(default_factory=list)
    rejected: dict = field(default_factory=dict)

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

    def _repr_html_(self) -> str:
        """What a notebook shows: one row per cell, what ``(k*, v*)`` is and who reaches it."""
        rows = []
        for r in self.rows:
            fates = math.isfinite(r["fate_optimum_fraction"])
            rows.append(
                [
                    f"{r['lam']:.4g}", r["L"], f"{r['gamma']:.4g}", r["d"], r["s"],
                    r["nonlinearity"], r["attention"], found_text(r), r["optimum_index"],
                    "yes" if r["optimum_is_global"] else "no",
                    f"{r['fate_optimum_fraction']:.3f} ± {r['fate_optimum_se']:.3f}"
                    if fates else "—",
                    f"{r['optimum_log10_steps']:.1f}" if fates else "—",
                ]
            )  # fmt: skip
        return html_table(
            [
                "λ", "L", "γ", "d", "s", "σ", "attention", "critical points (found)",
                "(k*, v*) index", "global", "share to (k*, v*)", "median log10 steps",
            ],
            rows,
            caption=f"atlas: {len(self.rows)} of {self.cells} cells",
        )  # fmt: skip

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.atlas_figure` of this atlas.

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``x``, ``y``, ``dpi`` of :func:`~slr_theory.plotting.atlas_figure`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from .plotting.atlas import atlas_figure

        return atlas_figure(self, path, **options)

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
        if path.suffix == ".parquet" and not _has_pyarrow():
            raise ValueError(
                f"`path` {str(path)!r}: Parquet needs pyarrow "
                "(pip install 'slr-theory[parquet]'); a .csv path needs nothing."
            )
        with Destination(path.parent, force=force, expect=[path.name], argument="path") as dest:
            _write_table(self, dest.file(path.name))
        return path


def found_text(row: dict) -> str:
    """An atlas row's count of critical points with the search's evidence.

    Parameters
    ----------
    row : dict
        A row of :attr:`Atlas.rows`.

    Returns
    -------
    str
        ``"13 (last new at start 324 of 851)"``; ``"12 (complete by proof)"`` where the
        cell's census closed every box and holds the search's points; the count alone for
        a table written before the evidence was kept.
    """
    if row.get("census_complete") == 1 and row.get("census_agrees") == 1:
        return f"{row['n_critical']} (complete by proof)"
    if row["search_starts"] < 0:  # a table written before the evidence was kept
        return f"{row['n_critical']}"
    return (
        f"{row['n_critical']} (last new at start {row['search_last_new']} of "
        f"{row['search_starts']})"
    )


def _row_for_table(row: dict) -> dict:
    out = dict(row)
    out["global_min_overlaps"] = " ".join(repr(float(x)) for x in row["global_min_overlaps"])
    return out


def _row_from_table(raw: dict) -> dict:
    ints = _INTS
    row = {}
    for name in COLUMNS:
        # a table written before the attention axis: the paper's pointwise attention
        value = raw.get(name, "pointwise") if name == "attention" else raw.get(name)
        if value is None and name in _FATE_COLUMNS:  # a table written before the fates
            row[name] = math.nan
            continue
        if value is None and name in (*_SEARCH_COLUMNS, *_CENSUS_COLUMNS):  # ... or before
            row[name] = -1  # the search's evidence or the census
            continue
        if value is None:
            raise KeyError(name)
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
    ints = _INTS
    return pa.schema(
        [(c, kinds.get(c, pa.int64() if c in ints else pa.float64())) for c in COLUMNS]
    )


def read_atlas(path: str | os.PathLike) -> Atlas:
    """An :class:`Atlas` from what :func:`atlas` or :meth:`Atlas.write` wrote.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV or Parquet table, or the directory `out` of :func:`atlas` (its finished
        cells, even if the run was interrupted). In a directory, only cell files whose
        bytes have the digest recorded when they were written are read; the others are
        named in :attr:`Atlas.rejected` and their cells are :attr:`Atlas.missing`.

    Returns
    -------
    Atlas
    """
    from .output import written_files

    path = Path(path)
    if path.is_dir():
        recorded = written_files(path)
        spec = _stored_spec(path, recorded)
        if spec is None:
            raise ValueError(f"`path`: {path} holds no atlas ({_SPEC} is missing).")
        a = _from_spec(spec, [])
        rows, a.rejected = _read_cells(path, _digest(spec), a.cells, recorded)
        a.rows = sorted(rows.values(), key=lambda r: r["cell"])
        return a
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


def _spec(a: Atlas) -> dict:
    return {
        "base": params_record(a.base),
        "axes": {k: list(v) for k, v in a.axes.items()},
        "settings": dict(a.settings),
    }


def _upgraded(spec: dict) -> dict:
    """`spec` with what an atlas recorded before an axis or a setting existed filled in."""
    return {
        "base": {"attention": "pointwise", **spec["base"]},
        "axes": {"attention": ["pointwise"], **spec["axes"]},
        "settings": {**_SEARCH_DEFAULTS, **spec["settings"]},
    }


def _from_spec(spec: dict, rows: list[dict]) -> Atlas:
    spec = _upgraded(spec)
    return Atlas(
        base=Params(**spec["base"]),
        axes={k: list(spec["axes"][k]) for k in AXES},  # in cell order (JSON sorts keys)
        settings=dict(spec["settings"]),
        rows=sorted(rows, key=lambda r: r["cell"]),
    )


def _digest(spec: dict) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def _bytes_recorded(path: Path, digest: str | None) -> tuple[bytes | None, str | None]:
    """The bytes of `path` if they have the recorded `digest`; else why not."""
    if digest is None:
        return None, "not recorded as written by slr-theory"
    if path.is_symlink() or not path.is_file():
        return None, "not a regular file"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"unreadable ({exc.strerror})"
    if hashlib.sha256(data).hexdigest() != digest:
        return None, "changed since slr-theory wrote it (its SHA-256 differs from the record)"
    return data, None


def _stored_spec(directory: Path, recorded: dict) -> dict | None:
    """The atlas specification in `directory`; None where there is none; refused where
    there is an ``atlas.json`` that this toolkit did not write or that is not one."""
    path = directory / _SPEC
    if not (path.exists() or path.is_symlink()):
        return None
    data, why = _bytes_recorded(path, recorded.get(_SPEC))
    spec = None
    if data is not None:
        try:
            spec = json.loads(data)
            _from_spec(spec, [])
        except (ValueError, TypeError, KeyError, AttributeError):
            why, spec = "not an atlas specification", None
    if spec is None:
        raise _untrusted(path, why)
    return spec


_CELL_NAME = re.compile(r"cell-(\d{6})\.json")


def _row_out_of_domain(row: dict) -> str | None:
    """None, or which field of a cell's row is not of its type and domain: the integer
    columns integers, the names strings, the numbers finite (a fate column may be NaN, a
    table written before it, or infinite: never), the overlaps five numbers, the shares
    in [0, 1]."""

    def number(v):
        return isinstance(v, int | float) and not isinstance(v, bool)

    for name in COLUMNS:
        v = row[name]
        if name in _INTS:
            ok = isinstance(v, int) and not isinstance(v, bool)
        elif name in _TEXT_AXES:
            ok = isinstance(v, str)
        elif name == "optimum_is_global":
            ok = isinstance(v, bool)
        elif name == "global_min_overlaps":
            ok = (
                isinstance(v, list)
                and len(v) == 5
                and all(number(x) and math.isfinite(x) and abs(x) <= 1 + 1e-9 for x in v)
            )
        else:
            ok = number(v) and (
                math.isfinite(v) or (name in _FATE_COLUMNS and (math.isnan(v) or v == math.inf))
            )
            if ok and (name.endswith(("fraction", "_se")) or name.startswith("within")):
                ok = math.isnan(v) or 0.0 <= v <= 1.0
        if not ok:
            return f"with its field `{name}` out of its domain ({v!r})"
    return None


def _read_cells(
    directory: Path, tag: str, cells: int, recorded: dict
) -> tuple[dict[int, dict], dict[str, str]]:
    """The rows of the cell files the atlas wrote, by cell, and the cell files it rejects."""
    rows: dict[int, dict] = {}
    rejected: dict[str, str] = {}
    for p in sorted(directory.glob("cell-*.json")):
        m = _CELL_NAME.fullmatch(p.name)
        if m is None or int(m.group(1)) >= cells:
            continue  # not a cell of this grid: not the atlas's to judge or to replace
        i = int(m.group(1))
        data, why = _bytes_recorded(p, recorded.get(p.name))
        if data is not None:
            try:
                got = json.loads(data)
                row = got["row"]
                if set(COLUMNS) - set(row) == {"attention"}:  # written before that axis
                    row = {c: row.get(c, "pointwise") for c in COLUMNS}
                ok = got["spec"] == tag and tuple(row) == COLUMNS and row["cell"] == i
            except (ValueError, TypeError, KeyError):
                ok = False
            if ok:
                why = _row_out_of_domain(row)
                if why is None:
                    rows[i] = row
                    continue
            else:
                why = "not a cell of this atlas"
        rejected[p.name] = why
    return rows, rejected


def _refused(detail: str):
    from .output import OutputConflict, refusal

    return refusal(OutputConflict, "out", detail)


def _untrusted(path: Path, why: str):
    return _refused(
        f"{path} is {why}; the atlas never reads or replaces it: move it away or choose "
        "another directory"
    )


def _another_atlas(directory: Path):
    return _refused(
        f"{directory} holds another atlas (its {_SPEC} differs); choose another directory "
        "to keep both"
    )


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
        if name in _TEXT_AXES and not isinstance(v, str):
            label = getattr(v, "name", v)
            raise ValueError(
                f"`{name}` must be names of built-in models in an atlas, got {label!r}: the "
                "atlas records each cell's model by its name and runs cells in other "
                "processes, where a user's object is not defined"
            )
        checked = base.replace(**{name: v})  # each checked where Params checks it
        value = getattr(checked, name)
        out.append(
            value
            if name in _TEXT_AXES
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
    from .work import usable_cores

    if client is not None:
        if jobs is not None:
            raise ValueError(
                "`jobs` is for the workers the atlas starts; with a `client` the cells run "
                f"on that cluster's workers, got jobs={jobs!r}."
            )
        return None
    cores = usable_cores()
    if jobs is None:
        return cores
    jobs = positive_int(jobs, "jobs", upper=4096)
    if jobs > cores:
        raise ValueError(
            f"`jobs` must be at most the {cores} cores this process may run on (more "
            f"workers than cores only slow each other down), got {jobs}."
        )
    return jobs


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
    from .workers import in_worker_bootstrap

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
    spec = _spec(result)
    cell_kw = {k: settings[k] for k in settings if k != "rng"}

    def task(i: int) -> tuple:
        return i, grid_params[i], {**cell_kw, "seed": (settings["rng"], i)}

    if directory is None:
        result.rows = _run(
            [task(i) for i in range(n_cells)], backend, client, jobs, progress, None, None
        )
        return result
    from .output import Destination, written_files

    names = [_CSV, *([_PARQUET] if _has_pyarrow() else [])]
    recorded = written_files(directory) if directory.is_dir() else {}
    earlier = _stored_spec(directory, recorded) if directory.is_dir() else None
    if earlier is not None and _upgraded(earlier) != _upgraded(spec):
        raise _another_atlas(directory)
    for name in names:  # at the door: the table is written only at the end
        path = directory / name
        if path.exists() or path.is_symlink():
            _data, why = _bytes_recorded(path, recorded.get(name))
            if why is not None:
                raise _untrusted(path, why)
    tag = _digest(earlier if earlier is not None else spec)  # cells of an older record stay
    with Destination(directory, force=True, argument="out") as dest:
        recorded = written_files(directory)
        if _stored_spec(directory, recorded) != earlier:  # changed before the lock was ours
            raise _another_atlas(directory)
        if earlier is None:  # the cells' digests in `recorded` are unchanged by it
            dest.file(_SPEC).write_text(json.dumps(spec, indent=1, sort_keys=True))
            dest.commit()
        done, rejected = _read_cells(directory, tag, n_cells, recorded)
        for name, why in rejected.items():
            moved = dest.set_aside(name)
            result.rejected[name] = f"{why}; kept as {moved.name}"

        def save(row: dict) -> None:
            name = _CELL.format(row["cell"])
            dest.file(name).write_text(json.dumps({"spec": tag, "row": row}))
            dest.commit_file(name)

        todo = [task(i) for i in range(n_cells) if i not in done]
        new = _run(todo, backend, client, jobs, progress, save, directory, already=len(done))
        result.rows = sorted([*done.values(), *new], key=lambda r: r["cell"])
        for name in names:
            _write_table(result, dest.file(name))
    return result


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


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

    from .output import quiet_workers
    from .workers import end_pool, process_pool

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
        from .workers import without_main_script

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
