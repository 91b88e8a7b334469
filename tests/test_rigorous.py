"""The rigorous enclosures of the risk's partials and Hessian: they contain an independent
30-digit reference (conditioned quadrature, differentiated: nothing shared with the
engine) at points, and every value of the engine at points sampled inside a box; they
shrink with the box, and they hold off the plateau as on it."""

import mpmath as mp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from slr_theory import Params, engine
from slr_theory.interval import Interval, arb_bounds
from slr_theory.verify.risk_checks import mp_risk_gradient

pytest.importorskip("flint")
from slr_theory.models.erf import rigorous as erf_rigorous
from slr_theory.models.erf.rigorous import BallCache
from slr_theory.rigorous import RigorousTable

PAPER = Params.paper()


def _feasible(rng, n):
    x, y = rng.standard_normal((2, 4, n))
    k, v = x / np.linalg.norm(x, axis=0), y / np.linalg.norm(y, axis=0)
    return np.array([k[0], v[1], v[0], k[1], (k * v).sum(axis=0)])


_SLOW = pytest.mark.slow  # each reference is 20 quadratures at 30 digits: 6-8 s


@pytest.mark.parametrize(
    ("lam", "ov"),
    [
        (0.1, (0.3, 0.5, 0.1, -0.2, 0.05)),
        pytest.param(0.1, (0.95, 0.99, 0.02, 0.01, 0.03), marks=_SLOW),
        pytest.param(0.1, (-0.2, 0.1, 0.6, 0.7, -0.4), marks=_SLOW),
        pytest.param(0.9, (0.3, 0.5, 0.1, -0.2, 0.05), marks=_SLOW),
        pytest.param(0.9, (0.95, 0.99, 0.02, 0.01, 0.03), marks=_SLOW),
        pytest.param(0.9, (-0.2, 0.1, 0.6, 0.7, -0.4), marks=_SLOW),
    ],
)
def test_point_enclosures_hold_the_30_digit_partials(lam, ov):
    """At 20 digits the reference's differences kept only 1e-14 of the largest partial
    (its R_nu at (-0.2, 0.1, 0.6, 0.7, -0.4), lam = 0.1, fell 1.6e-14 below an enclosure
    that holds the 30-digit value): 30 digits, and a slack of 1e-18 of the gradient."""
    p = PAPER.replace(lam=lam)
    g = RigorousTable(p).partials([Interval(x) for x in ov])
    ref = mp_risk_gradient(p, ov, dps=30)
    scale = max(1, *(abs(r) for r in ref))
    for i in range(5):
        # the enclosure's width is a few 1e-12 of the terms
        slack = mp.mpf("1e-18") * scale
        assert mp.mpf(float(g[i].lo)) - slack <= ref[i] <= mp.mpf(float(g[i].hi)) + slack
        assert float(g[i].hi - g[i].lo) <= 1e-9 * max(1.0, abs(float(ref[i])))


@settings(deadline=None, max_examples=10)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.1, 0.5, 0.9]),
    st.sampled_from([1e-1, 1e-3, 1e-6]),
)
@example(0, 0.9, 1e-3)
def test_box_enclosures_hold_every_sampled_value(seed, lam, width):
    p = PAPER.replace(lam=lam)
    t = RigorousTable(p)
    rng = np.random.default_rng(seed)
    c = _feasible(rng, 1)[:, 0]
    lo, hi = c - width / 2, c + width / 2
    g = t.partials([Interval(a, b) for a, b in zip(lo, hi, strict=True)])
    H = t.hessian([Interval(a, b) for a, b in zip(lo, hi, strict=True)])
    pts = lo[:, None] + rng.uniform(size=(5, 64)) * (hi - lo)[:, None]
    G = engine.gradient(p, pts).T  # (5, n)
    Hs = engine.hessian(p, pts)
    for i in range(5):
        slack = 1e-13 * np.abs(G[i]) + 1e-300  # the engine's own rounding
        assert np.all(G[i] >= float(g[i].lo) - slack) and np.all(G[i] <= float(g[i].hi) + slack)
        for j in range(5):
            slack = 1e-12 * np.abs(Hs[:, i, j]) + 1e-300
            assert np.all(Hs[:, i, j] >= float(H[i][j].lo) - slack)
            assert np.all(Hs[:, i, j] <= float(H[i][j].hi) + slack)


