"""zeta's series near t = 0 and its reduced form, Plackett's rule for the bivariate normal, and erfc^2's reduced mean."""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import erfc, erfcx, owens_t, roots_laguerre

from .. import doubledouble as _dd
from ..validate import as_array
from .means import BOUND, TWO_OVER_SQRT_PI

__all__ = [
    "PLACKETT_NODES",
    "ZETA_SERIES_BELOW",
    "ZETA_SERIES_TERMS",
    "erfc_sq_reduced",
    "legendre20_rule",
    "plackett_rule",
    "zeta_reduced",
    "zeta_series_coefficients",
]


#: Terms of the power series of ``zeta`` in ``x**2`` (:func:`zeta_series_coefficients`).
ZETA_SERIES_TERMS = 18


#: Gauss-Legendre nodes of Plackett's angle integral in :func:`erfc_sq_reduced`.
PLACKETT_NODES = 20


def _series_matrix() -> np.ndarray:
    from math import factorial, pi

    m = np.zeros((ZETA_SERIES_TERMS, ZETA_SERIES_TERMS))
    for k in range(1, ZETA_SERIES_TERMS + 1):
        for n in range(k):
            m[k - 1, n] = (
                (4.0 / pi)
                * (-1.0) ** (k - 1)
                / (k * factorial(n) * (2 * n + 1) * factorial(k - 1 - n))
            )
    return m


_SERIES = _series_matrix()


#: ``x**2`` below which :func:`zeta_reduced` sums its series (above, ``zeta >= 0.46``).
ZETA_SERIES_BELOW = 0.5


# The 20-point Gauss-Legendre rule of Plackett's angle integral, its positive half (the
# rule is symmetric): the doubles scipy.special.roots_legendre(20) returns, written out so
# that no import computes them (roots_legendre imports scipy.linalg for an eigenproblem);
# tests/test_gaussian.py checks them against it and against mpmath's rule.
_GL20_NODES = (
    0.0765265211334973, 0.22778585114164504, 0.37370608871541955, 0.510867001950827,
    0.6360536807265149, 0.7463319064601508, 0.8391169718222189, 0.912234428251326,
    0.9639719272779137, 0.9931285991850949,
)  # fmt: skip
_GL20_WEIGHTS = (
    0.1527533871307256, 0.1491729864726036, 0.14209610931838176, 0.13168863844917644,
    0.11819453196151841, 0.10193011981724026, 0.08327674157670427, 0.06267204833410933,
    0.04060142980038748, 0.017614007139152687,
)  # fmt: skip
_GLP_X = np.concatenate([-np.array(_GL20_NODES[::-1]), _GL20_NODES])
_GLP_W = np.concatenate([_GL20_WEIGHTS[::-1], _GL20_WEIGHTS])


def legendre20_rule() -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the ``PLACKETT_NODES``-point Gauss-Legendre rule on ``[-1, 1]``
    that Plackett's angle integral uses (copies: the caller may write to them)."""
    return _GLP_X.copy(), _GLP_W.copy()


def _ratio(r) -> np.ndarray:
    """``r = 1 + 4 s**2`` as a float array: ``1 <= r``, finite, at most ``4e200 + 1``."""
    r = as_array(r, "r", bound=4 * BOUND**2 + 1)
    low = r < 1.0
    if low.any():
        raise ValueError(f"`r` must be >= 1 (r = 1 + 4 s**2), got {r[low].flat[0]!r}.")
    return r


def zeta_series_coefficients(r: ArrayLike) -> np.ndarray:
    r"""Coefficients ``c_K``, ``K = 1..ZETA_SERIES_TERMS``, of ``zeta`` in powers of ``x**2``.

    With ``x = t / sqrt(1 + 2 s**2)`` and ``r = 1 + 4 s**2``,

    .. math:: \zeta(t, s) = \zeta(0, s) + \sum_{K \ge 1} c_K x^{2K}, \qquad
              c_K = \frac{4}{\pi}\frac{(-1)^{K-1}}{K} \sum_{n<K}
              \frac{r^{-n-1/2}}{n!\,(2n+1)\,(K-1-n)!}

    (expand both factors of ``zeta - zeta(0, s) = 2 int_0^|x| erf(w / sqrt r) erf'(w) dw``;
    ``derivations/dynamics.py`` derives it). Eighteen terms give full precision
    for ``x**2 < 0.56``, which covers every ``zeta < 1/2`` (Jensen: ``zeta >= erf(x)**2``).

    Parameters
    ----------
    r : array_like
        ``1 + 4 s**2``: ``1 <= r <= 4e200 + 1`` (NaN propagates).

    Returns
    -------
    ndarray, shape ``(..., ZETA_SERIES_TERMS)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.gaussian import zeta_series_coefficients
    >>> c = zeta_series_coefficients(1.0)  # s = 0: erf(x)^2 = (4/pi)(x^2 - 2 x^4/3 + ...)
    >>> print(np.round(c[:2] * np.pi / 4, 12).tolist())
    [1.0, -0.666666666667]
    """
    r = _ratio(r)
    inv = 1.0 / r
    powers = np.empty((*r.shape, ZETA_SERIES_TERMS))
    powers[..., 0] = np.sqrt(inv)
    for n in range(1, ZETA_SERIES_TERMS):
        powers[..., n] = powers[..., n - 1] * inv
    return powers @ _SERIES.T


