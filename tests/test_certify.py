"""The census: what it proves agrees with the search's independent float classification,
its certificate survives a round trip, the checker re-verifies it from the boxes alone
and fails on every kind of tampering, and the pieces (inertia, the bisection tree, the
Krawczyk test, the strata conditions) do what they claim."""

import gzip
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from slr_theory import Params, critical, critical_points, engine
from slr_theory.interval import Interval

pytest.importorskip("flint")
from slr_theory import certify as C
from slr_theory.certify import (
    Census,
    certify_critical_points,
    check_certificate,
    inertia,
    strata_conditions,
)

PAPER = Params.paper()


@pytest.fixture(scope="module")
def census():
    # the r = 4 part completes in 8919 boxes at the paper's parameters; the strata are
    # left open by this budget (the census says so)
    return certify_critical_points(PAPER, max_boxes=10_000, starts=16)


@pytest.fixture(scope="module")
def saved(census, tmp_path_factory):
    path = tmp_path_factory.mktemp("census") / "census.json.gz"
    census.save(path)
    return path


def test_every_point_of_the_search_is_proved_with_the_same_index(census):
    """The search classifies with float eigenvalues of the full Riemannian Hessian; the
    census with rigorous inertia of the chart Hessian and the out-of-span block."""
    search = critical_points(PAPER, starts=16, rng=0)
    assert census.search["unproved"] == []
    assert len(census.points) == len(search) == census.search["found"]
    for q in search:
        match = [
            c
            for c in census.points
            if any(
                np.max(np.abs(g * np.asarray(q.overlaps) - c.overlaps)) < 1e-6
                for g in C.symmetries(PAPER)
            )
        ]
        assert len(match) == 1, q.overlaps
        c = match[0]
        assert (c.index, c.nullity) == (q.index, q.nullity), (q.overlaps, c.kind, q.kind)
        assert c.span_dim == q.span_dim
        assert np.all(np.array(c.overlaps_lo) <= c.overlaps) and np.all(
            c.overlaps <= np.array(c.overlaps_hi)
        )


def test_the_interior_part_is_complete_and_holds_only_the_origin(census):
    assert census.part_complete("overlaps")
    assert not census.part_complete("strata")
    assert not census.complete
    interior = [q for q in census.points if q.span_dim == 4]
    assert len(interior) == 1 and np.max(np.abs(interior[0].overlaps)) < 1e-6
    assert interior[0].index == 2 and interior[0].nullity == 2 * PAPER.d - 7
    text = census.summary()
    assert "= 4: complete by proof" in text and "<= 3: NOT proved complete" in text


def test_the_certificate_round_trips_and_checks(census, saved):
    again = Census.load(saved)
    assert again.points == census.points
    assert again.parts["overlaps"]["paths"] == census.parts["overlaps"]["paths"]
    result = check_certificate(saved)
    assert result.ok and not result.complete and not result.failures
    assert result.boxes == sum(len(p["paths"]) for p in census.parts.values())


def _tampered(saved, change):
    data = json.loads(gzip.open(saved, "rt").read())
    change(data)
    return Census.from_dict(data)


def _first(data, part, verdict):
    return data["parts"][part]["verdicts"].index(verdict)


@pytest.mark.parametrize(
    "change",
    [
        # a box claimed excluded moved to where nothing excludes it
        lambda d: d["parts"]["overlaps"]["paths"].__setitem__(
            _first(d, "overlaps", C.EXCLUDED),
            d["parts"]["overlaps"]["paths"][_first(d, "overlaps", C.EXCLUDED)][:-1],
        ),
        # an open box relabelled excluded
        lambda d: d["parts"]["strata"]["verdicts"].__setitem__(
            _first(d, "strata", C.UNRESOLVED), C.EXCLUDED
        ),
        # a Krawczyk box moved off its zero
        lambda d: d["parts"]["overlaps"]["zeros"][0].__setitem__(
            "zlo",
            [
                float(x + 0.3).hex()
                for x in map(float.fromhex, d["parts"]["overlaps"]["zeros"][0]["zlo"])
            ],
        ),
        # a proved point dropped
        lambda d: d["points"].pop(0),
        # an index changed
        lambda d: d["points"][0].__setitem__("index", 5),
        # completeness claimed
        lambda d: d.__setitem__("complete", True),
        # a box removed (the leaves no longer cover the domain)
        lambda d: [d["parts"]["overlaps"][k].pop(0) for k in ("paths", "verdicts", "point")],
        # a path that is not a list of halvings: a letter, a number
        lambda d: d["parts"]["strata"]["paths"].__setitem__(
            0, d["parts"]["strata"]["paths"][0] + "x"
        ),
        lambda d: d["parts"]["strata"]["paths"].__setitem__(0, 7),
    ],
    ids=[
        "moved-box",
        "open-as-excluded",
        "moved-zero",
        "dropped-point",
        "index",
        "complete",
        "missing-box",
        "letter-in-path",
        "number-as-path",
    ],
)
def test_the_checker_fails_on_a_tampered_certificate(saved, change):
    result = check_certificate(_tampered(saved, change))
    assert not result.ok and result.failures


