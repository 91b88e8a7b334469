"""The notebook side of the figures and results: a figure without a path is returned, a
figure can be drawn on a caller's axes, and results show themselves as HTML tables and
plot themselves."""

from __future__ import annotations

import pathlib
from html.parser import HTMLParser

import numpy as np
import pytest
from matplotlib.figure import Figure

import slr_theory
from slr_theory import Params, critical_points, fate, sample_initial_overlaps
from slr_theory.landscape import basins, portrait_data
from slr_theory.results import html_table
from slr_theory.survey import read_atlas

P = Params.paper(lam=0.1)
ATLAS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "figures" / "atlas.csv"


class _Table(HTMLParser):
    """The cells of an HTML table, checking that every tag closes in order."""

    def __init__(self):
        super().__init__()
        self.open, self.cells, self.caption = [], [], ""
        self._text = None

    def handle_starttag(self, tag, attrs):
        self.open.append(tag)
        if tag in ("td", "th", "caption"):
            self._text = ""

    def handle_endtag(self, tag):
        assert self.open and self.open.pop() == tag, (tag, self.open)
        if tag in ("td", "th"):
            self.cells.append(self._text)
        elif tag == "caption":
            self.caption = self._text
        self._text = None

    def handle_data(self, data):
        if self._text is not None:
            self._text += data


def _parse(html: str) -> _Table:
    t = _Table()
    t.feed(html)
    t.close()
    assert not t.open
    return t


@pytest.fixture(scope="module")
def fates():
    starts = sample_initial_overlaps(P, np.random.default_rng(0), 8)
    return fate(P, starts, alpha=4e-3, points=critical_points(P))


def test_the_common_figures_are_at_the_top_level():
    for name in ("phase_portrait", "arrival_figure", "atlas_figure", "bifurcation_figure"):
        assert getattr(slr_theory, name) is getattr(slr_theory.plotting, name)


def test_a_figure_without_a_path_is_returned_and_one_with_a_path_is_written(fates, tmp_path):
    fig = slr_theory.arrival_figure(fates)
    assert isinstance(fig, Figure) and fig.axes
    out = fates.plot(tmp_path / "arrival.svg")
    assert out == tmp_path / "arrival.svg" and out.read_text().startswith("<?xml")
    assert isinstance(fates.plot(), Figure)


def test_figures_draw_on_a_callers_axes(fates):
    from slr_theory.plotting.canvas import new_figure

    mine = new_figure(figsize=(12, 4))
    left, right = mine.subplots(1, 2)
    data = portrait_data(P, grid=7, basin_grid=4, refine=2, trajectories=1)
    assert slr_theory.phase_portrait(data, ax=left) is mine
    assert fates.plot(ax=right) is mine
    assert len(mine.axes) == 2  # drawn on the two given, nothing added
    assert (
        left.get_xlabel().startswith("$\\kappa") and right.get_ylabel() == "share of runs arrived"
    )
    with pytest.raises(ValueError, match="`ax`"):
        fates.plot(ax="left")


def test_results_show_themselves_as_tables(fates):
    t = _parse(fates._repr_html_())
    assert t.caption == "8 runs, PGD at α = 0.004, to balls of radius 0.001"
    assert "minimum at (1, 1, 0, 0, 0)" in t.cells
    shares = [c for c in t.cells[4:] if "±" in c]  # after the header
    assert sum(float(c.split("±")[0]) for c in shares) == pytest.approx(1.0)
    pts = critical_points(P, "manifold")
    t = _parse(pts._repr_html_())
    assert t.caption.startswith(f"{len(pts)} critical points on the manifold, complete by proof")
    assert t.cells[:9] == [
        "kappa",
        "nu",
        "theta",
        "eta",
        "rho",
        "risk",
        "index",
        "nullity",
        "kind",
    ]
    assert len(t.cells) == 9 * (len(pts) + 1)
    b = basins(P, 6, alpha=4e-3, steps=2000, max_steps=20_000, rng=1)
    t = _parse(b._repr_html_())
    assert f"none after {b.max_steps} steps" in t.cells
    a = read_atlas(ATLAS)
    t = _parse(a._repr_html_())
    assert t.caption == f"atlas: {len(a.rows)} of {a.cells} cells"
    assert len(t.cells) == 12 * (len(a.rows) + 1)
    assert isinstance(a.plot(), Figure)


