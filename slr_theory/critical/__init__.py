"""Critical points of the risk on ``S^{d-1} x S^{d-1}`` and on the invariant manifold, classified.

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

# Internal, importable from here as before the split (no promise):
from ..manifold import manifold_critical_overlaps  # noqa: F401
from .classify import classify, manifold_certificate
from .lipschitz import (
    LipschitzBound,
    MapSpectrum,
    hessian_norm_bound,
    lipschitz_bound,
    pgd_map_spectrum,
)
from .locate import FOLD, MAX_ITERATIONS, MAX_STARTS, critical_points, polish
from .points import GRAD_TOL, CriticalPoint, CriticalPoints, SearchReport
from .symmetry import SYMMETRIES, canonical, end_groups, same_point, symmetries
from .text import describe, manifold_kind, overlaps_text, plural_kind

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
