"""Bounded work (slr_theory/work.py): estimates, the ceiling, and the commands' refusals."""

from __future__ import annotations

import importlib
import math
import time

import numpy as np
import pytest

from slr_theory import Params
from slr_theory.cli import main
from slr_theory.work import (
    COSTS,
    DEFAULT_MINUTES,
    WorkLimit,
    critical_cost,
    pgd_cost,
    reproduce_cost,
    statistics_cost,
    verify_cost,
)


def test_estimates_add_up_their_unit_costs():
    assert pgd_cost(10, 3).seconds == pytest.approx(
        10 * (COSTS["pgd_step"] + 3 * COSTS["pgd_run_step"])
    )
    assert critical_cost(100).seconds == pytest.approx(
        COSTS["critical_fixed"] + 100 * COSTS["critical_start"]
    )
    assert statistics_cost(7, [10, 32]).seconds == pytest.approx(7 * 42 * COSTS["token"])
    assert verify_cost(1000).seconds == pytest.approx(
        COSTS["verify_fixed"] + 1000 * COSTS["verify_sample"]
    )
    r = reproduce_cost(100, 4, 50, 2)
    assert r.seconds == pytest.approx(pgd_cost(100, 4).seconds + 100 * COSTS["sgd_run_step"])
    assert reproduce_cost(0, 0, 50, 2).seconds == pytest.approx(100 * COSTS["sgd_run_step"])


def test_the_ceiling_names_the_flag_and_the_way_past_it():
    big = pgd_cost(10**12)
    with pytest.raises(WorkLimit) as info:
        big.check()
    exc = info.value
    assert exc.flag == "--steps" and "years" in exc.detail
    assert f"beyond the ceiling of {DEFAULT_MINUTES:g} minutes" in exc.detail
    suggested = float(exc.detail.rsplit("--max-minutes ", 1)[1].split()[0])
    assert big.check(suggested) is big  # the suggested ceiling is enough
    assert big.check(math.inf) is big and big.check(None) is big
    small = pgd_cost(1000)
    assert small.check() is small


