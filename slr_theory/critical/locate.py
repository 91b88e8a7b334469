"""The locator: Riemannian Newton from structured and random starts, folds of the sphere product resolved, every point polished and classified."""

from __future__ import annotations

import numpy as np
from scipy.optimize import OptimizeResult

from ..geometry import span_dimension, vector_derivatives
from ..manifold import ORIGIN_AND_CORNERS, manifold_critical_overlaps
from ..params import Params, check_params
from ..trajectory import Progress, to_overlaps, to_vectors
from ..validate import (  # MAX_STARTS: the bound of the starts, with those the CLI quotes
    MAX_STARTS,
    as_array,
    positive_int,
    positive_real,
    progress_option,
    random_generator,
)
from .classify import (
    classify_at,
    gaussian_part_vanishes,
    gradient_tables,
    manifold_certificate,
    relative_gradient,
    tangent_norm,
)
from .points import GRAD_TOL, MANIFOLD_MERGE_TOL, MERGE_TOL, SETTLED, CriticalPoints, SearchReport
from .symmetry import canonical, orbit_images, symmetries

__all__ = ["FOLD", "MAX_ITERATIONS", "MAX_STARTS", "critical_points", "polish"]


#: Newton iterations accepted by :func:`polish` and :func:`critical_points`.
MAX_ITERATIONS = 10**5


#: The largest damping of the Newton iterations (relative to the largest Hessian eigenvalue).
MAX_DAMPING = 1e8


#: A tangent term ``R_i T_i`` of the gradient whose direction ``T_i`` (``v - rho k``,
#: ``v* - nu v``, ...) is shorter than this lies on a fold of the overlap map
#: (``k = -v``, ``v = v*``, ...), where the exact ``T_i`` is 0.
FOLD = 1e-12


def _tangent_terms(K: np.ndarray, V: np.ndarray, ov: np.ndarray) -> tuple:
    """The directions ``T_i`` ``(n, 5, 4)`` with ``grad_k = sum_i R_i T_i^k`` (rows kappa,
    nu, theta, eta, rho; zero where ``R_i`` does not enter that side) and ``grad_v``."""
    n = K.shape[0]
    e1, e2 = np.eye(4)[:1], np.eye(4)[1:2]
    tk, tv = np.zeros((n, 5, 4)), np.zeros((n, 5, 4))
    tk[:, 0] = e1 - ov[:, 0, None] * K
    tk[:, 3] = e2 - ov[:, 3, None] * K
    tk[:, 4] = V - ov[:, 4, None] * K
    tv[:, 2] = e1 - ov[:, 2, None] * V
    tv[:, 1] = e2 - ov[:, 1, None] * V
    tv[:, 4] = K - ov[:, 4, None] * V
    return tk, tv


def _folds(tk: np.ndarray, tv: np.ndarray) -> np.ndarray:
    """``(n, 5)``: which overlaps sit on a fold (:data:`FOLD`; ``rho`` on either side),
    from the directions :func:`_tangent_terms` gives."""
    short = lambda T: np.linalg.norm(T, axis=2) <= FOLD  # noqa: E731
    fk, fv = short(tk), short(tv)
    return np.stack([fk[:, 0], fv[:, 1], fv[:, 2], fk[:, 3], fk[:, 4] | fv[:, 4]], axis=1)


def _snap_to_folds(K: np.ndarray, V: np.ndarray, ov: np.ndarray, fold: np.ndarray) -> tuple:
    """The points moved onto the folds they are within rounding of: ``k = sgn(kappa) k*``,
    ``k = sgn(eta) v*``, ``v = sgn(nu) v*``, ``v = sgn(theta) k*``, then ``v = sgn(rho) k``
    (or ``k = sgn(rho) v`` where ``v`` is already placed)."""
    K, V = K.copy(), V.copy()
    sgn = np.where(ov >= 0, 1.0, -1.0)
    eye = np.eye(4)
    moved_k, moved_v = np.zeros(len(K), bool), np.zeros(len(K), bool)
    for col, basis, vecs, moved in (
        (0, 0, K, moved_k),
        (3, 1, K, moved_k),
        (1, 1, V, moved_v),
        (2, 0, V, moved_v),
    ):
        at = fold[:, col]
        vecs[at] = sgn[at, col, None] * eye[basis]
        moved |= at
    at = fold[:, 4]
    free_v = at & ~moved_v
    V[free_v] = sgn[free_v, 4, None] * K[free_v]
    free_k = at & moved_v & ~moved_k
    K[free_k] = sgn[free_k, 4, None] * V[free_k]
    return K, V


