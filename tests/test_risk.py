"""The closed-form risk against conditioned quadrature, finite differences and docs/theory.md §5."""

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import erf, owens_t

from slr_theory import (
    Params,
    manifold_risk,
    manifold_risk_grad,
    risk,
    risk_components,
    risk_grad,
    risk_hessian,
)
from slr_theory.verify.risk_checks import mp_risk_components

from .references import remembered
from .strategies import assert_components_match, assert_derivatives_match_differences


@st.composite
def configs(draw, d_max=1e8):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((2, 6))
    k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
    ov = np.array([k[0], v[1], v[0], k[1], k @ v])
    p = Params(
        d=int(10 ** draw(st.floats(np.log10(4), np.log10(d_max)))),
        L=int(10 ** draw(st.floats(0, 4))),
        lam=10 ** draw(st.floats(-4, 2)),
        gamma=10 ** draw(st.floats(-3, 2)),
        eps=draw(st.floats(0, 1)),
    )
    return p, ov


@settings(max_examples=8)
@given(cfg=configs(d_max=1e4))
def test_components_match_conditioned_quadrature(cfg):
    p, ov = cfg
    assert_components_match(p, ov)


@given(cfg=configs())
def test_components_sum_to_total_and_are_nonnegative(cfg):
    p, ov = cfg
    c = risk_components(p, *ov)
    assert c.total == pytest.approx(
        c.noise + c.informative + c.distractors + c.interactions, rel=1e-14
    )
    assert c.distractors >= 0 and c.total >= -1e-12


@given(cfg=configs(d_max=1e4))
def test_gradient_matches_finite_differences(cfg):
    p, ov = cfg
    p = p.replace(lam=min(p.lam, 1.0))  # keep the FD step resolvable
    gr = risk_grad(p, *ov)
    h = 1e-6
    for i in range(5):
        e = np.zeros(5)
        e[i] = h
        fd = (risk(p, *(ov + e)) - risk(p, *(ov - e))) / (2 * h)
        scale = abs(fd) + abs(risk(p, *ov)) * p.lam * np.sqrt(p.d) + 1.0
        assert abs(gr[i] - fd) <= 1e-6 * scale, (i, gr[i], fd)


def _manifold_formula(p, kappa, nu):
    # docs/theory.md §5 with zeta from Owen's T (moderate values only)
    a = p.lam * np.sqrt(p.d / 2)
    g = p.lam * p.gamma
    c = a / np.sqrt(1 + 2 * g * g)

    def zeta(t, s):
        return 1 - 8 * owens_t(np.sqrt(2) * t / np.sqrt(1 + 2 * s * s), 1 / np.sqrt(1 + 4 * s * s))

    return (
        p.eps**2
        + (p.L - 1) * zeta(0.0, p.lam)
        + p.gamma**2 * (1 - 2 * nu * erf(c * kappa) + zeta(a * kappa, g))
    )


@given(kappa=st.floats(-1, 1), nu=st.floats(-1, 1), lam=st.floats(0.01, 2), L=st.integers(1, 50))
def test_manifold_risk_is_math_section_5(kappa, nu, lam, L):
    p = Params(d=400, L=L, lam=lam, gamma=0.5**0.5, eps=0.05)
    assert manifold_risk(p, kappa, nu) == pytest.approx(
        _manifold_formula(p, kappa, nu), rel=1e-12, abs=1e-14
    )
    c = risk_components(p, kappa, nu)
    assert c.interactions == 0.0


@given(kappa=st.floats(-1, 1), nu=st.floats(-1, 1), lam=st.floats(0.01, 2))
def test_manifold_gradient_and_invariance(kappa, nu, lam):
    p = Params(d=400, L=10, lam=lam, gamma=0.5**0.5)
    full = risk_grad(p, kappa, nu)
    np.testing.assert_allclose(full[:2], manifold_risk_grad(p, kappa, nu), rtol=1e-10, atol=1e-14)
    # dR/dtheta = dR/deta = dR/drho = 0 on M: M is invariant under the flow
    assert np.all(full[2:] == 0.0)


