"""Derive the dynamics formulas (docs/theory.md §6) used by slr_theory.geometry, trajectory and gaussian.

Steps:
1. Vectors in span{k, v, k*, v*} are coefficient vectors in that generating set; their
   inner products come from the Gram matrix G of (k, v, k*, v*), with unit norms and
   k* . v* = 0 built in. The Riemannian gradients are
   grad_k = R_kappa k* + R_eta v* + R_rho v - A k,  grad_v = R_theta k* + R_nu v* + R_rho k - B v,
   A = k . grad_k R, B = v . grad_v R.
2. The projected gradient flow k' = -grad_k, v' = -grad_v, read off on the overlaps,
   is the five-dimensional field of docs/theory.md §6.
3. One PGD step k~ = k - alpha grad_k (then normalised) gives the overlaps and norms of
   the closed-form map in the slr_theory.dynamics docstring.
4. On M the map is x <- (x - alpha R (1 - x^2)) / N, N^2 = 1 + alpha^2 R^2 (1 - x^2), and
   1 - x_new^2 = (1 - x^2)(1 + alpha x R)^2 / N^2 >= 0: |x| <= 1 is preserved.
5. zeta(t, s) - zeta(0, s) = 2 int_0^x erf(w / sqrt r) erf'(w) dw (x = t / sqrt(q),
   r = 1 + 4 s^2) as a power series in x^2: the coefficients of slr_theory.gaussian.zeta_series_coefficients.
"""

from __future__ import annotations

import sympy as sp

try:  # run as a script or imported by the tests
    from ._common import assert_same
except ImportError:  # pragma: no cover
    from _common import assert_same

kappa, nu, theta, eta, rho = sp.symbols("kappa nu theta eta rho", real=True)
Rk, Rn, Rt, Re, Rr = sp.symbols("R_kappa R_nu R_theta R_eta R_rho", real=True)
alpha = sp.Symbol("alpha", positive=True)
x, w = sp.symbols("x w", real=True)
r = sp.Symbol("r", positive=True)

GRAM = sp.Matrix(
    [[1, rho, kappa, eta], [rho, 1, theta, nu], [kappa, theta, 1, 0], [eta, nu, 0, 1]]
)
K_, V_, KS, VS = (sp.Matrix([int(i == j) for j in range(4)]) for i in range(4))
OVERLAPS = (kappa, nu, theta, eta, rho)
N_SERIES = 18


def dot(a: sp.Matrix, b: sp.Matrix) -> sp.Expr:
    return sp.expand((a.T * GRAM * b)[0, 0])


def _read(k: sp.Matrix, v: sp.Matrix) -> list[sp.Expr]:
    """(kappa, nu, theta, eta, rho) of coefficient vectors k, v (not normalised)."""
    return [dot(k, KS), dot(v, VS), dot(v, KS), dot(k, VS), dot(k, v)]


def derive(verbose: bool = False) -> dict[str, object]:
    """Return the flow field, the PGD map (overlaps, norms) and the zeta series coefficients."""
    say = print if verbose else (lambda *a: None)
    # 1. Riemannian gradients as coefficient vectors
    gk = Rk * KS + Re * VS + Rr * V_
    gv = Rt * KS + Rn * VS + Rr * K_
    A, B = dot(K_, gk), dot(V_, gv)
    say("1. A =", A, "  B =", B)
    rk, rv = gk - A * K_, gv - B * V_
    # 2. the flow: d/dt (k . u) = k' . u, d/dt (k . v) = k' . v + k . v'
    field = [-dot(rk, KS), -dot(rv, VS), -dot(rv, KS), -dot(rk, VS), -dot(rk, V_) - dot(K_, rv)]
    math6 = [
        -(Rk + theta * Rr - A * kappa),
        -(Rn + eta * Rr - B * nu),
        -(Rt + kappa * Rr - B * theta),
        -(Re + nu * Rr - A * eta),
        -(theta * Rk + nu * Re + Rr - A * rho) - (kappa * Rt + eta * Rn + Rr - B * rho),
    ]
    for got, want in zip(field, math6, strict=True):
        assert sp.expand(got - want) == 0
    say("2. the flow on the overlaps is docs/theory.md §6's field")
    # 3. one PGD step, before normalisation
    kt, vt = K_ - alpha * rk, V_ - alpha * rv
    raw = _read(kt, vt)
    nk2, nv2 = dot(kt, kt), dot(vt, vt)
    grad_k2, grad_v2 = dot(gk, gk), dot(gv, gv)
    assert sp.expand(nk2 - (1 + alpha**2 * (grad_k2 - A**2))) == 0
    assert sp.expand(nv2 - (1 + alpha**2 * (grad_v2 - B**2))) == 0
    ca, cb = 1 + alpha * A, 1 + alpha * B
    assert sp.expand(raw[0] - (ca * kappa - alpha * (Rk + Rr * theta))) == 0
    assert sp.expand(raw[1] - (cb * nu - alpha * (Rn + Rr * eta))) == 0
    say(
        "3. |k~|^2 = 1 + alpha^2 (|grad_k R|^2 - A^2), k~.k* = cA kappa - alpha (R_kappa + R_rho theta)"
    )
    # 4. on M
    xm, R = sp.symbols("x_M R", real=True)
    n2 = 1 + alpha**2 * R**2 * (1 - xm**2)
    xn = (xm - alpha * R * (1 - xm**2)) / sp.sqrt(n2)
    assert sp.simplify((1 - xn**2) - (1 - xm**2) * (1 + alpha * xm * R) ** 2 / n2) == 0
    say("4. 1 - x_new^2 = (1 - x^2)(1 + alpha x R)^2 / N^2")
    # 5. the series of zeta in x^2
    integrand = sp.series(
        sp.erf(w / sp.sqrt(r)) * 2 / sp.sqrt(sp.pi) * sp.exp(-(w**2)), w, 0, 2 * N_SERIES
    ).removeO()
    head = sp.expand(2 * sp.integrate(integrand, (w, 0, x)))
    coeffs = [sp.powsimp(sp.expand(head.coeff(x, 2 * K))) for K in range(1, N_SERIES + 1)]
    closed = [
        4
        / sp.pi
        * (-1) ** (K - 1)
        / K
        * sum(
            r ** (-n - sp.Rational(1, 2))
            / (sp.factorial(n) * (2 * n + 1) * sp.factorial(K - 1 - n))
            for n in range(K)
        )
        for K in range(1, N_SERIES + 1)
    ]
    for c, want in zip(coeffs, closed, strict=True):
        assert_same(c, want, {r: (1.0, 20.0)}, n=3)
    say("5. zeta - zeta(0, s) = sum_K c_K x^(2K), c_1 =", coeffs[0], " c_2 =", coeffs[1])
    return {
        "field": field,
        "pgd_raw": raw,
        "pgd_norms": (nk2, nv2),
        "zeta_series": coeffs,
    }


if __name__ == "__main__":
    derive(verbose=True)
