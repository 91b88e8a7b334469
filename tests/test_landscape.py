"""The global picture against finite differences, independent runs and the linearisation."""

from functools import cache

import numpy as np
import pytest

from slr_theory import Params, critical_points, manifold_flow, manifold_risk_grad, risk
from slr_theory.critical import same_point
from slr_theory.dynamics import pgd_vectors
from slr_theory.flows import overlap_field, overlap_flow
from slr_theory.landscape import (
    FOLD_TOL,
    LOCATE_TOL,
    basin_fractions,
    continuation,
    manifold_basins,
    manifold_stability,
    portrait_data,
    saddle_escape,
    separatrix,
)
from slr_theory.sampling import overlaps_of


@pytest.mark.parametrize("lam", [0.1, 0.5, 0.9])
def test_transverse_eigenvalues_match_finite_differences_of_the_field(lam):
    p = Params.paper(lam=lam)
    rng = np.random.default_rng(0)
    for kappa, nu in rng.uniform(-0.9, 0.9, (4, 2)):
        base = np.array([kappa, nu, 0.0, 0.0, 0.0])
        h = 1e-6
        block = np.empty((3, 3))
        for j in range(3):
            up, dn = base.copy(), base.copy()
            up[2 + j] += h
            dn[2 + j] -= h
            block[:, j] = (overlap_field(p, up) - overlap_field(p, dn))[2:] / (2 * h)
        fd = np.sort_complex(np.linalg.eigvals(block))
        ours = np.sort_complex(manifold_stability(p, kappa, nu))
        np.testing.assert_allclose(ours, fd, atol=1e-5 * max(1.0, np.abs(fd).max()))


@pytest.mark.parametrize("lam", [0.1, 0.9])
def test_distance_to_m_grows_at_the_predicted_rate_at_the_origin(lam):
    """The origin is a fixed point of the flow on M (an interior one, where the overlaps
    are a regular chart): a small transverse offset grows at the leading eigenvalue."""
    p = Params.paper(lam=lam)
    rate = manifold_stability(p, 0.0, 0.0)[0].real
    assert rate > 0  # M repels at its saddle
    start = np.array([0.0, 0.0, 1e-7, 2e-7, -1e-7])
    T = 8.0
    res = overlap_flow(p, start, T, t_eval=np.linspace(0, T, 33), rtol=1e-12, atol=1e-18)
    dist = np.linalg.norm(res.overlaps[:, 2:], axis=1)
    slope = np.polyfit(res.t[12:], np.log(dist[12:]), 1)[0]
    assert slope == pytest.approx(rate, rel=0.02)


def test_distance_to_m_shrinks_where_predicted():
    """At (0.5, 0.5), lam = 0.1, every transverse eigenvalue has a negative real part
    (-0.19 +- 0.13 i): a small offset decays at about that rate while the point drifts."""
    p = Params.paper(lam=0.1)
    ev = manifold_stability(p, 0.5, 0.5)
    assert np.all(ev.real < 0)
    k = np.array([0.5, 1e-6, np.sqrt(0.75), 0.0])
    v = np.array([1e-6, 0.5, 0.0, np.sqrt(0.75)])
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    start = np.array([k[0], v[1], v[0], k[1], k @ v])
    res = overlap_flow(p, start, 5.0, t_eval=[0.0, 5.0], rtol=1e-12, atol=1e-18)
    d0, d1 = np.linalg.norm(res.overlaps[:, 2:], axis=1)
    assert d1 < d0 * np.exp(0.5 * ev[0].real * 5.0)


def test_separatrix_splits_the_basins():
    p = Params.paper(lam=0.1)
    sep = separatrix(p)
    assert np.allclose(np.abs(sep[[0, -1]]), 1.0, atol=1e-3)  # from corner to corner
    basins = manifold_basins(p, grid=16, t_max=600.0)
    # the side of the separatrix (a graph nu = f(kappa) here) against the basin label
    order = np.argsort(sep[:, 0])
    f = np.interp(basins.kappa, sep[order, 0], sep[order, 1])
    above = basins.nu > f
    far = np.abs(basins.nu - f) > 0.05
    labels = basins.label[far]
    assert set(np.unique(labels)) == {1, 2}
    assert np.all((labels == 1) == above[far])  # above: to (1, 1); below: to (-1, -1)


@pytest.mark.slow  # 10-25 s each: CI keeps its budget of 15 minutes
def test_pgd_basins_on_m_agree_with_the_flow():
    p = Params.paper(lam=0.1)
    flow = manifold_basins(p, grid=10, t_max=600.0)
    pgd = manifold_basins(p, grid=10, dynamics="pgd", alpha=4e-3, t_max=600.0)
    assert np.array_equal(flow.label, pgd.label)
    both = np.isfinite(flow.time) & np.isfinite(pgd.time)
    np.testing.assert_allclose(pgd.time[both], flow.time[both], rtol=0.05, atol=2.0)


def test_escape_time_matches_the_linearisation():
    p = Params.paper(lam=0.1)
    origin = next(q for q in critical_points(p, "manifold") if not q.overlaps.any())
    e = saddle_escape(p, origin, [1e-5, 1e-7, 1e-9])
    np.testing.assert_allclose(e.measured, e.predicted, rtol=0.05)
    # each factor 100 closer costs log(100) / mu more time
    np.testing.assert_allclose(np.diff(e.measured), np.log(100) / e.mu, rtol=0.01)
    with pytest.raises(ValueError, match="saddle"):
        saddle_escape(p, critical_points(p, "manifold")[0], 1e-6)