@pytest.mark.parametrize("lam", [0.1, 0.9, 2.0])
@pytest.mark.parametrize("kn", [(1.0, 1.0), (0.999, 1 - 1e-12), (-1.0, -0.999999), (0.95, 0.9)])
def test_manifold_gradient_keeps_relative_precision_near_the_optimum(lam, kn):
    """d R_M / d kappa ~ e^{-c^2} (erf(a/s) - nu): both factors tiny at (1, 1).

    Against 50-digit mpmath (found by the flows' corner test: erf(y) - 1 had lost 25%)."""
    import mpmath as mp

    p = Params.paper(lam=lam)
    got = manifold_risk_grad(p, *kn)
    with mp.workdps(50):
        k, n = (mp.mpf(x) for x in kn)
        a = mp.mpf(lam) * mp.sqrt(mp.mpf(p.d) / 2)
        g = mp.mpf(lam) * mp.sqrt(mp.mpf("0.5"))
        q = 1 + 2 * g**2
        c, s = a / mp.sqrt(q), mp.sqrt(q * (1 + 4 * g**2))
        G = mp.mpf("0.5")
        dk = 4 * G * c / mp.sqrt(mp.pi) * mp.exp(-((c * k) ** 2)) * (mp.erf(a * k / s) - n)
        dn = -2 * G * mp.erf(c * k)
    # a few ulp times the condition number 2 c^2 kappa^2 of exp(-c^2 kappa^2) (a, c are rounded)
    eps = np.finfo(float).eps
    assert abs(got[0] - float(dk)) <= (8 + 2 * float(c * k) ** 2) * eps * abs(float(dk))
    full = risk_grad(p, *kn)[0]  # the general gradient takes the same stable route
    assert abs(full - float(dk)) <= (8 + 2 * float(c * k) ** 2) * eps * abs(float(dk))
    # and so does the Hessian's (kappa, kappa) entry: mpmath differentiates dR/dkappa
    with mp.workdps(50):
        dkk = mp.diff(
            lambda kk: (
                4 * G * c / mp.sqrt(mp.pi) * mp.exp(-((c * kk) ** 2)) * (mp.erf(a * kk / s) - n)
            ),
            k,
        )
    hkk = risk_hessian(p, *kn)[0, 0]
    cond = 16 + 2 * float(c * k) ** 2 + 2 * float(a * k / s) ** 2
    assert abs(hkk - float(dkk)) <= cond * eps * abs(float(dkk))
    assert abs(got[1] - float(dn)) <= 4 * eps * abs(float(dn))


_PLATEAU = [  # (sigma, lambda, L, s, overlaps): beside the edge nu = sgn kappa, off M
    ("erf", 0.5, 1, 1, (np.sqrt(1 - 1e-4), 1.0, 0.0, 0.01, 0.01)),
    pytest.param("tanh", 2.0, 1, 1, (0.999, 1.0, 0.0, 0.03, 0.03), marks=pytest.mark.door_free),
    pytest.param("erf", 0.5, 1, 1, (np.sqrt(0.99), 1.0, 0.0, 0.1, 0.1), marks=pytest.mark.slow),
    pytest.param("erf", 0.5, 2, 2, (np.sqrt(0.99), 1.0, 0.0, 0.1, 0.1), marks=pytest.mark.slow),
    pytest.param(
        "erf",
        0.9,
        1,
        1,
        (0.6, 1 - 1e-9, 3e-5, 0.05, 0.05 * (1 - 1e-9) + 1e-9),
        marks=pytest.mark.slow,
    ),
    pytest.param("erf", 0.3, 1, 1, (0.9, 1 - 1e-12, 1e-7, 1e-3, 1e-3), marks=pytest.mark.slow),
    pytest.param(
        "erf", 0.5, 1, 1, (-np.sqrt(1 - 1e-4), -1.0, 0.0, 0.01, -0.01), marks=pytest.mark.slow
    ),
    pytest.param("tanh", 0.9, 1, 1, (0.999, 1.0, 0.0, 0.03, 0.03), marks=pytest.mark.slow),
    pytest.param("tanh", 0.9, 3, 2, (-0.999, -1.0, 0.0, 0.03, -0.03), marks=pytest.mark.slow),
    pytest.param("arctan", 0.9, 1, 1, (0.999, 1.0, 0.0, 0.03, 0.03), marks=pytest.mark.slow),
    pytest.param("algebraic", 0.9, 2, 2, (0.999, 1.0, 0.0, 0.03, 0.03), marks=pytest.mark.slow),
    # on M, beside the corners: R_kappa -2.1e-19 and -1.2e-35 (tanh), the corner (-1, -1)
    pytest.param("tanh", 0.9, 1, 1, (0.999, 1 - 1e-12, 0.0, 0.0, 0.0), marks=pytest.mark.slow),
    pytest.param("tanh", 2.0, 1, 1, (0.9, 1.0, 0.0, 0.0, 0.0), marks=pytest.mark.slow),
    pytest.param("algebraic", 2.0, 1, 1, (-0.999, -1.0, 0.0, 0.0, 0.0), marks=pytest.mark.slow),
]


