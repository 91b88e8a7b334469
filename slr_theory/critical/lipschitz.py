"""The PGD map's spectrum at a point and the Lipschitz bound of the gradient over the feasible set (the theorem's step condition)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import engine
from ..geometry import vector_derivatives
from ..manifold import ORIGIN_AND_CORNERS
from ..params import Params, check_params
from ..trajectory import MAX_ALPHA, to_overlaps, to_vectors
from ..validate import positive_int, positive_real, random_generator
from .classify import gradient_tables
from .locate import random_starts, structured_starts
from .points import CriticalPoint

__all__ = [
    "LipschitzBound",
    "MapSpectrum",
    "hessian_norm_bound",
    "lipschitz_bound",
    "pgd_map_spectrum",
]


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
    t1, t2 = gradient_tables(params)
    upper, _kappa = hessian_norm_bound(params)
    K, V = random_starts(rng, samples)
    kv = to_vectors(np.concatenate([ORIGIN_AND_CORNERS, structured_starts(12)]).T.copy())
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
    tables = gradient_tables(params)
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
