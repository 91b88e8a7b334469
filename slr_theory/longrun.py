r"""Where and when: PGD over any number of steps, and the fate of every run.

Exact PGD (:func:`slr_theory.pgd`) costs one step a step, and on the plateaus of the
landscape a run needs ``1e20`` steps and more (the drive in ``kappa`` along the edge
``nu = 1`` of M is ``erfc``-small). :func:`advance` gives the state after any number of
steps by stepping exactly where the dynamics are fast and integrating, where they are
slow, the *modified equation* of the step map: with ``Delta(x)`` the increment of one
exact step (:func:`slr_theory.trajectory.overlap_increment`, to the relative precision
of the gradient) and ``M = alpha J`` the Jacobian of the flow per step,

.. math::

    \frac{dx}{dn} = F(x) = \Delta(x) - \tfrac12 M(x) \Delta(x),

whose flow over one unit of ``n`` (one step) is the step map up to ``O(alpha^3)``: it is
of order 2. The leading defect, ``(1/3) M^2 Delta``, and the integrator's own error
(linearly implicit Euler extrapolated to order 6, which damps what the map damps) set
the integration step and add up to the error estimate of every run. A run returns
to exact steps wherever the integrator would need fewer than :data:`MIN_FLOW_STEP`
steps at a time, which is where a fast transient (``alpha h`` of order one) makes the
modified equation meaningless.

:func:`fate` runs every start until it enters the ``tol``-ball of a minimum (or of a
symmetric image), for PGD or for the gradient flow, and returns the number of steps (or
the flow time) it took, with the runs that end at a saddle, on its stable manifold,
reported with an infinite time. It integrates at the looser local tolerance
:data:`FATE_LOCAL_TOL`, places each entry into a ball on the integrator itself (Newton's
method on the step, not an interpolant), and where a run moves along a line, ``kappa``
alone on the edge ``nu = +-1`` of M (the plateau, where the drive falls by dozens of
orders of magnitude on the way), it takes the time to the ball ahead as a quadrature in
``kappa`` once the line is verified invariant along the way (:func:`_line_arrivals`).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from . import engine
from .critical import CriticalPoint, critical_points, end_groups, manifold_kind, symmetries
from .geometry import overlap_velocity, velocity_partials
from .params import Params, check_overlaps, check_params, project_feasible
from .results import html_table
from .trajectory import (
    MAX_ALPHA,
    Group,
    overlap_increment,
    run_coordinates,
    temperatures_at,
    to_vectors,
)
from .validate import as_array, positive_real

__all__ = [
    "FLOW_ORDER",
    "HORIZON",
    "MAX_ADVANCE_STEPS",
    "MIN_FLOW_STEP",
    "UNLISTED",
    "Advanced",
    "Fates",
    "advance",
    "fate",
]

#: Order of the modified equation :func:`advance` integrates (its flow over one step is
#: the step map up to ``O(alpha^(FLOW_ORDER + 1))``).
FLOW_ORDER = 2
#: Most steps :func:`advance` accepts.
MAX_ADVANCE_STEPS = 1e300
#: Where :func:`fate` stops a run that has reached no ball: ``1e300`` steps (or flow time).
HORIZON = 1e300
#: The kind :class:`Fates` gives a point where runs stopped at the horizon that is none of
#: the critical points it was given (a point the search missed, or a plateau).
UNLISTED = "end point not among the critical points given"
#: Exact steps between two attempts to integrate, and the shortest integration step
#: worth taking (in steps): below it, exact steps cost no more.
BURST = 256
MIN_FLOW_STEP = 256
#: Local error (max-norm of the overlaps) each integration step of :func:`advance` may make.
LOCAL_TOL = 1e-10
#: The same for :func:`fate`, whose answer is a time with its error estimate rather than a
#: state to 1e-6: against exact PGD, its times stay within their estimates (and within one
#: step of the map's first entry), and it takes a fraction of the integration steps.
FATE_LOCAL_TOL = 1e-8
#: The rounding error an exact step may add to the overlaps, and the largest error the
#: estimate reports (the diameter of the overlaps' box: nothing is known beyond).
ROUNDING = 4.0 * np.finfo(np.float64).eps
#: The rounding of a computed eigenvalue, relative to its matrix: a zero mode (a
#: critical manifold) computed as ``+1e-20`` grows no error.
_NOISE = 64.0 * np.finfo(np.float64).eps
MAX_ERROR = 2.0


class _Field:
    """The field and its Jacobian per unit of time, at overlaps ``(5, n)`` and times ``(n,)``.

    PGD (``alpha`` given): the modified field ``F`` of the step map (module docstring),
    per step, with ``M = alpha J``, the increment ``Delta`` and the defect ``M^2 Delta / 3``.
    The gradient flow (``alpha`` None): ``F`` the flow's velocity, ``M = J``, no defect.
    """

    def __init__(self, params: Params, alpha: float | None, schedule):
        self.params = params
        self.alpha = alpha
        self.schedule = schedule
        self.table = self.gradient_table = None
        if schedule is None:
            self.table = engine.table(params, params.lam, (1, 2)).prepared()
            self.gradient_table = engine.table(params, params.lam, 1).prepared()

    def rows(self, ov5: np.ndarray, t: np.ndarray, order=(1, 2)) -> np.ndarray:
        """The engine's rows: the five partials, then (order ``(1, 2)``) the Hessian's."""
        if self.table is not None:
            return (self.table if order == (1, 2) else self.gradient_table)(ov5)
        lam = temperatures_at(self.schedule, t, lam_max=self.params.lam_max)
        tabs = engine.table(self.params, lam, order)
        phi = tabs.features(ov5, np.moveaxis(tabs.constants, -1, 0))
        return np.einsum("nrk,kn->rn", tabs.C, phi)

    def velocity(self, ov5: np.ndarray, t: np.ndarray) -> np.ndarray:
        """``F`` ``(n, 5)`` alone: for the flow, from the gradient only (the Hessian, which
        PGD's modified field needs through ``M``, is not computed)."""
        if self.alpha is None:
            return overlap_velocity(ov5, self.rows(ov5, t, 1)).T
        return self.evaluate(ov5, t)[0]

    def __call__(self, ov5: np.ndarray, t: np.ndarray):
        """``(F, M, defect)`` ``(n, 5)``, ``(n, 5, 5)``, ``(n, 5)`` at overlaps ``(5, n)``."""
        return self.evaluate(ov5, t)[:3]

    def evaluate(self, ov5: np.ndarray, t: np.ndarray):
        """As :meth:`__call__`, and the smaller eigenvalue ``(n,)`` of the Hessian's block
        out of ``span{k, v, k*, v*}``, ``H_W = [[-A, R_rho], [R_rho, -B]]``."""
        rows = self.rows(ov5, t)
        G = rows[:5]
        A = ov5[0] * G[0] + ov5[3] * G[3] + ov5[4] * G[4]
        B = ov5[2] * G[2] + ov5[1] * G[1] + ov5[4] * G[4]
        hw = -0.5 * (A + B) - np.sqrt(0.25 * (A - B) ** 2 + G[4] ** 2)
        Jo, Jg = velocity_partials(ov5, G)
        J = Jo + Jg @ engine.hessian_matrices(rows[5:])
        if self.alpha is None:
            u = overlap_velocity(ov5, G).T
            return u, J, np.zeros_like(u), hw
        M = self.alpha * J
        delta = overlap_increment(ov5, G, self.alpha).T  # (n, 5)
        md = np.einsum("nij,nj->ni", M, delta)
        defect = np.einsum("nij,nj->ni", M, md) / 3.0
        return delta - 0.5 * md, M, defect, hw


#: Where the modified equation may stand for the step map: every eigenvalue ``mu`` of
#: ``M = alpha J`` (on the coordinates a run moves in) is slow, ``|mu| <= SLOW``, or a
#: direction the map contracts, ``|1 + mu| <= CONTRACTS``. Elsewhere (a direction the
#: map flips and amplifies, ``1 + mu < -1``, or barely damps) a run steps exactly.
SLOW = 0.1
CONTRACTS = 0.95


def _per_run(A: np.ndarray, on_m: np.ndarray, reduce) -> np.ndarray:
    """``reduce(eigenvalues (m, k)) -> (m,)`` of each ``A`` ``(n, 5, 5)``, on the ``(kappa,
    nu)`` block for the runs `on_m` (which move in it only)."""
    out = np.empty(A.shape[0])
    for rows, k in ((on_m, 2), (~on_m, 5)):
        if np.any(rows):
            out[rows] = reduce(np.linalg.eigvals(A[rows][:, :k, :k]))
    return out


def _largest_real(mu: np.ndarray) -> np.ndarray:
    """The largest real part of eigenvalues ``mu`` ``(n, k)``: a linear flow's growth rate."""
    return np.max(mu.real, axis=1)


def _spectrum_allows(mu: np.ndarray) -> np.ndarray:
    """Whether eigenvalues ``mu`` ``(n, k)`` of ``M`` let the flow stand for the map."""
    return np.all((np.abs(mu) <= SLOW) | (np.abs(1.0 + mu) <= CONTRACTS), axis=1)


def _flow_allowed(M: np.ndarray, on_m: np.ndarray) -> np.ndarray:
    """Whether the spectrum of each ``M`` ``(n, 5, 5)`` lets the flow stand for the map."""
    return _per_run(M, on_m, _spectrum_allows).astype(bool)


def _spectra(field: _Field, M: np.ndarray, JF: np.ndarray, on_m: np.ndarray):
    """Whether the flow may stand for the map (:func:`_flow_allowed`) and the largest real
    part of the eigenvalues of ``J_F`` ``(n,)``, from one eigendecomposition of ``M`` where
    ``J_F = M - M^2 / 2`` (off M; on M the block is cut, and ``J_F``'s own is taken)."""
    if field.alpha is None:
        return np.ones(M.shape[0], dtype=bool), _per_run(JF, on_m, _largest_real)
    allowed = np.ones(M.shape[0], dtype=bool)
    rate = np.empty(M.shape[0])
    off = ~on_m
    if np.any(off):
        mu = np.linalg.eigvals(M[off])
        allowed[off] = _spectrum_allows(mu)
        rate[off] = _largest_real(mu - 0.5 * mu * mu)
    if np.any(on_m):
        allowed[on_m] = _flow_allowed(M[on_m], on_m[on_m])
        rate[on_m] = _per_run(JF[on_m], on_m[on_m], _largest_real)
    return allowed, rate


def _map_growth(M: np.ndarray, on_m: np.ndarray, hw: np.ndarray, alpha: float) -> np.ndarray:
    """How much one exact step can grow an error: ``max(1, max |1 + mu|, 1 - alpha h_W)``,
    ``mu`` the eigenvalues of ``M`` (the step map's Jacobian is ``I + M`` to first order)
    and ``h_W`` the Hessian out of the span, whose directions rounding seeds when the span
    degenerates (the overlaps then see them at second order)."""
    noise = _NOISE * np.max(np.abs(M), axis=(1, 2))
    grow = _per_run(M, on_m, lambda mu: np.max(np.abs(1.0 + mu), axis=1))
    return np.maximum(1.0, np.maximum(grow, np.abs(1.0 - alpha * hw)) - noise)


def _on_manifold(y: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Runs exactly on M (``theta = eta = rho = 0``) whose field ``F`` ``(n, 5)`` leaves M
    exactly: computed, not assumed (a model that does not keep M invariant pushes them off)."""
    return ~np.any(y[2:], axis=0) & ~np.any(F[:, 2:] != 0.0, axis=1)


#: The substeps of the extrapolated linearly implicit Euler method: the result of order
#: ``len(SUBSTEPS)``, checked against the one of order one less.
SUBSTEPS = (1, 2, 3, 4, 5, 6)


def _jacobian_of_field(field: _Field, M: np.ndarray, on_m: np.ndarray) -> np.ndarray:
    """The Jacobian of ``F`` the integration uses: ``M - M^2 / 2`` for PGD (``M`` for the
    flow), with the off-M block cut for the runs on M, which move in ``(kappa, nu)`` only."""
    JF = M if field.alpha is None else M - 0.5 * (M @ M)
    if np.any(on_m):
        JF = JF.copy()
        JF[on_m, 2:, :] = 0.0
        JF[on_m, :, 2:] = 0.0
    return JF


def _inverse(A: np.ndarray) -> np.ndarray:
    """The inverses of a stack of matrices; NaN for one that is singular to working
    precision (a step far too long for its Jacobian), which the step then refuses."""
    try:
        return np.linalg.inv(A)
    except np.linalg.LinAlgError:
        out = np.full_like(A, np.nan)
        for i in np.ndindex(A.shape[:-2]):
            with contextlib.suppress(np.linalg.LinAlgError):
                out[i] = np.linalg.inv(A[i])
        return out


def _step(field: _Field, y: np.ndarray, t: np.ndarray, h: np.ndarray, at_y: tuple):
    """One integration step of size ``h`` ``(n,)`` from ``y`` ``(5, n)`` at times ``t``.

    The linearly implicit Euler method, ``(I - (h/m) J_F) delta = (h/m) F``, with
    ``m = 1, ..., 6`` substeps and ``J_F`` the Jacobian at ``y``, extrapolated to ``h = 0``
    (Aitken-Neville; Deuflhard's scheme for stiff systems): the result is of order 6, and
    its distance to the one of order 5 estimates the local error. The defect of the
    modified equation, ``M^2 Delta / 3`` per step, adds its damped response over the
    step, ``(I - h J_F)^{-1} h defect``. Runs on M whose field leaves M exactly
    (:func:`_on_manifold`) move in ``(kappa, nu)`` only, as exact PGD does. ``at_y`` is
    :meth:`_Field.evaluate` at ``(y, t)``, which the caller has.

    Returns
    -------
    y_new : ndarray ``(5, n)``
    est : ndarray ``(n,)``
        Local error estimate (max-norm).
    allowed : ndarray of bool ``(n,)``
        Whether the spectrum lets the flow stand for the map there (:func:`_flow_allowed`).
    rate : ndarray ``(n,)``
        The largest growth rate of the linearised flow at ``y``, ``>= 0``: an error grows by
        ``exp(h rate)`` over the step.
    """
    F0, M0, defect, hw = at_y
    on_m = _on_manifold(y, F0)
    JF = _jacobian_of_field(field, M0, on_m)
    eye = np.eye(5)
    # The columns (one per substep count m) advance together, one batch per substep: at
    # substep i the columns with m > i (a suffix, SUBSTEPS increasing) take their next one.
    n, ms = y.shape[1], np.array(SUBSTEPS, dtype=float)
    sub = h / ms[:, None]  # (columns, n)
    # each column's matrix is inverted once and applied at each of its m substeps
    Winv = _inverse(eye - sub[:, :, None, None] * JF)  # (columns, n, 5, 5)
    x = np.repeat(y[None], len(ms), axis=0)  # (columns, 5, n)
    F = np.repeat(F0[None], len(ms), axis=0)  # (columns, n, 5)
    # a stage far out of the feasible set: its velocity (unbounded for an unbounded sigma,
    # ReLU's) and what is built on it overflow or are NaN, quietly: the step's estimate is
    # then not finite and the caller refuses it (a smaller step follows)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(SUBSTEPS[-1]):
            c = int(np.argmax(ms > i))
            live = len(ms) - c
            if i:
                flat = np.moveaxis(x[c:], 1, 0).reshape(5, live * n)
                with np.errstate(all="ignore"):
                    F[c:] = field.velocity(flat, (t + i * sub[c:]).reshape(-1)).reshape(live, n, 5)
            x[c:] += np.einsum("cnij,cnj->cin", Winv[c:], sub[c:, :, None] * F[c:])
        table = []
        for j, m in enumerate(SUBSTEPS):
            row = [x[j]]
            for k in range(1, len(table) + 1):  # Aitken-Neville in h
                ratio = m / SUBSTEPS[len(table) - k] - 1.0
                row.append(row[k - 1] + (row[k - 1] - table[-1][k - 1]) / ratio)
            table.append(row)
        # a stage that left the feasible set (near its boundary, det Gram ~ 0, where a run
        # approaching k = +-v* lives) goes back to it (project_feasible, well conditioned
        # where the Cholesky coordinates divide by k3). Off M the move is part of the
        # step's error (|P y - y_true| <= |P y - y| + |y - y_true|); on M it is the
        # projection onto the square, which contains the true state: it moves no point
        # further from it, and adds nothing
        y_new = np.array(project_feasible(*table[-1][-1]))
        est = np.max(np.abs(table[-1][-1] - table[-1][-2]), axis=0)
        moved = np.max(np.abs(y_new - table[-1][-1]), axis=0)
        est = est + np.where(on_m, 0.0, moved)
    if np.any(defect):  # column m = 1 is (I - h J_F)^{-1}
        response = np.einsum("nij,nj->ni", Winv[0], h[:, None] * defect)
        est = est + np.max(np.abs(response), axis=1)
    allowed, rate = _spectra(field, M0, JF, on_m)
    rate = np.maximum(rate, -hw * (1.0 if field.alpha is None else field.alpha))
    rate = np.maximum(0.0, rate - _NOISE * np.max(np.abs(JF), axis=(1, 2)))
    return y_new, est, allowed, rate


def _exact(params, alpha, schedule, y, kv, t, steps, record=False):
    """Exact PGD, `steps` steps, of the columns ``y`` ``(5, n)`` all at step ``t``, from
    their coordinates ``kv`` ``(8, n)`` where finite; returns the overlaps (all of them
    with `record`, else the last) and the final coordinates (NaN for a batch on M)."""
    lam = (
        None
        if schedule is None
        else temperatures_at(schedule, t + np.arange(steps + 1.0), lam_max=params.lam_max)
    )
    synced = np.all(np.isfinite(kv), axis=0)
    if not np.any(y[2:]) and not np.any(synced):
        start = None  # on M: the 2-D map
    else:
        start = np.where(synced, kv, to_vectors(y))
    _, out, kv_end = run_coordinates(
        np.ascontiguousarray(y), start, Group(params, alpha, lam), steps, 1 if record else steps
    )
    if kv_end is None:
        kv_end = np.full((8, y.shape[1]), np.nan)
    return (out if record else out[-1]), kv_end


@dataclass(frozen=True)
class Advanced:
    """PGD after a number of steps (:func:`advance`).

    Attributes
    ----------
    steps : float
        The steps taken by every run.
    overlaps : ndarray, shape ``(..., 5)``
        Where each run is.
    error : ndarray, shape ``(...)``
        Estimated error of each run's overlaps (max-norm) against PGD in exact arithmetic:
        the local error of every integration step and the rounding of every exact step
        (``4 eps``), each grown by what the linearised dynamics grow it by afterwards (at
        most :data:`MAX_ERROR`: near a saddle, or where the map amplifies, PGD in floating
        point is itself sensitive to rounding, and the estimate says so).
    exact_steps : ndarray, shape ``(...)``
        Steps each run took exactly; the rest were integrated.
    flow_steps : ndarray of int, shape ``(...)``
        Integration steps each run took.
    order : int
        Order of the modified equation (:data:`FLOW_ORDER`).
    """

    steps: float
    overlaps: np.ndarray
    error: np.ndarray
    exact_steps: np.ndarray
    flow_steps: np.ndarray
    order: int = FLOW_ORDER


def _whole_steps(steps, name: str = "steps", upper: float = MAX_ADVANCE_STEPS) -> float:
    """A whole number of steps in ``[0, upper]`` as a float (exact below ``2**53``)."""
    if isinstance(steps, bool) or not isinstance(steps, (int, float, np.integer, np.floating)):
        raise ValueError(f"`{name}` must be a whole number of steps, got {steps!r}.")
    value = float(steps)
    if not (math.isfinite(value) and 0 <= value <= upper and value == math.floor(value)):
        raise ValueError(f"`{name}` must be a whole number in [0, {upper:g}], got {steps!r}.")
    return value


def _starts(params: Params, overlaps, name: str) -> np.ndarray:
    ov = as_array(overlaps, name).copy()
    if ov.shape[-1:] != (5,):
        raise ValueError(f"`{name}` must have last dimension 5, got shape {ov.shape}.")
    try:
        return np.stack(check_overlaps(*np.moveaxis(ov, -1, 0), d=params.d), axis=-1)
    except ValueError as exc:  # which overlap, under the argument's own name
        raise ValueError(f"`{name}`: {exc}") from None


class _Runs:
    """The state of a batch of runs between the exact steps and the integration."""

    def __init__(self, params, alpha, schedule, y: np.ndarray, local_tol: float = LOCAL_TOL):
        self.params, self.alpha, self.schedule = params, alpha, schedule
        self.local_tol = local_tol
        self.field = _Field(params, alpha, schedule)
        n = y.shape[1]
        self.y = y
        self.kv = np.full((8, n), np.nan)  # the coordinates of y where known (exact steps)
        self.t = np.zeros(n)
        self.h = np.full(n, 4.0 * MIN_FLOW_STEP if alpha is not None else 1e-3)
        self.exact = np.full(n, alpha is not None)
        self.error = np.zeros(n)
        self.exact_steps = np.zeros(n)
        self.flow_steps = np.zeros(n, dtype=np.int64)
        self.stuck = np.zeros(n, dtype=bool)

    def exact_burst(self, idx: np.ndarray, stop: np.ndarray, inside=None) -> None:
        """Exact steps for the runs `idx`, at most :data:`BURST` and never past `stop`.

        With `inside` (a function of overlaps ``(m, 5, k)`` -> bool ``(m, k)``), a run
        stops at the first step where it holds (and its ``t`` is that step).
        """
        for t0 in np.unique(self.t[idx]) if self.schedule is not None else [None]:
            sub = idx if t0 is None else idx[self.t[idx] == t0]
            n_steps = int(min(BURST, np.min(stop[sub] - self.t[sub])))
            if n_steps <= 0:
                continue
            y0 = self.y[:, sub]
            F, M, _, hw = self.field.evaluate(y0, self.t[sub])
            on_m = _on_manifold(y0, F)
            log_growth = n_steps * np.log(_map_growth(M, on_m, hw, self.alpha))
            self.error[sub] = np.minimum(
                self.error[sub] * np.exp(np.minimum(log_growth, 690.0)) + ROUNDING * n_steps,
                MAX_ERROR,
            )
            start = float(self.t[sub[0]]) if t0 is not None else 0.0
            out, kv = _exact(
                self.params,
                self.alpha,
                self.schedule,
                y0,
                self.kv[:, sub],
                start,
                n_steps,
                record=inside is not None,
            )
            if inside is None:
                self.y[:, sub], self.kv[:, sub] = out, kv
                self.t[sub] += n_steps
                self.exact_steps[sub] += n_steps
                continue
            hit = inside(out)  # (n_steps + 1, k)
            hit[0] = False
            first = np.where(hit.any(axis=0), np.argmax(hit, axis=0), n_steps)
            self.y[:, sub] = out[first, :, np.arange(sub.size)].T
            self.kv[:, sub] = np.where(first == n_steps, kv, np.nan)
            self.t[sub] += first
            self.exact_steps[sub] += first
        self.exact[idx] = False  # try the integration next

    def flow_step(self, idx: np.ndarray, stop: np.ndarray):
        """One integration step for the runs `idx`; returns the accepted ones and where they were."""
        h = np.minimum(self.h[idx], stop[idx] - self.t[idx])
        if self.alpha is not None:
            h = np.floor(h)
        y0 = self.y[:, idx]
        at_y = self.field.evaluate(y0, self.t[idx])
        y1, est, allowed, rate = _step(self.field, y0, self.t[idx], h, at_y)
        ok = allowed & np.isfinite(est) & (est <= self.local_tol)
        ok &= np.all(np.isfinite(y1), axis=0)
        ratio = self.local_tol / np.maximum(est, 1e-300)
        grow = np.clip(0.8 * ratio ** (1.0 / len(SUBSTEPS)), 0.2, 8.0)
        grow = np.where(np.isfinite(est), grow, 0.2)
        acc = idx[ok]
        self.y[:, acc] = y1[:, ok]
        self.kv[:, acc] = np.nan
        self.t[acc] += h[ok]
        self.error[acc] = np.minimum(
            self.error[acc] * np.exp(np.minimum(h[ok] * rate[ok], 700.0)) + est[ok], MAX_ERROR
        )
        self.flow_steps[acc] += 1
        self.h[idx] = h * grow
        if self.alpha is None:  # the flow: a step too short to move the time is stuck
            self.stuck[idx] = self.h[idx] <= 4.0 * np.finfo(float).eps * self.t[idx]
        if self.alpha is not None:  # too short to be worth it, or not allowed: exact steps
            back = (self.h[idx] < MIN_FLOW_STEP) | ~allowed
            self.exact[idx[back]] = True
            self.h[idx[back]] = 4.0 * MIN_FLOW_STEP
        return acc, y0[:, ok]


def advance(
    params: Params,
    overlaps: ArrayLike,
    steps: float,
    *,
    alpha: float,
    schedule=None,
) -> Advanced:
    """The state of the paper's PGD after `steps` steps, for any `steps` up to ``1e300``.

    Exact steps (:func:`slr_theory.pgd`'s loop) where the dynamics are fast; where they
    are slow, the modified equation of the step map, of order :data:`FLOW_ORDER`,
    integrated with an error estimate per run (module docstring).

    Parameters
    ----------
    params : Params
        Model parameters (``params.lam`` unless `schedule` is given).
    overlaps : array_like, shape ``(..., 5)``
        Feasible starting overlaps; a batch of runs.
    steps : int or float
        A whole number of steps, ``0 <= steps <= 1e300``.
    alpha : float
        Step size, ``0 < alpha <= 1e100``.
    schedule : callable ``step -> lam``, optional
        A temperature schedule (e.g. :func:`slr_theory.paper_schedule`), evaluated at the
        steps each run reaches; its temperatures must stay in the domain of ``lam``.

    Returns
    -------
    Advanced

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, advance, pgd
    >>> p = Params.paper(lam=0.5)
    >>> start = [0.05, 1.0, 0.0, 0.0, 0.0]  # on the edge nu = 1 of M, where erf saturates
    >>> far = advance(p, start, 2e8, alpha=4e-3)
    >>> print(f"kappa = {far.overlaps[0]:.4f}")
    kappa = 0.5179
    >>> bool(far.exact_steps < 10_000 and far.error < 1e-6)
    True
    """
    params = check_params(params)
    ov = _starts(params, overlaps, "overlaps")
    target = _whole_steps(steps)
    alpha = positive_real(alpha, "alpha", upper=MAX_ALPHA)
    shape = ov.shape[:-1]
    runs = _Runs(params, alpha, schedule, ov.reshape(-1, 5).T.copy())
    stop = np.full(runs.t.shape, target)
    while True:
        active = runs.t < stop
        if not np.any(active):
            break
        ex = np.flatnonzero(active & runs.exact)
        if ex.size:
            runs.exact_burst(ex, stop)
        fl = np.flatnonzero((runs.t < stop) & ~runs.exact)
        if fl.size:
            short = stop[fl] - runs.t[fl] < MIN_FLOW_STEP
            runs.exact[fl[short]] = True  # the last few steps are exact ones
            fl = fl[~short]
            if fl.size:
                runs.flow_step(fl, stop)
    return Advanced(
        steps=target,
        overlaps=runs.y.T.reshape(*shape, 5),
        error=runs.error.reshape(shape),
        exact_steps=runs.exact_steps.reshape(shape),
        flow_steps=runs.flow_steps.reshape(shape),
    )


# --- fates ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fates:
    """Where every run ends and when it gets there (:func:`fate`).

    Attributes
    ----------
    points : ndarray, shape ``(m, 5)``
        The critical points runs are classified against (one representative of each
        orbit): the minima, then the saddles some run ends at, then where runs stopped at
        the horizon away from every point given (one per group of ends, kind
        :data:`UNLISTED`).
    kinds : list of str
        Their kinds (:attr:`slr_theory.critical.CriticalPoint.kind`).
    minimum : ndarray of bool, shape ``(m,)``
        Which points are minima (attractors).
    label : ndarray of int, shape ``(n,)``
        The point each run ends at (or at a symmetric image of), ``-1`` for a run held in
        exact steps beyond `max_exact_steps` (no flow stood for the map there: undecided), or a
        flow the integrator cannot follow (a step below the rounding of the time).
    steps : ndarray, shape ``(n,)``
        Steps (PGD) or flow time (``alpha`` None) to enter the `tol`-ball of its minimum;
        ``inf`` for a run that ends at a saddle (on its stable manifold it never reaches a
        minimum); NaN for a run at a point of kind :data:`UNLISTED` or with label ``-1``.
    relative_error : ndarray, shape ``(n,)``
        Estimated relative error of `steps`: the run's error in the overlaps (and the
        placing of its entry) over the rate at which its distance to the ball falls there,
        relative to the time; for a run whose time along the edge ``nu = +-1`` is a
        quadrature, its error in ``kappa`` over the drive where the quadrature starts, plus
        the quadrature's own error and the modified equation's defect over the way.
    error : ndarray, shape ``(n,)``
        Estimated error of the overlaps where each run stopped (:attr:`Advanced.error`).
    final : ndarray, shape ``(n, 5)``
        Where each run stopped.
    exact_steps : ndarray, shape ``(n,)``
        Steps each run took exactly (PGD; 0 for the flow).
    alpha : float or None
        The step size, None for the gradient flow.
    tol : float
        Radius of the balls (max-norm of the overlaps).
    horizon : float
        Where runs that reached no ball were stopped.
    max_exact_steps : float
        The budget of exact steps of a run.
    on_manifold : bool
        Runs on M, classified by the flow on M (:func:`fate` with ``on_manifold=True``):
        `minimum` then marks the minima of the flow on M and `kinds` are kinds on M.
    """

    points: np.ndarray
    kinds: list
    minimum: np.ndarray
    label: np.ndarray
    steps: np.ndarray
    relative_error: np.ndarray
    error: np.ndarray
    final: np.ndarray
    exact_steps: np.ndarray
    alpha: float | None
    tol: float
    horizon: float
    max_exact_steps: float
    on_manifold: bool = False

    @property
    def n(self) -> int:
        """Number of runs."""
        return int(self.label.size)

    @property
    def names(self) -> list[str]:
        """A name for each point: its kind and overlaps."""
        return [
            f"{kind} at ({', '.join(f'{x:.4g}' for x in np.where(np.abs(p) < 5e-5, 0.0, p))})"
            for kind, p in zip(self.kinds, self.points, strict=True)
        ]

    @property
    def fractions(self) -> np.ndarray:
        """Share of the runs that end at each point ``(m,)``."""
        return np.array([np.mean(self.label == j) for j in range(len(self.kinds))])

    @property
    def stderr(self) -> np.ndarray:
        """Binomial standard error of :attr:`fractions`, ``sqrt(p (1 - p) / n)``."""
        p = self.fractions
        return np.sqrt(p * (1.0 - p) / self.n)

    @property
    def undecided(self) -> float:
        """Share of the runs with label ``-1``."""
        return float(np.mean(self.label < 0))

    def quantiles(self, q: ArrayLike, point: int | None = None) -> np.ndarray:
        """Quantiles of ``log10`` of the finite arrival times (of the runs at `point`).

        Parameters
        ----------
        q : array_like
            Probabilities in ``[0, 1]``.
        point : int, optional
            Index into :attr:`points` (default: every run that reaches a minimum).

        Returns
        -------
        ndarray, the shape of `q`
            NaN where no run arrives.
        """
        q = np.asarray(q, dtype=np.float64)
        if np.any(~np.isfinite(q)) or np.any((q < 0) | (q > 1)):
            raise ValueError(f"`q` must lie in [0, 1], got {q!r}.")
        keep = np.isfinite(self.steps) & (self.label >= 0)
        if point is not None:
            keep &= self.label == point
        if not np.any(keep):
            return np.full(q.shape, np.nan)
        return np.quantile(np.log10(np.maximum(self.steps[keep], 1.0)), q)

    def within(self, steps: float) -> np.ndarray:
        """Share of the runs at each point ``(m,)`` after `steps` steps (flow time).

        A run counts at its minimum once its arrival time is at most `steps`; a run that
        ends at a saddle counts there from its entry into the saddle's ball, which is not
        recorded, so only at the horizon. What is left, ``1 - within(N).sum()``, is the
        share *not converged after N steps*.

        Parameters
        ----------
        steps : float
            ``>= 0``.

        Returns
        -------
        ndarray, shape ``(m,)``
        """
        n_steps = positive_real(steps, "steps", allow_zero=True)
        there = (self.steps <= n_steps) | (np.isinf(self.steps) & (n_steps >= self.horizon))
        return np.array([np.mean(there & (self.label == j)) for j in range(len(self.kinds))])

    def join(self, other: Fates) -> Fates:
        """These runs followed by `other`'s: the fates of both sets of starts.

        Parameters
        ----------
        other : Fates
            Decided with the same step, ball, horizon and space (on M or not). Its ends
            are matched to these by their overlaps and kind; an end only `other` reached
            (a saddle, say) is added after these.

        Returns
        -------
        Fates
        """
        if not isinstance(other, Fates):
            raise ValueError(f"`other` must be a Fates, got {type(other).__name__}.")
        if (self.alpha, self.tol, self.horizon, self.on_manifold) != (
            other.alpha,
            other.tol,
            other.horizon,
            other.on_manifold,
        ):
            raise ValueError(
                "`other` must be decided with the same alpha, tol, horizon and space, got "
                f"{(other.alpha, other.tol, other.horizon, other.on_manifold)!r} against "
                f"{(self.alpha, self.tol, self.horizon, self.on_manifold)!r}."
            )
        points, kinds, minimum = list(self.points), list(self.kinds), list(self.minimum)
        where = np.empty(len(other.kinds), dtype=np.int64)
        ends = zip(other.points, other.kinds, other.minimum, strict=True)
        for j, (o, kind, m) in enumerate(ends):
            same = [i for i, q in enumerate(points) if kinds[i] == kind and np.array_equal(q, o)]
            if not same:
                points.append(o)
                kinds.append(kind)
                minimum.append(m)
            where[j] = same[0] if same else len(points) - 1
        label = np.where(other.label >= 0, where[np.maximum(other.label, 0)], other.label)
        runs = {
            f: np.concatenate([getattr(self, f), getattr(other, f)])
            for f in ("steps", "relative_error", "error", "final", "exact_steps")
        }
        return replace(
            self,
            points=np.array(points, dtype=np.float64).reshape(-1, 5),
            kinds=kinds,
            minimum=np.array(minimum, dtype=bool),
            label=np.concatenate([self.label, label]),
            max_exact_steps=max(self.max_exact_steps, other.max_exact_steps),
            **runs,
        )

    def _repr_html_(self) -> str:
        """What a notebook shows: each end with its runs, share and arrival quantiles."""
        unit = "steps" if self.alpha is not None else "flow time"
        rows = []
        for j, name in enumerate(self.names):
            n = int(np.sum(self.label == j))
            if not n:
                continue
            if self.minimum[j]:
                q = self.quantiles([0.1, 0.5, 0.9], j)
                when = " / ".join(f"{x:.2f}" for x in q)
            else:
                when = "never (a saddle's stable manifold)" if self.kinds[j] != UNLISTED else "—"
            rows.append([name, n, f"{self.fractions[j]:.3f} ± {self.stderr[j]:.3f}", when])
        left = int(np.sum(self.label < 0))
        if left:
            rows.append(["undecided", left, f"{self.undecided:.3f}", "—"])
        how = f"PGD at α = {self.alpha:g}" if self.alpha is not None else "the gradient flow"
        return html_table(
            ["end", "runs", "share ± s.e.", f"log10 {unit}: 10 / 50 / 90 %"],
            rows,
            caption=f"{self.n} runs, {how}, to balls of radius {self.tol:g}",
        )

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.arrival_figure` of these fates.

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``budget``, ``dpi``, ``ax`` of :func:`~slr_theory.plotting.arrival_figure`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from .plotting.ensembles import arrival_figure

        return arrival_figure(self, path, **options)


_ALL = np.arange(5)


def _check_points(points) -> None:
    """``ValueError`` naming `points` unless it is a sequence of critical points."""
    if isinstance(points, (str, bytes)) or not hasattr(points, "__iter__"):
        raise ValueError(f"`points` must be a list of CriticalPoint, got {points!r}.")
    for q in points:
        if not isinstance(q, CriticalPoint):
            raise ValueError(f"`points` must be a list of CriticalPoint, got an item {q!r}.")


def _images(points) -> tuple[np.ndarray, np.ndarray]:
    """Every symmetric image ``(k, 5)`` of the points and the index of its point ``(k,)``."""
    rows, owner = [], []
    for j, q in enumerate(points):
        for o in (q.overlaps, *q.symmetry_copies):
            rows.append(np.asarray(o, dtype=np.float64))
            owner.append(j)
    return np.array(rows).reshape(-1, 5), np.array(owner, dtype=np.int64)


def _nearest(ov: np.ndarray, images: np.ndarray, owner: np.ndarray, coords=_ALL):
    """Nearest image (max-norm over the overlaps `coords`, the model's
    :meth:`~slr_theory.models.Model.state_overlaps`) of overlaps ``(..., 5, k)``: its
    point, the distance and the image's index (``-1``, ``inf``, ``-1`` without images)."""
    if images.shape[0] == 0:
        shape = ov.shape[:-2] + ov.shape[-1:]
        return np.full(shape, -1), np.full(shape, np.inf), np.full(shape, -1)
    ov, images = ov.take(coords, axis=-2), images.take(coords, axis=1)
    d = np.max(np.abs(ov[..., None, :, :] - images[:, :, None]), axis=-2)  # (..., k_img, k)
    j = np.argmin(d, axis=-2)
    return owner[j], np.take_along_axis(d, j[..., None, :], axis=-2)[..., 0, :], j


#: Gauss-Legendre nodes and weights on ``[-1, 1]`` for a panel of :func:`_line_arrivals`.
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


def _line_arrivals(field: _Field, y: np.ndarray, t: np.ndarray, images: np.ndarray, tol: float):
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
    field : _Field
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
    JF0 = _jacobian_of_field(field, M0, np.zeros(k, dtype=bool))
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
        JF = _jacobian_of_field(field, M, np.zeros(j * p, dtype=bool)).reshape(j, p, 5, 5)
        F, defect = F.reshape(j, p, 5), defect.reshape(j, p, 5)
        fk = F[..., 0]
        good = np.all(F[..., 1:] == 0.0, axis=(1, 2)) & np.all(np.isfinite(fk), axis=1)
        good &= np.all(np.sign(fk) == direction[sel, None], axis=1)
        off = np.max(np.abs(JF[..., 0, 2:]), axis=-1) * residue[sel, None]
        good &= np.all(off <= LINE_TOL * np.abs(fk), axis=1)
        rates = np.max(np.linalg.eigvals(JF[..., 2:, 2:]).real, axis=-1)
        good &= np.all(rates <= _NOISE * np.max(np.abs(JF), axis=(-2, -1)), axis=1)
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


def _entry(field, y0, y1, t0, h, centre, tol, coords=_ALL):
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
        ys, est, _, _ = _step(field, y0, t0, s * h, at0)
        diff = ys[coords] - centre
        c = np.argmax(np.abs(diff), axis=0)
        F = field.velocity(ys, t0 + s * h)[:, coords]  # (k, len(coords))
        gap = np.abs(diff[c, cols]) - tol
        slope = np.sign(diff[c, cols]) * F[cols, c] * h
        ok = (slope < 0.0) & np.isfinite(est)
        s = np.where(ok, np.clip(s - gap / np.where(ok, slope, -1.0), 0.0, 1.0), s)
    ys, est, _, _ = _step(field, y0, t0, s * h, at0)
    F = field.velocity(ys, t0 + s * h)[:, coords]
    diff = ys[coords] - centre
    c = np.argmax(np.abs(diff), axis=0)
    residual = np.abs(np.abs(diff[c, cols]) - tol)
    return s, np.abs(F[cols, c]), est + residual


#: Newton iterations that place a run's entry into a ball on the integrator (:func:`_entry`).
ENTRY_NEWTON = 1


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
    >>> starts = sample_initial_overlaps(p.d, np.random.default_rng(0), 8)
    >>> f = fate(p, starts, alpha=2e-3, points=critical_points(p))
    >>> print(f.undecided, f.fractions.sum())
    0.0 1.0
    """

    params = check_params(params)
    ov = _starts(params, starts, "starts")
    if ov.ndim != 2:
        raise ValueError(f"`starts` must have shape (n, 5), got {ov.shape}.")
    if alpha is not None:
        alpha = positive_real(alpha, "alpha", upper=MAX_ALPHA)
    tol = positive_real(tol, "tol", upper=0.1)
    max_exact = _whole_steps(max_exact_steps, "max_exact_steps")
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
    _check_points(points)
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
    images, owner = _images(minima)
    coords = params.model.state_overlaps(params)  # a key-free risk: v's overlaps alone
    n = ov.shape[0]
    runs = _Runs(params, alpha, None, ov.T.copy(), FATE_LOCAL_TOL)
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
        maybe = _nearest(out[0], images, owner, coords)[1] - path < tol
        hit = np.zeros(out.shape[::2], dtype=bool)
        if np.any(maybe):
            hit[:, maybe] = _nearest(out[:, :, maybe], images, owner, coords)[1] < tol
        return hit

    line_retry = np.zeros(n)  # when a run that failed the line's tests is tried again
    first, dist0, _ = _nearest(runs.y, images, owner, coords)
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
            j, dist, _ = _nearest(runs.y[:, ex], images, owner, coords)
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
            ok, when, kap, img, terr, speed = _line_arrivals(
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
                j, dist, img = _nearest(runs.y[:, acc], images, owner, coords)
                hit = dist < tol
                if np.any(hit):
                    arrived = acc[hit]
                    t0 = t_before[np.searchsorted(fl, arrived)]
                    h = runs.t[arrived] - t0
                    centre = images[img[hit]].T
                    s, speed, placed = _entry(
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
        s_images, s_owner = _images(saddles)
        j, dist, _ = _nearest(runs.y[:, left], s_images, s_owner, coords)
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
