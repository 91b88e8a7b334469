"""The paper's experiments (Section 5, docs/theory.md §7), reproduced exactly on the overlaps.

The five configurations ship as ``slr_theory/data/experiments.json``.
:func:`run` computes all repeats of one or several of them:

- the gradient-descent ones with exact PGD in overlap space
  (:func:`slr_theory.pgd`, one configuration after the other);
- the SGD one with the exact-in-law overlap chain of :mod:`slr_theory.sgd`.

:func:`write` saves, per configuration, a CSV of the logged values and a figure
with the paper's four panels.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from . import engine
from .dynamics import pgd, sample_initial_overlaps
from .output import Destination
from .params import Params
from .trajectory import SETTLED_SPEED, PGDResult, paper_schedule
from .validate import positive_int, positive_real
from .work import WorkEstimate, reproduce_cost

__all__ = [
    "SETTLED_SPEED",
    "Experiment",
    "ExperimentResult",
    "cost",
    "experiments",
    "output_paths",
    "run",
    "write",
]


@dataclass(frozen=True)
class Experiment:
    """One configuration of the paper's Section 5.

    Attributes
    ----------
    name, method, init : str
        Name; ``"pgd"`` or ``"sgd"``; ``"manifold"`` or ``"sphere"``.
    d, L : int
    lam0, alpha, gamma, eps : float
        Initial temperature, step size, spread, label noise.
    steps, repeats : int
    schedule : bool
        Whether ``lam_t = lam0 / (1 + schedule_c t)``.
    schedule_c : float
    description : str
    batch : int or None
        Mini-batch size (SGD only).
    """

    name: str
    method: str  # "pgd" or "sgd"
    init: str  # "manifold" or "sphere"
    d: int
    lam0: float
    alpha: float
    steps: int
    schedule: bool
    eps: float
    L: int
    gamma: float
    repeats: int
    schedule_c: float
    description: str
    batch: int | None = None

    @property
    def params(self) -> Params:
        return Params(d=self.d, L=self.L, lam=self.lam0, gamma=self.gamma, eps=self.eps)

    @property
    def lr_schedule(self):
        return paper_schedule(self.lam0, self.schedule_c) if self.schedule else None

    def record_every(self, records: int = 1000) -> int:
        """Logging interval giving about `records` records."""
        return max(1, self.steps // records)


@dataclass(frozen=True)
class ExperimentResult:
    """All repeats of one experiment: a :class:`slr_theory.PGDResult` plus its configuration.

    Attributes
    ----------
    experiment : Experiment
    trajectory : PGDResult
        Overlaps ``(n_records, repeats, 5)`` and their risk.
    seed : int
    """

    experiment: Experiment
    trajectory: PGDResult
    seed: int

    def still_moving(self, speed: float = SETTLED_SPEED) -> np.ndarray:
        """Which runs still move at the last record: their overlaps changed by more than
        `speed` per step (max-norm) over the last recorded interval, shape ``(repeats,)``.

        Parameters
        ----------
        speed : float, default :data:`SETTLED_SPEED`
            The settling speed, per step (:data:`SETTLED_SPEED`, the report's and the
            figure's).

        Returns
        -------
        ndarray of bool

        Examples
        --------
        >>> from slr_theory.experiments import run
        >>> res = run(["gd_manifold"], repeats=2, steps_scale=0.001, records=3)["gd_manifold"]
        >>> res.still_moving(1e-9).shape
        (2,)
        """
        tr = self.trajectory
        if len(tr.step) < 2:
            return np.zeros(tr.overlaps.shape[1], dtype=bool)
        gap = float(tr.step[-1] - tr.step[-2])
        delta = np.max(np.abs(tr.overlaps[-1] - tr.overlaps[-2]), axis=-1)
        return delta / gap >= positive_real(speed, "speed")

    def _table(self) -> tuple:
        header, rows, caption = self.trajectory.table()
        moving = int(self.still_moving().sum())
        runs = len(self.still_moving())
        settled = (
            f"{moving} of {runs} still moving at the end of the budget"
            if moving
            else f"all {runs} settled"
        )
        return header, rows, f"{self.experiment.name} (seed {self.seed}): {caption}; {settled}"

    def _repr_html_(self) -> str:
        """What a notebook shows: the runs' ends and whether they settled."""
        from .results import html_table

        return html_table(*self._table())

    def __repr__(self) -> str:
        """The same table as text."""
        from .results import text_table

        header, rows, caption = self._table()
        return text_table(header, rows, "ExperimentResult: " + caption)

    def optimum_excess(self) -> np.ndarray:
        """The excess risk of ``(k*, v*)`` (informative, distractors and interactions
        summed) at each record's temperature, shape ``(n_records,)``: the level the
        runs' excess risk ``R - eps^2`` approaches, which the figure draws.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> from slr_theory.experiments import run
        >>> res = run(["gd_manifold"], repeats=1, steps_scale=0.001, records=3)["gd_manifold"]
        >>> res.optimum_excess().shape == res.trajectory.step.shape
        True
        """
        tr = self.trajectory
        one, zero = np.ones(len(tr.step)), np.zeros(len(tr.step))
        excess = engine.components(
            self.experiment.params, (one, one, zero, zero, zero), lam=tr.lam
        )
        return excess.sum(axis=0)


def experiments() -> dict[str, Experiment]:
    """The configurations of ``data/experiments.json``, by name.

    Returns
    -------
    dict of str to Experiment

    Examples
    --------
    >>> from slr_theory.experiments import experiments
    >>> list(experiments())
    ['gd_manifold', 'gd_sphere_large_lambda', 'gd_sphere_small_lambda', 'gd_sphere_schedule', 'sgd_sphere_schedule']
    >>> experiments()["sgd_sphere_schedule"].batch
    5
    """
    text = resources.files("slr_theory").joinpath("data/experiments.json").read_text()
    data = json.loads(text)
    common = data["common"]
    return {e["name"]: Experiment(**(common | e)) for e in data["experiments"]}


def _select(names) -> list[Experiment]:
    table = experiments()
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple)) or not names:
        raise ValueError(f"`names` must be a name or a non-empty list of names, got {names!r}.")
    out = []
    for n in names:
        if isinstance(n, str) and n == "all":
            out.extend(table.values())
        elif isinstance(n, str) and n in table:
            out.append(table[n])
        else:
            raise ValueError(
                f"`names`: `name` must be 'all' or one of {', '.join(table)}; got {n!r}."
            )
    return list({e.name: e for e in out}.values())


