"""The atlas: one row per cell, the same on every backend, resumable, read back."""

from __future__ import annotations

import json

import numpy as np
import pytest

from slr_theory import Atlas, Params, atlas, critical_points
from slr_theory.output import OutputConflict
from slr_theory.survey import COLUMNS, STEP_SHARE, atlas_cell, atlas_step, found_text, read_atlas

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


def test_the_fate_columns_agree_with_the_budgeted_runs(serial):
    """The fates follow the budgeted runs' own starts: whoever is at the optimum within the
    budget is at it in its fate; the shares after more steps only grow."""
    for r in serial.rows:
        shares = [r[c] for c in ("within_1e4", "within_1e6", "within_1e8")]
        assert all(0 <= x <= 1 for x in shares) and shares == sorted(shares)
        assert r["fate_optimum_fraction"] >= r["optimum_basin_fraction"] - 1e-12
        total = (
            r["fate_optimum_fraction"] + r["fate_saddle_fraction"] + r["fate_undecided_fraction"]
        )
        assert total <= 1 + 1e-12
        if r["fate_optimum_fraction"] > 0:
            assert np.isfinite(r["optimum_log10_steps"])
        else:
            assert r["optimum_log10_steps"] == np.inf


def test_a_cell_agrees_with_the_search_it_reports(serial):
    """n_critical, the optimum's index and the global minimum are those of
    critical_points at the cell's parameters (same seed: same search)."""
    row = serial.rows[2]
    ss = np.random.SeedSequence([0, 2])
    found = critical_points(BASE.replace(lam=0.3, L=4), rng=int(ss.generate_state(2)[0]))
    assert row["n_critical"] == len(found)
    da = found.search.distinct_after
    assert row["search_starts"] == len(found.search.starts) == len(da)
    assert da[row["search_last_new"] - 1] == len(found) > da[row["search_last_new"] - 2]
    from slr_theory.survey import found_text

    assert found_text(row) == (
        f"{len(found)} (last new at start {row['search_last_new']} of {len(da)})"
    )
    old = dict(row, search_starts=-1, search_last_new=-1)  # a table written before
    assert found_text(old) == str(len(found))
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


# -- nothing read back that the atlas did not write; bad input refused at the door ---------

CHEAP = {**SMALL, "starts": 8, "grid": 2}


def _cells(out):
    return sorted(p.name for p in out.glob("cell-*.json"))


def test_a_cell_edited_after_it_was_written_is_set_aside_and_computed_again(tmp_path):
    out = tmp_path / "a"
    first = atlas(BASE, lam=[0.1, 0.3], jobs=1, out=out, **CHEAP)
    cell = out / "cell-000001.json"
    edited = cell.read_text().replace(
        f'"n_critical": {first.rows[1]["n_critical"]}', '"n_critical": 999'
    )
    assert edited != cell.read_text()
    cell.write_text(edited)
    seen = read_atlas(out)  # reading trusts nothing it cannot check either
    assert seen.missing == [1] and "changed since" in seen.rejected["cell-000001.json"]
    calls = []
    again = atlas(
        BASE, lam=[0.1, 0.3], jobs=1, out=out, progress=lambda *a: calls.append(a), **CHEAP
    )
    assert calls == [(2, 2)]  # the one rejected cell, computed again
    assert "kept as cell-000001.json.rejected" in again.rejected["cell-000001.json"]
    assert (out / "cell-000001.json.rejected").read_text() == edited  # never deleted
    assert _strip(again.rows) == _strip(first.rows)
    assert [r["n_critical"] for r in read_atlas(out / "atlas.csv").rows] == [
        r["n_critical"] for r in first.rows
    ]
    assert read_atlas(out).rejected == {} and read_atlas(out).missing == []


@pytest.mark.parametrize("content", [b"", b'{"spec": "', b"not json", b"{}"])
def test_a_truncated_empty_or_foreign_cell_never_blocks_the_run(tmp_path, content):
    out = tmp_path / "a"
    first = atlas(BASE, lam=[0.1], L=[4, 6], jobs=1, out=out, **CHEAP)
    (out / "cell-000000.json").write_bytes(content)
    again = atlas(BASE, lam=[0.1], L=[4, 6], jobs=1, out=out, **CHEAP)
    assert _strip(again.rows) == _strip(first.rows) and list(again.rejected) == [
        "cell-000000.json"
    ]
    calls = []  # and the run after it finds everything in place
    atlas(BASE, lam=[0.1], L=[4, 6], jobs=1, out=out, progress=lambda *a: calls.append(a), **CHEAP)
    assert calls == []
    assert (out / "cell-000000.json.rejected").read_bytes() == content


