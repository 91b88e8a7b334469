"""Exact PGD in overlap space against PGD on explicit vectors in R^d."""

import numpy as np
import pytest

from slr_theory import Params
from slr_theory.dynamics import (
    paper_schedule,
    pgd,
    pgd_vectors,
    sample_initial_overlaps,
)
from slr_theory.sampling import overlaps_of, random_targets


def _vectors(rng, p, on_manifold):
    d = p.d
    ks, vs = random_targets(p, rng)
    k, v = rng.standard_normal((2, d))
    if on_manifold:  # k orthogonal to v*, v orthogonal to k* and k
        k -= (k @ vs) * vs
        k /= np.linalg.norm(k)
        q, _ = np.linalg.qr(np.stack([ks, k], axis=1))  # orthonormal basis of span(k*, k)
        v -= q @ (q.T @ v)
    return k / np.linalg.norm(k), v / np.linalg.norm(v), ks, vs


@pytest.mark.parametrize("on_manifold", [False, True])
@pytest.mark.parametrize("schedule", [None, paper_schedule(0.9, 1e-3)])
def test_overlap_pgd_reproduces_rd_pgd(on_manifold, schedule):
    rng = np.random.default_rng(11)
    p = Params(d=16, L=6, lam=0.6, gamma=0.7, eps=0.1)
    k, v, ks, vs = _vectors(rng, p, on_manifold)
    steps = 600
    kf, vf = pgd_vectors(p, k, v, ks, vs, 5e-3, steps, schedule)
    res = pgd(p, overlaps_of(k, v, ks, vs), 5e-3, steps, schedule, record_every=steps)
    np.testing.assert_allclose(res.overlaps[-1], overlaps_of(kf, vf, ks, vs), atol=1e-12)
    if on_manifold:  # M is invariant: off-M overlaps stay at their rounding-level start
        assert np.max(np.abs(res.overlaps[:, 2:])) < 1e-15


def test_a_slow_schedule_on_its_sweep_kernels_reproduces_rd_pgd():
    """A schedule slow enough for the sweep's segments (most steps on them, not on the
    engine's features) gives the PGD of the vectors in R^d."""
    from slr_theory import engine
    from slr_theory.trajectory import temperatures

    rng = np.random.default_rng(3)
    p = Params(d=16, L=6, lam=0.3, gamma=0.7, eps=0.1)
    schedule, steps = paper_schedule(0.3, 4e-5), 5000  # segments of 2 800 steps and more
    lam = temperatures(schedule, steps)
    sweep = engine.table(p, lam[:1], 1).sweep_kernel(lambda x: engine.table(p, x, 1), lam)
    assert sum(sweep.serves(j) for j in range(steps)) > steps // 2
    k, v, ks, vs = _vectors(rng, p, False)
    kf, vf = pgd_vectors(p, k, v, ks, vs, 5e-3, steps, schedule)
    res = pgd(p, overlaps_of(k, v, ks, vs), 5e-3, steps, schedule, record_every=steps)
    np.testing.assert_allclose(res.overlaps[-1], overlaps_of(kf, vf, ks, vs), atol=1e-12)


def test_records_risk_decrease_and_schedule():
    p = Params.paper(lam=0.1)
    ov0 = sample_initial_overlaps(p, np.random.default_rng(1), 8)
    res = pgd(p, ov0, 4e-3, 1500, paper_schedule(1.0), record_every=500)
    assert res.step.tolist() == [0, 500, 1000, 1500]
    np.testing.assert_allclose(res.lam, 1.0 / (1 + 1e-4 * res.step))
    assert res.overlaps.shape == (4, 8, 5) and res.risk.shape == (4, 8)
    small = pgd(p, ov0, 1e-3, 100, record_every=1)
    assert np.all(np.diff(small.risk, axis=0) <= 1e-15)  # small steps decrease the risk


def test_initial_overlap_samplers_match_rd_sampling():
    rng = np.random.default_rng(2)
    d, n = 12, 200_000
    p = Params(d=d, L=3, lam=0.5, gamma=0.5)
    ov = sample_initial_overlaps(p, rng, n)
    # exact moments for uniform unit vectors: E x^2 = 1/d for every overlap, E kappa^4 = 3/(d(d+2))
    for i in range(5):
        m2 = ov[:, i] ** 2
        assert abs(m2.mean() - 1 / d) < 5 * m2.std() / np.sqrt(n)
    m4 = ov[:, 0] ** 4
    assert abs(m4.mean() - 3 / (d * (d + 2))) < 5 * m4.std() / np.sqrt(n)
    on = sample_initial_overlaps(p, rng, n, on_manifold=True)
    assert np.all(on[:, 2:] == 0)
    assert abs((on[:, 0] ** 2).mean() - 1 / (d - 1)) < 5 * (on[:, 0] ** 2).std() / np.sqrt(n)
    assert abs((on[:, 1] ** 2).mean() - 1 / (d - 2)) < 5 * (on[:, 1] ** 2).std() / np.sqrt(n)
    # and every sample is feasible
    from slr_theory import check_overlaps

    check_overlaps(*ov.T, d=d)


