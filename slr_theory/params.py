"""Model parameters and the five overlaps (docs/theory.md §1-2)."""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .catalogue import registry
from .nonlinearity import Nonlinearity, resolve_nonlinearity
from .validate import (
    as_array,
    broadcast,
    current_rounding_tolerance,
    positive_int,
    positive_real,
    rounding_tolerance,
    tolerance,
)

__all__ = [
    "ATTENTIONS",  # noqa: F822  (module __getattr__: the registry's names when asked)
    "DOMAIN",
    "OVERLAP_NAMES",
    "Params",
    "check_overlaps",
    "check_params",
    "dimension_of",
    "gram_matrix",
    "overlap_tolerance",
    "project_feasible",
    "temperature_range",
]


def overlap_tolerance(atol: float) -> contextlib.AbstractContextManager[float]:
    """Accept overlaps this far outside the feasible set (and project them onto it).

    Overlaps computed from rounded vectors, e.g. float32 weights, miss the feasible set by
    about ``1e-7``; the default tolerance is ``1e-12``. Inside the ``with`` block every
    function that checks overlaps (:func:`check_overlaps`, :func:`slr_theory.risk`, the
    dynamics, ...) accepts violations up to `atol` and uses the nearest feasible point.
    Explicit vectors are treated alike (:func:`slr_theory.risk_at`, ``pgd_vectors``,
    ``sample``, ...): norms within `atol` of 1 are divided out, and targets ``k*, v*``
    within `atol` of orthogonal are replaced by the nearest orthonormal pair.

    Parameters
    ----------
    atol : float
        ``0 <= atol <= 1e-2``.

    Returns
    -------
    context manager
        Use it in a ``with`` statement; it yields `atol`. The tolerance is validated
        here, when called, not when the block is entered.

    Examples
    --------
    >>> from slr_theory import Params, overlap_tolerance, risk
    >>> with overlap_tolerance(1e-6):
    ...     print(round(float(risk(Params.paper(), 0.5, 1 + 1.2e-7)), 6))
    0.164638

    Vectors normalised in float32:

    >>> import numpy as np
    >>> from slr_theory import risk_at
    >>> e = np.eye(400)
    >>> k = (e[0] + 1e-3 * e[5]).astype(np.float32)
    >>> k /= np.linalg.norm(k)
    >>> with overlap_tolerance(1e-6):
    ...     print(round(float(risk_at(Params.paper(), k, e[1], e[0], e[1])), 6))
    0.113498
    """
    return rounding_tolerance(atol)


#: The supported domain of each parameter, ``(low, high)`` inclusive: inside it every
#: risk, gradient and Hessian is finite and computed without a floating-point warning.
DOMAIN: dict[str, tuple[float, float]] = {
    "d": (2, 10**15),
    "L": (1, 10**12),
    "lam": (1e-6, 1e3),
    "gamma": (1e-6, 1e3),
    "eps": (0.0, 1e50),
}


def __getattr__(name: str):
    """``ATTENTIONS``: the registered attentions' names (:func:`slr_theory.models.attention_names`),
    read when asked, so that a model registered later is among them."""
    if name == "ATTENTIONS":
        return registry().attention_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Package-wide order of the overlaps ``k.k*, v.v*, v.k*, k.v*, k.v``.
OVERLAP_NAMES: tuple[str, ...] = ("kappa", "nu", "theta", "eta", "rho")


