"""Each derivations/*.py script's final expressions equal the numeric implementation."""

import importlib.util
import pathlib

import numpy as np
import pytest
import sympy as sp
from scipy.special import owens_t

from slr_theory import gaussian as g

ROOT = pathlib.Path(__file__).resolve().parents[1] / "derivations"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"derivations.{name}", ROOT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.modules.setdefault("derivations", importlib.import_module("derivations"))
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gaussian_erf():
    mod = _load("gaussian_erf")
    return mod, mod.derive()


@pytest.fixture(scope="module")
def zeta_mod():
    mod = _load("zeta")
    return mod, mod.derive()


RNG = np.random.default_rng(42)
MU = RNG.uniform(-4, 4, 50)
SIG = RNG.uniform(0.01, 3, 50)


@pytest.mark.parametrize(
    "name",
    [
        "mean_erf",
        "mean_erf_prime",
        "mean_erf_second",
        "mean_x_erf",
        "mean_x_erf_prime",
        "mean_x2_erf",
    ],
)
def test_gaussian_erf_derivation_matches_implementation(gaussian_erf, name):
    mod, res = gaussian_erf
    f = sp.lambdify((mod.mu, mod.sigma), res[name], modules="scipy")
    # SymPy's formula evaluated naively (x*x rounded, no double-double) against the
    # implementation at moderate arguments: a margin (450 ulp) over two routes that agree
    # to a few ulp, not a derived bound; the platform's exp moves each by <= 3 ulp
    np.testing.assert_allclose(getattr(g, name)(MU, SIG), f(MU, SIG), rtol=1e-13, atol=1e-300)


def test_zeta_derivation_matches_implementation(zeta_mod):
    mod, res = zeta_mod
    zt = sp.lambdify((mod.t, mod.s), res["zeta_t"], modules="scipy")
    ztt = sp.lambdify((mod.t, mod.s), res["zeta_tt"], modules="scipy")
    z0 = sp.lambdify((mod.s,), res["zeta0"], modules="scipy")
    # the same margin over two formulas in double (zeta_tt's 1e-12: a cancelling sum in
    # the naive formula)
    np.testing.assert_allclose(g.zeta_t(MU, SIG), zt(MU, SIG), rtol=1e-13)
    np.testing.assert_allclose(g.zeta_tt(MU, SIG), ztt(MU, SIG), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g.zeta(0.0, SIG), z0(SIG), rtol=1e-14)
    # Owen's T at t = 0: 1 - 8 T(0, a) = zeta(0, s)
    np.testing.assert_allclose(
        1 - 8 * owens_t(0.0, 1 / np.sqrt(1 + 4 * SIG**2)), z0(SIG), rtol=1e-13
    )


def test_zeta_tail_integrand_integrates_to_zeta_c(zeta_mod):
    from scipy.integrate import quad

    mod, res = zeta_mod
    f = sp.lambdify((mod.xx, mod.v, mod.s), res["tail_integrand"], modules="scipy")
    for t, s in [(0.3, 0.2), (2.0, 1.0), (5.0, 0.1)]:
        x = t / np.sqrt(1 + 2 * s * s)
        val, _ = quad(lambda v, x=x, s=s: f(x, v, s), 0, np.inf, epsabs=0, epsrel=1e-13)
        assert val == pytest.approx(g.zeta_c(t, s), rel=1e-11)


def test_erf_pair_derivation_matches_implementation():
    mod = _load("erf_pair")
    res = mod.derive()
    f = sp.lambdify((mod.s11, mod.s12, mod.s22), res["centred"], modules="scipy")
    a = RNG.normal(size=(50, 2, 2))
    s = a @ np.swapaxes(a, 1, 2)
    v1, c, v2 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 1]
    # the arcsin lemma in double both ways: a margin of 450 ulp over a few roundings
    np.testing.assert_allclose(g.erf_pair(0.0, 0.0, v1, c, v2), f(v1, c, v2), rtol=1e-13)


