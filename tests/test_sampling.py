"""The data model, the predictor, and Monte Carlo risk."""

import numpy as np
import pytest

from slr_theory import Params, risk
from slr_theory.sampling import (
    mean_and_stderr,
    monte_carlo_risk,
    overlaps_of,
    predict,
    random_targets,
    sample,
    squared_errors,
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
    # the same draws, chunk by chunk, and NumPy's two-pass mean and deviation of them all
    rng = np.random.default_rng(3)
    per = 100_000 // (p.L * p.d)
    err = np.concatenate(
        [
            squared_errors(p, k, v, ks, vs, min(per, 300_000 - a), rng)
            for a in range(0, 300_000, per)
        ]
    )
    assert mc.estimate == pytest.approx(err.mean(), rel=1e-13, abs=0)
    assert mc.stderr == pytest.approx(err.std(ddof=1) / np.sqrt(err.size), rel=1e-12, abs=0)


def test_squared_errors_are_the_samples_residuals_with_the_noise_added_last():
    p = Params(d=10, L=4, lam=0.6, gamma=0.7, eps=0.3, s=2)
    ov = np.array([0.5, 0.3, 0.2, -0.1, 0.25])
    k, v, ks, vs = vectors_from_overlaps(ov, p.d)
    err = squared_errors(p, k, v, ks, vs, 1000, 4)
    X, y, _ = sample(p, 1000, 4, ks, vs)  # the same draws
    residual = y - predict(X, k, v, p.lam, p.nonlinearity, p.attention)
    # two roundings of a residual of size |signal| + |xi| <= 30 apart: 2^-52 * 60 each
    np.testing.assert_allclose(np.sqrt(err), np.abs(residual), rtol=0, atol=60 * 2.0**-52)


@pytest.mark.parametrize("eps", [1e-77, 1e-150])
def test_a_noise_far_below_the_labels_rounding_is_not_lost(eps):
    """With one token and softmax, T(X) is the signal exactly: every squared error is
    xi^2, so their mean / eps^2 is a chi-square mean (1 +- 5 * sqrt(2 / n))."""
    p = Params(d=4, L=1, lam=0.3, gamma=0.5, eps=eps, attention="softmax")
    e1, e2 = np.eye(4)[:2]
    n = 20_000
    err = squared_errors(p, e1, e2, e1, e2, n, 5)
    assert abs(err.mean() / eps**2 - 1) < 5 * np.sqrt(2 / n)
    mc = monte_carlo_risk(p, e1, e2, e1, e2, n, 5)  # its standard error does not underflow
    unit = err / eps**2  # NumPy's deviation in units where its squares do not underflow
    assert mc.estimate == pytest.approx(err.mean(), rel=1e-13, abs=0)
    assert mc.stderr == pytest.approx(unit.std(ddof=1) * eps**2 / np.sqrt(n), rel=1e-12, abs=0)
    assert abs(mc.estimate - float(risk(p, 0, 1, 0, 0, 0))) < 5 * mc.stderr


@pytest.mark.parametrize("scale", [1.0, 1e-30, 3e5, 1e100, 1e-100])
@pytest.mark.parametrize("n", [2, 3, 17, 1000, 100_001])
def test_mean_and_stderr_are_numpys_wherever_its_squares_are_normal(scale, n):
    """Scaling by a power of two is exact, and the same NumPy operations follow: bit for
    bit NumPy's mean and std(ddof=1) / sqrt(n)."""
    rng = np.random.default_rng(n)
    for values in (rng.standard_normal(n) * scale, rng.exponential(size=n) * scale + 7 * scale):
        mean, se = mean_and_stderr(values)
        assert mean == values.mean() and se == values.std(ddof=1) / np.sqrt(n)


@pytest.mark.parametrize("scale", [1e-300, 1e-320, 1e200, 1e300])
def test_mean_and_stderr_where_numpys_squares_under_or_overflow(scale):
    """Samples 1..4 times `scale`: the standard error is sqrt(5/12) times `scale`
    (NumPy's is 0 or inf here), to the rounding of the scaled sums (subnormal samples
    carry their own)."""
    values = np.array([1.0, 2.0, 3.0, 4.0]) * scale
    mean, se = mean_and_stderr(values)
    rel = 1e-15 if scale > 1e-300 else 1e-3  # 1e-320 is subnormal: ~8 bits of 1..4 kept
    assert mean == pytest.approx(2.5 * scale, rel=rel, abs=0)
    assert se == pytest.approx(np.sqrt(5 / 12) * scale, rel=rel, abs=0)
    with pytest.raises(ValueError, match="`values` must hold at least two samples, got 1"):
        mean_and_stderr([1.0])


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
    with pytest.raises(ValueError, match="`k` must have unit norm"):
        squared_errors(p, 2 * e1, e2, e1, e2, 10, rng)
