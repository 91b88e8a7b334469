"""slr_theory.identities: a jump, a kink or a dip between any two sample points is seen."""

import numpy as np
import pytest

from slr_theory.identities import RESOLUTION, establish, panel_breaks
from slr_theory.nonlinearity import nonlinearity_of

TANH = nonlinearity_of("tanh")
LABELS = ["f", "df", "d2f"]


def _gauss(u, c, w):
    """``exp(-((u - c)/w)^2 / 2)`` and ``(u - c)/w``, without overflow far out."""
    z = np.clip((np.asarray(u, dtype=float) - c) / w, -100.0, 100.0)
    return np.exp(-0.5 * z * z), z


def _tanh_plus(amplitude, centre, width, mirror=False):
    """``tanh u + A g((u - c)/w)`` (and ``+ A g((-u - c)/w)`` if `mirror`: an even bump)
    with its first two derivatives, exactly."""

    def part(u, j, sign=1.0):
        e, z = _gauss(sign * u, centre, width)
        return amplitude * e * (1.0, -z / width * sign, (z * z - 1.0) / width**2)[j]

    def fn(j):
        def at(u):
            out = TANH.derivative(j)(u) + part(u, j)
            return out + part(u, j, -1.0) if mirror else out

        return at

    return [fn(0), fn(1), fn(2)]


def test_the_panels_cover_the_range_symmetrically_and_break_at_kinks():
    b = panel_breaks()
    assert b[0] == -1e300 and b[-1] == 1e300
    np.testing.assert_array_equal(b, -b[::-1])
    inner = b[np.abs(b) <= 60]
    np.testing.assert_allclose(np.diff(inner), 0.25)
    outer = b[b >= 60]
    assert np.all(outer[1:-1] / outer[:-2] <= 1.05 * (1 + 1e-12))
    assert {0.0025, -7.5} <= set(panel_breaks((0.0025, -7.5)))
    assert RESOLUTION == pytest.approx((0.25 / 16, 0.05 / 16), rel=1e-12)


@pytest.mark.parametrize("where", [0.0025, -0.3, 7.77, 59.9, 300.0, -4.1e5, 2.5e12, -3e20])
def test_a_jump_of_sigma_is_refused_wherever_it_is(where):
    fs = [lambda u: TANH.f(u) + 0.5 * (u > where), TANH.df, TANH.d2f]
    with pytest.raises(ValueError, match=r"is not continuous: `f` jumps by 0\.5") as err:
        establish("jump", fs, LABELS)
    lo, hi = (float(x) for x in str(err.value).split("in [")[1].split("]")[0].split(", "))
    assert lo <= where <= hi and hi - lo <= 1e-10 * max(1.0, abs(where))


@pytest.mark.parametrize("kinks", [(), (0.5,), (-0.0025,)])
def test_an_undeclared_or_misplaced_kink_is_refused_where_it_is(kinks):
    fs = [lambda u: np.maximum(u - 0.0025, 0.0), lambda u: 1.0 * (u > 0.0025), np.zeros_like]
    with pytest.raises(ValueError, match=r"`df` of nonlinearity 'kink' jumps by 1 in \[0.00249"):
        establish("kink", fs, LABELS, kinks)
    facts = establish("kink", fs, LABELS, (0.0025,))
    assert facts.increasing and facts.sign == 1 and not facts.odd


def test_a_wrong_derivative_is_refused():
    fs = [np.tanh, lambda u: 1.01 * TANH.df(u), TANH.d2f]
    with pytest.raises(ValueError, match="`df` of nonlinearity 'w' is not the derivative of `f`"):
        establish("w", fs, LABELS)


def test_a_dip_beyond_60_makes_sigma_not_increasing():
    """sigma' down to -0.43 near u = 300, between the old check points 60 and 1891."""
    fs = _tanh_plus(-1.4, 300.0, 2.0)
    assert np.min(fs[1](np.linspace(290, 310, 20001))) < -0.42
    facts = establish("dip", fs, LABELS)
    assert not facts.increasing and facts.bound >= 1.0


def test_an_even_bump_beyond_60_makes_sigma_not_odd():
    fs = _tanh_plus(1e-3, 300.0, 1.0, mirror=True)
    facts = establish("bump", fs, LABELS)
    assert not facts.odd
    assert facts.bound == pytest.approx(1.001, abs=1e-9)  # located at the bump's top


def test_a_steep_smooth_sigma_is_resolved_by_halving_and_accepted():
    c = 1e4
    fs = [
        lambda u: np.tanh(c * (u - 0.3)),
        lambda u: c * TANH.df(c * (u - 0.3)),
        lambda u: c * c * TANH.d2f(c * (u - 0.3)),
    ]
    facts = establish("steep", fs, LABELS)
    assert facts.increasing and not facts.odd and facts.panels > panel_breaks().size - 1


def test_the_extremes_between_nodes_are_located():
    """sigma = sin(u) exp(-u^2/50): its maximum lies between nodes; the bound is it."""

    def c(u):
        return np.clip(u, -100.0, 100.0)  # beyond, sigma is 1e-87: constant, its slope 0

    def fs0(u):
        return np.sin(c(u)) * np.exp(-(c(u) ** 2) / 50)

    def fs1(u):
        x = c(u)
        return np.where(np.abs(u) < 100, (np.cos(x) - x / 25 * np.sin(x)) * np.exp(-x * x / 50), 0)

    def fs2(u):
        x = c(u)
        inner = -np.sin(x) * (1 + 1 / 25) - 2 * x / 25 * np.cos(x) + (x / 25) ** 2 * np.sin(x)
        return np.where(np.abs(u) < 100, inner * np.exp(-x * x / 50), 0)

    fs = [fs0, fs1, fs2]
    from scipy.optimize import brentq

    top = float(fs0(np.array(brentq(lambda x: float(fs1(np.array(x))), 1.0, 2.0, xtol=1e-15))))
    facts = establish("wave", fs, LABELS)
    assert facts.odd and not facts.increasing
    assert facts.bound == pytest.approx(top, rel=1e-12)


def test_a_function_not_finite_somewhere_is_refused_with_where():
    fs = [lambda u: np.where(np.abs(u) > 1e200, np.nan, np.tanh(u)), TANH.df, TANH.d2f]
    with pytest.raises(ValueError, match=r"`f` of nonlinearity 'nan' must be finite .* at u = "):
        establish("nan", fs, LABELS)


def test_the_inputs_are_copies():
    seen = []

    def writer(u):
        seen.append(u)
        out = np.tanh(u)
        u[...] = 0.0
        return out

    facts = establish("writer", [writer, TANH.df, TANH.d2f], LABELS)
    assert facts.odd and facts.increasing and len(seen) >= 2