@dataclass(frozen=True)
class Params:
    """Parameters of the single-location regression model, validated once.

    Parameters
    ----------
    d : int
        Dimension, ``2 <= d <= 1e15`` (``k* ⊥ v*`` needs two dimensions).
    L : int
        Sequence length, ``1 <= L <= 1e12``.
    lam : float
        Temperature of the ``erf`` attention, ``1e-6 <= lam <= 1e3``.
    gamma : float
        Spread of the informative token, ``1e-6 <= gamma <= 1e3``.
    eps : float, default 0
        Standard deviation of the label noise, ``0 <= eps <= 1e50``.
    s : int, default 1
        Informative tokens, ``1 <= s <= L``: their positions are uniform among the
        ``s``-subsets of ``{1..L}``, each ``N(sqrt(d/2) k*, gamma^2 I)``, and the label is
        ``sum_{j in J} X_j^T v* + xi``. ``s = 1`` is the paper's model.
    nonlinearity : str or Nonlinearity, default ``"erf"``
        The attention's ``sigma``: ``"erf"`` (the paper's; closed forms), ``"tanh"``,
        ``"algebraic"`` (``x / sqrt(1 + x^2)``), ``"arctan"`` (``(2/pi) arctan x``),
        ``"sigmoid"`` (``1 / (1 + e^{-x})``: sigmoid attention, ``sigma(0) = 1/2``),
        ``"relu"``, ``"leaky_relu"`` (slope 0.01 below 0), ``"hardtanh"``
        (``clip(x, -1, 1)``) (kinked: panels and Dirac masses at the kinks),
        ``"identity"`` (linear attention: its moments in closed form), or a user's
        :class:`slr_theory.Nonlinearity` (or its path, ``"package.module:attr"``:
        :func:`slr_theory.nonlinearity.nonlinearity_at`). Other than ``"erf"``, the risk's Gaussian
        expectations come from quadrature (:func:`slr_theory.nonlinearity.gaussian_moments`).
    attention : str or Model, default ``"pointwise"``
        A registered attention (:func:`slr_theory.models.attention_names`), a model
        object (:class:`slr_theory.models.Model`), or its path ``"package.module:attr"``
        (kept as the path, imported where the model is asked for). ``"pointwise"``: the paper's
        ``T(X) = sum_l sigma(lam X_l.k) X_l.v``. ``"softmax"``:
        ``T(X) = sum_l softmax(lam X k)_l X_l.v``, the weights coupled through their
        normalisation (:mod:`slr_theory.softmax`); it has no `nonlinearity` (leave the
        default), and its numerics need ``lam sqrt(d/2) <= 1e3`` and
        ``lam max(1, gamma) <= 10`` (:data:`slr_theory.softmax.SOFTMAX_DOMAIN`).
        :attr:`model` is the object every computation asks.

    The bounds are :data:`DOMAIN`: inside it every risk, gradient and Hessian is finite
    and computed without a floating-point warning; outside, a ``ValueError`` names the
    parameter, the range and the value.

    Examples
    --------
    >>> from slr_theory import Params
    >>> p = Params(d=400, L=10, lam=0.1, gamma=0.5**0.5)
    >>> p.replace(lam=0.9).lam
    0.9
    >>> Params(d=400, L=10, lam=-1.0, gamma=1.0)
    Traceback (most recent call last):
        ...
    ValueError: `lam` must be finite and > 0, got -1.0.
    """

    d: int
    L: int
    lam: float
    gamma: float
    eps: float = 0.0
    s: int = 1
    nonlinearity: str | Nonlinearity = "erf"
    attention: Any = "pointwise"  # str, or a slr_theory.models.Model

    def __post_init__(self) -> None:
        d = positive_int(self.d, "d")
        if d < 2:
            raise ValueError(
                f"`d` must be an integer >= 2 (k* and v* are orthonormal), got {self.d!r}."
            )
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "L", positive_int(self.L, "L"))
        object.__setattr__(self, "lam", positive_real(self.lam, "lam"))
        object.__setattr__(self, "gamma", positive_real(self.gamma, "gamma"))
        object.__setattr__(self, "eps", positive_real(self.eps, "eps", allow_zero=True))
        object.__setattr__(self, "s", positive_int(self.s, "s"))
        if self.s > self.L:
            raise ValueError(
                f"`s` (informative tokens) must lie in [1, L] = [1, {self.L}], got {self.s!r}."
            )
        object.__setattr__(self, "nonlinearity", resolve_nonlinearity(self.nonlinearity))
        for name, (lo, hi) in DOMAIN.items():
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise ValueError(f"`{name}` must lie in [{lo:g}, {hi:g}], got {value!r}.")
        # a path, "package.module:attr", stays a path: the model is imported where asked
        # for (in a worker too), and a saved result names it by it
        if not isinstance(self.attention, str):  # a model object the registry builds: its
            # names, so that a saved result reads back as this model (not the default sigma)
            names = registry().canonical_names(
                self.model
            )  # the model refuses a sigma beside an object
            if names is not None:
                object.__setattr__(self, "attention", names[0])
                object.__setattr__(self, "nonlinearity", names[1])
        self.model.check(self)  # the model's own domain (a wrong name is refused here too)

    @property
    def model(self) -> Any:
        """The model object (:class:`slr_theory.models.Model`) of `attention` and
        `nonlinearity`: what every computation asks of the model."""
        return registry().model_of(self.attention, self.nonlinearity)

    @property
    def predictor(self) -> str:
        """The predictor as text, e.g. ``T(X) = Σ_ℓ erf(λ X_ℓ·k) X_ℓ·v``."""
        return self.model.predictor

    @property
    def attention_tag(self) -> str:
        """How the model differs from the paper's, for titles: ``""``,
        ``", σ = tanh"`` or ``", softmax attention"``."""
        return self.model.tag

    @property
    def lam_max(self) -> float:
        """The largest temperature this model takes: ``DOMAIN["lam"]``'s, and the model's
        own bound (for softmax attention :data:`slr_theory.softmax.SOFTMAX_DOMAIN`)."""
        return self.model.lam_max(self)

    @property
    def odd_weights(self) -> bool:
        """Whether the attention weight is odd in the key, so that ``(k, v) -> (-k, -v)``
        leaves the risk unchanged: pointwise attention with a ``sigma`` established odd when
        it was built (:attr:`slr_theory.Nonlinearity.odd`); never softmax
        (``softmax(-z) != -softmax(z)``)."""
        return self.model.odd_weights

    @property
    def sigma_name(self) -> str:
        """The nonlinearity's name (a built-in's, or the user's ``Nonlinearity.name``)."""
        nl = self.nonlinearity
        return nl if isinstance(nl, str) else nl.name

    def replace(self, **changes: object) -> Params:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def paper(cls, lam: float = 0.1, eps: float = 0.0) -> Params:
        """The paper's experimental setting ``d = 400, L = 10, gamma = sqrt(0.5)``."""
        return cls(d=400, L=10, lam=lam, gamma=float(np.sqrt(0.5)), eps=eps)


