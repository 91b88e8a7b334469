"""Why the census at lam = 0.9 leaves the edge nu = 1 of M open: the tube test along it.

On the face ``v = v*``, ``k = (kappa, 0, k3)`` (chart ``vectors++``, normal coordinates
``t_k, s_v, t_v`` at ``0, 0, 1``) the gradient's normal components vanish by symmetry, and
a box about the face holds only the face's zeros when the normal block ``J_NN`` of the
chart Jacobian is invertible throughout it (``slr_theory.certify.tube_test``). For
points along the edge this prints the block's eigenvalues at the face, the largest rate
at which its entries change (central differences of the Jacobian along each chart
coordinate), and the widest boxes (tangent width x normal half-width, from a ladder) on
which the test decides.

A second table estimates the same in the overlaps: the chart ``(kappa, theta, eta, rho)``
of ``r <= 3`` near the edge (``k3 = sqrt(1 - kappa^2 - eta^2) > 0``, ``nu`` solved from
``v3 = (rho - kappa theta - eta nu) / k3``, ``nu = sqrt(1 - theta^2 - v3^2)``), whose face
is ``theta = eta = rho = 0``. Its normal block is the Hessian of ``R`` along
``(theta, eta, rho)`` by central differences of float risks (an estimate, not an
enclosure), and ``||I - Y J(x)||_inf`` (``Y`` the inverse at the face) is sampled at 12
points of boxes of each half-width: below 1 is what the interval test needs at least.

A third table is rigorous: the charts the census uses about the edge (the overlap chart
and the edge chart ``(eta, k3, theta, v3)``, ``slr_theory.certify``), and the widest box on
which the interval hull of each one's normal block is regular.

    python benchmarks/certify_edge.py [--lam 0.9]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from slr_theory import Params, risk
from slr_theory.certify.faces import Face, tube_test
from slr_theory.certify.search import model_table
from slr_theory.certify.strata import proof_spaces
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
    _overlap_chart(p)
    _census_charts(table, np.asarray(symmetries(p), dtype=float))


def _overlap_chart(p: Params) -> None:
    def nu_of(x: np.ndarray) -> float:
        kappa, theta, eta, rho = x
        k3 = np.sqrt(1.0 - kappa * kappa - eta * eta)
        nu = 1.0
        for _ in range(60):  # a contraction near nu = 1
            v3 = (rho - kappa * theta - eta * nu) / k3
            nu = np.sqrt(1.0 - theta * theta - v3 * v3)
        return nu

    def value(x: np.ndarray) -> float:
        return float(risk(p, x[0], nu_of(x), x[1], x[2], x[3]))

    def normal_block(x: np.ndarray, h: float = 1e-4) -> np.ndarray:
        def grad(y: np.ndarray) -> np.ndarray:
            e = 1e-6 * np.eye(4)
            return np.array([(value(y + e[i]) - value(y - e[i])) / 2e-6 for i in (1, 2, 3)])

        e = h * np.eye(4)
        H = np.array([(grad(x + e[i]) - grad(x - e[i])) / (2 * h) for i in (1, 2, 3)])
        return 0.5 * (H + H.T)

    rng = np.random.default_rng(0)
    widths = (1e-3, 3e-3, 1e-2, 3e-2)
    print()
    print(
        f"{'kappa':>6} {'normal eigenvalues, overlap chart':>34} "
        + " ".join(f"{'w=' + format(w, 'g'):>9}" for w in widths)
    )
    t0 = time.perf_counter()
    for kappa in (0.3, 0.6, 0.8, 0.9, 0.95):
        c = np.array([kappa, 0.0, 0.0, 0.0])
        J = normal_block(c)
        Y = np.linalg.inv(J)
        eig = np.linalg.eigvalsh(J)
        cells = []
        for w in widths:
            worst = 0.0
            for _ in range(12):
                x = c + w * rng.uniform(-1.0, 1.0, 4)
                worst = max(worst, np.abs(np.eye(3) - Y @ normal_block(x)).sum(axis=1).max())
            cells.append(f"{worst:9.3g}")
        print(f"{kappa:6.2f} {eig[0]:10.4f} {eig[1]:10.4f} {eig[2]:12.2f} " + " ".join(cells))
    print(f"({time.perf_counter() - t0:.1f} s)")


def _census_charts(table, group: np.ndarray) -> None:
    """The charts the census uses about the edge, with rigorous hulls: the widest box
    (along x across, from a ladder) on which the normal block's hull is regular."""
    from slr_theory.certify.boxes import regular

    strata = proof_spaces(table, group)["strata"]
    charts = {"overlap chart": strata.overlap_charts[0], "edge chart": strata.edge_charts[0]}
    ladder = (1e-2, 1e-3, 1e-4, 1e-5)
    across = (3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4)
    print()
    print(f"{'kappa':>7} " + " ".join(f"{name + ' (along x across)':>32}" for name in charts))
    t0 = time.perf_counter()
    for kappa in (0.3, 0.6, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999):
        cells = []
        for name, chart in charts.items():
            widest = "none"
            for wt in ladder:
                for wn in across:
                    if name == "overlap chart":  # (kappa, theta, eta, rho), normal 1..3
                        lo = np.array([[kappa, -wn, -wn, -wn]])
                        hi = np.array([[min(kappa + wt, 1.0), wn, wn, wn]])
                        normal = (1, 2, 3)
                    else:  # (eta, k3, theta, v3), normal 0, 2, 3
                        k3 = np.sqrt(1.0 - kappa * kappa)
                        lo = np.array([[-wn, k3 - wt / 2, -wn, -wn]])
                        hi = np.array([[wn, k3 + wt / 2, wn, wn]])
                        normal = (0, 2, 3)
                    dom = chart.domain([Interval(lo[:, i], hi[:, i]) for i in range(4)])
                    if not all(d.lo[0] > 0.0 for d in dom):
                        continue
                    _g, J = chart.system([Interval(lo[:, i], hi[:, i]) for i in range(4)])
                    if regular([[J[i][j] for j in normal] for i in normal])[0]:
                        widest = f"{wt:.0e} x {wn:.0e}"
                        break
                if widest != "none":
                    break
            cells.append(f"{widest:>32}")
        print(f"{kappa:7.4f} " + " ".join(cells))
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
