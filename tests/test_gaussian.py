"""slr_theory.gaussian against 40-digit mpmath references, limits, symmetries and Monte Carlo."""

import mpmath as mp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.special import erf, owens_t

from slr_theory import gaussian as g
from slr_theory.verify.reference import (
    CHECK_DPS,
    MP_FUNCTIONS,
    mp_cancellation_scale,
    mp_erf_pair,
    mp_gaussian_function,
)

from .references import remembered
from .strategies import means, sigmas

# The Gaussian closed forms never take the door of the exponents (only the erf model's
# features do): verified test by test (conftest's door_free).
pytestmark = pytest.mark.door_free

NAMES = list(MP_FUNCTIONS)  # every E h(mu + sigma Z) function of slr_theory.gaussian
ODD = {"mean_erf", "mean_erf_second", "mean_x_erf_prime", "mean_x2_erf", "zeta_t", "zeta_ttt"}
TINY = 2.2250738585072014e-308  # smallest normal double
# Against 40-digit mpmath. 1e-14 is 45 ulp: the measured peaks (~1.4 ulp) plus any
# platform's exp (1 ulp of the correctly rounded value, NumPy's accuracy data; at most
# three exp calls per function) stay far below it; SciPy's erf, erfc, erfcx and Owen's
# T are SciPy's own code, the same on every platform.
RTOL = 1e-14  # the contract is 1e-13; measured peaks are ~3e-16 (docs/accuracy.md)
# mean_erfc_sq switches at mu/sqrt(q) = 1 from 2 erfc - zeta_c (which loses up to
# log2(2/erfc(1)) = 3.7 bits just below the switch) to a Laguerre tail integral:
# measured up to ~50 ulp there, so it is held to the contract itself.
RTOL_BY_NAME = {"mean_erfc_sq": 1e-13}
# Each mpmath reference costs ~0.1-2 s: a bounded number per property by default;
# the slow-marked sweeps and benchmarks/accuracy.py cover the domain densely.
mp_budget = settings(max_examples=10)


# |value| <= poly(mu) exp(-mu^2 / (1 + 2 sigma^2)) (for mean_erfc_sq: when mu > 0)
GAUSSIAN_DECAY = {
    "mean_erf_prime",
    "mean_erf_second",
    "mean_erf_third",
    "mean_x_erf_prime",
    "zeta_t",
    "zeta_tt",
    "zeta_ttt",
    "zeta_c",
}


def _far_below_underflow(name, mu, sigma):
    """The true value is < 1e-300 without asking mpmath (whose escalating precision
    takes minutes to resolve exp(-1e6)): exponent > 800 and |mu| <= 1e4."""
    decays = name in GAUSSIAN_DECAY or (name == "mean_erfc_sq" and mu > 0)
    return decays and abs(mu) <= 1e4 and mu * mu / (1 + 2 * sigma * sigma) > 800


def assert_matches_reference(name, mu, sigma, rtol=None):
    rtol = RTOL_BY_NAME.get(name, RTOL) if rtol is None else rtol
    value = float(getattr(g, name)(mu, sigma))
    if mu == 0.0 and name in ODD:
        assert value == 0.0
        return
    if _far_below_underflow(name, mu, sigma):
        assert value == 0.0
        return
    ref = remembered(mp_gaussian_function, name, mu, sigma, CHECK_DPS)
    if abs(ref) < TINY:  # below the smallest normal: underflow (or a subnormal) is correct
        assert abs(value - float(ref)) <= 2 * TINY
        return
    # sign-changing functions: relative to the terms that cancel near their zeros
    scale = max(abs(ref), remembered(mp_cancellation_scale, name, mu, sigma))
    err = abs(mp.mpf(value) - ref) / scale
    assert err <= rtol, f"{name}({mu!r}, {sigma!r}) = {value!r}, ref {ref}, rel err {err}"


