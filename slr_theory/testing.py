r"""Property tests of your own: strategies for feasible inputs and a Monte Carlo assertion.

What the toolkit's own property tests use, public for tests of a user's variants (a
nonlinearity, a closed form derived by hand, a new regime):

- :func:`overlaps`, :func:`models` and :func:`params`: `hypothesis
  <https://hypothesis.readthedocs.io>`_ strategies over the whole feasible set of the
  overlaps (edges and the optimum included) and over the whole :data:`slr_theory.params.DOMAIN`
  of the parameters, magnitudes spread on a log scale;
- :func:`assert_matches_monte_carlo`: a closed form (by default the toolkit's own risk)
  against the empirical risk of samples of the model at explicit vectors realising the
  overlaps, within ``z`` standard errors.

The strategies need hypothesis (``pip install 'slr-theory[test]'``); the assertion needs
only the core.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .models import attention_names, takes_nonlinearity
from .nonlinearity import BUILTIN_NONLINEARITIES
from .params import DOMAIN, Params, check_params
from .risk import risk
from .sampling import MonteCarloRisk, monte_carlo_risk, vectors_from_overlaps
from .validate import positive_real, random_generator

__all__ = ["assert_matches_monte_carlo", "models", "overlaps", "params"]


def _st():
    """``hypothesis.strategies``, or an ``ImportError`` that says how to install it."""
    try:
        from hypothesis import strategies
    except ImportError as e:  # pragma: no cover - the test extra installs it
        raise ImportError(
            "slr_theory.testing's strategies need hypothesis: pip install 'slr-theory[test]'"
        ) from e
    return strategies


def _range(value, name: str, lo: float, hi: float) -> tuple[float, float]:
    """A ``(low, high)`` pair inside ``[lo, hi]``, ``low <= high``; ``ValueError`` naming it."""
    try:
        a, b = (float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a pair (low, high), got {value!r}.") from None
    if not (lo <= a <= b <= hi):
        raise ValueError(
            f"`{name}` must be a pair (low, high) with {lo:g} <= low <= high <= {hi:g}, "
            f"got {value!r}."
        )
    return a, b


def _sequence(value, name: str) -> list:
    """A list of `value`'s items (a lone name or Nonlinearity as one); ``ValueError`` naming it."""
    if isinstance(value, str) or callable(getattr(value, "f", None)):
        return [value]
    if not hasattr(value, "__iter__") or isinstance(value, (dict, set, frozenset)):
        raise ValueError(f"`{name}` must be a sequence, got {value!r}.")
    return list(value)


def _log_uniform(st, lo: float, hi: float, integer: bool = False):
    """Values spread evenly in ``log10`` over ``[lo, hi]`` (``lo > 0``), both ends included."""
    if lo == hi:
        return st.just(int(lo) if integer else lo)
    draw = st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)
    if integer:
        draw = draw.map(lambda x: int(min(max(round(x), lo), hi)))
    else:
        draw = draw.map(lambda x: min(max(x, lo), hi))
    return st.one_of(st.sampled_from([int(lo), int(hi)] if integer else [lo, hi]), draw)


def overlaps(*, on_manifold: bool = False, d: int | None = None):
    """A strategy of feasible overlaps ``(kappa, nu, theta, eta, rho)`` as arrays ``(5,)``.

    Three kinds of draws: the overlaps of two unit vectors in ``span{e1..e4}`` (``k* = e1``,
    ``v* = e2``; every feasible tuple is one of these for ``d >= 4``), points of the
    invariant manifold M (``theta = eta = rho = 0``) with its edges ``|kappa| = 1``,
    ``|nu| = 1``, and the corners (the optimum ``(1, 1, 0, 0, 0)`` among them).

    Parameters
    ----------
    on_manifold : bool
        Only points of M.
    d : int, optional
        The dimension the overlaps must be feasible in (``d >= 2``; default: any
        ``d >= 4``). For ``d = 2, 3`` the vectors are drawn in ``span{e1..ed}`` (and M,
        which needs a third axis for each vector, is left out).

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of ndarrays of shape ``(5,)``.

    Examples
    --------
    >>> from hypothesis import given
    >>> from slr_theory import Params, check_overlaps
    >>> from slr_theory.testing import overlaps
    >>> @given(ov=overlaps(d=400))
    ... def test_feasible(ov):
    ...     check_overlaps(*ov, d=400)  # raises if infeasible
    >>> test_feasible()
    """
    st = _st()
    if not isinstance(on_manifold, (bool, np.bool_)):
        raise ValueError(f"`on_manifold` must be True or False, got {on_manifold!r}.")
    if d is not None:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
            raise ValueError(f"`d` must be an integer >= 2 or None, got {d!r}.")
    if on_manifold and d is not None and d < 4:
        raise ValueError(
            f"`d` must be >= 4 for points of M (k and v each need a third axis), got {d!r}."
        )
    unit = st.floats(-1.0, 1.0)
    edge = st.sampled_from([-1.0, 1.0])
    on_m = st.tuples(st.one_of(unit, edge), st.one_of(unit, edge)).map(
        lambda kn: np.array([kn[0], kn[1], 0.0, 0.0, 0.0])
    )
    if on_manifold:
        return on_m
    m = 4 if d is None else min(int(d), 4)

    def of_vectors(xy) -> np.ndarray | None:
        k, v = np.array(xy[:m]), np.array(xy[m:])
        nk, nv = np.linalg.norm(k), np.linalg.norm(v)
        if nk < 1e-3 or nv < 1e-3:
            return None
        k, v = k / nk, v / nv
        return np.clip(np.array([k[0], v[1], v[0], k[1], k @ v]), -1.0, 1.0)

    general = (
        st.lists(unit, min_size=2 * m, max_size=2 * m)
        .map(of_vectors)
        .filter(lambda x: x is not None)
    )
    return general if m < 4 else st.one_of(general, on_m)


