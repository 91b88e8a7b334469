"""Computing a study: the checks, the critical points, the landscape, the fates and the experiments, with their cost estimated first."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ..critical import (
    critical_points,
    describe,
    lipschitz_bound,
    overlaps_text,
    pgd_map_spectrum,
    same_point,
    symmetries,
)
from ..landscape import Continuation, basins
from ..nonlinearity import UnboundedSigma
from ..output import quiet_workers
from ..params import Params, check_params
from ..survey import Atlas, read_atlas
from ..validate import positive_int
from ..work import usable_cores
from ..workers import end_pool, process_pool
from .certificates import check_certifying, check_proof, read_certificate
from .findings import findings
from .record import Study
from .schema import SCHEMA, Escape, Event, Lipschitz, Point, RiskRow

__all__ = ["cost", "study"]


def _branch_name(overlaps, kind: str, index: int, lam: float) -> str:
    """One branch's name: its point (by its overlaps where no structure names it), kind,
    index, and the temperature they are read at."""
    kind = str(kind).split(" (")[0]
    what = "saddle" if "saddle" in kind else kind.replace("degenerate ", "")
    where = describe(overlaps)
    if where == "a point off M":  # no structure to name it by: its overlaps
        where = f"the {what} off M at {overlaps_text(overlaps, 2)}"
    return f"{where} ({what} of index {int(index)} at λ = {lam:.3g})"


def _branch_names(c: Continuation, params: Params, found) -> list[str]:
    """Each branch named once, as the rest of the report names its point.

    A branch that covers the report's temperature is followed to it (a Newton polish
    from its nearest grid point) and named as the search's point there, with the search's
    index and kind: the off-M minimum was "v·k* = 0.711" in sections 1 and 4 and "0.765"
    in the continuation, named at the grid's ``lambda = 0.0928``. Any other branch (or
    one whose point the search did not list) is named by its point and kind at its
    temperature nearest the report's. Either way the grid point is never an end where
    the branch meets another, which is that other branch's point: polished from there,
    the minimum off M born at ``lambda = 0.89`` was named "(k*, v*), the optimum" in
    the report at ``lambda = 0.9``.
    """
    from ..critical import polish
    from ..trajectory import to_overlaps

    lam, group = params.lam, symmetries(params)
    names = []
    for br in c.branches:
        # not at an end inside the range: there the branch is at the point it meets
        inner = np.arange(br.lam.size)[(br.start != "range") : br.lam.size - (br.end != "range")]
        if inner.size == 0:
            inner = np.arange(br.lam.size)
        i = int(inner[np.argmin(np.abs(np.log(br.lam[inner] / lam)))])
        if br.lam[0] <= lam <= br.lam[-1]:
            at = polish(params, *br.vectors[i])
            here = to_overlaps(np.concatenate(at)[:, None])[:, 0] if at is not None else None
            same = [
                q for q in found if here is not None and same_point(q.overlaps, here, 1e-6, group)
            ]
            if same:
                names.append(_branch_name(same[0].overlaps, same[0].kind, same[0].index, lam))
                continue
        names.append(_branch_name(br.overlaps[i], br.kind[i], br.index[i], br.lam[i]))
    return names


def _timed(seconds: dict, name: str, fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    seconds[name] = time.perf_counter() - t0
    return out


def cost(params: Params | None = None, *, full: bool = False, jobs: int | None = None):
    """The estimated wall time of :func:`study` (and its report) at `params` (nothing is run).

    The parts that compute at the model cost what they measured at the paper's erf model
    (:data:`slr_theory.work.COSTS` ``"study_model"``) times the model's cost per
    evaluation of the risk, measured now on one point (:func:`slr_theory.work.
    model_cost_factor`: the report's loops ask for few points at a time), and three times
    that: the report at ``s = 2`` measured 2.2 times erf's time at the same cost per
    evaluation (its runs take longer to end), and an estimate errs on the long side. The
    model's checks and the paper's experiments (:func:`slr_theory.experiments.cost`) run
    beside them when `jobs` > 1, after them otherwise.

    Parameters
    ----------
    params : Params, optional
        Default: the paper's.
    full : bool
        The paper's experiments with all repeats and steps.
    jobs : int, optional
        As for :func:`study`.

    Returns
    -------
    slr_theory.work.WorkEstimate
        Its flag is ``--full`` when the full experiments are the larger part, else
        ``--max-minutes``.

    Examples
    --------
    >>> from slr_theory.study import cost
    >>> cost(full=True).seconds > cost().seconds
    True
    """
    from ..experiments import cost as experiments_cost
    from ..work import COSTS, WorkEstimate, model_cost_factor

    params = check_params(params if params is not None else Params.paper())
    if not isinstance(full, bool):
        raise ValueError(f"`full` must be True or False, got {full!r}.")
    if jobs is not None:
        jobs = positive_int(jobs, "jobs", upper=1024)
    jobs = (2 if usable_cores() >= 2 else 1) if jobs is None else jobs
    beside = COSTS["study_checks"] + sum(
        experiments_cost(names, **options).seconds for names, options in _experiment_plan(full)
    )
    main = 3.0 * COSTS["study_model"] * model_cost_factor(params, points=1)
    total = (max(main, beside) if jobs > 1 else main + beside) + COSTS["study_drawing"]
    what = "the report's computations" + (" with the full experiments" if full else "")
    return WorkEstimate(what, total, "--full" if full and beside > main else "--max-minutes")


#: The checks in two halves of about equal cost: the model's (at the report's parameters)
#: run beside, with the paper's experiments; the Gaussian identities in the main process.
_CHECKS_BESIDE, _CHECKS_HERE = ["risk.*"], ["gaussian.*"]


def _verify(names: list[str], params: Params, seed: int):
    from ..verify import run_checks

    return run_checks(names, samples=10_000, seed=seed, at=params)


def _experiment_plan(full: bool) -> list[tuple[list[str] | str, dict]]:
    """The paper's experiments the report runs, as ``(names, options)`` of
    :func:`slr_theory.experiments.run` (and of its estimate, :func:`~slr_theory.experiments.cost`)."""
    from ..experiments import experiments

    repeats = None if full else 5
    gd = [name for name, e in experiments().items() if e.method == "pgd"]
    return [
        (gd, {"repeats": repeats}),
        ("sgd_sphere_schedule", {"repeats": repeats, "steps_scale": 1.0 if full else 0.1}),
    ]


#: Points of M per evaluation when the report prices its model (:func:`_continuation_beside`).
COST_POINTS = 64

#: The report's continuation in lambda: its range and grid.
LAM_RANGE, CONTINUATION_STEPS, CONTINUATION_SEEDS = (0.02, 2.0), 30, 3


def _continue(params: Params, seconds: dict):
    from ..landscape import continuation

    return _timed(
        seconds,
        "continuation",
        continuation,
        params,
        LAM_RANGE,
        steps=CONTINUATION_STEPS,
        seeds=CONTINUATION_SEEDS,
    )


def _continuation_beside(params: Params) -> bool:
    """Whether the continuation runs beside the other parts: where the model costs more
    than twice erf per evaluation on a batch of :data:`COST_POINTS` points (measured now,
    :func:`slr_theory.work.model_cost_factor`: softmax 21 to 30 times erf, tanh 3.4 to 4.4,
    ReLU about 10, an erf model 1), the main process's parts would otherwise take twice
    the checks and experiments beside them (softmax: 73 s against 15 s); at erf the two
    halves are even (22 s, 20 s). On one point the models' costs are mostly the calls'
    own, which they share (softmax 1.2 to 2.3 times erf), and the continuation went one
    way or the other from one report to the next."""
    from ..work import model_cost_factor

    return model_cost_factor(params, points=COST_POINTS) > 2.0


def _experiments(seed: int, full: bool, seconds: dict) -> list:
    """The paper's experiments the report shows (:func:`_experiment_plan`)."""
    from ..experiments import run

    t0 = time.perf_counter()
    res = {}
    for names, options in _experiment_plan(full):
        res.update(run(names, seed=seed, records=250, **options))
    seconds["experiments"] = time.perf_counter() - t0
    return list(res.values())


def _beside(params: Params, seed: int, full: bool, follow: bool = False):
    """What needs nothing else, so runs beside the other parts: the model's checks, and
    the paper's experiments, or, when `follow`, the continuation in their place (the
    experiments then run in the main process: the two halves stay about even)."""
    seconds: dict[str, float] = {}
    cont = _continue(params, seconds) if follow else None
    checks = _timed(seconds, "verification", _verify, _CHECKS_BESIDE, params, seed)
    exps = None if follow else _experiments(seed, full, seconds)
    return checks, exps, seconds, cont


def study(
    params: Params | None = None,
    *,
    alpha: float = 4e-3,
    seed: int = 0,
    full: bool = False,
    jobs: int | None = None,
    progress=None,
    atlas=None,
    certificate=None,
    certify: bool | str | Path = False,
) -> Study:
    """Compute everything the report shows, at `params`.

    Parameters
    ----------
    params : Params, optional
        Default: the paper's. ``d >= 4``.
    alpha : float
        PGD step of the basins, the portrait and the PGD-map check.
    seed : int
    full : bool
        The paper's experiments with all repeats and steps.
    jobs : int, optional
        Processes: 2 (the default when the machine has two cores or more) computes the
        model's checks and the paper's experiments (section 4) beside the rest. The
        results are the same for any `jobs`.
    progress : callable, optional
        Called with a short label as each part ends.
    atlas : Atlas or path, optional
        An atlas (:func:`slr_theory.atlas`, or the directory or table it wrote) that the
        report shows and its findings read: it is not computed here.
    certificate : Census or path, optional
        A census certificate at `params` (:func:`slr_theory.certify_critical_points`,
        ``slr-theory certify --out``): re-verified and compared with the search
        (:attr:`Study.proof`), so the report can say whether the list is complete by proof.
    certify : bool or path
        Compute the census here, seeded by the study's own search, and use it as the
        certificate; a path: save it there too (the report writes ``census.json.gz``).

    Returns
    -------
    Study
    """
    from .. import __version__
    from ..landscape import portrait_data, saddle_escape, stability_map
    from ..risk import risk_components
    from ..statistics import optimal_lambda, statistics_table

    params = check_params(params if params is not None else Params.paper())
    if atlas is not None and not isinstance(atlas, Atlas):
        atlas = read_atlas(atlas)
    check_certifying(params, certificate, certify)  # refused before any computing
    source = None
    if certificate is not None:
        certificate, source = read_certificate(params, certificate)
    tell = progress or (lambda _label: None)
    jobs = (2 if (os.cpu_count() or 1) >= 2 else 1) if jobs is None else jobs
    pool = None
    follow = False  # where the continuation runs: beside (with the checks) or here
    if jobs > 1:
        pool = process_pool(1)  # spawned, quiet on Ctrl-C, gone with this process
        follow = _continuation_beside(params)
    # the census and its check judge boxes on the cores the worker beside leaves free
    proof_jobs = max(1, min(jobs, usable_cores()) - (pool is not None))
    try:
        with quiet_workers():  # a Ctrl-C reaches this process, which ends the worker
            beside = pool.submit(_beside, params, seed, full, follow) if pool else None
        seconds: dict[str, float] = {}
        risk_rows = []
        for name, ov in (
            ("the optimum (k*, v*)", (1.0, 1.0, 0, 0, 0)),
            ("the origin", (0.0, 0.0, 0, 0, 0)),
            ("on M, (0.5, 0.5)", (0.5, 0.5, 0, 0, 0)),
            ("off M, (0.5, 0.5, 0.2, -0.2, 0.1)", (0.5, 0.5, 0.2, -0.2, 0.1)),
        ):
            c = risk_components(params, *ov)
            risk_rows.append(
                RiskRow(
                    name,
                    np.array(ov, dtype=float),
                    c.total,
                    c.informative,
                    c.distractors,
                    c.interactions,
                )
            )
        lam_star = optimal_lambda(params)
        t0 = time.perf_counter()
        on_m = critical_points(params, "manifold")
        found = critical_points(params, rng=seed)
        seconds["critical points"] = time.perf_counter() - t0
        if certify is not False and certify is not None:
            from ..certify import certify_critical_points

            certificate = _timed(
                seconds, "census", certify_critical_points, params, points=found, jobs=proof_jobs
            )
            source = "computed here"
            if certify is not True:
                source = certificate.save(certify).name
        tell("critical points")
        try:
            bound = _timed(seconds, "lipschitz", lipschitz_bound, params, rng=seed)
        except UnboundedSigma:  # no bound to certify (linear attention): none is claimed
            bound = None
        tell("lipschitz")
        low = min(q.risk for q in found)
        points = []
        for q in found:
            s = pgd_map_spectrum(q, alpha)
            points.append(
                Point(
                    name=describe(q.overlaps),
                    overlaps=np.asarray(q.overlaps, dtype=float),
                    risk=float(q.risk),
                    grad_norm=float(q.grad_norm),
                    index=int(q.index),
                    nullity=int(q.nullity),
                    kind=q.kind,
                    on_manifold=bool(q.on_manifold),
                    global_minimum=bool(q.index == 0 and q.risk <= low + 1e-12 * abs(low)),
                    map_conclusion=s.conclusion,
                    map_unstable=int(s.unstable),
                    local_diffeomorphism=bool(s.local_diffeomorphism),
                    largest_eigenvalue=float(np.max(q.hessian_eigenvalues)),
                )
            )
        portrait = _timed(seconds, "portrait", portrait_data, params, pgd_alpha=alpha)
        tell("portrait")
        stability = _timed(seconds, "stability", stability_map, params, 81)
        ensemble = _timed(
            seconds, "basins", basins, params, 100, alpha=alpha, rng=seed, points=found
        )
        tell("basins")
        escape = None
        inner = [  # M's interior saddle (the origin for an odd sigma)
            q
            for q in found
            if q.index >= 1 and q.on_manifold and np.all(np.abs(q.overlaps[:2]) < 1)
        ]
        if inner:
            e = _timed(seconds, "escape", saddle_escape, params, inner[0], [1e-4, 1e-6, 1e-8])
            escape = Escape(
                float(e.mu),
                np.array([1e-4, 1e-6, 1e-8]),
                e.measured,
                e.predicted,
                np.asarray(inner[0].overlaps, dtype=float),
            )
        lam_range = LAM_RANGE
        stats = _timed(
            seconds,
            "statistics",
            statistics_table,
            params.gamma,
            params.eps,
            None,
            [100, 1000, 10_000],
            20_000,
            np.random.default_rng(seed),
            s=params.s,
            nonlinearity=params.nonlinearity,
            attention=params.attention,
        )
        here = _timed(seconds, "identities", _verify, _CHECKS_HERE, params, seed)
        if follow:  # the experiments here while the continuation runs beside
            mine = _experiments(seed, full, seconds)
        else:
            cont = _continue(params, seconds)
        if beside is not None:
            checks, exps, more, followed = beside.result()
        else:
            checks, exps, more, followed = _beside(params, seed, full)
        if follow:
            cont, exps = followed, mine
        tell("continuation")
        names = _branch_names(cont, params, found)
        events = _events(cont, names)
        checks = here + checks  # the registry's order: the identities, then the model
        seconds.update(more)
        tell("experiments")
    except BaseException:  # Ctrl-C, SIGTERM or an error: leave no worker behind
        if pool is not None:
            end_pool(pool)
        raise
    if pool is not None:
        pool.shutdown()
    out = Study(
        schema=SCHEMA,
        version=__version__,
        params=params,
        alpha=float(alpha),
        seed=seed,
        full=full,
        verification=checks,
        risk_rows=risk_rows,
        lam_star=float(lam_star),
        manifold_certificate=list(on_m.certificate),
        search_certificate=list(found.certificate),
        points=points,
        lipschitz=None
        if bound is None
        else Lipschitz(
            float(bound.lower),
            float(bound.upper),
            np.asarray(bound.lower_at, dtype=float),
            float(alpha),
            bound.step_condition(alpha),
        ),
        portrait=portrait,
        stability=stability,
        basins=ensemble,
        escape=escape,
        lam_range=lam_range,
        continuation=cont,
        branch_names=names,
        events=events,
        experiments=exps,
        statistics=stats,
        seconds=seconds,
    )
    out.atlas = atlas
    if certificate is not None:
        out.proof = _timed(
            seconds, "certificate", check_proof, params, certificate, found, source, proof_jobs
        )
        tell("certificate")
    out.findings = findings(out)
    return out


def _events(c: Continuation, names: list[str]) -> list[Event]:
    """Index changes, meetings and folds, each once (symmetric branches change at the
    same lambda)."""
    out: dict[tuple, Event] = {}
    for e in c.events:
        lo, hi = e.get("bracket", (e["lam"], e["lam"]))
        if e["type"] == "index change":
            detail = f"index {e['from']} → {e['to']}"
        elif e["type"] in ("meets", "fold", "lost") and "side" in e:
            br = c.branches[e["branch"]]
            born = e["side"] == "start"
            index = int(br.index[0 if born else -1])
            if e["type"] == "meets":
                other = e.get("other")
                at = names[other] if other is not None else describe(e["at"])
                detail = (
                    f"{'is born' if born else 'ends'} at {at.split(' (')[0]} "
                    f"(a pitchfork), with index {index}"
                )
            elif e["type"] == "fold":
                detail = f"{'is born' if born else 'ends'} in a fold, with index {index}"
            else:
                detail = (
                    f"could not be followed beyond λ = {br.lam[0 if born else -1]:.6g}"
                    f" (index {index})"
                )
        else:
            continue
        other = e.get("other") if e["type"] == "meets" else None
        ev = Event(
            float(e["lam"]),
            e["type"],
            int(e["branch"]),
            names[e["branch"]],
            detail,
            float(hi - lo),
            None if other is None else int(other),
        )
        key = (ev.type, round(ev.lam, 5), ev.detail)
        out.setdefault(key, ev)
    return sorted(out.values(), key=lambda ev: ev.lam)
