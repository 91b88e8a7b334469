"""High-precision references (mpmath) and Monte Carlo estimators.

These are deliberately *independent* of the closed forms: each reference
integrates the defining expectation ``E h(mu + sigma Z)`` over ``Z`` with
mpmath's Gauss-Legendre quadrature at 40 digits by default (the registered checks and
the tests ask for :data:`CHECK_DPS`; Gauss-Legendre agrees with tanh-sinh to 30+ digits
on the stress points, 4x faster), on short panels placed at every feature
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

from ..sampling import mean_and_stderr

__all__ = [
    "CHECK_DPS",
    "MP_DERIVATIVES",
    "MP_FUNCTIONS",
    "MP_NONLINEARITIES",
    "mc_expect",
    "mp_cancellation_scale",
    "mp_erf_pair",
    "mp_expect",
    "mp_gaussian_function",
]

#: Significant digits the registered checks (``slr-theory verify``) and the tests ask of a
#: reference: 14 beyond a double's rounding, so an error of one ulp is read to 1e-14 of
#: itself (the escalation on cancellation still adds the digits a result loses).
CHECK_DPS = 30

_OFFSETS = (0.0, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
_Z_MAX = 60


def _panels(mu: mp.mpf, sigma: mp.mpf, kinks=()) -> list:
    features = [(mp.mpf(0), mp.mpf(1))]
    if sigma > 0:  # a kink of h: a panel ends there (offset 0), so each panel is smooth
        features += [((mp.mpf(c) - mu) / sigma, 1 / sigma) for c in kinks]
    q = 1 + 2 * sigma**2
    features.append((-2 * mu * sigma / q, 1 / mp.sqrt(q)))
    q4 = 1 + 4 * sigma**2
    features.append((-4 * mu * sigma / q4, 1 / mp.sqrt(q4)))
    if sigma > 0:
        features.append((-mu / sigma, 1 / sigma))
    sgn = -1 if mu < 0 else 1  # exponential tails e^{-c |x|} (tanh): peaks at -c sigma sgn
    features += [(-2 * sgn * sigma, mp.mpf(1)), (-4 * sgn * sigma, mp.mpf(1))]
    pts = {mp.mpf(z) for z in range(-_Z_MAX, _Z_MAX + 1, 2)}
    for c, w in features:
        for o in _OFFSETS:
            for sgn in (-1, 1):
                z = c + sgn * o * w
                if -_Z_MAX <= z <= _Z_MAX:
                    pts.add(z)
    return sorted(pts)


def mp_expect(
    h: Callable[[mp.mpf], mp.mpf],
    mu: float,
    sigma: float,
    dps: int = 40,
    h_prime: Callable[[mp.mpf], mp.mpf] | None = None,
    max_extra_digits: int = 700,
    kinks: tuple = (),
) -> mp.mpf:
    """``E h(mu + sigma Z)`` to `dps` significant digits by panelled quadrature.

    When the result is much smaller than the integrand (odd ``h`` at tiny
    `mu`: the two halves cancel), the quadrature is repeated with as many extra
    digits as were lost, so the result always carries `dps` significant digits.
    For an odd `h` with ``|mu| <= 1e-25 max(sigma, 1)`` the expansion
    ``mu E h'(sigma Z)`` (truncation below ``1e-50``) is used instead (pass
    `h_prime`), and a complete cancellation at ``mu = 0`` returns exactly 0.

    Parameters
    ----------
    h : callable
        Function of one mpmath number.
    mu, sigma : float
        Mean and standard deviation (``sigma >= 0``; ``sigma = 0`` returns ``h(mu)``).
    dps : int
        Significant digits wanted.
    h_prime : callable, optional
        The derivative of an odd `h`, for the tiny-`mu` expansion.
    max_extra_digits : int
        Cap on the escalation (0 disables it: the result is then accurate to
        `dps` digits of the integrand's size, as for a sign-changing function
        whose error is measured against the size of its terms).
    kinks : tuple of float
        Points where `h` is not smooth (ReLU's 0): panels end there.

    Returns
    -------
    mpmath.mpf

    Examples
    --------
    >>> import mpmath as mp
    >>> from slr_theory.verify.reference import mp_expect
    >>> print(mp.nstr(mp_expect(mp.erf, 1.0, 2.0), 15))  # erf(1/3)
    0.362648111766063
    >>> print(mp.nstr(mp_expect(mp.erf, 1e-200, 1e-160), 15))  # 2e-200/sqrt(pi): 40 digits cancel
    1.12837916709551e-200
    """
    value, scale = _mp_expect_once(h, mu, sigma, dps, kinks)
    for _ in range(3):
        lost = dps + 350 if value == 0 else int(mp.ceil(mp.log10(scale / abs(value))))
        if lost <= 5 or max_extra_digits == 0:
            return value
        if h_prime is not None and mu == 0:  # odd integrand: exact cancellation
            return mp.mpf(0)
        if h_prime is not None and abs(mu) <= 1e-25 * max(sigma, 1.0):
            # odd h: E h(mu + sigma Z) = mu E h'(sigma Z) + O(mu^3), truncation < 1e-50
            deriv, _ = _mp_expect_once(h_prime, 0.0, sigma, dps, kinks)
            return mp.mpf(mu) * deriv
        value, scale = _mp_expect_once(h, mu, sigma, dps + min(lost, max_extra_digits) + 10, kinks)
    return value


def _mp_expect_once(h, mu, sigma, dps, kinks=()):
    with mp.workdps(dps):
        mu, sigma = mp.mpf(mu), mp.mpf(sigma)
        if sigma == 0:
            v = h(mu)
            return v, abs(v)

        # the standard normal density with its constant formed once (``mp.npdf`` forms
        # sqrt(2 pi) at every call, three times the cost of the exponential)
        norm = 1 / mp.sqrt(2 * mp.pi)

        def f(z):
            return h(mu + sigma * z) * (mp.exp(-z * z / 2) * norm)

        pts = _panels(mu, sigma, kinks)
        vals = [abs(f(z)) for z in pts]
        scale = max(vals) or mp.mpf(1)
        # Every local maximum of these integrands lies within 1/8 of a feature
        # width of a panel point, so a panel whose ends and midpoint are all
        # negligible contributes nothing at this precision: skip it.
        negligible = scale * mp.mpf(10) ** (-dps - 10)
        total = mp.mpf(0)
        for a, b, fa, fb in zip(pts[:-1], pts[1:], vals[:-1], vals[1:], strict=True):
            if fa < negligible and fb < negligible and abs(f((a + b) / 2)) < negligible:
                continue
            total += mp.quad(lambda z: f(z) / scale, [a, b], method="gauss-legendre")
        return scale * total, scale


#: The built-in nonlinearities on mpmath numbers: ``(sigma, tau)`` with
#: ``tau(x, s) = 1 - s sigma(x)`` written without cancellation where ``sigma`` saturates,
#: and for a kinked one ``(sigma, tau, kinks)``.
MP_NONLINEARITIES: dict[str, tuple] = {
    "erf": (mp.erf, lambda x, s: mp.erfc(s * x)),
    "tanh": (mp.tanh, lambda x, s: 2 / (1 + mp.exp(2 * s * x))),
    "algebraic": (
        lambda x: x / mp.sqrt(1 + x * x),
        lambda x, s: (
            1 / (mp.sqrt(1 + x * x) * (mp.sqrt(1 + x * x) + s * x))
            if s * x >= 0
            else 1 + abs(x) / mp.sqrt(1 + x * x)
        ),
    ),
    "arctan": (lambda x: 2 / mp.pi * mp.atan(x), lambda x, s: 2 / mp.pi * mp.atan2(1, s * x)),
    "sigmoid": (
        lambda x: 1 / (1 + mp.exp(-x)),
        lambda x, s: 1 / (1 + mp.exp(x)) if s > 0 else 1 + 1 / (1 + mp.exp(-x)),
    ),
    "identity": (lambda x: x, lambda x, s: 1 - s * x),
    # kinked: a third entry, the kinks, where the quadrature's panels end
    "relu": (lambda x: max(x, 0), lambda x, s: 1 - s * max(x, 0), (0,)),
    "leaky_relu": (
        lambda x: x if x > 0 else x / 100,
        lambda x, s: 1 - s * (x if x > 0 else x / 100),
        (0,),
    ),
    "hardtanh": (
        lambda x: max(-1, min(1, x)),
        lambda x, s: 1 - s * max(-1, min(1, x)),
        (-1, 1),
    ),
}


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
    "mean_erf_third": lambda x: (4 * x**2 - 2) * _erfp(x),
    "mean_x_erf": lambda x: x * mp.erf(x),
    "mean_x_erf_prime": lambda x: x * _erfp(x),
    "mean_x2_erf": lambda x: x**2 * mp.erf(x),
    "zeta": lambda x: mp.erf(x) ** 2,
    "zeta_c": _one_minus_erf2,
    "zeta_t": lambda x: 2 * mp.erf(x) * _erfp(x),
    "zeta_tt": lambda x: 2 * _erfp(x) ** 2 - 4 * x * mp.erf(x) * _erfp(x),
    "zeta_ttt": lambda x: -12 * x * _erfp(x) ** 2 + (8 * x**2 - 4) * mp.erf(x) * _erfp(x),
    "mean_erfc_sq": lambda x: mp.erfc(x) ** 2,
}


#: Derivatives of the odd integrands (for the tiny-``mu`` expansion of :func:`mp_expect`).
MP_DERIVATIVES: dict[str, Callable[[mp.mpf], mp.mpf]] = {
    "mean_erf": _erfp,
    "mean_erf_second": lambda x: (4 * x**2 - 2) * _erfp(x),
    "mean_x_erf_prime": lambda x: (1 - 2 * x**2) * _erfp(x),
    "mean_x2_erf": lambda x: 2 * x * mp.erf(x) + x**2 * _erfp(x),
    "zeta_t": lambda x: 2 * _erfp(x) ** 2 - 4 * x * mp.erf(x) * _erfp(x),
    "zeta_ttt": lambda x: (
        (56 * x**2 - 16) * _erfp(x) ** 2 + (24 * x - 16 * x**3) * mp.erf(x) * _erfp(x)
    ),
}


def mp_gaussian_function(name: str, mu: float, sigma: float, dps: int = 40) -> mp.mpf:
    """Reference value of ``slr_theory.gaussian.<name>(mu, sigma)``.

    Parameters
    ----------
    name : str
        A key of :data:`MP_FUNCTIONS`.
    mu, sigma : float
        Mean and standard deviation.
    dps : int
        Significant digits.

    Returns
    -------
    mpmath.mpf

    Examples
    --------
    >>> from slr_theory.verify.reference import mp_gaussian_function
    >>> print(float(mp_gaussian_function("zeta", 0.0, 1.0)))  # (2/pi) arcsin(2/3)
    0.46455905439753997
    """
    return mp_expect(MP_FUNCTIONS[name], mu, sigma, dps, MP_DERIVATIVES.get(name))


def mp_erf_pair(
    mu1: float, mu2: float, var1: float, cov: float, var2: float, dps: int = 40
) -> mp.mpf:
    """``E erf(X1) erf(X2)`` by conditioning on ``X1`` (one mpmath quadrature).

    ``X2 | X1 = mu2 + beta (X1 - mu1) + N(0, c)`` with ``beta = cov/var1``,
    ``c = var2 - cov**2/var1``, so the inner expectation is ``erf`` of a
    rescaled argument and the outer one is :func:`mp_expect`.

    Parameters
    ----------
    mu1, mu2, var1, cov, var2 : float
        Means and covariance of the pair.
    dps : int
        Significant digits.

    Returns
    -------
    mpmath.mpf
    """
    with mp.workdps(dps):
        mu1, mu2, var1, cov, var2 = map(mp.mpf, (mu1, mu2, var1, cov, var2))
        if var1 == 0:
            return mp.erf(mu1) * mp_expect(mp.erf, mu2, mp.sqrt(var2), dps, max_extra_digits=0)
        beta = cov / var1
        c = max(var2 - cov**2 / var1, mp.mpf(0))
        inner_scale = mp.sqrt(1 + 2 * c)

        def h(x1):
            return mp.erf(x1) * mp.erf((mu2 + beta * (x1 - mu1)) / inner_scale)

        # E erf erf changes sign: accuracy is judged against the size of its terms
        return mp_expect(h, mu1, mp.sqrt(var1), dps, max_extra_digits=0)


def mc_expect(
    values: np.ndarray,
) -> tuple[float, float]:
    """Monte Carlo estimate and its standard error from i.i.d. samples: the checks' name
    for :func:`slr_theory.sampling.mean_and_stderr` (at least two finite samples).

    Parameters
    ----------
    values : ndarray
        I.i.d. samples.

    Returns
    -------
    mean, stderr : float

    Examples
    --------
    >>> from slr_theory.verify.reference import mc_expect
    >>> mc_expect([0.0, 1.0])
    (0.5, 0.5)
    """
    return mean_and_stderr(values)


def mp_cancellation_scale(name: str, mu: float, sigma: float) -> mp.mpf:
    """Size of the terms whose difference is a sign-changing function (0 for the others).

    Near a zero of ``zeta_tt``, ``zeta_ttt`` or ``mean_erf_third`` the relative
    error is unbounded for any algorithm that evaluates the closed form; errors
    are then measured relative to ``max(|value|, scale)``.

    Parameters
    ----------
    name : str
        A function of :mod:`slr_theory.gaussian`.
    mu, sigma : float

    Returns
    -------
    mpmath.mpf
    """
    with mp.workdps(40):
        mu, s = mp.mpf(mu), mp.mpf(sigma)
        q, r = 1 + 2 * s**2, 1 + 4 * s**2
        x = mu / mp.sqrt(q)
        a = 2 / mp.sqrt(mp.pi * r) * mp.exp(-(x**2) / r)
        erfr = abs(mp.erf(x / mp.sqrt(r)))
        if name == "mean_erf_third":  # -4 (1 - 2 mu^2/q) e^{-mu^2/q} / (sqrt(pi) q^1.5)
            return 4 * mp.exp(-(x**2)) / (mp.sqrt(mp.pi) * q**1.5) * max(1, 2 * x**2)
        if name == "zeta_tt":
            return 4 / (mp.sqrt(mp.pi) * q) * mp.exp(-(x**2)) * (a + 2 * abs(x) * erfr)
        if name == "zeta_ttt":
            bracket = (2 * x**2 + 1) * erfr + abs(x) * (2 + 1 / r) * a
            return 8 / (mp.sqrt(mp.pi) * q**1.5) * mp.exp(-(x**2)) * bracket
        return mp.mpf(0)
