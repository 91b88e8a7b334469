r"""Computer-assisted proofs about the critical points (``docs/critical.md``).

The risk depends on ``(k, v)`` through five overlaps, and every critical point on
``S^{d-1} x S^{d-1}`` has a representative with ``k, v`` in ``span{k*, v*, e3, e4}``
(``k* = e1``, ``v* = e2``). The proofs split the points by ``r = dim span{k, v, k*, v*}``.

**Points.** A point with ``r <= 3`` has ``k, v`` in ``R^3``; since the Euclidean gradient
of ``F(k, v) = R(overlaps)`` lies in ``span{k*, v*, k, v}``, it is critical on the big
spheres if and only if it is critical for ``F`` on ``S^2 x S^2``, where the ``O(d - 2)``
orbits leave isolated points. In stereographic charts of ``S^2 x S^2`` the Krawczyk test
(``K(Z) = z - Y g(z) + (I - Y J(Z))(Z - z)`` inside ``Z``, ``Y`` a float inverse of the
Jacobian's midpoint) proves that a box ``Z`` holds exactly one critical point: existence
and uniqueness of every point the search found (or Newton found from an open box).

**Points on a face of a symmetry.** Where one curvature is far below the others (at
``lam = 0.9`` the corner ``k = k*, v = v*`` has ``-R_kappa ~ 1e-54`` against ``848``), no box
a double can hold passes the Krawczyk test. A sign change of the group fixes a face of
the chart (:class:`Face`), on which the gradient's normal components vanish; if their
Jacobian along the normal coordinates is invertible throughout a box about the face,
every critical point in the box lies on the face, where the Krawczyk test on the
tangent equations alone (whose enclosures keep the small factor's sign) proves one
(:func:`tube_test`). The Hessian there splits into its tangent and normal blocks (the
symmetry acts by ``+1`` and ``-1`` on them), whose inertias add.

**r = 4 (part "overlaps").** In the interior of the feasible set the overlaps are a
chart, and ``(k, v)`` is critical if and only if the five partials of ``R`` vanish: a
branch and bound over the overlaps (reduced by the model's symmetry group) closes each
box as *infeasible* (the Gram determinant's enclosure is at most 0), *excluded* (a
partial's enclosure misses 0), *Newton-excluded* (the Krawczyk image of the box,
widened by a quarter of its sides, misses it) or *unique* (the image lies inside: one
zero, the census's point).

**r <= 3 (part "strata").** A branch and bound over the same overlaps, on the boundary
``det Gram = 0``: a box closes as *infeasible*, *excluded* (``det > 0`` throughout, or one
of the conditions :func:`strata_conditions` misses 0), or *unique* (every ``(k, v)`` with
its overlaps lies, after a symmetry, in the box ``Z`` of a proved point).

Near the edges ``v = +-v*`` and near ``k3 = 0`` the conditions cannot close small boxes:
the risk hardly moves along the edge (``R_kappa ~ 1e-49`` at ``lam = 0.9``), and the square
root that maps the overlaps back to ``k3`` widens a box of width ``w`` to ``sqrt(w)``. Two
more arguments close those boxes:

* **The overlap chart** (:class:`_OverlapChart`): where ``k3 > 0`` and the Gram determinant
  ``q^2`` of ``k*, k, v`` is positive, ``y = (kappa, theta, eta, rho)`` is a chart of ``S^2 x
  S^2`` on each of the two branches of ``nu``, and a box closes when on each branch that
  meets its ``nu`` the chart gradient's enclosure misses 0, or its Krawczyk image misses
  the box, or (with the symmetry :data:`NORMAL_FLIP`) every critical point of the box lies
  on the edge, where ``R_kappa`` keeps its sign (:meth:`_Strata.chart_excludes`). Near the
  corners ``k = k*``, where ``k*, k, v`` meet and that chart turns singular, the same face
  argument runs in the edge chart ``(eta, k3, theta, v3)`` (:class:`_EdgeChart`).
* **Isolating neighbourhoods** (:func:`isolate`): about each proved point, a box ``W`` of
  its chart, up to ``1e-2`` wide, in which a branch and bound shows that every critical
  point lies in the point's Krawczyk box; a strata box whose preimage lies in ``W`` closes
  as unique. The census saves each neighbourhood's leaves, and the checker re-verifies them.

A box no verdict closes within the budget or above the smallest width stays
*unresolved*, and the census then says which part is not complete. Every enclosure is
rigorous: outward-rounded interval arithmetic (:mod:`slr_theory.interval`) on
coefficients and bases enclosed by python-flint's ``arb`` (:mod:`slr_theory.rigorous`).

Indices at dimension ``d`` come from the inertia of rigorous enclosures (Sylvester's
law of inertia on ``X^T J X``, ``X`` the float eigenvectors of ``J``'s midpoint, and
Gershgorin discs that exclude 0): the chart Hessian on ``S^2 x S^2`` gives the in-span
index, and the ``d - 3`` copies of the out-of-span block ``H_W = [[-mu, R_rho], [R_rho,
-mu']]`` (``mu = k . grad_k F``, ``mu' = v . grad_v F``) add theirs; for ``r = 3`` one
eigenvector of ``H_W`` is the orbit's direction and the other eigenvalue is its trace;
for ``r = 4``, ``index = #neg(Hess R)`` and the orbit has dimension ``2d - 7``.
"""

from __future__ import annotations

import gzip
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from . import engine
from .critical import canonical, symmetries
from .interval import Interval
from .params import Params, check_params, params_record

__all__ = [
    "Census",
    "CertificateCheck",
    "CertifiedPoint",
    "certify_critical_points",
    "check_certificate",
]

#: Verdict codes of a box.
INFEASIBLE, EXCLUDED, NEWTON_EXCLUDED, UNIQUE, UNRESOLVED = range(5)
VERDICTS = ("infeasible", "excluded", "newton-excluded", "unique", "unresolved")
#: Krawczyk boxes are the leaf widened by this fraction of its sides on each side.
WIDEN = 0.25
#: Boxes at most this wide get the Krawczyk test.
NEWTON_WIDTH = 0.125
#: Rounds of Newton from the open boxes of the strata, and how many boxes each round tries.
ROUNDS = 2
HARVEST = 50
#: Boxes classified in one vectorised pass (bounds the memory of a wide generation).
CHUNK = 100_000
#: Krawczyk steps that tighten a proved zero's enclosure.
TIGHTEN = 4
FORMAT = "slr-theory census 1"


