"""The symmetries of the risk, from the model: its group, the images of a point, a point's representative, and runs grouped by where they end."""

from __future__ import annotations

import numpy as np

from ..params import Params, check_params
from ..validate import as_array, positive_real

__all__ = ["SYMMETRIES", "canonical", "end_groups", "same_point", "symmetries"]


EPS = np.finfo(float).eps


#: Sign patterns of the symmetry group on ``(kappa, nu, theta, eta, rho)``: the identity,
#: ``(k, v) -> (-k, -v)``, ``(k, v) -> (S k, -S v)`` (``S`` the reflection fixing ``k*``
#: and sending ``v*`` to ``-v*``), and their product.
SYMMETRIES = np.array(
    [[1, 1, 1, 1, 1], [-1, -1, -1, -1, 1], [1, 1, -1, -1, -1], [-1, -1, 1, 1, -1]], dtype=float
)


def symmetries(params: Params) -> np.ndarray:
    """The rows of :data:`SYMMETRIES` that leave the model's risk unchanged.

    ``(k, v) -> (S k, -S v)`` holds for every model: ``X -> S X`` preserves the law of
    the tokens and flips the label, and the squared error does not see the sign.
    ``(k, v) -> (-k, -v)`` needs weights odd in the key (:attr:`Params.odd_weights`):
    pointwise attention with a ``sigma`` verified odd when it was built, never softmax
    (``softmax(-z) != -softmax(z)``). Hence all four rows, or the identity and
    ``(S k, -S v)``.

    Parameters
    ----------
    params : Params

    Returns
    -------
    ndarray, shape ``(m, 5)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.critical import symmetries
    >>> symmetries(Params.paper().replace(attention="softmax")).tolist()
    [[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, -1.0, -1.0, -1.0]]
    """
    return SYMMETRIES if check_params(params).odd_weights else SYMMETRIES[[0, 2]]


def orbit_images(ov: np.ndarray, group: np.ndarray = SYMMETRIES) -> np.ndarray:
    return group * np.asarray(ov, dtype=float)


def _group(group) -> np.ndarray:
    """`group` checked: rows of :data:`SYMMETRIES`, the identity first (None: all of them)."""
    if group is None:
        return SYMMETRIES
    try:
        g = np.asarray(group, dtype=float)
    except (TypeError, ValueError):
        g = None
    if (
        g is None
        or g.ndim != 2
        or g.shape[1:] != (5,)
        or not len(g)
        or not np.array_equal(g[0], SYMMETRIES[0])
        or not all(any(np.array_equal(r, q) for q in SYMMETRIES) for r in g)
    ):
        raise ValueError(
            "`group` must be rows of SYMMETRIES with the identity first "
            f"(slr_theory.critical.symmetries), got {group!r}."
        )
    return g


def end_groups(final, group: np.ndarray | None = None, tol: float = 0.05) -> list[np.ndarray]:
    """Runs grouped by where they ended, up to the risk's symmetries (largest group first).

    A mean over runs that ended in different places describes no run: what a batch of
    runs did is said group by group. Two ends are in one group when they are the same
    point up to `group` within `tol` (:func:`same_point`); this says where runs ended, not
    that they are at a critical point.

    Parameters
    ----------
    final : array_like, shape ``(n, 5)``
        The runs' last overlaps.
    group : ndarray, optional
        Rows of sign patterns (:func:`symmetries`); default :data:`SYMMETRIES`.
    tol : float
        Largest difference of two ends in one group, ``> 0``.

    Returns
    -------
    list of ndarray of int
        The runs of each group, the largest first.

    Examples
    --------
    >>> from slr_theory.critical import end_groups
    >>> ends = [[1, 1, 0, 0, 0], [0, 0, 0, 0, 0], [-1, -1, 0, 0, 0], [0.99, 1, 0, 0, 0]]
    >>> [g.tolist() for g in end_groups(ends)]  # (-1, -1) is (1, 1) under (k, v) -> (-k, -v)
    [[0, 2, 3], [1]]
    """
    final = as_array(final, "final", allow_nan=False)
    if final.ndim != 2 or final.shape[1] != 5:
        raise ValueError(f"`final` must have shape (n, 5), got {final.shape}.")
    tol = positive_real(tol, "tol")
    groups: list[list[int]] = []
    for i, o in enumerate(final):
        for g in groups:
            if same_point(final[g[0]], o, tol=tol, group=group):
                g.append(i)
                break
        else:
            groups.append([i])
    return [np.array(g) for g in sorted(groups, key=len, reverse=True)]


def canonical(ov, group: np.ndarray | None = None) -> np.ndarray:
    """The representative of the orbit of ``ov`` under `group` (the largest, rounded).

    Parameters
    ----------
    ov : array_like, shape (5,)
    group : ndarray, optional
        Rows of sign patterns (:func:`symmetries`); default :data:`SYMMETRIES`.

    Returns
    -------
    ndarray, shape (5,)

    Examples
    --------
    >>> from slr_theory.critical import canonical
    >>> canonical([-0.3, 0.2, 0.1, -0.4, 0.5]).tolist()
    [0.3, -0.2, 0.1, -0.4, -0.5]
    """
    images = orbit_images(_five(ov, "ov"), _group(group))
    keys = [tuple(np.round(x, 8) + 0.0) for x in images]
    return images[max(range(len(images)), key=lambda i: keys[i])] + 0.0  # no signed zeros


def same_point(a, b, tol: float = 1e-6, group: np.ndarray | None = None) -> bool:
    """Whether two overlap tuples are the same point up to `group` (default :data:`SYMMETRIES`).

    Parameters
    ----------
    a, b : array_like, shape (5,)
        Finite overlaps.
    tol : float
        Largest coordinate difference of the canonical representatives, ``>= 0``.
    group : ndarray, optional
        Rows of sign patterns (:func:`symmetries`); default :data:`SYMMETRIES`.

    Returns
    -------
    bool
    """
    a, b = _five(a, "a"), _five(b, "b")
    tol = positive_real(tol, "tol", allow_zero=True)
    g = _group(group)
    return bool(np.max(np.abs(canonical(a, g) - canonical(b, g))) <= tol)


def _five(ov, name: str) -> np.ndarray:
    """Five finite overlaps ``(kappa, nu, theta, eta, rho)``."""
    ov = as_array(ov, name, allow_nan=False)
    if ov.shape != (5,):
        raise ValueError(f"`{name}` must be five overlaps, got shape {ov.shape}.")
    return ov
