"""Quadrature rules for Gaussian expectations of a nonlinearity: the integrand's mode, Gauss-Hermite and Gauss-Legendre rules, and the sups of the derivatives."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .function import CHECK_POINTS, Nonlinearity

__all__ = ["MAX_CENTRE", "MAX_SCALE", "UnboundedSigma", "derivative_sup", "moment_sups"]


_NODES = 16


_GL_X, _GL_W = np.polynomial.legendre.leggauss(_NODES)


_HALF_WINDOW = 9.5  # phi(9.5) / phi(0) = 2e-20: beyond it nothing reaches double precision


_MODE_STEPS = 20  # the mode to 40 / 2^20 = 4e-5, well inside the window's margin


#: How far the mode is searched: beyond ``|z| = 40``, ``phi(z) < 1e-348`` underflows, and so
#: does every integrand, whatever ``sigma`` does there.
MODE_REACH = 40.0


def mode(sigma: Nonlinearity, t: np.ndarray, g: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The mode of ``tau(t + gz)^2 phi(z)`` in ``z`` (on the side of 0 opposite ``s``), or 0.

    The log of the integrand has derivative ``F(z) = -2 g s sigma'(u) / tau(u) - z``,
    ``u = t + gz``: ``s F(0) <= 0`` for an increasing ``sigma``, and ``s F -> +inf`` as
    ``s z -> -inf``. Bisection between 0 and a point where ``s F > 0`` (found by doubling,
    at most out to :data:`MODE_REACH`).

    Where the integrand underflows at its mode (``tau`` below ``1e-154`` wherever ``phi``
    is representable: a saturated ``sigma``), its moments are 0 in double precision and
    the mode says nothing: 0 is returned, and the window is the Gaussian's own.
    """

    def sF(z):
        u = t + g * z
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            val = -2.0 * g * sigma.df(u) / sigma.tail(u, s) - s * z
        # sigma'/tau is >= 0; where both underflow (0/0) or tau does (x/0) it is huge, and
        # the mode lies further out: -inf, never +inf (which stopped the search at 0)
        return np.where(np.isfinite(val), val, -np.inf)

    far = -s * 1.0
    for _ in range(6):  # 1, 2, 4, ..., 32, then the reach
        short = sF(far) <= 0
        if not np.any(short):
            break
        far = np.where(short, np.clip(2.0 * far, -MODE_REACH, MODE_REACH), far)
    near = np.zeros_like(t)
    for _ in range(_MODE_STEPS):
        mid = 0.5 * (near + far)
        beyond = sF(mid) > 0
        far, near = np.where(beyond, mid, far), np.where(beyond, near, mid)
    mu = 0.5 * (near + far)
    with np.errstate(under="ignore", over="ignore"):  # an unbounded sigma: inf, a peak too
        peak = sigma.tail(t + g * mu, s) ** 2 * np.exp(-0.5 * mu * mu)
    return np.where(peak > 0.0, mu, 0.0)


def square_mode(sigma: Nonlinearity, t: np.ndarray, g: float) -> np.ndarray:
    """Where ``sigma(t + gz)^2 phi(z)`` peaks, for a ``sigma`` that vanishes in a tail; else 0.

    For an odd ``sigma`` the only integrand that is small in a tail is ``tau^2``
    (:func:`mode`). A ``sigma`` that tends to 0 (sigmoid's left tail,
    :attr:`Nonlinearity.vanishes`) makes ``sigma^2`` small there too, with its mass at
    ``z`` of order ``2 g`` towards the rest of ``sigma``: its mode, by bisection on the log
    derivative ``2 g d sigma'(u) / sigma(u) - y`` along ``z = d y`` (``d = +1`` from a
    vanishing left tail), ``0 <= y <= 40``. 0 where the peak underflows or ``sigma`` does
    not vanish on the side of ``t``.
    """
    out = np.zeros_like(t)
    for d, vanishing in zip((1.0, -1.0), sigma.vanishes, strict=True):
        side = (d * t < 0) if vanishing else np.zeros(t.shape, bool)
        if not np.any(side):
            continue
        ts = t[side]

        def G(y, ts=ts, d=d):
            u = ts + g * d * y
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                val = 2.0 * g * d * sigma.df(u) / sigma.f(u) - y
            return np.where(np.isfinite(val), val, np.inf)  # sigma underflows: further on

        near, far = np.zeros_like(ts), np.full_like(ts, MODE_REACH)
        for _ in range(_MODE_STEPS):
            mid = 0.5 * (near + far)
            beyond = G(mid) < 0
            far, near = np.where(beyond, mid, far), np.where(beyond, near, mid)
        y = 0.5 * (near + far)
        with np.errstate(under="ignore", over="ignore"):
            peak = sigma.f(ts + g * d * y) ** 2 * np.exp(-0.5 * y * y)
        out[side] = np.where(peak > 0.0, d * y, 0.0)
    return out


