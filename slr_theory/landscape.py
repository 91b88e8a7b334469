r"""The global picture: stability of M, basins and separatrices, escape from saddles, continuation in λ.

- :func:`manifold_stability`: the transverse eigenvalues of the overlap flow at points of
  ``M = {theta = eta = rho = 0}``. M is invariant, so on M the Jacobian of the flow is
  block triangular and the ``(theta, eta, rho)`` block alone decides whether a small
  distance to M shrinks or grows.
- :func:`separatrix` and :func:`manifold_basins`: on M, the stable manifold of the saddle
  at the origin, traced backward from its stable eigendirection, and which critical point
  each start of a grid reaches under the flow or under PGD at a finite step (and when).
- :func:`basin_fractions`: for initialisations uniform on the spheres (sampled exactly in
  overlap space), the fraction of runs each minimum attracts, with standard errors.
- :func:`saddle_escape`: time to leave a neighbourhood of a saddle against the linearised
  prediction ``log(r / r0) / mu``.
- :func:`continuation`: every critical point followed in ``lambda`` by a predictor-corrector
  (secant predictor, damped Riemannian Newton corrector, step halving; pseudo-arclength
  where that fails), with the events where a branch changes index, meets another at a
  pitchfork, or folds.
"""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import OptimizeResult

from . import engine
from .critical import (
    CriticalPoint,
    CriticalPoints,
    classify,
    critical_points,
    describe,
    manifold_critical_overlaps,
    manifold_kind,
    polish,
    same_point,
    symmetries,
)
from .geometry import velocity_partials
from .longrun import Fates, fate
from .manifold import in_open_square, manifold_saddle
from .params import Params, check_overlaps, check_params, temperature_range
from .results import html_table
from .trajectory import MAX_STEPS, to_overlaps
from .validate import as_array, positive_int, positive_real, random_generator

#: Most RK4 steps of :func:`separatrix` and :func:`manifold_basins` (flow).
MAX_RK4_STEPS = 10**7
#: How far from feasible (smallest eigenvalue of the Gram matrix's Schur complement) the
#: end of a flow of :func:`basin_fractions` may drift before it is an error: the flow's
#: integration tolerance, not rounding.
FLOW_FEASIBILITY = 1e-9
#: Smallest initial displacement from a saddle :func:`saddle_escape` accepts.
MIN_OFFSET = 1e-10

__all__ = [
    "AT_DISTANCE",
    "AT_GRADIENT",
    "CORRECTOR_DAMPING",
    "FLOW_FEASIBILITY",
    "FOLD_TOL",
    "LOCATE_TOL",
    "MAX_PORTRAIT_STEPS",
    "MAX_RK4_STEPS",
    "MIN_OFFSET",
    "BasinFractions",
    "Basins",
    "Branch",
    "Continuation",
    "ManifoldBasins",
    "PortraitData",
    "StabilityMap",
    "basin_fractions",
    "basins",
    "continuation",
    "convergence_time",
    "ended_at",
    "manifold_basins",
    "manifold_stability",
    "portrait_data",
    "saddle_escape",
    "separatrix",
    "stability_map",
]


def _rk4_steps(t_max, dt) -> tuple[int, float]:
    """The number of RK4 steps of size `dt` to `t_max`, both validated."""
    t_max, dt = positive_real(t_max, "t_max"), positive_real(dt, "dt")
    steps = np.ceil(t_max / dt)
    if steps > MAX_RK4_STEPS:
        raise ValueError(
            f"`t_max` / `dt` must be at most {MAX_RK4_STEPS:g} RK4 steps, got "
            f"t_max={t_max!r}, dt={dt!r}."
        )
    return int(steps), dt


# --- stability of M -------------------------------------------------------------------------


def manifold_stability(params: Params, kappa, nu) -> np.ndarray:
    """Transverse eigenvalues of the overlap flow at points ``(kappa, nu)`` of M.

    The Jacobian ``J = Jo + Jg Hess R`` of the five-dimensional flow
    (:func:`slr_theory.geometry.velocity_partials`) has ``d(theta', eta', rho')/d(kappa, nu)
    = 0`` on M, so its ``(theta, eta, rho)`` block gives the linear growth of the distance
    to M: M attracts where every real part is negative.

    At the edges of the square (``|kappa| = 1`` or ``|nu| = 1``) the overlaps are not a
    regular chart: there ``rho = kappa theta + eta nu`` to first order, so only two of the
    three transverse directions are feasible and the eigenvalues describe the linearised
    overlap field, not the distance to M. Use the open square for maps, and the
    Riemannian Hessian (:func:`slr_theory.geometry.riemannian_hessian`) at the corners.

    Parameters
    ----------
    params : Params
    kappa, nu : array_like
        Points of the closed square, broadcast together.

    Returns
    -------
    ndarray, complex, shape ``(..., 3)``
        The three eigenvalues, by decreasing real part (``[..., 0]`` decides stability).

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import manifold_stability
    >>> ev = manifold_stability(Params.paper(lam=0.1), [1.0, 1.0], [1.0, -1.0])
    >>> bool(ev[0, 0].real < 0), bool(ev[1, 0].real > 0)  # M attracts at (1, 1), repels at (1, -1)
    (True, True)
    """
    params = check_params(params)
    k, n, *_ = check_overlaps(kappa, nu, 0.0, 0.0, 0.0, d=params.d)
    k, n = np.broadcast_arrays(k, n)
    zero = np.zeros_like(k)
    ov = (k, n, zero, zero, zero)
    g = np.moveaxis(engine.gradient(params, ov), -1, 0)
    H = engine.hessian(params, ov)
    Jo, Jg = velocity_partials(np.stack([k, n, zero, zero, zero]), g)
    block = (Jo + Jg @ H)[..., 2:, 2:]
    ev = np.linalg.eigvals(block)
    order = np.argsort(-ev.real, axis=-1, kind="stable")
    return np.take_along_axis(ev, order, axis=-1)


# --- the flow on M in the angle chart, vectorised -------------------------------------------


