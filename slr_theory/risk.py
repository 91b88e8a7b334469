r"""The exact population risk of the attention predictor (MATH.md sections 3 and 5).

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

and ``R = eps^2 + (gamma^2 - 2 c1 + s1) + (L-1) s0 + 2(L-1) m1 m0 + (L-1)(L-2) m0^2``.
The SymPy derivation is ``derivations/risk.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from . import gaussian as g_
from ._validate import unit_vectors
from .params import OVERLAP_NAMES, Params, check_overlaps

__all__ = [
    "RiskComponents",
    "manifold_risk",
    "manifold_risk_grad",
    "manifold_risk_hessian",
    "risk",
    "risk_at",
    "risk_components",
    "risk_grad",
    "risk_grad_at",
    "risk_hessian",
]


@dataclass(frozen=True)
class RiskComponents:
    """The decomposition of MATH.md section 3 (arrays broadcast over the overlaps).

    Attributes
    ----------
    noise : float
        ``eps**2``.
    informative : ndarray
        ``gamma**2 - 2 c1 + s1``: the informative token alone, ``E (W - f(X_1))**2``.
    distractors : ndarray
        ``(L - 1) s0``.
    interactions : ndarray
        ``2 (L-1) m1 m0 + (L-1)(L-2) m0**2``; zero on the invariant manifold.
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


class _Moments:
    """Per-token moments; the special-function values are computed once, on first use."""

    def __init__(self, params: Params, overlaps):
        k, n, t, e, r = overlaps
        lam, gam = params.lam, params.gamma
        self.B = np.sqrt(params.d / 2.0)
        self.a = lam * self.B
        self.g = lam * gam
        self.G = gam * gam
        # lam is a float, or an array broadcasting with the overlaps (see _risk_lam)
        self.P = lam * g_.mean_erf_prime(0.0, lam)
        self.S0 = g_.zeta(0.0, lam)
        self.S2 = lam * lam * g_.zeta_tt(0.0, lam)
        self.k, self.n, self.t, self.e, self.r = k, n, t, e, r

    @cached_property
    def E(self) -> list[np.ndarray]:
        """``E erf^(j)(lambda U)``, j = 0, 1, 2, for the informative token."""
        m = self.a * self.k
        return [
            g_.mean_erf(m, self.g),
            g_.mean_erf_prime(m, self.g),
            g_.mean_erf_second(m, self.g),
        ]

    @cached_property
    def _zeta_psi(self) -> tuple[np.ndarray, np.ndarray]:
        return g_._zeta_and_erfc_sq(self.a * self.k, self.g)  # (zeta, E erfc(|m| + gZ)^2)

    @cached_property
    def Z(self) -> list[np.ndarray]:
        """``d^j zeta / dt^j (a kappa, g)``, j = 0, 1, 2."""
        m = self.a * self.k
        return [self._zeta_psi[0], g_.zeta_t(m, self.g), g_.zeta_tt(m, self.g)]

    def informative(self):
        """``gamma^2 - 2 c1 + s1`` without cancellation at the optimum.

        ``gamma^2 (1 - 2 nu E0 + Z0) = gamma^2 [2 (1 - sgn(kappa) nu) |E0| + E erfc(|a kappa| + gZ)^2]``
        is a sum of non-negative terms; the off-manifold terms are added to it.
        """
        B, G, gg, E, Z = self.B, self.G, self.g, self.E, self.Z
        k, n, t, e, r = self.k, self.n, self.t, self.e, self.r
        gam = np.sqrt(G)
        sgn = np.where(k < 0, -1.0, 1.0)
        on_m = G * (2.0 * (1.0 - sgn * n) * (sgn * E[0]) + self._zeta_psi[1])
        off_m = B * B * t * t * Z[0] + 2 * B * t * gam * gg * (r * Z[1] - e * E[1])
        off_m = off_m + G * gg * gg * (r * r * Z[2] - 2 * r * e * E[2])
        return on_m + off_m

    def cross_moments(self):
        """``(m1, m0, s0)``: the means that make up the interactions, and the distractor term."""
        gam = np.sqrt(self.G)
        m1 = self.B * self.t * self.E[0] + self.r * gam * self.g * self.E[1]
        m0 = self.r * self.P
        s0 = self.S0 + self.r * self.r * self.S2
        return m1, m0, s0


