"""The step maps of slr_theory.trajectory against explicit vectors."""

import numpy as np
import pytest

from slr_theory import trajectory
from slr_theory.model import overlaps_of
from slr_theory.params import gram_matrix

from .strategies import random_overlaps


def test_overlap_step_is_the_vector_step():
    """One step on explicit vectors in R^6 against the closed-form overlap map."""
    rng = np.random.default_rng(9)
    k, v = rng.standard_normal((2, 40, 6))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    e = np.eye(6)
    ov = overlaps_of(k, v, e[0], e[1])
    g = rng.standard_normal((40, 5))
    rk, rn, rt, re, rr = (g[:, i : i + 1] for i in range(5))
    gk = rk * e[0] + re * e[1] + rr * v
    gv = rt * e[0] + rn * e[1] + rr * k
    alpha = 0.07
    k1 = k - alpha * (gk - np.sum(gk * k, -1, keepdims=True) * k)
    v1 = v - alpha * (gv - np.sum(gv * v, -1, keepdims=True) * v)
    k1 /= np.linalg.norm(k1, axis=-1, keepdims=True)
    v1 /= np.linalg.norm(v1, axis=-1, keepdims=True)
    got = trajectory.overlap_step(ov.T.copy(), g.T.copy(), alpha).T
    np.testing.assert_allclose(got, overlaps_of(k1, v1, e[0], e[1]), atol=1e-15)


def test_vector_coordinates_roundtrip_and_the_two_step_forms_agree():
    """to_vectors/to_overlaps invert each other (degenerate k in span{k*, v*} included),
    and a step on R^4 coordinates equals the Gram-matrix map dynamics.pgd_step."""
    from slr_theory.dynamics import pgd_step

    rng = np.random.default_rng(4)
    ov = random_overlaps(rng, 64)
    ov[0] = [0.6, 0.3, 0.2, 0.8, 0.5]  # |k|^2 = kappa^2 + eta^2 = 1: k3 = 0
    ov[0, 4] = ov[0, 0] * ov[0, 2] + ov[0, 3] * ov[0, 1]  # then k.v is fixed by the span
    kv = trajectory.to_vectors(ov.T.copy())
    np.testing.assert_allclose(trajectory.to_overlaps(kv).T, ov, atol=1e-15)
    np.testing.assert_allclose(np.sum(kv[:4] ** 2, axis=0), 1, atol=1e-15)
    np.testing.assert_allclose(np.sum(kv[4:] ** 2, axis=0), 1, atol=1e-15)
    g = rng.standard_normal((64, 5))
    via_vectors = trajectory.to_overlaps(trajectory.vector_step(kv, g.T.copy(), 0.05)).T
    np.testing.assert_allclose(via_vectors, pgd_step(ov, g, 0.05), atol=1e-15)
    assert pgd_step(ov.reshape(8, 8, 5), g.reshape(8, 8, 5), 0.05).shape == (8, 8, 5)


def test_manifold_step_is_the_overlap_step_on_m():
    rng = np.random.default_rng(3)
    kn = rng.uniform(-1, 1, (2, 30))
    g = rng.standard_normal((2, 30))
    full = np.zeros((5, 30))
    full[:2] = kn
    gfull = np.zeros((5, 30))
    gfull[:2] = g
    step = trajectory.overlap_step(full, gfull, 0.03)
    np.testing.assert_allclose(trajectory.manifold_step(kn, g, 0.03), step[:2], atol=1e-15)
    assert np.all(step[2:] == 0)


# --- nearest_feasible: the integrator's way back into the feasible set ---------------------


def _gram_min_eigenvalue(ov5: np.ndarray) -> np.ndarray:
    """The smallest eigenvalue of the Gram matrix of (k, v, k*, v*), by LAPACK: feasible
    overlaps have it >= 0 (independent of the coordinates nearest_feasible works in)."""
    return np.linalg.eigvalsh(gram_matrix(*ov5))[..., 0]


def _near_boundary(rng: np.random.Generator, size: int, k3: np.ndarray) -> np.ndarray:
    """Feasible overlaps with k at distance k3 from span{k*, v*} (vectors built, not solved)."""
    phi = rng.uniform(0, 2 * np.pi, size)
    k = np.stack([np.cos(phi) * np.sqrt(1 - k3**2), np.sin(phi) * np.sqrt(1 - k3**2), k3, 0 * k3])
    v = rng.standard_normal((4, size))
    v /= np.linalg.norm(v, axis=0)
    return np.array([k[0], v[1], v[0], k[1], np.sum(k * v, axis=0)])


