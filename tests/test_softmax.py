"""Softmax attention: its terms, risk, gradient and Hessian, checked two independent ways.

- High precision: each term against a tensor Gauss-Hermite rule over the keys of ``L = 3``
  tokens (no Laplace transform), and the risk on M at ``L = 2`` against mpmath (the
  weights of two tokens are a logistic function of one Gaussian difference).
- Monte Carlo: the risk on explicit tokens in ``R^d`` (z-tests), and each term on
  sampled keys.
- Gradients and Hessians against finite differences, in the overlaps and along geodesics
  of the spheres; SGD's stochastic gradient against the exact one (z-test).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss

from slr_theory import Params, risk, risk_at, risk_grad, risk_grad_at, risk_hessian
from slr_theory.engine import table
from slr_theory.sampling import monte_carlo_risk, predict, vectors_from_overlaps
from slr_theory.sgd import sgd_vectors
from slr_theory.softmax import SOFTMAX_DOMAIN, d_mu, risk_expression, term_integrals

SOFT = Params(d=20, L=4, lam=0.9, gamma=0.7, attention="softmax")

# every kind of factor a risk, gradient or Hessian uses, on L = 3 tokens
TERMS = [
    (1, ((1, 0),), ()),
    (1, ((1, 1),), ()),
    (1, ((1, 2),), ()),
    (1, ((1, 4),), ()),
    (2, ((2, 0),), ()),
    (2, ((2, 3),), ()),
    (2, (), ((2, 0),)),
    (2, (), ((2, 2),)),
    (1, ((0, 1),), ((1, 1),)),
    (2, ((1, 1),), ((1, 1),)),
    (2, (), ((1, 1), (1, 1))),
]


# the terms a sink adds (softmax-1): its weight p_0 = 1 / (1 + S), alone or with others
SINK_TERMS = [
    (1, (), (), 1),
    (2, (), (), 2),
    (2, ((1, 1),), (), 1),
    (3, ((1, 0),), (), 2),
    (2, (), ((1, 1),), 1),
]


def _tensor_references(terms, kappa, lam, gamma, d, sink=False):
    """The terms on L = 3 tokens (one informative) by a 3-D Gauss-Hermite rule in the keys;
    with a `sink`, the normaliser has a fourth token of logit 0 (softmax-1). The weights
    and the rule are formed once and serve every term."""
    x, w = hermegauss(120)
    w = w / np.sqrt(2 * np.pi)
    mu = np.sqrt(d / 2) * kappa
    U = [mu + gamma * x[:, None, None], x[None, :, None], x[None, None, :]]
    D = [U[0] - mu, U[1], U[2]]
    top = np.maximum(np.maximum(U[0], U[1]), U[2])
    if sink:
        top = np.maximum(top, 0.0)
    e = [np.exp(lam * (u - top)) for u in U]
    e0 = np.exp(-lam * top) if sink else 0.0
    S = e0 + e[0] + e[1] + e[2]
    P = [q / S for q in e]  # the three tokens' weights
    P0 = e0 / S if sink else None
    W = w[:, None, None] * w[None, :, None] * w[None, None, :]
    out = []
    for term in terms:
        _p, info, distr = term[:3]
        f = W * P0 ** term[3] if len(term) > 3 and term[3] else W
        for j, i in info:  # the informative token is token 0
            f = f * (D[0] ** i * P[0] ** j)
        for slot, (j, i) in enumerate(distr, start=1):
            f = f * (D[slot] ** i * P[slot] ** j)
        out.append(float(np.sum(f)))
    return np.array(out)


@pytest.mark.parametrize("lam", [0.05, 0.5, 1.5])
@pytest.mark.parametrize(
    "kappa", [-1.0, pytest.param(-0.2, marks=pytest.mark.slow), 0.0, 0.4, 1.0]
)
@pytest.mark.parametrize("sink", [False, True])
def test_terms_match_a_tensor_rule_over_the_keys(lam, kappa, sink):
    d, gamma = 12, 0.7
    terms = TERMS + SINK_TERMS if sink else TERMS
    got = term_integrals(terms, np.array([kappa]), lam=lam, gamma=gamma, d=d, L=3, s=1, sink=sink)[
        :, 0
    ]
    ref = _tensor_references(terms, kappa, lam, gamma, d, sink)
    # the term's scale: |term| <= prod E|D|^i (at most 1.2 here, 3 for i = 4)
    np.testing.assert_array_less(np.abs(got - ref), 3e-13 * (1.0 + np.abs(ref)))


def test_a_term_that_weighs_a_sink_needs_one():
    with pytest.raises(ValueError, match="weighs a sink"):
        term_integrals([(1, (), (), 1)], np.array([0.0]), lam=0.5, gamma=1.0, d=8, L=2, s=1)


def _mp_manifold_risk(kappa, nu, lam, gamma, d, eps=0.0):
    """R on M at L = 2, s = 1: p_1 = logistic(lam (U_1 - U_2)), U_1 - U_2 ~ N(mu, 1 + gamma^2)."""
    mp.mp.dps = 60  # the risk near the optimum is a difference of terms of order one
    mu = mp.sqrt(mp.mpf(d) / 2) * kappa
    sd = mp.sqrt(1 + mp.mpf(gamma) ** 2)

    def E(f):
        dens = lambda y: mp.exp(-((y - mu) ** 2) / (2 * sd**2)) / (sd * mp.sqrt(2 * mp.pi))  # noqa: E731
        return mp.quad(lambda y: f(y) * dens(y), [-mp.inf, mu - 5 * sd, mu, mu + 5 * sd, mp.inf])

    p1 = lambda y: 1 / (1 + mp.exp(-lam * y))  # noqa: E731
    g2 = mp.mpf(gamma) ** 2
    Ep1, Ep1s = E(p1), E(lambda y: p1(y) ** 2)
    Ep2s = E(lambda y: (1 - p1(y)) ** 2)
    return eps**2 + g2 * (1 - 2 * nu * Ep1 + Ep1s) + Ep2s


@pytest.mark.parametrize(
    "kappa,nu,lam,d,eps",
    [
        (0.0, 0.0, 0.3, 30, 0.1),
        (0.5, -0.7, 1.0, 30, 0.1),
        (1.0, 1.0, 0.1, 30, 0.1),
        (-0.8, 0.9, 2.0, 30, 0.1),
        # the optimum, where the risk is tiny (2.0e-9, and below 1e-19 at lam = 2):
        # relative precision kept by the cancellation-free form of the value
        (1.0, 1.0, 0.8, 400, 0.0),
        (1.0, 1.0, 2.0, 400, 0.0),
    ],
)
def test_risk_on_m_at_two_tokens_matches_mpmath(kappa, nu, lam, d, eps):
    p = Params(d=d, L=2, lam=lam, gamma=0.8, eps=eps, attention="softmax")
    ref = _mp_manifold_risk(kappa, nu, lam, p.gamma, p.d, p.eps)
    got = risk(p, kappa, nu, 0.0, 0.0, 0.0)
    assert abs(got - float(ref)) <= 1e-11 * float(ref)


POINTS = [
    (SOFT, (0.3, 0.4, 0.1, -0.2, 0.25)),
    (
        Params(d=400, L=10, lam=0.5, gamma=0.5**0.5, s=3, eps=0.1, attention="softmax"),
        (0.2, -0.3, 0.05, 0.3, -0.4),
    ),
    (Params(d=8, L=6, lam=2.0, gamma=1.3, s=2, attention="softmax"), (-0.5, 0.6, 0.3, 0.2, 0.1)),
]


@pytest.mark.parametrize("p,ov", POINTS)
def test_risk_matches_monte_carlo_on_explicit_tokens(p, ov):
    k, v, ks, vs = vectors_from_overlaps(np.array(ov), p.d)
    n = 200_000 if p.d < 100 else 40_000  # explicit tokens in R^400 cost d times more a draw
    mc = monte_carlo_risk(p, k, v, ks, vs, n, np.random.default_rng(7))
    assert abs(risk(p, *ov) - mc.estimate) <= 4 * mc.stderr


def test_terms_match_monte_carlo_on_sampled_keys():
    rng = np.random.default_rng(3)
    lam, gamma, d, L, s, kappa = 0.9, 0.7, 40, 5, 2, 0.3
    terms = [
        (1, ((1, 0),), ()),
        (1, ((0, 1), (1, 0)), ()),
        (2, ((1, 1), (1, 1)), ()),
        (2, ((1, 0),), ((1, 1),)),
        (2, (), ((1, 1), (1, 1))),
    ]
    got = term_integrals(terms, np.array([kappa]), lam=lam, gamma=gamma, d=d, L=L, s=s)[:, 0]
    n = 1_000_000
    X = gamma * rng.standard_normal((n, s))
    Z = rng.standard_normal((n, L - s))
    U = np.concatenate([np.sqrt(d / 2) * kappa + X, Z], axis=1)
    P = np.exp(lam * (U - U.max(axis=1, keepdims=True)))
    P /= P.sum(axis=1, keepdims=True)
    samples = [
        P[:, 0],
        P[:, 0] * X[:, 1],
        P[:, 0] * P[:, 1] * X[:, 0] * X[:, 1],
        P[:, 0] * P[:, 2] * Z[:, 0],
        P[:, 2] * P[:, 3] * Z[:, 0] * Z[:, 1],
    ]
    for g, x in zip(got, samples, strict=True):
        assert abs(g - x.mean()) <= 4 * x.std() / np.sqrt(n)


@pytest.mark.parametrize("p,ov", POINTS)
def test_gradient_and_hessian_match_finite_differences(p, ov):
    ov = np.array(ov)
    h = 1e-5
    g = risk_grad(p, *ov)
    H = risk_hessian(p, *ov)
    for i in range(5):
        e = np.zeros(5)
        e[i] = h
        fd = (risk(p, *(ov + e)) - risk(p, *(ov - e))) / (2 * h)
        assert abs(fd - g[i]) <= 1e-8 * (1 + abs(g[i]))
        fdg = (risk_grad(p, *(ov + e)) - risk_grad(p, *(ov - e))) / (2 * h)
        np.testing.assert_allclose(fdg, H[i], atol=1e-7 * (1 + np.abs(H).max()))
    np.testing.assert_array_equal(H, H.T)


def test_gradient_matches_finite_differences_along_geodesics():
    p = SOFT
    k, v, ks, vs = vectors_from_overlaps(np.array([0.3, 0.4, 0.1, -0.2, 0.25]), p.d)
    rng = np.random.default_rng(5)
    gk, gv = risk_grad_at(p, k, v, ks, vs, riemannian=True)
    for _ in range(4):
        a, b = rng.standard_normal((2, p.d))
        a -= (a @ k) * k
        b -= (b @ v) * v
        a /= np.linalg.norm(a)
        b /= np.linalg.norm(b)
        t = 1e-5

        def at(s, a=a, b=b):
            return risk_at(p, np.cos(s) * k + np.sin(s) * a, np.cos(s) * v + np.sin(s) * b, ks, vs)

        fd = (at(t) - at(-t)) / (2 * t)
        assert abs(fd - (gk @ a + gv @ b)) <= 1e-8


def test_the_invariant_manifold_is_invariant():
    """Every monomial has degree 0 or 2 in (theta, eta, rho): their partials vanish on M."""
    for p in (SOFT, POINTS[1][0]):
        g = risk_grad(p, np.linspace(-1, 1, 9), 0.3, 0.0, 0.0, 0.0)
        assert np.all(g[:, 2:] == 0.0)
        for _c, _coef, mono, _t in risk_expression(p.d, p.L, p.gamma, p.s):
            assert sum(mono[1:]) in (0, 2)


def test_uniform_weights_at_a_vanishing_temperature():
    """lam -> 0: p = 1/L, and R on M is eps^2 + s gamma^2 (1 - 2 nu / L + 1/L^2) + (L - s)/L^2."""
    p = Params(d=50, L=7, lam=1e-6, gamma=0.6, s=2, eps=0.2, attention="softmax")
    nu = np.array([-0.5, 0.0, 0.8])
    L, s, g2 = p.L, p.s, p.gamma**2
    want = p.eps**2 + s * g2 * (1 - 2 * nu / L + 1 / L**2) + (L - s) / L**2
    want += s * (s - 1) * 0.0  # the pairs' terms carry theta or rho: zero on M
    np.testing.assert_allclose(risk(p, 0.4, nu, 0.0, 0.0, 0.0), want, rtol=1e-5)


def test_d_mu_is_the_derivative_in_the_mean():
    lam, gamma, d, L, s = 0.7, 0.9, 30, 5, 2
    B = np.sqrt(d / 2)
    cases = [
        ((1, ((1, 0),), ()), False),
        ((2, ((1, 1), (1, 0)), ((1, 1),)), False),
        ((2, (), ((2, 2),)), False),
        ((1, ((1, 0),), ()), True),
        ((3, ((1, 1),), (), 2), True),  # the sink's power rides along
        ((1, (), (), 1), True),
    ]
    for term, sink in cases:
        kw = dict(lam=lam, gamma=gamma, d=d, L=L, s=s, sink=sink)
        h = 1e-5
        f = term_integrals([term], np.array([0.2 - h, 0.2 + h]), **kw)
        fd = (f[0, 1] - f[0, 0]) / (2 * h * B)
        parts = d_mu(term, s, gamma)
        assert all(len(t) == len(term) for t in parts)
        got = sum(c * term_integrals([t], np.array([0.2]), **kw)[0, 0] for t, c in parts.items())
        assert abs(fd - got) <= 1e-8


def test_large_sequences_keep_their_precision():
    """L = 1e9: Phi^n is exp(n log1p(-(1 - Phi))); E p_1 against its MC-free limit.

    With many distractors S ~ (L - 1) E e^{lam Z} = (L - 1) e^{lam^2/2}, so
    E p_1 ~ E e^{lam U_1} / ((L - 1) e^{lam^2 / 2}) to relative O(1/L).
    """
    lam, gamma, d, L = 0.5, 0.7, 20, 10**9
    kappa = 0.3
    got = term_integrals(
        [(1, ((1, 0),), ())], np.array([kappa]), lam=lam, gamma=gamma, d=d, L=L, s=1
    )
    mu = np.sqrt(d / 2) * kappa
    want = np.exp(lam * mu + (lam * gamma) ** 2 / 2) / ((L - 1) * np.exp(lam**2 / 2))
    assert abs(got[0, 0] / want - 1) <= 1e-6


def test_predict_softmax_weights_sum_to_one_and_ignore_a_shift():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 4, 6))
    k, v = rng.standard_normal((2, 6))
    one = predict(X, k, v, 0.7, attention="softmax")
    z = 0.7 * X @ k
    w = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    # the same exp of the same inputs, normalised two ways: a few roundings
    np.testing.assert_allclose(one, np.sum(w * (X @ v), axis=-1), rtol=1e-13)
    with pytest.raises(ValueError, match="`attention`"):
        predict(X, k, v, 0.7, attention="hard")


def test_params_validate_the_attention():
    with pytest.raises(ValueError, match="`attention` must be one of"):
        Params.paper().replace(attention="soft")
    with pytest.raises(ValueError, match="`nonlinearity` applies to pointwise attention"):
        Params.paper().replace(attention="softmax", nonlinearity="tanh")
    with pytest.raises(ValueError, match="softmax attention needs"):
        Params(d=400, L=10, lam=11.0, gamma=0.7, attention="softmax")
    with pytest.raises(ValueError, match="softmax attention needs"):
        Params(d=10**10, L=10, lam=0.1, gamma=0.7, attention="softmax")
    assert SOFTMAX_DOMAIN["spread"] == 10.0
    soft = Params.paper().replace(attention="softmax")
    assert table(soft, 0.1, 1).loop_kernel() is None and table(soft, 0.1, 1).placed((0,)) is None
    assert table(Params.paper(), 0.1, 1).loop_kernel() is not None


def test_sgd_follows_the_exact_gradient_in_expectation():
    """One small SGD step from the same (k, v) in many repeats: its mean is -alpha grad (z-test)."""
    p = Params(d=6, L=4, lam=0.8, gamma=0.7, attention="softmax")
    ov = np.array([0.3, 0.4, 0.1, -0.2, 0.25])
    k, v, ks, vs = vectors_from_overlaps(ov, p.d)
    R, alpha = 400, 1e-4
    res = sgd_vectors(
        p,
        np.tile(k, (R, 1)),
        np.tile(v, (R, 1)),
        ks,
        vs,
        alpha,
        1,
        batch=500,
        rng=np.random.default_rng(11),
    )
    step = (res.overlaps[1] - res.overlaps[0]) / alpha  # (R, 5)
    gk, gv = risk_grad_at(p, k, v, ks, vs, riemannian=True)
    want = -np.array([gk @ ks, gv @ vs, gv @ ks, gk @ vs, gk @ v + k @ gv])
    se = step.std(axis=0) / np.sqrt(R)
    assert np.all(np.abs(step.mean(axis=0) - want) <= 4 * se + 1e-3 * np.abs(want))


@pytest.mark.parametrize("lam", [0.1, pytest.param(0.9, marks=pytest.mark.slow), 2.0])
def test_the_prepared_table_serves_the_terms_from_a_checked_interpolant(lam):
    from slr_theory import engine

    p = Params.paper(lam=lam).replace(attention="softmax", s=2)
    tab = engine.table(p, lam, (0, 1, 2))
    rng = np.random.default_rng(4)
    ov = np.zeros((5, 400))
    ov[0] = np.concatenate([rng.uniform(-1, 1, 398), [-1.0, 1.0]])
    ov[1:] = rng.uniform(-0.5, 0.5, (4, 400))
    direct, fast = tab(ov), tab.prepared()(ov)
    # 1e-14 of each term's bound, times the coefficients: 1e-13 of the rows' scale
    assert np.abs(fast - direct).max() <= 1e-13 * (1 + np.abs(direct).max())


def test_a_large_batch_is_served_by_the_interpolant_as_a_small_one_is_computed():
    """A batch of INTERPOLATE_FROM points or more takes the terms from their interpolant
    (the quadrature models' policy: risk plus gradient on 1e6 tuples at a few passes of
    erf); the same points in small batches, each computed directly, agree to 1e-13 of
    the rows' scale."""
    from slr_theory import engine
    from slr_theory.nonlinearity import INTERPOLATE_FROM

    p = Params.paper(lam=0.5).replace(attention="softmax")
    tab = engine.table(p, p.lam, (0, 1))
    rng = np.random.default_rng(5)
    n = INTERPOLATE_FROM + 4
    ov = np.zeros((5, n))
    ov[0] = rng.uniform(-1, 1, n)
    ov[1:] = rng.uniform(-0.5, 0.5, (4, n))
    big = tab(ov)
    small = np.concatenate([tab(ov[:, i : i + 64]) for i in range(0, 256, 64)], axis=1)
    assert np.abs(big[:, :256] - small).max() <= 1e-13 * (1 + np.abs(small).max())
    assert np.array_equal(big, tab.prepared()(ov))  # the same interpolant a loop uses


