"""The step maps of slr_theory.trajectory against explicit vectors."""

import numpy as np

from slr_theory import trajectory
from slr_theory.sampling import overlaps_of

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


def test_to_vectors_takes_any_batch_shape_and_one_point():
    """One point ``(5,)`` gives ``(8,)``; a batch ``(5, a, b)`` gives ``(8, a, b)``; each
    the same numbers as the flat batch, column by column, with ``k``'s fourth coordinate 0."""
    ov = random_overlaps(np.random.default_rng(4), 12).T.copy()  # (5, 12)
    flat = trajectory.to_vectors(ov)
    np.testing.assert_array_equal(trajectory.to_vectors(ov[:, 5]), flat[:, 5])
    np.testing.assert_array_equal(
        trajectory.to_vectors(ov.reshape(5, 3, 4)), flat.reshape(8, 3, 4)
    )
    assert np.all(flat[3] == 0.0) and not np.signbit(flat[3]).any()
    np.testing.assert_allclose(trajectory.to_overlaps(flat), ov, atol=1e-15)
