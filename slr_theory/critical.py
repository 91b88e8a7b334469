r"""Critical points of the risk on ``S^{d-1} x S^{d-1}`` and on the invariant manifold, classified.

A critical point is a zero of the Riemannian gradient. Every critical point has a
representative with ``k, v`` in ``span{e1, e2, e3, e4}`` (``k* = e1``, ``v* = e2``): the
group ``O(d - 2)`` of rotations fixing ``k*`` and ``v*`` moves any point there and leaves
the risk unchanged. So the search runs on ``S^3 x S^3`` and ``d`` enters only as a
parameter of the risk and through multiplicities.

- ``where="manifold"``: the critical points of the flow on ``M = {theta = eta = rho = 0}``
  over the closed square, complete by a proof the code carries out
  (:func:`manifold_certificate`): the origin and the four corners.
- ``where="sphere"``: all critical points found by damped Riemannian Newton from many
  starts (structured and random), polished, and deduplicated up to the symmetries
  (:data:`SYMMETRIES`): ``(k, v) -> (-k, -v)``, which maps ``(kappa, nu, theta, eta, rho)``
  to ``(-kappa, -nu, -theta, -eta, rho)``, and ``(k, v) -> (S k, -S v)`` with ``S`` the
  reflection that fixes ``k*`` and sends ``v*`` to ``-v*``, which maps them to
  ``(kappa, nu, -theta, -eta, -rho)`` (every term of the risk is even in
  ``(theta, eta, rho)``). One representative per orbit is reported, its other images
  in ``symmetry_copies``. How complete the list is, is reported with it
  (:class:`SearchReport`).

**Critical or plateau.** Where ``erf`` saturates the gradient is exponentially small
without vanishing. A point is reported as critical only if its Riemannian gradient is
zero *relative to the terms it is made of*: ``|grad_k| <= tol * scale_k`` and
``|grad_v| <= tol * scale_v``, where ``scale_k`` adds the magnitudes of the engine's terms
of ``R_kappa``, ``R_eta``, ``R_rho`` (and of ``A``), and likewise for ``v``; the partials
themselves are computed to relative precision. On
a plateau the ratio is of order one however small the gradient. Plateaus are reported
separately. Where the factor ``e^{-x^2}`` of the saturating terms underflows, the same
test is applied to those terms before the factor (``x^2 > 600``). On a fold of the
overlap map (``k = -v``, ``v = v*``, ...: a direction ``T_i`` of a term ``R_i T_i`` of the
gradient is 0, computed as rounding) the point is moved onto the fold and the term read
exactly, 0 there and ``R_i`` times a direction a step off it, which absorbs part of the
rest (:func:`_resolved_on_folds`, :data:`FOLD`): on ReLU's fold ``k = -v``, where the
informative key is dead, the distractors' ``R_rho`` is of order one and what it cannot
absorb, about ``1e-73``, is of order one against its own terms: a plateau.

**Classification.** The Riemannian Hessian (:func:`slr_theory.geometry.riemannian_hessian`)
with multiplicities for ``d``; an eigenvalue within its error estimate of zero is a zero
mode. Symmetry explains ``orbit_dimension`` zero modes: ``0`` if ``k, v`` lie in
``span{k*, v*}`` (``r = 2``), ``d - 3`` if ``r = 3``, ``2d - 7`` if ``r = 4`` (the orbit of the
pair under ``O(d - 2)``). A point with more zero modes than that is *degenerate*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import OptimizeResult

from . import engine
from .geometry import (
    HessianSpectrum,
    riemannian_gradient,
    span_dimension,
    spectrum,
    vector_derivatives,
)
from .manifold import (
    ORIGIN_AND_CORNERS,
    five_points_proved,
    manifold_critical_overlaps,
)
from .params import Params, check_params
from .results import html_table
from .trajectory import MAX_ALPHA, Progress, to_overlaps, to_vectors
from .validate import (
    as_array,
    positive_int,
    positive_real,
    progress_option,
    random_generator,
    unit_vectors,
)

__all__ = [
    "FOLD",
    "GRAD_TOL",
    "MAX_ITERATIONS",
    "MAX_STARTS",
    "SYMMETRIES",
    "CriticalPoint",
    "CriticalPoints",
    "LipschitzBound",
    "MapSpectrum",
    "SearchReport",
    "canonical",
    "classify",
    "critical_points",
    "describe",
    "end_groups",
    "hessian_norm_bound",
    "lipschitz_bound",
    "manifold_certificate",
    "manifold_kind",
    "overlaps_text",
    "pgd_map_spectrum",
    "plural_kind",
    "polish",
    "same_point",
    "symmetries",
]

EPS = np.finfo(float).eps
#: A point is critical when ``grad_norm <= GRAD_TOL * grad_scale`` (module docstring).
GRAD_TOL = 1e-10
#: A Newton row whose relative gradient is below this (rounding level, far below
#: `GRAD_TOL`) and whose Newton step is below 1e-14 is settled: it is not stepped again.
_SETTLED = 1e-14


class CriticalPoint(OptimizeResult):
    """One critical point (one representative of its orbit), in the style of ``OptimizeResult``.

    Attributes
    ----------
    overlaps : ndarray, shape (5,)
        ``(kappa, nu, theta, eta, rho)``.
    vectors : ndarray, shape (2, 4)
        ``k`` and ``v`` in the basis ``(k*, v*, e3, e4)``.
    risk : float
    grad_norm : float
        Norm of the Riemannian gradient at the returned point.
    relative_gradient : float
        ``max(|grad_k| / scale_k, |grad_v| / scale_v)``, each part against the size of
        the terms it is made of: what decides criticality (module docstring).
    hessian_eigenvalues, multiplicities : ndarray
        Distinct eigenvalues of the Riemannian Hessian and how often each occurs at
        dimension ``d`` (summing to ``2 (d - 1)``).
    eigenvalue_errors : ndarray
        Error estimate of each eigenvalue.
    index, nullity : int
        Negative and zero eigenvalues, counted with multiplicity.
    orbit_dimension : int
        Zero modes explained by the ``O(d - 2)`` symmetry.
    span_dim : int
        ``dim span{k, v, k*, v*}``.
    kind : str
        ``"minimum"``, ``"saddle"`` or ``"maximum"``, prefixed ``"degenerate "`` when a
        zero mode is not explained by symmetry, and followed by
        ``" (critical manifold of dimension n)"`` when ``orbit_dimension > 0``.
    symmetry_copies : list of ndarray
        The overlaps of its other images under :data:`SYMMETRIES` (critical points
        too, with the same risk and spectrum).
    on_manifold : bool
        ``theta = eta = rho = 0``.
    manifold_eigenvalues : ndarray or None
        On M: the eigenvalues of the Hessian of ``R_M`` in the angle chart
        ``(arccos kappa, arccos nu)``, regular at the corners.
    starts : int
        How many starts of the search reached it (0 for points found by proof).
    below_range : list of str
        Eigenvalues that underflow to 0.0 in double precision but whose sign is decided
        from their terms before the factor ``e^{-x^2}`` (huge ``lam^2 d``).
    """


class CriticalPoints(list):
    """A list of :class:`CriticalPoint`, with how it was established.

    Attributes
    ----------
    params : Params
    where : str
        ``"manifold"`` or ``"sphere"``.
    certificate : list of str
        The completeness argument (``"manifold"``) or a summary of the evidence.
    search : SearchReport or None
        The search (``"sphere"``).
    plateaus : list of OptimizeResult
        Search end points whose gradient is tiny but not zero relative to its terms.
    """

    def __init__(self, points, params, where, certificate, search=None, plateaus=()):
        super().__init__(points)
        self.params = params
        self.where = where
        self.certificate = list(certificate)
        self.search = search
        self.plateaus = list(plateaus)

    def table(self, grad: bool = True) -> str:
        """A plain-text table: overlaps, risk, gradient norm, index, nullity, kind.

        Parameters
        ----------
        grad : bool
            Include the gradient norm (rounding noise: leave it out for stable text).

        Returns
        -------
        str
        """

        def num(x, width, digits):
            x = 0.0 if abs(x) < 0.5 * 10.0**-digits else x  # no "-0.00000"
            return f"{x:>{width}.{digits}f}"

        head = f"{'kappa':>8} {'nu':>8} {'theta':>8} {'eta':>8} {'rho':>8} {'risk':>10}"
        head += f" {'|grad|':>8}" if grad else ""
        lines = [head + f" {'index':>5} {'null':>4}  kind"]
        for p in self:
            row = " ".join(num(x, 8, 4) for x in p.overlaps) + " " + num(p.risk, 10, 6)
            row += f" {p.grad_norm:>8.1e}" if grad else ""
            lines.append(row + f" {p.index:>5d} {p.nullity:>4d}  {p.kind}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """What a notebook shows: :meth:`table` as HTML, with how the list was established."""
        rows = [
            [*(f"{x:.4f}" for x in q.overlaps), f"{q.risk:.6g}", q.index, q.nullity, q.kind]
            for q in self
        ]
        if self.where == "manifold":
            proved = five_points_proved(self.params)
            how = "complete by proof" if proved else "located by scans (see the certificate)"
        else:
            how = "found by search"
        note = self.certificate[1] if self.where == "sphere" and len(self.certificate) > 1 else ""
        return html_table(
            ["kappa", "nu", "theta", "eta", "rho", "risk", "index", "nullity", "kind"],
            rows,
            caption=f"{len(self)} critical points on the {self.where}, {how}. {note}".strip(),
        )


@dataclass
class SearchReport:
    """How the full-space search judged completeness.

    Attributes
    ----------
    starts : ndarray, shape (n, 5)
        The overlaps of every start, structured ones first.
    reached : ndarray of int, shape (n,)
        Index of the critical point each start reached, ``-1`` for a plateau or no
        convergence.
    distinct_after : ndarray of int, shape (n,)
        Distinct critical points found after the first ``i + 1`` starts: a curve that
        flattens is the evidence of completeness.
    structured : int
        How many starts were structured (M's critical points, a grid on M, the
        span of ``k*, v*``); the rest are uniform on ``S^3 x S^3``.
    iterations : int
    """

    starts: np.ndarray
    reached: np.ndarray
    distinct_after: np.ndarray
    structured: int
    iterations: int
    notes: list = field(default_factory=list)

    @property
    def last_new(self) -> int:
        """The start (counted from 1) at which the last new point appeared; 0 if none."""
        d = np.asarray(self.distinct_after)
        return int(np.argmax(d == d[-1])) + 1 if d.size and d[-1] > 0 else 0


def _five(ov, name: str) -> np.ndarray:
    """Five finite overlaps ``(kappa, nu, theta, eta, rho)``."""
    ov = as_array(ov, name, allow_nan=False)
    if ov.shape != (5,):
        raise ValueError(f"`{name}` must be five overlaps, got shape {ov.shape}.")
    return ov


#: Newton iterations accepted by :func:`polish` and :func:`critical_points`.
MAX_ITERATIONS = 10**5
#: Upper bound of the random starts of one full-space search.
MAX_STARTS = 10**6


def _tables(params: Params, *, loop: bool = True):
    """The gradient and Hessian tables at `params`: prepared for a `loop` over many
    batches (the search), plain for a few points (one Newton polish, one classification),
    where building a quadrature model's interpolant costs more than it serves (softmax at
    ``lambda = 1.3``: 1.7 s to build, 1 ms a point without it)."""
    tables = (engine.table(params, params.lam, 1), engine.table(params, params.lam, 2))
    return tuple(t.prepared() for t in tables) if loop else tables


def _grad_scales(ov: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Sizes ``(n, 2)`` of the terms of ``grad_k = R_kappa k* + R_eta v* + R_rho v - A k``
    and of ``grad_v``, from the term magnitudes ``m`` of the partials."""
    a = np.abs(ov)
    sk = (1 + a[:, 0]) * m[:, 0] + (1 + a[:, 3]) * m[:, 3] + (1 + a[:, 4]) * m[:, 4]
    sv = (1 + a[:, 2]) * m[:, 2] + (1 + a[:, 1]) * m[:, 1] + (1 + a[:, 4]) * m[:, 4]
    return np.stack([sk, sv], axis=1) + np.finfo(float).smallest_subnormal