def _resolved_on_folds(table, K: np.ndarray, V: np.ndarray, tol: float) -> np.ndarray:
    """Whether each point on a fold stays critical once the fold's terms are read exactly.

    On a fold a term ``R_i T_i`` is computed as rounding of order ``eps R_i`` and hides what
    the other terms say beneath it. Its exact value is 0 on the fold, but a step ``epsilon``
    off it makes it ``R_i`` times a direction, so it can absorb a small remainder:

    - ``k = +-k*`` or ``k = +-v*`` (a fold of ``kappa`` or ``eta``): ``T_i^k = -+epsilon``
      for any ``epsilon`` orthogonal to ``k``, so a critical point lies within
      ``|remainder| / |R_i|`` whatever ``k``'s remainder is; likewise ``v = +-v*``, ``+-k*``
      for ``v``'s. That side is not held to anything.
    - ``k = s v`` (``rho = s = +-1``) alone: ``(T_rho^k, T_rho^v) = (-s epsilon,
      epsilon)``, which absorbs a remainder with ``g_k = -s g_v`` and nothing else; the
      point is critical only if ``|g_k + s g_v| <= tol`` of the two sides' term sizes. On
      ReLU's fold ``k = -v``, where the informative key is dead, that combination is the
      informative part's, about ``1e-73`` and of order one against its own terms: a
      plateau (the distractors' ``R_rho``, of order one, had hidden it). At erf's maximum
      ``k = v = k*`` at ``lambda = 0.9`` it is ``g_v``'s rounding: critical, as the census
      proves.
    - Other sides: their gradient, held to `tol` of their terms as before.

    Each point is first moved onto the folds it is within :data:`FOLD` of, and its
    overlaps within that of 0 or ``+-1`` onto those (:func:`_snap_to_folds`): a partial
    whose terms all carry such an overlap is then its exact 0, not a remainder as small
    as its own terms. Points on no fold: True.
    """
    ov = to_overlaps(np.concatenate([K.T, V.T])).T
    fold = _folds(*_tangent_terms(K, V, ov))
    out = np.ones(len(K), dtype=bool)
    rows = np.flatnonzero(fold.any(axis=1))
    if rows.size == 0:
        return out
    Ks, Vs = _snap_to_folds(K[rows], V[rows], ov[rows], fold[rows])
    ovs = to_overlaps(np.concatenate([Ks.T, Vs.T])).T
    ovs = np.where(np.abs(ovs) <= FOLD, 0.0, ovs)
    ovs = np.where(1.0 - np.abs(ovs) <= FOLD, np.sign(ovs), ovs)
    phi, size = table.features_and_sizes(ovs.T.copy())
    g, m = (table.C @ phi).T, (np.abs(table.C) @ size).T
    terms = _tangent_terms(Ks, Vs, ovs)
    on = _folds(*terms) | fold[rows]
    a = np.abs(ovs)
    sides = []
    for T in terms:
        used = ~on & (np.linalg.norm(T, axis=2) > 0.0)
        grad = np.einsum("ni,nij->nj", np.where(used, g, 0.0), T)
        sides.append((grad, np.sum(np.where(used, (1.0 + a) * m, 0.0), axis=1)))
    (gk, sk), (gv, sv) = sides
    tiny = np.finfo(float).smallest_subnormal
    free_k, free_v, rho = on[:, 0] | on[:, 3], on[:, 1] | on[:, 2], on[:, 4]
    ok_k = free_k | (tangent_norm(gk) <= tol * (sk + tiny))
    ok_v = free_v | (tangent_norm(gv) <= tol * (sv + tiny))
    s = np.where(ovs[:, 4] >= 0, 1.0, -1.0)[:, None]
    ok_rho = tangent_norm(gk + s * gv) <= tol * (sk + sv + tiny)
    out[rows] = np.where(rho, free_k | free_v | ok_rho, ok_k & ok_v)
    return out


