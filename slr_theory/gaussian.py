r"""Closed-form Gaussian expectations of ``erf`` and its derivatives.

Every function takes a Gaussian ``X ~ N(mu, sigma**2)`` through its mean `mu`
and standard deviation `sigma >= 0` (``sigma = 0`` is the point mass at `mu`),
broadcasts its arguments with NumPy rules, and returns a float64 array (a NumPy
scalar for scalar input). Throughout, ``Z ~ N(0, 1)``, ``q = 1 + 2 sigma**2``
and ``erf'(x) = 2 exp(-x**2) / sqrt(pi)``.

Input policy (tested): NaN propagates to NaN in the same output positions;
negative `sigma`, infinite values, values beyond ``1e100`` in magnitude, and
shapes that do not broadcast raise :class:`ValueError` naming the argument.

Accuracy: within a few ulp of 40-digit references over ``|mu| <= 1e4`` and
``0 <= sigma <= 1e4`` (see ``docs/accuracy.md``), including tails that
underflow gracefully: exponents ``mu**2 / q`` are carried in double-double so
``exp(-mu**2 / q)`` does not inherit the ``2 mu**2 / q`` condition number of
a rounded exponent, and tiny ``zeta`` / ``zeta_c`` are computed from positive
integrals rather than as differences of numbers near 1.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import erf, erfc, erfcx, owens_t, roots_laguerre, roots_legendre

from . import doubledouble as _dd
from .validate import as_array, broadcast, nonnegative_array

__all__ = [
    "MAX_DERIVATIVE_ORDER",
    "PLACKETT_NODES",
    "ZETA_SERIES_BELOW",
    "ZETA_SERIES_TERMS",
    "erf_pair",
    "erfc_sq_reduced",
    "mean_erf",
    "mean_erf_derivative",
    "mean_erf_prime",
    "mean_erf_second",
    "mean_erf_third",
    "mean_erfc_sq",
    "mean_x2_erf",
    "mean_x_erf",
    "mean_x_erf_prime",
    "plackett_rule",
    "zeta",
    "zeta_c",
    "zeta_derivative",
    "zeta_reduced",
    "zeta_series_coefficients",
    "zeta_t",
    "zeta_tt",
    "zeta_ttt",
]

_BOUND = 1e100
_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
# 30-point Gauss-Laguerre for the tail integral of zeta_c (converges to < 1 ulp
# for every (t, s): the integrand is an entire function of exponential type < 1).
_LAG_X, _LAG_W = roots_laguerre(30)
# 40-point Gauss-Legendre for Plackett's angle integral in erf_pair.
_GL40_X, _GL40_W = roots_legendre(40)


def _ret(x: np.ndarray) -> np.ndarray:
    return x[()] if x.ndim == 0 else x


def _prep(mu: ArrayLike, sigma: ArrayLike, mu_name: str = "mu", sigma_name: str = "sigma"):
    mu = as_array(mu, mu_name, bound=_BOUND)
    sigma = nonnegative_array(sigma, sigma_name, bound=_BOUND)
    mu, sigma = broadcast(**{mu_name: mu, sigma_name: sigma})
    qh, ql = _dd.one_plus_c_sq(sigma, 2.0)
    eh, el = _dd.sq_over(mu, qh, ql)  # mu**2 / q in double-double
    return mu, sigma, qh, ql, eh, el


def mean_erf(mu: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Expectation of ``erf(X)`` for ``X ~ N(mu, sigma**2)``.

    .. math:: \mathbb{E}\,\mathrm{erf}(\mu + \sigma Z) = \mathrm{erf}\!\left(\frac{\mu}{\sqrt{1+2\sigma^2}}\right)

    Parameters
    ----------
    mu : array_like
        Mean, ``|mu| <= 1e100``.
    sigma : array_like
        Standard deviation, ``0 <= sigma <= 1e100``. Broadcasts with `mu`.

    Returns
    -------
    ndarray or numpy scalar
        Values in ``(-1, 1)``, odd in `mu`.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_erf
    >>> print(mean_erf(1.0, 0.0))  # sigma = 0 is erf itself
    0.8427007929497148
    >>> print(mean_erf(1.0, 2.0))  # erf(1/3)
    0.36264811176606293
    """
    mu, sigma, qh, *_ = _prep(mu, sigma)
    return _ret(erf(mu / np.sqrt(qh)))