@pytest.mark.parametrize("sigma, lam, L, s, ov", _PLATEAU)
def test_plateau_points_keep_relative_precision(sigma, lam, L, s, ov):
    """Off M beside the edge, the informative part (6.4e-32 at the first point) and every
    partial, erfc-small ones included (with L = 1 nothing else hides the informative
    part's R_kappa, -8.6e-30 there), against 30-digit conditioned quadrature and
    differences of it: to 1e-12 relative (1.2e-6 and 7e-7 before rho^2 Z2 - 2 eta rho E2
    was grouped as rho^2 W2 + 2 rho (nu rho - eta) E2)."""
    from slr_theory.engine import value_and_gradient
    from slr_theory.verify.risk_checks import mp_risk_gradient

    p = Params.paper(lam=lam).replace(L=L, s=s, nonlinearity=sigma)
    comps = risk_components(p, *ov)
    grad = risk_grad(p, *ov)
    ref = remembered(mp_risk_components, p, ov, 30)
    assert abs(comps.informative - ref["informative"]) <= 1e-12 * ref["informative"]
    want = remembered(mp_risk_gradient, p, ov, 30)
    for got, exact in zip(grad, want, strict=True):
        assert abs(got - exact) <= 1e-12 * abs(exact), (got, exact)
    # the engine's batched door is the same numbers
    _c, g = value_and_gradient(p, ov)
    np.testing.assert_array_equal(g, grad)


@pytest.mark.door_free  # softmax's terms never take the door of the exponents
@pytest.mark.parametrize(
    ("lam", "ov"),
    [
        pytest.param(0.5, (np.sqrt(1 - 1e-4), 1.0, 0.0, 0.01, 0.01), marks=pytest.mark.slow),
        pytest.param(0.5, (0.999, 1.0, 0.0, 0.03, 0.03), marks=pytest.mark.slow),
        (2.0, (np.sqrt(1 - 1e-4), 1.0, 0.0, 0.01, 0.01)),
        pytest.param(2.0, (0.999, 1.0, 0.0, 0.03, 0.03), marks=pytest.mark.slow),
    ],
)
def test_softmax_plateau_points_keep_relative_precision(lam, ov):
    """The softmax model's own cancellation-free form (variables 1 - nu, eta - rho) at the
    same kind of points, against the two-token quadrature: 1e-11 relative for the risk
    and every partial (R_kappa -3.8e-18 at lambda = 2). One point in the default run
    (7 s), the others with the slow ones."""
    from slr_theory.verify.risk_checks import mp_risk_gradient, mp_softmax_risk_two_tokens

    p = Params.paper(lam=lam).replace(L=2, attention="softmax")
    value = risk(p, *ov)
    assert abs(value - remembered(mp_softmax_risk_two_tokens, p, ov, 30)) <= 1e-11 * value
    want = remembered(mp_risk_gradient, p, ov, 30, reference=mp_softmax_risk_two_tokens)
    for got, exact in zip(risk_grad(p, *ov), want, strict=True):
        assert abs(got - exact) <= 1e-11 * abs(exact), (got, exact)