def test_html_table_escapes_and_refuses_what_is_not_a_table():
    assert "&lt;b&gt;" in html_table(["x"], [["<b>"]])
    with pytest.raises(ValueError, match="`rows`"):
        html_table(["x"], [1, 2])
    with pytest.raises(ValueError, match="`header`"):
        html_table(3, [])


def test_the_optimum_has_one_colour_in_every_figure(fates):
    """(k*, v*) was blue in the erf report and orange in the tanh one (where the off-M
    minimum, lower, came first): it is the first colour whatever the order."""
    from slr_theory.plotting.canvas import OKABE_ITO, end_colours

    off, opt, image = [0, 0, 0.63, 1, 0], [1, 1, 0, 0, 0], [-1, -1, 0, 0, 0]
    assert end_colours([off, opt])[1] == OKABE_ITO[0] != end_colours([off, opt])[0]
    assert end_colours([image])[0] == OKABE_ITO[0]
    assert end_colours([[1, -1, 0, 0, 0]])[0] != OKABE_ITO[0]  # a corner is not it
    ax = slr_theory.arrival_figure(fates).axes[0]
    j = next(i for i, name in enumerate(fates.names) if "(1, 1, 0, 0, 0)" in name)
    [line] = [
        ln
        for ln in ax.lines
        if ln.get_label().endswith(
            f"reach {fates.names[j]} (median $10^{{{fates.quantiles([0.5], j)[0]:.1f}}}$ steps)"
        )
    ]
    assert line.get_color() == OKABE_ITO[0]


def test_the_drawing_modules_refuse_what_is_not_their_result_by_name():
    """plotting's drawing modules take results only; a Params (which the door computes
    from) is refused with the argument's name, not an AttributeError."""
    from slr_theory import Params
    from slr_theory.plotting.atlas import atlas_figure
    from slr_theory.plotting.ensembles import draw_off_manifold
    from slr_theory.plotting.manifold import draw_portrait, draw_stability

    p = Params.paper()
    for draw, arg in (
        (draw_portrait, "data"),
        (draw_off_manifold, "basins"),
        (lambda x: draw_stability([x]), "maps"),
        (atlas_figure, "atlas"),
    ):
        with pytest.raises(ValueError, match=rf"^`{arg}` must be"):
            draw(p)


def test_no_text_of_a_report_figure_overlaps_another(tmp_path, monkeypatch, small_study):
    """Every figure the report draws, redrawn from its results: no two texts (tags, tick
    labels, contour labels, titles, legend entries) overlap by more than a pixel."""
    from slr_theory.plotting import canvas
    from slr_theory.report import redraw_report

    found = {}
    real = canvas.save_figure

    def keep(fig, path, dpi):
        found[pathlib.Path(path).name] = canvas.colliding_texts(fig, pad=1.0)
        real(fig, path, dpi)

    monkeypatch.setattr(canvas, "save_figure", keep)
    (tmp_path / "saved").mkdir()
    small_study.save(tmp_path / "saved" / "results.json")
    redraw_report(tmp_path / "saved", tmp_path / "redrawn")
    assert len(found) >= 8
    assert not any(found.values()), {k: v for k, v in found.items() if v}


