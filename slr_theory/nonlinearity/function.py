"""A nonlinearity and its derivatives, as the user gave them: copied, checked point by point and by integral identities, with the properties established."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..identities import establish
from ..validate import finite_real, object_at, positive_real

__all__ = ["CHECK_POINTS", "Nonlinearity", "nonlinearity_at"]


K2 = 2.0 / np.sqrt(np.pi)


EPS = np.finfo(float).eps


TWO_OVER_PI = 2.0 / np.pi


#: The checks a nonlinearity with closed-form moment hooks must pass when it is built,
#: against the quadrature. The module that computes the moments (``expectations``, which
#: builds on this class) installs its check here when the package is imported.
HOOK_CHECKS: list = []


@dataclass(frozen=True)
class Nonlinearity:
    """An attention nonlinearity ``sigma`` with its derivatives, all vectorised.

    The paper's class is ``sigma`` bounded, increasing, differentiable, ``sigma(0) = 0``;
    the risk formulas need only that ``sigma`` is smooth with Gaussian expectations, so
    ``sigma(0) != 0`` (sigmoid attention) and a ``sigma`` that is not odd are taken too.
    What a result depends on is verified here, on :data:`CHECK_POINTS`, and recorded:
    :attr:`odd` (the symmetry ``(k, v) -> (-k, -v)``), :attr:`increasing` and
    :attr:`bound` (the proof that M has five critical points).

    Parameters
    ----------
    name : str
        A short name (what :class:`slr_theory.Params` reports and ``results.json`` stores).
    f, df, d2f : callable
        ``sigma``, ``sigma'``, ``sigma''``: ndarray -> ndarray of the same shape.
    d3f : callable, optional
        ``sigma'''``; without it the gradient's third derivatives come from Stein's
        identity (a factor ``1/g`` of rounding, ``g = lambda gamma``).
    d4f : callable, optional
        ``sigma''''`` (the Hessian); without it, Stein's identity again.
    complement : callable, optional
        ``1 - sigma(u)`` computed without cancellation where ``sigma`` saturates towards 1. Without it ``1 - f(u)`` is used, and the risk near
        the optimum, a difference of numbers of order one, loses the digits it cancels.
    closed_moments : callable, optional
        ``closed_moments(t, g, order) -> dict``: every Gaussian expectation of
        :func:`gaussian_moments` in closed form, for ``t`` 1-D (a hook: quadrature is the
        default). Checked when built against the quadrature at a few centres and scales,
        and used instead of it everywhere.
    strip : float, optional
        Half-width of a strip ``|Im u| < strip`` where ``sigma`` is analytic and bounded
        (tanh: ``pi/2``; algebraic, arctan: 1). With it, small ``g`` uses Gauss–Hermite
        (:func:`gaussian_moments`); without it, always the composite rule.
    kinks : sequence of float, optional
        Where ``sigma`` is continuous but a derivative jumps (ReLU: ``(0,)``; hard tanh:
        ``(-1, 1)``). The derivatives given are the pieces' (ReLU's ``d2f`` is 0), and
        all four must be given; the distributional rest, a Dirac mass ``J delta(u - c)``
        in ``sigma^(m+1)`` for each jump ``J`` of ``sigma^(m)`` at ``c``, is added to the
        Gaussian expectations in closed form (``E delta^(p)(t + gZ - c) =
        He_p(z) phi(z) / g^(p+1)``, ``z = (c - t)/g``; where kinks lie closer than ``g``,
        whose masses would cancel, Stein's identity on ``sigma'`` serves instead), and the
        quadrature's panels break at the kinks. The jumps are measured at the neighbouring floats of each kink; the
        derivatives are checked by differences away from the kinks, and by one-sided
        differences at them.

    Raises
    ------
    ValueError
        If `name` is empty, a callable is missing, a function does not return finite
        values of its input's shape on :data:`CHECK_POINTS`, or a derivative disagrees
        with a central difference of the function before it there (relative ``1e-5``);
        if a kink is not finite, ``sigma`` jumps there, or `kinks` come with a `strip`
        or without ``d3f`` and ``d4f``.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Nonlinearity, Params, risk
    >>> softsign = Nonlinearity(
    ...     "softsign",
    ...     lambda x: x / (1 + np.abs(x)),
    ...     lambda x: 1 / (1 + np.abs(x)) ** 2,
    ...     lambda x: -2 * np.sign(x) / (1 + np.abs(x)) ** 3,
    ...     lambda x: 6 / (1 + np.abs(x)) ** 4,
    ...     d4f=lambda x: -24 * np.sign(x) / (1 + np.abs(x)) ** 5,
    ...     kinks=(0.0,),  # sigma'' jumps there: declared, or refused
    ... )
    >>> float(softsign.f(np.array(1.0)))
    0.5
    >>> p = Params.paper().replace(nonlinearity=softsign)
    >>> p.nonlinearity.name
    'softsign'
    """

    name: str
    f: Callable[[np.ndarray], np.ndarray]
    df: Callable[[np.ndarray], np.ndarray]
    d2f: Callable[[np.ndarray], np.ndarray]
    d3f: Callable[[np.ndarray], np.ndarray] | None = None
    d4f: Callable[[np.ndarray], np.ndarray] | None = field(default=None, kw_only=True)
    complement: Callable[[np.ndarray], np.ndarray] | None = field(default=None, kw_only=True)
    strip: float | None = field(default=None, kw_only=True)
    closed_moments: Callable[[np.ndarray, float, int], dict] | None = field(
        default=None, kw_only=True
    )
    kinks: tuple = field(default=(), kw_only=True)
    #: ``sigma(-u) = -sigma(u)`` (to ``1e-14``), established when built
    #: (:func:`slr_theory.identities.establish`, or symbolically: :attr:`established`).
    odd: bool = field(init=False, repr=False, compare=False)
    #: ``sigma' >= 0`` and ``> 0`` somewhere (established): every ``E sigma(t + gZ)`` is
    #: then strictly increasing in ``t``.
    increasing: bool = field(init=False, repr=False, compare=False)
    #: ``sup |sigma|`` over ``|u| <= 1e300``, from its values and located extremes (or
    #: symbolically, from its limits, where ``sigma`` is proved monotone).
    bound: float = field(init=False, repr=False, compare=False)
    #: ``1`` if ``sigma >= 0`` (ReLU, sigmoid), ``-1`` if ``sigma <= 0``, else 0
    #: (established): a one-signed ``E sigma(U)`` does not cancel inside itself, however
    #: small it is.
    sign: int = field(init=False, repr=False, compare=False)
    #: ``(left, right)``: whether ``|sigma| < 1e-20`` beyond ``-60`` (``+60``), as sigmoid's
    #: left tail: there ``sigma^2`` itself is the integrand the quadrature must follow into
    #: the tail (at every node of the identities).
    vanishes: tuple = field(init=False, repr=False, compare=False)
    #: For ``"odd"``, ``"increasing"`` and ``"bound"``: how each was established, in words
    #: a proof can cite (``"SymPy"``, or the integral identities with their panels).
    established: dict = field(init=False, repr=False, compare=False)
    #: ``(len(kinks), 2, 5)``: ``sigma^(m)`` at the float below and above each kink
    #: (measured when built; their differences are the jumps).
    sides: np.ndarray = field(init=False, repr=False, compare=False)
    #: ``"package.module:attr"`` where it was found (:func:`nonlinearity_at`), or None: a
    #: nonlinearity found there is sent to worker processes by that path (its functions
    #: may be lambdas, which do not pickle), and each worker imports it again.
    origin: str | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"`name` must be a non-empty string, got {self.name!r}.")
        for attr in ("f", "df", "d2f"):
            if not callable(getattr(self, attr)):
                raise ValueError(f"`{attr}` must be callable, got {getattr(self, attr)!r}.")
        for attr in ("d3f", "d4f", "complement", "closed_moments"):
            value = getattr(self, attr)
            if value is not None and not callable(value):
                raise ValueError(f"`{attr}` must be callable or None, got {value!r}.")
        if self.strip is not None:
            object.__setattr__(self, "strip", positive_real(self.strip, "strip"))
        if self.d4f is not None and self.d3f is None:
            raise ValueError("`d4f` needs `d3f`: give the third derivative too.")
        for attr in _USER_FUNCTIONS:
            object.__setattr__(self, attr, _own_copy(getattr(self, attr)))
        object.__setattr__(self, "kinks", _checked_kinks(self))
        chain = [a for a in ("f", "df", "d2f", "d3f", "d4f") if getattr(self, a) is not None]
        given = [*chain, "complement"] if self.complement is not None else chain
        values = _checked_values(self, given)
        _refuse_undeclared_jumps(self, chain, values)  # first: a jump says what to declare
        for low, high in itertools.pairwise(chain):
            _check_derivative(self, low, high, values)
        object.__setattr__(self, "sides", _kink_sides(self))
        facts = establish(self.name, [getattr(self, a) for a in chain], chain, self.kinks)
        for attr in ("odd", "increasing", "bound", "sign", "vanishes"):
            object.__setattr__(self, attr, getattr(facts, attr))
        how = facts.how
        object.__setattr__(self, "established", dict.fromkeys(_PROPERTIES, how))
        f, u = values["f"], CHECK_POINTS
        if self.closed_moments is not None:
            for check in HOOK_CHECKS:  # the quadrature's, installed by expectations.py
                check(self)
        if self.complement is not None:
            c = values["complement"]
            bad = ~(np.abs(c - (1.0 - f)) <= 1e-12 * np.maximum(1.0, np.abs(f)))
            if np.any(bad):
                x = float(u[np.argmax(bad)])
                raise ValueError(
                    f"`complement` of nonlinearity {self.name!r} must equal 1 - f(u); at "
                    f"u = {x!r} it gives {float(c[np.argmax(bad)])!r}, 1 - f(u) = "
                    f"{float(1.0 - f[np.argmax(bad)])!r}."
                )

    def __plain__(self) -> str:
        """What a saved result records of it: its path if it was found by one (so that
        the result reads back), else its name (functions are not data)."""
        return self.origin or self.name

    def __reduce_ex__(self, protocol):
        """Pickled by its path when it has one (:attr:`origin`), else field by field."""
        if self.origin is not None:
            return (nonlinearity_at, (self.origin,))
        return super().__reduce_ex__(protocol)

    def shifted(self, bias: float) -> Nonlinearity:
        """``u -> sigma(u + bias)``: this nonlinearity with a bias, as a new one.

        Sigmoid attention with a bias, ``p_l = sigmoid(lambda X_l . k + b)``, is
        ``nonlinearity_of("sigmoid").shifted(b)``. The derivatives and the complement are
        this one's at ``u + bias``, the strip of analyticity is the same, and what the new
        one is (odd, increasing, bounded) is verified again when it is built. Closed forms
        are not carried over: the tails they give are taken from the sign of the centre,
        which the shift moves, so the quadrature serves.

        Parameters
        ----------
        bias : float
            Finite; named into the result (``"sigmoid+0.5"``).

        Returns
        -------
        Nonlinearity

        Examples
        --------
        >>> import numpy as np
        >>> from slr_theory.nonlinearity import nonlinearity_of
        >>> biased = nonlinearity_of("sigmoid").shifted(0.5)
        >>> biased.name, bool(np.isclose(biased.f(np.array(-0.5)), 0.5)), biased.odd
        ('sigmoid+0.5', True, False)
        """
        b = finite_real(bias, "bias")

        def at(fn):
            return None if fn is None else (lambda u: fn(np.asarray(u, dtype=np.float64) + b))

        return Nonlinearity(
            f"{self.name}{b:+g}",
            at(self.f),
            at(self.df),
            at(self.d2f),
            at(self.d3f),
            d4f=at(self.d4f),
            complement=at(self.complement),
            strip=self.strip,
            kinks=tuple(c - b for c in self.kinks),
        )

    @classmethod
    def from_sympy(cls, expr, name: str | None = None, *, symbol=None) -> Nonlinearity:
        """A nonlinearity from a SymPy expression, its derivatives and kinks derived.

        The four derivatives come from ``sympy.diff`` (piece by piece), the kinks from
        the boundaries of ``Max``, ``Min``, ``Abs``, ``Heaviside``, ``sign`` and
        ``Piecewise`` (refused where ``sigma`` jumps), and oddness, monotonicity and, for
        a monotone ``sigma``, the bound (its limits at ``+-inf``) are proved by SymPy where
        it decides them: :attr:`established` says ``"SymPy (proved symbolically)"`` for
        those, and the integral identities for the rest (every one is also checked by
        them, as for any nonlinearity). Needs SymPy (``slr-theory[derive]``).

        Parameters
        ----------
        expr : sympy expression or str
            In one real variable.
        name : str, optional
            Defaults to the expression as SymPy prints it.
        symbol : sympy.Symbol, optional
            The variable, where `expr` has more than one free symbol.

        Returns
        -------
        Nonlinearity

        Raises
        ------
        ValueError
            As :func:`slr_theory.symbolic.derive`, or as the class (a value that is not
            finite out to ``1e300``, a jump).

        Examples
        --------
        >>> from slr_theory import Nonlinearity
        >>> relu = Nonlinearity.from_sympy("Max(u - 1/400, 0)", "shifted relu")
        >>> relu.kinks, relu.increasing, relu.established["increasing"]
        ((0.0025,), True, 'SymPy (proved symbolically)')
        """
        from ..symbolic import PROVED, derive

        d = derive(expr, symbol)
        f, df, d2f, d3f, d4f = d.functions
        sigma = cls(name or d.text, f, df, d2f, d3f, d4f=d4f, kinks=d.kinks)
        established = dict(sigma.established)
        for prop, value in d.proved.items():
            object.__setattr__(sigma, prop, value)
            established[prop] = PROVED
        object.__setattr__(sigma, "established", established)
        return sigma

    def how_established(self, *names: str) -> str:
        """How the named properties (``"odd"``, ``"increasing"``, ``"bound"``) were
        established, for a proof's sentence: properties established alike share a clause.

        Examples
        --------
        >>> from slr_theory.nonlinearity import nonlinearity_of
        >>> nonlinearity_of("tanh").how_established("odd", "bound")[:48]
        'oddness and the bound by integral identities on '
        """
        groups: dict[str, list[str]] = {}
        for n in names:
            if n not in self.established:
                raise ValueError(f"`names` must be among {_PROPERTIES}, got {n!r}.")
            groups.setdefault(self.established[n], []).append(n)

        def words(ns):
            ws = [_PROPERTY_WORDS[n] for n in ns]
            return ws[0] if len(ws) == 1 else f"{', '.join(ws[:-1])} and {ws[-1]}"

        return "; ".join(f"{words(ns)} by {how}" for how, ns in groups.items())

    def derivative(self, j: int) -> Callable[[np.ndarray], np.ndarray] | None:
        """``sigma^(j)`` for ``0 <= j <= 4``, or None if it is not provided."""
        return (self.f, self.df, self.d2f, self.d3f, self.d4f)[j]

    @property
    def order(self) -> int:
        """The highest derivative provided (2, 3 or 4)."""
        return 4 if self.d4f is not None else 3 if self.d3f is not None else 2

    def tail(self, u: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``tau = 1 - s sigma(u)`` for signs ``s`` in ``{-1, 1}`` (``s - sigma = s tau``)."""
        if self.complement is None:
            return 1.0 - s * self.f(u)
        if self.odd:  # 1 - s sigma(u) = 1 - sigma(su)
            return self.complement(s * u)
        return np.where(s > 0, self.complement(u), 1.0 + self.f(u))


