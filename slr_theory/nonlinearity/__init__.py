"""The attention nonlinearity ``sigma`` and its Gaussian expectations by quadrature.

The paper's predictor is ``sum_l sigma(lambda X_l^T k) X_l^T v`` with ``sigma = erf``,
chosen because its Gaussian expectations have closed forms. The risk's structure does not
need them: after conditioning on ``U = X^T k`` every term is a one-dimensional Gaussian
expectation

.. math:: E_j(t, g) = \\mathbb{E}\\, \\sigma^{(j)}(t + gZ), \\qquad
          Z_j(t, g) = \frac{\\partial^j}{\\partial t^j}\\, \\mathbb{E}\\, \\sigma(t + gZ)^2,
          \\qquad Z \\sim \\mathcal N(0, 1),

at ``t = lambda sqrt(d/2) kappa``, ``g = lambda gamma`` (docs/theory.md §3). This module
holds :class:`Nonlinearity` (a function with its derivatives), the built-in ones, and
:func:`gaussian_moments`, which evaluates every expectation the risk engine needs by a
composite Gauss–Legendre rule in ``z``, centred per point where the integrand lives.

The rule
--------
For each ``t`` the ``z``-window is ``[mu - 9.5, 9.5]`` when ``t >= 0`` (mirrored when
``t < 0``), where ``mu`` is the mode of ``tau(t + gz)^2 phi(z)``, ``tau(u) = 1 - s sigma(u)``,
``s = sgn t``: the most tail-heavy integrand the risk needs (near the optimum the risk is
a sum of such exponentially small terms). The window is cut in panels of width at most 1,
refined geometrically around ``z = -t/g`` where ``sigma`` turns over within ``1/g``, with
16 Gauss–Legendre nodes each.
Derivatives beyond those a :class:`Nonlinearity` provides come from Stein's identity
``E h'(t + gZ) = E[Z h(t + gZ)] / g``. For small ``g`` and a ``sigma`` analytic in a
strip (:attr:`Nonlinearity.strip`: the built-ins), Gauss–Hermite with 16 to 64 nodes
shifted to the same mode replaces the panels (20x fewer evaluations at the paper's
``g = 0.07``).
"""

from __future__ import annotations

# Internal, importable from here as before the split (no promise):
from ..chebyshev import Pieces, build_pieces  # noqa: F401
from .builtin import BUILTIN_NONLINEARITIES, nonlinearity_of, resolve_nonlinearity
from .expectations import (  # noqa: F401
    INTERPOLATE_FROM,
    MOMENT_NAMES,
    MomentInterpolant,
    gaussian_moments,
    moment_interpolant,
    moments,
)
from .function import CHECK_POINTS, Nonlinearity, nonlinearity_at
from .rules import MAX_CENTRE, MAX_SCALE, UnboundedSigma, derivative_sup, moment_sups

__all__ = [
    "BUILTIN_NONLINEARITIES",
    "CHECK_POINTS",
    "MAX_CENTRE",
    "MAX_SCALE",
    "MOMENT_NAMES",
    "Nonlinearity",
    "UnboundedSigma",
    "derivative_sup",
    "gaussian_moments",
    "moment_sups",
    "moments",
    "nonlinearity_at",
    "nonlinearity_of",
    "resolve_nonlinearity",
]

# An exception is shown (in a traceback, a doctest) by the path users import it from.
for _exception in (UnboundedSigma,):
    _exception.__module__ = __name__
del _exception
