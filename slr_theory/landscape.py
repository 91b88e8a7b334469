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
  (secant predictor, damped Riemannian Newton corrector, step halving), with the events
  where a branch changes index, folds or meets another branch.
"""

from __future__ import annotations

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
    polish,
    same_point,
)
from .geometry import velocity_partials
from .params import Params, check_overlaps, check_params, temperature_range
from .validate import as_array, positive_int, positive_real, random_generator

#: Most RK4 steps of :func:`separatrix` and :func:`manifold_basins` (flow).
MAX_RK4_STEPS = 10**7
#: Smallest initial displacement from a saddle :func:`saddle_escape` accepts.
MIN_OFFSET = 1e-10

__all__ = [
    "AT_DISTANCE",
    "AT_GRADIENT",
    "CORRECTOR_DAMPING",
    "FOLD_TOL",
    "LOCATE_TOL",
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
    "manifold_basins",
    "manifold_kind",
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
    c_k = table.column(0, (0, 0, 0, 0), 0, "exD")
    c_n = table.column(1, (0, 0, 0, 0), 0, "erf")
    gr = engine.manifold_gradient(ov[:2], table.constants, c_k, c_n)
    return np.stack([np.sin(phi) * gr[0], np.sin(psi) * gr[1]])


def _m_critical() -> np.ndarray:
    return np.array([[0.0, 0.0], [1, 1], [-1, -1], [1, -1], [-1, 1]])


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
    targets = _m_critical()
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
        table = engine.table(params, params.lam, 1)
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
    """The stable manifold of the saddle at the origin of M, as a curve in ``(kappa, nu)``.

    Traced backward along the flow (classical RK4 in the angle chart) from ``origin +-
    delta`` along the stable eigenvector of the chart's Jacobian, until it leaves the
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
        Points ``(kappa, nu)`` ordered along the curve, through the origin.

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
    delta = positive_real(delta, "delta", upper=0.5)
    steps, dt = _rk4_steps(t_max, dt)
    J = manifold_chart_jacobian(params, np.pi / 2, np.pi / 2)
    w, U = np.linalg.eigh(J)  # symmetric: the flow in the angles is a gradient flow
    stable = U[:, int(np.argmin(w))]
    table = engine.table(params, params.lam, 1)

    def f(z):  # the backward flow's unit tangent (arc length); zero where the flow stops
        v = -_angle_velocity(table, np.array([z[0]]), np.array([z[1]]))[:, 0]
        n = np.hypot(v[0], v[1])
        return v / n if n > 0 else v

    halves = []
    for sign in (1.0, -1.0):
        y = np.array([np.pi / 2, np.pi / 2]) + sign * delta * stable
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
    return np.concatenate([halves[1][::-1], np.zeros((1, 2)), halves[0]])


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