def run(
    names: str | list[str] = "all",
    *,
    seed: int = 0,
    repeats: int | None = None,
    steps_scale: float = 1.0,
    records: int = 1000,
    progress: bool = False,
    jobs: int = 1,
) -> dict[str, ExperimentResult]:
    """Compute the repeats of the named experiments (``"all"`` for the five).

    Parameters
    ----------
    names : str or list of str
        Experiment names, or ``"all"``.
    seed : int
        Seed of the initialisations (and of the SGD samples); repeat ``i`` of an
        experiment uses the stream ``(seed, experiment index)``.
    repeats : int, optional
        Override the number of repeats (default: the paper's 30).
    steps_scale : float
        Run ``round(steps * steps_scale)`` steps (1 reproduces the paper).
    records : int
        About this many logged steps per experiment.
    progress : bool
        Show a tqdm progress bar over all steps.
    jobs : int
        Processes to use. With ``jobs >= 2`` the SGD experiment runs in a worker
        process while the PGD loop runs here (timings in ``docs/accuracy.md``).
        Results do not depend on `jobs`.

    Returns
    -------
    dict of str to ExperimentResult
        By experiment name, in the order of :func:`experiments`.

    Examples
    --------
    >>> from slr_theory.experiments import run
    >>> out = run("gd_manifold", repeats=3, steps_scale=0.01, records=10)
    >>> tr = out["gd_manifold"].trajectory
    >>> int(tr.step[-1]), tr.overlaps.shape
    (200, (11, 3, 5))
    """
    jobs = positive_int(jobs, "jobs")
    records = positive_int(records, "records")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer, got {seed!r}.")
    exps = _planned(names, repeats, steps_scale)
    order = list(experiments())
    rngs = {e.name: np.random.default_rng([seed, order.index(e.name)]) for e in exps}
    inits = {
        e.name: sample_initial_overlaps(
            e.params, rngs[e.name], e.repeats, on_manifold=e.init == "manifold"
        )
        for e in exps
    }
    total = sum(e.steps for e in exps)
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="step", desc="reproduce")
    else:  # no bar: not even tqdm's import (asyncio), a tenth of a short run's time
        bar = _NoBar()
    out: dict[str, ExperimentResult] = {}
    gd = [e for e in exps if e.method == "pgd"]
    sgd_runs = [e for e in exps if e.method == "sgd"]
    if jobs > 1 and gd and sgd_runs:
        # SGD in worker processes while the PGD loop runs here; both are sequential in time
        import multiprocessing as mp
        from queue import Empty

        from .output import quiet_workers
        from .workers import end_pool, process_pool

        # progress comes back through a queue the workers inherit: no manager process,
        # whose socket folder a signal to the whole process group would leave behind
        queue = mp.get_context("spawn").Queue()
        # spawned (no fork of a process with tqdm's monitor thread), gone with this process
        with process_pool(
            min(jobs - 1, len(sgd_runs)), initializer=_worker_progress, initargs=(queue,)
        ) as pool:
            with quiet_workers():  # a Ctrl-C reaches this process, which ends the workers
                futures = [
                    pool.submit(_run_sgd, e, inits[e.name], rngs[e.name], seed, records, True)
                    for e in sgd_runs
                ]

            def update(n):
                bar.update(n)
                with contextlib.suppress(Empty):
                    while True:
                        bar.update(queue.get_nowait())

            try:
                out.update(_run_gd(gd, inits, seed, records, update))
                for f in futures:
                    while not f.done():
                        try:
                            bar.update(queue.get(timeout=0.2))
                        except Empty:
                            pass
                    res = f.result()
                    out[res.experiment.name] = res
            except BaseException:  # Ctrl-C, SIGTERM or an error: leave no worker behind
                end_pool(pool)
                raise
            update(0)
        queue.close()
        queue.join_thread()
    else:
        if gd:
            out.update(_run_gd(gd, inits, seed, records, bar.update))
        for e in sgd_runs:
            out[e.name] = _run_sgd(
                e, inits[e.name], rngs[e.name], seed, records, False, bar.update
            )
    bar.close()
    return {e.name: out[e.name] for e in exps}