STRESS = [
    (0.0, 0.0),
    (1e-3, 0.0),
    (0.0, 1e-3),
    (1e-200, 1e-160),
    (26.0, 0.0),  # tails at the underflow edge
    (26.5, 1e-3),
    pytest.param(-20.0, 0.5, marks=pytest.mark.slow),  # mid-range: the random points
    pytest.param(-3.0, 2.0, marks=pytest.mark.slow),  # cover them; the sweep keeps them
    (1e4, 1e4),
    pytest.param(0.0, 1e4, marks=pytest.mark.slow),
    pytest.param(5.0, 100.0, marks=pytest.mark.slow),
    pytest.param(100.0, 50.0, marks=pytest.mark.slow),
    (2.225073858507e-311, 630.0),  # subnormal mean: mean_x2_erf had lost 4e-12 (slow sweep)
    (-5e-320, 1e4),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mu, sigma", STRESS)
def test_stress_points_match_mpmath(name, mu, sigma):
    assert_matches_reference(name, mu, sigma)


@pytest.mark.parametrize("name", NAMES)
@mp_budget
@given(mu=means, sigma=sigmas)
@example(mu=0.9921875, sigma=0.0)  # found by the thorough sweep: 48 ulp in mean_erfc_sq
def test_random_points_match_mpmath(name, mu, sigma):
    assert_matches_reference(name, mu, sigma)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=200)
@given(mu=means, sigma=sigmas)
def test_log_domain_matches_mpmath_thoroughly(name, mu, sigma):
    assert_matches_reference(name, mu, sigma)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100)
@given(mu=st.floats(-1e4, 1e4), sigma=st.floats(0, 1e4))
def test_uniform_domain_matches_mpmath(name, mu, sigma):
    assert_matches_reference(name, mu, sigma)


# --- tiny values: full relative precision down to the smallest normal double


@given(t=st.floats(-300, -2).map(lambda e: 10.0**e), s=st.floats(-300, -2).map(lambda e: 10.0**e))
@example(t=0.0, s=1e-3)  # the Owen's T form gives 1.6e-10 relative error here (docs/theory.md §4)
@example(t=1e-154, s=1e-154)
def test_zeta_tiny_against_series(t, s):
    # zeta = (4/pi)(t^2 + s^2) (1 + O(t^2 + s^2)); exact to 1e-4 relative for t, s <= 1e-2
    series = 4.0 / np.pi * (t * t + s * s)
    value = g.zeta(t, s)
    if series < TINY:
        assert value <= 2 * TINY
    else:
        assert abs(value / series - 1) <= 3 * (t * t + s * s) + 1e-15


@given(t=st.floats(3, 26), s=st.floats(0, 0.5))
def test_zeta_c_tail_against_erfc_bound(t, s):
    # Jensen: zeta >= erf(t/sqrt q)^2, i.e. 1 - zeta <= erfc(x)(1 + erf(x)); and 1 - zeta > 0
    value = g.zeta_c(t, s)
    with mp.workdps(40):
        x = mp.mpf(t) / mp.sqrt(1 + 2 * mp.mpf(s) ** 2)
        bound = float(mp.erfc(x) * (1 + mp.erf(x)))
    assert 0 < value <= bound * (1 + 1e-14)


def test_zeta_c_at_s0_equals_one_minus_erf_squared():
    t = np.linspace(-26, 26, 1001)
    exact = [float(mp.erfc(abs(mp.mpf(x))) * (2 - mp.erfc(abs(mp.mpf(x))))) for x in t]
    # mpmath reference; 45 ulp of margin over a few roundings of erfc (RTOL above)
    np.testing.assert_allclose(g.zeta_c(t, 0.0), exact, rtol=1e-14)