def quadrature_rule(t: np.ndarray, g: float, s: np.ndarray, mu: np.ndarray, reach=None, kinks=()):
    """Nodes ``z`` ``(n, N)`` and weights (``phi`` included) for the window of each ``t``.

    Panels of width at most 1 over the window, and panels graded geometrically around
    ``z0 = -t/g`` (where ``sigma`` turns over, within ``1/g``): breakpoints
    ``z0 +- (0.75/g) 2^k`` below 1, so a sharp ``sigma`` costs ``O(log g)`` panels.
    ``s = sgn t`` and ``mu`` the mode (:func:`mode`) come from the caller, and `reach`,
    the mode of ``sigma^2 phi`` where ``sigma`` vanishes (:func:`square_mode`; None: 0),
    which the window covers too. Panels also break at ``z = (c - t)/g`` for each of
    `kinks`, so that every panel's integrand is smooth.
    """
    reach = np.zeros_like(t) if reach is None else reach
    lo = np.minimum(np.minimum(mu, 0.0), reach) - _HALF_WINDOW
    hi = np.maximum(np.maximum(mu, 0.0), reach) + _HALF_WINDOW
    coarse = int(np.ceil(np.max(hi - lo)))
    cuts = [lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, coarse + 1)[None, :]]
    if g > 0.75:
        offsets = (0.75 / g) * 2.0 ** np.arange(int(np.ceil(np.log2(g / 0.75))))
        z0 = (-t / g)[:, None]
        graded = np.concatenate([z0, z0 - offsets[None, :], z0 + offsets[None, :]], axis=1)
        cuts.append(np.clip(graded, lo[:, None], hi[:, None]))
    if kinks:
        at = (np.asarray(kinks)[None, :] - t[:, None]) / g
        cuts.append(np.clip(at, lo[:, None], hi[:, None]))
    edges = np.sort(np.concatenate(cuts, axis=1), axis=1)
    a, w = edges[:, :-1], np.diff(edges, axis=1)  # (n, P): zero-width panels weigh nothing
    z = (a[:, :, None] + w[:, :, None] * (0.5 * (_GL_X + 1.0))).reshape(len(t), -1)
    weights = (w[:, :, None] * (0.5 * _GL_W)).reshape(len(t), -1)
    weights = weights * np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    return z, weights


#: The largest scale ``g`` :func:`gaussian_moments` takes: ``lambda gamma`` within
#: :data:`slr_theory.params.DOMAIN` (beyond, the panels around ``-t/g`` grow as ``log g``).
MAX_SCALE = 1e6


#: The largest ``|t|`` :func:`gaussian_moments` takes (beyond, ``2 (t + g z)`` overflows).
MAX_CENTRE = 1e300


GH = {n: np.polynomial.hermite_e.hermegauss(n) for n in (16, 24, 32, 48, 64)}


_SUP_GRID = np.linspace(-60.0, 60.0, 240_001)  # step 5e-4
_SUP_GRID.flags.writeable = False  # shared: a user's function gets a copy (_OwnCopy)


