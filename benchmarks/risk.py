"""Accuracy (ulp vs 30-digit conditioned quadrature) and throughput of slr_theory.risk.

    python benchmarks/risk.py [--points 20] [--seed 0] [--jobs 2]

Regions: random feasible overlaps (from random vectors in R^6) with parameters
log-uniform over d in [4, 1e8], L in [1, 1e4], lam in [1e-4, 1e2], gamma in
[1e-3, 1e2]; the same near the invariant manifold (theta, eta, rho ~ 1e-6);
the optimum kappa = nu = 1 with lam^2 d large, where the informative component
is exponentially small; and off M beside the edges nu = +-1 (rho = nu eta, eta in
[1e-4, 1e-1], kappa of nu's sign in [0.5, 1)), where it is exponentially small too and
two of its terms cancel unless grouped (docs/theory.md). Errors are relative to the reference value of each
component, in units of 2**-52; the reference is the quadrature over U of the
conditional second moments (no closed-form lemma).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import mpmath as mp
import numpy as np

from slr_theory import Params, risk, risk_components, risk_grad
from slr_theory.verify.risk_checks import mp_risk_components

EPS = np.finfo(float).eps
TINY = np.finfo(float).tiny
COMPONENTS = ("informative", "distractors", "interactions", "total")


def _params(rng):
    return Params(
        d=int(10 ** rng.uniform(np.log10(4), 8)),
        L=int(10 ** rng.uniform(0, 4)),
        lam=float(10 ** rng.uniform(-4, 2)),
        gamma=float(10 ** rng.uniform(-3, 2)),
        eps=float(rng.uniform(0, 1)),
    )


def _overlaps(rng, near_m=False):
    if near_m:  # kappa, nu anywhere inside, theta, eta, rho ~ 1e-6 (feasible with margin)
        return np.array([*rng.uniform(-0.99, 0.99, 2), *(1e-6 * rng.standard_normal(3))])
    x, y = rng.standard_normal((2, 6))
    k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
    return np.array([k[0], v[1], v[0], k[1], k @ v])


def tasks(rng, n):
    out = []
    for _ in range(n):
        out.append(("random overlaps", _params(rng), _overlaps(rng)))
    for _ in range(n):
        out.append(("near M (off-M overlaps ~1e-6)", _params(rng), _overlaps(rng, near_m=True)))
    for _ in range(n):
        d = int(10 ** rng.uniform(2, 4))
        lam = float(10 ** rng.uniform(-1, 0.5))
        p = Params(d=d, L=10, lam=lam, gamma=0.5**0.5)
        out.append(("optimum kappa = nu = 1", p, np.array([1.0, 1.0, 0.0, 0.0, 0.0])))
    for _ in range(n):
        d = int(10 ** rng.uniform(2, 4))
        lam = float(10 ** rng.uniform(-1, 0.5))
        p = Params(d=d, L=10, lam=lam, gamma=0.5**0.5)
        nu = float(rng.choice([-1.0, 1.0]))
        kappa = float(rng.uniform(0.5, 1.0))
        eta = min(float(10 ** rng.uniform(-4, -1)), 0.9 * np.sqrt(1.0 - kappa * kappa))
        ov = np.array([nu * kappa, nu, 0.0, eta, nu * eta])
        out.append(("off M beside the edge nu = sgn kappa", p, ov))
    return out


def _error(task):
    region, p, ov = task
    ref = mp_risk_components(p, ov)
    got = risk_components(p, *ov)
    errs = {}
    for name in COMPONENTS:
        r, v = ref[name], float(getattr(got, name))
        if abs(r) < TINY:
            errs[name] = float(abs(v - r) / TINY)
        else:
            errs[name] = float(abs(mp.mpf(v) - r) / abs(r))
    return region, errs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(_error, tasks(rng, args.points), chunksize=2))
    table: dict = {}
    for region, errs in results:
        for name, e in errs.items():
            table.setdefault((region, name), []).append(e / EPS)
    print(f"## Risk accuracy ({args.points} points per region, seed {args.seed}; ulp = 2^-52)\n")
    print("| region | component | peak (ulp) | mean (ulp) |")
    print("|---|---|---:|---:|")
    for (region, name), errs in table.items():
        print(f"| {region} | `{name}` | {max(errs):.1f} | {np.mean(errs):.1f} |")
    print(f"\n(reference time {time.perf_counter() - t0:.0f} s)\n")
    n = 1_000_000
    ovs = np.array([_overlaps(rng) for _ in range(2000)])
    ovs = ovs[rng.integers(0, len(ovs), n)]
    p = Params.paper(lam=0.5)
    for label, f in (("risk", risk), ("risk_grad", risk_grad)):
        best = np.inf
        for _ in range(3):
            t = time.perf_counter()
            f(p, *ovs.T)
            best = min(best, time.perf_counter() - t)
        print(f"- `{label}` on 1e6 overlap tuples: {best:.2f} s ({n / best:.3g} tuples/s)")


if __name__ == "__main__":
    main()
