"""The paper's experiments: the shipped configuration, the batched runner, the outputs."""

import csv

import numpy as np
import pytest

from slr_theory import pgd
from slr_theory.cli import main
from slr_theory.experiments import experiments, output_paths, run, write

# docs/theory.md §7, typed from the specification
PAPER = {
    "gd_manifold": ("manifold", 0.1, 4e-3, 20_000, False, 400),
    "gd_sphere_large_lambda": ("sphere", 0.9, 1e-3, 120_000, False, 400),
    "gd_sphere_small_lambda": ("sphere", 0.1, 4e-3, 20_000, False, 400),
    "gd_sphere_schedule": ("sphere", 1.0, 4e-3, 120_000, True, 400),
    "sgd_sphere_schedule": ("sphere", 2.0, 1e-3, 200_000, True, 80),
}


def test_shipped_configurations_are_the_papers():
    table = experiments()
    assert list(table) == list(PAPER)
    for name, (init, lam0, alpha, steps, schedule, d) in PAPER.items():
        e = table[name]
        assert (e.init, e.lam0, e.alpha, e.steps, e.schedule, e.d) == (
            init,
            lam0,
            alpha,
            steps,
            schedule,
            d,
        )
        assert (e.L, e.gamma, e.repeats) == (10, 0.5**0.5, 30)
    sgd = table["sgd_sphere_schedule"]
    assert (sgd.method, sgd.batch, sgd.eps) == ("sgd", 5, 0.1)
    assert table["gd_sphere_schedule"].lr_schedule(10_000) == 0.5


def test_run_equals_pgd_on_its_starts():
    """The experiments run by ``pgd``: the same trajectories, bit for bit, whatever is
    run beside them."""
    names = ["gd_manifold", "gd_sphere_large_lambda", "gd_sphere_schedule"]
    out = run(names, repeats=3, steps_scale=0.005, records=40, seed=4)
    for name in names:
        e, tr = out[name].experiment, out[name].trajectory
        ref = pgd(
            e.params,
            tr.overlaps[0],
            e.alpha,
            e.steps,
            e.lr_schedule,
            record_every=e.record_every(40),
        )
        np.testing.assert_array_equal(ref.step, tr.step)
        np.testing.assert_array_equal(tr.overlaps, ref.overlaps)
        np.testing.assert_array_equal(tr.risk, ref.risk)
        np.testing.assert_array_equal(tr.lam, ref.lam)
    assert np.all(out["gd_manifold"].trajectory.overlaps[..., 2:] == 0)
    # the same seed gives the same initialisations, and alone the same trajectories
    again = run("gd_manifold", repeats=3, steps_scale=0.005, records=40, seed=4)["gd_manifold"]
    np.testing.assert_array_equal(
        again.trajectory.overlaps, out["gd_manifold"].trajectory.overlaps
    )


def test_write_csv_and_figure_and_refuse_overwrite(tmp_path):
    res = run("sgd_sphere_schedule", repeats=2, steps_scale=0.001, records=10)[
        "sgd_sphere_schedule"
    ]
    csv_path, png_path = write(res, tmp_path)
    assert (csv_path, png_path) == output_paths("sgd_sphere_schedule", tmp_path)
    with open(csv_path) as fh:
        rows = list(csv.DictReader(fh))
    tr = res.trajectory
    assert len(rows) == tr.overlaps.shape[0] * 2
    last = rows[-1]
    assert int(last["step"]) == 200 and int(last["repeat"]) == 1
    np.testing.assert_allclose(
        [float(last[k]) for k in ("kappa", "nu", "theta", "eta", "rho")],
        tr.overlaps[-1, 1],
        rtol=1e-15,  # the CSV's text round-trips a double (17 digits): equal, 0 ulp
    )
    assert float(last["risk_minus_eps2"]) == pytest.approx(tr.risk[-1, 1] - 0.01, rel=1e-12)
    assert float(last["dist_to_M"]) == pytest.approx(
        np.linalg.norm(tr.overlaps[-1, 1, 2:]), rel=1e-12
    )
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    before = csv_path.read_bytes()
    with pytest.raises(FileExistsError, match="force"):
        write(res, tmp_path)
    assert csv_path.read_bytes() == before
    write(res, tmp_path, force=True)


def test_unknown_experiment():
    with pytest.raises(ValueError, match="`name` must be 'all' or one of"):
        run("gd_nowhere")


def test_cli_reproduce(tmp_path, capsys):
    args = [
        "reproduce",
        "gd_manifold",
        "--out",
        str(tmp_path),
        "--repeats",
        "2",
        "--steps-scale",
        "0.01",
    ]
    assert main(args) == 0
    assert "gd_manifold: 2 repeats x 200 steps" in capsys.readouterr().out
    assert (tmp_path / "gd_manifold.csv").exists() and (tmp_path / "gd_manifold.png").exists()
    stamp = (tmp_path / "gd_manifold.csv").stat().st_mtime_ns
    assert main(args) == 2  # refuses to overwrite, before computing
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exists; pass --force" in err[0]
    assert (tmp_path / "gd_manifold.csv").stat().st_mtime_ns == stamp
    assert main([*args, "--force"]) == 0


