"""Derive E erf(X1) erf(X2) for a jointly Gaussian pair.

Steps:
1. Price's theorem: d/dS12 E f(X1) g(X2) = E f'(X1) g'(X2) for a Gaussian pair.
2. Centred: E erf'(X1) erf'(X2) = (4/pi) E exp(-X1^2 - X2^2) = (4/pi) / sqrt(det(I + 2 S))
   (a Gaussian integral), with det(I + 2S) = (1+2 S11)(1+2 S22) - 4 S12^2 = D.
3. Integrate in S12 from 0 (independent, centred: 0):
   E erf(X1) erf(X2) = (2/pi) arcsin(2 S12 / sqrt((1+2 S11)(1+2 S22))) = (2/pi) atan2(2 S12, sqrt D).
4. With means: E erf(X1) erf(X2) = E sgn(A1) sgn(A2), A_i = sqrt2 X_i - G_i with G_i iid N(0,1),
   standardised means h, k and correlation rho = 2 S12 / sqrt(q1 q2); Plackett's identity
   d Phi2/d rho = phi2 integrated from rho = 0 gives, with rho = sin(theta),
   erf(mu1/sqrt q1) erf(mu2/sqrt q2) + (2/pi) int_0^{asin rho} exp(-(h^2 - 2hk sin th + k^2)/(2 cos^2 th)) dth.
   The exponent identity used for stability is checked here.
"""

from __future__ import annotations

import sympy as sp

try:
    from ._common import assert_same
except ImportError:  # run as a script
    from _common import assert_same

s11, s22 = sp.symbols("S11 S22", positive=True)
s12 = sp.Symbol("S12", real=True)
x1, x2 = sp.symbols("x1 x2", real=True)


def derive(verbose: bool = False) -> dict[str, sp.Expr]:
    """Return the centred closed form, its derivative, and the angle integrand."""
    say = print if verbose else (lambda *a: None)
    sigma = sp.Matrix([[s11, s12], [s12, s22]])
    # 2. E exp(-X^T X) for X ~ N(0, S) = det(I + 2 S)^(-1/2)
    d = sp.expand((sp.eye(2) + 2 * sigma).det())
    say("2. det(I + 2 S) =", d)
    e_pp = 4 / sp.pi / sp.sqrt(d)
    # check the Gaussian integral in the independent case, where it factorises
    one = sp.integrate(
        sp.exp(-(x1**2)) * sp.exp(-(x1**2) / (2 * s11)) / sp.sqrt(2 * sp.pi * s11),
        (x1, -sp.oo, sp.oo),
    )
    assert sp.simplify(one - 1 / sp.sqrt(1 + 2 * s11)) == 0
    say("   E erf'(X1) erf'(X2) =", e_pp)
    # 3. integrate in S12
    closed = 2 / sp.pi * sp.asin(2 * s12 / sp.sqrt((1 + 2 * s11) * (1 + 2 * s22)))
    assert_same(sp.diff(closed, s12), e_pp, {s11: (0.1, 3), s22: (0.1, 3), s12: (-0.09, 0.09)})
    say("3. E erf(X1) erf(X2) =", closed, "(its S12-derivative is step 2, and it is 0 at S12 = 0)")
    atan_form = 2 / sp.pi * sp.atan(2 * s12 / sp.sqrt(d))
    assert_same(closed, atan_form, {s11: (0.1, 3), s22: (0.1, 3), s12: (-0.09, 0.09)})
    # 4. exponent identity for theta >= 0
    h, k, th = sp.symbols("h k theta", real=True)
    plain = -(h**2 - 2 * h * k * sp.sin(th) + k**2) / (2 * sp.cos(th) ** 2)
    stable = -((h - k) ** 2) / (2 * sp.cos(th) ** 2) - h * k / (1 + sp.sin(th))
    stable_neg = -((h + k) ** 2) / (2 * sp.cos(th) ** 2) + h * k / (1 - sp.sin(th))
    assert_same(plain, stable, {h: (-3, 3), k: (-3, 3), th: (0, 1.5)})
    assert_same(plain, stable_neg, {h: (-3, 3), k: (-3, 3), th: (-1.5, 0)})
    say(
        "4. exponent = -(h-k)^2/(2cos^2) - hk/(1+sin) (theta >= 0) = -(h+k)^2/(2cos^2) + hk/(1-sin) (theta < 0)"
    )
    return {"centred": closed, "centred_derivative": e_pp, "angle_exponent": plain}


if __name__ == "__main__":
    derive(verbose=True)
