"""The registry of checks: closed form vs mpmath quadrature vs Monte Carlo."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field

import mpmath as mp
import numpy as np

from ..params import Params as ModelParams
from ..params import check_params
from ..sampling import mean_and_stderr
from ..validate import MAX_CHECK_SAMPLES, MIN_CHECK_SAMPLES, positive_int

__all__ = [
    "MAX_SAMPLES",
    "MIN_SAMPLES",
    "MODEL_KEYS",
    "REGISTRY",
    "Check",
    "CheckResult",
    "register",
    "run_checks",
]

Params = Mapping[str, float]


@dataclass(frozen=True)
class Check:
    """One identity checked two independent ways.

    Attributes
    ----------
    name : str
        Unique dotted name, e.g. ``"gaussian.zeta"``.
    description : str
        The identity in words.
    closed_form : callable ``(**params) -> float``
        The implementation under test.
    reference : callable ``(**params) -> mpmath.mpf``
        High-precision quadrature of the defining expectation.
    monte_carlo : callable ``(rng, n, **params) -> ndarray (n,)``
        I.i.d. samples whose mean is the expectation.
    params : mapping
        Default parameter point.
    draw : callable ``(rng) -> mapping``
        Random parameter point (for ``run_checks(random_params=True)``).
    rtol : float
        Tolerance on ``|closed - reference| / max(|reference|, scale)``.
    error_scale : callable ``(**params) -> float``, optional
        Magnitude of the terms that cancel (for sign-changing functions); the
        error is measured relative to ``max(|reference|, error_scale)``.
    z_max : float
        Largest accepted ``|z|`` of the Monte Carlo estimate.
    fixed : mapping
        Parameters the check keeps when it runs at a model's (``run_checks(at=...)``):
        those its reference needs (e.g. ``L = 2``).
    model : mapping
        The check's model, as ``Params`` keywords beyond the paper's
        (``{"nonlinearity": "tanh"}``); empty for pointwise erf attention. At a model's
        parameters (``run_checks(at=...)``) only the checks of that model run.
    """

    name: str
    description: str
    closed_form: Callable[..., float]
    reference: Callable[..., object]
    monte_carlo: Callable[..., np.ndarray]
    params: Params
    draw: Callable[[np.random.Generator], Params]
    rtol: float = 1e-13
    error_scale: Callable[..., float] | None = None
    z_max: float = 5.0
    fixed: Params = field(default_factory=dict)
    model: Params = field(default_factory=dict)


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check at one parameter point.

    Attributes
    ----------
    name : str
    params : dict
        The parameter point.
    value, reference : float
        Closed form and mpmath reference.
    rel_error, rtol : float
    mc_mean, mc_stderr, z, z_max : float
        Monte Carlo estimate, its standard error, its z-score and the bound on it.
    samples : int
    quadrature_ok, monte_carlo_ok : bool
    """

    name: str
    params: dict[str, float]
    value: float
    reference: float
    rel_error: float
    rtol: float
    mc_mean: float
    mc_stderr: float
    z: float
    z_max: float
    samples: int
    quadrature_ok: bool = field(init=False)
    monte_carlo_ok: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "quadrature_ok", bool(self.rel_error <= self.rtol))
        object.__setattr__(self, "monte_carlo_ok", bool(abs(self.z) <= self.z_max))

    @property
    def passed(self) -> bool:
        """Both comparisons within tolerance."""
        return self.quadrature_ok and self.monte_carlo_ok

    def as_dict(self) -> dict:
        """JSON-ready dictionary (includes ``passed``)."""
        out = {**asdict(self), "passed": self.passed}
        out["params"] = {  # counts as integers ("d": 20, not 20.0)
            k: int(v) if k in ("d", "L", "s") and float(v).is_integer() else v
            for k, v in out["params"].items()
        }
        return out


#: Fewest Monte Carlo draws a check accepts. With 2 or 3 draws correct closed forms scored
#: |z| up to 52; with 1000, over five seeds of every registered check, |z| <= 2.7.
MIN_SAMPLES = MIN_CHECK_SAMPLES

#: The parameters of the model: a check with all of them runs at ``run_checks(at=...)``.
MODEL_KEYS = frozenset({"d", "L", "lam", "gamma", "eps"})
#: Most Monte Carlo draws per check (each check holds its draws in memory: 0.8 GB).
MAX_SAMPLES = MAX_CHECK_SAMPLES

#: All registered checks by name, in registration order.
REGISTRY: dict[str, Check] = {}

#: ``factory(params) -> Check | None``: the risk's check for a model no registered check
#: has (pointwise attention with a user's nonlinearity; None for a model it cannot
#: check), installed by :mod:`slr_theory.verify.risk_checks`.
CHECK_FOR_NONLINEARITY: list[Callable[[ModelParams], Check | None]] = []


def _model_names(model: dict) -> tuple:
    """``(attention, nonlinearity)`` as a saved result names them (a user's σ: its path
    or name), the paper's where a key is absent."""
    from ..params import params_record

    record = params_record(ModelParams.paper().replace(**model))
    return record["attention"], record["nonlinearity"]


def register(check: Check) -> Check:
    """Add `check` to :data:`REGISTRY` (names must be unique).

    Parameters
    ----------
    check : Check
        A check with a name not yet registered.

    Returns
    -------
    Check
        `check` (so that it can be used as a decorator's result).
    """
    if check.name in REGISTRY:
        raise ValueError(f"a check named {check.name!r} is already registered.")
    REGISTRY[check.name] = check
    return check


