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
tangent Hessian exactly on explicit coordinates in ``R^m``, ``m = min(d, 4)``,
and adds the ``d - m`` further copies of ``H_W`` as multiplicities.

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

__all__ = [
    "HessianSpectrum",
    "gradient_norms",
    "manifold_chart_jacobian",
    "manifold_chart_velocity",
    "overlap_velocity",
    "riemannian_hessian",
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
    """``d velocity / d overlaps`` and ``d velocity / d partials`` (each ``(5, 5)``) at one point.

    The Jacobian of the flow is ``Jo + Jg @ Hess_overlaps R``.

    Parameters
    ----------
    o, g : ndarray, shape ``(5,)``

    Returns
    -------
    Jo, Jg : ndarray, shape ``(5, 5)``
    """
    k, n, t, e, r = o
    rk, rn, rt, re, rr = g
    A = k * rk + e * re + r * rr
    B = t * rt + n * rn + r * rr
    dA_o = np.array([rk, 0, 0, re, rr])
    dA_g = np.array([k, 0, 0, e, r])
    dB_o = np.array([0, rn, rt, 0, rr])
    dB_g = np.array([0, n, t, 0, r])
    E = np.eye(5)
    Jo = np.array(
        [
            A * E[0] + k * dA_o - rr * E[2],
            B * E[1] + n * dB_o - rr * E[3],
            B * E[2] + t * dB_o - rr * E[0],
            A * E[3] + e * dA_o - rr * E[1],
            -rk * E[2] - re * E[1] - rt * E[0] - rn * E[3] + (A + B) * E[4] + r * (dA_o + dB_o),
        ]
    )
    Jg = np.array(
        [
            -E[0] - t * E[4] + k * dA_g,
            -E[1] - e * E[4] + n * dB_g,
            -E[2] - k * E[4] + t * dB_g,
            -E[3] - n * E[4] + e * dA_g,
            -t * E[0] - n * E[3] - k * E[2] - e * E[1] - 2 * E[4] + r * (dA_g + dB_g),
        ]
    )
    return Jo, Jg


@dataclass(frozen=True)
class HessianSpectrum:
    """The Riemannian Hessian of the risk at one point, with multiplicities for dimension ``d``.

    Attributes
    ----------
    eigenvalues : ndarray
        Distinct eigenvalues (within a relative tolerance), ascending.
    multiplicities : ndarray of int
        How many times each occurs; they sum to ``2 (d - 1)``.
    in_span : ndarray
        The eigenvalues of the tangent Hessian on explicit coordinates in ``R^m``,
        ``m = min(d, 4)`` (``2 (m - 1)`` values, each once).
    transverse : ndarray, shape (2,)
        The eigenvalues of ``H_W`` (module docstring).
    transverse_copies : int
        ``d - m``: the copies of ``H_W`` beyond those in ``in_span``.
    matrix : ndarray, shape ``(2 (m - 1), 2 (m - 1))``
        The tangent Hessian in an orthonormal basis of the tangent space in ``R^m``.
    """

    eigenvalues: np.ndarray
    multiplicities: np.ndarray
    in_span: np.ndarray
    transverse: np.ndarray
    transverse_copies: int
    matrix: np.ndarray


def _coordinates(o: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``k, v, k*, v*`` as explicit vectors in ``R^m``, ``m = min(d, 4)``."""
    from .trajectory import to_vectors

    kv = to_vectors(o.reshape(5, 1))[:, 0]
    vecs = np.stack([np.eye(4)[0], np.eye(4)[1], kv[:4], kv[4:]])
    m = min(d, 4)
    if m == 4:
        return vecs[2], vecs[3], vecs[0], vecs[1]
    _u, _s, vt = np.linalg.svd(vecs, full_matrices=True)
    Q = vt[:m].T  # the span of the four vectors has dimension <= d = m
    low = vecs @ Q
    return low[2], low[3], low[0], low[1]


def _tangent_basis(x: np.ndarray) -> np.ndarray:
    """Orthonormal basis ``(m, m - 1)`` of the tangent space of the sphere at ``x``."""
    m = x.size
    q, _ = np.linalg.qr(np.column_stack([x, np.eye(m)]))
    return q[:, 1:m]


def riemannian_hessian(params: Params, overlaps) -> HessianSpectrum:
    """The Riemannian Hessian of the risk on ``S^{d-1} x S^{d-1}`` at one feasible point.

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

    o = np.asarray(overlaps, dtype=np.float64)
    if o.shape != (5,):
        raise ValueError(f"`overlaps` must have shape (5,), got {o.shape}.")
    check_overlaps(*o, d=params.d)
    g = engine.gradient(params, tuple(o))
    H = engine.hessian(params, tuple(o))
    k, v, ks, vs = _coordinates(o, params.d)
    m = k.size
    # Jacobian of the overlaps in (k, v) in R^m x R^m, rows (kappa, nu, theta, eta, rho)
    z = np.zeros(m)
    J = np.array(
        [
            np.concatenate([ks, z]),
            np.concatenate([z, vs]),
            np.concatenate([z, ks]),
            np.concatenate([vs, z]),
            np.concatenate([v, k]),
        ]
    )
    eye = np.eye(m)
    euclid = J.T @ H @ J + g[4] * np.block([[0 * eye, eye], [eye, 0 * eye]])
    A = k @ (g[0] * ks + g[3] * vs + g[4] * v)
    B = v @ (g[2] * ks + g[1] * vs + g[4] * k)
    euclid = euclid - np.diag(np.concatenate([np.full(m, A), np.full(m, B)]))
    T = np.zeros((2 * m, 2 * (m - 1)))
    T[:m, : m - 1] = _tangent_basis(k)
    T[m:, m - 1 :] = _tangent_basis(v)
    matrix = T.T @ euclid @ T
    matrix = 0.5 * (matrix + matrix.T)
    in_span = np.linalg.eigvalsh(matrix)
    transverse = np.linalg.eigvalsh(np.array([[-A, g[4]], [g[4], -B]]))
    copies = params.d - m
    values = np.concatenate([in_span, transverse])
    counts = np.concatenate([np.ones(in_span.size, int), np.full(2, copies)])
    keep = counts > 0
    eig, mult = _merge(values[keep], counts[keep])
    return HessianSpectrum(eig, mult, in_span, transverse, copies, matrix)


def _merge(values: np.ndarray, counts: np.ndarray, rtol: float = 1e-9):
    order = np.argsort(values)
    values, counts = values[order], counts[order]
    scale = max(float(np.abs(values).max(initial=0.0)), np.finfo(float).tiny)
    out_v, out_c = [], []
    for x, c in zip(values, counts, strict=True):
        if out_v and abs(x - out_v[-1]) <= rtol * scale:
            out_c[-1] += int(c)
        else:
            out_v.append(float(x))
            out_c.append(int(c))
    return np.array(out_v), np.array(out_c)


def manifold_chart_velocity(params: Params, phi, psi) -> np.ndarray:
    """The flow on M in the angles ``phi = arccos kappa``, ``psi = arccos nu``, shape ``(..., 2)``.

    ``phi' = -dR_M(cos phi, cos psi)/dphi = sin(phi) R_kappa``, ``psi' = sin(psi) R_nu``:
    regular on the closed square ``[0, pi]^2``, corners included.

    Parameters
    ----------
    params : Params
    phi, psi : array_like
        Angles in ``[0, pi]`` (unchecked beyond broadcasting).

    Returns
    -------
    ndarray, shape ``(..., 2)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.geometry import manifold_chart_velocity
    >>> print(manifold_chart_velocity(Params.paper(), 0.0, 0.0).tolist())  # the corner (1, 1)
    [0.0, 0.0]
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
