"""slr_theory.study: the report's one computation, its saved form, and findings built from it."""

import copy
import dataclasses
import json
import re

import numpy as np
import pytest

from slr_theory import Params, critical_points
from slr_theory.critical import describe
from slr_theory.landscape import AT_DISTANCE, AT_GRADIENT, basins
from slr_theory.results import to_plain
from slr_theory.study import SCHEMA, Event, Study, findings


def test_save_and_load_give_the_same_study(small_study, tmp_path):
    path = small_study.save(tmp_path / "results.json")
    back = Study.load(path)
    assert to_plain(back) == to_plain(small_study)
    assert back.params == small_study.params
    assert isinstance(back.basins.label, np.ndarray) and back.basins.label.dtype.kind == "i"
    assert back.manifold_invariant is True and back.manifold_proved is True
    data = json.loads(path.read_text())
    for key in ("manifold_invariant", "manifold_proved"):  # results saved before them
        del data[key]
    path.write_text(json.dumps(data))
    old = Study.load(path)
    assert old.manifold_invariant is True and old.manifold_proved is True


def test_the_schema_holds_what_the_report_promises(small_study, tmp_path):
    data = json.loads(small_study.save(tmp_path / "r.json").read_text())
    assert data["schema"] == SCHEMA
    assert set(data["params"]) == {
        "d",
        "L",
        "lam",
        "gamma",
        "eps",
        "s",
        "nonlinearity",
        "attention",
    }
    assert data["params"]["nonlinearity"] == "erf"
    assert data["params"]["attention"] == "pointwise"
    for q in data["points"]:
        assert {"overlaps", "risk", "index", "kind", "global_minimum"} <= set(q)
        assert len(q["overlaps"]) == 5
    assert {"lower", "upper"} <= set(data["lipschitz"])
    assert all({"lam", "type", "branch"} <= set(e) for e in data["events"])
    assert {"fractions", "stderr", "label", "distance", "gradient"} <= set(data["basins"])
    assert data["findings"] == small_study.findings and len(data["findings"]) >= 4
    # a file written before s, nonlinearity and attention existed (no "s", events without
    # "other") still loads: the paper's model
    del data["params"]["s"]
    del data["params"]["nonlinearity"]
    del data["params"]["attention"]
    for e in data["events"]:
        e.pop("other", None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    back = Study.load(old)
    assert back.params.s == 1 and back.params.nonlinearity == "erf"
    assert back.params == small_study.params
    assert all(e.other is None for e in back.events)


def test_load_refuses_what_is_not_a_study(tmp_path):
    bad = tmp_path / "results.json"
    bad.write_text("not json")
    with pytest.raises(ValueError, match="not JSON"):
        Study.load(bad)
    bad.write_text(json.dumps({"schema": SCHEMA + 1}))
    with pytest.raises(ValueError, match="schema"):
        Study.load(bad)
    bad.write_text(json.dumps({"schema": SCHEMA, "params": {}}))
    with pytest.raises(ValueError, match=r"field `params`: .*missing"):
        Study.load(bad)


def test_the_points_agree_with_an_independent_search(small_study):
    """Another seed of the search finds the same points, kinds and global minimum."""
    other = critical_points(small_study.params, rng=small_study.seed + 1)
    assert len(other) == len(small_study.points)
    best = min(other, key=lambda q: q.risk)
    [glob] = [q for q in small_study.points if q.global_minimum]
    assert abs(glob.risk - best.risk) <= 1e-12 * abs(best.risk)
    assert glob.index == 0


def test_every_number_in_the_findings_comes_from_the_study(small_study):
    """Change the study's numbers and the sentences change with them."""
    s = copy.deepcopy(small_study)
    text = "\n".join(findings(s))
    [glob] = [q for q in s.points if q.global_minimum]
    assert f"{glob.risk:.6g}" in text
    assert f"{s.lipschitz.lower:.4g} ≤ Lip ≤ {s.lipschitz.upper:.4g}" in text
    assert f"Of {s.basins.n} PGD runs" in text
    for e in s.events:
        assert e.lam_phrase in text  # "at λ = x", or "between λ = a and b" for a bracket
    # move the optimum's risk below everything: it becomes the global minimum
    opt = next(q for q in s.points if q.name.startswith("(k*, v*)"))
    for q in s.points:
        q.global_minimum = False
    opt.global_minimum, opt.risk = True, min(q.risk for q in s.points) - 0.125
    text2 = "\n".join(findings(s))
    assert "and the global minimum" in text2 and f"{opt.risk:.6g}" in text2
    # a minimum the PGD map cannot hold at this step: the findings say which step would
    minimum = next(q for q in s.points if q.index == 0)
    minimum.map_conclusion, minimum.largest_eigenvalue = "step-size instability", 2345.5
    text_unstable = "\n".join(findings(s))
    assert "2346" in text_unstable and f"{2 / 2345.5:.3g}" in text_unstable
    # a degenerate minimum whose map is only non-hyperbolic (ReLU's dead corners): its
    # largest eigenvalue 1.08 is not "above 2/alpha = 500", and no such sentence is written
    minimum.map_conclusion, minimum.largest_eigenvalue = "non-hyperbolic", 1.08
    assert "unstable even at a minimum" not in "\n".join(findings(s))
    # followed to their end: each end with its count and median arrival, from the fates
    f = s.basins.fates
    text_f = "\n".join(findings(s))
    for j, name in enumerate(f.names):
        if f.minimum[j] and np.any(f.label == j):
            count, q = int(np.sum(f.label == j)), f.quantiles([0.5], j)[0]
            assert f"{count} reach {name} (median 10^{q:.1f} steps)" in text_f
    f.steps[:] = f.steps * 10.0**3  # later arrivals: the sentence moves with them
    text_later = "\n".join(findings(s))
    assert f"(median 10^{f.quantiles([0.5], int(f.label[0]))[0]:.1f} steps)" in text_later
    # every run unconverged within the budget: the fates say where they are going
    s.basins.label[:] = -1
    assert f"A budget of {s.basins.max_steps} steps sees none of them" in "\n".join(findings(s))
    s.basins = dataclasses.replace(s.basins, fates=None)  # a study saved before the fates
    # every run unconverged: the findings say so, with the steps and distances
    s.basins.label[:] = -1
    s.basins.stalled[:] = True
    text3 = "\n".join(findings(s))
    assert f"{s.basins.n} runs are **not converged**" in text3
    assert f"within the budget of {s.basins.max_steps} steps (0 still moving at it" in text3
    assert "no longer move" in text3 and "none of the" in text3
    # the step condition: each of its three outcomes is said with the bounds' own numbers
    lip = s.lipschitz
    for condition, said in (
        ("holds", f"`α·Lip ≤ {lip.alpha * lip.upper:.3g}`"),
        ("fails", f"it would hold for `α < 1/{lip.upper:.4g} = {1.0 / lip.upper:.2g}`"),
        ("undecided", f"and at most {lip.alpha * lip.upper:.3g}"),
    ):
        lip.condition = condition
        text4 = "\n".join(findings(s))
        assert said in text4 and f"`α < 1/Lip` {condition}" in text4
        assert ("does not guarantee" in text4) == (condition != "holds")


def test_findings_answer_the_questions(small_study):
    text = "\n".join(small_study.findings)
    for heading in (
        "Critical points",
        "global minimum",
        "Where runs end",
        "center-stable manifold",
        "How λ changes the picture",
    ):
        assert heading in text
    assert not re.search(r"\b0 of \d+ (are|converged)", text)  # never "0 of n", say none


def test_events_are_listed_once_and_attributed(small_study):
    keys = [(e.type, round(e.lam, 5), e.detail) for e in small_study.events]
    assert len(keys) == len(set(keys))
    for e in small_study.events:
        assert e.branch_name == small_study.branch_names[e.branch]
        if e.type in ("index change", "fold") or (e.type == "meets" and e.width <= 1e-6):
            assert e.width <= 1e-6  # bisection (1e-7), extrapolation or Brent (about 1e-11)
        elif e.type == "meets":  # a branch that ran into one followed before: a grid bracket
            assert e.lam_phrase.startswith("between λ = "), e
    names = small_study.branch_names
    assert any(n.startswith("(k*, v*), the optimum") for n in names)


def test_basins_tell_converged_from_not_converged():
    """With a step far too large for the landscape no run can settle: all are unconverged."""
    p = Params(d=6, L=4, lam=0.3, gamma=0.7, eps=0.1)
    pts = critical_points(p, rng=0)
    good = basins(p, 16, alpha=0.02, steps=2000, max_steps=40_000, rng=1, points=pts)
    at = good.label >= 0
    assert at.all() and np.all(good.distance < AT_DISTANCE) and np.all(good.gradient < AT_GRADIENT)
    assert abs(good.fractions.sum() - 1) < 1e-12
    # the ensemble is one: its traces are the runs it classified
    assert good.trace_distance.shape == (good.trace_step.size, 16)
    last = [np.flatnonzero(np.isfinite(good.trace_distance[:, i]))[-1] for i in range(16)]
    assert all(good.trace_step[j] == good.steps_run[i] for i, j in enumerate(last))
    final_dist = np.sqrt(np.sum(good.final[:, 2:] ** 2, axis=1))
    assert np.allclose([good.trace_distance[j, i] for i, j in enumerate(last)], final_dist)
    bad = basins(p, 8, alpha=5.0, steps=200, max_steps=1000, rng=1, points=pts)
    assert (bad.label < 0).all() and bad.unconverged == 8
    assert np.all(~(bad.gradient < AT_GRADIENT) | ~(bad.distance < AT_DISTANCE))


def test_describe_names_points_by_their_structure():
    assert describe([1, 1, 0, 0, 0]) == "(k*, v*), the optimum"
    assert describe([-1, 1, 0, 0, 0]) == "the corner (−k*, v*)"
    assert describe([0, 0, 0, 0, 0]).startswith("the origin")
    assert describe([0, 0, 1, 1, 0]) == "k = v*, v = k*"
    with pytest.raises(ValueError, match="overlaps"):
        describe([1, 2, 3])


def test_a_pitchfork_is_told_once_from_its_two_locations(small_study):
    """The symmetric branch's index change and the meeting of the branch born there are one
    event in the findings when they agree within their widths, two when they do not; every
    number is the events' own."""
    s = copy.deepcopy(small_study)
    s.branch_names = [
        "(k*, v*), the optimum (minimum of index 0 at λ = 0.3)",
        "the minimum off M at (0.30, 0.95, 0.32, -0.95, -0.81) (minimum of index 0 at λ = 0.3)",
    ]
    change = Event(0.89243793, "index change", 0, s.branch_names[0], "index 0 → 1", 8e-8)
    meet = Event(
        0.8924379482417,
        "meets",
        1,
        s.branch_names[1],
        "is born at (k*, v*), the optimum (a pitchfork), with index 0",
        9e-14,
        0,
    )
    s.events = [change, meet]
    [text] = [f for f in findings(s) if "How λ changes" in f]
    assert text.count("a pitchfork") == 1 and "is born there" in text
    assert change.lam_text in text and meet.lam_text in text
    assert "the minimum off M at (0.30, 0.95, 0.32, -0.95, -0.81) is born there" in text
    s.events = [
        change,
        Event(
            0.8931,
            *[
                getattr(meet, f)
                for f in ("type", "branch", "branch_name", "detail", "width", "other")
            ],
        ),
    ]
    [apart] = [f for f in findings(s) if "How λ changes" in f]
    assert "is born there" not in apart and "is born at (k*, v*)" in apart
    # the distance of the report's temperature to the nearest event (a report at 0.9
    # never said it sat 0.0076 above the bifurcation at 0.8924)
    s.events = [change]
    s.params = s.params.replace(lam=0.9)
    [near] = [f for f in findings(s) if "How λ changes" in f]
    assert (
        f"The report's λ = 0.9 is {0.9 - 0.89243793:.2g} above the nearest of them "
        f"({(0.9 - 0.89243793) / 0.89243793:.1%} of its λ): at λ = {change.lam_text}"
    ) in near
    s.params = s.params.replace(lam=0.89243793)
    [at] = [f for f in findings(s) if "How λ changes" in f]
    assert "is at an event, within its width" in at


def test_the_atlas_finding_names_the_window_where_the_optimum_is_global():
    """On the shipped atlas (docs/figures/atlas.csv), the sentence gives the window of the
    grid where (k*, v*) is global, from the rows, and the counts of each regime."""
    import pathlib

    from slr_theory.study import atlas_finding
    from slr_theory.survey import read_atlas

    a = read_atlas(pathlib.Path(__file__).parents[1] / "docs" / "figures" / "atlas.csv")
    text = atlas_finding(a)
    glob = sorted({r["lam"] for r in a.rows if r["optimum_is_global"]})
    assert f"global for λ from {glob[0]:.3g} to {glob[-1]:.3g}" in text
    counts = [
        sum(r["optimum_is_global"] for r in a.rows),
        sum(r["optimum_index"] == 0 and not r["optimum_is_global"] for r in a.rows),
        sum(r["optimum_index"] > 0 for r in a.rows),
    ]
    assert (
        f"the global minimum in {counts[0]}, a minimum that is not global in {counts[1]}, "
        f"a saddle in {counts[2]}." in text
    )
    # a grid where it is global at two separate temperatures lists them
    for r in a.rows:
        r["optimum_is_global"] = r["lam"] in (a.axes["lam"][0], a.axes["lam"][2])
    assert "global at λ = 0.02, 0.0632" in atlas_finding(a)


@pytest.fixture(scope="module")
def around_the_paper():
    """The paper's parameters, the search's points there, and a continuation from 0.07
    to 0.13 on a grid that misses the report's ``lambda = 0.1``."""
    from slr_theory.landscape import continuation

    p = Params.paper(lam=0.1)
    found = critical_points(p)
    c = continuation(
        p, (0.07, 0.13), steps=2, seeds=2, points=critical_points(p.replace(lam=0.07))
    )
    return p, found, c


def test_a_branch_is_named_at_the_reports_temperature_as_the_search_names_its_point(
    around_the_paper,
):
    """The off-M minimum was "v·k* = 0.630" in sections 1 and 4 and "0.678" in the
    continuation, which named its branches at the grid's nearest temperature. A branch
    through the report's lambda is now followed to it and named as the search names the
    point there."""
    from slr_theory.study.compute import _branch_names

    p, found, c = around_the_paper
    assert not np.any(np.isclose(np.concatenate([b.lam for b in c.branches]), 0.1))
    names = _branch_names(c, p, found)
    off_m = next(q for q in found if q.index == 0 and not q.on_manifold)
    want = f"{describe(off_m.overlaps)} (minimum of index 0 at λ = 0.1)"
    assert describe(off_m.overlaps) == "k = v*, v·k* = 0.630" and want in names
    covering = [n for b, n in zip(c.branches, names, strict=True) if b.lam[0] <= 0.1 <= b.lam[-1]]
    assert covering and all(n.endswith("at λ = 0.1)") for n in covering)


def test_a_branch_is_never_named_from_the_end_where_it_meets_another(around_the_paper):
    """At the report's ``lambda = 0.9`` the minimum off M born from the optimum at
    ``lambda = 0.89`` was named "(k*, v*), the optimum (saddle of index 1 ...)": its grid
    point nearest 0.9 was its first, where it meets the optimum's branch, and the Newton
    polish from there went to the optimum. Here the off-M minimum's branch is given such
    an end (the optimum's point at ``lambda = 0.101``, nearer 0.1 than any grid point):
    it keeps the off-M minimum's name, and the branch that ends there is not renamed."""
    from slr_theory.study.compute import _branch_names

    p, found, c = around_the_paper
    names = _branch_names(c, p, found)
    off_m = next(q for q in found if q.index == 0 and not q.on_manifold)
    optimum = next(q for q in found if np.allclose(q.overlaps, [1, 1, 0, 0, 0]))
    j = next(i for i, n in enumerate(names) if n.startswith(describe(off_m.overlaps)))
    b = c.branches[j]
    assert b.end == "range" and b.lam[-2] < 0.1 < 0.101 < b.lam[-1]
    met = dataclasses.replace(
        b,
        lam=np.concatenate([b.lam[:-1], [0.101]]),
        overlaps=np.concatenate([b.overlaps[:-1], optimum.overlaps[None]]),
        risk=np.concatenate([b.risk[:-1], [optimum.risk]]),
        index=np.concatenate([b.index[:-1], [optimum.index]]),
        kind=[*b.kind[:-1], optimum.kind],
        end="meets",
        vectors=np.concatenate([b.vectors[:-1], optimum.vectors[None]]),
    )
    assert np.argmin(np.abs(np.log(met.lam / 0.1))) == met.lam.size - 1  # the end is nearest
    branches = [*c.branches[:j], met, *c.branches[j + 1 :]]
    again = _branch_names(dataclasses.replace(c, branches=branches), p, found)
    assert again[j] == names[j] and "optimum" not in again[j]
    assert again == names
