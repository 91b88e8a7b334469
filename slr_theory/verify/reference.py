"""High-precision references (mpmath) and Monte Carlo estimators.

These are deliberately *independent* of the closed forms: each reference
integrates the defining expectation ``E h(mu + sigma Z)`` over ``Z`` with
mpmath's tanh-sinh quadrature at 40 digits, on panels placed at every feature
of the integrand (the Gaussian peak, the ``erf`` transition at ``mu + sigma z = 0``,
and the peak of ``exp(-(mu + sigma z)**2)`` times the density). mpmath's
convergence test is absolute, so the integrand is first divided by its largest
value on the panel grid: tiny expectations (``1e-300``) get full relative
accuracy instead of stopping early.
"""

from __future__ import annotations

from collections.abc import Callable

import mpmath as mp
import numpy as np

__all__ = [
    "MP_FUNCTIONS",
    "mc_expect",
    "mp_erf_pair",
    "mp_expect",
    "mp_gaussian_function",
]

_OFFSETS = (0.0, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
_Z_MAX = 60


def _panels(mu: mp.mpf, sigma: mp.mpf) -> list:
    features = [(mp.mpf(0), mp.mpf(1))]
    q = 1 + 2 * sigma**2
    features.append((-2 * mu * sigma / q, 1 / mp.sqrt(q)))
    q4 = 1 + 4 * sigma**2
    features.append((-4 * mu * sigma / q4, 1 / mp.sqrt(q4)))
    if sigma > 0:
        features.append((-mu / sigma, 1 / sigma))
    pts = {mp.mpf(z) for z in range(-_Z_MAX, _Z_MAX + 1, 2)}
    for c, w in features:
        for o in _OFFSETS:
            for sgn in (-1, 1):
                z = c + sgn * o * w
                if -_Z_MAX <= z <= _Z_MAX:
                    pts.add(z)
    return sorted(pts)


def mp_expect(h: Callable[[mp.mpf], mp.mpf], mu: float, sigma: float, dps: int = 40) -> mp.mpf:
    """``E h(mu + sigma Z)`` by panelled tanh-sinh quadrature at `dps` digits.

    Parameters
    ----------
    h : callable
        Function of one mpmath number.
    mu, sigma : float
        Mean and standard deviation (``sigma >= 0``; ``sigma = 0`` returns ``h(mu)``).

    Examples
    --------
    >>> import mpmath as mp
    >>> from slr_theory.verify.reference import mp_expect
    >>> print(mp.nstr(mp_expect(mp.erf, 1.0, 2.0), 15))  # erf(1/3)
    0.362648111766063
    """
    with mp.workdps(dps):
        mu, sigma = mp.mpf(mu), mp.mpf(sigma)
        if sigma == 0:
            return h(mu)

        def f(z):
            return h(mu + sigma * z) * mp.npdf(z)

        pts = _panels(mu, sigma)
        scale = max(abs(f(z)) for z in pts) or mp.mpf(1)
        return scale * mp.quad(lambda z: f(z) / scale, pts)


def _erfp(x):
    return 2 / mp.sqrt(mp.pi) * mp.exp(-(x**2))


def _one_minus_erf2(x):
    c = mp.erfc(abs(x))
    return c * (2 - c)


#: Integrands ``h`` for each function of :mod:`slr_theory.gaussian` that is
#: ``E h(mu + sigma Z)``.
MP_FUNCTIONS: dict[str, Callable[[mp.mpf], mp.mpf]] = {
    "mean_erf": mp.erf,
    "mean_erf_prime": _erfp,
    "mean_erf_second": lambda x: -2 * x * _erfp(x),
    "mean_x_erf": lambda x: x * mp.erf(x),
    "mean_x_erf_prime": lambda x: x * _erfp(x),
    "mean_x2_erf": lambda x: x**2 * mp.erf(x),
    "zeta": lambda x: mp.erf(x) ** 2,
    "zeta_c": _one_minus_erf2,
    "zeta_t": lambda x: 2 * mp.erf(x) * _erfp(x),
    "zeta_tt": lambda x: 2 * _erfp(x) ** 2 - 4 * x * mp.erf(x) * _erfp(x),
}


def mp_gaussian_function(name: str, mu: float, sigma: float, dps: int = 40) -> mp.mpf:
    """Reference value of ``slr_theory.gaussian.<name>(mu, sigma)``.

    Examples
    --------
    >>> from slr_theory.verify.reference import mp_gaussian_function
    >>> print(float(mp_gaussian_function("zeta", 0.0, 1.0)))
    0.4646247113309119
    """
    return mp_expect(MP_FUNCTIONS[name], mu, sigma, dps)


def mp_erf_pair(
    mu1: float, mu2: float, var1: float, cov: float, var2: float, dps: int = 40
) -> mp.mpf:
    """``E erf(X1) erf(X2)`` by conditioning on ``X1`` (one mpmath quadrature).

    ``X2 | X1 = mu2 + beta (X1 - mu1) + N(0, c)`` with ``beta = cov/var1``,
    ``c = var2 - cov**2/var1``, so the inner expectation is ``erf`` of a
    rescaled argument and the outer one is :func:`mp_expect`.
    """
    with mp.workdps(dps):
        mu1, mu2, var1, cov, var2 = map(mp.mpf, (mu1, mu2, var1, cov, var2))
        if var1 == 0:
            return mp.erf(mu1) * mp_expect(mp.erf, mu2, mp.sqrt(var2), dps)
        beta = cov / var1
        c = max(var2 - cov**2 / var1, mp.mpf(0))
        inner_scale = mp.sqrt(1 + 2 * c)

        def h(x1):
            return mp.erf(x1) * mp.erf((mu2 + beta * (x1 - mu1)) / inner_scale)

        return mp_expect(h, mu1, mp.sqrt(var1), dps)


def mc_expect(
    values: np.ndarray,
) -> tuple[float, float]:
    """Monte Carlo estimate and its standard error from i.i.d. samples.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.verify.reference import mc_expect
    >>> mean, se = mc_expect(np.array([1.0, 2.0, 3.0, 4.0]))
    >>> print(mean, round(se, 6))
    2.5 0.645497
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(n))
