r"""What a nonlinearity is, established by integral identities over the whole range it is used.

A point check cannot see what happens between its points: ``tanh u + 0.5 [u > 0.0025]``
with the derivatives of ``tanh`` agrees with them at every point of a grid that skips
``(0, 0.0025]``, and its risk is then wrong by a third. An identity over an interval sees
it wherever it is: on every panel ``[a, b]`` of a partition of ``|u| <= 1e300`` (the
largest argument the quadrature evaluates),

.. math:: \sigma^{(m)}(b) - \sigma^{(m)}(a) = \int_a^b \sigma^{(m+1)}(u)\, du,
          \qquad m = 0, 1, \dots,

the left side from two values, the right side by 16-point Gauss–Legendre, equal to
``1e-9`` of the sizes in it, plus 64 ulp of ``sigma^(m)``'s largest value on ``[-60,
60]`` (the rounding of a derivative computed by cancellation, ``1 - tanh^2``), plus
``1e-21`` of ``sup |sigma^(m+1)|`` per unit width (a tail clipped to ``1e-43`` harms no
integral the risk takes). A jump of
``sigma`` fails the first identity on the panel that holds it, whatever its place; a jump
of ``sigma'`` (an undeclared kink) fails the second; a derivative that is wrong fails
its own. A panel whose identity fails is halved until the failure is located (a steep
but smooth feature is then resolved and passes) or the panel is a few floats wide (a
jump: refused, with where and how large). Declared kinks are panel ends, the functions
taken on each side. A jump of ``sigma`` by ``1e-9`` of its size is seen out to
``|u| = 1e13``, by ``0.5`` out to ``1e21``.

The same nodes give the properties a result depends on: ``sigma`` odd (``sigma(u) +
sigma(-u) = 0`` at every node and its mirror), non-decreasing (``sigma' >= 0`` at every
node and panel end, so ``int |sigma'| = int sigma'`` on every panel), its bound and sign
(from its values and from its extremes, located by bisection of ``sigma'`` wherever it
changes sign between nodes). What no evaluation of a function can see is a feature
narrower than the nodes' spacing (:data:`RESOLUTION`); where that matters, a symbolic
``sigma`` is proved instead (:meth:`slr_theory.Nonlinearity.from_sympy`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["RESOLUTION", "SigmaFacts", "establish", "panel_breaks"]

EPS = np.finfo(float).eps
_X, _W = np.polynomial.legendre.leggauss(16)
_INNER = 60.0  # where the built-ins turn over and saturate: panels of width 1/4
_INNER_WIDTH = 0.25
_RATIO = 1.05  # beyond: geometric panels out to 1e300
_REACH = 1e300
#: The spacing of the nodes, relative: ``1/64`` on ``[-60, 60]``, then about ``0.3 %`` of
#: ``|u|`` (16 nodes on panels ``5 %`` wide). A feature of ``sigma`` narrower than this
#: can pass between them.
RESOLUTION = (_INNER_WIDTH / 16, (_RATIO - 1.0) / 16)
_REL_TOL = 1e-9  # an identity holds to this, relative to the sizes in it,
_DENSITY = 1e-12  # times _REL_TOL: the error of sigma^(m+1) allowed per unit width, of its sup
# and to 64 ulp of the function's largest value on [-60, 60]: the rounding of a derivative
# computed by cancellation (1 - tanh(u)^2 is 4e-15 at u = 17, to within 2e-16)
_ROUNDING = 64 * EPS
_MAX_HALVINGS = 64
_MAX_REFINED = 64  # failing panels located by halving; more fail: not a derivative at all


def panel_breaks(kinks: Sequence[float] = ()) -> np.ndarray:
    """The ends of the panels: ``[-1e300, 1e300]`` cut at every kink.

    Width ``1/4`` on ``[-60, 60]``, each ``5 %`` wider than the one before beyond, and
    the kinks added as ends.

    Parameters
    ----------
    kinks : sequence of float
        Finite, ``|c| <= 1e300``.

    Returns
    -------
    ndarray
        Sorted, distinct, symmetric about 0 but for the kinks.

    Examples
    --------
    >>> from slr_theory.identities import panel_breaks
    >>> b = panel_breaks((0.1,))
    >>> float(b[0]), float(b[-1]), 0.1 in b
    (-1e+300, 1e+300, True)
    """
    inner = np.arange(0.0, _INNER + 1e-9, _INNER_WIDTH)
    count = int(np.ceil(np.log(_REACH / _INNER) / np.log(_RATIO)))
    outer = _INNER * _RATIO ** np.arange(1, count)
    half = np.concatenate([inner, outer[outer < _REACH], [_REACH]])
    return np.unique(np.concatenate([-half, half, np.asarray(kinks, dtype=np.float64)]))


@dataclass(frozen=True)
class SigmaFacts:
    """What the identities established of a ``sigma``, and on how much.

    Attributes
    ----------
    odd : bool
        ``sigma(-u) = -sigma(u)`` to ``1e-14`` (relative to ``max(1, |sigma|)``) at every
        node and panel end and their mirrors.
    increasing : bool
        ``sigma' >= 0`` at every node and panel end and ``> 0`` somewhere.
    bound : float
        ``max |sigma|`` over the nodes, the ends and the located extremes.
    sign : int
        ``1`` if ``sigma >= 0`` there, ``-1`` if ``sigma <= 0``, else 0.
    vanishes : tuple of bool
        Whether ``|sigma| < 1e-20`` at every node beyond ``-60`` (``+60``).
    panels, nodes : int
        The partition's panels (after halving) and the points evaluated.
    """

    odd: bool
    increasing: bool
    bound: float
    sign: int
    vanishes: tuple
    panels: int
    nodes: int

    @property
    def how(self) -> str:
        """How these facts were established, for a sentence."""
        return (
            f"integral identities on {self.panels:,} panels of |u| <= 1e300 "
            f"({self.nodes:,} points; features narrower than {RESOLUTION[0]:g} on "
            f"[-60, 60], {RESOLUTION[1]:.1%} of |u| beyond, are not resolved)"
        )


def _call(fn: Callable, u: np.ndarray) -> np.ndarray:
    """``fn`` on a private copy of `u`, as float64 of `u`'s shape (NaN where not so)."""
    with np.errstate(all="ignore"):
        v = np.asarray(fn(np.array(u, dtype=np.float64, copy=True)), dtype=np.float64)
    if v.shape != u.shape:
        v = np.broadcast_to(v, u.shape) if v.ndim == 0 else np.full(u.shape, np.nan)
    return np.array(v, dtype=np.float64)


