r"""The product of spheres ``S^{d-1} x S^{d-1}`` in overlap coordinates.

The risk depends on ``(k, v)`` only through the overlaps
``(kappa, nu, theta, eta, rho) = (k.k*, v.v*, v.k*, k.v*, k.v)``. With ``R_x`` the
partials of the risk, the Euclidean gradients are
``grad_k R = R_kappa k* + R_eta v* + R_rho v`` and ``grad_v R = R_theta k* + R_nu v* + R_rho k``;
their tangent projections ``g - (g.k) k`` are the Riemannian gradient, and with
``A = k.grad_k R = kappa R_kappa + eta R_eta + rho R_rho`` and
``B = v.grad_v R = theta R_theta + nu R_nu + rho R_rho``:

.. math::

    \|\mathrm{grad}_k\|^2 &= R_\kappa^2 + R_\eta^2 + R_\rho^2 + 2\theta R_\kappa R_\rho
                             + 2\nu R_\eta R_\rho - A^2, \\
    \|\mathrm{grad}_v\|^2 &= R_\theta^2 + R_\nu^2 + R_\rho^2 + 2\kappa R_\theta R_\rho
                             + 2\eta R_\nu R_\rho - B^2.

The gradient flow of the vectors closes on the overlaps (:func:`overlap_velocity`).

**Hessian.** Let ``S = span{k, v, k*, v*}``, ``r = dim S``. The Riemannian Hessian
``Hess R [xi, xi] = D^2 R [xi, xi] - A |a|^2 - B |b|^2`` (``xi = (a, b)`` tangent) is
block diagonal: a block on the ``2 (r - 1)`` tangent directions inside ``S``, and
``d - r`` identical copies of

.. math:: H_W = \begin{pmatrix} -A & R_\rho \\ R_\rho & -B \end{pmatrix}

for ``k -> k + a u``, ``v -> v + b u`` with a unit ``u`` orthogonal to ``S`` (only ``rho``
changes, at second order, by ``a b``). :func:`riemannian_hessian` computes the
in-span block on explicit coordinates in ``R^4`` and ``H_W`` in closed form, with
multiplicity ``d - r``.

**Charts on M.** On the invariant manifold ``theta = eta = rho = 0`` the angles
``phi = arccos kappa``, ``psi = arccos nu`` are arc length along great circles, so
the flow on M is the Euclidean gradient flow of ``R_M(cos phi, cos psi)``; these
coordinates are regular on the whole closed square, corners included
(:func:`manifold_chart_velocity`, :func:`manifold_chart_jacobian`), where the chart
``(kappa, nu)`` is singular.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import engine
from .params import Params
from .trajectory import to_overlaps
from .validate import as_array, unit_vectors

__all__ = [
    "HessianSpectrum",
    "gradient_norms",
    "hessian_form",
    "manifold_chart_jacobian",
    "manifold_chart_velocity",
    "overlap_velocity",
    "riemannian_gradient",
    "riemannian_hessian",
    "span_dimension",
    "spectrum",
    "transverse_eigenvalues",
    "vector_derivatives",
    "velocity_partials",
]


def gradient_norms(overlaps, grad) -> np.ndarray:
    """``(|grad_k R|, |grad_v R|)`` of the Riemannian gradient, from overlaps and partials.

    Parameters
    ----------
    overlaps, grad : array_like, shape ``(..., 5)``
        Overlaps and the partials of the risk there (e.g. :func:`slr_theory.risk_grad`).

    Returns
    -------
    ndarray, shape ``(..., 2)``

    Examples
    --------
    >>> from slr_theory import Params, risk_grad
    >>> from slr_theory.geometry import gradient_norms
    >>> p = Params.paper()
    >>> print(gradient_norms([1, 1, 0, 0, 0], risk_grad(p, 1, 1)).tolist())  # the optimum
    [0.0, 0.0]
    """
    k, n, t, e, r = np.moveaxis(np.asarray(overlaps, dtype=np.float64), -1, 0)
    rk, rn, rt, re, rr = np.moveaxis(np.asarray(grad, dtype=np.float64), -1, 0)
    A = k * rk + e * re + r * rr
    B = t * rt + n * rn + r * rr
    gk = rk * rk + re * re + rr * rr + 2 * t * rk * rr + 2 * n * re * rr - A * A
    gv = rt * rt + rn * rn + rr * rr + 2 * k * rt * rr + 2 * e * rn * rr - B * B
    return np.sqrt(np.maximum(np.stack([gk, gv], axis=-1), 0.0))


def overlap_velocity(o: np.ndarray, g: np.ndarray) -> np.ndarray:
    r"""The overlaps' velocity under the gradient flow, from overlaps and partials ``(5, ...)``.

    .. math::

        \kappa' &= -(R_\kappa + \theta R_\rho - A\kappa), &
        \nu' &= -(R_\nu + \eta R_\rho - B\nu), \\
        \theta' &= -(R_\theta + \kappa R_\rho - B\theta), &
        \eta' &= -(R_\eta + \nu R_\rho - A\eta), \\
        \rho' &= -(\theta R_\kappa + \nu R_\eta + R_\rho - A\rho)
                -(\kappa R_\theta + \eta R_\nu + R_\rho - B\rho).

    Parameters
    ----------
    o, g : ndarray, shape ``(5, ...)``
        Overlaps and partials, first axis in :data:`slr_theory.OVERLAP_NAMES` order.

    Returns
    -------
    ndarray, shape ``(5, ...)``
    """
    k, n, t, e, r = o
    rk, rn, rt, re, rr = g
    A = k * rk + e * re + r * rr
    B = t * rt + n * rn + r * rr
    return np.array(
        [
            -(rk + t * rr - A * k),
            -(rn + e * rr - B * n),
            -(rt + k * rr - B * t),
            -(re + n * rr - A * e),
            -(t * rk + n * re + rr - A * r) - (k * rt + e * rn + rr - B * r),
        ]
    )


def velocity_partials(o: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``d velocity / d overlaps`` and ``d velocity / d partials`` at one point or a batch.

    The Jacobian of the flow is ``Jo + Jg @ Hess_overlaps R``.

    Parameters
    ----------
    o, g : ndarray, shape ``(5, ...)``
        Overlaps and partials, first axis in :data:`slr_theory.OVERLAP_NAMES` order.

    Returns
    -------
    Jo, Jg : ndarray, shape ``(..., 5, 5)``
    """
    o = np.asarray(o, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    k, n, t, e, r = o
    rk, rn, rt, re, rr = g
    zero = np.zeros_like(k * rk)
    A = k * rk + e * re + r * rr
    B = t * rt + n * rn + r * rr
    dA_o = np.stack([rk + zero, zero, zero, re + zero, rr + zero], axis=-1)
    dB_o = np.stack([zero, rn + zero, rt + zero, zero, rr + zero], axis=-1)
    dA_g = np.stack([k + zero, zero, zero, e + zero, r + zero], axis=-1)
    dB_g = np.stack([zero, n + zero, t + zero, zero, r + zero], axis=-1)

    def rows(dA, dB):  # d(x * A or B)/d(.) for the rows (kappa, nu, theta, eta, rho)
        return np.stack(
            [
                c[..., None] * dd
                for c, dd in zip(
                    (k + zero, n + zero, t + zero, e + zero, r + zero),
                    (dA, dB, dB, dA, dA + dB),
                    strict=True,
                )
            ],
            axis=-2,
        )

    Jo = rows(dA_o, dB_o)
    Jo[..., 0, 0] += A
    Jo[..., 0, 2] -= rr
    Jo[..., 1, 1] += B
    Jo[..., 1, 3] -= rr
    Jo[..., 2, 2] += B
    Jo[..., 2, 0] -= rr
    Jo[..., 3, 3] += A
    Jo[..., 3, 1] -= rr
    Jo[..., 4, 2] -= rk
    Jo[..., 4, 1] -= re
    Jo[..., 4, 0] -= rt
    Jo[..., 4, 3] -= rn
    Jo[..., 4, 4] += A + B
    Jg = rows(dA_g, dB_g)
    for i in range(4):
        Jg[..., i, i] -= 1.0
    Jg[..., 0, 4] -= t
    Jg[..., 1, 4] -= e
    Jg[..., 2, 4] -= k
    Jg[..., 3, 4] -= n
    Jg[..., 4, 0] -= t
    Jg[..., 4, 3] -= n
    Jg[..., 4, 2] -= k
    Jg[..., 4, 1] -= e
    Jg[..., 4, 4] -= 2.0
    return Jo, Jg


@dataclass(frozen=True)
class HessianSpectrum:
    """The Riemannian Hessian of the risk at one point, with multiplicities for dimension ``d``.

    Attributes
    ----------
    eigenvalues : ndarray
        Distinct eigenvalues (equal within their error estimates), ascending.
    multiplicities : ndarray of int
        How many times each occurs; they sum to ``2 (d - 1)``.
    errors : ndarray
        An error estimate of each eigenvalue (rounding of its entries); an
        eigenvalue with ``|h| <= error`` is numerically zero.
    in_span : ndarray
        The ``2 (r - 1)`` eigenvalues of the block on the tangent directions inside
        ``span{k, v, k*, v*}`` (``r`` its dimension), each once.
    transverse : ndarray, shape (2,)
        The eigenvalues of ``H_W`` (module docstring), each ``d - r`` times.
    span_dim : int
        ``r``.
    matrix : ndarray, shape ``(2 (r - 1), 2 (r - 1))``
        The in-span block in an orthonormal basis of those tangent directions.
    """

    eigenvalues: np.ndarray
    multiplicities: np.ndarray
    errors: np.ndarray
    in_span: np.ndarray
    transverse: np.ndarray
    span_dim: int
    matrix: np.ndarray


_E1, _E2 = np.eye(4)[0], np.eye(4)[1]


def vector_derivatives(tables, K: np.ndarray, V: np.ndarray):
    """Riemannian gradient and Hessian at unit vectors ``K, V`` ``(n, 4)`` (``k* = e1``, ``v* = e2``).

    The one implementation of the projected-gradient algebra on explicit
    coordinates: ``grad = P (grad_k R, grad_v R)`` and
    ``Hess = P (J^T H J + R_rho [[0, I], [I, 0]] - diag(A I, B I)) P`` with ``J`` the
    Jacobian of the overlaps, ``H`` their Hessian and ``P`` the tangent projection.

    Parameters
    ----------
    tables : pair of tables
        Of orders 1 and 2 (:func:`slr_theory.engine.table`).
        The engine's tables of orders 1 and 2 at one temperature.
    K, V : ndarray, shape ``(n, 4)``
        Unit vectors (unchecked).

    Returns
    -------
    overlaps : ndarray, shape ``(n, 5)``
    grad : ndarray, shape ``(n, 5)``
        The partials of the risk in the overlaps.
    G : ndarray, shape ``(n, 8)``
        The Riemannian gradient (``k`` part, then ``v`` part).
    Hr : ndarray, shape ``(n, 8, 8)``
        The Riemannian Hessian as a symmetric matrix on ``R^8`` (zero on the normals).
    AB : ndarray, shape ``(n, 2)``
        ``A = k . grad_k R`` and ``B = v . grad_v R``.
    magnitudes : ndarray, shape ``(n, 5)``
        The size of the terms each partial is made of (``|C|`` times the features'
        sizes, :class:`slr_theory.engine.RiskTable`): the scale
        against which a partial that vanishes by cancellation is zero.
    """
    n = K.shape[0]
    ov = to_overlaps(np.concatenate([K.T, V.T]))
    phi, size = tables[0].features_and_sizes(ov)  # one evaluation of the features
    g = (tables[0].C @ phi).T
    magnitudes = (np.abs(tables[0].C) @ size).T
    H = engine.hessian_matrices(tables[1](ov))
    G, A, B = riemannian_gradient(K, V, g)
    J = np.zeros((n, 5, 8))
    J[:, 0, 0] = J[:, 1, 5] = J[:, 2, 4] = J[:, 3, 1] = 1.0
    J[:, 4, :4], J[:, 4, 4:] = V, K
    E = np.swapaxes(J, 1, 2) @ (H @ J)
    eye = np.eye(4)
    E[:, :4, 4:] += g[:, 4, None, None] * eye
    E[:, 4:, :4] += g[:, 4, None, None] * eye
    E[:, :4, :4] -= A[:, None, None] * eye
    E[:, 4:, 4:] -= B[:, None, None] * eye
    P = np.zeros((n, 8, 8))
    P[:, :4, :4] = eye - K[:, :, None] * K[:, None, :]
    P[:, 4:, 4:] = eye - V[:, :, None] * V[:, None, :]
    Hr = P @ E @ P
    AB = np.stack([A, B], axis=1)
    return ov.T, g, G, 0.5 * (Hr + np.swapaxes(Hr, 1, 2)), AB, magnitudes


def riemannian_gradient(K: np.ndarray, V: np.ndarray, g: np.ndarray):
    """``(grad_k, grad_v)`` stacked ``(n, 8)`` from unit vectors ``(n, 4)`` and partials ``(n, 5)``.

    ``grad_k = R_kappa k* + R_eta v* + R_rho v - A k`` with ``A = k . (...)``, and likewise
    for ``v`` (``k* = e1``, ``v* = e2``). Linear in the partials.

    Parameters
    ----------
    K, V : ndarray, shape ``(n, 4)``
    g : ndarray, shape ``(n, 5)``

    Returns
    -------
    G : ndarray, shape ``(n, 8)``
    A, B : ndarray, shape ``(n,)``
    """
    gk = g[:, 0, None] * _E1 + g[:, 3, None] * _E2 + g[:, 4, None] * V
    gv = g[:, 2, None] * _E1 + g[:, 1, None] * _E2 + g[:, 4, None] * K
    A = np.sum(gk * K, axis=1)
    B = np.sum(gv * V, axis=1)
    return np.concatenate([gk - A[:, None] * K, gv - B[:, None] * V], axis=1), A, B


def span_dimension(K: np.ndarray, V: np.ndarray, tol: float = 1e-8) -> np.ndarray:
    """``r = dim span{k, v, k*, v*}`` for unit vectors ``(n, 4)`` (singular values above `tol`).

    Parameters
    ----------
    K, V : ndarray, shape ``(n, 4)``
    tol : float

    Returns
    -------
    ndarray of int, shape ``(n,)``
    """
    perp = np.stack([K[:, 2:], V[:, 2:]], axis=1)  # components orthogonal to k*, v*
    sv = np.linalg.svd(perp, compute_uv=False)
    return 2 + np.sum(sv > tol, axis=1)


def transverse_eigenvalues(A, B, R_rho) -> np.ndarray:
    """Eigenvalues of ``H_W = [[-A, R_rho], [R_rho, -B]]``, ascending, the small one without cancellation.

    Parameters
    ----------
    A, B, R_rho : float

    Returns
    -------
    ndarray, shape (2,)
    """
    if R_rho == 0:
        return np.sort(np.array([-A, -B], dtype=float))
    half = -(A + B) / 2
    rad = np.hypot((A - B) / 2, R_rho)
    big = half + np.copysign(rad, half) if half != 0 else rad
    small = (A * B - R_rho * R_rho) / big
    return np.sort(np.array([big, small]))


def riemannian_hessian(params: Params, overlaps) -> HessianSpectrum:
    """The Riemannian Hessian of the risk on ``S^{d-1} x S^{d-1}`` at one feasible point.

    The block on the ``2 (r - 1)`` tangent directions inside ``span{k, v, k*, v*}`` is
    diagonalised numerically; ``H_W`` in closed form, so that an exponentially small
    eigenvalue (e.g. at the optimum when ``erf`` saturates) keeps its sign and digits.

    Parameters
    ----------
    params : Params
    overlaps : array_like, shape ``(5,)``
        Feasible overlaps (validated here).

    Returns
    -------
    HessianSpectrum

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.geometry import riemannian_hessian
    >>> h = riemannian_hessian(Params.paper(lam=0.1), [1.0, 1.0, 0.0, 0.0, 0.0])
    >>> int(h.multiplicities.sum()), bool(h.eigenvalues.min() > 0)  # the optimum: a minimum
    (798, True)
    """
    from .params import check_overlaps
    from .trajectory import to_vectors

    o = as_array(overlaps, "overlaps")
    if o.shape != (5,):
        raise ValueError(f"`overlaps` must have shape (5,), got {o.shape}.")
    o = np.array(check_overlaps(*o, d=params.d), dtype=np.float64)  # projected
    kv = to_vectors(o.reshape(5, 1))[:, 0]
    K, V = kv[:4][None], kv[4:][None]
    tables = (engine.table(params, params.lam, 1), engine.table(params, params.lam, 2))
    return spectrum(params.d, K[0], V[0], *_at(tables, K, V))


def _at(tables, K, V):
    _ov, g, _G, Hr, AB, m = vector_derivatives(tables, K, V)
    return g[0], Hr[0], AB[0], m[0]


def spectrum(
    d: int, k: np.ndarray, v: np.ndarray, g: np.ndarray, Hr: np.ndarray, AB, magnitudes=None
) -> HessianSpectrum:
    """:class:`HessianSpectrum` from the output of :func:`vector_derivatives` at one point.

    Parameters
    ----------
    d : int
        The dimension (multiplicity of ``H_W`` is ``d - r``).
    k, v : ndarray, shape (4,)
    g : ndarray, shape (5,)
        Partials of the risk.
    Hr : ndarray, shape (8, 8)
    AB : sequence of two floats
    magnitudes : ndarray, shape (5,), optional
        Sizes of the terms of each partial (:func:`vector_derivatives`), for the error
        estimates; default ``|g|``.

    Returns
    -------
    HessianSpectrum
    """
    eps = np.finfo(float).eps
    r = int(span_dimension(k[None], v[None])[0])
    basis = np.linalg.svd(np.stack([_E1, _E2, k, v], axis=1), full_matrices=False)[0][:, :r]
    tk = _tangent_in(basis, k)
    tv = _tangent_in(basis, v)
    T = np.zeros((8, tk.shape[1] + tv.shape[1]))
    T[:4, : tk.shape[1]] = tk
    T[4:, tk.shape[1] :] = tv
    block = T.T @ Hr @ T
    block = 0.5 * (block + block.T)
    in_span = np.linalg.eigvalsh(block) if block.size else np.zeros(0)
    A, B = float(AB[0]), float(AB[1])
    kappa, nu, theta, eta, rho = k[0], v[1], v[0], k[1], float(k @ v)
    m = np.abs(g) if magnitudes is None else np.asarray(magnitudes)
    a_scale = abs(kappa) * m[0] + abs(eta) * m[3] + abs(rho) * m[4]
    b_scale = abs(theta) * m[2] + abs(nu) * m[1] + abs(rho) * m[4]
    transverse = transverse_eigenvalues(A, B, float(g[4]))
    r_rho = abs(float(g[4]))
    r_rho_scale = float(m[4])
    if r_rho == 0:  # H_W = diag(-A, -B): each eigenvalue carries the error of its own terms
        pairs = sorted([(-A, a_scale), (-B, b_scale)])
        err_w = 1e3 * eps * np.array([pairs[0][1], pairs[1][1]])
    else:
        big = float(transverse[np.argmax(np.abs(transverse))])
        err_big = 1e3 * eps * (a_scale + b_scale + r_rho_scale)
        # the small eigenvalue is det / big: where big is itself zero within its error
        # (H_W = 0 up to rounding, A = B = R_rho = 0 in exact arithmetic), so is det / big
        err_small = (
            1e3 * eps * (a_scale * b_scale + r_rho_scale * r_rho_scale) / max(abs(big), err_big)
        )
        err_w = np.array(
            [err_small, err_big]
            if abs(transverse[0]) <= abs(transverse[1])
            else [err_big, err_small]
        )
    err_in = 1e3 * eps * max(float(np.abs(Hr).max()), np.finfo(float).tiny)
    copies = d - r
    values = np.concatenate([in_span, transverse if copies > 0 else np.zeros(0)])
    counts = np.concatenate(
        [np.ones(in_span.size, int), np.full(2 if copies > 0 else 0, copies, dtype=int)]
    )
    errors = np.concatenate([np.full(in_span.size, err_in), err_w if copies > 0 else np.zeros(0)])
    eig, mult, err = _merge(values, counts, errors)
    return HessianSpectrum(eig, mult, err, in_span, transverse, r, block)


def _tangent_in(basis: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the tangent directions at ``x`` inside ``span(basis)``."""
    proj = basis - np.outer(x, x @ basis)
    u, s, _ = np.linalg.svd(proj, full_matrices=False)
    return u[:, s > 1e-8]


def _merge(values: np.ndarray, counts: np.ndarray, errors: np.ndarray):
    order = np.argsort(values)
    values, counts, errors = values[order], counts[order], errors[order]
    out_v, out_c, out_e = [], [], []
    for x, c, e in zip(values, counts, errors, strict=True):
        if out_v and abs(x - out_v[-1]) <= max(e, out_e[-1]) + 1e-12 * abs(x):
            out_c[-1] += int(c)
            out_e[-1] = max(out_e[-1], float(e))
        else:
            out_v.append(float(x))
            out_c.append(int(c))
            out_e.append(float(e))
    return np.array(out_v), np.array(out_c), np.array(out_e)


def _tangent(x, name: str, base: np.ndarray) -> np.ndarray:
    """A finite vector of ``R^d`` orthogonal to the unit vector `base` (within 1e-10)."""
    x = as_array(x, name, allow_nan=False)
    if x.shape != base.shape:
        raise ValueError(f"`{name}` must have shape {base.shape}, got {x.shape}.")
    dot = float(x @ base)
    if abs(dot) > 1e-10 * max(1.0, float(np.linalg.norm(x))):
        raise ValueError(
            f"`{name}` must be tangent (orthogonal to its base vector), got dot {dot!r}."
        )
    return x


def hessian_form(params: Params, k, v, k_star, v_star, a, b) -> float:
    """The Riemannian Hessian's quadratic form ``Hess R[(a, b), (a, b)]`` at explicit vectors in ``R^d``.

    ``D^2 R[xi, xi] - A |a|^2 - B |b|^2`` with ``D^2 R[xi, xi] = delta^T H delta + 2 R_rho a.b``,
    ``delta = (a.k*, b.v*, b.k*, a.v*, a.v + k.b)`` the overlaps' first-order change:
    the second derivative of the risk along the geodesic through ``(k, v)`` with
    velocity ``(a, b)``.

    Parameters
    ----------
    params : Params
    k, v, k_star, v_star : array_like, shape ``(d,)``
        Unit vectors; ``k*`` orthogonal to ``v*``.
    a, b : array_like, shape ``(d,)``
        Tangent directions, ``a . k = b . v = 0``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.geometry import hessian_form
    >>> e = np.eye(6)
    >>> q = hessian_form(Params(d=6, L=3, lam=0.5, gamma=1.0), e[0], e[1], e[0], e[1], e[4], 0 * e[0])
    >>> bool(q > 0)  # at the optimum, moving k out of the span costs risk
    True
    """
    k, v, ks, vs = (
        unit_vectors(x, name, params.d)
        for name, x in (("k", k), ("v", v), ("k_star", k_star), ("v_star", v_star))
    )
    if abs(float(ks @ vs)) > 1e-10:
        raise ValueError(f"`k_star` and `v_star` must be orthogonal, got {float(ks @ vs)!r}.")
    a, b = (_tangent(x, name, base) for name, x, base in (("a", a, k), ("b", b, v)))
    ov = (k @ ks, v @ vs, v @ ks, k @ vs, k @ v)
    g = engine.gradient(params, ov)
    H = engine.hessian(params, ov)
    delta = np.array([a @ ks, b @ vs, b @ ks, a @ vs, a @ v + k @ b])
    A = ov[0] * g[0] + ov[3] * g[3] + ov[4] * g[4]
    B = ov[2] * g[2] + ov[1] * g[1] + ov[4] * g[4]
    return float(delta @ H @ delta + 2 * g[4] * (a @ b) - A * (a @ a) - B * (b @ b))


def manifold_chart_velocity(params: Params, phi, psi) -> np.ndarray:
    """The flow on M in the angles ``phi = arccos kappa``, ``psi = arccos nu``, shape ``(..., 2)``.

    ``phi' = -dR_M(cos phi, cos psi)/dphi = sin(phi) R_kappa``, ``psi' = sin(psi) R_nu``:
    regular on the closed square ``[0, pi]^2``, corners included.

    Parameters
    ----------
    params : Params
    phi, psi : array_like
        Angles in ``[0, pi]``. Unchecked beyond broadcasting: a building block of
        :func:`slr_theory.landscape.separatrix` and the chart's RK4 loops.

    Returns
    -------
    ndarray, shape ``(..., 2)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.geometry import manifold_chart_velocity
    >>> print(manifold_chart_velocity(Params.paper(), 0.0, 0.0).tolist())  # the corner (1, 1)
    [-0.0, -0.0]
    """
    phi, psi = np.broadcast_arrays(np.asarray(phi, float), np.asarray(psi, float))
    g = engine.gradient(params, (np.cos(phi), np.cos(psi), 0.0, 0.0, 0.0))
    return np.stack([np.sin(phi) * g[..., 0], np.sin(psi) * g[..., 1]], axis=-1)


def manifold_chart_jacobian(params: Params, phi: float, psi: float) -> np.ndarray:
    """Jacobian ``(2, 2)`` of :func:`manifold_chart_velocity`: minus the Hessian of ``R_M`` in the angles.

    ``d phi'/d phi = cos(phi) R_kappa - sin(phi)^2 R_kappa,kappa`` and so on; at a
    corner it is ``diag(cos(phi) R_kappa, cos(psi) R_nu)``, the geodesic rates.

    Parameters
    ----------
    params : Params
    phi, psi : float
        Angles in ``[0, pi]`` (unchecked, like :func:`manifold_chart_velocity`).

    Returns
    -------
    ndarray, shape ``(2, 2)``, symmetric
    """
    k, n = np.cos(phi), np.cos(psi)
    sp, ss = np.sin(phi), np.sin(psi)
    g = engine.gradient(params, (k, n, 0.0, 0.0, 0.0))
    h = engine.hessian(params, (k, n, 0.0, 0.0, 0.0))
    off = -sp * ss * h[0, 1]
    return np.array(
        [
            [k * g[0] - sp * sp * h[0, 0], off],
            [off, n * g[1] - ss * ss * h[1, 1]],
        ]
    )
