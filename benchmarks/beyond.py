"""The numbers of docs/beyond.md: the landscape with s informative tokens (erf).

For s in {1, 2, 3} at the paper's d = 400, L = 10, gamma^2 = 1/2 and lambda in {0.1, 0.5,
0.9}: the critical points in the full space with their kinds, whether (k*, v*) is a
minimum and the global one, the minima off M, and where PGD from uniform starts ends
(n runs, at a step small enough for every minimum to hold: alpha = min(4e-3, 1.9 / the
largest Hessian eigenvalue of the minima)), each run followed to its end (slr_theory.fate:
the 1e-3-ball of a minimum, with the steps it takes, or a saddle's stable manifold), and
the share at a minimum after 200 000 steps.

    python benchmarks/beyond.py [--runs 1000] [--sigma tanh] [--s 1 2 3] [--lam 0.1 0.5 0.9]
                                [--starts 512] [--attention softmax]

``--sigma`` names a built-in nonlinearity (erf by default); ``--attention softmax``
replaces the pointwise weights by softmax ones (no ``--sigma`` then); ``--runs 0`` skips
the PGD ensembles; ``--starts`` is the locator's number of random starts. Each cell
first prints the largest partial of the risk across M on M (0 when M is invariant) and
the critical points of the flow on M with their kinds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from slr_theory import Params, critical_points, risk_grad
from slr_theory.critical import describe, overlaps_text
from slr_theory.dynamics import sample_initial_overlaps
from slr_theory.longrun import fate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000, help="PGD runs per cell (0: none)")
    ap.add_argument("--sigma", default="erf", help="the nonlinearity (a built-in's name)")
    ap.add_argument("--s", type=int, nargs="+", default=[1, 2, 3], help="informative tokens")
    ap.add_argument("--lam", type=float, nargs="+", default=[0.1, 0.5, 0.9], help="temperatures")
    ap.add_argument("--starts", type=int, default=512, help="the locator's random starts")
    ap.add_argument("--attention", default="pointwise", help="a registered attention")
    args = ap.parse_args()
    for s in args.s:
        for lam in args.lam:
            t0 = time.perf_counter()
            p = Params.paper(lam=lam).replace(
                s=s, nonlinearity=args.sigma, attention=args.attention
            )
            grid = np.linspace(-1.0, 1.0, 21)
            kk, nn = np.meshgrid(grid, grid)
            across = np.max(np.abs(risk_grad(p, kk, nn, 0.0, 0.0, 0.0)[..., 2:]))
            on_m = ", ".join(
                f"{overlaps_text(q.overlaps)} {q.kind} (index {q.index}, risk {q.risk:.6g})"
                for q in critical_points(p, "manifold")
            )
            print(
                f"{args.attention} attention, sigma = {args.sigma}, s = {s}, lam = {lam}: "
                f"largest |dR/d(theta, eta, rho)| on M {across:.3g}; on M: {on_m}"
            )
            pts = critical_points(p, starts=args.starts, rng=0)
            mins = [q for q in pts if q.index == 0]
            opt = next(
                q for q in pts if q.on_manifold and q.overlaps[0] == 1 and q.overlaps[1] == 1
            )
            best = min(pts, key=lambda q: q.risk)
            kinds = {}
            for q in pts:
                kinds[q.kind.split(" (")[0]] = kinds.get(q.kind.split(" (")[0], 0) + 1
            print(
                f"sigma = {args.sigma}, s = {s}, lam = {lam}: {len(pts)} critical points up to symmetry {kinds}"
            )
            print(
                f"  (k*, v*): index {opt.index}, risk {opt.risk:.6g}; global minimum: "
                f"{'(k*, v*)' if best is opt else describe(best.overlaps) + ' ' + overlaps_text(best.overlaps)}"
                f" risk {best.risk:.6g}"
            )
            for q in mins:
                if not q.on_manifold:
                    print(
                        f"  minimum off M: {describe(q.overlaps)} {overlaps_text(q.overlaps)}, "
                        f"risk {q.risk:.6g} ({q.risk - opt.risk:+.3g} from the optimum)"
                    )
            h_max = max(float(np.max(q.hessian_eigenvalues)) for q in mins)
            alpha = min(4e-3, 1.9 / h_max)
            tops = ", ".join(
                f"{describe(q.overlaps)} {float(np.max(q.hessian_eigenvalues)):.4g}" for q in mins
            )
            print(f"  largest Hessian eigenvalue of the minima: {tops}", flush=True)
            if args.runs == 0:
                continue
            starts = sample_initial_overlaps(p, np.random.default_rng(s), args.runs)
            f = fate(p, starts, alpha=alpha, points=pts)
            ends = "; ".join(
                f"{describe(o)} {f.fractions[j]:.3f} ± {f.stderr[j]:.3f}"
                + (
                    f" (log10 steps {' / '.join(f'{x:.1f}' for x in f.quantiles([0.1, 0.5, 0.9], j))})"
                    if f.minimum[j]
                    else f" ({f.kinds[j]})"
                )
                for j, o in enumerate(f.points)
                if np.any(f.label == j)
            )
            print(
                f"  PGD alpha = {alpha:.3g}, {args.runs} runs followed to their end: {ends}; "
                f"undecided {f.undecided:.3f}; at a minimum after 200 000 steps "
                f"{f.within(200_000)[f.minimum].sum():.3f}  [{time.perf_counter() - t0:.0f} s]",
                flush=True,
            )


if __name__ == "__main__":
    main()