@given(t=st.floats(-5, 5), s=st.floats(0, 5))
def test_zeta_equals_one_minus_8_owens_t_where_well_conditioned(t, s):
    # The paper's closed form; only well-conditioned where zeta is not small
    h = np.sqrt(2) * t / np.sqrt(1 + 2 * s * s)
    owen = 1 - 8 * owens_t(h, 1 / np.sqrt(1 + 4 * s * s))
    z = g.zeta(t, s)
    assert abs(z - owen) <= 1e-14 * (1 + 1 / max(z, 1e-300)) * max(z, 1e-300) + 2e-15


# --- symmetries, limits, bounds, monotonicity


@pytest.mark.parametrize("name", NAMES)
@given(mu=means, sigma=sigmas)
def test_parity_in_mu(name, mu, sigma):
    f = getattr(g, name)
    if (
        name == "mean_erfc_sq"
    ):  # erfc(-x) = 2 - erfc(x): E erfc(-X)^2 = 4 - 4 E erfc(X) + E erfc(X)^2
        lhs, rhs = f(-mu, sigma), 4 - 4 * (1 - g.mean_erf(mu, sigma)) + f(mu, sigma)
        assert abs(lhs - rhs) <= 4e-15 * max(abs(lhs), 1)
        return
    sign = -1.0 if name in ODD else 1.0
    assert f(-mu, sigma) == sign * f(mu, sigma)


@pytest.mark.parametrize("name", NAMES)
@given(mu=st.floats(-10, 10))
def test_sigma_to_zero_limit_is_continuous(name, mu):
    f = getattr(g, name)
    a, b = f(mu, 0.0), f(mu, 1e-9)
    assert abs(a - b) <= 1e-7 * max(1.0, abs(a))


def test_sigma_zero_is_the_function_itself():
    x = np.linspace(-6, 6, 241)
    # exp(-x*x) in double rounds x*x (error up to 2 x^2 eps); take erf' from mpmath
    with mp.workdps(40):
        erfp = np.array([float(2 / mp.sqrt(mp.pi) * mp.exp(-(mp.mpf(v) ** 2))) for v in x])
    # at sigma = 0 each is the function itself. erf, x erf, x^2 erf: the same erf call
    # and at most two roundings of a product (1e-15 = 4.5 ulp). erf' against mpmath: the
    # implementation carries x^2 in double-double, so its error is exp(-hi) and exp(-lo)
    # (1.5 ulp each on any platform, NumPy's 1-ulp exp) and three roundings (the factor
    # 2/sqrt(pi q), two products): 4.5 ulp, plus the reference's own rounding, 0.5
    np.testing.assert_allclose(g.mean_erf(x, 0), erf(x), rtol=1e-15)
    np.testing.assert_allclose(g.mean_erf_prime(x, 0), erfp, rtol=5.0 * 2.0**-52)
    np.testing.assert_allclose(g.mean_x_erf(x, 0), x * erf(x), rtol=1e-15)
    np.testing.assert_allclose(g.mean_x2_erf(x, 0), x * x * erf(x), rtol=1e-15)
    # zeta's own route at s = 0 (SciPy's erf and owens_t: its own code, the same on every
    # platform, no exp of NumPy's) against erf(x)^2: 13.5 ulp
    np.testing.assert_allclose(g.zeta(x, 0), erf(x) ** 2, rtol=3e-15, atol=1e-300)


@given(mu=st.floats(-100, 100))
def test_sigma_to_infinity_limits(mu):
    s = 1e8
    # E erf -> mu * 2/(sqrt(pi) sqrt(2) s); zeta -> 1 - (2/pi)/s; E erf' -> (2/sqrt pi)/(sqrt2 s)
    assert abs(g.mean_erf(mu, s) - np.sqrt(2 / np.pi) * mu / s) <= 1e-12 * (abs(mu) / s + 1e-300)
    assert abs(g.zeta_c(mu, s) * s - 2 / np.pi) <= 1e-6
    assert abs(g.mean_erf_prime(mu, s) * s - np.sqrt(2 / np.pi)) <= 1e-10


