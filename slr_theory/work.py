"""Bounded work: what a long computation will cost, estimated before it starts.

Each command that can be asked for unbounded work (steps, starts, samples, repeats)
estimates its wall time from the costs below before computing, and refuses an estimate
beyond its ceiling, ``--max-minutes`` (default :data:`DEFAULT_MINUTES`), unless the user
raises the ceiling explicitly. The long computations show a progress bar with an ETA.

The unit costs were measured on a 2-core machine (``python benchmarks/work.py`` prints
them for yours); they are upper estimates of the slowest branch (off the invariant
manifold), so an estimate errs on the long side.
"""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass

from .validate import positive_int

__all__ = [
    "COSTS",
    "DEFAULT_MINUTES",
    "WorkEstimate",
    "WorkLimit",
    "atlas_cost",
    "critical_cost",
    "model_cost_factor",
    "pgd_cost",
    "reproduce_cost",
    "statistics_cost",
    "usable_cores",
    "verify_cost",
    "worker_count",
]

#: The ceiling on one command's estimated wall time, in minutes, unless raised.
DEFAULT_MINUTES = 30.0

#: Seconds per unit of work (2-core machine; ``benchmarks/work.py`` measures them).
COSTS: dict[str, float] = {
    "pgd_step": 2.0e-4,  # one exact PGD step of a batch, its fixed part (off M)
    "pgd_run_step": 6.5e-7,  # one step of one run in a batch of many
    "sgd_run_step": 7.0e-5,  # one SGD step of one run (batch 5, d = 80)
    "critical_start": 5.0e-3,  # one random start of the full-space search
    "critical_fixed": 1.5,  # the structured starts and the classification
    "token": 3.0e-7,  # one token of one Bayes-risk Monte Carlo sample
    "verify_fixed": 17.0,  # the mpmath references of `verify`
    "verify_sample": 2.0e-5,  # one Monte Carlo draw, summed over the checks
    "atlas_cell_fixed": 0.5,  # one atlas cell beyond its search and basins (M's stability)
    "atlas_bookkeeping": 2.0e-3,  # committing one cell (benchmarks/atlas_bookkeeping.py)
    # the report (benchmarks/report.py; erf at the paper's parameters, lambda = 0.1):
    "study_model": 25.0,  # its parts at the model (search, portrait, basins, continuation, ...)
    "study_checks": 13.0,  # the model's checks, run beside with the paper's experiments
    "study_drawing": 6.0,  # the figures, the Markdown and the saved results
}