def test_bad_input():
    p = Params.paper()
    with pytest.raises(ValueError, match="last dimension 5"):
        pgd(p, [0.1, 0.1], 1e-3, 10)
    with pytest.raises(ValueError, match="`alpha` must be finite and > 0"):
        pgd(p, [0.1, 0.1, 0, 0, 0], -1.0, 10)
    with pytest.raises(ValueError, match="`steps` must be a non-negative integer"):
        pgd(p, [0.1, 0.1, 0, 0, 0], 1e-3, 2.5)
    with pytest.raises(ValueError, match="positive semi-definite"):
        pgd(p, [0.9, 0.9, 0, 0, -0.9], 1e-3, 10)
    with pytest.raises(ValueError, match="`d` must be >= 4"):
        sample_initial_overlaps(Params(d=3, L=2, lam=0.5, gamma=0.5), np.random.default_rng(0))


@pytest.mark.slow
@pytest.mark.parametrize("on_manifold", [False, True])
def test_overlap_pgd_matches_rd_pgd_over_20000_steps_at_d400(on_manifold):
    rng = np.random.default_rng(12)
    p = Params.paper(lam=0.1)
    k, v, ks, vs = _vectors(rng, p, on_manifold)
    kf, vf = pgd_vectors(p, k, v, ks, vs, 4e-3, 20_000)
    res = pgd(p, overlaps_of(k, v, ks, vs), 4e-3, 20_000, record_every=20_000)
    # <= 1e-8 after 20 000 steps (the documented bound) and 1e-10 (reference simulators); measured
    # 8.8e-15 from the sphere and 4.4e-16 on M. From the sphere the run ends at the minimum off M, where
    # k is parallel to v* and the Gram matrix is singular: projecting the explicit vectors'
    # overlaps there (rounding-level infeasible) moved rho by ~sqrt(eps) and this by 1.2e-9.
    np.testing.assert_allclose(res.overlaps[-1], overlaps_of(kf, vf, ks, vs), atol=1e-10)


def test_bad_schedules():
    p = Params.paper()
    with pytest.raises(
        ValueError,
        match=r"`schedule` must return temperatures in \[1e-06, 1000\] \(the domain of lam\), "
        r"got -0\.1 at step 3",
    ):
        pgd(p, [0.1, 0.1, 0, 0, 0], 1e-3, 10, schedule=lambda t: 0.1 if t < 3 else -0.1)
    with pytest.raises(ValueError, match=r"got 1e-300 at step 0"):
        pgd(p, [0.1, 0.1, 0, 0, 0], 1e-3, 10, schedule=lambda t: 1e-300)
    for value in ("x", None, True, [0.1], 1j):
        with pytest.raises(ValueError, match="`schedule` must return a real temperature"):
            pgd(p, [0.1, 0.1, 0, 0, 0], 1e-3, 10, schedule=lambda t, value=value: value)
    with pytest.raises(ValueError, match="`schedule` must be None or a callable"):
        pgd(p, [0.1, 0.1, 0, 0, 0], 1e-3, 10, schedule=0.5)
    with pytest.raises(ValueError, match="`c` must be >= 0"):
        paper_schedule(1.0, -1e-4)


def test_progress_reports_every_step():
    p = Params.paper(lam=0.1)
    seen = []
    pgd(p, [0.1, 0.2, 0.01, 0.0, 0.0], 4e-3, 5000, record_every=5000, progress=seen.append)
    assert sum(seen) == 5000 and len(seen) == 2  # chunks of 4096 steps
    with pytest.raises(ValueError, match="`progress` must be a bool or a callable"):
        pgd(p, [0.1, 0.2, 0, 0, 0], 4e-3, 10, progress="yes")


def test_a_seed_is_passed_one_way_everywhere():
    """``rng`` takes a Generator, a seed or None alike: a seed gives what
    ``numpy.random.default_rng(seed)`` gives, and anything else is refused by name."""
    from slr_theory.dynamics import sample_initial_overlaps
    from slr_theory.sampling import random_targets, sample

    p = Params(d=8, L=3, lam=1.0, gamma=0.5)
    for draw in (
        lambda r: sample_initial_overlaps(Params.paper(), r, 3),
        lambda r: np.concatenate(random_targets(p, r)),
        lambda r: sample(p, 4, r)[0],
    ):
        np.testing.assert_array_equal(draw(7), draw(np.random.default_rng(7)))
        assert draw(None).shape == draw(0).shape
        with pytest.raises(
            ValueError, match=r"^`rng` must be a numpy\.random\.Generator or a seed"
        ):
            draw("seven")


def test_the_old_signature_with_d_first_warns_and_draws_the_same():
    """``sample_initial_overlaps`` and ``random_targets`` take the model; an int ``d`` (the
    signature before) gives the same draws, with a DeprecationWarning naming the call."""
    from slr_theory.dynamics import sample_initial_overlaps
    from slr_theory.sampling import random_targets

    p = Params(d=8, L=3, lam=1.0, gamma=0.5)
    for fn, name in (
        (sample_initial_overlaps, "sample_initial_overlaps"),
        (random_targets, "random_targets"),
    ):
        with pytest.warns(DeprecationWarning, match=rf"^{name}\(d, \.\.\.\) is deprecated"):
            old = fn(8, 3)
        np.testing.assert_array_equal(np.hstack(old), np.hstack(fn(p, 3)))
        with pytest.raises(ValueError, match=r"^`params` must be a slr_theory\.Params"):
            fn("400", 3)
