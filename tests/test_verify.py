"""The verification registry runs, passes, and fails when it should."""

import dataclasses

import numpy as np
import pytest

from slr_theory.verify import REGISTRY, Check, register, run_checks
from slr_theory.verify.registry import evaluate


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_check_passes_at_its_default_point(name):
    """One test per check, so that the workers share them (it was one 28 s test)."""
    [r] = run_checks([name], samples=50_000, seed=1)
    assert r.name == name
    assert r.passed, r
    assert r.rel_error <= 1e-14
    assert r.mc_stderr > 0


@pytest.mark.slow
def test_every_check_passes_at_random_points():
    for seed in range(5):
        for r in run_checks(samples=100_000, seed=seed, random_params=True):
            assert r.passed, r


def test_a_wrong_closed_form_fails_both_ways():
    good = REGISTRY["gaussian.mean_erf"]
    bad = dataclasses.replace(good, closed_form=lambda **p: good.closed_form(**p) * (1 + 1e-10))
    r = evaluate(bad, good.params, 1000, np.random.default_rng(0))
    assert not r.quadrature_ok and r.monte_carlo_ok and not r.passed
    wrong_mc = dataclasses.replace(
        good, monte_carlo=lambda rng, n, **p: rng.standard_normal(n) + 1.0
    )
    r = evaluate(wrong_mc, good.params, 10_000, np.random.default_rng(0))
    assert r.quadrature_ok and not r.monte_carlo_ok and abs(r.z) > 10


def test_patterns_and_errors():
    names = [r.name for r in run_checks(["gaussian.zeta*"], samples=1000)]
    assert names == [n for n in REGISTRY if n.startswith("gaussian.zeta")]
    assert {"gaussian.zeta", "gaussian.zeta_c", "gaussian.zeta_t", "gaussian.zeta_tt"} <= set(
        names
    )
    with pytest.raises(ValueError, match="no check matches 'nope'"):
        run_checks(["nope"])
    with pytest.raises(ValueError, match="`samples` must be an integer >= 1000, got 1"):
        run_checks(samples=1)
    with pytest.raises(ValueError, match="already registered"):
        register(REGISTRY["gaussian.zeta"])


def test_results_are_json_ready():
    import json

    [r] = run_checks(["gaussian.zeta"], samples=1000)
    d = json.loads(json.dumps(r.as_dict()))
    assert d["passed"] is True and d["name"] == "gaussian.zeta"
    assert isinstance(REGISTRY["gaussian.zeta"], Check)


def test_at_a_models_parameters_only_that_models_checks_run():
    """``at`` with tanh ran the erf model's checks and echoed tanh; now the model checks
    are those of the model asked for, and a user's sigma gets its risk check built (its
    reference: mpmath quadrature of its own functions)."""
    from slr_theory import Params
    from slr_theory.nonlinearity.examples import softsign

    def model_checks(at):
        return run_checks(["risk.total*"], samples=2000, at=at)

    tanh = model_checks(Params.paper().replace(nonlinearity="tanh"))
    assert [r.name for r in tanh] == ["risk.total_tanh"] and tanh[0].params["lam"] == 0.1
    # the check built for a user's sigma is named like a registered one ("*softsign"
    # matches no registered check), and listed once
    at_mine = Params.paper().replace(nonlinearity=softsign)
    mine = run_checks(["risk.total*", "*softsign"], samples=2000, at=at_mine)
    assert [r.name for r in mine] == ["risk.total_softsign"]
    assert mine[0].passed and mine[0].rel_error < 1e-14
    erf = {r.name for r in model_checks(Params.paper())}
    assert "risk.total" in erf and "risk.total_tanh" not in erf
