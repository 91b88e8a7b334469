"""Products of erf at two correlated Gaussians (erf_pair), and the means of erf's derivatives of any order."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import erf

from .. import doubledouble as _dd
from ..validate import as_array, broadcast, nonnegative_array
from .means import BOUND, TWO_OVER_SQRT_PI, legendre40_rule, mean_erf, prep, ret
from .zeta import zeta, zeta_prep

__all__ = ["MAX_DERIVATIVE_ORDER", "erf_pair", "mean_erf_derivative", "zeta_derivative"]


def erf_pair(
    mu1: ArrayLike, mu2: ArrayLike, var1: ArrayLike, cov: ArrayLike, var2: ArrayLike
) -> np.ndarray:
    r"""``E erf(X1) erf(X2)`` for a jointly Gaussian pair.

    ``(X1, X2)`` has means ``(mu1, mu2)`` and covariance ``[[var1, cov], [cov, var2]]``.
    Write ``q_i = 1 + 2 var_i``, ``D = q1 q2 - 4 cov**2`` (``>= 1``) and
    ``A = arcsin(2 cov / sqrt(q1 q2)) = arctan2(2 cov, sqrt(D))``.

    Zero means (the lemma; arctan2 form, stable as the correlation tends to 1):

    .. math:: \mathbb{E}\,\mathrm{erf}(X_1)\mathrm{erf}(X_2) = \frac{2}{\pi}\,\mathrm{arctan2}(2\Sigma_{12}, \sqrt D)

    Non-zero means (bivariate normal CDF via Plackett's identity, in the angle
    form used by Drezner-Wesolowsky and Genz), with ``h = sqrt(2) mu1 / sqrt(q1)``,
    ``k = sqrt(2) mu2 / sqrt(q2)``:

    .. math:: \mathrm{erf}\Big(\frac{\mu_1}{\sqrt{q_1}}\Big)\mathrm{erf}\Big(\frac{\mu_2}{\sqrt{q_2}}\Big)
              + \frac{2}{\pi}\int_0^{A} \exp\!\Big(-\frac{h^2 - 2hk\sin\theta + k^2}{2\cos^2\theta}\Big)\, d\theta

    evaluated with 40-point Gauss-Legendre, the exponent rewritten as
    ``-(h - k)**2 / (2 cos**2) - hk / (1 + sin)`` (``theta >= 0``) to avoid cancellation.

    Parameters
    ----------
    mu1, mu2 : array_like
        Means.
    var1, var2 : array_like
        Variances, ``>= 0``.
    cov : array_like
        Covariance; the matrix must be positive semi-definite,
        ``cov**2 <= var1 var2`` (checked with relative slack ``1e-12``).

    Returns
    -------
    ndarray or numpy scalar
        Values in ``[-1, 1]``. The error is a few ulp of the larger of the two
        terms above (relative to the result except near a sign change).

    Examples
    --------
    >>> from slr_theory.gaussian import erf_pair
    >>> print(erf_pair(0.0, 0.0, 1.0, 1.0, 1.0))  # X1 = X2: zeta(0, 1)
    0.46455905439753997
    >>> print(erf_pair(0.5, -0.3, 1.0, 0.0, 2.0))  # independent: product of means
    -0.04768983489066381
    """
    m1 = as_array(mu1, "mu1", bound=BOUND)
    m2 = as_array(mu2, "mu2", bound=BOUND)
    v1 = nonnegative_array(var1, "var1", bound=BOUND)
    v2 = nonnegative_array(var2, "var2", bound=BOUND)
    c = as_array(cov, "cov", bound=BOUND)
    m1, m2, v1, c, v2 = broadcast(mu1=m1, mu2=m2, var1=v1, cov=c, var2=v2)
    ph, pl = _dd.two_prod(v1, v2)
    ch, cl = _dd.two_prod(c, c)
    det = (ph - ch) + (pl - cl)
    bad = det < -1e-12 * ph
    if bad.any():
        i = np.flatnonzero(bad)[0]
        raise ValueError(
            "the covariance must be positive semi-definite (cov**2 <= var1*var2), got "
            f"var1={v1.flat[i].item()!r}, cov={c.flat[i].item()!r}, var2={v2.flat[i].item()!r}."
        )
    det = np.maximum(det, 0.0)
    q1 = 1.0 + 2.0 * v1
    q2 = 1.0 + 2.0 * v2
    big_d = (1.0 + 2.0 * (v1 + v2)) + 4.0 * det
    angle = np.arctan2(2.0 * c, np.sqrt(big_d))
    out = np.array((2.0 / np.pi) * angle, dtype=np.float64)
    nonzero = np.asarray((m1 != 0.0) | (m2 != 0.0))
    if nonzero.any():
        a = angle[nonzero]
        sq1, sq2 = np.sqrt(q1[nonzero]), np.sqrt(q2[nonzero])
        h = (np.sqrt(2.0) * m1[nonzero] / sq1)[..., None]
        k = (np.sqrt(2.0) * m2[nonzero] / sq2)[..., None]
        gl_x, gl_w = legendre40_rule()
        theta = 0.5 * a[..., None] * (gl_x + 1.0)
        sin, cos2 = np.sin(theta), np.cos(theta) ** 2
        pos = theta >= 0
        expo = np.where(
            pos,
            -((h - k) ** 2) / (2.0 * cos2) - h * k / (1.0 + sin),
            -((h + k) ** 2) / (2.0 * cos2) + h * k / (1.0 - sin),
        )
        integral = 0.5 * a * np.sum(gl_w * np.exp(np.minimum(expo, 0.0)), axis=-1)
        indep = erf(m1[nonzero] / sq1) * erf(m2[nonzero] / sq2)
        out[nonzero] = indep + (2.0 / np.pi) * integral
    return ret(out)


def _hermite(n: int, x):
    """Physicists' Hermite polynomial H_n(x), ``d^n/dx^n e^{-x^2} = (-1)^n H_n(x) e^{-x^2}``."""
    h0, h1 = np.ones_like(x), 2.0 * x
    if n == 0:
        return h0
    for k in range(1, n):
        h0, h1 = h1, 2.0 * x * h1 - 2.0 * k * h0
    return h1