def test_broadcasting_shapes():
    p = Params.paper()
    k = np.linspace(-1, 1, 5)[:, None]
    n = np.linspace(-1, 1, 3)
    assert risk(p, k, n).shape == (5, 3)
    assert risk_grad(p, k, n).shape == (5, 3, 5)
    assert manifold_risk_grad(p, k, n).shape == (5, 3, 2)
    assert risk_components(p, k, n).informative.shape == (5, 3)


def test_bad_input():
    p = Params.paper()
    with pytest.raises(ValueError, match=r"`params` must be a slr_theory\.Params"):
        risk({"d": 4}, 0.0, 0.0)
    with pytest.raises(ValueError, match="positive semi-definite"):
        risk(p, 0.9, 0.9, rho=-0.9)
    with pytest.raises(ValueError, match="`nu` must lie in"):
        risk(p, 0.0, 1.2)


def _random_config(rng, d):
    ks, vs = np.eye(d)[0], np.eye(d)[1]
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    ks, vs = q @ ks, q @ vs  # random orthonormal targets
    k = rng.standard_normal(d)
    v = rng.standard_normal(d) + 2 * vs
    return k / np.linalg.norm(k), v / np.linalg.norm(v), ks, vs


@pytest.mark.parametrize("seed", range(5))
def test_explicit_vector_gradients_match_finite_differences(seed):
    from slr_theory import risk_at, risk_grad_at
    from slr_theory.sampling import overlaps_of

    rng = np.random.default_rng(seed)
    p = Params(d=12, L=5, lam=0.4, gamma=0.8, eps=0.1)
    k, v, ks, vs = _random_config(rng, p.d)
    gk, gv = risk_grad_at(p, k, v, ks, vs)
    u = rng.standard_normal(p.d)
    h = 1e-6
    # Euclidean: R as a function of (k, v) in R^d through the overlaps
    for grad, which in ((gk, 0), (gv, 1)):
        plus = [k + h * u, v] if which == 0 else [k, v + h * u]
        minus = [k - h * u, v] if which == 0 else [k, v - h * u]
        fd = (risk(p, *overlaps_of(*plus, ks, vs)) - risk(p, *overlaps_of(*minus, ks, vs))) / (
            2 * h
        )
        assert grad @ u == pytest.approx(fd, rel=1e-6, abs=1e-8)
    # Riemannian: derivative along the geodesic k(t) = cos t k + sin t w, w tangent
    rk, rv = risk_grad_at(p, k, v, ks, vs, riemannian=True)
    assert abs(rk @ k) < 1e-14 and abs(rv @ v) < 1e-14
    w = u - (u @ k) * k
    w /= np.linalg.norm(w)
    fd = (
        risk_at(p, np.cos(h) * k + np.sin(h) * w, v, ks, vs)
        - risk_at(p, np.cos(h) * k - np.sin(h) * w, v, ks, vs)
    ) / (2 * h)
    assert rk @ w == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_explicit_vectors_are_validated():
    from slr_theory import risk_at

    p = Params(d=4, L=2, lam=1.0, gamma=1.0)
    e = np.eye(4)
    with pytest.raises(ValueError, match="`k` must have unit norm"):
        risk_at(p, 2 * e[0], e[1], e[0], e[1])
    with pytest.raises(ValueError, match="must be orthogonal"):
        risk_at(p, e[0], e[1], e[0], e[0])
    with pytest.raises(ValueError, match="`v` must have last dimension d=4"):
        risk_at(p, e[0], np.ones(3) / np.sqrt(3), e[0], e[1])


