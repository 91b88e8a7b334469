"""Bad input gets a clear error naming the argument, never a wrong number (a start of the
contract suite: the cases found by trying the toolkit as a new user would)."""

import numpy as np
import pytest

from slr_theory import Params, mean_erf, risk
from slr_theory.dynamics import sample_initial_overlaps
from slr_theory.experiments import run
from slr_theory.flows import manifold_flow
from slr_theory.model import monte_carlo_risk, sample, vectors_from_overlaps

P = Params.paper()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: vectors_from_overlaps([0.9, 0.9, 0.9, 0.9, 0], 400), "infeasible"),
        (lambda: vectors_from_overlaps([2, 0, 0, 0, 0], 400), "`kappa` must lie in"),
        (lambda: vectors_from_overlaps([np.nan, 0, 0, 0, 0], 400), "`kappa` must not be NaN"),
        (lambda: vectors_from_overlaps([0.5, 0.5, 0, 0], 400), "five numbers"),
        (lambda: vectors_from_overlaps([0.5, 0.5, 0, 0, 0], 3), "`d` must be >= 4"),
        (lambda: mean_erf(None, 1), "`mu` must be real numbers, got None"),
        (lambda: mean_erf("1", 1), "`mu` must be real numbers"),
        (lambda: risk(P, None, 0), "`kappa` must be real numbers, got None"),
        (lambda: sample(P, -1, np.random.default_rng()), "`n` must be a positive integer"),
        (lambda: sample_initial_overlaps(400, np.random.default_rng(), -1), "`size`"),
        (
            lambda: sample_initial_overlaps(3, np.random.default_rng(), 2),
            "`d` must be >= 4",
        ),
        (lambda: sample_initial_overlaps(400, 0, 2), "`rng`"),
        (lambda: run("gd_manifold", records=0), "`records`"),
        (lambda: run("gd_manifold", seed=-1), "`seed`"),
        (lambda: run("gd_manifold", repeats=0), "`repeats`"),
        (lambda: run("gd_manifold", steps_scale=2.0), "`steps_scale`"),
        (lambda: manifold_flow(P, 0.1, 0.1, 1.0, method="bogus"), "`method` must be one of"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_monte_carlo_needs_two_samples_for_a_standard_error():
    k, v, ks, vs = vectors_from_overlaps([0.5, 0.5, 0, 0, 0], 20)
    p = Params(d=20, L=3, lam=0.5, gamma=0.7)
    for n in (0, 1):
        with pytest.raises(ValueError, match="`n`"):
            monte_carlo_risk(p, k, v, ks, vs, n, np.random.default_rng())
    assert monte_carlo_risk(p, k, v, ks, vs, 2, np.random.default_rng()).stderr >= 0