@cache
def _fractions():
    p = Params(d=12, L=5, lam=0.3, gamma=0.7)
    return p, basin_fractions(p, 200, rng=3, alpha=0.02, steps=3000)


def test_basin_fractions_against_explicit_pgd_in_rd():
    """The same experiment with PGD on explicit vectors in R^12 (independent initial draws):
    the fractions agree within their standard errors."""
    p, b = _fractions()
    assert b.none_fraction == 0 and abs(b.fractions.sum() - 1) < 1e-12
    rng = np.random.default_rng(11)
    n = 150
    k0, v0 = rng.standard_normal((2, n, p.d))
    k0 /= np.linalg.norm(k0, axis=-1, keepdims=True)
    v0 /= np.linalg.norm(v0, axis=-1, keepdims=True)
    e = np.eye(p.d)
    k, v = pgd_vectors(p, k0, v0, e[0], e[1], 0.02, 3000)
    final = overlaps_of(k, v, e[0], e[1])
    for j, a in enumerate(b.attractors):
        frac = np.mean([same_point(o, a.overlaps, tol=0.05) for o in final])
        se = np.hypot(b.stderr[j], np.sqrt(frac * (1 - frac) / n)) + 1e-12
        assert abs(frac - b.fractions[j]) <= 4 * se


def test_basin_fractions_with_the_flow():
    p = Params(d=12, L=5, lam=0.3, gamma=0.7)
    b = basin_fractions(p, 12, rng=4, dynamics="flow", t_max=300.0)
    assert abs(b.fractions.sum() + b.none_fraction - 1) < 1e-12
    assert b.fractions.sum() >= 0.75


def test_continuation_branches_stay_critical_and_end_where_the_search_finds_points():
    p = Params.paper(lam=0.1)
    c = continuation(p, (0.1, 0.2), steps=4, seeds=2)
    assert all(b.end == "range" for b in c.branches)
    end = critical_points(p.replace(lam=0.2), rng=0)
    for b in c.branches:
        assert np.all(np.diff(b.lam) > 0)
        assert any(same_point(b.overlaps[-1], q.overlaps, tol=1e-6) for q in end)
    for ev in c.events:
        if ev["type"] == "index change":
            br = c.branches[ev["branch"]]
            i = int(np.searchsorted(br.lam, ev["lam"]))
            assert br.index[i - 1] == ev["from"] and br.index[i] == ev["to"]
    _assert_no_branch_followed_twice(c)


def _assert_no_branch_followed_twice(c, group=None):
    """A list of branches is a set: no two branches are the same point (up to symmetry,
    within MERGE_TOL) at two temperatures of the grid (once is a meeting, an event), and
    no overlap is a signed zero."""
    from slr_theory.critical.points import MERGE_TOL

    for i, a in enumerate(c.branches):
        assert not np.signbit(a.overlaps[a.overlaps == 0.0]).any()
        for b in c.branches[:i]:
            common = np.intersect1d(a.lam, b.lam)
            same = [
                lam
                for lam in common
                if same_point(
                    a.overlaps[np.searchsorted(a.lam, lam)],
                    b.overlaps[np.searchsorted(b.lam, lam)],
                    tol=MERGE_TOL,
                    group=group,
                )
            ]
            assert len(same) <= 1, (a.overlaps[0], b.overlaps[0], same)


def test_a_branch_that_slides_onto_another_is_cut_where_they_meet():
    """Softmax over [0.13, 0.2]: a branch followed back from its seed slid onto the corner
    (-k*, v*)'s branch and was listed beside it over two temperatures; it now ends where
    it runs into it, a meeting bracketed by the grid."""
    from slr_theory.critical import symmetries

    p = Params.paper().replace(attention="softmax")
    c = continuation(p, (0.13, 0.2), steps=3, seeds=2)
    _assert_no_branch_followed_twice(c, symmetries(p))
    joined = [e for e in c.events if e["type"] == "meets" and e.get("other") is not None]
    assert joined and all(e["bracket"][0] < e["lam"] < e["bracket"][1] for e in joined)


def test_bad_arguments():
    p = Params.paper()
    with pytest.raises(ValueError, match="dynamics"):
        manifold_basins(p, dynamics="sgd")
    with pytest.raises(ValueError, match="alpha"):
        manifold_basins(p, dynamics="pgd")
    with pytest.raises(ValueError, match="needs `alpha` and `steps`"):
        basin_fractions(p, 4)
    with pytest.raises(ValueError, match="lam_range"):
        continuation(p, (0.1, -1.0))


def test_convergence_time_grows_like_log_of_the_offset():
    from slr_theory.landscape import convergence_time

    r = convergence_time(Params.paper(lam=0.1), [1e-2, 1e-4, 1e-6, 1e-8])
    assert np.all(np.isfinite(r.time)) and np.all(np.diff(r.time) > 0)
    assert r.slope * r.mu == pytest.approx(1.0, rel=0.02)


def test_basin_fractions_under_a_schedule_classify_at_the_last_temperature():
    from slr_theory import paper_schedule

    p = Params(d=12, L=5, lam=0.6, gamma=0.7)
    b = basin_fractions(p, 40, rng=2, alpha=0.02, steps=2000, schedule=paper_schedule(0.6, 1e-3))
    assert abs(b.fractions.sum() + b.none_fraction - 1) < 1e-12
    assert b.fractions.sum() >= 0.9


