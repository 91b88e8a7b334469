"""Double-double helpers are exact where they claim to be."""

from fractions import Fraction

import numpy as np
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
