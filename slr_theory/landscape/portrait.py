"""What a phase portrait of the flow on M draws, computed: the field, the nullclines, the critical points, the basins and when runs arrive."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .. import engine
from ..critical import critical_points, manifold_critical_overlaps, manifold_kind
from ..longrun import Fates, fate
from ..manifold import in_open_square
from ..params import Params, check_params
from ..validate import positive_int, positive_real
from .ensembles import MAX_PORTRAIT_STEPS
from .onm import separatrix

__all__ = ["PORTRAIT_PARTS", "PortraitData", "ended_at", "portrait_data"]


@dataclass
class PortraitData:
    """Everything the phase portrait on M shows, computed (:func:`portrait_data`).

    Attributes
    ----------
    params : Params
    grid : ndarray, shape ``(g,)``
        Coordinates of the streamline grid on each axis (``[-1, 1]``).
    field : ndarray, shape ``(g, g, 2)``
        ``(kappa', nu')`` of the flow on M at ``(grid[j], grid[i])``.
    risk : ndarray, shape ``(g, g)``
        The risk on M there.
    basin_edges : ndarray, shape ``(b + 1,)``, or None
        Cell edges of the basin map (tiling the closed square; since 0.3.2 the fine cells,
        :func:`portrait_data`).
    basin_label : ndarray of int, shape ``(b, b)``, or None
        Index into :attr:`basin_targets` of the point the flow from the start each cell
        shows (:attr:`basin_cells`) ends at, followed to its end (:func:`slr_theory.fate`
        on M); ``-1`` where it is undecided. (Results saved before version 0.3.1: where
        the flow was by `t_max`.)
    t_max : float
        Flow time of the trajectories.
    nullcline : ndarray, shape ``(m, 2)``
        The ``kappa``-nullcline on M (``nu = erf(a kappa / s)`` for ``erf``).
    separatrix : ndarray, shape ``(m, 2)``, or None
        The stable manifold of M's interior saddle (:func:`separatrix`); empty
        (``m = 0``) where M has none (softmax attention); None where it was left out
        (:func:`portrait_data`'s `skip`).
    flows : list of ndarray
        Each flow trajectory's ``(kappa, nu)``, shape ``(m_i, 2)``.
    pgd_alpha : float or None
        Step of the PGD iterates, if any.
    pgd : ndarray, shape ``(records, runs, 2)``, or None
        PGD iterates from the same starts as the flows.
    points : ndarray, shape ``(p, 2)``
        The critical points of M with their symmetric images.
    point_kinds : list of str
        ``"minimum"``, ``"saddle"`` or ``"maximum"`` of the flow on M, for each point.
    basin_targets : ndarray, shape ``(m, 2)``, or None
        The critical points of M that ``basin_label`` indexes
        (:attr:`ManifoldBasins.targets`); None in results saved before it was kept (then
        pointwise attention's five: the origin and the corners).
    basin_fates : Fates or None
        The fates of the basin map's starts: where each flow ends, and the flow time it
        takes to enter the ``tol``-ball of its minimum on M (:attr:`basin_time`); None
        without a basin map (or saved before 0.3.1).
    basin_cells : ndarray of int, shape ``(b, b)``, or None
        The row of :attr:`basin_fates` each cell shows: its own centre where the map was
        refined, else the centre of the coarse cell it lies in; None in results saved
        before 0.3.2 (one start per cell, row-major).
    basin_starts : ndarray, shape ``(n, 2)``, or None
        ``(kappa, nu)`` of each start of :attr:`basin_fates`: first the coarse grid's
        centres, row-major, then the refined cells' (None before 0.3.2).
    basin_grid : int or None
        The coarse grid per side (None before 0.3.2).
    critical_lines : ndarray, shape ``(m,)``, or None
        The ``nu`` of each edge that is a line of critical points, where the risk does not
        depend on the key (:meth:`slr_theory.models.Model.key_free`: each of
        :attr:`points` at ``kappa = 1`` stands for its line); None otherwise.
    """

    params: Params
    grid: np.ndarray
    field: np.ndarray
    risk: np.ndarray
    basin_edges: np.ndarray | None
    basin_label: np.ndarray | None
    t_max: float
    nullcline: np.ndarray
    separatrix: np.ndarray | None
    flows: list[np.ndarray]
    pgd_alpha: float | None
    pgd: np.ndarray | None
    points: np.ndarray
    point_kinds: list[str]
    basin_targets: np.ndarray | None = None
    basin_fates: Fates | None = None
    basin_cells: np.ndarray | None = None
    basin_starts: np.ndarray | None = None
    basin_grid: int | None = None
    critical_lines: np.ndarray | None = None

    @property
    def basin_rows(self) -> np.ndarray | None:
        """:attr:`basin_cells`, or row-major for results saved before it was kept."""
        if self.basin_fates is None or self.basin_label is None:
            return None
        if self.basin_cells is not None:
            return np.asarray(self.basin_cells)
        return np.arange(self.basin_label.size).reshape(self.basin_label.shape)

    @property
    def basin_time(self) -> np.ndarray | None:
        """Flow time ``(b, b)`` from each cell's start to its minimum on M (``inf``: it
        ends at a saddle; NaN: undecided), from :attr:`basin_fates`."""
        rows = self.basin_rows
        return None if rows is None else self.basin_fates.steps[rows]

    @property
    def start_images(self) -> np.ndarray | None:
        """Index into :attr:`basin_targets` of the point each start of :attr:`basin_fates`
        ended at (``-1``: at none within the fates' ball), shape ``(n,)``."""
        if self.basin_fates is None or self.basin_targets is None:
            return None
        # where the edges are lines of critical points, nu alone says which one a run is at
        coords = (1,) if self.critical_lines is not None else (0, 1)
        return ended_at(self.basin_fates, self.basin_targets, coords)

    @property
    def basin_time_error(self) -> np.ndarray | None:
        """The relative error ``(b, b)`` of :attr:`basin_time`."""
        rows = self.basin_rows
        return None if rows is None else self.basin_fates.relative_error[rows]

    @property
    def interior(self) -> np.ndarray:
        """Which of :attr:`points` lie inside the open square (M's interior saddle, where
        there is one; :func:`slr_theory.manifold.in_open_square`), a boolean mask."""
        return in_open_square(self.points)

    @property
    def max_speed(self) -> float:
        """Largest ``|(kappa', nu')|`` on the streamline grid."""
        return float(np.hypot(self.field[..., 0], self.field[..., 1]).max())

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.phase_portrait` of this data (nothing is computed).

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``dpi``, ``ax``, ``layers`` of :func:`~slr_theory.plotting.phase_portrait`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from ..plotting.manifold import draw_portrait

        return draw_portrait(self, path, **options)


#: The parts of a portrait :func:`portrait_data` can leave out (its `skip`).
PORTRAIT_PARTS = ("basins", "trajectories", "pgd", "separatrix")


def _portrait_parts(skip) -> frozenset:
    """`skip` checked: names among :data:`PORTRAIT_PARTS`.

    Parameters
    ----------
    skip : iterable of str

    Returns
    -------
    frozenset of str
    """
    names = [skip] if isinstance(skip, str) else skip
    try:
        names = frozenset(names)
    except TypeError:
        names = None
    if names is None or not names <= set(PORTRAIT_PARTS):
        raise ValueError(f"`skip` must be names among {', '.join(PORTRAIT_PARTS)}, got {skip!r}.")
    return names


def ended_at(fates: Fates, targets: np.ndarray, coords=(0, 1)) -> np.ndarray:
    """Which of `targets` ``(m, 2)`` on M each run of `fates` ended at: the image of M's
    point it stopped at (its orbit is ``fates.label``), ``-1`` where it is at none within
    ``fates.tol``.

    Parameters
    ----------
    fates : Fates
    targets : ndarray, shape ``(m, 2)``
        ``(kappa, nu)`` of M's critical points and their images.
    coords : sequence of int
        Which of ``(kappa, nu)`` (0, 1) the distance reads: both, or ``(1,)`` where the
        risk does not depend on the key (:meth:`slr_theory.models.Model.state_overlaps`).

    Returns
    -------
    ndarray of int, shape ``(n,)``
    """
    coords = list(coords)
    if not coords or any(c not in (0, 1) for c in coords):
        raise ValueError(f"`coords` must be a non-empty subset of (0, 1), got {coords!r}.")
    gap = fates.final[:, None, coords] - np.asarray(targets, dtype=float)[None][..., coords]
    dist = np.max(np.abs(gap), axis=-1)
    j = np.argmin(dist, axis=1)
    return np.where((fates.label >= 0) & (dist[np.arange(j.size), j] <= fates.tol), j, -1)


def portrait_data(
    params: Params,
    *,
    grid: int = 41,
    basin_grid: int = 24,
    refine: int = 4,
    trajectories: int = 8,
    pgd_alpha: float | None = None,
    pgd_steps: int = 20_000,
    t_max: float = 600.0,
    progress=None,
    skip=(),
) -> PortraitData:
    """Compute what :func:`slr_theory.plotting.phase_portrait` draws.

    Parameters
    ----------
    params : Params
    grid : int
        Streamline grid per side, ``2 <= grid <= 1000``.
    basin_grid : int
        Basin-map grid per side (0: none), ``<= 1000``: the flow from each cell's centre
        followed to its end, and the time it takes (:func:`slr_theory.fate` on M). A cell
        whose end differs from a neighbour's is split into ``refine x refine`` cells, each
        followed from its own centre, so that the map follows the separatrix; the others
        are drawn at the same fine resolution with their coarse cell's fate.
    refine : int
        ``1 <= refine <= 16`` (1: no refinement).
    trajectories : int
        Flow trajectories from a ring of starts of radius 0.6, ``0 <= trajectories <= 1000``.
    pgd_alpha : float, optional
        Also PGD iterates at this step, from the same starts.
    pgd_steps : int
        Steps of those iterates, ``1 <= pgd_steps <= 1e7`` (the figure's runs; a longer
        ensemble is :func:`basins`'s).
    t_max : float
        Flow time of the trajectories.
    progress : callable, optional
        Called with 1 after each stage (basins, field, separatrix, trajectories, points).
    skip : iterable of str
        Parts among :data:`PORTRAIT_PARTS` not to compute, for a figure that does not draw
        them (``"basins"``: the basin map, as ``basin_grid = 0``; ``"trajectories"``: the
        flows and, from their starts, the PGD iterates; ``"pgd"``: the iterates alone;
        ``"separatrix"``: the saddle's stable manifold, None in the result). Every
        argument is checked all the same.

    Returns
    -------
    PortraitData

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import portrait_data
    >>> data = portrait_data(Params.paper(lam=0.1), grid=9, basin_grid=0, trajectories=2)
    >>> data.field.shape, sorted(set(data.point_kinds))
    ((9, 9, 2), ['maximum', 'minimum', 'saddle'])
    """
    from ..dynamics import pgd
    from ..flows import manifold_field, manifold_flow
    from ..risk import manifold_risk

    params = check_params(params)
    grid = positive_int(grid, "grid", upper=1000)
    if grid < 2:
        raise ValueError(f"`grid` must be >= 2, got {grid}.")
    basin_grid = positive_int(basin_grid, "basin_grid", upper=1000, allow_zero=True)
    refine = positive_int(refine, "refine", upper=16)
    trajectories = positive_int(trajectories, "trajectories", upper=1000, allow_zero=True)
    pgd_steps = positive_int(pgd_steps, "pgd_steps", upper=MAX_PORTRAIT_STEPS)
    t_max = positive_real(t_max, "t_max")
    if pgd_alpha is not None:
        pgd_alpha = positive_real(pgd_alpha, "pgd_alpha")
    skip = _portrait_parts(skip)
    if "basins" in skip:
        basin_grid = 0
    if "trajectories" in skip:
        trajectories = 0
    if "pgd" in skip:
        pgd_alpha = None
    tick = progress or (lambda _n: None)
    edges = label = targets = fates = cells = where_from = None
    if basin_grid:
        targets = manifold_critical_overlaps(params)

        on_m_state = [i for i in (0, 1) if i in params.model.state_overlaps(params)]

        def ends(xk, xn):  # fates of starts on M, and the image of M's point each is at
            starts = np.zeros((xk.size, 5))
            starts[:, 0], starts[:, 1] = xk.ravel(), xn.ravel()
            f = fate(params, starts, on_manifold=True)
            return f, ended_at(f, targets, on_m_state)

        c = np.linspace(-1, 1, basin_grid + 2)[1:-1]  # cells tile the closed square
        coarse = np.concatenate([[-1.0], 0.5 * (c[:-1] + c[1:]), [1.0]])
        kk, nn = np.meshgrid(c, c)
        fates, lab = ends(kk, nn)
        lab = lab.reshape(kk.shape)
        where_from = np.stack([kk.ravel(), nn.ravel()], axis=1)
        # the cells whose end differs from a neighbour's: the separatrix runs through them
        split = np.zeros(lab.shape, dtype=bool)
        for axis in (0, 1):
            differ = np.diff(lab, axis=axis) != 0
            lo = [slice(None)] * 2
            hi = [slice(None)] * 2
            lo[axis], hi[axis] = slice(None, -1), slice(1, None)
            split[tuple(lo)] |= differ
            split[tuple(hi)] |= differ
        r = refine if split.any() else 1
        edges = np.concatenate(
            [np.linspace(a, b, r + 1)[:-1] for a, b in itertools.pairwise(coarse)] + [[1.0]]
        )
        centre = 0.5 * (edges[:-1] + edges[1:])
        cells = np.repeat(np.repeat(np.arange(lab.size).reshape(lab.shape), r, 0), r, 1)
        label = np.repeat(np.repeat(lab, r, 0), r, 1)
        fine = np.repeat(np.repeat(split, r, 0), r, 1) if r > 1 else np.zeros_like(label, bool)
        if fine.any():
            i, j = np.nonzero(fine)
            more, more_label = ends(centre[j], centre[i])
            cells[i, j] = fates.n + np.arange(i.size)
            label[i, j] = more_label
            fates = fates.join(more)
            where_from = np.concatenate([where_from, np.stack([centre[j], centre[i]], axis=1)])
        tick(1)
    t = np.linspace(-1, 1, grid)
    K, N = np.meshgrid(t, t)
    R = manifold_risk(params, K, N)
    F = manifold_field(params, K, N)
    tick(1)
    kk = np.linspace(-1, 1, 400)
    sep = None
    if "separatrix" not in skip:
        # one interior saddle on M, or no separatrix (softmax attention: R_nu < 0 on M)
        inner = int(in_open_square(manifold_critical_overlaps(params)).sum())
        sep = separatrix(params) if inner == 1 else np.empty((0, 2))
    tick(1)
    ang = np.linspace(0, 2 * np.pi, trajectories, endpoint=False) + 0.4
    starts = 0.6 * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    flows = []
    for k0, n0 in starts:
        res = manifold_flow(params, float(k0), float(n0), t_max, dense_output=False)
        flows.append(np.stack([res.kappa, res.nu], axis=1))
    iterates = None
    if pgd_alpha is not None and trajectories:
        ov0 = np.zeros((trajectories, 5))
        ov0[:, :2] = starts
        tr = pgd(params, ov0, pgd_alpha, pgd_steps, record_every=max(1, pgd_steps // 40))
        iterates = tr.overlaps[..., :2]
    tick(1)
    pts = critical_points(params, "manifold")
    where, kinds = [], []
    for q in pts:
        kind = manifold_kind(q.manifold_eigenvalues)
        for o in [q.overlaps, *q.symmetry_copies]:
            where.append(o[:2])
            kinds.append(kind)
    tick(1)
    return PortraitData(
        params=params,
        grid=t,
        field=F,
        risk=R,
        basin_edges=edges,
        basin_label=label,
        t_max=t_max,
        nullcline=np.stack([kk, engine.manifold_nullcline(params, kk)], axis=1),
        separatrix=sep,
        flows=flows,
        pgd_alpha=pgd_alpha if iterates is not None else None,  # the step of iterates drawn
        pgd=iterates,
        points=np.array(where),
        point_kinds=kinds,
        basin_targets=targets,
        basin_fates=fates,
        basin_cells=cells,
        basin_starts=where_from,
        basin_grid=basin_grid or None,
        critical_lines=(
            np.array([o[1] for o in where]) if params.model.key_free(params) else None
        ),
    )
