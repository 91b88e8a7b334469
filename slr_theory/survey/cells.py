"""One cell of the atlas: the landscape at one point of the grid, and the fates of its runs."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from ..critical import canonical, critical_points, same_point, symmetries
from ..landscape import basins, stability_map
from ..longrun import UNLISTED, Fates
from ..params import Params, check_params, params_record
from ..validate import positive_int, positive_real
from .columns import CENSUS_COLUMNS, MIN_D, OPTIMUM, STEP_SHARE

__all__ = ["WITHIN", "atlas_cell", "atlas_step", "fate_columns"]


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
    optimum = next((q for q in found if same_point(q.overlaps, OPTIMUM, group=group)), None)
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
    at_opt = [i for i, m in enumerate(b.minima) if same_point(m, OPTIMUM, group=group)]
    share = stability_map(params, stability_grid).attracting_share
    census = {c: -1 for c in CENSUS_COLUMNS}
    if certify and params.model.rigorous_table(params) is not None:
        from ..certify import certify_critical_points

        proof = certify_critical_points(params, max_boxes=certify, points=found, jobs=1)
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
        "nonlinearity": params_record(params)["nonlinearity"],  # a user's: its path
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
        j for j, p in enumerate(f.points) if f.minimum[j] and same_point(p, OPTIMUM, group=group)
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