def mean_erf_prime(mu: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Expectation of ``erf'(X) = 2 exp(-X**2) / sqrt(pi)``.

    .. math:: \mathbb{E}\,\mathrm{erf}'(\mu + \sigma Z) = \frac{2}{\sqrt{\pi q}}\, e^{-\mu^2/q},
              \qquad q = 1 + 2\sigma^2

    Parameters
    ----------
    mu, sigma : array_like
        Mean and standard deviation (``sigma >= 0``), broadcast together.

    Returns
    -------
    ndarray or numpy scalar
        Positive; underflows to 0 only where the exact value is below the
        smallest normal double (subnormal results are correctly rounded).

    Examples
    --------
    >>> from slr_theory.gaussian import mean_erf_prime
    >>> print(mean_erf_prime(0.0, 0.0))  # 2 / sqrt(pi)
    1.1283791670955126
    >>> print(mean_erf_prime(26.0, 0.0))  # deep tail, full precision
    2.9470349932662693e-294
    """
    mu, sigma, qh, ql, eh, el = _prep(mu, sigma)
    return _ret(_dd.mul_exp_neg(_TWO_OVER_SQRT_PI / np.sqrt(qh), eh, el))


def mean_erf_second(mu: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Expectation of ``erf''(X) = -2 X erf'(X)``.

    .. math:: \mathbb{E}\,\mathrm{erf}''(\mu + \sigma Z) = -\frac{4\mu}{\sqrt{\pi}\, q^{3/2}}\, e^{-\mu^2/q}

    Obtained by differentiating :func:`mean_erf_prime` in `mu` under the
    integral sign.

    Parameters
    ----------
    mu : array_like
        Mean, ``|mu| <= 1e100``.
    sigma : array_like
        Standard deviation, ``0 <= sigma <= 1e100``; broadcasts with `mu`.

    Returns
    -------
    ndarray or numpy scalar
        ``E erf''(X)``, odd in `mu`.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_erf_second
    >>> print(mean_erf_second(1.0, 0.0))  # -4 e^{-1} / sqrt(pi)
    -0.8302149948411894
    """
    mu, sigma, qh, ql, eh, el = _prep(mu, sigma)
    factor = -2.0 * _TWO_OVER_SQRT_PI * mu / (qh * np.sqrt(qh))
    return _ret(_dd.mul_exp_neg(factor, eh, el))


def mean_erf_third(mu: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Expectation of the third derivative ``erf^(3)(X) = (4 X**2 - 2) erf'(X)``.

    .. math:: \mathbb{E}\,\mathrm{erf}^{(3)}(\mu + \sigma Z) = -\frac{4}{\sqrt{\pi}\, q^{3/2}}
              \Big(1 - \frac{2\mu^2}{q}\Big) e^{-\mu^2/q}

    (``d/dmu`` of :func:`mean_erf_second`; needed for the curvature of the risk in ``kappa``.)

    Parameters
    ----------
    mu : array_like
        Mean, ``|mu| <= 1e100``.
    sigma : array_like
        Standard deviation, ``0 <= sigma <= 1e100``; broadcasts with `mu`.

    Returns
    -------
    ndarray or numpy scalar
        ``E erf'''(X)``, even in `mu`.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_erf_third
    >>> print(mean_erf_third(0.0, 0.0))  # erf^(3)(0) = -4/sqrt(pi)
    -2.256758334191025
    """
    mu, sigma, qh, _ql, eh, el = _prep(mu, sigma)
    factor = -2.0 * _TWO_OVER_SQRT_PI / (qh * np.sqrt(qh)) * (1.0 - 2.0 * (mu / qh) * mu)
    return _ret(_dd.mul_exp_neg(factor, eh, el))


def mean_x_erf(mu: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Expectation of ``X erf(X)`` (Stein's lemma).

    .. math:: \mathbb{E}[X\,\mathrm{erf}(X)] = \mu\,\mathrm{erf}(\mu/\sqrt q)
              + \frac{2\sigma^2}{\sqrt{\pi q}}\, e^{-\mu^2/q}

    Both terms are non-negative, so there is no cancellation. Even in `mu`.

    Parameters
    ----------
    mu : array_like
        Mean, ``|mu| <= 1e100``.
    sigma : array_like
        Standard deviation, ``0 <= sigma <= 1e100``; broadcasts with `mu`.

    Returns
    -------
    ndarray or numpy scalar
        ``E X erf(X) >= 0``, even in `mu`.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_x_erf
    >>> print(mean_x_erf(0.0, 1.0))  # E|Z| erf(|Z|) = 2 / sqrt(3 pi)
    0.65147001587056
    """
    mu, sigma, qh, ql, eh, el = _prep(mu, sigma)
    sq = np.sqrt(qh)
    gauss = _dd.mul_exp_neg(_TWO_OVER_SQRT_PI * sigma * (sigma / sq), eh, el)
    return _ret(mu * erf(mu / sq) + gauss)


def mean_x_erf_prime(mu: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Expectation of ``X erf'(X)``.

    .. math:: \mathbb{E}[X\,\mathrm{erf}'(X)] = \frac{2\mu}{\sqrt\pi\, q^{3/2}}\, e^{-\mu^2/q}

    (``mu E erf' + sigma**2 E erf''`` with the factor ``1 - 2 sigma**2 / q = 1 / q``
    simplified exactly.) Equals ``-mean_erf_second / 2``.

    Parameters
    ----------
    mu : array_like
        Mean, ``|mu| <= 1e100``.
    sigma : array_like
        Standard deviation, ``0 <= sigma <= 1e100``; broadcasts with `mu`.

    Returns
    -------
    ndarray or numpy scalar
        ``E X erf'(X)``, odd in `mu`.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_x_erf_prime
    >>> print(mean_x_erf_prime(1.0, 1.0))  # 2 e^{-1/3} / (sqrt(pi) 3^{3/2})
    0.1555995547570865
    """
    mu, sigma, qh, ql, eh, el = _prep(mu, sigma)
    factor = _TWO_OVER_SQRT_PI * mu / (qh * np.sqrt(qh))
    return _ret(_dd.mul_exp_neg(factor, eh, el))


def mean_x2_erf(mu: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Expectation of ``X**2 erf(X)``.

    .. math:: \mathbb{E}[X^2\mathrm{erf}(X)] = (\mu^2+\sigma^2)\,\mathrm{erf}(\mu/\sqrt q)
              + \frac{4\mu\sigma^2(1+\sigma^2)}{\sqrt\pi\, q^{3/2}}\, e^{-\mu^2/q}

    Both terms have the sign of `mu` (odd function of `mu`): no cancellation.

    Parameters
    ----------
    mu : array_like
        Mean, ``|mu| <= 1e100``.
    sigma : array_like
        Standard deviation, ``0 <= sigma <= 1e100``; broadcasts with `mu`.

    Returns
    -------
    ndarray or numpy scalar
        ``E X**2 erf(X)``, odd in `mu`.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_x2_erf
    >>> print(mean_x2_erf(1.0, 0.0))
    0.8427007929497148
    """
    mu, sigma, qh, ql, eh, el = _prep(mu, sigma)
    sq = np.sqrt(qh)
    # mu multiplies normal-range factors last: with a subnormal mu (or mu / sq) any
    # earlier product would drop bits (4e-12 relative at mu = 2.2e-311, sigma = 630)
    factor = mu * (2.0 * _TWO_OVER_SQRT_PI * (sigma * (sigma / qh)) * ((1.0 + sigma * sigma) / sq))
    m2s2 = mu * mu + sigma * sigma
    tiny = np.abs(mu) < 1e-150 * sq  # erf(z) = 2 z / sqrt(pi) to double precision
    first = np.where(tiny, mu * (m2s2 * (_TWO_OVER_SQRT_PI / sq)), m2s2 * erf(mu / sq))
    return _ret(first + _dd.mul_exp_neg(factor, eh, el))


# ----------------------------------------------------------------------------
# zeta(t, s) = E erf(t + s Z)^2 and its relatives


def _zeta_prep(t: ArrayLike, s: ArrayLike):
    t, s, qh, ql, eh, el = _prep(t, s, "t", "s")
    rh, rl = _dd.one_plus_c_sq(s, 4.0)
    return t, s, qh, ql, rh, rl, eh, el


def _zeta_c_core(t, qh, rh, eh, el):
    # 1 - zeta = (2/sqrt(pi)) e^{-x^2} int_0^inf e^{-v} erf(sqrt((x^2+v)/r)) / sqrt(x^2+v) dv
    p = np.sqrt(eh[..., None] + _LAG_X)
    integral = np.sum(_LAG_W * (erf(p / np.sqrt(rh)[..., None]) / p), axis=-1)
    return _dd.mul_exp_neg(_TWO_OVER_SQRT_PI * integral, eh, el)


def zeta_c(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""The complement ``1 - zeta(t, s) = E[1 - erf(t + s Z)**2]``, accurate when tiny.

    With ``x = |t| / sqrt(q)`` and ``r = 1 + 4 s**2``, integrating ``zeta_t``
    from ``|t|`` to infinity and substituting ``v = w**2 - x**2`` gives a
    positive integral, evaluated with 30-point Gauss-Laguerre:

    .. math:: 1 - \zeta(t, s) = \frac{2}{\sqrt\pi}\, e^{-x^2} \int_0^\infty e^{-v}\,
              \frac{\mathrm{erf}\big(\sqrt{(x^2+v)/r}\big)}{\sqrt{x^2+v}}\, dv

    Parameters
    ----------
    t : array_like
        Mean of the Gaussian argument.
    s : array_like
        Its standard deviation, ``s >= 0``.

    Returns
    -------
    ndarray or numpy scalar
        In ``(0, 1]``, even in `t`; full relative precision down to the
        smallest normal double (e.g. ``t ~ 26`` with ``s = 0``).

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_c
    >>> print(zeta_c(0.0, 0.0))
    1.0
    >>> print(zeta_c(10.0, 0.0))  # 1 - erf(10)^2 ~ 2 erfc(10)
    4.1769751675250885e-45
    """
    t, s, qh, ql, rh, rl, eh, el = _zeta_prep(t, s)
    z = _zeta_small_and_large(t, s, qh, rh)
    out = np.array(1.0 - z, dtype=np.float64)
    tail = np.asarray(z >= 0.5)  # 1 - zeta <= 1/2: the positive tail integral keeps its digits
    if tail.any():
        out[tail] = _zeta_c_core(t[tail], qh[tail], rh[tail], eh[tail], el[tail])
    return _ret(out)


def zeta(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``zeta(t, s) = E erf(t + s Z)**2``, with full relative precision everywhere.

    The paper's closed form is Owen's T:

    .. math:: \zeta(t, s) = 1 - 8\, T\!\left(\frac{\sqrt2\, t}{\sqrt{1+2s^2}},
              \frac{1}{\sqrt{1+4s^2}}\right),

    but ``1 - 8T`` loses all relative precision where ``zeta`` is small. This
    implementation (:func:`zeta_reduced`, shared with the risk engine) uses it
    where ``zeta >= 1/2`` and otherwise the series of the positive decomposition

    .. math:: \zeta(t, s) = \frac{2}{\pi}\arctan\frac{2s^2}{\sqrt{1+4s^2}}
              + 2\int_0^{|t|/\sqrt{q}} \mathrm{erf}(w/\sqrt r)\, \mathrm{erf}'(w)\, dw

    in powers of ``t**2 / q`` (:func:`zeta_series_coefficients`; there
    ``|t| / sqrt(q) < 0.74`` by Jensen's inequality).

    Parameters
    ----------
    t : array_like
        Mean.
    s : array_like
        Standard deviation, ``s >= 0``.

    Returns
    -------
    ndarray or numpy scalar
        In ``[0, 1)``, even in `t`, increasing in ``|t|``. Near the origin
        ``zeta ~ 4 (t**2 + s**2) / pi``, kept to full precision down to the
        smallest normal double.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta
    >>> print(zeta(0.0, 1.0))  # (2/pi) arcsin(2/3)
    0.46455905439753997
    >>> print(zeta(0.0, 1e-3))  # tiny: 1 - 8T would give rounding noise here
    1.2732369982620153e-06
    """
    t, s, qh, _ql, rh, _rl, _eh, _el = _zeta_prep(t, s)
    return _ret(_zeta_small_and_large(t, s, qh, rh))


def _zeta_small_and_large(t, s, qh, rh):
    z0 = (2.0 / np.pi) * np.arctan2(2.0 * s * s, np.sqrt(rh))
    coefficients = zeta_series_coefficients(rh)
    return np.asarray(zeta_reduced(np.abs(t) / np.sqrt(qh), 1.0 / np.sqrt(rh), z0, coefficients))


def mean_erfc_sq(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``E erfc(t + s Z)**2``, with full relative precision where it is tiny.

    This is the informative part of the risk at the optimum (``kappa = nu = 1``):
    ``1 - 2 E erf(X) + zeta(t, s)``, a difference of numbers near 1 that is
    exponentially small in ``t**2``. With ``x = |t| / sqrt(q)`` it is computed from
    positive terms only (:func:`erfc_sq_reduced`, shared with the risk engine):
    Plackett's angle integral for ``x < 3``,

    .. math:: \mathbb{E}\,\mathrm{erfc}(X)^2 = \mathrm{erfc}(x)^2
              + \frac{2}{\pi}\int_0^{A} e^{-2x^2/(1+\sin\theta)}\,d\theta,
              \qquad A = \arcsin\frac{2s^2}{1+2s^2},

    and beyond, with ``beta = 1 + 1/r``, the tail integral

    .. math:: \mathbb{E}\,\mathrm{erfc}(X)^2 = \frac{2}{\beta\sqrt\pi}\, e^{-\beta x^2}
              \int_0^\infty e^{-v}\, \frac{\mathrm{erfcx}\big(\sqrt{(x^2 + v/\beta)/r}\big)}{\sqrt{x^2 + v/\beta}}\, dv.

    For ``t < 0``, ``E erfc(X)**2 = 4 - 4 erfc(x) + E erfc(|t| + sZ)**2`` (all terms positive).

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.

    Returns
    -------
    ndarray or numpy scalar
        ``E erfc(t + sZ)**2`` in ``(0, 4)``, to full relative precision when tiny.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_erfc_sq
    >>> print(mean_erfc_sq(0.0, 0.0))
    1.0
    >>> print(mean_erfc_sq(10.0, 0.0))  # erfc(10)^2
    4.361780387530313e-90
    """
    t, s, qh, _ql, rh, rl, eh, el = _zeta_prep(t, s)
    x = np.abs(t) / np.sqrt(qh)
    out = erfc_sq_reduced(x, eh, el, rh, rl, *plackett_rule(rh))
    neg = t < 0
    if np.any(neg):
        out = np.where(neg, (4.0 - 4.0 * erfc(x)) + out, out)
    return _ret(np.asarray(out, dtype=np.float64))


def zeta_t(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``d zeta / d t``, odd in `t`.

    .. math:: \partial_t \zeta(t, s) = \frac{2}{\sqrt q}\, \mathrm{erf}\!\left(\frac{t}{\sqrt{qr}}\right)
              \mathrm{erf}'\!\left(\frac{t}{\sqrt q}\right), \quad q = 1 + 2s^2,\ r = 1 + 4s^2

    (``2 E[erf(X) erf'(X)]``: complete the square in ``exp(-X**2)`` times the
    Gaussian density, then apply :func:`mean_erf`.)

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.

    Returns
    -------
    ndarray or numpy scalar
        ``d zeta / dt``, odd in `t`.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_t
    >>> print(zeta_t(1.0, 0.0))  # 2 erf(1) erf'(1)
    0.6996228344714137
    """
    t, s, qh, ql, rh, rl, eh, el = _zeta_prep(t, s)
    x = t / np.sqrt(qh)
    factor = 2.0 * _TWO_OVER_SQRT_PI * erf(x / np.sqrt(rh)) / np.sqrt(qh)
    return _ret(_dd.mul_exp_neg(factor, eh, el))


def zeta_tt(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``d^2 zeta / d t^2``, even in `t`; changes sign once for ``t > 0``.

    .. math:: \partial_t^2 \zeta = \frac{4}{\sqrt\pi\, q}\, e^{-x^2}
              \left[\frac{2}{\sqrt{\pi r}} e^{-x^2/r} - 2x\,\mathrm{erf}(x/\sqrt r)\right],
              \quad x = t/\sqrt q

    Near its zero the relative error grows like the condition number of the
    bracket (both terms are accurate to a few ulp).

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.

    Returns
    -------
    ndarray or numpy scalar
        ``d^2 zeta / dt^2``, even in `t`.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_tt
    >>> print(zeta_tt(0.0, 0.0))  # 8 / pi
    2.546479089470325
    """
    t, s, qh, ql, rh, rl, eh, el = _zeta_prep(t, s)
    x = t / np.sqrt(qh)
    e2h, e2l = _dd.dd_div(eh, el, rh, rl)
    sr = np.sqrt(rh)
    pre = 2.0 * _TWO_OVER_SQRT_PI / qh
    sh, sl = _dd.two_sum(eh, e2h)
    first = _dd.mul_exp_neg(pre * _TWO_OVER_SQRT_PI / sr, sh, sl + (el + e2l))
    second = _dd.mul_exp_neg(pre * 2.0 * x * erf(x / sr), eh, el)
    return _ret(first - second)


def zeta_ttt(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``d^3 zeta / d t^3``, odd in `t`.

    .. math:: \partial_t^3 \zeta = \frac{8}{\sqrt\pi\, q^{3/2}}\, e^{-x^2}
              \Big[(2x^2 - 1)\,\mathrm{erf}(x/\sqrt r) - x\Big(2 + \frac1r\Big)\frac{2}{\sqrt{\pi r}}e^{-x^2/r}\Big],
              \quad x = t/\sqrt q

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.

    Returns
    -------
    ndarray or numpy scalar
        ``d^3 zeta / dt^3``, odd in `t`.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_ttt
    >>> print(zeta_ttt(0.0, 1.0))
    -0.0
    """
    t, s, qh, _ql, rh, rl, eh, el = _zeta_prep(t, s)
    x = t / np.sqrt(qh)
    sr = np.sqrt(rh)
    e2h, e2l = _dd.dd_div(eh, el, rh, rl)
    sh, sl = _dd.two_sum(eh, e2h)
    pre = 4.0 * _TWO_OVER_SQRT_PI / (qh * np.sqrt(qh))
    first = _dd.mul_exp_neg(pre * (2.0 * x * x - 1.0) * erf(x / sr), eh, el)
    second = _dd.mul_exp_neg(
        pre * x * (2.0 + 1.0 / rh) * _TWO_OVER_SQRT_PI / sr, sh, sl + (el + e2l)
    )
    return _ret(first - second)


# ----------------------------------------------------------------------------
# E erf(X1) erf(X2) for a jointly Gaussian pair


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
    m1 = as_array(mu1, "mu1", bound=_BOUND)
    m2 = as_array(mu2, "mu2", bound=_BOUND)
    v1 = nonnegative_array(var1, "var1", bound=_BOUND)
    v2 = nonnegative_array(var2, "var2", bound=_BOUND)
    c = as_array(cov, "cov", bound=_BOUND)
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
        theta = 0.5 * a[..., None] * (_GL40_X + 1.0)
        sin, cos2 = np.sin(theta), np.cos(theta) ** 2
        pos = theta >= 0
        expo = np.where(
            pos,
            -((h - k) ** 2) / (2.0 * cos2) - h * k / (1.0 + sin),
            -((h + k) ** 2) / (2.0 * cos2) + h * k / (1.0 - sin),
        )
        integral = 0.5 * a * np.sum(_GL40_W * np.exp(np.minimum(expo, 0.0)), axis=-1)
        indep = erf(m1[nonzero] / sq1) * erf(m2[nonzero] / sq2)
        out[nonzero] = indep + (2.0 / np.pi) * integral
    return _ret(out)


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
    mu, sigma, qh, _ql, eh, el = _prep(mu, sigma)
    x, far = _hermite_arg(mu / np.sqrt(qh))
    g, c = _quarter_split(qh)
    m, j = g ** (-n / 2.0), c * n
    factor = (-1.0) ** (n - 1) * _TWO_OVER_SQRT_PI * _hermite(n - 1, x) * m
    out = np.ldexp(_dd.mul_exp_neg(factor, eh, el), -j)
    return _ret(np.where(far, 0.0, out))


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
    t, s, qh, _ql, rh, rl, eh, el = _zeta_prep(t, s)
    x, far = _hermite_arg(t / np.sqrt(qh))
    sr = np.sqrt(rh)
    e2h, e2l = _dd.dd_div(eh, el, rh, rl)
    sh, sl = _dd.two_sum(eh, e2h)
    qg, qc = _quarter_split(qh)
    rg, rc = _quarter_split(rh)
    pm, pj = qg ** (-n / 2.0), qc * n  # q^{-n/2} = pm 2^-pj, the prefactor's power of q
    pre = 2.0 * _TWO_OVER_SQRT_PI * pm
    m = n - 1
    out = _dd.mul_exp_neg(pre * _hermite(m, x) * (-1.0) ** m * erf(x / sr), eh, el)
    for k in range(1, m + 1):
        rm, rj = rg ** (-k / 2.0), rc * k  # r^{-k/2}, scaled the same way
        coef = comb(m, k) * (-1.0) ** (m - k) * _hermite(m - k, x)
        dk = (-1.0) ** (k - 1) * _TWO_OVER_SQRT_PI * _hermite(k - 1, x / sr) * rm
        out = out + np.ldexp(_dd.mul_exp_neg(pre * coef * dk, sh, sl + (el + e2l)), -rj)
    return _ret(np.where(far, 0.0, np.ldexp(out, -pj)))


# ----------------------------------------------------------------------------
# Reduced forms shared with the risk engine (slr_theory.engine): the same code
# evaluates zeta and E erfc^2 for the public functions above and, with the
# temperature's constants tabulated once, for every step of the dynamics.

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
_GLP_X, _GLP_W = roots_legendre(PLACKETT_NODES)


def _ratio(r) -> np.ndarray:
    """``r = 1 + 4 s**2`` as a float array: ``1 <= r``, finite, at most ``4e200 + 1``."""
    r = as_array(r, "r", bound=4 * _BOUND**2 + 1)
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
_LAG_TIERS = tuple((lo, *roots_laguerre(n)) for lo, n in ((3.0, 16), (4.0, 12), (6.0, 8)))
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
    for i, (lo, lag_x, lag_w) in enumerate(_LAG_TIERS):
        hi = _LAG_TIERS[i + 1][0] if i + 1 < len(_LAG_TIERS) else np.inf
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
        out[tier] = _dd.mul_exp_neg(_TWO_OVER_SQRT_PI / beta * integral, bh, bl)
    return out
