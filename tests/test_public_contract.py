"""The contract of every public function, fuzzed.

Any value in any argument gives either a finite answer without a warning, or a
``ValueError``/``TypeError`` whose message names the argument. Each public function of
each public module has an entry: in :data:`CALLS` (a call with valid arguments, whose
slots are then fuzzed one at a time) or in :data:`NOT_CALLED` (with the reason);
:func:`test_every_public_function_has_an_entry` fails when a new one has neither.
The commands are fuzzed in ``tests/test_cli_contract.py``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import numbers
import pkgutil
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import slr_theory
import slr_theory.models
from slr_theory import OVERLAP_NAMES

P = slr_theory.Params.paper(lam=0.1)
P6 = slr_theory.Params(d=6, L=4, lam=0.5, gamma=0.7, eps=0.1)
RNG = np.random.default_rng  # a fresh generator per call: calls are reproducible
OV = (0.3, 0.2, 0.1, 0.1, 0.05)
_k, _v = np.random.default_rng(0).standard_normal((2, 6))
K, V = _k / np.linalg.norm(_k), _v / np.linalg.norm(_v)
KS, VS = np.eye(6)[0], np.eye(6)[1]
A, B = VS - (VS @ K) * K, KS - (KS @ V) * V  # tangent at k and at v


class Lazy:
    """An argument built on first use (a critical point, a sample of tokens)."""

    def __init__(self, make):
        self.make, self.value, self.done = make, None, False

    def get(self):
        if not self.done:
            self.value, self.done = self.make(), True
        return self.value


ORIGIN = Lazy(lambda: slr_theory.critical_points(P, "manifold")[1])  # a saddle
ON_M = Lazy(lambda: slr_theory.critical_points(P, "manifold"))
TOKENS = Lazy(lambda: np.random.default_rng(1).standard_normal((3, 4, 6)))
GAUSSIAN = ("mean_erf", "mean_erf_prime", "mean_erf_second", "mean_erf_third", "mean_x_erf")
GAUSSIAN += ("mean_x2_erf", "mean_x_erf_prime", "zeta", "zeta_c", "zeta_t", "zeta_tt")
GAUSSIAN += ("zeta_ttt",)


def _whole_module(module: str, reason: str) -> dict[str, str]:
    """The same reason for every public function of `module` (one unchecked by design)."""
    mod = importlib.import_module(f"slr_theory.{module}")
    return {
        f"{module}.{n}": reason
        for n in mod.__all__
        if inspect.isfunction(getattr(mod, n))
        and getattr(slr_theory, n, None) is not getattr(mod, n)
    }


# key -> (positional args, keyword args). Keys are top-level names, or "module.name"
# for names only a module exports. `params` is not fuzzed here: Params has its own
# domain tests (tests/test_params.py, tests/test_contracts.py).
CALLS: dict[str, tuple[tuple, dict]] = {
    **{n: ((0.3, 0.7), {}) for n in GAUSSIAN},
    "gaussian.mean_erfc_sq": ((0.3, 0.7), {}),
    "models.model_of": (("pointwise", "tanh"), {}),
    "models.takes_nonlinearity": (("softmax",), {}),
    "models.attention_names": ((), {}),
    "models.canonical_names": ((slr_theory.models.Softmax(),), {}),
    "nonlinearity.gaussian_moments": (("tanh", [0.3, 2.0], 0.5), {"order": 1}),
    "mean_erf_derivative": ((0.3, 0.7, 5), {}),
    "zeta_derivative": ((0.3, 0.7, 5), {}),
    "gaussian.zeta_series_coefficients": ((1.5,), {}),
    "gaussian.plackett_rule": ((1.5,), {}),
    "erf_pair": ((0.1, 0.2, 1.0, 0.3, 1.0), {}),
    **{n: ((P, *OV), {}) for n in ("risk", "risk_grad", "risk_hessian", "risk_and_grad")},
    "risk_components": ((P, *OV), {}),
    "work.pgd_cost": ((100, 2), {}),
    "experiments.cost": (("gd_manifold",), {"repeats": 3, "steps_scale": 0.5}),
    "study.cost": ((P,), {"full": True, "jobs": 1}),
    "work.critical_cost": ((100,), {}),
    "work.statistics_cost": ((100, [10, 32]), {}),
    "work.reproduce_cost": ((100, 4, 50, 2), {}),
    "work.verify_cost": ((1000,), {}),
    "work.atlas_cost": (
        (10,),
        {"basin_runs": 100, "max_steps": 1000, "starts": 16, "workers": 2, "model_factor": 1.5},
    ),
    "work.model_cost_factor": ((P,), {"points": 16}),
    "work.worker_count": ((1,), {}),
    "check_overlaps": (OV, {"d": 400}),
    "overlap_tolerance": ((1e-6,), {}),
    **{
        n: ((P, 0.3, 0.2), {})
        for n in ("manifold_risk", "manifold_risk_grad", "manifold_risk_hessian")
    },
    "manifold_stability": ((P, 0.3, 0.2), {}),
    "flows.manifold_field": ((P, 0.3, 0.2), {}),
    "flows.manifold_jacobian": ((P, 0.3, 0.2), {}),
    "flows.overlap_field": ((P, list(OV)), {}),
    "flows.overlap_jacobian": ((P, list(OV)), {}),
    "geometry.riemannian_hessian": ((P, list(OV)), {}),
    "geometry.hessian_form": ((P6, K, V, KS, VS, A, B), {}),
    "risk_at": ((P6, K, V, KS, VS), {}),
    "risk_grad_at": ((P6, K, V, KS, VS), {"riemannian": True}),
    "sampling.overlaps_of": ((K, V, KS, VS), {}),
    "sampling.vectors_from_overlaps": ((list(OV), 6), {}),
    "sampling.random_targets": ((P6, RNG(0)), {}),
    "sampling.sample": ((P6, 3, RNG(0)), {}),
    "sampling.predict": ((TOKENS, K, V, 0.5), {}),
    "sampling.monte_carlo_risk": ((P6, K, V, KS, VS, 50, RNG(0)), {"chunk_floats": 1000}),
    "sampling.squared_errors": ((P6, K, V, KS, VS, 50, RNG(0)), {}),
    "sampling.mean_and_stderr": (([0.5, 1.5, 2.0],), {}),
    "manifold_flow": ((P, 0.3, 0.2, 1.0), {"rtol": 1e-8, "atol": 1e-10}),
    "overlap_flow": ((P, list(OV), 1.0), {"rtol": 1e-8, "atol": 1e-10}),
    "pgd": ((P, list(OV), 1e-3, 10), {"record_every": 5}),
    "advance": ((P, list(OV), 3000), {"alpha": 1e-4}),
    "fate": (
        (P, [list(OV)]),
        {"alpha": None, "tol": 0.05, "points": ON_M, "max_exact_steps": 2000},
    ),
    "dynamics.pgd_vectors": ((P6, K, V, KS, VS, 1e-3, 10), {}),
    "sgd.sgd": ((P6, list(OV), 1e-3, 10), {"batch": 4, "rng": RNG(0), "record_every": 5}),
    "sgd.sgd_vectors": ((P6, K, V, KS, VS, 1e-3, 10), {"batch": 4, "rng": RNG(0)}),
    "paper_schedule": ((1.0, 1e-4), {}),
    "sample_initial_overlaps": ((P, RNG(0), 3), {}),
    "params.dimension_of": ((P, "random_targets"), {}),
    "critical_points": ((P, "sphere"), {"starts": 4, "grid": 3, "iterations": 20}),
    "critical.canonical": ((list(OV),), {}),
    "critical.plural_kind": (("degenerate minimum",), {}),
    "critical.same_point": ((list(OV), list(OV)), {"tol": 1e-6}),
    "critical.classify": ((P6, KS[:4], VS[:4]), {}),
    "critical.polish": ((P6, K[:4], V[:4]), {"tol": 1e-10, "iterations": 5, "damping": 1e-3}),
    "critical.manifold_certificate": ((P,), {}),
    "manifold.manifold_critical_overlaps": ((P,), {}),
    "manifold.manifold_saddle": ((P,), {}),
    "manifold.five_points_proved": ((P,), {}),
    "manifold.in_open_square": (([[0.0, 0.0], [1.0, 0.5]],), {}),
    "critical.symmetries": ((P,), {}),
    "critical.hessian_norm_bound": ((P,), {}),
    "pgd_map_spectrum": ((ORIGIN, 1e-3), {}),
    "lipschitz_bound": ((P,), {"samples": 50}),
    "basin_fractions": ((P, 4), {"alpha": 1e-2, "steps": 50, "tol": 0.05}),
    "landscape.saddle_escape": ((P, ORIGIN, 1e-3), {"radius": 0.05}),
    "statistics.oracle_risk": ((P,), {}),
    "statistics.linear_risk": ((P,), {}),
    "statistics.optimal_lambda": ((P,), {"lam_range": (1e-3, 10.0)}),
    "statistics.bayes_risk_mc": ((P6, 50, RNG(0)), {"chunk": 20}),
    "statistics.bhattacharyya_log": ((P,), {}),
    "statistics.subset_posterior": ((np.zeros((2, 4)), np.arange(8.0).reshape(2, 4), 2), {}),
    "experiments.output_paths": (("gd_manifold", "figures"), {}),
    "landscape.stability_map": ((P,), {"grid": 5}),
    "critical.manifold_kind": (([1.0, 2.0],), {}),
    "critical.describe": ((list(OV),), {}),
    "critical.end_groups": (([list(OV), list(OV)],), {"tol": 0.05}),
    "critical.overlaps_text": ((list(OV),), {"digits": 3}),
    "testing.overlaps": ((), {"on_manifold": False, "d": 400}),
    "testing.models": (
        (),
        {"nonlinearities": ("erf", "tanh"), "attentions": ("pointwise",), "s_max": 2},
    ),
    "testing.params": (
        (),
        {"d": (4, 100), "L": (1, 10), "lam": (0.1, 1.0), "gamma": (0.5, 1.0), "eps": (0, 0.5)},
    ),
}
# Calls of a second or more: fuzzed only in the slow suite (`pytest -m slow`).
SLOW_CALLS: dict[str, tuple[tuple, dict]] = {
    "continuation": ((P, (0.1, 0.12)), {"steps": 3, "seeds": 1}),
    "landscape.separatrix": ((P,), {"delta": 1e-3, "t_max": 20.0, "dt": 0.1}),
    "landscape.convergence_time": ((P, [1e-3, 1e-4]), {"radius": 0.05, "t_max": 500.0}),
    "landscape.manifold_basins": ((P, 5), {"t_max": 50.0, "radius": 0.05, "dt": 0.1}),
    "statistics.statistics_table": ((0.7, 0.1, 5, [100], 50, RNG(0)), {}),
    "verify.run_checks": ((["gaussian.mean_erf"],), {"samples": 2000, "seed": 0}),
    "landscape.portrait_data": (
        (P,),
        {"grid": 5, "basin_grid": 2, "trajectories": 1, "pgd_alpha": 1e-3, "pgd_steps": 10},
    ),
    "landscape.basins": ((P, 4), {"alpha": 1e-2, "steps": 50, "max_steps": 100, "records": 5}),
    "survey.atlas_cell": (
        (P6,),
        {"basin_runs": 4, "steps": 50, "max_steps": 100, "stability_grid": 5, "seed": (0, 1)},
    ),
}
NOT_CALLED: dict[str, str] = {
    "certify_critical_points": "a branch and bound of minutes; its refusals and a "
    "small census are tested in tests/test_certify.py",
    "certify.check_certificate": "takes a census; tested (and fed tampered ones) in "
    "tests/test_certify.py",
    "interval.from_arb": "takes python-flint balls; tested in tests/test_interval.py",
    "interval.arb_bounds": "takes a python-flint ball; tested in tests/test_interval.py",
    "cli.main": "the commands are fuzzed flag by flag in tests/test_cli_contract.py",
    "models.register_model": "changes the registry for the whole process; its refusals and "
    "a model it adds are tested in tests/test_models.py",
    "models.unregister_model": "changes the registry for the whole process; tested in "
    "tests/test_models.py",
    "nonlinearity.resolve_nonlinearity": "the validator behind Params(nonlinearity=...); its "
    "errors are tested in test_nonlinearity.py",
    "nonlinearity.nonlinearity_of": "takes a value resolve_nonlinearity returned",
    "nonlinearity.nonlinearity_at": "imports the module a path names; its refusals are "
    "tested in test_nonlinearity.py, its pickling by path in test_workers.py",
    "nonlinearity.moments": "the engine's unchecked door; gaussian_moments is its checked one",
    "nonlinearity.moment_sups": "unchecked, for lipschitz_bound (its door); tested there",
    "nonlinearity.derivative_sup": "takes a Nonlinearity the door built; for the engine's "
    "feature sizes; tested in test_nonlinearity.py",
    "models.softmax.laplace.term_integrals": "the engine's unchecked door; risk(Params(attention='softmax')) "
    "is its checked one, tested in test_softmax.py",
    "models.softmax.laplace.d_mu": "the algebra of the softmax table: takes the terms it builds; tested in "
    "test_softmax.py",
    "models.softmax.laplace.term_bound": "takes a term the engine builds; its bound is checked against every "
    "term in test_softmax.py",
    "models.softmax.laplace.risk_expression": "the algebra of the softmax table: takes a Params' validated "
    "fields; tested in test_softmax.py and derivations/softmax.py",
    "experiments.experiments": "takes no argument; the table is tested in test_experiments.py",
    "experiments.run": "minutes per valid call; its slots are tested in test_contracts.py",
    "experiments.write": "takes an ExperimentResult the toolkit built; atomic writes are "
    "tested in test_contracts.py",
    "report.write_report": "minutes per valid call; the `report` command's flags are fuzzed",
    "report.redraw_report": "reads a report directory the toolkit wrote; tested in "
    "test_report.py, and the `report --from` flag is fuzzed",
    "study.study": "a minute per valid call; tested in test_study.py and by `report`",
    "study.check_proof": "re-verifies a census certificate (seconds to minutes); tested in "
    "test_report.py",
    "study.read_certificate": "reads a census certificate the toolkit wrote; its refusals "
    "are tested in test_report.py",
    "study.check_certifying": "refuses a certificate or certify before computing; its "
    "refusals are tested in test_report.py",
    "landscape.ended_at": "takes a Fates the toolkit built; tested in test_landscape.py",
    "study.fates_sentence": "takes a Basins the toolkit built; tested in test_study.py",
    "survey.fate_columns": "takes a Fates the toolkit built; tested in test_survey.py",
    "survey.atlas_step": "takes critical points the toolkit found; tested in test_survey.py",
    "survey.found_text": "takes an atlas row the toolkit built; tested in test_survey.py",
    "atlas": "writes the directory its `out` names and starts worker processes; its "
    "arguments are tested in test_survey.py (each cell's in the fuzz of atlas_cell)",
    "survey.read_atlas": "reads what atlas wrote; round trips tested in test_survey.py",
    "survey.dask_setup": "a Dask worker's preload hook; a worker that ignores Ctrl-C is "
    "tested in test_atlas_faults.py",
    "work.usable_cores": "takes no argument; tested in test_work.py",
    "workers.process_pool": "starts processes; its workers are tested in test_workers.py",
    "workers.end_pool": "takes a pool process_pool made; tested in test_workers.py",
    "workers.exit_with_parent": "ends the process that calls it when its parent dies; "
    "tested in a worker in test_workers.py",
    "workers.without_main_script": "a context manager of no argument; tested in test_workers.py",
    "workers.in_worker_bootstrap": "takes no argument; tested in test_workers.py",
    "interrupts.interrupts_held": "a context manager of no argument; tested in test_interrupts.py",
    "startup.install": "takes no argument; changes the process's import hooks; tested in "
    "fresh processes in test_startup.py",
    "startup.defer": "changes the process's modules; tested in fresh processes in test_startup.py",
    "gaussian.series.legendre20_rule": "takes no argument; checked against SciPy and mpmath in "
    "test_gaussian.py",
    "identities.establish": "takes the functions Nonlinearity validated (callables, their "
    "labels, checked kinks); every refusal is tested in test_identities.py",
    "identities.panel_breaks": "takes the kinks Nonlinearity validated; tested in "
    "test_identities.py",
    "study_check.check_study": "takes a Study the toolkit loaded; every refusal is tested "
    "through report --from in test_report.py",
    "catalogue.install": "replaces the loader the package installed (a process-wide "
    "setting, not a value to fuzz); its refusal and its use are tested in test_catalogue.py",
    "catalogue.registry": "takes no argument; tested in test_catalogue.py",
    "symbolic.derive": "takes a SymPy expression (not a value to fuzz); its refusals are "
    "tested in test_symbolic.py",
    "__main__.main": "runs the command line on sys.argv; Ctrl-C while it starts is tested "
    "as a process in test_cli_process.py",
    "output.refusal": "builds the error a destination is refused with; every refusal is "
    "tested in test_output.py",
    "output.file_digest": "reads a file's bytes; the digests it gives are what "
    "written_files records (tested in test_output.py) and report --from checks (test_report.py)",
    "study.findings": "reads a Study the toolkit built; tested in test_study.py",
    "testing.assert_matches_monte_carlo": "fails by design (AssertionError) where a fuzzed "
    "number moves the check; its verdicts and its refusals are tested in test_testing.py",
    "study.atlas_finding": "reads an Atlas the toolkit built; tested in test_study.py",
    **_whole_module(
        "results",
        "the codec of saved results: round trips of every result type in test_results.py",
    ),
    **{
        name: "draws a result the toolkit built; returns the figure without a path (tested "
        "in test_landscape.py); the `portrait` command is fuzzed"
        for name in ("arrival_figure", "atlas_figure", "bifurcation_figure", "phase_portrait")
    },
    **_whole_module(
        "plotting",
        "draws a result the toolkit built (or runs minutes of dynamics); "
        "its options are tested in test_report.py and the `portrait` command is fuzzed",
    ),
    **{
        f"models.pointwise.tables.{n}": "the model's unchecked table builder (Model.table); "
        "the validated door is slr_theory.risk, and test_engine.py checks the two agree"
        for n in ("closed_table", "moment_table")
    },
    **_whole_module(
        "plotting.canvas",
        "what every figure shares (a figure, saving it, colours); tested through every "
        "figure in test_plotting.py",
    ),
    **{
        f"plotting.{name}": "draws a result the toolkit built and refuses any other object "
        "by name (tested in test_plotting.py); its door in plotting computes from a Params"
        for name in (
            "manifold.draw_portrait",
            "manifold.draw_stability",
            "ensembles.draw_off_manifold",
        )
    },
    **_whole_module(
        "render",
        "renders a result the toolkit built; tested in test_report.py",
    ),
    **_whole_module(
        "engine",
        "the unchecked door of the risk engine: the validated door is "
        "slr_theory.risk, and test_engine.py checks the two agree bitwise",
    ),
    **_whole_module(
        "trajectory",
        "an unchecked step of the batched loop behind pgd and sgd, "
        "which validate (validate_run is that validation)",
    ),
    **{
        f"geometry.{n}": "an unchecked building block on engine outputs; its validated "
        "doors are riemannian_hessian, risk_grad_at and critical_points"
        for n in (
            "gradient_norms",
            "overlap_velocity",
            "riemannian_gradient",
            "span_dimension",
            "spectrum",
            "transverse_eigenvalues",
            "vector_derivatives",
            "velocity_partials",
        )
    },
    "gaussian.erfc_sq_reduced": "the engine's unchecked reduced form of mean_erfc_sq",
    "dynamics.pgd_step": "one unchecked step (documented so); pgd validates once",
    "params.gram_matrix": "unchecked (documented so); check_overlaps is its validated door",
    "params.project_feasible": "unchecked (documented so): check_overlaps' projection, and "
    "the integrator's way back into the feasible set (longrun.advance)",
    "params.temperature_range": "a validator: the `lam_range` slots fuzzed here call it",
    "params.check_params": "a validator: every `params` slot calls it (test_contracts.py)",
    "geometry.manifold_chart_velocity": "unchecked (documented so): the chart's RK4 loops",
    "geometry.manifold_chart_jacobian": "unchecked (documented so): the chart's RK4 loops",
    "gaussian.zeta_reduced": "the engine's unchecked reduced form of zeta",
    **_whole_module(
        "validate",
        "a validator: tested in test_contracts.py by what it refuses",
    ),
    "chebyshev.build_pieces": "takes a function the engine's interpolants evaluate; tested "
    "through moment_interpolant (test_nonlinearity.py) and term_interpolant (test_softmax.py)",
    "verify.register": "registers a check object (a decorator for check authors)",
    **_whole_module(
        "output",
        "the output discipline (signals, locks, files): tested by fault injection, "
        "concurrent writers, signals and umasks in test_output.py",
    ),
    **_whole_module(
        "verify.reference",
        "an mpmath or Monte Carlo reference the tests call with their own trusted inputs",
    ),
    "verify.risk_checks.mp_risk_components": "an mpmath reference for the tests",
    "verify.risk_checks.mp_risk_gradient": "an mpmath reference for the tests",
    "verify.risk_checks.mp_softmax_risk_two_tokens": "an mpmath reference for the tests",
    "verify.risk_checks.mp_softmax1_risk_one_token": "an mpmath reference for the tests",
}
# The array kernels propagate NaN (their documented policy); everything else refuses it.
NAN_PROPAGATES = set(GAUSSIAN) | {
    "gaussian.mean_erfc_sq",
    "mean_erf_derivative",
    "zeta_derivative",
    "erf_pair",
    "gaussian.zeta_series_coefficients",
    "gaussian.plackett_rule",
}
# Result fields where NaN is a documented value, not an error: key -> field names.
DOCUMENTED_NAN = {
    "landscape.manifold_basins": {"time"},  # "nan if never" (ManifoldBasins)
    "landscape.basins": {"trace_distance"},  # "NaN once a run has stopped" (Basins)
    "survey.atlas_cell": {"optimum_risk"},  # NaN when the search did not find (k*, v*)
    "fate": {"steps", "relative_error"},  # inf at a saddle, NaN undecided (Fates)
}
# Counts whose valid values are work: the fuzz keeps them small (or beyond the bound).
COUNT_CAP = 64

ODD = [
    None,
    "x",
    "",
    np.nan,
    np.inf,
    -np.inf,
    1e300,
    -1e300,
    1e-300,
    5e-324,
    0.0,
    -0.0,
    -1.0,
    1.0,
    1.0 + 1e-9,
    -1.0 - 1e-9,
    2.5,
    True,
    False,
    1j,
    (),
    [],
    [1.0, 2.0, 3.0],
    np.zeros((2, 3)),
    np.zeros((0,)),
    np.float32(0.5),
    np.array([0.1, np.nan]),
    10**20,
    -(10**20),
    2**63,
    object(),
]
# Floats are counts too where they are whole (a count takes 3.0): kept small or beyond
# every count's bound, like the integers. The dev profile drew `critical_points(grid=1000.0)`,
# a valid grid of 2e6 structured starts: forty minutes of Newton, not a fault.
LARGEST_BOUND = 1e15


def _floats(cap: int):
    """Any float but a whole one in ``(cap, LARGEST_BOUND)``."""
    return st.floats().filter(
        lambda x: not (np.isfinite(x) and x == np.round(x) and cap < abs(x) < LARGEST_BOUND)
    )


VALUES = (
    st.sampled_from(ODD)
    | _floats(COUNT_CAP)
    | st.floats(-2.0, 2.0)
    | st.integers(-3, COUNT_CAP)
    | st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=6)
)


# The slow calls' counts (steps, seeds, grids) are work: small ones, or beyond the bounds.
SLOW_VALUES = (
    st.sampled_from(ODD)
    | _floats(6)
    | st.floats(-2.0, 2.0)
    | st.integers(-3, 6)
    | st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=4)
)


def _resolve(key: str):
    if "." not in key:
        return getattr(slr_theory, key)
    module, name = key.rsplit(".", 1)
    return getattr(importlib.import_module(f"slr_theory.{module}"), name)


def _public_functions() -> set[str]:
    """Every public function: top-level names, then each public module's own."""
    keys = {n for n in slr_theory.__all__ if inspect.isfunction(getattr(slr_theory, n))}
    seen = {id(getattr(slr_theory, n)) for n in keys}
    for info in pkgutil.walk_packages(slr_theory.__path__, "slr_theory."):
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj) and id(obj) not in seen:
                keys.add(f"{info.name.removeprefix('slr_theory.')}.{name}")
                seen.add(id(obj))
    return keys


