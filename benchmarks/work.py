"""The unit costs behind ``--max-minutes`` (slr_theory.work.COSTS), measured on this machine.

    python benchmarks/work.py

Each row times the computation a command estimates, divides by its units, and prints
the measured cost beside the one ``slr_theory.work.COSTS`` assumes. An estimate is
meant to err on the long side: a measured cost above the assumed one means the
ceiling lets through more than it says.
"""

from __future__ import annotations

import time

import numpy as np

from slr_theory import Params, critical_points, pgd, sample_initial_overlaps
from slr_theory.experiments import run
from slr_theory.statistics import bayes_risk_mc
from slr_theory.verify import run_checks
from slr_theory.work import COSTS


def _timed(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main() -> None:
    p = Params.paper()
    rng = np.random.default_rng(0)
    rows = []
    one = sample_initial_overlaps(Params.paper(), rng, 1)
    steps = 5000
    rows.append(("pgd_step", _timed(lambda: pgd(p, one, 4e-3, steps, record_every=steps)) / steps))
    many = sample_initial_overlaps(Params.paper(), rng, 1000)
    t_many = _timed(lambda: pgd(p, many, 4e-3, 500, record_every=500)) / 500
    rows.append(("pgd_run_step", max(t_many - rows[0][1], 0.0) / 1000))
    t_sgd = _timed(lambda: run("sgd_sphere_schedule", repeats=30, steps_scale=0.02))
    rows.append(("sgd_run_step", t_sgd / (4000 * 30)))
    t64 = _timed(lambda: critical_points(p, starts=64, rng=0))
    t512 = _timed(lambda: critical_points(p, starts=512, rng=0))
    rows.append(("critical_start", (t512 - t64) / 448))
    rows.append(("critical_fixed", t64 - 64 * rows[-1][1]))
    q = Params(d=1000, L=1000, lam=1.0, gamma=0.7)
    rows.append(
        ("token", _timed(lambda: bayes_risk_mc(q, 20_000, np.random.default_rng(0))) / 2e7)
    )
    t_small = _timed(lambda: run_checks(None, samples=1000, seed=0))
    t_big = _timed(lambda: run_checks(None, samples=1_000_000, seed=0))
    rows.append(("verify_sample", (t_big - t_small) / 999_000))
    rows.append(("verify_fixed", t_small))
    print(f"{'unit':<16} {'measured s':>12} {'assumed s':>12} {'ratio':>7}")
    for name, measured in rows:
        print(f"{name:<16} {measured:12.3g} {COSTS[name]:12.3g} {measured / COSTS[name]:7.2f}")


if __name__ == "__main__":
    main()