@settings(max_examples=25)
@given(cfg=configs(d_max=1e4))
def test_hessian_matches_finite_differences_of_the_gradient(cfg):
    from slr_theory import risk_hessian

    p, ov = cfg
    p = p.replace(lam=min(p.lam, 1.0), L=min(p.L, 100))
    hess = risk_hessian(p, *ov)
    np.testing.assert_array_equal(hess, np.swapaxes(hess, -1, -2))
    h = 1e-6
    fd = np.array(
        [(risk_grad(p, *(ov + h * e)) - risk_grad(p, *(ov - h * e))) / (2 * h) for e in np.eye(5)]
    )
    scale = np.max(np.abs(hess)) + 1.0
    np.testing.assert_allclose(hess, fd, atol=1e-6 * scale)


@pytest.mark.door_free
def test_general_order_derivatives_agree_with_dedicated_functions():
    from slr_theory import gaussian as g

    rng = np.random.default_rng(4)
    t, s = rng.uniform(-5, 5, 300), rng.uniform(0, 4, 300)
    for n, f in [(0, g.zeta), (1, g.zeta_t), (2, g.zeta_tt), (3, g.zeta_ttt)]:
        # two implementations (Hermite recursion, dedicated closed form), each measured
        # within a few ulp of mpmath (tests/test_gaussian.py): a margin of 450 ulp, which
        # the platform's exp (<= 3 ulp per route) cannot exhaust; not a derived bound
        np.testing.assert_allclose(g.zeta_derivative(t, s, n), f(t, s), rtol=1e-13, atol=1e-15)
    for n, f in [
        (0, g.mean_erf),
        (1, g.mean_erf_prime),
        (2, g.mean_erf_second),
        (3, g.mean_erf_third),
    ]:
        # the same margin
        np.testing.assert_allclose(g.mean_erf_derivative(t, s, n), f(t, s), rtol=1e-13, atol=1e-15)
    # order 4 against mpmath: E of the 4th derivatives of erf^2 and erf, integrated directly
    from slr_theory.verify.reference import MP_DERIVATIVES, mp_expect

    def erf4(x):
        return (12 * x - 8 * x**3) * 2 / mp.sqrt(mp.pi) * mp.exp(-(x**2))

    for tt, ss in [(0.3, 0.5), (-1.2, 1.1), (2.0, 0.2)]:
        ref_z = mp_expect(MP_DERIVATIVES["zeta_ttt"], tt, ss)  # d/dx of the zeta_ttt integrand
        ref_e = mp_expect(erf4, tt, ss)
        assert g.zeta_derivative(tt, ss, 4) == pytest.approx(float(ref_z), rel=1e-12)
        assert g.mean_erf_derivative(tt, ss, 4) == pytest.approx(float(ref_e), rel=1e-12)


def test_origin_is_a_saddle_and_optimum_a_minimum_on_m():
    from slr_theory import manifold_risk_hessian

    p = Params.paper(lam=0.1)
    assert np.linalg.det(manifold_risk_hessian(p, 0.0, 0.0)) < 0
    # interior point near the optimum along the flow: gradient small, Hessian PSD in kappa
    assert manifold_risk_hessian(p, 0.9, 0.9)[0, 0] > 0


@pytest.mark.slow
@settings(max_examples=60)
@given(cfg=configs(d_max=1e8))
def test_components_match_conditioned_quadrature_full_ranges(cfg):
    p, ov = cfg
    ref = mp_risk_components(p, ov)
    got = risk_components(p, *ov)
    for name in ("informative", "distractors", "total"):
        r, v = ref[name], getattr(got, name)
        assert abs(mp.mpf(float(v)) - r) <= 1e-12 * abs(r) + 1e-300, (name, float(v), r)


