"""What the locator returns: a critical point, the points found, and how the search went."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import OptimizeResult

from ..manifold import five_points_proved
from ..results import html_table

__all__ = ["GRAD_TOL", "CriticalPoint", "CriticalPoints", "SearchReport"]


#: A point is critical when ``grad_norm <= GRAD_TOL * grad_scale`` (module docstring).
GRAD_TOL = 1e-10
#: Critical points whose canonical overlaps differ by at most this (max-norm) are one
#: point: Newton's ends on the spheres stop at steps below 1e-7.
MERGE_TOL = 1e-6
#: The same on M, where each point is a root located to ``1e-15`` (``brentq``) of a
#: function evaluated to about ``1e-15`` relative: two locations of one root (an edge and
#: its symmetric image) agree to a few ulp, far inside this.
MANIFOLD_MERGE_TOL = 1e-12


#: A Newton row whose relative gradient is below this (rounding level, far below
#: `GRAD_TOL`) and whose Newton step is below 1e-14 is settled: it is not stepped again.
SETTLED = 1e-14


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

    def __repr__(self) -> str:
        """A short table (:meth:`table`, without the gradient's rounding noise), under a line
        saying where the points were sought and whether up to symmetry; each
        :class:`CriticalPoint` in full is one index away."""
        where = "on M" if self.where == "manifold" else "on the spheres"
        head = (
            f"CriticalPoints: {len(self)} {'point' if len(self) == 1 else 'points'} {where}, "
            f"up to symmetry, at {self.params!r}"
        )
        return head + "\n" + self.table(grad=False)

    __str__ = __repr__

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
