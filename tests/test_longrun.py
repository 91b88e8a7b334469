"""advance and fate: PGD over any number of steps, checked against exact PGD, against values
computed independently on the plateaus, and against a quadrature of the plateau's drift."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.integrate import quad

from slr_theory import Params, advance, critical_points, fate, pgd, risk_grad
from slr_theory.dynamics import sample_initial_overlaps
from slr_theory.longrun import HORIZON, UNLISTED, Fates
from slr_theory.results import dumps, loads
from slr_theory.survey import atlas_step

PAPER = Params.paper(lam=0.1)
EPS = np.finfo(float).eps


@pytest.mark.parametrize(
    "lam, alpha, steps",
    [(0.1, 4e-3, 30_000), (0.3, 2e-3, 30_000), (0.9, 1e-3, 20_000)],
)
def test_advance_is_exact_pgd_where_both_run(lam, alpha, steps):
    """Uniform starts at the paper's d, L, gamma: the two agree to 1e-6 (the issue's bar),
    and within the estimate of the error itself, plus the rounding of the comparison."""
    p = Params.paper(lam=lam)
    starts = sample_initial_overlaps(p, np.random.default_rng(3), 8)
    got = advance(p, starts, steps, alpha=alpha)
    ref = pgd(p, starts, alpha, steps, record_every=steps).overlaps[-1]
    diff = np.max(np.abs(got.overlaps - ref), axis=-1)
    assert np.all(diff < 1e-6), diff
    assert np.all(diff <= got.error + 4 * EPS), (diff, got.error)
    assert np.all(got.exact_steps <= steps) and got.steps == steps


#: A run of the paper's lam = 0.1 heading to the minimum off M, (0, 0, -0.6298, -1, 0) (k = -v*,
#: a critical manifold of dimension 397, on the boundary det Gram = 0 of the feasible set),
#: where advance once stated 4.9e-10 and was 0.08 off (issue: a stage out of the feasible
#: set was brought back through the Cholesky coordinates, dividing by k3 ~ 2e-7).
TOWARD_THE_EDGE = [
    0.006907943388714028,
    -0.00030578066212026884,
    -0.03683957100779975,
    -0.07006698803227755,
    -0.10891918723154044,
]


def test_advance_toward_a_minimum_off_m_stands_behind_its_error():
    """Every N of the stretch where it went wrong: within 1e-6 of exact PGD and within
    the stated error itself (plus the rounding of the comparison)."""
    ns = np.arange(5_500, 20_001, 750)
    ref = pgd(PAPER, TOWARD_THE_EDGE, 4e-3, int(ns[-1]), record_every=250)
    at = {int(s): o for s, o in zip(ref.step, ref.overlaps, strict=True)}
    sweep = advance(PAPER, TOWARD_THE_EDGE, ns, alpha=4e-3)  # one run per N, one batch
    np.testing.assert_array_equal(sweep.steps, ns)
    for n, ov, err in zip(ns, sweep.overlaps, sweep.error, strict=True):
        diff = float(np.max(np.abs(ov - at[int(n)])))
        assert diff < 1e-6 and diff <= err + 4 * EPS, (int(n), diff, float(err))
    assert sweep.flow_steps[-1] > 0  # the stretch is integrated, not stepped exactly
    got = advance(PAPER, TOWARD_THE_EDGE, int(ns[-1]), alpha=4e-3)  # alone, as a user asks
    assert abs(got.overlaps - at[int(ns[-1])]).max() <= got.error + 4 * EPS
    assert got.flow_steps > 0
    got = advance(PAPER, TOWARD_THE_EDGE, 12_250, alpha=4e-3)  # the N
    assert abs(got.overlaps[2] - at[12_250][2]) <= got.error + 4 * EPS


def test_advance_from_uniform_starts_stands_behind_its_error_on_the_way_to_every_minimum():
    """A sample of benchmarks/advance.py: uniform starts at the paper's lam = 0.1, whose
    runs end at both kinds of minimum (on M, (1, 1), and off it, k = +-v*), at every N of
    a grid through the approach: the error within the stated one."""
    starts = sample_initial_overlaps(PAPER, np.random.default_rng(0), 8)
    ns = np.array([3_000, 7_000, 11_000, 15_000])
    ref = pgd(PAPER, starts, 4e-3, int(ns[-1]), record_every=1_000)
    got = advance(PAPER, starts, ns[:, None], alpha=4e-3)  # (N, start): one batch
    assert got.overlaps.shape == (ns.size, len(starts), 5) and got.steps.shape == (ns.size, 8)
    for n, ov, err in zip(ns, got.overlaps, got.error, strict=True):
        exact = ref.overlaps[list(ref.step).index(n)]
        diff = np.max(np.abs(ov - exact), axis=-1)
        assert np.all(diff <= err + 4 * EPS), (int(n), diff, err)
    kinds = {bool(abs(o[0]) > 0.5) for o in exact}  # kappa ~ 1 on M, ~ 0 at k = +-v*
    assert kinds == {True, False}, exact


def test_advance_integrates_where_the_runs_are_slow():
    """From a plateau point on M the run is integrated after a short exact start."""
    p = Params.paper(lam=0.5)
    got = advance(p, [0.35, 1.0, 0.0, 0.0, 0.0], 200_000, alpha=4e-3)
    assert got.exact_steps < 10_000 and got.flow_steps > 0
    ref = pgd(p, [0.35, 1.0, 0.0, 0.0, 0.0], 4e-3, 200_000, record_every=200_000).overlaps[-1]
    assert np.max(np.abs(got.overlaps - ref)) < 1e-9
    np.testing.assert_array_equal(got.overlaps[2:], 0.0)  # M is left exactly as PGD leaves it


# kappa after 2e5, 2e6, 2e7, 2e8 steps from kappa = 0.05 on the edge nu = 1 of M, at the
# paper's d, L, gamma, computed independently (the exact scalar map to 2e6 steps, the
# integral of its drift beyond)
PLATEAUS = [
    ("erf", 0.5, 0.004, (0.407401, 0.447365, 0.48395, 0.51788)),
    ("tanh", 0.9, 0.00236, (0.349498, 0.394542, 0.43912, 0.48345)),
]


@pytest.mark.parametrize("sigma, lam, alpha, kappas", PLATEAUS)
def test_advance_on_the_plateaus_matches_an_independent_computation(sigma, lam, alpha, kappas):
    p = Params.paper(lam=lam).replace(nonlinearity=sigma)
    every = advance(p, [0.05, 1.0, 0.0, 0.0, 0.0], [2e5, 2e6, 2e7, 2e8], alpha=alpha)
    alone = advance(p, [0.05, 1.0, 0.0, 0.0, 0.0], 2e8, alpha=alpha)  # as a user asks
    for steps, kappa, got, err in zip(
        (2e5, 2e6, 2e7, 2e8, 2e8),
        (*kappas, kappas[-1]),
        (*every.overlaps[:, 0], alone.overlaps[0]),
        (*every.error, alone.error),
        strict=True,
    ):
        digits = len(str(kappa).split(".")[1])
        assert abs(got - kappa) <= 0.6 * 10.0**-digits, (steps, got)
        assert err < 1e-7


def _edge_increment(p: Params, alpha: float, kappa: float) -> float:
    """One exact PGD step's increment of kappa on the edge nu = 1 of M, from the validated
    gradient and the map on M written out here: x <- (x - a R (1 - x^2)) / sqrt(1 + a^2 R^2 (1 - x^2))."""
    r = float(risk_grad(p, kappa, 1.0, 0.0, 0.0, 0.0)[0])
    one = (1.0 - kappa) * (1.0 + kappa)
    s = np.sqrt(1.0 + (alpha * r) ** 2 * one)
    return -alpha * r * one / s - kappa * (alpha * r) ** 2 * one / (s * (1.0 + s))


@pytest.mark.parametrize("sigma, lam, alpha", [("erf", 0.5, 4e-3), ("tanh", 0.9, 0.00236)])
@pytest.mark.parametrize("steps", [1e12, 1e20])
def test_far_on_the_plateau_the_steps_are_the_integral_of_the_drift(sigma, lam, alpha, steps):
    """Where exact PGD cannot go: the steps from kappa_a to where advance ends is
    the integral of 1 / increment (the increment changes by a relative 1e-9 a step there,
    so the sum of the map and the integral agree far below the tolerance)."""
    p = Params.paper(lam=lam).replace(nonlinearity=sigma)
    k0 = 0.6
    got = advance(p, [k0, 1.0, 0.0, 0.0, 0.0], steps, alpha=alpha)
    k1 = float(got.overlaps[0])
    assert k0 < k1 < 1.0
    grid = np.linspace(k0, k1, 65)
    n = sum(
        quad(lambda k: 1.0 / _edge_increment(p, alpha, k), a, b, epsabs=0, epsrel=1e-12)[0]
        for a, b in itertools.pairwise(grid)
    )
    assert abs(n / steps - 1.0) < 1e-6, n / steps


@pytest.mark.parametrize("lam", [0.3, 0.5])
def test_a_fate_along_the_edge_is_the_integral_of_the_drift(lam):
    """From (0.6, 1, 0, 0, 0) the run moves along the edge nu = 1 alone, and fate takes its
    time to the ball of (k*, v*) as a quadrature along the line: against the integral of
    1 / (one exact step's increment), here in log(1 - kappa) (the drive vanishes at 1)."""
    p = Params.paper(lam=lam)
    alpha, k0 = 4e-3, 0.6
    f = fate(p, [[k0, 1.0, 0.0, 0.0, 0.0]], alpha=alpha, points=critical_points(p))
    assert f.minimum[f.label[0]] and np.allclose(f.points[f.label[0]], [1, 1, 0, 0, 0])
    assert f.exact_steps[0] > 0  # the first steps are exact; the rest is the line
    grid = np.linspace(np.log(1.0 - k0), np.log(f.tol), 65)
    n = sum(
        quad(
            lambda x: np.exp(x) / _edge_increment(p, alpha, 1.0 - np.exp(x)),
            b, a, epsabs=0, epsrel=1e-12,
        )[0]
        for a, b in itertools.pairwise(grid)
    )  # fmt: skip
    assert n > 1e10
    assert abs(f.steps[0] / n - 1.0) <= max(1e-11, f.relative_error[0]), f.steps[0] / n
    assert f.relative_error[0] < 1e-9


def test_fates_on_the_line_agree_with_the_integration(monkeypatch):
    """The same uniform starts at lam = 0.5 (two thirds end at (k*, v*) after 1e31 steps
    along the edge), with the line's quadrature and without it (every step integrated):
    the same ends, and times that agree within their errors."""
    from slr_theory import longrun

    p = Params.paper(lam=0.5)
    pts = critical_points(p)
    starts = sample_initial_overlaps(p, np.random.default_rng(4), 24)
    with_line = fate(p, starts, alpha=2.7e-3, points=pts)
    monkeypatch.setattr(longrun.follow, "LINE_OFF", -1.0)  # no run is ever tried on a line
    without = fate(p, starts, alpha=2.7e-3, points=pts)
    np.testing.assert_array_equal(with_line.label, without.label)
    assert np.any(with_line.steps > 1e30)
    diff = np.abs(with_line.steps / without.steps - 1.0)
    assert np.all(diff <= with_line.relative_error + without.relative_error), diff


def test_with_no_minimum_given_a_run_on_the_edge_ends_unlisted():
    """No ball to reach (points=(), found by the contract's fuzz): a run on the edge is not
    taken along the line and ends, at the horizon, at a point the list does not name."""
    f = fate(PAPER, [[0.6, 1.0, 0.0, 0.0, 0.0]], alpha=None, tol=0.05, points=())
    assert f.kinds == [UNLISTED] and f.label[0] == 0 and not np.isfinite(f.steps[0])


def test_advance_with_a_schedule_is_exact_pgd():
    from slr_theory import paper_schedule

    p = Params.paper(lam=0.5)
    sched = paper_schedule(0.5)
    starts = sample_initial_overlaps(p, np.random.default_rng(4), 4)
    got = advance(p, starts, 12_000, alpha=2e-3, schedule=sched)
    ref = pgd(p, starts, 2e-3, 12_000, schedule=sched, record_every=12_000).overlaps[-1]
    assert np.max(np.abs(got.overlaps - ref)) < 1e-6


def test_advance_refuses_bad_input_by_name():
    with pytest.raises(ValueError, match="steps"):
        advance(PAPER, [0.1, 0.1, 0, 0, 0], 1.5, alpha=1e-3)
    with pytest.raises(ValueError, match="steps"):
        advance(PAPER, [0.1, 0.1, 0, 0, 0], 1e301, alpha=1e-3)
    for bad, what in (
        ([10, 1.5], "whole numbers"),
        ([10, -1], "whole numbers"),
        ([10, np.nan], "whole numbers"),
        ([10, 1e301], "<= 1e\\+300"),
        (np.array([True, False]), "real numbers"),
        (["10"], "real numbers"),
    ):
        with pytest.raises(ValueError, match=f"`steps` must .*{what}"):
            advance(PAPER, [0.1, 0.1, 0, 0, 0], bad, alpha=1e-3)
    with pytest.raises(ValueError, match=r"`steps` must broadcast .* \(3,\) and \(2,\)"):
        advance(PAPER, [[0.1, 0.1, 0, 0, 0]] * 2, [1, 2, 3], alpha=1e-3)
    with pytest.raises(ValueError, match="alpha"):
        advance(PAPER, [0.1, 0.1, 0, 0, 0], 10, alpha=-1.0)
    with pytest.raises(ValueError, match="schedule"):
        advance(
            PAPER, [0.1, 0.1, 0, 0, 0], 10**9, alpha=1e-3, schedule=lambda t: 0.1 / (1 + 1e4 * t)
        )


@pytest.fixture(scope="module")
def paper_points():
    return critical_points(PAPER)


@pytest.fixture(scope="module")
def paper_fates(paper_points):
    starts = sample_initial_overlaps(PAPER, np.random.default_rng(5), 48)
    return starts, fate(PAPER, starts, alpha=4e-3, points=paper_points)


def _first_entries(params, starts, alpha, f):
    """Exact PGD's first step inside each run's ball (of the point its fate names, or of a
    symmetric image), replayed step by step."""
    run = pgd(params, starts, alpha, int(np.ceil(np.max(f.steps))) + 2, record_every=1).overlaps
    first = np.empty(len(starts), dtype=np.int64)
    for i in range(len(starts)):
        p = f.points[f.label[i]]
        images = np.array(
            [p, p * [-1, -1, -1, -1, 1], p * [1, 1, -1, -1, -1], p * [-1, -1, 1, 1, -1]]
        )
        dist = np.min(np.max(np.abs(run[:, i, None, :] - images[None]), axis=-1), axis=1)
        first[i] = np.flatnonzero(dist < f.tol)[0]
    return first


def _assert_within_their_errors(f, first):
    """The map enters between steps ``first - 1`` and ``first``: each arrival time lies in
    that interval, to its own estimated error."""
    err = f.relative_error * f.steps
    assert np.all(f.steps >= first - 1 - err), np.max(first - 1 - err - f.steps)
    assert np.all(f.steps <= first + err), np.max(f.steps - first - err)


def test_fate_decides_every_start_and_agrees_with_exact_pgd(paper_fates):
    """Every run's arrival, replayed with exact PGD: inside the ball at that step and not
    one step before, to the time's estimated error."""
    starts, f = paper_fates
    assert f.undecided == 0.0 and abs(f.fractions.sum() - 1.0) < 1e-12
    assert np.all(np.isfinite(f.steps)) and np.all(f.minimum[f.label])
    _assert_within_their_errors(f, _first_entries(PAPER, starts, 4e-3, f))


def test_fate_at_a_step_near_the_stability_limit_agrees_with_exact_pgd():
    """lam = 0.9 at 95 % of the largest step stable at the minima (the atlas's step): the
    map flips its stiffest direction every step and most runs end at a minimum whose k is
    close to -v*, by the boundary of the feasible overlaps, which the integration's
    stages may cross. Every arrival against exact PGD, to its estimated error."""
    p = Params.paper(lam=0.9)
    pts = critical_points(p)
    alpha = atlas_step(pts)
    starts = sample_initial_overlaps(p, np.random.default_rng(3), 16)
    f = fate(p, starts, alpha=alpha, points=pts)
    assert f.undecided == 0.0 and np.all(f.steps > 5e4)  # beyond a single burst
    _assert_within_their_errors(f, _first_entries(p, starts, alpha, f))


def test_fates_shares_and_quantiles(paper_fates):
    _, f = paper_fates
    assert np.all(f.within(0) == 0) or f.steps.min() == 0
    late = f.within(np.nanmax(f.steps))
    np.testing.assert_allclose(late, f.fractions)
    q = f.quantiles([0.0, 0.5, 1.0])
    assert np.all(np.diff(q) >= 0)
    assert q[0] == pytest.approx(np.log10(np.nanmin(f.steps)))
    np.testing.assert_allclose(f.stderr, np.sqrt(f.fractions * (1 - f.fractions) / f.n))
    with pytest.raises(ValueError, match="q"):
        f.quantiles([1.5])
    with pytest.raises(ValueError, match="steps"):
        f.within(-1.0)


def test_fates_round_trip_through_json(paper_fates):
    _, f = paper_fates
    back = loads(Fates, dumps(f))
    np.testing.assert_array_equal(back.steps, f.steps)
    assert back.names == f.names


def test_a_start_on_m_ends_at_a_saddle_with_an_infinite_time():
    """At lam = 0.9, (k*, v*) is a minimum on M but a saddle in the full space: a run that
    starts on M stays on M (its stable manifold) and never reaches a minimum."""
    p = Params.paper(lam=0.9)
    f = fate(p, [[0.5, 0.5, 0.0, 0.0, 0.0]], alpha=1e-3)
    assert not f.minimum[f.label[0]] and np.isinf(f.steps[0])
    np.testing.assert_allclose(np.abs(f.points[f.label[0]][:2]), [1.0, 1.0], atol=1e-12)
    assert f.within(1e299)[f.label[0]] == 0.0 and f.within(HORIZON)[f.label[0]] == 1.0


def test_the_gradient_flow_fate_agrees_with_the_flow():
    """alpha=None: the flow time to the ball against overlap_flow's own trajectory."""
    from slr_theory import overlap_flow

    start = [0.2, 0.3, 0.05, -0.05, 0.02]
    f = fate(PAPER, [start], alpha=None, points=critical_points(PAPER))
    t = float(f.steps[0])
    sol = overlap_flow(PAPER, start, 1.2 * t, t_eval=np.array([0.99 * t, 1.01 * t]))
    p = f.points[f.label[0]]
    d = np.max(np.abs(sol.overlaps - p), axis=-1)
    assert d[0] > f.tol > d[1]


@pytest.mark.parametrize("lam", [0.1, 0.9])
def test_on_m_the_flow_time_to_the_minimum_on_m_agrees_with_the_flow_on_m(lam):
    """on_manifold=True: the attractors are the minima of the flow on M ((1, 1) even at
    lam = 0.9, where it is a full-space saddle) and the time is the flow time, checked
    against manifold_flow's own trajectory (LSODA) at 0.999 and 1.001 times it (at
    lam = 0.9 the time is 1e53: the start is taken on the edge, near the end)."""
    from slr_theory.flows import manifold_flow

    p = Params.paper(lam=lam)
    start = [0.2, 0.3, 0, 0, 0] if lam == 0.1 else [0.99, 1.0, 0, 0, 0]
    f = fate(p, [start], on_manifold=True)
    assert f.on_manifold and f.minimum[f.label[0]] and f.kinds[f.label[0]] == "minimum on M"
    t = float(f.steps[0])
    assert np.isfinite(t) and f.relative_error[0] < 1e-3
    sol = manifold_flow(p, start[0], start[1], 1.2 * t, rtol=1e-12, atol=1e-14)
    d = [np.max(np.abs(sol.sol(s)[:2] - f.points[f.label[0]][:2])) for s in (0.999 * t, 1.001 * t)]
    assert d[0] > f.tol > d[1], (t, d)
    full = fate(p, [start], alpha=None)  # the full space's classification of the same run
    assert full.minimum[full.label[0]] == (lam == 0.1)


def test_fate_on_m_refuses_starts_off_m_and_a_field_that_leaves_m(monkeypatch):
    from slr_theory import longrun

    with pytest.raises(ValueError, match="`starts` must lie on M"):
        fate(PAPER, [[0.2, 0.3, 0.0, 0.01, 0.0]], on_manifold=True)
    with pytest.raises(ValueError, match="`on_manifold`"):
        fate(PAPER, [[0.2, 0.3, 0.0, 0.0, 0.0]], on_manifold="yes")
    real = longrun.field.Field.velocity

    def leaky(self, ov5, t):  # a model whose field leaves M
        F = real(self, ov5, t).copy()
        F[:, 4] += 1e-30
        return F

    monkeypatch.setattr(longrun.field.Field, "velocity", leaky)
    with pytest.raises(ValueError, match="needs M invariant"):
        fate(PAPER, [[0.2, 0.3, 0.0, 0.0, 0.0]], on_manifold=True)


def test_an_end_point_the_points_do_not_list_is_named_as_such():
    """Given only M's five points at lam = 0.1, the runs that end at the second minimum
    (off M) end at an unlisted point."""
    pts = critical_points(PAPER, "manifold")
    starts = sample_initial_overlaps(PAPER, np.random.default_rng(6), 12)
    f = fate(PAPER, starts, alpha=4e-3, points=pts)
    assert UNLISTED in f.kinds
    j = f.kinds.index(UNLISTED)
    np.testing.assert_allclose(np.abs(f.points[j][2:4]), [0.629772, 1.0], atol=2e-3)


def test_fate_refuses_bad_input_by_name():
    with pytest.raises(ValueError, match="points"):
        fate(PAPER, [[0.1, 0.1, 0, 0, 0]], points=[1.0])
    with pytest.raises(ValueError, match="tol"):
        fate(PAPER, [[0.1, 0.1, 0, 0, 0]], tol=0.5, points=[])
    with pytest.raises(ValueError, match="starts"):
        fate(PAPER, [0.1, 0.1, 0, 0, 0], points=[])


def test_the_arrival_figure_is_drawn_from_the_fates(paper_fates, tmp_path):
    from slr_theory.plotting import arrival_figure

    _, f = paper_fates
    out = arrival_figure(f, tmp_path / "arrival.png", budget=2e4)
    assert out.stat().st_size > 10_000


def test_basins_carry_the_fates_of_the_same_starts():
    """The budgeted runs and the fates start from the same draws: a run at a minimum within
    the budget is at the same minimum in its fate, and arrived within the budget."""
    from slr_theory.landscape import AT_DISTANCE, basins

    b = basins(PAPER, 24, alpha=4e-3, steps=2000, max_steps=20_000, rng=7)
    f = b.fates
    assert f.n == b.n and f.tol == AT_DISTANCE
    at = np.flatnonzero(b.label >= 0)
    assert at.size
    for i in at:
        np.testing.assert_allclose(f.points[f.label[i]], b.minima[b.label[i]], atol=1e-9)
        assert f.steps[i] <= b.steps_run[i]
    late = np.flatnonzero(b.label < 0)
    assert np.all(f.steps[late] > b.max_steps)


@pytest.mark.parametrize("lam", [0.5, 0.9, 2.0])
def test_the_plateau_drive_of_erf_has_relative_precision(lam):
    """R_kappa on M near and on the edge nu = 1, where it is erfc-small (down to 1e-69),
    against the closed form of M's gradient at 60 digits: the drive advance integrates."""
    import mpmath as mp

    p = Params.paper(lam=lam)
    with mp.workdps(60):
        a = mp.mpf(lam) * mp.sqrt(mp.mpf(p.d) / 2)
        g = mp.mpf(lam) * mp.mpf(p.gamma)
        c, s = a / mp.sqrt(1 + 2 * g**2), mp.sqrt((1 + 2 * g**2) * (1 + 4 * g**2))
        for kappa in (0.3, 0.6, 0.9, 0.99, 0.999):
            for nu in (1.0, 1.0 - 1e-6, 0.999):
                got = float(risk_grad(p, kappa, nu, 0.0, 0.0, 0.0)[0])
                k, n = mp.mpf(kappa), mp.mpf(nu)
                ref = 4 * mp.mpf(p.gamma) ** 2 * c / mp.sqrt(mp.pi) * mp.exp(-(c**2) * k**2)
                ref *= mp.erf(a * k / s) - n
                assert abs(got - ref) <= 1e-12 * abs(ref), (kappa, nu, got, float(ref))


@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_the_plateau_drive_of_tanh_has_relative_precision(lam):
    """R_kappa(kappa, 1) = 2 a gamma^2 E[sigma'(1 - sigma)] (sign aside) for tanh, against a
    50-digit quadrature of that product written without cancellation."""
    import mpmath as mp

    from slr_theory.verify.reference import mp_expect

    p = Params.paper(lam=lam).replace(nonlinearity="tanh")
    a = mp.mpf(lam) * mp.sqrt(mp.mpf(p.d) / 2)
    g = mp.mpf(lam) * mp.mpf(p.gamma)

    def h(u):  # -sech(u)^2 (1 - tanh u)
        return -(4 / (mp.exp(u) + mp.exp(-u)) ** 2) * (2 / (1 + mp.exp(2 * u)))

    for kappa in (0.3, 0.6, 0.9, 0.99):
        got = float(risk_grad(p, kappa, 1.0, 0.0, 0.0, 0.0)[0])
        ref = 2 * a * mp.mpf(p.gamma) ** 2 * mp_expect(h, a * mp.mpf(kappa), g, dps=50)
        assert abs(got - ref) <= 1e-12 * abs(ref), (kappa, got, float(ref))


@pytest.mark.parametrize(
    "sigma",
    ["sigmoid", pytest.param("arctan", marks=pytest.mark.slow)],  # not odd; the sweep
)
def test_advance_is_exact_pgd_for_other_nonlinearities(sigma):
    """sigma(0) != 0 (sigmoid: not odd) and a slowly saturating sigma: from M and from off M,
    advance agrees with exact PGD; a run on M stays exactly where exact PGD keeps it."""
    p = Params.paper(lam=0.3).replace(nonlinearity=sigma)
    starts = np.array([[0.3, 0.5, 0.0, 0.0, 0.0], [0.2, -0.3, 0.1, 0.05, -0.02]])
    got = advance(p, starts, 12_000, alpha=2e-3)  # integrates after ~6000 exact steps
    ref = pgd(p, starts, 2e-3, 12_000, record_every=12_000).overlaps[-1]
    assert np.all(got.flow_steps > 0) and np.max(np.abs(got.overlaps - ref)) < 1e-6
    np.testing.assert_array_equal(got.overlaps[0, 2:] == 0.0, ref[0, 2:] == 0.0)


@pytest.mark.parametrize("alpha", [None, 2e-3])
def test_the_field_alone_is_the_field_of_the_full_evaluation(alpha):
    """The integrator's substeps take F from the gradient alone (the flow) or from the
    full evaluation (PGD's modified field needs M): the same numbers either way."""
    from slr_theory.longrun.field import Field as _Field

    field = _Field(PAPER, alpha, None)
    ov = sample_initial_overlaps(PAPER, np.random.default_rng(3), 16).T
    t = np.zeros(16)
    full, alone = field.evaluate(ov, t)[0], field.velocity(ov, t)
    # the same table and functions, evaluated for the field alone or with everything:
    # sums of another length round apart, a few ulp of the largest
    np.testing.assert_allclose(alone, full, rtol=1e-13, atol=1e-15 * np.abs(full).max())


def test_joined_fates_name_each_run_s_end_as_one_decision_does():
    """Fates.join (the portrait's refined cells after its coarse ones): every run keeps
    the end it was decided at, under the joined list of ends, and an end only the second
    reached is added; fates decided differently are refused."""
    p = Params.paper(lam=0.1)
    a = np.array([[0.6, 0.6, 0, 0, 0], [-0.6, -0.5, 0, 0, 0]])
    b = np.array([[0.0, 0.0, 0, 0, 0], [0.5, -0.7, 0, 0, 0]])  # the first: at the saddle
    fa, fb = fate(p, a, on_manifold=True), fate(p, b, on_manifold=True)
    both = fate(p, np.concatenate([a, b]), on_manifold=True)
    joined = fa.join(fb)
    assert joined.n == 4 and len(joined.kinds) >= len(fa.kinds)
    for f in (joined, both):
        assert np.isinf(f.steps[2]) and "saddle" in f.kinds[f.label[2]]
    ends = [(joined.kinds[i], tuple(joined.points[i])) for i in joined.label]
    want = [(both.kinds[i], tuple(both.points[i])) for i in both.label]
    assert ends == want
    np.testing.assert_allclose(joined.steps, both.steps, rtol=1e-6)
    with pytest.raises(ValueError, match="`other` must be decided with the same"):
        fa.join(fate(p, b, on_manifold=True, tol=1e-2))
    with pytest.raises(ValueError, match="`other` must be a Fates"):
        fa.join("fates")


def test_a_key_free_model_reaches_its_manifold_of_minima_when_exact_pgd_does():
    """Softmax over one token: the risk is the same for every key (computed by the model),
    so the minimum is the manifold v = v* and a run has arrived when (nu, theta) has,
    whatever k is (state_overlaps). Every run's time lies between exact PGD's last step
    outside the ball and its first inside."""
    p = Params.paper(lam=0.5).replace(L=1, attention="softmax")
    assert p.model.key_free(p) and p.model.state_overlaps(p).tolist() == [1, 2]
    starts = sample_initial_overlaps(p, np.random.default_rng(0), 5)
    f = fate(p, starts, alpha=1e-3)
    assert f.undecided == 0.0 and f.points.shape[0] == 1
    path = pgd(p, starts, 1e-3, 6000).overlaps  # (steps + 1, n, 5)
    gap = np.maximum(np.abs(path[..., 1] - 1.0), np.abs(path[..., 2]))
    first = np.argmax(gap < 1e-3, axis=0)
    assert np.all(gap[first, np.arange(5)] < 1e-3)
    err = f.relative_error * f.steps
    assert np.all(first - 1 - err <= f.steps) and np.all(f.steps <= first + err)


def test_a_singular_step_matrix_inverts_to_nan_not_an_error():
    """One matrix of a batch singular to working precision: NaN for it (the step refuses
    it), the inverses of the others unchanged."""
    from slr_theory.longrun.field import _inverse

    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 3, 5, 5))
    A[1, 2] = 0.0
    A[1, 2, 0, 0] = 1.0  # rank one
    out = _inverse(A)
    assert np.all(np.isnan(out[1, 2]))
    ok = np.ones((2, 3), dtype=bool)
    ok[1, 2] = False
    np.testing.assert_allclose(out[ok] @ A[ok], np.broadcast_to(np.eye(5), (5, 5, 5)), atol=1e-10)
