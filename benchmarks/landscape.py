"""The numbers of docs/landscape.md: stability of M, basin fractions, escape, continuation.

    python benchmarks/landscape.py [--runs 200] [--flow-runs 40]

Prints, for the paper's d = 400, L = 10, gamma^2 = 1/2: the fraction of the open square
where M attracts transversally; basin fractions under PGD at the paper's step sizes and
under the gradient flow, with standard errors; the same as d grows; the paper's three
GD sphere experiments; and the wall time of each.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from slr_theory import Params, paper_schedule
from slr_theory.landscape import basin_fractions, continuation, manifold_stability


def _row(label, b, seconds):
    parts = []
    for a, f, se in zip(b.attractors, b.fractions, b.stderr, strict=True):
        o = ", ".join(f"{x:+.3f}" for x in a.overlaps)
        parts.append(f"({o}) {f:.3f}+-{se:.3f}")
    print(f"{label}: " + "; ".join(parts) + f"; none {b.none_fraction:.3f}  [{seconds:.0f} s]")
    if len(b.unreached):
        d = b.distance[b.label < 0]
        print(f"    unreached: median distance {np.median(d):.3f} to their nearest minimum")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--flow-runs", type=int, default=40)
    args = ap.parse_args()
    t = np.linspace(-1, 1, 203)[1:-1]
    K, N = np.meshgrid(t, t)
    for lam in (0.1, 0.5, 0.9):
        ev = manifold_stability(Params.paper(lam=lam), K, N)
        print(f"lam = {lam}: M attracts on {(ev[..., 0].real < 0).mean():.3f} of the open square")
    for lam, alpha, steps in ((0.1, 4e-3, 20_000), (0.5, 4e-3, 20_000), (0.9, 1e-3, 120_000)):
        t0 = time.perf_counter()
        b = basin_fractions(Params.paper(lam=lam), args.runs, rng=1, alpha=alpha, steps=steps)
        _row(f"PGD  lam = {lam}, alpha = {alpha}, {steps} steps", b, time.perf_counter() - t0)
    for lam, t_max in ((0.1, 80.0), (0.5, 80.0), (0.9, 120.0)):
        t0 = time.perf_counter()
        b = basin_fractions(
            Params.paper(lam=lam), args.flow_runs, rng=2, dynamics="flow", t_max=t_max
        )
        _row(f"flow lam = {lam}, t = {t_max}", b, time.perf_counter() - t0)
    for d in (100, 1600):
        t0 = time.perf_counter()
        b = basin_fractions(
            Params(d=d, L=10, lam=0.1, gamma=0.5**0.5), args.runs, rng=3, alpha=4e-3, steps=20_000
        )
        _row(f"PGD  d = {d}, lam = 0.1", b, time.perf_counter() - t0)
    t0 = time.perf_counter()
    b = basin_fractions(
        Params.paper(lam=1.0),
        args.runs,
        rng=4,
        alpha=4e-3,
        steps=120_000,
        schedule=paper_schedule(1.0),
    )
    _row("gd_sphere_schedule (lam 1.0 -> 0.077)", b, time.perf_counter() - t0)
    t0 = time.perf_counter()
    c = continuation(Params.paper(), (0.02, 2.0), steps=60, seeds=5)
    print(
        f"continuation over [0.02, 2]: {len(c.branches)} branches, "
        f"{len(c.events)} events [{time.perf_counter() - t0:.0f} s]"
    )
    for e in c.events:
        print("   ", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in e.items()})


if __name__ == "__main__":
    main()
