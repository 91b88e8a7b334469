"""Where and when: PGD over any number of steps, and the fate of every run.

Exact PGD (:func:`slr_theory.pgd`) costs one step a step, and on the plateaus of the
landscape a run needs ``1e20`` steps and more (the drive in ``kappa`` along the edge
``nu = 1`` of M is ``erfc``-small). :func:`advance` gives the state after any number of
steps by stepping exactly where the dynamics are fast and integrating, where they are
slow, the *modified equation* of the step map: with ``Delta(x)`` the increment of one
exact step (:func:`slr_theory.trajectory.overlap_increment`, to the relative precision
of the gradient) and ``M = alpha J`` the Jacobian of the flow per step,

.. math::

    \frac{dx}{dn} = F(x) = \\Delta(x) - \tfrac12 M(x) \\Delta(x),

whose flow over one unit of ``n`` (one step) is the step map up to ``O(alpha^3)``: it is
of order 2. The leading defect, ``(1/3) M^2 Delta``, and the integrator's own error
(linearly implicit Euler extrapolated to order 6, which damps what the map damps) set
the integration step and add up to the error estimate of every run. A run returns
to exact steps wherever the integrator would need fewer than :data:`MIN_FLOW_STEP`
steps at a time, which is where a fast transient (``alpha h`` of order one) makes the
modified equation meaningless.

:func:`fate` runs every start until it enters the ``tol``-ball of a minimum (or of a
symmetric image), for PGD or for the gradient flow, and returns the number of steps (or
the flow time) it took, with the runs that end at a saddle, on its stable manifold,
reported with an infinite time. It integrates at the looser local tolerance
:data:`FATE_LOCAL_TOL`, places each entry into a ball on the integrator itself (Newton's
method on the step, not an interpolant), and where a run moves along a line, ``kappa``
alone on the edge ``nu = +-1`` of M (the plateau, where the drive falls by dozens of
orders of magnitude on the way), it takes the time to the ball ahead as a quadrature in
``kappa`` once the line is verified invariant along the way (:func:`_line_arrivals`).
"""

from __future__ import annotations

from .bursts import Advanced, advance
from .fates import UNLISTED, Fates

# Internal, importable from here as before the split (no promise):
from .field import (
    FLOW_ORDER,
    HORIZON,
    MAX_ADVANCE_STEPS,
    MIN_FLOW_STEP,
    SUBSTEPS,  # noqa: F401
)
from .follow import fate

__all__ = [
    "FLOW_ORDER",
    "HORIZON",
    "MAX_ADVANCE_STEPS",
    "MIN_FLOW_STEP",
    "UNLISTED",
    "Advanced",
    "Fates",
    "advance",
    "fate",
]