@pytest.mark.parametrize(
    "argv, flag",
    [
        (
            [
                "pgd",
                "--kappa0",
                "0.1",
                "--nu0",
                "0.1",
                "--alpha",
                "1e-3",
                "--steps",
                "1000000000000",
            ],
            "--steps",
        ),
        (["critical", "--starts", "1000000"], "--starts"),
        (["stats", "--L", "10000000"], "--L"),
        (["stats", "--samples", "100000000000"], "--samples"),
        (["stats", "--L", "100000000"], "--L"),  # beyond MAX_TOKENS: the parser's bound
        (["reproduce", "--out", "out", "--repeats", "100000"], "--repeats"),
        (["verify", "--samples", "100000000", "--max-minutes", "20"], "--samples"),
        (["report", "--out", "rep", "--max-minutes", "0.1"], "--max-minutes"),
        (["report", "--out", "rep", "--full", "--max-minutes", "2"], "--full"),
    ],
)
def test_commands_refuse_long_work_before_computing(argv, flag, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    t0 = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - t0 < 5  # at the door, not after computing
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"argument {flag}:" in err[0]
    assert not list(tmp_path.iterdir())  # nothing written, no folder created


def test_raising_the_ceiling_runs_the_work(capsys):
    argv = ["pgd", "--kappa0", "0.1", "--nu0", "0.1", "--alpha", "1e-3", "--steps", "50"]
    assert main([*argv, "--max-minutes", "1e-9"]) == 2
    assert "--max-minutes" in capsys.readouterr().err
    assert main([*argv, "--max-minutes", "inf", "--json"]) == 0
    for bad in ("0", "-1", "nan", "x"):
        assert main([*argv, "--max-minutes", bad]) == 2
        assert "argument --max-minutes" in capsys.readouterr().err


def test_bayes_risk_refuses_samples_it_cannot_hold():
    from slr_theory.statistics import MAX_TOKENS, bayes_risk_mc

    p = Params(d=100, L=MAX_TOKENS + 1, lam=1.0, gamma=0.7)
    with pytest.raises(ValueError, match=r"`params.L` must be <= 1e\+07"):
        bayes_risk_mc(p, 10, np.random.default_rng(0))


def test_the_atlas_estimate_counts_workers_model_and_bookkeeping():
    from slr_theory.work import atlas_cost

    kw = {"basin_runs": 100, "max_steps": 1000, "starts": 16}
    one = critical_cost(16).seconds + pgd_cost(1000, 100).seconds + COSTS["atlas_cell_fixed"]
    est = atlas_cost(10, **kw, workers=2, model_factor=3.0)
    assert est.seconds == pytest.approx(10 * 3.0 * one / 2 + 10 * COSTS["atlas_bookkeeping"])
    assert est.what == "10 cells of 100 runs on 2 workers" and est.flag == "--lam"
    # the bookkeeping is done by one process: more workers do not divide it
    many = atlas_cost(10**5, **kw, workers=10**6)
    assert many.seconds > 10**5 * COSTS["atlas_bookkeeping"]
    for bad in ({"model_factor": 0.5}, {"model_factor": float("nan")}, {"model_factor": True}):
        with pytest.raises(ValueError, match="`model_factor`"):
            atlas_cost(1, **kw, workers=1, **bad)
    with pytest.raises(ValueError, match="`workers`"):
        atlas_cost(1, **kw, workers=0)


def test_estimates_scale_with_the_model_factor():
    assert pgd_cost(10, 3, model_factor=4.0).seconds == pytest.approx(4 * pgd_cost(10, 3).seconds)
    assert critical_cost(9, model_factor=2.5).seconds == pytest.approx(
        2.5 * critical_cost(9).seconds
    )
    for cost in (
        lambda f: pgd_cost(1, model_factor=f),
        lambda f: critical_cost(1, model_factor=f),
    ):
        for bad in (0.5, float("nan"), float("inf"), True, "2"):
            with pytest.raises(ValueError, match="`model_factor`"):
                cost(bad)


def test_the_report_estimate_knows_the_model_the_experiments_and_the_jobs():
    from slr_theory.experiments import cost as experiments_cost
    from slr_theory.study import cost

    erf = cost(Params.paper(), jobs=2)
    assert erf.flag == "--max-minutes" and erf.what == "the report's computations"
    # beside: the checks and the five experiments; main: the model's parts; both bounded below
    assert erf.seconds >= COSTS["study_drawing"] + 3 * COSTS["study_model"]
    assert cost(Params.paper(), jobs=1).seconds > erf.seconds  # the two halves one after the other
    full = cost(Params.paper(), full=True, jobs=2)
    assert full.flag == "--full" and full.seconds > experiments_cost("all").seconds
    tanh = cost(Params.paper().replace(nonlinearity="tanh"), jobs=2)
    assert tanh.seconds > erf.seconds  # measured: tanh costs more per evaluation
    with pytest.raises(ValueError, match="`jobs`"):
        cost(Params.paper(), jobs=0)


def test_a_schedule_is_held_to_the_model_s_temperatures():
    from slr_theory import pgd

    softmax = Params.paper().replace(attention="softmax")
    with pytest.raises(ValueError, match=r"`schedule`.*\(the model's\), got 50.0 at step 0"):
        pgd(softmax, np.array([0.1, 0.1, 0, 0, 0]), 1e-3, 3, schedule=lambda t: 50.0)
    assert softmax.lam_max < 50.0 <= Params.paper().lam_max  # erf takes it


def test_usable_cores_and_the_model_factor_are_measured():
    import os

    from slr_theory.work import model_cost_factor, usable_cores

    assert 1 <= usable_cores() <= (os.cpu_count() or 1)
    assert model_cost_factor(Params.paper()) == 1.0  # the model COSTS were measured on
    tanh = model_cost_factor(Params.paper().replace(nonlinearity="tanh"), points=256)
    assert 1.0 <= tanh < 1e4 and math.isfinite(tanh)
    with pytest.raises(ValueError, match="`points`"):
        model_cost_factor(Params.paper(), points=0)


def test_the_model_factor_times_new_points_at_every_call(monkeypatch):
    """The factor times the risk and gradient on M at new points at every call, in one
    measurement and the next (softmax keeps its last direct evaluations: a second
    measurement at the same points would price a lookup, and the report would place its
    continuation by it); erf is the unit and is not timed against itself."""
    from slr_theory.work import model_cost_factor

    risk = importlib.import_module("slr_theory.risk")  # the module, not the package's function
    asked = []
    real = risk.risk_and_grad

    def spy(params, kappa, nu):
        asked.append((params.attention, np.array(kappa), np.array(nu)))
        return real(params, kappa, nu)

    monkeypatch.setattr(risk, "risk_and_grad", spy)
    assert model_cost_factor(Params.paper(), points=4) == 1.0
    assert not asked
    softmax = Params.paper(lam=0.1).replace(attention="softmax")
    assert model_cost_factor(softmax, points=4) >= 1.0
    assert model_cost_factor(softmax, points=4) >= 1.0
    mine = [(k, n) for att, k, n in asked if att == "softmax"]
    assert len(mine) >= 2 * (1 + 3 * 2)  # each: a first call, then three timings of two
    assert all(np.array_equal(n, k[::-1]) and np.all(np.abs(k) <= 0.9) for k, n in mine)
    keys = [k.tobytes() for k, _n in mine]
    assert len(set(keys)) == len(keys)  # new points at every call, across measurements


def test_the_atlas_command_refuses_work_beyond_the_ceiling_on_the_cores_it_has(capsys, tmp_path):
    """--jobs no longer divides the estimate beyond the machine: the grid of the issue
    (40 x 3 cells of 1000 runs) is refused at any --jobs the cores allow."""
    out = tmp_path / "a"
    argv = ["atlas", "--out", str(out), "--lam", "0.02:2:40", "--L", "4,10,30"]
    assert main([*argv, "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-minutes" in err and "on 1 worker" in err
    assert not out.exists()
