r"""Gradient flows of the risk on the spheres, integrated to tolerance.

Two continuous-time counterparts of the paper's projected gradient descent, in
gradient-flow time (PGD with step ``alpha`` advances it by ``alpha`` per step):

- :func:`manifold_flow`: on the invariant manifold M,
  ``kappa' = -(1 - kappa^2) dR_M/dkappa``, ``nu' = -(1 - nu^2) dR_M/dnu``. It is
  integrated in the coordinates ``u = artanh(kappa)``, ``w = artanh(nu)``, where
  the field is simply ``(u', w') = -grad R_M``: ``|kappa|, |nu| <= 1`` holds exactly,
  and the corners, reached only as ``t -> infinity``, are at infinity.
- :func:`overlap_flow`: the five-dimensional flow of the overlaps,

  .. math::

      \kappa' &= -(R_\kappa + \theta R_\rho - A\kappa), &
      \nu' &= -(R_\nu + \eta R_\rho - B\nu), \\
      \theta' &= -(R_\theta + \kappa R_\rho - B\theta), &
      \eta' &= -(R_\eta + \nu R_\rho - A\eta), \\
      \rho' &= -(\theta R_\kappa + \nu R_\eta + R_\rho - A\rho)
              - (\kappa R_\theta + \eta R_\nu + R_\rho - B\rho),

  ``A = kappa R_kappa + eta R_eta + rho R_rho``, ``B = theta R_theta + nu R_nu + rho R_rho``.

The velocity and its partials are those of :mod:`slr_theory.geometry`; the
gradient and Hessian of the risk come from :mod:`slr_theory.engine`. Both flows
use :func:`scipy.integrate.solve_ivp` with an analytic Jacobian (the Hessian of
the risk chained through the velocity) and ``rtol=1e-10``
by default. The default method is ``LSODA``: explicit Adams while the problem
is not stiff, implicit BDF with the analytic Jacobian when it detects stiffness.
Stiffness is the rule off M: the off-manifold directions relax on a time scale
``~ 1/(d gamma^2 lambda^2)`` while ``kappa`` moves on ``~ 1/lambda`` (the counts of
field evaluations per method are in ``docs/accuracy.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import engine
from .geometry import overlap_velocity, velocity_partials
from .manifold import manifold_critical_overlaps
from .params import Params, check_overlaps, check_params
from .validate import as_array, finite_real, positive_real

__all__ = [
    "MAX_T_MAX",
    "MIN_RTOL",
    "MIN_T_MAX",
    "FlowResult",
    "manifold_field",
    "manifold_flow",
    "manifold_jacobian",
    "overlap_field",
    "overlap_flow",
    "overlap_jacobian",
]


@dataclass(frozen=True)
class FlowResult:
    """An integrated gradient-flow trajectory.

    Attributes
    ----------
    t : ndarray, shape (n_t,)
        Times; the last is ``t_max`` unless an event stopped the integration.
    overlaps : ndarray, shape (n_t, 5)
        ``(kappa, nu, theta, eta, rho)`` at each time (zeros off M for :func:`manifold_flow`).
    risk : ndarray, shape (n_t,)
    status : int
        ``solve_ivp``'s status: 0 reached ``t_max``, 1 stopped by an event, -1 failed.
    message : str
    success : bool
    nfev, njev : int
        Field and Jacobian evaluations.
    t_event : float or None
        Time the trajectory entered the neighbourhood of a critical point, if it did.
    sol : callable or None
        Dense output: ``sol(t)`` returns the overlaps at ``t`` (shape ``(..., 5)``).
    method : str
        The integrator used.
    """

    t: np.ndarray
    overlaps: np.ndarray
    risk: np.ndarray
    status: int
    message: str
    success: bool
    nfev: int
    njev: int
    t_event: float | None
    sol: Any
    method: str

    kappa = property(lambda self: self.overlaps[:, 0], doc="``k . k*`` at each time.")
    nu = property(lambda self: self.overlaps[:, 1], doc="``v . v*`` at each time.")
    theta = property(lambda self: self.overlaps[:, 2], doc="``v . k*`` at each time.")
    eta = property(lambda self: self.overlaps[:, 3], doc="``k . v*`` at each time.")
    rho = property(lambda self: self.overlaps[:, 4], doc="``k . v`` at each time.")


def manifold_field(params: Params, kappa: ArrayLike, nu: ArrayLike) -> np.ndarray:
    """The flow on M, ``(kappa', nu') = -((1 - kappa^2) dR_M/dkappa, (1 - nu^2) dR_M/dnu)``.

    Returns shape ``(..., 2)``; `kappa` and `nu` broadcast and must lie in ``[-1, 1]``.

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu : array_like
        Overlaps on M, in ``[-1, 1]``, broadcast together.

    Returns
    -------
    ndarray, shape ``(..., 2)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.flows import manifold_field
    >>> f = manifold_field(Params.paper(lam=0.1), [0.0, 1.0, 0.3], [0.0, 1.0, 0.3])
    >>> print(f[:2].tolist(), bool(f[2, 1] > 0))  # critical points; nu grows towards sgn(kappa)
    [[-0.0, -0.0], [0.0, 0.0]] True
    """
    k, n, *_ = check_overlaps(kappa, nu, 0.0, 0.0, 0.0, d=params.d)
    kn = np.stack(np.broadcast_arrays(np.asarray(k, float), np.asarray(n, float)), axis=-1)
    gr = engine.gradient(params, (kn[..., 0], kn[..., 1], 0.0, 0.0, 0.0))[..., :2]
    return -(1.0 - kn) * (1.0 + kn) * gr


def manifold_jacobian(params: Params, kappa: float, nu: float) -> np.ndarray:
    """Jacobian ``d(kappa', nu')/d(kappa, nu)`` of :func:`manifold_field`, shape ``(2, 2)``.

    Its eigenvalues classify the critical points of the flow on M: the origin is
    a saddle. At a corner ``(s1, s2)`` the factors ``1 - kappa^2``, ``1 - nu^2`` vanish
    and the Jacobian is ``diag(2 s1 dR_M/dkappa, 2 s2 dR_M/dnu)``: twice the geodesic
    rates, because the chart ``(kappa, nu)`` is singular there. For rates use the
    angle chart of :func:`slr_theory.geometry.manifold_chart_jacobian`.

    Parameters
    ----------
    params : Params
    kappa, nu : float
        A point of the closed square.

    Returns
    -------
    ndarray, shape ``(2, 2)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.flows import manifold_jacobian
    >>> ev = np.linalg.eigvals(manifold_jacobian(Params.paper(lam=0.1), 0.0, 0.0))
    >>> print(bool(ev.real.min() < 0 < ev.real.max()))  # the origin is a saddle
    True
    """
    k, n = finite_real(kappa, "kappa"), finite_real(nu, "nu")
    k, n, *_ = check_overlaps(k, n, 0.0, 0.0, 0.0, d=params.d)
    k, n = float(k), float(n)
    (r_k, r_n), (r_kk, r_kn) = _manifold_grad_hess(_manifold_tables(params), k, n)
    ok, on = (1 - k) * (1 + k), (1 - n) * (1 + n)
    return np.array(
        [
            [2 * k * r_k - ok * r_kk, -ok * r_kn],
            [-on * r_kn, 2 * n * r_n],
        ]
    )


def _manifold_grad_hess(tables, k: float, n: float):
    """``(R_k, R_n)`` and ``(R_kk, R_kn)`` on M from the engine's tables of orders 1 and 2.

    ``R_nn = 0`` on M; rows 0 and 1 of the order-2 table are ``(0, 0)`` and ``(0, 1)``.
    """
    ov = np.array([[k], [n], [0.0], [0.0], [0.0]])
    g = tables[0](ov)[:, 0]
    h = tables[1](ov)[:2, 0]
    return (g[0], g[1]), (h[0], h[1])


def _manifold_tables(params: Params):
    return (  # evaluated again and again: prepared
        engine.table(params, params.lam, 1).prepared(),
        engine.table(params, params.lam, 2).prepared(),
    )


def _solve(fun, jac, y0, t_max, method, rtol, atol, event, t_eval, dense_output):
    """``solve_ivp`` from 0 to `t_max`; `event` (if any) is terminal on a downward crossing.

    The analytic Jacobian goes to the methods that use one. (SciPy's integrators are
    imported here, where they run: a quarter of a second that importing this module, for
    its bounds, does not pay.)
    """
    from scipy.integrate import solve_ivp

    events = None
    if event is not None:
        event.terminal = True
        event.direction = -1
        events = [event]
    meth = _method(method)
    kw = {"jac": jac} if meth in ("Radau", "BDF", "LSODA") else {}
    sol = solve_ivp(
        fun,
        (0.0, t_max),
        y0,
        method=meth,
        rtol=rtol,
        atol=atol,
        events=events,
        t_eval=t_eval,
        dense_output=dense_output,
        **kw,
    )
    return meth, sol


#: Shortest flow time the integrators accept (below it LSODA's step underflows).
MIN_T_MAX = 1e-100
#: Longest flow time the integrators accept (near 1e307 LSODA's step times the field
#: overflows and the last state is NaN; every flow has settled long before 1e300).
MAX_T_MAX = 1e300
#: Smallest relative tolerance: ``solve_ivp`` raises anything below 100 machine epsilons.
MIN_RTOL = 100 * np.finfo(float).eps

_METHODS = ("LSODA", "Radau", "BDF", "DOP853", "RK45", "RK23")


def _method(method: str) -> str:
    if method not in _METHODS:
        raise ValueError(f"`method` must be one of {', '.join(_METHODS)}, got {method!r}.")
    return method


def _common(params, t_max, rtol, atol, stop_radius, t_eval):
    check_params(params)
    t_max = positive_real(t_max, "t_max")
    if t_max < MIN_T_MAX:
        raise ValueError(
            f"`t_max` must be >= {MIN_T_MAX:g} (the integrator's step "
            f"underflows below), got {t_max!r}."
        )
    if t_max > MAX_T_MAX:
        raise ValueError(
            f"`t_max` must be <= {MAX_T_MAX:g} (the integrator's step overflows "
            f"beyond), got {t_max!r}."
        )
    rtol = positive_real(rtol, "rtol", upper=1.0)
    if rtol < MIN_RTOL:
        raise ValueError(
            f"`rtol` must be >= {MIN_RTOL:.3g} (100 machine epsilons, "
            f"solve_ivp's floor), got {rtol!r}."
        )
    atol = positive_real(atol, "atol", upper=1.0)
    if stop_radius is not None:
        stop_radius = positive_real(stop_radius, "stop_radius")
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=np.float64)
        if t_eval.ndim != 1 or not np.all(np.isfinite(t_eval)):
            raise ValueError(f"`t_eval` must be a 1-D array of finite times, got {t_eval!r}.")
        if t_eval.size and (
            t_eval.min() < 0 or t_eval.max() > t_max or np.any(np.diff(t_eval) < 0)
        ):
            raise ValueError(
                f"`t_eval` must be sorted and lie in [0, t_max={t_max!r}], "
                f"got values from {t_eval.min()!r} to {t_eval.max()!r}."
            )
    return t_max, rtol, atol, stop_radius, t_eval


def manifold_flow(
    params: Params,
    kappa0: float,
    nu0: float,
    t_max: float,
    *,
    rtol: float = 1e-10,
    atol: float = 1e-12,
    method: str = "LSODA",
    stop_radius: float | None = None,
    t_eval: ArrayLike | None = None,
    dense_output: bool = True,
) -> FlowResult:
    """Integrate the gradient flow on the invariant manifold M from ``(kappa0, nu0)``.

    Parameters
    ----------
    params : Params
    kappa0, nu0 : float
        Start, in ``[-1, 1]``. A start with ``|kappa0| = 1`` (or ``|nu0| = 1``) keeps
        that coordinate fixed: the edge is invariant.
    t_max : float
        Gradient-flow time to integrate to, in ``[MIN_T_MAX, MAX_T_MAX]`` (1e-100 to 1e300).
    rtol, atol : float
        ``solve_ivp`` tolerances, on ``(artanh kappa, artanh nu)``:
        ``MIN_RTOL`` (2.2e-14) ``<= rtol <= 1`` and ``0 < atol <= 1``.
    method : str
        ``solve_ivp`` method. The default ``"LSODA"`` switches to implicit BDF with the
        analytic Jacobian when the problem is stiff; the implicit ``"Radau"`` and
        ``"BDF"`` also receive the analytic Jacobian.
    stop_radius : float, optional
        Stop when the trajectory enters the disc of this radius around a critical
        point of the flow on M (:func:`slr_theory.manifold.manifold_critical_overlaps`:
        the origin and the corners for an odd ``sigma``); ``t_event`` records when.
    t_eval : array_like, optional
        Output times (default: the integrator's steps).
    dense_output : bool
        Keep ``sol`` (overlaps at any ``t`` in ``[0, t_max]``).

    Returns
    -------
    FlowResult

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.flows import manifold_flow
    >>> res = manifold_flow(Params.paper(lam=0.1), 0.05, -0.02, t_max=400.0)
    >>> res.success, float(res.t[-1])
    (True, 400.0)
    >>> print(bool(res.kappa[-1] > 0.99 and res.nu[-1] > 0.99))  # towards the optimum (1, 1)
    True
    """
    t_max, rtol, atol, stop_radius, t_eval = _common(
        params, t_max, rtol, atol, stop_radius, t_eval
    )
    k0 = finite_real(kappa0, "kappa0")
    n0 = finite_real(nu0, "nu0")
    check_overlaps(
        k0, n0, 0.0, 0.0, 0.0, d=params.d, names=("kappa0", "nu0", "theta", "eta", "rho")
    )
    tables = _manifold_tables(params)
    frozen = np.array([abs(k0) == 1.0, abs(n0) == 1.0])
    edge = np.array([k0, n0])
    z0 = np.where(frozen, 0.0, np.arctanh(np.where(frozen, 0.0, edge)))

    def kn_of(z):
        z = np.asarray(z)
        shape = (2,) + (1,) * (z.ndim - 1)
        return np.where(frozen.reshape(shape), edge.reshape(shape), np.tanh(z))

    def fun(_t, z):
        k, n = kn_of(z)
        (r_k, r_n), _ = _manifold_grad_hess(tables, float(k), float(n))
        return np.where(frozen, 0.0, [-r_k, -r_n])

    def jac(_t, z):
        k, n = kn_of(z)
        _, (r_kk, r_kn) = _manifold_grad_hess(tables, float(k), float(n))
        # d(-R_k)/du = -R_kk (1 - k^2), d(-R_k)/dw = -R_kn (1 - n^2), d(-R_n)/du = -R_kn (1 - k^2)
        ok, on = (1 - k) * (1 + k), (1 - n) * (1 + n)
        J = np.array([[-r_kk * ok, -r_kn * on], [-r_kn * ok, 0.0]])
        J[frozen, :] = 0.0
        J[:, frozen] = 0.0
        return J

    event = None
    if stop_radius is not None:
        targets = manifold_critical_overlaps(params).T  # (2, m)

        def event(_t, z):  # entering the disc around one of M's critical points
            kn = kn_of(z)
            return float(np.min(np.hypot(*(kn[:, None] - targets)))) - stop_radius

    meth, sol = _solve(fun, jac, z0, t_max, method, rtol, atol, event, t_eval, dense_output)
    kn = kn_of(sol.y)
    overlaps = np.zeros((sol.t.size, 5))
    overlaps[:, :2] = kn.T
    dense = None
    if dense_output and sol.sol is not None:

        def dense(t, _s=sol.sol):
            z = np.asarray(_s(t))
            out = np.zeros((*np.shape(t), 5))
            kn_t = kn_of(z)
            out[..., 0], out[..., 1] = kn_t[0], kn_t[1]
            return out

    return _finish(params, sol, overlaps, dense, meth)


def _finish(params, sol, overlaps, dense, meth) -> FlowResult:
    risk = params.eps**2 + engine.components(params, tuple(overlaps.T)).sum(axis=0)
    t_event = None
    if sol.t_events is not None and len(sol.t_events) and sol.t_events[0].size:
        t_event = float(sol.t_events[0][0])
    return FlowResult(
        t=sol.t,
        overlaps=overlaps,
        risk=np.asarray(risk),
        status=int(sol.status),
        message=str(sol.message),
        success=bool(sol.success),
        nfev=int(sol.nfev),
        njev=int(sol.njev),
        t_event=t_event,
        sol=dense,
        method=meth,
    )


# ---------------------------------------------------------------------------
# The five-dimensional overlap flow.


def _grad(table, o: np.ndarray) -> np.ndarray:
    return table(o.reshape(5, 1))[:, 0]


def _hess(table2, o: np.ndarray) -> np.ndarray:
    return engine.hessian_matrices(table2(o.reshape(5, 1)))[0]


def overlap_field(params: Params, overlaps: ArrayLike) -> np.ndarray:
    """The five-dimensional flow of the overlaps (module docstring) at ``overlaps`` ``(..., 5)``.

    Parameters
    ----------
    params : Params
        Model parameters.
    overlaps : array_like, shape ``(..., 5)``
        Feasible overlaps.

    Returns
    -------
    ndarray, shape ``(..., 5)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.flows import manifold_field, overlap_field
    >>> p = Params.paper(lam=0.1)
    >>> f = overlap_field(p, [0.3, -0.2, 0.0, 0.0, 0.0])
    >>> bool(np.allclose(f[:2], manifold_field(p, 0.3, -0.2), rtol=1e-14)), f[2:].tolist()
    (True, [-0.0, -0.0, -0.0])
    """
    ov = as_array(overlaps, "overlaps")
    if ov.shape[-1:] != (5,):
        raise ValueError(f"`overlaps` must have last dimension 5, got shape {ov.shape}.")
    ov = np.stack(check_overlaps(*np.moveaxis(ov, -1, 0), d=params.d), axis=-1)  # projected
    g = engine.gradient(params, tuple(np.moveaxis(ov, -1, 0)))
    return np.moveaxis(overlap_velocity(np.moveaxis(ov, -1, 0), np.moveaxis(g, -1, 0)), 0, -1)


def overlap_jacobian(params: Params, overlaps: ArrayLike) -> np.ndarray:
    """Jacobian ``(5, 5)`` of :func:`overlap_field` at one overlap tuple.

    ``J = d field/d overlaps + (d field/d grad R) Hess R``, with the Hessian of
    :func:`slr_theory.risk_hessian`.

    Parameters
    ----------
    params : Params
        Model parameters.
    overlaps : array_like, shape ``(5,)``
        Feasible overlaps.

    Returns
    -------
    ndarray, shape ``(5, 5)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.flows import manifold_jacobian, overlap_jacobian
    >>> p = Params.paper(lam=0.1)
    >>> J = overlap_jacobian(p, [0.3, -0.2, 0.0, 0.0, 0.0])
    >>> bool(np.allclose(J[:2, :2], manifold_jacobian(p, 0.3, -0.2), rtol=1e-12))
    True
    """
    o = as_array(overlaps, "overlaps")
    if o.shape != (5,):
        raise ValueError(f"`overlaps` must have shape (5,), got {o.shape}.")
    o = np.array(check_overlaps(*o, d=params.d), dtype=np.float64)  # projected
    return _jac(_overlap_tables(params), o)


def _overlap_tables(params: Params):
    return (  # evaluated again and again: prepared
        engine.table(params, params.lam, 1).prepared(),
        engine.table(params, params.lam, 2).prepared(),
    )


def _jac(tables, o: np.ndarray) -> np.ndarray:
    Jo, Jg = velocity_partials(o, _grad(tables[0], o))
    return Jo + Jg @ _hess(tables[1], o)


def overlap_flow(
    params: Params,
    overlaps0: ArrayLike,
    t_max: float,
    *,
    rtol: float = 1e-10,
    atol: float = 1e-12,
    method: str = "LSODA",
    stop_speed: float | None = None,
    t_eval: ArrayLike | None = None,
    dense_output: bool = True,
    stop_radius: float | None = None,
) -> FlowResult:
    """Integrate the five-dimensional gradient flow of the overlaps from ``overlaps0``.

    Parameters
    ----------
    params : Params
    overlaps0 : array_like, shape (5,)
        One feasible tuple ``(kappa, nu, theta, eta, rho)``.
    t_max, rtol, atol, method, t_eval, dense_output
        As in :func:`manifold_flow`.
    stop_speed : float, optional
        Stop when the speed ``|overlaps'|`` drops below this value: the trajectory
        is then near a critical point, on or off M (``t_event`` records when).
    stop_radius : float, optional
        Deprecated name of `stop_speed` (in :func:`manifold_flow`, `stop_radius` is a
        distance to a critical point of M, not a speed).

    Returns
    -------
    FlowResult

    The flow keeps the Gram matrix of ``(k, v, k*, v*)`` positive semi-definite and
    M invariant exactly; numerically both hold to the integration tolerance
    (``tests/test_flows.py``).

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.flows import overlap_flow
    >>> p = Params.paper(lam=0.1)
    >>> res = overlap_flow(p, [0.05, -0.02, 0.03, 0.01, -0.04], t_max=50.0)
    >>> res.success, bool(np.all(np.diff(res.risk) <= 1e-12))  # the risk decreases
    (True, True)
    """
    if stop_radius is not None:
        import warnings

        warnings.warn(
            "overlap_flow(stop_radius=...) is deprecated: it is a speed, pass stop_speed.",
            DeprecationWarning,
            stacklevel=2,
        )
        if stop_speed is None:
            stop_speed = stop_radius
    t_max, rtol, atol, _, t_eval = _common(params, t_max, rtol, atol, None, t_eval)
    if stop_speed is not None:
        stop_speed = positive_real(stop_speed, "stop_speed")
    o0 = as_array(overlaps0, "overlaps0")
    if o0.shape != (5,):
        raise ValueError(f"`overlaps0` must have shape (5,), got {o0.shape}.")
    check_overlaps(*o0, d=params.d, names=tuple(f"overlaps0[{i}]" for i in range(5)))
    tables = _overlap_tables(params)

    def fun(_t, o):
        return overlap_velocity(o, _grad(tables[0], o))

    def jac(_t, o):
        return _jac(tables, o)

    event = None
    if stop_speed is not None:

        def event(_t, o):  # the speed |overlaps'| drops below the threshold
            return float(np.linalg.norm(fun(_t, o))) - stop_speed

    meth, sol = _solve(fun, jac, o0, t_max, method, rtol, atol, event, t_eval, dense_output)
    dense = None
    if dense_output and sol.sol is not None:

        def dense(t, _s=sol.sol):
            return np.moveaxis(np.asarray(_s(t)), 0, -1)

    return _finish(params, sol, sol.y.T.copy(), dense, meth)