def test_nearest_feasible_leaves_feasible_overlaps_alone_bit_for_bit():
    ov = random_overlaps(np.random.default_rng(4), 500).T.copy()
    assert trajectory.nearest_feasible(ov) is ov
    on_m = np.zeros((5, 3))
    on_m[0], on_m[1] = [1.0, -1.0, 0.3], [0.2, 1.0, -1.0]  # the closed square, corners included
    assert trajectory.nearest_feasible(on_m) is on_m


@pytest.mark.parametrize("k3", [0.0, 1e-9, 2e-7, 1e-4, 0.3])
@pytest.mark.parametrize("delta", [1e-14, 1e-10, 1e-6])
def test_nearest_feasible_brings_perturbed_overlaps_back_no_further_than_stated(k3, delta):
    """Near the boundary det Gram = 0, where the Cholesky reconstruction (to_vectors)
    divides by k3: every result is feasible (Gram PSD to rounding), and it moves no
    further than the perturbation plus the change of E with k (<= sqrt(2 |d(kappa, eta)|)),
    whatever k3."""
    rng = np.random.default_rng(int(1e3 * k3 + 1e5 * delta) % 2**32)
    ov = _near_boundary(rng, 400, np.full(400, k3))
    pert = rng.uniform(-delta, delta, ov.shape)
    moved = trajectory.nearest_feasible(ov + pert)
    assert np.all(_gram_min_eigenvalue(moved) >= -1e-14)
    step = np.max(np.abs(moved - (ov + pert)), axis=0)
    assert np.all(step <= 3 * delta + np.sqrt(4 * delta) + 1e-15)
    # where to_vectors (Cholesky) fails: a norm of v far from 1 (k3 small, delta large)
    kv = trajectory.to_vectors(moved)
    assert np.allclose(np.sum(kv[4:] ** 2, axis=0), 1.0, atol=1e-6 if k3 else 1.0)


@pytest.mark.parametrize(
    "k, z",
    [
        ([0.3, -0.5, np.sqrt(1 - 0.34)], [0.8, 0.7, 0.9]),  # far outside E
        # k = -v* exactly (k3 = 0): A is singular, E a flat disc; its unreached direction
        # once made the secular equation 0/0, and the point went to (0, 0, 0)
        ([0.0, -1.0, 0.0], [0.9, 0.9, 0.0]),
    ],
)
def test_nearest_feasible_is_the_nearest_point_of_the_ellipsoid(k, z):
    """With k fixed (on the unit sphere), (theta, nu, rho) goes to the point of E = {A w:
    |w| <= 1} nearest it: against a brute-force minimum over a dense sample of the sphere."""
    rng = np.random.default_rng(9)
    k, z = np.array(k), np.array(z)
    ov = np.array([[k[0]], [z[1]], [z[0]], [k[1]], [z[2]]])
    got = trajectory.nearest_feasible(ov)[:, 0]
    w = rng.standard_normal((3, 400_000))
    w /= np.linalg.norm(w, axis=0)
    A = np.array([[1, 0, 0], [0, 1, 0], k])
    image = A @ w
    best = image[:, np.argmin(np.sum((image - z[:, None]) ** 2, axis=0))]
    np.testing.assert_allclose([got[2], got[1], got[4]], best, atol=5e-3)
    assert np.linalg.norm([got[2], got[1], got[4]] - z) <= np.linalg.norm(best - z) + 1e-12


def test_nearest_feasible_keeps_a_run_on_m_exactly_on_m():
    """On M the feasible set is the square: an overshoot past a corner is clipped, and
    theta = eta = rho stay exact zeros (the SVD route would leave rounding there)."""
    ov = np.zeros((5, 4))
    ov[0] = [1.0 + 1e-12, 0.3, -1.0 - 1e-9, 0.999]
    ov[1] = [0.5, 1.0 + 3e-10, -1.0 - 2e-16, 1.0 + 1e-15]
    got = trajectory.nearest_feasible(ov)
    np.testing.assert_array_equal(got[2:], 0.0)
    np.testing.assert_array_equal(got[:2], np.clip(ov[:2], -1.0, 1.0))
