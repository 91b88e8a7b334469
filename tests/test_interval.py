"""Interval arithmetic: every result encloses the exact result of the operation on every
pair of numbers of its operands, checked in exact rational arithmetic (Fraction), and
mpmath at 50 digits for the square root."""

from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from slr_theory.interval import Interval, arb_bounds, from_arb

flint = pytest.importorskip("flint")

FINITE = st.floats(min_value=-1e150, max_value=1e150, allow_nan=False, allow_infinity=False)


def _interval(a: float, b: float) -> Interval:
    return Interval(min(a, b), max(a, b))


def _points(x: Interval) -> list[Fraction]:
    lo, hi = Fraction(float(x.lo)), Fraction(float(x.hi))
    return [lo, hi, (lo + hi) / 2, lo + (hi - lo) / 3]


def _inside(value: Fraction, x: Interval) -> bool:
    return Fraction(float(x.lo)) <= value <= Fraction(float(x.hi))


@given(FINITE, FINITE, FINITE, FINITE)
@example(0.1, 0.2, -0.3, 0.7)
@example(1e-300, 3e-300, -1e150, 1e150)
def test_add_sub_mul_enclose_the_exact_results(a, b, c, d):
    x, y = _interval(a, b), _interval(c, d)
    for name, op, exact in (
        ("+", x + y, lambda p, q: p + q),
        ("-", x - y, lambda p, q: p - q),
        ("*", x * y, lambda p, q: p * q),
    ):
        for p in _points(x):
            for q in _points(y):
                assert _inside(exact(p, q), op), (name, p, q)


@given(FINITE, FINITE, st.floats(min_value=-1e100, max_value=1e100, allow_nan=False))
@example(0.1, 0.3, 0.1)
def test_an_exact_float_operand_is_taken_as_the_number_it_is(a, b, c):
    x = _interval(a, b)
    for op, exact in ((x + c, lambda p: p + Fraction(c)), (x * c, lambda p: p * Fraction(c))):
        assert all(_inside(exact(p), op) for p in _points(x))
    assert all(_inside(Fraction(c) - p, c - x) for p in _points(x))


@given(st.floats(-1e30, 1e30), st.floats(-1e30, 1e30), st.integers(0, 7))
@example(-0.5, 0.25, 2)
@example(-3.0, -2.0, 3)
def test_powers_enclose_every_power_and_even_ones_are_nonnegative(a, b, n):
    x = _interval(a, b)
    p = x**n
    assert all(_inside(q**n, p) for q in _points(x))
    if n % 2 == 0:
        assert float(p.lo) >= 0.0
    if n and n % 2 == 0 and float(x.lo) < 0.0 < float(x.hi):
        assert float(p.lo) == 0.0


@given(st.floats(0.0, 1e200), st.floats(0.0, 1e200))
@example(0.0, 2.0)
def test_sqrt_and_reciprocal_enclose_the_50_digit_values(a, b):
    x = _interval(a, b)
    r = x.sqrt()
    with mp.workdps(50):
        for q in (float(x.lo), float(x.hi)):
            s = mp.sqrt(mp.mpf(q))
            assert mp.mpf(float(r.lo)) <= s <= mp.mpf(float(r.hi))
    if float(x.lo) > 1e-200:
        inv = x.reciprocal()
        for q in _points(x):
            assert _inside(1 / q, inv)


def test_arrays_broadcast_and_keep_their_shape():
    x = Interval(np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3) + 1)
    y = x * Interval(-1.0, 2.0) + 1.0
    assert y.shape == (2, 3)
    assert np.all(y.lo <= -np.arange(6.0).reshape(2, 3))
    assert x[1].shape == (3,)
    assert np.all(x.contains_zero() == (np.arange(6.0).reshape(2, 3) == 0))


@pytest.mark.parametrize(
    ("lo", "hi", "match"),
    [(1.0, 0.0, "lo <= hi"), (np.nan, 1.0, "NaN"), (0.0, np.nan, "NaN")],
)
def test_a_disordered_or_nan_interval_is_refused(lo, hi, match):
    with pytest.raises(ValueError, match=match):
        Interval(lo, hi)


def test_reciprocal_and_powers_refuse_what_they_cannot_enclose():
    with pytest.raises(ValueError, match="lo > 0"):
        Interval(-1.0, 1.0).reciprocal()
    with pytest.raises(ValueError, match="integer n >= 0"):
        Interval(1.0) ** 0.5


def test_from_arb_encloses_the_ball_and_rounds_outward():
    from flint import arb, ctx

    old, ctx.prec = ctx.prec, 200
    try:
        third = arb(1) / 3
        x = from_arb(third)
        assert x.shape == ()
        assert mp.mpf(float(x.lo)) < mp.mpf(1) / 3 < mp.mpf(float(x.hi))
        assert float(x.hi) - float(x.lo) <= 4 * np.spacing(1 / 3)
        both = from_arb([arb(2).sqrt(), -arb(2).sqrt()])
        assert both.shape == (2,)
        with mp.workdps(60):
            assert mp.mpf(float(both.lo[0])) < mp.sqrt(2) < mp.mpf(float(both.hi[0]))
    finally:
        ctx.prec = old