def test_manifold_critical_points_lie_on_the_edges():
    from slr_theory import critical_points
    from slr_theory.critical import manifold_certificate, manifold_critical_overlaps

    p = Params.paper(lam=0.5).replace(attention="softmax")
    kn = manifold_critical_overlaps(p)
    assert np.all(np.abs(kn[:, 1]) == 1.0)  # R_nu < 0: no critical point with |nu| < 1
    g = risk_grad(p, np.linspace(-1, 1, 41), 0.2, 0.0, 0.0, 0.0)
    assert np.all(g[:, 1] < 0)
    pts = critical_points(p, "manifold")
    assert [q.kind for q in pts][:1] == ["minimum"] and pts[0].overlaps[:2].tolist() == [1, 1]
    text = manifold_certificate(p)
    assert "not critical" in text[2] and "R_nu <=" in text[1]


def test_pgd_steps_follow_the_gradient_flow():
    """Exact PGD with a small step tracks the gradient flow in the overlaps (t = 2)."""
    from slr_theory import overlap_flow, pgd

    p = Params(d=20, L=4, lam=0.9, gamma=0.7, attention="softmax")
    ov0 = (0.3, 0.4, 0.1, -0.2, 0.25)
    flow = overlap_flow(p, ov0, 2.0)
    for alpha, tol in ((2e-3, 4e-3), (1e-3, 2e-3)):
        run = pgd(p, ov0, alpha, round(2.0 / alpha))
        err = np.abs(run.overlaps[-1] - flow.overlaps[-1]).max()
        assert err <= tol  # first order in alpha