def test_a_model_without_rigorous_enclosures_and_bad_budgets_are_refused():
    with pytest.raises(ValueError, match="rigorous enclosures"):
        certify_critical_points(PAPER.replace(nonlinearity="tanh"), max_boxes=10, starts=0)
    with pytest.raises(ValueError, match="min_width"):
        certify_critical_points(PAPER, min_width=0.0)
    with pytest.raises(ValueError, match="max_boxes"):
        certify_critical_points(PAPER, max_boxes=1.5)
    with pytest.raises(ValueError, match="not a census"):
        Census.from_dict({"format": "something else"})


def test_inertia_counts_signs_and_refuses_what_straddles_zero():
    rng = np.random.default_rng(1)
    for _ in range(20):
        Q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
        w = rng.choice([-1.0, 1.0], 5) * rng.uniform(0.5, 3.0, 5)
        M = Q @ np.diag(w) @ Q.T
        E = [[Interval(M[i, j] - 1e-9, M[i, j] + 1e-9) for j in range(5)] for i in range(5)]
        assert inertia(E) == (int(np.sum(w < 0)), int(np.sum(w > 0)))
    E = [
        [Interval(-0.1, 0.1) if i == j == 0 else Interval(float(i == j)) for j in range(2)]
        for i in range(2)
    ]
    assert inertia(E) is None


def test_the_tree_check_accepts_partitions_only():
    assert C._tree_complete(["0", "1"])
    assert C._tree_complete(["00", "01", "1"])  # side 0 split twice
    assert C._tree_complete(["02", "03", "1"])  # then side 1
    assert not C._tree_complete(["0", "3"])  # halves of two different sides
    assert not C._tree_complete(["0", "00", "1"])  # a leaf inside a leaf
    assert not C._tree_complete(["00", "1"])  # a quarter missing
    lo, hi = C.box_of_path([0.0, -1.0], [1.0, 1.0], "03")
    assert lo.tolist() == [0.0, 0.0] and hi.tolist() == [0.5, 1.0]


def _reference_tree_complete(paths):
    """The partition test written plainly: exact Kraft sum, then consecutive sorted paths."""
    from fractions import Fraction
    from itertools import pairwise

    if not paths or sum(Fraction(1, 2 ** len(p)) for p in paths) != 1:
        return False
    for a, b in pairwise(sorted(paths)):
        if b.startswith(a):
            return False
        n = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
        if int(a[n]) // 2 != int(b[n]) // 2:
            return False
    return True


def _random_tree(rng, dims, leaves):
    """The leaves of a random bisection tree: split random leaves along random sides."""
    paths = [""]
    while len(paths) < leaves:
        i = int(rng.integers(len(paths)))
        d = int(rng.integers(dims))
        p = paths.pop(i)
        paths += [p + str(2 * d), p + str(2 * d + 1)]
    return paths


