"""Derive the population risk as a function of the five overlaps (docs/theory.md §3).

Steps:
1. For the informative token, (U, V, W) = (X^T k, X^T v, X^T v*) is Gaussian with
   mean (B kappa, B theta, 0), B = sqrt(d/2), covariance G [[1, rho, eta], [rho, 1, nu], [eta, nu, 1]],
   G = gamma^2. Gaussian conditioning gives E[(V, W) | U] and Cov((V, W) | U).
2. Every moment is E[poly(D) h(lambda U)], D = U - B kappa, h in {erf, erf^2}. With
   lambda U = a kappa + g Z (a = lambda B, g = lambda gamma), D = gamma Z, Stein's lemma gives
   E[D h] = gamma g E h', E[D^2 h] = G (E h + g^2 E h'').
3. Distractors: the same with mean 0 and gamma = 1.
4. R = eps^2 + G - 2 c1 + s1 + (L-1) s0 + 2(L-1) m1 m0 + (L-1)(L-2) m0^2, and the
   informative part rearranged as G (1 - 2 nu E0 + Z0) + off-manifold terms (used for precision).

E_j = E erf^(j)(lambda U), Z_j = d^j zeta / dt^j (a kappa, g) are kept as symbols.
"""

from __future__ import annotations

import sympy as sp

kappa, nu, theta, eta, rho = sp.symbols("kappa nu theta eta rho", real=True)
gamma, lam, B = sp.symbols("gamma lambda B", positive=True)
L, eps = sp.symbols("L epsilon", positive=True)
E = sp.symbols("E0:3", real=True)
Z = sp.symbols("Z0:3", real=True)
P, S0, S2 = sp.symbols(
    "P S0 S2", real=True
)  # lambda E erf'(lambda Z0), zeta(0, lam), lam^2 zeta_tt(0, lam)
D = sp.Symbol("D", real=True)


def _stein(poly: sp.Expr, moments: tuple[sp.Expr, ...]) -> sp.Expr:
    """Replace D^k h by its expectation, k <= 2, given (E h, E h', E h'')."""
    g = lam * gamma
    h0, h1, h2 = moments
    table = {0: h0, 1: gamma * g * h1, 2: gamma**2 * (h0 + g**2 * h2)}
    poly = sp.Poly(sp.expand(poly), D)
    return sp.expand(
        sum(c * table[m[0]] for m, c in zip(poly.monoms(), poly.coeffs(), strict=True))
    )


def derive(verbose: bool = False) -> dict[str, sp.Expr]:
    """Return m1, c1, s1, m0, s0, the informative part, and the risk (in terms of E_j, Z_j)."""
    say = print if verbose else (lambda *a: None)
    G = gamma**2
    cov = G * sp.Matrix([[1, rho, eta], [rho, 1, nu], [eta, nu, 1]])
    mean = sp.Matrix([B * kappa, B * theta, 0])
    # 1. conditioning on U
    s_vw_u = cov[1:, 0]
    cond_mean = mean[1:, 0] + s_vw_u * D / cov[0, 0]
    cond_cov = sp.simplify(cov[1:, 1:] - s_vw_u * s_vw_u.T / cov[0, 0])
    ev, ew = [sp.simplify(x) for x in cond_mean]
    say("1. E[V|U] =", ev, "  E[W|U] =", ew, "  Cov((V,W)|U) =", cond_cov.tolist())
    # 2. moments
    m1 = _stein(ev, E)
    c1 = _stein(ev * ew + cond_cov[0, 1], E)
    s1 = _stein(ev**2 + cond_cov[0, 0], Z)
    say("2. m1 =", m1, "\n   c1 =", c1, "\n   s1 =", s1)
    # 3. distractors: U ~ N(0, 1), E[V|U] = rho U, Var = 1 - rho^2; Stein with gamma = 1
    m0 = rho * P
    s0 = S0 + rho**2 * S2
    say("3. m0 =", m0, "  s0 =", s0)
    informative = sp.expand(G - 2 * c1 + s1)
    g = lam * gamma
    stable = (
        G * (1 - 2 * nu * E[0] + Z[0])
        + B**2 * theta**2 * Z[0]
        + 2 * B * theta * gamma * g * (rho * Z[1] - eta * E[1])
        + G * g**2 * (rho**2 * Z[2] - 2 * rho * eta * E[2])
    )
    assert sp.expand(informative - stable) == 0
    say("4. gamma^2 - 2 c1 + s1 =", stable)
    risk = eps**2 + informative + (L - 1) * s0 + 2 * (L - 1) * m1 * m0 + (L - 1) * (L - 2) * m0**2
    on_m = sp.simplify(risk.subs({theta: 0, eta: 0, rho: 0}))
    say("   on M:", on_m)
    return {
        "m1": m1,
        "c1": c1,
        "s1": s1,
        "m0": m0,
        "s0": s0,
        "informative": informative,
        "risk": risk,
    }


if __name__ == "__main__":
    derive(verbose=True)
