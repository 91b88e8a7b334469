"""Softmax-1 attention (softmax with a sink): its risk, gradient and Hessian, checked two
independent ways.

- High precision: the risk at one token against mpmath (its weight is logistic in its own
  key: :func:`slr_theory.verify.risk_checks.mp_softmax1_risk_one_token`), and at two
  tokens against a tensor Gauss-Hermite rule over both keys (no Laplace transform).
- Monte Carlo: the risk on explicit tokens in ``R^d`` (z-tests), SGD's stochastic
  gradient against the exact one.
- Gradients and Hessians against finite differences, and the gradient at one token
  against exact differences of the mpmath reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss

from slr_theory import Params, risk, risk_grad, risk_hessian
from slr_theory.critical import SYMMETRIES, symmetries
from slr_theory.models import Softmax, Softmax1, model_of
from slr_theory.sampling import monte_carlo_risk, vectors_from_overlaps
from slr_theory.verify.risk_checks import mp_risk_gradient, mp_softmax1_risk_one_token

S1 = Params(d=20, L=4, lam=0.9, gamma=0.7, attention="softmax1")


def _tensor_risk(p: Params, ov) -> float:
    """The risk on L = 2 tokens by a 2-D Gauss-Hermite rule in the keys ``(U_1, U_2)``.

    Given the keys the tokens' ``(V, W)`` are Gaussian (docs/theory.md, softmax
    attention): ``E[V | U] = B theta + rho D`` and ``E[W | U] = eta D`` for an informative
    token, ``rho D`` and 0 for a distractor, with conditional variances ``g (1 - rho^2)``,
    ``g (1 - eta^2)`` and covariance ``g (nu - rho eta)`` (``g = gamma^2`` or 1).
    """
    kappa, nu, theta, eta, rho = ov
    B, G = np.sqrt(p.d / 2), p.gamma**2
    x, w = hermegauss(160)
    w = w / np.sqrt(2 * np.pi)
    inf = [True, p.s == 2]
    sd = [p.gamma, p.gamma if inf[1] else 1.0]
    D = [sd[0] * x[:, None], sd[1] * x[None, :]]
    U = [B * kappa + D[0], (B * kappa if inf[1] else 0.0) + D[1]]
    top = np.maximum(np.maximum(U[0], U[1]), 0.0) * p.lam
    e = [np.exp(p.lam * u - top) for u in U]
    total = np.exp(-top) + e[0] + e[1]
    q = [e[0] / total, e[1] / total]
    mean, var = 0.0, 0.0
    for i in range(2):
        g = G if inf[i] else 1.0
        if inf[i]:
            mean = mean + eta * D[i] - q[i] * (B * theta + rho * D[i])
            var = var + g * ((1 - eta**2) - 2 * q[i] * (nu - rho * eta) + q[i] ** 2 * (1 - rho**2))
        else:
            mean = mean - q[i] * rho * D[i]
            var = var + g * q[i] ** 2 * (1 - rho**2)
    return float(p.eps**2 + np.sum(w[:, None] * w[None, :] * (var + mean**2)))


OFF_M = [(0.3, 0.4, 0.1, -0.2, 0.25), (-0.6, 0.5, 0.3, 0.4, -0.1), (0.95, 0.97, 0.05, 0.1, 0.14)]


@pytest.mark.parametrize("ov", [*OFF_M, (1.0, 1.0, 0.0, 0.0, 0.0), (0.2, -0.7, 0.0, 0.0, 0.0)])
@pytest.mark.parametrize("lam", [0.3, 1.7])
def test_risk_at_one_token_matches_mpmath(ov, lam):
    p = Params(d=24, L=1, lam=lam, gamma=0.8, eps=0.05, attention="softmax1")
    ref = float(mp_softmax1_risk_one_token(p, ov, dps=30))
    assert abs(risk(p, *ov) - ref) <= 1e-12 * ref


def test_risk_near_the_optimum_keeps_its_relative_precision():
    """At (k*, v*) with a large mean logit the risk is small (the sink's weight and the
    token's complement, both ~ e^{-lam B}): the stable form keeps its relative precision."""
    p = Params(d=400, L=1, lam=0.6, gamma=0.5, attention="softmax1")
    # k, v turned by small angles a, b towards v*, k*: a feasible point near the optimum
    points = [(1.0, 1.0, 0.0, 0.0, 0.0)]
    for a, b in [(1e-5, 2e-5), (1e-3, -2e-3)]:
        points.append((np.cos(a), np.cos(b), np.sin(b), np.sin(a), np.sin(a + b)))
    for ov in points:
        ref = float(mp_softmax1_risk_one_token(p, ov, dps=40))
        assert ref < 1e-3
        assert abs(risk(p, *ov) - ref) <= 1e-13 * ref


@pytest.mark.parametrize("s_", [1, 2])
@pytest.mark.parametrize("ov", OFF_M)
def test_risk_at_two_tokens_matches_a_tensor_rule_over_the_keys(s_, ov):
    for lam in (0.3, 1.7):
        p = Params(d=24, L=2, lam=lam, gamma=0.8, s=s_, eps=0.05, attention="softmax1")
        ref = _tensor_risk(p, ov)
        assert abs(risk(p, *ov) - ref) <= 1e-12 * ref


POINTS = [
    (S1, (0.3, 0.4, 0.1, -0.2, 0.25)),
    (
        Params(d=8, L=6, lam=2.0, gamma=1.3, s=2, attention="softmax1"),
        (-0.5, 0.6, 0.3, 0.2, 0.1),
    ),
    (
        Params(d=8, L=1, lam=2.0, gamma=1.3, eps=0.1, attention="softmax1"),
        (0.7, -0.6, 0.3, 0.2, 0.1),
    ),
]


@pytest.mark.parametrize("p,ov", POINTS)
def test_risk_matches_monte_carlo_on_explicit_tokens(p, ov):
    k, v, ks, vs = vectors_from_overlaps(np.array(ov), p.d)
    mc = monte_carlo_risk(p, k, v, ks, vs, 200_000, np.random.default_rng(11))
    assert abs(risk(p, *ov) - mc.estimate) <= 4 * mc.stderr


@pytest.mark.parametrize("p,ov", POINTS)
def test_gradient_and_hessian_match_finite_differences(p, ov):
    ov = np.array(ov)
    g, H = risk_grad(p, *ov), risk_hessian(p, *ov)
    h = 1e-6
    for i in range(5):
        e = np.zeros(5)
        e[i] = h
        fd = (risk(p, *(ov + e)) - risk(p, *(ov - e))) / (2 * h)
        assert abs(g[i] - fd) <= 1e-7 * (1 + abs(g[i]))
        fd_g = (risk_grad(p, *(ov + e)) - risk_grad(p, *(ov - e))) / (2 * h)
        np.testing.assert_allclose(H[i], fd_g, rtol=1e-6, atol=1e-7)


def test_gradient_at_one_token_matches_exact_differences_of_mpmath():
    p = Params(d=24, L=1, lam=0.9, gamma=0.8, eps=0.05, attention="softmax1")
    ov = (0.4, -0.3, 0.2, 0.35, -0.15)
    ref = np.array(
        [float(x) for x in mp_risk_gradient(p, ov, reference=mp_softmax1_risk_one_token)]
    )
    np.testing.assert_allclose(risk_grad(p, *ov), ref, rtol=1e-11, atol=1e-13)


def test_the_sink_is_a_weight_the_tokens_do_not_take():
    """lam -> 0: every weight is 1/(L + 1), the sink's too, so on M
    R = eps^2 + s gamma^2 (1 - 2 nu/(L + 1) + 1/(L + 1)^2) + (L - s)/(L + 1)^2;
    and softmax-1 is not softmax (whose weights are 1/L)."""
    p = Params(d=50, L=7, lam=1e-6, gamma=0.6, s=2, eps=0.2, attention="softmax1")
    nu = np.array([-0.5, 0.0, 0.8])
    n, s, g2 = p.L + 1, p.s, p.gamma**2
    want = p.eps**2 + s * g2 * (1 - 2 * nu / n + 1 / n**2) + (p.L - s) / n**2
    np.testing.assert_allclose(risk(p, 0.4, nu, 0.0, 0.0, 0.0), want, rtol=1e-5)
    soft = p.replace(attention="softmax")
    assert abs(risk(soft, 0.4, 0.5, 0.0, 0.0, 0.0) - risk(p, 0.4, 0.5, 0.0, 0.0, 0.0)) > 1e-2


def test_the_forward_map_has_a_sink():
    """Weights positive and below one in sum; a common shift of the logits moves them
    (softmax ignores it); one token of logit 0 takes half the value; no overflow at large
    logits."""
    m = model_of("softmax1")
    assert m == Softmax1() and m != Softmax() and m.sink and not Softmax().sink
    U = np.random.default_rng(0).standard_normal((4, 5))
    V = np.ones_like(U)
    T = m.forward(U, V, 1.3)[0]  # T = sum of the weights, with V = 1
    assert np.all((T > 0) & (T < 1))
    assert not np.allclose(m.forward(U + 2.0, V, 1.3)[0], T)
    # sum of 5 weights e_i / S, S itself a sum of the same e_i: 4 + 1 + 4 roundings of
    # u = 2^-53 whatever exp returns (the e_i cancel): 9 u, derived
    np.testing.assert_allclose(Softmax().forward(U + 2.0, V, 1.3)[0], 1.0, rtol=9.5 * 2.0**-53)
    assert float(m.forward(np.array([0.0]), np.array([3.0]), 1.0)[0]) == 1.5
    big = m.forward(np.array([800.0, -800.0]), np.array([2.0, 5.0]), 1.0)[0]
    assert float(big) == 2.0  # the first token takes every weight
    tiny = m.forward(np.array([-800.0, -900.0]), np.array([2.0, 5.0]), 1.0)[0]
    assert float(tiny) == 0.0  # the sink takes every weight


def test_facts_on_m_are_computed_for_the_model():
    """One token: the risk depends on the key (softmax's does not); M is invariant, the
    origin not critical (R_nu < 0 on M); the symmetry group has no (k, v) -> (-k, -v)."""
    one = Params(d=20, L=1, lam=0.9, gamma=0.7, attention="softmax1")
    assert not one.model.key_free(one)
    assert one.replace(attention="softmax").model.key_free(one.replace(attention="softmax"))
    for p in (S1, one):
        m = p.model
        assert m.manifold_invariant(p) and not m.origin_critical(p)
        grid = np.linspace(-1, 1, 9)
        for kappa in grid:
            assert risk_grad(p, kappa, 0.3, 0.0, 0.0, 0.0)[1] < 0
    rows = symmetries(S1)
    flip = SYMMETRIES[1]  # (k, v) -> (-k, -v)
    assert len(rows) == 2 and not any(np.array_equal(r, flip) for r in rows)
    assert all(any(np.array_equal(r, s) for s in SYMMETRIES) for r in rows)
    ov = np.array([0.3, 0.4, 0.1, -0.2, 0.25])
    for g in rows:
        assert risk(S1, *(g * ov)) == pytest.approx(risk(S1, *ov), rel=1e-13)
    assert abs(risk(S1, *(flip * ov)) - risk(S1, *ov)) > 1e-3


def test_the_certificate_names_the_model_and_its_numbers():
    text = " ".join(S1.model.manifold_certificate(S1))
    assert "softmax-1 attention" in text and "softmax(lam U)" not in text
    low = float(risk_grad(S1, -1.0, 0.0, 0.0, 0.0, 0.0)[1])
    assert f"{low:.6g}" in text


@pytest.mark.parametrize("law", [False, True])
def test_sgd_follows_the_exact_gradient_in_expectation(law):
    """One small SGD step from the same (k, v) in many repeats, on explicit vectors and in
    law on the overlaps: its mean is -alpha grad (z-test)."""
    from slr_theory import risk_grad_at
    from slr_theory.sgd import sgd, sgd_vectors

    p = Params(d=6, L=4, lam=0.8, gamma=0.7, attention="softmax1")
    ov = np.array([0.3, 0.4, 0.1, -0.2, 0.25])
    k, v, ks, vs = vectors_from_overlaps(ov, p.d)
    R, alpha = 400, 1e-4
    rng = np.random.default_rng(11)
    if law:
        res = sgd(p, np.tile(ov, (R, 1)), alpha, 1, batch=500, rng=rng)
    else:
        res = sgd_vectors(
            p, np.tile(k, (R, 1)), np.tile(v, (R, 1)), ks, vs, alpha, 1, batch=500, rng=rng
        )
    step = (res.overlaps[1] - res.overlaps[0]) / alpha  # (R, 5)
    gk, gv = risk_grad_at(p, k, v, ks, vs, riemannian=True)
    want = -np.array([gk @ ks, gv @ vs, gv @ ks, gk @ vs, gk @ v + k @ gv])
    se = step.std(axis=0) / np.sqrt(R)
    assert np.all(np.abs(step.mean(axis=0) - want) <= 4 * se + 1e-3 * np.abs(want))


def test_one_token_is_pointwise_sigmoid_attention():
    """Over one token the sink makes the weight the sigmoid of the key: the Laplace-transform
    terms (softmax-1) and the sigmoid's Gaussian moments (pointwise) give one risk,
    gradient and Hessian, two independent computations."""
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((2, 6, 20))
    k, v = x / np.linalg.norm(x, axis=0), y / np.linalg.norm(y, axis=0)
    ov = np.array([k[0], v[1], v[0], k[1], (k * v).sum(axis=0)])
    for lam in (0.3, 1.7):
        sink = Params(d=24, L=1, lam=lam, gamma=0.8, eps=0.05, attention="softmax1")
        sig = sink.replace(attention="pointwise", nonlinearity="sigmoid")
        np.testing.assert_allclose(risk(sink, *ov), risk(sig, *ov), rtol=1e-12)
        scale = np.abs(risk_grad(sig, *ov)).max()
        np.testing.assert_allclose(risk_grad(sink, *ov), risk_grad(sig, *ov), atol=1e-12 * scale)
        H, Hs = risk_hessian(sink, *ov), risk_hessian(sig, *ov)
        np.testing.assert_allclose(H, Hs, atol=1e-11 * np.abs(Hs).max())
