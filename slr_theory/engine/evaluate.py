"""The unchecked evaluators on validated overlaps: the risk's components, its gradient and Hessian, and the nullcline on M."""

from __future__ import annotations

import numpy as np

from ..params import Params
from .contract import CHUNK
from .tables import table
from .terms import HESSIAN_PAIRS

__all__ = [
    "components",
    "gradient",
    "hessian",
    "hessian_matrices",
    "manifold_nullcline",
    "value_and_gradient",
]


def _prepare(params: Params, overlaps, lam):
    """Overlaps ``(5, n)``, the temperature (a float or one per column) and the batch shape."""
    arrays = [np.asarray(x, dtype=np.float64) for x in overlaps]
    if lam is not None and np.ndim(lam):
        arrays.append(np.asarray(lam, dtype=np.float64))
    arrays = np.broadcast_arrays(*arrays)
    shape = arrays[0].shape
    ov5 = np.stack([a.reshape(-1) for a in arrays[:5]])
    if lam is None:
        return ov5, params.lam, shape
    if len(arrays) == 6:
        return ov5, arrays[5].reshape(-1), shape
    return ov5, float(lam), shape


def _evaluate(params: Params, ov5: np.ndarray, lam, order) -> np.ndarray:
    """``(rows, n)``: the table of `order` applied to overlaps ``(5, n)``.

    `lam` is a float (one table) or an array of shape ``(n,)`` (one temperature per column).
    """
    n = ov5.shape[1]
    lam = np.asarray(lam, dtype=np.float64)
    per_column = lam.ndim > 0
    if per_column:  # one table per distinct temperature (records share theirs by the run)
        distinct, at = np.unique(lam, return_inverse=True)
        if distinct.size == 1:
            return _evaluate(params, ov5, float(distinct[0]), order)
        tab = table(params, distinct, order)
    else:
        tab = table(params, lam, order)
    if n > CHUNK:  # a batch the interpolants pay for: its last block too, not only the full ones
        tab = tab.prepared()
    out = np.empty((tab.C.shape[-2], n))
    for start in range(0, n, CHUNK):
        sl = slice(start, min(start + CHUNK, n))
        if per_column:
            phi = tab.features(ov5[:, sl], tab.constants[at[sl]].T)
            out[:, sl] = np.einsum("nrk,kn->rn", tab.C[at[sl]], phi)
        else:
            out[:, sl] = tab(ov5[:, sl])
    return out


def components(params: Params, overlaps, lam=None) -> np.ndarray:
    """``(informative, distractors, interactions)`` at validated overlaps, shape ``(3, ...)``.

    Parameters
    ----------
    params : Params
    overlaps : sequence of five array_like
        ``(kappa, nu, theta, eta, rho)``, broadcasting together; feasible (unchecked).
    lam : float or array_like, optional
        Temperature(s), broadcasting with the overlaps (one per entry); default ``params.lam``.

    Returns
    -------
    ndarray, shape ``(3, ...)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import components
    >>> c = components(Params.paper(), (0.0, 0.0, 0.0, 0.0, 0.0), lam=[0.1, 0.2])
    >>> c.shape
    (3, 2)
    """
    ov5, lam, shape = _prepare(params, overlaps, lam)
    return _evaluate(params, ov5, lam, 0).reshape(3, *shape)


