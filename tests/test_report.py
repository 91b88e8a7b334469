"""slr-theory report: computed once into results.json, drawn from it, atomic, and it explains."""

import copy
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import slr_theory.study as study_module
from slr_theory import Nonlinearity, Params
from slr_theory import report as rep
from slr_theory.cli import main
from slr_theory.output import LOCK_NAME, STAGING_PREFIX


@pytest.fixture
def quick(monkeypatch, small_study):
    """The computation replaced by the session's small study (the drawing is real)."""
    monkeypatch.setattr(study_module, "study", lambda *a, **k: copy.deepcopy(small_study))
    return small_study


@pytest.fixture(scope="module")
def drawn(tmp_path_factory, small_study):
    """One report drawn from the small study, for the tests that start from a drawn
    report: each takes a copy (:func:`_drawn_copy`), so none draws its own."""
    out = tmp_path_factory.mktemp("drawn") / "r"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(study_module, "study", lambda *a, **k: copy.deepcopy(small_study))
        rep.write_report(out)
    return out


def _drawn_copy(drawn: Path, to: Path) -> Path:
    """A copy of the drawn report (its record of what slr-theory wrote included)."""
    import shutil

    shutil.copytree(drawn, to)
    return to


FIGURES = (
    "phase_portrait",
    "arrival_figure",
    "bifurcation_figure",
    "off_manifold_figure",
    "stability_figure",
    "experiment_figure",
    "atlas_figure",
)


def _placeholders(monkeypatch, keep: tuple = ()) -> None:
    """The report's figures but those in `keep` replaced by a placeholder file."""
    import slr_theory.plotting as plotting

    def placeholder(data, path=None, *a, **k):
        Path(path).write_bytes(b"\x89PNG placeholder")

    for name in FIGURES:
        if name not in keep:
            monkeypatch.setattr(plotting, name, placeholder)


@pytest.fixture
def no_figures(monkeypatch):
    """Figures replaced by a placeholder file, for tests of the text and the files alone
    (the figures are drawn for real by `drawn` and the tests that read them)."""
    _placeholders(monkeypatch)


@pytest.fixture
def no_computing(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("computed")

    monkeypatch.setattr(study_module, "study", refuse)


def _leftovers(parent: Path):
    """Staging folders or locks anywhere below `parent` (the marker is meant to stay)."""
    return [
        p
        for p in parent.rglob(".slr-*")
        if p.name.startswith(STAGING_PREFIX) or p.name == LOCK_NAME
    ]


def test_writes_report_and_results_and_refuses_a_non_empty_directory(tmp_path, quick, no_figures):
    out = tmp_path / "r"
    path = rep.write_report(out)
    assert path == out / "report.md" and "## 1. What this shows" in path.read_text()
    assert (out / rep.RESULTS).stat().st_size > 1000
    with pytest.raises(FileExistsError, match="not empty"):
        rep.write_report(out)
    (out / "mine.txt").write_text("keep")
    with pytest.raises(FileExistsError):
        rep.write_report(out)
    assert (out / "mine.txt").read_text() == "keep"
    rep.write_report(out, force=True)  # the earlier report's files are replaced ...
    assert (out / "report.md").exists()
    assert (out / "mine.txt").read_text() == "keep"  # ... and the user's file is kept
    assert not _leftovers(tmp_path)


def test_an_interrupted_report_leaves_nothing_behind(tmp_path, quick, monkeypatch, no_figures):
    real = rep.picture.landscape_section

    def boom(s, dest):
        dest.file("half.png").write_bytes(b"\x89PNG")
        raise KeyboardInterrupt

    monkeypatch.setattr(rep.document, "landscape_section", boom)
    out = tmp_path / "r"
    with pytest.raises(KeyboardInterrupt):
        rep.write_report(out)
    assert not out.exists() and not _leftovers(tmp_path)
    # an existing report survives an interrupted --force rerun (and a redraw), then works
    monkeypatch.setattr(rep.document, "landscape_section", real)
    rep.write_report(out)
    before = (out / "report.md").read_text()
    monkeypatch.setattr(rep.document, "landscape_section", boom)
    with pytest.raises(KeyboardInterrupt):
        rep.write_report(out, force=True)
    with pytest.raises(KeyboardInterrupt):
        rep.redraw_report(out)
    assert (out / "report.md").read_text() == before and not _leftovers(tmp_path)
    assert not (out / "half.png").exists()


def test_bad_out_and_arguments(tmp_path, quick):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="directory"):
        rep.write_report(f)
    with pytest.raises(FileNotFoundError):
        rep.write_report(tmp_path / "missing" / "r")
    with pytest.raises(ValueError, match="seed"):
        rep.write_report(tmp_path / "r", seed=-1)
    with pytest.raises(ValueError, match="params"):
        rep.write_report(tmp_path / "r", params="paper")
    with pytest.raises(ValueError, match="jobs"):
        rep.write_report(tmp_path / "r", jobs=0)
    with pytest.raises(ValueError, match=r"results\.json"):
        rep.redraw_report(tmp_path)