def test_every_term_is_within_its_bound():
    from slr_theory import engine
    from slr_theory.softmax import term_bound

    p = Params(d=30, L=5, lam=1.5, gamma=1.2, s=2, attention="softmax")
    cols = engine.table(p, p.lam, (0, 1, 2)).columns
    terms = sorted({t for _m, t in cols if t}, key=repr)
    kappa = np.linspace(-1, 1, 41)
    T = term_integrals(terms, kappa, lam=p.lam, gamma=p.gamma, d=p.d, L=p.L, s=p.s)
    bound = np.array([term_bound(t, p.gamma) for t in terms])
    assert np.all(np.abs(T) <= bound[:, None])


def test_the_symmetry_group_is_the_models():
    """softmax(-z) != -softmax(z): (k, v) -> (-k, -v) changes the risk; (S k, -S v) does not."""
    from slr_theory.critical import SYMMETRIES, symmetries

    p = SOFT
    ov = np.array([0.3, 0.4, 0.1, -0.2, 0.25])
    r = risk(p, *ov)
    assert abs(risk(p, *(SYMMETRIES[1] * ov)) - r) > 1e-3
    for g in symmetries(p):
        assert risk(p, *(g * ov)) == pytest.approx(r, rel=1e-13)
    assert len(symmetries(Params.paper())) == 4


