"""Bad input gets a clear error naming the argument, never a wrong number (a start of the
contract suite: the cases found by trying the toolkit as a new user would)."""

from pathlib import Path

import numpy as np
import pytest

from slr_theory import (
    Params,
    continuation,
    critical_points,
    lipschitz_bound,
    mean_erf,
    overlap_flow,
    pgd,
    pgd_map_spectrum,
    risk,
    risk_at,
)
from slr_theory.dynamics import sample_initial_overlaps
from slr_theory.experiments import run
from slr_theory.flows import manifold_flow
from slr_theory.sampling import monte_carlo_risk, sample, vectors_from_overlaps

P = Params.paper()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: vectors_from_overlaps([0.9, 0.9, 0.9, 0.9, 0], 400), "infeasible"),
        (lambda: vectors_from_overlaps([2, 0, 0, 0, 0], 400), "`kappa` must lie in"),
        (lambda: vectors_from_overlaps([np.nan, 0, 0, 0, 0], 400), "`kappa` must not be NaN"),
        (lambda: vectors_from_overlaps([0.5, 0.5, 0, 0], 400), "five numbers"),
        (lambda: vectors_from_overlaps([0.5, 0.5, 0, 0, 0], 3), "`d` must be >= 4"),
        (lambda: mean_erf(None, 1), "`mu` must be real numbers, got None"),
        (lambda: mean_erf("1", 1), "`mu` must be real numbers"),
        (lambda: risk(P, None, 0), "`kappa` must be real numbers, got None"),
        (lambda: sample(P, -1, np.random.default_rng()), "`n` must be a positive integer"),
        (lambda: sample_initial_overlaps(P, np.random.default_rng(), -1), "`size`"),
        (
            lambda: sample_initial_overlaps(
                Params(d=3, L=2, lam=0.5, gamma=0.5), np.random.default_rng(), 2
            ),
            "`d` must be >= 4",
        ),
        (lambda: sample_initial_overlaps(P, 1.5, 2), "`rng`"),
        (lambda: run("gd_manifold", records=0), "`records`"),
        (lambda: run("gd_manifold", seed=-1), "`seed`"),
        (lambda: run("gd_manifold", repeats=0), "`repeats`"),
        (lambda: run("gd_manifold", steps_scale=2.0), "`steps_scale`"),
        (lambda: manifold_flow(P, 0.1, 0.1, 1.0, method="bogus"), "`method` must be one of"),
        # found by fuzzing every public name with odd values in every slot
        (lambda: pgd(P, [0.3, 0.2, 0, 0, 0], 1e-3, 1e300), "`steps` must be"),
        (lambda: pgd(P, [0.3, 0.2, 0, 0, 0], 1e-3, None), "`steps` must be"),
        (lambda: pgd(P, [0.3, 0.2, 0, 0, 0], 1e-3, 10**9), "`record_every` must keep"),
        (lambda: pgd(P, [0.3, 0.2, 0, 0, 0], 1e300, 10), r"`alpha` must be <= 1e\+100"),
        (lambda: pgd(P, "x", 1e-3, 10), "`overlaps0` must be real numbers"),
        (lambda: overlap_flow(P, [0.3, 0.2, 0, 0, 0], 1.0, rtol=1e300), "`rtol` must be <= 1"),
        (lambda: overlap_flow(P, 1j, 1.0), "`overlaps0` must be real numbers"),
        (lambda: continuation(P, None), "`lam_range` must be two temperatures"),
        (lambda: continuation(P, (1e-9, 0.1)), "`lam_range` must lie in"),
        (lambda: critical_points(P, starts=1e300), "`starts` must be a non-negative integer <="),
        (lambda: lipschitz_bound(P, samples=10**9), "`samples` must be a positive integer <="),
        (lambda: sample_initial_overlaps(P, np.random.default_rng(), 2.5), "`size`"),
        (lambda: risk_at(P, "x", 0, 0, 0), "`k` must be real numbers"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_monte_carlo_needs_two_samples_for_a_standard_error():
    k, v, ks, vs = vectors_from_overlaps([0.5, 0.5, 0, 0, 0], 20)
    p = Params(d=20, L=3, lam=0.5, gamma=0.7)
    for n in (0, 1):
        with pytest.raises(ValueError, match="`n`"):
            monte_carlo_risk(p, k, v, ks, vs, n, np.random.default_rng())
    assert monte_carlo_risk(p, k, v, ks, vs, 2, np.random.default_rng()).stderr >= 0


def test_cli_internal_errors_exit_3_in_one_line_and_debug_shows_them(capsys, monkeypatch):
    from slr_theory import cli

    def broken(args):
        raise RuntimeError("boom")

    parser = cli.dispatch._build_parser
    monkeypatch.setattr(cli.risk, "cmd_risk", broken)
    assert parser  # the builder reads the module-level handler at build time
    assert cli.main(["risk", "--kappa", "0.1", "--nu", "0.1"]) == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["risk", "--kappa", "0.1", "--nu", "0.1", "--debug"])