#: Highest derivative order of :func:`mean_erf_derivative` and :func:`zeta_derivative`.
#: Up to it every value is finite: ``|H_{n-1}(x)| e^{-x^2}`` stays below ``1e100``.
MAX_DERIVATIVE_ORDER = 50


#: Beyond ``|x| = 50`` every term ``H_m(x) e^{-x^2}`` (``m < 50``) is below ``e^{-2000}``:
#: the derivative rounds to 0, and the Hermite recurrence is not evaluated there.
_HERMITE_CUT = 50.0


def _order(n) -> int:
    """A derivative order: an integer in ``[0, MAX_DERIVATIVE_ORDER]`` (no bools, no fractions)."""
    import numbers

    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"`n` must be a non-negative integer, got {n!r}.")
    if n > MAX_DERIVATIVE_ORDER:
        raise ValueError(f"`n` must be <= {MAX_DERIVATIVE_ORDER}, got {n!r}.")
    return int(n)


def _quarter_split(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``q = g * 4**c`` exactly, ``g`` in ``[1/2, 2)``: then ``q**(-p/2) = g**(-p/2) * 2**(-c p)``,
    with no overflow and no underflow before the final :func:`numpy.ldexp`."""
    f, e = np.frexp(q)
    c = e // 2
    return np.ldexp(f, e - 2 * c), c.astype(np.int64)


def _hermite_arg(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` with the entries beyond the cut replaced by 0, and the mask of those entries."""
    far = np.abs(x) > _HERMITE_CUT
    return np.where(far, 0.0, x), far


def mean_erf_derivative(mu: ArrayLike, sigma: ArrayLike, n: int) -> np.ndarray:
    r"""``E erf^(n)(X)`` for any order ``0 <= n <= 50`` (``n = 0`` is :func:`mean_erf`).

    .. math:: \mathbb{E}\,\mathrm{erf}^{(n)}(\mu + \sigma Z) = q^{-n/2}\,\mathrm{erf}^{(n)}(\mu/\sqrt q)
              = q^{-n/2} \frac{2}{\sqrt\pi} (-1)^{n-1} H_{n-1}(x)\, e^{-x^2}, \quad x = \mu/\sqrt q

    (differentiate :func:`mean_erf` ``n`` times in ``mu``; ``H`` are Hermite polynomials).
    The dedicated functions for ``n <= 3`` avoid the Hermite cancellation near
    its zeros; this one serves higher orders (the curvature of the risk).

    Parameters
    ----------
    mu : array_like
        Mean, ``|mu| <= 1e100``.
    sigma : array_like
        Standard deviation, ``0 <= sigma <= 1e100``; broadcasts with `mu`.
    n : int
        Derivative order, ``0 <= n <= MAX_DERIVATIVE_ORDER`` (50).

    Returns
    -------
    ndarray or numpy scalar
        ``E erf^(n)(X)``; 0 where it is below the smallest double.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_erf_derivative
    >>> print(mean_erf_derivative(0.0, 0.0, 3))  # erf'''(0) = -4/sqrt(pi)
    -2.256758334191025
    """
    n = _order(n)
    if n == 0:
        return mean_erf(mu, sigma)
    mu, sigma, qh, _ql, eh, el = prep(mu, sigma)
    x, far = _hermite_arg(mu / np.sqrt(qh))
    g, c = _quarter_split(qh)
    m, j = g ** (-n / 2.0), c * n
    factor = (-1.0) ** (n - 1) * TWO_OVER_SQRT_PI * _hermite(n - 1, x) * m
    out = np.ldexp(_dd.mul_exp_neg(factor, eh, el), -j)
    return ret(np.where(far, 0.0, out))


def zeta_derivative(t: ArrayLike, s: ArrayLike, n: int) -> np.ndarray:
    r"""``d^n zeta / d t^n`` for any order ``0 <= n <= 50`` (``n = 0`` is :func:`zeta`).

    With ``x = t/sqrt(q)`` and Leibniz's rule on :func:`zeta_t`,

    .. math:: \partial_t^n \zeta = \frac{4}{\sqrt{\pi q}}\, q^{-(n-1)/2}
              \sum_{k=0}^{n-1} \binom{n-1}{k} (-1)^{n-1-k} H_{n-1-k}(x)\, e^{-x^2}\, D_k,

    ``D_0 = erf(x/sqrt r)``, ``D_k = r^{-k/2} (2/sqrt pi) (-1)^{k-1} H_{k-1}(x/sqrt r) e^{-x^2/r}``.

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.
    n : int
        Derivative order, ``0 <= n <= MAX_DERIVATIVE_ORDER`` (50).

    Returns
    -------
    ndarray or numpy scalar
        ``d^n zeta / dt^n (t, s)``; 0 where it is below the smallest double.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_derivative
    >>> print(zeta_derivative(0.0, 0.0, 2))  # 8/pi
    2.546479089470325
    """
    from math import comb

    n = _order(n)
    if n == 0:
        return zeta(t, s)
    t, s, qh, _ql, rh, rl, eh, el = zeta_prep(t, s)
    x, far = _hermite_arg(t / np.sqrt(qh))
    sr = np.sqrt(rh)
    e2h, e2l = _dd.dd_div(eh, el, rh, rl)
    sh, sl = _dd.two_sum(eh, e2h)
    qg, qc = _quarter_split(qh)
    rg, rc = _quarter_split(rh)
    pm, pj = qg ** (-n / 2.0), qc * n  # q^{-n/2} = pm 2^-pj, the prefactor's power of q
    pre = 2.0 * TWO_OVER_SQRT_PI * pm
    m = n - 1
    out = _dd.mul_exp_neg(pre * _hermite(m, x) * (-1.0) ** m * erf(x / sr), eh, el)
    for k in range(1, m + 1):
        rm, rj = rg ** (-k / 2.0), rc * k  # r^{-k/2}, scaled the same way
        coef = comb(m, k) * (-1.0) ** (m - k) * _hermite(m - k, x)
        dk = (-1.0) ** (k - 1) * TWO_OVER_SQRT_PI * _hermite(k - 1, x / sr) * rm
        out = out + np.ldexp(_dd.mul_exp_neg(pre * coef * dk, sh, sl + (el + e2l)), -rj)
    return ret(np.where(far, 0.0, np.ldexp(out, -pj)))
