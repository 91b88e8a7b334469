"""Charts of the product of spheres: stereographic and Euclidean coordinates, the overlaps' chart, the charts near the edges, and the critical-point system in each."""

from __future__ import annotations

import numpy as np

from ..interval import Interval
from .boxes import EXCLUDED, INFEASIBLE, ivs, widen, widest
from .jets import Jet2
from .parts import Space

__all__ = []


# --- the two systems -------------------------------------------------------------------------
def stereo(s: Interval, t: Interval, sign: float):
    """A unit vector of ``R^3`` from stereographic coordinates, with first and second
    derivatives: ``k = (2s, 2t, sign (1 - s^2 - t^2)) / (1 + s^2 + t^2)`` (all of ``S^2`` but
    the pole ``-sign e3``; ``|(s, t)| <= 1`` is the hemisphere ``sign k3 >= 0``)."""
    u = (1.0 + s**2 + t**2).reciprocal()
    u2 = u**2
    u3 = u2 * u
    us, ut = -2.0 * s * u2, -2.0 * t * u2
    uss, utt, ust = -2.0 * u2 + 8.0 * s**2 * u3, -2.0 * u2 + 8.0 * t**2 * u3, 8.0 * s * t * u3
    k = [2.0 * s * u, 2.0 * t * u, sign * (2.0 * u - 1.0)]
    dk = [
        [2.0 * u + 2.0 * s * us, 2.0 * s * ut],
        [2.0 * t * us, 2.0 * u + 2.0 * t * ut],
        [2.0 * sign * us, 2.0 * sign * ut],
    ]
    ddk = [
        [[4.0 * us + 2.0 * s * uss, 2.0 * ut + 2.0 * s * ust], [None, 2.0 * s * utt]],
        [[2.0 * t * uss, 2.0 * us + 2.0 * t * ust], [None, 4.0 * ut + 2.0 * t * utt]],
        [[2.0 * sign * uss, 2.0 * sign * ust], [None, 2.0 * sign * utt]],
    ]
    for row in ddk:
        row[1][0] = row[0][1]
    return k, dk, ddk


def vector_overlaps(x: list) -> list:
    """``(kappa, nu, theta, eta, rho)`` of ``x = (k1, k2, k3, v1, v2, v3)`` (``k* = e1``,
    ``v* = e2``): intervals or floats alike."""
    return [x[0], x[4], x[3], x[1], x[0] * x[3] + x[1] * x[4] + x[2] * x[5]]


def euclidean(table, x: list[Interval], need_hessian: bool = True):
    """Gradient (6) and Hessian (6 x 6) of ``F(k, v) = R(overlaps)`` in ``R^3 x R^3``.

    ``kappa = k1, eta = k2, theta = v1, nu = v2, rho = k . v``; the Hessian is
    ``J_o^T Hess R J_o + R_rho [[0, I], [I, 0]]``.
    """
    k, v = x[:3], x[3:]
    ov = vector_overlaps(x)
    R, H = table.partials_and_hessian(ov) if need_hessian else (table.partials(ov), None)
    grad = [R[0] + R[4] * v[0], R[3] + R[4] * v[1], R[4] * v[2]]
    grad += [R[2] + R[4] * k[0], R[1] + R[4] * k[1], R[4] * k[2]]
    if not need_hessian:
        return grad, None, R
    # overlap c depends on coordinate const[c] alone (c < 4); rho on all six
    const = {0: 0, 1: 4, 2: 3, 3: 1}
    drho = [v[0], v[1], v[2], k[0], k[1], k[2]]
    HJ = [[None] * 6 for _ in range(5)]  # Hess R J_o
    for a in range(5):
        for b in range(6):
            acc = H[a][4] * drho[b]
            for c, col in const.items():
                if col == b:
                    acc = acc + H[a][c]
            HJ[a][b] = acc
    HF = [[None] * 6 for _ in range(6)]
    for a in range(6):
        for b in range(a, 6):
            acc = drho[a] * HJ[4][b]
            for c, col in const.items():
                if col == a:
                    acc = acc + HJ[c][b]
            if a < 3 <= b and b - a == 3:
                acc = acc + R[4]  # R_rho d^2 rho / dk_i dv_i
            HF[a][b] = HF[b][a] = acc
    return grad, HF, R