@given(t=means, s=sigmas)
@example(t=1e-157, s=0.0)  # z = erf(t)^2 is subnormal: its rounding is absolute there
def test_zeta_bounds_and_complement(t, s):
    z, zc = g.zeta(t, s), g.zeta_c(t, s)
    assert 0.0 <= z <= 1.0
    assert 0.0 <= zc <= 1.0
    assert abs((z + zc) - 1.0) <= 4e-16
    tiny = 4 * np.finfo(np.float64).smallest_subnormal
    assert z >= g.mean_erf(t, s) ** 2 * (1 - 1e-15) - tiny  # Jensen


@given(s=st.floats(0, 100))
def test_zeta_increases_in_abs_t(s):
    t = np.linspace(0, 30, 301)
    z = g.zeta(t, s)
    assert np.all(np.diff(z) >= 0)
    assert np.all(g.zeta_t(t, s) >= 0)


def test_zeta_zero_t_closed_form_arcsin():
    s = np.logspace(-8, 4, 200)
    # arcsin near 1 is ill-conditioned in double: evaluate the formula in mpmath
    with mp.workdps(40):
        ref = [
            float(2 / mp.pi * mp.asin(2 * mp.mpf(v) ** 2 / (1 + 2 * mp.mpf(v) ** 2))) for v in s
        ]
    # mpmath reference; RTOL's margin (45 ulp)
    np.testing.assert_allclose(g.zeta(0.0, s), ref, rtol=1e-14)


@given(t=st.floats(-8, 8), s=st.floats(0, 5))
def test_zeta_derivatives_against_finite_differences(t, s):
    h = 1e-5
    fd1 = (g.zeta(t + h, s) - g.zeta(t - h, s)) / (2 * h)
    fd2 = (g.zeta_t(t + h, s) - g.zeta_t(t - h, s)) / (2 * h)
    assert abs(fd1 - g.zeta_t(t, s)) <= 1e-8
    assert abs(fd2 - g.zeta_tt(t, s)) <= 1e-8


@given(mu=st.floats(-8, 8), sigma=st.floats(0, 5))
def test_mu_derivatives_chain(mu, sigma):
    # d/dmu E erf = E erf', d/dmu E erf' = E erf''
    h = 1e-5
    d1 = (g.mean_erf(mu + h, sigma) - g.mean_erf(mu - h, sigma)) / (2 * h)
    d2 = (g.mean_erf_prime(mu + h, sigma) - g.mean_erf_prime(mu - h, sigma)) / (2 * h)
    assert abs(d1 - g.mean_erf_prime(mu, sigma)) <= 1e-8
    assert abs(d2 - g.mean_erf_second(mu, sigma)) <= 1e-8
    assert g.mean_x_erf_prime(mu, sigma) == pytest.approx(
        -g.mean_erf_second(mu, sigma) / 2, rel=1e-14, abs=1e-300
    )


# --- Monte Carlo (independent of both the closed forms and mpmath)


MC_CASES = [(name, mu, s) for name in NAMES for (mu, s) in [(0.7, 1.3), (-1.5, 0.4)]]


@pytest.mark.parametrize("name, mu, sigma", MC_CASES)
def test_monte_carlo_z_score(name, mu, sigma):
    from slr_theory.verify.gaussian_checks import _NUMPY_INTEGRANDS

    rng = np.random.default_rng(20251129)
    n = 400_000
    samples = _NUMPY_INTEGRANDS[name](mu + sigma * rng.standard_normal(n))
    se = samples.std(ddof=1) / np.sqrt(n)
    z = (samples.mean() - getattr(g, name)(mu, sigma)) / se
    assert abs(z) < 5, (name, z, se)  # false-alarm rate ~6e-7 per test


# --- erf_pair