class _NoBar:
    """What :func:`run` asks of its progress bar, doing nothing."""

    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


_PROGRESS = None  # in a worker process: the queue its progress goes to


def _worker_progress(queue) -> None:
    """Initializer of the worker processes: where their progress goes."""
    global _PROGRESS
    _PROGRESS = queue


def _planned(names, repeats, steps_scale) -> list[Experiment]:
    """The named experiments with their repeats and steps as a run will do them."""
    from dataclasses import replace

    if repeats is not None:
        repeats = positive_int(repeats, "repeats")
    if isinstance(steps_scale, bool) or not (
        isinstance(steps_scale, int | float) and 0 < steps_scale <= 1
    ):
        raise ValueError(f"`steps_scale` must be a number in (0, 1], got {steps_scale!r}.")
    return [
        replace(
            e,
            steps=max(1, round(e.steps * steps_scale)),
            repeats=e.repeats if repeats is None else int(repeats),
        )
        for e in _select(names)
    ]


def cost(
    names: str | list[str] = "all", *, repeats: int | None = None, steps_scale: float = 1.0
) -> WorkEstimate:
    """The estimated wall time of :func:`run` with the same arguments (nothing is run).

    Parameters
    ----------
    names : str or list of str
    repeats : int, optional
    steps_scale : float
        As for :func:`run`.

    Returns
    -------
    slr_theory.work.WorkEstimate

    Examples
    --------
    >>> from slr_theory.experiments import cost
    >>> cost("gd_manifold", repeats=30).seconds < cost("all", repeats=30).seconds
    True
    """
    exps = _planned(names, repeats, steps_scale)
    gd = [e for e in exps if e.method == "pgd"]
    sgd = [e for e in exps if e.method == "sgd"]
    return reproduce_cost(
        max((e.steps for e in gd), default=0),
        sum(e.repeats for e in gd),
        max((e.steps for e in sgd), default=0),
        sum(e.repeats for e in sgd),
    )