def params_record(p: Params) -> dict:
    """``Params`` as a JSON-able dict (``Params(**record)`` rebuilds it, for named
    nonlinearities and attentions, and for a user's found by its path: the path is
    recorded)."""
    return {
        "d": p.d,
        "L": p.L,
        "lam": p.lam,
        "gamma": p.gamma,
        "eps": p.eps,
        "s": p.s,
        "nonlinearity": p.nonlinearity
        if isinstance(p.nonlinearity, str)
        else p.nonlinearity.__plain__(),
        "attention": p.attention,
    }


def check_params(params) -> Params:
    """Return `params` if it is a :class:`Params`; raise ``ValueError`` naming it otherwise.

    Parameters
    ----------
    params : Params

    Returns
    -------
    Params

    Examples
    --------
    >>> from slr_theory.params import Params, check_params
    >>> check_params(Params.paper()).d
    400
    """
    if not isinstance(params, Params):
        raise ValueError(f"`params` must be a slr_theory.Params, got {type(params).__name__}.")
    return params


def dimension_of(params, function: str, name: str = "params") -> int:
    """The dimension ``d`` of `params`, for a function that takes the model first.

    A :class:`Params` gives its ``d``. An integer is the old signature of those functions
    (their first argument was ``d``): it still works, with a ``DeprecationWarning`` naming
    `function`, and is checked by the function itself.

    Parameters
    ----------
    params : Params or int
    function : str
        The public function's name, for the warning.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If `params` is neither.

    Examples
    --------
    >>> from slr_theory.params import Params, dimension_of
    >>> dimension_of(Params.paper(), "random_targets")
    400
    """
    import numbers
    import warnings

    if isinstance(params, Params):
        return params.d
    if isinstance(params, numbers.Integral) and not isinstance(params, bool):
        warnings.warn(
            f"{function}(d, ...) is deprecated: pass the model, {function}(params, ...) "
            "(a slr_theory.Params; its d is used).",
            DeprecationWarning,
            stacklevel=3,
        )
        return int(params)
    raise ValueError(
        f"`{name}` must be a slr_theory.Params (or, deprecated, the dimension d), got "
        f"{type(params).__name__}."
    )