def test_figures_are_images_of_the_requested_format(tmp_path):
    from slr_theory.plotting import basins_figure, bifurcation_figure

    p = Params.paper(lam=0.1)
    c = continuation(p, (0.1, 0.2), steps=3, seeds=2)
    b = manifold_basins(p, grid=6, t_max=200.0)
    png = bifurcation_figure(c, tmp_path / "bif.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    svg = basins_figure(b, tmp_path / "basins.svg", separatrix=separatrix(p))
    assert b"<svg" in svg.read_bytes()[:400]
    pdf = bifurcation_figure(c, tmp_path / "bif.pdf", quantity="kappa")
    assert pdf.read_bytes()[:4] == b"%PDF"
    with pytest.raises(ValueError, match="quantity"):
        bifurcation_figure(c, tmp_path / "x.png", quantity="energy")


def test_stability_figure(tmp_path):
    from slr_theory.plotting import stability_figure

    path = stability_figure(
        [Params.paper(lam=0.1), Params.paper(lam=0.9)], tmp_path / "s.png", grid=30
    )
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


def _png_size(path):
    import struct

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_figures_are_deterministic(tmp_path, suffix):
    from slr_theory.plotting import basins_figure

    p = Params.paper(lam=0.1)
    b = manifold_basins(p, grid=6, t_max=200.0)
    one = basins_figure(b, tmp_path / f"a{suffix}").read_bytes()
    two = basins_figure(b, tmp_path / f"b{suffix}").read_bytes()
    assert one == two


def test_phase_portrait_and_off_manifold_figure_have_the_expected_size(tmp_path):
    from slr_theory.plotting import off_manifold_figure, phase_portrait

    p = Params.paper(lam=0.1)
    stages = []
    path = phase_portrait(
        p,
        tmp_path / "portrait.png",
        grid=21,
        basin_grid=8,
        refine=2,
        trajectories=3,
        pgd_alpha=4e-3,
        pgd_steps=2000,
        t_max=200.0,
        dpi=100,
        progress=stages.append,
    )
    assert _png_size(path) == (960, 660)  # the legend beside the square, not on the data
    # basins, field, separatrix, the trajectories, critical points, saving
    assert stages == [1] * 6
    path = off_manifold_figure(p, tmp_path / "off.png", n=6, steps=2000, dpi=100)
    assert _png_size(path) == (780, 520)  # the legend below the axes


@pytest.mark.slow  # 10-25 s each: CI keeps its budget of 15 minutes
def test_continuation_counts_a_continuum_of_critical_points_instead_of_following_it():
    """At gamma = 1e-6 the label is almost 0 and the search returns hundreds of degenerate
    representatives of a continuum; following each took minutes and meant nothing."""
    from slr_theory import Params
    from slr_theory.landscape import continuation

    p = Params(d=400, L=10, lam=1e-6, gamma=1e-6)
    c = continuation(p, (0.02, 0.03), steps=2, seeds=2)
    assert [e["lam"] for e in c.not_followed] == [0.02, 0.03]
    assert all(e["count"] > 100 for e in c.not_followed)
    assert 0 < len(c.branches) < 20
    for b in c.branches:
        assert not any(k.startswith("degenerate") for k in b.kind[:1])


def test_an_index_change_is_located_to_a_millionth_and_the_eigenvalue_agrees():
    """The optimum (k*, v*) turns into a saddle at lam ~ 0.8924 (an eigenvalue inside
    span{k*, v*} crosses zero). The located bracket is checked by second differences of
    risk_at along the geodesics k -> v*, v -> k*, a route that shares no code with the
    Hessian of classify."""
    from slr_theory import risk_at

    c = continuation(Params.paper(), (0.88, 0.90), steps=2, seeds=1)
    (ev,) = [
        e
        for e in c.events
        if e["type"] == "index change"
        and np.allclose(c.branches[e["branch"]].overlaps[0], [1, 1, 0, 0, 0])
    ]
    lo, hi = ev["bracket"]
    assert (ev["from"], ev["to"]) == (0, 1) and lo < ev["lam"] < hi and hi - lo <= 1e-6
    e = np.eye(400)

    def in_span_min_eigenvalue(lam, h=1e-4):
        p = Params.paper(lam=lam)

        def f(a, b):  # k = cos a e1 + sin a e2, v = cos b e2 + sin b e1
            k = np.cos(a) * e[0] + np.sin(a) * e[1]
            v = np.cos(b) * e[1] + np.sin(b) * e[0]
            return float(risk_at(p, k, v, e[0], e[1]))

        f0 = f(0, 0)
        haa = (f(h, 0) - 2 * f0 + f(-h, 0)) / h**2
        hbb = (f(0, h) - 2 * f0 + f(0, -h)) / h**2
        hab = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h * h)
        return float(np.linalg.eigvalsh([[haa, hab], [hab, hbb]])[0])

    assert in_span_min_eigenvalue(lo - 1e-6) > 0 > in_span_min_eigenvalue(hi + 1e-6)


