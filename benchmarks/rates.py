"""Rates the paper cannot give: escape, plateau and arrival times, and what computing them costs.

    python benchmarks/rates.py [--runs 1000] [--tables escape plateau arrival]

Three tables, each printed with the seconds it took:

1. **Escape from the uninformative start as d grows** (lam = 0.1, L = 10, gamma^2 = 1/2).
   Starts uniform on the spheres have overlaps of order ``d^(-1/2)``; the largest unstable
   rate ``mu`` of the overlap flow at the origin predicts an escape in flow time about
   ``log(d) / (2 mu)`` plus a constant. Measured: the median flow time for the overlaps to
   reach 0.5 (max-norm) under the flow (``overlap_flow``) and under exact PGD at
   ``alpha = 4e-3`` (steps times alpha), for ``d`` from ``1e2`` to ``1e6``; the column
   ``mu t - log(d) / 2`` is the constant, which should not depend on ``d``; ``alpha |J|``
   is the step times the largest eigenvalue modulus of the flow's Jacobian at the origin
   (beyond 2, PGD is no discretisation of the flow there).
2. **The plateau as lam and gamma vary** (d = 400, L = 10, alpha = 1e-3): the steps PGD
   takes on the edge ``nu = 1`` of M from ``kappa = 0.5`` to ``kappa = 0.99``, by
   ``advance`` (bisection on the number of steps), against the quadrature of the reciprocal
   of one exact step's increment (the validated gradient, an independent computation),
   and against exact PGD where that is at most ``1e6`` steps.
3. **Arrival times from uniform starts at the paper's parameters** (d = 400, L = 10,
   gamma^2 = 1/2; lam = 0.1 at the paper's alpha = 4e-3, lam = 0.5 and 0.9 at 95 % of the
   largest step stable at the minima): where the runs end with the share and its standard
   error, the 10 / 50 / 90 % quantiles of ``log10`` steps, and the seconds the fates took
   (issue 34's target: 1000 starts in at most 5 s on 2 cores).
4. **The extrapolation's order** (``slr_theory.longrun.SUBSTEPS``): the same fates at
   lam = 0.5 with orders 4 to 8, the seconds they take and the largest relative error of
   an arrival time: how order 6 was chosen.
5. **The speed target over lam** (issue 34): the fates of 1000 uniform starts at the
   paper's d, L, gamma and the atlas's step (``slr_theory.survey.STEP_SHARE`` of the
   largest step stable at the minima) for lam from 0.02 to 2, with the seconds the fates
   took (the search for the critical points, given to every fate, apart), the median
   exact steps a run, the median log10 steps and the largest relative error of a time.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
from scipy.integrate import quad

from slr_theory import Params, advance, critical_points, fate, pgd, risk_grad
from slr_theory.dynamics import sample_initial_overlaps
from slr_theory.flows import overlap_flow, overlap_jacobian
from slr_theory.survey import atlas_step


def _origin_rates(p: Params) -> tuple[float, float]:
    """The largest real part of the overlap flow's Jacobian at the origin, and the
    largest modulus of its eigenvalues (PGD at step alpha flips a direction beyond 2)."""
    ev = np.linalg.eigvals(overlap_jacobian(p, [0.0] * 5))
    return float(np.max(ev.real)), float(np.max(np.abs(ev)))


def _first_exit(times: np.ndarray, ov: np.ndarray, radius: float) -> np.ndarray:
    """The first time each run's overlaps ``(..., n, 5)`` reach `radius` (max-norm), by
    linear interpolation between records; inf for a run that never does."""
    size = np.max(np.abs(ov), axis=-1)  # (records, n)
    out = np.full(size.shape[1], np.inf)
    for i in range(size.shape[1]):
        hit = np.flatnonzero(size[:, i] >= radius)
        if hit.size and hit[0] > 0:
            j = hit[0]
            w = (radius - size[j - 1, i]) / (size[j, i] - size[j - 1, i])
            out[i] = times[j - 1] + w * (times[j] - times[j - 1])
    return out


def escape_table(runs: int) -> None:
    radius, alpha = 0.5, 4e-3
    print(
        "1. Escape from the uninformative start (lam = 0.1, L = 10, gamma^2 = 1/2): "
        f"median flow time for uniform starts to reach |overlaps| = {radius}"
    )
    print(
        f"{'d':>9} {'mu':>7} {'log(d)/2mu':>10} {'flow':>8} {'mu t - log(d)/2':>15} "
        f"{'PGD (x alpha)':>13} {'alpha |J|':>9} {'s':>5}"
    )
    for d in (100, 400, 1600, 6400, 25_600, 10**5, 10**6):
        t0 = time.perf_counter()
        p = Params(d=d, L=10, lam=0.1, gamma=math.sqrt(0.5))
        mu, top = _origin_rates(p)
        pred = 0.5 * math.log(d) / mu
        starts = sample_initial_overlaps(p, np.random.default_rng(0), runs)
        t_max = 3.0 * pred + 20.0
        grid = np.linspace(0.0, t_max, 2001)
        flows = np.stack(
            [overlap_flow(p, o, t_max, t_eval=grid, dense_output=False).overlaps for o in starts],
            axis=1,
        )
        tf = float(np.median(_first_exit(grid, flows, radius)))
        run = pgd(p, starts, alpha, int(t_max / alpha), record_every=1)
        tp = float(np.median(_first_exit(run.step * alpha, run.overlaps, radius)))
        print(
            f"{d:>9} {mu:7.4f} {pred:10.2f} {tf:8.2f} {mu * tf - 0.5 * math.log(d):15.3f} "
            f"{tp:13.2f} {alpha * top:9.3g} {time.perf_counter() - t0:5.0f}",
            flush=True,
        )


def _edge_increment(p: Params, alpha: float, kappa: float) -> float:
    """One exact PGD step's increment of kappa on the edge nu = 1 of M (the map on M
    written out: x <- (x - a R (1 - x^2)) / sqrt(1 + a^2 R^2 (1 - x^2)))."""
    r = float(risk_grad(p, kappa, 1.0, 0.0, 0.0, 0.0)[0])
    one = (1.0 - kappa) * (1.0 + kappa)
    s = math.sqrt(1.0 + (alpha * r) ** 2 * one)
    return -alpha * r * one / s - kappa * (alpha * r) ** 2 * one / (s * (1.0 + s))


def _steps_to(p: Params, alpha: float, k0: float, k1: float) -> float:
    """The steps ``advance`` takes on the edge from ``k0`` until ``kappa >= k1``, to a
    relative 1e-6 (bisection on log10 steps)."""
    lo, hi = 0.0, 1.0
    while float(advance(p, [k0, 1, 0, 0, 0], 10.0**hi, alpha=alpha).overlaps[0]) < k1:
        lo, hi = hi, 2.0 * hi
        if hi > 300:
            return math.inf
    while hi - lo > 4e-7:
        mid = 0.5 * (lo + hi)
        if float(advance(p, [k0, 1, 0, 0, 0], round(10.0**mid), alpha=alpha).overlaps[0]) < k1:
            lo = mid
        else:
            hi = mid
    return 10.0**hi


def plateau_table(lams=(0.1, 0.2, 0.3, 0.5, 0.7, 0.9)) -> None:
    alpha, k0, k1 = 1e-3, 0.5, 0.99
    print(
        f"\n2. The plateau: steps on the edge nu = 1 from kappa = {k0} to {k1} (alpha = {alpha})"
    )
    print(
        f"{'lam':>5} {'gamma^2':>7} {'advance':>11} {'quadrature':>11} {'rel. diff':>9} {'exact PGD':>11} {'s':>5}"
    )
    for lam, g2 in itertools.product(lams, (0.25, 0.5, 1.0)):
        t0 = time.perf_counter()
        p = Params(d=400, L=10, lam=lam, gamma=math.sqrt(g2))
        n = _steps_to(p, alpha, k0, k1)
        grid = np.linspace(k0, k1, 129)
        q = sum(
            quad(lambda k, p=p: 1.0 / _edge_increment(p, alpha, k), a, b, epsrel=1e-12)[0]
            for a, b in itertools.pairwise(grid)
        )
        exact = "—"
        if n <= 1e6:
            run = pgd(p, [k0, 1, 0, 0, 0], alpha, math.ceil(n) + 2, record_every=1)
            exact = f"{int(np.argmax(run.overlaps[:, 0] >= k1)):11d}"
        print(
            f"{lam:5.2f} {g2:7.2f} {n:11.7g} {q:11.7g} {n / q - 1:9.1e} {exact:>11} "
            f"{time.perf_counter() - t0:5.0f}",
            flush=True,
        )


def arrival_table(runs: int) -> None:
    print(f"\n3. Arrival times from {runs} uniform starts (d = 400, L = 10, gamma^2 = 1/2)")
    for lam in (0.1, 0.5, 0.9):
        p = Params.paper(lam=lam)
        pts = critical_points(p, rng=0)
        alpha = 4e-3 if lam == 0.1 else atlas_step(pts)
        starts = sample_initial_overlaps(p, np.random.default_rng(1), runs)
        t0 = time.perf_counter()
        f = fate(p, starts, alpha=alpha, points=pts)
        took = time.perf_counter() - t0
        print(f"lam = {lam}, alpha = {alpha:.4g}: fates of {runs} starts in {took:.1f} s")
        for j, name in enumerate(f.names):
            if not np.any(f.label == j):
                continue
            q = f.quantiles([0.1, 0.5, 0.9], j) if f.minimum[j] else [math.inf] * 3
            print(
                f"   {f.fractions[j]:.3f} ± {f.stderr[j]:.3f}  log10 steps "
                f"{q[0]:6.2f} {q[1]:6.2f} {q[2]:6.2f}  {name}"
            )
        if f.undecided:
            print(
                f"   {f.undecided:.3f} undecided (held in exact steps beyond {f.max_exact_steps:g})"
            )
        print(
            f"   exact steps a run: median {np.median(f.exact_steps):.0f}, max "
            f"{f.exact_steps.max():.0f}; largest relative error of a time "
            f"{np.nanmax(f.relative_error):.1e}",
            flush=True,
        )


def order_table(runs: int) -> None:
    """The fates of `runs` uniform starts at lam = 0.5 (alpha 95 % of the largest stable
    step) against the order of the extrapolation (slr_theory.longrun.SUBSTEPS)."""
    from slr_theory import longrun

    p = Params.paper(lam=0.5)
    pts = critical_points(p, rng=0)
    alpha = atlas_step(pts)
    starts = sample_initial_overlaps(p, np.random.default_rng(1), runs)
    print(f"\n4. The extrapolation's order: fates of {runs} starts at lam = 0.5")
    kept = longrun.SUBSTEPS
    try:
        for order in (4, 5, 6, 7, 8):
            longrun.SUBSTEPS = tuple(range(1, order + 1))
            t0 = time.perf_counter()
            f = fate(p, starts, alpha=alpha, points=pts)
            print(
                f"   order {order}: {time.perf_counter() - t0:6.1f} s, largest relative error "
                f"of a time {np.nanmax(f.relative_error):.1e}",
                flush=True,
            )
    finally:
        longrun.SUBSTEPS = kept


def sweep_table(runs: int) -> None:
    print(
        f"\n5. Fates of {runs} uniform starts at the atlas's step (d = 400, L = 10, gamma^2 = 1/2)"
    )
    print(
        f"{'lam':>5} {'alpha':>8} {'fates (s)':>9} {'search (s)':>10} {'undecided':>9} "
        f"{'exact/run':>9} {'log10 steps':>11} {'rel. error':>10}"
    )
    for lam in (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 1.2, 1.5, 2.0):
        p = Params.paper(lam=lam)
        t0 = time.perf_counter()
        pts = critical_points(p, rng=0)
        search = time.perf_counter() - t0
        alpha = atlas_step(pts)
        starts = sample_initial_overlaps(p, np.random.default_rng(1), runs)
        t0 = time.perf_counter()
        f = fate(p, starts, alpha=alpha, points=pts)
        took = time.perf_counter() - t0
        print(
            f"{lam:5.2f} {alpha:8.3g} {took:9.1f} {search:10.1f} {f.undecided:9.3f} "
            f"{np.median(f.exact_steps):9.0f} {np.nanmedian(np.log10(f.steps)):11.2f} "
            f"{np.nanmax(f.relative_error):10.1e}",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000, help="starts per ensemble")
    ap.add_argument(
        "--tables", nargs="+", default=["escape", "plateau", "arrival", "order", "sweep"],
        choices=["escape", "plateau", "arrival", "order", "sweep"],
    )  # fmt: skip
    args = ap.parse_args()
    print(f"slr-theory rates benchmark, {time.strftime('%Y-%m-%d %H:%M')}")
    if "escape" in args.tables:
        escape_table(min(args.runs, 200))
    if "plateau" in args.tables:
        plateau_table()
    if "arrival" in args.tables:
        arrival_table(args.runs)
    if "order" in args.tables:
        order_table(args.runs)
    if "sweep" in args.tables:
        sweep_table(args.runs)


if __name__ == "__main__":
    main()