def test_two_dimensional_model_against_monte_carlo():
    from slr_theory.sampling import monte_carlo_risk

    p = Params(d=2, L=3, lam=0.8, gamma=0.6, eps=0.1)
    phi, psi = 0.4, 1.1
    k = np.array([np.cos(phi), np.sin(phi)])
    v = np.array([np.sin(psi), np.cos(psi)])
    ks, vs = np.eye(2)
    ov = (k @ ks, v @ vs, v @ ks, k @ vs, k @ v)
    mc = monte_carlo_risk(p, k, v, ks, vs, 400_000, np.random.default_rng(8))
    assert abs(mc.estimate - risk(p, *ov)) < 5 * mc.stderr
    with pytest.raises(ValueError, match="dimension d=2"):
        risk(p, 0.5, 0.5)


# --- s informative tokens -----------------------------------------------------------------


@st.composite
def s_configs(draw):
    p, ov = draw(configs(d_max=1e4))
    L = max(p.L, 2)
    return p.replace(L=L, s=draw(st.integers(2, min(L, 50)))), ov


@settings(max_examples=8)
@given(cfg=s_configs())
def test_s_token_components_match_conditioned_quadrature(cfg):
    """s informative tokens: s of each informative term, L - s distractors, 2 s (L - s)
    mixed pairs and s (s - 1) informative pairs, against 30-digit conditioned quadrature
    of the same per-token moments (slr_theory.verify.risk_checks.mp_risk_components)."""
    p, ov = cfg
    assert_components_match(p, ov)


@pytest.mark.parametrize("s", [2, 3])
def test_s_token_risk_matches_monte_carlo_on_explicit_vectors(s):
    """The data model itself (s informative tokens drawn in R^d) within 4 standard errors."""
    from slr_theory.sampling import monte_carlo_risk, vectors_from_overlaps

    rng = np.random.default_rng(s)
    p = Params(d=12, L=5, lam=0.6, gamma=0.8, eps=0.1, s=s)
    for ov in [(0.5, 0.4, 0.2, -0.3, 0.25), (0.8, -0.2, 0.1, 0.3, -0.1), (0.3, 0.7, 0, 0, 0)]:
        k, v, ks, vs = vectors_from_overlaps(ov, p.d)
        mc = monte_carlo_risk(p, k, v, ks, vs, 200_000, rng)
        assert abs(mc.estimate - risk(p, *ov)) < 4 * mc.stderr, (ov, mc, risk(p, *ov))


@pytest.mark.parametrize("s", [2, 5])
def test_s_token_gradient_and_hessian_match_finite_differences(s):
    rng = np.random.default_rng(10 + s)
    for _ in range(5):
        x, y = rng.standard_normal((2, 6))
        k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
        ov = 0.9 * np.array([k[0], v[1], v[0], k[1], k @ v])  # interior: steps stay feasible
        p = Params(
            d=int(rng.integers(4, 500)),
            L=6,
            lam=10 ** rng.uniform(-1.5, 0.5),
            gamma=rng.uniform(0.2, 2),
            s=s,
        )
        assert_derivatives_match_differences(p, ov)


@pytest.mark.parametrize("s", [1, 2, 7])
def test_m_stays_invariant_with_s_tokens(s):
    """On M the partials in theta, eta, rho vanish exactly for every s (docs/theory.md §3)."""
    p = Params(d=400, L=10, lam=0.3, gamma=0.7, s=s)
    kappa, nu = np.meshgrid(np.linspace(-1, 1, 9), np.linspace(-1, 1, 9))
    g = risk_grad(p, kappa.ravel(), nu.ravel())
    assert np.all(g[:, 2:] == 0.0)
    # and the risk on M is the paper's form with s and L - s
    from slr_theory.gaussian import zeta

    base = Params(d=400, L=10, lam=0.3, gamma=0.7)
    r, r1 = risk(p, 0.4, -0.3), risk(base, 0.4, -0.3)
    floor = zeta(0.0, 0.3)
    # an identity between two engine evaluations: differences of O(1) terms, a few ulp
    np.testing.assert_allclose(r - (10 - s) * floor, s * (r1 - 9 * floor), rtol=1e-13)
