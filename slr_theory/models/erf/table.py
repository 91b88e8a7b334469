"""The table of erf's closed forms (EngineTable): its coefficients, its features, and its
loop kernel for long runs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...engine.contract import Enclosure, RiskTable
from ...engine.terms import PAIRS, gaussian_columns, orders_of, plan_of
from .features import closed_enclosure, features, manifold_gradient
from .kernel import LoopKernel, SweepKernel, loop_kernel, sweep_kernel

__all__ = ["EngineTable"]


@dataclass(frozen=True)
class EngineTable(RiskTable):
    """The coefficients and constants of one order at one or several temperatures.

    Attributes
    ----------
    order : int
        0 (the components), 1 (the five partials) or 2 (the Hessian entries of
        :data:`HESSIAN_PAIRS`).
    C : ndarray, shape ``(..., rows, K)``
        Coefficients; the leading shape is that of the temperatures.
    constants : ndarray, shape ``(..., N_CONSTANTS)``
        What :func:`features` needs of each temperature.
    """

    order: int | tuple
    C: np.ndarray
    constants: np.ndarray

    def __call__(self, ov5: np.ndarray) -> np.ndarray:
        """The rows ``(rows, n)`` at overlaps ``(5, n)`` (one temperature; unchecked)."""
        return self.C @ features(ov5, self.constants, self.order)

    def features(self, ov5: np.ndarray, constants: np.ndarray | None = None) -> np.ndarray:
        """``Phi`` ``(K, n)`` at overlaps ``(5, n)``; `constants` default: the table's own."""
        k = self.constants if constants is None else constants
        return features(ov5, k, self.order)

    def at(self, j: int) -> EngineTable:
        """The table of the `j`-th temperature of a table built for several."""
        return EngineTable(self.order, self.C[j], self.constants[j])

    def scaled_part(self, ov5: np.ndarray):
        """``(C, Phi)`` restricted to the columns carrying ``e^{-x^2}``, without that factor.

        Where ``x^2`` is large the factor underflows and a plateau's gradient is exactly
        0.0; the scaled part decides whether it vanishes before the factor
        (:func:`features` with ``scaled=True``). Order-1 tables only.
        """
        mask = gaussian_columns(self.order, self.pairs)
        return self.C[..., mask], features(ov5, self.constants, self.order, scaled=True)[mask]

    def features_and_sizes(self, ov5: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Phi`` and ``|Phi|``: every feature is an expectation of one sign (protocol:
        :class:`RiskTable`)."""
        phi = self.features(ov5)
        return phi, np.abs(phi)

    def manifold_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """The coefficients of the two columns that survive on M (for :func:`manifold_gradient`)."""
        return self.column(0, (0, 0, 0, 0, 0), 0, "exD"), self.column(1, (0, 0, 0, 0, 0), 0, "erf")

    def manifold_gradient(self, kn: np.ndarray) -> np.ndarray:
        """``(dR/dkappa, dR/dnu)`` ``(2, n)`` on M at ``kn = (kappa, nu)`` (order-1 tables)."""
        return manifold_gradient(kn, self.constants, *self.manifold_columns())

    @property
    def pairs(self) -> bool:
        """Whether the table has the terms of informative pairs (``s > 1``)."""
        return bool(np.ravel(self.constants[..., PAIRS])[0] != 0.0)

    def prepared(self) -> EngineTable:
        """Itself: the closed forms need no preparation for a loop."""
        return self

    def enclosure(self, lo: np.ndarray, hi: np.ndarray) -> Enclosure:
        """:class:`Enclosure` of the features over the slabs ``lo <= kappa <= hi`` (one temperature)."""
        cols = plan_of(orders_of(self.order), self.pairs).columns
        lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        return closed_enclosure(cols, self.constants, lo, hi)

    def loop_kernel(self) -> LoopKernel:
        """:func:`loop_kernel` of this table (order 1, one temperature)."""
        return loop_kernel(self)

    def sweep_kernel(self, tables_at, lam: np.ndarray) -> SweepKernel | None:
        """:func:`sweep_kernel` of the temperatures `lam` (order 1; ``tables_at(lam)``
        builds this kind of table), or None where no segment of them has one."""
        return sweep_kernel(tables_at, lam) if self.order == 1 else None

    def placed(self, rows, scale: float = 1.0) -> EngineTable:
        """The table whose row ``i`` is ``scale`` times row ``rows[i]`` (zero where
        ``rows[i]`` is None)."""
        at = np.array([i for i, r in enumerate(rows) if r is not None])
        src = np.array([r for r in rows if r is not None])
        C = np.zeros((*self.C.shape[:-2], len(rows), self.C.shape[-1]))
        C[..., at, :] = scale * self.C[..., src, :]
        return EngineTable(self.order, C, self.constants)

    def column(self, row: int, mono: tuple, power: int, basis: str) -> np.ndarray:
        """The coefficient of one feature in one row (e.g. for a specialised kernel)."""
        plan = plan_of(orders_of(self.order), self.pairs)
        return self.C[..., row, plan.columns.index((mono, power, basis))]