class WorkLimit(ValueError):
    """An estimate beyond the ceiling; the message names the flag that asked for it.

    Attributes
    ----------
    flag : str
        The flag (or argument) whose value makes the work large.
    detail : str
        The sentence, without the flag's name.
    """

    def __init__(self, flag: str, detail: str) -> None:
        super().__init__(f"`{flag}`: {detail}")
        self.flag, self.detail = flag, detail


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one).

    Returns
    -------
    int
        At least 1.
    """
    import os

    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def worker_count(jobs: int | None) -> int:
    """The worker processes a command starts for `jobs`: every usable core for None, else
    `jobs` itself, at most the usable cores (:func:`usable_cores`).

    Parameters
    ----------
    jobs : int or None

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If `jobs` is not a positive integer, or more than the usable cores (more workers
        than cores only slow each other down).

    Examples
    --------
    >>> from slr_theory.work import usable_cores, worker_count
    >>> worker_count(None) == usable_cores(), worker_count(1)
    (True, 1)
    """
    cores = usable_cores()
    if jobs is None:
        return cores
    jobs = positive_int(jobs, "jobs", upper=4096)
    if jobs > cores:
        raise ValueError(
            f"`jobs` must be at most the {cores} cores this process may run on (more "
            f"workers than cores only slow each other down), got {jobs}."
        )
    return jobs


#: Serial numbers of the points :func:`model_cost_factor` times (each a new point).
_TIMED_POINTS = itertools.count(1)


def model_cost_factor(params, *, points: int = 2048) -> float:
    """How much one risk-and-gradient evaluation of `params`' model costs, in units of erf's.

    Measured, not assumed: the time of :func:`slr_theory.risk_and_grad` on `points`
    overlaps of M at `params` (after a first call, which may build the model's tables;
    repeated for at least 50 ms, so that one point is timed as steadily as many; the least
    of three such means, so that a pause of the machine is not priced), over the same at
    the paper's pointwise ``erf`` attention (the model :data:`COSTS` were measured on).
    Every call is at new points, in this measurement and in every other: a model that keeps
    its last evaluations (softmax's direct quadrature) is not priced at a lookup. A
    quadrature nonlinearity or softmax attention is priced at what it costs here.

    Parameters
    ----------
    params : Params
    points : int
        Overlaps per timing (``1 <= points <= 1e6``).

    Returns
    -------
    float
        At least 1.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.work import model_cost_factor
    >>> model_cost_factor(Params.paper(), points=1)  # erf is the unit
    1.0
    """
    import time

    import numpy as np

    from .params import check_params
    from .risk import risk_and_grad

    params = check_params(params)
    points = positive_int(points, "points", upper=10**6)
    grid = np.linspace(-0.9, 0.9, points)

    def best(p) -> float:
        def one() -> None:
            at = grid * (1.0 - 1e-12 * next(_TIMED_POINTS))  # new points: nothing kept
            risk_and_grad(p, at, at[::-1])

        one()  # the first call may build the model's tables
        means = []
        for _rep in range(3):
            calls, t0 = 0, time.perf_counter()
            while calls < 2 or (time.perf_counter() - t0 < 0.05 and calls < 10_000):
                one()
                calls += 1
            means.append((time.perf_counter() - t0) / calls)
        return min(means)

    reference = params.replace(nonlinearity="erf", attention="pointwise")
    if params == reference:
        return 1.0
    return max(1.0, best(params) / max(best(reference), 1e-9))


def _count(value: object, name: str) -> int:
    """A count of work: an integer ``>= 0`` (no upper bound: estimating is what it is for)."""
    return positive_int(value, name, allow_zero=True)


def _real(count: int) -> float:
    """A count as a float (``inf`` past the largest one: a product of counts can pass it)."""
    return float(count) if count <= sys.float_info.max else math.inf


def _finite(estimate: WorkEstimate, *names: str) -> WorkEstimate:
    """`estimate` if its seconds are finite; a ``ValueError`` naming the counts otherwise."""
    if not math.isfinite(estimate.seconds):
        given = ", ".join(f"`{n}`" for n in names)
        raise ValueError(
            f"{given}: the work they set ({estimate.what}) is past what a time estimate "
            "can count (more than 1e308 seconds); give smaller counts."
        )
    return estimate


def _duration(seconds: float) -> str:
    for unit, size in (("years", 3.15e7), ("days", 86400.0), ("hours", 3600.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    if seconds >= 120:
        return f"{seconds / 60:.3g} minutes"
    return f"{seconds:.3g} seconds"


@dataclass(frozen=True)
class WorkEstimate:
    """The estimated wall time of one computation.

    Attributes
    ----------
    what : str
        The work, in the user's units (``"2e+06 PGD steps of 1 run"``).
    seconds : float
        Estimated wall time on a 2-core machine.
    flag : str
        The flag that sets the size of the work (named when it is refused).
    """

    what: str
    seconds: float
    flag: str

    def check(self, max_minutes: float | None = DEFAULT_MINUTES) -> WorkEstimate:
        """Return the estimate if it is within `max_minutes`; raise :class:`WorkLimit` otherwise.

        Parameters
        ----------
        max_minutes : float or None
            The ceiling; ``None`` or ``inf`` lifts it.

        Returns
        -------
        WorkEstimate
        """
        if max_minutes is None or self.seconds <= 60 * max_minutes:
            return self
        need = max(1, int(self.seconds / 60 * 1.5) + 1)
        raise WorkLimit(
            self.flag,
            f"{self.what} are estimated at {_duration(self.seconds)}, beyond the ceiling of "
            f"{max_minutes:g} minutes; pass --max-minutes {need} to run it anyway",
        )


def _factor(model_factor: object) -> float:
    """A model's cost relative to erf's (:func:`model_cost_factor`): a number ``>= 1``."""
    if isinstance(model_factor, bool) or not isinstance(model_factor, (int, float)):
        raise ValueError(f"`model_factor` must be a number >= 1, got {model_factor!r}.")
    factor = float(model_factor)
    if not 1.0 <= factor < float("inf"):
        raise ValueError(f"`model_factor` must be at least 1, got {model_factor!r}.")
    return factor


def _pgd_seconds(steps: int, runs: int) -> float:
    """Exact PGD's time for `steps` steps of `runs` runs of erf (``inf`` past 1e308)."""
    return _real(steps) * (COSTS["pgd_step"] + _real(runs) * COSTS["pgd_run_step"])


def pgd_cost(
    steps: int, runs: int = 1, *, model_factor: float = 1.0, flag: str = "--steps"
) -> WorkEstimate:
    """Exact PGD on the overlaps: `steps` steps of a batch of `runs` runs.

    Parameters
    ----------
    steps, runs : int
    model_factor : float
        The model's cost relative to erf's (``>= 1``; :func:`model_cost_factor`).
    flag : str
        The flag to name.

    Returns
    -------
    WorkEstimate

    Examples
    --------
    >>> from slr_theory.work import pgd_cost
    >>> pgd_cost(20_000).seconds
    4.013
    """
    steps, runs = _count(steps, "steps"), _count(runs, "runs")
    sec = _pgd_seconds(steps, runs) * _factor(model_factor)
    what = f"{steps:g} PGD steps of {runs:g} run{'s' * (runs != 1)}"
    return _finite(WorkEstimate(what, sec, flag), "steps", "runs")


def critical_cost(
    starts: int, *, model_factor: float = 1.0, flag: str = "--starts"
) -> WorkEstimate:
    """The full-space critical-point search from `starts` random starts.

    Parameters
    ----------
    starts : int
    model_factor : float
        The model's cost relative to erf's (``>= 1``; :func:`model_cost_factor`).
    flag : str

    Returns
    -------
    WorkEstimate
    """
    starts = _count(starts, "starts")
    sec = (COSTS["critical_fixed"] + starts * COSTS["critical_start"]) * _factor(model_factor)
    return _finite(WorkEstimate(f"{starts:g} random starts of the search", sec, flag), "starts")


def statistics_cost(samples: int, lengths: list[int], *, flag: str = "--samples") -> WorkEstimate:
    """The Bayes-risk Monte Carlo of ``slr-theory stats``: `samples` per row, one row per length.

    Parameters
    ----------
    samples : int
    lengths : list of int
        The sequence length of each row.
    flag : str

    Returns
    -------
    WorkEstimate
    """
    samples = _count(samples, "samples")
    if not isinstance(lengths, (list, tuple)):
        raise ValueError(f"`lengths` must be a list of sequence lengths, got {lengths!r}.")
    tokens = _real(samples) * sum(_real(_count(x, "lengths")) for x in lengths)
    estimate = WorkEstimate(f"{tokens:g} Monte Carlo tokens", tokens * COSTS["token"], flag)
    return _finite(estimate, "samples", "lengths")


def reproduce_cost(
    pgd_steps: int, pgd_runs: int, sgd_steps: int, sgd_runs: int, *, flag: str = "--repeats"
) -> WorkEstimate:
    """The paper's experiments: the PGD runs and the SGD runs.

    The PGD experiments are costed as one loop of all their runs over the longest one's
    steps. They run one after the other, and measure less than that: the paper's four,
    estimated at 33 s, took 15-19 s (``benchmarks/dynamics.py``).

    Parameters
    ----------
    pgd_steps, pgd_runs : int
        Steps of the longest PGD experiment, and the runs of them all.
    sgd_steps, sgd_runs : int
        Steps of each SGD run and their number.
    flag : str

    Returns
    -------
    WorkEstimate
    """
    pgd_steps, pgd_runs = _count(pgd_steps, "pgd_steps"), _count(pgd_runs, "pgd_runs")
    sgd_steps, sgd_runs = _count(sgd_steps, "sgd_steps"), _count(sgd_runs, "sgd_runs")
    sec = pgd_cost(pgd_steps, pgd_runs).seconds * (pgd_runs > 0)
    sec += _real(sgd_steps) * _real(sgd_runs) * COSTS["sgd_run_step"]
    runs = _real(pgd_runs) + _real(sgd_runs)
    estimate = WorkEstimate(
        f"{runs:g} runs ({_real(pgd_steps):g} PGD steps, {_real(sgd_steps):g} SGD steps)",
        sec,
        flag,
    )
    return _finite(estimate, "pgd_steps", "pgd_runs", "sgd_steps", "sgd_runs")


def verify_cost(samples: int, *, flag: str = "--samples") -> WorkEstimate:
    """The checks of ``slr-theory verify`` with `samples` Monte Carlo draws each.

    Parameters
    ----------
    samples : int
    flag : str

    Returns
    -------
    WorkEstimate
    """
    samples = _count(samples, "samples")
    sec = COSTS["verify_fixed"] + samples * COSTS["verify_sample"]
    return _finite(WorkEstimate(f"the checks with {samples:g} draws", sec, flag), "samples")


def atlas_cost(
    cells: int,
    *,
    basin_runs: int,
    max_steps: int,
    starts: int,
    workers: int,
    model_factor: float = 1.0,
    flag: str = "--lam",
) -> WorkEstimate:
    """An atlas of `cells` cells on `workers` workers, bookkeeping included.

    Each cell costs the search from `starts` random starts, `basin_runs` runs of at most
    `max_steps` steps and M's stability map, scaled by the model's measured cost
    (:func:`model_cost_factor`); the cells share the `workers`, and every cell is
    committed by the process that runs the atlas (:data:`COSTS` ``"atlas_bookkeeping"``),
    one after the other.

    Parameters
    ----------
    cells : int
        The cells still to compute.
    basin_runs, max_steps, starts : int
        Of every cell.
    workers : int
        The workers that will run cells (local processes, or a cluster's threads).
    model_factor : float
        The model's cost relative to erf's (``>= 1``).
    flag : str

    Returns
    -------
    WorkEstimate

    Examples
    --------
    >>> from slr_theory.work import COSTS, atlas_cost
    >>> one = atlas_cost(1, basin_runs=1000, max_steps=200_000, starts=512, workers=1)
    >>> two = atlas_cost(2, basin_runs=1000, max_steps=200_000, starts=512, workers=2)
    >>> round((two.seconds - one.seconds) / COSTS["atlas_bookkeeping"], 9)  # one more commit
    1.0
    """
    cells, workers = _count(cells, "cells"), positive_int(workers, "workers")
    basin_runs, max_steps = _count(basin_runs, "basin_runs"), _count(max_steps, "max_steps")
    starts = _count(starts, "starts")
    factor = _factor(model_factor)
    one = critical_cost(starts).seconds + _pgd_seconds(max_steps, basin_runs)
    one = (one + COSTS["atlas_cell_fixed"]) * factor
    sec = cells * one / workers + cells * COSTS["atlas_bookkeeping"]
    noun = "cell" if cells == 1 else "cells"
    estimate = WorkEstimate(
        f"{cells:g} {noun} of {basin_runs:g} runs on {workers:g} worker{'s' * (workers != 1)}",
        sec,
        flag,
    )
    return _finite(estimate, "cells", "basin_runs", "max_steps", "starts", "workers")