def _abs_hermite_mean(m: int) -> float:
    """``E |He_m(Z)|`` exactly: ``2 sum |He_{m-1}(r)| phi(r)`` over the roots ``r`` of ``He_m``
    (``-He_m phi`` is the derivative of ``He_{m-1} phi``, and ``He_m`` changes sign at each
    root)."""
    roots = np.polynomial.hermite_e.hermeroots([0] * m + [1])
    prev = np.polynomial.hermite_e.hermeval(roots, [0] * (m - 1) + [1])
    return float(2.0 * np.sum(np.abs(prev) * np.exp(-0.5 * roots**2)) / np.sqrt(2.0 * np.pi))


_E_ABS_HE = {m: _abs_hermite_mean(m) for m in range(1, 5)}  # E|He_m(Z)|


class UnboundedSigma(ValueError):
    """A ``sigma`` whose sups are not finite was asked for a bound that needs them (the
    certified Lipschitz bound): refused, never a false certificate.

    Attributes
    ----------
    args : tuple of str
        The message, naming ``sigma`` and how large its sups grow.
    """


def moment_sups(sigma: Nonlinearity, g: float) -> dict:
    """Bounds on ``|E_j|``, ``|Z_j|`` (``j <= 5``) over every ``t``: the sups of what they average.

    Sampled on a grid of step ``h = 5e-4`` over ``[-60, 60]`` (where the built-ins have
    turned monotone), each raised by ``h`` times its largest sampled slope (twice what a
    smooth function can rise between nodes), and at least the largest value at the far
    check points out to ``1e300`` (:data:`CHECK_POINTS`; arctan reaches only 0.9897 of its
    sup 1 inside ``[-60, 60]``); a derivative not provided is bounded through Stein's
    identity, ``|E h^(m)(t + gZ)| <= sup |h| E|He_m(Z)| / g^m``, and so is every one past
    ``sigma'`` of a ``sigma`` with kinks (its derivatives there hold Dirac masses).

    Parameters
    ----------
    sigma : Nonlinearity
    g : float
        Positive scale (unchecked).

    Returns
    -------
    dict of str to float
        Keys ``E0..E5``, ``Z0..Z5`` as in :func:`gaussian_moments` (``j = 5``, one past
        what the tables use, bounds the slopes of ``E_4``, ``Z_4``: ``dE_j/dt = E_{j+1}``).

    Raises
    ------
    UnboundedSigma
        If ``sigma`` or a derivative is unbounded (its sup passes ``1e100`` out to
        ``1e300``, as the identity's): its moments have no bound to certify.
    """
    e, z = _sampled_sups(sigma)
    worst = max(*e, *z)
    if not worst <= 1e100:
        raise UnboundedSigma(
            f"`sigma` {sigma.name!r} is unbounded (|sigma^(j)| or |(sigma^2)^(j)| reaches "
            f"{worst:.3g} for |u| <= 1e300): its Gaussian moments have no bound over every t, "
            "so nothing built on one (the certified Lipschitz bound) can be given."
        )
    top = 1 if sigma.kinks else sigma.order  # beyond sigma', Dirac masses at the kinks
    out = {}
    for j in range(6):
        if j <= top:
            out[f"E{j}"], out[f"Z{j}"] = e[j], z[j]
        else:
            m = j - top
            out[f"E{j}"] = e[top] * _E_ABS_HE[m] / g**m
            out[f"Z{j}"] = z[top] * _E_ABS_HE[m] / g**m
    return out


def derivative_sup(sigma: Nonlinearity, j: int) -> float:
    """``sup |sigma^(j)|`` as :func:`moment_sups` samples it (``inf`` where unbounded).

    Parameters
    ----------
    sigma : Nonlinearity
    j : int
        ``0 <= j <= sigma.order``.

    Returns
    -------
    float
        ``inf`` for ``j >= 2`` where ``sigma`` has kinks.

    Examples
    --------
    >>> from slr_theory.nonlinearity import derivative_sup, nonlinearity_of
    >>> round(derivative_sup(nonlinearity_of("tanh"), 1), 3)  # sech^2 peaks at 1, at 0
    1.0
    """
    if isinstance(j, bool) or not isinstance(j, int | np.integer) or not 0 <= j <= sigma.order:
        raise ValueError(f"`j` must be an integer in [0, {sigma.order}], got {j!r}.")
    if j >= 2 and sigma.kinks:  # a jump of sigma' makes sigma'' a Dirac mass there
        return math.inf
    return _sampled_sups(sigma)[0][int(j)]


