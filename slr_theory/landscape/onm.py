"""Basins on M: where the flow on M takes each start, and the separatrix between them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import engine
from ..critical import critical_points, manifold_critical_overlaps, manifold_kind
from ..manifold import manifold_saddle
from ..params import Params, check_params
from ..validate import positive_int, positive_real
from .stability import angle_velocity, rk4_steps

__all__ = ["ManifoldBasins", "manifold_basins", "separatrix"]


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
        from ..dynamics import pgd

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
        n_steps, dt = rk4_steps(t_max, 0.05 if dt is None else dt)
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
            k1 = angle_velocity(table, phi, psi)
            k2 = angle_velocity(table, phi + 0.5 * dt * k1[0], psi + 0.5 * dt * k1[1])
            k3 = angle_velocity(table, phi + 0.5 * dt * k2[0], psi + 0.5 * dt * k2[1])
            k4 = angle_velocity(table, phi + dt * k3[0], psi + dt * k3[1])
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
    from ..geometry import manifold_chart_jacobian

    params = check_params(params)
    saddle = interior_saddle(params, "separatrix")
    centre = np.arccos(saddle)
    delta = positive_real(delta, "delta", upper=0.5)
    steps, dt = rk4_steps(t_max, dt)
    J = manifold_chart_jacobian(params, *centre)
    w, U = np.linalg.eigh(J)  # symmetric: the flow in the angles is a gradient flow
    stable = U[:, int(np.argmin(w))]
    table = engine.table(params, params.lam, 1).prepared()  # at every RK4 stage

    def f(z):  # the backward flow's unit tangent (arc length); zero where the flow stops
        v = -angle_velocity(table, np.array([z[0]]), np.array([z[1]]))[:, 0]
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


def interior_saddle(params: Params, what: str) -> np.ndarray:
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
