"""The global picture: stability of M, basins and separatrices, escape from saddles, continuation in λ.

- :func:`manifold_stability`: the transverse eigenvalues of the overlap flow at points of
  ``M = {theta = eta = rho = 0}``. M is invariant, so on M the Jacobian of the flow is
  block triangular and the ``(theta, eta, rho)`` block alone decides whether a small
  distance to M shrinks or grows.
- :func:`separatrix` and :func:`manifold_basins`: on M, the stable manifold of the saddle
  at the origin, traced backward from its stable eigendirection, and which critical point
  each start of a grid reaches under the flow or under PGD at a finite step (and when).
- :func:`basin_fractions`: for initialisations uniform on the spheres (sampled exactly in
  overlap space), the fraction of runs each minimum attracts, with standard errors.
- :func:`saddle_escape`: time to leave a neighbourhood of a saddle against the linearised
  prediction ``log(r / r0) / mu``.
- :func:`continuation`: every critical point followed in ``lambda`` by a predictor-corrector
  (secant predictor, damped Riemannian Newton corrector, step halving; pseudo-arclength
  where that fails), with the events where a branch changes index, meets another at a
  pitchfork, or folds.
"""

from __future__ import annotations

from .continuation import (
    CORRECTOR_DAMPING,
    FOLD_TOL,
    LOCATE_TOL,
    Branch,
    Continuation,
    continuation,
)
from .ensembles import (
    AT_DISTANCE,
    AT_GRADIENT,
    MAX_PORTRAIT_STEPS,
    BasinFractions,
    Basins,
    basin_fractions,
    basins,
)
from .escape import convergence_time, saddle_escape
from .onm import ManifoldBasins, manifold_basins, separatrix
from .portrait import PortraitData, ended_at, portrait_data
from .stability import (
    FLOW_FEASIBILITY,
    MAX_RK4_STEPS,
    MIN_OFFSET,
    StabilityMap,
    manifold_stability,
    stability_map,
)

__all__ = [
    "AT_DISTANCE",
    "AT_GRADIENT",
    "CORRECTOR_DAMPING",
    "FLOW_FEASIBILITY",
    "FOLD_TOL",
    "LOCATE_TOL",
    "MAX_PORTRAIT_STEPS",
    "MAX_RK4_STEPS",
    "MIN_OFFSET",
    "BasinFractions",
    "Basins",
    "Branch",
    "Continuation",
    "ManifoldBasins",
    "PortraitData",
    "StabilityMap",
    "basin_fractions",
    "basins",
    "continuation",
    "convergence_time",
    "ended_at",
    "manifold_basins",
    "manifold_stability",
    "portrait_data",
    "saddle_escape",
    "separatrix",
    "stability_map",
]