def _nearest_attractor(final: np.ndarray, attractors: list):
    """Nearest attractor (up to symmetry) of each end point, and the distance to it."""
    from .critical import SYMMETRIES

    nearest = np.full(final.shape[0], -1)
    best = np.full(final.shape[0], np.inf)
    for j, q in enumerate(attractors):
        images = SYMMETRIES * q.overlaps
        dist = np.min(np.linalg.norm(final[:, None, :] - images[None], axis=-1), axis=1)
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
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import basin_fractions
    >>> b = basin_fractions(Params.paper(lam=0.1), 16, alpha=4e-3, steps=2000)
    >>> len(b.attractors), bool(abs(b.fractions.sum() + b.none_fraction - 1) < 1e-12)
    (2, True)
    >>> b = basin_fractions(Params.paper(lam=0.1), 8, alpha=4e-3, steps=20_000, tol=1e-3,
    ...                     grad_tol=1e-3, max_steps=200_000)
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
        steps_run = stalled = None
    if points is None:
        points = critical_points(final_params, rng=0)
    attractors = [q for q in points if q.index == 0]
    nearest, distance = _nearest_attractor(final, attractors)
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
        _, distance = _nearest_attractor(end, attractors)
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

    from .geometry import vector_derivatives

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
    tables = (engine.table(params, params.lam, 1), engine.table(params, params.lam, 2))
    k0, v0 = point.vectors
    _ov, _g, _G, Hr, _ab, _m = vector_derivatives(tables, k0[None], v0[None])
    w, U = np.linalg.eigh(Hr[0])
    i = int(np.argmin(w))
    mu, u = -float(w[i]), U[:, i]

    def distance(y):
        k, v = y[:4] / np.linalg.norm(y[:4]), y[4:] / np.linalg.norm(y[4:])
        return np.hypot(np.arccos(np.clip(k @ k0, -1, 1)), np.arccos(np.clip(v @ v0, -1, 1)))

    def field(_t, y):
        k, v = y[:4] / np.linalg.norm(y[:4]), y[4:] / np.linalg.norm(y[4:])
        _o, _gg, G, _h, _a, _mm = vector_derivatives(tables, k[None], v[None])
        return -G[0]

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
    """Flow time on M from near the saddle at the origin to the minimum, against the offset.

    A run starts at distance ``s`` from the separatrix (the origin's stable manifold),
    along the unstable direction at the origin, and is integrated on M
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
        ``offsets``, ``time``, ``mu`` (the unstable rate at the origin) and ``slope``, the
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
    J = manifold_chart_jacobian(params, np.pi / 2, np.pi / 2)
    w, U = np.linalg.eigh(J)
    mu = float(w.max())
    u = U[:, int(np.argmax(w))]
    du = -u  # d kappa = -sin(phi) d phi = -d phi at the origin
    times = []
    for off in s:
        res = manifold_flow(
            params,
            float(off * du[0]),
            float(off * du[1]),
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
        of the range) or ``"fold"`` (the corrector failed at the smallest step: a fold,
        or a meeting with another branch).
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
        ``{"lam", "branch", "type", ...}`` with type ``"index change"``, ``"fold"`` or
        ``"meets"`` (two branches arriving at the same point). An index change is
        located by bisection on the index between the grid temperatures that bracket it:
        its ``"lam"`` lies within ``LOCATE_TOL`` (1e-7) of the change, and ``"bracket"``
        gives the final interval (the index is ``"from"`` at its left end, ``"to"`` at
        its right end). A fold is approached by bisection on the corrector's success (to
        ``FOLD_TOL``, 1e-6), then located at the vertex of the parabola ``lambda(s)``
        through the points reached (``s`` along the branch): ``"bracket"`` is centred
        there, its half-width the larger of the vertex's change when only the nearer half
        of the points is fitted and its distance from the last point reached (or, where
        no vertex lies ahead, the bracket is the last
        ``lambda`` reached and the first that could not be). ``"side"`` says whether the
        branch ends as ``lambda`` decreases (``"start"``) or increases (``"end"``).
    not_followed : list of dict
        ``{"lam", "count"}``: degenerate critical points found at a seed temperature
        (zero modes beyond the symmetry orbits: a continuum of critical points, not
        isolated branches), which are not followed.
    """

    branches: list[Branch]
    events: list
    not_followed: list = field(default_factory=list)


#: Width in ``lambda`` to which :func:`continuation` locates an index change.
LOCATE_TOL = 1e-7