def test_risk_derivation_matches_implementation():
    from slr_theory import Params, risk

    mod = _load("risk")
    res = mod.derive()
    syms = (
        mod.kappa,
        mod.nu,
        mod.theta,
        mod.eta,
        mod.rho,
        mod.gamma,
        mod.lam,
        mod.B,
        mod.L,
        mod.eps,
        *mod.E,
        *mod.Z,
        mod.P,
        mod.S0,
        mod.S2,
    )
    f = sp.lambdify(syms, res["risk"], modules="numpy")
    rng = np.random.default_rng(5)
    for _ in range(20):
        x, y = rng.standard_normal((2, 6))
        k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
        ov = (k[0], v[1], v[0], k[1], k @ v)
        p = Params(
            d=int(rng.integers(4, 1000)),
            L=int(rng.integers(1, 20)),
            lam=rng.uniform(0.05, 2),
            gamma=rng.uniform(0.2, 2),
            eps=rng.uniform(0, 0.5),
        )
        a, gg = p.lam * np.sqrt(p.d / 2), p.lam * p.gamma
        m = a * ov[0]
        e = (g.mean_erf(m, gg), g.mean_erf_prime(m, gg), g.mean_erf_second(m, gg))
        z = (g.zeta(m, gg), g.zeta_t(m, gg), g.zeta_tt(m, gg))
        extra = (
            p.lam * g.mean_erf_prime(0.0, p.lam),
            g.zeta(0.0, p.lam),
            p.lam**2 * g.zeta_tt(0.0, p.lam),
        )
        value = f(*ov, p.gamma, p.lam, np.sqrt(p.d / 2), p.L, p.eps, *e, *z, *extra)
        assert value == pytest.approx(risk(p, *ov), rel=1e-12)


@pytest.fixture(scope="module")
def dynamics_mod():
    mod = _load("dynamics")
    return mod, mod.derive()


def test_dynamics_derivation_matches_implementation(dynamics_mod):
    """The derived flow, PGD map and zeta series against geometry, dynamics and gaussian."""
    from slr_theory.dynamics import pgd_step
    from slr_theory.gaussian import zeta_series_coefficients
    from slr_theory.geometry import overlap_velocity

    mod, res = dynamics_mod
    syms = (*mod.OVERLAPS, mod.Rk, mod.Rn, mod.Rt, mod.Re, mod.Rr, mod.alpha)
    field = sp.lambdify(syms, res["field"], modules="numpy")
    raw = sp.lambdify(syms, res["pgd_raw"], modules="numpy")
    norms = sp.lambdify(syms, res["pgd_norms"], modules="numpy")
    rng = np.random.default_rng(6)
    for _ in range(20):
        x, y = rng.standard_normal((2, 4))
        k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
        ov = np.array([k[0], v[1], v[0], k[1], k @ v])
        g = rng.standard_normal(5)
        alpha = rng.uniform(0.01, 0.5)
        args = (*ov, *g, alpha)
        # polynomials in O(1) inputs, in another order: a few ulp of their terms; 1e-14 absolute
        np.testing.assert_allclose(field(*args), overlap_velocity(ov, g), rtol=1e-13, atol=1e-14)
        nk2, nv2 = norms(*args)
        n = np.sqrt([nk2, nv2, nv2, nk2, nk2 * nv2])
        np.testing.assert_allclose(np.array(raw(*args)) / n, pgd_step(ov, g, alpha), atol=1e-14)
    coeffs = sp.lambdify(mod.r, res["zeta_series"], modules="numpy")
    for rr in (1.0, 1.3, 4.0, 50.0):
        # rational coefficients, SymPy's exact ones rounded once: a few roundings, 45 ulp
        np.testing.assert_allclose(zeta_series_coefficients(rr), coeffs(rr), rtol=1e-14)


def test_engine_term_table_is_the_derived_risk():
    """slr_theory.engine builds value, gradient and Hessian from a table of the risk's terms;
    that table, summed, must be the risk of derivations/risk.py minus eps^2."""
    from slr_theory import engine

    mod = _load("risk")
    risk_expr = mod.derive()["risk"]
    G, g, B, L, P = mod.gamma**2, mod.lam * mod.gamma, mod.B, mod.L, mod.P
    coef = {
        "G": G,
        "2Gg2": 2 * G * g**2,
        "-2Bh": -2 * B * mod.gamma * g,
        "B2": B**2,
        "2Bh": 2 * B * mod.gamma * g,
        "Gg2": G * g**2,
        "S0L": (L - 1) * mod.S0,
        "S2L": (L - 1) * mod.S2,
        "2LPB": 2 * (L - 1) * P * B,
        "2LPh": 2 * (L - 1) * P * mod.gamma * g,
        "LLP2": (L - 1) * (L - 2) * P**2,
    }
    # W = 1 - 2 nu E0 + Z0 is one basis of the engine (stable at the optimum)
    W = 1 - 2 * mod.nu * mod.E[0] + mod.Z[0]
    F = {
        "1": 1,
        "W": W,
        "W2": mod.Z[2] - 2 * mod.nu * mod.E[2],
        **{f"E{j}": mod.E[j] for j in range(3)},
        **{f"Z{j}": mod.Z[j] for j in range(3)},
    }
    # delta = nu rho - eta: the engine's sixth variable (its grouping rho^2 W2 + 2 rho delta E2)
    monos = (mod.nu, mod.theta, mod.eta, mod.rho, mod.nu * mod.rho - mod.eta)
    table = sum(
        coef[name] * sp.Mul(*[m**e for m, e in zip(monos, exps, strict=True)]) * F[f]
        for _component, name, exps, f in engine.RISK_TERMS
        if name not in engine.PAIR_TERMS  # s = 1: no pairs of informative tokens
    )
    assert sp.expand(risk_expr - mod.eps**2 - table) == 0


