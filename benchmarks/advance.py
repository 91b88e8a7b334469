"""Does ``advance`` stand behind its stated error? Exact PGD against it, every N on a grid.

    python benchmarks/advance.py [--max-steps 1e5] [--starts 16] [--per-decade 12]
                                 [--configs erf-0.1 erf-0.5 ...]

For each configuration (the paper's ``d = 400, L = 10, gamma^2 = 1/2``; a model, a
temperature and a step), ``--starts`` uniform initialisations on the spheres (seed 0) run
exact PGD (:func:`slr_theory.pgd`) to ``--max-steps``, and :func:`slr_theory.advance` is
called afresh for every ``N`` of a log grid from ``1e2`` (``--per-decade`` points a
decade, and every ``N`` a multiple of 250 up to ``2e4``, the stretch where a run nears the
minima off M). A row per configuration: the grid's size, how many (N, start) pairs
``advance`` integrated at all, the largest error against exact PGD (max-norm of the
overlaps), the largest ratio of that error to the stated one, how many pairs exceed their
statement (``error > stated + 4 eps``, the rounding of the comparison), and the seconds.

The attractors the runs end at are printed with their shares (grouped by the end state of
exact PGD, to 1e-3), so that every attractor kind is seen to be covered.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from slr_theory import Params, advance, pgd
from slr_theory.dynamics import sample_initial_overlaps

CONFIGS = {
    # name: (nonlinearity or attention, lam, alpha)
    "erf-0.1": ({}, 0.1, 4e-3),
    "erf-0.5": ({}, 0.5, 4e-3),
    "erf-0.9": ({}, 0.9, 1e-3),
    "tanh-0.5": ({"nonlinearity": "tanh"}, 0.5, 2e-3),
    "softmax-0.5": ({"attention": "softmax"}, 0.5, 1e-3),
}
EPS = np.finfo(float).eps


def grid(max_steps: float, per_decade: int, every: int) -> np.ndarray:
    """The N of the sweep: a log grid and every 250 up to 2e4, rounded to multiples of
    `every` (the record interval of the one exact run)."""
    logs = np.arange(2.0, np.log10(max_steps) + 1e-9, 1.0 / per_decade)
    dense = np.arange(250, min(2e4, max_steps) + 1, 250)
    n = np.concatenate([np.round(10.0**logs), dense])
    n = np.unique(np.maximum(np.round(n / every), 1) * every)
    return n[(n >= 100) & (n <= max_steps)].astype(np.int64)


def sweep(name: str, max_steps: float, starts: int, per_decade: int) -> dict:
    extra, lam, alpha = CONFIGS[name]
    p = Params.paper(lam=lam).replace(**extra)
    ov = sample_initial_overlaps(p, np.random.default_rng(0), starts)
    every = max(50, int(max_steps // 100_000))
    ns = grid(max_steps, per_decade, every)
    t0 = time.perf_counter()
    # exact PGD in one run, never restarted from overlaps (a restart rebuilds the vectors
    # by Cholesky, ill-conditioned near det Gram = 0), recorded every `every` steps
    ref = pgd(p, ov, alpha, int(ns[-1]), record_every=every)
    exact = ref.overlaps[np.searchsorted(ref.step, ns)]
    assert np.array_equal(ref.step[np.searchsorted(ref.step, ns)], ns)
    t_exact = time.perf_counter() - t0
    t0 = time.perf_counter()
    worst = ratio = 0.0
    over = integrated = 0
    for i, n in enumerate(ns):
        a = advance(p, ov, int(n), alpha=alpha)
        err = np.max(np.abs(a.overlaps - exact[i]), axis=-1)
        integrated += int(np.sum(a.flow_steps > 0))
        worst = max(worst, float(err.max()))
        ratio = max(ratio, float(np.max(err / np.maximum(a.error, 1e-300))))
        over += int(np.sum(err > a.error + 4 * EPS))
    ends, counts = np.unique(np.round(np.abs(exact[-1]), 3), axis=0, return_counts=True)
    return {
        "name": name,
        "grid": ns.size,
        "pairs": ns.size * starts,
        "integrated": integrated,
        "worst": worst,
        "ratio": ratio,
        "over": over,
        "exact_s": t_exact,
        "advance_s": time.perf_counter() - t0,
        "ends": [(tuple(e), int(c)) for e, c in zip(ends, counts, strict=True)],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-steps", type=float, default=1e5)
    ap.add_argument("--starts", type=int, default=16)
    ap.add_argument("--per-decade", type=int, default=12)
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    args = ap.parse_args()
    print(f"N from 1e2 to {args.max_steps:g}, {args.starts} uniform starts (seed 0)")
    print(
        "| config | N values | pairs | integrated | max error | max error / stated "
        "| over | exact PGD s | advance s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for name in args.configs:
        r = sweep(name, args.max_steps, args.starts, args.per_decade)
        rows.append(r)
        print(
            f"| {r['name']} | {r['grid']} | {r['pairs']} | {r['integrated']} | "
            f"{r['worst']:.1e} | {r['ratio']:.2f} | {r['over']} | {r['exact_s']:.0f} | "
            f"{r['advance_s']:.0f} |",
            flush=True,
        )
    for r in rows:
        ends = "; ".join(f"|ov| = {e}: {c}" for e, c in r["ends"])
        print(f"{r['name']}: end states of exact PGD at N = {args.max_steps:g}: {ends}")


if __name__ == "__main__":
    main()