def temperature_range(value, name: str = "lam_range") -> tuple[float, float]:
    """Two temperatures inside ``DOMAIN["lam"]``, returned sorted ``(lo, hi)``.

    Parameters
    ----------
    value : pair of float
    name : str
        The argument's name, for the error message.

    Returns
    -------
    tuple of two float

    Examples
    --------
    >>> from slr_theory.params import temperature_range
    >>> temperature_range([2.0, 0.5])
    (0.5, 2.0)
    """
    if not isinstance(value, (tuple, list, np.ndarray)) or len(value) != 2:
        raise ValueError(f"`{name}` must be two temperatures (lo, hi), got {value!r}.")
    lo, hi = sorted(positive_real(x, name) for x in value)
    if lo < DOMAIN["lam"][0] or hi > DOMAIN["lam"][1]:
        raise ValueError(
            f"`{name}` must lie in [{DOMAIN['lam'][0]:g}, {DOMAIN['lam'][1]:g}] "
            f"(the domain of lam), got {value!r}."
        )
    return lo, hi


def gram_matrix(kappa, nu, theta=0.0, eta=0.0, rho=0.0) -> np.ndarray:
    """Gram matrix of ``(k, v, k*, v*)``, shape ``(..., 4, 4)``.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        Overlaps, broadcast together. Unchecked: a building block of
        :func:`check_overlaps`, which validates.

    Returns
    -------
    ndarray, shape ``(..., 4, 4)``
    """
    kappa, nu, theta, eta, rho = np.broadcast_arrays(
        *(np.asarray(x, dtype=np.float64) for x in (kappa, nu, theta, eta, rho))
    )
    one, zero = np.ones_like(kappa), np.zeros_like(kappa)
    rows = [
        [one, rho, kappa, eta],
        [rho, one, theta, nu],
        [kappa, theta, one, zero],
        [eta, nu, zero, one],
    ]
    return np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)