def _inward(a: np.ndarray, b: np.ndarray, kinks: np.ndarray) -> tuple:
    """A panel's ends, moved one float inwards where they are kinks (the one-sided values)."""
    a_in = np.where(np.isin(a, kinks), np.nextafter(a, np.inf), a)
    b_in = np.where(np.isin(b, kinks), np.nextafter(b, -np.inf), b)
    return a_in, b_in


def _nodes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    mid, half = 0.5 * (a + b), 0.5 * (b - a)
    return mid[:, None] + half[:, None] * _X


def _residual(
    F: Callable, f: Callable, a: np.ndarray, b: np.ndarray, kinks: np.ndarray, sup: float
):
    """``F(b) - F(a) - int_a^b f`` on each panel and the size it is measured against:
    the values in it, and ``1e-21 sup |f|`` times the width (``sech^2`` clipped at 50 is
    ``2e-43`` out to ``1e300``, harmless to every integral the risk takes, but it fails
    against its own size on the wide far panels; a jump of ``sigma`` by ``1e-9`` of its
    size is still seen out to ``|u| = 1e13``, and by ``0.5`` out to ``1e21``)."""
    a_in, b_in = _inward(a, b, kinks)
    return _measured(_call(F, a_in), _call(F, b_in), _call(f, _nodes(a, b)), a, b, sup)


def _measured(fa, fb, vals, a, b, sup: float):
    """:func:`_residual` from the values: ``F`` at the ends, ``f`` at the nodes."""
    half = 0.5 * (b - a)
    integral = half * (vals @ _W)
    mass = half * (np.abs(vals) @ _W)
    scale = np.abs(fa) + np.abs(fb) + mass + _DENSITY * sup * (b - a)
    with np.errstate(all="ignore"):
        r = fb - fa - integral
    return r, scale, fa, fb, integral