def models(
    *,
    nonlinearities=tuple(BUILTIN_NONLINEARITIES),
    attentions=None,
    s_max: int = 1,
):
    """A strategy of models: keyword arguments ``nonlinearity``, ``attention``, ``s`` of
    :class:`slr_theory.Params`.

    Parameters
    ----------
    nonlinearities : sequence of str or Nonlinearity
        The ``sigma`` of pointwise attention to draw from (default: every built-in); a
        user's :class:`slr_theory.Nonlinearity` may be among them.
    attentions : sequence of str, optional
        Among the registered attentions (:func:`slr_theory.models.attention_names`, the
        default: all of them); one without a nonlinearity, as softmax, is drawn with the
        default ``sigma``.
    s_max : int
        Informative tokens drawn in ``[1, s_max]`` (capped at ``L`` by :func:`params`).

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of dicts.

    Examples
    --------
    >>> from hypothesis import find
    >>> from slr_theory.testing import models
    >>> find(models(attentions=("softmax",)), lambda m: True)
    {'nonlinearity': 'erf', 'attention': 'softmax', 's': 1}
    """
    st = _st()
    sigmas = _sequence(nonlinearities, "nonlinearities")
    kinds = _sequence(attention_names() if attentions is None else attentions, "attentions")
    if not sigmas:
        raise ValueError(f"`nonlinearities` must name at least one, got {nonlinearities!r}.")
    for sigma in sigmas:
        try:
            Params(d=4, L=1, lam=1.0, gamma=1.0, nonlinearity=sigma)
        except ValueError as e:
            raise ValueError(f"`nonlinearities` holds one Params refuses: {e}") from None
    names = attention_names()
    if not kinds or not all(isinstance(a, str) and a in names for a in kinds):
        raise ValueError(
            f"`attentions` must be a non-empty sequence of {', '.join(map(repr, names))}, "
            f"got {attentions!r}."
        )
    if isinstance(s_max, bool) or not isinstance(s_max, (int, np.integer)) or s_max < 1:
        raise ValueError(f"`s_max` must be an integer >= 1, got {s_max!r}.")
    s = st.integers(1, int(s_max))

    def one(kind):
        if not takes_nonlinearity(kind):
            return st.builds(lambda n: {"nonlinearity": "erf", "attention": kind, "s": n}, s)
        return st.builds(
            lambda sigma, n: {"nonlinearity": sigma, "attention": kind, "s": n},
            st.sampled_from(sigmas),
            s,
        )

    return st.one_of(*(one(kind) for kind in kinds))


def params(
    *,
    d=(4, 10**4),
    L=(1, 100),
    lam=(1e-4, 1e2),
    gamma=(1e-3, 1e2),
    eps=(0.0, 1.0),
    model=None,
):
    """A strategy of :class:`slr_theory.Params` over ranges of each parameter.

    ``d``, ``L``, ``lam`` and ``gamma`` are spread evenly in ``log10`` (their ends
    included), ``eps`` uniformly; the defaults span what a property test can afford
    (Monte Carlo at ``d = 1e4``), inside :data:`slr_theory.params.DOMAIN`. A temperature beyond
    a model's own bound (:attr:`slr_theory.Params.lam_max`: softmax attention's numerics)
    is brought to it; ``s`` is capped at ``L``.

    Parameters
    ----------
    d, L, lam, gamma, eps : (float, float)
        Inclusive ranges, each inside :data:`slr_theory.params.DOMAIN`.
    model : SearchStrategy, optional
        Of model keywords (:func:`models`); default the paper's (``erf``, pointwise,
        ``s = 1``).

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of :class:`slr_theory.Params`.

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> from slr_theory import risk
    >>> from slr_theory.testing import overlaps, params
    >>> @settings(max_examples=20)
    ... @given(p=params(), ov=overlaps())
    ... def test_the_risk_is_at_least_the_noise(p, ov):
    ...     assert risk(p, *ov) >= p.eps**2 * (1 - 1e-12)
    >>> test_the_risk_is_at_least_the_noise()
    """
    st = _st()
    d = _range(d, "d", max(4, DOMAIN["d"][0]), DOMAIN["d"][1])
    L = _range(L, "L", *DOMAIN["L"])
    lam = _range(lam, "lam", *DOMAIN["lam"])
    gamma = _range(gamma, "gamma", *DOMAIN["gamma"])
    eps = _range(eps, "eps", *DOMAIN["eps"])
    if model is None:
        model = models(nonlinearities=("erf",), attentions=("pointwise",))
    elif not isinstance(model, st.SearchStrategy):
        raise ValueError(
            f"`model` must be a strategy of model keywords (models()), got {model!r}."
        )

    def build(dd, ll, lm, gm, ep, mo) -> Params:
        base = Params(d=dd, L=ll, lam=DOMAIN["lam"][0], gamma=gm, eps=ep, **mo | {"s": 1})
        return base.replace(lam=min(lm, base.lam_max), s=min(mo["s"], ll))

    return st.builds(
        build,
        _log_uniform(st, *d, integer=True),
        _log_uniform(st, *L, integer=True),
        _log_uniform(st, *lam),
        _log_uniform(st, *gamma),
        st.floats(*eps),
        model,
    )