@given(seed=st.integers(0, 2**32 - 1), leaves=st.integers(1, 60), dims=st.integers(1, 5))
def test_the_vectorised_tree_and_boxes_are_the_plain_ones(seed, leaves, dims):
    """`_tree_complete` against the plain reference on trees and on trees with one fault
    (a leaf dropped, doubled, or its last half moved to another side); `boxes_of_paths`
    against `box_of_path` path by path."""
    rng = np.random.default_rng(seed)
    paths = _random_tree(rng, dims, leaves)
    assert C._tree_complete(paths) and _reference_tree_complete(paths)
    i = int(rng.integers(len(paths)))
    moved = paths[i][:-1] + str((int(paths[i][-1]) + 2) % (2 * dims)) if paths[i] else "0"
    for faulty in (
        paths[:i] + paths[i + 1 :],
        [*paths, paths[i]],
        [*paths[:i], moved, *paths[i + 1 :]],
    ):
        assert C._tree_complete(faulty) == _reference_tree_complete(faulty)
    lo0, hi0 = -rng.random(dims), rng.random(dims)
    lo, hi = C.boxes_of_paths(lo0, hi0, paths)
    for j, p in enumerate(paths):
        a, b = C.box_of_path(lo0, hi0, p)
        assert np.array_equal(lo[j], a) and np.array_equal(hi[j], b)


def test_krawczyk_proves_the_origin_and_excludes_a_box_without_zero(census):
    space = C.proof_spaces(
        PAPER.model.rigorous_table(PAPER), np.asarray(C.symmetries(PAPER), float)
    )["overlaps"]
    v, klo, khi = C.krawczyk(space, np.full((1, 5), -1e-3), np.full((1, 5), 1e-3))
    assert v[0] == C.UNIQUE and np.all(klo <= 0.0) and np.all(khi >= 0.0)
    v, _l, _h = C.krawczyk(
        space,
        np.array([[0.3, 0.3, 0.1, 0.1, 0.1]]),
        np.array([[0.301, 0.301, 0.101, 0.101, 0.101]]),
    )
    assert v[0] == C.NEWTON_EXCLUDED


def test_the_strata_conditions_vanish_at_the_points_and_not_elsewhere(census):
    """At each point with r <= 3 (from the float engine, independent of the intervals),
    and at a generic boundary point where they do not."""
    for q in census.points:
        if q.span_dim == 4:
            continue
        ov = np.array(q.overlaps)
        R = engine.gradient(PAPER, ov.reshape(5, 1)).ravel()
        conds = strata_conditions([Interval(r) for r in R], [Interval(x) for x in ov])
        scale = 1.0 + np.max(np.abs(R))
        assert max(max(abs(float(c.lo)), abs(float(c.hi))) for c in conds) < 1e-9 * scale, (
            q.overlaps
        )
    k, v = np.array([0.6, 0.0, 0.8]), np.array([0.0, 0.6, 0.8])  # r = 3, not critical
    ov = np.array([k[0], v[1], v[0], k[1], k @ v])
    R = engine.gradient(PAPER, ov.reshape(5, 1)).ravel()
    conds = strata_conditions([Interval(r) for r in R], [Interval(x) for x in ov])
    assert max(max(abs(float(c.lo)), abs(float(c.hi))) for c in conds) > 1e-3