def test_cli_ctrl_c_exits_130(capsys, monkeypatch):
    from slr_theory import cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.risk, "cmd_risk", interrupted)
    assert cli.main(["risk", "--kappa", "0.1", "--nu", "0.1"]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_reproduce_refuses_bad_out_before_computing(tmp_path, capsys):
    from slr_theory.cli import main

    assert main(["reproduce", "gd_manifold", "--out", ""]) == 2
    assert "must name a directory" in capsys.readouterr().err
    assert main(["reproduce", "gd_manifold", "--out", str(tmp_path / "no" / "such")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_an_interrupted_write_leaves_no_partial_file_and_a_rerun_works(tmp_path, monkeypatch):
    from slr_theory import plotting
    from slr_theory.experiments import run, write

    res = run("gd_manifold", repeats=2, steps_scale=0.01, records=5)["gd_manifold"]

    def interrupted(result, path, **kw):
        Path(path).write_bytes(b"\x89PNG partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(plotting, "experiment_figure", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write(res, tmp_path)
    # the CSV was complete, but without its figure it is not committed either
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    write(res, tmp_path)  # no --force needed: nothing was left
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".slr-theory.json", "gd_manifold.csv", "gd_manifold.png"]
    assert (tmp_path / "gd_manifold.csv").read_text().count("\n") == 1 + 6 * 2


@pytest.mark.parametrize(
    "field, value",
    [
        ("eps", 1e300),
        ("gamma", 1e300),
        ("gamma", 1e-300),
        ("lam", 1e-300),
        ("lam", 1e6),
        ("d", 10**16),
        ("L", 10**13),
    ],
)
def test_params_outside_the_domain_are_refused(field, value):
    kw = {"d": 400, "L": 10, "lam": 0.1, "gamma": 0.7, "eps": 0.0, field: value}
    with pytest.raises(ValueError, match=f"`{field}` must lie in"):
        Params(**kw)


def test_the_domain_corners_give_finite_values_without_warnings():
    import itertools

    from slr_theory import risk_grad, risk_hessian
    from slr_theory.params import DOMAIN

    for d, L, lam, gamma, eps in itertools.product(
        (4, DOMAIN["d"][1]), DOMAIN["L"], DOMAIN["lam"], DOMAIN["gamma"], DOMAIN["eps"]
    ):
        p = Params(d=d, L=L, lam=lam, gamma=gamma, eps=eps)
        for ov in [(0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (0.3, 0.2, 0.1, -0.2, 0.05)]:
            values = [risk(p, *ov), risk_grad(p, *ov), risk_hessian(p, *ov)]
            assert all(np.all(np.isfinite(v)) for v in values)


def test_stats_flags_outside_the_domain_are_usage_errors(capsys):
    from slr_theory.cli import main

    for argv in (
        ["stats", "--eps", "1e300"],
        ["stats", "--gamma", "1e300"],
        ["stats", "--gamma", "1e-300"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "must be a number in" in err and len(err.strip().splitlines()) == 1


def test_stats_refuses_a_d_max_that_is_not_a_power_of_ten_and_prints_tiny_as_tiny(capsys):
    from slr_theory.cli import main

    assert main(["stats", "--d-max", "150"]) == 2
    assert "power of 10" in capsys.readouterr().err
    assert main(["stats", "--d-max", "1000", "--samples", "2000"]) == 0
    out = capsys.readouterr().out
    # the Bayes risk at d = 1000 is ~1e-98: printed from its log, never as 0 or as a bound
    assert "< 2.2e-308" not in out and "0.000e+00 +- 0.0e+00" not in out
    from slr_theory import Params
    from slr_theory.statistics import bhattacharyya_log

    row = next(line for line in out.splitlines() if line.split()[:1] == ["1000"])
    value = float(row.split()[4])
    scale = 2 * bhattacharyya_log(Params(d=1000, L=32, lam=0.1, gamma=0.5**0.5)) / np.log(10)
    assert -4.0 < np.log10(value) - scale < 1.0


def test_verify_refuses_fewer_draws_than_its_z_test_needs(capsys):
    from slr_theory.cli import main
    from slr_theory.verify import MIN_SAMPLES, run_checks

    with pytest.raises(ValueError, match=f">= {MIN_SAMPLES}"):
        run_checks(["gaussian.zeta"], samples=3)
    assert main(["verify", "--samples", "2"]) == 2
    assert "z-test" in capsys.readouterr().err


def test_float32_overlaps_pass_within_a_tolerance_the_user_sets():
    from slr_theory import overlap_tolerance, pgd
    from slr_theory.params import check_overlaps

    rng = np.random.default_rng(0)
    e = np.eye(50, dtype=np.float32)
    k = rng.standard_normal(50).astype(np.float32)
    k /= np.linalg.norm(k)
    v = (e[1] + np.float32(1e-4) * e[0]).astype(np.float32)  # trained close to v*
    v /= np.linalg.norm(v)
    ov = np.array([k @ e[0], v @ e[1], v @ e[0], k @ e[1], k @ v], dtype=np.float64)
    ov[1] = 1 + 1.2e-7  # nu just past 1, as float32 weights give
    with pytest.raises(ValueError, match=r"by 1.2e-07.*overlap_tolerance\(1e-6\)"):
        check_overlaps(*ov, d=50)
    with overlap_tolerance(1e-6):
        proj = np.array(check_overlaps(*ov, d=50))
        assert proj[1] <= 1.0 and proj[2] ** 2 + proj[1] ** 2 <= 1.0 + 1e-15
        p = Params(d=50, L=5, lam=0.3, gamma=0.7)
        assert np.isfinite(risk(p, *ov))
        assert np.all(np.isfinite(pgd(p, ov, 0.01, 5).overlaps))
    with pytest.raises(ValueError):  # the default is back outside the block
        check_overlaps(*ov, d=50)
    with pytest.raises(ValueError, match="`atol`"):
        with overlap_tolerance(0.5):
            pass


def test_projection_reaches_the_feasible_set():
    from slr_theory import overlap_tolerance
    from slr_theory.params import check_overlaps

    ov = (0.6, 0.6 + 5e-8, 0.8, 0.8, 0.96 + 1e-7)  # k = (0.6, 0.8), v = (0.8, 0.6), rounded
    with overlap_tolerance(1e-6):
        k, n, t, e, r = (float(x) for x in check_overlaps(*ov))
    assert k * k + e * e <= 1 and t * t + n * n <= 1
    s11, s22, s12 = 1 - k * k - e * e, 1 - t * t - n * n, r - k * t - e * n
    assert s12 * s12 <= s11 * s22 + 1e-15
    check_overlaps(k, n, t, e, r, atol=1e-15)  # feasible to rounding


def test_a_wrong_type_of_point_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="`point` must be a CriticalPoint"):
        pgd_map_spectrum(0.5, 1e-3)


# --- tolerances and types (the families of one defect each) ---------------------------------


@pytest.mark.parametrize("atol", [float("nan"), float("inf"), -1e-9, 1.0, 0.0101, True, "1e-6"])
def test_atol_is_validated_wherever_it_is_accepted(atol):
    from slr_theory import check_overlaps, overlap_tolerance

    with pytest.raises(ValueError, match="`atol`"):
        check_overlaps(5.0, -3.0, 0, 0.9, 0, atol=atol)
    with pytest.raises(ValueError, match="`atol`"):
        overlap_tolerance(atol)  # refused when called, not when entered


def test_atol_at_its_cap_still_refuses_a_point_far_outside():
    from slr_theory import check_overlaps

    with pytest.raises(ValueError, match=r"`kappa` must lie in \[-1, 1\], got 1.5"):
        check_overlaps(1.5, 0.0, atol=1e-2)
    k, *_ = check_overlaps(1 + 5e-3, 0.0, atol=1e-2)  # rounding within the cap: projected
    assert float(k) == 1.0


@pytest.mark.parametrize("flag", [True, False, np.bool_(True), np.array([True, False])])
def test_bools_are_not_numbers(flag):
    from slr_theory import Params, risk

    with pytest.raises(ValueError, match="`kappa` must be real numbers"):
        risk(Params.paper(), flag, 0.5)
    with pytest.raises(ValueError, match="`lam`"):
        Params(d=400, L=10, lam=flag, gamma=1.0)


@pytest.mark.parametrize("rng", ["a", 1.5, True, -1, [1, -2], object()])
def test_a_bad_seed_is_named(rng):
    from slr_theory import Params, basin_fractions, critical_points

    p = Params.paper()
    with pytest.raises(ValueError, match=r"`rng` must be a numpy\.random\.Generator or a seed"):
        critical_points(p, rng=rng, starts=2)
    with pytest.raises(ValueError, match="`rng`"):
        basin_fractions(p, 10, rng=rng)


@pytest.mark.parametrize("ragged", [[0.1, [0.2, 0.3]], [[0.1, 0.2], [0.1]]])
def test_ragged_input_is_named(ragged):
    from slr_theory import Params, pgd, risk

    with pytest.raises(ValueError, match="`kappa` must be real numbers in a rectangular array"):
        risk(Params.paper(), ragged, 0.5)
    with pytest.raises(ValueError, match="`overlaps0` must be real numbers in a rectangular"):
        pgd(Params.paper(), [ragged, 0.1, 0, 0, 0], 1e-3, 10)


def _float32_unit(x):
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x)


def test_float32_vectors_honour_the_overlap_tolerance():
    """Float32-normalised weights miss unit norm by ~1e-7: refused by default, accepted and
    projected inside overlap_tolerance, with the risk of the nearest unit vectors."""
    from slr_theory import Params, overlap_tolerance, risk, risk_at, risk_grad_at
    from slr_theory.sampling import overlaps_of

    p = Params(d=50, L=5, lam=0.3, gamma=0.8)
    rng = np.random.default_rng(3)
    k32, v32 = (_float32_unit(rng.standard_normal(50)) for _ in range(2))
    e = np.eye(50)
    ks32 = _float32_unit(e[0] + 1e-4 * e[1])  # k*.v* ~ 1e-4 * (rounding)
    for k in (k32, v32):
        assert 1e-10 < abs(np.linalg.norm(k.astype(np.float64)) - 1) < 1e-6
    with pytest.raises(ValueError, match="overlap_tolerance"):
        risk_at(p, k32, v32, e[0], e[1])
    with overlap_tolerance(1e-6):
        got = risk_at(p, k32, v32, e[0], e[1])
        grads = risk_grad_at(p, k32, v32, e[0], e[1])
    k, v = (x.astype(np.float64) / np.linalg.norm(x.astype(np.float64)) for x in (k32, v32))
    # one engine at overlaps formed two ways (float32 inputs renormalised in float64):
    # the overlaps differ by a few ulp, the risk's condition number here is O(1): 45 ulp
    np.testing.assert_allclose(got, risk(p, *overlaps_of(k, v, e[0], e[1])), rtol=1e-14)
    assert all(np.isfinite(g).all() for g in grads)
    with pytest.raises(ValueError, match="`k_star` and `v_star` must be orthogonal"):
        with overlap_tolerance(1e-6):
            risk_at(p, k32, v32, ks32, e[1])  # 1e-4 is not rounding


def test_nearly_orthogonal_targets_become_the_nearest_orthonormal_pair():
    from slr_theory import overlap_tolerance
    from slr_theory.validate import orthonormal_pair

    rng = np.random.default_rng(0)
    a, b = np.linalg.qr(rng.standard_normal((8, 2)))[0].T
    a2, b2 = a + 3e-8 * b, b + 1e-8 * a
    with overlap_tolerance(1e-6):
        x, y = orthonormal_pair(a2, b2, ("k_star", "v_star"), 8)
    assert abs(x @ y) < 1e-15 and abs(x @ x - 1) < 1e-15 and abs(y @ y - 1) < 1e-15
    assert np.linalg.norm(x - a) < 1e-7 and np.linalg.norm(y - b) < 1e-7
    exact_a, exact_b = orthonormal_pair(a, b, ("k_star", "v_star"), 8)  # untouched
    assert np.array_equal(exact_a, a) and np.array_equal(exact_b, b)