def _value(p, kappa, ov4, stable, sink=False):
    """The components from risk_expression, term by term, at overlaps (nu, theta, eta, rho)."""
    nu, theta, eta, rho = ov4
    x = np.array([nu, theta, eta, rho, 1.0 - nu, eta - rho])  # the stable form's variables
    out = np.zeros((3, kappa.size))
    for comp, c, mono, t in risk_expression(p.d, p.L, p.gamma, p.s, stable=stable, sink=sink):
        m = np.prod(x[: len(mono)] ** np.array(mono))
        if t is None:
            out[comp] += c * m
            continue
        kw = dict(lam=p.lam, gamma=p.gamma, d=p.d, L=p.L, s=p.s, sink=sink)
        out[comp] += c * m * term_integrals([t], kappa, **kw)[0]
    return out


@pytest.mark.parametrize("sink", [False, True])
def test_the_stable_value_is_the_expanded_one(sink):
    """The cancellation-free form has the same components as the expanded one (with a
    sink, 1 - p_i has the sink's weight; the expanded form holds for any weights)."""
    for s_ in (1, 2, 3):
        p = Params(d=12, L=5, lam=0.7, gamma=0.9, s=s_, attention="softmax")
        kappa = np.random.default_rng(s_).uniform(-1, 1, 7)
        ov4 = (0.3, 0.2, -0.1, 0.15)
        stable, expanded = _value(p, kappa, ov4, True, sink), _value(p, kappa, ov4, False, sink)
        np.testing.assert_allclose(stable, expanded, rtol=0, atol=1e-14 * np.abs(expanded).max())
        if sink:  # and the sink shows: the weights no longer sum to one
            assert np.abs(stable - _value(p, kappa, ov4, True)).max() > 1e-3