def _pair_params():
    return st.tuples(
        st.floats(-4, 4),
        st.floats(-4, 4),
        st.floats(0.01, 4),
        st.floats(-1, 1),
        st.floats(0.01, 4),
    ).map(lambda p: (p[0], p[1], p[2], p[3] * np.sqrt(p[2] * p[4]), p[4]))


@mp_budget
@given(p=_pair_params())
@example(p=(0.3, 0.3, 1.0, 0.999999, 1.0))  # near-singular covariance
@example(p=(2.0, -2.0, 1.0, -1.0, 1.0))
def test_erf_pair_matches_mpmath(p):
    value = g.erf_pair(*p)
    ref = remembered(mp_erf_pair, *p, dps=CHECK_DPS)
    scale = max(abs(ref), abs(g.mean_erf(p[0], np.sqrt(p[2])) * g.mean_erf(p[1], np.sqrt(p[4]))))
    assert abs(mp.mpf(value) - ref) <= 1e-14 * max(scale, 1e-3)


@given(p=_pair_params())
def test_erf_pair_symmetries_and_reductions(p):
    m1, m2, v1, c, v2 = p
    assert g.erf_pair(m1, m2, v1, c, v2) == pytest.approx(g.erf_pair(m2, m1, v2, c, v1), abs=1e-15)
    assert g.erf_pair(m1, m2, v1, c, v2) == pytest.approx(
        -g.erf_pair(-m1, m2, v1, -c, v2), abs=1e-15
    )
    # independent: product of means
    assert g.erf_pair(m1, m2, v1, 0.0, v2) == pytest.approx(
        g.mean_erf(m1, np.sqrt(v1)) * g.mean_erf(m2, np.sqrt(v2)), abs=1e-15
    )
    # perfectly correlated copies: zeta
    assert g.erf_pair(m1, m1, v1, v1, v1) == pytest.approx(g.zeta(m1, np.sqrt(v1)), abs=2e-15)


def test_erf_pair_centred_is_arcsin_lemma():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(500, 2, 2))
    s = a @ np.swapaxes(a, 1, 2)
    v1, c, v2 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 1]
    ref = 2 / np.pi * np.arcsin(2 * c / np.sqrt((1 + 2 * v1) * (1 + 2 * v2)))
    # the same arcsin lemma in double on both sides (arcsin, sqrt: IEEE/libm 1 ulp),
    # conditioned by 1/sqrt(1 - z^2) near |z| = 1: 1e-13 covers z up to 1 - 1e-5
    np.testing.assert_allclose(g.erf_pair(0.0, 0.0, v1, c, v2), ref, rtol=1e-13, atol=1e-16)


def test_erf_pair_monte_carlo():
    rng = np.random.default_rng(7)
    n = 400_000
    m = np.array([0.4, -0.8])
    cov = np.array([[0.9, 0.5], [0.5, 1.2]])
    x = rng.multivariate_normal(m, cov, size=n)
    samples = erf(x[:, 0]) * erf(x[:, 1])
    z = (samples.mean() - g.erf_pair(0.4, -0.8, 0.9, 0.5, 1.2)) / (
        samples.std(ddof=1) / np.sqrt(n)
    )
    assert abs(z) < 5


# --- vectorisation, dtype and the input policy


@pytest.mark.parametrize("name", NAMES)
def test_broadcasting_and_scalar_return(name):
    f = getattr(g, name)
    mu = np.linspace(-3, 3, 7)[:, None]
    sigma = np.array([0.0, 0.5, 2.0])
    out = f(mu, sigma)
    assert out.shape == (7, 3) and out.dtype == np.float64
    for i in range(7):
        for j in range(3):
            assert out[i, j] == f(float(mu[i, 0]), float(sigma[j]))
    assert np.ndim(f(0.5, 1.0)) == 0


