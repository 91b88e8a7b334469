"""Wall time of the paper's experiments (Section 5) computed exactly on the overlaps.

    python benchmarks/dynamics.py [--steps-scale 1.0] [--reference-steps 300] [--skip-sgd]

Rows:

- each PGD configuration alone (30 repeats, full step counts), and the four through
  ``slr_theory.experiments.run`` (as ``slr-theory reproduce all`` runs them: one after
  the other; its steps are the sum of theirs);
- the SGD configuration with the exact-in-law overlap chain;
- the references on explicit vectors, PGD in ``R^400`` and SGD in ``R^80``, timed
  over ``--reference-steps`` steps and extrapolated linearly to the full count
  (their cost per step is constant), marked ``(extrapolated)``.

Issue 4's targets on this 2-core machine: the four GD configurations together in
<= 10 s, ``gd_manifold`` in <= 1 s, the SGD configuration in <= 3 minutes.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from slr_theory.dynamics import pgd, pgd_vectors, sample_initial_overlaps
from slr_theory.experiments import experiments, run
from slr_theory.sampling import vectors_from_overlaps
from slr_theory.sgd import sgd, sgd_vectors


def _vectors(ov, d):
    """Explicit vectors in R^d with the given overlaps, rotated at random (k*, v* random)."""
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    ks, vs = q[:, 0], q[:, 1]
    k = np.empty((len(ov), d))
    v = np.empty((len(ov), d))
    for i, o in enumerate(ov):
        kk, vv, _, _ = vectors_from_overlaps(o, d)
        k[i], v[i] = q @ kk, q @ vv
    return k, v, ks, vs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps-scale", type=float, default=1.0)
    ap.add_argument("--reference-steps", type=int, default=300)
    ap.add_argument("--skip-sgd", action="store_true")
    args = ap.parse_args()
    table = experiments()
    gd = [n for n, e in table.items() if e.method == "pgd"]
    rows = []

    def timed(label, fn, steps, extrapolate_to=None):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        if extrapolate_to is not None:
            rows.append((label, extrapolate_to, dt * extrapolate_to / steps, "(extrapolated)"))
        else:
            rows.append((label, steps, dt, ""))

    for name in gd:
        e = table[name]
        steps = max(1, round(e.steps * args.steps_scale))
        ov0 = sample_initial_overlaps(
            e.params, np.random.default_rng(1), e.repeats, on_manifold=e.init == "manifold"
        )
        timed(
            f"{name}: overlap PGD, {e.repeats} repeats",
            lambda e=e, ov0=ov0, steps=steps: pgd(
                e.params, ov0, e.alpha, steps, e.lr_schedule, record_every=max(1, steps // 1000)
            ),
            steps,
        )
    total = sum(max(1, round(table[n].steps * args.steps_scale)) for n in gd)
    timed(
        "four GD configurations, experiments.run",
        lambda: run(gd, steps_scale=args.steps_scale),
        total,
    )
    for name in gd:
        e = table[name]
        ov0 = sample_initial_overlaps(
            e.params, np.random.default_rng(1), e.repeats, on_manifold=e.init == "manifold"
        )
        k, v, ks, vs = _vectors(ov0, e.d)
        n = args.reference_steps
        timed(
            f"{name}: PGD in R^{e.d}, {e.repeats} repeats",
            lambda e=e, k=k, v=v, ks=ks, vs=vs, n=n: pgd_vectors(
                e.params, k, v, ks, vs, e.alpha, n, e.lr_schedule
            ),
            n,
            extrapolate_to=round(e.steps * args.steps_scale),
        )
    if not args.skip_sgd:
        e = table["sgd_sphere_schedule"]
        steps = max(1, round(e.steps * args.steps_scale))
        rng = np.random.default_rng(2)
        ov0 = sample_initial_overlaps(e.params, rng, e.repeats)
        timed(
            f"sgd_sphere_schedule: overlap SGD (exact in law), {e.repeats} repeats",
            lambda: sgd(
                e.params,
                ov0,
                e.alpha,
                steps,
                batch=e.batch,
                rng=rng,
                schedule=e.lr_schedule,
                record_every=max(1, steps // 1000),
            ),
            steps,
        )
        k, v, ks, vs = _vectors(ov0, e.d)
        n = args.reference_steps
        timed(
            f"sgd_sphere_schedule: SGD in R^{e.d}, {e.repeats} repeats",
            lambda: sgd_vectors(
                e.params, k, v, ks, vs, e.alpha, n, batch=e.batch, rng=rng, schedule=e.lr_schedule
            ),
            n,
            extrapolate_to=steps,
        )
    width = max(len(r[0]) for r in rows)
    print(f"{'run':<{width}}  {'steps':>8}  {'wall s':>9}  {'us/step':>8}")
    for label, steps, dt, note in rows:
        print(f"{label:<{width}}  {steps:>8}  {dt:>9.2f}  {dt / steps * 1e6:>8.1f} {note}")


if __name__ == "__main__":
    main()