#: Where a :class:`Nonlinearity` is checked when built, symmetric about 0: a grid of step
#: ``1/200`` over ``[-60, 60]`` (where the built-ins turn over and saturate), then 200
#: points log-spaced out to ``1e300`` (the largest argument the quadrature evaluates:
#: centres up to :data:`MAX_CENTRE`). Every function given must be finite there.
_HALF = np.concatenate(
    [np.linspace(0.0, 60.0, 12_001), np.logspace(np.log10(60.0), 300.0, 200)[1:]]
)


CHECK_POINTS = np.concatenate([-_HALF[:0:-1], _HALF])  # exactly symmetric: u and -u
CHECK_POINTS.flags.writeable = False  # shared: a user's function gets a copy (_OwnCopy)


_USER_FUNCTIONS = ("f", "df", "d2f", "d3f", "d4f", "complement")


_PROPERTIES = ("odd", "increasing", "bound")


_PROPERTY_WORDS = {"odd": "oddness", "increasing": "monotonicity", "bound": "the bound"}


def nonlinearity_at(path: str, name: str = "nonlinearity") -> Nonlinearity:
    """The :class:`Nonlinearity` a module defines, named ``"package.module:attr"``.

    The module is imported (it must be on ``sys.path``) and the object is remembered as
    found there (:attr:`Nonlinearity.origin`), so that worker processes, which receive it
    pickled, import it by the same path: its functions may then be lambdas.

    Parameters
    ----------
    path : str
        ``"package.module:attr"``; ``attr`` may be dotted.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    Nonlinearity

    Raises
    ------
    ValueError
        If the module cannot be imported, has no such attribute, or the object is not a
        :class:`Nonlinearity` (:func:`slr_theory.validate.object_at`).

    Examples
    --------
    >>> import pickle
    >>> from slr_theory.nonlinearity import nonlinearity_at
    >>> sigma = nonlinearity_at("slr_theory.nonlinearity.examples:softsign")
    >>> sigma.name, sigma.origin
    ('softsign', 'slr_theory.nonlinearity.examples:softsign')
    >>> pickle.loads(pickle.dumps(sigma)) is sigma
    True
    """
    sigma = object_at(path, name, Nonlinearity)
    if sigma.origin is None:
        object.__setattr__(sigma, "origin", path)
    return sigma