@pytest.mark.parametrize("name", NAMES)
def test_nan_propagates_without_warnings(name):
    f = getattr(g, name)
    out = f(np.array([np.nan, 1.0]), np.array([1.0, np.nan]))
    assert np.isnan(out).all()


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_raises_value_error(name):
    f = getattr(g, name)
    sname = "s" if name.startswith("zeta") or name == "mean_erfc_sq" else "sigma"
    with pytest.raises(ValueError, match=rf"`{sname}` must be >= 0, got -1.0"):
        f(0.0, -1.0)
    with pytest.raises(ValueError, match="must be finite, got inf"):
        f(np.inf, 1.0)
    with pytest.raises(ValueError, match=r"shapes do not broadcast.*\(2,\).*\(3,\)"):
        f(np.zeros(2), np.ones(3))
    with pytest.raises(ValueError, match="real numbers"):
        f("a", 1.0)
    with pytest.raises(ValueError, match=r"\|.*\| <= 1e\+100"):
        f(1e101, 1.0)


def test_erf_pair_rejects_non_psd():
    with pytest.raises(
        ValueError, match=r"positive semi-definite.*var1=1\.0, cov=2\.0, var2=1\.0"
    ):
        g.erf_pair(0.0, 0.0, 1.0, 2.0, 1.0)
    with pytest.raises(ValueError, match="`var2` must be >= 0"):
        g.erf_pair(0.0, 0.0, 1.0, 0.0, -1.0)


@pytest.mark.parametrize("name", NAMES)
def test_extreme_domain_raises_no_floating_point_warnings(name):
    f = getattr(g, name)
    mu = np.array([0, 5e-324, 1e-300, 1e-150, 1.0, 26.6, 27.5, 1e4, 1e50, 1e100])
    sigma = np.array([0, 5e-324, 1e-300, 1e-150, 1.0, 1e4, 1e50, 1e100])[:, None]
    with np.errstate(all="raise"):
        try:
            out = f(mu, sigma)
        except FloatingPointError as exc:  # underflow is IEEE-correct and allowed
            if "underflow" not in str(exc):
                raise
            with np.errstate(all="raise", under="ignore"):
                out = f(mu, sigma)
    assert np.isfinite(out).all()


@pytest.mark.parametrize("f", [g.mean_erf_derivative, g.zeta_derivative])
@pytest.mark.parametrize("n", [-1, 1.5, True, "2", None])
def test_derivative_order_is_validated(f, n):
    with pytest.raises(ValueError, match="`n` must be a non-negative integer"):
        f(0.3, 0.5, n)


# --- derivatives of any order up to MAX_DERIVATIVE_ORDER, over the whole domain


def _mp_hermite_sum(m, x, *, absolute):
    """``H_m(x)``, or with ``absolute`` the sum of its terms' magnitudes ``|i^-m H_m(i|x|)|``."""
    return abs(mp.hermite(m, 1j * abs(x))) if absolute else mp.hermite(m, x)


def _mp_mean_erf_derivative(mu, sigma, n, *, absolute=False):
    """``q^{-n/2} erf^(n)(mu/sqrt q)`` from erf's derivatives (the Hermite identity), or
    with `absolute` the sum of the magnitudes of its terms (the cancellation scale)."""
    mu, sigma = mp.mpf(mu), mp.mpf(sigma)
    q = 1 + 2 * sigma**2
    x = mu / mp.sqrt(q)
    h = _mp_hermite_sum(n - 1, x, absolute=absolute) * (1 if absolute else (-1) ** (n - 1))
    return q ** (-mp.mpf(n) / 2) * 2 / mp.sqrt(mp.pi) * h * mp.exp(-(x**2))


