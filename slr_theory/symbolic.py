r"""A nonlinearity from a SymPy expression: its derivatives, kinks and properties derived.

What :func:`slr_theory.identities.establish` checks of a function it can only evaluate,
an expression gives exactly: the derivatives (``sympy.diff``, piece by piece), the kinks
(the boundaries of ``Max``, ``Min``, ``Abs``, ``Heaviside``, ``sign`` and ``Piecewise``,
solved for), continuity at each (one-sided limits), oddness (``sigma(u) + sigma(-u)``
simplifies to 0), monotonicity (SymPy's assumptions prove ``sigma' >= 0``) and, for a
monotone ``sigma``, its bound (its limits at ``+-inf``). What SymPy cannot decide is left
to the identities, and :attr:`slr_theory.Nonlinearity.established` says which is which.

SymPy is imported only here, when called (``pip install 'slr-theory[derive]'``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["PROVED", "Derived", "derive"]

#: How :attr:`slr_theory.Nonlinearity.established` names a property proved here.
PROVED = "SymPy (proved symbolically)"
_SIMPLIFY_OPS = 10  # sympy.simplify is tried on expressions this small (it may not end)


@dataclass(frozen=True)
class Derived:
    """A symbolic ``sigma``, ready to build a :class:`slr_theory.Nonlinearity`.

    Attributes
    ----------
    text : str
        The expression as SymPy prints it (the default name).
    functions : tuple of callable
        ``sigma`` and its first four derivatives, vectorised (NumPy and SciPy).
    kinks : tuple of float
        Where a derivative jumps (the pieces' boundaries); ``sigma`` is continuous there.
    proved : dict
        The properties SymPy decided: ``"odd"`` (True), ``"increasing"`` (True) and
        ``"bound"`` (a float, for a proved monotone ``sigma``); absent where undecided.
    """

    text: str
    functions: tuple
    kinks: tuple
    proved: dict


def _sympy():
    try:
        import sympy
    except ImportError:  # pragma: no cover - sympy is in the test extras
        raise ModuleNotFoundError(
            "Nonlinearity.from_sympy needs SymPy: pip install 'slr-theory[derive]'."
        ) from None
    return sympy


def _overflows(fn, x: float) -> bool:
    try:
        with np.errstate(over="raise", under="ignore", invalid="ignore", divide="ignore"):
            fn(np.array([x]))
    except FloatingPointError:
        return True
    return False


def _overflow_start(fn, side: float) -> float:
    """The least magnitude ``m >= 1`` at which evaluating `fn` at ``side * m`` overflows
    (``inf`` if none): an intermediate such as ``u^2`` or ``e^u`` overflows beyond a
    magnitude and stays overflowing, so a bisection over the floats finds it (positive
    floats are ordered as their bit patterns)."""
    top = np.finfo(np.float64).max
    if not _overflows(fn, side * top):
        return np.inf
    if _overflows(fn, side * 1.0):
        return 1.0

    def as_float(bits: int) -> float:
        return float(np.array(bits, dtype=np.int64).view(np.float64))

    lo = int(np.array(1.0).view(np.int64))  # does not overflow
    hi = int(np.array(top).view(np.int64))  # overflows
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _overflows(fn, side * as_float(mid)):
            hi = mid
        else:
            lo = mid
    return as_float(hi)


def _numeric(sp, expr, u) -> Callable[[np.ndarray], np.ndarray]:
    """``expr`` as a vectorised function of floats. Where its evaluation as written
    overflows (``u^2`` past ``1.3e154``: ``u / sqrt(1 + u^2)`` would be 0 there, and
    ``u^2 e^{-u^2}`` NaN) or is not finite, far out (``|u| > 1``), its limit at that
    infinity replaces it; an unbounded limit stays infinite (refused by the identities).
    Where the overflow starts and the limits are found once, when first needed."""
    fn = sp.lambdify(u, expr, modules=["scipy", "numpy"])
    once: dict = {}

    def limit(side: int) -> float:
        if ("limit", side) not in once:
            once["limit", side] = _limit(sp, expr, u, side * sp.oo)
        return once["limit", side]

    def start(side: int) -> float:
        if ("start", side) not in once:
            once["start", side] = _overflow_start(fn, float(side))
        return once["start", side]

    def numeric(x):
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(all="ignore"):
            v = np.asarray(fn(x), dtype=np.float64)
        v = np.array(np.broadcast_to(v, x.shape), dtype=np.float64)
        bad = ~np.isfinite(v) & (np.abs(x) > 1.0)
        if np.any(x > 1.0):
            bad |= x >= start(1)
        if np.any(x < -1.0):
            bad |= -x >= start(-1)
        if np.any(bad):
            v[bad] = np.where(x[bad] > 0, limit(1), limit(-1))
        return v

    return numeric


def _limit(sp, expr, u, point, direction: str = "+") -> float:
    """``lim expr`` as `u` tends to `point` (``+-oo``, or from `direction`), a float
    (``+-inf`` allowed; NaN if SymPy does not decide)."""
    try:
        value = sp.limit(expr, u, point, direction)
    except (TypeError, ValueError, NotImplementedError):
        return np.nan
    if value in (sp.oo, -sp.oo):
        return float(value)
    try:
        value = complex(value)
    except (TypeError, ValueError):
        return np.nan
    return value.real if value.imag == 0 else np.nan


def _kinks(sp, expr, u) -> tuple:
    """The real boundaries of the pieces of `expr` (rewritten as Piecewise)."""
    points = set()
    for pw in expr.atoms(sp.Piecewise):
        for _, cond in pw.args:
            for rel in cond.atoms(sp.core.relational.Relational):
                for root in sp.solveset(rel.lhs - rel.rhs, u, domain=sp.S.Reals):
                    points.add(float(root))
    return tuple(sorted(points))


def derive(expr, symbol=None) -> Derived:
    """Derive what a :class:`slr_theory.Nonlinearity` needs from a SymPy expression.

    Parameters
    ----------
    expr : sympy expression or str
        In one real variable (``sympy.sympify`` reads a string).
    symbol : sympy.Symbol, optional
        The variable, where `expr` has more than one free symbol (the others are then
        refused: a nonlinearity has no parameters left open).

    Returns
    -------
    Derived

    Raises
    ------
    ValueError
        If `expr` is not an expression in one variable, a kink's place is not a finite
        real number, or ``sigma`` jumps at one.

    Examples
    --------
    >>> from slr_theory.symbolic import derive
    >>> d = derive("Max(u - 1/400, 0)")
    >>> d.kinks, d.proved["increasing"]
    ((0.0025,), True)
    """
    sp = _sympy()
    try:
        e = sp.sympify(expr)
    except (sp.SympifyError, TypeError) as err:
        raise ValueError(f"`expr` must be a SymPy expression, got {expr!r} ({err}).") from None
    if not isinstance(e, sp.Expr):
        raise ValueError(f"`expr` must be a SymPy expression, got {expr!r}.")
    free = e.free_symbols
    if symbol is None:
        if len(free) != 1:
            raise ValueError(
                f"`expr` must have exactly one free symbol (or give `symbol`), got "
                f"{sorted(map(str, free))!r} in {e}."
            )
        (symbol,) = free
    elif free - {symbol}:
        raise ValueError(
            f"`expr` must have no free symbol but `symbol` {symbol}, got "
            f"{sorted(map(str, free - {symbol}))!r} in {e}."
        )
    u = sp.Symbol("u", real=True)
    e = e.subs(symbol, u)
    text = str(e)
    pw = sp.piecewise_fold(e.rewrite(sp.Piecewise))
    try:
        kinks = _kinks(sp, pw, u)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"`expr` {text}: the boundaries of its pieces must be finite real points ({err})."
        ) from None
    for c in kinks:
        left = _limit_side(sp, pw, u, c, "-")
        right = _limit_side(sp, pw, u, c, "+")
        if not (np.isfinite(left) and np.isfinite(right)) or abs(left - right) > 1e-12 * max(
            1.0, abs(left)
        ):
            raise ValueError(
                f"nonlinearity {text} must be continuous: at u = {c!r} it tends to {left!r} "
                f"from below and {right!r} from above (a jump of sigma is not in the model)."
            )
    chain = [pw]
    for _ in range(4):
        chain.append(sp.diff(chain[-1], u))
    functions = tuple(_numeric(sp, d, u) for d in chain)
    proved: dict = {}
    even = pw + pw.subs(u, -u)
    if even == 0 or (even.count_ops() <= 4 * _SIMPLIFY_OPS and sp.simplify(even) == 0):
        proved["odd"] = True
    d1 = chain[1]
    nonneg = d1.is_nonnegative or sp.together(d1).is_nonnegative
    if not nonneg and d1.count_ops() <= _SIMPLIFY_OPS:  # simplify can run for minutes
        nonneg = sp.simplify(d1).is_nonnegative
    if nonneg and d1.is_zero is not True:
        proved["increasing"] = True
        ends = [abs(_limit(sp, pw, u, side)) for side in (-sp.oo, sp.oo)]
        if not any(np.isnan(ends)):
            proved["bound"] = float(max(ends))
    return Derived(text=text, functions=functions, kinks=kinks, proved=proved)


def _limit_side(sp, expr, u, c: float, direction: str) -> float:
    """The one-sided limit of `expr` at the float `c`, as a float (NaN if undecided):
    ``u = c +- eps`` with ``eps > 0`` settles every piece's condition, then ``eps -> 0``
    (``sympy.limit`` at ``c`` itself would take the piece of ``u = c``)."""
    eps = sp.Symbol("eps", positive=True)
    at = sp.nsimplify(c, rational=True) + (eps if direction == "+" else -eps)
    return _limit(sp, expr.subs(u, at), eps, 0)
