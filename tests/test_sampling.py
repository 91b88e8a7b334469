"""The data model, the predictor, and Monte Carlo risk."""

import numpy as np
import pytest

from slr_theory import Params, risk
from slr_theory.sampling import (
    monte_carlo_risk,
    overlaps_of,
    predict,
    random_targets,
    sample,
    vectors_from_overlaps,
)


def test_sample_statistics():
    p = Params(d=12, L=5, lam=1.0, gamma=0.6, eps=0.2)
    rng = np.random.default_rng(0)
    ks, vs = random_targets(p, rng)
    X, y, J0 = sample(p, 100_000, rng, ks, vs)
    rows = np.arange(len(J0))
    info = X[rows, J0]
    # informative token: mean sqrt(d/2) k*, variance gamma^2 along v*
    np.testing.assert_allclose(info.mean(0), np.sqrt(p.d / 2) * ks, atol=5 * 0.6 / np.sqrt(1e5))
    assert np.var(info @ vs) == pytest.approx(0.36, rel=0.03)
    assert np.var(y) == pytest.approx(0.36 + 0.04, rel=0.03)
    assert np.bincount(J0, minlength=5).min() > 19_000


def test_predict_is_the_attention_sum():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3, 4, 6))
    k, v = rng.standard_normal(6), rng.standard_normal(6)
    from scipy.special import erf

    expect = [sum(erf(0.7 * X[i, j] @ k) * (X[i, j] @ v) for j in range(4)) for i in range(3)]
    # the same erf at dot products formed by another BLAS call (a few ulp of them, O(1)
    # condition): 45 ulp
    np.testing.assert_allclose(predict(X, k, v, 0.7), expect, rtol=1e-14)


def test_vectors_from_overlaps_roundtrip():
    rng = np.random.default_rng(2)
    for _ in range(50):
        x, y = rng.standard_normal((2, 6))
        k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
        ov = np.array([k[0], v[1], v[0], k[1], k @ v])
        kk, vv, ks, vs = vectors_from_overlaps(ov, 7)
        np.testing.assert_allclose(overlaps_of(kk, vv, ks, vs), ov, atol=1e-14)
        assert np.linalg.norm(kk) == pytest.approx(1) and np.linalg.norm(vv) == pytest.approx(1)


def test_monte_carlo_risk_matches_closed_form_and_is_chunked():
    p = Params(d=30, L=6, lam=0.4, gamma=0.8, eps=0.1)
    rng = np.random.default_rng(3)
    ov = np.array([0.7, -0.4, 0.1, 0.2, -0.15])
    k, v, ks, vs = vectors_from_overlaps(ov, p.d)
    mc = monte_carlo_risk(p, k, v, ks, vs, 300_000, rng, chunk_floats=100_000)
    z = (mc.estimate - risk(p, *ov)) / mc.stderr
    assert abs(z) < 5 and mc.n == 300_000


def test_bad_vectors_are_rejected():
    p = Params(d=4, L=2, lam=1.0, gamma=1.0)
    rng = np.random.default_rng(0)
    e1, e2 = np.eye(4)[0], np.eye(4)[1]
    with pytest.raises(ValueError, match="`k` must have unit norm"):
        monte_carlo_risk(p, 2 * e1, e2, e1, e2, 10, rng)
    with pytest.raises(ValueError, match=r"`v` must have shape \(4,\)"):
        monte_carlo_risk(p, e1, np.ones(3), e1, e2, 10, rng)
    with pytest.raises(ValueError, match="must be orthogonal"):
        sample(p, 10, rng, e1, e1)
