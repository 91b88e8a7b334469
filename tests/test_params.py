"""Params validation and overlap feasibility."""

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from slr_theory import OVERLAP_NAMES, Params, check_overlaps
from slr_theory.params import gram_matrix, overlap_tolerance, project_feasible
from slr_theory.trajectory import to_vectors

from .strategies import random_overlaps


def test_params_is_frozen_and_replace_revalidates():
    p = Params(d=400, L=10, lam=0.1, gamma=0.5**0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.lam = 1.0
    assert p.replace(lam=0.9).lam == 0.9 and p.lam == 0.1
    with pytest.raises(ValueError, match=r"`lam` must be finite and > 0, got -0\.5"):
        p.replace(lam=-0.5)
    assert Params(d=10**9, L=1, lam=1e-4, gamma=1e2).d == 10**9
    assert Params(d=np.int64(8), L=2.0, lam=1, gamma=1).L == 2
    assert Params.paper().gamma == pytest.approx(0.5**0.5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"d": 0}, "`d` must be a positive integer, got 0"),
        ({"d": 1}, "`d` must be an integer >= 2"),
        ({"d": 2.5}, "`d` must be a positive integer, got 2.5"),
        ({"d": True}, "`d` must be a positive integer, got True"),
        ({"L": -1}, "`L` must be a positive integer, got -1"),
        ({"L": "3"}, "`L` must be a positive integer, got '3'"),
        ({"lam": 0.0}, "`lam` must be finite and > 0, got 0.0"),
        ({"lam": float("nan")}, "`lam` must be a finite real number, got nan"),
        ({"gamma": float("inf")}, "`gamma` must be a finite real number, got inf"),
        ({"gamma": -1.0}, "`gamma` must be finite and > 0, got -1.0"),
        ({"eps": -0.1}, "`eps` must be finite and >= 0, got -0.1"),
        ({"s": 0}, "`s` must be a positive integer, got 0"),
        ({"s": True}, "`s` must be a positive integer, got True"),
        ({"s": 1.5}, "`s` must be a positive integer, got 1.5"),
        ({"s": 3}, "`s` (informative tokens) must lie in [1, L] = [1, 2], got 3"),
    ],
)
def test_params_bad_input(kwargs, message):
    base = {"d": 4, "L": 2, "lam": 1.0, "gamma": 1.0}
    with pytest.raises(ValueError, match=re.escape(message)):
        Params(**{**base, **kwargs})


def test_overlap_order_is_the_convention():
    assert OVERLAP_NAMES == ("kappa", "nu", "theta", "eta", "rho")