def _locate_index_change(params: Params, branch: Branch, t: int) -> tuple[float, float]:
    """Bisect ``[lam[t], lam[t + 1]]`` of `branch` on the index, to ``LOCATE_TOL``.

    Each midpoint is corrected onto the branch (damped Newton from the left end's point,
    which must not jump away) and classified. The bisection stops early, with the
    interval it has, where the point cannot be followed or its index is neither end's
    (the crossing eigenvalue is within its error of zero there).
    """
    lo, hi = float(branch.lam[t]), float(branch.lam[t + 1])
    i_lo, i_hi = int(branch.index[t]), int(branch.index[t + 1])
    kv_lo = branch.vectors[t]
    while hi - lo > LOCATE_TOL:
        mid = 0.5 * (lo + hi)
        p_mid = params.replace(lam=mid)
        got = polish(p_mid, kv_lo[0], kv_lo[1])
        if got is None or np.linalg.norm(np.array(got) - kv_lo) > 0.05:
            break
        index = classify(p_mid, *got).index
        if index == i_lo:
            lo, kv_lo = mid, np.array(got)
        elif index == i_hi:
            hi = mid
        else:
            break
    return lo, hi


#: Initial damping of the continuation's Newton corrector (:func:`slr_theory.critical.polish`):
#: from a prediction on the branch, nearly pure Newton steps converge fastest.
CORRECTOR_DAMPING = 1e-4

#: Width in ``lambda`` to which :func:`continuation` bisects towards a fold (the fold itself
#: is then placed by the vertex of the branch, to about 1e-4: see :class:`Continuation`).
FOLD_TOL = 1e-6


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


def _smallest_eigenvalues(params: Params, k, v, lam: float, m: int = 4) -> np.ndarray:
    """The `m` Hessian eigenvalues of least magnitude at ``(k, v)`` (distinct, by
    magnitude; symmetry zero modes left out), padded with ``inf``."""
    q = classify(params.replace(lam=float(lam)), k, v)
    h = np.asarray(q.hessian_eigenvalues, dtype=float)
    err = np.asarray(q.eigenvalue_errors, dtype=float)
    live = np.sort(np.abs(h[np.abs(h) > err]))[:m]
    return np.concatenate([live, np.full(m - live.size, np.inf)])


