"""Arrival along the line to a minimum: the time a run takes from where the local expansion holds, by quadrature."""

from __future__ import annotations

import math

import numpy as np

from .fates import ALL
from .field import HORIZON, NOISE, Field, jacobian_of_field, step

__all__ = []


#: Gauss-Legendre nodes and weights on ``[-1, 1]`` for a panel of :func:`line_arrivals`.
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)


#: Panels of the quadrature along a line; half as many give its error estimate.
LINE_PANELS = 32


#: Runs whose coordinates off M are at most this are tried on a line (a cheap filter; the
#: test that decides is :data:`LINE_TOL`).
LINE_OFF = 1e-8


#: The share of the drive along a line that the run's coordinates off M may change, at
#: every node of the quadrature (their first-order effect, through ``J_F``).
LINE_TOL = 1e-12


#: The quadrature's error estimate a line's time may have, relative.
LINE_QUAD_TOL = 1e-7


def line_arrivals(field: Field, y: np.ndarray, t: np.ndarray, images: np.ndarray, tol: float):
    """Runs that move along a line, ``kappa`` alone with ``nu = +-1`` and nothing off M:
    the time to the first ball on the line as the quadrature of ``1 / F_kappa``.

    On the edge ``nu = 1`` of M a run's drive is ``erfc``-small and falls by dozens of
    orders of magnitude before the ball of ``(k*, v*)``; stepping the flow there takes
    hundreds of steps, while the time is an integral in ``kappa``. Whether a run is on
    such a line is computed, never assumed: at the run and at every node, the field has
    no component but ``F_kappa`` (the line is invariant), ``F_kappa`` keeps its sign (no
    critical point on the way), the block of ``J_F`` off M is stable (the run's residue
    off M does not grow) and that residue changes ``F_kappa`` by at most :data:`LINE_TOL`
    of itself; the quadrature (:data:`LINE_PANELS` panels of 8 Gauss-Legendre nodes,
    against half as many) is within :data:`LINE_QUAD_TOL`. Any run that fails one test is
    left to the integration.

    Parameters
    ----------
    field : Field
    y : ndarray ``(5, k)``
        Runs with ``|nu| = 1``.
    t : ndarray ``(k,)``
    images : ndarray ``(m, 5)``
        The minima's images (their balls are the targets).
    tol : float

    Returns
    -------
    ok : ndarray of bool ``(k,)``
    time : ndarray ``(k,)``
        The arrival time (NaN where not ok).
    kappa : ndarray ``(k,)``
        Where the run enters the ball.
    image : ndarray ``(k,)``
        The image whose ball it enters.
    error : ndarray ``(k,)``
        The time's error: the quadrature's estimate, the modified equation's defect over
        the way (PGD) and the residue's effect.
    speed : ndarray ``(k,)``
        ``|F_kappa|`` at the run, which turns its error in ``kappa`` into one in time.
    """
    k = y.shape[1]
    cols = np.arange(k)
    if images.shape[0] == 0:  # no ball to reach
        none = np.full(k, np.nan)
        return np.zeros(k, dtype=bool), none, y[0].copy(), np.zeros(k, dtype=np.int64), none, none
    F0, M0, _, _ = field.evaluate(y, t)
    JF0 = jacobian_of_field(field, M0, np.zeros(k, dtype=bool))
    direction = np.sign(F0[:, 0])
    ok = (np.abs(F0[:, 1]) <= LINE_TOL * np.abs(F0[:, 0])) & (direction != 0.0)
    ok &= np.isfinite(F0[:, 0])
    residue = np.sum(np.abs(y[2:]), axis=0)
    ok &= np.max(np.abs(JF0[:, 0, 2:]), axis=1) * residue <= LINE_TOL * np.abs(F0[:, 0])
    # the first ball ahead on the line: an image with nu and nothing off M within tol
    on_line = np.max(np.abs(images[:, 2:]), axis=1) < tol  # (m,)
    near_nu = np.abs(images[:, 1][:, None] - y[1][None]) < tol  # (m, k)
    entry = images[:, 0][:, None] - direction[None] * tol  # (m, k)
    ahead = (entry - y[0][None]) * direction[None]
    ahead = np.where(on_line[:, None] & near_nu & (ahead > 0.0), ahead, np.inf)
    image = np.argmin(ahead, axis=0)
    ok &= np.isfinite(ahead[image, cols])
    centre = images[image, 0]
    # x = log of the distance to the centre, from the run's to tol: the drive vanishes
    # linearly at the centre (a minimum), so r / F_kappa is smooth in x
    x0 = np.log(np.where(ok, np.abs(centre - y[0]), 2.0 * tol))
    x1 = np.full(k, math.log(tol) - 1e-12)  # just inside the ball, where the run ends

    def at(x: np.ndarray, sel: np.ndarray):
        """The integrand ``r / |F_kappa|`` at ``x`` ``(j, p)`` for the runs `sel`, the runs'
        tests there and the defect's share of the drive."""
        j, p = x.shape
        r = np.exp(x)
        ov = np.zeros((5, j * p))
        ov[0] = (centre[sel, None] - direction[sel, None] * r).reshape(-1)
        ov[1] = np.repeat(y[1, sel], p)
        with np.errstate(all="ignore"):
            F, M, defect, _ = field.evaluate(ov, np.repeat(t[sel], p))
        JF = jacobian_of_field(field, M, np.zeros(j * p, dtype=bool)).reshape(j, p, 5, 5)
        F, defect = F.reshape(j, p, 5), defect.reshape(j, p, 5)
        fk = F[..., 0]
        good = np.all(F[..., 1:] == 0.0, axis=(1, 2)) & np.all(np.isfinite(fk), axis=1)
        good &= np.all(np.sign(fk) == direction[sel, None], axis=1)
        off = np.max(np.abs(JF[..., 0, 2:]), axis=-1) * residue[sel, None]
        good &= np.all(off <= LINE_TOL * np.abs(fk), axis=1)
        rates = np.max(np.linalg.eigvals(JF[..., 2:, 2:]).real, axis=-1)
        good &= np.all(rates <= NOISE * np.max(np.abs(JF), axis=(-2, -1)), axis=1)
        with np.errstate(all="ignore"):
            drift = np.max(np.abs(defect[..., 0] / fk), axis=1)
            return r / np.abs(fk), good, np.where(good, drift, np.inf)

    # first the end of the way, where the drive is smallest (a cheap refusal), then
    # panels equidistributed in the variation of log(r / |F_kappa|) (and in x)
    sel = np.flatnonzero(ok)
    _, good, _ = at(np.stack([x1[sel], 0.5 * (x0[sel] + x1[sel])], axis=1), sel)
    ok[sel] = good
    sel = np.flatnonzero(ok)
    time = np.full(k, np.nan)
    error = np.full(k, np.inf)
    kappa_end = y[0].copy()
    if sel.size == 0:
        return ok, time, kappa_end, image, error, np.abs(F0[:, 0])
    u = np.linspace(0.0, 1.0, 33)
    grid = x1[sel, None] + (x0 - x1)[sel, None] * u[None]
    g, good, drift = at(grid, sel)
    with np.errstate(all="ignore"):
        phi = np.log(np.where(good[:, None], g, 1.0))
    monitor = np.abs(np.diff(phi, axis=1)) + 0.25 * np.abs(np.diff(grid, axis=1))
    level = np.concatenate([np.zeros((sel.size, 1)), np.cumsum(monitor, axis=1)], axis=1)
    level /= level[:, -1:]
    targets = np.linspace(0.0, 1.0, LINE_PANELS + 1)
    edges = np.stack([np.interp(targets, level[i], grid[i]) for i in range(sel.size)])

    def integral(e: np.ndarray):
        mid, half = 0.5 * (e[:, 1:] + e[:, :-1]), 0.5 * (e[:, 1:] - e[:, :-1])
        x = (mid[..., None] + half[..., None] * _GL_NODES).reshape(sel.size, -1)
        w = (half[..., None] * _GL_WEIGHTS).reshape(sel.size, -1)
        value, good, dr = at(x, sel)
        return np.sum(w * value, axis=1), good, dr

    fine, good_f, drift_f = integral(edges)
    coarse, good_c, drift_c = integral(edges[:, ::2])
    quad = np.abs(fine - coarse)
    good &= good_f & good_c & np.isfinite(fine) & (quad <= LINE_QUAD_TOL * np.abs(fine))
    good &= t[sel] + fine < HORIZON
    ok[sel] = good
    time[sel] = np.where(good, t[sel] + fine, np.nan)
    drift = np.maximum(drift, np.maximum(drift_f, drift_c))
    error[sel] = quad + np.abs(fine) * (drift + LINE_TOL)
    kappa_end[sel] = np.where(good, centre[sel] - direction[sel] * np.exp(x1[sel]), y[0, sel])
    return ok, time, kappa_end, image, error, np.abs(F0[:, 0])


