"""slr-theory: the single-location regression theory of Marion et al. (ICLR 2025), computable.

The modules, layer by layer: a module imports modules of its own layer or of lower ones,
never of a higher one (``tests/test_house.py`` checks it, with its few documented
exceptions).

0. ``validate``, ``doubledouble``, ``results``: input checks; double-double exponents;
   typed results as JSON and back.
1. ``gaussian``, ``nonlinearity``, ``params``, ``work``, ``output``: Gaussian expectations
   of ``erf`` (closed forms) and of any nonlinearity (quadrature); ``Params`` and overlap
   feasibility; cost estimates; the output discipline.
2. ``engine``: the one risk engine (value, gradient, Hessian tables).
3. ``trajectory``: the batched loop shared by PGD, SGD and the experiments.
4. ``model``, ``geometry``, ``flows``: the data model and Monte Carlo; the product of
   spheres in overlap coordinates; the gradient flows.
5. ``risk``: the exact population risk, validated.
6. ``statistics``, ``sgd``, ``critical``, ``dynamics``: the paper's section 4; online SGD;
   every critical point, classified; projected gradient descent, exactly.
7. ``landscape``, ``experiments``, ``survey``: stability of M, basins, continuation; the
   paper's section 5; the atlas over parameter space.
8. ``verify``, ``study``: the registry of checks against mpmath and Monte Carlo; the
   report's computation as one saved result, and its findings.
9. ``render``, ``plotting``: tables and figures, drawn from results.
10. ``report``, ``cli``: the report and the command line.
"""

from .critical import CriticalPoint, critical_points, lipschitz_bound, pgd_map_spectrum
from .dynamics import pgd, sample_initial_overlaps
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
from .nonlinearity import Nonlinearity
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
from .survey import Atlas, atlas
from .trajectory import PGDResult, paper_schedule

__version__ = "0.1.0"

__all__ = [
    "OVERLAP_NAMES",
    "Atlas",
    "CriticalPoint",
    "FlowResult",
    "Nonlinearity",
    "PGDResult",
    "Params",
    "RiskComponents",
    "__version__",
    "atlas",
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
