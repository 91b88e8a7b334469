"""Branches of critical points followed in the temperature: pseudo-arclength continuation, folds and index changes."""

from __future__ import annotations

import numpy as np

from .. import engine
from ..critical import CriticalPoints, classify, critical_points, polish, same_point, symmetries
from ..params import Params, check_params, temperature_range
from ..trajectory import to_overlaps
from ..validate import positive_int
from .branches import Branch, Continuation

__all__ = ["CORRECTOR_DAMPING", "FOLD_TOL", "LOCATE_TOL", "Branch", "Continuation", "continuation"]


#: Width in ``lambda`` to which :func:`continuation` locates an index change.
LOCATE_TOL = 1e-7


def _locate_index_changes(params: Params, branch: Branch, t: int) -> list:
    """The index changes of `branch` between ``lam[t]`` and ``lam[t + 1]``, each bisected
    to ``LOCATE_TOL`` (:func:`_bisect_index`): a list of ``(from, to, (lo, hi))``.

    Between two points of the branch farther apart than an arc-length step, the branch
    is walked in arc length first (:func:`_arc_through`) and every pair of consecutive
    points with different indices is bisected. The bisection corrects the midpoint of
    the chord onto the branch in the hyperplane normal to the chord (Newton inside the
    branch's symmetry subspace, :func:`_frozen_rows`, so an eigenvalue crossing zero
    outside it does not stall it), and classifies it. It stops early, with the interval
    it has, where the point cannot be corrected; a point whose index is neither end's
    splits the interval into two events, each bisected on its own.
    """
    lo, hi = float(branch.lam[t]), float(branch.lam[t + 1])
    a = np.concatenate([branch.vectors[t].ravel(), [lo]])
    b = np.concatenate([branch.vectors[t + 1].ravel(), [hi]])
    path, index = [a, b], [int(branch.index[t]), int(branch.index[t + 1])]
    if np.linalg.norm(b - a) > _MAX_ARC_STEP:
        walk: list = []
        _arc_through(params, a[:4], a[4:8], lo, None, hi, hi, walk)
        walk = [y for y in walk if (y[8] - lo) * (hi - y[8]) > 0]
        path = [a, *walk, b]
        inner = [classify(params.replace(lam=float(y[8])), y[:4], y[4:8]).index for y in walk]
        index = [index[0], *inner, index[1]]
    out = []
    for j in range(len(path) - 1):
        if index[j] != index[j + 1]:
            out += _bisect_index(params, path[j], path[j + 1], index[j], index[j + 1])
    return out


def _bisect_index(params: Params, a: np.ndarray, b: np.ndarray, i_a: int, i_b: int) -> list:
    """Bisect the chord from ``a`` (index `i_a`) to ``b`` (index `i_b`) of a branch: a
    list of ``(from, to, (lo, hi))``, one per index change.

    A midpoint whose index is neither end's splits the chord: each side is bisected on
    its own (two eigenvalues crossing zero at different temperatures are two events, each
    located to ``LOCATE_TOL``). Where the midpoint cannot be corrected onto the branch the
    interval stays as it is, its width the event's precision.
    """
    while abs(b[8] - a[8]) > LOCATE_TOL:
        mid = 0.5 * (a + b)
        chord = (b - a) / np.linalg.norm(b - a)
        y = _arc_correct(params, mid, chord)
        if y is None or np.linalg.norm(y - mid) > np.linalg.norm(b - a):
            break
        index = classify(params.replace(lam=float(y[8])), y[:4], y[4:8]).index
        if index == i_a:
            a = y
        elif index == i_b:
            b = y
        elif not min(a[8], b[8]) < y[8] < max(a[8], b[8]):
            break  # corrected outside the chord: no progress to be had
        else:
            return _bisect_index(params, a, y, i_a, index) + _bisect_index(
                params, y, b, index, i_b
            )
    return [(i_a, i_b, tuple(sorted((float(a[8]), float(b[8])))))]


#: Initial damping of the continuation's Newton corrector (:func:`slr_theory.critical.polish`):
#: from a prediction on the branch, nearly pure Newton steps converge fastest.
CORRECTOR_DAMPING = 1e-4