def _hermite(y0, F0, y1, F1, h, s):
    """The cubic Hermite interpolant between ``(y0, F0)`` and ``(y1, F1)`` ``(5, k)`` at
    fractions ``s`` ``(k,)`` of steps ``h`` ``(k,)``."""
    s2, s3 = s * s, s * s * s
    return (
        (2 * s3 - 3 * s2 + 1) * y0
        + (s3 - 2 * s2 + s) * h * F0
        + (-2 * s3 + 3 * s2) * y1
        + (s3 - s2) * h * F1
    )


def line_entry(field, y0, y1, t0, h, centre, tol, coords=ALL):
    """Where in a step ``y0 -> y1`` ``(5, k)`` each run first comes within `tol` of
    `centre` ``(5, k)`` (max-norm over the overlaps `coords`).

    The cubic Hermite interpolant of the step locates the entry (a scan of 64 points, then
    bisection); Newton's method on the integrator itself then refines it: the run is
    stepped from ``y0`` by the fraction ``s`` of the step until its distance to the centre
    is `tol` (an interpolant over a long step is not the solution; the re-step is, to its
    error estimate).

    Returns
    -------
    s : ndarray ``(k,)``
        The fraction of the step.
    speed : ndarray ``(k,)``
        How fast the distance to the centre (max-norm) falls there: the field's component
        along the largest difference, which turns an error in the overlaps into one in time.
    error : ndarray ``(k,)``
        The error of the entry point in the overlaps: the re-step's estimate plus the
        distance's residual.
    """
    at0 = field.evaluate(y0, t0)
    F0 = at0[0].T
    F1 = field.velocity(y1, t0 + h).T
    grid = np.linspace(0.0, 1.0, 65)
    centre = centre[coords]

    def gap_at(s):
        return np.max(np.abs(_hermite(y0, F0, y1, F1, h, s)[coords] - centre), axis=0)

    inside = np.stack([gap_at(s) < tol for s in grid])
    inside[-1] = True
    hi_i = np.argmax(inside, axis=0)
    lo = grid[np.maximum(hi_i - 1, 0)]
    hi = grid[hi_i]
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        yes = gap_at(mid) < tol
        hi = np.where(yes, mid, hi)
        lo = np.where(yes, lo, mid)
    s = hi
    cols = np.arange(s.size)
    for _ in range(ENTRY_NEWTON):
        ys, est, _, _ = step(field, y0, t0, s * h, at0)
        diff = ys[coords] - centre
        c = np.argmax(np.abs(diff), axis=0)
        F = field.velocity(ys, t0 + s * h)[:, coords]  # (k, len(coords))
        gap = np.abs(diff[c, cols]) - tol
        slope = np.sign(diff[c, cols]) * F[cols, c] * h
        ok = (slope < 0.0) & np.isfinite(est)
        s = np.where(ok, np.clip(s - gap / np.where(ok, slope, -1.0), 0.0, 1.0), s)
    ys, est, _, _ = step(field, y0, t0, s * h, at0)
    F = field.velocity(ys, t0 + s * h)[:, coords]
    diff = ys[coords] - centre
    c = np.argmax(np.abs(diff), axis=0)
    residual = np.abs(np.abs(diff[c, cols]) - tol)
    return s, np.abs(F[cols, c]), est + residual


#: Newton iterations that place a run's entry into a ball on the integrator (:func:`line_entry`).
ENTRY_NEWTON = 1