def _run_sgd(e: Experiment, init, rng, seed, records, in_worker=False, update=None):
    """One SGD experiment; progress goes to `update` or, in a worker, to its queue."""
    from .sgd import sgd

    tr = sgd(
        e.params,
        init,
        e.alpha,
        e.steps,
        batch=e.batch,
        rng=rng,
        schedule=e.lr_schedule,
        record_every=e.record_every(records),
        progress=_PROGRESS.put if in_worker else update,
    )
    return ExperimentResult(e, tr, seed)


def _run_gd(gd: list[Experiment], inits, seed, records, update) -> dict[str, ExperimentResult]:
    """Each PGD experiment by :func:`slr_theory.dynamics.pgd`, one after the other.

    Not one batched loop: each group of a batch pays its own NumPy calls (its own loop
    kernel), so a batch saved nothing and ran every group to the longest's steps (the
    paper's four: 20.0 s in one loop, 15.2 s alone, ``benchmarks/dynamics.py``); and an
    experiment's numbers are those of ``pgd`` on its starts, bit for bit.
    """
    out = {}
    for e in gd:
        tr = pgd(
            e.params,
            inits[e.name],
            e.alpha,
            e.steps,
            e.lr_schedule,
            record_every=e.record_every(records),
            progress=update,
        )
        out[e.name] = ExperimentResult(e, tr, seed)
    return out


def output_paths(name: str, out_dir: str | Path) -> tuple[Path, Path]:
    """The CSV and PNG that :func:`write` produces for experiment `name`.

    Parameters
    ----------
    name : str
        Experiment name (a key of :func:`experiments`).
    out_dir : str or Path
        Output directory, non-empty.

    Returns
    -------
    csv_path, png_path : Path
    """
    if not isinstance(name, str) or name not in experiments():
        raise ValueError(f"`name` must be one of {', '.join(experiments())}, got {name!r}.")
    if not isinstance(out_dir, (str, os.PathLike)) or str(out_dir) == "":
        raise ValueError(f"`out_dir` must be a non-empty path, got {out_dir!r}.")
    d = Path(out_dir)
    return d / f"{name}.csv", d / f"{name}.png"


def write(
    result: ExperimentResult, out_dir: str | Path | Destination, *, force: bool = False
) -> tuple[Path, Path]:
    """Write ``<name>.csv`` (long format, one row per step and repeat) and ``<name>.png``.

    Parameters
    ----------
    result : ExperimentResult
    out_dir : str, Path or Destination
        Output directory (created if missing; its parent must exist), or a
        :class:`slr_theory.output.Destination` already open (the files join its commit,
        and `force` is the destination's). Written under
        :class:`slr_theory.output.Destination`: both files are committed together when
        complete, so an interruption leaves neither.
    force : bool
        Replace the files an earlier slr-theory run wrote (never a file of the user's).

    Returns
    -------
    csv_path, png_path : Path

    Raises
    ------
    FileExistsError
        (:class:`slr_theory.output.OutputConflict`) rather than overwrite an existing
        file without `force`, or a file slr-theory did not write.

    """
    from .plotting import experiment_figure
    from .render import write_trajectory_csv

    e = result.experiment
    if isinstance(out_dir, Destination):
        csv_path, png_path = output_paths(e.name, out_dir.directory)
        write_trajectory_csv(result.trajectory, out_dir.file(csv_path.name), eps=e.eps)
        experiment_figure(result, out_dir.file(png_path.name))
        return csv_path, png_path
    csv_path, png_path = output_paths(e.name, out_dir)
    with Destination(out_dir, force=force, expect=[csv_path.name, png_path.name]) as dest:
        write(result, dest)
    return csv_path, png_path
