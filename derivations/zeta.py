"""Derive zeta(t, s) = E erf(t + s Z)^2, its t-derivatives and the stable forms used.

Steps:
1. zeta_t = 2 E[erf(X) erf'(X)]: the Gaussian factor exp(-x^2) of erf'
   times the density of X is, after completing the square, a Gaussian in x
   with mean t/q and variance s^2/q times exp(-t^2/q)/sqrt(q); then
   E erf(N(t/q, s^2/q)) = erf(t / sqrt(q r)), q = 1+2s^2, r = 1+4s^2.
2. zeta_tt by differentiation.
3. zeta(0, s) from the centred pair lemma with both variances and the
   covariance equal to s^2: (2/pi) arcsin(2 s^2 / q) = (2/pi) atan(2 s^2 / sqrt r).
4. Integrating zeta_t: zeta(t, s) = zeta(0, s) + 2 int_0^{|t|/sqrt q} erf(w/sqrt r) erf'(w) dw,
   and zeta(oo, s) = 1 gives 1 - zeta = 2 int_{|t|/sqrt q}^oo (same integrand); with
   v = w^2 - x^2 this is (2/sqrt pi) e^{-x^2} int_0^oo e^{-v} erf(sqrt((x^2+v)/r))/sqrt(x^2+v) dv.
5. Owen's T: d/dt [1 - 8 T(sqrt2 t/sqrt q, 1/sqrt r)] equals zeta_t (t > 0); at t = 0,
   1 - 8 T(0, a) = 1 - (4/pi) atan(a) equals zeta(0, s) (checked numerically in the tests).
"""

from __future__ import annotations

import sympy as sp

try:
    from ._common import assert_same
except ImportError:  # run as a script
    from _common import assert_same

t = sp.Symbol("t", real=True)
s = sp.Symbol("s", positive=True)
x = sp.Symbol("x", real=True)
v = sp.Symbol("v", positive=True)
w = sp.Symbol("w", positive=True)
xx = sp.Symbol("x", positive=True)
q = 1 + 2 * s**2
r = 1 + 4 * s**2


def _gauss(y, mean, var):
    return sp.exp(-((y - mean) ** 2) / (2 * var)) / sp.sqrt(2 * sp.pi * var)


def derive(verbose: bool = False) -> dict[str, sp.Expr]:
    """Return ``zeta_t``, ``zeta_tt``, ``zeta0`` and the integrands of the stable forms."""
    say = print if verbose else (lambda *a: None)
    # 1. complete the square: exp(-x^2) N(x; t, s^2) = C N(x; t/q, s^2/q)
    lhs = sp.exp(-(x**2)) * _gauss(x, t, s**2)
    c = sp.exp(-(t**2) / q) / sp.sqrt(q)
    rhs = c * _gauss(x, t / q, s**2 / q)
    assert sp.simplify(sp.expand(sp.log(lhs) - sp.log(rhs), force=True)) == 0
    say("1. exp(-x^2) N(x; t, s^2) = exp(-t^2/q)/sqrt(q) * N(x; t/q, s^2/q)")
    # E erf(N(m, v)) = erf(m / sqrt(1 + 2 v)) (gaussian_erf.py), m = t/q, v = s^2/q
    inner = sp.erf((t / q) / sp.sqrt(1 + 2 * s**2 / q))
    assert sp.simplify((t / q) / sp.sqrt(1 + 2 * s**2 / q) - t / sp.sqrt(q * r)) == 0
    zeta_t = 2 * (2 / sp.sqrt(sp.pi)) * c * sp.erf(t / sp.sqrt(q * r))
    say("   zeta_t = 2 E[erf(X) erf'(X)] =", zeta_t, " (inner:", inner, ")")
    # 2.
    zeta_tt = sp.simplify(sp.diff(zeta_t, t))
    say("2. zeta_tt =", zeta_tt)
    xs = t / sp.sqrt(q)
    form = (
        4
        / (sp.sqrt(sp.pi) * q)
        * sp.exp(-(xs**2))
        * (2 / sp.sqrt(sp.pi * r) * sp.exp(-(xs**2) / r) - 2 * xs * sp.erf(xs / sp.sqrt(r)))
    )
    assert_same(zeta_tt, form, {t: (-3, 3), s: (0.01, 3)})
    # 3.
    zeta0 = 2 / sp.pi * sp.asin(2 * s**2 / q)
    assert sp.simplify(sp.tan(sp.asin(2 * s**2 / q)) - 2 * s**2 / sp.sqrt(r)) == 0
    say("3. zeta(0, s) =", zeta0, "= (2/pi) atan(2 s^2/sqrt(r))")
    # 4. head integrand and its substitution w = sqrt(x^2 + v) for the tail
    head = 2 * sp.erf(w / sp.sqrt(r)) * 2 / sp.sqrt(sp.pi) * sp.exp(-(w**2))
    assert_same(sp.diff(xs, t) * head.subs(w, sp.Abs(xs)), zeta_t, {t: (0.01, 3), s: (0.01, 3)})
    sub = sp.sqrt(xx**2 + v)
    tail = sp.simplify(head.subs(w, sub) * sp.diff(sub, v))
    tail_form = (
        2
        / sp.sqrt(sp.pi)
        * sp.exp(-(xx**2))
        * sp.exp(-v)
        * sp.erf(sp.sqrt((xx**2 + v) / r))
        / sp.sqrt(xx**2 + v)
    )
    assert_same(tail, tail_form, {xx: (0.01, 3), v: (0.01, 5), s: (0.01, 3)})
    say("4. 1 - zeta = int_0^oo", tail_form, "dv")
    # 5. Owen's T derivative in h: dT/dh = -exp(-h^2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi))
    h, a, y = sp.symbols("h a y", positive=True)
    dT = sp.integrate(sp.diff(sp.exp(-(h**2) * (1 + y**2) / 2) / (1 + y**2), h), (y, 0, a)) / (
        2 * sp.pi
    )
    dT = sp.simplify(dT)
    owen_t = (
        -8 * dT.subs({h: sp.sqrt(2) * t / sp.sqrt(q), a: 1 / sp.sqrt(r)}) * sp.sqrt(2) / sp.sqrt(q)
    )
    assert_same(owen_t, zeta_t, {t: (0.01, 3), s: (0.01, 3)})
    say("5. d/dt (1 - 8T) =", sp.simplify(owen_t))
    return {
        "zeta_t": zeta_t,
        "zeta_tt": zeta_tt,
        "zeta0": zeta0,
        "head_integrand": head,
        "tail_integrand": tail_form,
        "owen_t_derivative": owen_t,
    }


if __name__ == "__main__":
    derive(verbose=True)
