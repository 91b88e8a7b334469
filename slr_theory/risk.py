r"""The exact population risk of the attention predictor, validated (see ``docs/theory.md``).

With ``J0 = 1`` by exchangeability, ``U, V, W = X^T k, X^T v, X^T v*``, and for
the informative token ``lambda U ~ N(a kappa, g^2)`` where ``a = lambda sqrt(d/2)``,
``g = lambda gamma``, ``B = sqrt(d/2)``. Conditioning ``V, W`` on ``U`` gives,
with ``E_j = E erf^(j)(lambda U)`` and ``Z_j = d^j zeta(a kappa, g) / dt^j``:

.. math::

    m_1 &= B\theta E_0 + \rho\gamma g E_1, \qquad
    c_1 = \gamma^2\nu E_0 + \rho\eta\gamma^2 g^2 E_2 + B\theta\eta\gamma g E_1, \\
    s_1 &= (B^2\theta^2 + \gamma^2) Z_0 + 2B\theta\rho\gamma g Z_1 + \rho^2\gamma^2 g^2 Z_2, \\
    m_0 &= \rho\lambda\, \mathbb{E}\,\mathrm{erf}'(\lambda Z), \qquad
    s_0 = \zeta(0, \lambda) + \rho^2\lambda^2 \zeta_{tt}(0, \lambda),

and ``R = eps^2 + (gamma^2 - 2 c1 + s1) + (L-1) s0 + 2(L-1) m1 m0 + (L-1)(L-2) m0^2``;
with ``s`` informative tokens (``Params.s``)
``R = eps^2 + s (gamma^2 - 2 c1 + s1) + (L-s) s0 + 2 s(L-s) m1 m0 + (L-s)(L-s-1) m0^2
+ s(s-1) m1^2``. The SymPy derivation is ``derivations/risk.py``. The functions here validate their
input and evaluate the risk, its gradient and its Hessian with the one engine of
:mod:`slr_theory.engine`, which the dynamics use unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import engine
from .params import Params, check_overlaps, check_params
from .validate import boolean, orthonormal_pair, unit_vectors

__all__ = [
    "RiskComponents",
    "manifold_risk",
    "manifold_risk_grad",
    "manifold_risk_hessian",
    "risk",
    "risk_and_grad",
    "risk_at",
    "risk_components",
    "risk_grad",
    "risk_grad_at",
    "risk_hessian",
]


@dataclass(frozen=True)
class RiskComponents:
    """The decomposition of docs/theory.md §3 (arrays broadcast over the overlaps).

    Attributes
    ----------
    noise : float
        ``eps**2``.
    informative : ndarray
        ``s (gamma**2 - 2 c1 + s1)``: each informative token alone, ``E (W - f(X_1))**2``.
    distractors : ndarray
        ``(L - s) s0``.
    interactions : ndarray
        ``2 s (L-s) m1 m0 + (L-s)(L-s-1) m0**2 + s (s-1) m1**2`` (``s = 1``:
        ``2 (L-1) m1 m0 + (L-1)(L-2) m0**2``); zero on the invariant manifold.
    total : ndarray
        The population risk, the sum of the four.
    """

    noise: float
    informative: np.ndarray
    distractors: np.ndarray
    interactions: np.ndarray
    total: np.ndarray


def _ret(x):
    x = np.asarray(x)
    return x[()] if x.ndim == 0 else x


def _overlaps(params: Params, kappa, nu, theta, eta, rho):
    check_params(params)
    return check_overlaps(kappa, nu, theta, eta, rho, d=params.d)


def risk_components(
    params: Params,
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike = 0.0,
    eta: ArrayLike = 0.0,
    rho: ArrayLike = 0.0,
) -> RiskComponents:
    """The population risk split as in docs/theory.md §3.

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu, theta, eta, rho : array_like
        Overlaps ``k.k*, v.v*, v.k*, k.v*, k.v``; broadcast together; must be
        feasible (see :func:`slr_theory.params.check_overlaps`).

    Returns
    -------
    RiskComponents

    Examples
    --------
    >>> from slr_theory import Params, risk_components
    >>> c = risk_components(Params(d=400, L=10, lam=0.1, gamma=0.5**0.5, eps=0.1), 0.0, 0.0)
    >>> print(c.noise, c.interactions)
    0.010000000000000002 0.0
    >>> bool(abs(c.total - (c.noise + c.informative + c.distractors)) < 1e-15)
    True
    """
    return _components(params, _overlaps(params, kappa, nu, theta, eta, rho))


def _components(params: Params, ov) -> RiskComponents:
    informative, distractors, interactions = engine.components(params, ov)
    noise = params.eps**2
    total = noise + informative + distractors + interactions
    return RiskComponents(
        noise=noise,
        informative=_ret(informative),
        distractors=_ret(distractors),
        interactions=_ret(interactions),
        total=_ret(total),
    )


def risk(
    params: Params,
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike = 0.0,
    eta: ArrayLike = 0.0,
    rho: ArrayLike = 0.0,
) -> np.ndarray:
    r"""The population risk ``R = E[(Y - T_{lambda,k,v}(X))^2]`` as a function of the overlaps.

    See :func:`risk_components` for the parameters and the module docstring for
    the closed form; ``eps**2`` is included.

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu, theta, eta, rho : array_like
        Overlaps, broadcast together; feasible (:func:`slr_theory.params.check_overlaps`).

    Returns
    -------
    ndarray or numpy scalar
        The population risk, ``eps**2`` included.

    Examples
    --------
    >>> from slr_theory import Params, risk
    >>> p = Params(d=400, L=10, lam=0.1, gamma=0.5**0.5)
    >>> print(risk(p, 0.0, 0.0))  # gamma^2 (1 + zeta(0, lambda gamma)) + (L - 1) zeta(0, lambda)
    0.6155035002952428
    """
    return risk_components(params, kappa, nu, theta, eta, rho).total


def risk_grad(
    params: Params,
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike = 0.0,
    eta: ArrayLike = 0.0,
    rho: ArrayLike = 0.0,
) -> np.ndarray:
    """Partial derivatives of :func:`risk` in the overlaps, on the last axis.

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu, theta, eta, rho : array_like
        Overlaps, broadcast together; feasible (:func:`slr_theory.params.check_overlaps`).

    Returns
    -------
    ndarray, shape ``(..., 5)``
        ``(dR/dkappa, dR/dnu, dR/dtheta, dR/deta, dR/drho)`` (the order of
        :data:`slr_theory.OVERLAP_NAMES`), treating the overlaps as independent.

    Examples
    --------
    >>> from slr_theory import Params, risk_grad
    >>> p = Params(d=400, L=10, lam=0.1, gamma=0.5**0.5)
    >>> risk_grad(p, 0.5, 0.5).shape
    (5,)
    """
    return engine.gradient(params, _overlaps(params, kappa, nu, theta, eta, rho))


def risk_and_grad(
    params: Params,
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike = 0.0,
    eta: ArrayLike = 0.0,
    rho: ArrayLike = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`risk` and :func:`risk_grad` in one call, each special function evaluated once.

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu, theta, eta, rho : array_like
        Feasible overlaps, broadcast together.

    Returns
    -------
    risk : ndarray
        As :func:`risk` (``eps**2`` included).
    grad : ndarray, shape ``(..., 5)``
        As :func:`risk_grad`.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, risk, risk_and_grad, risk_grad
    >>> p = Params.paper(lam=0.1)
    >>> r, g = risk_and_grad(p, [0.2, 0.9], [0.1, 0.8])
    >>> bool(np.allclose(r, risk(p, [0.2, 0.9], [0.1, 0.8]), rtol=1e-15))
    True
    """
    ov = _overlaps(params, kappa, nu, theta, eta, rho)
    parts, grad = engine.value_and_gradient(params, ov)
    return _ret(params.eps**2 + parts.sum(axis=0)), grad