def value_and_gradient(params: Params, overlaps, lam=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`components` and :func:`gradient` together, each special function evaluated once.

    Parameters and broadcasting as :func:`components`.

    Parameters
    ----------
    params : Params
        Model parameters.
    overlaps : sequence of five array_like
        ``(kappa, nu, theta, eta, rho)``, feasible (unchecked).
    lam : float or array_like, optional
        Temperature(s), broadcasting with the overlaps; default ``params.lam``.

    Returns
    -------
    components : ndarray, shape ``(3, ...)``
    gradient : ndarray, shape ``(..., 5)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import value_and_gradient
    >>> c, g = value_and_gradient(Params.paper(), (0.5, 0.5, 0.0, 0.0, 0.0))
    >>> c.shape, g.shape
    ((3,), (5,))
    """
    ov5, lam, shape = _prepare(params, overlaps, lam)
    rows = _evaluate(params, ov5, lam, (0, 1))
    return rows[:3].reshape(3, *shape), np.moveaxis(rows[3:], 0, -1).reshape(*shape, 5)


def gradient(params: Params, overlaps, lam=None) -> np.ndarray:
    """The five partials ``dR/d(kappa, nu, theta, eta, rho)`` at validated overlaps, ``(..., 5)``.

    Parameters and broadcasting as :func:`components`.

    Parameters
    ----------
    params : Params
        Model parameters.
    overlaps : sequence of five array_like
        ``(kappa, nu, theta, eta, rho)``, feasible (unchecked).
    lam : float or array_like, optional
        Temperature(s), broadcasting with the overlaps; default ``params.lam``.

    Returns
    -------
    ndarray, shape ``(..., 5)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import gradient
    >>> gradient(Params.paper(), (0.5, 0.5, 0.0, 0.0, 0.0)).shape
    (5,)
    """
    ov5, lam, shape = _prepare(params, overlaps, lam)
    return np.moveaxis(_evaluate(params, ov5, lam, 1), 0, -1).reshape(*shape, 5)


def hessian(params: Params, overlaps, lam=None) -> np.ndarray:
    """The symmetric matrix of second partials at validated overlaps, ``(..., 5, 5)``.

    Parameters and broadcasting as :func:`components`.

    Parameters
    ----------
    params : Params
        Model parameters.
    overlaps : sequence of five array_like
        ``(kappa, nu, theta, eta, rho)``, feasible (unchecked).
    lam : float or array_like, optional
        Temperature(s), broadcasting with the overlaps; default ``params.lam``.

    Returns
    -------
    ndarray, shape ``(..., 5, 5)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.engine import hessian
    >>> h = hessian(Params.paper(), (0.5, 0.5, 0.0, 0.0, 0.0))
    >>> h.shape, bool(np.array_equal(h, h.T))
    ((5, 5), True)
    """
    ov5, lam, shape = _prepare(params, overlaps, lam)
    return hessian_matrices(_evaluate(params, ov5, lam, 2)).reshape(*shape, 5, 5)


def hessian_matrices(rows: np.ndarray) -> np.ndarray:
    """The symmetric matrices ``(n, 5, 5)`` of a Hessian table's rows ``(15, n)``.

    Parameters
    ----------
    rows : ndarray, shape ``(15, n)``
        Second partials in the order of :data:`HESSIAN_PAIRS` (an order-2 table's rows).

    Returns
    -------
    ndarray, shape ``(n, 5, 5)``

    Examples
    --------
    >>> import numpy as np
    >>> h = hessian_matrices(np.arange(15.0)[:, None])
    >>> h[0, 1, 0], h[0, 0, 1], h.shape
    (np.float64(1.0), np.float64(1.0), (1, 5, 5))
    """
    rows = np.asarray(rows, dtype=np.float64)
    out = np.empty((rows.shape[1], 5, 5))
    for row, (i, j) in enumerate(HESSIAN_PAIRS):
        out[:, i, j] = out[:, j, i] = rows[row]
    return out


def manifold_nullcline(params: Params, kappa: np.ndarray) -> np.ndarray:
    """The ``nu`` at which ``dR/dkappa`` vanishes on M, at each ``kappa`` (the nullcline).

    ``R_kappa`` on M is proportional to ``E[sigma'(U) (sigma(U) - nu)]``, so the nullcline
    is ``nu = E[sigma' sigma] / E sigma'``: ``erf(a kappa / s)`` with
    ``s = sqrt((1 + 2 g^2)(1 + 4 g^2))`` for ``erf``; otherwise ``sgn(t) (1 - E[sigma' tau] / E sigma')``
    by quadrature (``tau = 1 - sgn(t) sigma``), exact where ``sigma`` saturates. For
    softmax attention ``R_kappa`` is affine in ``nu`` on M, and the nullcline is its root.

    Parameters
    ----------
    params : Params
    kappa : ndarray
        Values in ``[-1, 1]``.

    Returns
    -------
    ndarray
        Of `kappa`'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.engine import manifold_nullcline
    >>> float(manifold_nullcline(Params.paper(), np.array([0.0]))[0])
    0.0
    """
    return params.model.nullcline(params, np.asarray(kappa, dtype=np.float64))