def _mp_zeta_derivative(t, s, n, *, absolute=False):
    """``d^n zeta/dt^n`` by Leibniz's rule on ``zeta_t`` in 50 digits (or the magnitudes' sum)."""
    from math import comb

    t, s = mp.mpf(t), mp.mpf(s)
    q, r = 1 + 2 * s**2, 1 + 4 * s**2
    x, sr = t / mp.sqrt(q), mp.sqrt(1 + 4 * s**2)
    sign = (lambda k: 1) if absolute else (lambda k: (-1) ** k)
    total = 0
    for k in range(n):
        if k == 0:
            dk = mp.erf(x / sr)
            dk = abs(dk) if absolute else dk
        else:
            dk = (
                sign(k - 1)
                * 2
                / mp.sqrt(mp.pi)
                * _mp_hermite_sum(k - 1, x / sr, absolute=absolute)
                * mp.exp(-(x**2) / r)
                * r ** (-mp.mpf(k) / 2)
            )
        total += (
            comb(n - 1, k)
            * sign(n - 1 - k)
            * _mp_hermite_sum(n - 1 - k, x, absolute=absolute)
            * dk
        )
    return 4 / mp.sqrt(mp.pi) * q ** (-mp.mpf(n) / 2) * mp.exp(-(x**2)) * total


def test_mp_zeta_derivative_reference_is_the_derivative():
    # the Leibniz reference against mpmath's own numerical differentiation of zeta_t
    with mp.workdps(50):
        for t, s, n in [(0.7, 0.3, 5), (2.5, 1.2, 9), (-1.3, 0.05, 13)]:
            tt, ss = mp.mpf(t), mp.mpf(s)
            q, r = 1 + 2 * ss**2, 1 + 4 * ss**2

            def zt(u, q=q, r=r):
                return 4 / mp.sqrt(mp.pi * q) * mp.exp(-(u**2) / q) * mp.erf(u / mp.sqrt(q * r))

            with mp.workdps(120):
                ref = mp.diff(zt, tt, n - 1)
            assert abs(_mp_zeta_derivative(t, s, n) - ref) <= mp.mpf(10) ** -45 * abs(ref)


@pytest.mark.parametrize("n", [4, 7, 13, 25, 38, 50])
@pytest.mark.parametrize("name", ["mean_erf_derivative", "zeta_derivative"])
def test_high_order_derivatives_against_mpmath(name, n):
    """Within 32 ulp of the terms' magnitude (Hermite polynomials cancel near their
    zeros), over means up to 160, standard deviations up to 1e100; 0 only where the value
    is below the smallest double. Measured peak: 14 ulp at n = 50; the platform moves it
    by at most the two exp calls' 3 ulp (NumPy's 1-ulp exp), and the rest is SciPy's own
    code, the same everywhere."""
    f = getattr(g, name)
    ref = _mp_mean_erf_derivative if name == "mean_erf_derivative" else _mp_zeta_derivative
    rng = np.random.default_rng(n)
    mu = rng.choice([-1.0, 1.0], 40) * 10 ** rng.uniform(-3, 2.2, 40)
    sigma = np.select(
        [np.arange(40) % 3 == 0, np.arange(40) % 3 == 1],
        [0.0, 10 ** rng.uniform(-3, 3, 40)],
        10 ** rng.uniform(-3, 100, 40),
    )
    got = f(mu, sigma, n)
    with mp.workdps(50):
        for m, s, value in zip(mu, sigma, got, strict=True):
            scale = ref(m, s, n, absolute=True)
            if scale < TINY:
                assert abs(value) <= 2 * TINY, (m, s)
                continue
            err = abs(mp.mpf(float(value)) - ref(m, s, n)) / scale
            assert err <= 32 * 2**-52, (m, s, float(err) / 2**-52)


@pytest.mark.parametrize("f", [g.mean_erf_derivative, g.zeta_derivative])
def test_every_order_is_finite_without_warnings_over_the_domain(f):
    mu = np.concatenate([-np.logspace(-300, 100, 60), [0.0], np.logspace(-300, 100, 60)])
    sigma = np.concatenate([[0.0], np.logspace(-300, 100, 30)])[:, None]
    for n in range(g.MAX_DERIVATIVE_ORDER + 1):
        assert np.isfinite(f(mu, sigma, n)).all(), n  # warnings are errors in the suite
    with pytest.raises(ValueError, match=r"`n` must be <= 50, got 51"):
        f(0.3, 0.5, g.MAX_DERIVATIVE_ORDER + 1)