def test_engine_term_table_with_s_informative_tokens_is_the_derived_risk():
    """With s > 1 the engine's coefficients carry s, L - s and the pair terms s(s-1) m1^2 of
    three new bases (erf^2, erf e^{-x^2}, e^{-2x^2}); summed, the table must be
    derivations/risk.py's risk with s tokens, for a symbolic s."""
    from slr_theory import engine

    mod = _load("risk")
    risk_expr = mod.derive()["risk_s"]
    G, g, B, L, P, s = mod.gamma**2, mod.lam * mod.gamma, mod.B, mod.L, mod.P, mod.s
    coef = {
        "G": s * G,
        "2Gg2": 2 * s * G * g**2,
        "-2Bh": -2 * s * B * mod.gamma * g,
        "B2": s * B**2,
        "2Bh": 2 * s * B * mod.gamma * g,
        "Gg2": s * G * g**2,
        "S0L": (L - s) * mod.S0,
        "S2L": (L - s) * mod.S2,
        "2LPB": 2 * s * (L - s) * P * B,
        "2LPh": 2 * s * (L - s) * P * mod.gamma * g,
        "LLP2": (L - s) * (L - s - 1) * P**2,
        "SSB2": s * (s - 1) * B**2,
        "2SSBh": 2 * s * (s - 1) * B * mod.gamma * g,
        "SSGg2": s * (s - 1) * G * g**2,
    }
    W = 1 - 2 * mod.nu * mod.E[0] + mod.Z[0]
    E0, E1 = mod.E[0], mod.E[1]
    F = {
        "1": 1,
        "W": W,
        "W2": mod.Z[2] - 2 * mod.nu * mod.E[2],
        **{f"E{j}": mod.E[j] for j in range(3)},
        **{f"Z{j}": mod.Z[j] for j in range(3)},
        "E0E0": E0 * E0,
        "E0E1": E0 * E1,
        "E1E1": E1 * E1,
    }
    # delta = nu rho - eta: the engine's sixth variable (its grouping rho^2 W2 + 2 rho delta E2)
    monos = (mod.nu, mod.theta, mod.eta, mod.rho, mod.nu * mod.rho - mod.eta)
    table = sum(
        coef[name] * sp.Mul(*[m**e for m, e in zip(monos, exps, strict=True)]) * F[f]
        for _component, name, exps, f in engine.RISK_TERMS
    )
    assert sp.expand(risk_expr - mod.eps**2 - table) == 0
    assert set(engine.PAIR_TERMS) == {"SSB2", "2SSBh", "SSGg2"}


def test_softmax_risk_expression_is_the_derived_risk():
    """derivations/softmax.py expands E[(Y - T)^2 | U] over the weights; the engine's table
    is built from slr_theory.softmax.risk_expression: the two agree term by term."""
    from slr_theory.softmax import risk_expression

    mod = _load("softmax")
    derived = mod.derive()
    d, gamma = 12, 0.7
    for (L, s), terms in derived.items():
        subs = {mod.B: sp.sqrt(sp.Rational(d, 2)), mod.G: sp.Rational(49, 100)}
        want = {k: float(v.subs(subs)) for k, v in terms.items()}
        got: dict = {}
        for _comp, c, mono, term in risk_expression(d, L, gamma, s):
            got[(mono, term)] = got.get((mono, term), 0.0) + c
        got = {k: v for k, v in got.items() if v != 0.0}
        assert set(got) == set(want), (L, s, set(got) ^ set(want))
        for k in want:
            assert abs(got[k] - want[k]) <= 1e-12 * max(1.0, abs(want[k])), (L, s, k)


def test_bayes_importance_sampling_pieces_are_derived():
    """derivations/bayes.py: h ~ sqrt(p q), log Z, the pair identity and the change of
    measure; statistics.bhattacharyya_log is its log Z."""
    from slr_theory import Params
    from slr_theory.statistics import bhattacharyya_log

    mod = _load("bayes")
    out = mod.derive()
    for d, gam in ((20, 0.7), (400, 0.5**0.5), (50, 1.3)):
        want = float(out["logZ"].subs({mod.d: d, mod.g: gam}))
        got = bhattacharyya_log(Params(d=d, L=4, lam=1.0, gamma=gam))
        assert abs(got - want) <= 1e-13 * abs(want)