class Charts:
    """``r <= 3``: ``(k, v)`` on ``S^2 x S^2`` in stereographic charts, 4 coordinates."""

    dim = 4

    def __init__(self, table, signs: tuple[float, float], fixed: tuple[bool, ...]) -> None:
        self.table = table
        self.signs = signs
        self.name = "vectors" + "".join("+" if x > 0 else "-" for x in signs)
        self.root_lo = np.array([0.0 if f else -1.0 for f in fixed])
        self.root_hi = np.ones(4)

    def vectors(self, w: list[Interval], derivatives: bool = False):
        k, dk, ddk = stereo(w[0], w[1], self.signs[0])
        v, dv, ddv = stereo(w[2], w[3], self.signs[1])
        if not derivatives:
            return k + v
        return k + v, (dk, dv), (ddk, ddv)

    def system(self, w: list[Interval], need_jacobian: bool = True):
        """The chart gradient (4) and its Jacobian (4 x 4) over the boxes `w`."""
        x, (dk, dv), (ddk, ddv) = self.vectors(w, derivatives=True)
        return chart_system(self.table, x, (dk, dv), (ddk, ddv), range(4), need_jacobian)


def chart_system(table, x: list[Interval], first, second, coords, need_jacobian: bool = True):
    """The gradient of ``F`` along chart coordinates `coords` (of ``0..3``: ``s_k, t_k, s_v,
    t_v``) and its Jacobian, from the vectors `x` and their chart derivatives (`first`:
    ``(dk, dv)``, ``dk[a][i] = dk_a / dw_i``; `second`: ``(ddk, ddv)``; a block no coordinate
    of `coords` moves may be None)."""
    coords = list(coords)
    grad, HF, _R = euclidean(table, x, need_jacobian)
    dk, dv = first
    ddk, ddv = second

    def rows(i: int):  # the coordinates of x chart coordinate i moves, with dx/dw_i
        block = dk if i < 2 else dv
        off = 0 if i < 2 else 3
        return [(off + a, block[a][i % 2]) for a in range(3)]

    g = []
    for i in coords:
        acc = None
        for a, da in rows(i):
            term = grad[a] * da
            acc = term if acc is None else acc + term
        g.append(acc)
    if not need_jacobian:
        return g, None
    n = len(coords)
    J = [[None] * n for _ in range(n)]
    for p, i in enumerate(coords):
        for q in range(p, n):
            j = coords[q]
            acc = None
            for a, da in rows(i):
                for b, db in rows(j):
                    term = da * HF[a][b] * db
                    acc = term if acc is None else acc + term
            if (i < 2) == (j < 2):  # the chart's curvature: grad . d^2 x / dw_i dw_j
                dd = ddk if i < 2 else ddv
                off = 0 if i < 2 else 3
                for a in range(3):
                    acc = acc + grad[off + a] * dd[a][i % 2][j % 2]
            J[p][q] = J[q][p] = acc
    return g, J


