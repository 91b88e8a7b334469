"""The Gaussian moments of a nonlinearity that the risk's table needs, by quadrature (kinks as point masses), checked against a model's closed-form hooks, and interpolated in t for long batches."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..chebyshev import Pieces, build_pieces
from ..validate import as_array, positive_real
from .builtin import BUILTIN_NONLINEARITIES, nonlinearity_of, resolve_nonlinearity
from .function import HOOK_CHECKS, Nonlinearity
from .rules import (
    GH,
    MAX_CENTRE,
    MAX_SCALE,
    MODE_REACH,
    hermite_e,
    hermite_rule,
    hermite_size,
    mode,
    quadrature_rule,
    square_derivatives,
    square_mode,
)

__all__ = ["MOMENT_NAMES", "gaussian_moments", "moments"]


#: What :func:`gaussian_moments` returns for each order (0: the risk; 1: + gradient; 2: + Hessian).
MOMENT_NAMES = {
    0: ("E0", "E1", "E2", "Z0", "Z1", "Z2", "tau2", "d2tau", "d1sq"),
    1: ("E3", "Z3", "d1tau", "d3tau2"),
    2: ("E4", "Z4", "d4tau2"),
}


#: The keys a ``closed_moments`` hook may leave out: from ``Z_j - 2 s E_j``, the same
#: derivative of ``E tau^2`` with the cancellation the key exists to avoid.
OPTIONAL_HOOK_KEYS = ("d3tau2", "d4tau2")


def gaussian_moments(sigma: Nonlinearity | str, t, g: float, order: int = 0) -> dict:
    r"""Every Gaussian expectation of ``sigma`` the risk needs, at points ``t``, by quadrature.

    With ``U = t + gZ``, ``Z ~ N(0, 1)``, ``s = sgn t`` (``+1`` at 0) and
    ``tau = 1 - s sigma(U)``:

    =========  ====================================  =====
    key        expectation                           order
    =========  ====================================  =====
    ``Ej``     ``E sigma^(j)(U)``                    ``j - 2`` (``j <= 2``: 0)
    ``Zj``     ``d^j/dt^j E sigma(U)^2``             same
    ``tau2``   ``E tau^2``                           0
    ``d2tau``  ``E sigma''(U) tau``                  0
    ``d1sq``   ``E sigma'(U)^2``                     0
    ``d1tau``  ``E sigma'(U) tau``                   1
    ``d3tau2`` ``d^3/dt^3 E tau^2``                  1
    ``d4tau2`` ``d^4/dt^4 E tau^2``                  2
    =========  ====================================  =====

    The last six keep relative precision where ``sigma`` saturates (``tau`` from
    :attr:`Nonlinearity.complement`), which the risk near the optimum and off M beside
    the edge ``nu = sgn t`` needs: ``d^j/dt^j E tau^2`` is the expectation of
    ``(tau^2)^(j) = sum_k C(j, k) tau^(k) tau^(j-k)``, ``tau^(k) = -s sigma^(k)``, a sum of
    products of small factors there (``Z_j - 2 s E_j``, the same number, is a
    difference of two numbers of order ``E sigma^(j)``).

    Parameters
    ----------
    sigma : Nonlinearity or str
        A :class:`Nonlinearity` or a built-in's name.
    t : array_like
        Centres (any shape), ``|t| <= MAX_CENTRE`` (``1e300``: the nonlinearities'
        arguments ``t + g z`` and their doubles stay finite).
    g : float
        Scale, ``0 < g <= MAX_SCALE`` (``1e6``).
    order : {0, 1, 2}
        The keys of orders ``<= order`` are returned.

    Returns
    -------
    dict of str to ndarray
        Each of `t`'s shape.

    Examples
    --------
    >>> from scipy.special import erf
    >>> from slr_theory.nonlinearity import gaussian_moments
    >>> m = gaussian_moments("erf", [0.3, 2.0], 0.5)
    >>> bool(abs(m["E0"][1] - erf(2.0 / 1.5**0.5)) < 1e-15)
    True
    """
    sigma = nonlinearity_of(resolve_nonlinearity(sigma, "sigma"))
    t = as_array(t, "t", allow_nan=False)
    if not np.all(np.isfinite(t)):
        raise ValueError(f"`t` must be finite, got {t[~np.isfinite(t)].ravel()[0]!r}.")
    if t.size and np.max(np.abs(t)) > MAX_CENTRE:
        bad = t[np.abs(t) > MAX_CENTRE].ravel()[0]
        raise ValueError(f"`t` must lie in [-{MAX_CENTRE:g}, {MAX_CENTRE:g}], got {bad!r}.")
    g = positive_real(g, "g", upper=MAX_SCALE)
    # an integer, not a bool, a float or an array (whose `in` is ambiguous)
    if isinstance(order, bool | np.bool_) or not isinstance(order, int | np.integer):
        raise ValueError(f"`order` must be the integer 0, 1 or 2, got {order!r}.")
    if order not in (0, 1, 2):
        raise ValueError(f"`order` must be 0, 1 or 2, got {order!r}.")
    flat = moments(sigma, t.reshape(-1), g, int(order))
    for key, v in flat.items():  # an unbounded sigma's moments (E sigma^2 = t^2 + ...) overflow
        if not np.all(np.isfinite(v)):
            bad = t.reshape(-1)[~np.isfinite(v)][0]
            raise ValueError(
                f"`t`: the moment {key} of nonlinearity {sigma.name!r} overflows at "
                f"t = {bad!r} (sigma is unbounded); give smaller centres."
            )
    return {k: v.reshape(t.shape) for k, v in flat.items()}


def moments(
    sigma: Nonlinearity,
    t: np.ndarray,
    g: float,
    order: int,
    span: float | None = None,
    *,
    least: int | None = None,
    absolute: dict | None = None,
) -> dict:
    """:func:`gaussian_moments` on validated input: `t` 1-D float64 (the engine's door).

    Parameters
    ----------
    sigma : Nonlinearity
    t : ndarray, shape ``(n,)``
        Finite (unchecked).
    g : float
        Positive (unchecked).
    order : {0, 1, 2}
    span : float, optional
        The caller's range ``|t| <= span`` (the engine's ``a = lambda sqrt(d/2)``). With
        it, a batch of at least :data:`INTERPOLATE_FROM` points is served by a piecewise
        Chebyshev interpolant of the quadrature over ``[-span, span]``, built once per
        ``(sigma, g, span, order)`` and checked against the quadrature on every piece
        (:func:`moment_interpolant`); points beyond `span` are integrated directly.
    least : int, optional
        The smallest batch served by the interpolant (default
        :data:`INTERPOLATE_FROM`; 0 for a loop that asks again and again at one
        temperature, such as the trajectories).
    absolute : dict, optional
        Receives ``E |integrand|`` of each moment (by quadrature: the scale of its
        rounding error); the moments are then integrated, never interpolated.

    Returns
    -------
    dict of str to ndarray, shape ``(n,)``
    """
    if sigma.closed_moments is not None:  # the hook: closed forms, checked when built
        out = _hook_moments(sigma, t, g, order)
        if absolute is not None:
            absolute.update({k: np.abs(v) for k, v in out.items()})
        return out
    if absolute is not None:
        return _quadrature(sigma, t, g, order, absolute)
    if span is not None and t.size >= (INTERPOLATE_FROM if least is None else least):
        table = moment_interpolant(sigma, g, span, order)
        inside = np.abs(t) <= span
        if np.all(inside):
            return table(t)
        out = {k: np.empty(t.size) for k in table.names}
        for part, values in (
            (inside, table(t[inside])),
            (~inside, _quadrature(sigma, t[~inside], g, order)),
        ):
            for k, v in values.items():
                out[k][part] = v
        return out
    return _quadrature(sigma, t, g, order)


def _quadrature(
    sigma: Nonlinearity, t: np.ndarray, g: float, order: int, absolute: dict | None = None
) -> dict:
    """The moments at each `t` by quadrature (:func:`moments` without a span).

    With `absolute` (a dict), it also receives ``E |integrand|`` of each moment: the scale
    of the quadrature's rounding error, which the interpolant's check uses.
    """
    if t.size == 0:
        return {k: np.empty(0) for o in range(order + 1) for k in MOMENT_NAMES[o]}
    s = np.where(t >= 0, 1.0, -1.0)
    mu = mode(sigma, t, np.full_like(t, g), s)
    reach = square_mode(sigma, t, g)
    # the rule shifted to mu must also reach sigma^2's mode: N >= 16 |reach - mu| too
    n = _hermite_nodes(hermite_size(sigma, g), np.maximum(np.abs(mu), np.abs(reach - mu)))
    if n is None or np.all(n == n.flat[0]):
        rule = None if n is None or n.flat[0] == 0 else int(n.flat[0])
        return _integrate(sigma, t, g, order, s, mu, reach, rule, absolute)
    out = {k: np.empty(t.size) for o in range(order + 1) for k in MOMENT_NAMES[o]}
    parts = {} if absolute is None else {k: np.empty(t.size) for k in out}
    for rule in np.unique(n):  # each point by the cheapest rule exact for it
        at = n == rule
        size: dict | None = None if absolute is None else {}
        got = _integrate(sigma, t[at], g, order, s[at], mu[at], reach[at], int(rule) or None, size)
        for k, v in got.items():
            out[k][at] = v
            if size is not None:
                parts[k][at] = size[k]
    if absolute is not None:
        absolute.update(parts)
    return out


def _hermite_nodes(least: int | None, mu: np.ndarray) -> np.ndarray | None:
    """Gauss–Hermite nodes for each point (0: the panels), or None when no point takes them.

    The rule shifted by ``mu`` integrates ``h(mu + y) e^{-mu y}`` against ``phi(y)``; with
    ``N`` nodes it is exact to the last bits for ``|mu| <= N / 16`` (checked against the
    panels for the built-ins, :func:`hermite_size` nodes or more). `least` is what the
    scale asks (:func:`hermite_size`).
    """
    if least is None:
        return None
    sizes = np.array([k for k in sorted(GH) if k >= least])
    need = np.searchsorted(sizes, 16.0 * np.abs(mu))  # the first size with N >= 16 |mu|
    return np.where(need < sizes.size, sizes[np.minimum(need, sizes.size - 1)], 0)


def _integrate(
    sigma: Nonlinearity,
    t: np.ndarray,
    g: float,
    order: int,
    s: np.ndarray,
    mu: np.ndarray,
    reach: np.ndarray,
    n: int | None,
    absolute: dict | None,
) -> dict:
    """The moments at `t` by one rule: `n` Gauss–Hermite nodes, or the panels (None).

    An unbounded ``sigma`` (ReLU) overflows ``sigma^2`` at centres beyond ``1e154``:
    quietly, as ``inf``, which :func:`gaussian_moments` refuses by name.
    """
    quiet = sigma.bound > 1e100
    with np.errstate(over="ignore", invalid="ignore") if quiet else contextlib.nullcontext():
        z, w = (
            quadrature_rule(t, g, s, mu, reach, sigma.kinks) if n is None else hermite_rule(n, mu)
        )
        u = t[:, None] + g * z
        # kinks closer than g: their masses cancel (hard tanh at g = 40: Z_3 = 5e-9 from
        # masses of 2e-2), so every derivative past sigma' comes from Stein's identity on
        # sigma', a bounded integrand the panels (broken at the kinks) follow
        spread = len(sigma.kinks) > 1 and g > min(np.diff(sigma.kinks))
        top = 1 if spread else min(sigma.order, 2 + order)
        d = [sigma.derivative(j)(u) for j in range(top + 1)]
        out: dict = {}

        def expect(key, values):
            out[key] = np.einsum("nk,nk->n", values, w)
            if absolute is not None:
                absolute[key] = np.einsum("nk,nk->n", np.abs(values), w)

        sq = square_derivatives(d)
        for j in range(3 + order):
            if j <= top:
                expect(f"E{j}", d[j])
                expect(f"Z{j}", sq[j])
            else:  # Stein from the highest derivative available
                he = hermite_e(j - top, z) / g ** (j - top)
                expect(f"E{j}", d[top] * he)
                expect(f"Z{j}", sq[top] * he)
        tau = sigma.tail(u, s[:, None])
        expect("tau2", tau * tau)
        if spread:  # E sigma'' tau = E[(sigma' tau)'] + s E sigma'^2, as tau' = -s sigma'
            expect("d2tau", d[1] * tau * (z / g) + s[:, None] * d[1] * d[1])
        else:
            expect("d2tau", d[2] * tau)
        expect("d1sq", d[1] * d[1])
        if order >= 1:
            expect("d1tau", d[1] * tau)
        for j in range(3, 3 + order):  # d^j/dt^j E tau^2, Stein beyond the derivatives given
            m = min(j, top)
            sq = _tau_square_derivative(m, tau, d, s[:, None])
            if m < j:
                sq = sq * (hermite_e(j - m, z) / g ** (j - m))
            expect(f"d{j}tau2", sq)
        if sigma.kinks and not spread:
            _add_kink_masses(sigma, t, g, order, s, out, absolute)
        return out


def _add_kink_masses(
    sigma: Nonlinearity,
    t: np.ndarray,
    g: float,
    order: int,
    s: np.ndarray,
    out: dict,
    absolute: dict | None,
) -> None:
    """Add the Dirac masses at the kinks to the moments the panels integrated (in place).

    A jump ``J`` of ``F^(m)`` at ``c`` puts ``J delta^(j-1-m)(u - c)`` into ``F^(j)``, whose
    expectation is ``J He_{j-1-m}(z) phi(z) / g^(j-m)``, ``z = (c - t)/g``. ``F`` is
    ``sigma`` (``E_j``), ``sigma^2`` (``Z_j``) and ``tau^2`` (the ``d{j}tau2``); in
    ``E sigma'' tau`` the mass is ``J_1 tau(c) phi(z) / g`` (``tau`` is continuous).
    """
    top = 2 + order
    for c, (below, above) in zip(sigma.kinks, sigma.sides, strict=True):
        # beyond |z| = 40, phi(z) = 0 in double: clipped, so that z^2 and He_p(z) stay finite
        z = np.clip((c - t) / g, -MODE_REACH, MODE_REACH)
        with np.errstate(under="ignore"):
            phi = np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
        he = [hermite_e(p, z) for p in range(top)]
        lo, hi = [np.full(t.shape, v) for v in below], [np.full(t.shape, v) for v in above]
        chains = {
            "E": (hi, lo),
            "Z": (square_derivatives(hi), square_derivatives(lo)),
        }
        tau_lo, tau_hi = 1.0 - s * lo[0], 1.0 - s * hi[0]
        taus = (
            [None, *(_tau_square_derivative(j, tau_hi, hi, s) for j in range(1, top))],
            [None, *(_tau_square_derivative(j, tau_lo, lo, s) for j in range(1, top))],
        )

        def mass(key, ups, downs, j, phi=phi, he=he):
            add = np.zeros_like(t)
            size = np.zeros_like(t)
            for m in range(1, j):  # F is continuous (checked when built): no m = 0 mass
                term = (ups[m] - downs[m]) * he[j - 1 - m] * phi / g ** (j - m)
                add, size = add + term, size + np.abs(term)
            out[key] = out[key] + add
            if absolute is not None:
                absolute[key] = absolute[key] + size

        for j in range(2, top + 1):
            for f, (ups, downs) in chains.items():
                mass(f"{f}{j}", ups, downs, j)
        for j in range(3, top + 1):
            mass(f"d{j}tau2", *taus, j)
        jump = (hi[1] - lo[1]) * tau_lo * phi / g
        out["d2tau"] = out["d2tau"] + jump
        if absolute is not None:
            absolute["d2tau"] = absolute["d2tau"] + np.abs(jump)


def _tau_square_derivative(j: int, tau: np.ndarray, d: list, s: np.ndarray) -> np.ndarray:
    """``(tau^2)^(j) = sum_k C(j, k) tau^(k) tau^(j-k)`` with ``tau^(k) = -s sigma^(k)``, ``k >= 1``.

    Every term a product of factors that are small where ``sigma`` saturates (``tau``
    and the derivatives), so the sum keeps the relative precision of its terms."""
    parts = [tau] + [-s * d[k] for k in range(1, j + 1)]
    out = 2.0 * tau * parts[j]
    for k in range(1, j // 2 + (j % 2)):
        out = out + (2.0 * math.comb(j, k)) * parts[k] * parts[j - k]
    if j % 2 == 0:
        out = out + math.comb(j, j // 2) * parts[j // 2] * parts[j // 2]
    return out


#: The smallest batch :func:`moments` serves from an interpolant (smaller ones are
#: integrated directly: building costs about 2000 quadrature points).
INTERPOLATE_FROM = 4096


_INTERP_TOL = 1e-13  # of E |integrand| (the quadrature's own error scale), at the probes


_MAX_DEPTH = 8  # halvings of a piece before it is left to the quadrature


@dataclass(frozen=True)
class MomentInterpolant:
    """The moments of one ``(sigma, g, order)`` on ``|t| <= span``, piecewise Chebyshev.

    Built by :func:`moment_interpolant`. Each piece (pieces meet at ``t = 0``, where the
    tail's sign changes) holds 20 Chebyshev coefficients per moment; a piece is split
    until, between its nodes, each moment agrees with the quadrature to ``1e-13`` of
    ``E |integrand|``: relative precision for a moment of one sign (``E tau^2`` in the
    tail), and the quadrature's own error scale near a zero of one that changes sign.

    Attributes
    ----------
    names : tuple of str
        The moments, as :func:`gaussian_moments` names them.
    pieces : slr_theory.chebyshev.Pieces
        The series of each moment on each piece (``breaks`` from ``-span`` to ``span``);
        its ``direct`` pieces, where the check failed after 8 halvings, are integrated.
    sigma, g, order
        What the interpolant is of (for the direct pieces).
    """

    names: tuple
    pieces: Pieces
    sigma: Nonlinearity
    g: float
    order: int

    @property
    def breaks(self) -> np.ndarray:
        """The pieces' ends, increasing, from ``-span`` to ``span``."""
        return self.pieces.breaks

    def __call__(self, t: np.ndarray) -> dict:
        """The moments at ``t`` ``(n,)`` inside ``[-span, span]`` (unchecked)."""
        out = np.empty((len(self.names), t.size))
        if self.pieces.any_direct:  # the unchecked pieces' points are integrated
            slow = self.pieces.direct[self.pieces.piece(t)]
            if np.any(slow):
                m = _quadrature(self.sigma, t[slow], self.g, self.order)
                out[:, slow] = np.stack([m[k] for k in self.names])
                out[:, ~slow] = self.pieces.series(t[~slow])
                return dict(zip(self.names, out, strict=True))
        self.pieces.series(t, out=out)
        return dict(zip(self.names, out, strict=True))


@lru_cache(maxsize=128)
def moment_interpolant(
    sigma: Nonlinearity,
    g: float,
    span: float,
    order: int,
    *,
    tol: float = _INTERP_TOL,
    depth: int = _MAX_DEPTH,
) -> MomentInterpolant:
    """The moments of ``sigma`` at scale `g` on ``|t| <= span``, as a checked interpolant.

    Pieces start at width ``max(1, g) / 2`` (the moments vary on the scale of ``sigma``
    or of the smoothing, whichever is wider) and are halved, all failing pieces at once
    in one quadrature call, until each moment agrees with the quadrature between the
    nodes to `tol` of ``E |integrand|``. A piece still failing after `depth` halvings is
    marked ``direct``: its points are integrated (never seen with the built-ins on
    :data:`slr_theory.params.DOMAIN` below ``lambda = 30``; the moments are entire
    functions of ``t``). Built once per argument tuple (cached).

    Parameters
    ----------
    sigma : Nonlinearity
    g : float
        Positive (unchecked).
    span : float
        Positive (unchecked).
    order : {0, 1, 2}
    tol : float, optional
        The check's tolerance, relative to ``E |integrand|`` (``1e-13``).
    depth : int, optional
        Halvings before a piece is left to the quadrature (8).

    Returns
    -------
    MomentInterpolant

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.nonlinearity import gaussian_moments, moment_interpolant, nonlinearity_of
    >>> f = moment_interpolant(nonlinearity_of("tanh"), 0.64, 12.7, 1)
    >>> t = np.linspace(-12.7, 12.7, 6)  # away from 0, where E0 vanishes
    >>> exact = gaussian_moments("tanh", t, 0.64, 1)
    >>> bool(all(np.allclose(f(t)[k], exact[k], rtol=1e-13, atol=0) for k in ("E0", "tau2")))
    True
    """
    names = tuple(k for o in range(order + 1) for k in MOMENT_NAMES[o])
    n0 = max(1, int(np.ceil(span / (0.5 * max(1.0, g)))))
    edges = np.linspace(0.0, span, n0 + 1)
    todo = [
        (lo, hi)
        for side in (-1.0, 1.0)
        for lo, hi in zip(side * edges[:-1], side * edges[1:], strict=True)
    ]
    todo = [(min(a, b), max(a, b)) for a, b in todo]

    def evaluate(t):
        size: dict = {}
        m = _quadrature(sigma, t, g, order, size)
        return np.stack([m[nm] for nm in names]), np.stack([size[nm] for nm in names])

    pieces = build_pieces(evaluate, todo, tol=tol, depth=depth)
    return MomentInterpolant(names, pieces, sigma, g, order)


#: Where a ``closed_moments`` hook is checked against the quadrature when built.
_CLOSED_CHECK_T = np.array([-3.0, -0.5, 0.0, 0.7, 4.0])


_CLOSED_CHECK_G = (0.3, 2.0)


def _hook_moments(sigma: Nonlinearity, t: np.ndarray, g: float, order: int) -> dict:
    """A ``closed_moments`` hook's moments, every key of `order` present.

    A hook written when ``d2tau`` and ``d1sq`` belonged to order 2 gives them at order 2
    (where it was checked); one without the keys of :data:`OPTIONAL_HOOK_KEYS` has them
    from ``Z_j - 2 s E_j`` (exact algebra, cancelling where ``sigma`` saturates).
    """
    names = [k for o in range(order + 1) for k in MOMENT_NAMES[o]]
    out = {
        k: np.asarray(v, dtype=np.float64) for k, v in sigma.closed_moments(t, g, order).items()
    }
    if any(k not in out for k in names if k not in OPTIONAL_HOOK_KEYS) and order < 2:
        full = sigma.closed_moments(t, g, 2)
        for k in names:
            if k not in out and k in full:
                out[k] = np.asarray(full[k], dtype=np.float64)
    s = np.where(t >= 0, 1.0, -1.0)
    for j in range(3, 3 + order):
        key = f"d{j}tau2"
        if key not in out:
            out[key] = out[f"Z{j}"] - 2.0 * s * out[f"E{j}"]
    return {k: out[k] for k in names}


def check_closed_moments(sigma: Nonlinearity) -> None:
    """Refuse a ``closed_moments`` hook that disagrees with the quadrature (``1e-10`` of
    each moment's ``E |integrand|``) at a few centres and scales, or lacks a key."""
    for g in _CLOSED_CHECK_G:
        scale: dict = {}
        want = _quadrature(sigma, _CLOSED_CHECK_T, g, 2, scale)
        with np.errstate(all="ignore"):
            got = sigma.closed_moments(_CLOSED_CHECK_T.copy(), g, 2)
        for key, ref in want.items():
            if key in OPTIONAL_HOOK_KEYS and key not in got:
                continue
            if key not in got:
                raise ValueError(
                    f"`closed_moments` of nonlinearity {sigma.name!r} must give {key!r} "
                    f"(every key of gaussian_moments), got keys {sorted(got)}."
                )
            value = np.asarray(got[key], dtype=np.float64)
            bad = ~(np.abs(value - ref) <= 1e-10 * (scale[key] + 1e-300))
            if np.any(bad):
                i = int(np.argmax(bad))
                raise ValueError(
                    f"`closed_moments` of nonlinearity {sigma.name!r} disagrees with the "
                    f"quadrature: {key} at t = {_CLOSED_CHECK_T[i]!r}, g = {g!r} gives "
                    f"{float(value[i])!r}, the quadrature {float(ref[i])!r}."
                )


def _identity_moments(t: np.ndarray, g: float, order: int) -> dict:
    """The moments of ``sigma(u) = u`` (linear attention): polynomials in ``t`` and ``g``
    (``inf`` where ``t^2`` overflows, beyond ``1e154``: :func:`gaussian_moments` refuses).
    Every key its own array (a caller may write into one)."""
    t = np.asarray(t, dtype=np.float64)
    s = np.where(t >= 0, 1.0, -1.0)
    with np.errstate(over="ignore"):
        out = {
            "E0": t.copy(),
            "E1": np.ones_like(t),
            "E2": np.zeros_like(t),
            "Z0": t * t + g * g,
            "Z1": 2.0 * t,
            "Z2": np.full_like(t, 2.0),
            "tau2": (1.0 - s * t) ** 2 + g * g,
            "d2tau": np.zeros_like(t),
            "d1sq": np.ones_like(t),
        }
    if order >= 1:
        out.update(E3=np.zeros_like(t), Z3=np.zeros_like(t), d1tau=1.0 - s * t)
        out["d3tau2"] = np.zeros_like(t)
    if order >= 2:
        out.update(E4=np.zeros_like(t), Z4=np.zeros_like(t), d4tau2=np.zeros_like(t))
    return out


# Linear attention: sigma unbounded, its Gaussian moments polynomials (a closed-form hook,
# checked against the quadrature like any user's; defined here, after the quadrature).
BUILTIN_NONLINEARITIES.add(
    "identity",
    lambda: Nonlinearity(
        "identity",
        lambda u: np.asarray(u, dtype=np.float64) * 1.0,
        np.ones_like,
        np.zeros_like,
        np.zeros_like,
        d4f=np.zeros_like,
        closed_moments=_identity_moments,
    ),
)


HOOK_CHECKS.append(check_closed_moments)  # every Nonlinearity with hooks is checked so