def test_two_eigenvalues_crossing_apart_are_two_events_each_located():
    """At tanh the branch k = v*, v = k* goes from index 0 to 399 between lam = 0.065 and
    0.085: two crossings, near 0.0709 (0 -> 398) and 0.0773 (398 -> 399). The bisection
    stopped at the intermediate index and reported one 0 -> 399 jump located to 1e-2; each
    is now bisected to LOCATE_TOL, and the index between them, classified directly at the
    point (which does not move with lam), is 398."""
    from slr_theory.critical import classify
    from slr_theory.landscape import LOCATE_TOL

    p = Params.paper().replace(nonlinearity="tanh")
    c = continuation(p, (0.065, 0.085), steps=2, seeds=1)
    changes = sorted((e for e in c.events if e["type"] == "index change"), key=lambda e: e["lam"])
    assert [(e["from"], e["to"]) for e in changes] == [(0, 398), (398, 399)]
    for e in changes:
        lo, hi = e["bracket"]
        assert np.allclose(c.branches[e["branch"]].overlaps[0], [0, 0, 1, 1, 0], atol=1e-12)
        assert hi - lo <= 1.01 * LOCATE_TOL
    (a_lo, a_hi), (b_lo, b_hi) = (e["bracket"] for e in changes)
    k, v = np.array([0.0, 1.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0, 0.0])
    index = {lam: classify(p.replace(lam=lam), k, v).index for lam in (a_lo, a_hi, b_lo, b_hi)}
    assert (index[a_lo], index[a_hi], index[b_lo], index[b_hi]) == (0, 398, 398, 399)
    _assert_no_branch_followed_twice(c)
    meets = sorted(e["lam"] for e in c.events if e["type"] == "meets")
    for e, m in zip(changes, meets, strict=True):  # each crossing is a pitchfork's
        assert abs(e["lam"] - m) <= 0.5 * (e["bracket"][1] - e["bracket"][0]) + 1e-10


def test_the_portraits_legend_names_only_what_it_shows(tmp_path, monkeypatch):
    """Each cell's flow is followed to its end: at lam = 0.9 (a plateau of 1e53) as at
    lam = 0.1 the legend names both basins and nothing unreached, and the arrival layer
    says what it shows: contours at lam = 0.1, one time for every cell at lam = 0.5 and
    0.9 (the plateau dominates; at 0.5 the times differ by 1e-6 decades, which contours
    every 1e-6 decades once drew), with the exponent the portrait's own fates give."""
    from slr_theory import plotting
    from slr_theory.plotting import canvas

    labels = {}
    real = canvas.save_figure

    def keep(fig, path, dpi):
        labels[path.name] = [t.get_text() for t in fig.legends[0].get_texts()]
        real(fig, path, dpi)

    monkeypatch.setattr(canvas, "save_figure", keep)
    data = {}
    for lam in (0.1, 0.5, 0.9):
        data[lam] = portrait_data(
            Params.paper(lam=lam), grid=11, basin_grid=6, refine=1, trajectories=1
        )  # the legend is the subject: no refinement
        plotting.phase_portrait(
            data[lam],
            tmp_path / f"p{lam}.png",
            dpi=40,
            layers=(*plotting.PORTRAIT_LAYERS, "arrival"),  # not a default layer
        )
    for lam in (0.1, 0.5, 0.9):
        names = labels[f"p{lam}.png"]
        assert "basin of (1, 1)" in names and "basin of (−1, −1)" in names
        assert not any(t.startswith(("no critical point", "undecided")) for t in names)
    assert any(
        t.startswith("flow time to the minimum on M ($10^x$; every") for t in labels["p0.1.png"]
    )
    for lam in (0.5, 0.9):  # the plateau dominates: times within 1e-5 decades
        t = data[lam].basin_time
        assert np.all(np.isfinite(t))
        e = np.log10(t)
        assert e.max() - e.min() < 0.01  # the same time from every cell, to 2 %
        said = [
            t for t in labels[f"p{lam}.png"] if t.startswith("flow time to the minimum on M: 10^")
        ]
        assert len(said) == 1 and said[0].endswith(" from every cell"), labels[f"p{lam}.png"]
        shown = said[0].split("10^")[1].split()[0]
        assert abs(float(shown) - e.mean()) <= 10.0 ** -len(shown.split(".")[1])


