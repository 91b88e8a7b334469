"""The symmetries a census uses: the reflection of e3, the flips of vectors and overlaps, and their pivots."""

from __future__ import annotations

import numpy as np

__all__ = []


# --- the proof -------------------------------------------------------------------------------
def pivot_columns(rows: list[np.ndarray]) -> list[int]:
    """Coordinates whose sign a group of sign changes fixes: a fundamental domain
    ``{x_c >= 0 for every pivot c}``.

    `rows` are the coordinates each generator flips (boolean). Reduced row echelon form
    over GF(2) gives generators each flipping its own pivot and no other generator's
    pivot, so every orbit meets the domain (fix the pivots' signs one at a time).
    """
    pivots: list[int] = []
    basis: list[np.ndarray] = []
    for r in rows:
        r = np.asarray(r, dtype=bool).copy()
        for p, b in zip(pivots, basis, strict=True):
            if r[p]:
                r ^= b
        if not r.any():
            continue
        p = int(np.flatnonzero(r)[0])
        for i, b in enumerate(basis):
            if b[p]:
                basis[i] = b ^ r
        pivots.append(p)
        basis.append(r)
    return pivots


#: ``k, v -> diag(1, 1, -1) k, diag(1, 1, -1) v``: the reflection of ``e3`` fixes ``k*, v*``
#: and every overlap, for every model (it is in ``O(d - 2)``).
E3_REFLECTION = np.array([False, False, True, False, False, True])


def vector_generators(group: np.ndarray) -> list[np.ndarray]:
    """The reflection of ``e3`` and the group's rows that act on ``R^3 x R^3`` by sign
    changes, as the coordinates each flips."""
    return [E3_REFLECTION] + [
        f for f in (_vector_flips(g) for g in group) if f is not None and f.any()
    ]


def _vector_flips(g: np.ndarray) -> np.ndarray | None:
    """A row ``(s_kappa, s_nu, s_theta, s_eta, s_rho)`` as signs of ``(k1, k2, k3, v1, v2, v3)``:
    ``k -> diag(s_kappa, s_eta, 1) k``, ``v -> diag(s_theta, s_nu, s_rho) v`` (needs
    ``s_kappa s_theta = s_eta s_nu = s_rho``, or the row is not used)."""
    sk, sn, st, se, sr = g
    if sk * st != sr or se * sn != sr:
        return None
    return np.array([sk, se, 1.0, st, sn, sr]) < 0


def overlap_flips(g: np.ndarray) -> np.ndarray:
    return np.asarray(g) < 0