@lru_cache(maxsize=32)
def _sampled_sups(sigma: Nonlinearity) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The sampled bounds of ``|sigma^(j)|`` and ``|(sigma^2)^(j)|``, ``j <= sigma.order``.

    They do not depend on ``g``; sampling them costs a 240 001-point grid per derivative,
    and the certified Lipschitz bound asks for them once per chunk of slabs.
    """
    u = _SUP_GRID
    d = [sigma.derivative(j)(u) for j in range(sigma.order + 1)]
    sq = square_derivatives(d)
    h = u[1] - u[0]
    far_u = CHECK_POINTS[np.abs(CHECK_POINTS) > 60.0]
    with np.errstate(over="ignore", invalid="ignore"):  # an unbounded sigma: inf, refused
        far = [sigma.derivative(j)(far_u) for j in range(sigma.order + 1)]
        far_sq = square_derivatives(far)

    # a derivative's jump at a kink is not a rise between nodes: those steps are left out
    smooth = np.ones(u.size - 1, dtype=bool)
    for c in sigma.kinks:
        smooth &= ~((u[:-1] <= c) & (c <= u[1:]))

    def bound(vals, beyond):
        slope = np.max(np.abs(np.diff(vals))[smooth]) / h
        return float(max(np.max(np.abs(vals)) + h * slope, np.max(np.abs(beyond))))

    return (
        tuple(bound(v, b) for v, b in zip(d, far, strict=True)),
        tuple(bound(v, b) for v, b in zip(sq, far_sq, strict=True)),
    )


def hermite_size(sigma: Nonlinearity, g: float) -> int | None:
    """Gauss–Hermite nodes enough at scale `g`, or None when the panels are needed.

    Around the mode, in ``y = z - mu``, the integrand is ``h(t + g(mu + y))
    e^{-mu y - mu^2/2}`` against ``phi(y)``; ``h`` is analytic in ``|Im y| < strip / g``
    and bounded there, so the rule's error falls like ``exp(-c (strip/g) sqrt(2N))``:
    ``N`` nodes with ``(strip/g) sqrt(2N) >= 60`` (at most 64; beyond, the panels).
    """
    if sigma.strip is None:
        return None
    need = 0.5 * (60.0 * g / sigma.strip) ** 2
    return next((k for k in sorted(GH) if k >= need), None)


def hermite_rule(n: int, mu: np.ndarray):
    """Gauss–Hermite nodes ``z`` ``(len(mu), n)`` shifted to the modes, and their weights."""
    x, wx = GH[n]
    z = mu[:, None] + x[None, :]
    w = (wx / np.sqrt(2.0 * np.pi))[None, :] * np.exp(
        -mu[:, None] * x[None, :] - 0.5 * mu[:, None] ** 2
    )
    return z, w


def square_derivatives(d: list) -> list:
    """``(sigma^2)^(j)`` for ``j < len(d)`` (at most 5) from ``d = [sigma, sigma', ...]`` (Leibniz)."""
    sq = [d[0] * d[0], 2.0 * d[0] * d[1]]
    if len(d) > 2:
        sq.append(2.0 * (d[1] * d[1] + d[0] * d[2]))
    if len(d) > 3:
        sq.append(2.0 * (3.0 * d[1] * d[2] + d[0] * d[3]))
    if len(d) > 4:
        sq.append(2.0 * (3.0 * d[2] * d[2] + 4.0 * d[1] * d[3] + d[0] * d[4]))
    return sq


def hermite_e(m: int, z: np.ndarray) -> np.ndarray:
    """Probabilists' Hermite polynomial ``He_m(z)`` (Stein: ``E h^(m) = E[He_m(Z) h] / g^m``)."""
    if m == 0:
        return np.ones_like(z)
    prev, cur = np.ones_like(z), z
    for k in range(1, m):
        prev, cur = cur, z * cur - k * prev
    return cur