def manifold_risk(params: Params, kappa: ArrayLike, nu: ArrayLike) -> np.ndarray:
    r"""The risk on the invariant manifold ``theta = eta = rho = 0`` (docs/theory.md §5).

    .. math:: R_M(\kappa, \nu) = \varepsilon^2 + (L-s)\zeta(0, \lambda)
              + s\gamma^2\big[1 - 2\nu\,\mathrm{erf}(c\kappa) + \zeta(a\kappa, g)\big]

    with ``a = lambda sqrt(d/2)``, ``g = lambda gamma``, ``c = a / sqrt(1 + 2 g^2)`` and
    ``s`` informative tokens (1 in the paper).

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu : array_like
        Overlaps on M, in ``[-1, 1]``, broadcast together.

    Returns
    -------
    ndarray or numpy scalar
        ``R_M(kappa, nu)``, equal to :func:`risk` at ``theta = eta = rho = 0``.

    Examples
    --------
    >>> from slr_theory import Params, manifold_risk, risk
    >>> p = Params(d=400, L=10, lam=0.1, gamma=0.5**0.5)
    >>> bool(manifold_risk(p, 0.3, -0.2) == risk(p, 0.3, -0.2))
    True
    """
    return risk(params, kappa, nu)


def manifold_risk_grad(params: Params, kappa: ArrayLike, nu: ArrayLike) -> np.ndarray:
    r"""Gradient of :func:`manifold_risk`, shape ``(..., 2)``: ``(dR/dkappa, dR/dnu)``.

    .. math:: \partial_\kappa R_M = \frac{4\gamma^2 c}{\sqrt\pi} e^{-c^2\kappa^2}
              \big[\mathrm{erf}(a\kappa/s) - \nu\big], \qquad
              \partial_\nu R_M = -2\gamma^2\,\mathrm{erf}(c\kappa),

    ``s = sqrt((1 + 2 g^2)(1 + 4 g^2))``, both times the number of informative tokens
    ``Params.s`` (1 in the paper).

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu : array_like
        Overlaps on M, in ``[-1, 1]``, broadcast together.

    Returns
    -------
    ndarray, shape ``(..., 2)``
        ``(dR_M/dkappa, dR_M/dnu)``.

    Examples
    --------
    >>> from slr_theory import Params, manifold_risk_grad
    >>> p = Params(d=400, L=10, lam=0.1, gamma=0.5**0.5)
    >>> print(abs(manifold_risk_grad(p, 0.0, 0.0)).max())  # the origin is a critical point
    0.0
    """
    return engine.gradient(params, _overlaps(params, kappa, nu, 0.0, 0.0, 0.0))[..., :2]