_BOTH_BRANCHES_UP_TO = 64  # points: below, both branches of zeta cost less than masking them


def zeta_reduced(x: np.ndarray, ir: np.ndarray, z0: np.ndarray, coefficients: np.ndarray):
    r"""``zeta(t, s)`` from the reduced argument ``x = t / sqrt(1 + 2 s**2)``; unchecked.

    The series ``z0 + sum_K c_K x**(2K)`` of :func:`zeta_series_coefficients` for
    ``x**2 < 1/2``: it keeps full relative precision where ``zeta`` is tiny, where
    ``1 - 8 T`` loses it all. ``1 - 8 T(sqrt(2) x, ir)`` (Owen's T,
    ``ir = 1 / sqrt(1 + 4 s**2)``) for ``1/2 <= x**2 < 36``, where
    ``zeta >= erf(x)**2 > 0.46`` makes its absolute error relative. ``1`` beyond, where
    ``1 - zeta <= 2 erfc(|x|)`` is below half an ulp of 1.

    Parameters
    ----------
    x : ndarray
        Reduced argument.
    ir, z0 : ndarray
        ``1 / sqrt(1 + 4 s**2)`` and ``zeta(0, s)``; broadcast with `x`.
    coefficients : ndarray, shape ``(..., ZETA_SERIES_TERMS)``
        Series coefficients, broadcasting with `x` on the leading axes.

    Returns
    -------
    ndarray
        ``zeta``, the shape of `x` broadcast with the others.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.gaussian import zeta, zeta_reduced, zeta_series_coefficients
    >>> s = 0.3; r = 1 + 4 * s * s; x = np.array([0.01, 2.0])
    >>> z0 = 2 / np.pi * np.arctan2(2 * s * s, np.sqrt(r))
    >>> got = zeta_reduced(x, 1 / np.sqrt(r), z0, zeta_series_coefficients(r))
    >>> bool(np.allclose(got, zeta(x * np.sqrt(1 + 2 * s * s), s), rtol=1e-15))
    True
    """
    x = np.asarray(x, dtype=np.float64)
    shared = np.ndim(ir) == 0 and np.ndim(z0) == 0 and np.ndim(coefficients) == 1
    if not shared:  # per-element parameters: index them with the branches
        x, ir, z0 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (x, ir, z0)))
        coefficients = np.broadcast_to(coefficients, (*x.shape, ZETA_SERIES_TERMS))
    out = np.ones(x.shape)  # |x| >= 6: 1 - zeta < 2 erfc(6) < 2**-54 rounds to 1
    x2 = x * x
    series = x2 < ZETA_SERIES_BELOW
    if series.all():  # every point on the series: no masks, the same sums
        out[...] = _zeta_series(x2, z0, coefficients)
        return out
    if shared and x.size <= _BOTH_BRANCHES_UP_TO:  # few points: both branches, one select
        # (the same per-point values as the masks below, in fewer calls: 1 - 8 T is 1 to
        # the bit at x^2 >= 36, since 8 T <= 2 erfc|x| < 2**-54, and NaN at NaN; the
        # series is summed only if a point is on it, at x^2 <= 36, where it is finite)
        out[...] = _zeta_owen(x, ir)
        if series.any():
            out[...] = np.where(series, _zeta_series(np.minimum(x2, 36.0), z0, coefficients), out)
        return out
    if series.any():
        # one summation order whatever the broadcasting (a scalar call equals an element)
        if shared:
            out[series] = _zeta_series(x2[series], z0, coefficients)
        else:
            out[series] = _zeta_series(x2[series], z0[series], coefficients[series])
    owen = ~series & (x2 < 36.0)
    if owen.any():
        out[owen] = _zeta_owen(x[owen], ir if shared else ir[owen])
    out[np.isnan(x)] = np.nan
    return out