def test_the_enclosure_shrinks_with_the_box():
    t = RigorousTable(PAPER)
    c = np.array([0.3, 0.5, 0.1, -0.2, 0.05])
    widths = []
    for w in (1e-2, 1e-3, 1e-4):
        g = t.partials([Interval(x - w / 2, x + w / 2) for x in c])
        widths.append(max(float(x.hi - x.lo) for x in g))
    assert widths[1] < widths[0] / 5 and widths[2] < widths[1] / 5


def test_vectorised_boxes_agree_with_one_at_a_time():
    t = RigorousTable(PAPER.replace(lam=0.5))
    ov = _feasible(np.random.default_rng(3), 7)
    lo, hi = ov - 1e-3, ov + 1e-3
    batch = t.partials([Interval(lo[i], hi[i]) for i in range(5)])
    for n in range(7):
        one = t.partials([Interval(lo[i, n], hi[i, n]) for i in range(5)])
        for i in range(5):
            assert float(one[i].lo) == batch[i].lo[n] and float(one[i].hi) == batch[i].hi[n]


def test_only_models_with_rigorous_enclosures_offer_a_table():
    assert PAPER.model.rigorous_table(PAPER) is not None
    tanh = PAPER.replace(nonlinearity="tanh")
    assert tanh.model.rigorous_table(tanh) is None


@pytest.mark.parametrize("nu", [1.0, -1.0])
def test_on_the_edge_of_M_the_enclosure_decides_the_sign_of_R_kappa(nu):
    """On ``nu = +-1``, ``theta = eta = rho = 0`` at ``lam = 0.9`` the partial ``R_kappa`` is
    ``e^{-x^2} (erf(y) - nu)`` times a constant, down to 1e-54, with ``erf(y)`` within an
    ulp of ``nu``: enclosed as ``(1 - nu) - erfc(y)``, the enclosure keeps one sign over
    each slab of ``kappa`` and holds the float engine's value (which takes ``erfc`` too)
    at points sampled inside it."""
    p = PAPER.replace(lam=0.9)
    table = RigorousTable(p)
    manifold = engine.table(p, p.lam, 1)
    edges = np.linspace(0.3, 1.0, 15)
    lo, hi = edges[:-1], edges[1:]
    zero = Interval(np.zeros(lo.size))
    g = table.partials([Interval(lo, hi), Interval(np.full(lo.size, nu)), zero, zero, zero])
    assert np.all((g[0].hi < 0) if nu > 0 else (g[0].lo > 0))
    assert float(np.min(np.maximum(np.abs(g[0].lo), np.abs(g[0].hi)))) < 1e-33  # near kappa = 1
    rng = np.random.default_rng(0)
    for i in range(lo.size):
        kappa = rng.uniform(lo[i], hi[i], 20)
        ref = manifold.manifold_gradient(np.array([kappa, np.full(20, nu)]))[0]
        slack = 1e-13 * np.abs(ref)  # the float engine's rounding
        assert np.all((g[0].lo[i] - slack <= ref) & (ref <= g[0].hi[i] + slack))
        assert np.all(np.sign(ref) == -nu)


def test_the_cache_of_balls_gives_a_point_the_bounds_of_its_one_evaluation(monkeypatch):
    """:class:`BallCache`, with merges every few points: looked up in arrays of repeats,
    both zeros and tiny points, from its sorted arrays or from its dict, a point's bounds
    are those of its own ball (:func:`arb_bounds`), and no point is evaluated twice."""
    from flint import arb

    monkeypatch.setattr(erf_rigorous, "BALLS_MERGE", 8)
    calls = []

    def erf(x):
        calls.append(x)
        return arb(x).erf()

    cache = BallCache(erf)
    rng = np.random.default_rng(3)
    pool = np.concatenate([rng.normal(size=40), [0.0, -0.0, 1e-300, -1e-300, 5.0, -0.3]])
    for _ in range(40):
        x = rng.choice(pool, size=(int(rng.integers(1, 12)), 3))
        lo, hi = cache(x)
        assert lo.shape == hi.shape == x.shape
        for xi, a, b in zip(x.ravel().tolist(), lo.ravel(), hi.ravel(), strict=True):
            assert (float(a), float(b)) == arb_bounds(arb(xi).erf())
        a, b = np.minimum(x[:, 0], x[:, 1]), np.maximum(x[:, 0], x[:, 1])
        ends = cache.between(a, b)  # erf rises: its lower bound at a, its upper at b
        assert np.array_equal(ends.lo, cache(a)[0]) and np.array_equal(ends.hi, cache(b)[1])
    assert len(calls) == len(set(calls))  # -0.0 == 0.0: one evaluation for both
    assert cache.keys.size >= 8  # merged at least once
