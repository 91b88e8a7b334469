"""Figures. The only package that imports matplotlib, and only when a figure is drawn.

Figures are drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas and
saved to a file: the user's pyplot state and backend are never touched.

The modules of this package draw results and compute nothing (``runs``, ``branches``,
``manifold``, ``ensembles``, ``atlas``, on what they share in ``canvas``); this door
adds the convenience of handing a figure a ``Params``: :func:`phase_portrait`,
:func:`stability_figure` and :func:`off_manifold_figure` compute the result first
(:mod:`slr_theory.landscape`), then draw it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..trajectory import SETTLED_SPEED  # the report's and the figures' settling rule
from .atlas import UNCONVERGED_MARK, atlas_figure
from .branches import bifurcation_figure
from .ensembles import arrival_figure, draw_off_manifold
from .manifold import (
    ALL_PORTRAIT_LAYERS,
    PORTRAIT_LAYERS,
    basins_figure,
    draw_portrait,
    draw_stability,
    portrait_layers,
)
from .runs import experiment_figure

__all__ = [
    "ALL_PORTRAIT_LAYERS",
    "PORTRAIT_LAYERS",
    "SETTLED_SPEED",
    "UNCONVERGED_MARK",
    "arrival_figure",
    "atlas_figure",
    "basins_figure",
    "bifurcation_figure",
    "experiment_figure",
    "off_manifold_figure",
    "phase_portrait",
    "portrait_layers",
    "stability_figure",
]


def stability_figure(maps, path: str | Path | None = None, *, grid: int = 121, dpi: int = 120):
    """Maps of the leading transverse eigenvalue of the flow on M, one panel per map.

    Purple where M attracts (negative real part), orange where it repels; the zero
    contour in black. Each side of zero spans its half of the colour map, so the
    attracting region shows however weakly it attracts.

    Parameters
    ----------
    maps : sequence of StabilityMap or Params
        :func:`slr_theory.landscape.stability_map` results; a ``Params`` is computed
        first at `grid`.
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    grid : int
        Points per side for the entries given as ``Params``.
    dpi : int

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from ..landscape import StabilityMap, stability_map

    maps = [m if isinstance(m, StabilityMap) else stability_map(m, grid) for m in maps]
    return draw_stability(maps, path, dpi=dpi)


