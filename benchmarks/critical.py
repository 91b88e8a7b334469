"""Wall time of the critical-point search, and how many points and plateaus it meets.

    python benchmarks/critical.py [--starts 512 2048]

For the paper's ``d = 400, L = 10, gamma^2 = 1/2`` at lam = 0.1 and 0.9, and a huge
``d`` where erf saturates: distinct critical points (up to symmetry), the start at which
the last new one appeared, plateaus, and seconds.
"""

from __future__ import annotations

import argparse
import time

from slr_theory import Params, critical_points, lipschitz_bound


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, nargs="+", default=[512, 2048])
    args = ap.parse_args()
    print(
        f"{'d':>9} {'lambda':>6} {'starts':>7} {'points':>6} {'last new':>8} {'plateaus':>8} {'s':>6}"
    )
    for d, lam in ((400, 0.1), (400, 0.9), (10**6, 0.1)):
        p = Params(d=d, L=10, lam=lam, gamma=0.5**0.5)
        for n in args.starts:
            t = time.perf_counter()
            pts = critical_points(p, starts=n, rng=0)
            dt = time.perf_counter() - t
            curve = pts.search.distinct_after
            last = int((curve < curve[-1]).sum()) + 1
            print(
                f"{d:>9} {lam:>6} {len(curve):>7} {len(pts):>6} {last:>8} "
                f"{len(pts.plateaus):>8} {dt:>6.1f}"
            )
    for lam in (0.1, 0.9):
        t = time.perf_counter()
        b = lipschitz_bound(Params.paper(lam=lam), samples=2000)
        print(
            f"Lipschitz bound, lam = {lam}: [{b.lower:.4g}, {b.upper:.4g}] "
            f"({time.perf_counter() - t:.1f} s)"
        )


if __name__ == "__main__":
    main()
