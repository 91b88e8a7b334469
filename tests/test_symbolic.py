"""slr_theory.symbolic and Nonlinearity.from_sympy: derivatives, kinks and properties derived."""

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

from slr_theory import Nonlinearity, Params, risk
from slr_theory.nonlinearity import BUILTIN_NONLINEARITIES
from slr_theory.symbolic import PROVED, derive

U = np.array([-1e300, -40.0, -3.0, -0.7, 0.0, 0.4, 2.5, 17.25, 45.0, 1e300])


@pytest.mark.parametrize("name", ["tanh", "erf", "arctan", "algebraic", "sigmoid"])
def test_the_derived_functions_are_the_builtins(name):
    expr = {
        "tanh": "tanh(u)",
        "erf": "erf(u)",
        "arctan": "2*atan(u)/pi",
        "algebraic": "u/sqrt(1 + u**2)",
        "sigmoid": "1/(1 + exp(-u))",
    }[name]
    d = derive(expr)
    builtin = BUILTIN_NONLINEARITIES[name]
    for j in range(5):
        got, want = d.functions[j](U), builtin.derivative(j)(U)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=f"{name} {j}")


def test_the_derivatives_agree_with_mpmath_differentiation():
    expr = "tanh(u) + u/(4*(1 + u**2))"
    d = derive(expr)
    fn = lambda x: mp.tanh(x) + x / (4 * (1 + x * x))  # noqa: E731
    with mp.workdps(40):
        for x in (-2.3, 0.1, 1.7):
            for j in range(5):
                want = float(mp.diff(fn, mp.mpf(x), j))
                assert d.functions[j](np.array([x]))[0] == pytest.approx(
                    want, rel=1e-12, abs=1e-15
                )


def test_kinks_from_max_abs_heaviside_and_piecewise():
    assert derive("Max(u - 1/400, 0)").kinks == (0.0025,)
    assert derive("Abs(u) - 2*Abs(u - 1)").kinks == (0.0, 1.0)
    assert derive("Piecewise((-1, u < -1), (u, u < 1), (1, True))").kinks == (-1.0, 1.0)
    assert derive("Min(u, 3) + Max(u, -2)").kinks == (-2.0, 3.0)


def test_a_jump_is_refused_symbolically():
    with pytest.raises(ValueError, match=r"must be continuous: at u = 0\.0025"):
        derive("tanh(u) + Heaviside(u - 1/400)/2")
    with pytest.raises(ValueError, match="must be continuous"):
        Nonlinearity.from_sympy("Piecewise((0, u < 1), (1, True))")


def test_properties_proved_and_left_to_the_identities():
    t = Nonlinearity.from_sympy("tanh(x)")
    assert t.odd and t.increasing and t.bound == 1.0
    assert all(t.established[k] == PROVED for k in ("odd", "increasing", "bound"))
    r = Nonlinearity.from_sympy("Max(u, 0)")
    assert r.established["increasing"] == PROVED and not r.odd
    assert r.established["odd"].startswith("integral identities")
    s = Nonlinearity.from_sympy("1/(1 + exp(-u))")
    assert not s.odd and s.established["bound"] == PROVED and s.bound == 1.0
    dip = Nonlinearity.from_sympy("tanh(u) - 7/5*exp(-(u - 300)**2/8)")
    assert not dip.increasing and dip.established["increasing"].startswith("integral")


def test_the_derived_relu_has_the_builtins_risk():
    p = Params(d=12, L=5, lam=0.6, gamma=0.8, nonlinearity="relu")
    q = p.replace(nonlinearity=Nonlinearity.from_sympy("Max(u, 0)", "relu-sym"))
    ov = (0.5, 0.4, 0.2, -0.3, 0.25)
    assert risk(q, *ov) == pytest.approx(risk(p, *ov), rel=1e-13)


def test_bad_expressions_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match="`expr` must have exactly one free symbol"):
        derive("x*y")
    with pytest.raises(ValueError, match="`expr` must be a SymPy expression"):
        derive("u +* 2")
    x, y = sp.symbols("x y")
    with pytest.raises(ValueError, match="no free symbol but `symbol`"):
        derive(x * y, symbol=x)
    assert derive(sp.tanh(y), symbol=y).proved["odd"]
    with pytest.raises(ValueError, match="must be finite"):
        Nonlinearity.from_sympy("u**2")


def test_an_expression_that_overflows_in_double_takes_its_limit_there():
    """``u/sqrt(1 + u^2)`` as written is 0 past ``1.3e154`` (``u^2`` overflows): there
    its limit serves, and the built-in algebraic sigma's risk is reproduced."""
    alg = Nonlinearity.from_sympy("u/sqrt(1 + u**2)")
    np.testing.assert_array_equal(alg.f(np.array([-1e300, 1e200])), [-1.0, 1.0])
    p = Params(d=12, L=5, lam=0.6, gamma=0.8, nonlinearity="algebraic")
    ov = (0.5, 0.4, 0.2, -0.3, 0.25)
    assert risk(p.replace(nonlinearity=alg), *ov) == pytest.approx(risk(p, *ov), rel=1e-13)