def _overlaps(params: Params, kappa, nu, theta, eta, rho):
    if not isinstance(params, Params):
        raise ValueError(f"`params` must be a slr_theory.Params, got {type(params).__name__}.")
    return check_overlaps(kappa, nu, theta, eta, rho, d=params.d)


def risk_components(
    params: Params,
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike = 0.0,
    eta: ArrayLike = 0.0,
    rho: ArrayLike = 0.0,
) -> RiskComponents:
    """The population risk split as in MATH.md section 3.

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
    ov = _overlaps(params, kappa, nu, theta, eta, rho)
    informative, distractors, interactions = _components(params, _Moments(params, ov))
    noise = params.eps**2
    total = noise + informative + distractors + interactions
    return RiskComponents(
        noise=noise,
        informative=_ret(informative),
        distractors=_ret(distractors),
        interactions=_ret(interactions),
        total=_ret(total),
    )


def _risk_lam(params: Params, lam: np.ndarray, ov) -> np.ndarray:
    """The risk at validated overlaps with one temperature per entry (``lam`` broadcasts).

    Used to price the records of a scheduled trajectory in one vectorised call.
    """
    from types import SimpleNamespace

    p = SimpleNamespace(d=params.d, L=params.L, gamma=params.gamma, lam=np.asarray(lam))
    informative, distractors, interactions = _components(params, _Moments(p, ov))
    return params.eps**2 + informative + distractors + interactions


def _components(params: Params, mo: _Moments):
    """``(informative, distractors, interactions)`` of MATH.md section 3 from the moments."""
    m1, m0, s0 = mo.cross_moments()
    L = params.L
    informative = mo.informative()
    distractors = (L - 1) * s0 + np.zeros_like(informative)
    interactions = 2 * (L - 1) * m1 * m0 + (L - 1) * (L - 2) * m0 * m0
    return informative, distractors, interactions


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

    Examples
    --------
    >>> from slr_theory import Params, risk
    >>> p = Params(d=400, L=10, lam=0.1, gamma=0.5**0.5)
    >>> print(risk(p, 0.0, 0.0))  # gamma^2 (1 + zeta(0, lambda gamma)) + (L - 1) zeta(0, lambda)
    0.615503500295243
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
    return _risk_grad(params, _overlaps(params, kappa, nu, theta, eta, rho))


def _risk_grad(params: Params, ov) -> np.ndarray:
    """:func:`risk_grad` on already validated overlaps (for inner loops such as PGD)."""
    d, (m1, m0), F = _derivative_evaluator(params, ov, order=1)
    L = params.L
    parts = [
        -2 * d("c1", i)
        + d("s1", i)
        + (L - 1) * d("s0", i)
        + 2 * (L - 1) * (d("m1", i) * m0 + m1 * d("m0", i))
        + 2 * (L - 1) * (L - 2) * m0 * d("m0", i)
        for i in range(len(OVERLAP_NAMES))
    ]
    # dR/dkappa contains a gamma^2 (Z_1 - 2 nu E_1), a difference of two exponentially
    # small numbers at the optimum: take it out of the term table and add it stably.
    parts[0] = (
        -2 * d("c1", 0, skip=_STABLE_C1)
        + d("s1", 0, skip=_STABLE_S1)
        + 2 * (L - 1) * (d("m1", 0) * m0)
        + _stable_kappa_term(params, ov, F["E"][1])
    )
    return np.stack(np.broadcast_arrays(*parts), axis=-1)


_STABLE_C1 = ((0, 1, 0, 0, 0), "E", 0)  # gamma^2 nu E_0 in c1
_STABLE_S1 = ((0, 0, 0, 0, 0), "Z", 0)  # gamma^2 Z_0 in s1


def _stable_kappa_kappa_term(params: Params, ov, E1) -> np.ndarray:
    """``a^2 gamma^2 (Z_2 - 2 nu E_2)`` without cancellation at the optimum.

    With ``x = a kappa / sqrt q``, ``y = a kappa / r``, ``r = sqrt(q (1 + 4 g^2))``:
    ``Z_2 = (2 / sqrt q) [erf'(y) erf'(x) / r + erf(y) erf''(x) / sqrt q]`` and
    ``E_2 = erf''(x) / q``, so ``Z_2 - 2 nu E_2 = 2 erf'(x) [erf'(y) / (r sqrt q) - 2 x D / q]``
    with ``D = erf(y) - nu`` taken as ``(s - nu) - s erfc(|y|)``; ``erf'(x) = sqrt(q) E_1``.
    """
    from scipy.special import erfc

    k, n = np.asarray(ov[0], float), np.asarray(ov[1], float)
    a = params.lam * np.sqrt(params.d / 2.0)
    gg = params.lam * params.gamma
    q = 1 + 2 * gg * gg
    r = np.sqrt(q * (1 + 4 * gg * gg))
    x = a * k / np.sqrt(q)
    y = a * k / r
    sgn = np.where(k < 0, -1.0, 1.0)
    D = (sgn - n) - sgn * erfc(np.abs(y))
    erfp_y = 2.0 / np.sqrt(np.pi) * np.exp(-(y * y))
    inner = erfp_y / (r * np.sqrt(q)) - 2.0 * x * D / q
    return a * a * params.gamma**2 * 2.0 * np.sqrt(q) * E1 * inner


def _stable_kappa_term(params: Params, ov, E1=None) -> np.ndarray:
    """``a gamma^2 (Z_1 - 2 nu E_1) = 2 a gamma^2 E_1 [(s - nu) - s erfc(|a kappa / r|)]``.

    On M this is all of ``dR/dkappa``. ``E1 = E erf'(lambda U)`` if already computed.

    ``Z_1 = (2 / sqrt q) erf(a kappa / r) erf'(a kappa / sqrt q)`` and
    ``E_1 = erf'(a kappa / sqrt q) / sqrt q`` share a factor; ``r = sqrt(q (1 + 4 g^2))``.
    """
    from scipy.special import erfc

    k, n = np.asarray(ov[0], float), np.asarray(ov[1], float)
    a = params.lam * np.sqrt(params.d / 2.0)
    gg = params.lam * params.gamma
    r = np.sqrt((1 + 2 * gg * gg) * (1 + 4 * gg * gg))
    sgn = np.where(k < 0, -1.0, 1.0)
    bracket = (sgn - n) - sgn * erfc(np.abs(a * k / r))
    if E1 is None:
        E1 = g_.mean_erf_prime(a * k, gg)
    return 2 * a * params.gamma**2 * E1 * bracket


def manifold_risk(params: Params, kappa: ArrayLike, nu: ArrayLike) -> np.ndarray:
    r"""The risk on the invariant manifold ``theta = eta = rho = 0`` (MATH.md section 5).

    .. math:: R_M(\kappa, \nu) = \varepsilon^2 + (L-1)\zeta(0, \lambda)
              + \gamma^2\big[1 - 2\nu\,\mathrm{erf}(c\kappa) + \zeta(a\kappa, g)\big]

    with ``a = lambda sqrt(d/2)``, ``g = lambda gamma``, ``c = a / sqrt(1 + 2 g^2)``.

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

    ``s = sqrt((1 + 2 g^2)(1 + 4 g^2))``.

    Examples
    --------
    >>> from slr_theory import Params, manifold_risk_grad
    >>> p = Params(d=400, L=10, lam=0.1, gamma=0.5**0.5)
    >>> print(abs(manifold_risk_grad(p, 0.0, 0.0)).max())  # the origin is a critical point
    0.0
    """
    k, n, *_ = _overlaps(params, kappa, nu, 0.0, 0.0, 0.0)
    from scipy.special import erf

    c = params.lam * np.sqrt(params.d / 2.0) / np.sqrt(1 + 2 * (params.lam * params.gamma) ** 2)
    dk = _stable_kappa_term(params, (k, n))
    dn = -2 * params.gamma**2 * erf(c * k)
    return np.stack(np.broadcast_arrays(dk, dn), axis=-1)


def _vectors(params: Params, k, v, k_star, v_star, tol: float = 1e-10):
    from .model import overlaps_of

    k, v, ks, vs = (
        unit_vectors(x, name, params.d, batch=True, tol=tol)
        for name, x in (("k", k), ("v", v), ("k_star", k_star), ("v_star", v_star))
    )
    dot = np.sum(ks * vs, axis=-1)
    if np.any(np.abs(dot) > tol):
        raise ValueError(
            f"`k_star` and `v_star` must be orthogonal, got k_star.v_star={np.ravel(dot)[0]!r}."
        )
    return k, v, ks, vs, np.moveaxis(overlaps_of(k, v, ks, vs), -1, 0)


def risk_at(params: Params, k, v, k_star, v_star) -> np.ndarray:
    """The risk at explicit unit vectors ``k, v`` (shape ``(..., d)``) for targets ``k*, v*``.

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
    return risk(params, *ov)


