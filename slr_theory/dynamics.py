r"""Training dynamics (MATH.md section 6): the paper's projected gradient descent, exactly.

One PGD step updates both unit vectors from the same iterate,
``k <- normalize(k - alpha P_k grad_k R)``, ``v <- normalize(v - alpha P_v grad_v R)``
with ``P_x g = g - (x . g) x``. Every vector involved lies in ``span{k, v, k*, v*}``,
so the step maps the five overlaps to the next five exactly, at a cost
independent of ``d``. With ``R_x`` the overlap partials, ``A = kappa R_kappa +
eta R_eta + rho R_rho``, ``B = theta R_theta + nu R_nu + rho R_rho`` and
``cA = 1 + alpha A``, ``cB = 1 + alpha B``:

.. math::

    \tilde k\cdot k^* &= c_A\kappa - \alpha(R_\kappa + R_\rho\theta), &
    \tilde k\cdot v^* &= c_A\eta - \alpha(R_\eta + R_\rho\nu), \\
    \tilde v\cdot k^* &= c_B\theta - \alpha(R_\theta + R_\rho\kappa), &
    \tilde v\cdot v^* &= c_B\nu - \alpha(R_\nu + R_\rho\eta), \\
    \|\tilde k\|^2 &= 1 + \alpha^2(\|\nabla_k R\|^2 - A^2), &
    \|\tilde v\|^2 &= 1 + \alpha^2(\|\nabla_v R\|^2 - B^2),

with ``||grad_k R||^2 = R_kappa^2 + R_eta^2 + R_rho^2 + 2 R_kappa R_rho theta + 2 R_eta R_rho nu``
(and symmetrically for ``v``), and ``k~ . v~`` expanded in the Gram entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .params import Params, check_overlaps
from .risk import _risk_grad, risk, risk_grad_at

__all__ = [
    "PGDResult",
    "paper_schedule",
    "pgd",
    "pgd_step",
    "pgd_vectors",
    "sample_initial_overlaps",
]


def paper_schedule(lam0: float, c: float = 1e-4) -> Callable[[int], float]:
    """The paper's temperature schedule ``lam_t = lam0 / (1 + c t)``."""
    return lambda t: lam0 / (1.0 + c * t)


def pgd_step(overlaps: np.ndarray, grad: np.ndarray, alpha: float) -> np.ndarray:
    """One exact PGD step on overlaps ``(..., 5)`` given the partials ``grad`` ``(..., 5)``."""
    k, n, t, e, r = np.moveaxis(overlaps, -1, 0)
    rk, rn, rt, re, rr = np.moveaxis(grad, -1, 0)
    a_ = k * rk + e * re + r * rr
    b_ = t * rt + n * rn + r * rr
    ca, cb = 1 + alpha * a_, 1 + alpha * b_
    kk = ca * k - alpha * (rk + rr * t)
    ke = ca * e - alpha * (re + rr * n)
    vt = cb * t - alpha * (rt + rr * k)
    vn = cb * n - alpha * (rn + rr * e)
    gk2 = rk * rk + re * re + rr * rr + 2 * rk * rr * t + 2 * re * rr * n
    gv2 = rt * rt + rn * rn + rr * rr + 2 * rt * rr * k + 2 * rn * rr * e
    nk = np.sqrt(1 + alpha * alpha * (gk2 - a_ * a_))
    nv = np.sqrt(1 + alpha * alpha * (gv2 - b_ * b_))
    al2 = alpha * alpha
    kv = (
        ca * cb * r
        - ca * alpha * (rt * k + rn * e + rr)
        - alpha * cb * (rk * t + re * n + rr)
        + al2
        * (rk * rt + rk * rr * k + re * rn + re * rr * e + rr * rt * t + rr * rn * n + rr * rr * r)
    )
    return np.stack([kk / nk, vn / nv, vt / nv, ke / nk, kv / (nk * nv)], axis=-1)


@dataclass(frozen=True)
class PGDResult:
    """Recorded PGD trajectory.

    Attributes
    ----------
    step : ndarray, shape (n_records,)
        Step numbers ``0, record_every, ..., steps``.
    overlaps : ndarray, shape (n_records, ..., 5)
    risk : ndarray, shape (n_records, ...)
    lam : ndarray, shape (n_records,)
        Temperature used at each recorded step.
    """

    step: np.ndarray
    overlaps: np.ndarray
    risk: np.ndarray
    lam: np.ndarray


def _lam_at(params: Params, schedule, t: int) -> float:
    if schedule is None:
        return params.lam
    return float(schedule(t))


