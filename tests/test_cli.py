"""The slr-theory command line."""

import json
import subprocess
import sys

import pytest

from slr_theory.cli import main


def test_verify_prints_table_and_exits_0(capsys):
    assert (
        main(["verify", "--only", "gaussian.mean_erf*", "--samples", "2000", "--seed", "3"]) == 0
    )
    out = capsys.readouterr().out
    import fnmatch

    from slr_theory.verify import REGISTRY

    n = len(fnmatch.filter(REGISTRY, "gaussian.mean_erf*"))
    assert "gaussian.mean_erf_prime" in out and "ok" in out
    assert out.strip().splitlines()[-1] == f"{n} passed, 0 failed"


def test_verify_json(capsys):
    assert main(["verify", "--only", "gaussian.zeta", "--samples", "1000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [record] = data["rows"]
    assert record["name"] == "gaussian.zeta" and record["passed"] is True
    assert data["parameters"] == {
        "only": ["gaussian.zeta"],
        "random": False,
        "samples": 1000,
        "seed": 0,
    }


def test_verify_exits_1_when_a_check_fails(capsys, monkeypatch):
    import dataclasses

    from slr_theory.verify import REGISTRY

    good = REGISTRY["gaussian.zeta"]
    monkeypatch.setitem(
        REGISTRY, "gaussian.zeta", dataclasses.replace(good, closed_form=lambda **p: 0.5)
    )
    assert main(["verify", "--only", "gaussian.zeta", "--samples", "1000"]) == 1
    assert "FAIL" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["verify", "--samples", "-3"],
            "--samples: must be an integer in [1000, 1e+08] (below, the z-test's normal approximation fails), got '-3'",
        ),
        (
            ["verify", "--samples", "x"],
            "--samples: must be an integer in [1000, 1e+08] (below, the z-test's normal approximation fails), got 'x'",
        ),
        (["verify", "--seed", "-1"], "--seed: must be a non-negative integer"),
        (["verify", "--only", "nope"], "no check matches 'nope'"),
        (
            ["risk", "--L", "4", "--s", "5", "--kappa", "0.5", "--nu", "0.5"],
            "argument --s: must be at most --L = 4, got 5",
        ),
        (["critical", "--s", "0"], "--s: must be an integer in [1, 1e+12]"),
        (["frobnicate"], "invalid choice"),
        ([], "required: command"),
    ],
)
def test_usage_errors_print_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_python_dash_m_is_the_same_command():
    proc = subprocess.run(
        [sys.executable, "-m", "slr_theory", "verify", "--samples", "x"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("slr-theory verify: error:")


def test_stats_prints_the_table(capsys):
    assert main(["stats", "--d-max", "1000", "--samples", "2000", "--L", "10"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        "parameters: L = 10, attention = pointwise, d_max = 1000, eps = 0.0, gamma = 0.70710678"
    )
    assert out[2].split()[:3] == ["d", "L", "lambda*"]
    assert [line.split()[0] for line in out[3:]] == ["100", "1000"]


def test_stats_takes_the_model_flags(capsys):
    """s informative tokens and another nonlinearity: named in the title; the attention
    column is the risk at (k*, v*) of that model at its best temperature."""
    from slr_theory import Params, risk

    argv = ["stats", "--d-max", "100", "--samples", "500", "--s", "2", "--nonlinearity", "tanh"]
    assert main([*argv, "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["rows"]
    p = Params(d=100, L=10, lam=row["lam_opt"], gamma=0.5**0.5, s=2, nonlinearity="tanh")
    assert row["attention"] == float(risk(p, 1.0, 1.0))
    assert row["bayes"] < row["attention"] < row["linear"]
    assert main(argv) == 0
    assert "s = 2, σ = tanh" in capsys.readouterr().out.splitlines()[1]


def test_stats_takes_the_attention(capsys):
    """`stats --attention softmax` was 'unrecognized arguments'; its attention column is
    softmax attention's risk at (k*, v*) at its best temperature, named in the title."""
    from slr_theory import Params, risk

    argv = ["stats", "--d-max", "100", "--samples", "500", "--attention", "softmax"]
    assert main([*argv, "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["rows"]
    p = Params(d=100, L=10, lam=row["lam_opt"], gamma=0.5**0.5, attention="softmax")
    assert row["attention"] == float(risk(p, 1.0, 1.0))
    assert main(argv) == 0
    assert "softmax attention" in capsys.readouterr().out.splitlines()[1]


def test_a_flag_is_never_taken_for_a_longer_one(capsys):
    """`stats --d 400` ran as `--d-max 400` (argparse's prefix matching) and failed on a
    flag the user never gave; every command now refuses a prefix, in one line."""
    for argv in (["stats", "--d", "400"], ["critical", "--star", "8"], ["report", "--ou", "x"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "unrecognized arguments" in err, err


def test_echoes_say_the_values_used_never_none_and_nothing_that_does_not_apply(capsys):
    """Echoes printed `L = None`, `alpha = None`, and `critical --where manifold` echoed
    `starts = 512`, which it does not use."""
    assert main(["stats", "--d-max", "100", "--samples", "100"]) == 0
    echo = capsys.readouterr().out.splitlines()[0]
    assert "None" not in echo and "L = ceil(sqrt(d))" in echo
    assert main(["critical", "--where", "manifold"]) == 0
    echo = capsys.readouterr().out.splitlines()[0]
    assert "None" not in echo and "starts" not in echo and "where = manifold" in echo
    assert main(["critical", "--where", "manifold", "--json"]) == 0
    used = json.loads(capsys.readouterr().out)["parameters"]
    assert None not in used.values() and "starts" not in used and "alpha" not in used
    assert main(["critical", "--starts", "4"]) == 0  # the search uses them
    echo = capsys.readouterr().out.splitlines()[0]
    assert "starts = 4" in echo and "seed = 0" in echo and "None" not in echo
    # softmax has no sigma: its echo named erf, the default of a flag it does not use
    for argv in (
        ["risk", "--kappa", "0.5", "--nu", "0.4"],
        ["stats", "--d-max", "100", "--samples", "1000"],
    ):
        assert main([*argv, "--attention", "softmax", "--json"]) == 0
        used = json.loads(capsys.readouterr().out)["parameters"]
        assert used["attention"] == "softmax" and "nonlinearity" not in used
        assert main([*argv, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["parameters"]["nonlinearity"] == "erf"


def test_stats_json(capsys):
    assert main(["stats", "--d-max", "100", "--samples", "500", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [row] = data["rows"]
    assert row["d"] == 100 and row["L"] == 10 and row["attention"] < row["linear"]
    assert data["parameters"]["samples"] == 500 and data["parameters"]["d_max"] == 100


@pytest.mark.parametrize(
    "argv, message",
    [
        (["stats", "--gamma", "-1"], "--gamma: must be a number in [1e-06, 1000], got '-1'"),
        (["stats", "--eps", "nan"], "--eps: must be a number in [0, 1e+50], got 'nan'"),
        (["stats", "--d-max", "10"], "--d-max: must be an integer in [100, 1e+15], got '10'"),
        (["stats", "--d-max", "150"], "--d-max: must be a power of 10 >= 100"),
        (["stats", "--L", "0"], "--L: must be an integer in [1, 1e+07], got '0'"),
        (["stats", "--L", "5", "--s", "6"], "--s: must be at most --L = 5, got 6"),
        (["stats", "--s", "11"], "--s: must be at most the first row's L"),
    ],
)
def test_stats_usage_errors(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_critical_on_m_with_the_map_check(capsys):
    assert main(["critical", "--where", "manifold", "--alpha", "4e-3"]) == 0
    out = capsys.readouterr().out
    assert "exactly five critical points" in out
    assert "strict saddle" in out and "alpha < 1/Lip: fails" in out


def test_critical_json(capsys):
    assert main(["critical", "--starts", "16", "--json", "--lam", "0.1"]) == 0
    data = json.loads(capsys.readouterr().out)
    kinds = [p["kind"] for p in data["points"]]
    assert data["where"] == "sphere" and kinds[0] == "minimum"
    assert data["parameters"]["lam"] == 0.1 and data["parameters"]["starts"] == 16
    assert sum(p["index"] == 0 for p in data["points"]) == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["critical", "--d", "1"], "--d: must be an integer in [2, 1e+15]"),
        (["critical", "--where", "torus"], "invalid choice: 'torus'"),
        (["critical", "--alpha", "0"], "--alpha: must be a number in [1e-300, 1e+100]"),
        (["critical", "--starts", "0"], "--starts: must be an integer in [1, 1e+06]"),
        (["critical", "--starts", "2000000"], "--starts: must be an integer in [1, 1e+06]"),
    ],
)
def test_critical_usage_errors(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    from slr_theory import __version__

    assert capsys.readouterr().out.strip() == f"slr-theory {__version__}"


def test_risk_text_and_json(capsys):
    from slr_theory import Params, risk

    assert main(["risk", "--kappa", "0.5", "--nu", "0.5", "--lam", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "risk" in out and out.startswith("parameters: ") and "lam = 0.25" in out
    assert main(["risk", "--kappa", "0.3", "--nu", "-0.2", "--theta", "0.1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["risk"] == float(risk(Params.paper(), 0.3, -0.2, 0.1))
    assert set(data["components"]) == {"noise", "informative", "distractors", "interactions"}
    assert data["parameters"]["d"] == 400 and data["parameters"]["theta"] == 0.1


@pytest.mark.parametrize(
    "argv",
    [
        ["flow", "--kappa0", "0.1", "--nu0", "0.05", "--t-max", "20", "--records", "3"],
        ["flow", "--kappa0", "0.1", "--nu0", "0.05", "--theta0", "0.01", "--t-max", "5"],
        ["pgd", "--kappa0", "0.1", "--nu0", "0.05", "--alpha", "4e-3", "--steps", "500"],
    ],
)
def test_trajectories_json(capsys, argv):
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["columns"][1:] == ["kappa", "nu", "theta", "eta", "rho", "risk"]
    risks = [r[-1] for r in data["rows"]]
    assert risks[-1] < risks[0]
    assert data["parameters"]["kappa0"] == 0.1 and data["parameters"]["lam"] == 0.1


def test_portrait_writes_once_and_refuses_to_overwrite(tmp_path, capsys):
    """The output discipline, on the cheapest portrait (its points; the default layers are
    the command-line contract's test)."""
    out = tmp_path / "p.png"
    assert main(["portrait", "--out", str(out), "--layers", "points"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["portrait", "--out", str(out), "--layers", "points"]) == 2
    assert "--force" in capsys.readouterr().err
    # beside the figure only the marker that says slr-theory wrote it: no temporaries
    assert sorted(p.name for p in tmp_path.iterdir()) == [".slr-theory.json", "p.png"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["risk", "--kappa", "2", "--nu", "0"], "--kappa: must be a number in [-1, 1]"),
        (["risk", "--kappa", "0.9", "--nu", "0", "--eta", "0.9"], "infeasible"),
        (["risk", "--nu", "0"], "required: --kappa"),
        (["pgd", "--kappa0", "0", "--nu0", "0", "--alpha", "-1", "--steps", "3"], "--alpha"),
        (["flow", "--kappa0", "0", "--nu0", "0"], "required: --t-max"),
        (["portrait", "--out", "x.txt"], "must end in .png, .svg or .pdf"),
    ],
)
def test_new_commands_usage_errors(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_portrait_destinations_are_refused_at_the_door(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder.png").mkdir()
    cases = [
        (tmp_path / "missing" / "p.png", "no directory"),
        (tmp_path / "file" / "p.png", "no directory"),
        (tmp_path / "folder.png", "must name a file"),
        (tmp_path / "p.txt", "must end in .png, .svg or .pdf"),
    ]
    for out, message in cases:
        assert main(["portrait", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "argument --out:" in err[0] and message in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder.png"]


def test_help_shows_every_default(capsys):
    """Each option with a default names it in --help (flags and None defaults excepted)."""
    from slr_theory import cli

    parser = cli.dispatch._build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        with pytest.raises(SystemExit) as info:
            main([name, "--help"])
        assert info.value.code == 0
        text = " ".join(capsys.readouterr().out.split())
        for action in p._actions:
            if not action.option_strings or action.default in (None, False, "==SUPPRESS=="):
                continue
            shown = (
                f"{action.default:.6g}" if isinstance(action.default, float) else action.default
            )
            assert f"(default: {shown})" in text, (name, action.dest)


def test_atlas_writes_its_table_and_resumes(capsys, tmp_path):
    out = tmp_path / "at"
    argv = ["atlas", "--out", str(out), "--d", "8", "--L", "4", "--lam", "0.1,0.3"]
    argv += ["--gamma", "0.7", "--basin-runs", "8", "--steps", "200", "--max-steps", "400"]
    argv += ["--jobs", "1"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("parameters: ") and "lam = [0.1, 0.3]" in text
    assert f"wrote {out / 'atlas.csv'} (2 cells)" in text
    assert len([line for line in text.splitlines() if line[:1].isdigit()]) == 2
    first = (out / "atlas.csv").read_text()
    assert main([*argv, "--json"]) == 0  # everything is there: nothing is computed again
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["lam"] for r in rows] == [0.1, 0.3]
    assert (out / "atlas.csv").read_text() == first
    assert main([*argv[:-2], "--jobs", "1", "--lam", "0.2"]) == 2  # another atlas: refused
    assert "argument --out" in capsys.readouterr().err


def _atlas_argv(out) -> list[str]:
    argv = ["atlas", "--out", str(out), "--d", "8", "--L", "4", "--lam", "0.1,0.3"]
    argv += ["--gamma", "0.7", "--basin-runs", "4", "--steps", "50", "--max-steps", "50"]
    return [*argv, "--stability-grid", "3", "--starts", "4", "--grid", "1", "--jobs", "1"]


def test_atlas_plots_reads_back_and_names_a_cell_it_did_not_trust(capsys, tmp_path):
    from matplotlib.image import imread

    out = tmp_path / "at"
    assert main([*_atlas_argv(out), "--plot"]) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith(f"wrote {out / 'atlas.png'}")
    image = imread(out / "atlas.png")[..., :3]
    grey = (image.max(axis=-1) - image.min(axis=-1)) < 0.05
    assert (~grey).mean() > 0.2  # the cells are drawn, not an empty frame
    cell = out / "cell-000001.json"
    cell.write_text(cell.read_text().replace('"basin_runs": 4', '"basin_runs": 5'))
    assert main(["atlas", "--from", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("parameters: plot = False\n")  # nothing it did not use
    assert f"read {out}: 1 of 2 cells (1 missing: run the atlas again" in captured.out
    assert captured.err == (
        "slr-theory atlas: note: cell-000001.json changed since slr-theory wrote it (its "
        "SHA-256 differs from the record); its cell is missing\n"
    )
    assert main(_atlas_argv(out)) == 0  # computed again, the edited file kept aside
    assert "kept as cell-000001.json.rejected; its cell was computed again" in (
        capsys.readouterr().err
    )
    (out / "atlas.png").unlink()
    assert main(["atlas", "--from", str(out), "--plot", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 2 and (out / "atlas.png").exists()
    for extra in (["--lam", "0.2"], ["--out", str(out)], ["--jobs", "1"]):
        assert main(["atlas", "--from", str(out), *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "does not apply with --from" in err
    assert main(["atlas", "--from", str(tmp_path)]) == 2
    assert "argument --from: cannot read an atlas" in capsys.readouterr().err
    assert main(["atlas", "--lam", "0.1"]) == 2
    assert "argument --out: required (or --from DIR" in capsys.readouterr().err


def test_atlas_figure_draws_a_grid_with_one_value_on_an_axis(tmp_path):
    """An axis of one value has no neighbours to infer cell edges from: the cells are
    still drawn (each a unit square around its index)."""
    from matplotlib.image import imread

    from slr_theory import Params, atlas
    from slr_theory.plotting import atlas_figure

    a = atlas(Params(d=8, L=4, lam=0.3, gamma=0.7), lam=[0.1, 0.3], jobs=1, basin_runs=4,
              steps=50, max_steps=50, stability_grid=3, starts=4, grid=1)  # fmt: skip
    atlas_figure(a, tmp_path / "a.png", x="lam", y="L")
    image = imread(tmp_path / "a.png")[..., :3]
    grey = (image.max(axis=-1) - image.min(axis=-1)) < 0.05
    assert (~grey).mean() > 0.2, "no cell drawn"


def test_verify_runs_the_models_checks_where_the_flags_say(capsys):
    """`verify --lam 0.9` said "unrecognized arguments": the model's checks now run at the
    paper's parameters with lam = 0.9, the echo and the table say so, and --json has the
    counts as integers."""
    assert main(["verify", "--only", "risk.total", "--samples", "2000", "--lam", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "lam = 0.9" in out.splitlines()[0] and "d = 400" in out.splitlines()[0]
    assert "at d = 400, L = 10, λ = 0.9, γ = 0.707107, ε = 0: risk.total" in out
    assert main(["verify", "--only", "risk.total", "--samples", "2000", "--json", "--L", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    [row] = data["rows"]
    assert data["parameters"]["L"] == 3 and data["parameters"]["d"] == 400
    assert row["params"]["L"] == 3 and isinstance(row["params"]["d"], int)
    assert main(["verify", "--lam", "0.9", "--random"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "slr-theory verify: error: argument --lam: not with --random (which draws every "
        "check's parameters)"
    )


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["taken", "not-ours"])
def test_certify_refuses_its_out_before_the_census(capsys, tmp_path, monkeypatch, force):
    """A refused --out costs nothing: the census (minutes at lam = 0.9) is never started."""
    pytest.importorskip("flint")
    import slr_theory.certify as certify

    def never(*args, **kw):
        raise AssertionError("the census ran before --out was checked")

    monkeypatch.setattr(certify, "certify_critical_points", never)
    out = tmp_path / "c.json.gz"
    out.write_bytes(b"the user's")
    argv = ["certify", "--d", "8", "--L", "4", "--lam", "0.3", "--out", str(out), *force]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("slr-theory certify: error: argument --out: ")
    assert out.read_bytes() == b"the user's"


def test_atlas_from_plot_names_from_and_no_force_it_lacks(capsys, tmp_path):
    """atlas --from --plot writes into what it read: a refusal names --from, and never
    suggests a --force the atlas command does not have."""
    out = tmp_path / "at"
    assert main(_atlas_argv(out)) == 0
    capsys.readouterr()
    (out / "atlas.png").write_bytes(b"the user's figure")
    assert main(["atlas", "--from", str(out), "--plot"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("slr-theory atlas: error: argument --from: ") and "--force" not in err
    assert (out / "atlas.png").read_bytes() == b"the user's figure"


_USER_MODULE = """
import numpy as np
from slr_theory import Nonlinearity
from slr_theory.models import model_of

two_tanh = Nonlinearity(
    "two_tanh",
    lambda u: 2 * np.tanh(u),
    lambda u: 2 / np.cosh(u) ** 2,
    lambda u: -4 * np.tanh(u) / np.cosh(u) ** 2,
)
coupled = model_of("softmax")
"""


def _isolated(tmp_path, *argv):
    """The console script's situation: the current directory is not on sys.path (-I)."""
    code = "import sys; from slr_theory.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-I", "-c", code, *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_users_nonlinearity_and_model_by_path_from_the_current_directory(tmp_path, monkeypatch):
    """``--nonlinearity module:attr`` and ``--attention module:attr`` find a module in the
    current directory (as python -m would), echo the path typed, and give the API's risk;
    a path that does not resolve is one line and exit 2."""
    from slr_theory import Params, risk

    (tmp_path / "mysigma.py").write_text(_USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    ov = ["--kappa", "0.5", "--nu", "0.4", "--theta", "0.1", "--json"]
    for flag, path, kw in (
        ("--nonlinearity", "mysigma:two_tanh", {"nonlinearity": "mysigma:two_tanh"}),
        ("--attention", "mysigma:coupled", {"attention": "softmax"}),
    ):
        done = _isolated(tmp_path, "risk", flag, path, *ov)
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        assert data["parameters"][flag[2:]] == path
        assert data["risk"] == float(risk(Params.paper().replace(**kw), 0.5, 0.4, 0.1))
    done = _isolated(tmp_path, "risk", "--nonlinearity", "mysigma:nope", *ov)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "slr-theory risk: error: argument --nonlinearity: must name an object as "
        "package.module:attr; module 'mysigma' has no attribute 'nope', got 'mysigma:nope'."
    ]