def _trim_covered(new: Branch, branches: list, group: np.ndarray):
    """`new` without the part that is a branch followed before (the same point, up to
    `group`, within ``MERGE_TOL``, at temperatures of the grid they share), and where it
    runs into it: ``(branch or None, [(side, bracket, other), ...])``.

    A branch found again at a later seed (one followed before was lost there), or one
    whose corrector slid onto another branch, would be listed twice over that part. The
    covered part must be a prefix or a suffix of `new`; its end becomes a ``"meets"``
    with the other branch, bracketed by the last shared temperature and the next.
    """
    from ..critical.points import MERGE_TOL

    joined = []
    covered = np.zeros(new.lam.size, dtype=bool)
    other_at = np.full(new.lam.size, -1)
    for j, old in enumerate(branches):
        for i, lam in enumerate(new.lam):
            t = np.flatnonzero(old.lam == lam)
            if t.size and same_point(old.overlaps[t[0]], new.overlaps[i], MERGE_TOL, group):
                covered[i], other_at[i] = True, j
    if not covered.any():
        return new, joined
    if covered.all():
        return None, joined
    first, last = int(np.argmin(covered)), int(covered.size - np.argmin(covered[::-1]))
    if covered[:first].all() and not covered[first:].any():  # a covered prefix
        keep = slice(first, None)
        joined.append(
            ("start", (float(new.lam[first - 1]), float(new.lam[first])), int(other_at[first - 1]))
        )
    elif covered[last:].all() and not covered[:last].any():  # a covered suffix
        keep = slice(0, last)
        joined.append(
            ("end", (float(new.lam[last - 1]), float(new.lam[last])), int(other_at[last]))
        )
    else:  # shared in the middle only: a crossing, not a repetition
        return new, joined
    trimmed = Branch(
        lam=new.lam[keep],
        overlaps=new.overlaps[keep],
        risk=new.risk[keep],
        index=new.index[keep],
        kind=new.kind[keep],
        start="meets" if keep.start else new.start,
        end="meets" if keep.stop is not None else new.end,
        seed=new.seed,
        vectors=None if new.vectors is None else new.vectors[keep],
    )
    return trimmed, joined


def _corrector(params: Params, k, v, prev, lam_try: float, h: float):
    """The point of the branch at `lam_try`, from ``(k, v)`` at ``lam_try - h`` (or None).

    A secant predictor in ``lambda`` (from `prev`) first, then the last point; the damped
    Newton corrector must stay on the branch (move no more than the predictor expects).
    """
    p_try = params.replace(lam=float(lam_try))
    guesses = [(k, v, 0.0)]
    if prev is not None:
        dk, dv = (k - prev[0]) / prev[2], (v - prev[1]) / prev[2]
        kp, vp = k + h * dk, v + h * dv
        expected = abs(h) * np.hypot(np.linalg.norm(dk), np.linalg.norm(dv))
        guesses.insert(0, (kp / np.linalg.norm(kp), vp / np.linalg.norm(vp), expected))
    for kp, vp, expected in guesses:
        got = polish(p_try, kp, vp, damping=CORRECTOR_DAMPING)
        if got is None:
            continue
        moved = np.hypot(np.linalg.norm(got[0] - k), np.linalg.norm(got[1] - v))
        if moved <= 0.02 + 1.5 * expected:  # stayed on this branch
            return got
    return None


#: Width in ``lambda`` within which :func:`continuation` must place a fold or a meeting: it
#: places them at the extremum of ``lambda`` along the branch, followed in arc length, and
#: the bracket it reports is the error of that extremum (about ``1e-12`` in practice).
FOLD_TOL = 1e-6


#: Most pseudo-arclength steps :func:`continuation` takes through one stretch where the
#: corrector in ``lambda`` fails, and the largest arc-length step in ``(k, v, lambda)``.
_MAX_ARC_STEPS = 400


_MAX_ARC_STEP = 0.05


#: Most halvings of a failed step of the corrector in ``lambda`` before the branch is
#: followed in arc length instead (which is robust where the halvings are not).
_MAX_HALVINGS = 4


#: Most stretches one branch is followed through in arc length before it is given up.
_MAX_ARCS = 200