def test_a_users_file_with_a_cell_name_is_kept_and_the_cell_computed(tmp_path):
    out = tmp_path / "a"
    out.mkdir()
    (out / "cell-000000.json").write_text("the user's notes")
    (out / "cell-000009.json").write_text("beyond the grid: not the atlas's to judge")
    a = atlas(BASE, lam=[0.1], jobs=1, out=out, **CHEAP)
    assert a.rows[0]["cell"] == 0 and "not recorded" in a.rejected["cell-000000.json"]
    assert (out / "cell-000000.json.rejected").read_text() == "the user's notes"
    assert (out / "cell-000009.json").read_text() == "beyond the grid: not the atlas's to judge"


def test_cells_are_journaled_and_the_marker_is_not_rewritten_per_cell(tmp_path):
    from slr_theory.output import JOURNAL_NAME, MARKER_NAME, written_files

    out = tmp_path / "a"
    atlas(BASE, lam=[0.1, 0.2, 0.3], jobs=1, out=out, **CHEAP)
    marker = json.loads((out / MARKER_NAME).read_text())["files"]
    assert set(marker) == {"atlas.json", "atlas.csv", *(["atlas.parquet"] * _pyarrow())}
    journal = [json.loads(x)["file"] for x in (out / JOURNAL_NAME).read_text().splitlines()]
    assert journal == _cells(out) == [f"cell-{i:06d}.json" for i in range(3)]
    assert set(written_files(out)) == {*marker, *journal}


def _pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize(
    "name, content, match",
    [
        ("atlas.csv", "my own table", "atlas.csv is not recorded as written by slr-theory"),
        ("atlas.json", "{corrupt", "atlas.json is not recorded as written by slr-theory"),
    ],
)
def test_a_users_table_or_spec_is_refused_before_any_cell(tmp_path, name, content, match):
    out = tmp_path / "a"
    out.mkdir()
    (out / name).write_text(content)
    calls = []
    with pytest.raises(OutputConflict, match=match):
        atlas(BASE, lam=[0.1], jobs=1, out=out, progress=lambda *a: calls.append(a), **CHEAP)
    assert calls == [] and sorted(p.name for p in out.iterdir()) == [name]
    assert (out / name).read_text() == content


def test_a_spec_of_ours_that_was_changed_is_refused(tmp_path):
    out = tmp_path / "a"
    atlas(BASE, lam=[0.1], jobs=1, out=out, **CHEAP)
    spec = out / "atlas.json"
    spec.write_text(spec.read_text().replace('"basin_runs": 16', '"basin_runs": 17'))
    with pytest.raises(OutputConflict, match=r"atlas\.json is changed since slr-theory wrote it"):
        atlas(BASE, lam=[0.1], jobs=1, out=out, **CHEAP)
    with pytest.raises(OutputConflict, match="changed since"):
        read_atlas(out)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"lam": [1, 1.0]}, r"`lam` must not repeat a value.*1 and 1.0 are the same"),
        ({"L": [4, 4.0]}, r"`L` must not repeat a value.*4 and 4.0 are the same"),
        ({"d": [2, 8]}, "`d` must be at least 4 in an atlas"),
        ({"out": ""}, "`out` must name a directory"),
        ({"out": "   "}, "`out` must name a directory"),
    ],
)
def test_values_are_compared_as_numbers_and_checked_at_the_door(tmp_path, monkeypatch, kw, match):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=match):
        atlas(BASE, **{"jobs": 1, **CHEAP, **kw})
    assert list(tmp_path.iterdir()) == []  # nothing written, here or anywhere


def test_the_backend_is_checked_before_the_grid_is_built(monkeypatch):
    def built(*a, **k):
        raise AssertionError("a cell's Params was built before the backend was checked")

    monkeypatch.setattr(Params, "replace", built)
    with pytest.raises(ValueError, match="`backend` must be 'processes' or 'dask'"):
        atlas(BASE, lam=np.geomspace(0.01, 1, 1000), L=list(range(4, 1004)), backend="bogus")


