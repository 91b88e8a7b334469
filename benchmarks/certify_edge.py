"""Why the census at lam = 0.9 leaves the edge nu = 1 of M open: the tube test along it.

On the face ``v = v*``, ``k = (kappa, 0, k3)`` (chart ``vectors++``, normal coordinates
``t_k, s_v, t_v`` at ``0, 0, 1``) the gradient's normal components vanish by symmetry, and
a box about the face holds only the face's zeros when the normal block ``J_NN`` of the
chart Jacobian is invertible throughout it (``slr_theory.certify.tube_test``). For
points along the edge this prints the block's eigenvalues at the face, the largest rate
at which its entries change (central differences of the Jacobian along each chart
coordinate), and the widest boxes (tangent width x normal half-width, from a ladder) on
which the test decides.

    python benchmarks/certify_edge.py [--lam 0.9]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from slr_theory import Params
from slr_theory.certify import Face, model_table, proof_spaces, tube_test
from slr_theory.critical import symmetries
from slr_theory.interval import Interval

FACE = Face("vectors++", (1, 2, 3), (0.0, 0.0, 1.0))
LADDER = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lam", type=float, default=0.9)
    args = ap.parse_args()
    p = Params.paper(lam=args.lam)
    table = model_table(p)
    chart = proof_spaces(table, np.asarray(symmetries(p), dtype=float))["charts"][FACE.chart]
    N = list(FACE.normal)

    def jacobian(w: np.ndarray) -> np.ndarray:
        _g, J = chart.system([Interval(c) for c in w])
        return np.array([[float(J[i][j].mid) for j in range(4)] for i in range(4)])

    print(
        f"{'kappa':>6} {'eigenvalues of J_NN at the face':>34} {'max |dJ_NN/dw|':>15} "
        f"{'widest deciding box (tangent x normal)':>40}"
    )
    t0 = time.perf_counter()
    for s in np.linspace(0.13, 0.999, 8):
        w = np.array([s, 0.0, 0.0, 1.0])
        eig = np.linalg.eigvalsh(jacobian(w)[np.ix_(N, N)])
        rate = max(
            np.abs((jacobian(w + h) - jacobian(w - h))[np.ix_(N, N)]).max() / 2e-6
            for h in 1e-6 * np.eye(4)
        )
        widest = "none"
        for wt in LADDER:
            for dn in LADDER:
                lo = np.array([[s, -dn, -dn, 1.0 - dn]])
                hi = np.array([[s + wt, dn, dn, 1.0 + dn]])
                if tube_test(chart, FACE, lo, hi)[0][0] >= 0:
                    widest = f"{wt:.0e} x {dn:.0e}"
                    break
            if widest != "none":
                break
        kappa = 2 * s / (1 + s * s)
        print(
            f"{kappa:6.3f} {eig[0]:10.4f} {eig[1]:10.4f} {eig[2]:12.2f} {rate:15.0f} {widest:>40}"
        )
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