def assert_matches_monte_carlo(
    params: Params,
    overlaps: Any,
    *,
    n: int = 100_000,
    z: float = 4.0,
    rng: np.random.Generator | int | None = 0,
    expected: float | None = None,
) -> MonteCarloRisk:
    """Assert that a risk agrees with Monte Carlo on the model, within `z` standard errors.

    Explicit unit vectors realising `overlaps` in ``R^d``
    (:func:`slr_theory.sampling.vectors_from_overlaps`) are scored on `n` samples of the
    model (:func:`slr_theory.sampling.monte_carlo_risk`); `expected` (default: the
    toolkit's :func:`slr_theory.risk`) must lie within ``z`` standard errors of the
    sample mean, plus ``1e-12`` of itself for rounding. With a fixed `rng` the verdict
    is reproducible; with a fresh one a correct closed form fails with probability
    ``erfc(z / sqrt(2))`` (``6e-5`` at ``z = 4``). The cost is ``n L d`` token coordinates.

    Parameters
    ----------
    params : Params
        The model (``d >= 4``, ``d <= 1e8``: explicit vectors).
    overlaps : sequence of five numbers
        Feasible ``(kappa, nu, theta, eta, rho)``.
    n : int
        Samples, ``2 <= n <= 1e12``.
    z : float
        Standard errors allowed, ``z > 0``.
    rng : numpy.random.Generator or int or None
    expected : float, optional
        The value to check (a closed form of your own); default ``risk(params, *overlaps)``.

    Returns
    -------
    MonteCarloRisk
        The estimate it was compared with.

    Raises
    ------
    AssertionError
        With both numbers, the standard error and the deviation in standard errors.

    Examples
    --------
    >>> from slr_theory import Params, risk
    >>> from slr_theory.testing import assert_matches_monte_carlo
    >>> p = Params(d=8, L=4, lam=0.5, gamma=0.7, eps=0.1)
    >>> ov = [0.3, 0.2, 0.1, 0.1, 0.05]
    >>> mc = assert_matches_monte_carlo(p, ov, n=20_000)
    >>> print(f"risk {risk(p, *ov):.4f}; Monte Carlo {mc.estimate:.4f} ± {mc.stderr:.4f}")
    risk 1.2048; Monte Carlo 1.1953 ± 0.0129
    >>> assert_matches_monte_carlo(p, ov, n=20_000, expected=1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: expected 1.0 but Monte Carlo gives ...
    """
    params = check_params(params)
    z = positive_real(z, "z")
    gen = random_generator(rng)
    k, v, ks, vs = vectors_from_overlaps(overlaps, params.d)
    if expected is None:
        expected = float(risk(params, *np.asarray(overlaps, dtype=np.float64)))
    elif isinstance(expected, bool) or not isinstance(expected, (int, float, np.number)):
        raise ValueError(f"`expected` must be a real number, got {expected!r}.")
    elif not math.isfinite(float(expected)):
        raise ValueError(f"`expected` must be finite, got {expected!r}.")
    expected = float(expected)
    mc = monte_carlo_risk(params, k, v, ks, vs, n, gen)
    gap = abs(expected - mc.estimate)
    if gap > z * mc.stderr + 1e-12 * abs(expected):
        sigmas = gap / mc.stderr if mc.stderr > 0 else math.inf
        raise AssertionError(
            f"expected {expected!r} but Monte Carlo gives {mc.estimate!r} ± {mc.stderr!r} "
            f"(n = {mc.n}): {sigmas:.1f} standard errors apart, more than z = {z:g}"
        )
    return mc