@pytest.mark.parametrize("s_", [1, 2])
@pytest.mark.parametrize(
    "ov", [(0.3, 0.4, 0.1, -0.2, 0.25), (-0.6, 0.5, 0.3, 0.4, -0.1), (0.95, 0.97, 0.05, 0.1, 0.14)]
)
def test_risk_off_m_at_two_tokens_matches_mpmath(s_, ov):
    """Off M: against 1-D mpmath quadrature over the keys' difference (no Laplace transform)."""
    from slr_theory.verify.risk_checks import mp_softmax_risk_two_tokens

    for lam in (0.3, 1.7):
        p = Params(d=24, L=2, lam=lam, gamma=0.8, s=s_, eps=0.05, attention="softmax")
        ref = float(mp_softmax_risk_two_tokens(p, ov, dps=30))
        assert abs(risk(p, *ov) - ref) <= 1e-12 * ref


def test_the_oracle_temperature_stays_in_the_models_domain():
    from slr_theory.statistics import optimal_lambda

    p = Params.paper().replace(attention="softmax")
    assert p.lam_max == pytest.approx(10 / 1.0)
    assert optimal_lambda(p) == pytest.approx(p.lam_max, rel=1e-6)  # R(k*, v*) falls with lam
    assert Params.paper().lam_max == 1e3