class Overlaps(Space):
    """``r = 4``: the overlaps as a chart, the zeros of the five partials of ``R``."""

    name = "overlaps"
    newton = True
    dim = 5

    def __init__(self, table, flips: np.ndarray) -> None:
        self.table = table
        self.root_lo = -np.ones(5)
        self.root_hi = np.ones(5)
        for c in flips:
            self.root_lo[c] = 0.0

    @staticmethod
    def gram_parts(x: list[Interval]):
        kappa, nu, theta, eta, rho = x
        pk = 1.0 - kappa**2 - eta**2
        pv = 1.0 - theta**2 - nu**2
        c = rho - kappa * theta - eta * nu
        return pk, pv, c, pk * pv - c**2

    def classify(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The verdict of each box (-1: open) and the side to split it along (-1: the widest)."""
        verdict = np.full(len(lo), -1)
        x = ivs(lo, hi)
        pk, pv, _c, det = self.gram_parts(x)
        infeasible = (pk.hi <= 0.0) | (pv.hi <= 0.0) | (det.hi <= 0.0)
        verdict[infeasible] = INFEASIBLE
        idx = np.flatnonzero(~infeasible)
        if idx.size:
            R = self.table.partials(ivs(lo[idx], hi[idx]))
            excluded = np.zeros(idx.size, dtype=bool)
            for c in R:
                excluded |= ~c.contains_zero()
            verdict[idx[excluded]] = EXCLUDED
        return verdict, np.full(len(lo), -1)

    def newton_box(self, lo: np.ndarray, hi: np.ndarray):
        return widen(lo, hi)

    def split_dims(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return widest(lo, hi)

    def system(self, z: list[Interval], need_jacobian: bool = True):
        if need_jacobian:
            return self.table.partials_and_hessian(z)
        return self.table.partials(z), None

    def feasible_point(self, klo: np.ndarray, khi: np.ndarray) -> bool | None:
        """Whether the zero enclosed by the box is interior (``r = 4``): True, False, None."""
        _pk, _pv, _c, det = self.gram_parts(ivs(klo[None], khi[None]))
        if det.lo[0] > 0.0:
            return True
        if det.hi[0] <= 0.0:
            return False
        return None


def strata_conditions(R: list[Interval], x: list[Interval]) -> list[Interval]:
    """The conditions a critical point with ``r <= 3`` satisfies, in the overlaps.

    With ``k, v`` in ``R^3``, ``A = k . grad_k F``, ``B = v . grad_v F``, ``p_k = 1 - kappa^2 -
    eta^2 = k3^2``, ``p_v = v3^2`` and ``c = rho - kappa theta - eta nu = k3 v3``, the
    Riemannian gradient's components along ``e1, e2`` are ``E1..E4`` and its ``e3``
    components vanish if and only if ``E5..E8`` do (multiply by ``k3`` and ``v3``).
    """
    kappa, nu, theta, eta, rho = x
    Rk, Rn, Rt, Re, Rr = R
    A = kappa * Rk + eta * Re + rho * Rr
    B = theta * Rt + nu * Rn + rho * Rr
    pk, pv, c, _det = Overlaps.gram_parts(x)
    return [
        Rk + Rr * theta - A * kappa,
        Re + Rr * nu - A * eta,
        Rt + Rr * kappa - B * theta,
        Rn + Rr * eta - B * nu,
        Rr * c - A * pk,
        Rr * pv - A * c,
        Rr * pk - B * c,
        Rr * c - B * pv,
    ]


#: Overlap index of each coordinate of the overlap chart ``(kappa, theta, eta, rho)``.
CHART_OVERLAPS = (0, 2, 3, 4)


def _unit(x):
    """`x` (an interval or a :class:`Jet2`'s value) cut to ``[-1, 1]``: a unit vector's
    component, which the outward rounding of a square root can push past 1 (and ``R``'s
    enclosures need ``|nu| <= 1`` to keep the sign of ``1 - nu`` at the edge)."""
    if isinstance(x, Jet2):
        return Jet2(_unit(x.v), x.g, x.h)
    return Interval(np.clip(x.lo, -1.0, 1.0), np.clip(x.hi, -1.0, 1.0))


class EdgeChart:
    r"""The chart ``y = (eta, k3, theta, v3)`` of ``S^2 x S^2`` about the edge ``v = sign v*``:
    ``kappa = sqrt(1 - eta^2 - k3^2) > 0`` and ``nu = sign sqrt(1 - theta^2 - v3^2)`` (the
    orthographic projections of two open hemispheres, a diffeomorphism onto the open discs),
    ``rho = kappa theta + eta nu + k3 v3``.

    The edge is the face ``eta = theta = v3 = 0`` of :data:`NORMAL_FLIP` (which acts as
    ``(eta, k3, theta, v3) -> (-eta, k3, -theta, -v3)``), with ``k3`` along it. Unlike the
    overlap chart, whose ``nu`` turns singular as ``kappa -> 1`` (``k*, k, v`` meet), this
    chart stays regular up to the corner ``k = k*``: the normal block's hull is regular on
    boxes ``1e-4`` along the edge and ``1e-3`` across it, from ``kappa = 0.6`` to the corner.
    """

    dim = 4
    #: The coordinates across the edge (``eta, theta, v3``) and the one along it (``k3``).
    normal, along = (0, 2, 3), 1
    #: The stretch of the edge its tubes cover (``k3``: ``kappa`` from 0.6 to the corner's
    #: neighbourhood) and their first segments' length.
    tube_range = (1e-3, 0.8, 1e-4)

    def __init__(self, table, sign: float) -> None:
        self.table = table
        self.sign = sign
        self.name = f"edge{'+' if sign > 0 else '-'}"

    @staticmethod
    def face_kappa(lo: np.ndarray, hi: np.ndarray) -> Interval:
        """``kappa = sqrt(1 - k3^2)`` on the face over the boxes' range of ``k3``."""
        return _unit((1.0 - Interval(lo[:, 1], hi[:, 1]) ** 2).sqrt())

    @staticmethod
    def domain(y: list[Interval]) -> tuple[Interval, Interval]:
        """Enclosures of ``kappa^2`` and ``nu^2`` over the boxes `y` (both must be positive)."""
        eta, k3, theta, v3 = y
        return 1.0 - eta * eta - k3 * k3, 1.0 - theta * theta - v3 * v3

    def overlaps(self, y: list) -> list:
        """``(kappa, nu, theta, eta, rho)`` as functions of `y` (intervals or :class:`Jet2`)."""
        eta, k3, theta, v3 = y
        kappa = _unit((1.0 - eta * eta - k3 * k3).sqrt())
        nu = _unit((1.0 - theta * theta - v3 * v3).sqrt()) * self.sign
        return [kappa, nu, theta, eta, kappa * theta + eta * nu + k3 * v3]

    def system(self, y: list[Interval], need_jacobian: bool = True):
        """The gradient of ``F(y) = R(overlaps(y))`` (4 intervals) and, if asked, its Hessian."""
        o = self.overlaps(Jet2.variables(y, second=need_jacobian))
        ov = [a.v for a in o]
        if not need_jacobian:
            R = self.table.partials(ov)
            return [
                sum((R[a] * o[a].g[i] for a in range(1, 5)), R[0] * o[0].g[i]) for i in range(4)
            ], None
        R, H = self.table.partials_and_hessian(ov)
        g = [sum((R[a] * o[a].g[i] for a in range(1, 5)), R[0] * o[0].g[i]) for i in range(4)]
        HG = [  # d(grad R)_a / dy_j
            [
                sum((H[a][b] * o[b].g[j] for b in range(1, 5)), H[a][0] * o[0].g[j])
                for j in range(4)
            ]
            for a in range(5)
        ]
        J = [[None] * 4 for _ in range(4)]
        for i in range(4):
            for j in range(i, 4):
                acc = R[0] * o[0].hess(i, j) + o[0].g[i] * HG[0][j]
                for a in range(1, 5):
                    acc = acc + R[a] * o[a].hess(i, j) + o[a].g[i] * HG[a][j]
                J[i][j] = J[j][i] = acc
        return g, J


#: The charts' tests run on strata boxes whose second-widest side is at most this (wider
#: ones they do not close: a cost cut, not part of any argument).
CHART_WIDTH = 2.0**-8


#: Half-widths across an edge tried for its tube boxes, widest first.
TUBE_WIDTHS = (3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4)


#: Tube segments are not halved below this length.
TUBE_FINEST = 1e-7


#: The census builds the tubes along the stretch of each box by an edge that stays open
#: while this narrow across it (its second-widest side).
TUBE_AFTER = 2.0**-12


#: ``(kappa, nu, theta, eta, rho) -> (kappa, nu, -theta, -eta, -rho)``: a symmetry that fixes
#: the edges ``v = +-v*`` (``theta = eta = rho = 0``) of the overlap chart.
NORMAL_FLIP = np.array([1.0, 1.0, -1.0, -1.0, -1.0])


class OverlapChart:
    r"""The points with ``r <= 3`` and ``k3 > 0`` in the chart ``y = (kappa, theta, eta, rho)``,
    ``nu`` solved on one branch.

    With ``m^2 = 1 - kappa^2``, ``c = rho - kappa theta``, ``k3 = sqrt(m^2 - eta^2)`` and
    ``q = sqrt((1 - theta^2) m^2 - c^2)`` (``q^2`` is the Gram determinant of ``k*, k, v``),
    ``k = (kappa, eta, k3)`` and ``v`` is one of the two unit vectors with ``v1 = theta`` and
    ``k . v = rho``: ``nu = (c eta + sign k3 q) / m^2``, ``v3 = (c k3 - sign eta q) / m^2``.
    Where ``k3 > 0`` and ``q > 0`` the map ``y -> (k, v)`` is a diffeomorphism onto its image
    in ``S^2 x S^2`` (the two branches are the two points of a fibre), so ``(k, v)`` is
    critical if and only if ``y`` is critical for ``F(y) = R(kappa, nu(y), theta, eta, rho)``.
    The gradient and Hessian of ``F`` are formed from ``R``'s own partials and Hessian and
    ``nu``'s derivatives (:class:`Jet2`), not through ``(k, v)``, which would lose the exact
    cancellations of ``nu``'s derivatives.
    """

    dim = 4
    #: The coordinates across the edge (``theta, eta, rho``) and the one along it.
    normal, along = (1, 2, 3), 0
    #: The stretch of the edge its tubes cover (``kappa``) and their first segments' length.
    tube_range = (0.0, 0.8, 1e-3)

    def __init__(self, table, sign: float) -> None:
        self.table = table
        self.sign = sign
        self.name = f"overlap{'+' if sign > 0 else '-'}"

    @staticmethod
    def face_kappa(lo: np.ndarray, hi: np.ndarray) -> Interval | None:
        """``kappa`` on the face over the boxes' range along it (None: off the chart)."""
        return Interval(lo[:, 0], hi[:, 0])

    @staticmethod
    def domain(y: list[Interval]) -> tuple[Interval, Interval]:
        """Enclosures of ``k3^2 = 1 - kappa^2 - eta^2`` and ``q^2`` over the boxes `y`."""
        kappa, theta, eta, rho = y
        m2 = 1.0 - kappa * kappa
        c = rho - kappa * theta
        return m2 - eta * eta, (1.0 - theta * theta) * m2 - c * c

    def nu(self, y):
        """``nu`` on this branch, for intervals or :class:`Jet2` (``k3^2, q^2 > 0`` needed)."""
        kappa, theta, eta, rho = y
        m2 = 1.0 - kappa * kappa
        c = rho - kappa * theta
        k3 = (m2 - eta * eta).sqrt()
        q = ((1.0 - theta * theta) * m2 - c * c).sqrt()
        return _unit((c * eta + self.sign * (k3 * q)) * m2.reciprocal())

    def system(self, y: list[Interval], need_jacobian: bool = True):
        """The gradient of ``F`` (4 intervals) and, if asked, its Hessian (4 x 4)."""
        nu = self.nu(Jet2.variables(y, second=need_jacobian))
        ov = [y[0], nu.v, y[1], y[2], y[3]]
        if not need_jacobian:
            R = self.table.partials(ov)
            return [R[a] + R[1] * nu.g[i] for i, a in enumerate(CHART_OVERLAPS)], None
        R, H = self.table.partials_and_hessian(ov)
        g = [R[a] + R[1] * nu.g[i] for i, a in enumerate(CHART_OVERLAPS)]
        J = [[None] * 4 for _ in range(4)]
        for i, a in enumerate(CHART_OVERLAPS):
            for j in range(i, 4):
                b = CHART_OVERLAPS[j]
                J[i][j] = J[j][i] = (
                    H[a][b]
                    + H[a][1] * nu.g[j]
                    + nu.g[i] * H[1][b]
                    + H[1][1] * nu.g[i] * nu.g[j]
                    + R[1] * nu.hess(i, j)
                )
        return g, J
