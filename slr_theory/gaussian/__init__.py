"""Closed-form Gaussian expectations of ``erf`` and its derivatives.

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

from .means import (
    mean_erf,
    mean_erf_prime,
    mean_erf_second,
    mean_erf_third,
    mean_x2_erf,
    mean_x_erf,
    mean_x_erf_prime,
)
from .pairs import MAX_DERIVATIVE_ORDER, erf_pair, mean_erf_derivative, zeta_derivative
from .series import (
    PLACKETT_NODES,
    ZETA_SERIES_BELOW,
    ZETA_SERIES_TERMS,
    erfc_sq_reduced,
    plackett_rule,
    zeta_reduced,
    zeta_series_coefficients,
)
from .zeta import mean_erfc_sq, zeta, zeta_c, zeta_t, zeta_tt, zeta_ttt

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