def _vectors(params: Params, k, v, k_star, v_star):
    """Validated vectors and their overlaps, shape ``(5, ...)``.

    The overlaps of explicit vectors are realised by them, so they go to the engine
    unprojected: where ``k`` is parallel to ``v*`` the Gram matrix is singular, and
    projecting a rounding-level excess would move ``rho`` by up to ``sqrt(eps)``.
    Rounded vectors (inside :func:`slr_theory.overlap_tolerance`) are first moved to the
    nearest unit vectors and orthonormal targets, which realise their overlaps too.
    """
    from .sampling import overlaps_of

    check_params(params)
    k, v = (unit_vectors(x, name, params.d, batch=True) for name, x in (("k", k), ("v", v)))
    ks, vs = orthonormal_pair(k_star, v_star, ("k_star", "v_star"), params.d, batch=True)
    return k, v, ks, vs, np.moveaxis(overlaps_of(k, v, ks, vs), -1, 0)


def risk_at(params: Params, k, v, k_star, v_star) -> np.ndarray:
    """The risk at explicit unit vectors ``k, v`` (shape ``(..., d)``) for targets ``k*, v*``.

    Parameters
    ----------
    params : Params
        Model parameters.
    k, v : array_like, shape ``(..., d)``
        Unit vectors (norm within ``1e-10`` of 1).
    k_star, v_star : array_like, shape ``(d,)`` or ``(..., d)``
        Orthonormal targets.

    Returns
    -------
    ndarray or numpy scalar
        The risk at ``(k, v)``, shape ``(...)``.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, risk, risk_at
    >>> p = Params(d=4, L=3, lam=0.5, gamma=1.0)
    >>> e = np.eye(4)
    >>> bool(risk_at(p, e[0], e[1], e[0], e[1]) == risk(p, 1.0, 1.0))
    True
    """
    *_, ov = _vectors(params, k, v, k_star, v_star)
    return _components(params, tuple(ov)).total