def _norm(x: np.ndarray) -> np.ndarray:
    """Row norms without underflow of the squares (tiny gradients are the point here)."""
    big = np.abs(x).max(axis=1, keepdims=True)
    safe = np.where(big > 0, big, 1.0)
    return big[:, 0] * np.linalg.norm(x / safe, axis=1)


def _relative_gradient(ov: np.ndarray, G: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``max(|grad_k| / scale_k, |grad_v| / scale_v)``: zero at a critical point, O(1) on a plateau."""
    norms = np.stack([_norm(G[:, :4]), _norm(G[:, 4:])], axis=1)
    return (norms / _grad_scales(ov, m)).max(axis=1)


#: Sign patterns of the symmetry group on ``(kappa, nu, theta, eta, rho)``: the identity,
#: ``(k, v) -> (-k, -v)``, ``(k, v) -> (S k, -S v)`` (``S`` the reflection fixing ``k*``
#: and sending ``v*`` to ``-v*``), and their product.
SYMMETRIES = np.array(
    [[1, 1, 1, 1, 1], [-1, -1, -1, -1, 1], [1, 1, -1, -1, -1], [-1, -1, 1, 1, -1]], dtype=float
)


def symmetries(params: Params) -> np.ndarray:
    """The rows of :data:`SYMMETRIES` that leave the model's risk unchanged.

    ``(k, v) -> (S k, -S v)`` holds for every model: ``X -> S X`` preserves the law of
    the tokens and flips the label, and the squared error does not see the sign.
    ``(k, v) -> (-k, -v)`` needs weights odd in the key (:attr:`Params.odd_weights`):
    pointwise attention with a ``sigma`` verified odd when it was built, never softmax
    (``softmax(-z) != -softmax(z)``). Hence all four rows, or the identity and
    ``(S k, -S v)``.

    Parameters
    ----------
    params : Params

    Returns
    -------
    ndarray, shape ``(m, 5)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.critical import symmetries
    >>> symmetries(Params.paper().replace(attention="softmax")).tolist()
    [[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, -1.0, -1.0, -1.0]]
    """
    return SYMMETRIES if check_params(params).odd_weights else SYMMETRIES[[0, 2]]


def _images(ov: np.ndarray, group: np.ndarray = SYMMETRIES) -> np.ndarray:
    return group * np.asarray(ov, dtype=float)


def _group(group) -> np.ndarray:
    """`group` checked: rows of :data:`SYMMETRIES`, the identity first (None: all of them)."""
    if group is None:
        return SYMMETRIES
    try:
        g = np.asarray(group, dtype=float)
    except (TypeError, ValueError):
        g = None
    if (
        g is None
        or g.ndim != 2
        or g.shape[1:] != (5,)
        or not len(g)
        or not np.array_equal(g[0], SYMMETRIES[0])
        or not all(any(np.array_equal(r, q) for q in SYMMETRIES) for r in g)
    ):
        raise ValueError(
            "`group` must be rows of SYMMETRIES with the identity first "
            f"(slr_theory.critical.symmetries), got {group!r}."
        )
    return g


def end_groups(final, group: np.ndarray | None = None, tol: float = 0.05) -> list[np.ndarray]:
    """Runs grouped by where they ended, up to the risk's symmetries (largest group first).

    A mean over runs that ended in different places describes no run: what a batch of
    runs did is said group by group. Two ends are in one group when they are the same
    point up to `group` within `tol` (:func:`same_point`); this says where runs ended, not
    that they are at a critical point.

    Parameters
    ----------
    final : array_like, shape ``(n, 5)``
        The runs' last overlaps.
    group : ndarray, optional
        Rows of sign patterns (:func:`symmetries`); default :data:`SYMMETRIES`.
    tol : float
        Largest difference of two ends in one group, ``> 0``.

    Returns
    -------
    list of ndarray of int
        The runs of each group, the largest first.

    Examples
    --------
    >>> from slr_theory.critical import end_groups
    >>> ends = [[1, 1, 0, 0, 0], [0, 0, 0, 0, 0], [-1, -1, 0, 0, 0], [0.99, 1, 0, 0, 0]]
    >>> [g.tolist() for g in end_groups(ends)]  # (-1, -1) is (1, 1) under (k, v) -> (-k, -v)
    [[0, 2, 3], [1]]
    """
    final = as_array(final, "final", allow_nan=False)
    if final.ndim != 2 or final.shape[1] != 5:
        raise ValueError(f"`final` must have shape (n, 5), got {final.shape}.")
    tol = positive_real(tol, "tol")
    groups: list[list[int]] = []
    for i, o in enumerate(final):
        for g in groups:
            if same_point(final[g[0]], o, tol=tol, group=group):
                g.append(i)
                break
        else:
            groups.append([i])
    return [np.array(g) for g in sorted(groups, key=len, reverse=True)]


def canonical(ov, group: np.ndarray | None = None) -> np.ndarray:
    """The representative of the orbit of ``ov`` under `group` (the largest, rounded).

    Parameters
    ----------
    ov : array_like, shape (5,)
    group : ndarray, optional
        Rows of sign patterns (:func:`symmetries`); default :data:`SYMMETRIES`.

    Returns
    -------
    ndarray, shape (5,)

    Examples
    --------
    >>> from slr_theory.critical import canonical
    >>> canonical([-0.3, 0.2, 0.1, -0.4, 0.5]).tolist()
    [0.3, -0.2, 0.1, -0.4, -0.5]
    """
    images = _images(_five(ov, "ov"), _group(group))
    keys = [tuple(np.round(x, 8) + 0.0) for x in images]
    return images[max(range(len(images)), key=lambda i: keys[i])]


def same_point(a, b, tol: float = 1e-6, group: np.ndarray | None = None) -> bool:
    """Whether two overlap tuples are the same point up to `group` (default :data:`SYMMETRIES`).

    Parameters
    ----------
    a, b : array_like, shape (5,)
        Finite overlaps.
    tol : float
        Largest coordinate difference of the canonical representatives, ``>= 0``.
    group : ndarray, optional
        Rows of sign patterns (:func:`symmetries`); default :data:`SYMMETRIES`.

    Returns
    -------
    bool
    """
    a, b = _five(a, "a"), _five(b, "b")
    tol = positive_real(tol, "tol", allow_zero=True)
    g = _group(group)
    return bool(np.max(np.abs(canonical(a, g) - canonical(b, g))) <= tol)


def _gaussian_part_vanishes(params: Params, table, K, V, tol: float) -> np.ndarray:
    """Whether the part of the gradient carried by ``e^{-x^2}`` vanishes *before* that factor.

    Where ``x^2`` is large the factor underflows and a plateau's gradient is exactly 0.0
    in double precision; the table's scaled part (the features before that factor) is
    what decides.
    """
    ov = to_overlaps(np.concatenate([K.T, V.T]))
    part = table.scaled_part(ov)
    if part is None:  # no factor of the features underflows before its terms
        return np.zeros(K.shape[0], dtype=bool)
    C, phi = part
    g = (C @ phi).T
    mag = (np.abs(C) @ np.abs(phi)).T
    G, _a, _b = riemannian_gradient(K, V, g)
    return _relative_gradient(ov.T, G, mag) <= tol


#: A tangent term ``R_i T_i`` of the gradient whose direction ``T_i`` (``v - rho k``,
#: ``v* - nu v``, ...) is shorter than this lies on a fold of the overlap map
#: (``k = -v``, ``v = v*``, ...), where the exact ``T_i`` is 0.
FOLD = 1e-12


def _tangent_terms(K: np.ndarray, V: np.ndarray, ov: np.ndarray) -> tuple:
    """The directions ``T_i`` ``(n, 5, 4)`` with ``grad_k = sum_i R_i T_i^k`` (rows kappa,
    nu, theta, eta, rho; zero where ``R_i`` does not enter that side) and ``grad_v``."""
    n = K.shape[0]
    e1, e2 = np.eye(4)[:1], np.eye(4)[1:2]
    tk, tv = np.zeros((n, 5, 4)), np.zeros((n, 5, 4))
    tk[:, 0] = e1 - ov[:, 0, None] * K
    tk[:, 3] = e2 - ov[:, 3, None] * K
    tk[:, 4] = V - ov[:, 4, None] * K
    tv[:, 2] = e1 - ov[:, 2, None] * V
    tv[:, 1] = e2 - ov[:, 1, None] * V
    tv[:, 4] = K - ov[:, 4, None] * V
    return tk, tv


def _folds(tk: np.ndarray, tv: np.ndarray) -> np.ndarray:
    """``(n, 5)``: which overlaps sit on a fold (:data:`FOLD`; ``rho`` on either side),
    from the directions :func:`_tangent_terms` gives."""
    short = lambda T: np.linalg.norm(T, axis=2) <= FOLD  # noqa: E731
    fk, fv = short(tk), short(tv)
    return np.stack([fk[:, 0], fv[:, 1], fv[:, 2], fk[:, 3], fk[:, 4] | fv[:, 4]], axis=1)


def _snap_to_folds(K: np.ndarray, V: np.ndarray, ov: np.ndarray, fold: np.ndarray) -> tuple:
    """The points moved onto the folds they are within rounding of: ``k = sgn(kappa) k*``,
    ``k = sgn(eta) v*``, ``v = sgn(nu) v*``, ``v = sgn(theta) k*``, then ``v = sgn(rho) k``
    (or ``k = sgn(rho) v`` where ``v`` is already placed)."""
    K, V = K.copy(), V.copy()
    sgn = np.where(ov >= 0, 1.0, -1.0)
    eye = np.eye(4)
    moved_k, moved_v = np.zeros(len(K), bool), np.zeros(len(K), bool)
    for col, basis, vecs, moved in (
        (0, 0, K, moved_k),
        (3, 1, K, moved_k),
        (1, 1, V, moved_v),
        (2, 0, V, moved_v),
    ):
        at = fold[:, col]
        vecs[at] = sgn[at, col, None] * eye[basis]
        moved |= at
    at = fold[:, 4]
    free_v = at & ~moved_v
    V[free_v] = sgn[free_v, 4, None] * K[free_v]
    free_k = at & moved_v & ~moved_k
    K[free_k] = sgn[free_k, 4, None] * V[free_k]
    return K, V


def _resolved_on_folds(table, K: np.ndarray, V: np.ndarray, tol: float) -> np.ndarray:
    """Whether each point on a fold stays critical once the fold's terms are read exactly.

    On a fold a term ``R_i T_i`` is computed as rounding of order ``eps R_i`` and hides what
    the other terms say beneath it. Its exact value is 0 on the fold, but a step ``epsilon``
    off it makes it ``R_i`` times a direction, so it can absorb a small remainder:

    - ``k = +-k*`` or ``k = +-v*`` (a fold of ``kappa`` or ``eta``): ``T_i^k = -+epsilon``
      for any ``epsilon`` orthogonal to ``k``, so a critical point lies within
      ``|remainder| / |R_i|`` whatever ``k``'s remainder is; likewise ``v = +-v*``, ``+-k*``
      for ``v``'s. That side is not held to anything.
    - ``k = s v`` (``rho = s = +-1``) alone: ``(T_rho^k, T_rho^v) = (-s epsilon,
      epsilon)``, which absorbs a remainder with ``g_k = -s g_v`` and nothing else; the
      point is critical only if ``|g_k + s g_v| <= tol`` of the two sides' term sizes. On
      ReLU's fold ``k = -v``, where the informative key is dead, that combination is the
      informative part's, about ``1e-73`` and of order one against its own terms: a
      plateau (the distractors' ``R_rho``, of order one, had hidden it). At erf's maximum
      ``k = v = k*`` at ``lambda = 0.9`` it is ``g_v``'s rounding: critical, as the census
      proves.
    - Other sides: their gradient, held to `tol` of their terms as before.

    Each point is first moved onto the folds it is within :data:`FOLD` of, and its
    overlaps within that of 0 or ``+-1`` onto those (:func:`_snap_to_folds`): a partial
    whose terms all carry such an overlap is then its exact 0, not a remainder as small
    as its own terms. Points on no fold: True.
    """
    ov = to_overlaps(np.concatenate([K.T, V.T])).T
    fold = _folds(*_tangent_terms(K, V, ov))
    out = np.ones(len(K), dtype=bool)
    rows = np.flatnonzero(fold.any(axis=1))
    if rows.size == 0:
        return out
    Ks, Vs = _snap_to_folds(K[rows], V[rows], ov[rows], fold[rows])
    ovs = to_overlaps(np.concatenate([Ks.T, Vs.T])).T
    ovs = np.where(np.abs(ovs) <= FOLD, 0.0, ovs)
    ovs = np.where(1.0 - np.abs(ovs) <= FOLD, np.sign(ovs), ovs)
    phi, size = table.features_and_sizes(ovs.T.copy())
    g, m = (table.C @ phi).T, (np.abs(table.C) @ size).T
    terms = _tangent_terms(Ks, Vs, ovs)
    on = _folds(*terms) | fold[rows]
    a = np.abs(ovs)
    sides = []
    for T in terms:
        used = ~on & (np.linalg.norm(T, axis=2) > 0.0)
        grad = np.einsum("ni,nij->nj", np.where(used, g, 0.0), T)
        sides.append((grad, np.sum(np.where(used, (1.0 + a) * m, 0.0), axis=1)))
    (gk, sk), (gv, sv) = sides
    tiny = np.finfo(float).smallest_subnormal
    free_k, free_v, rho = on[:, 0] | on[:, 3], on[:, 1] | on[:, 2], on[:, 4]
    ok_k = free_k | (_norm(gk) <= tol * (sk + tiny))
    ok_v = free_v | (_norm(gv) <= tol * (sv + tiny))
    s = np.where(ovs[:, 4] >= 0, 1.0, -1.0)[:, None]
    ok_rho = _norm(gk + s * gv) <= tol * (sk + sv + tiny)
    out[rows] = np.where(rho, free_k | free_v | ok_rho, ok_k & ok_v)
    return out


def plural_kind(kind: str) -> str:
    """The plural of a kind of critical point, its qualifiers kept.

    Parameters
    ----------
    kind : str
        A kind without its orbit, as :attr:`CriticalPoint.kind` begins.

    Returns
    -------
    str

    Examples
    --------
    >>> from slr_theory.critical import plural_kind
    >>> plural_kind("degenerate minimum"), plural_kind("saddle")
    ('degenerate minima', 'saddles')
    """
    if not isinstance(kind, str) or not kind.strip():
        raise ValueError(f"`kind` must be a non-empty string, got {kind!r}.")
    head, _, last = kind.rpartition(" ")
    word = {"minimum": "minima", "maximum": "maxima", "saddle": "saddles"}.get(last, last)
    return f"{head} {word}".strip()


def _direction(x, name: str) -> np.ndarray:
    """A finite non-zero vector of ``R^4``, normalised, as a batch of one."""
    x = as_array(x, name, allow_nan=False)
    if x.shape != (4,):
        raise ValueError(f"`{name}` must have shape (4,), got {x.shape}.")
    norm = np.linalg.norm(x)
    if not 0.0 < norm < np.inf:
        raise ValueError(f"`{name}` must be a non-zero finite vector, got norm {norm!r}.")
    return (x / norm)[None]


def polish(
    params: Params, k, v, *, tol: float = GRAD_TOL, iterations: int = 60, damping: float = 1e-3
):
    """Damped Riemannian Newton from one point ``k, v`` in ``R^4``; the critical point or None.

    Parameters
    ----------
    params : Params
    k, v : array_like, shape (4,)
        Non-zero vectors in the basis ``(k*, v*, e3, e4)`` (normalised here).
    tol : float
        Relative-gradient threshold (module docstring), ``> 0``.
    iterations : int
        Newton iterations, ``1 <= iterations <= MAX_ITERATIONS`` (1e5).
    damping : float
        Initial damping relative to the largest Hessian eigenvalue, ``0 < damping <=
        1e8``; divided by 10 after each step that lowers the gradient (pure Newton below
        1e-9), multiplied by 10 otherwise. A start close to the point (a continuation's
        prediction) converges in fewest iterations with a small one.

    Returns
    -------
    tuple of two ndarray, or None
        The polished ``(k, v)`` if it is critical (relative gradient <= `tol`, Newton
        step below ``1e-7``), else None.
    """
    params = check_params(params)
    K, V = _direction(k, "k"), _direction(v, "v")
    tol = positive_real(tol, "tol")
    iterations = positive_int(iterations, "iterations", upper=MAX_ITERATIONS)
    damping = positive_real(damping, "damping", upper=1e8)
    tables = _tables(params, loop=False)
    K, V, ov, _gn, rel, step = _newton(tables, K, V, iterations, mu0=damping)
    ok = (rel[0] <= tol) & (step[0] < 1e-7) & (span_dimension(K, V)[0] <= params.d)
    ok = ok and bool(_resolved_on_folds(tables[0], K, V, tol)[0])
    if ok and (params.lam * np.sqrt(params.d / 2.0) * ov[0, 0]) ** 2 > 600.0:
        ok = bool(_gaussian_part_vanishes(params, tables[0], K, V, tol)[0])
    return (K[0], V[0]) if ok else None


def classify(params: Params, k, v) -> CriticalPoint:
    """The :class:`CriticalPoint` record of a critical point given by its vectors in ``R^4``.

    Parameters
    ----------
    params : Params
    k, v : array_like, shape (4,)
        Unit vectors (within 1e-10) in the basis ``(k*, v*, e3, e4)``.

    Returns
    -------
    CriticalPoint
    """
    params = check_params(params)
    k, v = unit_vectors(k, "k", 4), unit_vectors(v, "v", 4)
    return _classify(params, _tables(params, loop=False), k, v)


# --- the flow on M: complete by proof -----------------------------------------------------


def manifold_certificate(params: Params) -> list[str]:
    """What is proved of the critical points on M, step by step with its numbers.

    For the paper's ``erf`` the proof that the origin and the four corners are all of
    them; for another ``sigma`` that is odd, non-decreasing and bounded by 1 the same
    argument on quadratures; otherwise what was located by scans and what is proved of
    it; for softmax attention its own argument.

    The model's own argument (:meth:`slr_theory.models.Model.manifold_certificate`). For
    ``erf`` each numeric step is an inequality certified with mpmath interval arithmetic
    (outward rounding): ``c > 0`` and ``erfc(a/s) > 0`` (a rigorous lower bound
    ``erfc(z) > 2 e^{-z^2} / (sqrt(pi) (z + sqrt(z^2 + 2)))``), and ``erf(c) > 0``.

    Parameters
    ----------
    params : Params

    Returns
    -------
    list of str
        The steps of the argument, each with its certified number.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.critical import manifold_certificate
    >>> print(manifold_certificate(Params.paper())[0])
    On M the Riemannian gradient is ((1 - kappa^2) R_kappa, (1 - nu^2) R_nu) with R_kappa = C e^{-c^2 kappa^2} [erf(a kappa / s) - nu], R_nu = -2 gamma^2 erf(c kappa).
    """
    params = check_params(params)
    return params.model.manifold_certificate(params)


# --- classification -------------------------------------------------------------------------


def _classify(
    params: Params, tables, k: np.ndarray, v: np.ndarray, starts: int = 0
) -> CriticalPoint:
    ov, g, G, Hr, AB, mag = vector_derivatives(tables, k[None], v[None])
    spec: HessianSpectrum = spectrum(params.d, k, v, g[0], Hr[0], AB[0], mag[0])
    d, r = params.d, spec.span_dim
    orbit = {2: 0, 3: d - 3, 4: 2 * d - 7}[r]
    if params.model.key_free(params):  # every k: the sphere of keys times v's orbit
        orbit = (d - 1) + {2: 0, 3: d - 3, 4: d - 3}[r]
    zero = np.abs(spec.eigenvalues) <= spec.errors
    signs, below_range = _underflowed_signs(params, tables, k, v, g[0], spec)
    zero &= signs == 0
    neg = ((spec.eigenvalues < 0) | (signs < 0)) & ~zero
    index = int(spec.multiplicities[neg].sum())
    nullity = int(spec.multiplicities[zero].sum())
    total = 2 * (d - 1)
    if index == 0:
        base = "minimum"
    elif index == total - nullity:
        base = "maximum"
    else:
        base = "saddle"
    kind = ("degenerate " if nullity > orbit else "") + base
    if orbit:
        kind += f" (critical manifold of dimension {orbit})"
    o = ov[0]
    copies = []
    for image in _images(o, symmetries(params))[1:]:
        if not any(np.allclose(image, c, atol=1e-12) for c in [o, *copies]):
            copies.append(image)
    on_m = bool(np.all(np.abs(o[2:]) <= 1e-12))
    m_eigs = None
    if on_m:
        from .geometry import manifold_chart_jacobian

        kk, nn = np.clip(o[0], -1, 1), np.clip(o[1], -1, 1)
        jac = -manifold_chart_jacobian(params, np.arccos(kk), np.arccos(nn))
        # on M the state is (kappa, nu), or nu alone where the risk is key-free
        own = [i for i in (0, 1) if i in params.model.state_overlaps(params)]
        m_eigs = np.sort(np.linalg.eigvalsh(jac[np.ix_(own, own)]))
    risk = float(params.eps**2 + _risk_minus_noise(params, o))
    return CriticalPoint(
        overlaps=o,
        vectors=np.stack([k, v]),
        risk=risk,
        grad_norm=float(np.linalg.norm(G[0])),
        relative_gradient=float(_relative_gradient(ov, G, mag)[0]),
        hessian_eigenvalues=spec.eigenvalues,
        multiplicities=spec.multiplicities,
        eigenvalue_errors=spec.errors,
        index=index,
        nullity=nullity,
        orbit_dimension=orbit,
        span_dim=r,
        kind=kind,
        symmetry_copies=copies,
        below_range=below_range,
        on_manifold=on_m,
        manifold_eigenvalues=m_eigs,
        starts=starts,
    )


def _underflowed_signs(params: Params, tables, k, v, g, spec: HessianSpectrum):
    """Signs of transverse eigenvalues ``-A``, ``-B`` that underflowed to 0.0, from the scaled terms.

    Where ``e^{-x^2}`` is below the double range (huge ``lam^2 d``) the eigenvalue ``-A``
    at a point of ``span{k*, v*}`` with ``R_rho = 0`` (e.g. the optimum) is exactly 0.0 in
    double precision though not zero; its sign and a bound on ``log10 |.|`` come from
    the terms before the factor. Returns one sign per distinct eigenvalue (0: not decided here)
    and a description of what was decided.
    """
    signs = np.zeros(spec.eigenvalues.size)
    notes: list[str] = []
    if spec.span_dim != 2 or g[4] != 0:
        return signs, notes
    o = np.array([k[0], v[1], v[0], k[1], k @ v])
    a = params.lam * np.sqrt(params.d / 2.0)
    x2 = (a * o[0]) ** 2 / (1 + 2 * (params.lam * params.gamma) ** 2)
    if x2 <= 600.0:
        return signs, notes
    part = tables[0].scaled_part(o.reshape(5, 1))
    if part is None:
        return signs, notes
    gs = (part[0] @ part[1])[:, 0]
    for value, name in (
        (o[0] * gs[0] + o[3] * gs[3], "A"),
        (o[2] * gs[2] + o[1] * gs[1], "B"),
    ):
        eig = -(o[0] * g[0] + o[3] * g[3]) if name == "A" else -(o[2] * g[2] + o[1] * g[1])
        if eig != 0.0 or value == 0.0:
            continue
        i = int(np.argmin(np.abs(spec.eigenvalues)))  # the 0.0 of the merged spectrum
        signs[i] = -np.sign(value)
        log10 = np.log10(abs(value)) - x2 / np.log(10.0)
        sign = "<" if value > 0 else ">"
        notes.append(f"-{name} {sign} 0, |-{name}| <= 10^{log10:.1f} (below the double range)")
    return signs, notes


def _risk_minus_noise(params: Params, o: np.ndarray) -> float:
    """The risk minus ``eps**2`` at one overlap tuple (the engine's components summed)."""
    return float(engine.components(params, tuple(o)).sum())


# --- the full-space search ------------------------------------------------------------------


def _newton(tables, K: np.ndarray, V: np.ndarray, iterations: int, update=None, mu0=1e-3):
    """Damped Riemannian Newton on ``S^3 x S^3`` for a batch; returns the end points and
    the last pure Newton step length of each (its size decides convergence).

    The damping starts at `mu0` (relative to the largest eigenvalue), is divided by 10
    after every step that lowers the gradient and multiplied by 10 otherwise.
    ``update(n)``, if given, is told of every iteration; an early stop (all converged)
    reports the iterations it saved, so the count always ends at `iterations`. A row whose
    pure Newton step is below 1e-14 and whose relative gradient is below `_SETTLED` has
    converged and is not stepped again (both: at a degenerate point the Newton step ignores
    the flat directions, where the gradient may not be small yet)."""
    K, V = K.copy(), V.copy()
    n = K.shape[0]
    mu = np.full(n, mu0)
    ov, _g, G, Hr, _ab, mag = vector_derivatives(tables, K, V)
    gn = np.linalg.norm(G, axis=1)
    rel = _relative_gradient(ov, G, mag)
    newton_len = np.full(n, np.inf)
    active = np.ones(n, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for done in range(1, iterations + 1):
            i = np.flatnonzero(active)
            w, U = np.linalg.eigh(Hr[i])
            c = (G[i, None, :] @ U)[:, 0]
            wmax = np.abs(w).max(axis=1, keepdims=True)
            keep = np.abs(w) > 1e-14 * wmax
            safe_w = np.where(keep, w, 1.0)
            newton = -(U @ np.where(keep, c / safe_w, 0.0)[:, :, None])[:, :, 0]
            newton_len[i] = np.linalg.norm(newton, axis=1)
            moving = (newton_len[i] >= 1e-14) | (rel[i] >= _SETTLED)
            active[i[~moving]] = False
            i, newton, U, w, c, wmax, keep = (x[moving] for x in (i, newton, U, w, c, wmax, keep))
            if i.size:
                damp = np.where(keep, w * c / (w * w + (mu[i, None] * wmax) ** 2), 0.0)
                damped = -(U @ damp[:, :, None])[:, :, 0]
                xi = np.where((mu[i] == 0)[:, None], newton, damped)
                size = np.linalg.norm(xi, axis=1, keepdims=True)
                xi = xi * np.minimum(1.0, 0.5 / np.maximum(size, np.finfo(float).tiny))
                K2 = K[i] + xi[:, :4]
                V2 = V[i] + xi[:, 4:]
                K2 /= np.linalg.norm(K2, axis=1, keepdims=True)
                V2 /= np.linalg.norm(V2, axis=1, keepdims=True)
                ov2, _g2, G2, Hr2, _ab2, mag2 = vector_derivatives(tables, K2, V2)
                gn2 = np.linalg.norm(G2, axis=1)
                better = gn2 < gn[i]
                j = i[better]
                K[j], V[j], ov[j], G[j], Hr[j], gn[j] = (
                    K2[better],
                    V2[better],
                    ov2[better],
                    G2[better],
                    Hr2[better],
                    gn2[better],
                )
                rel[j] = _relative_gradient(ov2[better], G2[better], mag2[better])
                m = np.where(better, mu[i] / 10, np.clip(mu[i] * 10, 1e-8, 1e8))
                mu[i] = np.where(m < 1e-9, 0.0, m)
            converged = not active.any()
            if update is not None:
                update(iterations - done + 1 if converged else 1)
            if converged:
                break
    return K, V, ov, gn, rel, newton_len  # each row's as of its last accepted step


def _structured_starts(grid: int, m_points: np.ndarray | None = None) -> np.ndarray:
    """M's critical points, a grid on M, and points with ``k, v`` in ``span{k*, v*}``.

    M's points are the origin and the corners, then those of `m_points` (rows ``(kappa,
    nu)``, :func:`manifold_critical_overlaps`) that are neither: the search then starts
    on every critical point of M, and its list always holds them.
    """
    first = ORIGIN_AND_CORNERS
    if m_points is not None:
        extra = [row for row in m_points if not np.any(np.all(first[:, :2] == row, axis=1))]
        more = np.zeros((len(extra), 5))
        more[:, :2] = np.reshape(extra, (-1, 2))
        first = np.concatenate([first, more])
    t = np.linspace(-0.95, 0.95, grid)
    kk, nn = np.meshgrid(t, t)
    on_m = np.zeros((kk.size, 5))
    on_m[:, 0], on_m[:, 1] = kk.ravel(), nn.ravel()
    ang = np.linspace(0, 2 * np.pi, grid, endpoint=False) + 0.1
    a1, a2 = np.meshgrid(ang, ang)
    span = np.stack(
        [np.cos(a1), np.cos(a2), np.sin(a2), np.sin(a1), np.cos(a1 - a2)], axis=-1
    ).reshape(-1, 5)
    special = [[0, 0, 0, 0, 1.0], [0, 0, 0, 0, -1.0], [0, 0, 1, 1, 0], [0, 0, 1, -1, 0]]
    # r = 3: one vector in span{k*, v*}, the other leaving it by an angle b
    ang5 = np.linspace(0, 2 * np.pi, 5, endpoint=False) + 0.3
    tilt = np.array([0.4, 0.9, 1.3])
    a1, a2, b = (x.ravel() for x in np.meshgrid(ang5, ang5, tilt))
    c = np.cos(b)
    inplane = np.cos(a1) * np.cos(a2) * c + np.sin(a1) * np.sin(a2) * c  # k . v
    k_in = np.stack([np.cos(a1), c * np.sin(a2), c * np.cos(a2), np.sin(a1), inplane], axis=-1)
    v_in = np.stack([c * np.cos(a1), np.sin(a2), np.cos(a2), c * np.sin(a1), inplane], axis=-1)
    # one vector on the other's target (k = v*, or v = k*), the other on a half circle
    # leaving the targets' span: the families of the critical manifolds of dimension d - 3
    # (k = v*, v . k* = theta) that random starts reach rarely
    phi = np.linspace(0.0, np.pi, grid + 2)[1:-1]
    z = np.zeros_like(phi)
    k_on_v = np.stack([z, z, np.cos(phi), z + 1.0, z], axis=-1)
    v_on_k = np.stack([np.cos(phi), z, z + 1.0, z, np.cos(phi)], axis=-1)
    return np.concatenate(
        [first, on_m, span, np.array(special, float), k_in, v_in, k_on_v, v_on_k]
    )


def _random_starts(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    K = rng.standard_normal((n, 4))
    V = rng.standard_normal((n, 4))
    return K / np.linalg.norm(K, axis=1, keepdims=True), V / np.linalg.norm(
        V, axis=1, keepdims=True
    )


def critical_points(
    params: Params,
    where: str = "sphere",
    *,
    starts: int = 512,
    rng: np.random.Generator | int | None = 0,
    grid: int = 9,
    iterations: int = 200,
    tol: float = GRAD_TOL,
    progress=False,
) -> CriticalPoints:
    """Every critical point of the risk, on M (by proof) or on ``S^{d-1} x S^{d-1}`` (by search).

    Parameters
    ----------
    params : Params
    where : {"sphere", "manifold"}
        ``"manifold"``: the five critical points of the flow on M with the certificate
        of :func:`manifold_certificate`. ``"sphere"``: the full space (module docstring).
    starts : int
        Random starts, uniform on ``S^3 x S^3``, after the structured ones; ``0 <= starts <= 1e6``.
    rng : numpy.random.Generator or int or None
        Source (or seed) of the random starts.
    grid : int
        Size of the structured grids (``grid**2`` starts on M and in ``span{k*, v*}``);
        ``1 <= grid <= 1000``.
    iterations : int
        Newton iterations per start (damped, with a trust region of 0.5 radian);
        ``1 <= iterations <= MAX_ITERATIONS`` (1e5).
    tol : float
        A start ends at a critical point when its relative gradient (module docstring)
        is at most `tol` and its Newton step below ``1e-7`` radian.
    progress : bool or callable
        ``True`` shows a tqdm bar over the Newton iterations (all starts advance together);
        a callable is called with the number of iterations done since its last call.
        Unused for ``where="manifold"``.

    Every argument is checked whichever `where` (the manifold's uses none past it).

    Returns
    -------
    CriticalPoints
        Sorted by risk; each a :class:`CriticalPoint`.

    Raises
    ------
    ValueError
        Naming the argument, its constraint and the value given.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.critical import critical_points
    >>> on_m = critical_points(Params.paper(lam=0.1), "manifold")
    >>> [(p.overlaps[:2].tolist(), p.index) for p in on_m]  # one per symmetric pair
    [([1.0, 1.0], 0), ([0.0, 0.0], 2), ([1.0, -1.0], 797)]
    >>> full = critical_points(Params.paper(lam=0.1), starts=64)
    >>> [p.kind for p in full[:2]]  # the optimum, and a local minimum off M
    ['minimum', 'minimum (critical manifold of dimension 397)']
    """
    params = check_params(params)
    if not isinstance(where, str) or where not in ("sphere", "manifold"):
        raise ValueError(f"`where` must be 'sphere' or 'manifold', got {where!r}.")
    # every argument checked whichever `where`: one the manifold does not use is still
    # the user's, and a wrong one is a mistake to be told of, not ignored
    starts = positive_int(starts, "starts", allow_zero=True, upper=MAX_STARTS)
    grid = positive_int(grid, "grid", upper=1000)
    iterations = positive_int(iterations, "iterations", upper=MAX_ITERATIONS)
    tol = positive_real(tol, "tol")
    rng = random_generator(rng)
    progress = progress_option(progress)
    tables = _tables(params)
    if where == "manifold":
        pts = []
        group, seen = symmetries(params), []
        key_free = params.model.key_free(params)
        for row in manifold_critical_overlaps(params):
            o = np.zeros(5)
            o[:2] = row
            if key_free:  # every kappa is the same point: listed at k = k*
                o[0] = 1.0
            o = canonical(o, group)  # one per orbit: (1, -1) stands for (-1, 1)
            if any(np.array_equal(o, q) for q in seen):
                continue
            seen.append(o)
            kv = to_vectors(o.reshape(5, 1))[:, 0]
            pts.append(_classify(params, tables, kv[:4], kv[4:]))
        pts.sort(key=lambda p: p.risk)
        return CriticalPoints(pts, params, "manifold", manifold_certificate(params))
    structured = _structured_starts(grid, manifold_critical_overlaps(params))
    kv = to_vectors(structured.T.copy())
    K0 = np.concatenate([kv[:4].T, _random_starts(rng, starts)[0]]) if starts else kv[:4].T
    V0 = np.concatenate([kv[4:].T, _random_starts(rng, starts)[1]]) if starts else kv[4:].T
    start_ov = to_overlaps(np.concatenate([K0.T, V0.T])).T
    with Progress(progress, iterations, "critical", unit="iteration") as update:
        K, V, ov, gn, rel, step = _newton(tables, K0.copy(), V0.copy(), iterations, update)
    critical = (rel <= tol) & (step < 1e-7) & (span_dimension(K, V) <= params.d)
    if critical.any():
        critical[critical] = _resolved_on_folds(tables[0], K[critical], V[critical], tol)
    a = params.lam * np.sqrt(params.d / 2.0)
    x2 = (a * ov[:, 0]) ** 2 / (1 + 2 * (params.lam * params.gamma) ** 2)
    deep = critical & (x2 > 600.0)  # e^{-x^2} near or below underflow: decide before it
    if deep.any():
        critical[deep] = _gaussian_part_vanishes(params, tables[0], K[deep], V[deep], tol)
    key_free = params.model.key_free(params)
    if key_free:  # R(k, v) = R(v): one representative key, k = k*, for every end
        K = np.zeros_like(K)
        K[:, 0] = 1.0
        ov = to_overlaps(np.concatenate([K.T, V.T])).T
    reps: list[np.ndarray] = []
    members: list[list[int]] = []
    reached = np.full(len(K), -1)
    group = symmetries(params)
    for i in np.flatnonzero(critical):
        c = canonical(ov[i], group)
        for j, r in enumerate(reps):
            if np.max(np.abs(r - c)) <= 1e-6:
                members[j].append(i)
                reached[i] = j
                break
        else:
            reps.append(c)
            members.append([i])
            reached[i] = len(reps) - 1
    distinct = np.maximum.accumulate(np.where(reached >= 0, reached + 1, 0))
    points = []
    for idx in members:
        best = min(idx, key=lambda i: rel[i])
        k, v = K[best], V[best]
        target = canonical(ov[best], group)
        sign = group[int(np.argmin(np.abs(_images(ov[best], group) - target).max(axis=1)))]
        if sign[0] < 0:
            k, v = -k, -v
        if sign[2] * sign[0] < 0:  # (k, v) -> (S k, -S v), S = diag(1, -1, 1, 1)
            k, v = k * np.array([1, -1, 1, 1]), -(v * np.array([1, -1, 1, 1]))
        points.append(_classify(params, tables, k, v, starts=len(idx)))
    order = np.argsort([p.risk for p in points], kind="stable")
    points = [points[i] for i in order]
    remap = {int(old): new for new, old in enumerate(order)}
    reached = np.array([remap.get(int(r), -1) for r in reached])
    plateaus = [
        OptimizeResult(overlaps=ov[i], grad_norm=float(gn[i]), relative_gradient=float(rel[i]))
        for i in np.flatnonzero(~critical)
    ]
    report = SearchReport(
        starts=start_ov,
        reached=reached,
        distinct_after=distinct,
        structured=len(structured),
        iterations=iterations,
    )
    certificate = [
        f"{len(K)} starts ({len(structured)} structured, {starts} uniform on S^3 x S^3), "
        f"damped Riemannian Newton, {iterations} iterations each.",
        f"{len(points)} distinct critical points up to symmetry; the last new one "
        f"appeared at start {report.last_new}.",
        f"{len(plateaus)} starts ended off any critical point (plateaus or no convergence).",
    ]
    if key_free:
        certificate.append(
            "The risk does not depend on the key k (computed: dR/dkappa, dR/deta, dR/drho "
            "vanish to 1e-12 of the gradient's scale on M and off it): each point is listed "
            "at k = k* and stands for every k, a critical manifold S^{d-1} x {v's orbit}."
        )
    return CriticalPoints(points, params, "sphere", certificate, report, plateaus)


# --- the center-stable manifold check --------------------------------------------------------


@dataclass(frozen=True)
class MapSpectrum:
    """The Jacobian of one PGD step at a critical point, ``Dg = I - alpha Hess``.

    Attributes
    ----------
    alpha : float
    eigenvalues, multiplicities : ndarray
        ``1 - alpha h`` for each Hessian eigenvalue ``h``, with its multiplicity.
    unstable, center, stable : int
        Dimensions of the subspaces with ``|mu| > 1``, ``|mu| = 1`` (``h`` zero or
        ``2 / alpha`` within its error) and ``|mu| < 1``.
    local_diffeomorphism : bool
        No eigenvalue ``mu = 0`` (``h = 1 / alpha``).
    conclusion : str
        ``"strict saddle"`` (some ``h < 0``: unstable for the map), ``"step-size
        instability"`` (some ``h > 2 / alpha``), ``"stable"`` or ``"non-hyperbolic"``.
    """

    alpha: float
    eigenvalues: np.ndarray
    multiplicities: np.ndarray
    unstable: int
    center: int
    stable: int
    local_diffeomorphism: bool
    conclusion: str


def pgd_map_spectrum(point: CriticalPoint, alpha: float) -> MapSpectrum:
    """Eigenvalues of the PGD map's Jacobian at a critical point, and what they imply.

    Parameters
    ----------
    point : CriticalPoint
        From :func:`critical_points`.
    alpha : float
        Step size, ``0 < alpha <= 1e100`` (PGD's own bound: beyond, ``alpha h`` overflows).

    Returns
    -------
    MapSpectrum

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.critical import critical_points, pgd_map_spectrum
    >>> origin = [p for p in critical_points(Params.paper(lam=0.1), "manifold") if not p.overlaps.any()][0]
    >>> pgd_map_spectrum(origin, 4e-3).conclusion
    'strict saddle'
    """
    if not isinstance(point, CriticalPoint):
        raise TypeError(
            f"`point` must be a CriticalPoint (from critical_points), got {type(point).__name__}."
        )
    alpha = positive_real(alpha, "alpha", upper=MAX_ALPHA)
    h = np.asarray(point.hessian_eigenvalues)
    err = np.asarray(point.eigenvalue_errors)
    mult = np.asarray(point.multiplicities)
    mu = 1.0 - alpha * h
    zero = np.abs(h) <= err
    at_two = np.abs(h - 2.0 / alpha) <= err
    center = zero | at_two
    # decided on h, not on mu: 1 - alpha h rounds to 1 for an exponentially small h < 0
    unstable = ((h < 0) | (h > 2.0 / alpha)) & ~center
    stable = ~unstable & ~center
    if np.any(unstable & (h < 0)):
        conclusion = "strict saddle"
    elif np.any(unstable):
        conclusion = "step-size instability"
    elif np.any(center & ~zero) or (mult[zero].sum() > point.orbit_dimension):
        conclusion = "non-hyperbolic"
    else:
        conclusion = "stable"
    return MapSpectrum(
        alpha=alpha,
        eigenvalues=mu,
        multiplicities=mult,
        unstable=int(mult[unstable].sum()),
        center=int(mult[center].sum()),
        stable=int(mult[stable].sum()),
        local_diffeomorphism=bool(not np.any(np.abs(h - 1.0 / alpha) <= err)),
        conclusion=conclusion,
    )


# --- the Lipschitz constant of the Riemannian gradient ---------------------------------------


@dataclass(frozen=True)
class LipschitzBound:
    """Bounds on ``Lip(grad R) = sup ||Hess R||`` over ``S^{d-1} x S^{d-1}``.

    Attributes
    ----------
    upper : float
        Certified: interval enclosures of the Hessian on slabs of ``kappa``
        (:func:`hessian_norm_bound`).
    lower : float
        Attained: the largest ``||Hess R||`` met at the sample points and climbed to.
    lower_at : ndarray, shape (5,)
        Where the lower bound was attained.
    samples : int
    """

    upper: float
    lower: float
    lower_at: np.ndarray
    samples: int

    def step_condition(self, alpha: float) -> str:
        """Whether ``alpha < 1 / Lip``: ``"holds"``, ``"fails"`` or ``"undecided"``.

        Parameters
        ----------
        alpha : float

        Returns
        -------
        str
        """
        if alpha * self.upper < 1:
            return "holds"
        if alpha * self.lower >= 1:
            return "fails"
        return "undecided"


def lipschitz_bound(
    params: Params, *, samples: int = 2000, rng: np.random.Generator | int | None = 0
) -> LipschitzBound:
    """Certified upper and attained lower bounds on the Lipschitz constant of the Riemannian gradient.

    Upper: :func:`hessian_norm_bound`, interval enclosures of the Hessian's terms on
    slabs of ``kappa`` (within 3 % of the lower bound at the paper's ``d, L, gamma`` and
    ``lambda = 0.1``, 16 % at ``lambda = 0.9``). Certified for ``erf`` (closed forms); for
    a nonlinearity by quadrature the enclosures rest on the sups of its derivatives,
    which :func:`slr_theory.nonlinearity.moment_sups` samples: there the upper bound is
    checked, not proved. Lower: the largest spectral
    norm of the Riemannian Hessian met at the critical points of M, structured points (in
    ``span{k*, v*}`` and on M) and random points, the largest four then climbed to their
    local maxima (Nelder-Mead on ``S^3 x S^3``); the norm includes, for ``d > 4``, the
    block ``[[-A, R_rho], [R_rho, -B]]`` of the directions outside ``span{k, v, k*, v*}``.

    Parameters
    ----------
    params : Params
    samples : int
        Random points (uniform on ``S^3 x S^3``) for the lower bound; ``1 <= samples <= 1e7``.
    rng : numpy.random.Generator or int or None

    Returns
    -------
    LipschitzBound

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.critical import lipschitz_bound
    >>> b = lipschitz_bound(Params.paper(lam=0.1), samples=200)
    >>> bool(0 < b.lower <= b.upper)
    True
    """
    params = check_params(params)
    samples = positive_int(samples, "samples", upper=10**7)
    rng = random_generator(rng)
    t1, t2 = _tables(params)
    upper, _kappa = hessian_norm_bound(params)
    K, V = _random_starts(rng, samples)
    kv = to_vectors(np.concatenate([ORIGIN_AND_CORNERS, _structured_starts(12)]).T.copy())
    K = np.concatenate([kv[:4].T, K])
    V = np.concatenate([kv[4:].T, V])
    K /= np.linalg.norm(K, axis=1, keepdims=True)  # candidates: any unit vectors will do
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    norms, ov = _hessian_norms((t1, t2), K, V, params.d)
    # the largest norms met, each climbed to its local maximum on S^3 x S^3
    climbs = [_climb_hessian_norm((t1, t2), K[i], V[i], params.d) for i in np.argsort(-norms)[:4]]
    best, k, v = max(climbs, key=lambda c: c[0])
    at = to_overlaps(np.concatenate([k, v])[:, None])[:, 0]
    return LipschitzBound(float(upper), float(best), at, len(K))


def _x_scale(params: Params) -> float:
    """``a / sqrt(q) = lambda sqrt(d/2) / sqrt(1 + 2 lambda^2 gamma^2)``: ``x = a kappa / sqrt(q)``."""
    g = params.lam * params.gamma
    return float(params.lam * np.sqrt(params.d / 2.0) / np.sqrt(1.0 + 2.0 * g * g))


# Slabs of kappa for the certified bound: at least _MIN_SLABS, and x = a kappa / sqrt(q)
# moves by at most _SLAB_WIDTH across one, up to _MAX_SLABS.
_MIN_SLABS, _MAX_SLABS, _SLAB_WIDTH = 4096, 1 << 17, 1e-3


def hessian_norm_bound(params: Params) -> tuple[float, float]:
    """A certified ``sup ||Hess R||`` over ``S^{d-1} x S^{d-1}``, and the ``kappa`` of its slab.

    For a unit tangent ``xi = (a, b)``, ``|Hess R[xi, xi]| <= u^T |H| u + |A| t_a^2 +
    |B| t_b^2 + 2 |R_rho| t_a t_b`` with ``t_a = |a|``, ``t_b = |b|`` and
    ``|J xi| <= u = (t_a, t_b, t_a, t_b, t_a + t_b)`` entrywise; so ``||Hess R||`` is at
    most the largest eigenvalue of a 2 x 2 matrix of sups of ``|H_ij|``, ``|R_i|``, ``|A|``,
    ``|B|``. The sups are taken on slabs of ``kappa``: on each, every feature lies in the
    interval of :meth:`slr_theory.engine.RiskTable.enclosure`; the terms sharing a
    monomial in ``(nu, theta, eta, rho)`` are summed as intervals (their cancellations
    kept), and each monomial is bounded on the slab (``kappa^2 + theta^2 <= 1``,
    ``nu^2 + eta^2 <= 1``). The enclosures are exact up to rounding, which a relative
    margin of ``1e-9`` covers, for ``erf``; for a nonlinearity by quadrature they rest on
    sampled sups of its derivatives (:func:`slr_theory.nonlinearity.moment_sups`).

    Parameters
    ----------
    params : Params

    Returns
    -------
    bound : float
    kappa : float
        The centre of the slab where the bound is attained.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.critical import hessian_norm_bound
    >>> bound, kappa = hessian_norm_bound(Params.paper(lam=0.1))
    >>> print(f"{bound:.0f}")
    1144
    """
    params = check_params(params)
    tables = _tables(params)
    n = int(min(_MAX_SLABS, max(_MIN_SLABS, 2 * np.ceil(_x_scale(params) / _SLAB_WIDTH))))
    n += n % 2  # kappa = 0 is an edge: the even bases are tight on both sides
    edges = np.linspace(-1.0, 1.0, n + 1)
    best, where = -np.inf, 0.0
    for start in range(0, n, _SLAB_CHUNK):  # bounded memory: K features x 2 parts per slab
        top, at = _slab_bounds(tables, edges[start : start + _SLAB_CHUNK + 1])
        if top > best:
            best, where = top, at
    return float(best * (1.0 + 1e-9)), where


_SLAB_CHUNK = 4096


def _slab_bounds(tables, edges: np.ndarray) -> tuple[float, float]:
    """The largest bound of :func:`hessian_norm_bound` over the slabs between `edges`."""
    lo, hi = edges[:-1], edges[1:]
    kmin = np.where((lo < 0) & (hi > 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
    kmax = np.maximum(np.abs(lo), np.abs(hi))
    g = _row_sups(tables[0], lo, hi, kmin)
    h = _row_sups(tables[1], lo, hi, kmin)
    H = np.moveaxis(engine.hessian_matrices(h), 0, -1)  # (5, 5, n)
    theta = np.sqrt(np.maximum(0.0, 1.0 - kmin * kmin))
    A = np.hypot(kmax * g[0], theta * g[2]) + g[4]  # |kappa R_k + theta R_t + rho R_r|
    B = np.hypot(g[1], g[3]) + g[4]
    # (a.k*, a.v*) lies in a disk of radius t_a, (b.v*, b.k*) in one of radius t_b, and
    # |(J xi)_rho| <= t_a + t_b: each block of |H| is bounded by its norm on the disks
    ha, hb = np.hypot(H[0, 4], H[2, 4]), np.hypot(H[1, 4], H[3, 4])
    naa = _sym2_top(H[0, 0], H[2, 2], H[0, 2]) + 2 * ha + H[4, 4] + A
    nbb = _sym2_top(H[1, 1], H[3, 3], H[1, 3]) + 2 * hb + H[4, 4] + B
    nab = _norm2(H[0, 1], H[0, 3], H[2, 1], H[2, 3]) + ha + hb + H[4, 4] + g[4]
    top = _sym2_top(naa, nbb, nab)
    i = int(np.argmax(top))
    return float(top[i]), float(0.5 * (lo[i] + hi[i]))


def _row_sups(table, lo: np.ndarray, hi: np.ndarray, kmin: np.ndarray) -> np.ndarray:
    """``sup |row|`` of every row of `table` on each slab ``(rows, n)``."""
    enc = table.enclosure(lo, hi)
    C = table.C
    theta2 = np.maximum(0.0, 1.0 - kmin * kmin)
    groups: dict = {}
    for part in (0, 1):
        for c, e in enumerate(map(tuple, enc.exponents[part])):
            groups.setdefault(e, []).append((part, c))
    out = np.zeros((C.shape[0], lo.size))
    for (e_nu, e_theta, e_eta, _e_rho), members in groups.items():
        parts = np.array([p for p, _c in members])
        cols = np.array([c for _p, c in members])
        Cg = C[:, cols]
        mid = Cg @ enc.mid[parts, cols]
        rad = np.abs(Cg) @ enc.rad[parts, cols]
        # sup |nu^i eta^j| on nu^2 + eta^2 <= 1, |theta| <= sqrt(1 - kappa^2), |rho| <= 1
        disk = _disk_sup(e_nu, e_eta)
        out += disk * theta2 ** (0.5 * e_theta) * (np.abs(mid) + rad)
    return out


def _sym2_top(p, q, r):
    """The largest eigenvalue of ``[[p, r], [r, q]]`` (elementwise)."""
    return 0.5 * (p + q) + np.hypot(0.5 * (p - q), r)


def _norm2(p, q, r, t):
    """The spectral norm of ``[[p, q], [r, t]]`` (elementwise): the largest singular value."""
    s1 = np.hypot(p + t, q - r)
    s2 = np.hypot(p - t, q + r)
    return 0.5 * (s1 + s2)


def _disk_sup(i: int, j: int) -> float:
    """``sup |cos^i t sin^j t| = sqrt(i^i j^j / (i + j)^(i + j))`` (``0^0 = 1``)."""
    if i == 0 or j == 0:
        return 1.0
    return float(np.sqrt(i**i * j**j / (i + j) ** (i + j)))


def _hessian_norms(tables, K: np.ndarray, V: np.ndarray, d: int):
    """``||Hess R||`` at unit ``K, V`` ``(n, 4)`` on ``S^{d-1} x S^{d-1}``, and the overlaps.

    The spectral norm of the block inside ``R^4`` and, when ``d > 4``, of the block
    ``H_W = [[-A, R_rho], [R_rho, -B]]`` that every direction outside ``R^4`` carries.
    """
    ov, g, _G, Hr, AB, _m = vector_derivatives(tables, K, V)
    norms = np.abs(np.linalg.eigvalsh(Hr)).max(axis=1)
    if d > 4:
        A, B, r = AB[:, 0], AB[:, 1], g[:, 4]
        norms = np.maximum(norms, 0.5 * np.abs(A + B) + np.hypot(0.5 * (A - B), r))
    return norms, ov


def _climb_hessian_norm(tables, k: np.ndarray, v: np.ndarray, d: int):
    """Nelder-Mead ascent of ``||Hess R||`` from ``(k, v)``, normalising inside.

    Returns the norm reached (at least the start's) and its unit ``k, v``.
    """
    from scipy.optimize import minimize

    def f(x):
        nk, nv = np.linalg.norm(x[:4]), np.linalg.norm(x[4:])
        if nk == 0 or nv == 0:
            return 0.0
        return -float(_hessian_norms(tables, (x[:4] / nk)[None], (x[4:] / nv)[None], d)[0][0])

    x0 = np.concatenate([k, v])
    res = minimize(
        f, x0, method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12, "maxfev": 1500}
    )
    x = res.x  # the start is a vertex of the first simplex: never below it
    return -res.fun, x[:4] / np.linalg.norm(x[:4]), x[4:] / np.linalg.norm(x[4:])


# --- names ---------------------------------------------------------------------------------


def overlaps_text(overlaps, digits: int = 3) -> str:
    """Overlaps as text, ``(kappa, nu, theta, eta, rho)`` to `digits` decimals, no ``-0.000``.

    Parameters
    ----------
    overlaps : array_like, shape (5,)
    digits : int
        Decimals, ``0 <= digits <= 17``.

    Returns
    -------
    str

    Examples
    --------
    >>> overlaps_text([1, 1, -1e-9, 0, 0.62984])
    '(1.000, 1.000, 0.000, 0.000, 0.630)'
    """
    o = as_array(overlaps, "overlaps", allow_nan=False)
    if o.ndim != 1 or o.size == 0 or not np.all(np.isfinite(o)):
        raise ValueError(
            f"`overlaps` must be a non-empty 1-D array of finite numbers, got {overlaps!r}."
        )
    digits = positive_int(digits, "digits", allow_zero=True, upper=17)
    tiny = 0.5 * 10.0**-digits  # what rounds to zero is printed as zero, without a sign
    return "(" + ", ".join(f"{(0.0 if abs(x) < tiny else x):.{digits}f}" for x in o) + ")"


def describe(overlaps) -> str:
    """A critical point in words, from its overlaps.

    Parameters
    ----------
    overlaps : array_like, shape (5,)

    Returns
    -------
    str

    Examples
    --------
    >>> describe([1, 1, 0, 0, 0])
    '(k*, v*), the optimum'
    >>> describe([0, 0, 0.6298, 1, 0])
    'k = v*, v·k* = 0.630'
    >>> describe([0.302, 0.947, 0.321, -0.953, -0.806])
    'a point off M'
    >>> describe([0.7071, 1, 0, 0, 0])
    'the point of M at (κ, ν) = (0.707, 1.000)'
    """

    o = as_array(overlaps, "overlaps")
    if o.shape != (5,) or not np.all(np.isfinite(o)):
        raise ValueError(f"`overlaps` must be five finite numbers, got {overlaps!r}.")
    near = np.abs(o) > 1 - 1e-6
    zero = np.abs(o) < 1e-6
    sign = ["" if x > 0 else "−" for x in o]
    k, n, t, e, r = o
    if zero[2:].all():
        if near[0] and near[1]:
            if k > 0 and n > 0:
                return "(k*, v*), the optimum"
            return f"the corner ({sign[0]}k*, {sign[1]}v*)"
        if zero[0] and zero[1]:
            return "the origin of M (k, v ⊥ k*, v*)"
        return f"the point of M at (κ, ν) = ({k:.3f}, {n:.3f})"
    parts = []
    if near[0]:
        parts.append(f"k = {sign[0]}k*")
    elif near[3]:
        parts.append(f"k = {sign[3]}v*")
    if near[1]:
        parts.append(f"v = {sign[1]}v*")
    elif near[2]:
        parts.append(f"v = {sign[2]}k*")
    if near[4] and not parts:
        parts.append(f"k = {sign[4]}v")
    k_pinned, v_pinned = near[0] or near[3], near[1] or near[2]
    if k_pinned and not v_pinned:
        free = [f"v·k* = {t:.3f}" for _ in [0] if not zero[2]]
        free += [f"v·v* = {n:.3f}" for _ in [0] if not zero[1]]
        parts.append(", ".join(free) if free else "v ⊥ k*, v*")
    elif v_pinned and not k_pinned:
        free = [f"k·k* = {k:.3f}" for _ in [0] if not zero[0]]
        free += [f"k·v* = {e:.3f}" for _ in [0] if not zero[3]]
        parts.append(", ".join(free) if free else "k ⊥ k*, v*")
    if not parts:
        return "a point off M"
    return ", ".join(parts)


def manifold_kind(eigenvalues) -> str:
    """A critical point's kind for the flow on M, from its eigenvalues on M.

    Parameters
    ----------
    eigenvalues : array_like
        :attr:`slr_theory.CriticalPoint.manifold_eigenvalues`.

    Returns
    -------
    str
        ``"minimum"``, ``"maximum"`` or ``"saddle"``.

    Examples
    --------
    >>> from slr_theory import Params, critical_points
    >>> from slr_theory.critical import manifold_kind
    >>> on_m = critical_points(Params.paper(lam=0.9), "manifold")
    >>> [(q.overlaps[:2].tolist(), manifold_kind(q.manifold_eigenvalues)) for q in on_m]
    [([1.0, 1.0], 'minimum'), ([0.0, 0.0], 'saddle'), ([1.0, -1.0], 'maximum')]
    """
    e = as_array(eigenvalues, "eigenvalues")
    if e.ndim != 1 or e.size == 0 or not np.all(np.isfinite(e)):
        raise ValueError(
            f"`eigenvalues` must be a non-empty 1-D array of finite numbers, got {eigenvalues!r}."
        )
    if np.all(e > 0):
        return "minimum"
    if np.all(e < 0):
        return "maximum"
    return "saddle"