def _zeta_series(x2, z0, coefficients):
    """``z0 + sum_K c_K x^(2K)``, the branch of :func:`zeta_reduced` for ``x^2 < 1/2``.

    One ``vecdot`` over the terms (a product and a sum over a short last axis cost two
    calls and, at a few tens of points, three times as much).
    """
    return z0 + np.vecdot(coefficients, _even_powers(x2))


def _zeta_owen(x, ir):
    """``1 - 8 T(sqrt(2) |x|, ir)``, the branch of :func:`zeta_reduced` for ``1/2 <= x^2 < 36``."""
    return 1.0 - 8.0 * owens_t(np.sqrt(2.0) * np.abs(x), ir)


def _even_powers(xs: np.ndarray) -> np.ndarray:
    """``(x^2, x^4, ..., x^(2 ZETA_SERIES_TERMS))`` ``(*xs.shape, ZETA_SERIES_TERMS)``.

    A running product (two calls whatever the batch): the term ``K`` carries ``K`` roundings,
    and ``x^2 < 1/2`` makes the last terms ``2^-18`` of the first.
    """
    powers = np.empty((*xs.shape, ZETA_SERIES_TERMS))
    powers[...] = xs[..., None]
    return np.multiply.accumulate(powers, axis=-1, out=powers)


def plackett_rule(r: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes and weights of Plackett's angle integral for :func:`erfc_sq_reduced`.

    ``A = arcsin(2 s**2 / (1 + 2 s**2)) = arctan2((r - 1) / 2, sqrt r)`` and the
    ``PLACKETT_NODES``-point Gauss-Legendre rule on ``[0, A]``: returns
    ``w_j = 1 / (1 + sin theta_j)`` and ``(2/pi) * weight_j``, shape ``(..., PLACKETT_NODES)``.

    Parameters
    ----------
    r : array_like
        ``1 + 4 s**2``: ``1 <= r <= 4e200 + 1`` (NaN propagates).

    Returns
    -------
    nodes, weights : ndarray

    Examples
    --------
    >>> from slr_theory.gaussian import plackett_rule
    >>> w, c = plackett_rule(1.0)  # s = 0: an empty interval
    >>> print(float(c.sum()))
    0.0
    """
    r = _ratio(r)
    angle = np.arctan2(0.5 * (r - 1.0), np.sqrt(r))[..., None]
    theta = 0.5 * angle * (_GLP_X + 1.0)
    return 1.0 / (1.0 + np.sin(theta)), (1.0 / np.pi) * angle * _GLP_W


# Gauss-Laguerre tiers for the tail of E erfc^2 (x >= 3): the integrand's branch point
# at -beta x^2 recedes as x grows, so fewer nodes reach the same precision
# (<= 7 ulp against 150 nodes, measured over 1 <= r <= 1e8).
@functools.cache
def _laguerre_tiers() -> tuple[tuple[float, np.ndarray, np.ndarray], ...]:
    """``(lower end, nodes, weights)`` of each tier, on first use."""
    return tuple((lo, *roots_laguerre(n)) for lo, n in ((3.0, 16), (4.0, 12), (6.0, 8)))


_PLACKETT_BELOW = 3.0


def _plackett(x, eh, el, nodes, weights, ec=None):
    """Plackett's branch of :func:`erfc_sq_reduced` (``x < 3``): ``erfc(x)^2`` plus its rule.

    Each node's ``e^{-2 x^2 w}`` is ``e^{-2 eh w} (1 - 2 el w)`` (the next term,
    ``2 (el w)^2 < 2^-100``, is below any rounding): the exponentials see the high part
    alone, so they are the same bits through either door of ``eh + el``
    (:mod:`~slr_theory.doubledouble`), and the low part enters as a first-order
    correction, ``2 el sum(c w e)``.
    """
    ec = erfc(x) if ec is None else ec
    ce = weights * np.exp(-((2.0 * eh)[..., None] * nodes))
    return ec * ec + (np.sum(ce, axis=-1) - 2.0 * el * np.sum(ce * nodes, axis=-1))


def _all_near(x, eh) -> bool:
    """Whether `x` and `eh` are float arrays of one shape, every ``x`` below Plackett's bound."""
    return (
        isinstance(x, np.ndarray)
        and isinstance(eh, np.ndarray)
        and x.dtype == np.float64
        and eh.dtype == np.float64
        and x.ndim > 0
        and x.shape == eh.shape
        and bool((x < _PLACKETT_BELOW).all())
    )