def test_the_portraits_basins_are_where_each_cells_flow_ends():
    """The basin map against the flow itself (LSODA, manifold_flow) from three cells' centres:
    the image the run ends at; and the portrait round-trips through results JSON."""
    from slr_theory.landscape import PortraitData
    from slr_theory.results import dumps, loads

    p = Params.paper(lam=0.1)
    data = portrait_data(p, grid=5, basin_grid=5, trajectories=0)
    n = data.basin_label.shape[0]
    for i, j in [(0, n - 1), (n - 1, 0), (n // 2, 3 * n // 5)]:
        k0, n0 = data.basin_starts[data.basin_cells[i, j]]  # the start this cell shows
        sol = manifold_flow(p, k0, n0, 2000.0)
        end = np.array([sol.kappa[-1], sol.nu[-1]])
        np.testing.assert_allclose(data.basin_targets[data.basin_label[i, j]], end, atol=1e-3)
        assert data.basin_time[i, j] < 2000.0
    back = loads(PortraitData, dumps(data))
    np.testing.assert_array_equal(back.basin_time, data.basin_time)
    np.testing.assert_array_equal(back.basin_cells, data.basin_cells)


def test_the_portraits_basins_follow_the_separatrix_at_the_fine_resolution():
    """The 24 x 24 map crossed the separatrix in a staircase of whole cells. The cells
    where neighbours end apart are now followed from 4 x 4 finer centres: every fine cell
    more than one fine cell from the separatrix (a graph nu = f(kappa) at lambda = 0.1)
    shows the basin of its side, and the coarse map alone does not."""
    p = Params.paper(lam=0.1)
    data = portrait_data(p, grid=5, basin_grid=12, trajectories=0)
    coarse = portrait_data(p, grid=5, basin_grid=12, refine=1, trajectories=0)
    sep = data.separatrix
    order = np.argsort(sep[:, 0])

    def wrong(d):
        c = 0.5 * (d.basin_edges[:-1] + d.basin_edges[1:])
        K, N = np.meshgrid(c, c)
        f = np.interp(K, sep[order, 0], sep[order, 1])
        width = np.max(np.diff(d.basin_edges))
        far = np.abs(N - f) > 1.5 * width / np.sqrt(1 + 1)  # beyond a cell of the curve
        up = d.basin_targets[d.basin_label][..., 0] > 0  # the basin of (1, 1)
        return int(np.sum(far & (up != (N > f)))), width

    # the map shows, cell by cell, the image its start ended at (landscape.ended_at)
    np.testing.assert_array_equal(data.start_images[data.basin_cells], data.basin_label)
    fine_wrong, fine_width = wrong(data)
    assert data.basin_label.shape == (48, 48) and fine_width < 0.06
    assert fine_wrong == 0
    # the refinement is where it matters: the coarse map shows other ends there
    assert data.basin_fates.n > 144
    assert wrong(coarse)[1] > 3 * fine_width


def test_the_bifurcation_legend_explains_every_mark_and_names_the_branches(tmp_path, monkeypatch):
    from slr_theory import plotting
    from slr_theory.landscape import Branch, Continuation

    lam = np.array([0.1, 0.2, 0.3])
    opt = np.tile([1.0, 1.0, 0, 0, 0], (3, 1))
    top = np.tile([0.0, 0.0, 1.0, -1.0, 0.0], (3, 1))
    c = Continuation(
        [
            Branch(
                lam,
                opt,
                np.array([0.1, 0.2, 0.3]),
                np.array([0, 0, 1]),
                ["minimum", "minimum", "saddle"],
                "range",
                "range",
                0.1,
            ),
            Branch(
                lam,
                top,
                np.array([9.0, 9.5, 10.0]),
                np.array([798, 798, 798]),
                ["maximum"] * 3,
                "range",
                "fold",
                0.1,
            ),
        ],
        [{"lam": 0.25, "branch": 0, "type": "index change", "from": 0, "to": 1}],
    )
    seen = {}

    def keep(fig, path, dpi):
        seen["legend"] = [t.get_text() for t in fig.legends[0].get_texts()]
        seen["labels"] = [t.get_text() for t in fig.axes[0].texts]

    monkeypatch.setattr(plotting.canvas, "save_figure", keep)
    plotting.bifurcation_figure(c, tmp_path / "b.png")
    assert seen["legend"] == [
        "minimum (index 0)",
        "saddle, index 1",
        "maximum",
        "a branch, followed in λ",
        "fold",
        "index change or meeting",
        "b0: optimum",
        "b1",
    ]
    assert sorted(seen["labels"]) == ["b0", "b1"]  # tags at the ends, names in the legend
    # the gap to the optimum, with the report's temperature marked
    plotting.bifurcation_figure(c, tmp_path / "g.png", quantity="gap", mark=0.2)
    assert "λ = 0.2 (the report's)" in seen["legend"]
    fig = plotting.bifurcation_figure(c, None, quantity="gap")
    drawn = [line.get_ydata() for line in fig.axes[0].lines if len(line.get_ydata()) == 3]
    assert any(np.allclose(y, [8.9, 9.3, 9.7]) for y in drawn)  # 9, 9.5, 10 minus 0.1, 0.2, 0.3
    assert any(np.allclose(y, 0.0) for y in drawn)  # the optimum against itself
    with pytest.raises(ValueError, match="`quantity` 'gap' needs the branch of"):
        plotting.bifurcation_figure(Continuation(c.branches[1:], []), None, quantity="gap")


@pytest.mark.slow  # 10-25 s each: CI keeps its budget of 15 minutes
def test_runs_continued_round_by_round_are_the_runs_of_one_long_pgd():
    """``max_steps``: each run stops where one uninterrupted PGD of its length ends, and it
    is at a minimum only when its distance and its gradient both say so."""
    from slr_theory import pgd, sample_initial_overlaps
    from slr_theory.landscape.ensembles import _gradient_norm

    p = Params(d=12, L=5, lam=0.3, gamma=0.7)
    b = basin_fractions(
        p,
        12,
        rng=5,
        alpha=0.02,
        steps=500,
        tol=1e-3,
        grad_tol=1e-3,
        max_steps=5000,
        trace_every=100,
    )
    ov0 = sample_initial_overlaps(p, np.random.default_rng(5), 12)
    for i in range(12):
        one = pgd(p, ov0[i], 0.02, int(b.steps_run[i]), record_every=int(b.steps_run[i]))
        np.testing.assert_allclose(one.overlaps[-1], b.final[i], rtol=0, atol=1e-13)
    g = _gradient_norm(p, b.final)
    np.testing.assert_array_equal(g, b.gradient)
    at = (b.distance < 1e-3) & (g < 1e-3)
    np.testing.assert_array_equal(b.label >= 0, at)
    assert np.all(b.steps_run[~at] == 5000) or np.all(b.stalled[~at] | (b.steps_run[~at] == 5000))
    with pytest.raises(ValueError, match="max_steps"):
        basin_fractions(p, 2, alpha=0.02, steps=500, max_steps=700)
    with pytest.raises(ValueError, match="trace_every"):
        basin_fractions(p, 2, alpha=0.02, steps=500, trace_every=300)
    with pytest.raises(ValueError, match="max_steps"):
        basin_fractions(p, 2, dynamics="flow", t_max=10.0, max_steps=1000)


@pytest.mark.slow  # 10-25 s each: CI keeps its budget of 15 minutes
def test_the_off_m_minimum_born_at_the_optimum_is_located_two_ways():
    """At d = 400, L = 10 the optimum loses stability at a pitchfork near lam = 0.8924 and
    the off-M global minimum is born there. Two grids reach it from different points and
    place the meeting (arc length, extrapolated) within its error of each other; the
    optimum's own index change, located by bisection on its index (no arc length), holds
    the same lambda within its bracket; the born branch is a minimum and exists just
    after the meeting, not before."""
    from slr_theory.critical import polish

    found = []
    for steps in (4, 7):
        c = continuation(Params.paper(), (0.85, 0.95), steps=steps, seeds=2)
        meets = [e for e in c.events if e["type"] == "meets" and 0.89 < e["lam"] < 0.9]
        assert len(meets) == 1, (steps, c.events)
        e = meets[0]
        born = c.branches[e["branch"]]
        assert e["side"] == "start" and born.start == "meets" and born.index[0] == 0
        optimum = c.branches[e["other"]]
        np.testing.assert_allclose(optimum.overlaps[0], [1, 1, 0, 0, 0], atol=1e-12)
        np.testing.assert_allclose(e["at"], [1, 1, 0, 0, 0], atol=1e-6)
        change = [x for x in c.events if x["type"] == "index change" and x["branch"] == e["other"]]
        assert [(x["from"], x["to"]) for x in change] == [(0, 1)]
        lo, hi = change[0]["bracket"]
        assert hi - lo <= LOCATE_TOL and lo - 1e-12 <= e["lam"] <= hi + 1e-12
        found.append((e, born))
    (e1, b1), (e2, b2) = found
    w1, w2 = (e1["bracket"][1] - e1["bracket"][0]) / 2, (e2["bracket"][1] - e2["bracket"][0]) / 2
    assert max(w1, w2) < FOLD_TOL and abs(e1["lam"] - e2["lam"]) <= w1 + w2 + 1e-13
    # just after the meeting the born minimum lies below the optimum (now a saddle) ...
    p0 = Params.paper(lam=float(b1.lam[0]))
    assert b1.lam[0] > e1["lam"] and b1.risk[0] < risk(p0, 1.0, 1.0, 0.0, 0.0, 0.0)
    # ... and just before it, Newton from the born point finds only the optimum
    before = polish(Params.paper(lam=e1["lam"] - 1e-5), *b1.vectors[0])
    if before is not None:
        e4 = np.eye(4)
        np.testing.assert_allclose(overlaps_of(*before, e4[0], e4[1]), [1, 1, 0, 0, 0], atol=1e-6)


@pytest.mark.slow  # 10-25 s each: CI keeps its budget of 15 minutes
def test_a_branch_through_a_hard_stretch_goes_on_in_arc_length():
    """Near lam = 0.8393 (d = 400, L = 10) the corrector in lambda stalls on a branch
    that runs on: it used to be reported as a fold. In arc length the branch goes on to
    the corner (k*, -v*), where it meets it at the corner's index change."""
    c = continuation(Params.paper(), (0.8, 0.85), steps=3, seeds=2)
    assert not [e for e in c.events if e["type"] in ("fold", "lost")], c.events
    meets = [e for e in c.events if e["type"] == "meets"]
    assert len(meets) == 1 and meets[0]["side"] == "end"
    np.testing.assert_allclose(meets[0]["at"], [1, -1, 0, 0, 0], atol=1e-6)
    corner = [
        x for x in c.events if x["type"] == "index change" and x["branch"] == meets[0]["other"]
    ]
    assert len(corner) == 1
    lo, hi = corner[0]["bracket"]
    assert lo - 1e-12 <= meets[0]["lam"] <= hi + 1e-12


@pytest.mark.slow  # 10-25 s each: CI keeps its budget of 15 minutes
def test_continuation_reaches_the_end_of_the_domain_exactly():
    """The last grid step lands on lam = 1e-6 itself: a rounding below the domain was
    refused (found by the contract fuzz, slow profile)."""
    c = continuation(Params.paper(lam=0.1), [1.0, 1e-06], steps=2, seeds=1)
    assert c.branches and min(float(b.lam[0]) for b in c.branches) >= 1e-6


@pytest.mark.slow  # 10-25 s each: CI keeps its budget of 15 minutes
def test_the_fold_finder_finds_the_extremum_of_lambda_along_a_branch():
    """Along the branch born at the optimum's pitchfork and its mirror image, lambda has its
    extremum at the meeting: the fold finder (Brent on lambda along the arc) must find the
    lambda the meeting finder (Richardson in the flipped coordinate) gives, within the
    error it states, and say so where the extremum is not inside its search."""
    from slr_theory.landscape.continuation import _arc_tangent, _arc_vertex

    p = Params.paper()
    c = continuation(p, (0.85, 0.95), steps=4, seeds=2)
    e = next(x for x in c.events if x["type"] == "meets")
    born = c.branches[e["branch"]]
    y = np.concatenate([born.vectors[0].ravel(), [born.lam[0]]])
    t = _arc_tangent(p, y, np.r_[np.zeros(8), -1.0])  # towards the meeting
    top, lam, err = _arc_vertex(p, y, t, 0.0, 0.1, -1.0)
    assert err < 1e-12 and abs(lam - e["lam"]) <= err + (e["bracket"][1] - e["bracket"][0]) / 2
    reach = float(t @ (top - y))  # where along the tangent the extremum is
    assert _arc_vertex(p, y, t, 0.0, reach / 2, -1.0) is None  # no extremum inside: said so


def test_flow_basins_accept_end_points_the_integration_left_just_infeasible():
    """At lam = 0.9 a flow from the sphere ends 6e-12 outside the feasible set (its
    integration tolerance is 1e-10): the end point is projected, not an error (found by
    benchmarks/landscape.py); it is feasible and its gradient is that of the projection."""
    from slr_theory import sample_initial_overlaps
    from slr_theory.flows import overlap_flow
    from slr_theory.landscape import FLOW_FEASIBILITY
    from slr_theory.landscape.ensembles import _gradient_norm
    from slr_theory.params import check_overlaps

    p = Params.paper(lam=0.9)
    b = basin_fractions(p, 3, rng=2, dynamics="flow", t_max=120.0)
    ov0 = sample_initial_overlaps(p, np.random.default_rng(2), 3)
    raw = np.array([overlap_flow(p, o, 120.0, dense_output=False).overlaps[-1] for o in ov0])
    with pytest.raises(ValueError, match="infeasible"):
        check_overlaps(*raw.T, d=p.d)
    # within the contract: the smallest eigenvalue of the Gram matrix's Schur complement
    # at the raw end points is at least -FLOW_FEASIBILITY (the projection moves rho by more
    # where that complement is nearly singular: 2.5e-9 for an eigenvalue inside 1e-9)
    k, n, t, e, r = raw.T
    s11, s22, s12 = 1 - k * k - e * e, 1 - t * t - n * n, r - k * t - e * n
    lam_min = 0.5 * (s11 + s22) - np.hypot(0.5 * (s11 - s22), s12)
    assert lam_min.min() >= -FLOW_FEASIBILITY
    assert np.abs(b.final - raw).max() <= 1e-6
    projected = np.stack(check_overlaps(*b.final.T, d=p.d), axis=1)  # feasible to 1e-12
    np.testing.assert_array_equal(projected, b.final)
    np.testing.assert_array_equal(_gradient_norm(p, b.final), b.gradient)


def test_basins_refuses_a_step_count_it_cannot_run_at_once():
    """The slow contract fuzz found steps = 2.2e16 spinning in the search for a divisor
    of `steps` (it counted down from steps // records); now the count is bounded and the
    divisor found by trial division to its square root."""
    from slr_theory.landscape import basins

    p = Params.paper(lam=0.1)
    with pytest.raises(ValueError, match="`steps`"):
        basins(p, 4, alpha=1e-2, steps=22426373079370584, max_steps=100, records=5)
    b = basins(p, 2, alpha=4e-3, steps=12, max_steps=12, records=5)  # divisors of 12 <= 2
    assert np.all(np.diff(b.trace_step) == 2) and b.trace_step[-1] == 12


def test_portrait_data_bounds_its_pgd_steps():
    """The slow contract fuzz drew pgd_steps = 1.4e10 (a float the count accepted): hours
    of PGD for one figure. The figure's runs are bounded; longer ensembles are basins'."""
    from slr_theory.landscape import MAX_PORTRAIT_STEPS, portrait_data

    with pytest.raises(ValueError, match="`pgd_steps`"):
        portrait_data(Params.paper(), grid=5, pgd_alpha=1e-3, pgd_steps=MAX_PORTRAIT_STEPS + 1)
    with pytest.raises(ValueError, match="`pgd_steps`"):
        portrait_data(Params.paper(), grid=5, pgd_alpha=1e-3, pgd_steps=14174543314.0)


def test_the_separatrix_and_the_escape_start_at_ms_own_saddle_for_a_sigma_not_odd():
    """For sigma = tanh + tanh^2 / 2 the origin is not critical (its manifold gradient is
    about 7e-3); the separatrix went through it all the same. It now passes through M's
    interior saddle, which the flow leaves along the unstable direction only: a point of
    the separatrix flows back to the saddle, and the escape slope is 1 / mu there."""
    from slr_theory.landscape import convergence_time, separatrix
    from slr_theory.manifold import manifold_saddle

    from .strategies import skew_tanh

    p = Params(d=400, L=10, lam=0.1, gamma=0.7, nonlinearity=skew_tanh())
    saddle = manifold_saddle(p)
    assert np.abs(manifold_risk_grad(p, 0.0, 0.0)).max() > 1e-3  # the origin is no zero
    assert np.abs(manifold_risk_grad(p, *saddle)).max() < 1e-14
    sep = separatrix(p)
    assert np.min(np.abs(sep - saddle).max(axis=1)) == 0.0  # through the saddle itself
    assert np.abs(sep).max() > 0.9
    far = sep[np.argmin(np.abs(np.abs(sep[:, 0] - saddle[0]) - 0.3))]  # 0.3 from it in kappa
    closest = []
    for dk in (0.0, 0.02, -0.02):  # on the curve, and just off it on either side
        res = manifold_flow(p, float(far[0] + dk), float(far[1]), 200.0, dense_output=False)
        path = np.stack([res.kappa, res.nu], axis=1)
        closest.append(np.min(np.abs(path - saddle).max(axis=1)))
    # the run from the curve comes back to the saddle (1.4e-6 measured) before rounding
    # carries it off; runs 0.02 off it pass the saddle 100 times further away
    assert closest[0] < 1e-4 and min(closest[1:]) > 100 * closest[0], closest
    r = convergence_time(p, [1e-3, 1e-5, 1e-7])
    assert abs(r.slope * r.mu - 1) < 0.02


def test_a_model_without_an_interior_saddle_has_no_separatrix():
    from slr_theory.landscape import separatrix

    with pytest.raises(ValueError, match=r"no critical point inside the square .* no separatrix"):
        separatrix(Params.paper().replace(attention="softmax"))


@pytest.fixture(scope="module")
def twelve_basins():
    from slr_theory.landscape import basins

    return basins(Params.paper(lam=0.1), 12, alpha=4e-3, steps=5000, max_steps=10_000, rng=1)


def test_the_off_manifold_figure_promises_dashes_only_where_it_draws_them(twelve_basins):
    """The title promised "dashed: each minimum's distance to M" where no minimum was off
    M (softmax at lam = 0.1); the unconverged runs are labelled with the budget."""
    import dataclasses

    from slr_theory.plotting import off_manifold_figure

    b = twelve_basins
    fig = off_manifold_figure(b)
    ax = fig.axes[0]
    off_m = [j for j in range(len(b.names)) if np.any(b.minima[j][2:]) and np.any(b.label == j)]
    dashes = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert len(dashes) == len(off_m) > 0 and "dashed" in ax.get_title()
    if np.any(b.label < 0):
        assert any(f"within the budget of {b.max_steps} steps" in t.get_text()
                   for t in fig.legends[0].get_texts())  # fmt: skip
    on_m = dataclasses.replace(b, minima=b.minima * np.array([1, 1, 0, 0, 0]))
    assert "dashed" not in off_manifold_figure(on_m).axes[0].get_title()


def test_the_off_manifold_figure_says_why_a_line_ends_before_the_budget(twelve_basins):
    """At lam = 0.5 and 0.9 every run of the report stopped after 40 000 to 80 000 of its
    200 000 steps, back where it stood a round before (a cycle of the PGD map, the step
    being unstable at the minima), and the figure said "each stops when at a minimum" and
    "at no minimum within the budget". The stopped runs are now their own group, with
    the steps after which they stopped, and the title names the rule that stopped them."""
    import dataclasses

    from matplotlib.colors import to_hex

    from slr_theory.plotting import off_manifold_figure

    b = twelve_basins
    assert "back where" not in off_manifold_figure(b).axes[0].get_title()  # none stopped
    stop, run = np.array([0, 3, 7]), np.array([1, 4])  # as if these stopped, those ran on
    label, stalled, steps_run = b.label.copy(), np.zeros(b.n, dtype=bool), b.steps_run.copy()
    label[np.r_[stop, run]] = -1
    stalled[stop] = True
    steps_run[stop] = [5000, 10_000, 5000]
    fig = off_manifold_figure(
        dataclasses.replace(b, label=label, stalled=stalled, steps_run=steps_run)
    )
    assert f"or back where it stood {b.steps} steps before" in fig.axes[0].get_title()
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    stopped = [t for t in texts if "stopped after" in t]
    assert len(stopped) == 1 and stopped[0].startswith(f"3 of {b.n} runs at no minimum")
    assert f"stopped after 5000 to 10000 steps: back where they stood {b.steps}" in stopped[0]
    budget = [t for t in texts if "within the budget" in t]
    ran_on = int(np.sum((label < 0) & ~stalled))  # these two and the run's own
    assert ran_on >= 2 and len(budget) == 1 and budget[0].startswith(f"{ran_on} of {b.n} runs")
    handles = fig.legends[0].legend_handles
    colour = {t: to_hex(h.get_color()) for t, h in zip(texts, handles, strict=True)}
    assert colour[stopped[0]] != colour[budget[0]]  # two end states, two colours


def test_arrival_times_that_differ_by_less_than_a_hundredth_of_a_decade_are_one_time():
    """The report's portrait at lam = 0.5: every cell's time is 10^28.962974 to within
    2e-6 decades (all of it spent on the plateau), resolved by the fates' errors. The
    layer once drew contours every 1e-6 decades labelled 10^28.962974; now the legend
    gives the one time, and real spreads still get contours."""
    from types import SimpleNamespace

    import matplotlib.pyplot as plt

    from slr_theory import plotting

    edges = np.linspace(-1, 1, 9)
    rng = np.random.default_rng(0)
    for spread, contours in ((2e-6, False), (3.0, True)):
        t = 10.0 ** (28.962974 + spread * rng.uniform(size=(8, 8)))
        data = SimpleNamespace(
            basin_time=t, basin_time_error=np.full(t.shape, 1e-15), basin_grid=None,
            basin_edges=edges,
        )  # fmt: skip
        fig, ax = plt.subplots()
        plotting.manifold._arrival_layer(ax, data)
        label = ax.get_legend_handles_labels()[1][0]
        plt.close(fig)
        if contours:
            assert label.startswith("flow time to the minimum on M ($10^x$; every")
        else:
            assert label == "flow time to the minimum on M: 10^28.96 from every cell", label


def test_an_ensemble_prints_as_its_tables_not_its_arrays():
    """``repr`` of a Basins ensemble (and of its Fates) is the notebook's table as text: a
    line per minimum, a few lines in all, whatever the number of runs."""
    from slr_theory.landscape import basins

    b = basins(Params.paper(), 8, alpha=4e-3, steps=2000, rng=0)
    text = repr(b)
    lines = text.splitlines()
    assert lines[0].startswith("Basins: 8 PGD runs at α = 0.004")
    assert any(line.startswith("Fates: 8 runs") for line in lines)
    assert len(lines) <= 4 + len(b.names) + 3 + len(b.fates.names)
    assert "array(" not in text