def test_jobs_are_bounded_by_the_cores_and_belong_to_local_workers():
    from slr_theory.work import usable_cores

    cores = usable_cores()
    with pytest.raises(ValueError, match=rf"`jobs` must be at most the {cores} cores"):
        atlas(BASE, jobs=cores + 1, **CHEAP)
    with pytest.raises(ValueError, match="`jobs` is for the workers the atlas starts"):
        atlas(BASE, backend="dask", client=object(), jobs=1, **CHEAP)


def test_a_users_nonlinearity_is_refused_with_the_reason():
    from slr_theory import Nonlinearity

    mine = Nonlinearity(
        "softsign",
        np.tanh,
        lambda x: 1 / np.cosh(x) ** 2,
        lambda x: -2 * np.tanh(x) / np.cosh(x) ** 2,
    )
    for kw, base in (({"nonlinearity": [mine]}, BASE), ({}, BASE.replace(nonlinearity=mine))):
        with pytest.raises(
            ValueError, match=r"`nonlinearity` must be names of built-in.*'softsign'"
        ):
            atlas(base, jobs=1, **{**CHEAP, **kw})


def test_a_users_nonlinearity_by_its_path_is_an_axis_value_its_workers_import():
    """A path is what the atlas records and what its worker processes import again."""
    from slr_theory.nonlinearity import nonlinearity_at

    path = "slr_theory.nonlinearity.examples:softsign"
    for kw, base in (
        ({"nonlinearity": [path]}, BASE),
        ({}, BASE.replace(nonlinearity=nonlinearity_at(path))),
    ):
        a = atlas(base, lam=[0.3, 0.5], jobs=2, **{**CHEAP, **kw})  # two cells: two workers
        assert a.axes["nonlinearity"] == [path]
        assert [r["nonlinearity"] for r in a.rows] == [path, path]
        assert all(r["n_critical"] > 0 for r in a.rows)


def test_the_search_settings_are_recorded_and_change_the_atlas(tmp_path):
    out = tmp_path / "a"
    a = atlas(BASE, lam=[0.1], jobs=1, out=out, **CHEAP)
    assert a.settings["starts"] == 8 and a.settings["grid"] == 2
    assert a.settings["certify"] == 0 and a.rows[0]["census_complete"] == -1  # no census asked
    assert read_atlas(out / "atlas.csv").settings == a.settings
    with pytest.raises(OutputConflict, match="another atlas"):
        atlas(BASE, lam=[0.1], jobs=1, out=out, **{**CHEAP, "starts": 9})
    row = atlas_cell(BASE.replace(lam=0.1), **{k: v for k, v in CHEAP.items()}, seed=(0, 0))
    assert _strip([a.rows[0]]) == _strip([{"cell": 0, **row}])


def test_a_lost_worker_process_ends_in_atlas_incomplete_with_the_cells_kept(tmp_path):
    """A worker killed mid-run (as by the OOM killer): the run stops with every finished
    cell kept, and the same call again completes it."""
    import os
    import signal

    from slr_theory.survey import AtlasIncomplete

    out = tmp_path / "a"
    grid = {"lam": [0.1, 0.15, 0.2, 0.25, 0.3, 0.35], **CHEAP}

    def kill_a_worker(done, total):
        if done == 1:
            import multiprocessing

            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGKILL)

    with pytest.raises(
        AtlasIncomplete, match=r"stopped after \d of 6 cells: a worker process died"
    ) as info:
        atlas(BASE, jobs=2, out=out, progress=kill_a_worker, **grid)
    assert info.value.out == out and info.value.done == len(_cells(out)) >= 1
    again = atlas(BASE, jobs=1, out=out, **grid)
    assert again.missing == [] and _strip(again.rows) == _strip(atlas(BASE, jobs=1, **grid).rows)


def test_the_cells_step_is_a_share_of_the_largest_stable_step_at_the_minima():
    """2 / h is where the PGD map stops contracting along a Hessian eigenvalue h: at the
    atlas's step the stiffest direction of the minima has the multiplier 1 - 2 STEP_SHARE
    (the map flips it and damps it by STEP_SHARE * 2 - 1), and none is below it."""
    pts = critical_points(Params.paper(lam=0.9))
    alpha = atlas_step(pts)
    minima = [q for q in pts if q.index == 0]
    mu = [1.0 - alpha * np.asarray(q.hessian_eigenvalues) for q in minima]  # the map's multipliers
    assert min(float(np.min(m)) for m in mu) == pytest.approx(1.0 - 2.0 * STEP_SHARE)
    with pytest.raises(ValueError, match="minimum"):
        atlas_step([q for q in pts if q.index > 0])


