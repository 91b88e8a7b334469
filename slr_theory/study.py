"""The report's computation: one typed result, saved as ``results.json``, and its findings.

:func:`study` computes everything the report shows at the user's parameters and returns
a :class:`Study`; :meth:`Study.save` writes it as JSON (:mod:`slr_theory.results`) and
:meth:`Study.load` reads it back, so figures and text are redrawn without computing.
:func:`findings` turns a study into sentences; every number in them is read from the
study.

The schema of ``results.json`` is the :class:`Study` dataclass and the types of its
fields, field by field (documented in ``docs/api.md``); ``schema`` is its version.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .critical import (
    critical_points,
    describe,
    lipschitz_bound,
    overlaps_text,
    pgd_map_spectrum,
    plural_kind,
    same_point,
    symmetries,
)
from .experiments import ExperimentResult
from .landscape import Basins, Continuation, PortraitData, StabilityMap, basins
from .longrun import UNLISTED
from .manifold import five_points_proved
from .nonlinearity import UnboundedSigma
from .output import quiet_workers
from .params import Params, check_params
from .results import FieldError, dumps, loads
from .study_check import check_study
from .survey import AXES, Atlas, read_atlas
from .validate import positive_int
from .verify import CheckResult
from .workers import end_pool, process_pool

__all__ = [
    "SCHEMA",
    "Event",
    "Lipschitz",
    "Point",
    "Proof",
    "RiskRow",
    "Study",
    "atlas_finding",
    "check_certifying",
    "check_proof",
    "cost",
    "fates_sentence",
    "findings",
    "read_certificate",
    "study",
]

#: Version of the ``results.json`` schema (the fields of :class:`Study`).
SCHEMA = 1


@dataclass
class RiskRow:
    """The risk and its parts at one point.

    Attributes
    ----------
    name : str
    overlaps : ndarray, shape (5,)
    total, informative, distractors, interactions : float
    """

    name: str
    overlaps: np.ndarray
    total: float
    informative: float
    distractors: float
    interactions: float


@dataclass
class Point:
    """One critical point of the full space (one per symmetry orbit), classified.

    Attributes
    ----------
    name : str
        What it is, in words (:func:`describe`).
    overlaps : ndarray, shape (5,)
    risk, grad_norm : float
    index, nullity : int
    kind : str
    on_manifold : bool
    global_minimum : bool
        The lowest risk among the points found.
    map_conclusion : str
        The PGD map at the study's step (:func:`slr_theory.pgd_map_spectrum`).
    map_unstable : int
        Dimension of the PGD map's unstable subspace there.
    local_diffeomorphism : bool
        The PGD map's Jacobian is invertible there.
    largest_eigenvalue : float
        The largest Hessian eigenvalue: PGD is stable at a minimum only for
        ``alpha < 2 / largest_eigenvalue``.
    """

    name: str
    overlaps: np.ndarray
    risk: float
    grad_norm: float
    index: int
    nullity: int
    kind: str
    on_manifold: bool
    global_minimum: bool
    map_conclusion: str
    map_unstable: int
    local_diffeomorphism: bool
    largest_eigenvalue: float


@dataclass
class Lipschitz:
    """Bounds on the Lipschitz constant of the Riemannian gradient, and the step condition.

    Attributes
    ----------
    lower, upper : float
    lower_at : ndarray, shape (5,)
    alpha : float
    condition : str
        ``alpha < 1/Lip``: ``"holds"``, ``"fails"`` or ``"undecided"``.
    """

    lower: float
    upper: float
    lower_at: np.ndarray
    alpha: float
    condition: str


@dataclass
class Escape:
    """Escape from M's interior saddle: measured against linearised times.

    Attributes
    ----------
    mu : float
    r0, measured, predicted : ndarray
    at : ndarray, shape (5,), or None
        The saddle's overlaps (the origin for an odd ``sigma``); None in results saved
        before it was kept (the origin then).
    """

    mu: float
    r0: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    at: np.ndarray | None = None


@dataclass
class Event:
    """One event of the continuation in ``lambda``, on a named branch.

    Attributes
    ----------
    lam : float
    type : str
        ``"index change"``, ``"meets"`` (a branch is born at, or ends on, another at a
        pitchfork), ``"fold"``, or ``"lost"`` (the branch could not be followed further).
    branch : int
    branch_name : str
    detail : str
        ``"index 1 → 0"``, or what happens to the branch, in words.
    width : float
        Width of the interval in ``lambda`` that holds the event.
    other : int or None
        For ``"meets"``: the branch met (None if no branch holds the point).
    """

    lam: float
    type: str
    branch: int
    branch_name: str
    detail: str
    width: float
    other: int | None = None

    @property
    def lam_text(self) -> str:
        """``lam`` with the decimals its bracket supports (3 to 10).

        Returns
        -------
        str
        """
        w = max(float(self.width), 1e-16)
        return f"{self.lam:.{min(10, max(3, int(np.floor(-np.log10(w)))))}f}"


@dataclass
class Proof:
    """What a census certificate, re-verified, says about the full-space list
    (:func:`slr_theory.certify_critical_points`, :func:`slr_theory.certify.check_certificate`).

    Attributes
    ----------
    source : str
        The certificate's file name (or ``"given"`` for a census passed as an object).
    checked : bool
        The checker re-verified every box, zero and index.
    complete : bool
        Checked, and no box open: the census's list is every critical point.
    points, indices, boxes : int
        Points up to symmetry, how many with their index proved, leaves checked.
    check_seconds : float
        The checker's wall time here.
    missing, extra, differ : list
        Canonical overlaps of census points the search did not find, of search points the
        census does not have, and of points whose index or nullity differ.
    failures : list of str
        What the checker found wrong (empty when ``checked``).
    """

    source: str
    checked: bool
    complete: bool
    points: int
    indices: int
    boxes: int
    check_seconds: float
    missing: list
    extra: list
    differ: list
    failures: list

    @property
    def proves_search(self) -> bool:
        """The search's list is complete by proof: a checked complete census with the same
        points, indices and nullities."""
        return self.complete and not (self.missing or self.extra or self.differ)


def read_certificate(params: Params, certificate):
    """The census of `certificate` (a Census, or a file :meth:`slr_theory.certify.Census.save`
    wrote) and its source's name, refused unless it is about exactly `params`.

    Parameters
    ----------
    params : Params
    certificate : Census or path

    Returns
    -------
    tuple
        ``(census, source)``.

    Raises
    ------
    ValueError
        If the file cannot be read as a census, or the census is about other parameters.
    """
    from .certify import Census

    source = "given"
    if not isinstance(certificate, Census):
        source = Path(certificate).name
        try:
            certificate = Census.load(certificate)
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            raise ValueError(
                f"`certificate` must be a census file (slr-theory certify --out), got "
                f"{str(certificate)!r} ({type(exc).__name__}: {exc})."
            ) from None
    if certificate.params != params:
        raise ValueError(
            f"`certificate` is about {certificate.params}, not the parameters {params}."
        )
    return certificate, source


def check_certifying(params: Params, certificate, certify) -> None:
    """Refuse, before any computing, a certificate for other parameters, `certify` with a
    certificate too, or `certify` for a model without rigorous enclosures.

    Parameters
    ----------
    params : Params
    certificate : Census or path or None
    certify : bool or path
        Whether the census is computed here (a path: where it is saved).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Naming `certificate` or `certify`.
    """
    if certify is not False and certify is not None:
        if certificate is not None:
            raise ValueError(
                "`certify` computes the certificate: give `certify` or `certificate`."
            )
        from .certify import model_table

        model_table(params)
    if certificate is not None:
        read_certificate(params, certificate)


def check_proof(params: Params, certificate, points, source: str | None = None) -> Proof:
    """Re-verify a census certificate for `params` and compare it with the search's `points`.

    Parameters
    ----------
    params : Params
        The certificate must be about exactly these parameters.
    certificate : Census or path
        A census, or a file :meth:`slr_theory.certify.Census.save` wrote.
    points : iterable
        The search's points (``overlaps``, ``index``, ``nullity``).
    source : str, optional
        The name the proof gives its certificate (default: the file's name).

    Returns
    -------
    Proof

    Raises
    ------
    ValueError
        If the certificate cannot be read or is about other parameters.
    """
    from .certify import check_certificate

    certificate, name = read_certificate(params, certificate)
    t0 = time.perf_counter()
    result = check_certificate(certificate)
    seconds = time.perf_counter() - t0
    agree = certificate.agreement(points)
    return Proof(
        source=name if source is None else source,
        checked=bool(result.ok),
        complete=bool(result.complete),
        points=len(certificate.points),
        indices=sum(q.index is not None for q in certificate.points),
        boxes=int(result.boxes),
        check_seconds=float(seconds),
        missing=agree["missing"],
        extra=agree["extra"],
        differ=agree["differ"],
        failures=list(result.failures),
    )


@dataclass
class Study:
    """Everything the report shows, computed at one set of parameters.

    Attributes
    ----------
    schema : int
    version : str
    params : Params
    alpha : float
    seed : int
    full : bool
    verification : list of CheckResult
        Every registered check; those of the model at `params`.
    risk_rows : list of RiskRow
    lam_star : float
        The temperature minimising the risk at ``(k*, v*)``.
    manifold_certificate, search_certificate : list of str
    points : list of Point
    lipschitz : Lipschitz or None
        None where ``sigma`` is unbounded (linear attention): no bound is certified.
    portrait : PortraitData
    stability : StabilityMap
    basins : Basins
    escape : Escape or None
    lam_range : tuple of float
    continuation : Continuation
    branch_names : list of str
    events : list of Event
    experiments : list of ExperimentResult
        The paper's configurations (fixed parameters, not `params`).
    statistics : list of dict
        The paper's section 4 at ``gamma, eps, s`` and the attention of `params`.
    seconds : dict
        Wall time of each part.
    findings : list of str
    atlas : Atlas or None
        The atlas the report shows, when one was given.
    manifold_proved : bool
        Whether M's critical points are proved to be the origin and the four corners
        (:func:`slr_theory.manifold.five_points_proved`): computed when the study is
        built, and when results saved before it was kept are read.
    manifold_invariant : bool
        Whether the gradient flow leaves M invariant, computed by the model
        (:meth:`slr_theory.models.Model.manifold_invariant`), likewise.
    proof : Proof or None
        A census certificate given with the study, re-verified and compared with the
        search (:func:`check_proof`).
    """

    schema: int
    version: str
    params: Params
    alpha: float
    seed: int
    full: bool
    verification: list[CheckResult]
    risk_rows: list[RiskRow]
    lam_star: float
    manifold_certificate: list[str]
    search_certificate: list[str]
    points: list[Point]
    lipschitz: Lipschitz | None
    portrait: PortraitData
    stability: StabilityMap
    basins: Basins
    escape: Escape | None
    lam_range: tuple[float, float]
    continuation: Continuation
    branch_names: list[str]
    events: list[Event]
    experiments: list[ExperimentResult]
    statistics: list[dict]
    seconds: dict[str, float] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)
    atlas: Atlas | None = None
    manifold_proved: bool | None = None
    manifold_invariant: bool | None = None
    proof: Proof | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.params, Params):
            return
        if self.manifold_proved is None:
            self.manifold_proved = five_points_proved(self.params)
        if self.manifold_invariant is None:
            self.manifold_invariant = self.params.model.manifold_invariant(self.params)

    def save(self, path: str | Path) -> Path:
        """Write the study as JSON to `path` (plain write: use an output Destination).

        Parameters
        ----------
        path : str or Path

        Returns
        -------
        Path
        """
        Path(path).write_text(dumps(self) + "\n")
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> Study:
        """Read a study written by :meth:`save`.

        Parameters
        ----------
        path : str or Path

        Returns
        -------
        Study

        Raises
        ------
        ValueError
            When the file is not a study of this schema, or a field it holds lies outside
            its domain (naming the field: an edited ``alpha = -1`` was drawn as 'PGD step
            alpha = -1'; :func:`slr_theory.study_check.check_study`).
        """
        import json

        text = Path(path).read_text()
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"`{path}` is not JSON: {exc}.") from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            got = data.get("schema") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"`{path}` must hold a study of schema {SCHEMA}, got {got!r}.")
        try:
            study = loads(cls, text)
        except FieldError as exc:
            raise ValueError(f"`{path}` field `{exc.field}`: {exc.reason}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"`{path}` is not a complete study: {exc!r}.") from None
        _check_fields(study, path)
        check_study(study, str(path))
        return study


def _check_fields(s: Study, path) -> None:
    """The study's own parameters inside their domains, each named as its field
    (``params`` is checked by :class:`Params` when it is rebuilt)."""
    from .params import temperature_range
    from .trajectory import MAX_ALPHA
    from .validate import positive_int, positive_real

    checks = (
        ("alpha", lambda: positive_real(s.alpha, "alpha", upper=MAX_ALPHA)),
        ("seed", lambda: positive_int(s.seed, "seed", allow_zero=True)),
        ("lam_star", lambda: positive_real(s.lam_star, "lam_star")),
        ("lam_range", lambda: temperature_range(list(s.lam_range), "lam_range")),
    )
    for name, check in checks:
        try:
            check()
        except ValueError as exc:
            raise ValueError(f"`{path}` field `{name}`: {exc}") from None


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
    temperature nearest the report's (not at an end where it meets another branch,
    which is that branch's point).
    """
    from .critical import polish
    from .trajectory import to_overlaps

    lam, group = params.lam, symmetries(params)
    names = []
    for br in c.branches:
        if br.lam[0] <= lam <= br.lam[-1]:
            at = polish(params, *br.vectors[int(np.argmin(np.abs(np.log(br.lam / lam))))])
            here = to_overlaps(np.concatenate(at)[:, None])[:, 0] if at is not None else None
            same = [
                q for q in found if here is not None and same_point(q.overlaps, here, 1e-6, group)
            ]
            if same:
                names.append(_branch_name(same[0].overlaps, same[0].kind, same[0].index, lam))
                continue
        # not at an end inside the range: there the branch is at the point it meets
        inner = np.arange(br.lam.size)[(br.start != "range") : br.lam.size - (br.end != "range")]
        if inner.size == 0:
            inner = np.arange(br.lam.size)
        i = int(inner[np.argmin(np.abs(np.log(br.lam[inner] / lam)))])
        names.append(_branch_name(br.overlaps[i], br.kind[i], br.index[i], br.lam[i]))
    return names


# --- the computation -------------------------------------------------------------------------


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
    from .experiments import cost as experiments_cost
    from .work import COSTS, WorkEstimate, model_cost_factor, usable_cores

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
    from .verify import run_checks

    return run_checks(names, samples=10_000, seed=seed, at=params)


def _experiment_plan(full: bool) -> list[tuple[list[str] | str, dict]]:
    """The paper's experiments the report runs, as ``(names, options)`` of
    :func:`slr_theory.experiments.run` (and of its estimate, :func:`~slr_theory.experiments.cost`)."""
    from .experiments import experiments

    repeats = None if full else 5
    gd = [name for name, e in experiments().items() if e.method == "pgd"]
    return [
        (gd, {"repeats": repeats}),
        ("sgd_sphere_schedule", {"repeats": repeats, "steps_scale": 1.0 if full else 0.1}),
    ]


def _beside(params: Params, seed: int, full: bool):
    """The model's checks and the paper's experiments: they need nothing else, so they run beside."""
    from .experiments import run

    seconds: dict[str, float] = {}
    checks = _timed(seconds, "verification", _verify, _CHECKS_BESIDE, params, seed)
    t0 = time.perf_counter()
    res = {}
    for names, options in _experiment_plan(full):
        res.update(run(names, seed=seed, records=250, **options))
    seconds["experiments"] = time.perf_counter() - t0
    return checks, list(res.values()), seconds


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
    from . import __version__
    from .landscape import continuation, portrait_data, saddle_escape, stability_map
    from .risk import risk_components
    from .statistics import optimal_lambda, statistics_table

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
    if jobs > 1:
        pool = process_pool(1)  # spawned, quiet on Ctrl-C, gone with this process
    try:
        with quiet_workers():  # a Ctrl-C reaches this process, which ends the worker
            beside = pool.submit(_beside, params, seed, full) if pool else None
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
            from .certify import certify_critical_points

            certificate = _timed(seconds, "census", certify_critical_points, params, points=found)
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
        lam_range = (0.02, 2.0)
        cont = _timed(seconds, "continuation", continuation, params, lam_range, steps=30, seeds=3)
        tell("continuation")
        names = _branch_names(cont, params, found)
        events = _events(cont, names)
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
        if beside is not None:
            checks, exps, more = beside.result()
        else:
            checks, exps, more = _beside(params, seed, full)
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
        out.proof = _timed(seconds, "certificate", check_proof, params, certificate, found, source)
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


# --- findings --------------------------------------------------------------------------------


def _located_on_m(portrait) -> str:
    """The finding on M's critical points where the proof does not apply, from the saved
    points of the portrait (each with its symmetric copies)."""
    pts = np.asarray(portrait.points, dtype=float).reshape(-1, 2)
    kinds = list(portrait.point_kinds)
    inner = [(o, k) for o, k, i in zip(pts, kinds, portrait.interior, strict=True) if i]
    edge = [(o, k) for o, k in zip(pts, kinds, strict=True) if int(np.sum(np.abs(o) == 1)) == 1]
    where = lambda o: f"({o[0]:.4g}, {o[1]:.4g})"  # noqa: E731
    parts = ["the four corners `(±1, ±1)`"]
    parts += [f"a {k} at (κ, ν) = {where(o)}" for o, k in inner]
    parts += [f"a {k} on the edge at {where(o)}" for o, k in edge]
    origin = (
        ""
        if any(np.abs(o).max() < 1e-9 for o, _k in inner)  # a root of R_nu: 0 to rounding
        else " The origin is not one of them: this σ's weights are not odd."
    )
    return (
        "On M the proof for an odd, monotone σ bounded by 1 does not apply; scans locate "
        f"{len(pts)} critical points (what is proved of them, below): "
        f"{', '.join(parts[:-1]) + ' and ' + parts[-1] if len(parts) > 1 else parts[0]}."
        f"{origin}"
    )


def findings(s: Study) -> list[str]:
    """The report's "What this shows": sentences built from a study's numbers.

    Parameters
    ----------
    s : Study

    Returns
    -------
    list of str
        Markdown paragraphs.
    """
    p = s.params
    out = []
    kinds: dict[str, int] = {}
    for q in s.points:
        base = q.kind.split(" (")[0]
        kinds[base] = kinds.get(base, 0) + 1
    counts = ", ".join(f"{n} {plural_kind(k) if n > 1 else k}" for k, n in kinds.items())
    n_m = len([q for q in s.points if q.on_manifold])
    if s.manifold_proved:
        on_m = (
            "On M there are exactly five critical points (a proof, below): the origin and the "
            "four corners `(±1, ±1)`."
        )
    else:
        on_m = p.model.manifold_summary(p) or _located_on_m(s.portrait)

    proved = (
        " A checked census certificate proves that list complete."
        if s.proof is not None and s.proof.proves_search
        else ""
    )
    out.append(
        f"**Critical points.** {on_m} In the full space the search "
        f"finds {len(s.points)} up to symmetry ({counts}), {n_m} of them on M.{proved}"
    )
    optimum = next((q for q in s.points if q.on_manifold and q.name.startswith("(k*, v*)")), None)
    best = min(s.points, key=lambda q: q.risk)
    if optimum is not None:
        role = (
            "a minimum"
            if optimum.index == 0
            else f"a saddle of index {optimum.index} (a strict saddle: "
            f"{optimum.index} descent direction{'s' if optimum.index > 1 else ''} leave"
            f"{'' if optimum.index > 1 else 's'} M)"
        )
        if optimum.global_minimum:
            tail = "and the global minimum: no critical point has a lower risk."
        else:
            tail = (
                f"but **not the global minimum**: {best.name} at {overlaps_text(best.overlaps)} has "
                f"risk {best.risk:.6g}, {optimum.risk - best.risk:.3g} below the optimum's "
                f"{optimum.risk:.6g}."
            )
        out.append(
            f"**Is `(k*, v*)` the global minimum?** At λ = {p.lam:g}, `(k*, v*)` (risk "
            f"{optimum.risk:.6g}) is {role} in the full space, {tail}"
        )
    off = [q for q in s.points if q.index == 0 and not q.on_manifold]
    b = s.basins
    at = [int((b.label == j).sum()) for j in range(len(b.names))]
    ends = (
        "; ".join(f"{a} at {name}" for a, name in zip(at, b.names, strict=True) if a)
        or "none at a minimum"
    )
    sentence = (
        f"**Where runs end.** Of {b.n} PGD runs from uniform starts on the spheres "
        f"(α = {b.alpha:g}, up to {b.max_steps} steps): {ends}."
    )
    if off:
        q = off[0]
        gap = q.risk - (optimum.risk if optimum is not None else best.risk)
        group = symmetries(p)
        j = next(
            (j for j, m in enumerate(b.minima) if same_point(m, q.overlaps, 1e-6, group)), None
        )
        reached = j is not None and at[j] > 0
        sentence += (
            (" Runs end off M because the" if reached else " The")
            + f" full space has a minimum off M: {q.name} at {overlaps_text(q.overlaps)}, risk "
            f"{q.risk:.6g} ({'above' if gap > 0 else 'below'} the optimum by {abs(gap):.3g})."
            + (
                " M is invariant (computed on a grid of M), but a run that starts off M need "
                "not reach it."
                if reached and s.manifold_invariant
                else ""
            )
        )
    if b.fates is not None:
        sentence += " " + fates_sentence(b)
    elif b.unconverged:
        stalled = int(b.stalled.sum())
        far = b.distance[b.label < 0]
        moving = b.unconverged - stalled
        sentence += (
            f" {b.unconverged} runs are **not converged** within the budget of {b.max_steps} "
            f"steps ({moving} still moving at it; distance to the nearest minimum "
            f"{far.min():.3g} to {far.max():.3g}, gradient norm up to "
            f"{b.gradient[b.label < 0].max():.3g})"
            + (
                f"; {stalled} of them no longer move: they sit on a cycle or a fixed point "
                "of the PGD map that is no minimum."
                if stalled
                else "."
            )
        )
    out.append(sentence)
    saddles = [q for q in s.points if q.index > 0]
    strict = [q for q in saddles if q.map_conclusion == "strict saddle"]
    # a minimum the step makes unstable (a Hessian eigenvalue above 2/alpha); a degenerate
    # one whose map is only non-hyperbolic (zero modes, a multiplier 1) is not that
    unstable_min = [q for q in s.points if q.index == 0 and q.largest_eigenvalue > 2.0 / s.alpha]
    lip = s.lipschitz
    cs = (
        f"**What the center-stable manifold theorem gives at α = {s.alpha:g}.** "
        f"{len(strict)} of the {len(saddles)} saddles and maxima are strict for the PGD map "
        f"(an unstable direction), and the map is a local diffeomorphism at "
        f"{sum(q.local_diffeomorphism for q in s.points)} of the {len(s.points)} critical "
        "points. "
    )
    if lip is None:
        cs += (
            "The theorem's global hypothesis `α < 1/Lip` cannot be checked: σ is unbounded, "
            "so no Lipschitz bound of the gradient over the spheres is certified. "
        )
    else:
        cs += (
            f"The theorem's global hypothesis `α < 1/Lip` {lip.condition}: "
            f"`{lip.lower:.4g} ≤ Lip ≤ {lip.upper:.4g}` (the upper bound certified), so "
            + (
                f"`α·Lip ≤ {lip.alpha * lip.upper:.3g}`. "
                if lip.condition == "holds"
                else f"`α·Lip` is at least {lip.alpha * lip.lower:.3g}"
                + (
                    f"; it would hold for `α < 1/{lip.upper:.4g} = {1.0 / lip.upper:.2g}`. "
                    if lip.condition == "fails"
                    else f" and at most {lip.alpha * lip.upper:.3g}. "
                )
            )
        )
    runs = (
        f"{b.n - b.unconverged} of {b.n} are at a minimum"
        + (f", {b.unconverged} did not converge." if b.unconverged else ".")
        if b.unconverged < b.n
        else f"none of the {b.n} runs converged."
    )
    if b.fates is not None:
        f = b.fates
        arrived = int(np.sum(f.minimum[f.label[f.label >= 0]]))
        elsewhere = (
            "they end at a saddle, at a point the search did not list, or are undecided "
            "(the table of section 6)."
        )
        within = b.n - b.unconverged
        if not arrived:
            runs = f"none of the {b.n} runs reaches a minimum: " + elsewhere
        else:
            runs = (
                f"{arrived} of {b.n} reach a minimum ("
                + (
                    f"{within} within {b.max_steps} steps)"
                    if within
                    else f"none within {b.max_steps} steps)"
                )
                + (f"; {b.n - arrived} do not: " + elsewhere if arrived < b.n else ".")
            )
    if lip is not None and lip.condition == "holds":
        cs += (
            "So PGD from almost every start avoids every strict saddle: whatever it "
            "converges to is a minimum (of runs that do not converge it says nothing). "
            "The runs: " + runs
        )
    else:
        cs += (
            "So the theorem does not guarantee here that PGD avoids the saddles; it only "
            "says the saddles repel locally. What the runs show instead: " + runs
        )
    if unstable_min:
        q = unstable_min[0]
        cs += (
            f" At this step the PGD map is unstable even at a minimum ({q.name}: "
            f"{q.map_conclusion}: its largest Hessian eigenvalue {q.largest_eigenvalue:.4g} "
            f"is above 2/α = {2 / s.alpha:.4g}), so runs near it cannot settle there; "
            f"a step below {2 / q.largest_eigenvalue:.3g} would let them."
        )
    out.append(cs)
    if s.events:
        out.append(
            f"**How λ changes the picture** (continuation over [{s.lam_range[0]:g}, "
            f"{s.lam_range[1]:g}], {len(s.continuation.branches)} branches): "
            + "; ".join(_event_clauses(s.events))
            + ". "
            + _nearest_event(s.events, s.params.lam)
        )
    if s.atlas is not None and s.atlas.rows:
        out.append(atlas_finding(s.atlas))
    return out


def fates_sentence(b) -> str:
    """Where the runs of an ensemble end when followed to their end, and when they get
    there, from its :class:`~slr_theory.longrun.Fates` (one sentence of the findings).

    Parameters
    ----------
    b : slr_theory.landscape.Basins
        An ensemble with its fates.

    Returns
    -------
    str
    """
    f = b.fates
    parts = []
    for j, name in enumerate(f.names):
        count = int(np.sum(f.label == j))
        if not count:
            continue
        if f.minimum[j]:
            q = f.quantiles([0.5], j)[0]
            parts.append(f"{count} reach {name} (median 10^{q:.1f} steps)")
        elif f.kinds[j] == UNLISTED:
            parts.append(f"{count} stop at {name}")
        else:
            parts.append(f"{count} end at the {name}, on its stable manifold (never a minimum)")
    if np.any(f.label < 0):
        parts.append(
            f"{int(np.sum(f.label < 0))} are undecided (held in exact steps beyond "
            f"{f.max_exact_steps:.3g}: no flow stood for the PGD map where they are)"
        )
    text = "Followed to their end: " + "; ".join(parts) + "."
    if b.unconverged:
        seen = f"{b.n - b.unconverged} of them" if b.unconverged < b.n else "none of them"
        text += f" A budget of {b.max_steps} steps sees {seen} at a minimum"
        late = (b.label < 0) & np.isfinite(f.steps) & (f.label >= 0)
        if np.any(late):
            text += (
                f": {int(late.sum())} others are on their way (section 6, *How long it takes*)."
            )
        else:
            text += "."
    return text


def atlas_finding(a: Atlas) -> str:
    """The atlas in one paragraph: where ``(k*, v*)`` is the global minimum, a minimum, a
    saddle, and how much of the sphere flows to it (every number from the rows).

    Parameters
    ----------
    a : Atlas

    Returns
    -------
    str
    """
    rows = a.rows
    spans = []
    for name, values in a.axes.items():
        if len(values) > 1:
            shown = (
                f"{min(values):.3g} to {max(values):.3g} ({len(values)} values)"
                if name in ("lam", "gamma")
                else "{" + ", ".join(map(str, values)) + "}"
            )
            spans.append(f"{'λ' if name == 'lam' else 'γ' if name == 'gamma' else name} {shown}")
    fixed = ", ".join(
        f"{'λ' if k == 'lam' else 'γ' if k == 'gamma' else k} = "
        + (f"{v[0]:.4g}" if isinstance(v[0], float) else str(v[0]))
        for k, v in a.axes.items()
        if len(v) == 1
    )
    glob = [r for r in rows if r["optimum_is_global"]]
    local = [r for r in rows if r["optimum_index"] == 0 and not r["optimum_is_global"]]
    saddle = [r for r in rows if r["optimum_index"] > 0]
    text = (
        f"**Over parameter space** (an atlas of {len(rows)} cells: "
        + ("; ".join(spans) or "one cell")
        + (f"; at {fixed}" if fixed else "")
        + "): `(k*, v*)` is "
        + ", ".join(
            f"{what} in {len(cells) if cells else 'none'}"
            for what, cells in (
                ("the global minimum", glob),
                ("a minimum that is not global", local),
                ("a saddle", saddle),
            )
        )
        + (
            f" (not found in {len(rows) - len(glob) - len(local) - len(saddle)})"
            if len(glob) + len(local) + len(saddle) < len(rows)
            else ""
        )
        + "."
    )
    if "lam" in a.axes and len(a.axes["lam"]) > 1:
        others = [k for k in AXES if k != "lam" and len(a.axes[k]) > 1]
        groups: dict[tuple, list[dict]] = {}
        for r in rows:
            groups.setdefault(tuple(r[k] for k in others), []).append(r)
        clauses = []
        for key, group in groups.items():
            at = ", ".join(f"{k} = {v}" for k, v in zip(others, key, strict=True))
            lams = sorted(r["lam"] for r in group)
            best = [
                i
                for i, lam in enumerate(lams)
                if any(r["optimum_is_global"] for r in group if r["lam"] == lam)
            ]
            if not best:
                said = "it is global at none of the λ"
            elif best == list(range(best[0], best[-1] + 1)):  # one window of the grid
                said = f"it is global for λ from {lams[best[0]]:.3g} to {lams[best[-1]]:.3g}"
            else:
                said = "it is global at λ = " + ", ".join(f"{lams[i]:.3g}" for i in best)
            clauses.append((f"at {at}, " if at else "") + said)
        text += " By λ: " + "; ".join(clauses) + "."
    unconv = max(r["basin_unconverged_fraction"] for r in rows)
    budget = a.settings.get("max_steps")
    if all(math.isfinite(r["fate_optimum_fraction"]) for r in rows):  # followed to the end
        share = [r["fate_optimum_fraction"] for r in rows]
        times = [r["optimum_log10_steps"] for r in rows if math.isfinite(r["optimum_log10_steps"])]
        text += (
            f" Followed to their end, PGD runs from uniform starts reach `(k*, v*)` in "
            f"{min(share):.2f} to {max(share):.2f} of the runs ({rows[0]['basin_runs']} per cell)"
            + (
                f", after a median of 10^{min(times):.1f} to 10^{max(times):.1f} steps"
                if times
                else ""
            )
            + (
                f"; a budget of {budget} steps sees up to {unconv:.2f} of a cell's runs at no "
                "minimum."
                if unconv
                else "."
            )
        )
        return text
    share = [r["optimum_basin_fraction"] for r in rows]
    text += (
        f" PGD from uniform starts reaches `(k*, v*)` in {min(share):.2f} to {max(share):.2f} "
        f"of the runs ({rows[0]['basin_runs']} per cell"
        + (
            f"; up to {unconv:.2f} of a cell's runs did not converge in {budget} steps"
            if unconv
            else ""
        )
        + ")."
    )
    return text


def _short(name: str) -> str:
    """A branch's name without its last parenthesis (the kind and index where it was named)."""
    return name.rsplit(" (", 1)[0]


def _nearest_event(events: list[Event], lam: float) -> str:
    """How far the report's temperature is from the nearest event, in a sentence."""
    e = min(events, key=lambda ev: abs(ev.lam - lam))
    gap = lam - e.lam
    where = "above" if gap > 0 else "below"
    what = f"changes {e.detail}" if e.type == "index change" else e.detail
    if abs(gap) <= 0.5 * e.width:
        return (
            f"The report's λ = {lam:g} is at an event, within its width: at λ = {e.lam_text} "
            f"{_short(e.branch_name)} {what}."
        )
    return (
        f"The report's λ = {lam:g} is {abs(gap):.2g} {where} the nearest of them "
        f"({abs(gap) / e.lam:.1%} of its λ): at λ = {e.lam_text} {_short(e.branch_name)} {what}."
    )


def _event_clauses(events: list[Event]) -> list[str]:
    """The events in words, a pitchfork once: the symmetric branch's index change and the
    meeting of the branch born (or ending) there, when the two agree within their widths."""
    paired: dict[int, Event] = {}
    for i, e in enumerate(events):
        if e.type != "meets" or e.other is None:
            continue
        for j, c in enumerate(events):
            if (
                c.type == "index change"
                and c.branch == e.other
                and j not in paired
                and abs(c.lam - e.lam) <= 0.5 * (c.width + e.width) + 1e-12
            ):
                paired[j] = e
                paired[i] = c
                break
    out = []
    for i, e in enumerate(events):
        if e.type == "meets" and i in paired:
            continue  # said with its index change
        if e.type == "index change" and i in paired:
            m = paired[i]
            what = "is born there" if m.detail.startswith("is born") else "ends there"
            out.append(
                f"at λ = {e.lam_text} {_short(e.branch_name)} changes {e.detail}, and "
                f"{_short(m.branch_name)} {what} (a pitchfork; the meeting, located "
                f"independently, at λ = {m.lam_text})"
            )
        elif e.type == "index change":
            out.append(f"at λ = {e.lam_text} {_short(e.branch_name)} changes {e.detail}")
        else:
            out.append(f"at λ = {e.lam_text} {_short(e.branch_name)} {e.detail}")
    return out