def _angle_velocity(table, phi: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """``(phi', psi') = (sin phi R_kappa, sin psi R_nu)`` at ``cos phi, cos psi`` (batched)."""
    n = phi.size
    ov = np.zeros((5, n))
    ov[0], ov[1] = np.cos(phi), np.cos(psi)
    gr = table.manifold_gradient(ov[:2])
    return np.stack([np.sin(phi) * gr[0], np.sin(psi) * gr[1]])


def _m_points_in_target_order(params: Params, targets: np.ndarray) -> list:
    """The critical points of M (with their eigenvalues on M), in the order of `targets`."""
    points = critical_points(params, "manifold")
    out = []
    for t in targets:
        for q in points:
            images = [q.overlaps, *q.symmetry_copies]
            if any(np.allclose(o[:2], t) for o in images):
                out.append(q)
                break
    return out


@dataclass(frozen=True)
class ManifoldBasins:
    """Which critical point of M each start reaches.

    Attributes
    ----------
    kappa, nu : ndarray, shape ``(m, m)``
        The grid of starts.
    label : ndarray of int, shape ``(m, m)``
        Index into :attr:`targets` of the point reached, ``-1`` if none within the time.
    time : ndarray, shape ``(m, m)``
        Flow time (or PGD steps times ``alpha``) at which the run entered the
        ``radius``-disc around it (``nan`` if never).
    targets : ndarray, shape (5, 2)
        The critical points of M: the origin and the four corners.
    dynamics : str
    radius : float
    """

    kappa: np.ndarray
    nu: np.ndarray
    label: np.ndarray
    time: np.ndarray
    targets: np.ndarray
    dynamics: str
    radius: float


def manifold_basins(
    params: Params,
    grid: int = 41,
    *,
    dynamics: str = "flow",
    alpha: float | None = None,
    t_max: float = 2000.0,
    radius: float = 1e-2,
    dt: float | None = None,
) -> ManifoldBasins:
    """The basin map of the dynamics on M over a grid of starts in the open square.

    Parameters
    ----------
    params : Params
    grid : int
        ``grid x grid`` starts, uniform in ``(-1, 1)^2`` (the boundary excluded);
        ``1 <= grid <= 1000``.
    dynamics : {"flow", "pgd"}
        The gradient flow (classical RK4 in the angle chart, every start at once, step
        `dt`), or the paper's PGD at step `alpha` (exact, :func:`slr_theory.pgd`).
    alpha : float, optional
        PGD step (required for ``"pgd"``).
    t_max : float
        Flow time (PGD: ``t_max / alpha`` steps).
    radius : float
        A run has reached a critical point when within this distance of it, ``<= 1``.
    dt : float, optional
        RK4 step for the flow (default 0.05); at most ``MAX_RK4_STEPS`` (1e7) steps.
        PGD takes ``ceil(t_max / alpha)`` steps, at most 1e12.

    Returns
    -------
    ManifoldBasins

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import manifold_basins
    >>> b = manifold_basins(Params.paper(lam=0.1), grid=8, t_max=400.0)
    >>> sorted(set(b.label.ravel().tolist()))  # the two minima (1, 1) and (-1, -1)
    [1, 2]
    """
    params = check_params(params)
    grid = positive_int(grid, "grid", upper=1000)
    t_max = positive_real(t_max, "t_max")
    radius = positive_real(radius, "radius", upper=1.0)
    if not isinstance(dynamics, str) or dynamics not in ("flow", "pgd"):
        raise ValueError(f"`dynamics` must be 'flow' or 'pgd', got {dynamics!r}.")
    t = np.linspace(-1, 1, grid + 2)[1:-1]
    kk, nn = np.meshgrid(t, t)
    targets = manifold_critical_overlaps(params)
    if dynamics == "pgd":
        if alpha is None:
            raise ValueError("`alpha` is required for dynamics='pgd'.")
        alpha = positive_real(alpha, "alpha")
        from .dynamics import pgd

        if t_max / alpha > 1e12:
            raise ValueError(
                f"`t_max` / `alpha` must be at most 1e12 PGD steps, got t_max={t_max!r}, "
                f"alpha={alpha!r}."
            )
        steps = int(np.ceil(t_max / alpha))
        every = max(1, steps // 400)
        ov0 = np.zeros((kk.size, 5))
        ov0[:, 0], ov0[:, 1] = kk.ravel(), nn.ravel()
        res = pgd(params, ov0, alpha, steps, record_every=every)
        path = np.moveaxis(res.overlaps[..., :2], 0, 1)  # (n, n_rec, 2)
        times = res.step * alpha
    else:
        table = engine.table(params, params.lam, 1).prepared()  # at every RK4 stage
        phi_all = np.arccos(kk.ravel())
        psi_all = np.arccos(nn.ravel())
        n_steps, dt = _rk4_steps(t_max, 0.05 if dt is None else dt)
        every = max(1, n_steps // 400)
        # a run within radius / 2 of a minimum of the flow on M stays there: it is frozen,
        # and the loop ends when every run is (the records go on with its position)
        minima = np.array(
            [
                manifold_kind(q.manifold_eigenvalues) == "minimum"
                for q in _m_points_in_target_order(params, targets)
            ]
        )
        active = np.arange(phi_all.size)
        recs, times = [], []
        for i in range(n_steps + 1):
            if i % every == 0 or i == n_steps:
                here = np.stack([np.cos(phi_all), np.cos(psi_all)], axis=-1)
                recs.append(here)
                times.append(i * dt)
                near = np.linalg.norm(here[active, None] - targets[None], axis=-1)
                active = active[~np.any((near < 0.5 * radius) & minima, axis=1)]
            if i == n_steps:
                break
            if not active.size:
                continue
            phi, psi = phi_all[active], psi_all[active]
            k1 = _angle_velocity(table, phi, psi)
            k2 = _angle_velocity(table, phi + 0.5 * dt * k1[0], psi + 0.5 * dt * k1[1])
            k3 = _angle_velocity(table, phi + 0.5 * dt * k2[0], psi + 0.5 * dt * k2[1])
            k4 = _angle_velocity(table, phi + dt * k3[0], psi + dt * k3[1])
            phi_all[active] = phi + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            psi_all[active] = psi + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        path = np.stack(recs, axis=1)
        times = np.array(times)
    dist = np.linalg.norm(path[:, :, None, :] - targets[None, None], axis=-1)  # (n, rec, 5)
    inside = dist < radius
    label = np.full(path.shape[0], -1)
    when = np.full(path.shape[0], np.nan)
    final = inside[:, -1, :]
    for j in range(len(targets)):
        hit = final[:, j]
        label[hit] = j
        first = np.argmax(inside[:, :, j], axis=1)
        when[hit] = times[first[hit]]
    return ManifoldBasins(
        kk, nn, label.reshape(kk.shape), when.reshape(kk.shape), targets, dynamics, radius
    )


def separatrix(
    params: Params, *, delta: float = 1e-6, t_max: float = 2000.0, dt: float = 0.01
) -> np.ndarray:
    """The stable manifold of M's interior saddle, as a curve in ``(kappa, nu)``.

    The saddle is :func:`slr_theory.manifold.manifold_saddle` (the origin for an odd
    ``sigma``). Traced backward along the flow (classical RK4 in the angle chart) from
    ``saddle +- delta`` along the stable eigenvector of the chart's Jacobian, until it leaves the
    open square or stops advancing (where it meets an invariant edge of the square, the
    slopes of one RK4 step cancel). The curve is followed in arc length (the velocity
    normalised), so its cost does not depend on how slow the flow is: where the flow is
    slow (tiny ``lam`` or ``gamma``, or ``erf`` saturated) the same few hundred steps
    trace it as where it is fast.

    Parameters
    ----------
    params : Params
    delta : float
        Initial offset along the stable direction, ``0 < delta <= 0.5`` (radian).
    t_max : float
        Longest arc length per half, in the angle chart (radian).
    dt : float
        RK4 step in arc length (radian); ``ceil(t_max / dt) <= MAX_RK4_STEPS`` (1e7).

    Returns
    -------
    ndarray, shape ``(m, 2)``
        Points ``(kappa, nu)`` ordered along the curve, through the saddle.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import separatrix
    >>> s = separatrix(Params.paper(lam=0.1))
    >>> bool(np.abs(s).max() > 0.9)  # it reaches the edge of the square
    True
    """
    from .geometry import manifold_chart_jacobian

    params = check_params(params)
    saddle = _interior_saddle(params, "separatrix")
    centre = np.arccos(saddle)
    delta = positive_real(delta, "delta", upper=0.5)
    steps, dt = _rk4_steps(t_max, dt)
    J = manifold_chart_jacobian(params, *centre)
    w, U = np.linalg.eigh(J)  # symmetric: the flow in the angles is a gradient flow
    stable = U[:, int(np.argmin(w))]
    table = engine.table(params, params.lam, 1).prepared()  # at every RK4 stage

    def f(z):  # the backward flow's unit tangent (arc length); zero where the flow stops
        v = -_angle_velocity(table, np.array([z[0]]), np.array([z[1]]))[:, 0]
        n = np.hypot(v[0], v[1])
        return v / n if n > 0 else v

    halves = []
    for sign in (1.0, -1.0):
        y = centre + sign * delta * stable
        pts = [y.copy()]
        for _ in range(steps):
            k1 = f(y)
            if not k1.any():
                break
            k2 = f(y + 0.5 * dt * k1)
            k3 = f(y + 0.5 * dt * k2)
            k4 = f(y + dt * k3)
            step = dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            y = y + step
            if not (0 < y[0] < np.pi and 0 < y[1] < np.pi):
                break
            pts.append(y.copy())
            if np.any(np.abs(np.cos(y)) > 1 - 1e-9) or np.hypot(*step) < 0.1 * dt:
                break  # at the edge, or no longer advancing (the slopes cancel: it has arrived)
        halves.append(np.cos(np.array(pts)))
    return np.concatenate([halves[1][::-1], saddle[None], halves[0]])


def _interior_saddle(params: Params, what: str) -> np.ndarray:
    """M's interior saddle ``(kappa_0, nu_0)`` (:func:`slr_theory.manifold.manifold_saddle`);
    ``ValueError`` naming `what` if M has none."""
    saddle = manifold_saddle(params)
    if saddle is None:
        raise ValueError(
            f"`params`: M has no critical point inside the square for this model (R_nu does "
            f"not vanish there; critical.manifold_critical_overlaps gives M's points), so no "
            f"saddle and no {what}."
        )
    return saddle


# --- basins in the full space ---------------------------------------------------------------


@dataclass
class BasinFractions:
    """Which minimum runs from a uniform initialisation reach, and how often.

    Attributes
    ----------
    attractors : list of CriticalPoint
        The minima of :func:`slr_theory.critical_points` (one per orbit).
    fractions, stderr : ndarray
        Fraction of runs ending at each attractor (or one of its symmetric images), and
        the binomial standard error ``sqrt(p (1 - p) / n)``.
    none_fraction : float
        Runs that reached no minimum (a saddle's neighbourhood, a plateau).
    unreached : ndarray, shape ``(m, 5)``
        Where those runs ended.
    final : ndarray, shape ``(n, 5)``
        Every run's end point.
    label : ndarray of int, shape ``(n,)``
        Index of the attractor reached, ``-1`` for none.
    nearest, distance : ndarray, shape ``(n,)``
        For every run, the nearest attractor (up to symmetry) and the distance to it:
        where the runs that reached none are heading or stalled.
    dynamics : str
    n : int
    gradient : ndarray, shape ``(n,)``
        Norm of every run's Riemannian gradient at its end point.
    steps_run : ndarray of int, shape ``(n,)``
        PGD steps each run took (all ``steps`` unless ``max_steps`` let it go on).
    stalled : ndarray of bool, shape ``(n,)``
        Runs that reached no minimum and stopped moving (a fixed point or a cycle of
        the PGD map that is no minimum): continuing them would change nothing.
    trace_step : ndarray of int, shape ``(m,)``
        With ``trace_every``: the recorded steps.
    trace_distance : ndarray, shape ``(m, n)``
        With ``trace_every``: every run's distance to M, ``sqrt(theta^2 + eta^2 +
        rho^2)``, at the recorded steps (NaN once the run has stopped).
    """

    attractors: list
    fractions: np.ndarray
    stderr: np.ndarray
    none_fraction: float
    unreached: np.ndarray
    final: np.ndarray
    label: np.ndarray
    nearest: np.ndarray
    distance: np.ndarray
    dynamics: str
    n: int
    gradient: np.ndarray | None = None
    steps_run: np.ndarray | None = None
    stalled: np.ndarray | None = None
    trace_step: np.ndarray | None = None
    trace_distance: np.ndarray | None = None


def _nearest_attractor(final: np.ndarray, attractors: list, coords=None):
    """Nearest attractor (up to symmetry) of each end point, and the distance to it, on
    the overlaps `coords` (the model's :meth:`~slr_theory.models.Model.state_overlaps`)."""

    coords = np.arange(5) if coords is None else coords
    nearest = np.full(final.shape[0], -1)
    best = np.full(final.shape[0], np.inf)
    for j, q in enumerate(attractors):
        images = np.array([q.overlaps, *q.symmetry_copies])[:, coords]
        gap = final[:, None, coords] - images[None]
        dist = np.min(np.linalg.norm(gap, axis=-1), axis=1)
        closer = dist < best
        nearest[closer] = j
        best[closer] = dist[closer]
    return nearest, best


def basin_fractions(
    params: Params,
    n: int,
    *,
    rng: np.random.Generator | int | None = 0,
    dynamics: str = "pgd",
    alpha: float | None = None,
    steps: int | None = None,
    t_max: float | None = None,
    tol: float = 0.05,
    points: CriticalPoints | None = None,
    schedule=None,
    grad_tol: float | None = None,
    max_steps: int | None = None,
    trace_every: int | None = None,
) -> BasinFractions:
    """Fractions of uniform initialisations on the spheres that each minimum attracts.

    A run is *at* a minimum when its overlaps are within `tol` of it (or of a symmetric
    image) and, with `grad_tol`, its Riemannian gradient is below `grad_tol` too: the
    distance alone cannot tell a run at a minimum from one passing by. Every other run
    is "not converged" after its steps, and :attr:`BasinFractions.distance` says how far
    it is from the nearest minimum.

    Parameters
    ----------
    params : Params
        ``d >= 4``.
    n : int
        Runs, ``1 <= n <= 1e6``, initialised exactly in law as uniform ``k, v`` on
        ``S^{d-1}`` (:func:`slr_theory.sample_initial_overlaps`).
    rng : numpy.random.Generator or int or None
    dynamics : {"pgd", "flow"}
        PGD at step `alpha` for `steps` steps (exact, on the overlaps), or the gradient
        flow up to `t_max` (:func:`slr_theory.flows.overlap_flow`, one run at a time).
    alpha, steps : optional
        For ``"pgd"`` (both required).
    t_max : float, optional
        For ``"flow"`` (required).
    tol : float
        Distance within which a run is at a minimum.
    points : CriticalPoints, optional
        The critical points to classify against (default: :func:`critical_points` at the
        final temperature).
    schedule : callable ``step -> lam``, optional
        A temperature schedule for ``"pgd"`` (e.g. :func:`slr_theory.paper_schedule`);
        the runs are then classified against the critical points at the last temperature.
    grad_tol : float, optional
        Largest Riemannian gradient norm of a run at a minimum (default: no test).
    max_steps : int, optional
        ``"pgd"`` without a schedule: runs not yet at a minimum after `steps` go on, `steps`
        at a time, until they are, until they stop moving (:attr:`BasinFractions.stalled`)
        or until `max_steps` (a multiple of `steps`).
    trace_every : int, optional
        ``"pgd"`` without a schedule: record every run's distance to M every
        `trace_every` steps (a divisor of `steps`).

    Returns
    -------
    BasinFractions

    Examples
    --------
    >>> from slr_theory import Params, critical_points
    >>> from slr_theory.landscape import basin_fractions
    >>> p = Params.paper(lam=0.1)
    >>> pts = critical_points(p)  # the minima to classify against, found once
    >>> b = basin_fractions(p, 16, alpha=4e-3, steps=2000, points=pts)
    >>> len(b.attractors), bool(abs(b.fractions.sum() + b.none_fraction - 1) < 1e-12)
    (2, True)
    >>> b = basin_fractions(p, 8, alpha=4e-3, steps=20_000, tol=1e-3, grad_tol=1e-3,
    ...                     max_steps=200_000, points=pts)
    >>> float(b.none_fraction), bool(b.gradient.max() < 1e-3)
    (0.0, True)
    """
    from .dynamics import pgd, sample_initial_overlaps

    params = check_params(params)
    n = positive_int(n, "n", upper=10**6)
    rng = random_generator(rng)
    tol = positive_real(tol, "tol")
    if grad_tol is not None:
        grad_tol = positive_real(grad_tol, "grad_tol")
    if dynamics not in ("pgd", "flow"):
        raise ValueError(f"`dynamics` must be 'pgd' or 'flow', got {dynamics!r}.")
    if (max_steps is not None or trace_every is not None) and (
        dynamics != "pgd" or schedule is not None
    ):
        raise ValueError(
            "`max_steps` and `trace_every` need dynamics='pgd' without a schedule, got "
            f"dynamics={dynamics!r} and schedule={schedule!r}."
        )
    ov0 = sample_initial_overlaps(params.d, rng, n)
    final_params = params
    trace_step = trace_distance = None
    if dynamics == "pgd":
        if alpha is None or steps is None:
            raise ValueError("dynamics='pgd' needs `alpha` and `steps`.")
        steps = positive_int(steps, "steps")
        alpha = positive_real(alpha, "alpha")
        if schedule is None:
            if points is None:
                points = critical_points(params, rng=0)
            attractors = [q for q in points if q.index == 0]
            final, steps_run, stalled, trace_step, trace_distance = _run_to_minima(
                params, ov0, alpha, steps, max_steps, trace_every, attractors, tol, grad_tol
            )
        else:
            res = pgd(params, ov0, alpha, steps, schedule=schedule, record_every=steps)
            final = res.overlaps[-1]
            final_params = params.replace(lam=float(res.lam[-1]))
            steps_run = np.full(n, steps)
            stalled = np.zeros(n, dtype=bool)
    else:
        if t_max is None:
            raise ValueError("dynamics='flow' needs `t_max`.")
        from .flows import overlap_flow

        t_max = positive_real(t_max, "t_max")
        final = np.array(
            [overlap_flow(params, o, t_max, dense_output=False).overlaps[-1] for o in ov0]
        )
        # the integration keeps the Gram matrix feasible to its tolerance (rtol 1e-10), not
        # to rounding: the end points are the nearest feasible ones within that
        final = np.stack(check_overlaps(*final.T, d=params.d, atol=FLOW_FEASIBILITY), axis=1)
        steps_run = stalled = None
    if points is None:
        points = critical_points(final_params, rng=0)
    attractors = [q for q in points if q.index == 0]
    coords = params.model.state_overlaps(params)
    nearest, distance = _nearest_attractor(final, attractors, coords)
    gradient = _gradient_norm(final_params, final)
    at = distance < tol
    if grad_tol is not None:
        at &= gradient < grad_tol
    label = np.where(at, nearest, -1)
    counts = np.array([(label == j).sum() for j in range(len(attractors))], dtype=float)
    frac = counts / n
    return BasinFractions(
        attractors=attractors,
        fractions=frac,
        stderr=np.sqrt(frac * (1 - frac) / n),
        none_fraction=float((label < 0).mean()),
        unreached=final[label < 0],
        final=final,
        label=label,
        nearest=nearest,
        distance=distance,
        dynamics=dynamics,
        n=n,
        gradient=gradient,
        steps_run=steps_run,
        stalled=None if stalled is None else stalled & (label < 0),
        trace_step=trace_step,
        trace_distance=trace_distance,
    )


def _gradient_norm(params: Params, overlaps: np.ndarray) -> np.ndarray:
    """Norm of the Riemannian gradient at overlaps ``(n, 5)``."""
    from .geometry import gradient_norms
    from .risk import risk_grad

    g = gradient_norms(overlaps, risk_grad(params, *overlaps.T))
    return np.hypot(g[:, 0], g[:, 1])


def _run_to_minima(params, ov0, alpha, steps, max_steps, trace_every, attractors, tol, grad_tol):
    """PGD `steps` at a time on the runs not yet at a minimum (see :func:`basin_fractions`)."""
    from .dynamics import pgd

    n = ov0.shape[0]
    max_steps = steps if max_steps is None else positive_int(max_steps, "max_steps")
    if max_steps % steps:
        raise ValueError(f"`max_steps` must be a multiple of `steps` ({steps}), got {max_steps}.")
    every = steps if trace_every is None else positive_int(trace_every, "trace_every")
    if steps % every:
        raise ValueError(f"`trace_every` must divide `steps` ({steps}), got {every}.")
    coords = params.model.state_overlaps(params)  # where a run is read (once, not per round)
    current = np.array(ov0, dtype=np.float64)
    steps_run = np.zeros(n, dtype=np.int64)
    stalled = np.zeros(n, dtype=bool)
    active = np.arange(n)
    trace_steps = [np.zeros(1, dtype=np.int64)]
    traces = [np.sqrt(np.sum(current[None, :, 2:] ** 2, axis=-1))]
    done_steps = 0
    while active.size and done_steps < max_steps:
        res = pgd(params, current[active], alpha, steps, record_every=every)
        end = res.overlaps[-1]
        moved = np.max(np.abs(end - current[active]), axis=-1)
        current[active] = end
        done_steps += steps
        steps_run[active] = done_steps
        block = np.full((res.step.size - 1, n), np.nan)
        block[:, active] = np.sqrt(np.sum(res.overlaps[1:, :, 2:] ** 2, axis=-1))
        trace_steps.append(res.step[1:] + done_steps - steps)
        traces.append(block)
        _, distance = _nearest_attractor(end, attractors, coords)
        arrived = distance < tol
        if grad_tol is not None:
            arrived &= _gradient_norm(params, end) < grad_tol
        still = moved <= 1e-12 * np.maximum(1.0, np.max(np.abs(end), axis=-1))
        stalled[active] = still & ~arrived
        active = active[~arrived & ~still]
    if trace_every is None:
        return current, steps_run, stalled, None, None
    return current, steps_run, stalled, np.concatenate(trace_steps), np.concatenate(traces)


# --- escape from saddles ----------------------------------------------------------------------


def saddle_escape(
    params: Params,
    point: CriticalPoint,
    r0: np.ndarray | float,
    *,
    radius: float = 1e-2,
) -> OptimizeResult:
    """Time for the gradient flow to leave a neighbourhood of a saddle, against ``log(radius/r0)/mu``.

    The run starts at distance ``r0`` from the saddle along its most unstable tangent
    direction (the eigenvector of the Riemannian Hessian with the most negative
    eigenvalue ``-mu``), on explicit coordinates in ``R^4``, and is integrated with
    ``solve_ivp`` (Radau, ``rtol = 1e-10``) until its geodesic distance to the saddle
    reaches `radius`.

    Parameters
    ----------
    params : Params
    point : CriticalPoint
        A saddle (index >= 1).
    r0 : float or array_like
        Initial distances, ``MIN_OFFSET <= r0 < radius`` (below 1e-10 the integrator's
        absolute tolerance, 1e-13, swamps the displacement).
    radius : float
        Radius of the neighbourhood, ``0 < radius <= 1`` (radian).

    Returns
    -------
    OptimizeResult
        ``mu``, ``r0``, ``measured`` and ``predicted`` escape times.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, critical_points
    >>> from slr_theory.landscape import saddle_escape
    >>> origin = critical_points(Params.paper(lam=0.1), "manifold")[1]
    >>> e = saddle_escape(Params.paper(lam=0.1), origin, [1e-6, 1e-8])
    >>> bool(np.allclose(e.measured, e.predicted, rtol=0.05))
    True
    """
    from scipy.integrate import solve_ivp

    from .geometry import riemannian_gradient, vector_derivatives

    params = check_params(params)
    if not isinstance(point, CriticalPoint):
        raise TypeError(
            f"`point` must be a CriticalPoint (from critical_points), got {type(point).__name__}."
        )
    if point.index < 1:
        raise ValueError(f"`point` must be a saddle (index >= 1), got a {point.kind}.")
    radius = positive_real(radius, "radius", upper=1.0)
    r0 = np.atleast_1d(as_array(r0, "r0"))
    if r0.ndim != 1 or r0.size == 0 or np.any(~(r0 >= MIN_OFFSET) | ~(r0 < radius)):
        raise ValueError(
            f"`r0` must be distances in [{MIN_OFFSET:g}, radius={radius!r}), got {r0.tolist()!r}."
        )
    tables = (  # evaluated at every stage of the integration: prepared
        engine.table(params, params.lam, 1).prepared(),
        engine.table(params, params.lam, 2).prepared(),
    )
    k0, v0 = point.vectors
    _ov, _g, _G, Hr, _ab, _m = vector_derivatives(tables, k0[None], v0[None])
    w, U = np.linalg.eigh(Hr[0])
    i = int(np.argmin(w))
    mu, u = -float(w[i]), U[:, i]

    def distance(y):
        k, v = y[:4] / np.linalg.norm(y[:4]), y[4:] / np.linalg.norm(y[4:])
        return np.hypot(np.arccos(np.clip(k @ k0, -1, 1)), np.arccos(np.clip(v @ v0, -1, 1)))

    def field(_t, y):  # the gradient alone: the Hessian only where Radau asks for it
        k, v = y[None, :4] / np.linalg.norm(y[:4]), y[None, 4:] / np.linalg.norm(y[4:])
        g = tables[0](to_overlaps(np.concatenate([k.T, v.T]))).T
        return -riemannian_gradient(k, v, g)[0][0]

    def jacobian(_t, y):  # Radau's Newton iterations need it only approximately
        k, v = y[:4] / np.linalg.norm(y[:4]), y[4:] / np.linalg.norm(y[4:])
        return -vector_derivatives(tables, k[None], v[None])[3][0]

    def leave(_t, y):
        return distance(y) - radius

    leave.terminal = True
    leave.direction = 1
    measured = []
    for r in r0:
        k = np.cos(r * np.linalg.norm(u[:4])) * k0 + np.sin(r * np.linalg.norm(u[:4])) * (
            u[:4] / max(np.linalg.norm(u[:4]), 1e-300)
        )
        v = np.cos(r * np.linalg.norm(u[4:])) * v0 + np.sin(r * np.linalg.norm(u[4:])) * (
            u[4:] / max(np.linalg.norm(u[4:]), 1e-300)
        )
        t_end = 50 * np.log(radius / r) / mu
        sol = solve_ivp(
            field,
            (0, t_end),
            np.concatenate([k, v]),
            method="Radau",
            rtol=1e-10,
            atol=1e-13,
            events=leave,
            jac=jacobian,
        )
        measured.append(float(sol.t_events[0][0]) if sol.t_events[0].size else np.nan)
    return OptimizeResult(
        mu=mu,
        r0=r0,
        radius=radius,
        measured=np.array(measured),
        predicted=np.log(radius / r0) / mu,
    )


def convergence_time(
    params: Params, offsets, *, radius: float = 1e-2, t_max: float = 1e5
) -> OptimizeResult:
    """Flow time on M from near its interior saddle to the minimum, against the offset.

    A run starts at distance ``s`` (in the angle chart) from the separatrix (the stable
    manifold of :func:`slr_theory.manifold.manifold_saddle`, the origin for an odd
    ``sigma``), along the unstable direction there, and is integrated on M
    (:func:`slr_theory.flows.manifold_flow`) until it enters the `radius`-disc around the
    minimum it heads to. The linearisation predicts ``T(s) = log(1/s) / mu + C``: the rate
    the center-stable manifold theorem does not give.

    Parameters
    ----------
    params : Params
    offsets : array_like
        Distances ``s`` from the separatrix: at least two distinct, ``MIN_OFFSET <= s < 0.5``.
    radius : float
        The run ends when within this distance of a minimum, ``0 < radius <= 1``.
    t_max : float
        Longest flow time per run; a run that does not arrive raises ``ValueError``.

    Returns
    -------
    OptimizeResult
        ``offsets``, ``time``, ``mu`` (the unstable rate at the saddle) and ``slope``, the
        fitted ``dT / d log(1/s)`` (compare with ``1 / mu``).

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import convergence_time
    >>> r = convergence_time(Params.paper(lam=0.1), [1e-3, 1e-5, 1e-7])
    >>> bool(abs(r.slope * r.mu - 1) < 0.02)
    True
    """
    from .flows import manifold_flow
    from .geometry import manifold_chart_jacobian

    params = check_params(params)
    s = np.atleast_1d(as_array(offsets, "offsets"))
    if s.ndim != 1 or np.unique(s).size < 2 or np.any(~(s >= MIN_OFFSET) | ~(s < 0.5)):
        raise ValueError(
            f"`offsets` must be at least two distinct values in [{MIN_OFFSET:g}, 0.5) "
            f"(a slope needs two), got {s.tolist()!r}."
        )
    radius = positive_real(radius, "radius", upper=1.0)
    t_max = positive_real(t_max, "t_max")
    centre = np.arccos(_interior_saddle(params, "convergence time from it"))
    J = manifold_chart_jacobian(params, *centre)
    w, U = np.linalg.eigh(J)
    mu = float(w.max())
    u = U[:, int(np.argmax(w))]
    times = []
    for off in s:
        start = np.cos(centre + off * u)  # along the unstable direction, in the angle chart
        res = manifold_flow(
            params,
            float(start[0]),
            float(start[1]),
            t_max,
            stop_radius=radius,
            dense_output=False,
        )
        if res.t_event is None:
            raise ValueError(
                f"`t_max` = {t_max!r} is too short: the run from offset {float(off)!r} did "
                f"not come within `radius` = {radius!r} of a minimum; pass a larger t_max."
            )
        times.append(res.t_event)
    times = np.array(times, dtype=float)
    slope = float(np.polyfit(np.log(1 / s), times, 1)[0])
    return OptimizeResult(offsets=s, time=times, mu=mu, slope=slope)


# --- continuation in lambda -----------------------------------------------------------------


@dataclass
class Branch:
    """One critical point followed in ``lambda``.

    Attributes
    ----------
    lam : ndarray, shape (m,)
        Increasing temperatures (a contiguous part of the grid).
    overlaps : ndarray, shape (m, 5)
    risk : ndarray, shape (m,)
    index : ndarray of int, shape (m,)
    kind : list of str
    start, end : str
        Why the branch stops at its smallest and largest ``lambda``: ``"range"`` (the end
        of the range), ``"meets"`` (it runs into a more symmetric branch, a pitchfork),
        ``"fold"`` (``lambda`` turns back along it) or ``"lost"`` (it could be followed
        neither in ``lambda`` nor in arc length).
    seed : float
        The ``lambda`` at which the search found the point the branch was followed from.
    vectors : ndarray, shape (m, 2, 4), optional
        The representative ``(k, v)`` in ``R^4`` at each temperature.
    """

    lam: np.ndarray
    overlaps: np.ndarray
    risk: np.ndarray
    index: np.ndarray
    kind: list
    start: str
    end: str
    seed: float
    vectors: np.ndarray | None = None


@dataclass
class Continuation:
    """Branches of critical points over a range of ``lambda``, and the events between them.

    Attributes
    ----------
    branches : list of Branch
    events : list of dict
        ``{"lam", "branch", "type", "bracket", ...}`` with type ``"index change"``,
        ``"meets"``, ``"fold"`` or ``"lost"``; ``"bracket"`` is the interval that holds
        the event and ``"lam"`` its middle.

        - An index change is located by bisection on the index (along the branch in arc
          length where the grid points are far apart) to ``LOCATE_TOL`` (1e-7); the
          index is ``"from"`` at the bracket's left end and ``"to"`` at its right end.
        - ``"meets"``: where ``lambda`` turns back along a branch because it runs into its
          own mirror image through a more symmetric point, a pitchfork off the branch
          through that point (``"at"``, its overlaps; ``"other"``, that branch's index in
          ``branches`` or None). ``"lam"`` is extrapolated to the meeting (Richardson in
          the flipped coordinate, in which ``lambda`` is even); the bracket is its error,
          about 1e-11. The symmetric branch's index change is the same event, located
          independently.
        - ``"fold"``: ``lambda`` turns back without a symmetry; ``"lam"`` is the extremum
          of ``lambda`` along the branch (Brent), the bracket its error.
        - ``"lost"``: the branch could be followed no further; the bracket is from the
          last ``lambda`` reached to the next temperature of the grid.

        Meetings, folds and losses have ``"side"``: whether the branch ends as
        ``lambda`` decreases (``"start"``) or increases (``"end"``). A ``"meets"`` without
        ``"side"`` is two branches found at the same point at a temperature of the grid.
        Every located event is within ``FOLD_TOL`` (1e-6) of the truth.
    not_followed : list of dict
        ``{"lam", "count"}``: degenerate critical points found at a seed temperature
        (zero modes beyond the symmetry orbits: a continuum of critical points, not
        isolated branches), which are not followed.
    """

    branches: list[Branch]
    events: list
    not_followed: list = field(default_factory=list)

    def optimum_branch(self) -> Branch | None:
        """The branch of ``(k*, v*)`` (the longest, if it was followed in pieces), or None.

        Returns
        -------
        Branch or None
        """
        at = [
            br
            for br in self.branches
            if np.allclose(br.overlaps, [1.0, 1.0, 0.0, 0.0, 0.0], atol=1e-9)
        ]
        return max(at, key=lambda br: br.lam.size) if at else None

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.bifurcation_figure` of these branches.

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``quantity``, ``names``, ``dpi``, ``ax`` of
            :func:`~slr_theory.plotting.bifurcation_figure`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from .plotting.branches import bifurcation_figure

        return bifurcation_figure(self, path, **options)


#: Width in ``lambda`` to which :func:`continuation` locates an index change.
LOCATE_TOL = 1e-7


def _locate_index_changes(params: Params, branch: Branch, t: int) -> list:
    """The index changes of `branch` between ``lam[t]`` and ``lam[t + 1]``, each bisected
    to ``LOCATE_TOL``: a list of ``(from, to, (lo, hi))``.

    Between two points of the branch farther apart than an arc-length step, the branch
    is walked in arc length first (:func:`_arc_through`) and every pair of consecutive
    points with different indices is bisected. The bisection corrects the midpoint of
    the chord onto the branch in the hyperplane normal to the chord (Newton inside the
    branch's symmetry subspace, :func:`_frozen_rows`, so an eigenvalue crossing zero
    outside it does not stall it), and classifies it. It stops early, with the interval
    it has, where the point cannot be corrected or its index is neither end's (the
    crossing eigenvalue is within its error of zero there).
    """
    lo, hi = float(branch.lam[t]), float(branch.lam[t + 1])
    a = np.concatenate([branch.vectors[t].ravel(), [lo]])
    b = np.concatenate([branch.vectors[t + 1].ravel(), [hi]])
    path, index = [a, b], [int(branch.index[t]), int(branch.index[t + 1])]
    if np.linalg.norm(b - a) > _MAX_ARC_STEP:
        walk: list = []
        _arc_through(params, a[:4], a[4:8], lo, None, hi, hi, walk)
        walk = [y for y in walk if (y[8] - lo) * (hi - y[8]) > 0]
        path = [a, *walk, b]
        inner = [classify(params.replace(lam=float(y[8])), y[:4], y[4:8]).index for y in walk]
        index = [index[0], *inner, index[1]]
    out = []
    for j in range(len(path) - 1):
        if index[j] != index[j + 1]:
            out.append(
                (
                    index[j],
                    index[j + 1],
                    _bisect_index(params, path[j], path[j + 1], index[j], index[j + 1]),
                )
            )
    return out


def _bisect_index(params: Params, a: np.ndarray, b: np.ndarray, i_a: int, i_b: int):
    """Bisect the chord from ``a`` (index `i_a`) to ``b`` (index `i_b`) of a branch."""
    while abs(b[8] - a[8]) > LOCATE_TOL:
        mid = 0.5 * (a + b)
        chord = (b - a) / np.linalg.norm(b - a)
        y = _arc_correct(params, mid, chord)
        if y is None or np.linalg.norm(y - mid) > np.linalg.norm(b - a):
            break
        index = classify(params.replace(lam=float(y[8])), y[:4], y[4:8]).index
        if index == i_a:
            a = y
        elif index == i_b:
            b = y
        else:
            break
    return tuple(sorted((float(a[8]), float(b[8]))))


#: Initial damping of the continuation's Newton corrector (:func:`slr_theory.critical.polish`):
#: from a prediction on the branch, nearly pure Newton steps converge fastest.
CORRECTOR_DAMPING = 1e-4


def _corrector(params: Params, k, v, prev, lam_try: float, h: float):
    """The point of the branch at `lam_try`, from ``(k, v)`` at ``lam_try - h`` (or None).

    A secant predictor in ``lambda`` (from `prev`) first, then the last point; the damped
    Newton corrector must stay on the branch (move no more than the predictor expects).
    """
    p_try = params.replace(lam=float(lam_try))
    guesses = [(k, v, 0.0)]
    if prev is not None:
        dk, dv = (k - prev[0]) / prev[2], (v - prev[1]) / prev[2]
        kp, vp = k + h * dk, v + h * dv
        expected = abs(h) * np.hypot(np.linalg.norm(dk), np.linalg.norm(dv))
        guesses.insert(0, (kp / np.linalg.norm(kp), vp / np.linalg.norm(vp), expected))
    for kp, vp, expected in guesses:
        got = polish(p_try, kp, vp, damping=CORRECTOR_DAMPING)
        if got is None:
            continue
        moved = np.hypot(np.linalg.norm(got[0] - k), np.linalg.norm(got[1] - v))
        if moved <= 0.02 + 1.5 * expected:  # stayed on this branch
            return got
    return None


#: Width in ``lambda`` within which :func:`continuation` must place a fold or a meeting: it
#: places them at the extremum of ``lambda`` along the branch, followed in arc length, and
#: the bracket it reports is the error of that extremum (about ``1e-12`` in practice).
FOLD_TOL = 1e-6

#: Most pseudo-arclength steps :func:`continuation` takes through one stretch where the
#: corrector in ``lambda`` fails, and the largest arc-length step in ``(k, v, lambda)``.
_MAX_ARC_STEPS = 400
_MAX_ARC_STEP = 0.05
#: Most halvings of a failed step of the corrector in ``lambda`` before the branch is
#: followed in arc length instead (which is robust where the halvings are not).
_MAX_HALVINGS = 4
#: Most stretches one branch is followed through in arc length before it is given up.
_MAX_ARCS = 200


def _arc_system(params: Params, y: np.ndarray):
    """The Riemannian gradient ``G`` (8,) at ``y = (k, v, lambda)`` and its Jacobian (8, 9).

    The ``(k, v)`` block is the Riemannian Hessian; the ``lambda`` column a forward
    difference (it steers Newton, the residual ``G`` is exact).
    """
    from .geometry import vector_derivatives

    def at(lam):
        tables = (engine.table(params, lam, 1), engine.table(params, lam, 2))
        _o, _g, G, Hr, _ab, _m = vector_derivatives(tables, y[None, :4], y[None, 4:8])
        return G[0], Hr[0]

    G, Hr = at(y[8])
    h = 1e-7 * y[8]
    dG = (at(y[8] + h)[0] - G) / h  # forward: its O(h) error only slows Newton down
    return G, np.concatenate([Hr, dG[:, None]], axis=1)


def _frozen_rows(y: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Directions in ``(k, v, lambda)`` the branch through ``y`` cannot move in.

    A symmetry that fixes ``y`` fixes its branch: in ``span{k*, v*}`` (``r = 2``) the
    branch stays there (the components along ``e3, e4`` are frozen); with components
    outside along one direction ``w`` of the plane ``(e3, e4)`` (``r = 3``) it stays in
    ``span{k*, v*, w}``. For ``r = 4`` the rotations of that plane move the point along
    its orbit, a zero mode: the orbit's direction is frozen (the gauge). Likewise the
    overlaps that a sign change of ``SYMMETRIES`` fixing ``y`` flips stay zero. Branches
    that break such a symmetry leave at a pitchfork and are found by the search, not here.
    """

    perp = np.array([[y[2], y[3]], [y[6], y[7]]])
    u, sv, wt = np.linalg.svd(perp)
    rows = []
    ov = to_overlaps(y[:8, None])[:, 0]
    for i in _fixing(ov, 1e-9, group):  # a sign change of overlaps fixing y fixes its branch
        rows += [_overlap_coordinate(int(c))(y)[1] for c in np.flatnonzero(group[i] < 0)]
    if sv[0] <= 1e-10:
        for i in (2, 3, 6, 7):
            rows.append(np.eye(9)[i])
    else:
        w_perp = wt[1] if sv[1] <= 1e-10 * sv[0] else None
        if w_perp is not None:
            for off in (0, 4):
                r = np.zeros(9)
                r[off + 2 : off + 4] = w_perp
                rows.append(r)
        else:
            o = np.concatenate([[0.0, 0.0, -y[3], y[2]], [0.0, 0.0, -y[7], y[6]], [0.0]])
            rows.append(o / np.linalg.norm(o))
    return np.array(rows)


def _arc_rows(y: np.ndarray, J: np.ndarray, frozen: np.ndarray) -> np.ndarray:
    """``J`` with the constraints of the spheres (``k.dk = v.dv = 0``) and `frozen`."""
    sphere = np.zeros((2, 9))
    sphere[0, :4], sphere[1, 4:8] = y[:4], y[4:8]
    return np.concatenate([J, sphere, frozen])


def _arc_tangent(params: Params, y: np.ndarray, orient: np.ndarray) -> np.ndarray:
    """The unit tangent of the branch at ``y`` in ``(k, v, lambda)``, along `orient`."""
    _G, J = _arc_system(params, y)
    t = np.linalg.svd(_arc_rows(y, J, _frozen_rows(y, symmetries(params))))[2][-1]
    return t if t @ orient >= 0 else -t


def _arc_correct(params: Params, pred: np.ndarray, row: np.ndarray, value: float = 0.0):
    """Newton from `pred` onto the branch where ``row . (y - pred) = value`` (or, for a
    `row` that is a function, where ``row(y) = value``); None if it does not converge to
    a critical point or leaves the neighbourhood of `pred`."""
    y = pred.copy()
    frozen = _frozen_rows(pred, symmetries(params))
    reach = 0.0
    last = np.inf
    for _ in range(12):
        G, J = _arc_system(params, y)
        scale = 1.0 + float(np.abs(J[:, :8]).max())
        if last < 1e-12:  # Newton has converged: is it at a critical point?
            return y if float(np.abs(G).max()) <= 1e-10 * scale else None
        A = _arc_rows(y, J, frozen)
        b = np.zeros(A.shape[0])
        b[:8] = -G
        if callable(row):
            r, dr = row(y)
            A, b = np.concatenate([A, dr[None]]), np.concatenate([b, [value - r]])
        else:
            A, b = np.concatenate([A, row[None]]), np.concatenate([b, [value - row @ (y - pred)]])
        step = np.linalg.lstsq(A, b, rcond=None)[0]
        y = y + step
        y[:4] /= np.linalg.norm(y[:4])
        y[4:8] /= np.linalg.norm(y[4:8])
        reach = max(reach, float(np.linalg.norm(y - pred)))
        if not np.isfinite(y).all() or y[8] <= 0 or reach > 0.5:
            return None
        last = float(np.linalg.norm(step))
    return None


def _arc_vertex(params: Params, y: np.ndarray, t: np.ndarray, lo: float, hi: float, sign: float):
    """The extremum of ``lambda`` along the branch between ``y + lo t`` and ``y + hi t``.

    Brent's method on ``lambda`` along the arc (each point corrected onto the branch in
    the hyperplane normal to `t` through ``y + s t``), to ``1e-9 (hi - lo)``; `sign` is
    ``+1`` for a maximum. Returns the point there, its ``lambda`` and the error of that
    ``lambda``: the curvature of ``lambda`` there times the square of Brent's tolerance,
    plus the rounding of ``lambda`` (``64 eps``). None where the extremum is not well
    inside the interval (within ``1e-4`` of its width from an edge: the search has no
    extremum to find there) or a point cannot be corrected.
    """
    from scipy.optimize import minimize_scalar

    width = hi - lo

    def point(s):
        q = _arc_correct(params, y + s * t, t)
        return q if q is not None and np.linalg.norm(q - (y + s * t)) <= width else None

    def cost(s):
        q = point(s)
        return np.inf if q is None else -sign * q[8]

    tol = 1e-9 * width
    res = minimize_scalar(cost, bounds=(lo, hi), method="bounded", options={"xatol": tol})
    s = float(res.x)
    inside = min(s - lo, hi - s)
    if inside <= 1e-4 * width:
        return None
    e = 0.05 * inside
    pts = [point(s - e), point(s), point(s + e)]
    if any(q is None for q in pts):
        return None
    lam = np.array([q[8] for q in pts])
    rounding = 64 * np.finfo(float).eps * lam[1]
    if sign * (max(sign * lam[0], sign * lam[2]) * sign - lam[1]) > rounding:
        return None  # a neighbour beyond it: not the extremum
    curvature = abs(lam[0] - 2 * lam[1] + lam[2]) / (e * e)
    return pts[1], float(lam[1]), float(rounding + curvature * tol * tol)


def _overlap_coordinate(c: int):
    """Overlap `c` of ``y = (k, v, lambda)`` and its gradient, as a function of ``y``
    (``k* = e1``, ``v* = e2``)."""

    def overlap(y):
        k, v = y[:4], y[4:8]
        grad = np.zeros(9)
        if c == 4:
            grad[:4], grad[4:8] = v, k
            return float(k @ v), grad
        i = {0: 0, 1: 5, 2: 4, 3: 1}[c]
        grad[i] = 1.0
        return float(y[i]), grad

    return overlap


def _perp_coordinate(c: int, w: np.ndarray):
    """The component of ``k`` (``c = 0``) or ``v`` (``c = 1``) along the unit direction
    `w` of the plane ``(e3, e4)``, and its gradient, as a function of ``y``."""
    grad = np.zeros(9)
    grad[4 * c + 2 : 4 * c + 4] = w

    def perp(y):
        return float(grad @ y), grad

    return perp


def _mirror(y: np.ndarray, q: np.ndarray, group: np.ndarray):
    """Whether ``q`` is across a mirror from ``y``: the coordinates a symmetry flips all
    change sign between them. Returns ``(coordinate, flipped overlaps)`` for the
    coordinate that changes most (:func:`_overlap_coordinate`, :func:`_perp_coordinate`),
    or None.

    The symmetries are the sign changes of the overlaps (``SYMMETRIES``) and the
    reflections of the plane ``(e3, e4)``, which leave the overlaps alone: across the
    line of the larger perpendicular direction (a branch meeting one with ``r`` one
    less) or through the origin (meeting one in ``span{k*, v*}``).
    """

    ov_y, ov_q = to_overlaps(np.stack([y[:8], q[:8]], axis=1)).T
    for g in group[1:]:
        flipped = g < 0
        big = flipped & (np.maximum(np.abs(ov_y), np.abs(ov_q)) > 1e-9)
        if big.any() and np.all(ov_y[big] * ov_q[big] < 0):
            c = int(np.argmax(np.where(flipped, np.abs(ov_y - ov_q), -1.0)))
            return _overlap_coordinate(c), flipped
    perp_y = np.array([[y[2], y[3]], [y[6], y[7]]])
    perp_q = np.array([[q[2], q[3]], [q[6], q[7]]])
    w = np.linalg.svd(perp_y)[2]  # rows: the larger direction, then the smaller
    for axes in ([1], [0, 1]):
        a_y, a_q = (perp_y @ w[axes].T).ravel(), (perp_q @ w[axes].T).ravel()
        big = np.maximum(np.abs(a_y), np.abs(a_q)) > 1e-9
        if big.any() and np.all(a_y[big] * a_q[big] < 0):
            j = int(np.argmax(np.where(big, np.abs(a_y - a_q), -1.0)))
            return _perp_coordinate(j // len(axes), w[axes[j % len(axes)]]), None
    return None


def _arc_meeting(params: Params, y: np.ndarray, q: np.ndarray, row, flipped):
    """Where the branch from ``y`` to its mirror image ``q`` crosses the fixed points of
    the mirror: a pitchfork off the more symmetric branch through them.

    The branch is a graph over the flipped coordinate `row` (:func:`_mirror`), and
    ``lambda`` and the overlaps are even in it (bar the `flipped` overlaps, which vanish
    there): ``lambda(e) = lambda_p + c_2 e^2 + c_4 e^4 + ...``, extrapolated (Richardson,
    two levels) from ``e, e/2, e/4``. ``e`` is at most 0.01: not smaller, since fixing
    the flipped coordinate does not pin the point along the symmetric branch at the
    meeting (the system is singular there, its condition ``~ 1/e``). Returns
    ``lambda_p``, its error (the change between the last two levels of extrapolation)
    and the overlaps at the meeting; None on failure.
    """

    r_y, r_q = row(y)[0], row(q)[0]
    e = min(abs(r_y), 0.01)
    pts = []
    pred = y + (r_y - np.sign(r_y) * e) / (r_y - r_q) * (q - y)  # linear in the coordinate
    for m in (1.0, 0.5, 0.25):
        got = _arc_correct(params, pred, row, np.sign(r_y) * m * e)
        if got is None:
            return None
        pts.append(got)
        pred = got
    lam = np.array([p[8] for p in pts])
    ov = to_overlaps(np.stack([p[:8] for p in pts], axis=1)).T

    def extrapolate(f):
        r1 = (4 * f[1] - f[0]) / 3, (4 * f[2] - f[1]) / 3
        return (16 * r1[1] - r1[0]) / 15, r1[1]

    lam_p, lam_1 = extrapolate(lam)
    err = max(abs(lam_p - lam_1), 64 * np.finfo(float).eps * lam_p)
    at = extrapolate(ov)[0]
    if flipped is not None:
        at[flipped] = 0.0
    return float(lam_p), float(err), at


def _arc_through(
    params: Params, k, v, lam: float, prev, goal: float, edge: float, path: list | None = None
):
    """Follow the branch from ``(k, v)`` at `lam` in arc length where the corrector in
    ``lambda`` fails.

    The direction is the one in which ``lambda`` moves towards `goal`. Returns
    ``("passed", y)`` once ``lambda`` is past `goal` or `edge` (the end of the grid);
    where ``lambda`` turns back, ``("fold", y, lam, err, at)`` (the extremum of ``lambda``
    along the branch) or ``("meets", y, lam, err, at)`` (the branch runs into its mirror
    image through a point a symmetry fixes: a pitchfork off the branch through ``at``);
    or ``("lost", y)``. ``y`` is the last point before the end, ``at`` the overlaps there.
    Every point reached is appended to `path`, if given.
    """

    sign = 1.0 if goal > lam else -1.0
    y = np.concatenate([k, v, [lam]])
    orient = np.zeros(9)
    orient[8] = sign
    if prev is not None:  # the secant of the last step says which way the branch runs
        orient = y - np.concatenate([prev[0], prev[1], [lam - prev[2]]])
    t = _arc_tangent(params, y, orient)
    ds = min(_MAX_ARC_STEP, max(1e-4, abs(goal - lam) / max(abs(t[8]), 1e-12)))
    for _ in range(_MAX_ARC_STEPS):
        q = _arc_correct(params, y + ds * t, t)
        if q is None or np.linalg.norm(q - y) > 2 * ds:
            ds /= 2
            if ds < 1e-8:
                return ("lost", y)
            continue
        tq = _arc_tangent(params, q, t)
        if sign * tq[8] < 0:  # lambda turns back between y and q
            mirror = _mirror(y, q, symmetries(params))
            if mirror is not None:
                got = _arc_meeting(params, y, q, *mirror)
                return ("lost", y) if got is None else ("meets", y, *got)
            reach = float(np.linalg.norm(q - y))  # the extremum is between y and q
            got = _arc_vertex(params, y, t, -0.5 * reach, 1.5 * reach, sign)
            if got is None:
                return ("lost", y)
            top, lam_v, err = got
            return ("fold", y, lam_v, err, to_overlaps(top[:8, None])[:, 0])
        y, t = q, tq
        if path is not None:
            path.append(y)
        if sign * (y[8] - goal) >= 0 or sign * (y[8] - edge) >= 0:
            return ("passed", y)
        ds = min(1.5 * ds, _MAX_ARC_STEP)
    return ("lost", y)


def _isotropy(k: np.ndarray, v: np.ndarray, group: np.ndarray, tol: float = 1e-6) -> tuple:
    """The symmetry type of ``(k, v)``: ``dim span{k, v, k*, v*}`` and the overlap sign
    changes (rows of ``SYMMETRIES``) that fix its overlaps, within `tol`."""

    ov = to_overlaps(np.concatenate([k, v])[:, None])[:, 0]
    sv = np.linalg.svd(np.array([[k[2], k[3]], [v[2], v[3]]]), compute_uv=False)
    return 2 + int(np.sum(sv > tol)), _fixing(ov, tol, group)


def _fixing(ov: np.ndarray, tol: float, group: np.ndarray) -> frozenset:
    """The rows of ``SYMMETRIES`` (the identity included) whose sign changes fix ``ov``:
    the overlaps they flip are zero within `tol`."""
    return frozenset(i for i, g in enumerate(group) if np.all(np.abs(ov[g < 0]) <= tol))


def _more_symmetric(now: tuple, before: tuple) -> bool:
    """Whether the isotropy `now` (:func:`_isotropy`) is strictly larger than `before`."""
    return now[0] < before[0] or (now[1] > before[1])


def _follow(params: Params, k, v, grid: np.ndarray, min_step: float):
    """Follow one critical point along `grid` (either direction).

    Where the corrector in ``lambda`` fails at the smallest step, the branch is followed
    in arc length (:func:`_arc_through`): past the hard stretch (the corrector resumes
    there), or to where ``lambda`` turns back, a fold or a meeting with another branch,
    located at the extremum of ``lambda`` along the branch.

    Returns the records at the grid temperatures reached (plus, where the branch ends
    inside the grid, its last point before the end), those temperatures, how it ended
    (``"range"``, ``"fold"``, ``"meets"`` or ``"lost"``), and for an end inside the grid
    ``(bracket, at)``: the interval of ``lambda`` that holds the end and the overlaps of
    the point where it is (None for ``"lost"``).
    """
    records = [classify(params.replace(lam=float(grid[0])), k, v)]
    lams = [float(grid[0])]
    prev = None
    lam_now = grid[0]
    arcs = 0
    for target in grid[1:]:
        ok = False
        while not ok:
            h = target - lam_now
            halvings = 0
            while abs(h) >= min_step * abs(lam_now) and halvings <= _MAX_HALVINGS:
                # the whole step lands on the grid point itself, not on a rounding of it
                lam_try = target if h == target - lam_now else lam_now + h
                res = _corrector(params, k, v, prev, lam_try, h)
                group = symmetries(params)
                if res is not None and _more_symmetric(
                    _isotropy(*res, group), _isotropy(k, v, group)
                ):
                    # the step landed on a more symmetric branch: a pitchfork in between?
                    out = _arc_through(
                        params, k, v, float(lam_now), prev, float(lam_try), float(grid[-1])
                    )
                    if out[0] == "meets":
                        return _end(params, records, lams, out)
                if res is not None:
                    prev = (k, v, h)
                    k, v = res
                    lam_now = lam_try
                    break
                h /= 2
                halvings += 1
            else:  # the corrector failed at the smallest step: follow the arc length
                arcs += 1
                goal = float(target)
                out = (
                    _arc_through(params, k, v, float(lam_now), prev, goal, float(grid[-1]))
                    if arcs <= _MAX_ARCS
                    else ("lost", None)
                )
                if out[0] == "passed":  # the branch goes on: the corrector resumes from there
                    y = out[1]
                    k, v, lam_now, prev = y[:4], y[4:8], float(y[8]), None
                    ok = np.isclose(lam_now, target, rtol=1e-12)
                    continue
                if out[0] == "lost":
                    out = ("lost", np.concatenate([k, v, [lam_now]]), *sorted((lam_now, goal)))
                return _end(params, records, lams, out)
            ok = np.isclose(lam_now, target, rtol=1e-12)
        records.append(classify(params.replace(lam=float(target)), k, v))
        lams.append(float(target))
    return records, lams, "range", None


def _end(params: Params, records: list, lams: list, out: tuple):
    """:func:`_follow`'s return where the branch ends inside the grid (`out` from
    :func:`_arc_through`; for ``"lost"``, ``("lost", y, lo, hi)``)."""
    y = out[1]
    k, v, lam_now = y[:4], y[4:8], float(y[8])
    if out[0] == "lost":
        end = ((float(out[2]), float(out[3])), None)
    else:
        end = ((out[2] - out[3], out[2] + out[3]), out[4])
    if not np.isclose(lam_now, lams[-1], rtol=1e-12):
        records.append(classify(params.replace(lam=lam_now), k, v))
        lams.append(lam_now)
    return records, lams, out[0], end


def continuation(
    params: Params,
    lam_range: tuple[float, float],
    *,
    steps: int = 60,
    seeds: int = 3,
    points: CriticalPoints | None = None,
    min_step: float = 1e-4,
) -> Continuation:
    """Follow every critical point of the full space as ``lambda`` varies over `lam_range`.

    The search (:func:`critical_points`) runs at `seeds` temperatures spread over the
    range; each point it finds that no branch covers yet is followed both ways on a
    logarithmic grid of `steps` temperatures: a secant predictor on the explicit
    coordinates, a damped Riemannian Newton corrector that must stay on the branch, and
    step halving (at most four times, and not below a relative step `min_step`). Where
    that fails, the branch is followed in arc length (pseudo-arclength: Newton on the
    gradient and a hyperplane normal to the branch's tangent, inside the branch's
    symmetry subspace) until the corrector in ``lambda`` can take over again, or to
    where ``lambda`` turns back: a meeting with a more symmetric branch (a pitchfork) or
    a fold. A step of the corrector in ``lambda`` that lands on a more symmetric branch
    is retraced in arc length, so that a branch never continues on another through a
    pitchfork. Index changes, meetings and folds are recorded as events. Degenerate
    points (a continuum of critical points, as at very small ``gamma``, where the search
    returns hundreds of representatives) are counted in ``not_followed`` instead: a
    continuum has no branch to follow.

    Parameters
    ----------
    params : Params
    lam_range : (float, float)
        The range of ``lambda`` (either order).
    steps : int
        Intervals of the grid.
    seeds : int
        Temperatures at which new branches are looked for (at least the two ends),
        ``1 <= seeds <= 100``.
    points : CriticalPoints, optional
        The points at the smallest ``lambda`` (default: the search there).
    min_step : float

    Returns
    -------
    Continuation

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import continuation
    >>> c = continuation(Params.paper(), (0.1, 0.2), steps=4, seeds=2)
    >>> len(c.branches) >= 10
    True
    """
    params = check_params(params)
    lo, hi = temperature_range(lam_range)
    steps = positive_int(steps, "steps", upper=10**5)
    seeds = max(2, positive_int(seeds, "seeds", upper=100))
    grid = np.geomspace(lo, hi, steps + 1)
    seed_at = sorted({round(float(x)) for x in np.linspace(0, steps, seeds)})
    group = symmetries(params)  # the model's: softmax's weights are not odd
    branches: list[Branch] = []
    events: list[dict] = []
    not_followed: list[dict] = []
    for si in seed_at:
        lam_s = float(grid[si])
        found = (
            points
            if (si == 0 and points is not None)
            else critical_points(params.replace(lam=lam_s), rng=0)
        )
        isolated = [q for q in found if q.nullity <= q.orbit_dimension]
        if len(isolated) < len(found):
            not_followed.append({"lam": lam_s, "count": len(found) - len(isolated)})
        for q in isolated:
            covered = any(
                b.lam[0] <= lam_s <= b.lam[-1]
                and same_point(
                    b.overlaps[int(np.argmin(np.abs(b.lam - lam_s)))], q.overlaps, group=group
                )
                for b in branches
            )
            if covered:
                continue
            k, v = q.vectors
            fwd, lam_f, end, end_bracket = _follow(params, k, v, grid[si:], min_step)
            bwd, lam_r, start, start_bracket = _follow(params, k, v, grid[si::-1], min_step)
            recs = bwd[::-1] + fwd[1:]
            lam_b = np.array(lam_r[::-1] + lam_f[1:])
            b = len(branches)
            branches.append(
                Branch(
                    lam=lam_b,
                    overlaps=np.array([r.overlaps for r in recs]),
                    risk=np.array([r.risk for r in recs]),
                    index=np.array([r.index for r in recs]),
                    kind=[r.kind for r in recs],
                    start=start,
                    end=end,
                    seed=lam_s,
                    vectors=np.array([r.vectors for r in recs]),
                )
            )
            for side, kind, got in (("start", start, start_bracket), ("end", end, end_bracket)):
                if got is None:
                    continue
                bracket, at = got
                ev = {
                    "lam": 0.5 * (bracket[0] + bracket[1]),
                    "branch": b,
                    "type": kind,
                    "side": side,
                    "bracket": bracket,
                }
                if at is not None:
                    ev["at"] = np.asarray(at, dtype=float)
                events.append(ev)
            idx = branches[-1].index
            for t in np.flatnonzero(np.diff(idx) != 0):
                for i_from, i_to, bracket in _locate_index_changes(params, branches[-1], int(t)):
                    events.append(
                        {
                            "lam": 0.5 * (bracket[0] + bracket[1]),
                            "branch": b,
                            "type": "index change",
                            "from": i_from,
                            "to": i_to,
                            "bracket": bracket,
                        }
                    )
    # branches that meet: the same point (up to symmetry) at the same lambda
    for i in range(len(branches)):
        for j in range(i + 1, len(branches)):
            bi, bj = branches[i], branches[j]
            common = np.intersect1d(bi.lam, bj.lam)
            for lam_c in common:
                oi = bi.overlaps[int(np.argmin(np.abs(bi.lam - lam_c)))]
                oj = bj.overlaps[int(np.argmin(np.abs(bj.lam - lam_c)))]
                if same_point(oi, oj, group=group):
                    events.append({"lam": float(lam_c), "branch": i, "type": "meets", "other": j})
                    break
    # a branch that meets another where lambda turns back: which branch holds that point
    for e in events:
        if e["type"] == "meets" and "at" in e:
            e["other"] = next(
                (
                    j
                    for j, bj in enumerate(branches)
                    if j != e["branch"]
                    and bj.lam[0] - 1e-9 <= e["lam"] <= bj.lam[-1] + 1e-9
                    and same_point(
                        bj.overlaps[int(np.argmin(np.abs(bj.lam - e["lam"])))],
                        e["at"],
                        1e-2,
                        group,
                    )
                ),
                None,
            )
    events.sort(key=lambda e: e["lam"])
    return Continuation(branches, events, not_followed)


# --- the data of the figures on M -------------------------------------------------------------


@dataclass
class StabilityMap:
    """The leading transverse eigenvalue of the flow on M over the open square.

    Attributes
    ----------
    params : Params
    kappa, nu : ndarray, shape ``(m,)``
        The grid (interior points of ``(-1, 1)``).
    lead : ndarray, shape ``(m, m)``
        Real part of the leading transverse eigenvalue (:func:`manifold_stability`) at
        ``(kappa[j], nu[i])``: M attracts where it is negative.
    """

    params: Params
    kappa: np.ndarray
    nu: np.ndarray
    lead: np.ndarray

    @property
    def attracting_share(self) -> float:
        """Share of the grid where M attracts transversally."""
        return float((self.lead < 0).mean())


def stability_map(params: Params, grid: int = 121) -> StabilityMap:
    """:func:`manifold_stability` over a ``grid x grid`` interior grid of the square.

    Parameters
    ----------
    params : Params
    grid : int
        Points per side, ``1 <= grid <= 2000``.

    Returns
    -------
    StabilityMap

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import stability_map
    >>> m = stability_map(Params.paper(lam=0.1), grid=21)
    >>> m.lead.shape, bool(0 < m.attracting_share < 1)
    ((21, 21), True)
    """
    params = check_params(params)
    grid = positive_int(grid, "grid", upper=2000)
    t = np.linspace(-1, 1, grid + 2)[1:-1]
    K, N = np.meshgrid(t, t)
    lead = manifold_stability(params, K, N)[..., 0].real
    return StabilityMap(params, t, t.copy(), lead)


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
    separatrix : ndarray, shape ``(m, 2)``
        The stable manifold of M's interior saddle (:func:`separatrix`); empty
        (``m = 0``) where M has none (softmax attention).
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
    separatrix: np.ndarray
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
            ``dpi``, ``ax`` of :func:`~slr_theory.plotting.phase_portrait`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from .plotting.manifold import draw_portrait

        return draw_portrait(self, path, **options)


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
    from .dynamics import pgd
    from .flows import manifold_field, manifold_flow
    from .risk import manifold_risk

    params = check_params(params)
    grid = positive_int(grid, "grid", upper=1000)
    if grid < 2:
        raise ValueError(f"`grid` must be >= 2, got {grid}.")
    basin_grid = positive_int(basin_grid, "basin_grid", upper=1000, allow_zero=True)
    refine = positive_int(refine, "refine", upper=16)
    trajectories = positive_int(trajectories, "trajectories", upper=1000, allow_zero=True)
    pgd_steps = positive_int(pgd_steps, "pgd_steps", upper=MAX_PORTRAIT_STEPS)
    t_max = positive_real(t_max, "t_max")
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
        pgd_alpha = positive_real(pgd_alpha, "pgd_alpha")
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
        pgd_alpha=pgd_alpha,
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


# --- one basin ensemble, saved -------------------------------------------------------------

#: A run is at a minimum when within this distance of it (up to symmetry) ...
AT_DISTANCE = 1e-3
#: ... and its Riemannian gradient norm is below this.
AT_GRADIENT = 1e-3


@dataclass
class Basins:
    """One ensemble of PGD runs from uniform initialisations, and where each run ended.

    Attributes
    ----------
    n, alpha, steps, max_steps : int, float, int, int
        Runs; the step; steps per round; the most steps a run may take.
    minima : ndarray, shape (m, 5)
        The minima (one per orbit) the runs are classified against.
    names : list of str
    fractions, stderr : ndarray, shape (m,)
        Share of runs at each minimum and its binomial standard error.
    label : ndarray of int, shape (n,)
        The minimum each run is at (:data:`AT_DISTANCE`, :data:`AT_GRADIENT`), -1 for
        none.
    nearest, distance, gradient : ndarray, shape (n,)
        The nearest minimum of every run, its distance to it, its gradient norm.
    steps_run : ndarray of int, shape (n,)
    stalled : ndarray of bool, shape (n,)
        Not at a minimum and no longer moving (a cycle or fixed point of the PGD map).
    final : ndarray, shape (n, 5)
    trace_step : ndarray of int, shape (r,)
    trace_distance : ndarray, shape (r, n)
        Distance to M at the recorded steps (NaN once a run has stopped).
    fates : Fates or None
        The same starts followed to their end (:func:`slr_theory.fate`, balls of radius
        :data:`AT_DISTANCE`, at most `max_steps` exact steps a run): where every run ends
        and how many steps it takes, at any budget (:meth:`Fates.within`).
    """

    n: int
    alpha: float
    steps: int
    max_steps: int
    minima: np.ndarray
    names: list[str]
    fractions: np.ndarray
    stderr: np.ndarray
    label: np.ndarray
    nearest: np.ndarray
    distance: np.ndarray
    gradient: np.ndarray
    steps_run: np.ndarray
    stalled: np.ndarray
    final: np.ndarray
    trace_step: np.ndarray
    trace_distance: np.ndarray
    fates: Fates | None = None

    @property
    def unconverged(self) -> int:
        """Runs at no minimum after `max_steps` steps."""
        return int((self.label < 0).sum())

    def _repr_html_(self) -> str:
        """What a notebook shows: each minimum with its share after the budget and, where
        the fates were followed, to the end."""
        rows = []
        for j, name in enumerate(self.names):
            row = [name, f"{self.fractions[j]:.3f} ± {self.stderr[j]:.3f}"]
            rows.append(row)
        rows.append([f"none after {self.max_steps} steps", f"{self.unconverged / self.n:.3f}"])
        out = html_table(
            ["minimum", "share ± s.e."],
            rows,
            caption=f"{self.n} PGD runs at α = {self.alpha:g}, {self.max_steps} steps at most",
        )
        return out + (self.fates._repr_html_() if self.fates is not None else "")

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.off_manifold_figure` of these runs (the distance to
        M over time, grouped by end state).

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``dpi``, ``ax`` of :func:`~slr_theory.plotting.off_manifold_figure`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from .plotting.ensembles import draw_off_manifold

        return draw_off_manifold(self, path, **options)


#: Most PGD steps :func:`portrait_data` draws (a typo must not start hours of work).
MAX_PORTRAIT_STEPS = 10**7


def _largest_divisor_at_most(n: int, cap: int) -> int:
    """The largest divisor of `n` not above `cap` (trial division to sqrt(n), vectorised:
    n <= MAX_STEPS = 1e12 costs 1e6 remainders; counting down from `cap` could take
    `cap` of them)."""
    low = np.arange(1, math.isqrt(n) + 1, dtype=np.int64)
    low = low[n % low == 0]
    divisors = np.concatenate([low, n // low])
    return int(divisors[divisors <= cap].max())


def basins(
    params: Params,
    n: int,
    *,
    alpha: float,
    steps: int = 20_000,
    max_steps: int = 200_000,
    records: int = 100,
    rng=0,
    points=None,
) -> Basins:
    """One ensemble of PGD runs from uniform starts, run until each is at a minimum or stalls.

    Runs go on `steps` at a time until at a minimum (within :data:`AT_DISTANCE`, gradient
    below :data:`AT_GRADIENT`), stalled, or at `max_steps`
    (:func:`slr_theory.landscape.basin_fractions`).

    Parameters
    ----------
    params : Params
    n : int
    alpha : float
    steps, max_steps : int
        Steps per round, ``1 <= steps <= 1e12``, and the most a run may take (a multiple
        of `steps`).
    records : int
        Distance-to-M records per round of `steps` (the largest divisor of `steps` not
        above ``steps // records`` is the spacing).
    rng : int or numpy.random.Generator
    points : CriticalPoints, optional

    Returns
    -------
    Basins
    """

    from .dynamics import sample_initial_overlaps

    params = check_params(params)
    n = positive_int(n, "n", upper=10**6)
    steps = positive_int(steps, "steps", upper=MAX_STEPS)
    max_steps = positive_int(max_steps, "max_steps", upper=MAX_STEPS)
    alpha = positive_real(alpha, "alpha")
    records = positive_int(records, "records")
    every = _largest_divisor_at_most(steps, max(1, steps // records))
    gen = random_generator(rng)
    starts = sample_initial_overlaps(params.d, copy.deepcopy(gen), n)  # what basin_fractions draws
    if points is None:
        points = critical_points(params, rng=0)
    b = basin_fractions(
        params,
        n,
        rng=gen,
        alpha=alpha,
        steps=steps,
        tol=AT_DISTANCE,
        grad_tol=AT_GRADIENT,
        max_steps=max_steps,
        trace_every=every,
        points=points,
    )
    minima = np.array([q.overlaps for q in b.attractors]).reshape(-1, 5)
    return Basins(
        n=n,
        alpha=alpha,
        steps=steps,
        max_steps=max_steps,
        minima=minima,
        names=[describe(m) for m in minima],
        fractions=b.fractions,
        stderr=b.stderr,
        label=b.label,
        nearest=b.nearest,
        distance=b.distance,
        gradient=b.gradient,
        steps_run=b.steps_run,
        stalled=b.stalled,
        final=b.final,
        trace_step=b.trace_step,
        trace_distance=b.trace_distance,
        fates=fate(
            params, starts, alpha=alpha, tol=AT_DISTANCE, points=points, max_exact_steps=max_steps
        ),
    )