def test_a_certified_atlas_says_complete_by_proof_where_the_census_closes(tmp_path):
    """``certify``: each erf cell runs a census seeded by its search; where it closes every
    box and holds the search's points the count reads "complete by proof"; a model without
    rigorous enclosures (tanh) has -1; the columns survive the table. (An atlas without
    ``certify``: test_the_search_settings_are_recorded_and_change_the_atlas.)"""
    pytest.importorskip("flint")
    out = tmp_path / "a"
    a = atlas(
        BASE, lam=[0.3], nonlinearity=["erf", "tanh"], jobs=1, out=out, certify=10**6, **CHEAP
    )
    erf, tanh = a.rows
    assert a.settings["certify"] == 10**6
    assert erf["census_complete"] == 1 and erf["census_agrees"] == 1
    assert erf["census_points"] == erf["n_critical"]
    assert found_text(erf) == f"{erf['n_critical']} (complete by proof)"
    assert (tanh["census_complete"], tanh["census_points"], tanh["census_agrees"]) == (-1, -1, -1)
    assert "complete by proof" not in found_text(tanh)
    back = read_atlas(out / "atlas.csv")
    assert _strip(back.rows) == _strip(a.rows) and back.settings == a.settings
    with pytest.raises(ValueError, match="`certify`"):
        atlas(BASE, lam=[0.3], jobs=1, certify=-1, **CHEAP)


def test_a_kinked_sigma_runs_in_the_atlas():
    """ReLU by name through a cell: its row names it, the optimum's risk is the risk
    function's own, and its search holds at least M's points."""
    from slr_theory import critical_points, risk

    a = atlas(BASE, lam=[0.3], nonlinearity=["relu"], jobs=1, **CHEAP)
    row = a.rows[0]
    p = BASE.replace(lam=0.3, nonlinearity="relu")
    assert row["nonlinearity"] == "relu"
    assert row["optimum_risk"] == pytest.approx(float(risk(p, 1.0, 1.0)), rel=1e-12)
    # the search always holds M's points (proved or located), up to symmetry
    on_m = {tuple(q.overlaps.round(9)) for q in critical_points(p, "manifold")}
    assert row["n_critical"] >= len(on_m) > 0


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("n_critical", "NaN"),
        ("n_critical", 2.5),
        ("optimum_risk", None),
        ("optimum_basin_fraction", 1.7),
        ("global_min_overlaps", [0.0, 1.0]),
        ("optimum_is_global", "yes"),
    ],
)
def test_a_cell_edited_with_a_reforged_digest_is_rejected_by_its_field(
    tmp_path, capsys, column, value
):
    """An atlas cell holding "NaN" where an integer goes, with its digest re-forged in the
    journal, was 'internal error: Unknown format code d'. It is a rejected cell, named
    with its field, and the atlas reads the rest."""
    import hashlib

    from slr_theory.cli import main
    from slr_theory.output import JOURNAL_NAME

    out = tmp_path / "a"
    atlas(BASE, lam=[0.1, 0.3], jobs=1, out=out, **CHEAP)
    cell = out / "cell-000000.json"
    data = json.loads(cell.read_text())
    data["row"][column] = value
    cell.write_text(json.dumps(data))
    digest = hashlib.sha256(cell.read_bytes()).hexdigest()
    lines = [json.loads(x) for x in (out / JOURNAL_NAME).read_text().splitlines()]
    for line in lines:
        if line["file"] == cell.name:
            line["sha256"] = digest
    (out / JOURNAL_NAME).write_text("".join(json.dumps(x) + "\n" for x in lines))
    a = read_atlas(out)
    assert [r["cell"] for r in a.rows] == [1] and f"field `{column}`" in a.rejected[cell.name]
    assert list(a.rejected) == [cell.name]  # the other cell, in its domain, is read
    assert main(["atlas", "--from", str(out), "--plot"]) == 0
    err = capsys.readouterr().err
    assert f"field `{column}`" in err and "internal error" not in err