def test_the_model_names_its_predictor():
    p = Params.paper()
    assert p.predictor == "T(X) = Σ_ℓ erf(λ X_ℓ·k) X_ℓ·v" and p.attention_tag == ""
    assert p.replace(nonlinearity="tanh").attention_tag == ", σ = tanh"
    soft = p.replace(attention="softmax")
    assert "softmax(λ X k)_ℓ" in soft.predictor and soft.attention_tag == ", softmax attention"


def test_risk_keeps_its_relative_precision_off_m_near_the_optimum():
    """v = v*, k tilted towards v* (eta = rho): the risk is ~1e-20 at lam = 2, and every term
    of the expanded form is of order one; the stable form agrees with 60-digit mpmath."""
    from slr_theory.verify.risk_checks import mp_softmax_risk_two_tokens

    p = Params(d=400, L=2, lam=2.0, gamma=0.8, attention="softmax")
    eta = 0.0998
    ov = (np.sqrt(1 - eta**2) - 1e-9, 1.0, 0.0, eta, eta)
    ref = float(mp_softmax_risk_two_tokens(p, ov, dps=60))
    got = risk(p, *ov)
    assert ref < 1e-12 and abs(got - ref) <= 1e-10 * ref


def test_sgd_in_law_on_the_overlaps_matches_sgd_on_vectors():
    """The overlap-space SGD (exact in law) and SGD on explicit vectors: the same mean step."""
    from slr_theory.sgd import sgd

    p = Params(d=6, L=4, lam=0.8, gamma=0.7, attention="softmax")
    ov = np.array([0.3, 0.4, 0.1, -0.2, 0.25])
    R, alpha = 400, 1e-4
    law = sgd(p, np.tile(ov, (R, 1)), alpha, 1, batch=500, rng=np.random.default_rng(12))
    step = (law.overlaps[1] - law.overlaps[0]) / alpha
    k, v, ks, vs = vectors_from_overlaps(ov, p.d)
    gk, gv = risk_grad_at(p, k, v, ks, vs, riemannian=True)
    want = -np.array([gk @ ks, gv @ vs, gv @ ks, gk @ vs, gk @ v + k @ gv])
    se = step.std(axis=0) / np.sqrt(R)
    assert np.all(np.abs(step.mean(axis=0) - want) <= 4 * se + 1e-3 * np.abs(want))