def test_cli_report_usage_errors_are_one_line(tmp_path, quick, no_figures, capsys):
    out = tmp_path / "r"
    out.mkdir()
    (out / "x").write_text("x")
    assert main(["report", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not empty" in err and len(err.strip().splitlines()) == 1
    assert main(["report", "--out", str(tmp_path / "ok"), "--lam", "0"]) == 2
    assert main(["report", "--out", str(tmp_path / "ok")]) == 0
    assert os.path.exists(tmp_path / "ok" / "report.md")
    capsys.readouterr()
    assert main(["report", "--from", str(out)]) == 2  # no results.json there
    err = capsys.readouterr().err
    assert "--from" in err and len(err.strip().splitlines()) == 1
    assert main(["report", "--from", str(tmp_path / "ok"), "--lam", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "drop --lam" in err and len(err.strip().splitlines()) == 1


def test_from_redraws_everything_without_computing(tmp_path, drawn, monkeypatch, capsys):
    out = _drawn_copy(drawn, tmp_path / "r")
    text = (out / "report.md").read_text()
    figures = sorted(p.name for p in out.glob("*.png"))
    assert len(figures) >= 9
    for p in out.glob("*.png"):
        p.unlink()
    (out / "report.md").unlink()
    monkeypatch.setattr(study_module, "study", lambda *a, **k: pytest.fail("computed"))
    assert main(["report", "--from", str(out)]) == 0
    assert (out / "report.md").read_text() == text
    assert sorted(p.name for p in out.glob("*.png")) == figures
    assert all(p.stat().st_size > 5000 for p in out.glob("*.png"))
    # into another directory, which then holds its own results.json (the figures were
    # just drawn for real: placeholders here)
    _placeholders(monkeypatch)
    assert main(["report", "--from", str(out), "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "report.md").read_text() == text
    assert (tmp_path / "again" / rep.RESULTS).read_text() == (out / rep.RESULTS).read_text()
    # a report.md the user edited is theirs: the redraw refuses to replace it
    (out / "report.md").write_text("my notes")
    capsys.readouterr()
    assert main(["report", "--from", str(out)]) == 2
    err = capsys.readouterr().err  # the flag the user gave: it names DIR, there is no --out
    assert err.startswith("slr-theory report: error: argument --from: ") and "--out" not in err
    assert (out / "report.md").read_text() == "my notes" and not _leftovers(tmp_path)


def test_the_html_report_is_one_self_contained_page(tmp_path, drawn, capsys):
    """`report --html`: report.html beside report.md, well-formed, the same headings, every
    figure embedded as a PNG data URI (nothing to fetch), its text escaped (drawn here
    from the saved results; write_report draws through the same `_draw`)."""
    import base64
    from html.parser import HTMLParser

    class Page(HTMLParser):
        def __init__(self):
            super().__init__()
            self.stack, self.images, self.headings, self._h = [], [], [], None

        def handle_starttag(self, tag, attrs):
            if tag not in ("img", "meta"):
                self.stack.append(tag)
            if tag == "img":
                self.images.append(dict(attrs)["src"])
            if tag in ("h1", "h2", "h3"):
                self._h = ""

        def handle_endtag(self, tag):
            assert self.stack.pop() == tag, tag
            if tag in ("h1", "h2", "h3"):
                self.headings.append(self._h)
                self._h = None

        def handle_data(self, data):
            if self._h is not None:
                self._h += data

    out = _drawn_copy(drawn, tmp_path / "r")
    assert main(["report", "--from", str(out), "--html"]) == 0  # from the saved results
    assert capsys.readouterr().out.strip().endswith("report.html")
    md = (out / "report.md").read_text()
    page = Page()
    page.feed((out / "report.html").read_text())
    page.close()
    assert page.stack == []
    want = [
        line.lstrip("#").strip().replace("`", "")
        for line in md.splitlines()
        if line.startswith("#")
    ]
    assert page.headings == want
    figures = sorted(p.name for p in out.glob("*.png"))
    assert len(page.images) == md.count("![") == len(figures) >= 9
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_computing_door_draws_the_html_page_too(tmp_path, quick, monkeypatch):
    """write_report(html=True) and `report --html` hand the flag to the one drawing
    (`_draw`, which the test above checks from saved results); without it, no page."""
    got = []
    monkeypatch.setattr(rep.document, "_draw", lambda s, dest, html=False: got.append(html))
    rep.write_report(tmp_path / "a", html=True)
    assert main(["report", "--out", str(tmp_path / "b"), "--html"]) == 0
    rep.write_report(tmp_path / "c")
    assert got == [True, True, False]
    with pytest.raises(ValueError, match="`html`"):
        rep.write_report(tmp_path / "d", html="yes")


def test_from_refuses_what_it_would_ignore_or_could_not_stand_behind(
    tmp_path, drawn, no_figures, capsys
):
    """`report --from` ignored --attention, --nonlinearity and --s, and drew an edited
    results.json with alpha = -1 as 'PGD step alpha = -1': each is refused in one line, an
    edited file by its digest (recorded when the report was written), a value outside its
    domain by its field (a copied results.json, which has no record beside it)."""
    import json

    out = _drawn_copy(drawn, tmp_path / "r")
    for flag in (["--attention", "softmax"], ["--nonlinearity", "tanh"], ["--s", "2"]):
        assert main(["report", "--from", str(out), *flag]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"drop {flag[0]}" in err, err
    data = json.loads((out / rep.RESULTS).read_text())
    data["alpha"] = -1.0
    (out / rep.RESULTS).write_text(json.dumps(data))
    assert main(["report", "--from", str(out), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "changed since slr-theory wrote it" in err, err
    assert not (tmp_path / "x").exists()
    lone = tmp_path / "copied.json"  # no record beside it: the values are checked instead
    for field, value in (("alpha", -1.0), ("alpha", "NaN"), ("seed", -3), ("lam_star", 0.0)):
        bad = {**data, "alpha": 0.004, field: value}
        lone.write_text(json.dumps(bad).replace('"NaN"', "NaN"))
        assert main(["report", "--from", str(lone), "--out", str(tmp_path / "y")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"field `{field}`" in err, (field, err)
    lone.write_text(json.dumps(dict(data, alpha=0.004)))
    assert main(["report", "--from", str(lone), "--out", str(tmp_path / "z")]) == 0
    assert "PGD step `α = 0.004`" in (tmp_path / "z" / "report.md").read_text()


def test_the_report_states_its_parameters_and_explains(drawn, small_study):
    s = small_study
    text = (drawn / "report.md").read_text()
    p = s.params
    assert f"`d = {p.d}`, `L = {p.L}`, `λ = {p.lam:g}`" in text
    first = text.split("## 2.")[0]
    for paragraph in s.findings:
        assert paragraph in first
    assert "your parameters" in text  # the model's checks at the report's parameters
    # the basin table's last row, with the budget, not the longest run (which once read
    # 'after 60000 steps' under a cap of 200000)
    assert f"at no minimum within the budget of {s.basins.max_steps} steps" in text
    assert "**global minimum**" in text
    from slr_theory.critical import symmetries

    n = sum(q.index == 0 for q in s.points)  # the count and the group are the model's own
    noun = "minimum" if n == 1 else "minima"
    assert f"{n} {noun} (one per orbit of the {len(symmetries(p))} overlap maps" in text
    for e in s.events:
        assert e.lam_text in text  # with the decimals its width supports
    assert "-0.0000" not in text and "−0.0000" not in text


@pytest.mark.slow
def test_the_full_report_on_the_paper_parameters(tmp_path):
    path = rep.write_report(tmp_path / "r")
    text = path.read_text()
    for heading in ("## 1.", "## 3.", "## 4.", "## 5.", "## 6.", "## 7.", "## 8."):
        assert heading in text
    assert "and the global minimum" in text
    pngs = list((tmp_path / "r").glob("*.png"))
    assert len(pngs) >= 9 and all(p.stat().st_size > 20_000 for p in pngs)


@pytest.mark.slow
def test_at_a_large_temperature_the_report_says_the_optimum_is_not_the_global_minimum(
    tmp_path,
):
    path = rep.write_report(tmp_path / "r", Params.paper(lam=0.9))
    first = path.read_text().split("## 2.")[0]
    assert "**not the global minimum**" in first and "a saddle of index 1" in first


@pytest.fixture(scope="module")
def tiny_atlas():
    from slr_theory import atlas

    return atlas(
        Params(d=8, L=4, lam=0.3, gamma=0.7),
        lam=[0.1, 0.3],
        L=[4],
        basin_runs=8,
        steps=200,
        max_steps=400,
        stability_grid=9,
        jobs=1,
    )


def test_a_temperature_at_the_models_edge_is_not_called_an_optimum(
    tmp_path, monkeypatch, small_study, no_figures
):
    """Softmax's report said 'the risk is smallest at lambda* = 10', the edge of its domain,
    where the risk still falls. optimal_lambda returns the edge itself there, and the
    report says what it is."""
    from slr_theory.statistics import optimal_lambda, oracle_risk

    soft = Params.paper().replace(attention="softmax")
    edge = optimal_lambda(soft)
    assert edge == soft.lam_max
    assert oracle_risk(soft.replace(lam=edge)) < oracle_risk(soft.replace(lam=0.999 * edge))
    s = copy.deepcopy(small_study)
    s.lam_star = s.params.lam_max
    monkeypatch.setattr(study_module, "study", lambda *a, **k: s)
    text = rep.write_report(tmp_path / "r").read_text()
    assert "the largest temperature this model takes" in text and "λ* =" not in text


def test_an_atlas_given_is_shown_saved_and_redrawn(tmp_path, monkeypatch, small_study, tiny_atlas):
    from slr_theory.study import Study, findings

    def with_atlas(*a, **k):
        s = copy.deepcopy(small_study)
        s.atlas = k["atlas"]
        s.findings = findings(s)
        return s

    monkeypatch.setattr(study_module, "study", with_atlas)
    _placeholders(monkeypatch, keep=("atlas_figure",))  # the others: drawn by `drawn`
    out = tmp_path / "r"
    tiny_atlas.write(tmp_path / "atlas.csv")
    rep.write_report(out, atlas=tmp_path / "atlas.csv")  # read from the table it wrote
    text = (out / "report.md").read_text()
    assert "## 9. The atlas over parameter space" in text and "![The atlas](atlas.png)" in text
    assert "**Over parameter space** (an atlas of 2 cells" in text  # in the findings too
    n_global = sum(r["optimum_is_global"] for r in tiny_atlas.rows)
    assert f"`(k*, v*)` is the global minimum in {n_global or 'none'}," in text
    assert "an atlas of 2 cells: λ 0.1 to 0.3 (2 values); at L = 4, γ = 0.7, d = 8" in text
    assert (out / "atlas.png").stat().st_size > 10_000
    saved = Study.load(out / rep.RESULTS)
    assert saved.atlas.rows == tiny_atlas.rows and saved.atlas.axes == tiny_atlas.axes
    (out / "report.md").unlink()
    (out / "atlas.png").unlink()
    monkeypatch.setattr(study_module, "study", lambda *a, **k: pytest.fail("computed"))
    assert main(["report", "--from", str(out)]) == 0
    assert (out / "report.md").read_text() == text and (out / "atlas.png").exists()


def test_report_refuses_an_atlas_it_cannot_read(tmp_path, capsys, no_computing):
    assert main(["report", "--out", str(tmp_path / "r"), "--atlas", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --atlas" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["skew-tanh", "shifted-erf", "sigmoid", "identity", "relu"])
def test_the_report_runs_at_a_model_the_proof_on_m_does_not_cover(tmp_path, name):
    """The whole report (measured: identity 75 s, sigmoid 104 s, relu 191 s, skew-tanh 204 s, the
    non-monotone shifted-erf 27 minutes, its continuation by the composite panels, which a
    sigma without a strip of analyticity takes) at a sigma that is not odd, or is
    unbounded (linear attention, ReLU): it runs;
    its first finding lists M's located points instead of claiming the five proved for an
    odd, bounded sigma; the escape starts at M's own saddle; section 8 is at this model;
    and for the unbounded identity and ReLU no Lipschitz bound is claimed."""
    import json

    from slr_theory.manifold import manifold_critical_overlaps, manifold_saddle

    from .strategies import shifted_erf, skew_tanh

    make = {
        "skew-tanh": skew_tanh,
        "shifted-erf": shifted_erf,
        "sigmoid": lambda: "sigmoid",
        "relu": lambda: "relu",
        "identity": lambda: Nonlinearity("identity", lambda u: u, np.ones_like, np.zeros_like),
    }
    p = Params(d=400, L=10, lam=0.1, gamma=0.7, nonlinearity=make[name]())
    path = rep.write_report(tmp_path / "r", p, jobs=1)  # a lambda sigma does not pickle
    text = path.read_text()
    assert "exactly five critical points" not in text and "### On M: located by scans" in text
    assert f"scans locate {len(manifold_critical_overlaps(p))} critical points" in text
    saddle = manifold_saddle(p)
    at_origin = saddle is not None and np.abs(saddle).max() < 1e-9
    assert ("The origin is not one of them" in text) == (not at_origin)
    section8 = text[text.index("## 8.") :]
    assert f"`{p.predictor}`" in section8.split("\n\n")[1]  # section 8 at this model
    saved = json.loads((tmp_path / "r" / "results.json").read_text())  # a user's sigma is
    assert saved["manifold_proved"] is False  # saved by name, so read it as data
    if saddle is None:
        assert saved["escape"] is None and "no separatrix (M has no critical point" in text
    elif at_origin:
        assert "Escape from the saddle at the origin" in text
    else:
        assert "Escape from the saddle of M at (κ, ν) = (" in text
        assert abs(saved["escape"]["at"][0]) > 1e-4
    unbounded = name in ("identity", "relu")
    assert (saved["lipschitz"] is None) == unbounded
    assert (
        "no Lipschitz bound of the gradient over the spheres is certified" in text
    ) == unbounded


def test_without_a_certified_lipschitz_bound_the_report_says_so(
    tmp_path, monkeypatch, small_study, no_figures
):
    """An unbounded sigma has no certified bound (nonlinearity.UnboundedSigma): the study
    keeps None, and sections 1 and 4 say the hypothesis cannot be checked instead of
    quoting a bound; the headings say what was proved and what was searched."""
    s = copy.deepcopy(small_study)
    s.lipschitz, s.manifold_proved = None, False
    s.findings = study_module.findings(s)
    monkeypatch.setattr(study_module, "study", lambda *a, **k: s)
    text = rep.write_report(tmp_path / "r").read_text()
    assert "`α < 1/Lip` cannot be checked: σ is unbounded" in text
    assert "no Lipschitz bound is certified and the hypothesis cannot be checked" in text
    assert "### On M: located by scans" in text and "### On the spheres: found by search" in text
    assert "Lip ≤" not in text
    again = study_module.Study.load(tmp_path / "r" / rep.RESULTS)
    assert again.lipschitz is None


def test_the_bar_names_the_part_under_way(tmp_path, monkeypatch, small_study, capsys):
    """The bar sat on "4/6" for twelve minutes without naming the part, with an ETA
    extrapolated from unequal parts. It now names each part as it starts, in the order
    study ends them, and gives no ETA."""
    import inspect
    import re

    said = re.findall(r'tell\("([^"]+)"\)', inspect.getsource(study_module.study))
    assert tuple(said) == (*rep.document._ENDS, rep.document._PROOF_END) and len(
        rep.document._PARTS
    ) == len(rep.document._ENDS)

    def fake(*a, progress, certify=False, certificate=None, **k):
        for label in rep.document._ENDS:
            progress(label)
        if certify or certificate is not None:
            progress(rep.document._PROOF_END)
        return copy.deepcopy(small_study)

    monkeypatch.setattr(study_module, "study", fake)
    monkeypatch.setattr(
        rep.document, "_draw", lambda *a: None
    )  # the bar is the subject, not the figures
    rep.write_report(tmp_path / "r", progress=True)
    err = capsys.readouterr().err
    for part in rep.document._PARTS:
        assert f"report: {part}" in err
    assert "report: drawing the figures" in err and "<" not in err.split("report:")[-1]
    assert rep.document._PROOF_PART not in err
    if importlib.util.find_spec("flint") is not None:  # the census's re-verification is named
        rep.write_report(tmp_path / "p", small_study.params, certify=True, progress=True)
        err = capsys.readouterr().err
        assert f"report: {rep.document._PROOF_PART}" in err and "of 7 done" in err
        assert err.rindex(rep.document._PROOF_PART) < err.rindex("report: drawing the figures")


@pytest.fixture(scope="session")
def small_census(shared, small_study):
    """The census at the small study's parameters (complete there: 41 046 boxes, 8 s),
    computed once per run for the tests that give it and the one that asks for it."""
    pytest.importorskip("flint")
    from slr_theory.certify import certify_critical_points

    params = small_study.params
    return shared("small_census", lambda: certify_critical_points(params, starts=64, jobs=1))


@pytest.fixture(scope="module")
def small_certificate(tmp_path_factory, small_census):
    """:func:`small_census`, saved."""
    return small_census.save(tmp_path_factory.mktemp("census") / "census.json.gz")


def _study_with_proof(small_study, small_census):
    """The small study, with the proof `study` would add (its census, where `certify`
    asks, from a search of its own here: the small study's points are not a search)."""
    from slr_theory.study import check_proof, findings

    def run(*a, **k):
        s = copy.deepcopy(small_study)
        certificate = k["certificate"]
        if k.get("certify"):
            assert s.params == small_census.params
            certificate = small_census.save(k["certify"])
        s.proof = check_proof(s.params, certificate, s.points, jobs=1)
        s.findings = findings(s)
        return s

    return run


def test_a_checked_complete_certificate_makes_the_list_complete_by_proof(
    tmp_path, monkeypatch, small_study, small_census, small_certificate, no_figures
):
    """The census is re-verified, agrees with the search point for point, and the report
    says "complete by proof" with the census's own numbers; the proof is saved and
    redrawn."""
    from slr_theory.certify import Census
    from slr_theory.study import Study

    monkeypatch.setattr(study_module, "study", _study_with_proof(small_study, small_census))
    out = tmp_path / "r"
    rep.write_report(out, small_study.params, certificate=small_certificate)
    text = (out / "report.md").read_text()
    saved = Study.load(out / rep.RESULTS)
    p = saved.proof
    census = Census.load(small_certificate)
    assert p.checked and p.complete and p.proves_search and p.source == "census.json.gz"
    assert p.points == len(census.points) == len(small_study.points)
    assert p.boxes == sum(len(q["paths"]) for q in census.parts.values())
    assert "### On the spheres: complete by proof" in text
    assert f"the census's {p.points} points up to symmetry are all the critical points" in text
    assert "The search's points are the census's, with the same indices and nullities." in text
    assert "A checked census certificate proves that list complete." in text
    (out / "report.md").unlink()
    monkeypatch.setattr(study_module, "study", lambda *a, **k: pytest.fail("computed"))
    assert main(["report", "--from", str(out)]) == 0
    assert (out / "report.md").read_text() == text


def test_a_tampered_or_open_certificate_leaves_the_list_found_by_search(
    tmp_path, monkeypatch, small_study, small_census, small_certificate, no_figures
):
    import gzip
    import json

    data = json.loads(gzip.open(small_certificate, "rt").read())
    data["points"][0]["index"] += 1
    bad = tmp_path / "bad.json.gz"
    with gzip.open(bad, "wt") as f:
        json.dump(data, f)
    monkeypatch.setattr(study_module, "study", _study_with_proof(small_study, small_census))
    rep.write_report(tmp_path / "r", small_study.params, certificate=bad)
    text = (tmp_path / "r" / "report.md").read_text()
    assert "### On the spheres: found by search" in text
    assert "it FAILED" in text and "so it proves nothing" in text

    data = json.loads(gzip.open(small_certificate, "rt").read())
    from slr_theory.certify.boxes import UNRESOLVED

    data["parts"]["strata"]["verdicts"][0] = UNRESOLVED  # a box left open: weaker, still valid
    data["complete"] = False
    open_ = tmp_path / "open.json.gz"
    with gzip.open(open_, "wt") as f:
        json.dump(data, f)
    rep.write_report(tmp_path / "s", small_study.params, certificate=open_)
    text = (tmp_path / "s" / "report.md").read_text()
    assert "### On the spheres: found by search" in text
    assert "leaves boxes open, so it does not prove the list complete" in text


def test_a_certificate_for_other_parameters_is_refused_before_computing(
    tmp_path, small_study, small_certificate, capsys, no_computing
):
    with pytest.raises(ValueError, match="`certificate` is about"):
        rep.write_report(
            tmp_path / "r", small_study.params.replace(lam=0.5), certificate=small_certificate
        )
    args = ["report", "--out", str(tmp_path / "r"), "--certificate", str(small_certificate)]
    assert main(args) == 2  # the paper's parameters, not the certificate's
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --certificate: is about" in err
    assert main([*args[:3], "--certificate", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --certificate: must be a census file" in err
    assert not (tmp_path / "r").exists()


def test_certify_computes_the_census_beside_the_report(
    tmp_path, monkeypatch, small_study, small_census, no_figures, capsys
):
    """``certify=True``: the census is computed at the report's parameters, written as
    ``census.json.gz`` beside it, re-verified and read as the certificate; the command
    checks the file it wrote; a model without enclosures is refused before computing."""
    pytest.importorskip("flint")
    monkeypatch.setattr(study_module, "study", _study_with_proof(small_study, small_census))
    out = tmp_path / "r"
    rep.write_report(out, small_study.params, certify=True)
    text = (out / "report.md").read_text()
    assert (out / rep.CENSUS).exists() and "### On the spheres: complete by proof" in text
    assert "(`census.json.gz`, `slr-theory certify`)" in text
    assert main(["certify", "--check", str(out / rep.CENSUS)]) == 0
    capsys.readouterr()
    with pytest.raises(ValueError, match="`certify`"):
        rep.write_report(
            tmp_path / "s", small_study.params, certify=True, certificate=out / rep.CENSUS
        )
    tanh = small_study.params.replace(nonlinearity="tanh")
    with pytest.raises(ValueError, match="rigorous enclosures"):
        rep.write_report(tmp_path / "s", tanh, certify=True)
    assert (
        main(["report", "--out", str(tmp_path / "s"), "--nonlinearity", "tanh", "--certify"]) == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --certify" in err
    assert not (tmp_path / "s").exists()


def test_from_a_busy_folder_names_from_not_an_out_never_typed(tmp_path, drawn, capsys):
    import fcntl

    copy_ = _drawn_copy(drawn, tmp_path / "r")
    fd = os.open(copy_ / LOCK_NAME, os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert main(["report", "--from", str(copy_)]) == 2
    finally:
        os.close(fd)
    err = capsys.readouterr().err
    assert err.startswith("slr-theory report: error: argument --from: another slr-theory run")
    assert err.count("\n") == 1


def _set(path: str, value):
    """An edit of a results.json dict at a dotted path (indices as numbers)."""

    def edit(data):
        keys = [int(k) if k.isdigit() else k for k in path.split(".")]
        target = data
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value(target[keys[-1]]) if callable(value) else value

    return edit


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (_set("points.0.risk", -2.0), "points[0].risk"),
        (_set("points.0.risk", "NaN"), "points[0].risk"),
        (_set("risk_rows.0.total", -1.0), "risk_rows[0].total"),
        (_set("basins.fractions", [0.9, 0.9]), "basins.fractions"),
        (_set("basins.fractions", [1.0]), "basins.fractions"),
        (_set("basins.stderr", [0.0, 0.0]), "basins.stderr"),
        (_set("lipschitz.lower", 100.0), "lipschitz"),
        (_set("points.0.index", -3), "points[0].index"),
        (_set("points.0.index", 1.5), "points[0].index"),
        (_set("points.0.overlaps", [0.0, 0.0, 1.0]), "points[0].overlaps"),
        (_set("portrait.grid", []), "portrait.grid"),
        (_set("portrait.risk", lambda r: r[:-1]), "portrait.risk"),
        (_set("stability.lead", lambda r: r[:-1]), "stability.lead"),
        (_set("basins.label", lambda r: [5, *r[1:]]), "basins.label"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_from_refuses_an_edited_field_by_its_name_with_or_without_a_record(
    tmp_path, drawn, no_figures, capsys, edit, field
):
    """A results.json without its record beside it drew negative or NaN risks, basin shares
    0.9 + 0.9, '100 <= Lip <= 1' and index -3; shares shorter than the names and an empty
    grid were internal errors. Each is refused in one line naming the field."""
    import json

    out = _drawn_copy(drawn, tmp_path / "r")
    data = json.loads((out / rep.RESULTS).read_text())
    edit(data)
    lone = tmp_path / "copied.json"
    lone.write_text(json.dumps(data).replace('"NaN"', "NaN"))
    assert main(["report", "--from", str(lone), "--out", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"field `{field}`" in err, (field, err)
    assert not (tmp_path / "y").exists()


def test_the_redrawn_findings_come_from_the_numbers_not_the_file(tmp_path, drawn, no_figures):
    import json

    out = _drawn_copy(drawn, tmp_path / "r")
    data = json.loads((out / rep.RESULTS).read_text())
    data["findings"] = ["The optimum is never reached."]
    lone = tmp_path / "copied.json"
    lone.write_text(json.dumps(data))
    rep.redraw_report(lone, tmp_path / "z")
    text = (tmp_path / "z" / "report.md").read_text()
    assert "never reached" not in text
    assert text.split("## 2.")[0] == (drawn / "report.md").read_text().split("## 2.")[0]


def test_the_lipschitz_sentence_says_when_its_upper_bound_is_only_checked(small_study):
    """For erf the upper bound is certified; for a sigma by quadrature it rests on sampled
    sups of sigma's derivatives, and the sentence says so."""
    erf = "\n".join(rep.theory.critical_section(small_study, None))
    assert "Lip ≤" in erf and "checked, not proved" not in erf
    s = copy.deepcopy(small_study)
    s.params = s.params.replace(nonlinearity="tanh")
    assert "checked, not proved" in "\n".join(rep.theory.critical_section(s, None))