def test_long_arrays_round_outward_to_the_very_neighbours_nextafter_gives():
    """Long arrays step to their neighbouring floats by integer arithmetic on the bits: the
    same floats as ``np.nextafter`` for every pattern, the zeros of both signs, the
    infinities, the subnormals and the largest floats among them."""
    rng = np.random.default_rng(7)
    bits = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, 20_000, dtype=np.int64)
    x = bits.view(np.float64).copy()
    special = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        -2.2250738585072014e-308,
        np.finfo(float).max,
        -np.finfo(float).max,
        1.0,
        -1.0,
    ]
    x[: len(special)] = special
    x = x[~np.isnan(x)]
    for n in (len(x), 600, 511, 3):
        y = x[:n]
        with np.errstate(over="ignore"):
            down, up = np.nextafter(y, -np.inf), np.nextafter(y, np.inf)
            done = (Interval(y) + 0.0, Interval(y) - 0.0, Interval(y) * Interval(np.ones(n)))
        for s in done:
            assert np.array_equal(s.lo.view(np.int64), down.view(np.int64))
            assert np.array_equal(s.hi.view(np.int64), up.view(np.int64))


def test_a_balls_bounds_are_from_arbs_without_arrays():
    """One ball's bounds, as a cache of evaluations takes them, are the very floats of
    :func:`from_arb`, and enclose the 50-digit value."""
    for x in (0.3, 1e-300, 7.5, -2.0):
        ball = flint.arb(x).erf()
        lo, hi = arb_bounds(ball)
        ref = from_arb(ball)
        assert (lo, hi) == (float(ref.lo), float(ref.hi))
        with mp.workdps(50):
            assert mp.mpf(lo) <= mp.erf(mp.mpf(x)) <= mp.mpf(hi)


def _four_products(x: Interval, c: Interval) -> tuple[np.ndarray, np.ndarray]:
    """The bounds of ``x * c`` by the textbook formula: the least and greatest of the four
    products of bounds, each stepped outward by ``np.nextafter``."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.stack([x.lo * c.lo, x.lo * c.hi, x.hi * c.lo, x.hi * c.hi])
        return np.nextafter(p.min(axis=0), -np.inf), np.nextafter(p.max(axis=0), np.inf)


CONSTANTS = [
    (2.0, 2.0),
    (-3.0, -3.0),
    (0.1, np.nextafter(0.1, 1.0)),
    (-7.5, -1e-300),
    (5e-324, 1e308),
    (-np.finfo(float).max, -5e-324),
    (1.0, 1.0),
    (0.0, 0.0),  # zero: the four products
    (1e308, 1e308),
    (-5e-324, -5e-324),
    (-0.5, 0.25),  # holds zero: the four products
    (0.0, 3.0),
    (-np.inf, -1.0),  # unbounded: the four products
    (1.0, np.inf),
]


@pytest.mark.parametrize(("cl", "ch"), CONSTANTS)
def test_arrays_times_a_constant_are_the_four_products_bit_for_bit(cl, ch):
    """An array of intervals times a 0-d interval (either way round), or a degenerate one's
    float, takes two products per bound (one, by a float) where the constant has one strict
    sign: the very floats of the four-product formula, for every bit pattern of the bounds (zeros of both signs, subnormals, the
    infinities and the largest floats among them), on short and long arrays."""
    rng = np.random.default_rng(11)
    u, v = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, (2, 4_000), dtype=np.int64)
    u, v = u.view(np.float64), v.view(np.float64)
    special = [0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, np.finfo(float).max, 1.0, -1.0]
    u[: len(special) ** 2] = np.repeat(special, len(special))
    v[: len(special) ** 2] = np.tile(special, len(special))
    keep = ~(np.isnan(u) | np.isnan(v))
    c = Interval(cl, ch)
    for n in (3_000, 600, 511, 5):
        a, b = u[keep][:n], v[keep][:n]
        x = Interval(np.minimum(a, b), np.maximum(a, b))
        lo, hi = _four_products(x, c)
        if np.isnan(lo).any() or np.isnan(hi).any():  # 0 x inf: no interval to compare
            ok = ~(np.isnan(lo) | np.isnan(hi))
            assert cl <= 0.0 <= ch or np.isinf(cl) or np.isinf(ch)
            x, lo, hi = x[ok], lo[ok], hi[ok]
        exact = [cl] if cl == ch and np.isfinite(cl) else []  # a float: the number it is
        with np.errstate(over="ignore"):
            for y in (x * c, c * x, *(x * k for k in exact), *(k * x for k in exact)):
                assert np.array_equal(y.lo.view(np.int64), lo.view(np.int64))
                assert np.array_equal(y.hi.view(np.int64), hi.view(np.int64))


@given(st.lists(FINITE, min_size=2, max_size=6), FINITE, FINITE)
@example([0.1, -0.3, 0.2, 0.7], 0.3, 0.30000000000000004)
@example([-1e150, 1e-300], -2.0, -2.0)
def test_arrays_times_a_constant_enclose_the_exact_products(values, c, d):
    """Each interval of an array times a 0-d interval encloses the exact product of every
    pair of their numbers (Fraction)."""
    a = np.array(values[: len(values) // 2])
    b = np.array(values[len(values) // 2 : 2 * (len(values) // 2)])
    x, k = Interval(np.minimum(a, b), np.maximum(a, b)), _interval(c, d)
    for y in (x * k, k * x):
        assert y.shape == x.shape
        for i in range(x.shape[0]):
            for p in _points(x[i]):
                for q in _points(k):
                    assert _inside(p * q, y[i])
