"""Piecewise Chebyshev interpolants: checked as built, evaluated by piece, the same value
for a point wherever it sits in a batch."""

from __future__ import annotations

import numpy as np
from numpy.polynomial import chebyshev as C

from slr_theory.chebyshev import CHEB_N, Pieces, build_pieces


def _functions(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values = np.stack([np.exp(np.sin(t)), np.cos(3.0 * t), 1.0 / (2.0 + t * t)])
    return values, np.abs(values) + 1.0


def test_the_series_is_the_function_between_the_nodes():
    f = build_pieces(_functions, [(-4.0, 0.0), (0.0, 4.0)], tol=1e-14, depth=6)
    assert not np.any(f.direct) and len(f.breaks) > 3
    t = np.random.default_rng(0).uniform(-4, 4, 20_000)
    want, scale = _functions(t)
    assert np.max(np.abs(f.series(t) - want) / scale) < 1e-14


def test_the_series_by_piece_is_numpys_chebval_at_each_point():
    """Against numpy's Chebyshev evaluation, one point at a time (no shared arithmetic):
    to a few ulps of the series' absolute sum."""
    rng = np.random.default_rng(1)
    P, F = 7, 5
    breaks = np.sort(rng.uniform(-3, 3, P + 1))
    coef = rng.standard_normal((P, F, CHEB_N)) * 0.5 ** np.arange(CHEB_N)
    f = Pieces(breaks, coef, np.zeros(P, dtype=bool))
    t = rng.uniform(breaks[0], breaks[-1], 3000)
    got = f.series(t)
    piece = f.piece(t)
    a, b = breaks[piece], breaks[piece + 1]
    x = (2.0 * t - a - b) / (b - a)
    for i in range(0, t.size, 97):
        want = C.chebval(x[i], coef[piece[i]].T)
        size = np.abs(coef[piece[i]]).sum(axis=1)
        np.testing.assert_array_less(np.abs(got[:, i] - want), 8 * np.finfo(float).eps * size)


def test_a_points_value_does_not_depend_on_the_batch():
    """Bit for bit: alone, in a small batch, in a large one (several blocks), and shuffled."""
    rng = np.random.default_rng(2)
    P, F = 40, 11
    breaks = np.linspace(-5, 5, P + 1)
    coef = rng.standard_normal((P, F, CHEB_N))
    f = Pieces(breaks, coef, np.zeros(P, dtype=bool))
    t = rng.uniform(-5, 5, 150_000)
    alone = np.concatenate([f.series(t[i : i + 1]) for i in range(50)], axis=1)
    whole = f.series(t)
    np.testing.assert_array_equal(whole[:, :50], alone)
    shuffle = rng.permutation(t.size)
    np.testing.assert_array_equal(f.series(t[shuffle]), whole[:, shuffle])
    for size in (3, 65, 1000):
        np.testing.assert_array_equal(f.series(t[:size]), whole[:, :size])
    out = np.full((F, 70), np.nan)
    assert f.series(t[:70], out=out) is out
    np.testing.assert_array_equal(out, whole[:, :70])