def pgd(
    params: Params,
    overlaps0: ArrayLike,
    alpha: float,
    steps: int,
    schedule: Callable[[int], float] | None = None,
    record_every: int = 1,
) -> PGDResult:
    """The paper's projected gradient descent, computed exactly on the overlaps.

    Parameters
    ----------
    params : Params
        Model parameters (``params.lam`` unless `schedule` is given).
    overlaps0 : array_like, shape (..., 5)
        Initial overlaps in :data:`slr_theory.OVERLAP_NAMES` order; a batch of repeats.
    alpha : float
        Step size.
    steps : int
        Number of steps.
    schedule : callable ``step -> lam``, optional
        Temperature schedule, e.g. :func:`paper_schedule`.
    record_every : int
        Record every this many steps (and the last step).

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.dynamics import pgd
    >>> res = pgd(Params.paper(lam=0.1), [0.1, 0.1, 0.0, 0.0, 0.0], 4e-3, 400, record_every=200)
    >>> res.step.tolist(), bool(res.risk[-1] < res.risk[0])
    ([0, 200, 400], True)
    """
    ov = np.array(overlaps0, dtype=np.float64)
    if ov.shape[-1:] != (5,):
        raise ValueError(f"`overlaps0` must have last dimension 5, got shape {ov.shape}.")
    check_overlaps(*np.moveaxis(ov, -1, 0), d=params.d)
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"`alpha` must be positive and finite, got {alpha!r}.")
    if int(steps) != steps or steps < 0:
        raise ValueError(f"`steps` must be a non-negative integer, got {steps!r}.")
    if int(record_every) != record_every or record_every < 1:
        raise ValueError(f"`record_every` must be a positive integer, got {record_every!r}.")
    recs_step, recs_ov, recs_lam = [0], [ov.copy()], [_lam_at(params, schedule, 0)]
    p = params
    for t in range(int(steps)):
        lam = _lam_at(params, schedule, t)
        if lam != p.lam:
            p = params.replace(lam=lam)
        # validated once above; each step keeps the overlaps feasible by construction
        ov = pgd_step(ov, _risk_grad(p, tuple(np.moveaxis(ov, -1, 0))), alpha)
        if (t + 1) % record_every == 0 or t + 1 == steps:
            recs_step.append(t + 1)
            recs_ov.append(ov.copy())
            recs_lam.append(_lam_at(params, schedule, t + 1))
    overlaps = np.stack(recs_ov)
    risks = np.stack(
        [
            risk(params.replace(lam=lm), *np.moveaxis(o, -1, 0))
            for o, lm in zip(recs_ov, recs_lam, strict=True)
        ]
    )
    return PGDResult(np.array(recs_step), overlaps, risks, np.array(recs_lam))


def pgd_vectors(
    params: Params,
    k0: np.ndarray,
    v0: np.ndarray,
    k_star: np.ndarray,
    v_star: np.ndarray,
    alpha: float,
    steps: int,
    schedule: Callable[[int], float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Reference PGD on explicit vectors in ``R^d`` (closed-form gradient); returns final ``(k, v)``."""
    k, v = np.array(k0, dtype=np.float64), np.array(v0, dtype=np.float64)
    p = params
    for t in range(int(steps)):
        lam = _lam_at(params, schedule, t)
        if lam != p.lam:
            p = params.replace(lam=lam)
        gk, gv = risk_grad_at(p, k, v, k_star, v_star, riemannian=True)
        k, v = k - alpha * gk, v - alpha * gv
        k /= np.linalg.norm(k, axis=-1, keepdims=True)
        v /= np.linalg.norm(v, axis=-1, keepdims=True)
    return k, v


def sample_initial_overlaps(
    d: int,
    rng: np.random.Generator,
    size: int | tuple[int, ...] = (),
    *,
    on_manifold: bool = False,
) -> np.ndarray:
    """Overlaps of a random initialisation in ``R^d``, sampled exactly in O(1) per draw.

    Sphere: ``k, v`` independent and uniform on ``S^{d-1}``. With Gaussian
    ``g, h``, ``k = g/|g|``: ``kappa, eta`` are its first two coordinates, the rest
    has squared norm ``chi^2_{d-2}``; ``g_perp . h_perp = |g_perp| z`` and
    ``|h_perp|^2 = z^2 + chi^2_{d-3}``.
    On ``M`` (MATH.md section 7): ``k`` uniform on the unit sphere orthogonal
    to ``v*`` and ``v`` uniform orthogonal to ``k*`` and ``k``, so
    ``theta = eta = rho = 0``, ``kappa = g1/|g|`` with ``g`` in ``R^{d-1}``,
    ``nu = h1/|h|`` with ``h`` in ``R^{d-2}``.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.dynamics import sample_initial_overlaps
    >>> ov = sample_initial_overlaps(400, np.random.default_rng(0), 1000)
    >>> ov.shape, bool(abs((ov[:, 0] ** 2).mean() * 400 - 1) < 0.2)
    ((1000, 5), True)
    """
    shape = (size,) if isinstance(size, int) else tuple(size)
    if d < 4:
        raise ValueError(f"`d` must be >= 4 for random initialisations, got {d!r}.")
    out = np.zeros((*shape, 5))
    if on_manifold:
        g1 = rng.standard_normal(shape)
        k_norm = np.sqrt(g1**2 + rng.chisquare(d - 2, shape))
        h1 = rng.standard_normal(shape)
        v_norm = np.sqrt(h1**2 + rng.chisquare(d - 3, shape))
        out[..., 0], out[..., 1] = g1 / k_norm, h1 / v_norm
        return out
    g = rng.standard_normal((*shape, 2))
    h = rng.standard_normal((*shape, 2))
    g_perp2 = rng.chisquare(d - 2, shape)
    z = rng.standard_normal(shape)
    h_perp2 = z**2 + rng.chisquare(d - 3, shape)
    gn = np.sqrt(g[..., 0] ** 2 + g[..., 1] ** 2 + g_perp2)
    hn = np.sqrt(h[..., 0] ** 2 + h[..., 1] ** 2 + h_perp2)
    dot = g[..., 0] * h[..., 0] + g[..., 1] * h[..., 1] + np.sqrt(g_perp2) * z
    out[..., 0] = g[..., 0] / gn  # kappa = k . k*
    out[..., 3] = g[..., 1] / gn  # eta = k . v*
    out[..., 2] = h[..., 0] / hn  # theta = v . k*
    out[..., 1] = h[..., 1] / hn  # nu = v . v*
    out[..., 4] = dot / (gn * hn)
    return out
