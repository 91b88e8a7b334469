"""slr-theory: the single-location regression theory of Marion et al. (ICLR 2025), computable.

The public API, layer by layer (lower layers never import upper ones):

- :mod:`slr_theory.gaussian`: closed-form Gaussian expectations of ``erf``.
- :mod:`slr_theory.params`: ``Params`` and overlap feasibility.
- :mod:`slr_theory.model`: the data model, the predictor, Monte Carlo risk.
- :mod:`slr_theory.risk`: the exact population risk and its gradient.
- :mod:`slr_theory.statistics`: the paper's section 4 (Bayes, linear, oracle).
- :mod:`slr_theory.dynamics`: projected gradient descent, exactly, on the overlaps.
- :mod:`slr_theory.flows`: the gradient flows (on M and in the five overlaps), to tolerance.
- :mod:`slr_theory.geometry`: the product of spheres in overlap coordinates.
- :mod:`slr_theory.critical`: every critical point, classified; the center-stable manifold check.
- :mod:`slr_theory.landscape`: stability of M, basins and separatrices, escape, continuation.
- :mod:`slr_theory.verify`: the registry of checks against mpmath and Monte Carlo.
- :mod:`slr_theory.output` and :mod:`slr_theory.work`: what every command that writes or
  computes for long shares: the output discipline, and cost estimates with a ceiling.
"""

from .critical import CriticalPoint, critical_points, lipschitz_bound, pgd_map_spectrum
from .dynamics import PGDResult, paper_schedule, pgd, sample_initial_overlaps
from .flows import FlowResult, manifold_flow, overlap_flow
from .gaussian import (
    erf_pair,
    mean_erf,
    mean_erf_derivative,
    mean_erf_prime,
    mean_erf_second,
    mean_erf_third,
    mean_x2_erf,
    mean_x_erf,
    mean_x_erf_prime,
    zeta,
    zeta_c,
    zeta_derivative,
    zeta_t,
    zeta_tt,
    zeta_ttt,
)
from .landscape import basin_fractions, continuation, manifold_stability
from .params import OVERLAP_NAMES, Params, check_overlaps, overlap_tolerance
from .risk import (
    RiskComponents,
    manifold_risk,
    manifold_risk_grad,
    manifold_risk_hessian,
    risk,
    risk_and_grad,
    risk_at,
    risk_components,
    risk_grad,
    risk_grad_at,
    risk_hessian,
)

__version__ = "0.1.0"

__all__ = [
    "OVERLAP_NAMES",
    "CriticalPoint",
    "FlowResult",
    "PGDResult",
    "Params",
    "RiskComponents",
    "__version__",
    "basin_fractions",
    "check_overlaps",
    "continuation",
    "critical_points",
    "erf_pair",
    "lipschitz_bound",
    "manifold_flow",
    "manifold_risk",
    "manifold_risk_grad",
    "manifold_risk_hessian",
    "manifold_stability",
    "mean_erf",
    "mean_erf_derivative",
    "mean_erf_prime",
    "mean_erf_second",
    "mean_erf_third",
    "mean_x2_erf",
    "mean_x_erf",
    "mean_x_erf_prime",
    "overlap_flow",
    "overlap_tolerance",
    "paper_schedule",
    "pgd",
    "pgd_map_spectrum",
    "risk",
    "risk_and_grad",
    "risk_at",
    "risk_components",
    "risk_grad",
    "risk_grad_at",
    "risk_hessian",
    "sample_initial_overlaps",
    "zeta",
    "zeta_c",
    "zeta_derivative",
    "zeta_t",
    "zeta_tt",
    "zeta_ttt",
]
