"""Softmax attention's Gaussian expectations, by the Laplace transform of its normalisation.

The mathematics lives with its model, in :mod:`slr_theory.models.softmax.laplace`; this
module keeps the path the documentation names (``slr_theory.softmax``).
"""

from .models.softmax.laplace import (
    SOFTMAX_DOMAIN,
    d_mu,
    risk_expression,
    term_bound,
    term_integrals,
    term_interpolant,
)

__all__ = [
    "SOFTMAX_DOMAIN",
    "d_mu",
    "risk_expression",
    "term_bound",
    "term_integrals",
    "term_interpolant",
]
