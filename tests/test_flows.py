"""Gradient flows: fields against the risk's gradient, Jacobians against finite
differences, the flows against PGD as alpha -> 0 and against the flow in R^d."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from slr_theory import Params, engine, manifold_risk_grad, pgd, risk_grad
from slr_theory.dynamics import sample_initial_overlaps
from slr_theory.flows import (
    manifold_field,
    manifold_flow,
    manifold_jacobian,
    overlap_field,
    overlap_flow,
    overlap_jacobian,
)
from slr_theory.sampling import overlaps_of, random_targets

from .strategies import random_overlaps

PARAMS = [
    Params.paper(lam=0.1),
    Params.paper(lam=0.9),
    Params(d=16, L=6, lam=0.6, gamma=0.7, eps=0.1),
    Params(d=400, L=10, lam=2.0, gamma=0.5**0.5),
]


def _fd_jacobian(f, x, h=1e-6):
    x = np.asarray(x, float)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("p", PARAMS)
def test_manifold_field_is_projected_gradient(p):
    k = np.array([0.0, 0.3, -0.7, 0.99, 1.0, -1.0, 0.05])
    n = np.array([0.0, -0.2, 0.4, 0.98, 1.0, 0.5, -1.0])
    expected = -(1 - np.stack([k, n], -1) ** 2) * manifold_risk_grad(p, k, n)
    # the same gradient times (1 - x^2) formed two ways: a few roundings (450 ulp margin)
    np.testing.assert_allclose(manifold_field(p, k, n), expected, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("p", PARAMS)
def test_overlap_field_matches_the_closed_form_gradient(p):
    ov = random_overlaps(np.random.default_rng(3), 20, m=4)
    g = risk_grad(p, *ov.T)
    k, n, t, e, r = ov.T
    rk, rn, rt, re, rr = g.T
    A, B = k * rk + e * re + r * rr, t * rt + n * rn + r * rr
    expected = -np.stack(
        [
            rk + t * rr - A * k,
            rn + e * rr - B * n,
            rt + k * rr - B * t,
            re + n * rr - A * e,
            t * rk + n * re + 2 * rr - A * r + k * rt + e * rn - B * r,
        ],
        -1,
    )
    scale = np.abs(g).max()
    np.testing.assert_allclose(overlap_field(p, ov), expected, atol=1e-14 * scale)


@pytest.mark.parametrize("p", PARAMS)
@pytest.mark.parametrize("kn", [(0.0, 0.0), (0.3, -0.2), (-0.8, 0.6), (0.999, 0.97)])
def test_manifold_jacobian_matches_finite_differences(p, kn):
    J = manifold_jacobian(p, *kn)
    fd = _fd_jacobian(lambda x: manifold_field(p, x[0], x[1]), kn)
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-8 * max(1.0, np.abs(J).max()))


@pytest.mark.parametrize("p", PARAMS[:3])
def test_overlap_jacobian_matches_finite_differences(p):
    rng = np.random.default_rng(5)
    for o in random_overlaps(rng, 4, m=4):
        J = overlap_jacobian(p, o)
        fd = _fd_jacobian(lambda x: overlap_field(p, x), o)
        np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-7 * np.abs(J).max())


def test_manifold_flow_is_the_limit_of_pgd():
    """PGD with step alpha is an Euler-like scheme: its error at fixed time is O(alpha)."""
    p = Params.paper(lam=0.1)
    k0, n0, T = 0.05, -0.03, 40.0
    flow = manifold_flow(p, k0, n0, T)
    errs = []
    for alpha in (4e-2, 4e-3):
        res = pgd(p, [k0, n0, 0, 0, 0], alpha, round(T / alpha), record_every=round(T / alpha))
        errs.append(np.abs(res.overlaps[-1, :2] - flow.overlaps[-1, :2]).max())
    assert errs[1] < 2e-3
    assert 7 < errs[0] / errs[1] < 13  # first order in alpha


def test_overlap_flow_is_the_limit_of_pgd_off_m():
    p = Params(d=16, L=6, lam=0.6, gamma=0.7, eps=0.1)
    o0 = sample_initial_overlaps(p, np.random.default_rng(8))
    T = 20.0
    flow = overlap_flow(p, o0, T)
    errs = []
    for alpha in (2e-2, 2e-3):
        n = round(T / alpha)
        errs.append(
            np.abs(pgd(p, o0, alpha, n, record_every=n).overlaps[-1] - flow.overlaps[-1]).max()
        )
    assert errs[1] < 1e-3
    assert 0.85 < np.log10(errs[0] / errs[1]) < 1.2  # first order in alpha


def _rd_flow(p, k, v, ks, vs, T, t_eval):
    """The Riemannian gradient flow of (k, v) in R^d, integrated with Radau.

    The overlap partials come from the risk engine (checked against mpmath in
    tests/test_engine.py); the flow's closure on the overlaps is what is under test.
    """
    d = p.d
    tab = engine.table(p, p.lam, 1)

    def fun(_t, y):
        kk, vv = y[:d] / np.linalg.norm(y[:d]), y[d:] / np.linalg.norm(y[d:])
        o = overlaps_of(kk, vv, ks, vs)[:, None]
        rk, rn, rt, re, rr = (tab.C @ tab.features(o))[:, 0]
        gk = rk * ks + re * vs + rr * vv
        gv = rt * ks + rn * vs + rr * kk
        return -np.concatenate([gk - (gk @ kk) * kk, gv - (gv @ vv) * vv])

    y0 = np.concatenate([k, v])
    sol = solve_ivp(fun, (0, T), y0, method="Radau", rtol=1e-11, atol=1e-13, t_eval=t_eval)
    kk = sol.y[:d].T / np.linalg.norm(sol.y[:d].T, axis=1, keepdims=True)
    vv = sol.y[d:].T / np.linalg.norm(sol.y[d:].T, axis=1, keepdims=True)
    return overlaps_of(kk, vv, ks, vs)


@pytest.mark.parametrize("lam", [0.6, 2.5])
def test_overlap_flow_agrees_with_the_flow_in_rd(lam):
    rng = np.random.default_rng(12)
    p = Params(d=12, L=5, lam=lam, gamma=0.7, eps=0.0)
    ks, vs = random_targets(p, rng)
    k, v = (x / np.linalg.norm(x) for x in rng.standard_normal((2, p.d)))
    T = 15.0
    t_eval = np.linspace(0, T, 7)
    res = overlap_flow(p, overlaps_of(k, v, ks, vs), T, t_eval=t_eval)
    ref = _rd_flow(p, k, v, ks, vs, T, t_eval)
    np.testing.assert_allclose(res.overlaps, ref, atol=1e-7)


def test_overlap_flow_invariants():
    p = Params.paper(lam=0.3)
    rng = np.random.default_rng(4)
    # M is invariant: exact zeros stay exact
    on_m = overlap_flow(p, [0.2, -0.1, 0, 0, 0], 30.0)
    assert np.all(on_m.overlaps[:, 2:] == 0)
    ref = manifold_flow(p, 0.2, -0.1, 30.0)
    np.testing.assert_allclose(on_m.overlaps[-1], ref.overlaps[-1], atol=1e-8)
    for o0 in sample_initial_overlaps(p, rng, 3):
        res = overlap_flow(p, o0, 60.0)
        assert res.success
        assert np.all(np.diff(res.risk) <= 1e-12 * res.risk[0])  # the risk decreases
        # the Gram matrix of (k, v, k*, v*) stays PSD (to the integration tolerance)
        k, n, t, e, r = res.overlaps.T
        gram = np.array(
            [
                [1 + 0 * k, r, k, e],
                [r, 1 + 0 * k, t, n],
                [k, t, 1 + 0 * k, 0 * k],
                [e, n, 0 * k, 1 + 0 * k],
            ]
        )
        assert np.linalg.eigvalsh(np.moveaxis(gram, (0, 1), (-2, -1))).min() > -1e-8
        np.testing.assert_allclose(res.sol(res.t[-1]), res.overlaps[-1], atol=1e-12)


def test_manifold_flow_keeps_the_square_and_stops_near_critical_points():
    p = Params.paper(lam=0.1)
    res = manifold_flow(p, 0.3, 0.2, 1e4, stop_radius=1e-3)
    assert res.status == 1 and res.t_event is not None
    assert res.t[-1] == pytest.approx(res.t_event)
    assert np.hypot(1 - res.kappa[-1], 1 - res.nu[-1]) == pytest.approx(1e-3, rel=1e-6)
    assert np.all(np.abs(res.overlaps[:, :2]) <= 1)
    p = Params.paper(lam=0.9)  # saturation: a plateau at (0.318, 1), not a critical point
    explicit = manifold_flow(p, 0.3, 0.2, 50.0, method="DOP853")
    implicit = manifold_flow(p, 0.3, 0.2, 50.0, method="Radau")
    np.testing.assert_allclose(implicit.overlaps[-1], explicit.overlaps[-1], atol=1e-8)
    np.testing.assert_allclose(implicit.sol(2.5), explicit.sol(2.5), atol=1e-7)


def test_manifold_flow_edges_are_invariant():
    p = Params.paper(lam=0.1)
    res = manifold_flow(p, 1.0, -0.5, 100.0)
    assert np.all(res.kappa == 1.0) and res.nu[-1] > 0.9


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"t_max": -1.0}, "`t_max`"),
        ({"kappa0": 1.5}, "infeasible|kappa"),
        ({"rtol": 0.0}, "`rtol`"),
        ({"stop_radius": -1e-3}, "`stop_radius`"),
        ({"method": 3}, "`method`"),
        ({"t_eval": [0.0, 2.0]}, "`t_eval` must be sorted and lie in"),
        ({"t_eval": [[0.0]]}, "`t_eval` must be a 1-D array"),
    ],
)
def test_manifold_flow_bad_input(kwargs, match):
    args = {"params": Params.paper(), "kappa0": 0.1, "nu0": 0.1, "t_max": 1.0} | kwargs
    with pytest.raises(ValueError, match=match):
        manifold_flow(**args)


def test_overlap_flow_bad_input():
    with pytest.raises(ValueError, match="shape"):
        overlap_flow(Params.paper(), [0.1, 0.1], 1.0)
    with pytest.raises(ValueError, match="infeasible"):
        overlap_flow(Params.paper(), [0.9, 0.9, 0, 0, -0.9], 1.0)


@pytest.mark.parametrize("p", PARAMS[:3])
def test_critical_points_on_m_are_classified(p):
    """docs/theory.md §8: the origin is a saddle, (1, 1) and (-1, -1) attract,
    (1, -1) and (-1, 1) repel; at a corner J = diag(2 s1 dR/dkappa, 2 s2 dR/dnu)."""
    ev0 = np.linalg.eigvals(manifold_jacobian(p, 0.0, 0.0)).real
    assert ev0.min() < 0 < ev0.max()
    for s1, s2 in [(1, 1), (-1, -1), (1, -1), (-1, 1)]:
        J = manifold_jacobian(p, float(s1), float(s2))
        g = manifold_risk_grad(p, float(s1), float(s2))
        # the analytic Jacobian's corner formula against the gradient: a few roundings
        np.testing.assert_allclose(J, np.diag([2 * s1 * g[0], 2 * s2 * g[1]]), rtol=1e-13, atol=0)
        assert np.all(np.diag(J) < 0) if s1 == s2 else np.all(np.diag(J) > 0)
        np.testing.assert_array_equal(manifold_field(p, float(s1), float(s2)), 0.0)


def test_a_start_out_of_range_is_named_as_the_user_gave_it():
    p = Params(d=8, L=4, lam=0.3, gamma=0.7)
    with pytest.raises(ValueError, match=r"^`kappa0` must lie in \[-1, 1\], got 1e\+300"):
        manifold_flow(p, 1e300, 0.1, 1.0)
    with pytest.raises(ValueError, match=r"^`nu0` must lie in \[-1, 1\]"):
        manifold_flow(p, 0.1, -2.0, 1.0)
    with pytest.raises(ValueError, match=r"overlaps0\[0\]\*\*2 \+ overlaps0\[3\]\*\*2 <= 1"):
        overlap_flow(p, [0.9, 0.0, 0.0, 0.9, 0.0], 1.0)