def _direction(x, name: str) -> np.ndarray:
    """A finite non-zero vector of ``R^4``, normalised, as a batch of one."""
    x = as_array(x, name, allow_nan=False)
    if x.shape != (4,):
        raise ValueError(f"`{name}` must have shape (4,), got {x.shape}.")
    norm = np.linalg.norm(x)
    if not 0.0 < norm < np.inf:
        raise ValueError(f"`{name}` must be a non-zero finite vector, got norm {norm!r}.")
    return (x / norm)[None]


def polish(
    params: Params, k, v, *, tol: float = GRAD_TOL, iterations: int = 60, damping: float = 1e-3
):
    """Damped Riemannian Newton from one point ``k, v`` in ``R^4``; the critical point or None.

    Parameters
    ----------
    params : Params
    k, v : array_like, shape (4,)
        Non-zero vectors in the basis ``(k*, v*, e3, e4)`` (normalised here).
    tol : float
        Relative-gradient threshold (module docstring), ``> 0``.
    iterations : int
        Newton iterations, ``1 <= iterations <= MAX_ITERATIONS`` (1e5).
    damping : float
        Initial damping relative to the largest Hessian eigenvalue, ``0 < damping <=
        1e8``; divided by 10 after each step that lowers the gradient (pure Newton below
        1e-9), multiplied by 10 otherwise. A start close to the point (a continuation's
        prediction) converges in fewest iterations with a small one.

    Returns
    -------
    tuple of two ndarray, or None
        The polished ``(k, v)`` if it is critical (relative gradient <= `tol`, Newton
        step below ``1e-7``), else None.
    """
    params = check_params(params)
    K, V = _direction(k, "k"), _direction(v, "v")
    tol = positive_real(tol, "tol")
    iterations = positive_int(iterations, "iterations", upper=MAX_ITERATIONS)
    damping = positive_real(damping, "damping", upper=MAX_DAMPING)
    tables = gradient_tables(params, loop=False)
    K, V, ov, _gn, rel, step = _newton(tables, K, V, iterations, mu0=damping)
    ok = (rel[0] <= tol) & (step[0] < 1e-7) & (span_dimension(K, V)[0] <= params.d)
    ok = ok and bool(_resolved_on_folds(tables[0], K, V, tol)[0])
    if ok and (params.lam * np.sqrt(params.d / 2.0) * ov[0, 0]) ** 2 > 600.0:
        ok = bool(gaussian_part_vanishes(params, tables[0], K, V, tol)[0])
    return (K[0], V[0]) if ok else None


