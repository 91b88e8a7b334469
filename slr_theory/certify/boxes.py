"""Boxes of the census: verdicts, paths of halvings from the root box and back, the tree's completeness, and interval linear algebra every stage shares (inertia, Krawczyk's operator, regularity)."""

from __future__ import annotations

import numpy as np

from ..interval import Interval

__all__ = []


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


def children(lo: np.ndarray, hi: np.ndarray, dims: np.ndarray):
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


def paths_are_halvings(paths: list, dim: int) -> bool:
    """Whether every path is a string of side halves (``'0'`` to ``str(2 dim - 1)``)."""
    halves = {str(c) for c in range(2 * dim)}
    return all(isinstance(p, str) for p in paths) and set("".join(paths)) <= halves


def tree_complete(paths: list[str]) -> bool:
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


def widen(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = WIDEN * (hi - lo)
    return lo - w, hi + w


def ivs(lo: np.ndarray, hi: np.ndarray) -> list[Interval]:
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


#: A midpoint matrix whose condition number (2-norm) is below this is inverted and used.
CONDITION_LIMIT = 1e12

#: Where ``||M||_F ||Y||_F`` is below this (``Y`` the float inverse), ``M``'s computed
#: condition number is below :data:`CONDITION_LIMIT` without a singular value decomposition.
CONDITION_CLEAR = 1e6


def midpoint_inverses(mid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which matrices of `mid` ``(n, m, m)`` are finite with a condition number (2-norm, as
    ``np.linalg.cond`` computes it) below :data:`CONDITION_LIMIT`, and their inverses
    (``np.linalg.inv``; zero where not).

    Each column ``y_j`` of the inverse ``Y`` that LU with partial pivoting computes solves
    ``(M + dM_j) y_j = e_j`` with ``||dM_j|| <= c eps ||M||`` (``c`` at most a few
    thousand for ``m <= 6``, the pivots' growth included), so ``M Y = I - E`` with
    ``||E|| <= c eps ||M||_F ||Y||_F``. Where ``||M||_F ||Y||_F < 1e6`` (computed, then
    within a few ulp), ``||E|| < 1e-6`` and ``sigma_min(M) >= (1 - ||E||) / ||Y||``: the
    condition number is below ``1.000002e6``, and the one the singular values compute
    (each within ``c eps sigma_max``) far below the limit. Only the other matrices pay for
    the singular value decomposition; the verdicts are those of ``cond`` on every matrix,
    and each inverse is the same float matrix (LAPACK inverts the matrices one by one).
    """
    n = mid.shape[0]
    usable = np.all(np.isfinite(mid), axis=(1, 2))
    Y = np.zeros_like(mid)
    try:
        inv = np.linalg.inv(mid[usable])
    except np.linalg.LinAlgError:  # a singular matrix among them: decompose them all
        inv = None
    if inv is not None:
        Y[usable] = inv
        with np.errstate(over="ignore", invalid="ignore"):
            product = np.sqrt(np.sum(mid**2, axis=(1, 2)) * np.sum(Y**2, axis=(1, 2)))
        doubt = usable & ~(product < CONDITION_CLEAR)
    else:
        doubt = usable.copy()
    if doubt.any():
        cond = np.full(n, np.inf)
        cond[doubt] = np.linalg.cond(mid[doubt])
        usable &= ~doubt | (cond < CONDITION_LIMIT)
        if inv is None:
            Y[usable] = np.linalg.inv(mid[usable])
    Y[~usable] = 0.0
    return usable, Y


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
    Z = ivs(zlo, zhi)
    zm = 0.5 * zlo + 0.5 * zhi
    G, _ = space.system([Interval(zm[:, i]) for i in range(m)], need_jacobian=False)
    _G, J = space.system(Z)
    mid = np.empty((n, m, m))
    for a in range(m):
        for b in range(m):
            mid[:, a, b] = 0.5 * J[a][b].lo + 0.5 * J[a][b].hi
    verdict = np.full(n, UNRESOLVED)
    usable, Y = midpoint_inverses(mid)
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


def regular(M: list[list[Interval]]) -> np.ndarray:
    """Whether every matrix of each interval matrix `M` (``m x m`` of ``(n,)`` intervals) is
    invertible: ``||I - Y M||_inf < 1`` with ``Y`` a float inverse of the midpoint."""
    m = len(M)
    n = len(M[0][0].lo)
    mid = np.empty((n, m, m))
    for a in range(m):
        for b in range(m):
            mid[:, a, b] = 0.5 * M[a][b].lo + 0.5 * M[a][b].hi
    ok, Y = midpoint_inverses(mid)
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


def isolated_box(zero: dict) -> tuple[np.ndarray, np.ndarray]:
    """The box in which a zero is the only critical point: its neighbourhood, else ``Z``."""
    cover = zero.get("cover")
    if cover is None:
        return np.asarray(zero["zlo"]), np.asarray(zero["zhi"])
    return np.asarray(cover["lo"]), np.asarray(cover["hi"])