def _check_identity(
    name: str,
    labels: tuple,
    F: Callable,
    f: Callable,
    breaks: np.ndarray,
    kinks: np.ndarray,
    sup: float,
    floor: float,
    first: tuple,
) -> int:
    """Refuse unless ``F(b) - F(a) = int f`` on every panel; the panels it took.

    A failing panel is halved, each half keeping its parent's tolerance: a jump keeps its
    residual in the half that holds it, down to a panel a few floats wide; a quadrature
    error (a steep but smooth ``f``, or a jump of ``f`` itself, a kink of ``F``) shrinks
    with the width, and passes. `first` holds ``F`` at the partition's ends and ``f`` at
    its nodes, already evaluated.
    """
    a, b = breaks[:-1], breaks[1:]
    r, scale, *_ = _measured(*first, a, b, sup)
    tol = _REL_TOL * scale + floor
    bad = ~(np.abs(r) <= tol)
    if not np.any(bad):
        return a.size
    low, high = labels
    idx = np.flatnonzero(bad)
    if idx.size > _MAX_REFINED:
        i = int(idx[np.argmax(np.abs(r[idx]) / scale[idx])])
        raise ValueError(
            f"`{high}` of nonlinearity {name!r} is not the derivative of `{low}`: on "
            f"{idx.size:,} panels {low}(b) - {low}(a) differs from the integral of {high} "
            f"over [a, b], most on [{float(a[i])!r}, {float(b[i])!r}] (by {r[i]:.3g})."
        )
    lo, hi, tol = a[idx], b[idx], tol[idx]
    extra = 0
    for _ in range(_MAX_HALVINGS):
        mid = 0.5 * (lo + hi)
        wide = (mid > lo) & (mid < hi) & (hi - lo > 64 * EPS * np.maximum(1.0, np.abs(mid)))
        if not np.any(wide):
            break
        lo2 = np.concatenate([lo[wide], mid[wide]])
        hi2 = np.concatenate([mid[wide], hi[wide]])
        tol2 = np.concatenate([tol[wide], tol[wide]])
        r2, *_ = _residual(F, f, lo2, hi2, kinks, sup)
        extra += lo2.size
        keep = ~(np.abs(r2) <= tol2)
        lo = np.concatenate([lo[~wide], lo2[keep]])
        hi = np.concatenate([hi[~wide], hi2[keep]])
        tol = np.concatenate([tol[~wide], tol2[keep]])
        if lo.size == 0:
            return a.size + extra
        if lo.size > 4 * _MAX_REFINED:
            break
    rr, _, fa, fb, integral = _residual(F, f, lo, hi, kinks, sup)
    i = int(np.argmax(np.abs(rr) / tol))
    where = f"[{float(lo[i])!r}, {float(hi[i])!r}]"
    narrow = hi - lo <= 128 * EPS * np.maximum(1.0, np.abs(0.5 * (lo + hi)))
    if not np.all(narrow):  # the failures spread instead of closing on a point
        raise ValueError(
            f"`{high}` of nonlinearity {name!r} is not the derivative of `{low}`: "
            f"{low}(b) - {low}(a) = {fb[i] - fa[i]:.6g} on {where}, the integral of {high} "
            f"{integral[i]:.6g}, and halving the panel does not close the difference."
        )
    if low == "f":
        raise ValueError(
            f"nonlinearity {name!r} is not continuous: `f` jumps by {rr[i]:.6g} in {where} "
            f"(f(b) - f(a) = {fb[i] - fa[i]:.6g}, the integral of df = {integral[i]:.6g}); "
            "a jump of sigma is not in the model."
        )
    raise ValueError(
        f"`{low}` of nonlinearity {name!r} jumps by {rr[i]:.6g} in {where} where no kink "
        f"is declared ({low}(b) - {low}(a) = {fb[i] - fa[i]:.6g}, the integral of {high} = "
        f"{integral[i]:.6g}): declare it in `kinks`, or give the right `{high}`."
    )


