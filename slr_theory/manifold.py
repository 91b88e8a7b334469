r"""The critical points of the flow on the invariant manifold ``M = {theta = eta = rho = 0}``.

On M the risk depends on ``(kappa, nu)`` only, and the projected gradient flow is
``kappa' = -(1 - kappa^2) R_kappa``, ``nu' = -(1 - nu^2) R_nu``: its critical points on the
closed square are the four corners and the zeros of ``(R_kappa, R_nu)`` elsewhere. They are
a fact about the model, which the layers above need at every level: the flows stop at
them, the locator starts from them, the basins and the separatrix are organised by them.

- Pointwise attention with ``sigma`` odd, non-decreasing and ``|sigma| <= 1`` (each
  verified on a dense grid when ``sigma`` was built, :class:`slr_theory.Nonlinearity`):
  the origin and the four corners, by proof (:func:`slr_theory.critical.manifold_certificate`).
- Any other model: ``R_M`` is affine in ``nu`` (checked), so the interior points are the
  roots of ``R_nu``, each with the one ``nu`` where ``R_kappa`` vanishes; the edges
  ``nu = +-1`` carry the roots of ``R_kappa(kappa, +-1)``. Both are located by scans of
  :data:`EDGE_SCAN` points refined by Brent's method.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import engine
from .params import Params, check_params
from .validate import as_array

__all__ = [
    "EDGE_SCAN",
    "ORIGIN_AND_CORNERS",
    "edge_roots",
    "five_points_proved",
    "in_open_square",
    "interior_points",
    "manifold_critical_overlaps",
    "manifold_saddle",
]

#: The origin and the four corners of M, as overlaps ``(kappa, nu, 0, 0, 0)`` (read-only).
ORIGIN_AND_CORNERS = np.array(
    [
        [0.0, 0.0, 0, 0, 0],
        [1.0, 1.0, 0, 0, 0],
        [-1.0, -1.0, 0, 0, 0],
        [1.0, -1.0, 0, 0, 0],
        [-1.0, 1.0, 0, 0, 0],
    ],
    dtype=float,
)
ORIGIN_AND_CORNERS.flags.writeable = False

#: Points of the scans of ``R_nu`` and ``R_kappa`` over ``[-1, 1]``.
EDGE_SCAN = 2001


@lru_cache(maxsize=64)
def edge_roots(params: Params, nu: float) -> np.ndarray:
    """The roots of ``R_kappa(kappa, nu)`` in ``(-1, 1)`` on M, at one ``nu`` (an edge: ``+-1``).

    A scan of :data:`EDGE_SCAN` points, each sign change refined by Brent's method to
    ``1e-15``; computed once per model and ``nu`` (the points of M and their
    certificate both ask).

    Parameters
    ----------
    params : Params
    nu : float

    Returns
    -------
    ndarray, shape ``(m,)``
        Increasing, read-only.
    """
    return _edge_scan(params, nu)[0]


@lru_cache(maxsize=64)
def _edge_scan(params: Params, nu: float) -> tuple[np.ndarray, float]:
    """One scan of ``R_kappa(kappa, nu)``: its roots (read-only) and the share of it that
    underflows (:func:`edge_roots`, :func:`underflow`)."""
    if params.model.key_free(params):  # R_kappa = 0 on all of M: the edge is a critical line
        out, share = np.empty(0), 0.0  # (its corners stand for it)
    else:
        tab = engine.table(params, params.lam, 1)
        roots, share = _roots(lambda k: _m_gradient(tab, k, nu)[0])
        out = np.array(roots)
    out.flags.writeable = False
    return out, share


_UNDERFLOW = 1e-290  # below, a gradient computed from products loses its digits


def underflow(params: Params, nu: float) -> float:
    """The share of the scan of ``R_kappa(kappa, nu)`` on M where it underflows (two or
    more consecutive scan points below ``1e-290``, where the subnormals' rounding begins):
    where roots cannot be told from rounding.

    Parameters
    ----------
    params : Params
    nu : float

    Returns
    -------
    float
        In ``[0, 1]``.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.manifold import underflow
    >>> underflow(Params.paper(), 1.0)
    0.0
    """
    return _edge_scan(params, nu)[1]


def _m_gradient(tab, kappa, nu: float) -> np.ndarray:
    """``(R_kappa, R_nu)`` ``(2, n)`` on M at ``kappa`` and one ``nu``."""
    k = np.atleast_1d(np.asarray(kappa, dtype=float))
    return tab.manifold_gradient(np.stack([k, np.full(k.size, nu)]))


def _roots(fn) -> tuple[list[float], float]:
    """The roots of ``fn`` in ``(-1, 1)``: exact zeros and sign changes of a scan of
    :data:`EDGE_SCAN` points, refined by Brent's method, sorted; and the share of the scan
    where ``fn`` underflows. Consecutive values below ``1e-290`` are such a stretch
    (``E sigma'(U)(sigma(U) - 1)`` where ``sigma`` saturates), and sign changes inside it
    are rounding, not roots."""
    from scipy.optimize import brentq

    k = np.linspace(-1.0, 1.0, EDGE_SCAN)[1:-1]
    r = fn(k)
    flips = np.nonzero(np.sign(r[:-1]) * np.sign(r[1:]) < 0)[0]
    zero = np.abs(r) < _UNDERFLOW
    runs = zero & (np.concatenate([[False], zero[:-1]]) | np.concatenate([zero[1:], [False]]))
    lone = zero & ~runs
    # a zero is a root where the sign changes through it; between values of one sign it
    # is a cancellation (E[sigma'(sigma - 1)] of terms 1e16 times larger), and a run of
    # them is underflow
    through = np.concatenate([[False], np.sign(r[:-2]) * np.sign(r[2:]) < 0, [False]])
    roots = [float(k[i]) for i in np.nonzero(lone & (r == 0.0) & through)[0]]
    flips = flips[~(zero[flips] & zero[flips + 1])]
    one = lambda x: float(fn(x)[0])  # noqa: E731
    for i in flips:
        a, b = float(k[i]), float(k[i + 1])
        fa, fb = one(a), one(b)
        if fa * fb < 0:
            roots.append(brentq(one, a, b, xtol=1e-15, rtol=1e-15))
        else:  # the scan's sign change is within rounding of an end: the root is there
            roots.append(a if abs(fa) <= abs(fb) else b)
    roots = sorted(roots)
    roots = [x for i, x in enumerate(roots) if i == 0 or x - roots[i - 1] > 1e-12]
    return roots, float(np.mean(runs))


@lru_cache(maxsize=64)
def interior_points(params: Params) -> np.ndarray:
    """M's critical points with ``|kappa|, |nu| < 1`` by a scan, rows ``(kappa, nu)``.

    ``R_M`` is affine in ``nu`` (``E T^2`` does not depend on ``v`` on M, where ``v`` is
    orthogonal to ``k`` and ``k*``): ``R_nu`` depends on ``kappa`` only and ``R_kappa(kappa,
    nu) = R_kappa(kappa, 0) + nu (R_kappa(kappa, 1) - R_kappa(kappa, 0))``. Both facts are
    checked on the scan (``ValueError`` if either fails). The interior points are then the
    roots ``kappa_0`` of ``R_nu`` with ``nu_0 = -R_kappa(kappa_0, 0) / (R_kappa(kappa_0, 1) -
    R_kappa(kappa_0, 0))``, kept where ``|nu_0| < 1``.

    Parameters
    ----------
    params : Params

    Returns
    -------
    ndarray, shape ``(m, 2)``
        Read-only.

    Raises
    ------
    ValueError
        If ``R_M`` is not affine in ``nu`` on the scan, or ``R_nu`` vanishes on an edge
        ``kappa = +-1`` (a segment of critical points): below ``1e-14`` of the terms it
        is made of (an exponentially small ``R_nu`` computed to its own digits is not 0).
    """
    tab = engine.table(params, params.lam, 1)
    k = np.linspace(-1.0, 1.0, EDGE_SCAN)
    g0, g1, gm = (_m_gradient(tab, k, nu) for nu in (0.0, 1.0, -1.0))
    scale = np.max(np.abs(np.concatenate([g0, g1, gm], axis=1)), axis=1)
    off = (
        np.max(np.abs(np.stack([g1[1] - g0[1], gm[1] - g0[1]]))),
        np.max(np.abs(gm[0] - (2.0 * g0[0] - g1[0]))),
    )
    if off[0] > 1e-9 * scale[1] or off[1] > 1e-9 * scale[0]:
        raise ValueError(
            f"`params`: the critical points of M need R_M affine in nu; for this model R_nu "
            f"moves with nu by {off[0]:.3g} and R_kappa leaves the line by {off[1]:.3g} "
            f"(against gradients of size {scale[1]:.3g}, {scale[0]:.3g})."
        )
    edges = np.zeros((5, 2))
    edges[0] = (-1.0, 1.0)
    phi, size = tab.features_and_sizes(edges)
    r_nu = (tab.C @ phi)[1]
    terms = (np.abs(tab.C) @ size)[1]  # R_nu's terms: what a cancellation is zero against
    for i, side in enumerate((-1.0, 1.0)):
        if abs(r_nu[i]) <= 1e-14 * terms[i]:
            raise ValueError(
                f"`params`: R_nu vanishes on the edge kappa = {side:+g} of M, a whole "
                "segment of critical points, which this locator does not classify."
            )
    points = []
    for k0 in _roots(lambda x: _m_gradient(tab, x, 0.0)[1])[0]:
        a, b = _m_gradient(tab, k0, 0.0)[0, 0], _m_gradient(tab, k0, 1.0)[0, 0]
        if b != a and abs(a / (a - b)) < 1.0:
            points.append([k0, a / (a - b)])
    out = np.array(points, dtype=float).reshape(-1, 2)
    out.flags.writeable = False
    return out


def manifold_critical_overlaps(params: Params) -> np.ndarray:
    """Every critical point of the flow on M, as rows ``(kappa, nu)``, symmetric copies included.

    Pointwise attention with ``sigma`` odd, non-decreasing and ``|sigma| <= 1`` (each
    established when ``sigma`` was built): the origin and the four corners, by proof
    (:func:`slr_theory.critical.manifold_certificate`). Any other model: the four corners, the interior
    points (roots of ``R_nu``, each with the ``nu`` where ``R_kappa`` vanishes) and the
    roots of ``R_kappa(kappa, +-1)`` on the edges ``nu = +-1``, located by scans
    (:func:`slr_theory.critical.manifold_certificate` says what is proved). Under softmax
    attention ``R_nu < 0`` on all of M: only the edges ``nu = +-1`` carry critical points.
    A risk that does not depend on the key (:meth:`slr_theory.models.Model.key_free`) has
    ``R_kappa = 0``: each edge is a line of critical points, listed once, at ``kappa = 1``.

    Parameters
    ----------
    params : Params

    Returns
    -------
    ndarray, shape ``(m, 2)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.manifold import manifold_critical_overlaps
    >>> manifold_critical_overlaps(Params.paper()).tolist()
    [[0.0, 0.0], [1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]
    """
    params = check_params(params)
    if five_points_proved(params):
        return ORIGIN_AND_CORNERS[:, :2].copy()
    if params.model.key_free(params):  # R_kappa = 0: each edge a line, listed at kappa = 1
        return np.concatenate([[[1.0, 1.0], [1.0, -1.0]], interior_points(params)])
    edges = [
        np.stack([r, np.full_like(r, nu)], axis=1)
        for nu in (1.0, -1.0)
        for r in [edge_roots(params, nu)]
    ]
    return np.concatenate([ORIGIN_AND_CORNERS[1:, :2], interior_points(params), *edges])


def in_open_square(points) -> np.ndarray:
    """Which rows ``(kappa, nu)`` of `points` lie inside the open square, off its edges.

    Parameters
    ----------
    points : array_like, shape ``(m, 2)``

    Returns
    -------
    ndarray of bool, shape ``(m,)``

    Examples
    --------
    >>> from slr_theory.manifold import in_open_square
    >>> in_open_square([[0.0, 0.0], [1.0, 1.0], [0.67, 1.0]]).tolist()
    [True, False, False]
    """
    pts = as_array(points, "points", allow_nan=False)
    if pts.size == 0:
        return np.zeros(0, dtype=bool)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError(f"`points` must have shape (m, 2), got {pts.shape}.")
    return np.all(np.abs(pts) < 1.0, axis=1)


def manifold_saddle(params: Params) -> np.ndarray | None:
    """M's critical point inside the open square, ``(kappa, nu)``, or None if it has none.

    Where it exists it is unique and a saddle of the flow on M: ``R_M`` is affine in ``nu``
    (:func:`manifold_critical_overlaps`), so its Hessian there has ``R_nu,nu = 0`` and
    determinant ``-R_kappa,nu^2 < 0``. The origin for an odd ``sigma``; elsewhere for one
    that is not (``E sigma(gZ) != 0`` moves the root of ``R_nu``); none under softmax
    attention (``R_nu < 0`` on all of M). Its stable manifold is the separatrix of the
    basins on M (:func:`slr_theory.landscape.separatrix`), and ``kappa = kappa_0`` is the
    ``nu``-nullcline.

    Parameters
    ----------
    params : Params

    Returns
    -------
    ndarray, shape (2,), or None

    Raises
    ------
    ValueError
        If M has more than one interior critical point (a ``sigma`` that is not monotone):
        no single saddle organises the basins then.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.manifold import manifold_saddle
    >>> manifold_saddle(Params.paper()).tolist()
    [0.0, 0.0]
    >>> manifold_saddle(Params.paper().replace(attention="softmax")) is None
    True
    """
    pts = manifold_critical_overlaps(check_params(params))
    inner = pts[in_open_square(pts)]
    if len(inner) > 1:
        raise ValueError(
            f"`params`: M has {len(inner)} interior critical points ({inner.tolist()!r}), "
            "not one saddle."
        )
    return inner[0].copy() if len(inner) else None


def five_points_proved(params: Params) -> bool:
    """Whether M's critical points are proved to be the origin and the four corners.

    The model answers (:meth:`slr_theory.models.Model.five_points_proved`): for pointwise
    attention the proof (:func:`slr_theory.critical.manifold_certificate`) needs weights odd
    in the key (:attr:`slr_theory.Params.odd_weights`) and ``sigma`` non-decreasing with
    ``|sigma| <= 1``, each established when ``sigma`` was built, symbolically or by
    integral identities (:attr:`slr_theory.Nonlinearity.established`); softmax has no
    such argument.

    Parameters
    ----------
    params : Params

    Returns
    -------
    bool
    """
    return params.model.five_points_proved(params)
