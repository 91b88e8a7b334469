"""Gaussian means of erf and its derivatives, E erf(a X + b) and the like, in closed form to full double precision."""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import erf, roots_laguerre, roots_legendre

from .. import doubledouble as _dd
from ..validate import as_array, broadcast, nonnegative_array

__all__ = [
    "mean_erf",
    "mean_erf_prime",
    "mean_erf_second",
    "mean_erf_third",
    "mean_x2_erf",
    "mean_x_erf",
    "mean_x_erf_prime",
]


BOUND = 1e100


TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)


@functools.cache
def laguerre_rule() -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the 30-point Gauss-Laguerre rule for the tail integral of
    ``zeta_c`` (converges to < 1 ulp for every ``(t, s)``: the integrand is an entire
    function of exponential type < 1); computed on first use."""
    return roots_laguerre(30)


@functools.cache
def legendre40_rule() -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the 40-point Gauss-Legendre rule for Plackett's angle
    integral in ``erf_pair``; computed on first use."""
    return roots_legendre(40)


def ret(x: np.ndarray) -> np.ndarray:
    return x[()] if x.ndim == 0 else x


def prep(mu: ArrayLike, sigma: ArrayLike, mu_name: str = "mu", sigma_name: str = "sigma"):
    mu = as_array(mu, mu_name, bound=BOUND)
    sigma = nonnegative_array(sigma, sigma_name, bound=BOUND)
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
    mu, sigma, qh, *_ = prep(mu, sigma)
    return ret(erf(mu / np.sqrt(qh)))


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
    mu, sigma, qh, ql, eh, el = prep(mu, sigma)
    return ret(_dd.mul_exp_neg(TWO_OVER_SQRT_PI / np.sqrt(qh), eh, el))


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
    mu, sigma, qh, ql, eh, el = prep(mu, sigma)
    factor = -2.0 * TWO_OVER_SQRT_PI * mu / (qh * np.sqrt(qh))
    return ret(_dd.mul_exp_neg(factor, eh, el))


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
    mu, sigma, qh, _ql, eh, el = prep(mu, sigma)
    factor = -2.0 * TWO_OVER_SQRT_PI / (qh * np.sqrt(qh)) * (1.0 - 2.0 * (mu / qh) * mu)
    return ret(_dd.mul_exp_neg(factor, eh, el))


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
    mu, sigma, qh, ql, eh, el = prep(mu, sigma)
    sq = np.sqrt(qh)
    gauss = _dd.mul_exp_neg(TWO_OVER_SQRT_PI * sigma * (sigma / sq), eh, el)
    return ret(mu * erf(mu / sq) + gauss)


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
    mu, sigma, qh, ql, eh, el = prep(mu, sigma)
    factor = TWO_OVER_SQRT_PI * mu / (qh * np.sqrt(qh))
    return ret(_dd.mul_exp_neg(factor, eh, el))


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
    mu, sigma, qh, ql, eh, el = prep(mu, sigma)
    sq = np.sqrt(qh)
    # mu multiplies normal-range factors last: with a subnormal mu (or mu / sq) any
    # earlier product would drop bits (4e-12 relative at mu = 2.2e-311, sigma = 630)
    factor = mu * (2.0 * TWO_OVER_SQRT_PI * (sigma * (sigma / qh)) * ((1.0 + sigma * sigma) / sq))
    m2s2 = mu * mu + sigma * sigma
    tiny = np.abs(mu) < 1e-150 * sq  # erf(z) = 2 z / sqrt(pi) to double precision
    first = np.where(tiny, mu * (m2s2 * (TWO_OVER_SQRT_PI / sq)), m2s2 * erf(mu / sq))
    return ret(first + _dd.mul_exp_neg(factor, eh, el))
