"""Online SGD: the overlap chain against SGD on explicit vectors (equal in law),
the mini-batch gradient against the exact gradient, and SGD against PGD."""

import numpy as np
import pytest

from slr_theory import Params, pgd, risk_grad_at
from slr_theory.sampling import overlaps_of, random_targets, sample
from slr_theory.sgd import _coefficients, sgd, sgd_vectors


def _z(a, b):
    return (a.mean(0) - b.mean(0)) / np.sqrt(a.var(0) / len(a) + b.var(0) / len(b))


# d = 5: one orthogonal dimension (rank-1 Wishart); s = 2: two informative tokens
@pytest.mark.parametrize(("d", "s"), [(5, 1), (10, 1), (10, 2)])
def test_overlap_sgd_has_the_law_of_sgd_in_rd(d, s):
    rng = np.random.default_rng(d + s)
    p = Params(d=d, L=3, lam=0.8, gamma=0.7, eps=0.2, s=s)
    ks, vs = random_targets(p, rng)
    k0, v0 = (x / np.linalg.norm(x) for x in rng.standard_normal((2, d)))
    R, steps = 3000, 25
    rd = sgd_vectors(
        p, np.tile(k0, (R, 1)), np.tile(v0, (R, 1)), ks, vs, 0.05, steps, batch=3, rng=rng
    )
    ov0 = np.tile(overlaps_of(k0, v0, ks, vs), (R, 1))
    ov = sgd(p, ov0, 0.05, steps, batch=3, rng=rng, record_every=steps)
    A, B = rd.overlaps[-1], ov.overlaps[-1]
    # first and second moments (with the products kappa*rho, nu*theta) agree: 12 z-scores
    for f in (lambda x: x, lambda x: x**2, lambda x: x[:, [0, 1]] * x[:, [4, 2]]):
        assert np.all(np.abs(_z(f(A), f(B))) < 4.5)
    # and the SGD steps really moved the overlaps (the test is not vacuous)
    assert np.abs(A.mean(0) - ov0[0]).max() > 0.05


@pytest.mark.parametrize("s", [1, 3])
def test_minibatch_gradient_is_unbiased(s):
    """Also the closed-form gradient with s informative tokens against Monte Carlo."""
    rng = np.random.default_rng(3)
    p = Params(d=8, L=4, lam=0.6, gamma=0.8, eps=0.3, s=s)
    ks, vs = random_targets(p, rng)
    k, v = (x / np.linalg.norm(x) for x in rng.standard_normal((2, p.d)))
    n = 200_000
    X, Y, _ = sample(p, n, rng, ks, vs)
    c, beta = _coefficients(X @ k, X @ v, Y, p.lam, 1, p.model)
    gk = np.einsum("nl,nld->nd", c, X)
    gv = np.einsum("nl,nld->nd", beta, X)
    # the overlap formulas hold on the spheres: compare the tangent (Riemannian) parts
    gk -= np.outer(gk @ k, k)
    gv -= np.outer(gv @ v, v)
    ek, ev = risk_grad_at(p, k, v, ks, vs, riemannian=True)
    for g, e in ((gk, ek), (gv, ev)):
        z = (g.mean(0) - e) / (g.std(0) / np.sqrt(n))
        assert np.all(np.abs(z) < 4.5)


def test_sgd_tracks_pgd_when_alpha_d_over_b_is_small():
    """At fixed flow time, E[SGD] - PGD ~ C alpha d / b (measured C ~ 3.7 at T = 2, d = 400).

    The effective noise alpha^2 |xi|^2 ~ alpha^2 d / b of each step renormalises the
    vectors; SGD follows PGD in the high-dimensional limit only when alpha d / b -> 0.
    """
    rng = np.random.default_rng(0)
    p = Params(d=400, L=10, lam=0.3, gamma=0.5**0.5, eps=0.1)
    ov0 = np.array([0.2, 0.1, 0.05, -0.05, 0.02])
    alpha, T = 4e-3, 1.0
    steps = round(T / alpha)
    g = pgd(p, ov0, alpha, steps, record_every=steps).overlaps[-1]
    gaps = []
    for b in (10, 40):
        s = sgd(p, np.tile(ov0, (150, 1)), alpha, steps, batch=b, rng=rng, record_every=steps)
        gaps.append(np.abs(s.overlaps[-1].mean(0) - g).max() / (alpha * p.d / b))
    assert all(0.5 < x < 6 for x in gaps)  # gap / (alpha d / b) stays O(1): linear in alpha d / b


def test_sgd_bad_input():
    p = Params.paper()
    with pytest.raises(ValueError, match="`batch`"):
        sgd(p, [0.1, 0.1, 0, 0, 0], 1e-3, 10, batch=0, rng=np.random.default_rng())
    with pytest.raises(ValueError, match="`rng`"):
        sgd(p, [0.1, 0.1, 0, 0, 0], 1e-3, 10, batch=2, rng=1.5)
    with pytest.raises(ValueError, match="`alpha`"):
        sgd(p, [0.1, 0.1, 0, 0, 0], -1e-3, 10, batch=2, rng=np.random.default_rng())