def _arc_system(params: Params, y: np.ndarray):
    """The Riemannian gradient ``G`` (8,) at ``y = (k, v, lambda)`` and its Jacobian (8, 9).

    The ``(k, v)`` block is the Riemannian Hessian; the ``lambda`` column a forward
    difference (it steers Newton, the residual ``G`` is exact).
    """
    from ..geometry import vector_derivatives

    def at(lam):
        tables = (engine.table(params, lam, 1), engine.table(params, lam, 2))
        _o, _g, G, Hr, _ab, _m = vector_derivatives(tables, y[None, :4], y[None, 4:8])
        return G[0], Hr[0]

    G, Hr = at(y[8])
    h = 1e-7 * y[8]
    dG = (at(y[8] + h)[0] - G) / h  # forward: its O(h) error only slows Newton down
    return G, np.concatenate([Hr, dG[:, None]], axis=1)


def _frozen_rows(y: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Directions in ``(k, v, lambda)`` the branch through ``y`` cannot move in.

    A symmetry that fixes ``y`` fixes its branch: in ``span{k*, v*}`` (``r = 2``) the
    branch stays there (the components along ``e3, e4`` are frozen); with components
    outside along one direction ``w`` of the plane ``(e3, e4)`` (``r = 3``) it stays in
    ``span{k*, v*, w}``. For ``r = 4`` the rotations of that plane move the point along
    its orbit, a zero mode: the orbit's direction is frozen (the gauge). Likewise the
    overlaps that a sign change of ``SYMMETRIES`` fixing ``y`` flips stay zero. Branches
    that break such a symmetry leave at a pitchfork and are found by the search, not here.
    """

    perp = np.array([[y[2], y[3]], [y[6], y[7]]])
    u, sv, wt = np.linalg.svd(perp)
    rows = []
    ov = to_overlaps(y[:8, None])[:, 0]
    for i in _fixing(ov, 1e-9, group):  # a sign change of overlaps fixing y fixes its branch
        rows += [_overlap_coordinate(int(c))(y)[1] for c in np.flatnonzero(group[i] < 0)]
    if sv[0] <= 1e-10:
        for i in (2, 3, 6, 7):
            rows.append(np.eye(9)[i])
    else:
        w_perp = wt[1] if sv[1] <= 1e-10 * sv[0] else None
        if w_perp is not None:
            for off in (0, 4):
                r = np.zeros(9)
                r[off + 2 : off + 4] = w_perp
                rows.append(r)
        else:
            o = np.concatenate([[0.0, 0.0, -y[3], y[2]], [0.0, 0.0, -y[7], y[6]], [0.0]])
            rows.append(o / np.linalg.norm(o))
    return np.array(rows)


def _arc_rows(y: np.ndarray, J: np.ndarray, frozen: np.ndarray) -> np.ndarray:
    """``J`` with the constraints of the spheres (``k.dk = v.dv = 0``) and `frozen`."""
    sphere = np.zeros((2, 9))
    sphere[0, :4], sphere[1, 4:8] = y[:4], y[4:8]
    return np.concatenate([J, sphere, frozen])


def _arc_tangent(params: Params, y: np.ndarray, orient: np.ndarray) -> np.ndarray:
    """The unit tangent of the branch at ``y`` in ``(k, v, lambda)``, along `orient`."""
    _G, J = _arc_system(params, y)
    t = np.linalg.svd(_arc_rows(y, J, _frozen_rows(y, symmetries(params))))[2][-1]
    return t if t @ orient >= 0 else -t


def _arc_correct(params: Params, pred: np.ndarray, row: np.ndarray, value: float = 0.0):
    """Newton from `pred` onto the branch where ``row . (y - pred) = value`` (or, for a
    `row` that is a function, where ``row(y) = value``); None if it does not converge to
    a critical point or leaves the neighbourhood of `pred`."""
    y = pred.copy()
    frozen = _frozen_rows(pred, symmetries(params))
    reach = 0.0
    last = np.inf
    for _ in range(12):
        G, J = _arc_system(params, y)
        scale = 1.0 + float(np.abs(J[:, :8]).max())
        if last < 1e-12:  # Newton has converged: is it at a critical point?
            return y if float(np.abs(G).max()) <= 1e-10 * scale else None
        A = _arc_rows(y, J, frozen)
        b = np.zeros(A.shape[0])
        b[:8] = -G
        if callable(row):
            r, dr = row(y)
            A, b = np.concatenate([A, dr[None]]), np.concatenate([b, [value - r]])
        else:
            A, b = np.concatenate([A, row[None]]), np.concatenate([b, [value - row @ (y - pred)]])
        step = np.linalg.lstsq(A, b, rcond=None)[0]
        y = y + step
        y[:4] /= np.linalg.norm(y[:4])
        y[4:8] /= np.linalg.norm(y[4:8])
        reach = max(reach, float(np.linalg.norm(y - pred)))
        if not np.isfinite(y).all() or y[8] <= 0 or reach > 0.5:
            return None
        last = float(np.linalg.norm(step))
    return None


def _arc_vertex(params: Params, y: np.ndarray, t: np.ndarray, lo: float, hi: float, sign: float):
    """The extremum of ``lambda`` along the branch between ``y + lo t`` and ``y + hi t``.

    Brent's method on ``lambda`` along the arc (each point corrected onto the branch in
    the hyperplane normal to `t` through ``y + s t``), to ``1e-9 (hi - lo)``; `sign` is
    ``+1`` for a maximum. Returns the point there, its ``lambda`` and the error of that
    ``lambda``: the curvature of ``lambda`` there times the square of Brent's tolerance,
    plus the rounding of ``lambda`` (``64 eps``). None where the extremum is not well
    inside the interval (within ``1e-4`` of its width from an edge: the search has no
    extremum to find there) or a point cannot be corrected.
    """
    from scipy.optimize import minimize_scalar

    width = hi - lo

    def point(s):
        q = _arc_correct(params, y + s * t, t)
        return q if q is not None and np.linalg.norm(q - (y + s * t)) <= width else None

    def cost(s):
        q = point(s)
        return np.inf if q is None else -sign * q[8]

    tol = 1e-9 * width
    res = minimize_scalar(cost, bounds=(lo, hi), method="bounded", options={"xatol": tol})
    s = float(res.x)
    inside = min(s - lo, hi - s)
    if inside <= 1e-4 * width:
        return None
    e = 0.05 * inside
    pts = [point(s - e), point(s), point(s + e)]
    if any(q is None for q in pts):
        return None
    lam = np.array([q[8] for q in pts])
    rounding = 64 * np.finfo(float).eps * lam[1]
    if sign * (max(sign * lam[0], sign * lam[2]) * sign - lam[1]) > rounding:
        return None  # a neighbour beyond it: not the extremum
    curvature = abs(lam[0] - 2 * lam[1] + lam[2]) / (e * e)
    return pts[1], float(lam[1]), float(rounding + curvature * tol * tol)


def _overlap_coordinate(c: int):
    """Overlap `c` of ``y = (k, v, lambda)`` and its gradient, as a function of ``y``
    (``k* = e1``, ``v* = e2``)."""

    def overlap(y):
        k, v = y[:4], y[4:8]
        grad = np.zeros(9)
        if c == 4:
            grad[:4], grad[4:8] = v, k
            return float(k @ v), grad
        i = {0: 0, 1: 5, 2: 4, 3: 1}[c]
        grad[i] = 1.0
        return float(y[i]), grad

    return overlap


def _perp_coordinate(c: int, w: np.ndarray):
    """The component of ``k`` (``c = 0``) or ``v`` (``c = 1``) along the unit direction
    `w` of the plane ``(e3, e4)``, and its gradient, as a function of ``y``."""
    grad = np.zeros(9)
    grad[4 * c + 2 : 4 * c + 4] = w

    def perp(y):
        return float(grad @ y), grad

    return perp


def _mirror(y: np.ndarray, q: np.ndarray, group: np.ndarray):
    """Whether ``q`` is across a mirror from ``y``: the coordinates a symmetry flips all
    change sign between them. Returns ``(coordinate, flipped overlaps)`` for the
    coordinate that changes most (:func:`_overlap_coordinate`, :func:`_perp_coordinate`),
    or None.

    The symmetries are the sign changes of the overlaps (``SYMMETRIES``) and the
    reflections of the plane ``(e3, e4)``, which leave the overlaps alone: across the
    line of the larger perpendicular direction (a branch meeting one with ``r`` one
    less) or through the origin (meeting one in ``span{k*, v*}``).
    """

    ov_y, ov_q = to_overlaps(np.stack([y[:8], q[:8]], axis=1)).T
    for g in group[1:]:
        flipped = g < 0
        big = flipped & (np.maximum(np.abs(ov_y), np.abs(ov_q)) > 1e-9)
        if big.any() and np.all(ov_y[big] * ov_q[big] < 0):
            c = int(np.argmax(np.where(flipped, np.abs(ov_y - ov_q), -1.0)))
            return _overlap_coordinate(c), flipped
    perp_y = np.array([[y[2], y[3]], [y[6], y[7]]])
    perp_q = np.array([[q[2], q[3]], [q[6], q[7]]])
    w = np.linalg.svd(perp_y)[2]  # rows: the larger direction, then the smaller
    for axes in ([1], [0, 1]):
        a_y, a_q = (perp_y @ w[axes].T).ravel(), (perp_q @ w[axes].T).ravel()
        big = np.maximum(np.abs(a_y), np.abs(a_q)) > 1e-9
        if big.any() and np.all(a_y[big] * a_q[big] < 0):
            j = int(np.argmax(np.where(big, np.abs(a_y - a_q), -1.0)))
            return _perp_coordinate(j // len(axes), w[axes[j % len(axes)]]), None
    return None


def _arc_meeting(params: Params, y: np.ndarray, q: np.ndarray, row, flipped):
    """Where the branch from ``y`` to its mirror image ``q`` crosses the fixed points of
    the mirror: a pitchfork off the more symmetric branch through them.

    The branch is a graph over the flipped coordinate `row` (:func:`_mirror`), and
    ``lambda`` and the overlaps are even in it (bar the `flipped` overlaps, which vanish
    there): ``lambda(e) = lambda_p + c_2 e^2 + c_4 e^4 + ...``, extrapolated (Richardson,
    two levels) from ``e, e/2, e/4``. ``e`` is at most 0.01: not smaller, since fixing
    the flipped coordinate does not pin the point along the symmetric branch at the
    meeting (the system is singular there, its condition ``~ 1/e``). Returns
    ``lambda_p``, its error (the change between the last two levels of extrapolation)
    and the overlaps at the meeting; None on failure.
    """

    r_y, r_q = row(y)[0], row(q)[0]
    e = min(abs(r_y), 0.01)
    pts = []
    pred = y + (r_y - np.sign(r_y) * e) / (r_y - r_q) * (q - y)  # linear in the coordinate
    for m in (1.0, 0.5, 0.25):
        got = _arc_correct(params, pred, row, np.sign(r_y) * m * e)
        if got is None:
            return None
        pts.append(got)
        pred = got
    lam = np.array([p[8] for p in pts])
    ov = to_overlaps(np.stack([p[:8] for p in pts], axis=1)).T

    def extrapolate(f):
        r1 = (4 * f[1] - f[0]) / 3, (4 * f[2] - f[1]) / 3
        return (16 * r1[1] - r1[0]) / 15, r1[1]

    lam_p, lam_1 = extrapolate(lam)
    err = max(abs(lam_p - lam_1), 64 * np.finfo(float).eps * lam_p)
    at = extrapolate(ov)[0]
    if flipped is not None:
        at[flipped] = 0.0
    return float(lam_p), float(err), at


def _arc_through(
    params: Params, k, v, lam: float, prev, goal: float, edge: float, path: list | None = None
):
    """Follow the branch from ``(k, v)`` at `lam` in arc length where the corrector in
    ``lambda`` fails.

    The direction is the one in which ``lambda`` moves towards `goal`. Returns
    ``("passed", y)`` once ``lambda`` is past `goal` or `edge` (the end of the grid);
    where ``lambda`` turns back, ``("fold", y, lam, err, at)`` (the extremum of ``lambda``
    along the branch) or ``("meets", y, lam, err, at)`` (the branch runs into its mirror
    image through a point a symmetry fixes: a pitchfork off the branch through ``at``);
    or ``("lost", y)``. ``y`` is the last point before the end, ``at`` the overlaps there.
    Every point reached is appended to `path`, if given.
    """

    sign = 1.0 if goal > lam else -1.0
    y = np.concatenate([k, v, [lam]])
    orient = np.zeros(9)
    orient[8] = sign
    if prev is not None:  # the secant of the last step says which way the branch runs
        orient = y - np.concatenate([prev[0], prev[1], [lam - prev[2]]])
    t = _arc_tangent(params, y, orient)
    ds = min(_MAX_ARC_STEP, max(1e-4, abs(goal - lam) / max(abs(t[8]), 1e-12)))
    for _ in range(_MAX_ARC_STEPS):
        q = _arc_correct(params, y + ds * t, t)
        if q is None or np.linalg.norm(q - y) > 2 * ds:
            ds /= 2
            if ds < 1e-8:
                return ("lost", y)
            continue
        tq = _arc_tangent(params, q, t)
        if sign * tq[8] < 0:  # lambda turns back between y and q
            mirror = _mirror(y, q, symmetries(params))
            if mirror is not None:
                got = _arc_meeting(params, y, q, *mirror)
                return ("lost", y) if got is None else ("meets", y, *got)
            reach = float(np.linalg.norm(q - y))  # the extremum is between y and q
            got = _arc_vertex(params, y, t, -0.5 * reach, 1.5 * reach, sign)
            if got is None:
                return ("lost", y)
            top, lam_v, err = got
            return ("fold", y, lam_v, err, to_overlaps(top[:8, None])[:, 0])
        y, t = q, tq
        if path is not None:
            path.append(y)
        if sign * (y[8] - goal) >= 0 or sign * (y[8] - edge) >= 0:
            return ("passed", y)
        ds = min(1.5 * ds, _MAX_ARC_STEP)
    return ("lost", y)


def _isotropy(k: np.ndarray, v: np.ndarray, group: np.ndarray, tol: float = 1e-6) -> tuple:
    """The symmetry type of ``(k, v)``: ``dim span{k, v, k*, v*}`` and the overlap sign
    changes (rows of ``SYMMETRIES``) that fix its overlaps, within `tol`."""

    ov = to_overlaps(np.concatenate([k, v])[:, None])[:, 0]
    sv = np.linalg.svd(np.array([[k[2], k[3]], [v[2], v[3]]]), compute_uv=False)
    return 2 + int(np.sum(sv > tol)), _fixing(ov, tol, group)


def _fixing(ov: np.ndarray, tol: float, group: np.ndarray) -> frozenset:
    """The rows of ``SYMMETRIES`` (the identity included) whose sign changes fix ``ov``:
    the overlaps they flip are zero within `tol`."""
    return frozenset(i for i, g in enumerate(group) if np.all(np.abs(ov[g < 0]) <= tol))


def _more_symmetric(now: tuple, before: tuple) -> bool:
    """Whether the isotropy `now` (:func:`_isotropy`) is strictly larger than `before`."""
    return now[0] < before[0] or (now[1] > before[1])


def _follow(params: Params, k, v, grid: np.ndarray, min_step: float):
    """Follow one critical point along `grid` (either direction).

    Where the corrector in ``lambda`` fails at the smallest step, the branch is followed
    in arc length (:func:`_arc_through`): past the hard stretch (the corrector resumes
    there), or to where ``lambda`` turns back, a fold or a meeting with another branch,
    located at the extremum of ``lambda`` along the branch.

    Returns the records at the grid temperatures reached (plus, where the branch ends
    inside the grid, its last point before the end), those temperatures, how it ended
    (``"range"``, ``"fold"``, ``"meets"`` or ``"lost"``), and for an end inside the grid
    ``(bracket, at)``: the interval of ``lambda`` that holds the end and the overlaps of
    the point where it is (None for ``"lost"``).
    """
    records = [classify(params.replace(lam=float(grid[0])), k, v)]
    lams = [float(grid[0])]
    prev = None
    lam_now = grid[0]
    arcs = 0
    for target in grid[1:]:
        ok = False
        while not ok:
            h = target - lam_now
            halvings = 0
            while abs(h) >= min_step * abs(lam_now) and halvings <= _MAX_HALVINGS:
                # the whole step lands on the grid point itself, not on a rounding of it
                lam_try = target if h == target - lam_now else lam_now + h
                res = _corrector(params, k, v, prev, lam_try, h)
                group = symmetries(params)
                if res is not None and _more_symmetric(
                    _isotropy(*res, group), _isotropy(k, v, group)
                ):
                    # the step landed on a more symmetric branch: a pitchfork in between?
                    out = _arc_through(
                        params, k, v, float(lam_now), prev, float(lam_try), float(grid[-1])
                    )
                    if out[0] == "meets":
                        return _end(params, records, lams, out)
                if res is not None:
                    prev = (k, v, h)
                    k, v = res
                    lam_now = lam_try
                    break
                h /= 2
                halvings += 1
            else:  # the corrector failed at the smallest step: follow the arc length
                arcs += 1
                goal = float(target)
                out = (
                    _arc_through(params, k, v, float(lam_now), prev, goal, float(grid[-1]))
                    if arcs <= _MAX_ARCS
                    else ("lost", None)
                )
                if out[0] == "passed":  # the branch goes on: the corrector resumes from there
                    y = out[1]
                    k, v, lam_now, prev = y[:4], y[4:8], float(y[8]), None
                    ok = np.isclose(lam_now, target, rtol=1e-12)
                    continue
                if out[0] == "lost":
                    out = ("lost", np.concatenate([k, v, [lam_now]]), *sorted((lam_now, goal)))
                return _end(params, records, lams, out)
            ok = np.isclose(lam_now, target, rtol=1e-12)
        records.append(classify(params.replace(lam=float(target)), k, v))
        lams.append(float(target))
    return records, lams, "range", None


def _end(params: Params, records: list, lams: list, out: tuple):
    """:func:`_follow`'s return where the branch ends inside the grid (`out` from
    :func:`_arc_through`; for ``"lost"``, ``("lost", y, lo, hi)``)."""
    y = out[1]
    k, v, lam_now = y[:4], y[4:8], float(y[8])
    if out[0] == "lost":
        end = ((float(out[2]), float(out[3])), None)
    else:
        end = ((out[2] - out[3], out[2] + out[3]), out[4])
    if not np.isclose(lam_now, lams[-1], rtol=1e-12):
        records.append(classify(params.replace(lam=lam_now), k, v))
        lams.append(lam_now)
    return records, lams, out[0], end


def continuation(
    params: Params,
    lam_range: tuple[float, float],
    *,
    steps: int = 60,
    seeds: int = 3,
    points: CriticalPoints | None = None,
    min_step: float = 1e-4,
) -> Continuation:
    """Follow every critical point of the full space as ``lambda`` varies over `lam_range`.

    The search (:func:`critical_points`) runs at `seeds` temperatures spread over the
    range; each point it finds that no branch covers yet is followed both ways on a
    logarithmic grid of `steps` temperatures: a secant predictor on the explicit
    coordinates, a damped Riemannian Newton corrector that must stay on the branch, and
    step halving (at most four times, and not below a relative step `min_step`). Where
    that fails, the branch is followed in arc length (pseudo-arclength: Newton on the
    gradient and a hyperplane normal to the branch's tangent, inside the branch's
    symmetry subspace) until the corrector in ``lambda`` can take over again, or to
    where ``lambda`` turns back: a meeting with a more symmetric branch (a pitchfork) or
    a fold. A step of the corrector in ``lambda`` that lands on a more symmetric branch
    is retraced in arc length, so that a branch never continues on another through a
    pitchfork. Index changes, meetings and folds are recorded as events. Degenerate
    points (a continuum of critical points, as at very small ``gamma``, where the search
    returns hundreds of representatives) are counted in ``not_followed`` instead: a
    continuum has no branch to follow.

    Parameters
    ----------
    params : Params
    lam_range : (float, float)
        The range of ``lambda`` (either order).
    steps : int
        Intervals of the grid.
    seeds : int
        Temperatures at which new branches are looked for (at least the two ends),
        ``1 <= seeds <= 100``.
    points : CriticalPoints, optional
        The points at the smallest ``lambda`` (default: the search there).
    min_step : float

    Returns
    -------
    Continuation

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.landscape import continuation
    >>> c = continuation(Params.paper(), (0.1, 0.2), steps=4, seeds=2)
    >>> len(c.branches) >= 10
    True
    """
    params = check_params(params)
    lo, hi = temperature_range(lam_range)
    steps = positive_int(steps, "steps", upper=10**5)
    seeds = max(2, positive_int(seeds, "seeds", upper=100))
    grid = np.geomspace(lo, hi, steps + 1)
    seed_at = sorted({round(float(x)) for x in np.linspace(0, steps, seeds)})
    group = symmetries(params)  # the model's: softmax's weights are not odd
    branches: list[Branch] = []
    events: list[dict] = []
    not_followed: list[dict] = []
    for si in seed_at:
        lam_s = float(grid[si])
        found = (
            points
            if (si == 0 and points is not None)
            else critical_points(params.replace(lam=lam_s), rng=0)
        )
        isolated = [q for q in found if q.nullity <= q.orbit_dimension]
        if len(isolated) < len(found):
            not_followed.append({"lam": lam_s, "count": len(found) - len(isolated)})
        for q in isolated:
            covered = any(
                b.lam[0] <= lam_s <= b.lam[-1]
                and same_point(
                    b.overlaps[int(np.argmin(np.abs(b.lam - lam_s)))], q.overlaps, group=group
                )
                for b in branches
            )
            if covered:
                continue
            k, v = q.vectors
            fwd, lam_f, end, end_bracket = _follow(params, k, v, grid[si:], min_step)
            bwd, lam_r, start, start_bracket = _follow(params, k, v, grid[si::-1], min_step)
            recs = bwd[::-1] + fwd[1:]
            lam_b = np.array(lam_r[::-1] + lam_f[1:])
            b = len(branches)
            new = Branch(
                lam=lam_b,
                overlaps=np.array([r.overlaps for r in recs]),
                risk=np.array([r.risk for r in recs]),
                index=np.array([r.index for r in recs]),
                kind=[r.kind for r in recs],
                start=start,
                end=end,
                seed=lam_s,
                vectors=np.array([r.vectors for r in recs]),
            )
            new, joined = _trim_covered(new, branches, group)
            if new is None:  # all of it is a branch already followed
                continue
            branches.append(new)
            for side, bracket, other in joined:  # where it runs into a branch followed before
                events.append(
                    {
                        "lam": 0.5 * (bracket[0] + bracket[1]),
                        "branch": b,
                        "type": "meets",
                        "side": side,
                        "bracket": bracket,
                        "other": other,
                    }
                )
            cut = {side for side, _bracket, _other in joined}  # those ends are the meetings
            start_bracket = None if "start" in cut else start_bracket
            end_bracket = None if "end" in cut else end_bracket
            for side, kind, got in (
                ("start", new.start, start_bracket),
                ("end", new.end, end_bracket),
            ):
                if got is None:
                    continue
                bracket, at = got
                ev = {
                    "lam": 0.5 * (bracket[0] + bracket[1]),
                    "branch": b,
                    "type": kind,
                    "side": side,
                    "bracket": bracket,
                }
                if at is not None:
                    ev["at"] = np.asarray(at, dtype=float)
                events.append(ev)
            idx = branches[-1].index
            for t in np.flatnonzero(np.diff(idx) != 0):
                for i_from, i_to, bracket in _locate_index_changes(params, branches[-1], int(t)):
                    events.append(
                        {
                            "lam": 0.5 * (bracket[0] + bracket[1]),
                            "branch": b,
                            "type": "index change",
                            "from": i_from,
                            "to": i_to,
                            "bracket": bracket,
                        }
                    )
    # branches that meet: the same point (up to symmetry) at the same lambda
    for i in range(len(branches)):
        for j in range(i + 1, len(branches)):
            bi, bj = branches[i], branches[j]
            common = np.intersect1d(bi.lam, bj.lam)
            for lam_c in common:
                oi = bi.overlaps[int(np.argmin(np.abs(bi.lam - lam_c)))]
                oj = bj.overlaps[int(np.argmin(np.abs(bj.lam - lam_c)))]
                if same_point(oi, oj, group=group):
                    events.append({"lam": float(lam_c), "branch": i, "type": "meets", "other": j})
                    break
    # a branch that meets another where lambda turns back: which branch holds that point
    for e in events:
        if e["type"] == "meets" and "at" in e:
            e["other"] = next(
                (
                    j
                    for j, bj in enumerate(branches)
                    if j != e["branch"]
                    and bj.lam[0] - 1e-9 <= e["lam"] <= bj.lam[-1] + 1e-9
                    and same_point(
                        bj.overlaps[int(np.argmin(np.abs(bj.lam - e["lam"])))],
                        e["at"],
                        1e-2,
                        group,
                    )
                ),
                None,
            )
    events.sort(key=lambda e: e["lam"])
    return Continuation(branches, events, not_followed)
