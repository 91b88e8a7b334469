"""What a model's table offers the layers above (RiskTable), and the enclosure of its features over slabs of the feasible set."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from .terms import NU_BASES

if TYPE_CHECKING:  # the kernel is one table's hook, built on the closed forms
    pass

__all__ = ["RiskTable"]


#: Columns per block of features: the temporaries of a block (a few ``(K, 4096)`` arrays,
#: about 1 MB each) stay in cache. 32768 cost 20-30 % more time per value
#: (benchmarks/engine.py).
CHUNK = 1 << 12

#: Batches up to this size share one direct evaluation of the gradient's and the
#: Hessian's terms (a Newton step asks both tables at the same point); larger ones
#: evaluate each table's own (the policy of every table that evaluates by quadrature).
SHARED_POINTS = 64


@runtime_checkable
class RiskTable(Protocol):
    """What a model's table offers the layers above the engine: the model interface.

    :func:`table` returns one for every model ``Params`` describes (the closed forms of
    ``erf``, or quadrature for any other nonlinearity); the dynamics, the geometry, the
    locator and the figures use these members only, so a new model is a new table kind
    and nothing above it changes.

    Attributes
    ----------
    order : int or tuple
        0 (the components :data:`COMPONENTS`), 1 (the five partials), 2 (the Hessian
        entries of :data:`HESSIAN_PAIRS`), or a tuple stacking several.
    C : ndarray, shape ``(..., rows, K)``
        Coefficients; the leading shape is that of the temperatures.
    constants : ndarray
        What the features need of each temperature (opaque above the engine).

    Notes
    -----
    The methods, each on validated overlaps ``ov5`` of shape ``(5, n)``:

    - ``table(ov5)``: the rows ``(rows, n)`` at one temperature;
    - ``features(ov5, constants=None)``: ``Phi`` ``(K, n)`` with ``rows = C @ Phi``,
      so a loop over several temperatures or parameter groups can share one product;
    - ``at(j)``: the table of the `j`-th temperature of a table built for several;
    - ``scaled_part(ov5)``: ``(C, Phi)`` of the columns carrying a factor that underflows
      before its terms do (the locator's plateau test), or ``None`` when there are none;
    - ``features_and_sizes(ov5)``: ``Phi`` and ``(K, n)`` the size of the terms each
      feature is made of, from one evaluation: ``|Phi|`` where every feature is an
      expectation of one sign, larger where an integrand changes sign (what a partial
      that vanishes by cancellation is zero against);
    - ``manifold_gradient(kn)``: ``(dR/dkappa, dR/dnu)`` ``(2, n)`` on M;
    - ``pairs``: whether the rows include the informative pairs of ``s > 1``;
    - ``prepared()``: the same table, readied for a loop that evaluates it again and
      again (a table by quadrature then serves every batch from its interpolant in
      ``kappa``; a closed-form table is already ready);
    - ``enclosure(lo, hi)``: an :class:`Enclosure` of every feature over the slabs
      ``lo <= kappa <= hi`` of the feasible set (certified bounds, e.g. on
      ``sup ||Hess R||``).

    Two optional hooks, whose defaults here return None (a table class that subclasses
    the protocol inherits them; the caller then takes the general way):

    - ``loop_kernel()``: the :class:`LoopKernel` of an order-1 table of one temperature,
      a long run's gradient (the closed forms of ``erf`` have one);
    - ``placed(rows, scale)``: the same table with its rows placed as `rows` says (an
      index per output row, None for a zero row) and times `scale`, so that a loop's step
      reads its gradient in one product.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import RiskTable, table
    >>> all(isinstance(table(Params.paper().replace(nonlinearity=s), 0.1, 1), RiskTable)
    ...     for s in ("erf", "tanh"))
    True
    """

    order: int | tuple
    C: np.ndarray
    constants: np.ndarray

    def __call__(self, ov5: np.ndarray) -> np.ndarray: ...

    def features(self, ov5: np.ndarray, constants: np.ndarray | None = None) -> np.ndarray: ...

    def at(self, j: int) -> RiskTable: ...

    def scaled_part(self, ov5: np.ndarray): ...

    def features_and_sizes(self, ov5: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def manifold_gradient(self, kn: np.ndarray) -> np.ndarray: ...

    @property
    def pairs(self) -> bool: ...

    def prepared(self) -> RiskTable: ...

    def enclosure(self, lo: np.ndarray, hi: np.ndarray) -> Enclosure: ...

    def loop_kernel(self):  # -> a LoopKernel (slr_theory.models.erf.kernel) or None
        """The loop kernel of an order-1 table of one temperature, or None (the default)."""
        return None

    def sweep_kernel(self, tables_at, lam: np.ndarray):  # -> a SweepKernel or None
        """Loop kernels along the temperatures `lam` of a schedule's steps
        (``tables_at(lam)`` builds tables of this kind), or None (the default)."""
        return None

    def placed(self, rows, scale: float = 1.0) -> RiskTable | None:
        """The table with its rows placed as `rows` says and times `scale`, or None
        (the default)."""
        return None


@dataclass(frozen=True)
class Enclosure:
    """Interval enclosures of a table's features over slabs ``lo <= kappa <= hi``.

    Every feature is a sum of two parts, each a monomial in ``(nu, theta, eta, rho)``
    times a function of ``kappa``: ``Phi_c = m_c f_c(kappa) + m'_c g_c(kappa)``. For a
    basis affine in ``nu``, ``m'_c = nu m_c``; for a column whose monomial carries
    ``delta = nu rho - eta`` (``m delta``, the basis free of ``nu``), ``m_c = eta m``,
    ``f_c = -b``, ``m'_c = nu rho m``, ``g_c = b``. On slab ``i``, ``f_c(kappa)`` lies in
    ``mid[0, c, i] +- rad[0, c, i]`` for every ``kappa`` of the slab (in exact arithmetic;
    the values carry the rounding of a few operations, ``~1e-15`` relative), and likewise
    ``g``.

    Attributes
    ----------
    exponents : ndarray of int, shape ``(2, K, 4)``
        The exponents of ``(nu, theta, eta, rho)`` in the monomial of each part.
    mid, rad : ndarray, shape ``(2, K, n)``
        Centre and radius of each part on each slab (``rad >= 0``).
    """

    exponents: np.ndarray
    mid: np.ndarray
    rad: np.ndarray


def part_exponents(cols) -> np.ndarray:
    """``(2, K, 4)``: the monomials of the two parts of each column (:class:`Enclosure`)."""
    e = np.array([m for m, _p, _b in cols], dtype=np.int64).reshape(len(cols), 5)
    if np.any(e[:, 4] > 1) or any(m[4] and b in NU_BASES for m, _p, b in cols):
        raise ValueError("a column with delta^2, or delta times a basis with nu")
    d = e[:, 4] == 1
    e0, e1 = e[:, :4].copy(), e[:, :4].copy()
    e1[:, 0] += 1
    e0[d, 2] += 1  # delta m = -eta m + nu rho m
    e1[d, 3] += 1
    return np.stack([e0, e1])


def delta_parts(cols, mid: np.ndarray, rad: np.ndarray) -> None:
    """Parts ``(f, g) = (-b, b)`` of the columns carrying ``delta`` (in place; part 0 holds
    ``b`` on entry, part 1 nothing)."""
    for c, (m, _p, _b) in enumerate(cols):
        if m[4]:
            mid[1, c], rad[1, c] = mid[0, c], rad[0, c]
            mid[0, c] = -mid[0, c]


def times(a0, a1, b0, b1):
    """The interval product ``[a0, a1] * [b0, b1]`` (elementwise)."""
    p = np.stack([a0 * b0, a0 * b1, a1 * b0, a1 * b1])
    return p.min(axis=0), p.max(axis=0)


def to_mid_rad(lo, hi):
    return 0.5 * (lo + hi), 0.5 * (hi - lo)
