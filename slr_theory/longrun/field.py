"""The overlap field that long runs follow: its velocity and Jacobian, the spectra that decide when the flow may stand in for PGD, and one exact step."""

from __future__ import annotations

import contextlib

import numpy as np

from .. import engine
from ..geometry import overlap_velocity, velocity_partials
from ..params import Params, project_feasible
from ..trajectory import Group, overlap_increment, run_coordinates, temperatures_at, to_vectors

__all__ = ["FLOW_ORDER", "HORIZON", "MAX_ADVANCE_STEPS", "MIN_FLOW_STEP"]


#: Order of the modified equation :func:`advance` integrates (its flow over one step is
#: the step map up to ``O(alpha^(FLOW_ORDER + 1))``).
FLOW_ORDER = 2


#: Most steps :func:`advance` accepts.
MAX_ADVANCE_STEPS = 1e300


#: Where :func:`fate` stops a run that has reached no ball: ``1e300`` steps (or flow time).
HORIZON = 1e300


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
NOISE = 64.0 * np.finfo(np.float64).eps


MAX_ERROR = 2.0


class Field:
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


def _spectra(field: Field, M: np.ndarray, JF: np.ndarray, on_m: np.ndarray):
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


def map_growth(M: np.ndarray, on_m: np.ndarray, hw: np.ndarray, alpha: float) -> np.ndarray:
    """How much one exact step can grow an error: ``max(1, max |1 + mu|, 1 - alpha h_W)``,
    ``mu`` the eigenvalues of ``M`` (the step map's Jacobian is ``I + M`` to first order)
    and ``h_W`` the Hessian out of the span, whose directions rounding seeds when the span
    degenerates (the overlaps then see them at second order)."""
    noise = NOISE * np.max(np.abs(M), axis=(1, 2))
    grow = _per_run(M, on_m, lambda mu: np.max(np.abs(1.0 + mu), axis=1))
    return np.maximum(1.0, np.maximum(grow, np.abs(1.0 - alpha * hw)) - noise)


def on_manifold_runs(y: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Runs exactly on M (``theta = eta = rho = 0``) whose field ``F`` ``(n, 5)`` leaves M
    exactly: computed, not assumed (a model that does not keep M invariant pushes them off)."""
    return ~np.any(y[2:], axis=0) & ~np.any(F[:, 2:] != 0.0, axis=1)


#: The substeps of the extrapolated linearly implicit Euler method: the result of order
#: ``len(SUBSTEPS)``, checked against the one of order one less.
SUBSTEPS = (1, 2, 3, 4, 5, 6)


def jacobian_of_field(field: Field, M: np.ndarray, on_m: np.ndarray) -> np.ndarray:
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


def step(field: Field, y: np.ndarray, t: np.ndarray, h: np.ndarray, at_y: tuple):
    """One integration step of size ``h`` ``(n,)`` from ``y`` ``(5, n)`` at times ``t``.

    The linearly implicit Euler method, ``(I - (h/m) J_F) delta = (h/m) F``, with
    ``m = 1, ..., 6`` substeps and ``J_F`` the Jacobian at ``y``, extrapolated to ``h = 0``
    (Aitken-Neville; Deuflhard's scheme for stiff systems): the result is of order 6, and
    its distance to the one of order 5 estimates the local error. The defect of the
    modified equation, ``M^2 Delta / 3`` per step, adds its damped response over the
    step, ``(I - h J_F)^{-1} h defect``. Runs on M whose field leaves M exactly
    (:func:`on_manifold_runs`) move in ``(kappa, nu)`` only, as exact PGD does. ``at_y`` is
    :meth:`Field.evaluate` at ``(y, t)``, which the caller has.

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
    on_m = on_manifold_runs(y, F0)
    JF = jacobian_of_field(field, M0, on_m)
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
    rate = np.maximum(0.0, rate - NOISE * np.max(np.abs(JF), axis=(1, 2)))
    return y_new, est, allowed, rate


def exact(params, alpha, schedule, y, kv, t, steps, record=False):
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