def risk_grad_at(
    params: Params, k, v, k_star, v_star, *, riemannian: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    r"""Gradients of the risk in ``k`` and ``v`` at explicit vectors (chain rule through the overlaps).

    .. math:: \nabla_k R = R_\kappa k^* + R_\eta v^* + R_\rho v, \qquad
              \nabla_v R = R_\theta k^* + R_\nu v^* + R_\rho k

    With ``riemannian=True`` each is projected on the tangent space of the
    sphere, ``g - (g . k) k`` (the direction the paper's projected GD follows).

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
    gr = risk_grad(params, *ov)
    rk, rn, rt, re, rr = (gr[..., i : i + 1] for i in range(5))
    gk = rk * ks + re * vs + rr * v
    gv = rt * ks + rn * vs + rr * k
    if riemannian:
        gk = gk - np.sum(gk * k, axis=-1, keepdims=True) * k
        gv = gv - np.sum(gv * v, axis=-1, keepdims=True) * v
    return gk, gv


# ----------------------------------------------------------------------------
# Second derivatives. Each moment is a sum of terms
#     const * prod_i overlap_i**e_i * F_j(a kappa),   F in {E, Z, 1},
# with dF_j/dkappa = a F_{j+1}; derivatives of any order follow mechanically.
# Exponent tuples are over the overlap order (kappa, nu, theta, eta, rho);
# kappa's exponent is always 0 (kappa enters only through F).


def _terms(mo: _Moments) -> dict[str, list[tuple[float, tuple[int, ...], str, int]]]:
    B, G, gg = mo.B, mo.G, mo.g
    gam = np.sqrt(G)
    return {
        "m1": [(B, (0, 0, 1, 0, 0), "E", 0), (gam * gg, (0, 0, 0, 0, 1), "E", 1)],
        "c1": [
            (G, (0, 1, 0, 0, 0), "E", 0),
            (G * gg * gg, (0, 0, 0, 1, 1), "E", 2),
            (B * gam * gg, (0, 0, 1, 1, 0), "E", 1),
        ],
        "s1": [
            (B * B, (0, 0, 2, 0, 0), "Z", 0),
            (G, (0, 0, 0, 0, 0), "Z", 0),
            (2 * B * gam * gg, (0, 0, 1, 0, 1), "Z", 1),
            (G * gg * gg, (0, 0, 0, 0, 2), "Z", 2),
        ],
        "m0": [(mo.P, (0, 0, 0, 0, 1), "1", 0)],
        "s0": [(mo.S0, (0, 0, 0, 0, 0), "1", 0), (mo.S2, (0, 0, 0, 0, 2), "1", 0)],
    }


def _partial(terms, idx: tuple[int, ...], ov, F, a):
    out = 0.0
    for const, exps, fam, j in terms:
        e = list(exps)
        factor = const
        shift = 0
        for i in idx:
            if i == 0:
                shift += 1
                factor = factor * a
            else:
                factor = factor * e[i]
                e[i] -= 1
        if fam == "1" and shift:
            continue
        if min(e) < 0 or factor == 0:
            continue
        mono = 1.0
        for i in range(1, 5):
            if e[i]:
                mono = mono * ov[i] ** e[i]
        out = out + factor * mono * (1.0 if fam == "1" else F[fam][j + shift])
    return out


def _derivative_evaluator(params: Params, ov, order: int):
    """``d(name, *indices)``: partials of a moment up to `order`; also ``(m1, m0)``."""
    mo = _Moments(params, ov)
    m = mo.a * ov[0]
    F = {
        "E": [g_.mean_erf_derivative(m, mo.g, j) for j in range(3 + order)],
        "Z": [g_.zeta_derivative(m, mo.g, j) for j in range(3 + order)],
    }
    terms = _terms(mo)

    def d(name, *idx, skip=None):
        ts = (
            terms[name] if skip is None else [t for t in terms[name] if (t[1], t[2], t[3]) != skip]
        )
        return _partial(ts, idx, ov, F, mo.a)

    return d, (d("m1"), d("m0")), F


def risk_hessian(
    params: Params,
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike = 0.0,
    eta: ArrayLike = 0.0,
    rho: ArrayLike = 0.0,
) -> np.ndarray:
    """Second partial derivatives of :func:`risk` in the overlaps.

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
    return _ret(_risk_hessian(params, _overlaps(params, kappa, nu, theta, eta, rho)))


def _risk_hessian(params: Params, ov) -> np.ndarray:
    """:func:`risk_hessian` on already validated overlaps (for ODE Jacobians)."""
    d, (m1, m0), F = _derivative_evaluator(params, ov, order=2)
    L = params.L
    shape = np.broadcast(*ov).shape
    out = np.zeros((*shape, 5, 5))
    for i in range(5):
        for j in range(i, 5):
            if i == j == 0:  # the gamma^2 (Z_2 - 2 nu E_2) part goes stably (as in _risk_grad)
                h = -2 * d("c1", 0, 0, skip=_STABLE_C1) + d("s1", 0, 0, skip=_STABLE_S1)
                h = h + _stable_kappa_kappa_term(params, ov, F["E"][1])
            else:
                h = -2 * d("c1", i, j) + d("s1", i, j)
            h = h + (L - 1) * d("s0", i, j)
            h = h + 2 * (L - 1) * (
                d("m1", i, j) * m0
                + d("m1", i) * d("m0", j)
                + d("m1", j) * d("m0", i)
                + m1 * d("m0", i, j)
            )
            h = h + 2 * (L - 1) * (L - 2) * (d("m0", i) * d("m0", j) + m0 * d("m0", i, j))
            out[..., i, j] = out[..., j, i] = h
    return out


def manifold_risk_hessian(params: Params, kappa: ArrayLike, nu: ArrayLike) -> np.ndarray:
    """Hessian of :func:`manifold_risk` in ``(kappa, nu)``, shape ``(..., 2, 2)``.

    Examples
    --------
    >>> from slr_theory import Params, manifold_risk_hessian
    >>> import numpy as np
    >>> h = manifold_risk_hessian(Params.paper(lam=0.1), 0.0, 0.0)
    >>> print(h[1, 1], bool(np.linalg.det(h) < 0))  # R_M is linear in nu; det < 0: a saddle
    0.0 True
    """
    return risk_hessian(params, kappa, nu)[..., :2, :2]