@pytest.mark.parametrize("n", [5, 9])
def test_high_order_mean_erf_derivative_against_monte_carlo(n):
    """The sample mean of ``erf^(n)(mu + sigma Z)`` over 4e5 draws, within 5 standard errors."""
    from scipy.special import eval_hermite

    mu, sigma = 0.4, 0.7
    z = mu + sigma * np.random.default_rng(n).standard_normal(400_000)
    draws = (-1.0) ** (n - 1) * 2 / np.sqrt(np.pi) * eval_hermite(n - 1, z) * np.exp(-(z**2))
    se = draws.std(ddof=1) / np.sqrt(draws.size)
    assert abs(draws.mean() - g.mean_erf_derivative(mu, sigma, n)) <= 5 * se


@pytest.mark.parametrize("s", [1e-3, 0.3, 0.7071067811865476, 5.0])
def test_zeta_reduced_gives_each_point_the_same_bits_whatever_the_batch(s):
    # a few points take both branches and one select (no masks, Owen's T kept where it
    # rounds to 1: 8 T <= 2 erfc|x| < 2**-54 for x^2 >= 36); many points take masks; a
    # point alone takes the series or not: every route, the same value to the bit
    r = 1.0 + 4.0 * s * s
    ir, z0 = 1.0 / np.sqrt(r), 2.0 / np.pi * np.arctan2(2.0 * s * s, np.sqrt(r))
    c = g.zeta_series_coefficients(r)
    x = np.concatenate(
        [
            np.linspace(-8.0, 8.0, 41),
            [0.0, 0.7071067811865475, 0.7071067811865476, 5.999999999999999, 6.0],
            [6.000000000000001, 7.5, 40.0, 1e10, np.inf, -np.inf, np.nan],
        ]
    )
    few = g.zeta_reduced(x, ir, z0, c)  # <= 64 points
    many = g.zeta_reduced(np.tile(x, 3), ir, z0, c)[: x.size]
    alone = np.array([g.zeta_reduced(np.array([v]), ir, z0, c)[0] for v in x])
    np.testing.assert_array_equal(few, many)
    np.testing.assert_array_equal(few, alone)
    assert np.all(few[np.abs(x) >= 6.0] == 1.0) and np.isnan(few[-1])


def test_plackett_rule_is_scipys_gauss_legendre_rule_near_mpmaths():
    """The 20-point rule is written out (no import computes it): the same doubles as
    SciPy's ``roots_legendre`` and, independently, near mpmath's nodes and weights (the
    roots of P_20 by Newton at 40 digits, the weights 2 / ((1 - x^2) P'^2)): the nodes
    within 2.7 ulp, the weights within 3.3e-14 relative (164 ulp at the outermost node,
    SciPy's own error, kept: Plackett's branch is checked against mpmath as a whole)."""
    from scipy.special import roots_legendre

    from slr_theory.gaussian.series import legendre20_rule

    x, w = legendre20_rule()
    sx, sw = roots_legendre(g.PLACKETT_NODES)
    np.testing.assert_array_equal(x, sx)
    np.testing.assert_array_equal(w, sw)
    with mp.workdps(40):
        for xi, wi in zip(x, w, strict=True):
            root = mp.findroot(lambda t: mp.legendre(g.PLACKETT_NODES, t), mp.mpf(float(xi)))
            dp = mp.diff(lambda t: mp.legendre(g.PLACKETT_NODES, t), root)
            weight = 2 / ((1 - root**2) * dp**2)
            assert abs(xi - root) <= 3 * np.spacing(abs(xi)), (xi, root)
            assert abs(wi - weight) <= 4e-14 * weight, (wi, weight)