class _OwnCopy:
    """A user's function, called on a private copy of its argument: one that writes into
    it (``np.clip(u, -50, 50, out=u)``) cannot change the quadrature's nodes or the
    points checked after it. Equal (and hashed) as the function it wraps, so two
    nonlinearities of the same functions stay equal."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self, u):
        return self.fn(np.array(u, copy=True))

    def __eq__(self, other: object) -> bool:
        return self.fn == (other.fn if isinstance(other, _OwnCopy) else other)

    def __hash__(self) -> int:
        return hash(self.fn)

    def __repr__(self) -> str:
        return repr(self.fn)


def _own_copy(fn):
    """`fn` as it is where it cannot write into its argument (NumPy's ufuncs, the
    functions of this module), else wrapped in :class:`_OwnCopy`."""
    if (
        fn is None
        or isinstance(fn, np.ufunc | _OwnCopy)
        or getattr(fn, "__module__", None) == __name__
    ):
        return fn
    return _OwnCopy(fn)


def _refuse_undeclared_jumps(sigma: Nonlinearity, chain: list, values: dict) -> None:
    """Refuse a derivative of `chain` that jumps at a point of :data:`CHECK_POINTS` in
    ``[-60, 60]`` (its values at the floats either side differ by more than ``1e-6`` of
    them plus ``1e-10`` of its size) where the function below it has those two values as
    its one-sided slopes: an undeclared kink, named with the ``kinks=`` it needs. A jump
    the function below does not bear out is a wrong derivative, which the difference
    check names; beyond ``[-60, 60]`` floats are too far apart for a smooth function
    (``sin``) not to move between neighbours.

    Softsign's ``sigma^(2)`` jumps at 0: without ``kinks=(0.0,)`` the quadrature's panels
    straddle the jump and its expectations lose 8 digits (``E sigma``) to all of them
    (``E sigma^(4)``) at ``g = 0.07``, against 1 to 15 ulp with it. A jump between the
    points is not seen here; declaring it is the user's part (``docs/models.md``).
    """
    u = CHECK_POINTS[np.abs(CHECK_POINTS) <= 60.0]
    below, above = np.nextafter(u, -np.inf), np.nextafter(u, np.inf)
    kinks = np.asarray(sigma.kinks, dtype=np.float64)
    declared = (  # at a declared kink, or a few ulps from it (the grid's 3.0000000000000004)
        np.min(np.abs(u[:, None] - kinks[None, :]), axis=1) <= 1e-12 * np.maximum(1.0, np.abs(u))
        if kinks.size
        else np.zeros(u.shape, dtype=bool)
    )
    for low, attr in itertools.pairwise(chain):
        fn, fl = getattr(sigma, attr), getattr(sigma, low)
        with np.errstate(all="ignore"):
            lo, hi = (np.asarray(fn(x), dtype=np.float64) for x in (below, above))
        size = float(np.max(np.abs(values[attr])))
        gap = np.abs(hi - lo)
        jumps = ~declared & ~(gap <= 1e-6 * np.maximum(np.abs(lo), np.abs(hi)) + 1e-10 * size)
        for i in np.flatnonzero(jumps):
            at = float(u[i])
            h = 1e-6 * max(1.0, abs(at))
            with np.errstate(all="ignore"):
                f0, fm, fp = (
                    float(np.asarray(fl(np.array([x])))[0]) for x in (at, at - h, at + h)
                )
            left, right = (f0 - fm) / h, (fp - f0) / h
            tol = 0.1 * gap[i]  # each side's slope to a tenth of the jump
            if not (abs(left - lo[i]) <= tol and abs(right - hi[i]) <= tol):
                continue  # not a kink of the function below: a wrong derivative
            lo_i, hi_i = float(lo[i]), float(hi[i])
            raise ValueError(
                f"`{attr}` of nonlinearity {sigma.name!r} jumps at u = {at!r} (from "
                f"{lo_i!r} to {hi_i!r}), which `kinks` does not declare: give "
                f"kinks=({at!r},) with the pieces' derivatives up to `d4f` (the "
                "quadrature's panels then end there and the jump's Dirac mass is added; "
                "straddled, the expectations lose up to all their digits)."
            )


_CHECK_STEP = 1e-5  # the central difference's step on the grid; relative to |u| beyond it


def _checked_values(sigma: Nonlinearity, chain: list) -> dict:
    """Every function of `chain` on :data:`CHECK_POINTS`, refused where one is not finite."""
    out = {}
    for attr in chain:
        with np.errstate(all="ignore"):
            v = np.asarray(getattr(sigma, attr)(CHECK_POINTS), dtype=np.float64)
        if v.shape != CHECK_POINTS.shape:
            raise ValueError(
                f"`{attr}` of nonlinearity {sigma.name!r} must map an array to values of the "
                f"same shape; for shape {CHECK_POINTS.shape} it gave shape {v.shape}."
            )
        bad = ~np.isfinite(v)
        if np.any(bad):
            i = int(np.argmax(bad))
            raise ValueError(
                f"`{attr}` of nonlinearity {sigma.name!r} must be finite wherever the risk "
                f"evaluates it (|u| <= 1e300); at u = {CHECK_POINTS[i]!r} it gave {v[i]!r}."
            )
        out[attr] = v
    return out


def _check_derivative(sigma: Nonlinearity, low: str, high: str, values: dict) -> None:
    """Refuse `high` unless it is the derivative of `low` on :data:`CHECK_POINTS`.

    Central differences with step ``1e-5`` (``1e-5 |u|`` beyond ``|u| = 1``), accepted
    within ``1e-5`` of the derivative's size, plus the difference's rounding, its
    truncation ``h^2 |g''| / 6`` for ``g`` = `high` (twice that, from the second
    difference of `high` itself: where `high` crosses 0 its size says nothing of the
    truncation) and ``1e-9`` of the sups of the two functions.
    """
    u = CHECK_POINTS
    h = _CHECK_STEP * np.maximum(1.0, np.abs(u))
    fl, fh, exact = getattr(sigma, low), getattr(sigma, high), values[high]
    with np.errstate(all="ignore"):
        up, down = (np.asarray(fl(x), dtype=np.float64) for x in (u + h, u - h))
        fd = (up - down) / (2.0 * h)
        hup, hdown = (np.asarray(fh(x), dtype=np.float64) for x in (u + h, u - h))
        truncation = np.abs(hup - 2.0 * exact + hdown) / 3.0
    truncation = np.where(np.isfinite(truncation), truncation, 0.0)
    rounding = 8.0 * EPS * np.maximum(np.abs(up), np.abs(down)) / h
    scale = 1e-9 * (np.max(np.abs(values[low])) + np.max(np.abs(exact)))
    ok = np.abs(fd - exact) <= 1e-5 * np.abs(exact) + rounding + truncation + scale
    for c in sigma.kinks:  # a difference across a kink averages two slopes: skipped there
        ok |= np.abs(u - c) <= 2.0 * h
    if not np.all(ok):
        i = int(np.argmax(~ok))
        raise ValueError(
            f"`{high}` of nonlinearity {sigma.name!r} is not the derivative of `{low}`: at "
            f"u = {u[i]!r} it gives {exact[i]!r}, a central difference gives {fd[i]!r}."
        )


def _checked_kinks(sigma: Nonlinearity) -> tuple:
    """`kinks` as a sorted tuple of distinct finite floats, refused with what it needs."""
    try:
        kinks = tuple(sorted({float(c) for c in sigma.kinks}))
    except (TypeError, ValueError):
        raise ValueError(
            f"`kinks` of nonlinearity {sigma.name!r} must be a sequence of finite numbers, "
            f"got {sigma.kinks!r}."
        ) from None
    if not all(math.isfinite(c) and abs(c) <= 1e300 for c in kinks):
        raise ValueError(
            f"`kinks` of nonlinearity {sigma.name!r} must be finite numbers in "
            f"[-1e300, 1e300], got {sigma.kinks!r}."
        )
    if kinks and (sigma.d3f is None or sigma.d4f is None):
        raise ValueError(
            f"`kinks` of nonlinearity {sigma.name!r} need `d3f` and `d4f` (the pieces' "
            "third and fourth derivatives): Stein's identity beyond them would miss the "
            "Dirac masses at the kinks."
        )
    if kinks and sigma.strip is not None:
        raise ValueError(
            f"`strip` of nonlinearity {sigma.name!r} must be None when it has kinks (it is "
            f"not analytic at {kinks[0]!r}), got {sigma.strip!r}."
        )
    return kinks


#: One-sided differences at a kink: step, relative to ``max(1, |c|)``.
_KINK_STEP = 1e-7


def _kink_sides(sigma: Nonlinearity) -> np.ndarray:
    """``sigma^(m)``, ``m <= 4``, just below and just above each kink, checked.

    Refused when ``sigma`` itself jumps (the risk's expectations would need a Dirac mass
    in ``sigma'``, which the model does not take) or when the one-sided slope of a
    function differs from the next derivative's value on that side (``1e-5`` relative, plus
    the step times the derivative after it).
    """
    out = np.zeros((len(sigma.kinks), 2, 5))
    for i, c in enumerate(sigma.kinks):
        at = np.array([np.nextafter(c, -np.inf), np.nextafter(c, np.inf)])
        for m in range(5):
            fn = sigma.derivative(m)
            out[i, :, m] = np.asarray(fn(at), dtype=np.float64)
        if not np.all(np.isfinite(out[i])):
            raise ValueError(
                f"the derivatives of nonlinearity {sigma.name!r} must be finite beside its "
                f"kink {c!r}, got {out[i].tolist()!r}."
            )
        f_lo, f_hi = out[i, :, 0]
        if not abs(f_hi - f_lo) <= 1e-12 * max(1.0, abs(f_lo)) + 4.0 * EPS * (
            abs(c) * np.max(np.abs(out[i, :, 1]))
        ):
            raise ValueError(
                f"nonlinearity {sigma.name!r} must be continuous at its kink {c!r}: it "
                f"gives {f_lo!r} below and {f_hi!r} above."
            )
        h = _KINK_STEP * max(1.0, abs(c))
        # no fifth derivative is given: its size on each side is the fourth's slope
        far4 = np.asarray(sigma.d4f(np.array([c - h, c + h])), dtype=np.float64)
        d5 = np.abs(far4 - out[i, :, 4]) / h
        for m in range(4):
            fn = sigma.derivative(m)
            far = np.asarray(fn(np.array([c - h, c + h])), dtype=np.float64)
            for side in (0, 1):
                near = out[i, side, m]
                slope = (far[1] - near) / h if side else (near - far[0]) / h
                want = out[i, side, m + 1]
                nxt = np.max(np.abs(out[i, :, m + 2])) if m < 3 else 2.0 * np.max(d5)
                rounding = 8.0 * EPS * (abs(near) + abs(far[side])) / h
                if not abs(slope - want) <= 1e-5 * abs(want) + h * nxt + rounding:
                    raise ValueError(
                        f"`{('df', 'd2f', 'd3f', 'd4f')[m]}` of nonlinearity {sigma.name!r} "
                        f"is not the one-sided derivative at its kink {c!r}: "
                        f"{'above' if side else 'below'} it gives {want!r}, a difference "
                        f"gives {slope!r}."
                    )
    return out