def _extremes(f: Callable, df: Callable, u: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``sigma`` at the zeros of ``sigma'`` between consecutive points `u` (sorted) where
    `d` changes sign, located by bisection."""
    flip = np.flatnonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)
    if flip.size == 0:
        return np.empty(0)
    lo, hi, dlo = u[flip], u[flip + 1], d[flip]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        dm = _call(df, mid)
        same = np.sign(dm) == np.sign(dlo)
        lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
    return _call(f, np.concatenate([lo, hi]))


def establish(
    name: str, functions: Sequence[Callable], labels: Sequence[str], kinks: Sequence[float] = ()
) -> SigmaFacts:
    """Check the chain of derivatives by integral identities, and establish the properties.

    Parameters
    ----------
    name : str
        The nonlinearity's name, for messages.
    functions : sequence of callable
        ``sigma, sigma', sigma'', ...`` (at least two), vectorised.
    labels : sequence of str
        Their names in messages (``"f", "df", "d2f", ...``).
    kinks : sequence of float
        Where a derivative may jump (``sigma`` itself must not).

    Returns
    -------
    SigmaFacts

    Raises
    ------
    ValueError
        Where a function is not finite at a node, ``sigma`` jumps, a derivative jumps
        where no kink is declared, or one is not the derivative of the one before.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.identities import establish
    >>> sech2 = lambda u: 1 / np.cosh(np.clip(u, -300, 300)) ** 2
    >>> facts = establish("tanh", [np.tanh, sech2], ["f", "df"])
    >>> facts.odd, facts.increasing, facts.bound
    (True, True, 1.0)
    >>> step = lambda u: np.tanh(u) + 0.5 * (u > 0.0025)
    >>> establish("jump", [step, sech2], ["f", "df"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: nonlinearity 'jump' is not continuous: `f` jumps by 0.5 in [...
    """
    kinks = np.asarray(sorted(kinks), dtype=np.float64)
    breaks = panel_breaks(kinks)
    a, b = breaks[:-1], breaks[1:]
    x = _nodes(a, b)
    a_in, b_in = _inward(a, b, kinks)
    points = np.concatenate([x.ravel(), a_in, b_in])
    values = []
    for fn, label in zip(functions, labels, strict=True):
        v = _call(fn, points)
        if not np.all(np.isfinite(v)):
            i = int(np.argmax(~np.isfinite(v)))
            raise ValueError(
                f"`{label}` of nonlinearity {name!r} must be finite wherever the risk "
                f"evaluates it (|u| <= 1e300); at u = {float(points[i])!r} it gives {float(v[i])!r}."
            )
        values.append(v)
    panels = a.size
    central = np.abs(points) <= _INNER
    n = x.size  # values[j]: at the nodes, then the panels' left and right ends
    for j in range(len(functions) - 1):
        ends, nodes = values[j][n:], values[j + 1][:n].reshape(x.shape)
        panels = max(
            panels,
            _check_identity(
                name,
                (labels[j], labels[j + 1]),
                functions[j],
                functions[j + 1],
                breaks,
                kinks,
                float(np.max(np.abs(values[j + 1]))),
                _ROUNDING * float(np.max(np.abs(values[j][central]))),
                (ends[: a.size], ends[a.size :], nodes),
            ),
        )
    f, d = values[0], values[1]
    mirror = _call(functions[0], -points)
    odd = bool(np.all(np.abs(f + mirror) <= 1e-14 * np.maximum(1.0, np.abs(f))))
    order = np.argsort(points, kind="stable")
    ext = _extremes(functions[0], functions[1], points[order], d[order])
    every = np.concatenate([f, ext])
    tiny = np.abs(f) < 1e-20
    return SigmaFacts(
        odd=odd,
        increasing=bool(np.all(d >= 0) and np.any(d > 0)),
        bound=float(np.max(np.abs(every))),
        sign=1 if np.all(every >= 0) else -1 if np.all(every <= 0) else 0,
        vanishes=(bool(np.all(tiny[points <= -60.0])), bool(np.all(tiny[points >= 60.0]))),
        panels=panels,
        nodes=points.size + mirror.size,
    )