def _finite(x, depth: int = 0, skip=frozenset()) -> bool:
    """True when every number inside `x` (arrays, containers, records) is finite, apart
    from the record fields named in `skip`."""
    if depth > 4 or x is None or isinstance(x, (str, bytes, bool, type)):
        return True
    if isinstance(x, numbers.Number):
        return bool(np.isfinite(complex(x)))
    if isinstance(x, np.ndarray):
        return x.dtype.kind not in "fc" or bool(np.isfinite(x).all())
    if isinstance(x, dict):
        return all(_finite(v, depth + 1) for k, v in x.items() if k not in skip)
    if isinstance(x, (list, tuple)):
        return all(_finite(v, depth + 1) for v in x)
    if dataclasses.is_dataclass(x):
        return all(
            _finite(getattr(x, f.name), depth + 1)
            for f in dataclasses.fields(x)
            if f.name not in skip
        )
    return True


def _slots(key: str, table) -> list[tuple[int | str, str]]:
    args, kw = table[key]
    names = list(inspect.signature(_resolve(key)).parameters)
    return [(i, names[i]) for i in range(len(args)) if names[i] != "params"] + [(k, k) for k in kw]


def _fuzzed(table) -> list[str]:
    """The keys whose calls have a slot to fuzz (not only `params`)."""
    return sorted(k for k in table if _slots(k, table))