def _onto_disc(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` scaled onto the unit disc where ``a^2 + b^2 > 1`` (elsewhere unchanged)."""
    val = a * a + b * b
    over = val > 1
    if over.any():
        f = np.where(over, 1.0 / np.sqrt(np.maximum(val, 1.0)), 1.0)
        a, b = a * f, b * f
    return a, b


def _schur(k, n, t, e, r):
    """``(s11, s22, s12)``: ``k*, v*`` are orthonormal, so the Gram matrix is PSD iff the
    Schur complement of its identity block, ``[[s11, s12], [s12, s22]]``, is PSD."""
    s11 = np.maximum(1 - k * k - e * e, 0.0)
    s22 = np.maximum(1 - t * t - n * n, 0.0)
    return s11, s22, r - k * t - e * n


def _rho_inside(k, n, t, e, r, s11, s22, s12):
    """``rho`` moved onto ``|s12| <= sqrt(s11 s22)`` where it lies outside, by its excess."""
    limit = np.sqrt(s11 * s22)
    outside = np.abs(s12) > limit
    if outside.any():
        r = np.where(outside, k * t + e * n + np.sign(s12) * limit, r)
    return r


def project_feasible(kappa, nu, theta, eta, rho) -> tuple[np.ndarray, ...]:
    r"""Overlaps moved onto the feasible set, as :func:`check_overlaps` moves them; unchecked.

    Each overlap into ``[-1, 1]``, ``(kappa, eta)`` and ``(theta, nu)`` onto the unit disc
    (``k`` and ``v`` have unit norm), then ``rho`` alone onto the interval the Schur
    complement allows, ``|rho - kappa theta - eta nu| <= sqrt(s11 s22)`` with
    ``s11 = 1 - kappa^2 - eta^2`` and ``s22 = 1 - theta^2 - nu^2``: by its excess, with no
    division, so the move is no larger than how far each step's constraint was violated
    (the square roots respond more strongly only where a disc scaling moved ``k`` or
    ``v`` at the edge of its disc). A feasible column is returned unchanged, bit for bit,
    and ``theta = eta = rho = 0`` stay exact zeros.

    Reconstructing vectors by :func:`slr_theory.trajectory.to_vectors` and renormalising
    them instead is ill-conditioned where ``k`` nears ``span{k*, v*}``:
    ``v3 = (rho - kappa theta - eta nu) / k3`` divides an error in ``rho`` by
    ``k3 = sqrt(s11)``; at ``k3 = 2e-7`` an integrator's ``4e-8`` gave ``|v|^2 = 1.32``, and
    PGD's normalisation then moved ``theta`` by 0.08.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        Finite overlaps, broadcast together (unchecked: a building block of
        :func:`check_overlaps` and of :func:`slr_theory.longrun.advance`;
        :func:`check_overlaps` validates).

    Returns
    -------
    tuple of ndarray
        ``(kappa, nu, theta, eta, rho)``, feasible.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.params import project_feasible
    >>> eta = -(1 - 2e-14)  # k a hair from -v*: sqrt(s11) = 2e-7
    >>> k3, w = np.sqrt(1 - eta**2), np.sqrt(1 - 0.63**2)  # v = (-0.63, 0, w, 0)
    >>> ov = (0.0, 0.0, -0.63, eta, k3 * w + 1e-14)  # rho 1e-14 too large
    >>> moved = project_feasible(*ov)
    >>> print(f"{float(moved[4] - ov[4]):.1e}")
    -1.0e-14
    """
    k, n, t, e, r = (
        np.clip(x, -1.0, 1.0)
        for x in np.broadcast_arrays(
            *(np.asarray(v, np.float64) for v in (kappa, nu, theta, eta, rho))
        )
    )
    (k, e), (t, n) = _onto_disc(k, e), _onto_disc(t, n)
    return k, n, t, e, _rho_inside(k, n, t, e, r, *_schur(k, n, t, e, r))


def check_overlaps(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike = 0.0,
    eta: ArrayLike = 0.0,
    rho: ArrayLike = 0.0,
    *,
    d: int | None = None,
    atol: float | None = None,
    names: tuple[str, str, str, str, str] = OVERLAP_NAMES,
) -> tuple[np.ndarray, ...]:
    """Validate and broadcast overlaps; return them in :data:`OVERLAP_NAMES` order.

    A tuple is feasible iff the Gram matrix of ``(k, v, k*, v*)`` is positive
    semi-definite and, when `d` is given, has rank at most `d`. Violations up to `atol`
    (default ``1e-12``, or the value set by :func:`overlap_tolerance`) are accepted and
    the nearest feasible point is returned; beyond, the error says by how much.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        Overlaps, broadcast together; feasible (:func:`slr_theory.params.check_overlaps`).
    d : int, optional
        Dimension; for ``d < 4`` the Gram matrix must also have rank at most ``d``.
    atol : float, optional
        Tolerance of the positive semi-definiteness tests, ``0 <= atol <= 1e-2``
        (default: the one :func:`overlap_tolerance` sets, else ``1e-12``).
    names : tuple of five str, optional
        What the caller's user calls the five (``("kappa0", "nu0", ...)``), for the
        messages (default :data:`OVERLAP_NAMES`).

    Returns
    -------
    tuple of five ndarray
        The overlaps as float arrays, broadcast together, in :data:`OVERLAP_NAMES` order.

    Raises
    ------
    ValueError
        Naming the violated condition and the offending values.

    Examples
    --------
    >>> from slr_theory.params import check_overlaps
    >>> check_overlaps(0.5, 0.5)[0]
    array(0.5)
    >>> check_overlaps(0.9, 0.0, eta=0.9)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: overlaps are infeasible: kappa**2 + eta**2 <= 1 (k has unit norm) fails, got kappa=0.9, eta=0.9 (by 0.62, beyond the tolerance 1e-12; ...).
    """
    atol = current_rounding_tolerance() if atol is None else tolerance(atol)
    if not (
        isinstance(names, tuple)
        and len(names) == 5
        and all(isinstance(nm, str) and nm for nm in names)
        and len(set(names)) == 5
    ):
        raise ValueError(
            f"`names` must be a tuple of five distinct non-empty strings, got {names!r}."
        )
    hint = (
        f"beyond the tolerance {atol:g}; for rounded inputs (e.g. float32 weights) use "
        "`with slr_theory.overlap_tolerance(1e-6):`"
    )
    arrays = {
        name: as_array(x, name, allow_nan=False)
        for name, x in zip(names, (kappa, nu, theta, eta, rho), strict=True)
    }
    shapes = [a.shape for a in arrays.values()]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        shape = None  # the checks below name the arrays that do not broadcast
    if shape is not None and len(shape) == 1 and shape[0] > _CHECK_BLOCK:
        out = [np.empty(shape) for _ in OVERLAP_NAMES]
        try:  # in blocks that stay in cache: the same operations on each value
            for start in range(0, shape[0], _CHECK_BLOCK):
                sl = slice(start, start + _CHECK_BLOCK)
                part = {nm: a[sl] if a.shape == shape else a for nm, a in arrays.items()}
                for o, got in zip(out, _feasible(part, d, atol, hint), strict=True):
                    o[sl] = got
            return tuple(out)
        except ValueError:
            pass  # the whole arrays raise the error they always raised, at its first value
    return _feasible(arrays, d, atol, hint)


_CHECK_BLOCK = 1 << 12  # values per block of a long check (its ~40 temporaries stay in cache)


def _feasible(arrays: dict, d: int | None, atol: float, hint: str) -> tuple[np.ndarray, ...]:
    """The checks and projections of :func:`check_overlaps` on converted arrays."""
    for name, x in arrays.items():
        big = np.abs(x) > 1 + atol
        if big.any():
            v = x[big].flat[0].item()
            raise ValueError(
                f"`{name}` must lie in [-1, 1], got {v!r} (by {abs(v) - 1:.2g}, {hint})."
            )
    k, n, t, e, r = (np.clip(x, -1.0, 1.0) for x in broadcast(**arrays))
    nk, nn, nt, ne, _ = arrays  # the caller's names, in OVERLAP_NAMES order
    pairs = [
        (f"{nk}**2 + {ne}**2 <= 1 (k has unit norm)", (nk, k), (ne, e)),
        (f"{nt}**2 + {nn}**2 <= 1 (v has unit norm)", (nt, t), (nn, n)),
    ]
    for cond, (na, a), (nb, b) in pairs:
        val = a * a + b * b
        bad = val > 1 + atol
        if bad.any():
            i = np.flatnonzero(bad)[0]
            raise ValueError(
                f"overlaps are infeasible: {cond} fails, got "
                f"{na}={a.flat[i].item()!r}, {nb}={b.flat[i].item()!r} "
                f"(by {val.flat[i] - 1:.2g}, {hint})."
            )
    (k, e), (t, n) = _onto_disc(k, e), _onto_disc(t, n)
    s11, s22, s12 = _schur(k, n, t, e, r)
    half_tr = 0.5 * (s11 + s22)
    lam_min = half_tr - np.hypot(0.5 * (s11 - s22), s12)
    bad = lam_min < -atol
    if bad.any():
        i = np.flatnonzero(bad)[0]
        vals = ", ".join(
            f"{nm}={x.flat[i].item()!r}" for nm, x in zip(arrays, (k, n, t, e, r), strict=True)
        )
        raise ValueError(
            "overlaps are infeasible: the Gram matrix of (k, v, k*, v*) must be positive "
            f"semi-definite, smallest eigenvalue of its Schur complement {lam_min.flat[i]:.3g} "
            f"at {vals} ({hint})."
        )
    r = _rho_inside(k, n, t, e, r, s11, s22, s12)
    if d is not None and positive_int(d, "d") < 4:
        tol = max(atol, 1e-9)
        lam_max = half_tr + np.hypot(0.5 * (s11 - s22), s12)
        rank = 2 + (lam_min > tol).astype(int) + (lam_max > tol).astype(int)
        bad = rank > d
        if bad.any():
            i = np.flatnonzero(bad)[0]
            raise ValueError(
                f"overlaps are infeasible in dimension d={d}: the Gram matrix of (k, v, k*, v*) "
                f"has rank {rank.flat[i]} > d."
            )
    return tuple(np.asarray(x, dtype=np.float64) for x in (k, n, t, e, r))