def test_risk_matches_monte_carlo_at_random_feasible_points():
    """Random (k, v) uniform on the spheres, random s and lam: z-tests at 4 standard errors."""
    from .strategies import random_overlaps

    rng = np.random.default_rng(2026)
    for ov, s_, lam in zip(
        random_overlaps(rng, 4, 8), (1, 2, 1, 3), (0.3, 0.9, 1.6, 0.6), strict=True
    ):
        p = Params(d=8, L=5, lam=lam, gamma=0.8, s=s_, eps=0.1, attention="softmax")
        k, v, ks, vs = vectors_from_overlaps(ov, p.d)
        mc = monte_carlo_risk(p, k, v, ks, vs, 100_000, rng)
        assert abs(risk(p, *ov) - mc.estimate) <= 4 * mc.stderr


def test_the_portrait_names_the_basins_of_the_models_own_critical_points():
    """Softmax at lam = 0.1: every start on M ends at (k*, v*), and the legend says so
    (the basin labels index the model's M points, not pointwise attention's five)."""
    from slr_theory.landscape import portrait_data
    from slr_theory.plotting.manifold import _basin_names

    p = Params.paper(lam=0.1).replace(attention="softmax")
    data = portrait_data(p, grid=5, basin_grid=4, refine=2, trajectories=0, t_max=600.0)
    assert data.basin_targets.tolist() == [[1, 1], [-1, -1], [1, -1], [-1, 1]]
    assert len(data.separatrix) == 0
    names = _basin_names(data)
    assert set(np.unique(data.basin_label).tolist()) == {0}  # all at the first target
    assert names[1][1] == "basin of (1, 1)"
    assert names[2][1] == "ends at the saddle (−1, −1)"


def test_the_gradient_and_hessian_tables_share_one_direct_evaluation(monkeypatch):
    """A Newton step asks the gradient's and the Hessian's terms at one point: they come
    from one evaluation of the union (the Gaussian moments serve every term), with the
    same numbers as each table's own evaluation, to rounding: bit for bit on some BLAS
    builds, 5e-14 of the values with NumPy 2.4's (its matrix products round differently
    for differently shaped operands, and these entries cancel to 1/100 of their terms)."""
    from slr_theory import engine
    from slr_theory.models.softmax import model as softmax

    p = Params.paper(lam=0.7).replace(attention="softmax", s=2)
    ov = np.array([[0.3, -0.5], [0.4, 0.2], [0.1, 0.3], [0.05, -0.1], [0.02, 0.2]])
    shared = [engine.table(p, p.lam, order)(ov) for order in (1, 2)]
    kept = [k for k in softmax._DIRECT if k[4] == (1, 2)]
    assert kept  # the union was evaluated and kept
    monkeypatch.setattr(engine.contract, "SHARED_POINTS", 0)
    own = [engine.table(p, p.lam, order)(ov) for order in (1, 2)]
    for a, b in zip(shared, own, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14 * np.max(np.abs(b)))