# --- boxes -----------------------------------------------------------------------------------
def widest(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The widest side of each box (the lowest index on ties)."""
    return np.argmax(hi - lo, axis=-1)


def _children(lo: np.ndarray, hi: np.ndarray, dims: np.ndarray):
    rows = np.arange(len(lo))
    mid = 0.5 * (lo[rows, dims] + hi[rows, dims])  # exact: dyadic endpoints
    lo1, hi0 = lo.copy(), hi.copy()
    hi0[rows, dims] = mid
    lo1[rows, dims] = mid
    return (lo, hi0), (lo1, hi)


def box_of_path(root_lo, root_hi, path: str) -> tuple[np.ndarray, np.ndarray]:
    """The box a bisection path leads to from the root: each character ``str(2 dim + half)``
    halves side ``dim``, keeping its lower (``half = 0``) or upper half."""
    lo, hi = np.array(root_lo, dtype=float), np.array(root_hi, dtype=float)
    for ch in path:
        dim, half = divmod(int(ch), 2)
        mid = 0.5 * (lo[dim] + hi[dim])
        if half:
            lo[dim] = mid
        else:
            hi[dim] = mid
    return lo, hi


def _path_bytes(paths: list[str]) -> np.ndarray:
    """The paths as rows of ASCII codes, padded with zeros: ``(n, longest)`` uint8."""
    longest = max((len(p) for p in paths), default=0)
    if not longest:
        return np.zeros((len(paths), 0), dtype=np.uint8)
    raw = np.array(paths, dtype=f"S{longest}")
    return raw.view(np.uint8).reshape(len(paths), longest)


def boxes_of_paths(root_lo, root_hi, paths: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`box_of_path` for every path at once (the same halvings, depth by depth):
    ``(n, dim)`` arrays of the boxes' bounds."""
    n = len(paths)
    lo = np.tile(np.asarray(root_lo, dtype=float), (n, 1))
    hi = np.tile(np.asarray(root_hi, dtype=float), (n, 1))
    for start in range(0, n, CHUNK):
        codes = _path_bytes(paths[start : start + CHUNK])
        for depth in range(codes.shape[1]):
            c = codes[:, depth]
            rows = np.flatnonzero(c)
            dim, half = np.divmod(c[rows].astype(np.int64) - ord("0"), 2)
            rows = rows + start
            mid = 0.5 * (lo[rows, dim] + hi[rows, dim])
            up, down = half == 1, half == 0
            lo[rows[up], dim[up]] = mid[up]
            hi[rows[down], dim[down]] = mid[down]
    return lo, hi


def _paths_are_halvings(paths: list, dim: int) -> bool:
    """Whether every path is a string of side halves (``'0'`` to ``str(2 dim - 1)``)."""
    halves = {str(c) for c in range(2 * dim)}
    return all(isinstance(p, str) for p in paths) and set("".join(paths)) <= halves


def _tree_complete(paths: list[str]) -> bool:
    """Whether the leaves' paths partition the root.

    Sorted, consecutive paths must not be prefixes of each other and must part at two
    halves of one side (so every node is split along one side), and ``sum 2^-len = 1``
    (Kraft's equality: no half is missing).
    """
    if not paths:
        return False
    lengths = np.array([len(p) for p in paths])
    longest = int(lengths.max())
    counts = np.bincount(lengths)
    if sum(int(c) << (longest - n) for n, c in enumerate(counts) if c) != 1 << longest:
        return False
    if len(paths) == 1:
        return True
    codes = _path_bytes(sorted(paths))
    a, b = codes[:-1], codes[1:]
    differ = a != b
    if not np.all(differ.any(axis=1)):
        return False  # a path twice
    n = np.argmax(differ, axis=1)  # where consecutive paths part
    rows = np.arange(len(n))
    length_a = np.count_nonzero(a, axis=1)
    if np.any(n >= length_a):
        return False  # a leaf inside a leaf
    side_a = (a[rows, n].astype(np.int64) - ord("0")) // 2
    side_b = (b[rows, n].astype(np.int64) - ord("0")) // 2
    return bool(np.all(side_a == side_b))


def _widen(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = WIDEN * (hi - lo)
    return lo - w, hi + w


def _ivs(lo: np.ndarray, hi: np.ndarray) -> list[Interval]:
    return [Interval(lo[:, i], hi[:, i]) for i in range(lo.shape[1])]


# --- inertia -----------------------------------------------------------------------------------
def _matrix_mid(M: list[list[Interval]], j: int) -> np.ndarray:
    return np.array([[0.5 * (np.ravel(e.lo)[j] + np.ravel(e.hi)[j]) for e in row] for row in M])


def inertia(M: list[list[Interval]], j: int = 0) -> tuple[int, int] | None:
    """``(#negative, #positive)`` eigenvalues of every symmetric matrix in the interval
    matrix `M` (entry arrays, element `j`), or None when 0 is not excluded.

    Sylvester: ``X^T M X`` has ``M``'s inertia for a nonsingular ``X`` (the float
    eigenvectors of the midpoint, certified nonsingular by ``||X^T X - I||_inf < 1``);
    if no Gershgorin disc of ``X^T M X`` contains 0, its inertia is that of its diagonal
    (the discs move continuously as the off-diagonal part is switched on).
    """
    n = len(M)
    _w, X = np.linalg.eigh(_matrix_mid(M, j))
    E = [
        [Interval(np.ravel(M[a][b].lo)[j], np.ravel(M[a][b].hi)[j]) for b in range(n)]
        for a in range(n)
    ]
    XtX = [
        [sum((Interval(X[c, a]) * X[c, b] for c in range(n)), Interval(0.0)) for b in range(n)]
        for a in range(n)
    ]
    dev = max(
        sum(float(np.max((XtX[a][b] - float(a == b)).abs().hi)) for b in range(n))
        for a in range(n)
    )
    if dev >= 1.0:
        return None
    MX = [
        [sum((E[a][c] * X[c, b] for c in range(n)), Interval(0.0)) for b in range(n)]
        for a in range(n)
    ]
    T = [
        [sum((MX[c][b] * X[c, a] for c in range(n)), Interval(0.0)) for b in range(n)]
        for a in range(n)
    ]
    neg = pos = 0
    for a in range(n):
        radius = sum(float(max(abs(T[a][b].lo), abs(T[a][b].hi))) for b in range(n) if b != a)
        if float(T[a][a].hi) < -radius:
            neg += 1
        elif float(T[a][a].lo) > radius:
            pos += 1
        else:
            return None
    return neg, pos


# --- the two systems -------------------------------------------------------------------------
def _stereo(s: Interval, t: Interval, sign: float):
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


class _Charts:
    """``r <= 3``: ``(k, v)`` on ``S^2 x S^2`` in stereographic charts, 4 coordinates."""

    dim = 4

    def __init__(self, table, signs: tuple[float, float], fixed: tuple[bool, ...]) -> None:
        self.table = table
        self.signs = signs
        self.name = "vectors" + "".join("+" if x > 0 else "-" for x in signs)
        self.root_lo = np.array([0.0 if f else -1.0 for f in fixed])
        self.root_hi = np.ones(4)

    def vectors(self, w: list[Interval], derivatives: bool = False):
        k, dk, ddk = _stereo(w[0], w[1], self.signs[0])
        v, dv, ddv = _stereo(w[2], w[3], self.signs[1])
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


class _Overlaps:
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
        x = _ivs(lo, hi)
        pk, pv, _c, det = self.gram_parts(x)
        infeasible = (pk.hi <= 0.0) | (pv.hi <= 0.0) | (det.hi <= 0.0)
        verdict[infeasible] = INFEASIBLE
        idx = np.flatnonzero(~infeasible)
        if idx.size:
            R = self.table.partials(_ivs(lo[idx], hi[idx]))
            excluded = np.zeros(idx.size, dtype=bool)
            for c in R:
                excluded |= ~c.contains_zero()
            verdict[idx[excluded]] = EXCLUDED
        return verdict, np.full(len(lo), -1)

    def newton_box(self, lo: np.ndarray, hi: np.ndarray):
        return _widen(lo, hi)

    def split_dims(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return widest(lo, hi)

    def system(self, z: list[Interval], need_jacobian: bool = True):
        if need_jacobian:
            return self.table.partials_and_hessian(z)
        return self.table.partials(z), None

    def feasible_point(self, klo: np.ndarray, khi: np.ndarray) -> bool | None:
        """Whether the zero enclosed by the box is interior (``r = 4``): True, False, None."""
        _pk, _pv, _c, det = self.gram_parts(_ivs(klo[None], khi[None]))
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
    pk, pv, c, _det = _Overlaps.gram_parts(x)
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


class _Dual:
    """An interval with interval first derivatives (forward mode): for the mean-value form."""

    __slots__ = ("d", "v")

    def __init__(self, v: Interval, d: list) -> None:
        self.v, self.d = v, d

    def __add__(self, o):
        if isinstance(o, _Dual):
            return _Dual(self.v + o.v, [a + b for a, b in zip(self.d, o.d, strict=True)])
        return _Dual(self.v + o, self.d)

    __radd__ = __add__

    def __neg__(self):
        return _Dual(-self.v, [-a for a in self.d])

    def __sub__(self, o):
        return self + (-o)

    def __rsub__(self, o):
        return (-self) + o

    def __mul__(self, o):
        if isinstance(o, _Dual):
            return _Dual(
                self.v * o.v, [self.v * b + o.v * a for a, b in zip(self.d, o.d, strict=True)]
            )
        return _Dual(self.v * o, [a * o for a in self.d])

    __rmul__ = __mul__

    def __pow__(self, n: int):
        if n != 2:
            raise ValueError("_Dual ** n: n = 2 only")
        return _Dual(self.v**2, [2.0 * self.v * a for a in self.d])


class _Jet2:
    """An interval with its interval gradient and, unless ``h`` is None, its Hessian in
    ``n`` variables (forward mode; ``h`` holds the upper triangle, ``h[(i, j)]`` for ``i <=
    j``): for the overlaps as functions of a chart's coordinates (:class:`_OverlapChart`,
    :class:`_EdgeChart`). Constants (floats, intervals) combine without jets of their own."""

    __slots__ = ("g", "h", "v")

    def __init__(self, v: Interval, g: list, h: dict | None) -> None:
        self.v, self.g, self.h = v, g, h

    @classmethod
    def variables(cls, y: list[Interval], second: bool = True) -> list[_Jet2]:
        n = len(y)
        zero = Interval(np.zeros(y[0].shape))
        one = Interval(np.ones(y[0].shape))
        pairs = [(i, j) for i in range(n) for j in range(i, n)]
        return [
            cls(
                y[i],
                [one if j == i else zero for j in range(n)],
                dict.fromkeys(pairs, zero) if second else None,
            )
            for i in range(n)
        ]

    def hess(self, i: int, j: int) -> Interval:
        return self.h[(i, j) if i <= j else (j, i)]

    def __add__(self, o) -> _Jet2:
        if not isinstance(o, _Jet2):
            return _Jet2(self.v + o, self.g, self.h)
        h = None if self.h is None else {k: a + o.h[k] for k, a in self.h.items()}
        return _Jet2(self.v + o.v, [a + b for a, b in zip(self.g, o.g, strict=True)], h)

    __radd__ = __add__

    def __neg__(self) -> _Jet2:
        h = None if self.h is None else {k: -a for k, a in self.h.items()}
        return _Jet2(-self.v, [-a for a in self.g], h)

    def __sub__(self, o) -> _Jet2:
        return self + (-o)

    def __rsub__(self, o) -> _Jet2:
        return (-self) + o

    def __mul__(self, o) -> _Jet2:
        if not isinstance(o, _Jet2):
            h = None if self.h is None else {k: a * o for k, a in self.h.items()}
            return _Jet2(self.v * o, [a * o for a in self.g], h)
        g = [self.v * b + o.v * a for a, b in zip(self.g, o.g, strict=True)]
        h = None
        if self.h is not None:
            h = {
                (i, j): self.v * o.h[(i, j)] + o.v * a + self.g[i] * o.g[j] + self.g[j] * o.g[i]
                for (i, j), a in self.h.items()
            }
        return _Jet2(self.v * o.v, g, h)

    __rmul__ = __mul__

    def _compose(self, f0: Interval, f1: Interval, f2: Interval) -> _Jet2:
        """``f(self)`` from ``f``, ``f'`` and ``f''`` enclosed at the value."""
        h = None
        if self.h is not None:
            h = {(i, j): f1 * a + f2 * (self.g[i] * self.g[j]) for (i, j), a in self.h.items()}
        return _Jet2(f0, [f1 * a for a in self.g], h)

    def sqrt(self) -> _Jet2:
        r = self.v.sqrt()
        inv = r.reciprocal()
        return self._compose(r, 0.5 * inv, -0.25 * inv * inv * inv)

    def reciprocal(self) -> _Jet2:
        inv = self.v.reciprocal()
        return self._compose(inv, -(inv * inv), 2.0 * inv * inv * inv)


#: Overlap index of each coordinate of the overlap chart ``(kappa, theta, eta, rho)``.
CHART_OVERLAPS = (0, 2, 3, 4)


def _unit(x):
    """`x` (an interval or a :class:`_Jet2`'s value) cut to ``[-1, 1]``: a unit vector's
    component, which the outward rounding of a square root can push past 1 (and ``R``'s
    enclosures need ``|nu| <= 1`` to keep the sign of ``1 - nu`` at the edge)."""
    if isinstance(x, _Jet2):
        return _Jet2(_unit(x.v), x.g, x.h)
    return Interval(np.clip(x.lo, -1.0, 1.0), np.clip(x.hi, -1.0, 1.0))


class _EdgeChart:
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
        """``(kappa, nu, theta, eta, rho)`` as functions of `y` (intervals or :class:`_Jet2`)."""
        eta, k3, theta, v3 = y
        kappa = _unit((1.0 - eta * eta - k3 * k3).sqrt())
        nu = _unit((1.0 - theta * theta - v3 * v3).sqrt()) * self.sign
        return [kappa, nu, theta, eta, kappa * theta + eta * nu + k3 * v3]

    def system(self, y: list[Interval], need_jacobian: bool = True):
        """The gradient of ``F(y) = R(overlaps(y))`` (4 intervals) and, if asked, its Hessian."""
        o = self.overlaps(_Jet2.variables(y, second=need_jacobian))
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


class _OverlapChart:
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
    ``nu``'s derivatives (:class:`_Jet2`), not through ``(k, v)``, which would lose the exact
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
        """``nu`` on this branch, for intervals or :class:`_Jet2` (``k3^2, q^2 > 0`` needed)."""
        kappa, theta, eta, rho = y
        m2 = 1.0 - kappa * kappa
        c = rho - kappa * theta
        k3 = (m2 - eta * eta).sqrt()
        q = ((1.0 - theta * theta) * m2 - c * c).sqrt()
        return _unit((c * eta + self.sign * (k3 * q)) * m2.reciprocal())

    def system(self, y: list[Interval], need_jacobian: bool = True):
        """The gradient of ``F`` (4 intervals) and, if asked, its Hessian (4 x 4)."""
        nu = self.nu(_Jet2.variables(y, second=need_jacobian))
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


class _Strata:
    """``r <= 3`` in the overlaps: the boundary ``det Gram = 0`` of the feasible set, where a
    critical point satisfies :func:`strata_conditions`; uniqueness from the charts.

    A box closes as unique when every ``(k, v)`` with ``k3 >= 0`` and overlaps in it lies,
    after a symmetry, in a chart box where exactly one critical point is proved (``known``:
    the Krawczyk box, or the isolating neighbourhood, :func:`isolate`); as excluded also
    by the overlap chart (:meth:`chart_excludes`).
    """

    name = "strata"
    newton = False
    dim = 5

    def __init__(self, table, flips: list[int], charts: dict, group: np.ndarray) -> None:
        self.table = table
        self.root_lo = -np.ones(5)
        self.root_hi = np.ones(5)
        for c in flips:
            self.root_lo[c] = 0.0
        self.charts = charts
        self.signs = _group_signs(_vector_generators(group))
        self.known: list[dict] = []
        self.overlap_charts = tuple(_OverlapChart(table, s) for s in (1.0, -1.0))
        self.edge_charts = tuple(_EdgeChart(table, s) for s in (1.0, -1.0))
        self.tubes: dict = {}  # chart name -> (lo, hi, half-width, range-min table)
        self.built_tubes: dict = {}  # the tubes built so far, as saved in a census
        self.lazy_tubes = False  # build the tubes along the stretches boxes by an edge need
        self.tubes_tried: dict = {}  # chart name -> which of its segments were built
        self.even = bool(np.any(np.all(np.asarray(group) == NORMAL_FLIP, axis=1)))

    def split_dims(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return widest(lo, hi)

    def classify(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The verdict of each box (-1: open) and the side to split an open one along
        (-1: the widest): where the conditions' mean-value form ran, the side whose width
        times the enclosure of the conditions' slope along it is largest (the smear); but
        ``kappa`` for a box by an edge that no one chart's tubes span
        (:meth:`_beyond_tubes`)."""
        verdict = np.full(len(lo), -1)
        dims = np.full(len(lo), -1)
        x = _ivs(lo, hi)
        pk, pv, _c, det = _Overlaps.gram_parts(x)
        infeasible = (pk.hi < 0.0) | (pv.hi < 0.0) | (det.hi < 0.0)
        verdict[infeasible] = INFEASIBLE
        verdict[~infeasible & (det.lo > 0.0)] = EXCLUDED  # r = 4 throughout
        idx = np.flatnonzero(verdict < 0)
        if idx.size:
            xs = _ivs(lo[idx], hi[idx])
            R = self.table.partials(xs)
            conds = strata_conditions(R, xs)
            excluded = np.zeros(idx.size, dtype=bool)
            for e in conds:
                excluded |= ~e.contains_zero()
            verdict[idx[excluded]] = EXCLUDED
            rest = idx[~excluded]
            if rest.size:  # the mean-value form: E(c) + grad E(X) (X - c)
                keep = ~excluded
                mean, smear = self._mean_value_excludes(lo[rest], hi[rest], [r[keep] for r in R])
                verdict[rest[mean]] = EXCLUDED
                dims[rest] = np.argmax(smear, axis=1)
                last = rest[~mean]
                last = last[np.sort(hi[last] - lo[last], axis=1)[:, -2] <= CHART_WIDTH]
                if last.size:
                    closed = self.chart_excludes(lo[last], hi[last])
                    verdict[last[closed]] = EXCLUDED
                    open_ = last[~closed]
                    dims[open_[self._beyond_tubes(lo[open_], hi[open_])]] = 0
                    if self.lazy_tubes and self.even:
                        # the second-widest side: such a box may stay long along kappa
                        w = np.sort(hi[open_] - lo[open_], axis=1)[:, -2]
                        ask = open_[self._near_edge(lo[open_], hi[open_]) & (w <= TUBE_AFTER)]
                        if ask.size:
                            self.extend_tubes(lo[ask], hi[ask])
        return verdict, dims

    def chart_excludes(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Which boxes hold no critical point by the overlap chart (:class:`_OverlapChart`).

        Where ``k3^2`` and ``q^2`` are positive throughout a box's ``(kappa, theta, eta, rho)``,
        a point with ``r <= 3`` and overlaps in the box sits (``k3 > 0`` after the reflection
        of ``e3``) on a branch whose ``nu`` meets the box's ``nu``; each such branch must be
        free of critical points: :meth:`_chart_box_excludes`."""
        ylo, yhi = lo[:, CHART_OVERLAPS], hi[:, CHART_OVERLAPS]
        pk, q2 = _OverlapChart.domain(_ivs(ylo, yhi))
        closed = (pk.lo > 0.0) & (q2.lo > 0.0)
        for chart in self.overlap_charts:
            idx = np.flatnonzero(closed)
            if not idx.size:
                break
            nu = chart.nu(_ivs(ylo[idx], yhi[idx]))
            todo = idx[(nu.lo <= hi[idx, 1]) & (nu.hi >= lo[idx, 1])]
            if todo.size:
                ok = self.tube_holds(chart, ylo[todo], yhi[todo])
                rest = np.flatnonzero(~ok)
                if rest.size:
                    ok[rest] = self._chart_box_excludes(chart, ylo[todo[rest]], yhi[todo[rest]])
                closed[todo] = ok
        rest = np.flatnonzero(~closed)
        if rest.size:
            closed[rest] = self.edge_excludes(lo[rest], hi[rest])
        return closed

    def edge_excludes(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Which boxes with ``kappa > 0`` and one sign of ``nu`` hold no critical point by the
        face argument in the edge chart (:class:`_EdgeChart`): the preimage's ``(eta, k3,
        theta, v3)`` stretched to the face ``eta = theta = v3 = 0`` has a regular normal
        block, so every critical point in it lies on the face, and there the gradient along
        ``k3`` (``-(k3 / kappa) R_kappa``, enclosed at the face) misses 0. Without the
        symmetry :data:`NORMAL_FLIP` in the model's group, none."""
        out = np.zeros(len(lo), dtype=bool)
        if not self.even:
            return out
        for chart in self.edge_charts:
            side = (lo[:, 1] > 0.0) if chart.sign > 0 else (hi[:, 1] < 0.0)
            idx = np.flatnonzero(side & (lo[:, 0] > 0.0))
            if not idx.size:
                continue
            k3 = v3lo = v3hi = None
            for half in (1, -1):  # v3 over both halves of the preimage (k3 >= 0)
                y, empty = self.preimage(lo[idx], hi[idx], half)
                k3 = y[2]
                a = np.where(empty, np.inf, y[5].lo)
                b = np.where(empty, -np.inf, y[5].hi)
                v3lo = a if v3lo is None else np.minimum(v3lo, a)
                v3hi = b if v3hi is None else np.maximum(v3hi, b)
            good = np.flatnonzero((k3.lo > 0.0) & (v3lo <= v3hi))
            if not good.size:
                continue
            plo = np.column_stack([lo[idx, 3], k3.lo, lo[idx, 2], v3lo])[good]
            phi = np.column_stack([hi[idx, 3], k3.hi, hi[idx, 2], v3hi])[good]
            closed = self.tube_holds(chart, plo, phi)
            rest = np.flatnonzero(~closed)
            if rest.size:
                closed[rest] = self.face_clear(chart, plo[rest], phi[rest])
            out[idx[good]] = closed
        return out

    def _chart_box_excludes(self, chart: _OverlapChart, ylo: np.ndarray, yhi: np.ndarray):
        """Whether each chart box holds no critical point: the gradient's enclosure misses
        0, or the Krawczyk image misses the box, or (with the symmetry :data:`NORMAL_FLIP`)
        every critical point of the box lies on the face ``theta = eta = rho = 0``, where
        ``F``'s gradient is ``R_kappa(kappa, sign, 0, 0, 0)`` and misses 0.

        The face argument: ``nu`` is even in ``(theta, eta, rho)`` and so is ``R`` (the
        symmetry), so the normal components of ``F``'s gradient vanish on the face, and
        along the segment from ``(kappa, 0)`` to ``(kappa, y_N)`` they are ``A y_N`` with
        ``A`` in the hull of their Jacobian along ``y_N`` over the box stretched to the
        face; when that hull is regular, ``y_N = 0``. On the face ``nu = sign`` does not
        move with ``kappa``, so the tangent component is ``R_kappa`` there."""
        g, _ = chart.system(_ivs(ylo, yhi), need_jacobian=False)
        out = np.zeros(len(ylo), dtype=bool)
        for c in g:
            out |= ~c.contains_zero()
        rest = np.flatnonzero(~out)
        if rest.size:
            kv, _l, _h = krawczyk(chart, ylo[rest], yhi[rest])
            out[rest] = kv == NEWTON_EXCLUDED
        rest = np.flatnonzero(~out)
        if rest.size:
            out[rest] = self.face_clear(chart, ylo[rest], yhi[rest])
        return out

    def build_tubes(self, want: dict | None = None) -> dict:
        """Tube boxes along the edges, each free of critical points by :meth:`face_clear`:
        in each chart, segments of its ``tube_range`` along the edge (`want`: ``{chart
        name: indices of segments}``; None: all), each with the widest half-width across it
        from :data:`TUBE_WIDTHS` that passes (a segment none passes is halved, down to
        :data:`TUBE_FINEST`, else left out). Returns ``{chart name: (lo, hi,
        half-width)}``, sorted along the edge, for the charts with a tube."""
        out: dict = {}
        if not self.even:
            return out
        for chart in self.overlap_charts + self.edge_charts:
            cuts = self._tube_cuts(chart)
            i = (
                np.arange(len(cuts) - 1)
                if want is None
                else np.asarray(want.get(chart.name, []), dtype=int)
            )
            seg = np.stack([cuts[i], cuts[i + 1]], axis=1).reshape(-1, 2)
            done = []
            while len(seg):
                best = np.zeros(len(seg))
                for wn in TUBE_WIDTHS:
                    todo = np.flatnonzero(best == 0.0)
                    if not todo.size:
                        break
                    lo, hi = self._tube_box(chart, seg[todo], wn)
                    best[todo[self.face_clear(chart, lo, hi)]] = wn
                done += [(s[0], s[1], w) for s, w in zip(seg, best, strict=True) if w > 0.0]
                rest = seg[(best == 0.0) & (seg[:, 1] - seg[:, 0] > TUBE_FINEST)]
                mid = 0.5 * (rest[:, 0] + rest[:, 1])
                seg = np.concatenate(
                    [np.stack([rest[:, 0], mid], 1), np.stack([mid, rest[:, 1]], 1)]
                )
            done.sort()
            if done:
                out[chart.name] = tuple(np.array([d[i] for d in done]) for i in range(3))
        return out

    def extend_tubes(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Build (:meth:`build_tubes`) the segments not yet built along the stretch of the
        edge that each box (by an edge, narrow across it) spans, in the two charts of its
        sign of ``nu``, and use them with those built before."""
        reach = self._reach(lo, hi)
        straddles = (lo[:, 0] <= 0.0) & (hi[:, 0] >= 0.0)
        least = np.where(straddles, 0.0, np.minimum(lo[:, 0] ** 2, hi[:, 0] ** 2))  # of kappa^2
        most = np.maximum(lo[:, 0] ** 2, hi[:, 0] ** 2)
        want = {}
        for chart in self.overlap_charts + self.edge_charts:
            side = (lo[:, 1] >= 0.5) if chart.sign > 0 else (hi[:, 1] <= -0.5)
            cuts = self._tube_cuts(chart)
            n = len(cuts) - 1
            if chart.along == 0:  # kappa
                s0, s1 = lo[side, 0], hi[side, 0]
            else:  # k3 = sqrt(1 - kappa^2 - eta^2), |eta| <= reach
                s0 = np.sqrt(np.maximum(0.0, 1.0 - most[side] - reach[side] ** 2))
                s1 = np.sqrt(np.maximum(0.0, 1.0 - least[side]))
            meets = (s1 >= cuts[0]) & (s0 <= cuts[-1])
            # the segments [cuts[i], cuts[i + 1]] that meet [s0, s1]
            i0 = np.clip(np.searchsorted(cuts, s0[meets], side="right") - 1, 0, n - 1)
            i1 = np.clip(np.searchsorted(cuts, s1[meets], side="left") - 1, 0, n - 1)
            mark = np.zeros(n + 1, dtype=int)
            np.add.at(mark, i0, 1)
            np.add.at(mark, np.maximum(i1, i0) + 1, -1)
            tried = self.tubes_tried.setdefault(chart.name, np.zeros(n, dtype=bool))
            new = np.flatnonzero((np.cumsum(mark)[:n] > 0) & ~tried)
            if new.size:
                tried[new] = True
                want[chart.name] = new
        if not want:
            return
        for name, (tlo, thi, wn) in self.build_tubes(want).items():
            old = self.built_tubes.get(name, (np.zeros(0), np.zeros(0), np.zeros(0)))
            merged = [np.concatenate([o, x]) for o, x in zip(old, (tlo, thi, wn), strict=True)]
            order = np.argsort(merged[0], kind="stable")
            self.built_tubes[name] = tuple(m[order] for m in merged)
        self.set_tubes(self.built_tubes)

    @staticmethod
    def _tube_cuts(chart) -> np.ndarray:
        """The ends of a chart's first tube segments along its ``tube_range``."""
        a, b, step = chart.tube_range
        return np.linspace(a, b, round((b - a) / step) + 1)

    @staticmethod
    def _reach(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """How far each strata box reaches off the edges ``theta = eta = rho = 0``."""
        return np.max(np.maximum(np.abs(lo[:, 2:]), np.abs(hi[:, 2:])), axis=1)

    @staticmethod
    def _tube_box(chart, seg: np.ndarray, wn: float) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.zeros((len(seg), 4)), np.zeros((len(seg), 4))
        lo[:, chart.along], hi[:, chart.along] = seg[:, 0], seg[:, 1]
        lo[:, list(chart.normal)], hi[:, list(chart.normal)] = -wn, wn
        return lo, hi

    def _beyond_tubes(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Which boxes near an edge (``|nu| >= 1/2`` of one sign, within the widest tube
        across it) span more ``kappa`` than one chart's tubes cover: those are split along
        ``kappa`` (whatever the slopes), to be covered by the tubes or the corner's
        neighbourhood piece by piece."""
        if not self.tubes:
            return np.zeros(len(lo), dtype=bool)
        near = self._near_edge(lo, hi)
        inside = np.zeros(len(lo), dtype=bool)
        for chart in self.overlap_charts[:1] + self.edge_charts[:1]:
            a, b, _step = chart.tube_range
            if chart.along == 0:  # kappa itself
                k0, k1 = a, b
            else:  # k3 = sqrt(1 - kappa^2)
                k0, k1 = np.sqrt(1.0 - b * b), np.sqrt(1.0 - a * a)
            inside |= (lo[:, 0] >= k0) & (hi[:, 0] <= k1)
        wide = hi[:, 0] - lo[:, 0] > TUBE_FINEST
        return near & ~inside & wide

    @staticmethod
    def _near_edge(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Boxes with ``|nu| >= 1/2`` of one sign within the widest tube of an edge."""
        near = _Strata._reach(lo, hi) <= TUBE_WIDTHS[0]
        return ((lo[:, 1] >= 0.5) | (hi[:, 1] <= -0.5)) & near

    def set_tubes(self, tubes: dict) -> None:
        """Use `tubes` (:meth:`build_tubes`, or a certificate's, once re-verified)."""
        self.tubes = {}
        for name, (lo, hi, wn) in tubes.items():
            levels = [np.asarray(wn, dtype=float)]  # level j: minima over 2^j segments
            while 2 ** len(levels) <= len(levels[0]):
                prev, step = levels[-1], 2 ** (len(levels) - 1)
                levels.append(np.minimum(prev[:-step], prev[step:]))
            gaps = np.concatenate([[0], np.cumsum(hi[:-1] != lo[1:])])
            self.tubes[name] = (np.asarray(lo), np.asarray(hi), levels, gaps)

    def tube_holds(self, chart, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Whether each chart box lies in the union of the chart's tube boxes: its range
        along the edge in contiguous segments, each as wide across as the box reaches."""
        out = np.zeros(len(lo), dtype=bool)
        if chart.name not in self.tubes or not len(lo):
            return out
        tlo, thi, levels, gaps = self.tubes[chart.name]
        n = len(tlo)
        a, b = lo[:, chart.along], hi[:, chart.along]
        N = list(chart.normal)
        reach = np.max(np.maximum(np.abs(lo[:, N]), np.abs(hi[:, N])), axis=1)
        i0 = np.searchsorted(thi, a, side="right")
        i1 = np.searchsorted(tlo, b, side="left") - 1
        ok = (i0 <= i1) & (i0 < n) & (i1 >= 0)
        i0c, i1c = np.clip(i0, 0, n - 1), np.clip(i1, 0, n - 1)
        ok &= (tlo[i0c] <= a) & (thi[i1c] >= b) & (gaps[i1c] == gaps[i0c])
        span = np.maximum(i1c - i0c + 1, 1)
        j = np.minimum(np.floor(np.log2(span)).astype(int), len(levels) - 1)
        low = np.full(len(lo), np.inf)
        for k in np.unique(j[ok]):
            s = ok & (j == k)
            low[s] = np.minimum(levels[k][i0c[s]], levels[k][i1c[s] - 2**k + 1])
        return ok & (low >= reach)

    def face_clear(self, chart, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Whether each chart box holds no critical point by the face argument: stretched to
        the face (its normal coordinates' ranges widened to hold 0), inside the chart, with
        the normal block's hull regular (every critical point then lies on the face) and
        ``R_kappa`` at the face, where ``nu = sign`` exactly, missing 0 (none lies there;
        along the face ``F``'s gradient is ``R_kappa`` times ``dkappa``, nonzero in both
        charts where ``k3 > 0``). Without :data:`NORMAL_FLIP` in the group, none."""
        out = np.zeros(len(lo), dtype=bool)
        if not self.even or not len(lo):
            return out
        N = list(chart.normal)
        flo, fhi = lo.copy(), hi.copy()
        flo[:, N] = np.minimum(flo[:, N], 0.0)
        fhi[:, N] = np.maximum(fhi[:, N], 0.0)
        a, b = chart.domain(_ivs(flo, fhi))
        inside = (a.lo > 0.0) & (b.lo > 0.0)
        if chart.along == 1:  # the edge chart: k3 > 0 (k3 = 0 is the corner)
            inside &= flo[:, 1] > 0.0
        idx = np.flatnonzero(inside)
        if not idx.size:
            return out
        _g, J = chart.system(_ivs(flo[idx], fhi[idx]))
        flat = regular([[J[i][j] for j in N] for i in N])
        m = idx.size
        face = self.table.partials(
            [chart.face_kappa(flo[idx], fhi[idx]), Interval(np.full(m, chart.sign))]
            + [Interval(np.zeros(m))] * 3
        )
        out[idx] = flat & ~face[0].contains_zero()
        return out

    def _mean_value_excludes(
        self, lo: np.ndarray, hi: np.ndarray, R=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Which boxes the mean-value form of the conditions closes (`R`: the partials over
        the boxes, when the caller has them), and the smear ``(n, 5)``: for each side, the
        largest over the conditions of ``|slope enclosure| x width``."""
        c = 0.5 * lo + 0.5 * hi
        xc = [Interval(c[:, i]) for i in range(5)]
        at_c = strata_conditions(self.table.partials(xc), xc)
        X = _ivs(lo, hi)
        if R is None:
            R, H = self.table.partials_and_hessian(X)
        else:
            H = self.table.hessian(X)
        zero = Interval(np.zeros(len(lo)))
        one = Interval(np.ones(len(lo)))
        xd = [_Dual(X[i], [one if j == i else zero for j in range(5)]) for i in range(5)]
        Rd = [_Dual(R[i], [H[i][j] for j in range(5)]) for i in range(5)]
        grads = strata_conditions(Rd, xd)
        out = np.zeros(len(lo), dtype=bool)
        smear = np.zeros((len(lo), 5))
        width = hi - lo
        for e0, g in zip(at_c, grads, strict=True):
            e = e0
            for j in range(5):
                e = e + g.d[j] * (X[j] - c[:, j])
                slope = np.maximum(np.abs(g.d[j].lo), np.abs(g.d[j].hi))
                smear[:, j] = np.maximum(smear[:, j], slope * width[:, j])
            out |= ~e.contains_zero()
        return out, np.where(np.isfinite(smear), smear, np.inf)

    def preimage(self, lo: np.ndarray, hi: np.ndarray, half: int = 1) -> list[Interval]:
        """An enclosure of every ``(k, v)`` in ``R^3 x R^3`` with ``k3 >= 0``, ``half * v3 >= 0``
        and overlaps in the boxes: ``k3 = sqrt(p_k)``, ``|v3| = sqrt(p_v)``, ``v3 = c / k3``."""
        kappa, nu, theta, eta, _rho = x = _ivs(lo, hi)
        pk, pv, c, _det = _Overlaps.gram_parts(x)
        k3 = Interval(np.maximum(pk.lo, 0.0), np.maximum(pk.hi, 0.0)).sqrt()
        a = Interval(np.maximum(pv.lo, 0.0), np.maximum(pv.hi, 0.0)).sqrt()
        v3lo, v3hi = (a.lo.copy(), a.hi.copy()) if half > 0 else (-a.hi, -a.lo)
        pos = k3.lo > 0.0
        if np.any(pos):
            q = c[pos] * Interval(k3.lo[pos], k3.hi[pos]).reciprocal()
            v3lo[pos] = np.maximum(v3lo[pos], q.lo)
            v3hi[pos] = np.minimum(v3hi[pos], q.hi)
        empty = v3lo > v3hi  # no point of this half: an empty piece, covered by nothing needed
        v3hi = np.maximum(v3hi, v3lo)
        return [kappa, eta, k3, theta, nu, Interval(v3lo, v3hi)], empty

    def covered(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Index of a known chart zero whose Krawczyk box holds each box's preimage, or -1.

        The preimage is two pieces, ``v3 >= 0`` and ``v3 <= 0``; each must lie, after a
        symmetry, in the box ``Z`` of a known zero (the box then holds no critical point
        but those zeros)."""
        out = np.full(len(lo), -1)
        if not self.known or not len(lo):
            return out
        first = None
        every = np.ones(len(lo), dtype=bool)
        for half in (1, -1):
            y, empty = self.preimage(lo, hi, half)
            got = self._covered_piece(y)
            every &= empty | (got >= 0)
            first = got if first is None else np.where(first >= 0, first, got)
        out[every] = np.maximum(first[every], 0)
        return out

    def _covered_piece(self, y: list[Interval]) -> np.ndarray:
        out = np.full(len(y[0].lo), -1)
        for s in self.signs:
            img = [y[i] if s[i] > 0 else -y[i] for i in range(6)]
            coords: dict = {}  # each chart's coordinates of the image, formed once
            for j, z in enumerate(self.known):
                if z["chart"] not in coords:
                    coords[z["chart"]] = self._chart_coordinates(img, self.charts[z["chart"]])
                ok, w = coords[z["chart"]]
                ok = ok.copy()
                blo, bhi = isolated_box(z)
                for i in range(4):
                    ok &= (w[i].lo > blo[i]) & (w[i].hi < bhi[i])
                out[ok & (out < 0)] = j
        return out

    @staticmethod
    def _chart_coordinates(img: list[Interval], chart: _Charts):
        """Enclosures of the chart coordinates of ``(k, v)`` in `img`, and where they exist
        (the chart's denominators positive)."""
        w = []
        ok = np.ones(len(img[0].lo), dtype=bool)
        for part, sign in ((img[:3], chart.signs[0]), (img[3:], chart.signs[1])):
            den = 1.0 + sign * part[2]
            ok &= den.lo > 0.0
            inv = Interval(np.where(ok, den.lo, 1.0), np.where(ok, den.hi, 1.0)).reciprocal()
            w += [part[0] * inv, part[1] * inv]
        return ok, w


def _group_signs(rows: list[np.ndarray]) -> list[np.ndarray]:
    """Every element of the group generated by sign-change `rows`, as a sign vector."""
    out = [np.ones(len(rows[0]))]
    for r in rows:
        s = np.where(r, -1.0, 1.0)
        out += [o * s for o in out if not any(np.array_equal(o * s, q) for q in out)]
    unique: list[np.ndarray] = []
    for o in out:
        if not any(np.array_equal(o, q) for q in unique):
            unique.append(o)
    return unique


def krawczyk(space, zlo: np.ndarray, zhi: np.ndarray):
    """The Krawczyk test on each box ``Z`` (rows of `zlo`, `zhi`), vectorised.

    Returns
    -------
    verdict : ndarray of int
        ``UNIQUE`` (``K(Z)`` in the interior of ``Z``), ``NEWTON_EXCLUDED`` (``K(Z)``
        misses ``Z``) or ``UNRESOLVED``.
    klo, khi : ndarray
        ``K(Z) \\cap Z``, the enclosure of the zero of the unique boxes.
    """
    n, m = zlo.shape
    Z = _ivs(zlo, zhi)
    zm = 0.5 * zlo + 0.5 * zhi
    G, _ = space.system([Interval(zm[:, i]) for i in range(m)], need_jacobian=False)
    _G, J = space.system(Z)
    mid = np.empty((n, m, m))
    for a in range(m):
        for b in range(m):
            mid[:, a, b] = 0.5 * J[a][b].lo + 0.5 * J[a][b].hi
    verdict = np.full(n, UNRESOLVED)
    finite = np.all(np.isfinite(mid), axis=(1, 2))
    cond = np.full(n, np.inf)
    cond[finite] = np.linalg.cond(mid[finite])
    usable = cond < 1e12
    Y = np.zeros_like(mid)
    Y[usable] = np.linalg.inv(mid[usable])
    dz = [Z[i] - zm[:, i] for i in range(m)]
    klo, khi = np.empty((n, m)), np.empty((n, m))
    for a in range(m):
        acc = Interval(zm[:, a])
        for b in range(m):
            acc = acc - Y[:, a, b] * G[b]
        for b in range(m):
            c = (1.0 if a == b else 0.0) - sum(
                (Y[:, a, q] * J[q][b] for q in range(m)), Interval(np.zeros(n))
            )
            acc = acc + c * dz[b]
        klo[:, a], khi[:, a] = acc.lo, acc.hi
    inside = np.all((klo > zlo) & (khi < zhi), axis=1) & usable
    missed = np.any((klo > zhi) | (khi < zlo), axis=1) & usable
    verdict[inside] = UNIQUE
    verdict[missed & ~inside] = NEWTON_EXCLUDED
    return verdict, np.maximum(klo, zlo), np.minimum(khi, zhi)


# --- symmetric tubes --------------------------------------------------------------------------
@dataclass(frozen=True)
class Face:
    """Where a symmetry of ``F`` fixes ``(k, v)``, in a chart: the chart coordinates `normal`
    at `values`, the others (`tangent`) free.

    A sign change of the coordinates of ``R^3 x R^3`` in the group (the model's rows
    lifted, and the reflection of ``e3``) fixes the points whose flipped coordinates
    vanish. In a stereographic chart that set is a coordinate subspace when, per vector,
    the flips are ``{1}`` or ``{2}`` (``s = 0`` or ``t = 0``), ``{1, 2}`` (the centre),
    ``{1, 3}`` (``(0, +-1)``) or ``{2, 3}`` (``(+-1, 0)``); there the symmetry acts on the
    normal coordinates' directions by ``-1`` (a flip of ``s`` or ``t``; the flip of the
    third coordinate is the inversion in the unit circle, whose derivative on it reverses
    the radius), so the chart gradient's normal components vanish on the face.
    """

    chart: str
    normal: tuple
    values: tuple

    @property
    def tangent(self) -> tuple:
        """The free chart coordinates."""
        return tuple(i for i in range(4) if i not in self.normal)


#: Per vector, the flipped coordinates (of ``x1, x2, x3``) -> the fixed chart points
#: ``[(coordinate, value), ...]`` (one list per component of the fixed set).
_BLOCK_FACES = {
    (): [[]],
    (0,): [[(0, 0.0)]],
    (1,): [[(1, 0.0)]],
    (0, 1): [[(0, 0.0), (1, 0.0)]],
    (0, 2): [[(0, 0.0), (1, 1.0)], [(0, 0.0), (1, -1.0)]],
    (1, 2): [[(0, 1.0), (1, 0.0)], [(0, -1.0), (1, 0.0)]],
}


def faces(charts: dict, group: np.ndarray) -> list[Face]:
    """The faces of dimension at most 1 of the group's sign changes in each chart."""
    out: list[Face] = []
    for f in _group_signs(_vector_generators(group)):
        if np.all(f > 0):
            continue
        kf = tuple(int(i) for i in np.flatnonzero(f[:3] < 0))
        vf = tuple(int(i) for i in np.flatnonzero(f[3:] < 0))
        if kf not in _BLOCK_FACES or vf not in _BLOCK_FACES:
            continue  # a circle in the chart (the third coordinate alone), or no fixed point
        for name in charts:
            for ko in _BLOCK_FACES[kf]:
                for vo in _BLOCK_FACES[vf]:
                    fixed = sorted([(c, x) for c, x in ko] + [(2 + c, x) for c, x in vo])
                    face = Face(name, tuple(c for c, _x in fixed), tuple(x for _c, x in fixed))
                    if len(face.tangent) <= 1 and face not in out:
                        out.append(face)
    return out


def face_vectors(chart: _Charts, face: Face, z: list[Interval]):
    """The vectors on the face at tangent boxes `z`, and their chart derivatives: a vector
    whose two coordinates are fixed is the exact point (``(a, b, 0)`` on the equator,
    ``sign e3`` at the centre), the others come from the chart."""
    shape = z[0].shape if z else ()
    w: dict = {
        c: Interval(np.full(shape, x)) for c, x in zip(face.normal, face.values, strict=True)
    }
    w.update(zip(face.tangent, z, strict=True))
    x, first, second = [], [], []
    for b, sign in enumerate(chart.signs):
        if 2 * b in face.normal and 2 * b + 1 in face.normal:
            a, c = (float(np.ravel(w[2 * b + i].lo)[0]) for i in range(2))
            point = (a, c, 0.0) if a * a + c * c == 1.0 else (0.0, 0.0, sign)
            x += [Interval(np.full(shape, p)) for p in point]
            first.append(None)
            second.append(None)
        else:
            vec, dvec, ddvec = _stereo(w[2 * b], w[2 * b + 1], sign)
            x += vec
            first.append(dvec)
            second.append(ddvec)
    return x, tuple(first), tuple(second)


class _FaceSpace:
    """The chart gradient's tangent components on a face, as a space for :func:`krawczyk`."""

    def __init__(self, chart: _Charts, face: Face) -> None:
        self.chart, self.face = chart, face
        self.dim = len(face.tangent)

    def system(self, z: list[Interval], need_jacobian: bool = True):
        x, first, second = face_vectors(self.chart, self.face, z)
        return chart_system(self.chart.table, x, first, second, self.face.tangent, need_jacobian)


def regular(M: list[list[Interval]]) -> np.ndarray:
    """Whether every matrix of each interval matrix `M` (``m x m`` of ``(n,)`` intervals) is
    invertible: ``||I - Y M||_inf < 1`` with ``Y`` a float inverse of the midpoint."""
    m = len(M)
    n = len(M[0][0].lo)
    mid = np.empty((n, m, m))
    for a in range(m):
        for b in range(m):
            mid[:, a, b] = 0.5 * M[a][b].lo + 0.5 * M[a][b].hi
    ok = np.all(np.isfinite(mid), axis=(1, 2))
    cond = np.full(n, np.inf)
    cond[ok] = np.linalg.cond(mid[ok])
    ok &= cond < 1e12
    Y = np.zeros_like(mid)
    Y[ok] = np.linalg.inv(mid[ok])
    worst = np.zeros(n)
    for a in range(m):
        row = np.zeros(n)
        for b in range(m):
            c = (1.0 if a == b else 0.0) - sum(
                (Y[:, a, q] * M[q][b] for q in range(m)), Interval(np.zeros(n))
            )
            row = row + np.maximum(np.abs(c.lo), np.abs(c.hi))
        worst = np.maximum(worst, row)
    return ok & (worst < 1.0)


def tube_test(chart: _Charts, face: Face, zlo: np.ndarray, zhi: np.ndarray):
    """How many critical points each box ``Z`` about `face` holds: 0, 1 or -1 (undecided).

    If ``Z`` contains the face's values in its normal coordinates and the Jacobian of
    the normal components along the normal coordinates is invertible throughout ``Z``,
    every critical point in ``Z`` lies on the face: the normal components vanish there
    (:class:`Face`), and by the mean-value theorem along the normal segment from the face
    they are ``J (delta)`` with ``J`` invertible, so ``delta = 0``. On the face the
    tangent components decide: an enclosure without 0 (or a Krawczyk image missing the
    box) leaves none, a Krawczyk image inside the box exactly one.

    Returns
    -------
    count : ndarray of int
    klo, khi : ndarray
        The zero's enclosure (chart coordinates; the normal ones exact) where ``count`` is 1.
    """
    n = len(zlo)
    N, T = list(face.normal), list(face.tangent)
    vals = np.array(face.values)
    count = np.full(n, -1)
    klo, khi = zlo.copy(), zhi.copy()
    klo[:, N] = khi[:, N] = vals
    ok = np.all((zlo[:, N] < vals) & (vals < zhi[:, N]), axis=1)
    _g, J = chart.system(_ivs(zlo, zhi))
    ok &= regular([[J[i][j] for j in N] for i in N])
    if not T:
        count[ok] = 1  # the face is the point, a zero of the gradient by symmetry
        return count, klo, khi
    space = _FaceSpace(chart, face)
    gT, _ = space.system(_ivs(zlo[:, T], zhi[:, T]), need_jacobian=False)
    none = np.zeros(n, dtype=bool)
    for c in gT:
        none |= ~c.contains_zero()
    kv, kl, kh = krawczyk(space, zlo[:, T], zhi[:, T])
    none |= kv == NEWTON_EXCLUDED
    count[ok & none] = 0
    count[ok & ~none & (kv == UNIQUE)] = 1
    klo[:, T], khi[:, T] = kl, kh
    return count, klo, khi


# --- isolating neighbourhoods ------------------------------------------------------------------
#: Half-widths (chart units) tried, widest first, for a proved zero's isolating neighbourhood.
ISOLATE_RADII = (1e-4, 1e-3, 1e-2)
#: Boxes one neighbourhood's branch and bound may visit before its radius is given up.
ISOLATE_BUDGET = 100_000


class _Neighbourhood:
    """A box ``W`` about a proved zero in its chart, in which every critical point lies in
    the zero's Krawczyk box ``Z``: a branch and bound over ``W`` (:func:`isolate`).

    A leaf is *unique* when every critical point in it lies in ``Z`` (it lies in ``Z``; or
    its Krawczyk image, or on the zero's face its tube image, lies in ``Z``), *excluded*
    when it holds none (the gradient's enclosure misses 0, or the face argument counts
    none), *Newton-excluded* when its Krawczyk image misses it. The strata then close a
    box whose preimage lies in ``W`` (:meth:`_Strata.covered`): near ``k3 = 0`` the preimage
    of an overlaps' box of width ``w`` is ``sqrt(w)`` wide, far wider than a Krawczyk box
    where a curvature is small against the third derivatives.
    """

    name = "neighbourhood"
    newton = False

    def __init__(self, chart: _Charts, zero: dict, lo: np.ndarray, hi: np.ndarray) -> None:
        self.chart = chart
        self.dim = chart.dim
        self.zlo, self.zhi = np.asarray(zero["zlo"]), np.asarray(zero["zhi"])
        face = zero.get("face")
        self.face = (
            Face(zero["chart"], tuple(face["normal"]), tuple(face["values"])) if face else None
        )
        self.root_lo, self.root_hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)

    def split_dims(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return widest(lo, hi)

    def _in_zero(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return np.all((lo >= self.zlo) & (hi <= self.zhi), axis=1)

    def classify(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        verdict = np.full(len(lo), -1)
        verdict[self._in_zero(lo, hi)] = UNIQUE
        idx = np.flatnonzero(verdict < 0)
        if idx.size:
            g, _ = self.chart.system(_ivs(lo[idx], hi[idx]), need_jacobian=False)
            none = np.zeros(idx.size, dtype=bool)
            for c in g:
                none |= ~c.contains_zero()
            verdict[idx[none]] = EXCLUDED
            idx = idx[~none]
        if idx.size:
            kv, klo, khi = krawczyk(self.chart, lo[idx], hi[idx])
            verdict[idx[kv == NEWTON_EXCLUDED]] = NEWTON_EXCLUDED
            verdict[idx[(kv == UNIQUE) & self._in_zero(klo, khi)]] = UNIQUE
            idx = idx[verdict[idx] < 0]
        if idx.size and self.face is not None:  # the box stretched to the face, strictly
            N = list(self.face.normal)
            vals = np.array(self.face.values)
            blo, bhi = lo[idx].copy(), hi[idx].copy()
            blo[:, N] = np.minimum(blo[:, N], np.nextafter(vals, -np.inf))
            bhi[:, N] = np.maximum(bhi[:, N], np.nextafter(vals, np.inf))
            count, klo, khi = tube_test(self.chart, self.face, blo, bhi)
            verdict[idx[count == 0]] = EXCLUDED
            verdict[idx[(count == 1) & self._in_zero(klo, khi)]] = UNIQUE
        return verdict, np.full(len(lo), -1)


def isolated_box(zero: dict) -> tuple[np.ndarray, np.ndarray]:
    """The box in which a zero is the only critical point: its neighbourhood, else ``Z``."""
    cover = zero.get("cover")
    if cover is None:
        return np.asarray(zero["zlo"]), np.asarray(zero["zhi"])
    return np.asarray(cover["lo"]), np.asarray(cover["hi"])


def isolate(
    chart: _Charts, zero: dict, radii=ISOLATE_RADII, budget: int = ISOLATE_BUDGET
) -> dict | None:
    """The widest proved isolating neighbourhood of a zero: ``W = centre(Z) +- r`` for the
    largest ``r`` in `radii` wider than ``Z`` (tried from the widest down) with every leaf
    of its branch and bound closed (:class:`_Neighbourhood`). Returns ``{"lo", "hi",
    "paths", "verdicts"}``, or None where none closes within `budget` boxes."""
    zlo, zhi = np.asarray(zero["zlo"]), np.asarray(zero["zhi"])
    centre, half = 0.5 * zlo + 0.5 * zhi, float(np.max(zhi - zlo)) / 2

    def attempt(r: float) -> dict | None:
        space = _Neighbourhood(chart, zero, centre - r, centre + r)
        leaves, _zeros = _bnb(space, 1e-12, budget)
        if UNRESOLVED in leaves["verdicts"]:
            return None
        return {
            "lo": space.root_lo,
            "hi": space.root_hi,
            "paths": leaves["paths"],
            "verdicts": leaves["verdicts"],
        }

    if budget <= 0:
        return None
    for r in sorted((r for r in radii if r > half), reverse=True):
        got = attempt(r)  # the widest first: where it closes, the narrower need no proof
        if got is not None:
            return got
    return None


def check_tubes(strata: _Strata, tubes: dict) -> str | None:
    """Re-verify a census's tube boxes (:meth:`_Strata.build_tubes`): None, or what fails."""
    charts = {c.name: c for c in strata.overlap_charts + strata.edge_charts}
    for name, (lo, hi, wn) in tubes.items():
        chart = charts.get(name)
        if chart is None:
            return f"tubes in {name!r}, which is no chart"
        lo, hi, wn = (np.asarray(x, dtype=float) for x in (lo, hi, wn))
        if not (lo.shape == hi.shape == wn.shape and lo.ndim == 1):
            return f"ragged tubes in {name}"
        if lo.size == 0:  # a census writes a chart's tubes only where it built some
            return f"the tubes in {name} are empty"
        if not (np.all(lo < hi) and np.all(wn > 0.0) and np.all(hi[:-1] <= lo[1:])):
            return f"the tubes in {name} are not ordered, disjoint segments"
        for w in np.unique(wn):
            s = wn == w
            blo, bhi = strata._tube_box(chart, np.stack([lo[s], hi[s]], axis=1), float(w))
            bad = int(np.count_nonzero(~strata.face_clear(chart, blo, bhi)))
            if bad:
                return f"{bad} tube boxes in {name} are not free of critical points"
    return None


def check_neighbourhood(chart: _Charts, zero: dict) -> str | None:
    """Re-verify a zero's saved neighbourhood from its leaves: None, or what fails."""
    cover = zero["cover"]
    lo, hi = np.asarray(cover["lo"]), np.asarray(cover["hi"])
    paths, verdicts = cover["paths"], np.array(cover["verdicts"], dtype=int)
    if lo.shape != (chart.dim,) or hi.shape != (chart.dim,) or not np.all(lo < hi):
        return "its neighbourhood is not a box of its chart"
    if not _paths_are_halvings(paths, chart.dim):
        return "a path of its neighbourhood holds a character that is not a side's half"
    if len(paths) != len(verdicts) or not _tree_complete(list(paths)):
        return "the leaves of its neighbourhood do not partition it"
    space = _Neighbourhood(chart, zero, lo, hi)
    blo, bhi = boxes_of_paths(lo, hi, list(paths))
    fresh = np.concatenate(
        [
            space.classify(blo[i : i + CHUNK], bhi[i : i + CHUNK])[0]
            for i in range(0, len(blo), CHUNK)
        ]
    )
    if np.any(fresh < 0) or np.any(fresh != verdicts):
        return f"{int(np.count_nonzero(fresh != verdicts))} leaves of its neighbourhood do not re-verify"
    return None


# --- results -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CertifiedPoint:
    """A critical point whose existence and uniqueness in its box is proved.

    Attributes
    ----------
    part : str
        The part that found it first: ``"vectors++"``, ``"vectors+-"`` (``r <= 3``, the
        charts of ``k`` and ``v``) or ``"overlaps"`` (``r = 4``).
    zeros : tuple of str
        ``"part:i"``: the Krawczyk boxes of the census that hold it (its images under
        the group and the reflection of ``e3`` included).
    overlaps_lo, overlaps_hi : tuple of float
        Enclosure of ``(kappa, nu, theta, eta, rho)``.
    overlaps : tuple of float
        Its midpoint, in the canonical form of the symmetry group.
    span_dim : int or None
        ``dim span{k, v, k*, v*}`` when proved (2, 3 or 4).
    index, nullity : int or None
        At dimension ``d``, from the rigorous inertia (None when not decided).
    risk : float
        The risk at the midpoint (floating point).
    kind : str
    """

    part: str
    zeros: tuple
    overlaps_lo: tuple
    overlaps_hi: tuple
    overlaps: tuple
    span_dim: int | None
    index: int | None
    nullity: int | None
    risk: float
    kind: str


@dataclass
class Census:
    """The result of :func:`certify_critical_points`: the points and every box's verdict.

    Attributes
    ----------
    params : Params
    points : list of CertifiedPoint
        Distinct up to the symmetry group, sorted by risk.
    complete : bool
        True when every box of both parts is closed (no box unresolved): the list is then
        proved to hold every critical point, up to the group.
    parts : dict
        Per part (``"strata"``: ``r <= 3``, ``"overlaps"``: ``r = 4``): ``root`` (lo, hi, the
        domain the group leaves), ``paths`` (bisection path of each leaf), ``verdicts``,
        ``point`` (index into the part's zeros, -1 if none) and ``zeros`` (each Krawczyk
        box ``Z`` and its enclosure ``K``; a strata zero names its ``chart``, and its
        ``face`` where it was proved by :func:`tube_test`).
    group : list
        The symmetry group's rows (sign flips of the overlaps) the model verified.
    seconds : float
    min_width : float
        Boxes narrower than this were left unresolved.
    search : dict
        The search that seeded the proofs: ``starts``, ``seed``, how many points it
        ``found``, and the canonical overlaps of those ``unproved`` here (e.g. where the
        gradient's factor ``e^{-x^2}`` leaves the Jacobian's enclosure singular).
    """

    params: Params
    points: list
    complete: bool
    parts: dict
    group: list
    seconds: float
    min_width: float
    search: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict:
        """Per part, how many boxes each verdict closed."""
        return {
            name: {VERDICTS[v]: list(p["verdicts"]).count(v) for v in range(len(VERDICTS))}
            for name, p in self.parts.items()
        }

    def part_complete(self, name: str) -> bool:
        """Whether every box of part `name` (``"strata"``: ``r <= 3``, ``"overlaps"``:
        ``r = 4``) is closed by a verdict."""
        return UNRESOLVED not in self.parts[name]["verdicts"]

    def summary(self) -> str:
        """What is proved, in a few sentences (every number from the census)."""
        n = len(self.points)
        decided = sum(q.index is not None for q in self.points)
        boxes = sum(len(p["paths"]) for p in self.parts.values())
        on_faces = sum(
            any(
                self.parts[r.split(":")[0]]["zeros"][int(r.split(":")[1])].get("face")
                for r in q.zeros
            )
            for q in self.points
        )
        faced = f"; {on_faces} on a face of a symmetry" if on_faces else ""
        out = [
            f"{n} critical points up to symmetry proved to exist, each the only one in its box "
            f"(Krawczyk{faced}), {decided} with their index at d = {self.params.d} proved."
        ]
        if self.complete:
            out.append(
                f"The list is complete by proof: {boxes} boxes, every one closed by a rigorous verdict."
            )
        else:
            for name, what in (
                ("overlaps", "dim span{k, v, k*, v*} = 4"),
                ("strata", "dim span{k, v, k*, v*} <= 3"),
            ):
                part = self.parts[name]
                left = part["verdicts"].count(UNRESOLVED)
                if left:
                    out.append(
                        f"Points with {what}: NOT proved complete, {left} of {len(part['paths'])} boxes open "
                        f"(budget or width {self.min_width:g})."
                    )
                else:
                    out.append(
                        f"Points with {what}: complete by proof ({len(part['paths'])} boxes)."
                    )
        unproved = self.search.get("unproved", [])
        within = self.search.get("open_within")
        if within is not None and within < 0.1 and not self.complete:  # a statement only when near
            out.append(
                f"Every open box lies within {within:.1e} (in the overlaps) of a point the search "
                "found and the census did not prove: every critical point is in the list or "
                f"within {within:.1e} of those."
                if self.part_complete("overlaps")
                else f"The open boxes of the strata lie within {within:.1e} of unproved points."
            )
        if self.search:
            how = (
                f"{self.search['starts']} random starts, seed {self.search['seed']}"
                if self.search["seed"] is not None
                else f"given, {self.search['starts']} starts"
            )
            out.append(
                f"The search ({how}) found {self.search['found']}; {len(unproved)} of them not "
                "proved here."
            )
        out.append(f"{self.seconds:.0f} s.")
        return " ".join(out)

    def agreement(self, points) -> dict:
        """How a list of points (e.g. :func:`slr_theory.critical_points`'s) compares with the
        census, up to the group: ``missing`` (canonical overlaps of census points the list
        lacks), ``extra`` (list points the census does not have), ``differ`` (points in
        both whose index or nullity differ; only where the census proved them), and
        ``same`` (none of the three).

        Parameters
        ----------
        points : iterable
            Objects with ``overlaps``, ``index`` and ``nullity``.

        Returns
        -------
        dict
        """
        group = np.asarray(self.group, dtype=float)
        seen = [False] * len(self.points)
        extra, differ = [], []
        for q in points:
            mid = canonical(np.asarray(q.overlaps, dtype=float), group)
            near = [
                i
                for i, c in enumerate(self.points)
                if np.max(np.abs(np.asarray(c.overlaps) - mid)) < 1e-6
            ]
            if not near:
                extra.append([float(x) for x in mid])
                continue
            c = self.points[near[0]]
            seen[near[0]] = True
            if c.index is not None and (c.index, c.nullity) != (q.index, q.nullity):
                differ.append([float(x) for x in mid])
        missing = [list(c.overlaps) for c, s in zip(self.points, seen, strict=True) if not s]
        same = not (missing or extra or differ)
        return {"missing": missing, "extra": extra, "differ": differ, "same": same}

    def to_dict(self) -> dict:
        """The certificate as JSON-able data (floats of boxes as exact hex strings)."""

        def hexes(x) -> list[str]:
            return [float(v).hex() for v in x]

        return {
            "format": FORMAT,
            "params": params_record(self.params),
            "points": [asdict(p) for p in self.points],
            "complete": self.complete,
            "parts": {
                name: {
                    "root": [hexes(part["root"][0]), hexes(part["root"][1])],
                    "paths": list(part["paths"]),
                    "verdicts": [int(v) for v in part["verdicts"]],
                    "point": [int(v) for v in part["point"]],
                    **(
                        {
                            "tubes": {
                                name: {"lo": hexes(t[0]), "hi": hexes(t[1]), "width": hexes(t[2])}
                                for name, t in part["tubes"].items()
                            }
                        }
                        if part.get("tubes")
                        else {}
                    ),
                    "zeros": [
                        {
                            **{key: hexes(z[key]) for key in ("zlo", "zhi", "klo", "khi")},
                            "feasible": bool(z.get("feasible", True)),
                            "chart": z.get("chart"),
                            "face": z.get("face"),
                            **(
                                {
                                    "cover": {
                                        "lo": hexes(z["cover"]["lo"]),
                                        "hi": hexes(z["cover"]["hi"]),
                                        "paths": list(z["cover"]["paths"]),
                                        "verdicts": [int(v) for v in z["cover"]["verdicts"]],
                                    }
                                }
                                if z.get("cover") is not None
                                else {}
                            ),
                        }
                        for z in part["zeros"]
                    ],
                }
                for name, part in self.parts.items()
            },
            "group": [list(map(float, g)) for g in self.group],
            "seconds": self.seconds,
            "min_width": self.min_width,
            "search": self.search,
        }

    def save(self, path) -> Path:
        """Write the certificate (gzip-compressed JSON) to `path` and return it."""
        path = Path(path)
        text = json.dumps(self.to_dict())  # one string: json.dump writes it in tiny pieces
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as f:
            f.write(text)  # level 6: 4 times faster than 9 at lam = 0.9, 6 % larger
        return path

    @classmethod
    def from_dict(cls, data: dict) -> Census:
        """Rebuild a census from :meth:`to_dict` (nothing is re-verified: see
        :func:`check_certificate`)."""
        if data.get("format") != FORMAT:
            raise ValueError(
                f"not a census certificate: format {data.get('format')!r}, expected {FORMAT!r}."
            )

        def floats(x) -> np.ndarray:
            return np.array([float.fromhex(v) for v in x])

        parts = {}
        for name, part in data["parts"].items():
            parts[name] = {
                "root": (floats(part["root"][0]), floats(part["root"][1])),
                "paths": list(part["paths"]),
                "verdicts": [int(v) for v in part["verdicts"]],
                "point": [int(v) for v in part["point"]],
                **(
                    {
                        "tubes": {
                            name: (floats(t["lo"]), floats(t["hi"]), floats(t["width"]))
                            for name, t in part["tubes"].items()
                        }
                    }
                    if part.get("tubes")
                    else {}
                ),
                "zeros": [
                    {
                        **{key: floats(z[key]) for key in ("zlo", "zhi", "klo", "khi")},
                        "feasible": bool(z["feasible"]),
                        "chart": z.get("chart"),
                        "face": z.get("face"),
                        **(
                            {
                                "cover": {
                                    "lo": floats(z["cover"]["lo"]),
                                    "hi": floats(z["cover"]["hi"]),
                                    "paths": list(z["cover"]["paths"]),
                                    "verdicts": [int(v) for v in z["cover"]["verdicts"]],
                                }
                            }
                            if z.get("cover") is not None
                            else {}
                        ),
                    }
                    for z in part["zeros"]
                ],
            }
        points = [
            CertifiedPoint(**{k: tuple(v) if isinstance(v, list) else v for k, v in p.items()})
            for p in data["points"]
        ]
        return cls(
            params=Params(**data["params"]),
            points=points,
            complete=bool(data["complete"]),
            parts=parts,
            group=data["group"],
            seconds=float(data["seconds"]),
            min_width=float(data["min_width"]),
            search=data.get("search", {}),
        )

    @classmethod
    def load(cls, path) -> Census:
        """Read a certificate written by :meth:`save`."""
        with gzip.open(Path(path), "rt", encoding="utf-8") as f:
            return cls.from_dict(json.load(f))


# --- the proof -------------------------------------------------------------------------------
def _pivots(rows: list[np.ndarray]) -> list[int]:
    """Coordinates whose sign a group of sign changes fixes: a fundamental domain
    ``{x_c >= 0 for every pivot c}``.

    `rows` are the coordinates each generator flips (boolean). Reduced row echelon form
    over GF(2) gives generators each flipping its own pivot and no other generator's
    pivot, so every orbit meets the domain (fix the pivots' signs one at a time).
    """
    pivots: list[int] = []
    basis: list[np.ndarray] = []
    for r in rows:
        r = np.asarray(r, dtype=bool).copy()
        for p, b in zip(pivots, basis, strict=True):
            if r[p]:
                r ^= b
        if not r.any():
            continue
        p = int(np.flatnonzero(r)[0])
        for i, b in enumerate(basis):
            if b[p]:
                basis[i] = b ^ r
        pivots.append(p)
        basis.append(r)
    return pivots


def proof_spaces(table, group: np.ndarray) -> dict:
    """The spaces of the proof: the charts of ``S^2 x S^2`` (reduced by the reflection of
    ``e3`` and the group's rows that act by sign changes), where the Krawczyk test proves
    points; the strata ``r <= 3`` and the interior ``r = 4`` in the overlaps, reduced by
    the group, where the branch and bound runs."""
    pivots = _pivots(_vector_generators(group))
    fixed = tuple(c in pivots for c in (0, 1, 3, 4))  # k1, k2, v1, v2 -> s_k, t_k, s_v, t_v
    sk = (1.0,) if 2 in pivots else (1.0, -1.0)
    sv = (1.0,) if 5 in pivots else (1.0, -1.0)
    charts = {c.name: c for c in (_Charts(table, (a, b), fixed) for a in sk for b in sv)}
    flips = _pivots([_overlap_flips(g) for g in group if _overlap_flips(g).any()])
    return {
        "charts": charts,
        "strata": _Strata(table, flips, charts, group),
        "overlaps": _Overlaps(table, flips),
    }


#: ``k, v -> diag(1, 1, -1) k, diag(1, 1, -1) v``: the reflection of ``e3`` fixes ``k*, v*``
#: and every overlap, for every model (it is in ``O(d - 2)``).
E3_REFLECTION = np.array([False, False, True, False, False, True])


def _vector_generators(group: np.ndarray) -> list[np.ndarray]:
    """The reflection of ``e3`` and the group's rows that act on ``R^3 x R^3`` by sign
    changes, as the coordinates each flips."""
    return [E3_REFLECTION] + [
        f for f in (_vector_flips(g) for g in group) if f is not None and f.any()
    ]


def _vector_flips(g: np.ndarray) -> np.ndarray | None:
    """A row ``(s_kappa, s_nu, s_theta, s_eta, s_rho)`` as signs of ``(k1, k2, k3, v1, v2, v3)``:
    ``k -> diag(s_kappa, s_eta, 1) k``, ``v -> diag(s_theta, s_nu, s_rho) v`` (needs
    ``s_kappa s_theta = s_eta s_nu = s_rho``, or the row is not used)."""
    sk, sn, st, se, sr = g
    if sk * st != sr or se * sn != sr:
        return None
    return np.array([sk, se, 1.0, st, sn, sr]) < 0


def _overlap_flips(g: np.ndarray) -> np.ndarray:
    return np.asarray(g) < 0


def _bnb(space, min_width: float, max_boxes: int, progress=None, known: list | None = None):
    """Branch and bound over the space's root: every leaf's path, verdict and zero.

    With `known` (the strata), a leaf whose preimage lies in a proved point's Krawczyk
    box (:meth:`_Strata.covered`) closes as unique with that point."""
    lo, hi = space.root_lo[None].copy(), space.root_hi[None].copy()
    paths = [""]
    leaves: dict = {"paths": [], "verdicts": [], "point": []}
    zeros: list[dict] = [dict(z) for z in (known or [])]
    seen = 0
    while len(lo):
        got = [
            space.classify(lo[i : i + CHUNK], hi[i : i + CHUNK]) for i in range(0, len(lo), CHUNK)
        ]
        verdict = np.concatenate([v for v, _d in got])
        prefer = np.concatenate([d for _v, d in got])  # the side each open box asks to split
        width = np.max(hi - lo, axis=1)
        inside = {}
        if known:  # the strata: an open box whose preimage a proved point's box holds
            ask = np.flatnonzero(verdict < 0)
            cov = np.full(len(lo), -1)
            for i in range(0, ask.size, CHUNK):
                part = ask[i : i + CHUNK]
                cov[part] = space.covered(lo[part], hi[part])
            for i in np.flatnonzero((verdict < 0) & (cov >= 0)):
                verdict[i] = UNIQUE
                inside[i] = int(cov[i])
        near = np.flatnonzero((verdict < 0) & (width <= NEWTON_WIDTH) & space.newton)
        found = {}
        if near.size:
            zlo, zhi = space.newton_box(lo[near], hi[near])
            kv, klo, khi = krawczyk(space, zlo, zhi)
            for j, i in enumerate(near):
                if kv[j] == UNIQUE:
                    verdict[i] = UNIQUE
                    found[i] = {"zlo": zlo[j], "zhi": zhi[j], "klo": klo[j], "khi": khi[j]}
                elif kv[j] == NEWTON_EXCLUDED:
                    verdict[i] = NEWTON_EXCLUDED
        seen += len(lo)
        if progress is not None:
            progress(len(lo))
        stop = seen >= max_boxes
        verdict[(verdict < 0) & ((width <= min_width) | stop)] = UNRESOLVED
        for i in np.flatnonzero(verdict >= 0):
            leaves["paths"].append(paths[i])
            leaves["verdicts"].append(int(verdict[i]))
            if i in found:
                found[i]["leaf"] = len(leaves["point"])
                leaves["point"].append(len(zeros))
                zeros.append(found[i])
            elif i in inside:
                leaves["point"].append(inside[i])
            else:
                leaves["point"].append(-1)
        split = np.flatnonzero(verdict < 0)
        if not split.size:
            break
        dims = np.where(prefer[split] >= 0, prefer[split], space.split_dims(lo[split], hi[split]))
        (l0, h0), (l1, h1) = _children(lo[split], hi[split], dims)
        paths = [paths[i] + str(2 * d) for i, d in zip(split, dims, strict=True)] + [
            paths[i] + str(2 * d + 1) for i, d in zip(split, dims, strict=True)
        ]
        lo, hi = np.concatenate([l0, l1]), np.concatenate([h0, h1])
    return leaves, zeros


def _inverse_chart(x: np.ndarray, sign: float) -> np.ndarray:
    return x[:2] / (1.0 + sign * x[2])


def _to_chart_point(
    space: _Charts, group: np.ndarray, k: np.ndarray, v: np.ndarray
) -> np.ndarray | None:
    """Chart coordinates of an image of ``(k, v)`` (``R^3``) in the space's domain, if any."""
    x = np.concatenate([k, v])
    for sign in _group_signs(_vector_generators(group)):
        y = sign * x
        if y[2] * space.signs[0] < -1e-12 or y[5] * space.signs[1] < -1e-12:
            continue
        w = np.concatenate(
            [_inverse_chart(y[:3], space.signs[0]), _inverse_chart(y[3:], space.signs[1])]
        )
        if np.all(w >= space.root_lo - 1e-9) and np.all(w <= space.root_hi + 1e-9):
            return w
    return None


def _newton(space, w: np.ndarray, steps: int = 8) -> np.ndarray:
    """Newton's iteration on the space's system from each row of `w` (``(n, m)``, or one
    point ``(m,)``), all rows at once; a row stops where its Jacobian is singular or its
    iterate is no longer finite."""
    w = np.array(w, dtype=float)
    one = w.ndim == 1
    W = np.atleast_2d(w).copy()
    n, m = W.shape
    active = np.all(np.isfinite(W), axis=1)
    for _ in range(steps):
        idx = np.flatnonzero(active)
        if not idx.size:
            break
        g, J = space.system([Interval(W[idx, i]) for i in range(m)])
        gm = np.stack([np.asarray(c.mid, dtype=float).reshape(-1) for c in g], axis=1)
        Jm = np.empty((idx.size, m, m))
        for a in range(m):
            for b in range(m):
                Jm[:, a, b] = np.asarray(J[a][b].mid, dtype=float).reshape(-1)
        ok = np.all(np.isfinite(Jm), axis=(1, 2)) & np.all(np.isfinite(gm), axis=1)
        step = np.zeros((idx.size, m))
        rows = np.flatnonzero(ok)
        try:
            step[rows] = np.linalg.solve(Jm[rows], gm[rows][..., None])[..., 0]
        except np.linalg.LinAlgError:  # some row is singular: row by row, and those stop
            for j in rows:
                try:
                    step[j] = np.linalg.solve(Jm[j], gm[j])
                except np.linalg.LinAlgError:
                    ok[j] = False
        W[idx[ok]] -= step[ok]
        active[idx[~ok]] = False
        active &= np.all(np.isfinite(W), axis=1)
    return W[0] if one else W


#: The half-widths `_verify_many` tries, largest first.
VERIFY_RADII = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6, 1e-7)


def _verify_many(space, W: np.ndarray) -> list[dict | None]:
    """For each row of `W`, a Krawczyk box around it that holds exactly one zero (the
    largest of :data:`VERIFY_RADII` that works), or None: every radius of every row in
    one vectorised test."""
    W = np.asarray(W, dtype=float)
    if W.ndim != 2:
        raise ValueError(f"`W` must be an (n, m) array of points, got shape {W.shape}.")
    n, m = W.shape
    out: list[dict | None] = [None] * n
    if not n:
        return out
    radii = np.array(VERIFY_RADII)
    zlo = (W[:, None, :] - radii[None, :, None]).reshape(-1, m)
    zhi = (W[:, None, :] + radii[None, :, None]).reshape(-1, m)
    kv, klo, khi = krawczyk(space, zlo, zhi)
    unique = (kv == UNIQUE).reshape(n, radii.size)
    rows = np.flatnonzero(unique.any(axis=1))
    if not rows.size:
        return out
    pick = rows * radii.size + np.argmax(unique[rows], axis=1)
    blo, bhi = klo[pick].copy(), khi[pick].copy()
    for _ in range(TIGHTEN):  # K of any box holding the zero holds it
        _kv, lo2, hi2 = krawczyk(space, blo, bhi)
        blo, bhi = np.maximum(blo, lo2), np.minimum(bhi, hi2)
    for j, (r, i) in enumerate(zip(rows, pick, strict=True)):
        out[r] = {"zlo": zlo[i], "zhi": zhi[i], "klo": blo[j], "khi": bhi[j]}
    return out


def _verify_face(chart: _Charts, w: np.ndarray, candidates: list[Face]) -> dict | None:
    """A box about a face through `w` that holds exactly one zero (:func:`tube_test`): for a
    point where a curvature is too small for the Krawczyk test in the full chart (a factor
    ``e^{-x^2}`` far below the other entries), but the symmetry leaves one equation on
    the face."""
    for face in candidates:
        N, T = list(face.normal), list(face.tangent)
        if face.chart != chart.name or np.max(np.abs(w[N] - np.array(face.values))) > 1e-6:
            continue
        c = w.copy()
        c[N] = face.values
        if T:
            c[T] = _newton(_FaceSpace(chart, face), c[T])
            if not np.all(np.isfinite(c)):
                continue
        for r in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7):
            zlo, zhi = (c - r)[None], (c + r)[None]
            count, klo, khi = tube_test(chart, face, zlo, zhi)
            if count[0] == 1:
                for _ in range(TIGHTEN if T else 0):  # K of any box holding the zero holds it
                    _kv, lo2, hi2 = krawczyk(_FaceSpace(chart, face), klo[:, T], khi[:, T])
                    klo[:, T] = np.maximum(klo[:, T], lo2)
                    khi[:, T] = np.minimum(khi[:, T], hi2)
                return {
                    "zlo": zlo[0],
                    "zhi": zhi[0],
                    "klo": klo[0],
                    "khi": khi[0],
                    "face": {"normal": N, "values": list(face.values)},
                }
    return None


def _search_vectors(points) -> list[tuple[np.ndarray, np.ndarray]]:
    """Representatives in ``R^3 x R^3`` of the search's points with ``r <= 3``."""
    out = []
    for c in points:
        k, v = np.array(c.vectors[0], dtype=float), np.array(c.vectors[1], dtype=float)
        ko, vo = k[2:], v[2:]
        if np.linalg.norm(ko) > 1e-9:
            e = ko / np.linalg.norm(ko)
        elif np.linalg.norm(vo) > 1e-9:
            e = vo / np.linalg.norm(vo)
        else:
            e = np.array([1.0, 0.0])
        rot = np.array([[e[0], e[1]], [-e[1], e[0]]])
        ko, vo = rot @ ko, rot @ vo
        if abs(vo[1]) > 1e-6:
            continue  # r = 4: the overlaps part
        out.append((np.array([k[0], k[1], ko[0]]), np.array([v[0], v[1], vo[0]])))
    return out


def _point_of(space, params: Params, zero: dict, group: np.ndarray):
    """Classify the zero enclosed by ``zero["klo"], zero["khi"]`` (rigorous signs)."""
    d = params.d
    K = _ivs(zero["klo"][None], zero["khi"][None])
    if isinstance(space, _Overlaps):
        ov = K
        span = 4
        feasible = space.feasible_point(zero["klo"], zero["khi"])
        if feasible is False:
            return None
        H = space.table.hessian(ov)
        signs = inertia(H)
        index = None if signs is None or feasible is None else signs[0]
        nullity = 2 * d - 7 if index is not None else None
        span = span if feasible else None
    else:
        _g, J = space.system(K)
        face = zero.get("face")
        if face is None:
            x, _d, _dd = space.vectors(K, derivatives=True)
            signs = inertia(J)
        else:  # on the face of a symmetry h: Hess = dh^T Hess dh, dh = +1 (tangent), -1 (normal)
            f = Face(space.name, tuple(face["normal"]), tuple(face["values"]))
            zT = [K[i] for i in f.tangent]
            x, _d, _dd = face_vectors(space, f, zT)  # the point's exact coordinates
            parts = [inertia([[J[i][j] for j in f.normal] for i in f.normal])]
            if zT:
                parts.append(inertia(_FaceSpace(space, f).system(zT)[1]))
            signs = None if None in parts else tuple(sum(p[i] for p in parts) for i in range(2))
        grad, _H, R = euclidean(space.table, x, need_hessian=False)
        k, v = x[:3], x[3:]
        ov = vector_overlaps(x)
        A = k[0] * grad[0] + k[1] * grad[1] + k[2] * grad[2]
        B = v[0] * grad[3] + v[1] * grad[4] + v[2] * grad[5]
        if not (k[2].contains_zero()[0] and v[2].contains_zero()[0]):
            span = 3
        else:  # the reflection of e3 maps the zero into Z: it is its own image, k3 = v3 = 0
            refl = []
            for part in (slice(0, 2), slice(2, 4)):
                ws = K[part]
                n2 = ws[0] ** 2 + ws[1] ** 2
                if n2.lo[0] <= 0.0:
                    refl = None
                    break
                refl += [c * n2.reciprocal() for c in ws]
            inside = refl is not None and all(
                r.lo[0] > zero["zlo"][i] and r.hi[0] < zero["zhi"][i] for i, r in enumerate(refl)
            )
            span = 2 if inside and space.signs[0] == space.signs[1] else None
        index = nullity = None
        if signs is not None and span is not None:
            trace = -(A + B)
            if span == 2:
                det = A * B - R[4] ** 2
                if det.lo[0] > 0.0 and (trace.hi[0] < 0.0 or trace.lo[0] > 0.0):
                    neg_w = 2 if trace.hi[0] < 0.0 else 0
                elif det.hi[0] < 0.0:
                    neg_w = 1
                else:
                    neg_w = None
                extra = 0
            else:  # one eigenvector of H_W is the orbit's direction; the other eigenvalue is the trace
                neg_w = 1 if trace.hi[0] < 0.0 else (0 if trace.lo[0] > 0.0 else None)
                extra = d - 3
            if neg_w is not None:
                index = signs[0] + (d - 3) * neg_w
                nullity = extra
    lo = tuple(float(o.lo[0]) for o in ov)
    hi = tuple(float(o.hi[0]) for o in ov)
    return lo, hi, span, index, nullity


def _kind(index, nullity, d: int) -> str:
    if index is None:
        return "undecided"
    total = 2 * (d - 1)
    kind = "minimum" if index == 0 else ("maximum" if index + nullity == total else "saddle")
    if nullity:
        kind += f" (critical manifold of dimension {nullity})"
    return kind


def model_table(params: Params):
    """The model's rigorous table (:meth:`slr_theory.models.Model.rigorous_table`), or a
    ``ValueError`` saying that the model has none (an ``ImportError`` names the extra)."""
    table = params.model.rigorous_table(params)
    if table is None:
        raise ValueError(
            f"certify_critical_points needs rigorous enclosures of the model's risk; the model "
            f"{params.model.label!r} has none (pointwise erf has)."
        )
    return table


def certify_critical_points(
    params: Params,
    *,
    min_width: float = 1e-12,
    max_boxes: int = 30_000_000,
    starts: int = 512,
    seed: int = 0,
    progress=None,
    points=None,
    neighbourhood_budget: int = ISOLATE_BUDGET,
    edge_tubes: bool = True,
) -> Census:
    """Prove the list of critical points of the risk complete, or say how far the proof got.

    Parameters
    ----------
    params : Params
        A model with rigorous enclosures (pointwise ``erf``).
    min_width : float
        Boxes are not bisected below this width (then left unresolved).
    max_boxes : int
        Budget of boxes per part (beyond it the open boxes are left unresolved). The
        defaults close every box at the paper's parameters with ``lam = 0.1`` (3.4e5
        leaves in the strata, half a minute on one core) and ``lam = 0.9`` (7.6e6
        leaves, 1.5e7 boxes visited, ten minutes).
    starts, seed : int
        The search (:func:`slr_theory.critical_points`) whose points seed the Krawczyk
        boxes of the vectors' parts: a point it finds is proved where its box verifies.
    progress : callable, optional
        Called with the number of boxes of each generation.
    points : CriticalPoints, optional
        A search already run at `params` (:func:`slr_theory.critical_points`) to seed
        from instead of running one (`starts`, `seed` are then its own).
    neighbourhood_budget : int
        Boxes the branch and bound of each proved point's isolating neighbourhood may
        visit per radius (:func:`isolate`; 0: none, the points' Krawczyk boxes alone
        close the strata's boxes about them).
    edge_tubes : bool
        Build the tube boxes along the edges ``v = +-v*`` (:meth:`_Strata.build_tubes`)
        along the stretch of each box by an edge that stays open while at most ``2^-12``
        wide across it (:meth:`_Strata.extend_tubes`; all of them, about 19 000 boxes,
        take half a minute); they close the strata's boxes by the edges, which otherwise
        close one by one.

    Returns
    -------
    Census
        ``complete`` only when every box is closed by a verdict.

    Examples
    --------
    >>> from slr_theory import Params, certify_critical_points
    >>> census = certify_critical_points(Params.paper())  # doctest: +SKIP
    >>> census.part_complete("overlaps"), len(census.points)  # doctest: +SKIP
    (True, 12)
    """
    check_params(params)
    if not (0.0 < min_width < 1.0):
        raise ValueError(f"`min_width` must be in (0, 1), got {min_width!r}.")
    if int(max_boxes) != max_boxes or max_boxes < 1:
        raise ValueError(f"`max_boxes` must be a positive integer, got {max_boxes!r}.")
    if not isinstance(edge_tubes, (bool, np.bool_)):
        raise ValueError(f"`edge_tubes` must be True or False, got {edge_tubes!r}.")
    if int(neighbourhood_budget) != neighbourhood_budget or neighbourhood_budget < 0:
        raise ValueError(
            f"`neighbourhood_budget` must be a non-negative integer, got {neighbourhood_budget!r}."
        )
    t0 = time.perf_counter()
    table = model_table(params)
    group = np.asarray(symmetries(params), dtype=float)
    spaces = proof_spaces(table, group)
    charts, strata, interior = spaces["charts"], spaces["strata"], spaces["overlaps"]
    strata.lazy_tubes = edge_tubes
    face_list = faces(charts, group)
    known: list[dict] = []
    seen: list[
        np.ndarray
    ] = []  # canonical overlaps of the points Newton reached (a shortcut only)

    def add(pairs: list[tuple[np.ndarray, np.ndarray]]) -> int:
        """Prove the critical points Newton reaches from each ``(k, v)`` of `pairs`, chart
        by chart (a pair moves on to the next chart where Newton diverges and no face
        proves its point), every pair of a chart at once; returns how many are new."""
        pending = list(range(len(pairs)))
        new = 0
        for chart in charts.values():
            starts = [(i, _to_chart_point(chart, group, *pairs[i])) for i in pending]
            starts = [(i, w0) for i, w0 in starts if w0 is not None]
            if not starts:
                continue
            W = _newton(chart, np.array([w0 for _i, w0 in starts]))
            finite = np.all(np.isfinite(W), axis=1)
            x = np.full((len(W), 6), np.nan)
            if finite.any():
                vec = chart.vectors([Interval(W[finite, i]) for i in range(4)])
                x[finite] = np.stack([np.asarray(q.mid, dtype=float) for q in vec], axis=1)
            settled, fresh = set(), []
            for (i, w0), w, xi, ok in zip(starts, W, x, finite, strict=True):
                if ok:
                    ov = canonical(np.array(vector_overlaps(xi)), group)
                    if any(np.max(np.abs(ov - q)) < 1e-9 for q in seen):
                        settled.add(i)  # a point already reached
                        continue
                    seen.append(ov)
                fresh.append((i, w0, w, ok))
            proved = np.array([w for _i, _w0, w, ok in fresh if ok]).reshape(-1, chart.dim)
            proofs = iter(_verify_many(chart, proved))
            for i, w0, _w, ok in fresh:
                z = next(proofs) if ok else None
                if z is None:  # Newton in the chart diverges where a curvature is 1e-54
                    z = _verify_face(chart, w0, face_list)
                if z is None:
                    continue
                settled.add(i)
                if not strata_covered(strata, known, z, chart, group):
                    zero = {**z, "chart": chart.name}
                    cover = isolate(chart, zero, budget=neighbourhood_budget)
                    if cover is not None:
                        zero["cover"] = cover
                    known.append(zero)
                    new += 1
            pending = [i for i in pending if i not in settled]
        return new

    from .critical import critical_points

    if points is not None:
        searched = list(points)
        starts, seed = len(points.search.starts), None
    else:
        searched = list(critical_points(params, starts=starts, rng=seed)) if starts else []
    add(_search_vectors(searched))
    for _round in range(ROUNDS):
        strata.known = known
        leaves, zeros = _bnb(strata, min_width, max_boxes, progress, known)
        open_ = [
            p for p, v in zip(leaves["paths"], leaves["verdicts"], strict=True) if v == UNRESOLVED
        ]
        if not open_:
            break
        lo, hi = boxes_of_paths(  # Newton from the centres of open boxes' preimages
            strata.root_lo, strata.root_hi, open_[:: max(1, len(open_) // HARVEST)]
        )
        y, _empty = strata.preimage(lo, hi)
        c = np.stack([0.5 * (q.lo + q.hi) for q in y], axis=1)
        k = c[:, :3] / np.linalg.norm(c[:, :3], axis=1, keepdims=True)
        v = c[:, 3:] / np.linalg.norm(c[:, 3:], axis=1, keepdims=True)
        if not add(list(zip(k, v, strict=True))):
            break
    parts = {
        "strata": {
            "root": (strata.root_lo, strata.root_hi),
            **leaves,
            "zeros": zeros,
            "tubes": strata.built_tubes,
        }
    }
    ileaves, izeros = _bnb(interior, min_width, max_boxes, progress)
    parts["overlaps"] = {"root": (interior.root_lo, interior.root_hi), **ileaves, "zeros": izeros}
    points: list = []
    for zi, z in enumerate(zeros):
        got = _point_of(charts[z["chart"]], params, z, group)
        z["feasible"] = True
        points.append(("strata", zi, got))
    for zi, z in enumerate(izeros):
        kz, klo, khi = krawczyk(interior, z["klo"][None], z["khi"][None])
        if kz[0] == UNIQUE:  # contract the enclosure (it holds the zero)
            z["klo"], z["khi"] = np.maximum(klo[0], z["klo"]), np.minimum(khi[0], z["khi"])
        got = _point_of(interior, params, z, group)
        z["feasible"] = got is not None
        if got is not None:
            points.append(("overlaps", zi, got))
    found = _merge(params, points, group)
    unproved = [
        tuple(float(x) for x in canonical(c.overlaps, group))
        for c in searched
        if not any(
            np.all(np.array(q.overlaps_lo) - 1e-9 <= img)
            and np.all(img <= np.array(q.overlaps_hi) + 1e-9)
            for q in found
            for img in group * np.asarray(c.overlaps)
        )
    ]
    open_within = _open_distance(strata, parts["strata"], unproved, group)
    complete = all(UNRESOLVED not in p["verdicts"] for p in parts.values()) and all(
        q.span_dim is not None and q.index is not None for q in found
    )
    return Census(
        params=params,
        points=found,
        complete=complete,
        parts=parts,
        group=group.tolist(),
        seconds=time.perf_counter() - t0,
        min_width=min_width,
        search={
            "starts": starts,
            "seed": seed,
            "found": len(searched),
            "unproved": unproved,
            "open_within": open_within,
        },
    )


def _open_distance(strata: _Strata, part: dict, unproved: list, group: np.ndarray) -> float | None:
    """The largest distance (sup norm, in the overlaps) from an open box of the strata to
    the nearest image of a point the search found and the census did not prove; None
    when no box is open or no such point exists."""
    paths = [p for p, v in zip(part["paths"], part["verdicts"], strict=True) if v == UNRESOLVED]
    if not paths or not unproved:
        return None
    targets = np.concatenate([group * np.asarray(u) for u in unproved])
    worst = 0.0
    for path in paths:
        lo, hi = box_of_path(strata.root_lo, strata.root_hi, path)
        gap = np.maximum(np.maximum(lo - targets, targets - hi), 0.0)  # box to point
        far = np.maximum(np.abs(lo - targets), np.abs(hi - targets))  # farthest corner
        nearest = int(np.argmin(np.max(gap, axis=1)))
        worst = max(worst, float(np.max(far[nearest])))
    return worst


def strata_covered(
    strata: _Strata, known: list[dict], z: dict, chart: _Charts, group: np.ndarray
) -> bool:
    """Whether the zero in `z` (a chart's Krawczyk box) is already one of `known`: its
    enclosure, mapped to the overlaps, lies in a known zero's box after a symmetry."""
    K = _ivs(z["klo"][None], z["khi"][None])
    ov = vector_overlaps(chart.vectors(K))
    lo = np.array([o.lo[0] for o in ov])
    hi = np.array([o.hi[0] for o in ov])
    if not known:
        return False
    strata.known = known
    for g in group:  # the group's rows are all its elements
        a, b = np.minimum(g * lo, g * hi), np.maximum(g * lo, g * hi)
        if strata.covered(a[None], b[None])[0] >= 0:
            return True
    return False


def _risk_at(params: Params, overlaps: np.ndarray) -> float:
    """The risk a point states: at its overlaps, by the engine."""
    return float(engine.components(params, overlaps.reshape(5, 1)).sum()) + params.eps**2


def _canonical_box(lo, hi, group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A zero's enclosure as a point states it: the canonical image of its centre, and
    the enclosure mapped by the symmetry that took it there."""
    lo, hi = np.array(lo), np.array(hi)
    raw = 0.5 * (lo + hi)
    mid = canonical(raw, group)
    g = next(g for g in group if np.array_equal(g * raw, mid))  # the image canonical took
    return mid, np.where(g > 0, lo, -hi), np.where(g > 0, hi, -lo)


def _merge(params: Params, points: list, group: np.ndarray) -> list[CertifiedPoint]:
    """One point per orbit: zeros whose canonical overlaps agree to 1e-7 are one point."""
    out: list[dict] = []
    for name, zi, (lo, hi, span, index, nullity) in points:
        mid, lo, hi = _canonical_box(lo, hi, group)
        for q in out:
            if np.max(np.abs(q["mid"] - mid)) < 1e-7:
                q["zeros"].append(f"{name}:{zi}")
                for key, val in (("span", span), ("index", index), ("nullity", nullity)):
                    if q[key] is None:
                        q[key] = val
                break
        else:
            out.append(
                {
                    "mid": mid,
                    "lo": lo,
                    "hi": hi,
                    "span": span,
                    "index": index,
                    "nullity": nullity,
                    "zeros": [f"{name}:{zi}"],
                    "part": name,
                }
            )
    result = []
    for q in out:
        r = _risk_at(params, q["mid"])
        result.append(
            CertifiedPoint(
                part=q["part"],
                zeros=tuple(q["zeros"]),
                overlaps_lo=tuple(float(x) for x in q["lo"]),
                overlaps_hi=tuple(float(x) for x in q["hi"]),
                overlaps=tuple(float(x) for x in q["mid"]),
                span_dim=q["span"],
                index=q["index"],
                nullity=q["nullity"],
                risk=r,
                kind=_kind(q["index"], q["nullity"], params.d),
            )
        )
    return sorted(result, key=lambda p: p.risk)


def _restated(census: Census, derived: dict, group: np.ndarray) -> list[str]:
    """What each point states, derived again from its re-proved zeros as the census
    derived it (:func:`_merge`): its overlaps and their enclosure from its first zero, the
    span dimension, index and nullity from the first zero that decides each, the kind
    from those, and the risk at its overlaps. Any edit of a point fails here."""
    params = census.params
    out = []
    for q in census.points:
        gots = [derived.get(ref) for ref in q.zeros]
        if not gots or any(g is None for g in gots):
            continue  # already a failure: a zero missing or not re-proved
        mid, lo, hi = _canonical_box(gots[0][0], gots[0][1], group)
        where = f"point {q.overlaps}"
        close = lambda a, b, tol: np.all(  # noqa: E731
            np.abs(np.asarray(a, dtype=float) - b) <= tol * np.maximum(1.0, np.abs(b))
        )
        if not (
            close(q.overlaps, mid, 1e-12)
            and close(q.overlaps_lo, lo, 1e-12)
            and close(q.overlaps_hi, hi, 1e-12)
        ):
            out.append(
                f"{where}: its overlaps or their enclosure are not its zero's "
                f"({tuple(float(x) for x in mid)} in [{tuple(lo.tolist())}, {tuple(hi.tolist())}])"
            )
        stated = {"span_dim": q.span_dim, "index": q.index, "nullity": q.nullity}
        for key, pos in (("span_dim", 2), ("index", 3), ("nullity", 4)):
            value = next((got[pos] for got in gots if got[pos] is not None), None)
            if value != stated[key]:
                out.append(f"{where}: {key} {stated[key]!r} is not re-proved (got {value!r})")
        kind = _kind(q.index, q.nullity, params.d)
        if q.kind != kind:
            out.append(f"{where}: kind {q.kind!r} does not follow from its index ({kind!r})")
        r = _risk_at(params, mid)
        if not (isinstance(q.risk, float) and abs(q.risk - r) <= 1e-12 * max(1.0, abs(r))):
            out.append(f"{where}: risk {q.risk!r} is not the risk at its overlaps ({r!r})")
    return out


@dataclass(frozen=True)
class CertificateCheck:
    """What :func:`check_certificate` found.

    Attributes
    ----------
    ok : bool
        Every verdict, zero and point re-verified, and the leaves partition each domain.
    complete : bool
        ``ok`` and no box unresolved: the list is proved complete.
    failures : list of str
        What failed (empty when ``ok``).
    boxes : int
        Leaves checked.
    """

    ok: bool
    complete: bool
    failures: list
    boxes: int


def check_certificate(census: Census | str | Path) -> CertificateCheck:
    """Re-verify a census from its boxes alone, with fresh enclosures.

    The checker rebuilds every leaf from its bisection path, checks that the leaves of
    each part partition the part's domain (prefix-free paths with ``sum 2^-len = 1``), that
    the domains are the ones the model's symmetry group gives, re-runs the verdict of
    every leaf (infeasible, excluded, Newton-excluded, unique) and the Krawczyk test of
    every zero, and derives every point's overlaps, enclosure, span dimension, index,
    nullity, kind and risk again from its zeros (any edit of them fails). It trusts
    nothing the census says but the boxes. The edge tubes a census saved are re-proved
    too, and every box is classified again against what is re-proved: with tubes cut
    short or deleted, each box is re-proved on its own or fails.

    Parameters
    ----------
    census : Census or path
        A census, or a file written by :meth:`Census.save`.

    Returns
    -------
    CertificateCheck
    """
    if not isinstance(census, Census):
        census = Census.load(census)
    params = census.params
    table = model_table(params)
    group = np.asarray(symmetries(params), dtype=float)
    failures: list[str] = []
    if group.tolist() != [list(map(float, g)) for g in census.group]:
        failures.append("the symmetry group differs from the model's")
    built = proof_spaces(table, group)
    spaces = {"strata": built["strata"], "overlaps": built["overlaps"]}
    charts = built["charts"]
    if set(spaces) != set(census.parts):
        failures.append(f"parts {sorted(census.parts)} differ from the domains {sorted(spaces)}")
    tubes = census.parts.get("strata", {}).get("tubes") or {}
    why = check_tubes(spaces["strata"], tubes)
    if why is None:
        spaces["strata"].set_tubes(tubes)
    else:
        failures.append(f"strata: {why}")
    boxes = 0
    unresolved = 0
    for name, part in census.parts.items():
        space = spaces.get(name)
        if space is None:
            continue
        if not (
            np.array_equal(part["root"][0], space.root_lo)
            and np.array_equal(part["root"][1], space.root_hi)
        ):
            failures.append(f"{name}: the root box is not the domain")
            continue
        paths, verdicts, point = part["paths"], np.array(part["verdicts"]), np.array(part["point"])
        if not _paths_are_halvings(paths, space.dim):
            failures.append(f"{name}: a path holds a character that is not a side's half")
            continue
        if not _tree_complete(paths):
            failures.append(f"{name}: the leaves do not partition the domain")
        if not (len(paths) == len(verdicts) == len(point)):
            failures.append(f"{name}: ragged leaf records")
            continue
        boxes += len(paths)
        unresolved += int(np.count_nonzero(verdicts == UNRESOLVED))
        zeros = part["zeros"]
        malformed = [
            j
            for j, z in enumerate(zeros)
            if not all(np.all(z[a] <= z[b]) for a, b in (("zlo", "zhi"), ("klo", "khi")))
        ]
        if malformed:
            failures.append(f"{name}: zeros {malformed} have boxes with lo > hi")
            continue
        # every zero: the Krawczyk test again, in its own space
        for j, z in enumerate(zeros):
            zspace = charts.get(z.get("chart")) if name == "strata" else space
            if zspace is None:
                failures.append(f"{name}: zero {j} names no chart")
                continue
            face = z.get("face")
            if face is not None:  # the symmetry's argument on a face, in its chart
                f = Face(z.get("chart"), tuple(face["normal"]), tuple(face["values"]))
                if name != "strata" or f not in faces(charts, group):
                    failures.append(f"{name}: zero {j} names a face no symmetry fixes")
                    continue
                count, klo, khi = tube_test(zspace, f, z["zlo"][None], z["zhi"][None])
                kv = np.where(count == 1, UNIQUE, UNRESOLVED)
            else:
                kv, klo, khi = krawczyk(zspace, z["zlo"][None], z["zhi"][None])
            if z.get("cover") is not None:
                why = check_neighbourhood(zspace, z) if name == "strata" else "not in a chart"
                if why is not None:
                    failures.append(f"{name}: zero {j}: {why}")
            if kv[0] != UNIQUE:
                failures.append(f"{name}: zero {j} fails the Krawczyk test")
            elif not np.all((klo[0] <= z["khi"]) & (khi[0] >= z["klo"])):
                failures.append(f"{name}: zero {j}'s enclosure misses its Krawczyk image")
            elif not z["feasible"] and (
                not hasattr(space, "feasible_point")
                or space.feasible_point(klo[0], khi[0]) is not False
            ):
                failures.append(f"{name}: zero {j} claimed infeasible is not proved so")
        if not len(paths):
            continue
        lo, hi = boxes_of_paths(space.root_lo, space.root_hi, paths)
        fresh, _dims = space.classify(lo, hi)
        for code in (INFEASIBLE, EXCLUDED):
            bad = np.flatnonzero((verdicts == code) & (fresh != code))
            if bad.size:
                failures.append(
                    f"{name}: {bad.size} boxes claimed {VERDICTS[code]} are not (first: {paths[bad[0]]!r})"
                )
        newton = np.flatnonzero(verdicts == NEWTON_EXCLUDED)
        if newton.size:
            if not space.newton:
                failures.append(f"{name}: Newton verdicts in a part without them")
            else:
                zlo, zhi = space.newton_box(lo[newton], hi[newton])
                kv, _l, _h = krawczyk(space, zlo, zhi)
                bad = newton[kv != NEWTON_EXCLUDED]
                if bad.size:
                    failures.append(f"{name}: {bad.size} boxes claimed Newton-excluded are not")
        unique = np.flatnonzero(verdicts == UNIQUE)
        if unique.size:
            if name == "strata":
                space.known = zeros
                cov = space.covered(lo[unique], hi[unique])
                bad = unique[cov < 0]
            else:
                bad = np.array(
                    [
                        i
                        for i in unique
                        if not (0 <= point[i] < len(zeros))
                        or not np.all(
                            (lo[i] >= zeros[point[i]]["zlo"]) & (hi[i] <= zeros[point[i]]["zhi"])
                        )
                    ],
                    dtype=int,
                )
            if bad.size:
                failures.append(
                    f"{name}: {bad.size} unique boxes lie in no zero's Krawczyk box (first: {paths[bad[0]]!r})"
                )
        if np.any((point >= 0) & (verdicts != UNIQUE)):
            failures.append(f"{name}: a box that is not unique names a zero")
        for j, z in enumerate(zeros):
            if z["feasible"] and not any(f"{name}:{j}" in p.zeros for p in census.points):
                failures.append(f"{name}: zero {j} is in no point")
    by_zero = {}
    for q in census.points:
        for ref in q.zeros:
            by_zero[ref] = q
    derived: dict = {}  # a zero's (lo, hi, span, index, nullity), re-proved
    for ref, q in by_zero.items():
        name, _, j = ref.partition(":")
        part = census.parts.get(name)
        if part is None or not j.isdigit() or int(j) >= len(part["zeros"]):
            failures.append(f"point {q.overlaps}: no zero {ref}")
            continue
        z = part["zeros"][int(j)]
        zspace = charts.get(z.get("chart")) if name == "strata" else spaces.get(name)
        got = _point_of(zspace, params, {**z}, group) if zspace is not None else None
        if got is None:
            failures.append(f"point {q.overlaps}: zero {ref} is not a feasible critical point")
            continue
        derived[ref] = got
        images = group * 0.5 * (np.array(got[0]) + np.array(got[1]))
        lo_q, hi_q = np.array(q.overlaps_lo), np.array(q.overlaps_hi)
        mid_q = np.array(q.overlaps)
        if not any(np.max(np.abs(img - mid_q)) < 1e-6 for img in images) and not np.all(
            (np.array(got[0]) >= lo_q - 1e-12) & (np.array(got[1]) <= hi_q + 1e-12)
        ):
            failures.append(f"point {q.overlaps}: its zero {ref} lies elsewhere")
    failures += _restated(census, derived, group)
    ok = not failures
    complete = ok and unresolved == 0 and all(q.span_dim is not None for q in census.points)
    if census.complete and not complete:
        failures.append("the census claims completeness it does not have")
        ok = False
    return CertificateCheck(ok=ok, complete=complete, failures=failures, boxes=boxes)
