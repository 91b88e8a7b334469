"""Double-double helpers are exact where they claim to be."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from slr_theory import doubledouble as _dd

finite = st.floats(-1e100, 1e100, allow_nan=False, allow_subnormal=False)


@given(a=finite, b=finite)
def test_two_sum_and_two_prod_are_exact(a, b):
    s, e = _dd.two_sum(np.float64(a), np.float64(b))
    assert Fraction(s) + Fraction(e) == Fraction(a) + Fraction(b)
    if a == 0 or b == 0 or abs(a * b) > 1e-290:
        p, e = _dd.two_prod(np.float64(a), np.float64(b))
        assert Fraction(p) + Fraction(e) == Fraction(a) * Fraction(b)


@given(x=st.floats(0, 1e4), s=st.floats(0, 1e4))
def test_sq_over_is_correct_to_double_double(x, s):
    qh, ql = _dd.one_plus_c_sq(np.float64(s), 2.0)
    q_exact = 1 + 2 * Fraction(s) ** 2
    assert abs((Fraction(qh) + Fraction(ql)) / q_exact - 1) < Fraction(1, 10**31)
    hi, lo = (float(v) for v in _dd.sq_over(np.float64(x), qh, ql))
    exact = Fraction(x) ** 2 / (1 + 2 * Fraction(s) ** 2)
    if exact > Fraction(1, 10**280):  # the low part of a smaller square is subnormal
        assert abs((Fraction(hi) + Fraction(lo)) / exact - 1) < Fraction(1, 10**29)


@given(e=st.floats(0, 760))
def test_mul_exp_neg_matches_mpmath_into_subnormals(e):
    import mpmath as mp

    with mp.workdps(40):
        ref = 3.0 * mp.exp(-mp.mpf(e))
    got = _dd.mul_exp_neg(3.0, np.float64(e), 0.0)
    if ref > 2.3e-308:
        assert abs(got / ref - 1) < 4e-16
    else:
        assert abs(got - ref) <= 5e-324


# The near helpers, through both of their doors: extended precision where the platform
# has it, double-double where it has not (forced here whatever the platform).
doors = [True, False] if _dd.EXTENDED else [False]


def _near(extended, name, *args):
    """``name(*args)`` through the door `extended` says."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_dd, "EXTENDED", extended)
        return getattr(_dd, name)(*args)


NEAR = Fraction(1, 2**61)


@pytest.mark.parametrize("extended", doors)
@given(x=st.floats(-1e4, 1e4), s=st.floats(0, 1e4))
def test_near_sq_over_is_correct_to_2_to_the_minus_61(extended, x, s):
    qh, ql = _dd.one_plus_c_sq(np.float64(s), 2.0)
    hi, lo = (float(v) for v in _near(extended, "near_sq_over", np.float64(x), qh, ql))
    exact = (Fraction(x) ** 2) / (Fraction(qh) + Fraction(ql))
    if exact > Fraction(1, 10**280):  # the low part of a smaller square is subnormal
        assert abs((Fraction(hi) + Fraction(lo)) / exact - 1) < NEAR


@pytest.mark.parametrize("extended", doors)
@given(
    a=st.floats(1e-250, 1e4),
    a_lo=st.floats(-1.0, 1.0),
    b=st.floats(1.0, 1e6),
    b_lo=st.floats(-1.0, 1.0),
)
def test_near_div_and_add_div_are_correct_to_2_to_the_minus_61(extended, a, a_lo, b, b_lo):
    al, bl = a_lo * a * 2.0**-60, b_lo * b * 2.0**-60  # below half an ulp of the high parts
    A = Fraction(a) + Fraction(al)
    B = Fraction(b) + Fraction(bl)
    for name, exact in (("near_div", A / B), ("near_add_div", A + A / B)):
        args = np.float64(a), np.float64(al), np.float64(b), np.float64(bl)
        hi, lo = (float(v) for v in _near(extended, name, *args))
        assert abs((Fraction(hi) + Fraction(lo)) / exact - 1) < NEAR, name


@pytest.mark.parametrize("extended", doors)
def test_near_helpers_vectorise_over_the_denominator(extended):
    x = np.array([0.5, 3.0, -7.25, 100.0])
    qh, ql = _dd.one_plus_c_sq(np.array([0.0, 0.3, 2.0, 50.0]), 2.0)
    hi, lo = _near(extended, "near_sq_over", x, qh, ql)
    one = [_near(extended, "near_sq_over", x[i], qh[i], ql[i]) for i in range(4)]
    assert np.array_equal(hi, [h for h, _ in one]) and np.array_equal(lo, [v for _, v in one])


def test_mul_exp_neg_takes_the_general_branch_for_nan_and_empty():
    got = _dd.mul_exp_neg(1.0, np.array([1.0, np.nan, 700.0]), 0.0)
    assert got[0] == np.exp(-1.0) and np.isnan(got[1]) and 0 < got[2] < 1e-300
    assert _dd.mul_exp_neg(1.0, np.array([]), 0.0).shape == (0,)