def test_the_command_checks_a_saved_certificate_and_fails_on_a_tampered_one(
    saved, tmp_path, capsys
):
    from slr_theory import cli

    assert cli.main(["certify", "--check", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "checked" in out and "not proved complete" in out
    bad = _tampered(saved, lambda d: d["points"][0].__setitem__("index", 5))
    path = tmp_path / "bad.json.gz"
    bad.save(path)
    assert cli.main(["certify", "--check", str(path)]) == 1
    assert "FAILED" in capsys.readouterr().out
    assert cli.main(["certify", "--check", str(tmp_path / "none.json.gz")]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    junk = tmp_path / "junk.json.gz"
    junk.write_bytes(b"not gzip")
    assert cli.main(["certify", "--check", str(junk)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--check" in err


def test_the_mean_value_form_excludes_only_boxes_where_a_condition_keeps_its_sign():
    """Boxes the mean-value form closes: at 200 points sampled in each, some condition
    (from the float engine) has one sign throughout."""
    table = PAPER.model.rigorous_table(PAPER)
    strata = C.proof_spaces(table, np.asarray(C.symmetries(PAPER), float))["strata"]
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((2, 3, 400))
    k, v = x / np.linalg.norm(x, axis=0), y / np.linalg.norm(y, axis=0)
    c = np.array([k[0], v[1], v[0], k[1], (k * v).sum(axis=0)]).T
    lo, hi = c - 0.01, c + 0.01
    closed, smear = strata._mean_value_excludes(lo, hi)
    assert smear.shape == (len(c), 5) and np.all(smear >= 0)  # where to split: |slope| x width
    assert 20 <= closed.sum() < len(c)  # it decides some boxes, not all
    for i in np.flatnonzero(closed)[:20]:
        pts = lo[i][:, None] + rng.uniform(size=(5, 200)) * (hi[i] - lo[i])[:, None]
        R = engine.gradient(PAPER, pts).T
        conds = strata_conditions([Interval(r) for r in R], [Interval(p) for p in pts])
        assert any(np.all(e.lo > 0) or np.all(e.hi < 0) for e in conds), i


@pytest.mark.slow
def test_the_census_at_the_paper_parameters_is_complete_and_checks(tmp_path):
    """lam = 0.1: every box closes (5.4e5 in the strata, a minute), the list is
    the search's 12 points, and the checker re-verifies it all (30 s)."""
    census = certify_critical_points(PAPER)
    assert census.complete and len(census.points) == 12
    result = check_certificate(census.save(tmp_path / "census.json.gz"))
    assert result.ok and result.complete


def test_a_strata_zero_claimed_infeasible_fails_the_check(saved):
    """Only the interior part can drop a zero as infeasible (its Gram determinant's
    enclosure at most 0); a proved point of the strata cannot be dropped."""
    bad = _tampered(
        saved, lambda d: d["parts"]["strata"]["zeros"][0].__setitem__("feasible", False)
    )
    result = check_certificate(bad)
    assert not result.ok and any("infeasible" in f for f in result.failures)


P9 = PAPER.replace(lam=0.9)


def _charts_group_faces(params):
    table = params.model.rigorous_table(params)
    group = np.asarray(C.symmetries(params), dtype=float)
    charts = C.proof_spaces(table, group)["charts"]
    return charts, group, C.faces(charts, group)


def test_each_face_is_fixed_by_a_symmetry_and_the_gradient_normal_to_it_vanishes():
    """What the tube test rests on, checked two ways at 20 points of every face: the
    vectors are fixed by a sign change of the group (and the risk is unchanged by it, in
    the float engine), and the chart gradient's normal components vanish there: their
    rigorous enclosure holds 0, and a central difference of the float risk along them is
    of the size of its own error while the tangent one is not."""
    charts, group, faces = _charts_group_faces(PAPER)
    signs = [s for s in C._group_signs(C._vector_generators(group)) if np.any(s < 0)]
    assert len(faces) >= 8
    rng = np.random.default_rng(1)
    for f in faces:
        chart = charts[f.chart]
        w = np.zeros((4, 20))
        w[list(f.tangent)] = rng.uniform(-0.9, 0.9, (len(f.tangent), 20))
        w[list(f.normal)] = np.array(f.values)[:, None]
        x = np.array([q.mid for q in chart.vectors([Interval(r) for r in w])])
        fixing = [s for s in signs if np.allclose(s[:, None] * x, x, atol=1e-15)]
        assert fixing, f
        risk = lambda y: engine.components(PAPER, np.array(C.vector_overlaps(y))).sum(axis=0)  # noqa: E731
        assert np.allclose(risk(fixing[0][:, None] * x), risk(x), rtol=1e-14, atol=0)
        g, _J = chart.system([Interval(r) for r in w], need_jacobian=False)
        h = 1e-5
        for i in f.normal:
            assert np.all(g[i].contains_zero())
            up, down = w.copy(), w.copy()
            up[i] += h
            down[i] -= h
            fd = (
                risk(np.array([q.mid for q in chart.vectors([Interval(r) for r in up])]))
                - risk(np.array([q.mid for q in chart.vectors([Interval(r) for r in down])]))
            ) / (2 * h)
            assert np.all(np.abs(fd) < 1e-5), (f, i, fd)


@pytest.mark.parametrize("nu", [1.0, -1.0])
def test_the_corners_at_lam_09_are_proved_on_a_face_with_the_float_index(nu):
    """At the corner ``k = k*, v = +-v*`` one curvature is ``-R_kappa ~ 1e-54`` (``1e-38``
    for ``v = -v*``): no box a double can hold passes the Krawczyk test, but on the face
    of the symmetry ``(eta, theta, rho) -> -(eta, theta, rho)`` one equation is left, and
    its enclosure has that sign. The index is the float classification's."""
    charts, group, faces = _charts_group_faces(P9)
    chart = charts["vectors++"]
    w = C._to_chart_point(chart, group, np.array([1.0, 0.0, 0.0]), np.array([0.0, nu, 0.0]))
    near = C._newton(chart, w)
    assert not np.all(np.isfinite(near)) or C._verify_many(chart, near[None])[0] is None
    z = C._verify_face(chart, w, faces)
    assert z is not None
    assert np.all(z["zlo"] < z["klo"]) and np.all(z["khi"] < z["zhi"])
    got = C._point_of(chart, P9, {**z, "chart": chart.name}, group)
    ref = critical.classify(P9, np.array([1.0, 0, 0, 0]), np.array([0, nu, 0, 0]))
    assert got[2] == 2 and (got[3], got[4]) == (ref.index, ref.nullity)
    assert np.all(np.array(got[0]) <= [1, nu, 0, 0, 0]) and np.all(
        [1, nu, 0, 0, 0] <= np.array(got[1])
    )


def test_the_tube_test_counts_zero_one_or_refuses():
    """At ``lam = 0.1`` on the face ``v = v*``, ``k2 = 0``: a box about the corner holds one
    critical point, a box on the face away from it none, a box too wide for the normal
    Jacobian's enclosure to be invertible is undecided, and so is a box that misses the
    face."""
    charts, _group, _faces = _charts_group_faces(PAPER)
    chart = charts["vectors++"]
    face = C.Face("vectors++", (1, 2, 3), (0.0, 0.0, 1.0))
    boxes = [(1.0, 1e-5, 1e-5), (0.5, 1e-3, 1e-4), (0.5, 1e-3, 0.1)]
    zlo = np.array([[s - a, -b, -b, 1 - b] for s, a, b in boxes] + [[0.499, 1e-6, -1e-5, 0.99]])
    zhi = np.array([[s + a, b, b, 1 + b] for s, a, b in boxes] + [[0.501, 1e-5, 1e-5, 1.01]])
    count, klo, khi = C.tube_test(chart, face, zlo, zhi)
    assert count.tolist() == [1, 0, -1, -1]
    assert klo[0, 0] <= 1.0 <= khi[0, 0] and khi[0, 0] - klo[0, 0] < 2e-5


def _with_face_zero(data, change=None):
    """Add the optimum proved on its face as one more zero of the strata (and of its point)."""
    charts, group, faces = _charts_group_faces(PAPER)
    chart = charts["vectors++"]
    w = C._to_chart_point(chart, group, np.array([1.0, 0, 0]), np.array([0, 1.0, 0]))
    z = C._verify_face(chart, w, faces)
    zeros = data["parts"]["strata"]["zeros"]
    zeros.append(
        {
            **{key: [float(x).hex() for x in z[key]] for key in ("zlo", "zhi", "klo", "khi")},
            "feasible": True,
            "chart": chart.name,
            "face": z["face"],
        }
    )
    point = next(
        p for p in data["points"] if np.allclose(p["overlaps"], [1, 1, 0, 0, 0], atol=1e-6)
    )
    point["zeros"].append(f"strata:{len(zeros) - 1}")
    if change is not None:
        change(zeros[-1])


@pytest.mark.parametrize(
    ("change", "ok"),
    [
        (None, True),
        (lambda z: z["face"].__setitem__("values", [0.0, 0.0, -1.0]), False),  # the box misses it
        (lambda z: z.__setitem__("face", {"normal": [1, 2], "values": [0.0, 0.0]}), False),
    ],
    ids=["as-proved", "other-face", "no-symmetry"],
)
def test_a_zero_proved_on_a_face_checks_and_a_changed_face_fails(saved, change, ok):
    result = check_certificate(_tampered(saved, lambda d: _with_face_zero(d, change)))
    assert result.ok is ok, result.failures