def erfc_sq_reduced(x, eh, el, rh, rl, nodes, weights, ec=None):
    r"""``E erfc(t + s Z)**2`` for ``t >= 0`` from reduced quantities; unchecked.

    ``x = t / sqrt(q) >= 0``, ``eh + el = x**2`` (double-double, or to ``2**-61`` from
    a rounded ``x``), ``rh + rl = 1 + 4 s**2`` (double-double), and the rule of
    :func:`plackett_rule`. Every term is
    positive, so tiny values keep full relative precision:

    - ``x < 3``: Plackett's identity for the bivariate normal orthant,

      .. math:: \mathbb{E}\,\mathrm{erfc}(X)^2 = \mathrm{erfc}(x)^2
                + \frac{2}{\pi}\int_0^{A} e^{-2x^2/(1+\sin\theta)}\,d\theta;

    - ``x >= 3``: with ``beta = 1 + 1/r``, the tail integral of ``d/dt E erfc^2``,

      .. math:: \frac{2}{\beta\sqrt\pi}\, e^{-\beta x^2} \int_0^\infty e^{-v}\,
                \frac{\mathrm{erfcx}\big(\sqrt{(x^2 + v/\beta)/r}\big)}{\sqrt{x^2 + v/\beta}}\, dv,

      by Gauss-Laguerre with 16, 12 or 8 nodes as ``x`` grows past 3, 4 and 6.

    Parameters
    ----------
    x, eh, el : ndarray
        The reduced argument and its square in double-double.
    rh, rl : ndarray
        ``1 + 4 s**2`` in double-double (broadcast with `x`).
    nodes, weights : ndarray, shape ``(..., PLACKETT_NODES)``
        From :func:`plackett_rule`.
    ec : ndarray, optional
        ``erfc(x)``, of `x`'s shape, when the caller has it (Plackett's branch uses it).

    Returns
    -------
    ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.gaussian import erfc_sq_reduced, mean_erfc_sq, plackett_rule
    >>> x = np.array([0.5, 4.0]); r = np.array(1.0 + 4 * 0.3**2)
    >>> got = erfc_sq_reduced(x, x * x, 0 * x, r, 0.0, *plackett_rule(r))
    >>> bool(np.allclose(got, mean_erfc_sq(x * np.sqrt(1 + 2 * 0.3**2), 0.3), rtol=1e-14))
    True
    """
    shared = np.ndim(nodes) == 1 and np.ndim(weights) == 1  # one rule for every element
    if shared and _all_near(x, eh):  # the loops' common case: no masks, the same sums
        return _plackett(x, eh, el, nodes, weights, ec)
    one_r = shared and np.ndim(rh) == 0 and np.ndim(rl) == 0  # one temperature: r a scalar
    if one_r:
        x, eh, el = np.broadcast_arrays(*(np.asarray(v, float) for v in (x, eh, el)))
        rh, rl = float(rh), float(rl)
    else:
        x, eh, el, rh, rl = np.broadcast_arrays(
            *(np.asarray(v, float) for v in (x, eh, el, rh, rl))
        )
    if not shared:
        nodes = np.broadcast_to(nodes, (*x.shape, PLACKETT_NODES))
        weights = np.broadcast_to(weights, (*x.shape, PLACKETT_NODES))
    out = np.full(x.shape, np.nan)  # NaN input stays NaN
    near = x < _PLACKETT_BELOW
    if near.any():
        out[near] = _plackett(
            x[near],
            eh[near],
            el[near],
            nodes if shared else nodes[near],
            weights if shared else weights[near],
            None if ec is None else np.broadcast_to(ec, x.shape)[near],
        )
    tiers = _laguerre_tiers()
    for i, (lo, lag_x, lag_w) in enumerate(tiers):
        hi = tiers[i + 1][0] if i + 1 < len(tiers) else np.inf
        tier = (x >= lo) & (x < hi)
        if not tier.any():
            continue
        rt, rlt = (rh, rl) if one_r else (rh[tier], rl[tier])  # the same operations either way
        beta = np.asarray(1.0 + 1.0 / rt)
        r1h, r1l = _dd.two_sum(rt, 1.0)
        r1l = r1l + rlt
        et = eh[tier]
        nh, nl = _dd.dd_mul(et, el[tier], r1h, r1l)
        # beta x^2, on a high part from eh alone: the same bits through either door of eh + el
        bh, bl = _dd.rebase(et * r1h / rt, *_dd.dd_div(nh, nl, rt, rlt))
        p = np.sqrt(et[..., None] + lag_x / beta[..., None])
        integral = np.sum(lag_w * (erfcx(p / np.sqrt(rt)[..., None]) / p), axis=-1)
        out[tier] = _dd.mul_exp_neg(TWO_OVER_SQRT_PI / beta * integral, bh, bl)
    return out
