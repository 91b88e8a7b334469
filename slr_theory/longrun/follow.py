"""The fate of every run: followed to a minimum, a saddle or the budget, and its arrival time."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..critical import critical_points, end_groups, manifold_kind, symmetries
from ..params import Params, check_params
from ..trajectory import MAX_ALPHA
from ..validate import positive_real
from .bursts import Runs, burst_starts, whole_steps
from .fates import UNLISTED, Fates, check_points, nearest, point_images
from .field import FATE_LOCAL_TOL, HORIZON
from .lines import LINE_OFF, line_arrivals, line_entry

__all__ = ["fate"]


def fate(
    params: Params,
    starts: ArrayLike,
    *,
    alpha: float | None = None,
    tol: float = 1e-3,
    points=None,
    max_exact_steps: float = 1e6,
    on_manifold: bool = False,
) -> Fates:
    """The minimum every start reaches and how long it takes, for PGD or the gradient flow.

    Each run goes on (:func:`advance`'s exact steps and modified equation for PGD; the
    same integrator on the flow's own field for ``alpha=None``) until it enters the
    `tol`-ball of a minimum or of a symmetric image, or until :data:`HORIZON`; a run
    there within `tol` of a saddle ends at it (it is on the saddle's stable manifold:
    M, for instance, which the runs that start on it never leave).

    Parameters
    ----------
    params : Params
    starts : array_like, shape ``(n, 5)``
        Feasible starting overlaps (e.g. :func:`slr_theory.sample_initial_overlaps`).
    alpha : float, optional
        PGD's step size; None for the gradient flow (times are then flow times).
    tol : float
        Radius of the balls, max-norm of the overlaps, ``0 < tol <= 0.1``.
    points : CriticalPoints, optional
        The critical points (default: :func:`slr_theory.critical_points` of `params`).
    max_exact_steps : float
        The exact steps a run may take (PGD): where the map flips or amplifies in some direction
        (a step beyond ``2 / h`` of a Hessian eigenvalue ``h``) no flow stands for it and
        a run steps exactly; beyond this budget it is left undecided (label ``-1``).
    on_manifold : bool
        Starts on M (``theta = eta = rho = 0``), which the runs never leave: the attractors
        are then the minima of the dynamics on M (:func:`slr_theory.critical.manifold_kind`),
        ``(1, 1)`` at every ``lam`` even where it is a saddle in the full space, and
        `points` defaults to ``critical_points(params, "manifold")``. That the model keeps
        M invariant is checked at every start (its field has no component off M), not
        assumed.

    Returns
    -------
    Fates

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, critical_points, sample_initial_overlaps
    >>> from slr_theory.longrun import fate
    >>> p = Params.paper(lam=0.3)
    >>> starts = sample_initial_overlaps(p, np.random.default_rng(0), 8)
    >>> f = fate(p, starts, alpha=2e-3, points=critical_points(p))
    >>> print(f.undecided, f.fractions.sum())
    0.0 1.0
    """

    params = check_params(params)
    ov = burst_starts(params, starts, "starts")
    if ov.ndim != 2:
        raise ValueError(f"`starts` must have shape (n, 5), got {ov.shape}.")
    if alpha is not None:
        alpha = positive_real(alpha, "alpha", upper=MAX_ALPHA)
    tol = positive_real(tol, "tol", upper=0.1)
    max_exact = whole_steps(max_exact_steps, "max_exact_steps")
    if not isinstance(on_manifold, (bool, np.bool_)):
        raise ValueError(f"`on_manifold` must be True or False, got {on_manifold!r}.")
    if on_manifold and np.any(ov[:, 2:] != 0.0):
        i = int(np.flatnonzero(np.any(ov[:, 2:] != 0.0, axis=1))[0])
        raise ValueError(
            "`starts` must lie on M (theta = eta = rho = 0) with on_manifold=True, got "
            f"start {i}: {ov[i].tolist()}."
        )
    if points is None:
        points = critical_points(params, "manifold" if on_manifold else "sphere")
    check_points(points)
    if on_manifold:
        attracts = [
            q.manifold_eigenvalues is not None
            and manifold_kind(q.manifold_eigenvalues) == "minimum"
            for q in points
        ]
    else:
        attracts = [q.index == 0 for q in points]
    minima = [q for q, a in zip(points, attracts, strict=True) if a]
    saddles = [q for q, a in zip(points, attracts, strict=True) if not a]
    images, owner = point_images(minima)
    coords = params.model.state_overlaps(params)  # a key-free risk: v's overlaps alone
    n = ov.shape[0]
    runs = Runs(params, alpha, None, ov.T.copy(), FATE_LOCAL_TOL)
    if on_manifold and n:
        off = np.flatnonzero(np.any(runs.field.velocity(runs.y, runs.t)[:, 2:] != 0.0, axis=1))
        if off.size:
            raise ValueError(
                "on_manifold=True needs M invariant, but this model's field leaves M at "
                f"start {int(off[0])}: {ov[off[0]].tolist()} (classify with on_manifold=False)."
            )
    stop = np.full(n, HORIZON)
    label = np.full(n, -1)
    steps = np.full(n, np.nan)
    rel = np.zeros(n)
    done = np.zeros(n, dtype=bool)

    def inside(out):  # (m, 5, k) -> (m, k)
        # a run whose path is shorter than its first distance to every ball cannot enter
        path = np.sum(np.max(np.abs(np.diff(out, axis=0)), axis=1), axis=0)
        maybe = nearest(out[0], images, owner, coords)[1] - path < tol
        hit = np.zeros(out.shape[::2], dtype=bool)
        if np.any(maybe):
            hit[:, maybe] = nearest(out[:, :, maybe], images, owner, coords)[1] < tol
        return hit

    line_retry = np.zeros(n)  # when a run that failed the line's tests is tried again
    first, dist0, _ = nearest(runs.y, images, owner, coords)
    at0 = dist0 < tol
    label[at0], steps[at0], done[at0] = first[at0], 0.0, True
    while True:
        live = ~done & (runs.t < stop)
        if not np.any(live):
            break
        ex = np.flatnonzero(live & runs.exact)
        if ex.size:
            over = ex[runs.exact_steps[ex] >= max_exact]
            done[over] = True
            ex = ex[runs.exact_steps[ex] < max_exact]
        if ex.size:
            runs.exact_burst(ex, stop, inside=inside)
            j, dist, _ = nearest(runs.y[:, ex], images, owner, coords)
            hit = dist < tol
            arrived = ex[hit]
            label[arrived], steps[arrived], done[arrived] = j[hit], runs.t[arrived], True
            speed = np.max(
                np.abs(runs.field.velocity(runs.y[:, arrived], runs.t[arrived])), axis=1
            )
            rel[arrived] = runs.error[arrived] / np.maximum(speed * runs.t[arrived], 1e-300)
        done |= runs.stuck
        fl = np.flatnonzero(~done & (runs.t < stop) & ~runs.exact)
        try_line = (np.abs(runs.y[1, fl]) == 1.0) & (runs.t[fl] >= line_retry[fl])
        try_line &= np.max(np.abs(runs.y[2:, fl]), axis=0) <= LINE_OFF
        if np.any(try_line):
            cand = fl[try_line]
            ok, when, kap, img, terr, speed = line_arrivals(
                runs.field, runs.y[:, cand], runs.t[cand], images, tol
            )
            arrived = cand[ok]
            runs.y[0, arrived] = kap[ok]
            runs.y[2:, arrived] = 0.0
            runs.t[arrived] = steps[arrived] = when[ok]
            label[arrived], done[arrived] = owner[img[ok]], True
            rel[arrived] = (terr[ok] + runs.error[arrived] / speed[ok]) / when[ok]
            line_retry[cand[~ok]] = 10.0 * np.maximum(runs.t[cand[~ok]], 1.0)
            fl = fl[~done[fl]]
        if fl.size:
            t_before = runs.t[fl].copy()
            acc, y_prev = runs.flow_step(fl, stop)
            if acc.size:
                j, dist, img = nearest(runs.y[:, acc], images, owner, coords)
                hit = dist < tol
                if np.any(hit):
                    arrived = acc[hit]
                    t0 = t_before[np.searchsorted(fl, arrived)]
                    h = runs.t[arrived] - t0
                    centre = images[img[hit]].T
                    s, speed, placed = line_entry(
                        runs.field, y_prev[:, hit], runs.y[:, arrived], t0, h, centre, tol, coords
                    )
                    steps[arrived] = t0 + s * h
                    label[arrived], done[arrived] = j[hit], True
                    rel[arrived] = (runs.error[arrived] + placed) / np.maximum(
                        speed * steps[arrived], 1e-300
                    )
    # at the horizon: at a saddle (on its stable manifold), or at a point not given
    left = np.flatnonzero((label < 0) & (runs.t >= stop))

    def kind(q) -> str:
        if on_manifold and q.manifold_eigenvalues is not None:
            return f"{manifold_kind(q.manifold_eigenvalues)} on M"
        return str(q.kind)

    kept = [(q.overlaps, kind(q), True) for q in minima]
    if left.size and saddles:
        s_images, s_owner = point_images(saddles)
        j, dist, _ = nearest(runs.y[:, left], s_images, s_owner, coords)
        for k in np.unique(j[dist < tol]):
            mine = left[(dist < tol) & (j == k)]
            label[mine] = len(kept)
            steps[mine] = np.inf
            kept.append((saddles[k].overlaps, kind(saddles[k]), False))
        left = left[dist >= tol]
    if left.size:
        for g in end_groups(runs.y[:, left].T, symmetries(params), tol=tol):
            label[left[g]] = len(kept)
            kept.append((runs.y[:, left[g[0]]], UNLISTED, False))
    return Fates(
        points=np.array([np.asarray(o, dtype=np.float64) for o, _, _ in kept]).reshape(-1, 5),
        kinds=[kind for _, kind, _ in kept],
        minimum=np.array([m for _, _, m in kept], dtype=bool),
        label=label,
        steps=steps,
        relative_error=np.where(np.isfinite(steps), rel, np.nan),
        error=runs.error.copy(),
        final=runs.y.T.copy(),
        exact_steps=runs.exact_steps.copy(),
        alpha=alpha,
        tol=tol,
        horizon=HORIZON,
        max_exact_steps=max_exact,
        on_manifold=bool(on_manifold),
    )