def test_cli_reproduce_says_where_runs_ended_group_by_group(tmp_path, capsys):
    """It printed '|kappa| 0.590, |nu| 0.600' when 18 of 30 runs end near |kappa| = 0.98
    and 12 near 0: a mean over runs that ended apart. Each group of ends is now said with
    its size, its place and its risk, and the sizes add up to the repeats; the groups are
    the runs' own ends up to the model's symmetries."""
    import re

    from slr_theory.critical import end_groups, symmetries
    from slr_theory.experiments import experiments, run

    argv = ["reproduce", "gd_sphere_small_lambda", "--out", str(tmp_path), "--repeats", "30"]
    assert main(argv) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "|kappa|" not in line
    sizes = [int(n) for n in re.findall(r"(\d+) near \(", line)]
    res = run(["gd_sphere_small_lambda"], repeats=30)["gd_sphere_small_lambda"]
    want = end_groups(
        res.trajectory.overlaps[-1], symmetries(experiments()["gd_sphere_small_lambda"].params)
    )
    assert sizes == [g.size for g in want] and sum(sizes) == 30 and len(sizes) >= 2
    assert "near (0.00, 0.00, 0.63, 1.00, 0.00)" in line  # the minimum off M (k = v*)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["reproduce", "nope", "--out", "x"], "must be 'all' or one of"),
        (["reproduce", "all"], "--out"),
        (["reproduce", "all", "--out", "x", "--steps-scale", "0"], "in (0, 1]"),
        (["reproduce", "all", "--out", "x", "--repeats", "-3"], "positive integer"),
    ],
)
def test_cli_reproduce_usage_errors(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and match in err[0]


def test_two_jobs_give_the_same_results():
    kw = {"repeats": 2, "steps_scale": 0.002, "records": 20, "seed": 7}
    one = run(["gd_manifold", "sgd_sphere_schedule"], jobs=1, **kw)
    two = run(["gd_manifold", "sgd_sphere_schedule"], jobs=2, **kw)
    for name in one:
        np.testing.assert_array_equal(one[name].trajectory.overlaps, two[name].trajectory.overlaps)
        np.testing.assert_array_equal(one[name].trajectory.risk, two[name].trajectory.risk)
    with pytest.raises(ValueError, match="`jobs`"):
        run("gd_manifold", jobs=0)


def test_figure_groups_say_whether_runs_settled_and_what_was_folded():
    """A group's label says 'settle at' only when every run stopped moving, and says when
    symmetric end points were folded into one group."""
    import numpy as np

    from slr_theory.experiments import SETTLED_SPEED, ExperimentResult, experiments
    from slr_theory.plotting.runs import _group_label
    from slr_theory.trajectory import PGDResult

    steps = np.array([0, 100, 200])
    ov = np.zeros((3, 3, 5))
    ov[:, :, :2] = 0.5
    ov[-1, :, :2] = 1.0
    ov[-2, :, :2] = 1.0  # runs 0-2 still at the last interval
    g = np.array([0, 1, 2])

    def label_of(ov):
        res = ExperimentResult(
            experiments()["gd_manifold"], PGDResult(steps, ov, np.zeros((3, 3)), steps * 0.0), 0
        )
        return _group_label(ov, g, steps, res.still_moving(SETTLED_SPEED))

    assert label_of(ov) == "3 of 3 runs settle at (1.00, 1.00, 0.00, 0.00, 0.00)"
    ov[-2, 1, 0] = 1.0 - 200 * SETTLED_SPEED  # run 1 moved 2e-9 per step
    assert "1 still moving at step 200" in label_of(ov)
    ov[-2, 1, 0] = 1.0
    ov[-2:, 2, :2] = -1.0  # the image of (1, 1) under (k, v) -> (-k, -v)
    label = label_of(ov)
    assert "2 symmetric images folded" in label and "settle at" in label


def test_a_run_cut_short_is_said_not_converged_as_its_legend_says():
    """``still_moving`` is the figure's settling rule (SETTLED_SPEED per step over the last
    record): a run stopped a thousandth of the way is still moving, and the legend says so
    as the report's sentence does."""
    from slr_theory.plotting import SETTLED_SPEED
    from slr_theory.plotting.runs import _group_label

    res = run("gd_manifold", repeats=3, steps_scale=0.001, records=5)["gd_manifold"]
    moving = res.still_moving(SETTLED_SPEED)
    assert moving.all()
    tr = res.trajectory
    label = _group_label(tr.overlaps, np.arange(3), tr.step, moving)
    assert f"still moving at step {int(tr.step[-1])}" in label
    with pytest.raises(ValueError, match="`speed`"):
        res.still_moving(-1.0)