@given(seed=st.integers(0, 2**32 - 1))
def test_overlaps_of_random_vectors_are_feasible(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((2, 6))
    k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
    out = check_overlaps(k[0], v[1], v[0], k[1], k @ v)
    assert [float(o) for o in out] == [k[0], v[1], v[0], k[1], k @ v]


@pytest.mark.parametrize(
    "overlaps, message",
    [
        ((1.5, 0.0), r"`kappa` must lie in \[-1, 1\], got 1.5"),
        (
            (0.9, 0.0, 0.0, 0.9),
            r"kappa\*\*2 \+ eta\*\*2 <= 1 \(k has unit norm\) fails, got kappa=0.9, eta=0.9",
        ),
        ((0.0, 0.8, 0.8), r"theta\*\*2 \+ nu\*\*2 <= 1"),
        ((0.0, 0.0, 0.0, 0.0, 0.0), None),
        ((0.9, 0.9, 0.0, 0.0, -0.9), "positive semi-definite, smallest eigenvalue"),
        ((float("nan"), 0.0), "`kappa` must not be NaN"),
    ],
)
def test_check_overlaps_names_the_violation(overlaps, message):
    if message is None:
        check_overlaps(*overlaps)
        return
    with pytest.raises(ValueError, match=message):
        check_overlaps(*overlaps)


def test_low_dimension_rank_condition():
    # d = 2: k, v in span(k*, v*), so kappa^2 + eta^2 = 1 is required
    with pytest.raises(ValueError, match=r"dimension d=2.*rank"):
        check_overlaps(0.5, 0.5, d=2)
    c, s = np.cos(0.3), np.sin(0.3)
    check_overlaps(c, c, -s, s, 0.0, d=2)


def test_shapes_must_broadcast():
    with pytest.raises(ValueError, match="shapes do not broadcast"):
        check_overlaps(np.zeros(2), np.zeros(3))


def test_gram_matrix_is_the_gram_of_the_vectors():
    from slr_theory.params import gram_matrix
    from slr_theory.sampling import overlaps_of, vectors_from_overlaps

    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((2, 6))
    k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
    ov = np.array([k[0], v[1], v[0], k[1], k @ v])
    vecs = np.stack(vectors_from_overlaps(ov, 6))
    np.testing.assert_allclose(gram_matrix(*overlaps_of(*vecs).T), vecs @ vecs.T, atol=1e-14)
    assert gram_matrix(np.zeros(3), np.zeros(3)).shape == (3, 4, 4)


def test_a_long_check_gives_the_values_and_the_errors_of_short_ones():
    """Long inputs are checked in blocks: each value as alone, each error as ever."""
    ov = random_overlaps(np.random.default_rng(7), 9000).T.copy()
    ov[4] += 1e-13  # some rho just outside the feasible set, projected back
    long = check_overlaps(*ov)
    for i in (0, 4095, 4096, 8999):
        one = check_overlaps(*ov[:, i])
        assert [float(x[i]) for x in long] == [float(x) for x in one]
    long_m = check_overlaps(ov[0], ov[1])  # scalars broadcast in every block
    assert all(x.shape == (9000,) for x in long_m) and not long_m[4].any()
    bad = ov.copy()
    bad[0, 8000], bad[3, 8000] = 0.9, 0.9  # a pair fails in the last block ...
    bad[1, 100] = 1.5  # ... and a range in the first: the range is reported, as ever
    with pytest.raises(ValueError, match=r"`nu` must lie in \[-1, 1\], got 1.5"):
        check_overlaps(*bad)
    bad[1, 100] = 0.0
    with pytest.raises(ValueError, match=re.escape("kappa=0.9, eta=0.9")):
        check_overlaps(*bad)


def test_the_largest_softmax_temperature_is_one_the_model_accepts():
    """lam_max = 10 / gamma rounded up once (gamma = 9.646616199111993: lam * gamma =
    10.000000000000002 > 10), and Params refused the model's own largest temperature
    (found by the dev-profile fuzz of slr_theory.testing.params)."""
    for d, gamma in ((4, 9.646616199111993), (4, 3.0), (10_000, 0.7), (7, 1.1)):
        p = Params(d=d, L=4, lam=0.01, gamma=gamma, attention="softmax")
        top = p.replace(lam=p.lam_max)  # accepted
        bound = min(1000 / np.sqrt(d / 2), 10 / max(1.0, gamma), 1000.0)
        assert top.lam == p.lam_max and bound * (1 - 4e-16) <= p.lam_max <= bound


# --- project_feasible: check_overlaps' projection, and the integrator's way back ------------


def _gram_min_eigenvalue(ov5: np.ndarray) -> np.ndarray:
    """The smallest eigenvalue of the Gram matrix of (k, v, k*, v*), by LAPACK: feasible
    overlaps have it >= 0 (independent of the Schur complement project_feasible uses)."""
    return np.linalg.eigvalsh(gram_matrix(*ov5))[..., 0]


def _near_boundary(rng: np.random.Generator, size: int, k3: np.ndarray) -> np.ndarray:
    """Feasible overlaps with k at distance k3 from span{k*, v*} (vectors built, not solved)."""
    phi = rng.uniform(0, 2 * np.pi, size)
    k = np.stack([np.cos(phi) * np.sqrt(1 - k3**2), np.sin(phi) * np.sqrt(1 - k3**2), k3, 0 * k3])
    v = rng.standard_normal((4, size))
    v /= np.linalg.norm(v, axis=0)
    return np.array([k[0], v[1], v[0], k[1], np.sum(k * v, axis=0)])


def test_project_feasible_leaves_feasible_overlaps_alone_bit_for_bit():
    ov = random_overlaps(np.random.default_rng(4), 500).T.copy()
    np.testing.assert_array_equal(np.array(project_feasible(*ov)), ov)
    on_m = np.zeros((5, 4))
    on_m[0] = [1.0 + 1e-12, 0.3, -1.0 - 1e-9, 0.999]  # overshoots past the square's edges
    on_m[1] = [0.5, 1.0 + 3e-10, -1.0 - 2e-16, 1.0 + 1e-15]
    got = np.array(project_feasible(*on_m))
    np.testing.assert_array_equal(got[2:], 0.0)  # a run on M stays on M
    np.testing.assert_array_equal(got[:2], np.clip(on_m[:2], -1.0, 1.0))


@pytest.mark.parametrize("k3", [0.0, 1e-9, 2e-7, 1e-4, 0.3])
@pytest.mark.parametrize("delta", [1e-14, 1e-10, 1e-6])
def test_project_feasible_brings_perturbed_overlaps_back_no_further_than_stated(k3, delta):
    """Near the boundary det Gram = 0, where the Cholesky reconstruction (to_vectors)
    divides by k3: every result is feasible (Gram PSD to rounding, by LAPACK), and it moves
    no further than the perturbation plus the square roots' response (<= sqrt(4 delta)),
    whatever k3; the vectors rebuilt from it have unit norm."""
    rng = np.random.default_rng(int(1e3 * k3 + 1e5 * delta) % 2**32)
    ov = _near_boundary(rng, 400, np.full(400, k3))
    pert = rng.uniform(-delta, delta, ov.shape)
    moved = np.array(project_feasible(*(ov + pert)))
    assert np.all(_gram_min_eigenvalue(moved) >= -1e-14)
    step = np.max(np.abs(moved - (ov + pert)), axis=0)
    assert np.all(step <= 3 * delta + np.sqrt(4 * delta) + 1e-15)
    kv = to_vectors(moved)
    assert np.allclose(np.sum(kv[4:] ** 2, axis=0), 1.0, atol=1e-6 if k3 else 1.0)


def test_project_feasible_at_k_in_span_of_k_star_v_star():
    """k = -v* exactly (s11 = 0): v onto its disc, and rho onto k.v, its only value."""
    got = np.array(project_feasible(0.0, 0.9, 0.9, -1.0, 0.0))
    assert _gram_min_eigenvalue(got) >= -1e-15
    np.testing.assert_allclose(got, [0.0, 0.5**0.5, 0.5**0.5, -1.0, -(0.5**0.5)], rtol=1e-15)


def test_check_overlaps_moves_overlaps_within_its_tolerance_as_project_feasible_does():
    """One projection: what check_overlaps accepts within its tolerance it moves to the same
    numbers, bit for bit, as the integrator's (longrun.advance)."""
    rng = np.random.default_rng(12)
    ov = _near_boundary(rng, 200, 10 ** rng.uniform(-9, -1, 200))
    ov = ov + rng.uniform(-1e-9, 1e-9, ov.shape)
    with overlap_tolerance(1e-6):
        checked = np.array(check_overlaps(*ov))
    np.testing.assert_array_equal(checked, np.array(project_feasible(*ov)))