def risk_grad_at(
    params: Params, k, v, k_star, v_star, *, riemannian: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    r"""Gradients of the risk in ``k`` and ``v`` at explicit vectors (chain rule through the overlaps).

    .. math:: \nabla_k R = R_\kappa k^* + R_\eta v^* + R_\rho v, \qquad
              \nabla_v R = R_\theta k^* + R_\nu v^* + R_\rho k

    With ``riemannian=True`` each is projected on the tangent space of the
    sphere, ``g - (g . k) k`` (the direction the paper's projected GD follows).

    Parameters
    ----------
    params : Params
        Model parameters.
    k, v : array_like, shape ``(..., d)``
        Unit vectors (norm within ``1e-10`` of 1).
    k_star, v_star : array_like, shape ``(d,)`` or ``(..., d)``
        Orthonormal targets.
    riemannian : bool
        Project each gradient on the tangent space of its sphere.

    Returns
    -------
    grad_k, grad_v : ndarray, shape ``(..., d)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, risk_grad_at
    >>> p = Params(d=4, L=3, lam=0.5, gamma=1.0)
    >>> e = np.eye(4)
    >>> gk, gv = risk_grad_at(p, e[0], e[1], e[0], e[1], riemannian=True)
    >>> print(np.abs(gk).max() < 1e-15, np.abs(gv).max() < 1e-15)  # (k*, v*) is critical
    True True
    """
    k, v, ks, vs, ov = _vectors(params, k, v, k_star, v_star)
    gr = engine.gradient(params, tuple(ov))
    rk, rn, rt, re, rr = (gr[..., i : i + 1] for i in range(5))
    gk = rk * ks + re * vs + rr * v
    gv = rt * ks + rn * vs + rr * k
    if boolean(riemannian, "riemannian"):
        gk = gk - np.sum(gk * k, axis=-1, keepdims=True) * k
        gv = gv - np.sum(gv * v, axis=-1, keepdims=True) * v
    return gk, gv


def risk_hessian(
    params: Params,
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike = 0.0,
    eta: ArrayLike = 0.0,
    rho: ArrayLike = 0.0,
) -> np.ndarray:
    """Second partial derivatives of :func:`risk` in the overlaps.

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu, theta, eta, rho : array_like
        Overlaps, broadcast together; feasible (:func:`slr_theory.params.check_overlaps`).

    Returns
    -------
    ndarray, shape ``(..., 5, 5)``
        Symmetric; rows and columns in :data:`slr_theory.OVERLAP_NAMES` order,
        the overlaps treated as independent coordinates.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, risk_hessian
    >>> h = risk_hessian(Params.paper(lam=0.1), 0.0, 0.0)
    >>> h.shape, bool(np.allclose(h, h.T))
    ((5, 5), True)
    >>> print(bool(np.linalg.det(h[:2, :2]) < 0))  # the origin is a saddle of the manifold risk
    True
    """
    return _ret(engine.hessian(params, _overlaps(params, kappa, nu, theta, eta, rho)))


def manifold_risk_hessian(params: Params, kappa: ArrayLike, nu: ArrayLike) -> np.ndarray:
    """Hessian of :func:`manifold_risk` in ``(kappa, nu)``, shape ``(..., 2, 2)``.

    Parameters
    ----------
    params : Params
        Model parameters.
    kappa, nu : array_like
        Overlaps on M, in ``[-1, 1]``, broadcast together.

    Returns
    -------
    ndarray, shape ``(..., 2, 2)``

    Examples
    --------
    >>> from slr_theory import Params, manifold_risk_hessian
    >>> import numpy as np
    >>> h = manifold_risk_hessian(Params.paper(lam=0.1), 0.0, 0.0)
    >>> print(h[1, 1], bool(np.linalg.det(h) < 0))  # R_M is linear in nu; det < 0: a saddle
    0.0 True
    """
    return risk_hessian(params, kappa, nu)[..., :2, :2]
