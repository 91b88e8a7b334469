"""Whether M attracts: the transverse eigenvalues of the flow on M, at a point and over the square."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import engine
from ..geometry import velocity_partials
from ..params import Params, check_overlaps, check_params
from ..validate import positive_int, positive_real

__all__ = [
    "FLOW_FEASIBILITY",
    "MAX_RK4_STEPS",
    "MIN_OFFSET",
    "StabilityMap",
    "manifold_stability",
    "stability_map",
]


#: Most RK4 steps of :func:`separatrix` and :func:`manifold_basins` (flow).
MAX_RK4_STEPS = 10**7


#: How far from feasible (smallest eigenvalue of the Gram matrix's Schur complement) the
#: end of a flow of :func:`basin_fractions` may drift before it is an error: the flow's
#: integration tolerance, not rounding.
FLOW_FEASIBILITY = 1e-9


#: Smallest initial displacement from a saddle :func:`saddle_escape` accepts.
MIN_OFFSET = 1e-10


def rk4_steps(t_max, dt) -> tuple[int, float]:
    """The number of RK4 steps of size `dt` to `t_max`, both validated."""
    t_max, dt = positive_real(t_max, "t_max"), positive_real(dt, "dt")
    steps = np.ceil(t_max / dt)
    if steps > MAX_RK4_STEPS:
        raise ValueError(
            f"`t_max` / `dt` must be at most {MAX_RK4_STEPS:g} RK4 steps, got "
            f"t_max={t_max!r}, dt={dt!r}."
        )
    return int(steps), dt


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


def angle_velocity(table, phi: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """``(phi', psi') = (sin phi R_kappa, sin psi R_nu)`` at ``cos phi, cos psi`` (batched)."""
    n = phi.size
    ov = np.zeros((5, n))
    ov[0], ov[1] = np.cos(phi), np.cos(psi)
    gr = table.manifold_gradient(ov[:2])
    return np.stack([np.sin(phi) * gr[0], np.sin(psi) * gr[1]])


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