def _call(key: str, args, kw):
    args = [a.get() if isinstance(a, Lazy) else a for a in args]
    kw = {k: a.get() if isinstance(a, Lazy) else a for k, a in kw.items()}
    return _resolve(key)(*args, **kw)


def _is_number(x) -> bool:
    """A number or an array of numbers, not a bool (what a numeric slot's valid value is)."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, numbers.Number):
        return True
    return isinstance(x, (np.ndarray, tuple, list)) and len(x) > 0 and all(map(_is_number, x))


def _check(key: str, table, slot, pname: str, value) -> None:
    args, kw = list(table[key][0]), dict(table[key][1])
    valid = args[slot] if isinstance(slot, int) else kw[slot]
    if isinstance(slot, int):
        args[slot] = value
    else:
        kw[slot] = value
    # a bool is refused where a number is meant (True is not the overlap 1, nor a seed)
    must_refuse = isinstance(value, (bool, np.bool_)) and _is_number(valid)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = _call(key, args, kw)
    except (ValueError, TypeError) as exc:
        # an overlap vector's error may name the offending component instead
        names = (pname.rstrip("0"),) + (OVERLAP_NAMES if "overlap" in pname else ())
        named = any(n in str(exc) for n in names)
        assert named, f"{key}({pname}={value!r}) raised without naming `{pname}`: {exc}"
        return
    assert not must_refuse, f"{key}({pname}={value!r}) took a bool for a number"
    nan_in = np.isnan(np.asarray(value, dtype=complex)).any() if _numeric(value) else False
    finite = _finite(out, skip=DOCUMENTED_NAN.get(key, frozenset()))
    assert finite or (nan_in and key in NAN_PROPAGATES), (
        f"{key}({pname}={value!r}) returned a non-finite value"
    )


def _numeric(value) -> bool:
    try:
        np.asarray(value, dtype=complex)
    except (TypeError, ValueError):
        return False
    return True


def test_every_public_function_has_an_entry():
    public = _public_functions()
    entries = set(CALLS) | set(SLOW_CALLS) | set(NOT_CALLED)
    assert not public - entries, f"public functions without a contract entry: {public - entries}"
    assert not entries - public, f"stale contract entries: {entries - public}"
    assert not set(CALLS) & set(NOT_CALLED) and not set(SLOW_CALLS) & set(CALLS)


@pytest.mark.parametrize("key", sorted(CALLS))
def test_the_valid_call_is_finite_without_warnings(key):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _finite(_call(key, *CALLS[key]))


@pytest.mark.parametrize("key", _fuzzed(CALLS))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_any_value_in_any_slot_is_finite_or_named(key, data):
    slot, pname = data.draw(st.sampled_from(_slots(key, CALLS)), label="slot")
    _check(key, CALLS, slot, pname, data.draw(VALUES, label="value"))


@pytest.mark.slow
@pytest.mark.parametrize("key", _fuzzed(SLOW_CALLS))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_slow_calls_any_value_in_any_slot_is_finite_or_named(key, data):
    slot, pname = data.draw(st.sampled_from(_slots(key, SLOW_CALLS)), label="slot")
    _check(key, SLOW_CALLS, slot, pname, data.draw(SLOW_VALUES, label="value"))


@pytest.mark.parametrize("key", _fuzzed(CALLS))
def test_every_odd_value_in_the_first_slot(key):
    """The same contract, deterministically, for each odd value of ODD in the first fuzzed
    slot (a failure names the value)."""
    slot, pname = _slots(key, CALLS)[0]
    for value in ODD:
        try:
            _check(key, CALLS, slot, pname, value)
        except Exception as exc:  # the failure names the value the loop was at
            raise AssertionError(f"{key}, {pname} = {value!r}: {exc!r}") from exc


# Cases the fuzz found (key, argument, value), pinned so they are checked on every run.
PINNED = [
    ("fate", "starts", [0.0, 0.0, 0.0, 0.0, 2.0]),  # named `rho`, not `starts` (dev fuzz)
    ("flows.overlap_field", "overlaps", [0.0, 0.0, 0.0, 0.0, 2.0]),  # names `rho`
    ("geometry.riemannian_hessian", "overlaps", [0.0, 0.0, 0.0, 0.0, 2.0]),
    ("sampling.vectors_from_overlaps", "d", 3159618634.0),  # was a 23.5 GiB allocation
    ("mean_erf_derivative", "n", 10**20),  # the Hermite loop ran forever
    ("statistics.bayes_risk_mc", "n", 1e300),  # ran forever
    ("sample_initial_overlaps", "size", object()),
    ("manifold_flow", "t_max", 1e-300),  # LSODA's step underflowed: it never returned
    ("overlap_flow", "rtol", 1e-300),  # solve_ivp's warning
    ("critical.classify", "k", [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    ("landscape.saddle_escape", "r0", 1e-300),  # NaN: the integrator cannot resolve it
    ("nonlinearity.gaussian_moments", "order", 0.0),  # range(0.0 + 1): a TypeError
    ("nonlinearity.gaussian_moments", "order", np.zeros((2, 3))),  # ambiguous `in`
    ("experiments.cost", "steps_scale", True),  # a bool taken for the number 1
    ("nonlinearity.gaussian_moments", "t", 8.98846567431158e307),  # tanh's 2|u| overflowed
    ("sampling.predict", "lam", 9.008587427850964e307),  # lam X.k overflowed
    ("pgd_map_spectrum", "alpha", 3.6295802136896356e307),  # alpha h overflowed
    ("work.reproduce_cost", "sgd_runs", 3.595386269724632e306),  # an int product past 1e308
    ("work.atlas_cost", "cells", 5.110712536922007e307),  # an estimate of inf seconds
    ("overlap_flow", "t_max", 1.381914341573337e307),  # LSODA's last state NaN
]


@pytest.mark.parametrize("key, pname, value", PINNED, ids=[f"{k}-{n}" for k, n, _ in PINNED])
def test_pinned_cases(key, pname, value):
    slot = next(s for s, n in _slots(key, CALLS) if n == pname)
    _check(key, CALLS, slot, pname, value)
