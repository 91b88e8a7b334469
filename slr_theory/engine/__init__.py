"""The risk engine: value, gradient and Hessian of the population risk from one term table.

Every public function of :mod:`slr_theory.risk`, the dynamics (:func:`slr_theory.pgd`,
the flows, SGD's pricing) and the geometry layer evaluate the risk here; they
differ only in what they validate first. The population risk minus ``eps**2`` is
a sum of terms

.. math:: \text{const}(\\lambda)\\; \nu^{e_1}\theta^{e_2}\\eta^{e_3}\rho^{e_4}\\delta^{e_5}\\; F(x),
          \\qquad x = \frac{a\\kappa}{\\sqrt q}, \\qquad \\delta = \nu\rho - \\eta,

(:data:`RISK_TERMS`; ``a = lambda sqrt(d/2)``, ``g = lambda gamma``, ``q = 1 + 2 g^2``,
``r = 1 + 4 g^2``, ``y = x / sqrt(r)``) where every ``F`` is a polynomial in ``x`` times
one of the *bases*

=========  =====================================================
``erf``    ``erf(x)``
``ex``     ``e^{-x^2}``
``exey``   ``e^{-x^2} e^{-y^2}``
``exu``    ``e^{-x^2} erf(y)``
``exD``    ``e^{-x^2} [erf(y) - nu]``, as ``e^{-x^2} [(s - nu) - s erfc|y|]``, ``s = sgn kappa``
``zeta``   ``zeta(a kappa, g)`` (:func:`slr_theory.gaussian.zeta_reduced`)
``W``      ``1 - 2 nu erf(x) + zeta = E erfc(|a kappa| + gZ)^2 + 2 erf|x| (1 - s nu)``
=========  =====================================================

Each basis has a closed-form derivative in ``x`` that stays in the family (e.g.
``d exD/dx = -2x exD + (2/sqrt(pi)) r^{-1/2} exey``), so the partial derivatives of
any order are generated mechanically from the one table: ``d/dkappa = (a/sqrt q) d/dx``,
and ``d/dnu`` acts on the monomial and on the two bases that contain ``nu``.
Grouping the informative token's ``gamma^2 (1 - 2 nu E_0 + Z_0)`` into the single
basis ``W`` is what keeps the risk and its ``kappa``-derivatives to relative
precision at the optimum, where they are exponentially small differences of
numbers of order one. Off M beside the edge ``nu = 1`` the pair
``gamma^2 g^2 (rho^2 Z_2 - 2 eta rho E_2)`` cancels the same way; it is written
``gamma^2 g^2 (rho^2 W_2 + 2 rho delta E_2)`` with ``W_2 = Z_2 - 2 nu E_2`` the second
derivative of ``W`` and ``delta = nu rho - eta`` (0 on the edge, where ``rho = eta``)
a sixth variable of the monomials, computed exactly (:func:`delta`).

A table ``C`` of coefficients (rows: components, partials or Hessian entries;
columns: monomial x power of ``x`` x basis) depends on ``lambda`` only; the
*features* ``Phi`` depend on the overlaps. Then every quantity is ``C @ Phi``:
one matrix product per temperature, whatever the batch. Exponents are carried in
double-double (:mod:`slr_theory.doubledouble`), so ``e^{-x^2}`` does not inherit the
``2 x^2`` condition number of a rounded square.

Everything here assumes validated, feasible input; :mod:`slr_theory.risk` is the
checked front door.
"""

from __future__ import annotations

from .contract import (  # noqa: F401
    SHARED_POINTS,
    Enclosure,
    RiskTable,
)
from .evaluate import (
    components,
    gradient,
    hessian,
    hessian_matrices,
    manifold_nullcline,
    value_and_gradient,
)
from .tables import feature_bounds, table

# Internal, importable from here as docs/api.md lists them (no promise); the models
# build their tables from these.
from .terms import (  # noqa: F401
    BASES,
    COMPONENTS,
    GAUSSIAN_BASES,
    HESSIAN_PAIRS,
    MOMENT_BASES,
    MONOMIAL_VARIABLES,
    N_CONSTANTS,
    NU_BASES,
    PAIR_TERMS,
    RISK_TERMS,
    add_term,
    columns,
    delta,
    entries,
    gaussian_columns,
    monomial_variables,
    orders_of,
    rows_on_m,
    table_scalars,
)

__all__ = [
    "COMPONENTS",
    "HESSIAN_PAIRS",
    "RiskTable",
    "components",
    "feature_bounds",
    "gradient",
    "hessian",
    "hessian_matrices",
    "manifold_nullcline",
    "table",
    "value_and_gradient",
]