def test_the_portrait_draws_five_layers_by_default_and_more_on_request():
    from slr_theory.landscape import portrait_data
    from slr_theory.plotting import ALL_PORTRAIT_LAYERS, PORTRAIT_LAYERS, phase_portrait

    assert len(PORTRAIT_LAYERS) == 5 and set(PORTRAIT_LAYERS) < set(ALL_PORTRAIT_LAYERS)
    data = portrait_data(Params.paper(), grid=11, basin_grid=6, refine=1, trajectories=2)
    few = phase_portrait(data)
    labels = [t.get_text() for t in few.legends[0].get_texts()]
    assert not any("trajectories" in t or "flow time" in t for t in labels)
    assert "separatrix" in labels and "streamlines of the flow on M" in labels
    every = phase_portrait(data, layers=ALL_PORTRAIT_LAYERS)
    labels = [t.get_text() for t in every.legends[0].get_texts()]
    assert any("trajectories" in t for t in labels) and "risk on M (contours)" in labels
    with pytest.raises(ValueError, match="`layers` must be names among"):
        phase_portrait(data, layers="basins,contours")


def _pixels(fig) -> np.ndarray:
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def test_a_portrait_computes_only_what_its_layers_draw(monkeypatch):
    """`slr-theory portrait --layers points` followed the flow from every cell of the basin
    map (10 s) to draw none of it. What no layer drawn reads is not computed, and the
    figure is the same pixel for pixel as the one drawn from everything computed."""
    import slr_theory.landscape.portrait as portrait
    from slr_theory.plotting import ALL_PORTRAIT_LAYERS, phase_portrait

    p = Params.paper()
    options = {"grid": 9, "basin_grid": 4, "refine": 1, "trajectories": 2, "pgd_steps": 40}
    full = portrait_data(p, pgd_alpha=1e-2, **options)
    calls = []
    monkeypatch.setattr(portrait, "fate", lambda *a, **k: calls.append(1) or fate(*a, **k))
    traced = []
    real_separatrix = portrait.separatrix
    monkeypatch.setattr(
        portrait, "separatrix", lambda *a, **k: traced.append(1) or real_separatrix(*a, **k)
    )
    for layers, parts, sep in [
        (("points",), (None, [], None), False),
        (("streamlines", "flows"), (None, 2, None), False),
        (("arrival", "pgd"), (4, 2, 2), False),
        (("basins", "points"), (4, [], None), True),  # the basins' exact boundary
        (("separatrix",), (None, [], None), True),
    ]:
        calls.clear(), traced.clear()
        fig = phase_portrait(p, pgd_alpha=1e-2, layers=layers, **options)
        want = phase_portrait(full, layers=layers)
        assert np.array_equal(_pixels(fig), _pixels(want)), layers
        assert bool(calls) == (parts[0] is not None), layers
        assert bool(traced) == sep, layers
    with pytest.raises(ValueError, match="`basin_grid`"):  # checked, though not computed
        phase_portrait(p, basin_grid=-1, layers=("points",))
    with pytest.raises(ValueError, match="`pgd_alpha`"):
        portrait_data(p, grid=5, basin_grid=0, trajectories=0, pgd_alpha=-1.0)
    with pytest.raises(ValueError, match="`skip` must be names among"):
        portrait_data(p, grid=5, skip=["basin"])
    bare = portrait_data(p, grid=5, basin_grid=3, pgd_alpha=1e-2, skip=("basins", "trajectories"))
    assert bare.basin_grid is None and bare.flows == [] and bare.pgd is None
    assert bare.pgd_alpha is None and len(bare.separatrix) > 0
    no_sep = portrait_data(p, grid=5, basin_grid=3, refine=1, skip=("separatrix",))
    assert no_sep.separatrix is None and no_sep.basin_grid == 3
    # drawn with every layer, what was left out is simply absent: the basins from their cells
    drawn = phase_portrait(no_sep, layers=ALL_PORTRAIT_LAYERS)
    labels = [t.get_text() for t in drawn.legends[0].get_texts()]
    assert "separatrix" not in labels and "streamlines of the flow on M" in labels