def _select(names: Iterable[str] | None, extra: Iterable[Check] = ()) -> list[Check]:
    """The registered checks (and `extra`, built for a model) that `names` asks for."""
    known = {**REGISTRY, **{c.name: c for c in extra}}
    if names is None:
        return list(known.values())
    if isinstance(names, str):
        names = [names]
    try:
        names = list(names)
    except TypeError:
        names = [names]
    out: list[Check] = []
    for pattern in names:
        if not isinstance(pattern, str):
            raise ValueError(f"`names` must be check names or patterns, got {pattern!r}.")
        hits = [c for n, c in known.items() if fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            raise ValueError(f"`names`: no check matches {pattern!r}; known: {', '.join(known)}.")
        out.extend(c for c in hits if c not in out)
    return out


def evaluate(check: Check, params: Params, samples: int, rng: np.random.Generator) -> CheckResult:
    """Run one check at `params` with `samples` Monte Carlo draws."""
    value = float(check.closed_form(**params))
    ref = check.reference(**params)
    scale = abs(ref)
    if check.error_scale is not None:
        scale = max(scale, mp.mpf(check.error_scale(**params)))
    err = abs(mp.mpf(value) - ref)
    rel = float(err / scale) if scale > 0 else float(err)
    draws = np.asarray(check.monte_carlo(rng, samples, **params), dtype=np.float64)
    # a check's draw that is not finite fails the check (its z is not finite), not the run
    mean, se = mean_and_stderr(draws) if np.all(np.isfinite(draws)) else (np.nan, np.nan)
    diff = mean - float(ref)
    z = diff / se if se > 0 else (0.0 if diff == 0 else float(np.copysign(np.inf, diff)))
    return CheckResult(
        name=check.name,
        params={k: float(v) for k, v in params.items()},
        value=value,
        reference=float(ref),
        rel_error=rel,
        rtol=check.rtol,
        mc_mean=mean,
        mc_stderr=se,
        z=float(z),
        z_max=check.z_max,
        samples=int(draws.size),
    )


def run_checks(
    names: Iterable[str] | None = None,
    *,
    samples: int = 200_000,
    seed: int = 0,
    random_params: bool = False,
    progress: bool = False,
    at: ModelParams | None = None,
) -> list[CheckResult]:
    """Run registered checks and return their results.

    Parameters
    ----------
    names : iterable of str, optional
        Check names or shell-style patterns (``"gaussian.zeta*"``); all if None.
    samples : int
        Monte Carlo draws per check, from :data:`MIN_SAMPLES` to :data:`MAX_SAMPLES`
        (1e8; the standard error scales as ``1/sqrt(samples)``).
    seed : int
        Seed of the single ``numpy.random.Generator`` used for every draw.
    random_params : bool
        Draw each check's parameters with its ``draw`` function instead of its
        default point.
    progress : bool
        Show a tqdm progress bar on stderr.
    at : Params, optional
        Run the checks of this model (attention and nonlinearity) at these parameters
        instead of their default point, and no check of another model; a nonlinearity no
        registered check has (a user's) gets the risk's check built for it, its reference
        the mpmath quadrature of its own functions. The identities of Gaussian expectations
        keep their own arguments. Not with `random_params`.

    Returns
    -------
    list of CheckResult

    Examples
    --------
    >>> from slr_theory.verify import run_checks
    >>> [r] = run_checks(["gaussian.mean_erf"], samples=10_000)
    >>> r.passed, r.rel_error < 1e-15
    (True, True)
    """
    from tqdm.auto import tqdm

    if isinstance(samples, bool) or not isinstance(samples, int) or samples < MIN_SAMPLES:
        raise ValueError(
            f"`samples` must be an integer >= {MIN_SAMPLES}, got {samples!r}: the z-test "
            "reads the Monte Carlo mean through a normal approximation, which the skewed "
            "integrands here only reach with about a thousand draws."
        )
    if samples > MAX_SAMPLES:
        raise ValueError(f"`samples` must be <= {MAX_SAMPLES:g}, got {samples!r}.")
    rng = np.random.default_rng(positive_int(seed, "seed", allow_zero=True))
    if at is not None:
        at = check_params(at)
        if random_params:
            raise ValueError("`at` and `random_params` exclude each other.")
        checks = _checks_of(at, _select(names, _built_for(at)))
    else:
        checks = _select(names)
    results = []
    for check in tqdm(checks, desc="verify", disable=not progress, leave=False):
        params = dict(check.draw(rng)) if random_params else dict(check.params)
        if at is not None and MODEL_KEYS <= set(params):
            params.update({k: getattr(at, k) for k in MODEL_KEYS})
            if at.s != 1:  # s informative tokens: the model checks read it
                params["s"] = at.s
            params.update(check.fixed)
            params["s"] = min(params.get("s", 1), params["L"])  # a fixed L bounds s
        results.append(evaluate(check, params, samples, rng))
    return results


def _built_for(at) -> list[Check]:
    """The risk check built for the model of `at` when no registered check is of it (a
    user's nonlinearity: its reference, the mpmath quadrature of its own functions)."""
    want = _model_names({"attention": at.attention, "nonlinearity": at.nonlinearity})
    known = {_model_names(dict(c.model)) for c in REGISTRY.values()}
    if want in known or not CHECK_FOR_NONLINEARITY:
        return []
    built = CHECK_FOR_NONLINEARITY[0](at)
    return [built] if built is not None else []


def _checks_of(at, checks: list[Check]) -> list[Check]:
    """The checks among `checks` that run at the model of `at`: the identities, and the
    model checks of that model (a check built for it among them)."""
    want = _model_names({"attention": at.attention, "nonlinearity": at.nonlinearity})
    return [
        c for c in checks if not MODEL_KEYS <= set(c.params) or _model_names(dict(c.model)) == want
    ]