def _newton(tables, K: np.ndarray, V: np.ndarray, iterations: int, update=None, mu0=1e-3):
    """Damped Riemannian Newton on ``S^3 x S^3`` for a batch; returns the end points and
    the last pure Newton step length of each (its size decides convergence).

    The damping starts at `mu0` (relative to the largest eigenvalue), is divided by 10
    after every step that lowers the gradient and multiplied by 10 otherwise.
    ``update(n)``, if given, is told of every iteration; an early stop (all converged)
    reports the iterations it saved, so the count always ends at `iterations`. A row whose
    pure Newton step is below 1e-14 and whose relative gradient is below `SETTLED` has
    converged and is not stepped again (both: at a degenerate point the Newton step ignores
    the flat directions, where the gradient may not be small yet). When every row still
    stepped is refused at the largest damping, the iterations stop too: the state, damping
    included, is what it was, so every later iteration would repeat that one."""
    K, V = K.copy(), V.copy()
    n = K.shape[0]
    mu = np.full(n, mu0)
    ov, _g, G, Hr, _ab, mag = vector_derivatives(tables, K, V)
    gn = np.linalg.norm(G, axis=1)
    rel = relative_gradient(ov, G, mag)
    newton_len = np.full(n, np.inf)
    active = np.ones(n, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for done in range(1, iterations + 1):
            i = np.flatnonzero(active)
            stuck = False
            w, U = np.linalg.eigh(Hr[i])
            c = (G[i, None, :] @ U)[:, 0]
            wmax = np.abs(w).max(axis=1, keepdims=True)
            keep = np.abs(w) > 1e-14 * wmax
            safe_w = np.where(keep, w, 1.0)
            newton = -(U @ np.where(keep, c / safe_w, 0.0)[:, :, None])[:, :, 0]
            newton_len[i] = np.linalg.norm(newton, axis=1)
            moving = (newton_len[i] >= 1e-14) | (rel[i] >= SETTLED)
            active[i[~moving]] = False
            i, newton, U, w, c, wmax, keep = (x[moving] for x in (i, newton, U, w, c, wmax, keep))
            if i.size:
                damp = np.where(keep, w * c / (w * w + (mu[i, None] * wmax) ** 2), 0.0)
                damped = -(U @ damp[:, :, None])[:, :, 0]
                xi = np.where((mu[i] == 0)[:, None], newton, damped)
                size = np.linalg.norm(xi, axis=1, keepdims=True)
                xi = xi * np.minimum(1.0, 0.5 / np.maximum(size, np.finfo(float).tiny))
                K2 = K[i] + xi[:, :4]
                V2 = V[i] + xi[:, 4:]
                K2 /= np.linalg.norm(K2, axis=1, keepdims=True)
                V2 /= np.linalg.norm(V2, axis=1, keepdims=True)
                ov2, _g2, G2, Hr2, _ab2, mag2 = vector_derivatives(tables, K2, V2)
                gn2 = np.linalg.norm(G2, axis=1)
                better = gn2 < gn[i]
                j = i[better]
                K[j], V[j], ov[j], G[j], Hr[j], gn[j] = (
                    K2[better],
                    V2[better],
                    ov2[better],
                    G2[better],
                    Hr2[better],
                    gn2[better],
                )
                rel[j] = relative_gradient(ov2[better], G2[better], mag2[better])
                # every row refused at the largest damping: each is where it was, with the same
                # damping, so every later iteration would repeat this one (rows stepped in
                # another batch could round otherwise: only the whole batch stops)
                stuck = not better.any() and bool(np.all(mu[i] == MAX_DAMPING))
                m = np.where(better, mu[i] / 10, np.clip(mu[i] * 10, 1e-8, MAX_DAMPING))
                mu[i] = np.where(m < 1e-9, 0.0, m)
            converged = stuck or not active.any()
            if update is not None:
                update(iterations - done + 1 if converged else 1)
            if converged:
                break
    return K, V, ov, gn, rel, newton_len  # each row's as of its last accepted step


def structured_starts(grid: int, m_points: np.ndarray | None = None) -> np.ndarray:
    """M's critical points, a grid on M, and points with ``k, v`` in ``span{k*, v*}``.

    M's points are the origin and the corners, then those of `m_points` (rows ``(kappa,
    nu)``, :func:`manifold_critical_overlaps`) that are neither: the search then starts
    on every critical point of M, and its list always holds them.
    """
    first = ORIGIN_AND_CORNERS
    if m_points is not None:
        extra = [row for row in m_points if not np.any(np.all(first[:, :2] == row, axis=1))]
        more = np.zeros((len(extra), 5))
        more[:, :2] = np.reshape(extra, (-1, 2))
        first = np.concatenate([first, more])
    t = np.linspace(-0.95, 0.95, grid)
    kk, nn = np.meshgrid(t, t)
    on_m = np.zeros((kk.size, 5))
    on_m[:, 0], on_m[:, 1] = kk.ravel(), nn.ravel()
    ang = np.linspace(0, 2 * np.pi, grid, endpoint=False) + 0.1
    a1, a2 = np.meshgrid(ang, ang)
    span = np.stack(
        [np.cos(a1), np.cos(a2), np.sin(a2), np.sin(a1), np.cos(a1 - a2)], axis=-1
    ).reshape(-1, 5)
    special = [[0, 0, 0, 0, 1.0], [0, 0, 0, 0, -1.0], [0, 0, 1, 1, 0], [0, 0, 1, -1, 0]]
    # r = 3: one vector in span{k*, v*}, the other leaving it by an angle b
    ang5 = np.linspace(0, 2 * np.pi, 5, endpoint=False) + 0.3
    tilt = np.array([0.4, 0.9, 1.3])
    a1, a2, b = (x.ravel() for x in np.meshgrid(ang5, ang5, tilt))
    c = np.cos(b)
    inplane = np.cos(a1) * np.cos(a2) * c + np.sin(a1) * np.sin(a2) * c  # k . v
    k_in = np.stack([np.cos(a1), c * np.sin(a2), c * np.cos(a2), np.sin(a1), inplane], axis=-1)
    v_in = np.stack([c * np.cos(a1), np.sin(a2), np.cos(a2), c * np.sin(a1), inplane], axis=-1)
    # one vector on the other's target (k = v*, or v = k*), the other on a half circle
    # leaving the targets' span: the families of the critical manifolds of dimension d - 3
    # (k = v*, v . k* = theta) that random starts reach rarely
    phi = np.linspace(0.0, np.pi, grid + 2)[1:-1]
    z = np.zeros_like(phi)
    k_on_v = np.stack([z, z, np.cos(phi), z + 1.0, z], axis=-1)
    v_on_k = np.stack([np.cos(phi), z, z + 1.0, z, np.cos(phi)], axis=-1)
    return np.concatenate(
        [first, on_m, span, np.array(special, float), k_in, v_in, k_on_v, v_on_k]
    )


def random_starts(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    K = rng.standard_normal((n, 4))
    V = rng.standard_normal((n, 4))
    return K / np.linalg.norm(K, axis=1, keepdims=True), V / np.linalg.norm(
        V, axis=1, keepdims=True
    )


def critical_points(
    params: Params,
    where: str = "sphere",
    *,
    starts: int = 512,
    rng: np.random.Generator | int | None = 0,
    grid: int = 9,
    iterations: int = 200,
    tol: float = GRAD_TOL,
    progress=False,
) -> CriticalPoints:
    """Every critical point of the risk, on M (by proof) or on ``S^{d-1} x S^{d-1}`` (by search).

    Parameters
    ----------
    params : Params
    where : {"sphere", "manifold"}
        ``"manifold"``: the five critical points of the flow on M with the certificate
        of :func:`manifold_certificate`. ``"sphere"``: the full space (module docstring).
    starts : int
        Random starts, uniform on ``S^3 x S^3``, after the structured ones; ``0 <= starts <= 1e6``.
    rng : numpy.random.Generator or int or None
        Source (or seed) of the random starts.
    grid : int
        Size of the structured grids (``grid**2`` starts on M and in ``span{k*, v*}``);
        ``1 <= grid <= 1000``.
    iterations : int
        Newton iterations per start (damped, with a trust region of 0.5 radian);
        ``1 <= iterations <= MAX_ITERATIONS`` (1e5).
    tol : float
        A start ends at a critical point when its relative gradient (module docstring)
        is at most `tol` and its Newton step below ``1e-7`` radian.
    progress : bool or callable
        ``True`` shows a tqdm bar over the Newton iterations (all starts advance together);
        a callable is called with the number of iterations done since its last call.
        Unused for ``where="manifold"``.

    Every argument is checked whichever `where` (the manifold's uses none past it).

    Returns
    -------
    CriticalPoints
        Sorted by risk; each a :class:`CriticalPoint`.

    Raises
    ------
    ValueError
        Naming the argument, its constraint and the value given.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.critical import critical_points
    >>> on_m = critical_points(Params.paper(lam=0.1), "manifold")
    >>> [(p.overlaps[:2].tolist(), p.index) for p in on_m]  # one per symmetric pair
    [([1.0, 1.0], 0), ([0.0, 0.0], 2), ([1.0, -1.0], 797)]
    >>> full = critical_points(Params.paper(lam=0.1), starts=64)
    >>> [p.kind for p in full[:2]]  # the optimum, and a local minimum off M
    ['minimum', 'minimum (critical manifold of dimension 397)']
    """
    params = check_params(params)
    if not isinstance(where, str) or where not in ("sphere", "manifold"):
        raise ValueError(f"`where` must be 'sphere' or 'manifold', got {where!r}.")
    # every argument checked whichever `where`: one the manifold does not use is still
    # the user's, and a wrong one is a mistake to be told of, not ignored
    starts = positive_int(starts, "starts", allow_zero=True, upper=MAX_STARTS)
    grid = positive_int(grid, "grid", upper=1000)
    iterations = positive_int(iterations, "iterations", upper=MAX_ITERATIONS)
    tol = positive_real(tol, "tol")
    rng = random_generator(rng)
    progress = progress_option(progress)
    tables = gradient_tables(params)
    if where == "manifold":
        pts = []
        group, seen = symmetries(params), []
        key_free = params.model.key_free(params)
        for row in manifold_critical_overlaps(params):
            o = np.zeros(5)
            o[:2] = row
            if key_free:  # every kappa is the same point: listed at k = k*
                o[0] = 1.0
            o = canonical(o, group)  # one per orbit: (1, -1) stands for (-1, 1)
            if any(np.max(np.abs(o - q)) <= MANIFOLD_MERGE_TOL for q in seen):
                continue
            seen.append(o)
            kv = to_vectors(o.reshape(5, 1))[:, 0]
            pts.append(classify_at(params, tables, kv[:4], kv[4:]))
        pts.sort(key=lambda p: p.risk)
        return CriticalPoints(pts, params, "manifold", manifold_certificate(params))
    structured = structured_starts(grid, manifold_critical_overlaps(params))
    kv = to_vectors(structured.T.copy())
    K0 = np.concatenate([kv[:4].T, random_starts(rng, starts)[0]]) if starts else kv[:4].T
    V0 = np.concatenate([kv[4:].T, random_starts(rng, starts)[1]]) if starts else kv[4:].T
    start_ov = to_overlaps(np.concatenate([K0.T, V0.T])).T
    with Progress(progress, iterations, "critical", unit="iteration") as update:
        K, V, ov, gn, rel, step = _newton(tables, K0.copy(), V0.copy(), iterations, update)
    critical = (rel <= tol) & (step < 1e-7) & (span_dimension(K, V) <= params.d)
    if critical.any():
        critical[critical] = _resolved_on_folds(tables[0], K[critical], V[critical], tol)
    a = params.lam * np.sqrt(params.d / 2.0)
    x2 = (a * ov[:, 0]) ** 2 / (1 + 2 * (params.lam * params.gamma) ** 2)
    deep = critical & (x2 > 600.0)  # e^{-x^2} near or below underflow: decide before it
    if deep.any():
        critical[deep] = gaussian_part_vanishes(params, tables[0], K[deep], V[deep], tol)
    key_free = params.model.key_free(params)
    if key_free:  # R(k, v) = R(v): one representative key, k = k*, for every end
        K = np.zeros_like(K)
        K[:, 0] = 1.0
        ov = to_overlaps(np.concatenate([K.T, V.T])).T
    reps: list[np.ndarray] = []
    members: list[list[int]] = []
    reached = np.full(len(K), -1)
    group = symmetries(params)
    for i in np.flatnonzero(critical):
        c = canonical(ov[i], group)
        for j, r in enumerate(reps):
            if np.max(np.abs(r - c)) <= MERGE_TOL:
                members[j].append(i)
                reached[i] = j
                break
        else:
            reps.append(c)
            members.append([i])
            reached[i] = len(reps) - 1
    distinct = np.maximum.accumulate(np.where(reached >= 0, reached + 1, 0))
    points = []
    for idx in members:
        best = min(idx, key=lambda i: rel[i])
        k, v = K[best], V[best]
        target = canonical(ov[best], group)
        sign = group[int(np.argmin(np.abs(orbit_images(ov[best], group) - target).max(axis=1)))]
        if sign[0] < 0:
            k, v = -k, -v
        if sign[2] * sign[0] < 0:  # (k, v) -> (S k, -S v), S = diag(1, -1, 1, 1)
            k, v = k * np.array([1, -1, 1, 1]), -(v * np.array([1, -1, 1, 1]))
        points.append(classify_at(params, tables, k, v, starts=len(idx)))
    order = np.argsort([p.risk for p in points], kind="stable")
    points = [points[i] for i in order]
    remap = {int(old): new for new, old in enumerate(order)}
    reached = np.array([remap.get(int(r), -1) for r in reached])
    plateaus = [
        OptimizeResult(overlaps=ov[i], grad_norm=float(gn[i]), relative_gradient=float(rel[i]))
        for i in np.flatnonzero(~critical)
    ]
    report = SearchReport(
        starts=start_ov,
        reached=reached,
        distinct_after=distinct,
        structured=len(structured),
        iterations=iterations,
    )
    certificate = [
        f"{len(K)} starts ({len(structured)} structured, {starts} uniform on S^3 x S^3), "
        f"damped Riemannian Newton, {iterations} iterations each.",
        f"{len(points)} distinct critical points up to symmetry; the last new one "
        f"appeared at start {report.last_new}.",
        f"{len(plateaus)} starts ended off any critical point (plateaus or no convergence).",
    ]
    if key_free:
        certificate.append(
            "The risk does not depend on the key k (computed: dR/dkappa, dR/deta, dR/drho "
            "vanish to 1e-12 of the gradient's scale on M and off it): each point is listed "
            "at k = k* and stands for every k, a critical manifold S^{d-1} x {v's orbit}."
        )
    return CriticalPoints(points, params, "sphere", certificate, report, plateaus)
