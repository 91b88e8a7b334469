"""The atlas: one row per cell, the same on every backend, resumable, read back."""

from __future__ import annotations

import json

import numpy as np
import pytest

from slr_theory import Atlas, Params, atlas, critical_points
from slr_theory.output import OutputConflict
from slr_theory.survey import COLUMNS, atlas_cell, read_atlas

BASE = Params(d=8, L=4, lam=0.3, gamma=0.7)
SMALL = {"basin_runs": 16, "steps": 500, "max_steps": 2000, "stability_grid": 9}


def _strip(rows):
    """The rows without the seconds each cell took (the one column that is not data)."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


@pytest.fixture(scope="module")
def serial():
    return atlas(BASE, lam=[0.1, 0.3], L=[4, 6], jobs=1, **SMALL)


def test_the_rows_are_the_cells_in_order_with_every_column(serial):
    assert isinstance(serial, Atlas) and serial.cells == 4 and not serial.missing
    assert [r["cell"] for r in serial.rows] == [0, 1, 2, 3]
    assert [(r["lam"], r["L"]) for r in serial.rows] == [(0.1, 4), (0.1, 6), (0.3, 4), (0.3, 6)]
    for r in serial.rows:
        assert tuple(r) == COLUMNS
        assert 0 <= r["optimum_basin_fraction"] <= 1 and 0 <= r["m_attracting_fraction"] <= 1
        assert r["basin_runs"] == 16 and r["seconds"] > 0
    assert serial.column("global_min_overlaps").shape == (4, 5)


def test_a_cell_agrees_with_the_search_it_reports(serial):
    """n_critical, the optimum's index and the global minimum are those of
    critical_points at the cell's parameters (same seed: same search)."""
    row = serial.rows[2]
    ss = np.random.SeedSequence([0, 2])
    found = critical_points(BASE.replace(lam=0.3, L=4), rng=int(ss.generate_state(2)[0]))
    assert row["n_critical"] == len(found)
    low = min(q.risk for q in found if q.index == 0)
    assert row["global_min_risk"] == low
    assert row["optimum_is_global"] == (row["optimum_risk"] <= low)


def test_the_same_rows_on_processes_and_on_a_dask_local_cluster(serial):
    procs = atlas(BASE, lam=[0.1, 0.3], L=[4, 6], jobs=2, **SMALL)
    assert _strip(procs.rows) == _strip(serial.rows)
    pytest.importorskip("dask.distributed")
    dask = atlas(BASE, lam=[0.1, 0.3], L=[4, 6], backend="dask", jobs=2, **SMALL)
    assert _strip(dask.rows) == _strip(serial.rows)


def test_a_killed_run_resumes_without_recomputing(tmp_path, serial):
    out = tmp_path / "atlas"
    grid = {"lam": [0.1], "L": [4, 6]}  # cells 0 and 1 of the serial grid

    def stop_after_one(done, total):
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atlas(BASE, **grid, jobs=1, out=out, progress=stop_after_one, **SMALL)
    assert sorted(p.name for p in out.glob("cell-*.json")) == ["cell-000000.json"]
    assert not (out / "atlas.csv").exists()  # the table comes at the end
    partial = read_atlas(out)
    assert partial.missing == [1] and _strip(partial.rows) == _strip(serial.rows[:1])
    kept = (out / "cell-000000.json").read_bytes()
    calls = []
    again = atlas(BASE, **grid, jobs=1, out=out, progress=lambda *a: calls.append(a), **SMALL)
    assert calls == [(2, 2)]  # only the missing cell was computed
    assert (out / "cell-000000.json").read_bytes() == kept  # never rewritten
    assert _strip(again.rows) == _strip(serial.rows[:2])
    assert again.rows[0] == partial.rows[0]  # read back, seconds and all


def test_tables_round_trip(tmp_path, serial):
    out = tmp_path / "a"
    one = atlas(BASE, lam=[0.1], L=[4], jobs=1, out=out, **SMALL)  # the serial grid's cell 0
    assert _strip(one.rows) == _strip(serial.rows[:1])
    for got in (read_atlas(out / "atlas.csv"), read_atlas(out)):
        assert got.rows == one.rows
        assert got.axes == one.axes and got.base == BASE and got.settings == one.settings
    pytest.importorskip("pyarrow")
    assert read_atlas(out / "atlas.parquet").rows == one.rows
    path = serial.write(tmp_path / "mine.csv")
    assert read_atlas(path).rows == serial.rows
    with pytest.raises(FileExistsError, match="--force"):
        serial.write(path)


