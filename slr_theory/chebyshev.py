"""Piecewise Chebyshev interpolants of functions of one variable, checked as they are built.

The quadrature models (:mod:`slr_theory.nonlinearity`, :mod:`slr_theory.softmax`) compute
their Gaussian expectations as functions of one variable at one temperature; a loop that
asks for them at every step (PGD, the locator, the flows) is served by an interpolant of
that function. :func:`build_pieces` halves pieces, all failing ones in one call of the
function, until between the Chebyshev nodes every component agrees with the function to
``tol`` of the scale the function reports (the scale of its own rounding error);
:class:`Pieces` evaluates the series.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["CHEB_N", "Pieces", "build_pieces"]

#: Chebyshev points (first kind) per piece.
CHEB_N = 20
_CHEB_X = np.cos(np.pi * (np.arange(CHEB_N) + 0.5) / CHEB_N)
_CHEB_M = (2.0 / CHEB_N) * np.cos(
    np.pi * np.outer(np.arange(CHEB_N), np.arange(CHEB_N) + 0.5) / CHEB_N
)
_CHEB_M[0] *= 0.5  # values at _CHEB_X -> coefficients c_k of sum c_k T_k
_PROBES = 0.5 * (_CHEB_X[:-1] + _CHEB_X[1:])  # between the nodes: where the error peaks
_PROBE_T = np.cos(np.outer(np.arange(CHEB_N), np.arccos(_PROBES)))  # T_k at the probes
_CHUNK = 1 << 16  # points per block of an evaluation (T_k at a block: 10 MB)
_TILE = 64  # rows of every product of a piece's coefficients with its points' T_k


@dataclass(frozen=True)
class Pieces:
    """A piecewise Chebyshev series of ``F`` components on ``[breaks[0], breaks[-1]]``.

    Attributes
    ----------
    breaks : ndarray, shape ``(P + 1,)``
        The pieces' ends, increasing.
    coefficients : ndarray, shape ``(P, F, CHEB_N)``
        Chebyshev coefficients of each component on each piece.
    direct : ndarray of bool, shape ``(P,)``
        Pieces where the check failed after the last halving (their coefficients are 0):
        the caller evaluates the function there.
    """

    breaks: np.ndarray
    coefficients: np.ndarray
    direct: np.ndarray

    @cached_property
    def any_direct(self) -> bool:
        """Whether some piece is left to the caller (:attr:`direct`)."""
        return bool(np.any(self.direct))

    def piece(self, t: np.ndarray) -> np.ndarray:
        """The index of the piece holding each ``t`` (ends clamped)."""
        last = len(self.breaks) - 2
        index = np.searchsorted(self.breaks, t, side="right") - 1
        return np.minimum(np.maximum(index, 0), last)  # np.clip's, with less dispatch

    def series(self, t: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The series at ``t`` ``(n,)``: shape ``(F, n)``, every piece taken as checked.

        Points are grouped by piece (a stable radix sort of the piece indices), and each
        piece's points are multiplied with its coefficients ``(F, CHEB_N)`` in tiles of
        one shape (one batched matrix product, each tile with its piece's coefficients),
        rather than gathering ``F x CHEB_N`` coefficients per point; the rows come back in
        the callers' order by one gather.
        A point's value does not depend on the other points (the tiles are all alike).
        `out`, if given, receives the result.
        """
        F, last = self.coefficients.shape[1], len(self.breaks) - 2
        out = np.empty((F, t.size)) if out is None else out
        small = np.int16 if last < np.iinfo(np.int16).max else np.int64  # radix-sortable
        for lo in range(0, t.size, _CHUNK):
            tc = t[lo : lo + _CHUNK]
            piece = self.piece(tc).astype(small)
            order = np.argsort(piece, kind="stable")
            piece, ts = piece[order], tc[order]
            a, b = self.breaks[piece], self.breaks[piece + 1]
            x = (2.0 * ts - a - b) / (b - a)
            cheb = np.empty((CHEB_N, ts.size))  # T_k(x), shared by every component
            cheb[0] = 1.0
            cheb[1] = x
            twice = 2.0 * x  # exact
            for k in range(2, CHEB_N):
                np.multiply(twice, cheb[k - 1], out=cheb[k])
                cheb[k] -= cheb[k - 2]
            ends = np.flatnonzero(np.diff(piece)) + 1
            starts = np.concatenate([[0], ends])
            sizes = np.diff(np.concatenate([starts, [ts.size]]))
            # each piece's points in whole tiles of _TILE rows (the last one padded with
            # zeros), every tile a product of the same shape: every point meets the same
            # arithmetic wherever it sits, so its value does not depend on the batch
            tiles = -(-sizes // _TILE)
            first = np.concatenate([[0], np.cumsum(tiles)[:-1]]) * _TILE
            where = np.arange(ts.size) + np.repeat(first - starts, sizes)
            A = np.zeros((int(tiles.sum()) * _TILE, CHEB_N))
            A[where] = cheb.T
            # one batched product: tile by tile, each with its piece's coefficients (the
            # same product of one shape per tile as a loop over the pieces would make)
            coef = self.coefficients[np.repeat(piece[starts], tiles)]  # (tiles, F, CHEB_N)
            rows = np.matmul(A.reshape(-1, _TILE, CHEB_N), np.swapaxes(coef, 1, 2)).reshape(-1, F)
            back = np.empty_like(order)  # the callers' order: a gather, not a scatter
            back[order] = np.arange(order.size)
            out[:, lo : lo + ts.size] = rows[where[back]].T
        return out


def build_pieces(
    evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    pieces: list[tuple[float, float]],
    *,
    tol: float,
    depth: int,
) -> Pieces:
    """Halve `pieces` until the Chebyshev series of `evaluate` is checked on each one.

    Parameters
    ----------
    evaluate : callable
        ``t`` ``(n,)`` to ``(values, scale)``, each ``(F, n)``: the function's components
        and the scale of their rounding error (``E |integrand|`` for a quadrature).
    pieces : list of (float, float)
        The starting pieces, disjoint, covering the interval.
    tol : float
        A piece is checked when, at the 19 points between its nodes, every component
        agrees with `evaluate` to ``tol * scale``.
    depth : int
        Halvings before a piece is marked ``direct``.

    Returns
    -------
    Pieces

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.chebyshev import build_pieces
    >>> f = build_pieces(lambda t: (np.exp(t)[None], np.exp(t)[None]), [(0.0, 1.0)],
    ...                  tol=1e-14, depth=4)
    >>> bool(abs(f.series(np.array([0.3]))[0, 0] / np.exp(0.3) - 1) < 1e-14)
    True
    """
    todo = list(pieces)
    done: list = []
    F = 0
    for level in range(depth + 1):
        if not todo:
            break
        ends = np.array(todo)
        mid, half = ends.mean(axis=1), 0.5 * np.diff(ends, axis=1)[:, 0]
        nodes = mid[:, None] + half[:, None] * _CHEB_X[None, :]
        probes = mid[:, None] + half[:, None] * _PROBES[None, :]
        values, size = evaluate(np.concatenate([nodes.ravel(), probes.ravel()]))
        k = nodes.size
        F = values.shape[0]
        vals = np.moveaxis(values[:, :k].reshape(F, *nodes.shape), 0, 1)  # (P, F, N)
        exact = np.moveaxis(values[:, k:].reshape(F, *probes.shape), 0, 1)
        scale = np.moveaxis(size[:, k:].reshape(F, *probes.shape), 0, 1)
        coef = vals @ _CHEB_M.T
        approx = coef @ _PROBE_T
        ok = np.all(np.abs(approx - exact) <= tol * scale, axis=(1, 2))
        done += [(lo, hi, c) for (lo, hi), c, good in zip(todo, coef, ok, strict=True) if good]
        if level == depth:  # not smooth to `tol` here: the caller evaluates directly
            done += [(lo, hi, None) for (lo, hi), good in zip(todo, ok, strict=True) if not good]
            break
        todo = [
            piece
            for (lo, hi), good in zip(todo, ok, strict=True)
            if not good
            for piece in ((lo, 0.5 * (lo + hi)), (0.5 * (lo + hi), hi))
        ]
    done.sort(key=lambda p: p[0])
    breaks = np.array([p[0] for p in done] + [done[-1][1]])
    direct = np.array([p[2] is None for p in done])
    blank = np.zeros((F, CHEB_N))
    coef = np.stack([blank if p[2] is None else p[2] for p in done])
    return Pieces(breaks, coef, direct)
