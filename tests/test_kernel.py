"""The fused dynamics kernel against the validated closed form of slr_theory.risk."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from slr_theory import Params, _kernel, manifold_risk_grad, risk_grad
from slr_theory.model import overlaps_of


def _random_overlaps(rng, n, scale=1.0):
    k, v = rng.standard_normal((2, n, 6))
    k[:, 2:] *= scale
    v[:, 2:] *= scale
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    e = np.eye(6)
    return overlaps_of(k, v, e[0], e[1])


@given(
    lam=st.floats(1e-3, 5.0),
    gamma=st.floats(1e-2, 3.0),
    d=st.integers(4, 10**6),
    L=st.integers(2, 1000),
    seed=st.integers(0, 2**32 - 1),
)
def test_kernel_gradient_matches_risk_grad(lam, gamma, d, L, seed):
    p = Params(d=d, L=L, lam=lam, gamma=gamma)
    ov = _random_overlaps(np.random.default_rng(seed), 16)
    C, sc = _kernel.coefficient_table(p, lam)
    got = (C @ _kernel.features(ov.T.copy(), sc)).T
    ref = risk_grad(p, *ov.T)
    # each partial to a few ulp of the size of the terms that make it up
    scale = np.abs(ref).max(axis=0) + np.sqrt(d) * (1 + lam) * gamma**2 * 1e-3
    assert np.all(np.abs(got - ref) <= 64 * np.finfo(float).eps * scale)


@pytest.mark.parametrize("lam", [0.1, 0.9, 2.0])
def test_stable_kappa_partial_at_the_optimum(lam):
    """Near (1, 1) on M, dR/dkappa is exponentially small: it must keep relative precision."""
    p = Params.paper(lam=lam)
    k = np.array([1.0, 0.999, 0.9, -1.0])
    n = np.array([1.0, 1 - 1e-12, 0.999999, -1 + 1e-9])
    ov = np.stack([k, n, 0 * k, 0 * k, 0 * k])
    C, sc = _kernel.coefficient_table(p, lam)
    got = (C @ _kernel.features(ov, sc))[:2]
    ref = manifold_risk_grad(p, k, n).T  # erf(a kappa / s) - nu, evaluated independently
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-14)
    # reference: the analytic bracket with erfc, evaluated in mpmath
    import mpmath as mp

    mp.mp.dps = 40
    a = mp.mpf(lam) * mp.sqrt(mp.mpf(p.d) / 2)
    g = mp.mpf(lam) * mp.mpf(p.gamma)
    q = 1 + 2 * g**2
    c, s = a / mp.sqrt(q), mp.sqrt(q * (1 + 4 * g**2))
    for i in range(k.size):
        kk, nn = mp.mpf(k[i]), mp.mpf(n[i])
        exact = (
            4
            * mp.mpf(p.gamma) ** 2
            * c
            / mp.sqrt(mp.pi)
            * mp.exp(-((c * kk) ** 2))
            * (mp.erf(a * kk / s) - nn)
        )
        assert abs(got[0, i] - float(exact)) <= 1e-13 * abs(float(exact)) + 1e-300


@pytest.mark.parametrize("lam", [0.05, 0.5, 3.0])
def test_manifold_kernel_matches_the_general_kernel(lam):
    p = Params(d=300, L=7, lam=lam, gamma=0.8)
    rng = np.random.default_rng(2)
    kn = rng.uniform(-1, 1, (2, 50))
    C, sc = _kernel.coefficient_table(p, lam)
    full = np.zeros((5, 50))
    full[:2] = kn
    g_full = C @ _kernel.features(full, sc)
    g_m = _kernel.manifold_grad(kn, sc[0], sc[1], C[0, _kernel.STABLE_COL], C[1, _kernel.NU_COL])
    np.testing.assert_allclose(g_m, g_full[:2], rtol=1e-14, atol=1e-300)
    assert np.all(g_full[2:] == 0)  # M is invariant, exactly
    step = _kernel.pgd_step(full, g_full, 0.01)
    np.testing.assert_allclose(
        _kernel.manifold_step(kn, g_m, 0.01), step[:2], rtol=1e-14, atol=1e-16
    )
    assert np.all(step[2:] == 0)


def test_kernel_step_is_the_vector_step():
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
    got = _kernel.pgd_step(ov.T.copy(), g.T.copy(), alpha).T
    np.testing.assert_allclose(got, overlaps_of(k1, v1, e[0], e[1]), atol=1e-15)


@pytest.mark.parametrize("lam", [1e-3, 0.05, 0.3, 1.0, 3.0])
def test_kernel_zeta_keeps_relative_precision(lam):
    """Where zeta is tiny the Owen's T form 1 - 8T fails; the kernel switches to the head integral."""
    from slr_theory.gaussian import zeta

    p = Params.paper(lam=lam)
    _, sc = _kernel.coefficient_table(p, lam)
    x = np.linspace(-3, 3, 3001)
    q = 1 + 2 * (lam * p.gamma) ** 2
    ref = zeta(x * np.sqrt(q), lam * p.gamma)
    got = _kernel._zeta(x, sc)
    # per-column scalars (mixed batches) give the same values
    per_column = _kernel._zeta(x, np.repeat(sc[:, None], x.size, axis=1))
    np.testing.assert_allclose(per_column, got, rtol=4 * np.finfo(float).eps)
    assert np.max(np.abs(got - ref) / ref) < 8 * np.finfo(float).eps


def test_vector_coordinates_roundtrip_and_the_two_step_forms_agree():
    """to_vectors/to_overlaps invert each other (degenerate k in span{k*, v*} included),
    and a step on R^4 coordinates equals the Gram-matrix map dynamics.pgd_step."""
    from slr_theory.dynamics import pgd_step

    rng = np.random.default_rng(4)
    ov = _random_overlaps(rng, 64)
    ov[0] = [0.6, 0.3, 0.2, 0.8, 0.5]  # |k|^2 = kappa^2 + eta^2 = 1: k3 = 0
    ov[0, 4] = ov[0, 0] * ov[0, 2] + ov[0, 3] * ov[0, 1]  # then k.v is fixed by the span
    kv = _kernel.to_vectors(ov.T.copy())
    np.testing.assert_allclose(_kernel.to_overlaps(kv).T, ov, atol=1e-15)
    np.testing.assert_allclose(np.sum(kv[:4] ** 2, axis=0), 1, atol=1e-15)
    np.testing.assert_allclose(np.sum(kv[4:] ** 2, axis=0), 1, atol=1e-15)
    g = rng.standard_normal((64, 5))
    via_vectors = _kernel.to_overlaps(_kernel.vector_step(kv, g.T.copy(), 0.05)).T
    np.testing.assert_allclose(via_vectors, pgd_step(ov, g, 0.05), atol=1e-15)
    assert pgd_step(ov.reshape(8, 8, 5), g.reshape(8, 8, 5), 0.05).shape == (8, 8, 5)