def test_a_directory_of_another_atlas_is_refused(tmp_path):
    out = tmp_path / "a"
    atlas(BASE, lam=[0.1], jobs=1, out=out, **SMALL)
    spec = json.loads((out / "atlas.json").read_text())
    with pytest.raises(OutputConflict, match=r"`out`.*another atlas"):
        atlas(BASE, lam=[0.2], jobs=1, out=out, **SMALL)
    assert json.loads((out / "atlas.json").read_text()) == spec


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"lam": [0.1, 0.1]}, "`lam` must not repeat"),
        ({"lam": []}, "`lam` must hold at least one"),
        ({"lam": [-1.0]}, "lam"),
        ({"L": [0]}, "L"),
        ({"backend": "mpi"}, "`backend`"),
        ({"client": object()}, "`client`"),
        ({"basin_runs": 0}, "basin_runs"),
        ({"jobs": 0}, "jobs"),
        ({"nonlinearity": ["softsign?"]}, "nonlinearity"),
    ],
)
def test_bad_arguments_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        atlas(BASE, **{"jobs": 1, **SMALL, **kw})


def test_a_cell_names_its_bad_seed():
    with pytest.raises(ValueError, match="`seed`"):
        atlas_cell(BASE, seed="0", **SMALL)


@pytest.mark.slow
def test_at_the_papers_parameters_the_optimum_is_global_at_small_lambda_only():
    """The issue's check: at d = 400, L = 10, gamma^2 = 1/2 the optimum is the global
    minimum at lambda = 0.1 and not at lambda = 0.9 (where the global minimum is off M)."""
    a = atlas(Params.paper(), lam=[0.1, 0.9], basin_runs=8, steps=200, max_steps=200, jobs=2)
    small, large = a.rows
    assert small["optimum_is_global"] and small["optimum_index"] == 0
    assert not large["optimum_is_global"] and large["optimum_index"] >= 1
    assert large["global_min_risk"] < large["optimum_risk"]


def test_the_phase_diagram_is_drawn_from_the_rows(tmp_path, serial):
    from slr_theory.plotting import atlas_figure

    path = atlas_figure(serial, tmp_path / "atlas.png", x="lam", y="L")
    assert path.stat().st_size > 10_000
    with pytest.raises(ValueError, match="`y` must differ"):
        atlas_figure(serial, tmp_path / "b.png", x="L", y="L")
    with pytest.raises(ValueError, match="`x`"):
        atlas_figure(serial, tmp_path / "b.png", x="nonlinearity")
    with pytest.raises(ValueError, match="also spans L"):
        atlas_figure(serial, tmp_path / "b.png", x="lam", y="d")


def test_attention_is_an_axis_recorded_in_every_row_and_table(tmp_path):
    a = atlas(BASE, attention=["pointwise", "softmax"], jobs=1, **SMALL)
    assert [r["attention"] for r in a.rows] == ["pointwise", "softmax"]
    assert a.rows[1]["optimum_risk"] != a.rows[0]["optimum_risk"]  # a different model
    path = a.write(tmp_path / "a.csv")
    back = read_atlas(path)
    assert [r["attention"] for r in back.rows] == ["pointwise", "softmax"]
    assert back.axes["attention"] == ["pointwise", "softmax"]
    # a table written before the axis existed reads as the paper's pointwise attention
    lines = path.read_text().splitlines()
    spec = json.loads(lines[0][len("# slr-theory atlas ") :])
    del spec["base"]["attention"], spec["axes"]["attention"]
    head = lines[1].split(",")
    drop = head.index("attention")
    old = [",".join(x for i, x in enumerate(line.split(",")) if i != drop) for line in lines[1:2]]
    old_path = tmp_path / "old.csv"
    old_path.write_text("\n".join([f"# slr-theory atlas {json.dumps(spec)}", *old]) + "\n")
    assert read_atlas(old_path).axes["attention"] == ["pointwise"]
    with pytest.raises(ValueError, match="nonlinearity"):
        atlas(BASE.replace(nonlinearity="tanh"), attention=["softmax"], jobs=1, **SMALL)
