"""Ensembles of runs off M: where uniform initialisations end, their shares, and the runs themselves."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from ..critical import CriticalPoints, critical_points, describe, overlaps_text
from ..longrun import Fates, fate
from ..params import Params, check_overlaps, check_params
from ..results import html_table, text_table
from ..trajectory import MAX_STEPS
from ..validate import positive_int, positive_real, random_generator
from .stability import FLOW_FEASIBILITY

__all__ = [
    "AT_DISTANCE",
    "AT_GRADIENT",
    "MAX_PORTRAIT_STEPS",
    "BasinFractions",
    "Basins",
    "basin_fractions",
    "basins",
]


#: A run is at a minimum when within this distance of it (up to symmetry) ...
AT_DISTANCE = 1e-3


#: ... and its Riemannian gradient norm is below this.
AT_GRADIENT = 1e-3


@dataclass
class BasinFractions:
    """Which minimum runs from a uniform initialisation reach, and how often.

    Attributes
    ----------
    attractors : list of CriticalPoint
        The minima of :func:`slr_theory.critical_points` (one per orbit).
    fractions, stderr : ndarray
        Fraction of runs ending at each attractor (or one of its symmetric images), and
        the binomial standard error ``sqrt(p (1 - p) / n)``.
    none_fraction : float
        Runs that reached no minimum (a saddle's neighbourhood, a plateau).
    unreached : ndarray, shape ``(m, 5)``
        Where those runs ended.
    final : ndarray, shape ``(n, 5)``
        Every run's end point.
    label : ndarray of int, shape ``(n,)``
        Index of the attractor reached, ``-1`` for none.
    nearest, distance : ndarray, shape ``(n,)``
        For every run, the nearest attractor (up to symmetry) and the distance to it:
        where the runs that reached none are heading or stalled.
    dynamics : str
    n : int
    gradient : ndarray, shape ``(n,)``
        Norm of every run's Riemannian gradient at its end point.
    steps_run : ndarray of int, shape ``(n,)``
        PGD steps each run took (all ``steps`` unless ``max_steps`` let it go on).
    stalled : ndarray of bool, shape ``(n,)``
        Runs that reached no minimum and stopped moving (a fixed point or a cycle of
        the PGD map that is no minimum): continuing them would change nothing.
    trace_step : ndarray of int, shape ``(m,)``
        With ``trace_every``: the recorded steps.
    trace_distance : ndarray, shape ``(m, n)``
        With ``trace_every``: every run's distance to M, ``sqrt(theta^2 + eta^2 +
        rho^2)``, at the recorded steps (NaN once the run has stopped).
    """

    attractors: list
    fractions: np.ndarray
    stderr: np.ndarray
    none_fraction: float
    unreached: np.ndarray
    final: np.ndarray
    label: np.ndarray
    nearest: np.ndarray
    distance: np.ndarray
    dynamics: str
    n: int
    gradient: np.ndarray | None = None
    steps_run: np.ndarray | None = None
    stalled: np.ndarray | None = None
    trace_step: np.ndarray | None = None
    trace_distance: np.ndarray | None = None

    def _table(self) -> tuple:
        rows = [
            [overlaps_text(q.overlaps), q.kind, f"{f:.3f} ± {e:.3f}"]
            for q, f, e in zip(self.attractors, self.fractions, self.stderr, strict=True)
        ]
        rows.append(["none", "no minimum reached", f"{self.none_fraction:.3f}"])
        return (
            ["minimum (up to symmetry)", "kind", "share ± s.e."],
            rows,
            f"{self.n} runs ({self.dynamics})",
        )

    def _repr_html_(self) -> str:
        """What a notebook shows: each minimum with the share of runs that reach it."""
        return html_table(*self._table())

    def __repr__(self) -> str:
        """The same table as text (the runs' arrays are one attribute away)."""
        header, rows, caption = self._table()
        return text_table(header, rows, "BasinFractions: " + caption)


def _nearest_attractor(final: np.ndarray, attractors: list, coords=None):
    """Nearest attractor (up to symmetry) of each end point, and the distance to it, on
    the overlaps `coords` (the model's :meth:`~slr_theory.models.Model.state_overlaps`)."""

    coords = np.arange(5) if coords is None else coords
    nearest = np.full(final.shape[0], -1)
    best = np.full(final.shape[0], np.inf)
    for j, q in enumerate(attractors):
        images = np.array([q.overlaps, *q.symmetry_copies])[:, coords]
        gap = final[:, None, coords] - images[None]
        dist = np.min(np.linalg.norm(gap, axis=-1), axis=1)
        closer = dist < best
        nearest[closer] = j
        best[closer] = dist[closer]
    return nearest, best


def basin_fractions(
    params: Params,
    n: int,
    *,
    rng: np.random.Generator | int | None = 0,
    dynamics: str = "pgd",
    alpha: float | None = None,
    steps: int | None = None,
    t_max: float | None = None,
    tol: float = 0.05,
    points: CriticalPoints | None = None,
    schedule=None,
    grad_tol: float | None = None,
    max_steps: int | None = None,
    trace_every: int | None = None,
) -> BasinFractions:
    """Fractions of uniform initialisations on the spheres that each minimum attracts.

    A run is *at* a minimum when its overlaps are within `tol` of it (or of a symmetric
    image) and, with `grad_tol`, its Riemannian gradient is below `grad_tol` too: the
    distance alone cannot tell a run at a minimum from one passing by. Every other run
    is "not converged" after its steps, and :attr:`BasinFractions.distance` says how far
    it is from the nearest minimum.

    Parameters
    ----------
    params : Params
        ``d >= 4``.
    n : int
        Runs, ``1 <= n <= 1e6``, initialised exactly in law as uniform ``k, v`` on
        ``S^{d-1}`` (:func:`slr_theory.sample_initial_overlaps`).
    rng : numpy.random.Generator or int or None
    dynamics : {"pgd", "flow"}
        PGD at step `alpha` for `steps` steps (exact, on the overlaps), or the gradient
        flow up to `t_max` (:func:`slr_theory.flows.overlap_flow`, one run at a time).
    alpha, steps : optional
        For ``"pgd"`` (both required).
    t_max : float, optional
        For ``"flow"`` (required).
    tol : float
        Distance within which a run is at a minimum.
    points : CriticalPoints, optional
        The critical points to classify against (default: :func:`critical_points` at the
        final temperature).
    schedule : callable ``step -> lam``, optional
        A temperature schedule for ``"pgd"`` (e.g. :func:`slr_theory.paper_schedule`);
        the runs are then classified against the critical points at the last temperature.
    grad_tol : float, optional
        Largest Riemannian gradient norm of a run at a minimum (default: no test).
    max_steps : int, optional
        ``"pgd"`` without a schedule: runs not yet at a minimum after `steps` go on, `steps`
        at a time, until they are, until they stop moving (:attr:`BasinFractions.stalled`)
        or until `max_steps` (a multiple of `steps`).
    trace_every : int, optional
        ``"pgd"`` without a schedule: record every run's distance to M every
        `trace_every` steps (a divisor of `steps`).

    Returns
    -------
    BasinFractions

    Examples
    --------
    >>> from slr_theory import Params, critical_points
    >>> from slr_theory.landscape import basin_fractions
    >>> p = Params.paper(lam=0.1)
    >>> pts = critical_points(p)  # the minima to classify against, found once
    >>> b = basin_fractions(p, 16, alpha=4e-3, steps=2000, points=pts)
    >>> len(b.attractors), bool(abs(b.fractions.sum() + b.none_fraction - 1) < 1e-12)
    (2, True)
    >>> b = basin_fractions(p, 8, alpha=4e-3, steps=20_000, tol=1e-3, grad_tol=1e-3,
    ...                     max_steps=200_000, points=pts)
    >>> float(b.none_fraction), bool(b.gradient.max() < 1e-3)
    (0.0, True)
    """
    from ..dynamics import pgd, sample_initial_overlaps

    params = check_params(params)
    n = positive_int(n, "n", upper=10**6)
    rng = random_generator(rng)
    tol = positive_real(tol, "tol")
    if grad_tol is not None:
        grad_tol = positive_real(grad_tol, "grad_tol")
    if dynamics not in ("pgd", "flow"):
        raise ValueError(f"`dynamics` must be 'pgd' or 'flow', got {dynamics!r}.")
    if (max_steps is not None or trace_every is not None) and (
        dynamics != "pgd" or schedule is not None
    ):
        raise ValueError(
            "`max_steps` and `trace_every` need dynamics='pgd' without a schedule, got "
            f"dynamics={dynamics!r} and schedule={schedule!r}."
        )
    ov0 = sample_initial_overlaps(params, rng, n)
    final_params = params
    trace_step = trace_distance = None
    if dynamics == "pgd":
        if alpha is None or steps is None:
            raise ValueError("dynamics='pgd' needs `alpha` and `steps`.")
        steps = positive_int(steps, "steps")
        alpha = positive_real(alpha, "alpha")
        if schedule is None:
            if points is None:
                points = critical_points(params, rng=0)
            attractors = [q for q in points if q.index == 0]
            final, steps_run, stalled, trace_step, trace_distance = _run_to_minima(
                params, ov0, alpha, steps, max_steps, trace_every, attractors, tol, grad_tol
            )
        else:
            res = pgd(params, ov0, alpha, steps, schedule=schedule, record_every=steps)
            final = res.overlaps[-1]
            final_params = params.replace(lam=float(res.lam[-1]))
            steps_run = np.full(n, steps)
            stalled = np.zeros(n, dtype=bool)
    else:
        if t_max is None:
            raise ValueError("dynamics='flow' needs `t_max`.")
        from ..flows import overlap_flow

        t_max = positive_real(t_max, "t_max")
        final = np.array(
            [overlap_flow(params, o, t_max, dense_output=False).overlaps[-1] for o in ov0]
        )
        # the integration keeps the Gram matrix feasible to its tolerance (rtol 1e-10), not
        # to rounding: the end points are the nearest feasible ones within that
        final = np.stack(check_overlaps(*final.T, d=params.d, atol=FLOW_FEASIBILITY), axis=1)
        steps_run = stalled = None
    if points is None:
        points = critical_points(final_params, rng=0)
    attractors = [q for q in points if q.index == 0]
    coords = params.model.state_overlaps(params)
    nearest, distance = _nearest_attractor(final, attractors, coords)
    gradient = _gradient_norm(final_params, final)
    at = distance < tol
    if grad_tol is not None:
        at &= gradient < grad_tol
    label = np.where(at, nearest, -1)
    counts = np.array([(label == j).sum() for j in range(len(attractors))], dtype=float)
    frac = counts / n
    return BasinFractions(
        attractors=attractors,
        fractions=frac,
        stderr=np.sqrt(frac * (1 - frac) / n),
        none_fraction=float((label < 0).mean()),
        unreached=final[label < 0],
        final=final,
        label=label,
        nearest=nearest,
        distance=distance,
        dynamics=dynamics,
        n=n,
        gradient=gradient,
        steps_run=steps_run,
        stalled=None if stalled is None else stalled & (label < 0),
        trace_step=trace_step,
        trace_distance=trace_distance,
    )


def _gradient_norm(params: Params, overlaps: np.ndarray) -> np.ndarray:
    """Norm of the Riemannian gradient at overlaps ``(n, 5)``."""
    from ..geometry import gradient_norms
    from ..risk import risk_grad

    g = gradient_norms(overlaps, risk_grad(params, *overlaps.T))
    return np.hypot(g[:, 0], g[:, 1])


def _run_to_minima(params, ov0, alpha, steps, max_steps, trace_every, attractors, tol, grad_tol):
    """PGD `steps` at a time on the runs not yet at a minimum (see :func:`basin_fractions`)."""
    from ..dynamics import pgd

    n = ov0.shape[0]
    max_steps = steps if max_steps is None else positive_int(max_steps, "max_steps")
    if max_steps % steps:
        raise ValueError(f"`max_steps` must be a multiple of `steps` ({steps}), got {max_steps}.")
    every = steps if trace_every is None else positive_int(trace_every, "trace_every")
    if steps % every:
        raise ValueError(f"`trace_every` must divide `steps` ({steps}), got {every}.")
    coords = params.model.state_overlaps(params)  # where a run is read (once, not per round)
    current = np.array(ov0, dtype=np.float64)
    steps_run = np.zeros(n, dtype=np.int64)
    stalled = np.zeros(n, dtype=bool)
    active = np.arange(n)
    trace_steps = [np.zeros(1, dtype=np.int64)]
    traces = [np.sqrt(np.sum(current[None, :, 2:] ** 2, axis=-1))]
    done_steps = 0
    while active.size and done_steps < max_steps:
        res = pgd(params, current[active], alpha, steps, record_every=every)
        end = res.overlaps[-1]
        moved = np.max(np.abs(end - current[active]), axis=-1)
        current[active] = end
        done_steps += steps
        steps_run[active] = done_steps
        block = np.full((res.step.size - 1, n), np.nan)
        block[:, active] = np.sqrt(np.sum(res.overlaps[1:, :, 2:] ** 2, axis=-1))
        trace_steps.append(res.step[1:] + done_steps - steps)
        traces.append(block)
        _, distance = _nearest_attractor(end, attractors, coords)
        arrived = distance < tol
        if grad_tol is not None:
            arrived &= _gradient_norm(params, end) < grad_tol
        still = moved <= 1e-12 * np.maximum(1.0, np.max(np.abs(end), axis=-1))
        stalled[active] = still & ~arrived
        active = active[~arrived & ~still]
    if trace_every is None:
        return current, steps_run, stalled, None, None
    return current, steps_run, stalled, np.concatenate(trace_steps), np.concatenate(traces)


@dataclass
class Basins:
    """One ensemble of PGD runs from uniform initialisations, and where each run ended.

    Attributes
    ----------
    n, alpha, steps, max_steps : int, float, int, int
        Runs; the step; steps per round; the most steps a run may take.
    minima : ndarray, shape (m, 5)
        The minima (one per orbit) the runs are classified against.
    names : list of str
    fractions, stderr : ndarray, shape (m,)
        Share of runs at each minimum and its binomial standard error.
    label : ndarray of int, shape (n,)
        The minimum each run is at (:data:`AT_DISTANCE`, :data:`AT_GRADIENT`), -1 for
        none.
    nearest, distance, gradient : ndarray, shape (n,)
        The nearest minimum of every run, its distance to it, its gradient norm.
    steps_run : ndarray of int, shape (n,)
    stalled : ndarray of bool, shape (n,)
        Not at a minimum and no longer moving (a cycle or fixed point of the PGD map).
    final : ndarray, shape (n, 5)
    trace_step : ndarray of int, shape (r,)
    trace_distance : ndarray, shape (r, n)
        Distance to M at the recorded steps (NaN once a run has stopped).
    fates : Fates or None
        The same starts followed to their end (:func:`slr_theory.fate`, balls of radius
        :data:`AT_DISTANCE`, at most `max_steps` exact steps a run): where every run ends
        and how many steps it takes, at any budget (:meth:`Fates.within`).
    """

    n: int
    alpha: float
    steps: int
    max_steps: int
    minima: np.ndarray
    names: list[str]
    fractions: np.ndarray
    stderr: np.ndarray
    label: np.ndarray
    nearest: np.ndarray
    distance: np.ndarray
    gradient: np.ndarray
    steps_run: np.ndarray
    stalled: np.ndarray
    final: np.ndarray
    trace_step: np.ndarray
    trace_distance: np.ndarray
    fates: Fates | None = None

    @property
    def unconverged(self) -> int:
        """Runs at no minimum after `max_steps` steps."""
        return int((self.label < 0).sum())

    def _repr_html_(self) -> str:
        """What a notebook shows: each minimum with its share after the budget and, where
        the fates were followed, to the end."""
        out = html_table(*self._table())
        return out + (self.fates._repr_html_() if self.fates is not None else "")

    def __repr__(self) -> str:
        """The same tables as text (the runs' arrays are one attribute away)."""
        header, rows, caption = self._table()
        out = text_table(header, rows, "Basins: " + caption)
        return out + ("\n" + repr(self.fates) if self.fates is not None else "")

    def _table(self) -> tuple:
        rows = []
        for j, name in enumerate(self.names):
            row = [name, f"{self.fractions[j]:.3f} ± {self.stderr[j]:.3f}"]
            rows.append(row)
        rows.append([f"none after {self.max_steps} steps", f"{self.unconverged / self.n:.3f}"])
        return (
            ["minimum", "share ± s.e."],
            rows,
            f"{self.n} PGD runs at α = {self.alpha:g}, {self.max_steps} steps at most",
        )

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.off_manifold_figure` of these runs (the distance to
        M over time, grouped by end state).

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``dpi``, ``ax`` of :func:`~slr_theory.plotting.off_manifold_figure`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from ..plotting.ensembles import draw_off_manifold

        return draw_off_manifold(self, path, **options)


#: Most PGD steps :func:`portrait_data` draws (a typo must not start hours of work).
MAX_PORTRAIT_STEPS = 10**7


def _largest_divisor_at_most(n: int, cap: int) -> int:
    """The largest divisor of `n` not above `cap` (trial division to sqrt(n), vectorised:
    n <= MAX_STEPS = 1e12 costs 1e6 remainders; counting down from `cap` could take
    `cap` of them)."""
    low = np.arange(1, math.isqrt(n) + 1, dtype=np.int64)
    low = low[n % low == 0]
    divisors = np.concatenate([low, n // low])
    return int(divisors[divisors <= cap].max())


def basins(
    params: Params,
    n: int,
    *,
    alpha: float,
    steps: int = 20_000,
    max_steps: int = 200_000,
    records: int = 100,
    rng=0,
    points=None,
) -> Basins:
    """One ensemble of PGD runs from uniform starts, run until each is at a minimum or stalls.

    Runs go on `steps` at a time until at a minimum (within :data:`AT_DISTANCE`, gradient
    below :data:`AT_GRADIENT`), stalled, or at `max_steps`
    (:func:`slr_theory.landscape.basin_fractions`).

    Parameters
    ----------
    params : Params
    n : int
    alpha : float
    steps, max_steps : int
        Steps per round, ``1 <= steps <= 1e12``, and the most a run may take (a multiple
        of `steps`).
    records : int
        Distance-to-M records per round of `steps` (the largest divisor of `steps` not
        above ``steps // records`` is the spacing).
    rng : int or numpy.random.Generator
    points : CriticalPoints, optional

    Returns
    -------
    Basins
    """

    from ..dynamics import sample_initial_overlaps

    params = check_params(params)
    n = positive_int(n, "n", upper=10**6)
    steps = positive_int(steps, "steps", upper=MAX_STEPS)
    max_steps = positive_int(max_steps, "max_steps", upper=MAX_STEPS)
    alpha = positive_real(alpha, "alpha")
    records = positive_int(records, "records")
    every = _largest_divisor_at_most(steps, max(1, steps // records))
    gen = random_generator(rng)
    starts = sample_initial_overlaps(params, copy.deepcopy(gen), n)  # what basin_fractions draws
    if points is None:
        points = critical_points(params, rng=0)
    b = basin_fractions(
        params,
        n,
        rng=gen,
        alpha=alpha,
        steps=steps,
        tol=AT_DISTANCE,
        grad_tol=AT_GRADIENT,
        max_steps=max_steps,
        trace_every=every,
        points=points,
    )
    minima = np.array([q.overlaps for q in b.attractors]).reshape(-1, 5)
    return Basins(
        n=n,
        alpha=alpha,
        steps=steps,
        max_steps=max_steps,
        minima=minima,
        names=[describe(m) for m in minima],
        fractions=b.fractions,
        stderr=b.stderr,
        label=b.label,
        nearest=b.nearest,
        distance=b.distance,
        gradient=b.gradient,
        steps_run=b.steps_run,
        stalled=b.stalled,
        final=b.final,
        trace_step=b.trace_step,
        trace_distance=b.trace_distance,
        fates=fate(
            params, starts, alpha=alpha, tol=AT_DISTANCE, points=points, max_exact_steps=max_steps
        ),
    )