def phase_portrait(
    params,
    path: str | Path | None = None,
    *,
    grid: int = 41,
    basin_grid: int = 24,
    refine: int = 4,
    trajectories: int = 8,
    pgd_alpha: float | None = None,
    pgd_steps: int = 20_000,
    t_max: float = 600.0,
    dpi: int = 120,
    progress: bool | Callable[[int], object] = False,
    ax=None,
    layers=PORTRAIT_LAYERS,
):
    """The flow on M over the closed square, five layers at a glance (more on request).

    Streamlines of ``(kappa', nu')``, the nullclines (for ``nu``, ``kappa = kappa_0`` through
    M's interior saddle, where M has one; ``nu = erf(a kappa / s)`` for ``kappa``; and the
    edges), the critical points marked by their kind on M, the separatrix (the saddle's
    stable manifold) and the basins shaded; on request (`layers`) sample
    trajectories, risk contours, flow-time contours and, with `pgd_alpha`, the iterates of
    PGD at that step from the same starts.

    Parameters
    ----------
    params : Params or slr_theory.landscape.PortraitData
        A ``PortraitData`` is drawn as it is (the computing options are then unused); a
        ``Params`` is first computed by :func:`slr_theory.landscape.portrait_data`.
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    grid : int
        Streamline grid per side.
    basin_grid : int
        Basin-map grid per side (0: no shading).
    refine : int
        Cells where neighbours end apart are followed from ``refine x refine`` finer
        centres (1: none).
    trajectories : int
        Sample flow trajectories (from a ring of starts).
    pgd_alpha : float, optional
        Also draw PGD iterates at this step.
    pgd_steps : int
    t_max : float
        Flow time of the trajectories and the basin map.
    dpi : int
    progress : bool or callable
        ``True`` shows a tqdm bar over the stages (basins, field, separatrix,
        trajectories, critical points, saving); a callable is called with 1 per stage.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.
    layers : iterable of str, default :data:`~slr_theory.plotting.manifold.PORTRAIT_LAYERS`
        What to draw: ``basins``, ``streamlines``, ``nullclines``, ``separatrix`` and
        ``points`` by default (five layers); ``risk`` (contours), ``arrival`` (flow-time
        contours), ``flows`` (sample trajectories) and ``pgd`` (iterates, with
        `pgd_alpha`) on request (:data:`~slr_theory.plotting.manifold.ALL_PORTRAIT_LAYERS`).
        From a ``Params``, what no layer drawn reads is not computed (the basin map
        without ``basins`` or ``arrival``, the trajectories without ``flows`` or ``pgd``,
        the separatrix without ``separatrix`` or ``basins``): the same figure.

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from ..landscape import PortraitData, portrait_data

    layers = portrait_layers(layers)  # refused before anything is computed
    from ..trajectory import Progress

    if isinstance(params, PortraitData):
        return draw_portrait(params, path, dpi=dpi, ax=ax, layers=layers)
    # what no layer drawn reads is not computed (the same figure): the basin map is read
    # by basins and arrival, the trajectories' starts by flows and pgd, the iterates by pgd,
    # the separatrix by its layer and by the basins (their exact boundary)
    readers = {
        "basins": {"basins", "arrival"},
        "trajectories": {"flows", "pgd"},
        "pgd": {"pgd"},
        "separatrix": {"separatrix", "basins"},
    }
    skip = [part for part, by in readers.items() if not by & set(layers)]
    with Progress(progress, 6, "portrait", unit="stage") as update:
        tick = update or (lambda _n: None)
        data = portrait_data(
            params,
            grid=grid,
            basin_grid=basin_grid,
            refine=refine,
            trajectories=trajectories,
            pgd_alpha=pgd_alpha,
            pgd_steps=pgd_steps,
            t_max=t_max,
            progress=tick,
            skip=skip,
        )
        if data.basin_grid is None:  # no basin stage was counted
            tick(1)
        out = draw_portrait(data, path, dpi=dpi, ax=ax, layers=layers)
        tick(1)
    return out


def off_manifold_figure(
    params,
    path: str | Path | None = None,
    *,
    n: int = 30,
    alpha: float = 4e-3,
    steps: int = 20_000,
    rng=0,
    dpi: int = 120,
    ax=None,
):
    """Distance to M over time for initialisations uniform on the spheres, grouped by end state.

    Each run's distance ``sqrt(theta^2 + eta^2 + rho^2)`` under exact PGD, coloured by the
    minimum it is at when it stops (:data:`slr_theory.landscape.AT_DISTANCE`,
    :data:`slr_theory.landscape.AT_GRADIENT`), grey when it is at none: those are "not
    converged", labelled with their steps and their distance to the nearest minimum, and
    those of them that stopped before the budget, back where they stood a round of
    `steps` before (a cycle or fixed point of the PGD map), are a darker group labelled
    with the steps after which they stopped. Each minimum's own distance to M is dashed
    where it is off M (the title says so only then). Runs stop when they arrive.

    Parameters
    ----------
    params : Params or slr_theory.landscape.Basins
        A ``Basins`` ensemble is drawn as it is (the other options are then unused); a
        ``Params`` first runs :func:`slr_theory.landscape.basins` with `n`, `alpha`, `steps`
        (up to ten times `steps` for runs not yet at a minimum) and `rng`.
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    n : int
        Runs.
    alpha : float
    steps : int
    rng : numpy.random.Generator or int
    dpi : int
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from ..landscape import Basins, basins

    b = params
    if not isinstance(b, Basins):
        b = basins(params, n, alpha=alpha, steps=steps, max_steps=10 * steps, rng=rng)
    return draw_off_manifold(b, path, dpi=dpi, ax=ax)
