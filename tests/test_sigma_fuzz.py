"""A user's sigma fuzzed: jumps, kinks, dips and bumps anywhere, functions that write into
their argument. Each is refused, or its risk agrees with Monte Carlo on explicit vectors."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from slr_theory import Nonlinearity, Params, risk
from slr_theory.nonlinearity import BUILTIN_NONLINEARITIES
from slr_theory.testing import assert_matches_monte_carlo

TANH = BUILTIN_NONLINEARITIES["tanh"]
P = Params(d=12, L=5, lam=0.6, gamma=0.8)
OV = (0.5, 0.4, 0.2, -0.3, 0.25)

# where the data puts sigma's argument (|lam X.k| of a few units), or anywhere out to 1e15
places = st.one_of(
    st.floats(-3.0, 3.0),
    st.builds(lambda sign, e: sign * 10.0**e, st.sampled_from([-1.0, 1.0]), st.floats(-3.0, 15.0)),
)


# the probabilists' Hermite polynomials He_0..He_4, each computed only where asked for
_HERMITE = (
    lambda z: 1.0,
    lambda z: z,
    lambda z: z * z - 1.0,
    lambda z: z**3 - 3 * z,
    lambda z: z**4 - 6 * z * z + 3,
)


def _gauss(c, w, a):
    """``a g((u - c)/w)`` and its first four derivatives, ``g`` the Gaussian bump."""

    def part(j):
        def at(u):
            z = np.clip((np.asarray(u, dtype=float) - c) / w, -60.0, 60.0)
            return a * (-1.0) ** j * _HERMITE[j](z) * np.exp(-0.5 * z * z) / w**j

        return at

    return [part(j) for j in range(5)]


def _plus(extra):
    base = [TANH.derivative(j) for j in range(5)]
    return [lambda u, b=b, e=e: b(u) + e(u) for b, e in zip(base, extra, strict=True)]


def _writer(fn):
    def at(u):
        out = np.array(fn(u), dtype=float)
        u[...] = 0.0  # into the array it was handed
        return out

    return at


def _build(kind: str, c: float, size: float, writes: bool):
    """(functions, kinks, must_refuse, must_accept) of one fuzzed case: `size` is the
    jump, the kink's slope, or the bump's height (a dip's depth) with width
    ``size``-independent ``0.3..5`` units (relative far out)."""
    if kind == "jump":
        fs = [lambda u: TANH.f(u) + size * (u > c), *[TANH.derivative(j) for j in range(1, 5)]]
        out = (fs, (), True, False)
    elif kind in ("kink", "declared kink"):
        extra = [
            lambda u: size * np.maximum(np.asarray(u, dtype=float) - c, 0.0),
            lambda u: size * (np.asarray(u, dtype=float) > c),
            *[np.zeros_like] * 3,
        ]
        declared = kind == "declared kink"
        out = (_plus(extra), (c,) if declared else (), not declared, declared)
    else:
        w = (0.3 + 3.0 * size) * max(1.0, abs(c) * 1e-3)
        a = 1.5 * size * (-1.0 if kind == "dip" else 1.0)
        out = (_plus(_gauss(c, w, a)), (), False, True)
    if writes:
        out = ([_writer(f) for f in out[0]], *out[1:])
    return out


cases = st.tuples(
    st.sampled_from(["jump", "kink", "declared kink", "dip", "bump"]),
    places,
    st.floats(0.01, 1.0),
    st.booleans(),
)


@given(cases)
@example(("dip", -10.0, 2 / 3, False))  # the point check's truncation where sigma'' = 0
def test_a_fuzzed_sigma_is_refused_or_right(case):
    """(kind, place, size, writes into its argument)."""
    fs, kinks, must_refuse, must_accept = _build(*case)
    try:
        sigma = Nonlinearity("fuzzed", fs[0], fs[1], fs[2], fs[3], d4f=fs[4], kinks=kinks)
    except ValueError as exc:
        assert not must_accept, exc
        return
    assert not must_refuse, "a jump or an undeclared kink was accepted"
    p = P.replace(nonlinearity=sigma)
    assert np.isfinite(risk(p, *OV))
    assert_matches_monte_carlo(p, OV, n=100_000, z=4, rng=11)


@pytest.mark.parametrize("c", [0.0025, -1.3, 0.2, 1e3])
def test_a_declared_kink_anywhere_has_the_monte_carlo_risk(c):
    fs = _plus(
        [
            lambda u: 0.5 * np.maximum(u - c, 0.0),
            lambda u: 0.5 * (u > c),
            *[np.zeros_like] * 3,
        ]
    )
    sigma = Nonlinearity("kinked", *fs[:4], d4f=fs[4], kinks=(c,))
    assert_matches_monte_carlo(P.replace(nonlinearity=sigma), OV, n=200_000, z=4, rng=3)
