"""slr-theory: the single-location regression theory of Marion et al. (ICLR 2025), computable.

The modules, layer by layer: a module imports modules of its own layer or of lower ones,
never of a higher one (``tests/test_house.py`` checks it, with its few documented
exceptions). A name may be a package, one module per concept inside; ``docs/architecture.md``
maps them, with the front door of each layer and where a new piece goes.

0. ``validate``, ``doubledouble``, ``results``, ``chebyshev``, ``interval``, ``interrupts``, ``identities``, ``symbolic``, ``catalogue``, ``startup``:
   input checks; double-double exponents; typed results as
   JSON and back; checked piecewise Chebyshev interpolants; rigorous interval arithmetic
   on arrays; Ctrl-C held while the command imports; a nonlinearity's properties by
   integral identities, or from a SymPy expression; where ``Params`` finds the registry
   of models (installed by this package's face, so that ``params`` imports no model); SciPy's
   first import without the NumPy modules it reads but never runs.
1. ``gaussian``, ``nonlinearity``, ``params``, ``work``, ``output``, ``workers``:
   Gaussian expectations of ``erf`` (closed forms) and of any nonlinearity (quadrature);
   ``Params`` and overlap feasibility; cost estimates; the output discipline; local
   worker processes.
2. ``engine``: the risk's term algebra, the table contract and the evaluators (each
   model builds its table from them).
3. ``trajectory``: the batched loop shared by PGD, SGD and the experiments.
4. ``models``, ``sampling``, ``model``, ``geometry``, ``flows``, ``manifold``, ``softmax``, ``rigorous``: the models,
   each a file or a folder that owns its mathematics, with their registry (everything
   above asks ``Params.model``, never a model's name); the data model sampled and Monte
   Carlo (``model`` is its former name);
   the product of spheres in overlap coordinates; the gradient flows; the critical points
   of the flow on M; softmax's Laplace transform and erf's interval enclosures where the
   documentation names them (their homes are ``models/softmax/`` and ``models/erf/``).
5. ``risk``: the exact population risk, validated.
6. ``statistics``, ``sgd``, ``critical``, ``dynamics``, ``longrun``, ``certify``: the paper's
   section 4; online SGD; every critical point, classified; projected gradient descent,
   exactly; PGD over any number of steps and the fate of every run; computer-assisted
   proofs about the critical points.
7. ``landscape``, ``experiments``, ``survey``: stability of M, basins, continuation; the
   paper's section 5; the atlas over parameter space.
8. ``verify``, ``study``, ``study_check``, ``testing``: the registry of checks against
   mpmath and Monte Carlo; the report's computation as one saved result, its findings,
   and the domains of its fields checked when it is read; strategies and
   a Monte Carlo assertion for property tests of one's own.
9. ``render``, ``plotting``: tables and figures, drawn from results.
10. ``report``, ``cli``: the report and the command line.
"""

import importlib
import sys
import types

from . import catalogue, startup

__version__ = "0.10.0"  # what changed: CHANGELOG.md

_EXPORTS = {  # module -> the names it lends the package (imported on first use)
    "certify": (
        "Census",
        "certify_critical_points",
    ),
    "critical": (
        "CriticalPoint",
        "critical_points",
        "lipschitz_bound",
        "pgd_map_spectrum",
    ),
    "dynamics": (
        "pgd",
        "sample_initial_overlaps",
    ),
    "flows": (
        "FlowResult",
        "manifold_flow",
        "overlap_flow",
    ),
    "gaussian": (
        "erf_pair",
        "mean_erf",
        "mean_erf_derivative",
        "mean_erf_prime",
        "mean_erf_second",
        "mean_erf_third",
        "mean_x2_erf",
        "mean_x_erf",
        "mean_x_erf_prime",
        "zeta",
        "zeta_c",
        "zeta_derivative",
        "zeta_t",
        "zeta_tt",
        "zeta_ttt",
    ),
    "landscape": (
        "basin_fractions",
        "continuation",
        "manifold_stability",
    ),
    "longrun": (
        "Advanced",
        "Fates",
        "advance",
        "fate",
    ),
    "nonlinearity": ("Nonlinearity",),
    "plotting": (
        "arrival_figure",
        "atlas_figure",
        "bifurcation_figure",
        "phase_portrait",
    ),
    "params": (
        "OVERLAP_NAMES",
        "Params",
        "check_overlaps",
        "overlap_tolerance",
    ),
    "risk": (
        "RiskComponents",
        "manifold_risk",
        "manifold_risk_grad",
        "manifold_risk_hessian",
        "risk",
        "risk_and_grad",
        "risk_at",
        "risk_components",
        "risk_grad",
        "risk_grad_at",
        "risk_hessian",
    ),
    "survey": (
        "Atlas",
        "atlas",
    ),
    "trajectory": (
        "PGDResult",
        "paper_schedule",
    ),
}

_HOME = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted([*_HOME, "__version__"])


class _Package(types.ModuleType):
    """The package's module type: the name ``risk`` is the function, never the module.

    ``risk`` names both a module and the function it lends the package. Loading a
    submodule binds it to its name in the package; that one binding is refused, so the
    function can be imported on first use like every other name (``import slr_theory``
    then imports no NumPy, and the command can take a Ctrl-C while it starts).
    """

    def __setattr__(self, name: str, value: object) -> None:
        if name == "risk" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _models_registry():
    """The registry of models, imported when a ``Params`` first asks for its model: the
    models build on ``Params``, so the package's face wires them to it
    (:mod:`slr_theory.catalogue`)."""
    from .models import registry

    return registry


catalogue.install(_models_registry)
startup.install()  # SciPy's first import without numpy.f2py and numpy.testing


def __getattr__(name: str):
    """Import the public name `name` from its module on first use (PEP 562).

    ``import slr_theory`` then costs what NumPy costs, and a script that needs only the
    experiments does not pay for SciPy's optimisers.
    """
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
