"""A model's table at temperatures, and the bounds of its features: what the model builds
(:meth:`slr_theory.models.Model.table`), asked through one door."""

from __future__ import annotations

import numpy as np

from ..params import Params
from .contract import RiskTable
from .terms import orders_of

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
