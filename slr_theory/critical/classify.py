"""A critical point classified: the Riemannian Hessian's inertia, where the gradient's Gaussian part underflows, and the certificate on M."""

from __future__ import annotations

import numpy as np

from .. import engine
from ..geometry import HessianSpectrum, riemannian_gradient, spectrum, vector_derivatives
from ..params import Params, check_params
from ..trajectory import to_overlaps
from ..validate import unit_vectors
from .points import CriticalPoint
from .symmetry import orbit_images, symmetries

__all__ = ["classify", "manifold_certificate"]


def relative_gradient(ov: np.ndarray, G: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``max(|grad_k| / scale_k, |grad_v| / scale_v)``: zero at a critical point, O(1) on a plateau."""
    norms = np.stack([tangent_norm(G[:, :4]), tangent_norm(G[:, 4:])], axis=1)
    return (norms / _grad_scales(ov, m)).max(axis=1)


def tangent_norm(x: np.ndarray) -> np.ndarray:
    """Row norms without underflow of the squares (tiny gradients are the point here)."""
    big = np.abs(x).max(axis=1, keepdims=True)
    safe = np.where(big > 0, big, 1.0)
    return big[:, 0] * np.linalg.norm(x / safe, axis=1)


def _grad_scales(ov: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Sizes ``(n, 2)`` of the terms of ``grad_k = R_kappa k* + R_eta v* + R_rho v - A k``
    and of ``grad_v``, from the term magnitudes ``m`` of the partials."""
    a = np.abs(ov)
    sk = (1 + a[:, 0]) * m[:, 0] + (1 + a[:, 3]) * m[:, 3] + (1 + a[:, 4]) * m[:, 4]
    sv = (1 + a[:, 2]) * m[:, 2] + (1 + a[:, 1]) * m[:, 1] + (1 + a[:, 4]) * m[:, 4]
    return np.stack([sk, sv], axis=1) + np.finfo(float).smallest_subnormal


def gradient_tables(params: Params, *, loop: bool = True):
    """The gradient and Hessian tables at `params`: prepared for a `loop` over many
    batches (the search), plain for a few points (one Newton polish, one classification),
    where building a quadrature model's interpolant costs more than it serves (softmax at
    ``lambda = 1.3``: 1.7 s to build, 1 ms a point without it)."""
    tables = (engine.table(params, params.lam, 1), engine.table(params, params.lam, 2))
    return tuple(t.prepared() for t in tables) if loop else tables


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
    return classify_at(params, gradient_tables(params, loop=False), k, v)


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


def classify_at(
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
    o = ov[0] + 0.0  # no signed zeros (a sign flip of k or v makes -0.0 of a 0.0)
    copies = []
    for image in orbit_images(o, symmetries(params))[1:]:
        if not any(np.allclose(image, c, atol=1e-12) for c in [o, *copies]):
            copies.append(image + 0.0)
    on_m = bool(np.all(np.abs(o[2:]) <= 1e-12))
    m_eigs = None
    if on_m:
        from ..geometry import manifold_chart_jacobian

        kk, nn = np.clip(o[0], -1, 1), np.clip(o[1], -1, 1)
        jac = -manifold_chart_jacobian(params, np.arccos(kk), np.arccos(nn))
        # on M the state is (kappa, nu), or nu alone where the risk is key-free
        own = [i for i in (0, 1) if i in params.model.state_overlaps(params)]
        m_eigs = np.sort(np.linalg.eigvalsh(jac[np.ix_(own, own)]))
    risk = float(params.eps**2 + _risk_minus_noise(params, o))
    return CriticalPoint(
        overlaps=o,
        vectors=np.stack([k, v]) + 0.0,
        risk=risk,
        grad_norm=float(np.linalg.norm(G[0])),
        relative_gradient=float(relative_gradient(ov, G, mag)[0]),
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


def gaussian_part_vanishes(params: Params, table, K, V, tol: float) -> np.ndarray:
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
    return relative_gradient(ov.T, G, mag) <= tol
