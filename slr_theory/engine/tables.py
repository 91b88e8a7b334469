"""A model's table at temperatures: the pointwise tables built (closed forms or quadrature), cached at one temperature, and the bounds of their features."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..nonlinearity import Nonlinearity
from ..params import Params
from .closed_table import EngineTable
from .contract import RiskTable
from .moments import MomentTable
from .terms import closed_constants, coefficient_scalars, orders_of, plan_of, stacked_entries

__all__ = ["feature_bounds", "table"]


def table(params: Params, lam, order: int) -> RiskTable:
    """The table of `order` at temperature(s) `lam` (any shape) for the model `params`.

    Parameters
    ----------
    params : Params
        ``d``, ``L`` and ``gamma`` are used (``params.lam`` is not: pass `lam`).
    lam : float or array_like
        Positive temperatures.
    order : {0, 1, 2} or tuple of them
        A tuple stacks the rows of several orders over one set of features (e.g.
        ``(0, 1)``: the risk and its gradient, sharing every special function).

    Returns
    -------
    RiskTable
        The model's table (:meth:`slr_theory.models.Model.table`): :class:`EngineTable`
        (closed forms) for ``erf``, :class:`MomentTable` (quadrature) for any other
        nonlinearity, the softmax model's own for softmax; each is a :class:`RiskTable`,
        the one interface the layers above use.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import table
    >>> t = table(Params.paper(), 0.1, 1)
    >>> t.C.shape[:-1], t.constants.shape[-1] > 0
    ((5,), True)
    """
    orders_of(order)
    return params.model.table(params, np.asarray(lam, dtype=np.float64), order)


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


def feature_bounds(params: Params, order: int) -> np.ndarray:
    """``sup |feature|`` over the feasible set for each column of the table of `order`.

    The model's (:meth:`slr_theory.models.Model.feature_bounds`). For ``erf``:
    ``sup |x^p b(x)|`` of each closed-form basis (``|erf| <= 1``,
    ``sup x^p e^{-x^2} = (p / 2e)^{p/2}``). For a nonlinearity by quadrature: the moments
    are bounded by the sups of the derivatives they average
    (:func:`slr_theory.nonlinearity.moment_sups`). The monomials by 1: ``delta = nu rho -
    eta = -k . (v* - nu v)`` and ``|v* - nu v| = sqrt(1 - nu^2)``, so ``|delta| <= 1`` too.

    Parameters
    ----------
    params : Params
    order : {1, 2}

    Returns
    -------
    ndarray, shape ``(K,)``
        In the order of the table's columns.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import feature_bounds, table
    >>> p = Params.paper()
    >>> feature_bounds(p, 1).shape == table(p, p.lam, 1).C.shape[-1:]
    True
    """
    return params.model.feature_bounds(params, order)
