"""Accuracy (ulp vs 40-digit mpmath) and throughput of slr_theory.gaussian.

Prints Markdown tables in the style of Boost.Math's and SciPy's accuracy
reports: per function and region, the peak and mean relative error in units
of machine epsilon (2**-52), then values per second on 1e6-element arrays.

    python benchmarks/accuracy.py [--points 40] [--seed 0] [--jobs 2]

Relative error is ``|f - ref| / |ref|``; for the sign-changing ``zeta_tt``,
``zeta_ttt`` and ``mean_erf_third`` it is relative to the size of the terms that
cancel (``mp_cancellation_scale``), and for ``erf_pair`` to
the larger of ``|ref|`` and its independent part. Exact references below the
smallest normal double are compared in absolute terms (underflow is correct).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import mpmath as mp
import numpy as np

from slr_theory import gaussian as g
from slr_theory.verify.reference import (
    MP_FUNCTIONS,
    mp_cancellation_scale,
    mp_erf_pair,
    mp_gaussian_function,
)

EPS = np.finfo(float).eps
TINY = np.finfo(float).tiny
NAMES = list(MP_FUNCTIONS)


def _signed(rng, mag):
    return mag * rng.choice([-1.0, 1.0], size=mag.shape)


def regions(rng, n):
    """(mu, sigma) samples for each region."""
    out = {}
    out["small: abs(mu), sigma <= 1"] = (
        _signed(rng, 10.0 ** rng.uniform(-300, 0, n)),
        10.0 ** rng.uniform(-300, 0, n),
    )
    out["moderate: abs(mu), sigma <= 10"] = (rng.uniform(-10, 10, n), rng.uniform(0, 10, n))
    sig = 10.0 ** rng.uniform(-3, 2.5, n)
    out["tail: 25 <= mu^2/q <= 700"] = (
        _signed(rng, np.sqrt(1 + 2 * sig**2) * np.sqrt(rng.uniform(25, 700, n))),
        sig,
    )
    out["large: 1e2 <= sigma, abs(mu) <= 1e4"] = (
        _signed(rng, 10.0 ** rng.uniform(-2, 4, n)),
        10.0 ** rng.uniform(2, 4, n),
    )
    return out


def _error(task):
    name, mu, sigma = task
    if name == "erf_pair":
        value = g.erf_pair(*mu)
        ref = mp_erf_pair(*mu)
        scale = max(
            abs(ref), abs(g.mean_erf(mu[0], np.sqrt(mu[2])) * g.mean_erf(mu[1], np.sqrt(mu[4])))
        )
        return float(abs(mp.mpf(float(value)) - ref) / scale)
    value = float(getattr(g, name)(mu, sigma))
    ref = mp_gaussian_function(name, mu, sigma)
    if abs(ref) < TINY:
        return float(abs(value - ref) / TINY)
    scale = max(abs(ref), mp_cancellation_scale(name, mu, sigma))
    return float(abs(mp.mpf(value) - ref) / scale)


def accuracy(points: int, seed: int, jobs: int):
    rng = np.random.default_rng(seed)
    regs = regions(rng, points)
    tasks, keys = [], []
    for name in NAMES:
        for reg, (mu, sigma) in regs.items():
            for m, s in zip(mu, sigma, strict=True):
                tasks.append((name, float(m), float(s)))
                keys.append((name, reg))
    # erf_pair: random covariances, means in three scales
    for reg, mscale in [
        ("pair: abs(mu) <= 0.1", 0.1),
        ("pair: abs(mu) <= 3", 3.0),
        ("pair: abs(mu) <= 10", 10.0),
    ]:
        for _ in range(points):
            a = rng.normal(size=(2, 2)) * 10.0 ** rng.uniform(-1, 1)
            s = a @ a.T
            tasks.append(
                ("erf_pair", (*rng.uniform(-mscale, mscale, 2), s[0, 0], s[0, 1], s[1, 1]), None)
            )
            keys.append(("erf_pair", reg))
    with ProcessPoolExecutor(jobs) as pool:
        errors = list(pool.map(_error, tasks, chunksize=8))
    table: dict = {}
    for key, err in zip(keys, errors, strict=True):
        table.setdefault(key, []).append(err / EPS)
    return table


def throughput(n: int = 1_000_000):
    rng = np.random.default_rng(1)
    mu, sigma = rng.uniform(-5, 5, n), rng.uniform(0, 5, n)
    rows = []
    for name in NAMES:
        f = getattr(g, name)
        best = min(_timed(f, mu, sigma) for _ in range(3))
        rows.append((name, n / best))
    v1, v2 = rng.uniform(0, 2, n), rng.uniform(0, 2, n)
    c = rng.uniform(-1, 1, n) * np.sqrt(v1 * v2)
    best = min(_timed(g.erf_pair, mu, -mu / 2, v1, c, v2) for _ in range(3))
    rows.append(("erf_pair", n / best))
    return rows


def _timed(f, *args):
    t0 = time.perf_counter()
    f(*args)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--points", type=int, default=40, help="random points per function and region"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    t0 = time.perf_counter()
    table = accuracy(args.points, args.seed, args.jobs)
    print(
        f"## Accuracy ({args.points} random points per cell, seed {args.seed}; errors in ulp = 2^-52)\n"
    )
    print("| function | region | peak (ulp) | mean (ulp) |")
    print("|---|---|---:|---:|")
    for (name, reg), errs in table.items():
        print(f"| `{name}` | {reg} | {max(errs):.2f} | {np.mean(errs):.2f} |")
    print(f"\n(reference time {time.perf_counter() - t0:.0f} s)\n")
    print("## Throughput (1e6-element arrays, best of 3)\n")
    print("| function | values / s |")
    print("|---|---:|")
    for name, rate in throughput():
        print(f"| `{name}` | {rate:.3g} |")


if __name__ == "__main__":
    main()
