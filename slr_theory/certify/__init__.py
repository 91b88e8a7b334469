"""Computer-assisted proofs about the critical points (``docs/critical.md``).

The risk depends on ``(k, v)`` through five overlaps, and every critical point on
``S^{d-1} x S^{d-1}`` has a representative with ``k, v`` in ``span{k*, v*, e3, e4}``
(``k* = e1``, ``v* = e2``). The proofs split the points by ``r = dim span{k, v, k*, v*}``.

**Points.** A point with ``r <= 3`` has ``k, v`` in ``R^3``; since the Euclidean gradient
of ``F(k, v) = R(overlaps)`` lies in ``span{k*, v*, k, v}``, it is critical on the big
spheres if and only if it is critical for ``F`` on ``S^2 x S^2``, where the ``O(d - 2)``
orbits leave isolated points. In stereographic charts of ``S^2 x S^2`` the Krawczyk test
(``K(Z) = z - Y g(z) + (I - Y J(Z))(Z - z)`` inside ``Z``, ``Y`` a float inverse of the
Jacobian's midpoint) proves that a box ``Z`` holds exactly one critical point: existence
and uniqueness of every point the search found (or Newton found from an open box).

**Points on a face of a symmetry.** Where one curvature is far below the others (at
``lam = 0.9`` the corner ``k = k*, v = v*`` has ``-R_kappa ~ 1e-54`` against ``848``), no box
a double can hold passes the Krawczyk test. A sign change of the group fixes a face of
the chart (:class:`Face`), on which the gradient's normal components vanish; if their
Jacobian along the normal coordinates is invertible throughout a box about the face,
every critical point in the box lies on the face, where the Krawczyk test on the
tangent equations alone (whose enclosures keep the small factor's sign) proves one
(:func:`tube_test`). The Hessian there splits into its tangent and normal blocks (the
symmetry acts by ``+1`` and ``-1`` on them), whose inertias add.

**r = 4 (part "overlaps").** In the interior of the feasible set the overlaps are a
chart, and ``(k, v)`` is critical if and only if the five partials of ``R`` vanish: a
branch and bound over the overlaps (reduced by the model's symmetry group) closes each
box as *infeasible* (the Gram determinant's enclosure is at most 0), *excluded* (a
partial's enclosure misses 0), *Newton-excluded* (the Krawczyk image of the box,
widened by a quarter of its sides, misses it) or *unique* (the image lies inside: one
zero, the census's point).

**r <= 3 (part "strata").** A branch and bound over the same overlaps, on the boundary
``det Gram = 0``: a box closes as *infeasible*, *excluded* (``det > 0`` throughout, or one
of the conditions :func:`strata_conditions` misses 0), or *unique* (every ``(k, v)`` with
its overlaps lies, after a symmetry, in the box ``Z`` of a proved point).

Near the edges ``v = +-v*`` and near ``k3 = 0`` the conditions cannot close small boxes:
the risk hardly moves along the edge (``R_kappa ~ 1e-49`` at ``lam = 0.9``), and the square
root that maps the overlaps back to ``k3`` widens a box of width ``w`` to ``sqrt(w)``. Two
more arguments close those boxes:

* **The overlap chart** (:class:`_OverlapChart`): where ``k3 > 0`` and the Gram determinant
  ``q^2`` of ``k*, k, v`` is positive, ``y = (kappa, theta, eta, rho)`` is a chart of ``S^2 x
  S^2`` on each of the two branches of ``nu``, and a box closes when on each branch that
  meets its ``nu`` the chart gradient's enclosure misses 0, or its Krawczyk image misses
  the box, or (with the symmetry :data:`NORMAL_FLIP`) every critical point of the box lies
  on the edge, where ``R_kappa`` keeps its sign (:meth:`_Strata.chart_excludes`). Near the
  corners ``k = k*``, where ``k*, k, v`` meet and that chart turns singular, the same face
  argument runs in the edge chart ``(eta, k3, theta, v3)`` (:class:`_EdgeChart`).
* **Isolating neighbourhoods** (:func:`isolate`): about each proved point, a box ``W`` of
  its chart, up to ``1e-2`` wide, in which a branch and bound shows that every critical
  point lies in the point's Krawczyk box; a strata box whose preimage lies in ``W`` closes
  as unique. The census saves each neighbourhood's leaves, and the checker re-verifies them.

A box no verdict closes within the budget or above the smallest width stays
*unresolved*, and the census then says which part is not complete. Every enclosure is
rigorous: outward-rounded interval arithmetic (:mod:`slr_theory.interval`) on
coefficients and bases enclosed by python-flint's ``arb`` (:mod:`slr_theory.rigorous`).

Indices at dimension ``d`` come from the inertia of rigorous enclosures (Sylvester's
law of inertia on ``X^T J X``, ``X`` the float eigenvectors of ``J``'s midpoint, and
Gershgorin discs that exclude 0): the chart Hessian on ``S^2 x S^2`` gives the in-span
index, and the ``d - 3`` copies of the out-of-span block ``H_W = [[-mu, R_rho], [R_rho,
-mu']]`` (``mu = k . grad_k F``, ``mu' = v . grad_v F``) add theirs; for ``r = 3`` one
eigenvector of ``H_W`` is the orbit's direction and the other eigenvalue is its trace;
for ``r = 4``, ``index = #neg(Hess R)`` and the orbit has dimension ``2d - 7``.
"""

from __future__ import annotations

# Internal, importable from here as docs/api.md says (no promise):
from .boxes import box_of_path, inertia, krawczyk, widest  # noqa: F401
from .census import Census, CertifiedPoint
from .charts import euclidean, strata_conditions  # noqa: F401
from .check import CertificateCheck, check_certificate
from .run import certify_critical_points
from .search import model_table, strata_covered  # noqa: F401

__all__ = [
    "Census",
    "CertificateCheck",
    "CertifiedPoint",
    "certify_critical_points",
    "check_certificate",
]
