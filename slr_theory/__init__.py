"""slr-theory: the single-location regression theory of Marion et al. (ICLR 2025), computable.

The public API, layer by layer (lower layers never import upper ones):

- :mod:`slr_theory.gaussian`: closed-form Gaussian expectations of ``erf``.
- :mod:`slr_theory.verify`: the registry of checks against mpmath and Monte Carlo.
"""

from .gaussian import (
    erf_pair,
    mean_erf,
    mean_erf_prime,
    mean_erf_second,
    mean_x2_erf,
    mean_x_erf,
    mean_x_erf_prime,
    zeta,
    zeta_c,
    zeta_t,
    zeta_tt,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "erf_pair",
    "mean_erf",
    "mean_erf_prime",
    "mean_erf_second",
    "mean_x2_erf",
    "mean_x_erf",
    "mean_x_erf_prime",
    "zeta",
    "zeta_c",
    "zeta_t",
    "zeta_tt",
]
