"""Leaving a saddle and reaching a minimum: the escape direction and the time the flow takes."""

from __future__ import annotations

import numpy as np
from scipy.optimize import OptimizeResult

from .. import engine
from ..critical import CriticalPoint
from ..params import Params, check_params
from ..trajectory import to_overlaps
from ..validate import as_array, positive_real
from .onm import interior_saddle
from .stability import MIN_OFFSET

__all__ = ["convergence_time", "saddle_escape"]


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

    from ..geometry import riemannian_gradient, vector_derivatives

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
    from ..flows import manifold_flow
    from ..geometry import manifold_chart_jacobian

    params = check_params(params)
    s = np.atleast_1d(as_array(offsets, "offsets"))
    if s.ndim != 1 or np.unique(s).size < 2 or np.any(~(s >= MIN_OFFSET) | ~(s < 0.5)):
        raise ValueError(
            f"`offsets` must be at least two distinct values in [{MIN_OFFSET:g}, 0.5) "
            f"(a slope needs two), got {s.tolist()!r}."
        )
    radius = positive_real(radius, "radius", upper=1.0)
    t_max = positive_real(t_max, "t_max")
    centre = np.arccos(interior_saddle(params, "convergence time from it"))
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