def _fold_bracket(params: Params, trail: list, hi: float) -> tuple[float, float]:
    """Where the branch ends: the vertex of ``lambda`` along the branch.

    Near a fold the branch is a parabola ``lam = lam_f - c s^2`` in a coordinate ``s``
    along it. `trail` holds the points ``(lam, k, v)`` the bisection towards the end
    reached; ``s`` is their position along their principal direction in ``R^8``, and the
    vertex of the least-squares quadratic ``lam(s)`` through all of them is the estimate.
    The half-width is the larger of the vertex's change when only the nearer half is
    fitted and its distance from the last point reached (an extrapolation is not known
    closer than its reach), at least ``FOLD_TOL / 2``. Where that fails (too few points, no vertex ahead: branches
    meeting rather than a fold), the interval is from the last ``lambda`` reached to the
    first, `hi`, that was not.
    """
    lo = trail[-1][0]
    reach = (min(lo, hi), max(lo, hi))
    if len(trail) < 5:
        return reach
    sign = 1.0 if hi > lo else -1.0
    lam = np.array([t[0] for t in trail])
    X = np.array([np.concatenate([t[1], t[2]]) for t in trail])
    X = X - X[-1]
    direction = np.linalg.svd(X, full_matrices=False)[2][0]
    s_coord = X @ direction

    def vertex(n):
        c2, c1, c0 = np.polyfit(s_coord[-n:], lam[-n:], 2)
        if c2 == 0 or sign * c2 >= 0:  # lam must turn back at the end
            return None
        return c0 - c1 * c1 / (4 * c2)

    est, check = vertex(len(trail)), vertex(max(4, (len(trail) + 1) // 2 + 1))
    if est is None or check is None or sign * (est - lo) < 0 or abs(est - lo) > 1e-3 * abs(lo):
        return reach
    # the vertex lies beyond the last point reached: no closer than that distance is known
    half = max(abs(float(est) - float(check)), abs(float(est) - lo), 0.5 * FOLD_TOL)
    return (float(est) - half, float(est) + half)


def _follow(params: Params, k, v, grid: np.ndarray, min_step: float):
    """Follow one critical point along `grid` (either direction).

    Returns the records at the grid temperatures reached (plus, at a fold, the last
    temperature the corrector reached), those temperatures, how it ended, and at a fold
    the interval of ``lambda`` that holds it (the branch is followed to its left end and
    cannot be to its right end), bisected to :data:`FOLD_TOL`.
    """
    records = [classify(params.replace(lam=float(grid[0])), k, v)]
    lams = [float(grid[0])]
    prev = None
    lam_now = grid[0]
    for target in grid[1:]:
        ok = False
        while not ok:
            h = target - lam_now
            while abs(h) >= min_step * abs(lam_now):
                # the whole step lands on the grid point itself, not on a rounding of it
                lam_try = target if h == target - lam_now else lam_now + h
                res = _corrector(params, k, v, prev, lam_try, h)
                if res is not None:
                    prev = (k, v, h)
                    k, v = res
                    lam_now = lam_try
                    break
                h /= 2
            else:  # the corrector failed at the smallest step: bisect to the fold
                lo, hi = float(lam_now), float(lam_now + 2 * h)  # the last step that failed
                if (hi - target) * (target - lo) > 0:  # never past the grid (rounding)
                    hi = float(target)
                trail = [(lo, k, v)]  # points of the branch, ever closer to its end
                while abs(hi - lo) > FOLD_TOL:
                    mid = 0.5 * (lo + hi)
                    res = _corrector(params, k, v, prev, mid, mid - lo)
                    if res is None:
                        hi = mid
                        continue
                    prev = (k, v, mid - lo)
                    k, v = res
                    lo = lam_now = mid
                    trail.append((lo, k, v))
                if not np.isclose(lam_now, grid[0] if len(records) == 1 else lams[-1], rtol=1e-12):
                    records.append(classify(params.replace(lam=float(lam_now)), k, v))
                    lams.append(float(lam_now))
                return records, lams, "fold", _fold_bracket(params, trail, hi)
            ok = np.isclose(lam_now, target, rtol=1e-12)
        records.append(classify(params.replace(lam=float(target)), k, v))
        lams.append(float(target))
    return records, lams, "range", None


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
    coordinates, a damped Riemannian Newton corrector that must stay on the branch,
    and step halving down to a relative step `min_step`. A branch that cannot continue
    ends in a ``"fold"`` (a fold, or branches meeting). Index changes and meetings are
    recorded as events. Degenerate points (a continuum of critical points, as at very
    small ``gamma``, where the search returns hundreds of representatives) are counted
    in ``not_followed`` instead: a continuum has no branch to follow.

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
                and same_point(b.overlaps[int(np.argmin(np.abs(b.lam - lam_s)))], q.overlaps)
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
            for side, bracket in (("start", start_bracket), ("end", end_bracket)):
                if bracket is not None:
                    events.append(
                        {
                            "lam": 0.5 * (bracket[0] + bracket[1]),
                            "branch": b,
                            "type": "fold",
                            "side": side,
                            "bracket": bracket,
                        }
                    )
            idx = branches[-1].index
            for t in np.flatnonzero(np.diff(idx) != 0):
                bracket = _locate_index_change(params, branches[-1], int(t))
                events.append(
                    {
                        "lam": 0.5 * (bracket[0] + bracket[1]),
                        "branch": b,
                        "type": "index change",
                        "from": int(idx[t]),
                        "to": int(idx[t + 1]),
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
                if same_point(oi, oj):
                    events.append({"lam": float(lam_c), "branch": i, "type": "meets", "other": j})
                    break
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
        Cell edges of the basin map (tiling the closed square).
    basin_label : ndarray of int, shape ``(b, b)``, or None
        :attr:`ManifoldBasins.label` of the flow up to `t_max`.
    t_max : float
        Flow time of the trajectories and the basin map.
    nullcline : ndarray, shape ``(m, 2)``
        The ``kappa``-nullcline ``nu = erf(a kappa / s)``.
    separatrix : ndarray, shape ``(m, 2)``
        The stable manifold of the saddle at the origin (:func:`separatrix`).
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

    @property
    def max_speed(self) -> float:
        """Largest ``|(kappa', nu')|`` on the streamline grid."""
        return float(np.hypot(self.field[..., 0], self.field[..., 1]).max())


def manifold_kind(eigenvalues) -> str:
    """A critical point's kind for the flow on M, from its eigenvalues on M.

    Parameters
    ----------
    eigenvalues : array_like
        :attr:`slr_theory.CriticalPoint.manifold_eigenvalues`.

    Returns
    -------
    str
        ``"minimum"``, ``"maximum"`` or ``"saddle"``.
    """
    e = as_array(eigenvalues, "eigenvalues")
    if e.ndim != 1 or e.size == 0 or not np.all(np.isfinite(e)):
        raise ValueError(
            f"`eigenvalues` must be a non-empty 1-D array of finite numbers, got {eigenvalues!r}."
        )
    if np.all(e > 0):
        return "minimum"
    if np.all(e < 0):
        return "maximum"
    return "saddle"


def portrait_data(
    params: Params,
    *,
    grid: int = 41,
    basin_grid: int = 24,
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
        Basin-map grid per side (0: none), ``<= 1000``.
    trajectories : int
        Flow trajectories from a ring of starts of radius 0.6, ``0 <= trajectories <= 1000``.
    pgd_alpha : float, optional
        Also PGD iterates at this step, from the same starts.
    pgd_steps : int
    t_max : float
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
    from scipy.special import erf

    from .dynamics import pgd
    from .flows import manifold_field, manifold_flow
    from .risk import manifold_risk

    params = check_params(params)
    grid = positive_int(grid, "grid", upper=1000)
    if grid < 2:
        raise ValueError(f"`grid` must be >= 2, got {grid}.")
    basin_grid = positive_int(basin_grid, "basin_grid", upper=1000, allow_zero=True)
    trajectories = positive_int(trajectories, "trajectories", upper=1000, allow_zero=True)
    pgd_steps = positive_int(pgd_steps, "pgd_steps")
    t_max = positive_real(t_max, "t_max")
    tick = progress or (lambda _n: None)
    edges = label = None
    if basin_grid:
        b = manifold_basins(params, grid=basin_grid, t_max=t_max)
        c = b.kappa[0]  # cells tile the closed square: the starts are interior
        edges = np.concatenate([[-1.0], 0.5 * (c[:-1] + c[1:]), [1.0]])
        label = b.label
        tick(1)
    t = np.linspace(-1, 1, grid)
    K, N = np.meshgrid(t, t)
    R = manifold_risk(params, K, N)
    F = manifold_field(params, K, N)
    tick(1)
    a = params.lam * np.sqrt(params.d / 2)
    g = params.lam * params.gamma
    s = np.sqrt((1 + 2 * g * g) * (1 + 4 * g * g))
    kk = np.linspace(-1, 1, 400)
    sep = separatrix(params)
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
        nullcline=np.stack([kk, erf(a * kk / s)], axis=1),
        separatrix=sep,
        flows=flows,
        pgd_alpha=pgd_alpha,
        pgd=iterates,
        points=np.array(where),
        point_kinds=kinds,
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

    @property
    def unconverged(self) -> int:
        """Runs at no minimum."""
        return int((self.label < 0).sum())


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
    records : int
        Distance-to-M records per round of `steps` (a divisor of `steps` is used).
    rng : int or numpy.random.Generator
    points : CriticalPoints, optional

    Returns
    -------
    Basins
    """

    steps = positive_int(steps, "steps")
    records = positive_int(records, "records")
    every = max(1, steps // records)
    while steps % every:
        every -= 1
    b = basin_fractions(
        params,
        n,
        rng=rng,
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
    )
