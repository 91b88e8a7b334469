"""Pointwise tables built from the term algebra: erf's closed forms (:class:`EngineTable`)
or any nonlinearity's moments by quadrature (:class:`MomentTable`), cached at one
temperature."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...engine.terms import (
    closed_constants,
    coefficient_scalars,
    orders_of,
    plan_of,
    stacked_entries,
)
from ...nonlinearity import Nonlinearity
from ...params import Params
from ..erf.table import EngineTable
from .moments import MomentTable

__all__ = ["closed_table", "moment_table"]


def closed_table(params: Params, lam: np.ndarray, order) -> EngineTable:
    """The :class:`EngineTable` of ``erf``'s closed forms (a model's :meth:`table` hook)."""
    return _pointwise_table(params, lam, order, None)


def moment_table(params: Params, lam: np.ndarray, order, sigma: Nonlinearity) -> MomentTable:
    """The :class:`MomentTable` of a pointwise `sigma` by quadrature (the default hook)."""
    return _pointwise_table(params, lam, order, sigma)


def _pointwise_table(params: Params, lam: np.ndarray, order, sigma):
    if (
        np.ndim(lam) == 0
    ):  # one temperature: the Newton loops ask for the same few, again and again
        return _one_table(
            params, float(lam), order if np.ndim(order) == 0 else tuple(order), sigma
        )
    return _build_table(params, lam, orders_of(order), order, sigma)


@lru_cache(maxsize=512)
def _one_table(params: Params, lam: float, order, sigma):
    """A pointwise table at one temperature, cached (its arrays are read-only)."""
    out = _build_table(params, np.float64(lam), orders_of(order), order, sigma)
    out.C.flags.writeable = False
    out.constants.flags.writeable = False
    return out


def _build_table(params: Params, lam: np.ndarray, orders: tuple, order, sigma):
    s = coefficient_scalars(params, lam, sigma)
    plan = plan_of(orders, s["pairs"], s["closed"])
    C = np.zeros((*lam.shape, plan.rows, len(plan.columns)))
    index = {k: i for i, k in enumerate(plan.columns)}
    for row, key, c in stacked_entries(s, orders):
        C[..., row, index[key]] += c
    if not s["closed"]:
        k = np.stack(
            np.broadcast_arrays(lam * np.sqrt(params.d / 2.0), lam * params.gamma, s["pairs"]),
            axis=-1,
        ).astype(np.float64)
        return MomentTable(order, C, k, sigma)
    return EngineTable(order, C, closed_constants(params, lam))