@pytest.mark.parametrize("attention", ["softmax", "softmax1"])
def test_a_batch_with_repeated_kappas_is_its_terms_bit_for_bit_and_kept(monkeypatch, attention):
    """A grid of M repeats each ``kappa`` along ``nu``: its terms are computed once per
    distinct ``kappa`` and spread back, the same numbers, bit for bit, as the quadrature on
    the whole batch; the next call at the same points reads them back without computing,
    and what is kept stays within its bound in bytes."""
    from slr_theory import engine
    from slr_theory.models.softmax import model as softmax
    from slr_theory.softmax import term_integrals

    p = Params.paper(lam=0.7).replace(attention=attention)
    k = np.linspace(-1.0, 1.0, 11)  # 77 points: beyond a Newton step's shared evaluation
    kk, nn = np.meshgrid(k, np.linspace(-1.0, 1.0, 7))
    ov = np.zeros((5, kk.size))
    ov[0], ov[1] = kk.ravel(), nn.ravel()
    ov[:, :3] = [
        [0.3, -0.3, 0.3],
        [0.2, 0.1, -0.4],
        [0.1, 0.05, 0.0],
        [0.05, 0.0, 0.1],
        [0.02, 0.0, 0.0],
    ]
    ov[0, 3] = -0.0  # another bit pattern of 0: its own point
    tab = engine.table(p, p.lam, 1)
    terms, _where = softmax._softmax_bases(p.d, p.L, p.gamma, p.s, (1,), tab.sink)
    reference = term_integrals(
        list(terms), ov[0], lam=p.lam, gamma=p.gamma, d=p.d, L=p.L, s=p.s, sink=tab.sink
    )
    calls = []
    real = softmax.term_integrals
    monkeypatch.setattr(
        softmax,
        "term_integrals",
        lambda terms, kappa, **kw: calls.append(kappa) or real(terms, kappa, **kw),
    )
    assert ov.shape[1] > engine.contract.SHARED_POINTS
    got = tab._terms(ov[0], np.full(ov.shape[1], p.lam))
    assert got.view(np.int64).tolist() == reference.view(np.int64).tolist()
    assert (
        len(calls) == 1 and calls[0].size == len(set(ov[0].view(np.int64).tolist())) < ov.shape[1]
    )
    again = tab._terms(ov[0], np.full(ov.shape[1], p.lam))
    assert len(calls) == 1 and again.view(np.int64).tolist() == got.view(np.int64).tolist()
    monkeypatch.setattr(softmax, "DIRECT_KEPT_BYTES", 3 * reference.nbytes)
    for shift in range(8):  # more batches than the bound keeps: the oldest go first
        tab._terms(ov[0] * (1.0 - 1e-3 * (shift + 1)), np.full(ov.shape[1], p.lam))
        assert softmax._DIRECT_BYTES[0] <= softmax.DIRECT_KEPT_BYTES
    assert sum(size for _values, size in softmax._DIRECT.values()) == softmax._DIRECT_BYTES[0]


@pytest.mark.parametrize(
    ("attention", "L", "rtol"), [("softmax", 2, 1e-8), ("softmax1", 1, 1e-12)]
)
def test_r_nu_keeps_its_digits_where_the_informative_weight_is_tiny(attention, L, rtol):
    """R_nu = -2 s gamma^2 E p_1 at kappa = -1 and a large temperature is exponentially
    small (1e-20, 3e-24 here); the stable form's -2 gamma^2 (1 - q_1) cancelled it to
    rounding, and the locator on M refused softmax at lam = 10 ('R_nu vanishes on the
    edge'). R is affine in nu, so R(nu = 1) - R(nu = 0) of 50-digit quadrature (two tokens
    for softmax, one for softmax-1) is the reference. Softmax's term keeps 1e-9 of itself
    there (its Gauss nodes reach 15 standard deviations of the key, the mass sits near
    12), softmax-1's one token 1e-15."""
    from slr_theory.verify.risk_checks import (
        mp_softmax1_risk_one_token,
        mp_softmax_risk_two_tokens,
    )

    ref = mp_softmax_risk_two_tokens if attention == "softmax" else mp_softmax1_risk_one_token
    p = Params(d=400, L=L, lam=4.0, gamma=0.6, attention=attention)
    want = float(ref(p, (-1.0, 1.0, 0, 0, 0), dps=50) - ref(p, (-1.0, 0.0, 0, 0, 0), dps=50))
    got = float(risk_grad(p, -1.0, 0.2, 0.0, 0.0, 0.0)[1])
    assert want < -1e-25 and abs(got - want) <= rtol * abs(want)


@pytest.mark.slow
@pytest.mark.parametrize("attention", ["softmax", "softmax1"])
def test_the_locator_on_m_takes_softmax_at_the_edge_of_its_domain(attention):
    """lam = 10 (measured: 220 s each, the interpolants at that temperature): M's four
    corners, where 'R_nu vanishes on the edge' was raised."""
    from slr_theory import critical_points

    big = Params.paper(lam=10.0).replace(attention=attention)
    assert len(critical_points(big, "manifold")) == 4
