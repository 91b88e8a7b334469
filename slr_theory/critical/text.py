"""Critical points in words: their kinds, their overlaps, and what they are."""

from __future__ import annotations

import numpy as np

from ..validate import as_array, positive_int

__all__ = ["describe", "manifold_kind", "overlaps_text", "plural_kind"]


def plural_kind(kind: str) -> str:
    """The plural of a kind of critical point, its qualifiers kept.

    Parameters
    ----------
    kind : str
        A kind without its orbit, as :attr:`CriticalPoint.kind` begins.

    Returns
    -------
    str

    Examples
    --------
    >>> from slr_theory.critical import plural_kind
    >>> plural_kind("degenerate minimum"), plural_kind("saddle")
    ('degenerate minima', 'saddles')
    """
    if not isinstance(kind, str) or not kind.strip():
        raise ValueError(f"`kind` must be a non-empty string, got {kind!r}.")
    head, _, last = kind.rpartition(" ")
    word = {"minimum": "minima", "maximum": "maxima", "saddle": "saddles"}.get(last, last)
    return f"{head} {word}".strip()


def overlaps_text(overlaps, digits: int = 3) -> str:
    """Overlaps as text, ``(kappa, nu, theta, eta, rho)`` to `digits` decimals, no ``-0.000``.

    Parameters
    ----------
    overlaps : array_like, shape (5,)
    digits : int
        Decimals, ``0 <= digits <= 17``.

    Returns
    -------
    str

    Examples
    --------
    >>> overlaps_text([1, 1, -1e-9, 0, 0.62984])
    '(1.000, 1.000, 0.000, 0.000, 0.630)'
    """
    o = as_array(overlaps, "overlaps", allow_nan=False)
    if o.ndim != 1 or o.size == 0 or not np.all(np.isfinite(o)):
        raise ValueError(
            f"`overlaps` must be a non-empty 1-D array of finite numbers, got {overlaps!r}."
        )
    digits = positive_int(digits, "digits", allow_zero=True, upper=17)
    tiny = 0.5 * 10.0**-digits  # what rounds to zero is printed as zero, without a sign
    return "(" + ", ".join(f"{(0.0 if abs(x) < tiny else x):.{digits}f}" for x in o) + ")"


def describe(overlaps) -> str:
    """A critical point in words, from its overlaps.

    Parameters
    ----------
    overlaps : array_like, shape (5,)

    Returns
    -------
    str

    Examples
    --------
    >>> describe([1, 1, 0, 0, 0])
    '(k*, v*), the optimum'
    >>> describe([0, 0, 0.6298, 1, 0])
    'k = v*, v·k* = 0.630'
    >>> describe([0.302, 0.947, 0.321, -0.953, -0.806])
    'a point off M'
    >>> describe([0.7071, 1, 0, 0, 0])
    'the point of M at (κ, ν) = (0.707, 1.000)'
    """

    o = as_array(overlaps, "overlaps")
    if o.shape != (5,) or not np.all(np.isfinite(o)):
        raise ValueError(f"`overlaps` must be five finite numbers, got {overlaps!r}.")
    near = np.abs(o) > 1 - 1e-6
    zero = np.abs(o) < 1e-6
    sign = ["" if x > 0 else "−" for x in o]
    k, n, t, e, r = o
    if zero[2:].all():
        if near[0] and near[1]:
            if k > 0 and n > 0:
                return "(k*, v*), the optimum"
            return f"the corner ({sign[0]}k*, {sign[1]}v*)"
        if zero[0] and zero[1]:
            return "the origin of M (k, v ⊥ k*, v*)"
        return f"the point of M at (κ, ν) = ({k:.3f}, {n:.3f})"
    parts = []
    if near[0]:
        parts.append(f"k = {sign[0]}k*")
    elif near[3]:
        parts.append(f"k = {sign[3]}v*")
    if near[1]:
        parts.append(f"v = {sign[1]}v*")
    elif near[2]:
        parts.append(f"v = {sign[2]}k*")
    if near[4] and not parts:
        parts.append(f"k = {sign[4]}v")
    k_pinned, v_pinned = near[0] or near[3], near[1] or near[2]
    if k_pinned and not v_pinned:
        free = [f"v·k* = {t:.3f}" for _ in [0] if not zero[2]]
        free += [f"v·v* = {n:.3f}" for _ in [0] if not zero[1]]
        parts.append(", ".join(free) if free else "v ⊥ k*, v*")
    elif v_pinned and not k_pinned:
        free = [f"k·k* = {k:.3f}" for _ in [0] if not zero[0]]
        free += [f"k·v* = {e:.3f}" for _ in [0] if not zero[3]]
        parts.append(", ".join(free) if free else "k ⊥ k*, v*")
    if not parts:
        return "a point off M"
    return ", ".join(parts)


def manifold_kind(eigenvalues) -> str:
    """A critical point's kind for the flow on M, from its eigenvalues on M.

    Parameters
    ----------
    eigenvalues : array_like
        :attr:`slr_theory.CriticalPoint.manifold_eigenvalues`.

    Returns
    -------
    str
        ``"minimum"``, ``"maximum"`` or ``"saddle"``.

    Examples
    --------
    >>> from slr_theory import Params, critical_points
    >>> from slr_theory.critical import manifold_kind
    >>> on_m = critical_points(Params.paper(lam=0.9), "manifold")
    >>> [(q.overlaps[:2].tolist(), manifold_kind(q.manifold_eigenvalues)) for q in on_m]
    [([1.0, 1.0], 'minimum'), ([0.0, 0.0], 'saddle'), ([1.0, -1.0], 'maximum')]
    """
    e = as_array(eigenvalues, "eigenvalues")
    if e.ndim != 1 or e.size == 0 or not np.all(np.isfinite(e)):
        raise ValueError(
            f"`eigenvalues` must be a non-empty 1-D array of finite numbers, got {eigenvalues!r}."
        )
    if np.all(e > 0):
        return "minimum"
    if np.all(e < 0):
        return "maximum"
    return "saddle"
