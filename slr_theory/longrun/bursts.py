"""PGD over any number of steps: exact bursts and the flow between them, with a stated error."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..params import Params, check_overlaps, check_params
from ..trajectory import MAX_ALPHA
from ..validate import as_array, positive_real
from .field import (
    BURST,
    FLOW_ORDER,
    LOCAL_TOL,
    MAX_ADVANCE_STEPS,
    MAX_ERROR,
    MIN_FLOW_STEP,
    ROUNDING,
    SUBSTEPS,
    Field,
    exact,
    map_growth,
    on_manifold_runs,
    step,
)

__all__ = ["Advanced", "advance"]


@dataclass(frozen=True)
class Advanced:
    """PGD after a number of steps (:func:`advance`).

    Attributes
    ----------
    steps : float or ndarray
        The steps taken by every run: one number, or one per run (shape ``(...)``) when
        :func:`advance` was given one per run.
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

    steps: float | np.ndarray
    overlaps: np.ndarray
    error: np.ndarray
    exact_steps: np.ndarray
    flow_steps: np.ndarray
    order: int = FLOW_ORDER


def whole_steps(steps, name: str = "steps", upper: float = MAX_ADVANCE_STEPS) -> float:
    """A whole number of steps in ``[0, upper]`` as a float (exact below ``2**53``)."""
    if isinstance(steps, bool) or not isinstance(steps, (int, float, np.integer, np.floating)):
        raise ValueError(f"`{name}` must be a whole number of steps, got {steps!r}.")
    value = float(steps)
    if not (math.isfinite(value) and 0 <= value <= upper and value == math.floor(value)):
        raise ValueError(f"`{name}` must be a whole number in [0, {upper:g}], got {steps!r}.")
    return value


def run_steps(steps, name: str = "steps", upper: float = MAX_ADVANCE_STEPS) -> float | np.ndarray:
    """:func:`whole_steps`, or an array of them (one per run) as float64."""
    if not isinstance(steps, (list, tuple, np.ndarray)):
        return whole_steps(steps, name, upper)
    arr = as_array(steps, name, bound=upper)
    bad = ~((arr >= 0) & (arr == np.floor(arr)))  # NaN is bad too
    if np.any(bad):
        raise ValueError(
            f"`{name}` must be whole numbers in [0, {upper:g}], got {arr[bad].flat[0]!r}."
        )
    return arr


def burst_starts(params: Params, overlaps, name: str) -> np.ndarray:
    ov = as_array(overlaps, name).copy()
    if ov.shape[-1:] != (5,):
        raise ValueError(f"`{name}` must have last dimension 5, got shape {ov.shape}.")
    try:
        return np.stack(check_overlaps(*np.moveaxis(ov, -1, 0), d=params.d), axis=-1)
    except ValueError as exc:  # which overlap, under the argument's own name
        raise ValueError(f"`{name}`: {exc}") from None


class Runs:
    """The state of a batch of runs between the exact steps and the integration."""

    def __init__(self, params, alpha, schedule, y: np.ndarray, local_tol: float = LOCAL_TOL):
        self.params, self.alpha, self.schedule = params, alpha, schedule
        self.local_tol = local_tol
        self.field = Field(params, alpha, schedule)
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
            on_m = on_manifold_runs(y0, F)
            log_growth = n_steps * np.log(map_growth(M, on_m, hw, self.alpha))
            self.error[sub] = np.minimum(
                self.error[sub] * np.exp(np.minimum(log_growth, 690.0)) + ROUNDING * n_steps,
                MAX_ERROR,
            )
            start = float(self.t[sub[0]]) if t0 is not None else 0.0
            out, kv = exact(
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
        y1, est, allowed, rate = step(self.field, y0, self.t[idx], h, at_y)
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
    steps : int, float or array_like
        A whole number of steps, ``0 <= steps <= 1e300``; or one per run, an array that
        broadcasts against the runs ``overlaps.shape[:-1]`` (one start and a list of
        numbers of steps: the run at each, as one batch).
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

    One start and several numbers of steps: the runs as one batch.

    >>> sweep = advance(p, start, [2e6, 2e7, 2e8], alpha=4e-3)
    >>> print(" ".join(f"{k:.6f}" for k in sweep.overlaps[:, 0]))
    0.447365 0.483945 0.517883
    """
    params = check_params(params)
    ov = burst_starts(params, overlaps, "overlaps")
    target = run_steps(steps)
    alpha = positive_real(alpha, "alpha", upper=MAX_ALPHA)
    shape = ov.shape[:-1]
    if isinstance(target, np.ndarray):
        try:
            shape = np.broadcast_shapes(shape, target.shape)
        except ValueError:
            raise ValueError(
                f"`steps` must broadcast against the runs of `overlaps`, got shapes "
                f"{target.shape} and {ov.shape[:-1]}."
            ) from None
        ov = np.broadcast_to(ov, (*shape, 5))
        target = np.broadcast_to(target, shape).copy()  # Advanced.steps: one per run
    runs = Runs(params, alpha, schedule, ov.reshape(-1, 5).T.copy())
    stop = np.broadcast_to(target, shape).reshape(-1)  # each run's (read, never written)
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
